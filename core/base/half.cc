#include "core/base/half.h"

#include <bit>

namespace fuserc {
namespace {

// Rounds `bits` (a truncated result) up by one when the dropped part `remainder`, scaled so
// that 0x80000000 is exactly one half, is above a half or a tie with an odd result.
uint32_t round_nearest_even(uint32_t bits, uint32_t remainder) {
  if (remainder > 0x80000000u || (remainder == 0x80000000u && (bits & 1u) != 0)) ++bits;
  return bits;
}

}  // namespace

uint16_t float_to_f16_bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  uint32_t result;
  uint32_t remainder;
  if (abs >= 0x7f800000u) {  // infinity keeps its sign; NaN becomes the canonical quiet NaN
    return static_cast<uint16_t>(abs == 0x7f800000u ? (sign | 0x7c00u) : 0x7fffu);
  } else if (abs > 0x477fefffu) {  // at or above 65520: overflows to infinity
    return static_cast<uint16_t>(sign | 0x7c00u);
  } else if (abs >= 0x38800000u) {  // normal f16 (>= 2^-14)
    remainder = abs << 19;
    result = (abs - 0x38000000u) >> 13;
  } else if (abs <= 0x33000000u) {  // at most 2^-25 (half the smallest subnormal): zero
    return static_cast<uint16_t>(sign);
  } else {  // subnormal f16: shift the mantissa with its implicit bit into place
    const uint32_t shift = 0x7eu - (abs >> 23);  // 14..24
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    remainder = mantissa << (32 - shift);
    result = mantissa >> shift;
  }
  // A carry out of the mantissa correctly moves to the next exponent (or to infinity).
  return static_cast<uint16_t>(sign | round_nearest_even(result, remainder));
}

float f16_bits_to_float(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t out;
  if (exponent == 0x1fu) {
    // As CUDA's host conversion: infinity keeps its sign, any NaN becomes 0x7fffffff.
    out = mantissa != 0 ? 0x7fffffffu : (sign | 0x7f800000u);
  } else if (exponent != 0) {
    out = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    out = sign;
  } else {             // subnormal: normalize (value = mantissa * 2^-24)
    uint32_t e = 113;  // float exponent field of 2^-14
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    out = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
  }
  return std::bit_cast<float>(out);
}

uint16_t float_to_bf16_bits(float value) {
  const uint32_t x = std::bit_cast<uint32_t>(value);
  if ((x & 0x7fffffffu) > 0x7f800000u) return 0x7fffu;  // canonical quiet NaN, as CUDA
  // Rounding up the largest finite values carries into the exponent and gives infinity.
  return static_cast<uint16_t>(round_nearest_even(x >> 16, x << 16));
}

float bf16_bits_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

}  // namespace fuserc
