// Owns the host-side conversions between float and the two 16-bit float formats (IEEE
// binary16 "f16" and bfloat16 "bf16"), bit-exact with CUDA's __float2half_rn /
// __float2bfloat16_rn: round to nearest even, overflow to infinity, NaN kept a (quiet) NaN.
#pragma once

#include <cstdint>

namespace fuserc {

uint16_t float_to_f16_bits(float value);
float f16_bits_to_float(uint16_t bits);
uint16_t float_to_bf16_bits(float value);
float bf16_bits_to_float(uint16_t bits);

// A double is converted to f16/bf16 through float (two roundings), as PyTorch's c10::Half and
// c10::BFloat16 constructors do; callers write float_to_f16_bits(static_cast<float>(d)).

}  // namespace fuserc
