// fuserc kernel preamble: the types and helpers every generated kernel uses. Each helper has
// the scalar semantics of core/ir/scalar_math.h (PyTorch's): NaN-propagating maximum and
// minimum, Python remainder, integer powers, round half to even, the GELU variants. Integer
// division by zero gives 0 here (the CPU reference reports it as an error).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T, int N>
struct alignas(sizeof(T) * N) fz_vec {
  T v[N];
};

template <int kBytes, typename T>
__device__ __forceinline__ bool fz_is_aligned(const T* p, long long offset) {
  return reinterpret_cast<unsigned long long>(p + offset) % kBytes == 0;
}

// ---- index arithmetic (floor semantics for possibly negative operands)
__device__ __forceinline__ long long fz_floordiv(long long a, long long b) {
  long long q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
__device__ __forceinline__ long long fz_floormod(long long a, long long b) {
  long long r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
__device__ __forceinline__ long long fz_ceildiv(long long a, long long b) {
  return -fz_floordiv(-a, b);
}

// ---- iota
__device__ __forceinline__ long long fz_iota_exact(long long start, long long step, long long i) {
  return (long long)((unsigned long long)start +
                     (unsigned long long)i * (unsigned long long)step);
}
__device__ __forceinline__ double fz_iota(double start, double step, long long i) {
  return __dadd_rn(start, __dmul_rn(step, (double)i));
}

// ---- elementwise helpers
__device__ __forceinline__ float fz_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double fz_abs(double x) { return fabs(x); }
__device__ __forceinline__ int fz_abs(int x) { return x < 0 ? (int)(0u - (unsigned)x) : x; }
__device__ __forceinline__ long long fz_abs(long long x) {
  return x < 0 ? (long long)(0ull - (unsigned long long)x) : x;
}

__device__ __forceinline__ float fz_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ __forceinline__ double fz_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__device__ __forceinline__ float fz_silu(float x) { return x / (1.0f + expf(-x)); }
__device__ __forceinline__ double fz_silu(double x) { return x / (1.0 + exp(-x)); }
__device__ __forceinline__ float fz_reciprocal(float x) { return 1.0f / x; }
__device__ __forceinline__ double fz_reciprocal(double x) { return 1.0 / x; }
__device__ __forceinline__ float fz_gelu_erf(float x) {
  return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
}
__device__ __forceinline__ double fz_gelu_erf(double x) {
  return 0.5 * x * (1.0 + erf(x * 0.70710678118654752440));
}
__device__ __forceinline__ float fz_gelu_tanh(float x) {
  const float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + tanhf(inner));
}
__device__ __forceinline__ double fz_gelu_tanh(double x) {
  const double inner = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return 0.5 * x * (1.0 + tanh(inner));
}

template <typename T>
__device__ __forceinline__ T fz_relu(T x) {
  return x > T(0) ? x : T(0);
}
__device__ __forceinline__ float fz_relu(float x) { return isnan(x) ? x : (x > 0.0f ? x : 0.0f); }
__device__ __forceinline__ double fz_relu(double x) { return isnan(x) ? x : (x > 0.0 ? x : 0.0); }

template <typename T>
__device__ __forceinline__ T fz_floor(T x) {
  return x;
}
__device__ __forceinline__ float fz_floor(float x) { return floorf(x); }
__device__ __forceinline__ double fz_floor(double x) { return floor(x); }
template <typename T>
__device__ __forceinline__ T fz_ceil(T x) {
  return x;
}
__device__ __forceinline__ float fz_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double fz_ceil(double x) { return ceil(x); }
template <typename T>
__device__ __forceinline__ T fz_round(T x) {
  return x;
}
__device__ __forceinline__ float fz_round(float x) { return rintf(x); }
__device__ __forceinline__ double fz_round(double x) { return rint(x); }
template <typename T>
__device__ __forceinline__ T fz_trunc(T x) {
  return x;
}
__device__ __forceinline__ float fz_trunc(float x) { return truncf(x); }
__device__ __forceinline__ double fz_trunc(double x) { return trunc(x); }

template <typename T>
__device__ __forceinline__ T fz_sign(T x) {
  return (T)((T(0) < x) - (x < T(0)));
}
__device__ __forceinline__ bool fz_sign(bool x) { return x; }

template <typename T>
__device__ __forceinline__ bool fz_isnan(T) {
  return false;
}
__device__ __forceinline__ bool fz_isnan(float x) { return isnan(x); }
__device__ __forceinline__ bool fz_isnan(double x) { return isnan(x); }
template <typename T>
__device__ __forceinline__ bool fz_isinf(T) {
  return false;
}
__device__ __forceinline__ bool fz_isinf(float x) { return isinf(x); }
__device__ __forceinline__ bool fz_isinf(double x) { return isinf(x); }
template <typename T>
__device__ __forceinline__ bool fz_isfinite(T) {
  return true;
}
__device__ __forceinline__ bool fz_isfinite(float x) { return isfinite(x); }
__device__ __forceinline__ bool fz_isfinite(double x) { return isfinite(x); }

template <typename T>
__device__ __forceinline__ bool fz_nonzero(T x) {
  return x != T(0);
}

template <typename T>
__device__ __forceinline__ T fz_bitwise_not(T x) {
  return ~x;
}
__device__ __forceinline__ bool fz_bitwise_not(bool x) { return !x; }
template <typename T>
__device__ __forceinline__ T fz_bitwise_and(T a, T b) {
  return a & b;
}
__device__ __forceinline__ bool fz_bitwise_and(bool a, bool b) { return a && b; }
template <typename T>
__device__ __forceinline__ T fz_bitwise_or(T a, T b) {
  return a | b;
}
__device__ __forceinline__ bool fz_bitwise_or(bool a, bool b) { return a || b; }
template <typename T>
__device__ __forceinline__ T fz_bitwise_xor(T a, T b) {
  return a ^ b;
}
__device__ __forceinline__ bool fz_bitwise_xor(bool a, bool b) { return a != b; }

template <typename T>
__device__ __forceinline__ T fz_maximum(T a, T b) {
  return a > b ? a : b;
}
__device__ __forceinline__ float fz_maximum(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fffffff) : (a > b ? a : b);
}
__device__ __forceinline__ double fz_maximum(double a, double b) {
  return (isnan(a) || isnan(b)) ? __longlong_as_double(0x7fffffffffffffffLL) : (a > b ? a : b);
}
template <typename T>
__device__ __forceinline__ T fz_minimum(T a, T b) {
  return a < b ? a : b;
}
__device__ __forceinline__ float fz_minimum(float a, float b) {
  return (isnan(a) || isnan(b)) ? __int_as_float(0x7fffffff) : (a < b ? a : b);
}
__device__ __forceinline__ double fz_minimum(double a, double b) {
  return (isnan(a) || isnan(b)) ? __longlong_as_double(0x7fffffffffffffffLL) : (a < b ? a : b);
}

// Integer powers wrap; negative exponents give 0 except for bases 1 and -1.
template <typename T>
__device__ __forceinline__ T fz_pow(T a, T b) {
  if (b < 0) return a == 1 ? T(1) : (a == -1 ? ((b % 2 == 0) ? T(1) : T(-1)) : T(0));
  unsigned long long result = 1, base = (unsigned long long)a;
  for (unsigned long long e = (unsigned long long)b; e; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return (T)result;
}
__device__ __forceinline__ float fz_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double fz_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ bool fz_pow(bool a, bool b) { return a || !b; }

template <typename T>
__device__ __forceinline__ T fz_fmod(T a, T b) {
  return (b == 0 || b == -1) ? T(0) : a % b;
}
__device__ __forceinline__ float fz_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double fz_fmod(double a, double b) { return fmod(a, b); }
__device__ __forceinline__ bool fz_fmod(bool, bool) { return false; }

template <typename T>
__device__ __forceinline__ T fz_remainder(T a, T b) {
  if (b == 0 || b == -1) return T(0);
  T m = a % b;
  return (m != 0 && ((b < 0) != (m < 0))) ? m + b : m;
}
__device__ __forceinline__ float fz_remainder(float a, float b) {
  float m = fmodf(a, b);
  return (m != 0.0f && ((b < 0.0f) != (m < 0.0f))) ? m + b : m;
}
__device__ __forceinline__ double fz_remainder(double a, double b) {
  double m = fmod(a, b);
  return (m != 0.0 && ((b < 0.0) != (m < 0.0))) ? m + b : m;
}
__device__ __forceinline__ bool fz_remainder(bool, bool) { return false; }

__device__ __forceinline__ float fz_lerp(float a, float b, float w) {
  return fabsf(w) < 0.5f ? a + w * (b - a) : b - (b - a) * (1.0f - w);
}
__device__ __forceinline__ double fz_lerp(double a, double b, double w) {
  return fabs(w) < 0.5 ? a + w * (b - a) : b - (b - a) * (1.0 - w);
}

template <typename T>
__device__ __forceinline__ T fz_fma(T a, T b, T c) {
  return a * b + c;
}
__device__ __forceinline__ float fz_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double fz_fma(double a, double b, double c) { return fma(a, b, c); }
