// Owns binding the symbols of a graph from the tensors a user supplies: every declared input
// must be present with its dtype and rank, integer extents must match, a symbol must get one
// value from every place it appears, within its declared [min, max]. Used by `eval` (from the
// Fusion) and by the runtime (from a package), so both refuse bad inputs the same way.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "core/base/safetensors.h"

namespace fuserc {

struct ExtentSpec {
  int64_t value = 0;   // when symbol is empty
  std::string symbol;  // a symbol name, or empty for a fixed extent
};

struct InputSpec {
  std::string name;
  DType dtype = DType::F32;
  bool scalar = false;  // declared without a shape: a rank-0 tensor in files
  std::vector<ExtentSpec> shape;
};

struct SymbolRange {
  std::string name;
  int64_t min = 1;
  int64_t max = 0;
};

using SymbolValues = std::map<std::string, int64_t>;

// Checks `tensors` (read from `file`) against the inputs and returns the symbols' values.
// Throws UserError("file: ...") for a missing or unexpected tensor, a wrong dtype or rank, a
// wrong fixed extent, a symbol bound to two sizes, or a symbol outside its range.
SymbolValues bind_inputs(const std::vector<InputSpec>& inputs,
                         const std::vector<SymbolRange>& symbols, const TensorMap& tensors,
                         const std::string& file);

// The same from the inputs' shapes alone (one per input, in order; a scalar's is empty), for
// callers whose tensors live elsewhere (on a GPU): ranks, fixed extents, symbols bound once,
// ranges. `file` names the caller in messages.
SymbolValues bind_input_shapes(const std::vector<InputSpec>& inputs,
                               const std::vector<SymbolRange>& symbols,
                               const std::vector<std::vector<int64_t>>& shapes,
                               const std::string& file);

}  // namespace fuserc
