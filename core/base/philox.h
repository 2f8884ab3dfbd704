// Owns fuserc's random numbers on the host: the counter-based Philox4x32-10 generator
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11) and the fixed mapping
// from (seed, offset, element index) to the values of `rand` and `randn`.
//
// The mapping itself lives in philox_impl.h, plain C++ that is compiled both here and, as
// text, into every generated kernel that draws random numbers; it uses only integer
// arithmetic, + - * /, sqrt and explicit fma, all correctly rounded on the host and on every
// CUDA device, so the CPU reference and the GPU produce the same bits. See philox_impl.h for
// the mapping of (seed, offset, index) to counters, keys and values.
#pragma once

#include <array>
#include <cstdint>

namespace fuserc {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// Philox4x32 with 10 rounds (the Random123 reference constants).
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// Element `index` of rand/randn with the given seed and offset; f32 variants serve f16, bf16
// and f32 outputs (rounded when stored).
float philox_uniform_f32(uint64_t seed, uint64_t offset, uint64_t index);
double philox_uniform_f64(uint64_t seed, uint64_t offset, uint64_t index);
float philox_normal_f32(uint64_t seed, uint64_t offset, uint64_t index);
double philox_normal_f64(uint64_t seed, uint64_t offset, uint64_t index);

}  // namespace fuserc
