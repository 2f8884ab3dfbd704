#include "core/eval/interpreter.h"

#include <set>

#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"

namespace fuserc {

using eval::EvalContext;

std::vector<int64_t> EvalContext::concrete_shape(const std::vector<Expr>& shape) const {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const auto& e : shape) out.push_back(concrete(e));
  return out;
}

int64_t EvalContext::concrete(const Expr& e) const {
  return evaluate(e, [&](const std::string& s) -> std::optional<int64_t> {
    auto it = symbols.find(s);
    if (it == symbols.end()) return std::nullopt;
    return it->second;
  });
}

DType eval::storage_dtype(DType declared) {
  return declared == DType::F16 || declared == DType::BF16 ? DType::F32 : declared;
}

std::vector<int64_t> eval::contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * shape[d + 1];
  return s;
}

std::vector<InputSpec> input_specs(const Fusion& f) {
  std::vector<InputSpec> specs;
  for (ValueId id : f.inputs) {
    const Value& v = f.value(id);
    InputSpec s;
    s.name = v.name;
    s.dtype = v.dtype;
    s.scalar = v.scalar_input;
    for (const auto& e : v.shape) {
      ExtentSpec x;
      if (e.is_symbol())
        x.symbol = e.name();
      else
        x.value = e.value();
      s.shape.push_back(x);
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

std::vector<SymbolRange> symbol_ranges(const Fusion& f) {
  std::vector<SymbolRange> r;
  for (const auto& s : f.symbols) r.push_back({s.name, s.min, s.max});
  return r;
}

namespace {

std::vector<HostTensor> eval_op(const EvalContext& ctx, const Op& op) {
  switch (op.info().group) {
    case OpGroup::Unary:
    case OpGroup::Binary:
    case OpGroup::Ternary:
    case OpGroup::Cast: return eval::eval_elementwise(ctx, op);
    case OpGroup::Reduction: return eval::eval_reduction(ctx, op);
    case OpGroup::Shape:
    case OpGroup::Control: return eval::eval_shape_op(ctx, op);
    case OpGroup::Creation:
    case OpGroup::Random: return eval::eval_creation(ctx, op);
    case OpGroup::Reserved: break;
  }
  FUSERC_UNREACHABLE(std::string("cannot evaluate op ") + op_name(op.kind));
}

}  // namespace

std::vector<std::pair<std::string, HostTensor>> evaluate_fusion(const Fusion& f,
                                                                const TensorMap& inputs,
                                                                const std::string& inputs_file) {
  SymbolValues symbols = bind_inputs(input_specs(f), symbol_ranges(f), inputs, inputs_file);
  std::vector<HostTensor> env(f.values.size());
  for (ValueId id : f.inputs) env[id] = inputs.at(f.value(id).name);

  std::vector<bool> keep(f.values.size(), false);
  for (ValueId o : f.outputs) keep[f.updated_value(o)] = true;
  // Ops no output depends on are skipped (as compiling removes them).
  std::vector<bool> needed = keep;
  std::vector<bool> run(f.ops.size(), false);
  for (size_t k = f.ops.size(); k-- > 0;) {
    for (ValueId o : f.ops[k].outs) run[k] = run[k] || needed[o];
    if (!run[k]) continue;
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal()) needed[a.value] = true;
  }
  // The last op that reads each value, so intermediates are freed as soon as possible.
  std::vector<int> last_use(f.values.size(), -1);
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (const auto& a : f.ops[k].args)
      if (run[k] && !a.is_literal()) last_use[a.value] = static_cast<int>(k);

  EvalContext ctx{f, symbols, env};
  for (size_t k = 0; k < f.ops.size(); ++k) {
    const Op& op = f.ops[k];
    if (!run[k]) continue;
    std::vector<HostTensor> results;
    try {
      results = eval_op(ctx, op);
    } catch (const UserError& e) {
      throw UserError(SourcePlace{inputs_file}, "op " + std::to_string(op.source_index) + " '" +
                                                    op_name(op.kind) + "' (out '" +
                                                    f.value(op.outs[0]).name + "'): " + e.what());
    }
    FUSERC_CHECK(results.size() == op.outs.size(), "op evaluated to the wrong number of results");
    for (size_t i = 0; i < results.size(); ++i) {
      const Value& v = f.value(op.outs[i]);
      FUSERC_CHECK(
          (results[i].dtype() == v.dtype || results[i].dtype() == eval::storage_dtype(v.dtype)) &&
              results[i].shape() == ctx.concrete_shape(v.shape),
          "op " + std::to_string(k) + " evaluated to the wrong type or shape");
      env[op.outs[i]] = std::move(results[i]);
    }
    for (const auto& a : op.args)
      if (!a.is_literal() && last_use[a.value] == static_cast<int>(k) && !keep[a.value] &&
          !f.value(a.value).is_input())
        env[a.value] = HostTensor();
  }

  std::vector<std::pair<std::string, HostTensor>> out;
  std::set<std::string> seen;
  for (ValueId o : f.outputs) {
    const std::string& name = f.value(o).name;
    if (!seen.insert(name).second) continue;
    const HostTensor& t = env[f.updated_value(o)];
    if (t.dtype() == f.value(o).dtype) {
      out.emplace_back(name, t);
      continue;
    }
    // An f16/bf16 value kept in f32: rounded to its dtype (to nearest even) as it is written.
    HostTensor r(f.value(o).dtype, t.shape());
    for (int64_t i = 0; i < t.numel(); ++i) r.store_f32(i, t.load_f32(i));
    out.emplace_back(name, std::move(r));
  }
  return out;
}

}  // namespace fuserc
