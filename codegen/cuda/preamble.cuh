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
