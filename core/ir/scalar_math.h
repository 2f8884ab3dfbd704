// Owns the scalar semantics of every elementwise op on the host, as PyTorch defines them:
// wrapping integer arithmetic (no undefined behaviour), NaN-propagating maximum/minimum,
// Python-style remainder, round-half-to-even, integer powers, the GELU variants. The op table's
// reference implementations are written with these; the CPU interpreter runs them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/base/diagnostics.h"
#include "core/base/erfinv_impl.h"

namespace fuserc::scalar {

template <class T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool kIsBool = std::is_same_v<T, bool>;

template <class T>
T add(T a, T b) {
  if constexpr (kIsBool<T>)
    return a || b;
  else if constexpr (kIsFloat<T>)
    return a + b;
  else
    return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <class T>
T sub(T a, T b) {
  if constexpr (kIsBool<T>)
    return a != b;  // refused by the type rules; never reached
  else if constexpr (kIsFloat<T>)
    return a - b;
  else
    return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <class T>
T mul(T a, T b) {
  if constexpr (kIsBool<T>)
    return a && b;
  else if constexpr (kIsFloat<T>)
    return a * b;
  else
    return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <class T>
T neg(T a) {
  if constexpr (kIsBool<T>)
    return a;  // refused by the type rules
  else if constexpr (kIsFloat<T>)
    return -a;
  else
    return static_cast<T>(0 - static_cast<uint64_t>(a));
}
template <class T>
T abs(T a) {
  if constexpr (kIsBool<T>)
    return a;
  else if constexpr (kIsFloat<T>)
    return std::fabs(a);
  else
    return a < 0 ? neg(a) : a;
}

[[noreturn]] inline void integer_division_by_zero() {
  throw UserError("integer division by zero");
}

// True division is done in floating point (the type rules make the result a float).
template <class T>
T div(T a, T b) {
  if constexpr (kIsFloat<T>)
    return a / b;
  else
    return static_cast<T>(static_cast<double>(a) / static_cast<double>(b));
}

// Python/PyTorch remainder: the result has the divisor's sign.
template <class T>
T remainder(T a, T b) {
  if constexpr (kIsFloat<T>) {
    T m = std::fmod(a, b);
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  } else if constexpr (kIsBool<T>) {
    if (!b) integer_division_by_zero();
    return false;
  } else {
    if (b == 0) integer_division_by_zero();
    if (b == -1) return 0;
    T m = a % b;
    if (m != 0 && ((b < 0) != (m < 0))) m += b;
    return m;
  }
}

// C fmod: the result has the dividend's sign.
template <class T>
T fmod(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return std::fmod(a, b);
  } else if constexpr (kIsBool<T>) {
    if (!b) integer_division_by_zero();
    return false;
  } else {
    if (b == 0) integer_division_by_zero();
    if (b == -1) return 0;
    return a % b;
  }
}

template <class T>
T maximum(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a > b ? a : b;
}
template <class T>
T minimum(T a, T b) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? a : b;
}

// Integer power with wrapping; negative exponents give 0 except for bases 1 and -1.
template <class T>
T pow(T a, T b) {
  if constexpr (kIsFloat<T>) {
    return std::pow(a, b);
  } else if constexpr (kIsBool<T>) {
    return a || !b;
  } else {
    if (b < 0) {
      if (a == 1) return 1;
      if (a == -1) return (b % 2 == 0) ? 1 : -1;
      return 0;
    }
    uint64_t result = 1, base = static_cast<uint64_t>(a);
    for (uint64_t e = static_cast<uint64_t>(b); e; e >>= 1) {
      if (e & 1) result *= base;
      base *= base;
    }
    return static_cast<T>(result);
  }
}

template <class T>
T relu(T a) {
  if constexpr (kIsFloat<T>) {
    if (std::isnan(a)) return a;
  }
  return a > 0 ? a : T(0);
}
template <class T>
T sign(T a) {
  if constexpr (kIsBool<T>)
    return a;
  else
    return static_cast<T>((T(0) < a) - (a < T(0)));
}
template <class T>
T round_half_even(T a) {
  if constexpr (kIsFloat<T>)
    return std::nearbyint(a);  // default rounding mode: to nearest even
  else
    return a;
}
template <class T>
T floor(T a) {
  if constexpr (kIsFloat<T>)
    return std::floor(a);
  else
    return a;
}
template <class T>
T ceil(T a) {
  if constexpr (kIsFloat<T>)
    return std::ceil(a);
  else
    return a;
}
template <class T>
T trunc(T a) {
  if constexpr (kIsFloat<T>)
    return std::trunc(a);
  else
    return a;
}

// Float-only functions: the type rules make every input a float; the integer and bool
// instantiations exist only so that the table compiles, and return their input.
template <class T>
T sigmoid(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return T(1) / (T(1) + std::exp(-a));
}
template <class T>
T silu(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return a / (T(1) + std::exp(-a));
}
template <class T>
T rsqrt(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return T(1) / std::sqrt(a);
}
template <class T>
T reciprocal(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return T(1) / a;
}
template <class T>
T gelu_erf(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return T(0.5) * a * std::erfc(a * T(-0.70710678118654752440));  // no 1 + erf cancellation
}
template <class T>
T gelu_tanh(T a) {
  if constexpr (!kIsFloat<T>) {
    return a;
  } else {
    const T k_beta = T(0.79788456080286535588);  // sqrt(2 / pi)
    const T k_kappa = T(0.044715);
    T inner = k_beta * (a + k_kappa * a * a * a);
    return a / (T(1) + std::exp(T(-2) * inner));  // 0.5 a (1 + tanh(inner)), no cancellation
  }
}

// erfinv: the shared host implementation (core/base/erfinv_impl.h), which kernels run in the
// CPU emulator use too.
template <class T>
T erfinv(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return fz_erfinv(a);
}
// lgamma: the host's (+inf at 0 and at the negative integers, as in PyTorch).
template <class T>
T lgamma(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return std::lgamma(a);
}
// frac: x - trunc(x), with the sign of x (PyTorch's; NaN for infinities).
template <class T>
T frac(T a) {
  if constexpr (!kIsFloat<T>)
    return a;
  else
    return a - std::trunc(a);
}

// lerp as PyTorch computes it (exact at both ends).
template <class T>
T lerp(T a, T b, T w) {
  if constexpr (kIsFloat<T>) {
    return std::abs(w) < T(0.5) ? a + w * (b - a) : b - (b - a) * (T(1) - w);
  } else {
    return add(a, mul(w, sub(b, a)));
  }
}
template <class T>
T fma(T a, T b, T c) {
  if constexpr (kIsFloat<T>)
    return std::fma(a, b, c);
  else
    return add(mul(a, b), c);
}

template <class T>
T bit_not(T a) {
  if constexpr (kIsBool<T>)
    return !a;
  else if constexpr (kIsFloat<T>)
    return a;  // refused by the type rules
  else
    return ~a;
}
template <class T>
T bit_and(T a, T b) {
  if constexpr (kIsBool<T>)
    return a && b;
  else if constexpr (kIsFloat<T>)
    return a;  // refused by the type rules
  else
    return a & b;
}
template <class T>
T bit_or(T a, T b) {
  if constexpr (kIsBool<T>)
    return a || b;
  else if constexpr (kIsFloat<T>)
    return a;  // refused by the type rules
  else
    return a | b;
}
template <class T>
T bit_xor(T a, T b) {
  if constexpr (kIsBool<T>)
    return a != b;
  else if constexpr (kIsFloat<T>)
    return a;  // refused by the type rules
  else
    return a ^ b;
}

template <class T>
bool is_nan(T a) {
  if constexpr (kIsFloat<T>)
    return std::isnan(a);
  else
    return false;
}
template <class T>
bool is_inf(T a) {
  if constexpr (kIsFloat<T>)
    return std::isinf(a);
  else
    return false;
}
// The sign bit: set for -0.0 and for NaNs that carry it (PyTorch's signbit).
template <class T>
bool signbit(T a) {
  if constexpr (kIsFloat<T>)
    return std::signbit(a);
  else if constexpr (kIsBool<T>)
    return false;
  else
    return a < 0;
}
template <class T>
bool is_finite(T a) {
  if constexpr (kIsFloat<T>)
    return std::isfinite(a);
  else
    return true;
}

}  // namespace fuserc::scalar
