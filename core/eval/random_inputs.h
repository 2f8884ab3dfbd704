// Owns making random input tensors for a graph at chosen symbol values: what `fuserc inputs`
// writes and what the tests feed to eval and to generated kernels. Values are drawn with
// Philox from (seed, input index, element index), so they are the same on every machine.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/base/safetensors.h"
#include "core/ir/fusion.h"

namespace fuserc {

// Symbol values: those given, the hints for the rest. Checks each against its range.
std::map<std::string, int64_t> choose_symbol_values(const Fusion& f,
                                                    const std::map<std::string, int64_t>& given);

// Tensors: floats uniform in the input's `range` (default [-2, 2]), integers uniform in the
// range's integers, bools true or false with equal odds. Scalar inputs without a range:
// integers in [0, 1000), floats in [0.01, 0.51), bools true. An integer input without a range
// that reaches the index of index_select or gather through views and casts is drawn inside
// the extent it indexes (the smallest, when it indexes several), as the reference does.
TensorMap make_random_inputs(const Fusion& f, const std::map<std::string, int64_t>& symbols,
                             uint64_t seed);

}  // namespace fuserc
