// matmul and linear in the interpreter: every product accumulated in double (the reference
// the library steps are tested against), the result stored as every op's result is (f16/bf16
// kept in f32 until written).
#include <cmath>

#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"

namespace fuserc::eval {
namespace {

// A matrix operand as the product reads it: element (i, j) of batch entry `b` (the output's
// batch coordinates, broadcast) at offset(b) + i * row + j * col.
struct MatrixView {
  const HostTensor* t = nullptr;
  int64_t offset = 0;  // element (0, 0) of batch entry 0
  int64_t row = 0, col = 0;
  std::vector<int64_t> batch_stride;  // per output batch dim (0 where broadcast)
};

// The operand as the product sees it: its extents and (row-major, or through an absorbed view)
// strides into the tensor.
struct Operand {
  const HostTensor* t = nullptr;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

Operand operand_of(const EvalContext& ctx, const Op& op, size_t i) {
  Operand o;
  o.t = &ctx.operand(op.args[i]);
  const OperandView& view = op.attrs.views[i < 2 ? i : 0];
  if (i < 2 && view.active()) {
    o.shape = ctx.concrete_shape(view.shape);
    o.strides = ctx.concrete_shape(view.logical);
    o.offset = ctx.concrete(view.logical_offset);
  } else {
    o.shape = o.t->shape();
    o.strides = contiguous_strides(o.shape);
  }
  return o;
}

MatrixView view_of(const Operand& t, bool as_column, bool transposed, size_t out_batch_dims,
                   const std::vector<int64_t>& out_batch) {
  MatrixView v;
  v.t = t.t;
  v.offset = t.offset;
  const std::vector<int64_t>& shape = t.shape;
  const std::vector<int64_t>& strides = t.strides;
  const size_t rank = shape.size();
  // The matrix dims: a rank-1 operand is a row (left) or a column (right).
  if (rank == 1) {
    v.row = as_column ? strides[0] : 0;
    v.col = as_column ? 0 : strides[0];
  } else {
    v.row = strides[rank - 2];
    v.col = strides[rank - 1];
  }
  if (transposed) std::swap(v.row, v.col);
  const size_t nb = rank >= 2 ? rank - 2 : 0;
  v.batch_stride.assign(out_batch_dims, 0);
  for (size_t d = 0; d < nb; ++d) {
    const size_t od = out_batch_dims - nb + d;
    v.batch_stride[od] = shape[d] == 1 && out_batch[od] != 1 ? 0 : strides[d];
  }
  return v;
}

// An activation the fuse-epilogues pass moved into the product (eval of the compiled IR).
double activate(MatmulActivation a, double x) {
  switch (a) {
    case MatmulActivation::None: return x;
    case MatmulActivation::Relu: return x > 0 ? x : 0.0;
    case MatmulActivation::Gelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case MatmulActivation::GeluTanh:
      return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  }
  return x;
}

}  // namespace

std::vector<HostTensor> eval_matrix(const EvalContext& ctx, const Op& op) {
  const Value& out_v = ctx.fusion.value(op.outs[0]);
  const Operand xo = operand_of(ctx, op, 0), yo = operand_of(ctx, op, 1);
  const HostTensor& x = *xo.t;
  const HostTensor& y = *yo.t;
  const auto rank = [](const Operand& o) { return o.shape.size(); };
  HostTensor out(storage_dtype(out_v.dtype), ctx.concrete_shape(out_v.shape));
  // The product's own shape, and where each of its elements goes in the result (row-major, or
  // through the strides of a permute the product writes).
  const OperandView& rv = op.attrs.result_view;
  const std::vector<int64_t> out_shape =
      rv.active() ? ctx.concrete_shape(rv.shape) : ctx.concrete_shape(out_v.shape);
  const std::vector<int64_t> out_strides =
      rv.active() ? ctx.concrete_shape(rv.logical) : contiguous_strides(out_shape);
  const bool linear = op.kind == OpKind::Linear;
  // M, N, K and the output's batch dimensions.
  const int64_t k = xo.shape.back();
  const int64_t m = rank(xo) >= 2 ? xo.shape[rank(xo) - 2] : 1;
  const int64_t n = linear ? yo.shape[0] : (rank(yo) >= 2 ? yo.shape.back() : 1);
  std::vector<int64_t> batch;
  if (linear) {
    batch.assign(xo.shape.begin(), xo.shape.end() - (rank(xo) >= 2 ? 2 : 1));
  } else {
    size_t drop = (rank(xo) > 1 ? 1 : 0) + (rank(yo) > 1 ? 1 : 0);
    batch.assign(out_shape.begin(), out_shape.end() - static_cast<std::ptrdiff_t>(drop));
  }
  MatrixView a = view_of(xo, false, false, batch.size(), batch);
  // linear's weight [out, in] is read transposed: B[l][j] = w[j][l].
  MatrixView b = linear ? view_of(yo, false, true, batch.size(), batch)
                        : view_of(yo, true, false, batch.size(), batch);
  const HostTensor* bias = linear && op.args.size() == 3 ? &ctx.operand(op.args[2]) : nullptr;
  int64_t entries = 1;
  for (int64_t e : batch) entries *= e;
  std::vector<int64_t> idx(batch.size(), 0);
  const size_t pr = out_shape.size();
  const bool has_n = linear || rank(yo) > 1, has_m = rank(xo) > 1;
  const int64_t c_col = has_n ? out_strides[pr - 1] : 0;
  const int64_t c_row = has_m ? out_strides[pr - 1 - (has_n ? 1 : 0)] : 0;
  int64_t stored = 0;
  for (int64_t e = 0; e < entries; ++e) {
    int64_t ao = a.offset, bo = b.offset, co = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ao += idx[d] * a.batch_stride[d];
      bo += idx[d] * b.batch_stride[d];
      co += idx[d] * out_strides[d];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t l = 0; l < k; ++l)
          acc += x.load_f64(ao + i * a.row + l * a.col) * y.load_f64(bo + l * b.row + j * b.col);
        if (bias) acc += bias->load_f64(j);
        out.store_f64(co + i * c_row + j * c_col, activate(op.attrs.activation, acc));
        ++stored;
      }
    for (size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  FUSERC_CHECK(stored == out.numel(), "matrix product wrote the wrong number of elements");
  std::vector<HostTensor> r;
  r.push_back(std::move(out));
  return r;
}

}  // namespace fuserc::eval
