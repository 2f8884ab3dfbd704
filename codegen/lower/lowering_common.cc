#include "codegen/lower/lowering_common.h"

#include <algorithm>
#include <set>

#include "codegen/lower/element_emitter.h"
#include "core/base/diagnostics.h"
#include "core/ir/element_access.h"

namespace fuserc::lower {

Expr subst(const Expr& e, const std::map<std::string, Expr>& m) {
  return substitute(e, [&](const std::string& s) -> std::optional<Expr> {
    auto it = m.find(s);
    if (it == m.end()) return std::nullopt;
    return it->second;
  });
}

Expr addressable_extent(const Value& v) {
  if (v.strides.empty()) return v.numel();
  Expr last(0);
  for (size_t d = 0; d < v.shape.size(); ++d) last = last + (v.shape[d] - 1) * v.strides[d];
  return last + 1;
}

Expr output_offset(const Fusion& f, ValueId o, const std::vector<Expr>& coords,
                   const Expr& linear) {
  for (const auto& [out, in] : f.aliases) {
    if (out != o || f.value(in).strides.empty()) continue;
    const std::vector<Expr>& strides = f.value(in).strides;
    FUSERC_CHECK(strides.size() == coords.size(), "output_offset: rank mismatch");
    Expr off(0);
    for (size_t d = 0; d < coords.size(); ++d) off = off + coords[d] * strides[d];
    return off;
  }
  return linear;
}

std::string op_listing(const Fusion& f, const Segment& s) {
  std::string out;
  for (int k : s.ops) {
    const Op& op = f.ops[k];
    std::string args;
    for (const auto& a : op.args)
      args +=
          (args.empty() ? "" : ", ") + (a.is_literal() ? a.literal.str() : f.value(a.value).name);
    std::string outs;
    for (ValueId o : op.outs) outs += (outs.empty() ? "" : ", ") + f.value(o).name;
    std::string name = op.kind == OpKind::GeluTanh ? "gelu_tanh" : op_name(op.kind);
    out += (out.empty() ? "" : "; ") + outs + " = " + name + "(" + args + ")";
  }
  return out;
}

void append_guarded(kir::Block& out, const Expr& cond, kir::Block body) {
  if (cond.is_const(0)) return;
  if (cond.is_const()) {
    for (auto& s : body) out.push_back(std::move(s));
    return;
  }
  out.push_back(kir::if_then(kir::index_value(cond, kir::Type::Bool), std::move(body)));
}

kir::ValuePtr condition_value(const Expr& cond) {
  if (cond.is_const()) return kir::literal(Literal::of_bool(cond.value() != 0), kir::Type::Bool);
  return kir::index_value(cond, kir::Type::Bool);
}

std::map<ValueId, std::string> name_segment_params(const Fusion& f, const Segment& s,
                                                   NameTable& names) {
  for (const auto& sym : f.symbols) names.reserve(symbol_spelling(sym.name));
  for (size_t i = 0; i < f.size_literals().size(); ++i)
    names.reserve(size_param_name(static_cast<int32_t>(i)));
  std::map<ValueId, std::string> param_name;
  for (ValueId v : s.inputs) param_name[v] = names.fresh(f.value(v).name);
  for (ValueId v : s.outputs) param_name[v] = names.fresh(f.value(v).name);
  return param_name;
}

void add_tensor_params(const Fusion& f, const Segment& s,
                       const std::map<ValueId, std::string>& param_name, kir::Kernel& k,
                       KernelSummary& ks) {
  std::set<ValueId> aliased;
  for (const auto& [o, in] : f.aliases) aliased.insert(o), aliased.insert(in);
  auto add = [&](ValueId v, bool written) {
    const Value& val = f.value(v);
    kir::Param p;
    p.name = param_name.at(v);
    KernelArg arg;
    arg.name = p.name;
    arg.value = v;
    arg.dtype = val.dtype;
    if (val.scalar_input) {
      p.kind = kir::Param::Kind::Scalar;
      p.dtype = val.dtype;
      p.type = kir::compute_type_of(val.dtype);
      arg.role = KernelArg::Role::Scalar;
    } else {
      p.kind = kir::Param::Kind::Pointer;
      p.dtype = val.dtype;
      p.is_const = !written;
      p.restrict = !aliased.count(v);
      arg.role = written ? KernelArg::Role::Output : KernelArg::Role::Input;
    }
    k.params.push_back(p);
    ks.args.push_back(arg);
  };
  for (ValueId v : s.inputs)
    if (!f.value(v).scalar_input) add(v, false);
  for (ValueId v : s.inputs)
    if (f.value(v).scalar_input) add(v, false);
  for (ValueId v : s.outputs) add(v, true);
  for (const auto& [out, in] : f.aliases) {
    if (std::find(s.outputs.begin(), s.outputs.end(), out) == s.outputs.end()) continue;
    Expr distinct = elements_distinct(f, f.value(in));
    if (!distinct.is_const(1))
      ks.guards.push_back({KernelGuard::Kind::Other, distinct,
                           "input '" + f.value(in).name +
                               "' is written in place through strides under which two of its "
                               "elements share memory"});
  }
}

void add_scratch_param(const std::string& name, kir::Type element, const Expr& bytes,
                       bool zero_init, kir::Kernel& k, KernelSummary& ks) {
  ks.allocations.push_back({bytes, zero_init});
  kir::Param p;
  p.name = name;
  p.kind = kir::Param::Kind::Pointer;
  p.workspace = true;
  p.element = element;
  p.is_const = false;
  p.restrict = false;  // other blocks write it too
  k.params.push_back(p);
  KernelArg arg;
  arg.name = name;
  arg.role = KernelArg::Role::Workspace;
  arg.allocation = static_cast<int>(ks.allocations.size() - 1);
  ks.args.push_back(arg);
}

void add_symbol_params(const Fusion& f, kir::Kernel& k, KernelSummary& ks) {
  std::set<std::string> used = kir::symbols_used(k.body);
  bool index64 = k.index_type == kir::Type::Int64;
  for (const auto& s : f.symbols) {
    if (!used.count(s.name)) continue;
    kir::Param p;
    p.name = symbol_spelling(s.name);
    if (p.name != s.name) k.symbol_spelling[s.name] = p.name;
    p.kind = kir::Param::Kind::Scalar;
    p.type = k.index_type;
    p.dtype = index64 ? DType::I64 : DType::I32;
    k.params.push_back(p);
    KernelArg arg;
    arg.name = s.name;
    arg.role = KernelArg::Role::Symbol;
    arg.symbol = s.name;
    arg.dtype = p.dtype;
    ks.args.push_back(arg);
  }
  if (f.size_literals().empty()) return;
  std::set<std::string> read = kir::names_read(k.body);
  for (size_t i = 0; i < f.size_literals().size(); ++i) {
    std::string name = size_param_name(static_cast<int32_t>(i));
    if (!read.count(name)) continue;
    add_size_param(name, f.size_literals()[i], k, ks);
  }
}

void add_size_param(const std::string& name, const Expr& value, kir::Kernel& k,
                    KernelSummary& ks) {
  kir::Param p;
  p.name = name;
  p.kind = kir::Param::Kind::Scalar;
  p.type = kir::Type::Int64;
  p.dtype = DType::I64;
  k.params.push_back(p);
  KernelArg arg;
  arg.name = name;
  arg.role = KernelArg::Role::Size;
  arg.size = value;
  arg.dtype = DType::I64;
  ks.args.push_back(arg);
}

}  // namespace fuserc::lower
