#include "core/base/input_binding.h"

#include "core/base/diagnostics.h"

namespace fuserc {

SymbolValues bind_inputs(const std::vector<InputSpec>& inputs,
                         const std::vector<SymbolRange>& symbols, const TensorMap& tensors,
                         const std::string& file) {
  auto fail = [&](const std::string& msg) { throw UserError(SourcePlace{file}, msg); };
  std::map<std::string, std::string> bound_by;  // symbol -> "input 'x' dimension 0"
  SymbolValues values;
  for (const auto& in : inputs) {
    auto it = tensors.find(in.name);
    if (it == tensors.end()) fail("missing input tensor " + quote(in.name));
    const HostTensor& t = it->second;
    if (t.dtype() != in.dtype)
      fail("input " + quote(in.name) + " is " + dtype_name(in.dtype) + " in the graph but " +
           dtype_safetensors_name(t.dtype()) + " in the file");
    size_t rank = in.scalar ? 0 : in.shape.size();
    if (static_cast<size_t>(t.rank()) != rank)
      fail("input " + quote(in.name) + " has rank " + std::to_string(t.rank()) + " " +
           t.shape_string() + " in the file but rank " + std::to_string(rank) + " in the graph" +
           (in.scalar ? " (a scalar input is a rank-0 tensor)" : ""));
    for (size_t d = 0; d < rank; ++d) {
      const ExtentSpec& e = in.shape[d];
      int64_t got = t.shape()[d];
      std::string where = "input " + quote(in.name) + " dimension " + std::to_string(d);
      if (e.symbol.empty()) {
        if (got != e.value)
          fail(where + " is " + std::to_string(got) + " but the graph says " +
               std::to_string(e.value));
        continue;
      }
      auto [pos, fresh] = values.emplace(e.symbol, got);
      if (fresh) {
        bound_by[e.symbol] = where;
      } else if (pos->second != got) {
        fail("symbol " + quote(e.symbol) +
             " is bound to two sizes: " + std::to_string(pos->second) + " by " +
             bound_by[e.symbol] + " and " + std::to_string(got) + " by " + where);
      }
    }
  }
  for (const auto& [name, t] : tensors) {
    bool known = false;
    for (const auto& in : inputs) known = known || in.name == name;
    if (!known) {
      std::string names;
      for (const auto& in : inputs) names += (names.empty() ? "" : ", ") + in.name;
      fail("tensor " + quote(name) + " is not an input of the graph (inputs: " + names + ")");
    }
    (void)t;
  }
  for (const auto& s : symbols) {
    auto it = values.find(s.name);
    if (it == values.end()) continue;
    if (it->second < s.min || it->second > s.max)
      fail("symbol " + quote(s.name) + " = " + std::to_string(it->second) + " (from " +
           bound_by[s.name] + ") is outside its declared range [" + std::to_string(s.min) + ", " +
           std::to_string(s.max) + "]");
  }
  return values;
}

}  // namespace fuserc
