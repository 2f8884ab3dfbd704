// fuserc kernel preamble: the types and helpers every generated kernel uses. Each helper has
// the scalar semantics of core/ir/scalar_math.h (PyTorch's): NaN-propagating maximum and
// minimum, Python remainder, integer powers, round half to even, the GELU variants, frac and
// signbit. (fz_erfinv comes after the preamble, from core/base/erfinv_impl.h.) Integer
// division by zero gives 0 here (the CPU reference reports it as an error).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

template <typename T, int N>
struct alignas(sizeof(T) * N) fz_vec {
  T v[N];
};

// In integers: the offset may lie outside the buffer (a branch of cat or pad not taken).
template <int kBytes, typename T>
__device__ __forceinline__ bool fz_is_aligned(const T* p, long long offset) {
  return (reinterpret_cast<unsigned long long>(p) +
          static_cast<unsigned long long>(offset) * sizeof(T)) % kBytes == 0;
}
// W elements from p + offset where `when` holds (an address valid only there), else zeros.
template <int W, typename T>
__device__ __forceinline__ fz_vec<T, W> fz_vec_load_if(bool when, const T* p, long long offset) {
  fz_vec<T, W> v{};
  if (when) v = *reinterpret_cast<const fz_vec<T, W>*>(p + offset);
  return v;
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

// ---- indexing (index_select, gather): an index outside [0, n) is clamped into it, so that no
// read leaves the tensor (the contract leaves the value unspecified). n > 0 where it is read.
__device__ __forceinline__ long long fz_clamp_index(long long i, long long n) {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
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
// GELU without cancellation for negative x: 0.5 * x * (1 + erf(x / sqrt 2)) written with erfc, and
// 0.5 * x * (1 + tanh(u)) as x * sigmoid(2u) (1 + tanh(u) lost every digit below x = -4 in f32).
__device__ __forceinline__ float fz_gelu_erf(float x) {
  return 0.5f * x * erfcf(x * -0.70710678118654752440f);
}
__device__ __forceinline__ double fz_gelu_erf(double x) {
  return 0.5 * x * erfc(x * -0.70710678118654752440);
}
__device__ __forceinline__ float fz_gelu_tanh(float x) {
  const float inner = 0.79788456080286535588f * (x + 0.044715f * x * x * x);
  return x / (1.0f + expf(-2.0f * inner));
}
__device__ __forceinline__ double fz_gelu_tanh(double x) {
  const double inner = 0.79788456080286535588 * (x + 0.044715 * x * x * x);
  return x / (1.0 + exp(-2.0 * inner));
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
__device__ __forceinline__ float fz_frac(float x) { return x - truncf(x); }
__device__ __forceinline__ double fz_frac(double x) { return x - trunc(x); }

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
__device__ __forceinline__ bool fz_signbit(T x) {
  return x < T(0);
}
__device__ __forceinline__ bool fz_signbit(bool) { return false; }
__device__ __forceinline__ bool fz_signbit(float x) { return signbit(x) != 0; }
__device__ __forceinline__ bool fz_signbit(double x) { return signbit(x) != 0; }

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

// ---- reductions
// Welford's running (mean, m2, count) of a variance, combined with Chan's formula, plus the
// plain sum: the mean a result reports is sum / count, which stays right with infinities
// (Welford's running mean turns inf - inf into NaN). The running mean is mean + lo, lo holding
// its rounding error (a two-sum per update), so that data far from 0 relative to its spread
// (values in [10000, 10001]) keeps m2 as exact as data near 0: a mean rounded to an ulp of
// 10000 would leak about 1e-3 into every deviation. (A persistent kernel, its row in registers,
// computes a variance in two passes over them instead: the sum, then the squared deviations
// from the mean; see variance_from_registers in codegen/lower.)
template <typename T>
struct fz_welford {
  T mean, m2, n, sum, lo;
};
template <typename T>
__device__ __forceinline__ fz_welford<T> fz_welford_init() {
  return fz_welford<T>{T(0), T(0), T(0), T(0), T(0)};
}
// a + b rounded, and in err the rounding's exact error (Knuth's two-sum; adds only, which
// --fmad leaves alone).
template <typename T>
__device__ __forceinline__ T fz_two_sum(T a, T b, T& err) {
  const T s = a + b;
  const T bp = s - a;
  err = (a - (s - bp)) + (b - bp);
  return s;
}
// mean + lo + step as a renormalized (mean, lo) pair.
template <typename T>
__device__ __forceinline__ T fz_mean_add(T mean, T& lo, T step) {
  T e;
  const T s = fz_two_sum(mean, step, e);
  return fz_two_sum(s, lo + e, lo);
}
template <typename T>
__device__ __forceinline__ fz_welford<T> fz_welford_push(fz_welford<T> a, T x) {
  const T n = a.n + T(1);
  const T d = (x - a.mean) - a.lo;
  T lo = a.lo;
  const T mean = fz_mean_add(a.mean, lo, d / n);
  return fz_welford<T>{mean, a.m2 + d * ((x - mean) - lo), n, a.sum + x, lo};
}
template <typename T>
__device__ __forceinline__ fz_welford<T> fz_welford_combine(fz_welford<T> a, fz_welford<T> b) {
  if (b.n == T(0)) return a;
  if (a.n == T(0)) return b;
  const T n = a.n + b.n;
  const T d = (b.mean - a.mean) + (b.lo - a.lo);
  const T w = b.n / n;
  T lo = a.lo;
  const T mean = fz_mean_add(a.mean, lo, d * w);
  return fz_welford<T>{mean, a.m2 + b.m2 + d * d * (a.n * w), n, a.sum + b.sum, lo};
}
template <typename T>
__device__ __forceinline__ T fz_welford_var(fz_welford<T> a, T correction) {
  const T d = a.n - correction;
  return a.m2 / (d > T(0) ? d : T(0));
}
template <typename T>
__device__ __forceinline__ T fz_welford_mean(fz_welford<T> a) {
  return a.sum / a.n;  // the mean of nothing is 0 / 0 (NaN)
}

// An online log-sum-exp: a row's running maximum m and s, the sum of exp(x - m) over its
// elements, rescaled by exp(m_old - m_new) when the maximum grows, so that amax(x) and
// sum(exp(x - amax(x))) take one pass over the row (one exp per element). An element equal to
// the maximum adds exactly 1, so a row of -inf (or +inf) counts its elements rather than
// making NaN of a later finite maximum; fz_lse_sum then gives NaN for an infinite maximum, as
// the reference's exp(inf - inf) does. A NaN makes both NaN. Empty: (-inf, 0), which
// combines exactly with anything.
template <typename T>
struct fz_lse {
  T m, s;
};
template <typename T>
__device__ __forceinline__ fz_lse<T> fz_lse_init() {
  if constexpr (sizeof(T) == 4) return fz_lse<T>{-__int_as_float(0x7f800000), T(0)};
  else return fz_lse<T>{-__longlong_as_double(0x7ff0000000000000LL), T(0)};
}
__device__ __forceinline__ float fz_lse_exp(float x) { return expf(x); }
__device__ __forceinline__ double fz_lse_exp(double x) { return exp(x); }
template <typename T>
__device__ __forceinline__ fz_lse<T> fz_lse_combine(fz_lse<T> a, fz_lse<T> b) {
  const bool grow = b.m > a.m;
  const T e = b.m == a.m ? T(1) : fz_lse_exp(grow ? a.m - b.m : b.m - a.m);
  return fz_lse<T>{fz_maximum(a.m, b.m), grow ? a.s * e + b.s : a.s + b.s * e};
}
template <typename T>
__device__ __forceinline__ fz_lse<T> fz_lse_push(fz_lse<T> a, T x) {
  return fz_lse_combine(a, fz_lse<T>{x, T(1)});
}
template <typename T>
__device__ __forceinline__ T fz_lse_max(fz_lse<T> a) {
  return a.m;
}
__device__ __forceinline__ float fz_lse_sum(fz_lse<float> a) {
  return isinf(a.m) ? __int_as_float(0x7fffffff) : a.s;
}
__device__ __forceinline__ double fz_lse_sum(fz_lse<double> a) {
  return isinf(a.m) ? __longlong_as_double(0x7fffffffffffffffLL) : a.s;
}

// Combining operations, as function objects for the reduction helpers below.
struct fz_sum_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a + b; }
  __device__ __forceinline__ bool operator()(bool a, bool b) const { return a || b; }
};
struct fz_prod_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return a * b; }
  __device__ __forceinline__ bool operator()(bool a, bool b) const { return a && b; }
};
struct fz_max_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return fz_maximum(a, b); }
};
struct fz_min_op {
  template <typename T>
  __device__ __forceinline__ T operator()(T a, T b) const { return fz_minimum(a, b); }
};
struct fz_welford_op {
  template <typename T>
  __device__ __forceinline__ fz_welford<T> operator()(fz_welford<T> a, fz_welford<T> b) const {
    return fz_welford_combine(a, b);
  }
};
struct fz_lse_op {
  template <typename T>
  __device__ __forceinline__ fz_lse<T> operator()(fz_lse<T> a, fz_lse<T> b) const {
    return fz_lse_combine(a, b);
  }
};

template <typename T>
__device__ __forceinline__ T fz_shfl_xor(T v, int mask, int width) {
  return __shfl_xor_sync(0xffffffffu, v, mask, width);
}
__device__ __forceinline__ bool fz_shfl_xor(bool v, int mask, int width) {
  return __shfl_xor_sync(0xffffffffu, (int)v, mask, width) != 0;
}
template <typename T>
__device__ __forceinline__ fz_welford<T> fz_shfl_xor(fz_welford<T> v, int mask, int width) {
  return fz_welford<T>{fz_shfl_xor(v.mean, mask, width), fz_shfl_xor(v.m2, mask, width),
                       fz_shfl_xor(v.n, mask, width), fz_shfl_xor(v.sum, mask, width),
                       fz_shfl_xor(v.lo, mask, width)};
}
template <typename T>
__device__ __forceinline__ fz_lse<T> fz_shfl_xor(fz_lse<T> v, int mask, int width) {
  return fz_lse<T>{fz_shfl_xor(v.m, mask, width), fz_shfl_xor(v.s, mask, width)};
}

// Reduces v over the TPR threads of a row (threadIdx.x in [0, TPR) for one threadIdx.y; TPR a
// power of two up to 32, or whole warps: 96 threads are 3 warps): a butterfly of warp shuffles,
// then, past one warp, shared memory (`smem` holds blockDim.y * TPR / 32 values). Every thread
// of the row gets the result, always combined in the same order. Every thread of the block
// must call it.
template <typename T>
struct fz_same_type {
  using type = T;
};
template <int TPR, typename T, typename Op>
__device__ __forceinline__ T fz_row_reduce(T v, Op op, typename fz_same_type<T>::type* smem) {
  static_assert(TPR > 0 && (TPR < 32 ? (TPR & (TPR - 1)) == 0 : TPR % 32 == 0),
                "fz_row_reduce: threads per row must be a power of two up to 32 or whole warps");
  constexpr int kWidth = TPR < 32 ? TPR : 32;
  for (int m = kWidth / 2; m > 0; m /= 2) v = op(v, fz_shfl_xor(v, m, kWidth));
  if (TPR <= 32) return v;
  constexpr int kWarps = TPR / 32;
  T* s = smem + threadIdx.y * kWarps;
  if (threadIdx.x % 32 == 0) s[threadIdx.x / 32] = v;
  __syncthreads();
  T r = s[0];
  for (int w = 1; w < kWarps; ++w) r = op(r, s[w]);
  __syncthreads();
  return r;
}

// Reduces v over threadIdx.y for each threadIdx.x (blockDim = (TX, TY)); `smem` holds TX * TY
// values. Every thread gets its column's result. Every thread of the block must call it.
template <int TX, int TY, typename T, typename Op>
__device__ __forceinline__ T fz_column_reduce(T v, Op op, T* smem) {
  smem[threadIdx.y * TX + threadIdx.x] = v;
  __syncthreads();
  T r = smem[threadIdx.x];
  for (int y = 1; y < TY; ++y) r = op(r, smem[y * TX + threadIdx.x]);
  __syncthreads();
  return r;
}

// Grid reductions: every block of a group writes its partial results, then calls this with
// the group's counter; it returns true in the block that arrives last (which then reads every
// partial, in order, with fz_load_cg) and leaves the counter at zero again for the next
// launch. Every thread of the block must call it.
template <typename I>
__device__ __forceinline__ bool fz_last_block(unsigned int* counters, I group, unsigned int blocks) {
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0) {
    last = atomicAdd(counters + group, 1u) == blocks - 1;
    if (last) counters[group] = 0;
  }
  __syncthreads();
  if (last) __threadfence();
  return last;
}

// A partial written by another block: read from L2 (L1 may hold a stale copy of its line).
template <typename T, typename I>
__device__ __forceinline__ T fz_load_cg(const T* base, I index) {
  const T* p = base + index;
  if constexpr (sizeof(T) % 4 == 0) {
    T r;
    unsigned int* w = reinterpret_cast<unsigned int*>(&r);
    const unsigned int* s = reinterpret_cast<const unsigned int*>(p);
#pragma unroll
    for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __ldcg(s + i);
    return r;
  } else {
    return *reinterpret_cast<const volatile T*>(p);
  }
}

// ---- Philox4x32-10 (core/base/philox_impl.h)
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

// ---- erfinv (core/base/erfinv_impl.h)
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

