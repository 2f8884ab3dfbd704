#include "codegen/lower/element_emitter.h"

#include <algorithm>

#include "core/base/diagnostics.h"

namespace fuserc::lower {

namespace {

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> names = [] {
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
        "warpSize", "printf",   "assert",   "main",      "stdin",    "stdout",    "stderr",
        "errno",    "math_errhandling",     "static_assert",         "thread_local",
        "char16_t", "char32_t", "wchar_t",  "bitand",    "bitor",    "compl",     "not_eq",
        "or_eq",    "and_eq",   "xor_eq",   "export",    "concept",  "requires",  "co_await",
        "co_return", "co_yield", "const_cast", "dynamic_cast", "reinterpret_cast",
        "static_cast", "typeid", "restrict", "dim3", "uint3", "float2", "float4", "int2",
        "int4", "double2"};
    // Math functions (crt/math_functions.h and <cmath>: the double and float forms), the
    // half-precision headers' types and functions and the fixed-width integer types: a graph
    // value named `expm1` or `expf` would hide the function a kernel calls.
    static const char* kMath[] = {
        "min", "max", "abs", "exp", "log", "pow", "sqrt", "floor", "ceil", "round", "trunc",
        "sin", "cos", "tan", "tanh", "erf", "erfc", "fma", "isnan", "isinf", "isfinite",
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "copysign", "cospi",
        "cosh", "cyl_bessel_i0", "cyl_bessel_i1", "erfcinv", "erfcx", "erfinv", "exp10", "exp2",
        "expm1", "fabs", "fdim", "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "j0", "j1",
        "jn", "labs", "ldexp", "lgamma", "llabs", "llmax", "llmin", "llrint", "llround", "log10",
        "log1p", "log2", "logb", "lrint", "lround", "modf", "nan", "nearbyint", "nextafter",
        "norm", "norm3d", "norm4d", "normcdf", "normcdfinv", "rcbrt", "remainder", "remquo",
        "rhypot", "rint", "rnorm", "rnorm3d", "rnorm4d", "rsqrt", "scalbln", "scalbn", "signbit",
        "sinh", "sinpi", "tgamma", "ullmax", "ullmin", "umax", "umin", "y0", "y1", "yn",
        "sincos", "sincospi", "fpclassify", "isnormal"};
    static const char* kTypes[] = {
        "half", "half2", "nv_bfloat16", "nv_bfloat162", "int8_t", "int16_t", "int32_t",
        "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "size_t", "ptrdiff_t",
        "intptr_t", "uintptr_t", "hexp", "hexp2", "hexp10", "hlog", "hlog2", "hlog10", "hsqrt",
        "hrsqrt", "hrcp", "hsin", "hcos", "htanh", "hfloor", "hceil", "htrunc", "hrint", "habs",
        "hmax", "hmin", "hisnan", "hisinf", "hneg", "hadd", "hsub", "hmul", "hdiv", "hfma", "heq",
        "hne", "hle", "hge", "hlt", "hgt"};
    std::set<std::string> out;
    for (const char* r : kReserved) out.insert(r);
    for (const char* r : kMath) {
      out.insert(r);
      out.insert(std::string(r) + "f");  // the float form (expf, expm1f, ...)
    }
    for (const char* r : kTypes) out.insert(r);
    return out;
  }();
  return names;
}

// Names of CUDA's headers (cudaSuccess, nv_bfloat16, NV_IS_HOST): no suffix frees them.
bool cuda_prefix(const std::string& name) {
  return name.rfind("cuda", 0) == 0 || name.rfind("nv_", 0) == 0 || name.rfind("NV_", 0) == 0;
}

// fuserc's own helpers and generated names (fz_c0, fz_floordiv, fuserc_emu_...), and the
// implementation's (__half).
bool fuserc_prefix(const std::string& name) {
  return name.rfind("fz_", 0) == 0 || name.rfind("fuserc_", 0) == 0 || name.rfind("__", 0) == 0;
}

}  // namespace

bool clashes_with_c(const std::string& name) {
  if (reserved_names().count(name)) return true;
  // Macros: all-caps names (NULL, INFINITY, M_PI, EOF, HUGE_VAL, CUDART_INF_F, ...).
  bool upper = false, lower = false;
  for (char c : name) upper = upper || (c >= 'A' && c <= 'Z'), lower = lower || (c >= 'a' && c <= 'z');
  if (upper && !lower && name.size() >= 2) return true;
  return cuda_prefix(name);
}

std::string symbol_spelling(const std::string& name) {
  if (clashes_with_c(name) || fuserc_prefix(name)) return "fz_sym_" + name;
  return name;
}

NameTable::NameTable() = default;

std::string NameTable::fresh(const std::string& base) {
  std::string name = base;
  // fuserc's own helpers and generated names start with fz_ / fuserc_; keep user names apart,
  // and those of CUDA's headers (cuda..., nv_..., NV_...), which no suffix makes free.
  if (fuserc_prefix(name) || cuda_prefix(name)) name = "v_" + name;
  if (!taken(name)) {
    taken_.insert(name);
    return name;
  }
  int& last = last_suffix_[name];
  for (int k = last + 1;; ++k) {
    std::string candidate = name + (k == 1 ? "_v" : "_v" + std::to_string(k));
    if (!taken(candidate)) {
      taken_.insert(candidate);
      last = k;
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
}

void ElementEmitter::set_indirect_vector_load(int node, const std::string& vec, const Expr& offset,
                                              int width) {
  FUSERC_CHECK(hoist_to_ != nullptr, "an indirect vector load outside a vector path");
  vector_loads_[node] = vec;
  indirect_[node] = {vec, offset, width};
}

void ElementEmitter::set_sequence(const Expr& step, const Expr& first, kir::Block* before_loop,
                                  int aligned_width) {
  step_ = step;
  first_ = first;
  before_loop_ = before_loop;
  aligned_width_ = aligned_width;
  sequence_conditions_.clear();
}

Expr ElementEmitter::at(const Expr& e) const {
  if (index_locals_.empty()) return coords_(e);
  return coords_(substitute(e, [&](const std::string& s) -> std::optional<Expr> {
    auto it = index_locals_.find(s);
    if (it == index_locals_.end()) return std::nullopt;
    return it->second;
  }));
}

bool ElementEmitter::uses_lane(const Expr& e) const {
  if (!hoist_to_) return false;
  for (const auto& s : free_symbols(e))
    if (s == lane_.name()) return true;
  return false;
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

namespace {

// Branch scopes of the element code: the body (scope 0) and the two branches of each
// condition emitted as if/else, nested.
struct Scopes {
  std::vector<int> parent = {-1}, depth = {0};
  int add(int p) {
    parent.push_back(p);
    depth.push_back(depth[p] + 1);
    return static_cast<int>(parent.size() - 1);
  }
  int common(int a, int b) const {  // lowest common ancestor (depth is bounded)
    while (depth[a] > depth[b]) a = parent[a];
    while (depth[b] > depth[a]) b = parent[b];
    while (a != b) a = parent[a], b = parent[b];
    return a;
  }
};

}  // namespace

std::vector<kir::ValuePtr> ElementEmitter::emit(const std::vector<int>& roots, kir::Block& block) {
  using K = ENode::Kind;
  const std::vector<ENode>& nodes = graph_.nodes();
  const size_t count = nodes.size();
  // Literals, scalar parameters and overridden nodes are used where needed, without a local.
  auto is_inline = [&](int id) {
    K k = nodes[id].kind;
    return k == K::Literal || k == K::Scalar || overrides_.count(id) > 0;
  };

  // 1. The nodes the roots need.
  std::vector<char> needed(count, 0);
  std::vector<int> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (needed[id]) continue;
    needed[id] = 1;
    if (overrides_.count(id)) continue;
    for (int a : nodes[id].args)
      if (!needed[a]) stack.push_back(a);
    for (int d : nodes[id].deps)
      if (!needed[d]) stack.push_back(d);
  }

  // 2. Which depend on the lane (ids are topological: operands first).
  std::vector<char> on_lane(count, 0);
  if (hoist_to_) {
    for (size_t id = 0; id < count; ++id) {
      if (!needed[id]) continue;
      const ENode& n = nodes[id];
      bool dep = vector_loads_.count(static_cast<int>(id)) > 0;
      if (overrides_.count(static_cast<int>(id))) {
        on_lane[id] = n.kind == K::Load;  // a cached load: an array element indexed by the lane
        continue;
      }
      if (n.kind == K::Load) {
        dep = dep || uses_lane(at(n.offset));
        for (const auto& c : n.in_bounds) dep = dep || uses_lane(at(c));
      }
      if (n.kind == K::Iota || n.kind == K::Rand) dep = dep || uses_lane(at(n.index));
      for (const auto& p : n.predicate) dep = dep || uses_lane(at(p));
      for (int a : n.args) dep = dep || on_lane[a];
      for (int d : n.deps) dep = dep || on_lane[d];
      on_lane[id] = dep;
    }
  }

  // 3. Placement, users before operands: each node goes to the innermost scope containing all
  // its uses. It is `certain` when some use there needs it unconditionally (else a load
  // placed there could be out of bounds for the elements that do not use it).
  Scopes scopes;
  std::vector<int> scope_of(count, -1);
  std::vector<char> certain(count, 0);
  std::map<int, std::pair<int, int>> branches;  // if/else condition -> (then, else) scopes
  auto use = [&](int id, int s, bool c) {
    if (is_inline(id)) return;
    if (scope_of[id] < 0) {
      scope_of[id] = s;
      certain[id] = c;
      return;
    }
    int l = scopes.common(scope_of[id], s);
    certain[id] = (l == scope_of[id] && certain[id]) || (c && s == l);
    scope_of[id] = l;
  };
  for (int r : roots) use(r, 0, true);
  for (size_t i = count; i-- > 0;) {
    int id = static_cast<int>(i);
    if (!needed[id] || is_inline(id)) continue;
    const ENode& n = nodes[id];
    int s = scope_of[id];
    bool c = certain[id];
    for (int d : n.deps) use(d, s, c);  // its address or condition uses the index there
    if (n.kind == K::Cond && scopes.depth[s] < kMaxBranchDepth) {
      int t = scopes.add(s), e = scopes.add(s);
      branches[id] = {t, e};
      use(n.args[0], t, c);
      use(n.args[1], e, c);
    } else if (n.kind == K::Cond) {
      for (int a : n.args) use(a, s, false);  // a select: both operands are computed
    } else {
      for (int a : n.args) use(a, s, c);
    }
  }

  // 4. Emission in id order, into the block of each node's scope.
  std::vector<kir::Block> blocks(scopes.parent.size());
  std::vector<kir::ValuePtr> value(count);
  auto value_of = [&](int id) -> kir::ValuePtr {
    if (auto it = overrides_.find(id); it != overrides_.end()) return it->second;
    const ENode& n = nodes[id];
    if (n.kind == K::Literal && n.literal.is_size())  // a kernel parameter (add_size_params)
      return kir::convert(kir::ref(size_param_name(n.literal.size_index), kir::Type::Int64),
                          DType::I64, n.dtype);
    if (n.kind == K::Literal) return kir::literal(n.literal, kir::compute_type_of(n.dtype));
    if (n.kind == K::Scalar) return kir::ref(param_of_(n.value), kir::compute_type_of(n.dtype));
    FUSERC_CHECK(value[id] != nullptr, "element node used before it is emitted");
    return value[id];
  };
  auto conditions = [&](const std::vector<Expr>& preds) {
    std::vector<kir::ValuePtr> conds;
    for (const auto& p : preds) conds.push_back(kir::index_value(at(p), kir::Type::Bool));
    return kir::all_of(std::move(conds));
  };
  for (size_t i = 0; i < count; ++i) {
    int id = static_cast<int>(i);
    if (!needed[id] || is_inline(id)) continue;
    const ENode& n = nodes[id];
    int s = scope_of[id];
    kir::Block& target = s > 0 ? blocks[s] : (hoist_to_ && !on_lane[id] ? *hoist_to_ : block);
    kir::Type type = kir::compute_type_of(n.dtype);
    if (auto it = indirect_.find(id); it != indirect_.end()) {
      // Its index locals (operands of it, so emitted before it) are in the hoisting block.
      hoist_to_->push_back(kir::vec_load(it->second.vec, param_of_(n.value), at(it->second.offset),
                                         n.dtype, it->second.width));
    }
    if (n.kind == K::Index) {
      // The clamped index, in the kernel's index type; reads at its variable use this local.
      std::string name = names_.fresh("ix");
      kir::ValuePtr v =
          kir::call("fz_clamp_index", index_type_,
                    {value_of(n.args[0]), kir::index_value(at(n.offset), index_type_)});
      target.push_back(kir::let(index_type_, name, v));
      index_locals_[n.index.name()] = Expr::index(name, n.offset);
      value[id] = kir::ref(name, index_type_);
      continue;
    }
    std::string name = local_name(id);
    if (auto b = branches.find(id); b != branches.end()) {
      target.push_back(kir::declare(type, name));
      kir::Block then_block = std::move(blocks[b->second.first]);
      kir::Block else_block = std::move(blocks[b->second.second]);
      then_block.push_back(kir::assign(name, value_of(n.args[0])));
      else_block.push_back(kir::assign(name, value_of(n.args[1])));
      target.push_back(
          kir::if_then(conditions(n.predicate), std::move(then_block), std::move(else_block)));
      value[id] = kir::ref(name, type);
      continue;
    }
    kir::ValuePtr v;
    if (n.kind == K::Cond) {
      v = kir::select(conditions(n.predicate), value_of(n.args[0]), value_of(n.args[1]), type);
    } else {
      std::vector<kir::ValuePtr> args;
      for (int a : n.args) args.push_back(value_of(a));
      // A draw computed for every element (not in a branch) can share its Philox block.
      if (n.kind == K::Rand && s == 0 && before_loop_) v = grouped_rand(id, args, target);
      if (!v) v = compute(id, args);
    }
    if (n.kind == K::Load && !certain[id] && !vector_loads_.count(id)) {
      // Possibly not needed here: read only inside the tensor.
      std::vector<kir::ValuePtr> inside;
      bool never = false;
      for (const auto& c : n.in_bounds) {
        Expr e = at(c);
        if (e.is_const(0)) never = true;
        if (!e.is_const()) inside.push_back(kir::index_value(e, kir::Type::Bool));
      }
      kir::ValuePtr zero = kir::literal(Literal::of_int(0), type);
      if (never)
        v = zero;
      else if (!inside.empty())
        v = kir::select(kir::all_of(std::move(inside)), v, zero, type);
    }
    target.push_back(kir::let(type, name, v));
    value[id] = kir::ref(name, type);
  }

  std::vector<kir::ValuePtr> out;
  for (int r : roots) out.push_back(value_of(r));
  return out;
}

kir::ValuePtr ElementEmitter::grouped_rand(int id, const std::vector<kir::ValuePtr>& args,
                                           kir::Block& target) {
  const ENode& n = graph_.node(id);
  bool f64 = n.dtype == DType::F64;
  bool uniform = n.op == OpKind::Rand;
  // Elements per Philox block (README, "Random numbers").
  int64_t group = uniform ? (f64 ? 2 : 4) : (f64 ? 1 : 2);
  if (group == 1) return nullptr;
  Expr index = coords_(n.index);
  Expr at0 = substitute(index, [&](const std::string& s) -> std::optional<Expr> {
    if (s == step_.name()) return Expr(0);
    return std::nullopt;
  });
  if (!((index - at0) == step_)) return nullptr;  // not the next element per iteration
  Expr starts;
  if (aligned_width_ > 0 && aligned_width_ % group == 0) {
    starts = eq(mod(step_, Expr(group)), Expr(0));
    Expr c = eq(mod(at0, Expr(group)), Expr(0));
    if (!c.is_const(1)) sequence_conditions_.push_back(c);
  } else {
    starts = eq(mod(index, Expr(group)), Expr(0));
  }
  std::string bits =
      names_.fresh((n.value != kNoValue ? f_.value(n.value).name : "rand") + "_bits");
  before_loop_->push_back(kir::array(kir::Type::UInt32, bits, 4));
  std::vector<kir::ValuePtr> fill_args = {
      kir::ref(bits, kir::Type::UInt32), args[0], args[1],
      kir::index_value(floordiv(index, Expr(group)), index_type_)};
  kir::ValuePtr cond = kir::index_value(starts, kir::Type::Bool);
  if (!(aligned_width_ > 0 && aligned_width_ % group == 0) && !first_.is_const(0))
    cond = kir::any_of({kir::index_value(first_, kir::Type::Bool), cond});
  target.push_back(kir::if_then(
      cond, {kir::eval(kir::call("fuserc_philox_fill", kir::Type::Bool, std::move(fill_args)))}));
  std::string fn =
      std::string(uniform ? "fuserc_rand_" : "fuserc_randn_") + (f64 ? "f64_of" : "f32_of");
  return kir::call(fn, f64 ? kir::Type::Double : kir::Type::Float,
                   {kir::ref(bits, kir::Type::UInt32), kir::index_value(index, index_type_)});
}

kir::ValuePtr ElementEmitter::compute(int id, const std::vector<kir::ValuePtr>& ops) {
  const ENode& n = graph_.node(id);
  kir::Type type = kir::compute_type_of(n.dtype);
  switch (n.kind) {
    case ENode::Kind::Load: {
      if (auto it = vector_loads_.find(id); it != vector_loads_.end())
        return kir::lane(it->second, lane_, n.dtype, type);
      return kir::load(param_of_(n.value), at(n.offset), n.dtype, type);
    }
    case ENode::Kind::Op:
      if (auto it = reciprocals_.find(id); it != reciprocals_.end())
        return kir::op(OpKind::Mul, n.computation, type, {ops[0], it->second});
      return kir::op(n.op, n.computation, type, ops);
    case ENode::Kind::Convert: return kir::convert(ops[0], graph_.node(n.args[0]).dtype, n.dtype);
    case ENode::Kind::Iota: {
      kir::ValuePtr i = kir::index_value(at(n.index), index_type_);
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
      // f16/bf16 values stay in f32 inside a kernel (rounded only when stored).
      bool half = n.dtype == DType::F16 || n.dtype == DType::BF16;
      return kir::convert(v, DType::F64, half ? DType::F32 : n.dtype);
    }
    case ENode::Kind::Rand: {
      std::vector<kir::ValuePtr> args = ops;
      bool f64 = n.dtype == DType::F64;
      std::string fn = std::string(n.op == OpKind::Rand ? "fuserc_rand_" : "fuserc_randn_") +
                       (f64 ? "f64" : "f32");
      args.push_back(kir::index_value(at(n.index), index_type_));
      return kir::call(fn, f64 ? kir::Type::Double : kir::Type::Float, std::move(args));
    }
    case ENode::Kind::Scalar:
    case ENode::Kind::Index:
    case ENode::Kind::Literal:
    case ENode::Kind::Cond:
    case ENode::Kind::Reduced: break;
  }
  FUSERC_UNREACHABLE("element node kind not emitted here (a reduction result without a value?)");
}

}  // namespace fuserc::lower
