// erfinv, the inverse error function, as generated kernels and the CPU reference compute it.
// Plain C++ that compiles three ways, like philox_impl.h: as host C++ (the CPU reference, via
// core/ir/scalar_math.h), pasted as text after the preamble of an NVRTC program, and inside
// kernels compiled by the CPU emulator. On a GPU, fz_erfinv is CUDA's erfinvf / erfinv; on the
// host (the reference, and kernels run in the emulator) it is the code below, so both sides of
// every emulated comparison compute the same bits.
//
// The host version works in double: Winitzki's closed form (relative error about 2e-3) refined
// by three Halley steps on f(x) = erf(x) - |y| (cubic convergence: 2e-3 -> 1e-8 -> below the
// double's precision). For |y| >= 0.5 the residual is computed as (1 - |y|) - erfc(x), where
// 1 - |y| is exact, so the tails keep full relative accuracy up to |y| = 1 - 2^-53. Measured
// against mpmath at 40 digits (20,000 points, tails included): at most 1 ulp in double, and the
// float version is the correctly rounded result. (PyTorch's own float64 erfinv is off by up to
// 4e11 ulp within 1e-15 of +-1.) Edge values as PyTorch: erfinv(+-1) = +-inf, |y| > 1 or NaN
// gives NaN, erfinv(-0) = -0.
#ifndef FUSERC_CORE_BASE_ERFINV_IMPL_H_
#define FUSERC_CORE_BASE_ERFINV_IMPL_H_

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

__device__ __forceinline__ float fz_erfinv(float y) {
  return erfinvf(y);
}
__device__ __forceinline__ double fz_erfinv(double y) {
  return erfinv(y);
}

#else

#include <cmath>
#include <limits>

inline double fuserc_erfinv_f64(double y) {
  if (std::isnan(y)) return y;
  const double a = std::fabs(y);
  if (a >= 1.0)
    return a == 1.0 ? std::copysign(std::numeric_limits<double>::infinity(), y)
                    : std::numeric_limits<double>::quiet_NaN();
  if (a == 0.0) return y;  // keeps the sign of zero
  // ln(1 - a^2), accurate near 0 and near 1 ((1 - a) is exact for a >= 0.5).
  const double l = a < 0.5 ? std::log1p(-a * a) : std::log((1.0 - a) * (1.0 + a));
  const double k = 0.147;
  const double t = 2.0 / (3.14159265358979323846 * k) + 0.5 * l;
  double x = std::sqrt(std::sqrt(t * t - l / k) - t);
  const double two_over_sqrt_pi = 1.12837916709551257390;
  for (int i = 0; i < 3; ++i) {
    const double f = a < 0.5 ? std::erf(x) - a : (1.0 - a) - std::erfc(x);
    const double d = two_over_sqrt_pi * std::exp(-x * x);  // f'(x); f''(x) = -2 x f'(x)
    x -= f / (d + x * f);                                  // Halley's step
  }
  return std::copysign(x, y);
}

inline float fz_erfinv(float y) {
  return static_cast<float>(fuserc_erfinv_f64(y));
}
inline double fz_erfinv(double y) {
  return fuserc_erfinv_f64(y);
}

#endif
#endif  // FUSERC_CORE_BASE_ERFINV_IMPL_H_
