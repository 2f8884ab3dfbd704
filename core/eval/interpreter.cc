#include "core/eval/interpreter.h"

#include <map>
#include <unordered_map>
#include <set>

#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"
#include "core/ir/constant_tensor.h"

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

BindingRules binding_rules(const Fusion& f, std::vector<int>* rule_input) {
  BindingRules r;
  std::map<std::string, int> symbol_index;
  for (const auto& s : f.symbols) {
    symbol_index[s.name] = static_cast<int>(r.symbols.size());
    r.symbols.push_back({s.name, s.min, s.max});
  }
  std::vector<int> index_of_input(f.inputs.size(), -1);
  for (size_t k = 0; k < f.inputs.size(); ++k) {
    const Value& v = f.value(f.inputs[k]);
    if (v.is_constant()) {
      r.constants.push_back(v.name);
      continue;
    }
    InputSpec s;
    s.name = v.name;
    s.dtype = v.dtype;
    s.scalar = v.scalar_input;
    if (!v.sets_symbol.empty()) s.sets_symbol = symbol_index.at(v.sets_symbol);
    for (const auto& e : v.shape) {
      ExtentSpec x;
      if (e.is_symbol()) {
        x.kind = ExtentSpec::Kind::Symbol;
        x.symbol = symbol_index.at(e.name());
      } else if (e.is_const()) {
        x.kind = ExtentSpec::Kind::Fixed;
        x.value = e.value();
      } else {
        x.kind = ExtentSpec::Kind::Expression;
      }
      x.text = e.str();
      s.shape.push_back(x);
    }
    index_of_input[k] = static_cast<int>(r.inputs.size());
    if (rule_input) rule_input->push_back(static_cast<int>(k));
    r.inputs.push_back(std::move(s));
  }
  for (const auto& step : f.bind_steps) {
    BindStepSpec s;
    s.kind = step.kind == SymbolBindStep::Kind::Extent   ? BindStepSpec::Kind::Extent
             : step.kind == SymbolBindStep::Kind::Scalar ? BindStepSpec::Kind::Scalar
                                                         : BindStepSpec::Kind::Solve;
    s.symbol = symbol_index.at(step.symbol);
    s.input = index_of_input.at(step.input);
    s.dim = step.dim;
    r.steps.push_back(s);
  }
  return r;
}

namespace {

// Solve steps' k and c, evaluated over the symbols bound before them.
class FusionSizes : public BindingSizes {
 public:
  FusionSizes(const Fusion& f, const BindingRules& r) : f_(f) {
    for (size_t i = 0; i < r.symbols.size(); ++i) index_[r.symbols[i].name] = i;
  }
  void solve_terms(size_t step, const std::vector<int64_t>& symbols, int64_t* k,
                   int64_t* c) override {
    auto lookup = [&](const std::string& name) -> std::optional<int64_t> {
      auto it = index_.find(name);
      if (it == index_.end()) return std::nullopt;
      return symbols[it->second];
    };
    *k = evaluate(f_.bind_steps[step].k, lookup);
    *c = evaluate(f_.bind_steps[step].c, lookup);
  }

 private:
  const Fusion& f_;
  std::unordered_map<std::string, size_t> index_;
};

}  // namespace

SymbolValues bind_fusion_inputs(const Fusion& f, const TensorMap& inputs,
                                const std::string& inputs_file) {
  std::vector<int> rule_input;
  BindingRules rules = binding_rules(f, &rule_input);
  auto shapes = shapes_of_tensors(rules, inputs, inputs_file);
  FusionSizes sizes(f, rules);
  std::vector<int64_t> values = bind_symbols(
      rules, sizes, shapes, [&](size_t i) { return scalar_value_of(rules, inputs, i); },
      inputs_file);
  SymbolValues out;
  for (size_t i = 0; i < rules.symbols.size(); ++i) out[rules.symbols[i].name] = values[i];
  auto lookup = [&](const std::string& name) -> std::optional<int64_t> {
    auto it = out.find(name);
    if (it == out.end()) return std::nullopt;
    return it->second;
  };
  check_expression_extents(
      rules, shapes,
      [&](size_t i, size_t d) {
        return evaluate(f.value(f.inputs[rule_input[i]]).shape[d], lookup);
      },
      inputs_file);
  return out;
}

std::vector<HostTensor> eval::evaluate_op(const EvalContext& ctx, const Op& op) {
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
    case OpGroup::Matrix: return eval::eval_matrix(ctx, op);
    case OpGroup::Reserved: break;
  }
  FUSERC_UNREACHABLE(std::string("cannot evaluate op ") + op_name(op.kind));
}

std::vector<std::pair<std::string, HostTensor>> evaluate_fusion(const Fusion& f,
                                                                const TensorMap& inputs,
                                                                const std::string& inputs_file) {
  SymbolValues symbols = bind_fusion_inputs(f, inputs, inputs_file);
  std::vector<HostTensor> env(f.values.size());
  for (ValueId id : f.inputs) {
    const Value& v = f.value(id);
    if (!v.is_constant()) {
      env[id] = inputs.at(v.name);
      continue;
    }
    env[id] = constant_tensor(v);
  }

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
      results = eval::evaluate_op(ctx, op);
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
