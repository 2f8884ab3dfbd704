#include "codegen/lower/reduction_accumulator.h"

#include <limits>

#include "core/base/diagnostics.h"

namespace fuserc::lower {

size_t kernel_type_size(kir::Type t) {
  switch (t) {
    case kir::Type::Bool: return 1;
    case kir::Type::Half:
    case kir::Type::BFloat16: return 2;
    case kir::Type::Int32:
    case kir::Type::Float:
    case kir::Type::UInt32: return 4;
    case kir::Type::Int64:
    case kir::Type::Double:
    case kir::Type::UInt64: return 8;
    case kir::Type::WelfordF32: return 20;  // fz_welford<float>: mean, m2, n, sum, lo
    case kir::Type::WelfordF64: return 40;
    case kir::Type::LseF32: return 8;  // fz_lse<float>: m, s
    case kir::Type::LseF64: return 16;
  }
  FUSERC_UNREACHABLE("bad kernel type");
}

Accumulator make_accumulator(const Fusion& f, const ReductionInfo& info, int index, int input_node,
                             NameTable& names) {
  const Op& op = f.ops[info.op];
  Accumulator acc;
  acc.reduction = index;
  acc.op = op.kind;
  acc.input_node = input_node;
  acc.correction = op.attrs.correction;
  acc.out = f.value(info.outputs[0]).dtype;
  acc.outputs = static_cast<int>(info.outputs.size());
  DType in = f.value(info.input).dtype;
  switch (op.kind) {
    case OpKind::Sum:
    case OpKind::Prod:
    case OpKind::Mean:
      acc.acc = is_float(acc.out) ? canonical_dtype(acc.out) : DType::I64;
      acc.functor = op.kind == OpKind::Prod ? "fz_prod_op" : "fz_sum_op";
      break;
    case OpKind::Max:
    case OpKind::Amax:
    case OpKind::Min:
    case OpKind::Amin:
      acc.acc = canonical_dtype(in);
      acc.functor = (op.kind == OpKind::Max || op.kind == OpKind::Amax) ? "fz_max_op" : "fz_min_op";
      break;
    case OpKind::Var:
    case OpKind::VarMean:
      acc.acc = canonical_dtype(acc.out);
      acc.welford = true;
      acc.functor = "fz_welford_op";
      break;
    default: FUSERC_UNREACHABLE(std::string("not a reduction: ") + op_name(op.kind));
  }
  acc.type = acc.welford ? (acc.acc == DType::F64 ? kir::Type::WelfordF64 : kir::Type::WelfordF32)
                         : kir::compute_type_of(acc.acc);
  acc.bytes = kernel_type_size(acc.type);
  std::string base = f.value(info.outputs[0]).name;
  acc.name = names.fresh("acc_" + base);
  acc.smem = names.fresh("smem_" + base);
  acc.partials = names.fresh("partials_" + base);
  return acc;
}

void make_online(Accumulator& acc, int sum_index) {
  FUSERC_CHECK((acc.op == OpKind::Max || acc.op == OpKind::Amax) &&
                   (acc.acc == DType::F32 || acc.acc == DType::F64),
               "an online log-sum-exp over a reduction that is not a float max");
  acc.online_sum = sum_index;
  acc.functor = "fz_lse_op";
  acc.type = acc.acc == DType::F64 ? kir::Type::LseF64 : kir::Type::LseF32;
  acc.bytes = kernel_type_size(acc.type);
}

void make_two_pass(Accumulator& acc) {
  FUSERC_CHECK(acc.welford, "a two-pass variance over an accumulator that is not Welford's");
  acc.welford = false;
  acc.two_pass = true;
  acc.functor = "fz_sum_op";
  acc.type = kir::compute_type_of(acc.acc);
  acc.bytes = kernel_type_size(acc.type);
}

kir::ValuePtr accumulator_identity(const Accumulator& acc) {
  if (acc.online_sum >= 0)
    return kir::call(
        std::string("fz_lse_init<") + (acc.acc == DType::F64 ? "double" : "float") + ">", acc.type,
        {});
  if (acc.welford)
    return kir::call(
        std::string("fz_welford_init<") + (acc.acc == DType::F64 ? "double" : "float") + ">",
        acc.type, {});
  const double inf = std::numeric_limits<double>::infinity();
  bool is_max = acc.op == OpKind::Max || acc.op == OpKind::Amax;
  bool is_min = acc.op == OpKind::Min || acc.op == OpKind::Amin;
  Literal l = Literal::of_int(acc.op == OpKind::Prod ? 1 : 0);
  if (is_max || is_min) {
    switch (acc.acc) {
      case DType::Bool: l = Literal::of_bool(is_min); break;
      case DType::I32:
        l = Literal::of_int(is_max ? std::numeric_limits<int32_t>::min()
                                   : std::numeric_limits<int32_t>::max());
        break;
      case DType::I64:
        l = Literal::of_int(is_max ? std::numeric_limits<int64_t>::min()
                                   : std::numeric_limits<int64_t>::max());
        break;
      default: l = Literal::of_float(is_max ? -inf : inf);
    }
  }
  return kir::literal(l, acc.type);
}

kir::ValuePtr accumulator_push(const Accumulator& acc, const kir::ValuePtr& value,
                               DType value_dtype) {
  kir::ValuePtr x = value;
  if (canonical_dtype(value_dtype) != acc.acc) x = kir::convert(value, value_dtype, acc.acc);
  kir::ValuePtr a = kir::ref(acc.name, acc.type);
  if (acc.welford)
    return kir::call("fz_welford_push", acc.type, {a, x});
  if (acc.online_sum >= 0) return kir::call("fz_lse_push", acc.type, {a, x});
  return accumulator_combine(acc, a, x);
}

kir::ValuePtr accumulator_combine(const Accumulator& acc, const kir::ValuePtr& a,
                                  const kir::ValuePtr& b) {
  if (acc.welford) return kir::call("fz_welford_combine", acc.type, {a, b});
  if (acc.online_sum >= 0) return kir::call("fz_lse_combine", acc.type, {a, b});
  OpKind k = OpKind::Add;
  switch (acc.op) {
    case OpKind::Prod: k = OpKind::Mul; break;
    case OpKind::Max:
    case OpKind::Amax: k = OpKind::Maximum; break;
    case OpKind::Min:
    case OpKind::Amin: k = OpKind::Minimum; break;
    default: break;
  }
  if (acc.acc == DType::Bool && k == OpKind::Add) k = OpKind::LogicalOr;
  if (acc.acc == DType::Bool && k == OpKind::Mul) k = OpKind::LogicalAnd;
  return kir::op(k, acc.acc, acc.type, {a, b});
}

kir::ValuePtr row_length_as(const Expr& row_length, kir::Type index_type, DType dtype) {
  const DType index_dtype = index_type == kir::Type::Int64 ? DType::I64 : DType::I32;
  return kir::convert(kir::index_value(row_length, index_type), index_dtype, dtype);
}

std::vector<kir::ValuePtr> accumulator_results(const Accumulator& acc, const Expr& row_length,
                                               kir::Type index_type) {
  FUSERC_CHECK(!acc.two_pass, "a two-pass variance's results come from its second pass");
  kir::ValuePtr a = kir::ref(acc.name, acc.type);
  if (acc.online_sum >= 0) {
    kir::Type t = kir::compute_type_of(acc.acc);
    return {kir::call("fz_lse_max", t, {a}), kir::call("fz_lse_sum", t, {a})};
  }
  if (acc.welford) {
    kir::Type t = acc.acc == DType::F64 ? kir::Type::Double : kir::Type::Float;
    kir::ValuePtr corr = kir::literal(Literal::of_int(acc.correction), t);
    std::vector<kir::ValuePtr> r = {kir::call("fz_welford_var", t, {a, corr})};
    if (acc.outputs > 1) r.push_back(kir::call("fz_welford_mean", t, {a}));
    return r;
  }
  if (acc.op == OpKind::Mean) {
    kir::ValuePtr n = row_length_as(row_length, index_type, acc.acc);
    return {kir::op(OpKind::Div, acc.acc, acc.type, {a, n})};
  }
  if (kir::compute_type_of(acc.acc) == kir::compute_type_of(acc.out)) return {a};
  return {kir::convert(a, acc.acc, canonical_dtype(acc.out))};
}

}  // namespace fuserc::lower
