// The Philox4x32-10 generator and fuserc's mapping from (seed, offset, element index) to the
// values of `rand` and `randn`. Plain C++ that compiles three ways: as host C++20 (philox.cc,
// the CPU reference), under nvcc, and pasted as text at the top of an NVRTC program (no
// includes there, no namespaces, every name prefixed `fuserc_`).
//
// Mapping. For element i (the linear row-major index of the op's output):
//   key     = (lo32(seed), hi32(seed))
//   counter = (lo32(g), hi32(g), lo32(offset), hi32(offset))
//   r       = philox4x32_10(counter, key)            (four 32-bit words r[0..3])
//   rand f32 (serves f16/bf16/f32): g = i/4, u = (r[i%4] >> 8) * 2^-24, in [0,1).
//   rand f64: g = i/2, k = i%2, 53 bits from (r[2k], r[2k+1]):
//             u = ((uint64(r[2k]) << 21) ^ (r[2k+1] >> 11)) * 2^-53, in [0,1).
//   randn f32: g = i/2, k = i%2, u1 = ((r[2k] >> 8) + 1) * 2^-24 in (0,1],
//             u2 = (r[2k+1] >> 8) * 2^-24 in [0,1);
//             z = sqrt(-2 ln u1) * cos(2 pi u2), computed in double with fuserc_log_d and
//             fuserc_cos2pi_d below, then rounded to float.
//   randn f64: g = i, u1 = (((uint64(r[0]) << 21) ^ (r[1] >> 11)) + 1) * 2^-53 in (0,1],
//             u2 = ((uint64(r[2]) << 21) ^ (r[3] >> 11)) * 2^-53 in [0,1);
//             z = sqrt(-2 ln u1) * cos(2 pi u2) in double.
// Changing any of this changes every seeded result fuserc produces; tests/unit/test_philox.cc
// pins it.
//
// Bit-identical host and device. Everything below is integer arithmetic, single +, -, *, /
// (correctly rounded IEEE operations everywhere), and explicit FUSERC_FMA / FUSERC_SQRT
// (correctly rounded fma and sqrt in both glibc and CUDA). Compilers may fuse a multiply with a
// later add into one fma (NVRTC/ptxas by default, --fmad=true; g++ with FMA hardware, e.g.
// -march=haswell, even in ISO mode and across statements), which would make the device and
// the CPU reference disagree in the last bit. So: every multiply-add is an explicit FUSERC_FMA,
// and every product that is not exact goes through fuserc_mul_d, which cannot be fused
// (__dmul_rn on the device). Plain `*` is used only where the product is exact (scaling by a
// power of two, small integers times 2^-24 or 2^-53), where fusing could not change a bit.
// Keep it that way when editing. Conversions between integers, float and double are exact or
// round-to-nearest on both sides. No std:: math function is called, because their results
// differ between libm and CUDA.
#ifndef FUSERC_CORE_BASE_PHILOX_IMPL_H_
#define FUSERC_CORE_BASE_PHILOX_IMPL_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define FUSERC_HD __host__ __device__ __forceinline__
#define FUSERC_FMA(a, b, c) fma((a), (b), (c))
#define FUSERC_SQRT(x) sqrt((x))
#else
#define FUSERC_HD inline
#define FUSERC_FMA(a, b, c) std::fma((a), (b), (c))
#define FUSERC_SQRT(x) std::sqrt((x))
#endif

#if !defined(__CUDACC_RTC__)
#include <cmath>
#include <cstring>
#endif

#ifndef FUSERC_PHILOX_TYPES_DEFINED
#define FUSERC_PHILOX_TYPES_DEFINED
typedef unsigned int fuserc_u32;
typedef unsigned long long fuserc_u64;
#endif

#if !defined(__CUDACC_RTC__)
static_assert(sizeof(fuserc_u32) == 4 && sizeof(fuserc_u64) == 8 && sizeof(double) == 8,
              "philox_impl.h assumes 32-bit unsigned int and 64-bit long long and double");
#endif

// Four 32-bit words: a Philox counter or output block.
struct fuserc_u32x4 {
  fuserc_u32 w[4];
};

// ---- Bits of a double ---------------------------------------------------------------------

FUSERC_HD fuserc_u64 fuserc_double_bits(double x) {
#if defined(__CUDA_ARCH__)
  return (fuserc_u64)__double_as_longlong(x);
#else
  fuserc_u64 bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

FUSERC_HD double fuserc_double_from_bits(fuserc_u64 bits) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)bits);
#else
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// a * b rounded on its own, never fused with a following add into an fma.
FUSERC_HD double fuserc_mul_d(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  // Host compilers contract when the target has fma (g++ -march=haswell does by default, clang
  // with -ffp-contract=fast), and there is no portable way to forbid it locally; the volatile
  // round trip hides the product from them.
  volatile double product = a * b;
  return product;
#endif
}

// ---- Philox4x32-10 --------------------------------------------------------------------------

// One Philox4x32 round (Random123's philox4x32round).
FUSERC_HD fuserc_u32x4 fuserc_philox4x32_round(fuserc_u32x4 c, fuserc_u32 k0, fuserc_u32 k1) {
  const fuserc_u64 p0 = (fuserc_u64)0xD2511F53u * c.w[0];
  const fuserc_u64 p1 = (fuserc_u64)0xCD9E8D57u * c.w[2];
  fuserc_u32x4 out;
  out.w[0] = (fuserc_u32)(p1 >> 32) ^ c.w[1] ^ k0;
  out.w[1] = (fuserc_u32)p1;
  out.w[2] = (fuserc_u32)(p0 >> 32) ^ c.w[3] ^ k1;
  out.w[3] = (fuserc_u32)p0;
  return out;
}

// Philox4x32 with 10 rounds; the key (k0, k1) is bumped by the Weyl constants between rounds.
FUSERC_HD fuserc_u32x4 fuserc_philox4x32_10(fuserc_u32x4 counter, fuserc_u32 k0, fuserc_u32 k1) {
  fuserc_u32x4 c = fuserc_philox4x32_round(counter, k0, k1);
  for (int round = 1; round < 10; ++round) {
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
    c = fuserc_philox4x32_round(c, k0, k1);
  }
  return c;
}

// The block for counter group g: counter (lo32(g), hi32(g), lo32(offset), hi32(offset)), key
// (lo32(seed), hi32(seed)).
FUSERC_HD fuserc_u32x4 fuserc_philox_block(fuserc_u64 seed, fuserc_u64 offset, fuserc_u64 g) {
  fuserc_u32x4 counter;
  counter.w[0] = (fuserc_u32)g;
  counter.w[1] = (fuserc_u32)(g >> 32);
  counter.w[2] = (fuserc_u32)offset;
  counter.w[3] = (fuserc_u32)(offset >> 32);
  return fuserc_philox4x32_10(counter, (fuserc_u32)seed, (fuserc_u32)(seed >> 32));
}

// ---- Words to uniforms ----------------------------------------------------------------------

// (w >> 8) * 2^-24, in [0,1).
FUSERC_HD float fuserc_u01_f32(fuserc_u32 w) {
  return (float)(w >> 8) * (1.0f / 16777216.0f);
}

// The 53 bits (uint64(hi) << 21) ^ (lo >> 11), in [0, 2^53).
FUSERC_HD fuserc_u64 fuserc_bits53(fuserc_u32 hi, fuserc_u32 lo) {
  return ((fuserc_u64)hi << 21) ^ (fuserc_u64)(lo >> 11);
}

// fuserc_bits53(hi, lo) * 2^-53, in [0,1).
FUSERC_HD double fuserc_u01_f64(fuserc_u32 hi, fuserc_u32 lo) {
  return (double)fuserc_bits53(hi, lo) * (1.0 / 9007199254740992.0);
}

// ---- Software log and cos(2 pi u) -----------------------------------------------------------

// Natural logarithm of a positive finite double (subnormals included), within about 1 ulp.
// Not defined for x <= 0, infinities or NaN (the callers never pass them).
//
// x = 2^k * m with m in [sqrt(2)/2, sqrt(2)); f = m - 1 (exact); s = f / (2 + f), so that
// log(m) = 2 atanh(s) = 2s + s R(s^2) with R(z) = sum_{j>=1} 2 z^j / (2j + 1) (Taylor series,
// |s| <= 0.1716, z <= 0.0295, truncated after j = 11 where the next term is below 2^-60
// relative), and 2s = f - hfsq + s hfsq with hfsq = f^2 / 2, giving
//   log(x) = k ln2_hi + (f - (hfsq - (s (hfsq + R) + k ln2_lo)))
// where ln2_hi has 32 significant bits, so k * ln2_hi is exact, and the rounding of s only
// touches the small correction term (the arrangement of fdlibm's e_log.c).
FUSERC_HD double fuserc_log_d(double x) {
  fuserc_u64 bits = fuserc_double_bits(x);
  int k = 0;
  if ((bits >> 52) == 0) {                               // subnormal: scale into the normal range
    bits = fuserc_double_bits(x * 18014398509481984.0);  // 2^54
    k = -54;
  }
  k += (int)(bits >> 52) - 1023;
  double m = fuserc_double_from_bits((bits & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > 1.4142135623730951) {  // m in [1, 2) -> [sqrt(2)/2, sqrt(2))
    m = m * 0.5;
    k += 1;
  }
  const double f = m - 1.0;
  const double s = f / (2.0 + f);
  const double z = fuserc_mul_d(s, s);
  double p = 0.08695652173913043;             // 2/23
  p = FUSERC_FMA(p, z, 0.09523809523809523);  // 2/21
  p = FUSERC_FMA(p, z, 0.10526315789473684);  // 2/19
  p = FUSERC_FMA(p, z, 0.11764705882352941);  // 2/17
  p = FUSERC_FMA(p, z, 0.13333333333333333);  // 2/15
  p = FUSERC_FMA(p, z, 0.15384615384615385);  // 2/13
  p = FUSERC_FMA(p, z, 0.18181818181818182);  // 2/11
  p = FUSERC_FMA(p, z, 0.2222222222222222);   // 2/9
  p = FUSERC_FMA(p, z, 0.2857142857142857);   // 2/7
  p = FUSERC_FMA(p, z, 0.4);                  // 2/5
  p = FUSERC_FMA(p, z, 0.6666666666666666);   // 2/3
  const double r = fuserc_mul_d(p, z);
  const double hfsq = fuserc_mul_d(0.5 * f, f);
  const double dk = (double)k;
  const double ln2_hi = 0.6931471803691238;      // 0x1.62e42fee00000p-1
  const double ln2_lo = 1.9082149292705877e-10;  // ln 2 - ln2_hi, 0x1.a39ef35793c76p-33
  const double tail = FUSERC_FMA(s, hfsq + r, fuserc_mul_d(dk, ln2_lo));
  return FUSERC_FMA(dk, ln2_hi, f - (hfsq - tail));
}

// cos(2 pi u) for u in [0, 1) (also right for any |u| < 2^29), within about 1 ulp (absolute error
// near the zeros at u = 1/4 and 3/4 is a fraction of the result's ulp, since the reduction is
// exact).
//
// t = 4u is exact; q = t rounded to the nearest integer, r = t - q in [-1/2, 1/2] (exact), so
// 2 pi u = q pi/2 + r pi/2 and cos(2 pi u) = cos(r pi/2), -sin(r pi/2), -cos(r pi/2),
// sin(r pi/2) for q mod 4 = 0, 1, 2, 3. sin and cos of r pi/2 are Taylor polynomials in r with
// coefficients (pi/2)^n / n! (|r pi/2| <= pi/4; terms through n = 19 and 18, the first omitted
// terms below 2^-65 relative), the leading pi/2 split in two so that it carries 107 bits.
FUSERC_HD double fuserc_cos2pi_d(double u) {
  const double t = u * 4.0;
  int q = (int)t;            // truncation toward zero
  double r = t - (double)q;  // exact; in (-1, 1)
  if (r > 0.5) {
    r = r - 1.0;
    q += 1;
  } else if (r < -0.5) {  // only for negative u
    r = r + 1.0;
    q -= 1;
  }
  const double z = fuserc_mul_d(r, r);

  // sin(r pi/2) = r (S_hi + (S_lo + z Ps(z))).
  double ps = -4.377065467313742e-14;              // -(pi/2)^19 / 19!
  ps = FUSERC_FMA(ps, z, 6.0669357311061955e-12);  // (pi/2)^17 / 17!
  ps = FUSERC_FMA(ps, z, -6.688035109811468e-10);  // -(pi/2)^15 / 15!
  ps = FUSERC_FMA(ps, z, 5.692172921967927e-08);   // (pi/2)^13 / 13!
  ps = FUSERC_FMA(ps, z, -3.598843235212085e-06);  // -(pi/2)^11 / 11!
  ps = FUSERC_FMA(ps, z, 0.00016044118478735983);  // (pi/2)^9 / 9!
  ps = FUSERC_FMA(ps, z, -0.004681754135318688);   // -(pi/2)^7 / 7!
  ps = FUSERC_FMA(ps, z, 0.07969262624616705);     // (pi/2)^5 / 5!
  ps = FUSERC_FMA(ps, z, -0.6459640975062463);     // -(pi/2)^3 / 3!
  ps = FUSERC_FMA(ps, z, 6.123233995736766e-17);   // S_lo = pi/2 - S_hi
  const double sin_r = FUSERC_FMA(r, 1.5707963267948966, fuserc_mul_d(r, ps));  // S_hi = fl(pi/2)

  // cos(r pi/2) = 1 + z Pc(z).
  double pc = -5.294400200734623e-13;               // -(pi/2)^18 / 18!
  pc = FUSERC_FMA(pc, z, 6.565963114979473e-11);    // (pi/2)^16 / 16!
  pc = FUSERC_FMA(pc, z, -6.386603083791852e-09);   // -(pi/2)^14 / 14!
  pc = FUSERC_FMA(pc, z, 4.710874778818172e-07);    // (pi/2)^12 / 12!
  pc = FUSERC_FMA(pc, z, -2.5202042373060607e-05);  // -(pi/2)^10 / 10!
  pc = FUSERC_FMA(pc, z, 0.0009192602748394266);    // (pi/2)^8 / 8!
  pc = FUSERC_FMA(pc, z, -0.02086348076335296);     // -(pi/2)^6 / 6!
  pc = FUSERC_FMA(pc, z, 0.25366950790104803);      // (pi/2)^4 / 4!
  pc = FUSERC_FMA(pc, z, -1.2337005501361697);      // -(pi/2)^2 / 2!
  const double cos_r = FUSERC_FMA(z, pc, 1.0);

  switch (q & 3) {
    case 0: return cos_r;
    case 1: return 0.0 - sin_r;  // not -sin_r: cos(pi/2) is +0
    case 2: return 0.0 - cos_r;
    default: return sin_r;
  }
}

// sqrt(-2 ln u1) * cos(2 pi u2) for u1 in (0,1], u2 in [0,1).
FUSERC_HD double fuserc_box_muller_d(double u1, double u2) {
  return fuserc_mul_d(FUSERC_SQRT(-2.0 * fuserc_log_d(u1)), fuserc_cos2pi_d(u2));
}

// ---- Elements of rand / randn ---------------------------------------------------------------
//
// Consecutive elements share a Philox block: rand f16/bf16/f32 takes 4 elements from one block,
// rand f64 and randn f16/bf16/f32 take 2, randn f64 one. A kernel walking
// consecutive elements fills the block once per group (fuserc_philox_fill with counter
// index / group) and reads each element's value from it (the _of functions); the per-element
// functions below are the same two steps, so both give the same bits by construction.

// The 4 words of the block of counter `g` into bits[0..3].
FUSERC_HD void fuserc_philox_fill(fuserc_u32* bits, fuserc_u64 seed, fuserc_u64 offset,
                                  fuserc_u64 g) {
  const fuserc_u32x4 r = fuserc_philox_block(seed, offset, g);
  bits[0] = r.w[0];
  bits[1] = r.w[1];
  bits[2] = r.w[2];
  bits[3] = r.w[3];
}

// Word k of bits[0..3] (selects, not an indexed load, so that a kernel keeps bits in registers).
FUSERC_HD fuserc_u32 fuserc_bits_word(const fuserc_u32* bits, fuserc_u32 k) {
  return k == 0u ? bits[0] : k == 1u ? bits[1] : k == 2u ? bits[2] : bits[3];
}

// rand, f32 (also f16/bf16, rounded when stored): element `index` from its block (g = index/4).
FUSERC_HD float fuserc_rand_f32_of(const fuserc_u32* bits, fuserc_u64 index) {
  return fuserc_u01_f32(fuserc_bits_word(bits, (fuserc_u32)(index & 3u)));
}

// rand, f64: element `index` from its block (g = index/2).
FUSERC_HD double fuserc_rand_f64_of(const fuserc_u32* bits, fuserc_u64 index) {
  return (index & 1u) ? fuserc_u01_f64(bits[2], bits[3]) : fuserc_u01_f64(bits[0], bits[1]);
}

// randn, f32 (also f16/bf16): element `index` from its block (g = index/2).
FUSERC_HD float fuserc_randn_f32_of(const fuserc_u32* bits, fuserc_u64 index) {
  const fuserc_u32 a = (index & 1u) ? bits[2] : bits[0];
  const fuserc_u32 b = (index & 1u) ? bits[3] : bits[1];
  const double u1 = (double)((a >> 8) + 1u) * (1.0 / 16777216.0);
  const double u2 = (double)(b >> 8) * (1.0 / 16777216.0);
  return (float)fuserc_box_muller_d(u1, u2);
}

// randn, f64: element `index` from its block (g = index).
FUSERC_HD double fuserc_randn_f64_of(const fuserc_u32* bits, fuserc_u64 index) {
  (void)index;
  const double u1 = (double)(fuserc_bits53(bits[0], bits[1]) + 1u) * (1.0 / 9007199254740992.0);
  const double u2 = fuserc_u01_f64(bits[2], bits[3]);
  return fuserc_box_muller_d(u1, u2);
}

// rand, f32 (also f16/bf16): element `index`.
FUSERC_HD float fuserc_rand_f32(fuserc_u64 seed, fuserc_u64 offset, fuserc_u64 index) {
  fuserc_u32 bits[4];
  fuserc_philox_fill(bits, seed, offset, index >> 2);
  return fuserc_rand_f32_of(bits, index);
}

// rand, f64: element `index`.
FUSERC_HD double fuserc_rand_f64(fuserc_u64 seed, fuserc_u64 offset, fuserc_u64 index) {
  fuserc_u32 bits[4];
  fuserc_philox_fill(bits, seed, offset, index >> 1);
  return fuserc_rand_f64_of(bits, index);
}

// randn, f32 (also f16/bf16): element `index`.
FUSERC_HD float fuserc_randn_f32(fuserc_u64 seed, fuserc_u64 offset, fuserc_u64 index) {
  fuserc_u32 bits[4];
  fuserc_philox_fill(bits, seed, offset, index >> 1);
  return fuserc_randn_f32_of(bits, index);
}

// randn, f64: element `index`.
FUSERC_HD double fuserc_randn_f64(fuserc_u64 seed, fuserc_u64 offset, fuserc_u64 index) {
  fuserc_u32 bits[4];
  fuserc_philox_fill(bits, seed, offset, index);
  return fuserc_randn_f64_of(bits, index);
}

#endif  // FUSERC_CORE_BASE_PHILOX_IMPL_H_
