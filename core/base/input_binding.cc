#include "core/base/input_binding.h"

#include "core/base/diagnostics.h"

namespace fuserc {

namespace {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Binds symbols one input shape at a time, then checks their ranges.
class ShapeBinder {
 public:
  explicit ShapeBinder(const std::string& file) : file_(file) {}
  [[noreturn]] void fail(const std::string& msg) const { throw UserError(SourcePlace{file_}, msg); }

  void add(const InputSpec& in, const std::vector<int64_t>& shape) {
    size_t rank = in.scalar ? 0 : in.shape.size();
    if (shape.size() != rank)
      fail("input " + quote(in.name) + " has rank " + std::to_string(shape.size()) + " " +
           shape_text(shape) + " in the file but rank " + std::to_string(rank) + " in the graph" +
           (in.scalar ? " (a scalar input is a rank-0 tensor)" : ""));
    for (size_t d = 0; d < rank; ++d) {
      const ExtentSpec& e = in.shape[d];
      int64_t got = shape[d];
      std::string where = "input " + quote(in.name) + " dimension " + std::to_string(d);
      if (e.symbol.empty()) {
        if (got != e.value)
          fail(where + " is " + std::to_string(got) + " but the graph says " +
               std::to_string(e.value));
        continue;
      }
      auto [pos, fresh] = values_.emplace(e.symbol, got);
      if (fresh) {
        bound_by_[e.symbol] = where;
      } else if (pos->second != got) {
        fail("symbol " + quote(e.symbol) +
             " is bound to two sizes: " + std::to_string(pos->second) + " by " +
             bound_by_[e.symbol] + " and " + std::to_string(got) + " by " + where);
      }
    }
  }

  SymbolValues finish(const std::vector<SymbolRange>& symbols) {
    for (const auto& s : symbols) {
      auto it = values_.find(s.name);
      if (it == values_.end()) continue;
      if (it->second < s.min || it->second > s.max)
        fail("symbol " + quote(s.name) + " = " + std::to_string(it->second) + " (from " +
             bound_by_[s.name] + ") is outside its declared range [" + std::to_string(s.min) +
             ", " + std::to_string(s.max) + "]");
    }
    return values_;
  }

 private:
  const std::string& file_;
  std::map<std::string, std::string> bound_by_;  // symbol -> "input 'x' dimension 0"
  SymbolValues values_;
};

}  // namespace

SymbolValues bind_input_shapes(const std::vector<InputSpec>& inputs,
                               const std::vector<SymbolRange>& symbols,
                               const std::vector<std::vector<int64_t>>& shapes,
                               const std::string& file) {
  ShapeBinder binder(file);
  if (shapes.size() != inputs.size())
    binder.fail(std::to_string(shapes.size()) + " input shapes for " +
                std::to_string(inputs.size()) + " inputs");
  for (size_t i = 0; i < inputs.size(); ++i) binder.add(inputs[i], shapes[i]);
  return binder.finish(symbols);
}

SymbolValues bind_inputs(const std::vector<InputSpec>& inputs,
                         const std::vector<SymbolRange>& symbols, const TensorMap& tensors,
                         const std::string& file) {
  ShapeBinder binder(file);
  for (const auto& in : inputs) {
    auto it = tensors.find(in.name);
    if (it == tensors.end()) binder.fail("missing input tensor " + quote(in.name));
    const HostTensor& t = it->second;
    if (t.dtype() != in.dtype)
      binder.fail("input " + quote(in.name) + " is " + dtype_name(in.dtype) + " in the graph but " +
                  dtype_safetensors_name(t.dtype()) + " in the file");
    binder.add(in, t.shape());
  }
  for (const auto& [name, t] : tensors) {
    bool known = false;
    for (const auto& in : inputs) known = known || in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : inputs) names += (names.empty() ? "" : ", ") + in.name;
      binder.fail("tensor " + quote(name) + " is not an input of the graph (inputs: " + names +
                  ")");
    }
    (void)t;
  }
  return binder.finish(symbols);
}

}  // namespace fuserc
