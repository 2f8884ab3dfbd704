#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <catch2/catch.hpp>

#include "core/base/half.h"

namespace fuserc {
namespace {

float from_bits(uint32_t bits) {
  return std::bit_cast<float>(bits);
}
uint32_t to_bits(float f) {
  return std::bit_cast<uint32_t>(f);
}

bool is_f16_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}
bool is_bf16_nan(uint16_t h) {
  return (h & 0x7f80u) == 0x7f80u && (h & 0x7fu) != 0;
}

// The value of an f16 bit pattern computed independently, in double.
double f16_reference(uint16_t h) {
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1f) return mantissa ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

}  // namespace

TEST_CASE("f16: every bit pattern decodes exactly and round-trips", "[half]") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = f16_bits_to_float(h);
    if (is_f16_nan(h)) {
      INFO("bits " << b);
      REQUIRE(std::isnan(f));
      REQUIRE(is_f16_nan(float_to_f16_bits(f)));
      continue;
    }
    const double expected = f16_reference(h);
    if (static_cast<double>(f) != expected || std::signbit(f) != std::signbit(expected) ||
        float_to_f16_bits(f) != h) {
      FAIL("f16 bits " << b << " decode to " << f << " (expected " << expected
                       << ") and encode back to " << float_to_f16_bits(f));
    }
  }
}

TEST_CASE("f16: known values", "[half]") {
  CHECK(float_to_f16_bits(1.0f) == 0x3c00);
  CHECK(float_to_f16_bits(-2.0f) == 0xc000);
  CHECK(float_to_f16_bits(0.0f) == 0x0000);
  CHECK(float_to_f16_bits(-0.0f) == 0x8000);
  CHECK(float_to_f16_bits(65504.0f) == 0x7bff);
  CHECK(f16_bits_to_float(0x7bff) == 65504.0f);
  CHECK(float_to_f16_bits(65519.99f) == 0x7bff);
  CHECK(float_to_f16_bits(65520.0f) == 0x7c00);  // the tie rounds to even: infinity
  CHECK(float_to_f16_bits(-65520.0f) == 0xfc00);
  CHECK(float_to_f16_bits(1e10f) == 0x7c00);
  CHECK(float_to_f16_bits(INFINITY) == 0x7c00);
  CHECK(float_to_f16_bits(-INFINITY) == 0xfc00);
  CHECK(float_to_f16_bits(0.1f) == 0x2e66);
  CHECK(float_to_f16_bits(1.0f / 3.0f) == 0x3555);
}

TEST_CASE("f16: subnormals", "[half]") {
  const float tiny = std::ldexp(1.0f, -24);  // smallest f16 subnormal
  CHECK(float_to_f16_bits(tiny) == 0x0001);
  CHECK(f16_bits_to_float(0x0001) == tiny);
  CHECK(f16_bits_to_float(0x8001) == -tiny);
  CHECK(f16_bits_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(float_to_f16_bits(std::ldexp(1023.0f, -24)) == 0x03ff);
  CHECK(float_to_f16_bits(std::ldexp(1.0f, -14)) == 0x0400);  // smallest normal
  CHECK(float_to_f16_bits(std::ldexp(1.0f, -25)) == 0x0000);  // tie to even: zero
  CHECK(float_to_f16_bits(-std::ldexp(1.0f, -25)) == 0x8000);
  CHECK(float_to_f16_bits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001);
  CHECK(float_to_f16_bits(std::ldexp(3.0f, -25)) == 0x0002);     // 1.5 ulp: tie to even 2
  CHECK(float_to_f16_bits(std::ldexp(5.0f, -25)) == 0x0002);     // 2.5 ulp: tie to even 2
  CHECK(float_to_f16_bits(std::ldexp(2047.0f, -25)) == 0x0400);  // carries into the normals
  CHECK(float_to_f16_bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(float_to_f16_bits(std::ldexp(1.0f, -30)) == 0x0000);
}

TEST_CASE("f16: every rounding boundary rounds to nearest, ties to even", "[half]") {
  // Between consecutive positive finite f16 values a and b the midpoint is a float; the
  // midpoint goes to whichever of a, b is even, and one float ulp either side to the nearer.
  for (uint32_t a = 0; a < 0x7c00; ++a) {
    const uint32_t b = a + 1;  // 0x7c00 (infinity) stands for 65536 after 65504
    const double upper = b == 0x7c00 ? 65536.0 : f16_reference(static_cast<uint16_t>(b));
    const float mid = static_cast<float>((f16_reference(static_cast<uint16_t>(a)) + upper) / 2);
    const uint32_t even = (a % 2 == 0) ? a : b;
    const uint16_t below = float_to_f16_bits(std::nextafter(mid, 0.0f));
    const uint16_t at = float_to_f16_bits(mid);
    const uint16_t above = float_to_f16_bits(std::nextafter(mid, INFINITY));
    if (below != a || at != even || above != b || float_to_f16_bits(-mid) != (0x8000 | even)) {
      FAIL("between f16 " << a << " and " << b << ": below " << below << ", at " << at << ", above "
                          << above);
    }
  }
}

TEST_CASE("f16: NaN stays a quiet NaN", "[half]") {
  CHECK(float_to_f16_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7fff);
  CHECK(float_to_f16_bits(-std::numeric_limits<float>::quiet_NaN()) == 0x7fff);
  // Payload only in the low float mantissa bits: plain truncation would give infinity.
  CHECK(is_f16_nan(float_to_f16_bits(from_bits(0x7f800001u))));
  CHECK(is_f16_nan(float_to_f16_bits(from_bits(0xff800001u))));
  CHECK(std::isnan(f16_bits_to_float(0x7c01)));
  CHECK(std::isnan(f16_bits_to_float(0xfe00)));
  CHECK(std::isinf(f16_bits_to_float(0x7c00)));
  CHECK(f16_bits_to_float(0xfc00) == -INFINITY);
}

TEST_CASE("bf16: known values and round trips", "[half]") {
  CHECK(float_to_bf16_bits(1.0f) == 0x3f80);
  CHECK(bf16_bits_to_float(0x3f80) == 1.0f);
  CHECK(float_to_bf16_bits(-2.0f) == 0xc000);
  CHECK(float_to_bf16_bits(-0.0f) == 0x8000);
  CHECK(float_to_bf16_bits(0.1f) == 0x3dcd);
  CHECK(float_to_bf16_bits(INFINITY) == 0x7f80);
  CHECK(float_to_bf16_bits(-INFINITY) == 0xff80);
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::max()) == 0x7f80);  // rounds up to inf
  CHECK(float_to_bf16_bits(from_bits(0x7f7f7fffu)) == 0x7f7f);             // largest finite
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    const float f = bf16_bits_to_float(h);
    if (to_bits(f) != b << 16) FAIL("bf16 " << b << " decodes to float bits " << to_bits(f));
    if (is_bf16_nan(h)) {
      if (!is_bf16_nan(float_to_bf16_bits(f))) FAIL("bf16 NaN " << b << " lost");
    } else if (float_to_bf16_bits(f) != h) {
      FAIL("bf16 " << b << " encodes back to " << float_to_bf16_bits(f));
    }
  }
}

TEST_CASE("bf16: rounding to nearest even at every boundary", "[half]") {
  CHECK(float_to_bf16_bits(from_bits(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(float_to_bf16_bits(from_bits(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(float_to_bf16_bits(from_bits(0x3f808001u)) == 0x3f81);
  CHECK(float_to_bf16_bits(from_bits(0x3f807fffu)) == 0x3f80);
  CHECK(float_to_bf16_bits(from_bits(0x00008000u)) == 0x0000);  // subnormal tie to zero
  CHECK(float_to_bf16_bits(from_bits(0x00018000u)) == 0x0002);
  CHECK(float_to_bf16_bits(from_bits(0x00000001u)) == 0x0000);
  CHECK(float_to_bf16_bits(from_bits(0x007fffffu)) == 0x0080);  // to the smallest normal
  for (uint32_t a = 0; a < 0x7f80; ++a) {
    const uint32_t mid = (a << 16) | 0x8000u;
    const uint32_t even = (a % 2 == 0) ? a : a + 1;
    const uint16_t below = float_to_bf16_bits(from_bits(mid - 1));
    const uint16_t at = float_to_bf16_bits(from_bits(mid));
    const uint16_t above = float_to_bf16_bits(from_bits(mid + 1));
    const uint16_t negative = float_to_bf16_bits(from_bits(mid | 0x80000000u));
    if (below != a || at != even || above != a + 1 || negative != (0x8000u | even)) {
      FAIL("between bf16 " << a << " and " << a + 1 << ": below " << below << ", at " << at
                           << ", above " << above);
    }
  }
}

TEST_CASE("bf16: NaN stays a quiet NaN", "[half]") {
  CHECK(float_to_bf16_bits(std::numeric_limits<float>::quiet_NaN()) == 0x7fff);
  CHECK(float_to_bf16_bits(from_bits(0x7f800001u)) == 0x7fff);  // truncation would give inf
  CHECK(float_to_bf16_bits(from_bits(0xffffffffu)) == 0x7fff);
  CHECK(std::isnan(bf16_bits_to_float(0x7fc0)));
  CHECK(std::isnan(bf16_bits_to_float(0xff81)));
}

}  // namespace fuserc
