#include "codegen/lower/element_emitter.h"

#include <algorithm>

#include "core/base/diagnostics.h"

namespace fuserc::lower {

NameTable::NameTable() {
  static const char* kReserved[] = {
      "alignas",  "alignof",  "and",      "asm",       "auto",     "bool",      "break",
      "case",     "catch",    "char",     "class",     "const",    "constexpr", "continue",
      "decltype", "default",  "delete",   "do",        "double",   "else",      "enum",
      "explicit", "extern",   "false",    "float",     "for",      "friend",    "goto",
      "if",       "inline",   "int",      "long",      "mutable",  "namespace", "new",
      "noexcept", "not",      "nullptr",  "operator",  "or",       "private",   "protected",
      "public",   "register", "return",   "short",     "signed",   "sizeof",    "static",
      "struct",   "switch",   "template", "this",      "throw",    "true",      "try",
      "typedef",  "typename", "union",    "unsigned",  "using",    "virtual",   "void",
      "volatile", "while",    "xor",      "threadIdx", "blockIdx", "blockDim",  "gridDim",
      "warpSize", "min",      "max",      "abs",       "exp",      "log",       "pow",
      "sqrt",     "floor",    "ceil",     "round",     "trunc",    "sin",       "cos",
      "tan",      "tanh",     "erf",      "erfc",      "fma",      "isnan",     "isinf",
      "isfinite", "printf",   "assert",   "main"};
  for (const char* r : kReserved) taken_.insert(r);
}

std::string NameTable::fresh(const std::string& base) {
  std::string name = base;
  // fuserc's own helpers and generated names start with fz_ / fuserc_; keep user names apart.
  if (name.rfind("fz_", 0) == 0 || name.rfind("fuserc_", 0) == 0 || name.rfind("__", 0) == 0)
    name = "v_" + name;
  if (!taken_.count(name)) {
    taken_.insert(name);
    return name;
  }
  for (int k = 1;; ++k) {
    std::string candidate = name + (k == 1 ? "_v" : "_v" + std::to_string(k));
    if (!taken_.count(candidate)) {
      taken_.insert(candidate);
      return candidate;
    }
  }
}

ElementEmitter::ElementEmitter(const Fusion& f, const ElementGraph& g, NameTable& names,
                               std::function<Expr(const Expr&)> coords,
                               std::function<std::string(ValueId)> param_of, kir::Type index_type)
    : f_(f),
      graph_(g),
      names_(names),
      coords_(std::move(coords)),
      param_of_(std::move(param_of)),
      index_type_(index_type) {}

void ElementEmitter::set_lane(const Expr& lane, kir::Block* hoist_to,
                              std::map<int, std::string> vector_loads) {
  lane_ = lane;
  hoist_to_ = hoist_to;
  vector_loads_ = std::move(vector_loads);
  lane_dependent_.clear();
  scopes_.clear();
  scopes_.push_back({hoist_to, {}});
}

bool ElementEmitter::uses_lane(const Expr& e) const {
  if (!hoist_to_) return false;
  for (const auto& s : free_symbols(e))
    if (s == lane_.name()) return true;
  return false;
}

bool ElementEmitter::depends_on_lane(int id) {
  if (!hoist_to_) return false;
  if (auto it = lane_dependent_.find(id); it != lane_dependent_.end()) return it->second;
  const ENode& n = graph_.node(id);
  bool dep = vector_loads_.count(id) > 0;
  // A cached load is an array element indexed by the lane.
  if (auto o = overrides_.find(id); o != overrides_.end() && n.kind == ENode::Kind::Load)
    dep = true;
  if (n.kind == ENode::Kind::Load) dep = dep || uses_lane(coords_(n.offset));
  if (n.kind == ENode::Kind::Iota || n.kind == ENode::Kind::Rand)
    dep = dep || uses_lane(coords_(n.index));
  for (const auto& p : n.predicate) dep = dep || uses_lane(coords_(p));
  for (int a : n.args) dep = dep || depends_on_lane(a);
  lane_dependent_[id] = dep;
  return dep;
}

kir::ValuePtr ElementEmitter::lookup(int id) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto v = it->values.find(id); v != it->values.end()) return v->second;
  return nullptr;
}

std::string ElementEmitter::local_name(int id) {
  const ENode& n = graph_.node(id);
  if (n.value != kNoValue) return names_.fresh(f_.value(n.value).name);
  if (n.kind == ENode::Kind::Convert && !n.args.empty()) {
    const ENode& a = graph_.node(n.args[0]);
    std::string base = a.value != kNoValue ? f_.value(a.value).name : "t";
    return names_.fresh(base + "_" + dtype_name(n.dtype));
  }
  return names_.fresh("t");
}

kir::ValuePtr ElementEmitter::emit(int id, kir::Block& block) {
  FUSERC_CHECK(!scopes_.empty(), "element emission outside a scope");
  if (auto it = overrides_.find(id); it != overrides_.end()) return it->second;
  if (auto v = lookup(id)) return v;
  const ENode& n = graph_.node(id);
  // Literals and scalar parameters are used where they are needed, without a local.
  if (n.kind == ENode::Kind::Literal) return kir::literal(n.literal, kir::compute_type_of(n.dtype));
  if (n.kind == ENode::Kind::Scalar) return compute(id, block);
  // Lane-invariant work goes before the lane loop, unless we are inside a condition (a load
  // hoisted out of a branch could read out of bounds).
  bool hoist = hoist_to_ && scopes_.size() <= 2 && !depends_on_lane(id);
  kir::Block& target = hoist ? *hoist_to_ : block;
  size_t scope = hoist ? 0 : scopes_.size() - 1;
  if (n.kind == ENode::Kind::Cond) {
    kir::ValuePtr v = emit_cond(id, target);
    scopes_[scope].values[id] = v;
    return v;
  }
  kir::ValuePtr value = compute(id, target);
  std::string name = local_name(id);
  kir::Type type = kir::compute_type_of(n.dtype);
  target.push_back(kir::let(type, name, value));
  kir::ValuePtr r = kir::ref(name, type);
  scopes_[scope].values[id] = r;
  return r;
}

kir::ValuePtr ElementEmitter::emit_cond(int id, kir::Block& block) {
  const ENode& n = graph_.node(id);
  kir::Type type = kir::compute_type_of(n.dtype);
  std::string name = local_name(id);
  block.push_back(kir::declare(type, name));
  std::vector<kir::ValuePtr> conds;
  for (const auto& p : n.predicate) conds.push_back(kir::index_value(coords_(p), kir::Type::Bool));
  kir::Block then_block, else_block;
  for (int branch = 0; branch < 2; ++branch) {
    kir::Block& b = branch == 0 ? then_block : else_block;
    scopes_.push_back({&b, {}});
    kir::ValuePtr v = emit(n.args[branch], b);
    b.push_back(kir::assign(name, v));
    scopes_.pop_back();
  }
  block.push_back(
      kir::if_then(kir::all_of(std::move(conds)), std::move(then_block), std::move(else_block)));
  return kir::ref(name, type);
}

kir::ValuePtr ElementEmitter::compute(int id, kir::Block& block) {
  const ENode& n = graph_.node(id);
  kir::Type type = kir::compute_type_of(n.dtype);
  auto operands = [&]() {
    std::vector<kir::ValuePtr> ops;
    for (int a : n.args) ops.push_back(emit(a, block));
    return ops;
  };
  switch (n.kind) {
    case ENode::Kind::Load: {
      if (auto it = vector_loads_.find(id); it != vector_loads_.end())
        return kir::lane(it->second, lane_, n.dtype, type);
      return kir::load(param_of_(n.value), coords_(n.offset), n.dtype, type);
    }
    case ENode::Kind::Scalar: return kir::ref(param_of_(n.value), type);
    case ENode::Kind::Op: return kir::op(n.op, n.computation, type, operands());
    case ENode::Kind::Convert: {
      auto ops = operands();
      return kir::convert(ops[0], graph_.node(n.args[0]).dtype, n.dtype);
    }
    case ENode::Kind::Iota: {
      kir::ValuePtr i = kir::index_value(coords_(n.index), index_type_);
      bool exact = !is_float(n.dtype) && n.start.kind != Literal::Kind::Float &&
                   n.step.kind != Literal::Kind::Float;
      if (exact) {
        kir::ValuePtr v = kir::call(
            "fz_iota_exact", kir::Type::Int64,
            {kir::literal(n.start, kir::Type::Int64), kir::literal(n.step, kir::Type::Int64), i});
        return kir::convert(v, DType::I64, n.dtype);
      }
      kir::ValuePtr v = kir::call(
          "fz_iota", kir::Type::Double,
          {kir::literal(n.start, kir::Type::Double), kir::literal(n.step, kir::Type::Double), i});
      return kir::convert(v, DType::F64, n.dtype);
    }
    case ENode::Kind::Rand: {
      auto ops = operands();
      bool f64 = n.dtype == DType::F64;
      std::string fn = std::string(n.op == OpKind::Rand ? "fuserc_rand_" : "fuserc_randn_") +
                       (f64 ? "f64" : "f32");
      ops.push_back(kir::index_value(coords_(n.index), index_type_));
      return kir::call(fn, f64 ? kir::Type::Double : kir::Type::Float, std::move(ops));
    }
    case ENode::Kind::Literal:
    case ENode::Kind::Cond:
    case ENode::Kind::Reduced: break;
  }
  FUSERC_UNREACHABLE("element node kind not emitted here (a reduction result without a value?)");
}

}  // namespace fuserc::lower
