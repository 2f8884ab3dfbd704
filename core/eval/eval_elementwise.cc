// Elementwise ops: broadcast the operands, load them in the computation dtype, apply the op
// table's reference function, store in the result dtype.
#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"
#include "core/ir/op_semantics.h"

namespace fuserc::eval {
namespace {

template <class T>
T literal_as(const Literal& l) {
  if constexpr (std::is_same_v<T, bool>)
    return l.as_bool();
  else if constexpr (std::is_same_v<T, int64_t>)
    return l.as_int();
  else
    return static_cast<T>(l.as_double());
}

template <class T>
void run(const EvalContext& ctx, const Op& op, HostTensor& out, RefFn<T> fn) {
  const std::vector<int64_t>& shape = out.shape();
  const int rank = out.rank();
  const size_t n = op.args.size();
  FUSERC_CHECK(n <= 3, "elementwise op with more than three operands");
  const HostTensor* tensor[3] = {nullptr, nullptr, nullptr};
  T lit[3] = {};
  std::vector<int64_t> stride[3];
  for (size_t i = 0; i < n; ++i) {
    const Operand& a = op.args[i];
    stride[i].assign(rank, 0);
    if (a.is_literal()) {
      lit[i] = literal_as<T>(ctx.resolve(a.literal));
      continue;
    }
    tensor[i] = &ctx.operand(a);
    const auto& s = tensor[i]->shape();
    std::vector<int64_t> cs = contiguous_strides(s);
    int offset = rank - static_cast<int>(s.size());
    for (int d = 0; d < static_cast<int>(s.size()); ++d)
      stride[i][offset + d] = s[d] == 1 ? 0 : cs[d];
  }
  std::vector<int64_t> idx(rank, 0);
  int64_t off[3] = {0, 0, 0};
  T a[3] = {};
  for (int64_t e = 0; e < out.numel(); ++e) {
    for (size_t i = 0; i < n; ++i) a[i] = tensor[i] ? tensor[i]->load<T>(off[i]) : lit[i];
    out.store<T>(e, fn(a));
    for (int d = rank - 1; d >= 0; --d) {
      for (size_t i = 0; i < n; ++i) off[i] += stride[i][d];
      if (++idx[d] < shape[d]) break;
      for (size_t i = 0; i < n; ++i) off[i] -= stride[i][d] * shape[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

std::vector<HostTensor> eval_elementwise(const EvalContext& ctx, const Op& op) {
  const Value& v = ctx.fusion.value(op.outs[0]);
  // A cast rounds to its dtype (its purpose); other results keep f32 for f16/bf16.
  HostTensor out(op.kind == OpKind::Cast ? v.dtype : storage_dtype(v.dtype),
                 ctx.concrete_shape(v.shape));
  const ReferenceFns& ref = op.info().ref;
  switch (compute_type(computation_dtype(ctx.fusion, op))) {
    case ComputeType::F32: run<float>(ctx, op, out, ref.f32); break;
    case ComputeType::F64: run<double>(ctx, op, out, ref.f64); break;
    case ComputeType::I64: run<int64_t>(ctx, op, out, ref.i64); break;
    case ComputeType::Bool: run<bool>(ctx, op, out, ref.b8); break;
  }
  std::vector<HostTensor> r;
  r.push_back(std::move(out));
  return r;
}

}  // namespace fuserc::eval
