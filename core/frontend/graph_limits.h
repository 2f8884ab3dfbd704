// Owns the resource limits of a fusion graph: the caps the parser enforces so that a hostile
// or runaway graph is refused with a one-line error instead of exhausting memory or producing
// names no file system or compiler accepts. README "Limits" lists them with the others.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fuserc {

inline constexpr size_t kMaxNameLength = 128;  // any identifier: graph, input, result, symbol
inline constexpr size_t kMaxRank = 32;         // dimensions of any input or op result
inline constexpr size_t kMaxOps = 1'000'000;   // entries of "ops"
inline constexpr size_t kMaxInputs = 100'000;  // entries of "inputs"
inline constexpr size_t kMaxSymbols = 10'000;  // entries of "symbols"

}  // namespace fuserc
