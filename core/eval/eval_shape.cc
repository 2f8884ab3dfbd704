// Shape ops (each output element is copied from one operand element, or is a fill value),
// creation ops (full, iota) and random ops (rand, randn).
#include <algorithm>
#include <cstring>
#include <functional>

#include "core/base/diagnostics.h"
#include "core/base/philox.h"
#include "core/eval/eval_ops.h"

namespace fuserc::eval {
namespace {

// Where an output element comes from: operand `arg` at row-major index `index`, or the fill.
struct Source {
  bool fill = false;
  size_t arg = 0;
  int64_t index = 0;
};
using SourceOf = std::function<Source(const std::vector<int64_t>& out_idx)>;

void store_literal(HostTensor& t, int64_t i, const Literal& l) {
  switch (compute_type(t.dtype())) {
    case ComputeType::F32:
    case ComputeType::F64: t.store_f64(i, l.as_double()); break;
    case ComputeType::I64: t.store_i64(i, l.as_int()); break;
    case ComputeType::Bool: t.store_bool(i, l.as_bool()); break;
  }
}

// Copies one element between tensors, converting when the dtypes differ (cat promotes).
void copy_element(const HostTensor& from, int64_t i, HostTensor& to, int64_t j) {
  if (from.dtype() == to.dtype()) {
    size_t sz = dtype_size(to.dtype());
    std::memcpy(to.data() + j * sz, from.data() + i * sz, sz);
    return;
  }
  switch (compute_type(to.dtype())) {
    case ComputeType::F32:
    case ComputeType::F64: to.store_f64(j, from.load_f64(i)); break;
    case ComputeType::I64: to.store_i64(j, from.load_i64(i)); break;
    case ComputeType::Bool: to.store_bool(j, from.load_bool(i)); break;
  }
}

int64_t linear_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t r = 0;
  for (size_t d = 0; d < shape.size(); ++d) r = r * shape[d] + idx[d];
  return r;
}

HostTensor gather(const EvalContext& ctx, const Op& op, const SourceOf& source_of,
                  const Literal& fill) {
  const Value& v = ctx.fusion.value(op.outs[0]);
  HostTensor out(storage_dtype(v.dtype), ctx.concrete_shape(v.shape));
  std::vector<int64_t> idx(out.rank(), 0);
  for (int64_t e = 0; e < out.numel(); ++e) {
    Source s = source_of(idx);
    if (s.fill)
      store_literal(out, e, fill);
    else
      copy_element(ctx.operand(op.args[s.arg]), s.index, out, e);
    for (int d = out.rank() - 1; d >= 0; --d) {
      if (++idx[d] < out.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

HostTensor same_order_copy(const EvalContext& ctx, const Op& op) {
  const Value& v = ctx.fusion.value(op.outs[0]);
  const HostTensor& x = ctx.operand(op.args[0]);
  HostTensor out(x.dtype(), ctx.concrete_shape(v.shape));  // the operand's storage dtype
  FUSERC_CHECK(x.nbytes() == out.nbytes(), "reshape changed the byte count");
  if (out.nbytes()) std::memcpy(out.data(), x.data(), out.nbytes());
  return out;
}

HostTensor eval_shape(const EvalContext& ctx, const Op& op) {
  const HostTensor& x = ctx.operand(op.args[0]);
  const std::vector<int64_t>& xs = x.shape();
  const OpAttrs& a = op.attrs;
  std::vector<int64_t> in_idx(xs.size());
  auto from_x = [&]() { return Source{false, 0, linear_index(in_idx, xs)}; };
  switch (op.kind) {
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::SegmentSet: return same_order_copy(ctx, op);
    case OpKind::BroadcastInDim:
      return gather(ctx, op,
                    [&](const auto& out) {
                      for (size_t i = 0; i < xs.size(); ++i)
                        in_idx[i] = xs[i] == 1 ? 0 : out[a.broadcast_dims[i]];
                      return from_x();
                    },
                    {});
    case OpKind::Expand:
      return gather(ctx, op,
                    [&](const auto& out) {
                      size_t offset = out.size() - xs.size();
                      for (size_t i = 0; i < xs.size(); ++i)
                        in_idx[i] = xs[i] == 1 ? 0 : out[i + offset];
                      return from_x();
                    },
                    {});
    case OpKind::Permute:
      return gather(ctx, op,
                    [&](const auto& out) {
                      for (size_t j = 0; j < out.size(); ++j) in_idx[a.dims[j]] = out[j];
                      return from_x();
                    },
                    {});
    case OpKind::Slice: {
      std::vector<int64_t> starts = ctx.concrete_shape(a.starts);
      std::vector<int64_t> steps = ctx.concrete_shape(a.steps);
      return gather(ctx, op,
                    [&](const auto& out) {
                      for (size_t d = 0; d < xs.size(); ++d)
                        in_idx[d] = starts[d] + out[d] * steps[d];
                      return from_x();
                    },
                    {});
    }
    case OpKind::Pad: {
      std::vector<int64_t> lo;
      for (const auto& pd : a.pads) lo.push_back(ctx.concrete(pd.first));
      return gather(
          ctx, op,
          [&](const auto& out) {
            for (size_t d = 0; d < xs.size(); ++d) {
              in_idx[d] = out[d] - lo[d];
              if (in_idx[d] < 0 || in_idx[d] >= xs[d]) return Source{true};
            }
            return from_x();
          },
          a.value);
    }
    case OpKind::Cat: {
      std::vector<int64_t> ends;  // cumulative extents along dim
      int64_t total = 0;
      for (const auto& arg : op.args) ends.push_back(total += ctx.operand(arg).shape()[a.dim]);
      return gather(ctx, op,
                    [&](const auto& out) {
                      size_t k = 0;
                      while (out[a.dim] >= ends[k]) ++k;
                      const auto& s = ctx.operand(op.args[k]).shape();
                      std::vector<int64_t> idx(out.begin(), out.end());
                      idx[a.dim] -= k == 0 ? 0 : ends[k - 1];
                      return Source{false, k, linear_index(idx, s)};
                    },
                    {});
    }
    case OpKind::IndexSelect:
    case OpKind::Gather: {
      // The element at coordinate `out` reads the input at the index's value along dim; an
      // index outside [0, extent) is clamped into it, as generated kernels do (the contract
      // leaves that value unspecified).
      const HostTensor& ix = ctx.operand(op.args[1]);
      const int64_t extent = xs[a.dim];
      bool select = op.kind == OpKind::IndexSelect;
      return gather(ctx, op,
                    [&](const auto& out) {
                      if (extent == 0) return Source{true};  // nothing to read: 0
                      int64_t at = select ? out[a.dim] : linear_index(out, ix.shape());
                      in_idx.assign(out.begin(), out.end());
                      in_idx[a.dim] = std::clamp<int64_t>(ix.load_i64(at), 0, extent - 1);
                      return from_x();
                    },
                    {});
    }
    default: break;
  }
  FUSERC_UNREACHABLE(std::string("not a shape op: ") + op_name(op.kind));
}

}  // namespace

std::vector<HostTensor> eval_shape_op(const EvalContext& ctx, const Op& op) {
  std::vector<HostTensor> r;
  r.push_back(eval_shape(ctx, op));
  return r;
}

std::vector<HostTensor> eval_creation(const EvalContext& ctx, const Op& op) {
  const Value& v = ctx.fusion.value(op.outs[0]);
  HostTensor out(storage_dtype(v.dtype), ctx.concrete_shape(v.shape));
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::Full: {
      const Literal value = ctx.resolve(a.value);
      for (int64_t i = 0; i < out.numel(); ++i) store_literal(out, i, value);
      break;
    }
    case OpKind::Iota: {
      bool exact = !is_float(out.dtype()) && a.start.kind != Literal::Kind::Float &&
                   a.step.kind != Literal::Kind::Float;
      for (int64_t i = 0; i < out.numel(); ++i) {
        if (exact) {
          uint64_t val = static_cast<uint64_t>(a.start.as_int()) +
                         static_cast<uint64_t>(i) * static_cast<uint64_t>(a.step.as_int());
          out.store_i64(i, static_cast<int64_t>(val));
        } else {
          out.store_f64(i, a.start.as_double() + a.step.as_double() * static_cast<double>(i));
        }
      }
      break;
    }
    case OpKind::Rand:
    case OpKind::Randn: {
      uint64_t seed = static_cast<uint64_t>(ctx.operand(op.args[0]).load_i64(0));
      uint64_t offset = static_cast<uint64_t>(ctx.operand(op.args[1]).load_i64(0));
      bool f64 = out.dtype() == DType::F64;
      for (int64_t i = 0; i < out.numel(); ++i) {
        uint64_t idx = static_cast<uint64_t>(i);
        if (op.kind == OpKind::Rand) {
          if (f64)
            out.store_f64(i, philox_uniform_f64(seed, offset, idx));
          else
            out.store_f32(i, philox_uniform_f32(seed, offset, idx));
        } else {
          if (f64)
            out.store_f64(i, philox_normal_f64(seed, offset, idx));
          else
            out.store_f32(i, philox_normal_f32(seed, offset, idx));
        }
      }
      break;
    }
    default: FUSERC_UNREACHABLE(std::string("not a creation op: ") + op_name(op.kind));
  }
  std::vector<HostTensor> r;
  r.push_back(std::move(out));
  return r;
}

}  // namespace fuserc::eval
