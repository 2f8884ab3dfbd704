#include "core/ir/op_semantics.h"

#include "core/base/diagnostics.h"

namespace fuserc {

TypedOperand typed_operand(const Fusion& f, const Operand& a) {
  if (a.is_literal()) return {OperandLevel::Literal, a.literal.dtype()};
  const Value& v = f.value(a.value);
  return {v.rank() == 0 ? OperandLevel::ZeroDim : OperandLevel::Tensor, v.dtype};
}

DType computation_dtype(const Fusion& f, const Op& op) {
  const OpInfo& info = op.info();
  FUSERC_CHECK(info.is_elementwise(), std::string("computation_dtype of ") + info.name);
  if (info.dtype_rule == DtypeRule::Cast) {
    const Operand& a = op.args[0];
    return a.is_literal() ? a.literal.dtype() : f.value(a.value).dtype;
  }
  if (info.dtype_rule == DtypeRule::Predicate) {
    std::vector<TypedOperand> t;
    for (const auto& a : op.args) t.push_back(typed_operand(f, a));
    return result_type(t);
  }
  return f.value(op.outs[0]).dtype;
}

}  // namespace fuserc
