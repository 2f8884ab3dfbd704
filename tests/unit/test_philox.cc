// Tests for fuserc's random numbers: Philox4x32-10 against the published known answers, the
// (seed, offset, index) mapping of philox_impl.h, the statistics of the values, and the accuracy
// of the software log / cos(2 pi u) that make host and device agree bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/base/philox.h"
#include "core/base/philox_impl.h"

namespace fuserc {
namespace {

constexpr uint64_t kSeed = 0x0123456789ABCDEFull;    // high 32 bits set
constexpr uint64_t kOffset = 0xFEDCBA9876543210ull;  // high 32 bits set

// The Philox block of the mapping: counter (lo32(g), hi32(g), lo32(offset), hi32(offset)),
// key (lo32(seed), hi32(seed)).
PhiloxCounter block(uint64_t seed, uint64_t offset, uint64_t g) {
  return philox4x32_10({static_cast<uint32_t>(g), static_cast<uint32_t>(g >> 32),
                        static_cast<uint32_t>(offset), static_cast<uint32_t>(offset >> 32)},
                       {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
}

uint64_t bits53(uint32_t hi, uint32_t lo) {
  return (static_cast<uint64_t>(hi) << 21) ^ (lo >> 11);
}

// sqrt(-2 ln u1) cos(2 pi u2) in long double, from the C library.
long double box_muller_reference(double u1, double u2) {
  const long double two_pi = 6.283185307179586476925286766559005768L;
  return std::sqrt(-2.0L * std::log(static_cast<long double>(u1))) *
         std::cos(two_pi * static_cast<long double>(u2));
}

// |got - ref| in units of the last place of ref rounded to double.
double ulp_error(double got, long double ref) {
  const double r = std::fabs(static_cast<double>(ref));
  const double ulp = r == 0 ? std::numeric_limits<double>::denorm_min()
                            : std::nextafter(r, std::numeric_limits<double>::infinity()) - r;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / ulp);
}

// cos(2 pi u) in long double, after the same exact reduction as fuserc_cos2pi_d (4u = q + r
// with r in [-1/2, 1/2], all exact), so that the reference keeps full relative accuracy next to
// the zeros at u = 1/4 and 3/4 where cosl(2 pi u) itself would not.
long double cos2pi_reference(double u) {
  const double t = u * 4.0;
  int q = static_cast<int>(t);
  double r = t - q;
  if (r > 0.5) {
    r -= 1.0;
    ++q;
  }
  const long double a = static_cast<long double>(r) * 1.570796326794896619231321691639751442L;
  switch (q & 3) {
    case 0: return std::cos(a);
    case 1: return -std::sin(a);
    case 2: return -std::cos(a);
    default: return std::sin(a);
  }
}

// ---- Philox4x32-10 ----------------------------------------------------------------------------

TEST_CASE("philox4x32_10 matches the Random123 known-answer vectors", "[philox]") {
  // The three "philox4x32 10" lines of Random123's tests/kat_vectors (D. E. Shaw Research,
  // https://github.com/DEShawResearch/random123): counter words 0-3, key words 0-1, expected
  // output words 0-3. Zero counter and key, all ones (the key bumps wrap), and the digits of pi.
  struct Kat {
    PhiloxCounter counter;
    PhiloxKey key;
    PhiloxCounter expected;
  };
  const Kat kats[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000},
       {0x00000000, 0x00000000},
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& kat : kats) CHECK(philox4x32_10(kat.counter, kat.key) == kat.expected);
}

TEST_CASE("the impl header's philox and the host API agree", "[philox]") {
  fuserc_u32x4 c = {{1, 2, 3, 4}};
  const fuserc_u32x4 r = fuserc_philox4x32_10(c, 5, 6);
  const PhiloxCounter expected = philox4x32_10({1, 2, 3, 4}, {5, 6});
  CHECK(PhiloxCounter{r.w[0], r.w[1], r.w[2], r.w[3]} == expected);
  const fuserc_u32x4 b = fuserc_philox_block(kSeed, kOffset, 0x0000000500000007ull);
  CHECK(PhiloxCounter{b.w[0], b.w[1], b.w[2], b.w[3]} ==
        block(kSeed, kOffset, 0x0000000500000007ull));
}

// ---- The mapping --------------------------------------------------------------------------------

TEST_CASE("rand f32: element i is word i%4 of block i/4, top 24 bits", "[philox]") {
  for (uint64_t g : {uint64_t{0}, uint64_t{1}, uint64_t{0x0000000500000007}}) {
    const PhiloxCounter r = block(kSeed, kOffset, g);
    for (uint64_t lane = 0; lane < 4; ++lane) {
      const float expected = std::ldexp(static_cast<float>(r[lane] >> 8), -24);
      CHECK(philox_uniform_f32(kSeed, kOffset, 4 * g + lane) == expected);
    }
  }
  // Seed and offset enter only through key and counter words 2-3.
  const PhiloxCounter r = block(42, 0, 0);
  CHECK(philox_uniform_f32(42, 0, 3) == std::ldexp(static_cast<float>(r[3] >> 8), -24));
}

TEST_CASE("rand f64: element i uses words 2(i%2), 2(i%2)+1 of block i/2", "[philox]") {
  for (uint64_t g : {uint64_t{0}, uint64_t{3}, uint64_t{0x0000000500000007}}) {
    const PhiloxCounter r = block(kSeed, kOffset, g);
    for (uint64_t k = 0; k < 2; ++k) {
      const double expected = std::ldexp(static_cast<double>(bits53(r[2 * k], r[2 * k + 1])), -53);
      CHECK(philox_uniform_f64(kSeed, kOffset, 2 * g + k) == expected);
    }
  }
}

TEST_CASE("randn f32: element i is Box-Muller of words 2(i%2), 2(i%2)+1 of block i/2", "[philox]") {
  for (uint64_t g : {uint64_t{0}, uint64_t{3}, uint64_t{0x0000000500000007}}) {
    const PhiloxCounter r = block(kSeed, kOffset, g);
    for (uint64_t k = 0; k < 2; ++k) {
      const double u1 = std::ldexp(static_cast<double>((r[2 * k] >> 8) + 1), -24);
      const double u2 = std::ldexp(static_cast<double>(r[2 * k + 1] >> 8), -24);
      const float got = philox_normal_f32(kSeed, kOffset, 2 * g + k);
      CHECK(got == static_cast<float>(fuserc_box_muller_d(u1, u2)));
      const float ref = static_cast<float>(box_muller_reference(u1, u2));
      CHECK(std::fabs(got - ref) <= std::fabs(ref) * 0x1p-23f);
    }
  }
}

TEST_CASE("randn f64: element i is Box-Muller of the 53-bit pairs of block i", "[philox]") {
  for (uint64_t g : {uint64_t{0}, uint64_t{3}, uint64_t{0x0000000500000007}}) {
    const PhiloxCounter r = block(kSeed, kOffset, g);
    const double u1 = std::ldexp(static_cast<double>(bits53(r[0], r[1]) + 1), -53);
    const double u2 = std::ldexp(static_cast<double>(bits53(r[2], r[3])), -53);
    const double got = philox_normal_f64(kSeed, kOffset, g);
    CHECK(got == fuserc_box_muller_d(u1, u2));
    const double ref = static_cast<double>(box_muller_reference(u1, u2));
    CHECK(std::fabs(got - ref) <= 1e-14 * std::fabs(ref) + 1e-15);
  }
}

TEST_CASE("rand/randn values are pinned", "[philox]") {
  // Produced by this implementation; any change to the mapping or to the software log/cos
  // changes them, and with them every seeded result fuserc has ever produced.
  struct Golden {
    uint64_t seed, offset, index;
    float rand_f32;
    double rand_f64;
    float randn_f32;
    double randn_f64;
  };
  const Golden goldens[] = {
      {42, 0, 0, 0x1.39d5ep-1f, 0x1.39d5e0a6efea9p-1, -0x1.f0bcb4p-1f, 0x1.c5e30047aa1d8p-1},
      {42, 0, 1, 0x1.dfd524p-2f, 0x1.2bf50ad5742bp-4, -0x1.3c5198p+0f, -0x1.40bc8bc52b056p-3},
      {42, 0, 5, 0x1.4ee9bp-2f, 0x1.349adb338c134p-1, 0x1.3043dp-3f, 0x1.70c7541342051p+0},
      {kSeed, kOffset, 2, 0x1.e75a2p-3f, 0x1.d855673e8ce3fp-1, -0x1.0320f8p-4f,
       -0x1.fb13917bb5e63p-3},
      {kSeed, kOffset, 3, 0x1.136caep-1f, 0x1.d37b2b812ddfap-2, -0x1.64342ep-2f,
       0x1.a4d5b1aacead9p-1},
      {kSeed, kOffset, 0x500000007ull * 4 + 2, 0x1.6d3f08p-3f, 0x1.215d91430e5b9p-1,
       -0x1.0d403ep+0f, -0x1.620f4b044fa2cp+0},
  };
  for (const Golden& g : goldens) {
    INFO("seed " << g.seed << " offset " << g.offset << " index " << g.index);
    CHECK(philox_uniform_f32(g.seed, g.offset, g.index) == g.rand_f32);
    CHECK(philox_uniform_f64(g.seed, g.offset, g.index) == g.rand_f64);
    CHECK(philox_normal_f32(g.seed, g.offset, g.index) == g.randn_f32);
    CHECK(philox_normal_f64(g.seed, g.offset, g.index) == g.randn_f64);
  }
}

TEST_CASE("the bits of many values are pinned", "[philox]") {
  // A fingerprint (FNV-1a over the IEEE bits) of 2^16 values of each function. It changes if any
  // bit of any of them changes: a coefficient of the software log or cos edited, or a compiler
  // fusing a multiply and an add into an fma behind the code's back (the device must produce
  // these same bits).
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](uint64_t bits) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (bits >> (8 * byte)) & 0xff;
      hash *= 0x100000001b3ull;
    }
  };
  for (uint32_t i = 0; i < (1u << 16); ++i) {
    const double u = std::ldexp(static_cast<double>(bits53(i * 2654435761u, i * 40503u)), -53);
    mix(fuserc_double_bits(fuserc_log_d(u == 0 ? 1.0 : u)));
    mix(fuserc_double_bits(fuserc_cos2pi_d(u)));
    float f = philox_normal_f32(kSeed, kOffset, i);
    uint32_t f_bits;
    std::memcpy(&f_bits, &f, sizeof f_bits);
    mix(f_bits);
    mix(fuserc_double_bits(philox_normal_f64(kSeed, kOffset, i)));
  }
  CHECK(hash == 0xe61df058acf908a6ull);
}

TEST_CASE("seed and offset select different streams", "[philox]") {
  int same_offset = 0, same_seed = 0, same_seed_hi = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    const float base = philox_uniform_f32(7, 0, i);
    same_offset += base == philox_uniform_f32(7, 1, i);
    same_seed += base == philox_uniform_f32(8, 0, i);
    same_seed_hi += base == philox_uniform_f32(7 + (uint64_t{1} << 32), 0, i);
  }
  // A chance match of 24-bit values is possible but rare.
  CHECK(same_offset <= 2);
  CHECK(same_seed <= 2);
  CHECK(same_seed_hi <= 2);
}

// ---- Statistics -------------------------------------------------------------------------------

struct Moments {
  double mean = 0, var = 0, skew = 0, kurt = 0, min = 0, max = 0;
};

Moments moments(const std::vector<double>& xs) {
  Moments m;
  m.min = m.max = xs[0];
  double sum = 0;
  for (double x : xs) {
    sum += x;
    m.min = std::min(m.min, x);
    m.max = std::max(m.max, x);
  }
  const double n = static_cast<double>(xs.size());
  m.mean = sum / n;
  double m2 = 0, m3 = 0, m4 = 0;
  for (double x : xs) {
    const double d = x - m.mean;
    m2 += d * d;
    m3 += d * d * d;
    m4 += d * d * d * d;
  }
  m.var = m2 / n;
  m.skew = (m3 / n) / std::pow(m.var, 1.5);
  m.kurt = (m4 / n) / (m.var * m.var);
  return m;
}

// Tolerances are about 5 standard deviations of each estimate for n = 10^6; the draws are
// deterministic, so the tests cannot flake.
constexpr int kSamples = 1000000;

void check_uniform(const std::vector<double>& xs) {
  const Moments m = moments(xs);
  CHECK(m.min >= 0.0);
  CHECK(m.max < 1.0);
  CHECK(std::fabs(m.mean - 0.5) < 0.0015);
  CHECK(std::fabs(m.var - 1.0 / 12) < 0.0004);
  // 32-bin histogram: chi-square with 31 degrees of freedom, 99.99% quantile about 67.
  std::vector<double> bins(32, 0.0);
  for (double x : xs) bins[static_cast<size_t>(x * 32)] += 1;
  double chi2 = 0;
  const double expected = static_cast<double>(xs.size()) / 32;
  for (double b : bins) chi2 += (b - expected) * (b - expected) / expected;
  CHECK(chi2 < 67);
  // Neighbouring elements (same block for f32) uncorrelated.
  double cov = 0;
  for (size_t i = 0; i + 1 < xs.size(); ++i) cov += (xs[i] - 0.5) * (xs[i + 1] - 0.5);
  CHECK(std::fabs(cov / static_cast<double>(xs.size() - 1) / (1.0 / 12)) < 0.005);
}

void check_normal(const std::vector<double>& xs, double max_possible) {
  const Moments m = moments(xs);
  CHECK(std::fabs(m.mean) < 0.005);
  CHECK(std::fabs(m.var - 1.0) < 0.007);
  CHECK(std::fabs(m.skew) < 0.0125);
  CHECK(std::fabs(m.kurt - 3.0) < 0.025);
  // Tails: P(|z| > 1.96) = 0.049996, P(|z| > 3) = 0.0026998, P(|z| > 4) = 6.334e-5.
  double over196 = 0, over3 = 0, over4 = 0;
  for (double x : xs) {
    over196 += std::fabs(x) > 1.96;
    over3 += std::fabs(x) > 3.0;
    over4 += std::fabs(x) > 4.0;
  }
  const double n = static_cast<double>(xs.size());
  CHECK(std::fabs(over196 / n - 0.049996) < 0.0011);
  CHECK(std::fabs(over3 / n - 0.0026998) < 0.00026);
  CHECK(std::fabs(over4 / n - 6.334e-5) < 4.0e-5);
  CHECK(std::max(-m.min, m.max) > 4.0);
  CHECK(std::max(-m.min, m.max) <= max_possible);
}

TEST_CASE("rand f32 is uniform on 0 to 1, 1 excluded", "[philox][stats]") {
  std::vector<double> xs(kSamples);
  for (int i = 0; i < kSamples; ++i) xs[i] = philox_uniform_f32(1234, 5, i);
  check_uniform(xs);
}

TEST_CASE("rand f64 is uniform on 0 to 1, 1 excluded", "[philox][stats]") {
  std::vector<double> xs(kSamples);
  for (int i = 0; i < kSamples; ++i) xs[i] = philox_uniform_f64(kSeed, kOffset, i);
  check_uniform(xs);
}

TEST_CASE("randn f32 is standard normal", "[philox][stats]") {
  std::vector<double> xs(kSamples);
  for (int i = 0; i < kSamples; ++i) xs[i] = philox_normal_f32(1234, 5, i);
  // u1 >= 2^-24 bounds |z| by sqrt(48 ln 2) = 5.768.
  check_normal(xs, 5.7681);
}

TEST_CASE("randn f64 is standard normal", "[philox][stats]") {
  std::vector<double> xs(kSamples);
  for (int i = 0; i < kSamples; ++i) xs[i] = philox_normal_f64(kSeed, kOffset, i);
  // u1 >= 2^-53 bounds |z| by sqrt(106 ln 2) = 8.572.
  check_normal(xs, 8.5717);
}

// ---- Software log and cos(2 pi u) -------------------------------------------------------------

// Largest error of fuserc_log_d, in ulp, over the points f(0), f(1), ..., f(n - 1).
template <typename F>
double max_log_error(int n, F f) {
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    const double x = f(i);
    worst = std::max(worst, ulp_error(fuserc_log_d(x), std::log(static_cast<long double>(x))));
  }
  return worst;
}

TEST_CASE("fuserc_log_d is within 1 ulp", "[philox][math]") {
  // Measured maximum: 0.82 ulp (20 million random points); the bound leaves a little room.
  constexpr double kBound = 1.0;
  // The grid randn f32 draws u1 from, (j + 1) 2^-24, every 8th point.
  const double grid24 = max_log_error(1 << 21, [](int i) {
    return std::ldexp(static_cast<double>(8 * static_cast<uint64_t>(i) + 1), -24);
  });
  // randn f64's u1: 53-bit values in (0, 1].
  const double grid53 = max_log_error(kSamples, [](int i) {
    return std::ldexp(
        static_cast<double>(
            bits53(static_cast<uint32_t>(i) * 2654435761u, static_cast<uint32_t>(i) * 40503u) + 1),
        -53);
  });
  // Just around 1, where log(x) is small and cancellation would show.
  const double near_one = max_log_error(200000, [](int i) {
    return i % 2 ? 1.0 + std::ldexp(static_cast<double>(i), -40)
                 : 1.0 - std::ldexp(static_cast<double>(i), -41);
  });
  // All binades of positive normal and subnormal doubles.
  const double wide = max_log_error(400000, [](int i) {
    const double mantissa = 1.0 + std::ldexp(static_cast<double>(i * 2654435761u), -32);
    return std::ldexp(mantissa, (i % 2098) - 1074);
  });
  INFO("max ulp: grid24 " << grid24 << ", grid53 " << grid53 << ", near 1 " << near_one << ", wide "
                          << wide);
  CHECK(grid24 < kBound);
  CHECK(grid53 < kBound);
  CHECK(near_one < kBound);
  CHECK(wide < kBound);
  CHECK(fuserc_log_d(1.0) == 0.0);
  CHECK(ulp_error(fuserc_log_d(0x1p-1074), std::log(0x1p-1074L)) < kBound);
  CHECK(ulp_error(fuserc_log_d(std::numeric_limits<double>::max()),
                  std::log(static_cast<long double>(std::numeric_limits<double>::max()))) < kBound);
}

TEST_CASE("fuserc_cos2pi_d is within 1.25 ulp", "[philox][math]") {
  // Measured maximum: 1.05 ulp (20 million random points).
  constexpr double kBound = 1.25;
  double worst = 0, worst_abs = 0;
  auto check_at = [&](double u) {
    const double got = fuserc_cos2pi_d(u);
    worst = std::max(worst, ulp_error(got, cos2pi_reference(u)));
    // Against the plain C library too, in absolute terms (independent of the reduction).
    const long double two_pi = 6.283185307179586476925286766559005768L;
    worst_abs = std::max(
        worst_abs,
        static_cast<double>(std::fabs(got - std::cos(two_pi * static_cast<long double>(u)))));
  };
  // randn f32's u2 grid, j 2^-24, every 8th point, and randn f64's 53-bit u2.
  for (uint64_t j = 0; j < (uint64_t{1} << 24); j += 8) check_at(std::ldexp(double(j), -24));
  for (uint32_t i = 0; i < kSamples; ++i) {
    check_at(std::ldexp(static_cast<double>(bits53(i * 2654435761u, i * 40503u)), -53));
  }
  // Next to the quadrant boundaries and the zeros at 1/4 and 3/4.
  for (double c : {0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875}) {
    for (int k = 1; k < 2000; ++k) {
      if (c > 0) check_at(c - std::ldexp(double(k), -53));
      check_at(c + std::ldexp(double(k), -53));
      check_at(c + std::ldexp(double(k), -30));
      if (c > 0) check_at(c - std::ldexp(double(k), -30));
    }
  }
  INFO("max ulp " << worst << ", max abs error vs cosl " << worst_abs);
  CHECK(worst < kBound);
  CHECK(worst_abs < 0x1p-52);
  CHECK(fuserc_cos2pi_d(0.0) == 1.0);
  CHECK(fuserc_cos2pi_d(0.5) == -1.0);
  CHECK(fuserc_cos2pi_d(0.25) == 0.0);
  CHECK(!std::signbit(fuserc_cos2pi_d(0.25)));
  CHECK(fuserc_cos2pi_d(0.75) == 0.0);
  CHECK(ulp_error(fuserc_cos2pi_d(0.125), std::sqrt(0.5L)) < kBound);
}

TEST_CASE("Box-Muller extremes", "[philox][math]") {
  CHECK(fuserc_box_muller_d(1.0, 0.3) == 0.0);
  const double z = fuserc_box_muller_d(0x1p-24, 0.0);
  CHECK(std::fabs(z - std::sqrt(48.0 * std::log(2.0))) < 1e-14);
  CHECK(fuserc_box_muller_d(0x1p-53, 0.5) < -8.57);
}

}  // namespace
}  // namespace fuserc
