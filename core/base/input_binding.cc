#include "core/base/input_binding.h"

#include <cstring>

#include "core/base/diagnostics.h"

namespace fuserc {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

[[noreturn]] void fail(const std::string& file, const std::string& msg) {
  throw UserError(SourcePlace{file}, msg);
}

std::string where(const InputSpec& in, size_t d) {
  return "input " + quote(in.name) + " dimension " + std::to_string(d);
}

// What bound each symbol, for messages.
std::string bound_by(const BindingRules& rules, int symbol) {
  for (const auto& s : rules.steps) {
    if (s.symbol != symbol) continue;
    const InputSpec& in = rules.inputs[s.input];
    if (s.kind == BindStepSpec::Kind::Scalar) return "scalar input " + quote(in.name);
    return where(in, static_cast<size_t>(s.dim));
  }
  return "its minimum (no input binds it)";
}

}  // namespace

int64_t integer_scalar(DType dtype, const void* value) {
  if (dtype == DType::I32) {
    int32_t v;
    std::memcpy(&v, value, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, value, 8);
  return v;
}

std::vector<int64_t> bind_symbols(const BindingRules& rules, BindingSizes& sizes,
                                  const std::vector<std::vector<int64_t>>& shapes,
                                  const std::function<int64_t(size_t input)>& scalar_value,
                                  const std::string& file) {
  const auto& inputs = rules.inputs;
  if (shapes.size() != inputs.size())
    fail(file, std::to_string(shapes.size()) + " input shapes for " +
                   std::to_string(inputs.size()) + " inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& in = inputs[i];
    size_t rank = in.scalar ? 0 : in.shape.size();
    if (shapes[i].size() != rank)
      fail(file, "input " + quote(in.name) + " has rank " + std::to_string(shapes[i].size()) +
                     " " + shape_text(shapes[i]) + " in the file but rank " +
                     std::to_string(rank) + " in the graph" +
                     (in.scalar ? " (a scalar input is a rank-0 tensor)" : ""));
  }
  const size_t n = rules.symbols.size();
  std::vector<int64_t> values(n, 0);
  std::vector<bool> bound(n, false);
  for (size_t k = 0; k < rules.steps.size(); ++k) {
    const BindStepSpec& s = rules.steps[k];
    const InputSpec& in = inputs[s.input];
    const SymbolRange& sym = rules.symbols[s.symbol];
    int64_t v = 0;
    std::string from;
    switch (s.kind) {
      case BindStepSpec::Kind::Extent:
        v = shapes[s.input][s.dim];
        from = where(in, s.dim);
        break;
      case BindStepSpec::Kind::Scalar:
        v = scalar_value(s.input);
        from = "scalar input " + quote(in.name);
        break;
      case BindStepSpec::Kind::Solve: {
        const int64_t got = shapes[s.input][s.dim];
        int64_t kk = 0, c = 0;
        sizes.solve_terms(k, values, &kk, &c);
        const std::string& text = in.shape[s.dim].text;
        int64_t rest = 0;
        if (kk <= 0 || __builtin_sub_overflow(got, c, &rest) || rest % kk != 0)
          fail(file, where(in, s.dim) + " is " + std::to_string(got) + ", but the graph says " +
                         text + ", which no integer " + sym.name + " makes " +
                         std::to_string(got) + " (" + std::to_string(got) +
                         (c ? (c > 0 ? " - " : " + ") + std::to_string(c > 0 ? c : -c) : "") +
                         " is not a multiple of " + std::to_string(kk) + ")");
        v = rest / kk;
        from = where(in, s.dim) + " (" + text + " = " + std::to_string(got) + ")";
        break;
      }
    }
    if (v < sym.min || v > sym.max)
      fail(file, "symbol " + quote(sym.name) + " = " + std::to_string(v) + " (from " + from +
                     ") is outside its declared range [" + std::to_string(sym.min) + ", " +
                     std::to_string(sym.max) + "]");
    values[s.symbol] = v;
    bound[s.symbol] = true;
  }
  for (size_t i = 0; i < n; ++i)
    if (!bound[i]) values[i] = rules.symbols[i].min;
  // Fixed and plain-symbol extents.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const InputSpec& in = inputs[i];
    for (size_t d = 0; d < shapes[i].size(); ++d) {
      const ExtentSpec& e = in.shape[d];
      const int64_t got = shapes[i][d];
      if (e.kind == ExtentSpec::Kind::Fixed && got != e.value)
        fail(file, where(in, d) + " is " + std::to_string(got) + " but the graph says " +
                       std::to_string(e.value));
      if (e.kind == ExtentSpec::Kind::Symbol && got != values[e.symbol])
        fail(file, "symbol " + quote(rules.symbols[e.symbol].name) + " is bound to two sizes: " +
                       std::to_string(values[e.symbol]) + " by " + bound_by(rules, e.symbol) +
                       " and " + std::to_string(got) + " by " + where(in, d));
    }
  }
  return values;
}

void check_expression_extents(const BindingRules& rules,
                              const std::vector<std::vector<int64_t>>& shapes,
                              const std::function<int64_t(size_t input, size_t dim)>& value,
                              const std::string& file) {
  for (size_t i = 0; i < rules.inputs.size(); ++i) {
    const InputSpec& in = rules.inputs[i];
    for (size_t d = 0; d < in.shape.size() && d < shapes[i].size(); ++d) {
      const ExtentSpec& e = in.shape[d];
      if (e.kind != ExtentSpec::Kind::Expression) continue;
      const int64_t want = value(i, d), got = shapes[i][d];
      if (got != want)
        fail(file, where(in, d) + " is " + std::to_string(got) + " but the graph says " + e.text +
                       " = " + std::to_string(want));
    }
  }
}

std::vector<std::vector<int64_t>> shapes_of_tensors(const BindingRules& rules,
                                                    const TensorMap& tensors,
                                                    const std::string& file) {
  std::vector<std::vector<int64_t>> shapes;
  for (const auto& in : rules.inputs) {
    auto it = tensors.find(in.name);
    if (it == tensors.end()) fail(file, "missing input tensor " + quote(in.name));
    const HostTensor& t = it->second;
    if (t.dtype() != in.dtype)
      fail(file, "input " + quote(in.name) + " is " + dtype_name(in.dtype) + " in the graph but " +
                     dtype_safetensors_name(t.dtype()) + " in the file");
    shapes.push_back(t.shape());
  }
  for (const auto& [name, t] : tensors) {
    (void)t;
    bool known = false;
    for (const auto& in : rules.inputs) known = known || in.name == name;
    if (known) continue;
    for (const auto& c : rules.constants)
      if (c == name)
        fail(file, "tensor " + quote(name) +
                       " is a constant of the graph: its values are in the graph and the "
                       "package, so it is never passed");
    std::string names;
    for (const auto& in : rules.inputs) names += (names.empty() ? "" : ", ") + in.name;
    fail(file, "tensor " + quote(name) + " is not an input of the graph (inputs: " + names + ")");
  }
  return shapes;
}

int64_t scalar_value_of(const BindingRules& rules, const TensorMap& tensors, size_t input) {
  const HostTensor& t = tensors.at(rules.inputs[input].name);
  return t.load_i64(0);
}

std::string describe_symbols(const BindingRules& rules, const std::vector<int64_t>& values) {
  std::string s;
  for (size_t i = 0; i < rules.symbols.size() && i < values.size(); ++i)
    s += (s.empty() ? "" : ", ") + rules.symbols[i].name + " = " + std::to_string(values[i]);
  return s;
}

}  // namespace fuserc
