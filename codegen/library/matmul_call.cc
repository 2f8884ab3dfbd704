#include "codegen/library/matmul_call.h"

#include <vector>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

// The strides (elements) of a tensor as it lies in memory: declared, else row-major.
std::vector<Expr> strides_of(const Value& v) {
  if (!v.strides.empty()) return v.strides;
  std::vector<Expr> s(v.shape.size(), Expr(1));
  for (size_t d = v.shape.size(); d-- > 1;) s[d - 1] = s[d] * v.shape[d];
  return s;
}

// An operand as the product reads it: through an absorbed view, else as it lies.
struct Read {
  std::vector<Expr> shape, strides;
  Expr offset = Expr(0);
};

Read read_of(const Fusion& f, const Op& op, size_t i) {
  const Value& v = f.value(op.args[i].value);
  if (i < 2 && op.attrs.views[i].active()) {
    const OperandView& view = op.attrs.views[i];
    return {view.shape, view.memory, view.memory_offset};
  }
  return {v.shape, strides_of(v)};
}

// One batch dimension of the product: its extent and each operand's stride along it.
struct BatchDim {
  Expr extent;
  Expr a, b, c;
};

// Whether dimension `outer` (before `inner`) folds into `inner` for every operand.
bool collapses(const BatchDim& outer, const BatchDim& inner) {
  return outer.a == inner.a * inner.extent && outer.b == inner.b * inner.extent &&
         outer.c == inner.c * inner.extent;
}

}  // namespace

MatmulCall lower_matmul(const Fusion& f, const Segment& s, const std::string& name) {
  FUSERC_CHECK(s.ops.size() == 1, "a library segment holds one op");
  const Op& op = f.ops[s.ops[0]];
  const Value& x = f.value(op.args[0].value);
  const Value& y = f.value(op.args[1].value);
  const Value& out = f.value(op.outs[0]);
  const bool linear = op.kind == OpKind::Linear;
  MatmulCall call;
  call.name = name;
  call.allow_tf32 = op.attrs.allow_tf32;
  call.epilogue = static_cast<MatmulEpilogueKind>(static_cast<uint8_t>(op.attrs.activation));
  call.workspace_bytes = Expr(kLibraryWorkspaceBytes);

  const Read xr = read_of(f, op, 0), yr = read_of(f, op, 1);
  // A as a matrix [.., M, K] (a rank-1 x is one row).
  std::vector<Expr> xs = xr.shape, xst = xr.strides;
  if (xs.size() == 1) {
    xs.insert(xs.begin(), Expr(1));
    xst.insert(xst.begin(), xst[0] * xs[1]);
  }
  // B as a matrix [.., K, N]: linear's weight [N, K] read transposed; a rank-1 y is a column.
  std::vector<Expr> ys, yst;
  if (linear) {
    const std::vector<Expr>& w = yr.strides;
    ys = {yr.shape[1], yr.shape[0]};
    yst = {w[1], w[0]};
  } else {
    ys = yr.shape;
    yst = yr.strides;
    if (ys.size() == 1) {
      ys.push_back(Expr(1));
      yst.push_back(Expr(1));
    }
  }
  call.m = xs[xs.size() - 2];
  call.k = xs.back();
  call.n = ys.back();
  // C as [batch.., M, N]: the result, contiguous, or a permute of it written through strides.
  const size_t m_dim = xr.shape.size() > 1 ? 1 : 0;
  const size_t n_dim = linear || yr.shape.size() > 1 ? 1 : 0;
  const OperandView& rv = op.attrs.result_view;
  const std::vector<Expr>& cs = rv.active() ? rv.shape : out.shape;
  const std::vector<Expr> cst = rv.active() ? rv.memory : strides_of(out);
  FUSERC_CHECK(cs.size() >= m_dim + n_dim, "a matrix product's result lost dimensions");
  const size_t nb = cs.size() - m_dim - n_dim;
  const Expr c_col = n_dim ? cst.back() : Expr(1);
  const Expr c_row = m_dim ? cst[cs.size() - 1 - n_dim] : call.n * c_col;
  std::vector<BatchDim> dims;
  for (size_t d = nb; d-- > 0;) {
    BatchDim bd;
    bd.extent = cs[d];
    bd.c = cst[d];
    // An operand lacking the dimension, or of extent 1 there, is broadcast along it.
    const size_t xb = xs.size() - 2, yb = ys.size() - 2;
    if (d + xb >= nb && !xs[d + xb - nb].is_const(1)) bd.a = xst[d + xb - nb];
    if (d + yb >= nb && !ys[d + yb - nb].is_const(1)) bd.b = yst[d + yb - nb];
    if (!bd.extent.is_const(1)) dims.insert(dims.begin(), bd);
  }
  call.a = {op.args[0].value, x.dtype, xst[xst.size() - 2], xst.back()};
  call.b = {op.args[1].value, y.dtype, yst[yst.size() - 2], yst.back()};
  call.a.offset = xr.offset;
  call.b.offset = yr.offset;
  call.c = {op.outs[0], out.dtype, c_row, c_col};
  if (linear && op.args.size() == 3) {
    const Value& bias = f.value(op.args[2].value);
    call.bias = {op.args[2].value, bias.dtype, Expr(0), strides_of(bias)[0]};
  }
  // B broadcast over every batch dimension, and A's batch dimensions and rows lying one after
  // another: the batch is more rows of one product.
  bool fold = !dims.empty();
  for (size_t i = 0; fold && i < dims.size(); ++i) {
    const BatchDim rows{call.m, call.a.row_stride, Expr(0), c_row};
    const BatchDim& inner_dim = i + 1 < dims.size() ? dims[i + 1] : rows;
    fold = dims[i].b.is_const(0) && dims[i].a == inner_dim.a * inner_dim.extent &&
           dims[i].c == inner_dim.c * inner_dim.extent;
  }
  if (fold) {
    for (const BatchDim& d : dims) call.m = call.m * d.extent;
    dims.clear();
  }
  // The rest: groups of dimensions one stride reaches, innermost first.
  std::vector<BatchDim> groups;
  for (size_t i = dims.size(); i-- > 0;) {
    if (!groups.empty() && collapses(dims[i], groups.back())) {
      groups.back().extent = groups.back().extent * dims[i].extent;
      continue;
    }
    groups.push_back(dims[i]);
  }
  if (groups.size() > 2)
    throw UserError(SourcePlace{f.source_file},
                    "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) +
                        "' (out '" + out.name + "'): not supported yet: its batch dimensions "
                        "need " + std::to_string(groups.size()) +
                        " levels of strides (a library call takes a strided batch, and fuserc "
                        "loops over one more level)");
  if (!groups.empty()) {
    call.batch = groups[0].extent;
    call.a.batch_stride = groups[0].a;
    call.b.batch_stride = groups[0].b;
    call.c.batch_stride = groups[0].c;
  }
  if (groups.size() == 2) {
    call.outer = groups[1].extent;
    call.a.outer_stride = groups[1].a;
    call.b.outer_stride = groups[1].b;
    call.c.outer_stride = groups[1].c;
  }
  std::string args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const std::string& arg = f.value(op.args[i].value).name;
    const OperandView* view = i < 2 && op.attrs.views[i].active() ? &op.attrs.views[i] : nullptr;
    // A view left to a kernel before the product (none of its chain could be read in place).
    const Op* producer = f.producer(op.args[i].value);
    const bool copied =
        producer &&
        (producer->kind == OpKind::Permute || producer->kind == OpKind::Reshape ||
         producer->kind == OpKind::Expand || producer->kind == OpKind::BroadcastInDim ||
         producer->kind == OpKind::Squeeze || producer->kind == OpKind::Unsqueeze ||
         producer->kind == OpKind::Slice);
    args += (args.empty() ? "" : ", ") + (view ? view->views + " of " + arg : arg) +
            (copied ? " [" + arg + ": a " + std::string(op_name(producer->kind)) +
                          " no strides express, copied by a kernel]"
                    : "");
  }
  call.comment = out.name + " = " + (rv.active() ? rv.views + " of " : "") + op_name(op.kind) +
                 "(" + args + ")";
  return call;
}

}  // namespace fuserc
