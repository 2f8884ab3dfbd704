// Owns `fuserc bench GRAPH`'s timing of library steps (matrix products) in the CPU executor the
// emulator runs them with (runtime/library/cpu_matmul.h): each step's product at the symbols
// given (hints for the rest), on host buffers of the step's extents and strides, median of runs.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/executable.h"

namespace fuserc::cmd {

// The symbol values: `given` by name (every name must be a symbol of `exe`), hints for the rest.
std::vector<int64_t> symbols_or_hints(const Executable& exe,
                                      const std::map<std::string, int64_t>& given);

// Times every library step of `exe` bound to `symbols`: one JSON object per step (name, m, n,
// k, batch, outer, dtype, us, gflops, threads). Empty when the package has none.
nlohmann::json bench_library_steps(Executable& exe, const std::vector<int64_t>& symbols,
                                   int runs);

}  // namespace fuserc::cmd
