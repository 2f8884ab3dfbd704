// Tests for the CPU emulation of CUDA kernels (runtime/emulator): hand-written kernels, written
// as they would be for NVRTC (each also compiles with NVRTC for sm_80 without warnings), run
// through EmulatedModule and checked against host computations: indexing over 2-D grids, the
// f16/bf16 conversions against core/base/half.cc, __syncthreads and static shared memory, warp
// shuffles and votes, dynamic shared memory, atomics across blocks, Philox against the host
// reference, saturating conversions, launch checks, deadlock detection, the module cache and
// its errors, and independence from the number of host threads.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/file_io.h"
#include "core/base/half.h"
#include "core/base/philox.h"
#include "runtime/emulator/emulated_module.h"

namespace fuserc::emu {
namespace {

namespace fs = std::filesystem;

// ---- The kernels under test -----------------------------------------------------------------

constexpr const char* kIncludes = "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n";

// Prepended with kIncludes and core/base/philox_impl.h's text, as generated sources are.
constexpr const char* kKernels = R"cuda(
// y[r][c] = 2 x[r][c] + (r - c) over a 2-D grid of 2-D blocks, with a tail in both dimensions.
extern "C" __global__ void __launch_bounds__(128) ew2d(const __nv_bfloat16* __restrict__ x,
                                                      float* __restrict__ y, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  const long long i = (long long)r * cols + c;
  y[i] = __bfloat162float(x[i]) * 2.0f + (float)(r - c);
}

// Decodes 16-bit patterns as f16 and as bf16.
extern "C" __global__ void decode16(const unsigned short* __restrict__ bits,
                                    float* __restrict__ from_f16, float* __restrict__ from_bf16,
                                    int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  from_f16[i] = __half2float(__ushort_as_half(bits[i]));
  from_bf16[i] = __bfloat162float(__ushort_as_bfloat16(bits[i]));
}

// Rounds floats (and doubles) to f16 and bf16; the values go through arrays and by-value
// parameters of __half / __nv_bfloat16 on the way.
__device__ __forceinline__ unsigned short f16_pattern(__half h) { return __half_as_ushort(h); }
__device__ __forceinline__ unsigned short bf16_pattern(__nv_bfloat16 h) {
  return __bfloat16_as_ushort(h);
}
extern "C" __global__ void encode16(const float* __restrict__ x, const double* __restrict__ d,
                                    unsigned short* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half h[2];
  __nv_bfloat16 b[2];
  h[0] = __float2half_rn(x[i]);
  h[1] = __float2half(x[i]);
  b[0] = __float2bfloat16_rn(x[i]);
  b[1] = __float2bfloat16(x[i]);
  out[6 * i + 0] = f16_pattern(h[0]);
  out[6 * i + 1] = f16_pattern(h[1]);
  out[6 * i + 2] = bf16_pattern(b[0]);
  out[6 * i + 3] = bf16_pattern(b[1]);
  out[6 * i + 4] = f16_pattern(__double2half(d[i]));
  out[6 * i + 5] = bf16_pattern(__double2bfloat16(d[i]));
}

// One sum per block of 256 threads: a tree in static shared memory with __syncthreads.
extern "C" __global__ void __launch_bounds__(256) block_sum(const float* __restrict__ x,
                                                           float* __restrict__ out, int n) {
  __shared__ __align__(16) float buf[256];
  const int i = blockIdx.x * 256 + threadIdx.x;
  buf[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = 128; s > 0; s >>= 1) {
    if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = buf[0];
}

// Threads that returned do not hold up __syncthreads; __syncthreads_count counts predicates.
extern "C" __global__ void early_exit(int* __restrict__ out, int stay) {
  __shared__ int arrived;
  if (threadIdx.x == 0) arrived = 0;
  const int votes = __syncthreads_count(threadIdx.x % 3 == 0);
  if ((int)threadIdx.x >= stay) return;
  atomicAdd(&arrived, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    out[2 * blockIdx.x] = arrived;
    out[2 * blockIdx.x + 1] = votes;
  }
}

// Warp shuffles (xor, down, up, idx; widths 32, 16 and 8; int, float, double, long long) and
// votes. Nine results per thread.
extern "C" __global__ void warp_ops(const int* __restrict__ x, long long* __restrict__ out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = x[t];
  int all = v;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) all += __shfl_xor_sync(0xffffffffu, all, o);
  int down = v;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) down += __shfl_down_sync(0xffffffffu, down, o);
  int half = v;
#pragma unroll
  for (int o = 8; o > 0; o >>= 1) half += __shfl_xor_sync(0xffffffffu, half, o, 16);
  const int up = __shfl_up_sync(0xffffffffu, v, 1);
  const int idx = __shfl_sync(0xffffffffu, v, 3, 8);
  const float f = __shfl_xor_sync(0xffffffffu, (float)v + 0.5f, 1);
  const double d = __shfl_down_sync(0xffffffffu, (double)v * 0.25, 2, 16);
  const long long ll = __shfl_sync(0xffffffffu, (long long)v * (1ll << 33), 31 - (int)(threadIdx.x % 32));
  const unsigned int ballot = __ballot_sync(0xffffffffu, v % 3 == 0);
  long long* o = out + 9 * t;
  o[0] = all;
  o[1] = down;
  o[2] = half;
  o[3] = up;
  o[4] = idx;
  o[5] = (long long)(f * 2.0f);
  o[6] = (long long)(d * 4.0);
  o[7] = ll;
  o[8] = ballot;
}

// Reverses each block's row of n floats through dynamic shared memory of n * 4 bytes.
extern "C" __global__ void dyn_reverse(const float* __restrict__ x, float* __restrict__ y, int n) {
  extern __shared__ __align__(16) unsigned char fz_smem[];
  float* buf = reinterpret_cast<float*>(fz_smem);
  const long long base = (long long)blockIdx.x * n;
  for (int k = threadIdx.x; k < n; k += blockDim.x) buf[k] = x[base + k];
  __syncthreads();
  for (int k = threadIdx.x; k < n; k += blockDim.x) y[base + k] = buf[n - 1 - k];
}

// What dynamic shared memory holds before anyone writes it, and its alignment.
extern "C" __global__ void smem_probe(unsigned int* __restrict__ out) {
  extern __shared__ __align__(16) unsigned char fz_smem[];
  out[threadIdx.x] = reinterpret_cast<const unsigned int*>(fz_smem)[threadIdx.x];
  if (threadIdx.x == 0) out[blockDim.x] = (unsigned int)((unsigned long long)fz_smem % 16);
}

// Atomics from every block; the last block to finish (seen through atomicInc after a
// __threadfence) adds up the per-block partial sums.
extern "C" __global__ void atomics(const int* __restrict__ x, int n,
                                   unsigned long long* __restrict__ total,
                                   int* __restrict__ hist, int* __restrict__ extremes,
                                   float* __restrict__ fcount, double* __restrict__ dsum,
                                   int* __restrict__ partial, unsigned int* __restrict__ done,
                                   long long* __restrict__ final_sum) {
  __shared__ int block_total;
  if (threadIdx.x == 0) block_total = 0;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const int v = x[i];
    atomicAdd(total, (unsigned long long)v);
    atomicAdd(&hist[v % 16], 1);
    atomicMax(&extremes[0], v);
    atomicMin(&extremes[1], v);
    atomicAdd(fcount, 1.0f);
    atomicAdd(dsum, (double)v);
    atomicAdd(&block_total, v);
    int old = atomicCAS(&extremes[2], 0, v);  // the first value written wins
    (void)old;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = block_total;
    __threadfence();
    const unsigned int ticket = atomicInc(done, 0xffffffffu);
    if (ticket == gridDim.x - 1) {
      __threadfence();
      long long sum = 0;
      for (unsigned int b = 0; b < gridDim.x; ++b) sum += ((volatile int*)partial)[b];
      *final_sum = sum;
    }
  }
}

// Many atomic additions to one address from every thread of every block.
extern "C" __global__ void hammer(float* __restrict__ f, unsigned long long* __restrict__ u,
                                  double* __restrict__ d, int reps) {
  for (int r = 0; r < reps; ++r) {
    atomicAdd(f, 1.0f);
    atomicAdd(u, 1ull);
    atomicAdd(d, 0.5);
  }
}

// rand/randn through philox_impl.h, as generated kernels draw them.
extern "C" __global__ void philox(float* __restrict__ u32, float* __restrict__ n32,
                                  double* __restrict__ u64, double* __restrict__ n64,
                                  long long seed, long long offset, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const fuserc_u64 s = (fuserc_u64)seed, o = (fuserc_u64)offset, k = (fuserc_u64)i;
  u32[i] = fuserc_rand_f32(s, o, k);
  n32[i] = fuserc_randn_f32(s, o, k);
  u64[i] = fuserc_rand_f64(s, o, k);
  n64[i] = fuserc_randn_f64(s, o, k);
}

// Saturating conversions to integers, and the other roundings of float to int.
extern "C" __global__ void to_integers(const float* __restrict__ f, const double* __restrict__ d,
                                       long long* __restrict__ out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long* o = out + 12 * i;
  o[0] = __float2int_rz(f[i]);
  o[1] = (long long)__float2uint_rz(f[i]);
  o[2] = __float2ll_rz(f[i]);
  o[3] = (long long)__float2ull_rz(f[i]);
  o[4] = __double2int_rz(d[i]);
  o[5] = (long long)__double2uint_rz(d[i]);
  o[6] = __double2ll_rz(d[i]);
  o[7] = (long long)__double2ull_rz(d[i]);
  o[8] = __float2int_rn(f[i]);
  o[9] = __float2int_rd(f[i]);
  o[10] = __float2int_ru(f[i]);
  o[11] = __double2ll_rn(d[i]);
}

// Math functions, min/max, bit casts and explicitly rounded operations.
extern "C" __global__ void math(const float* __restrict__ x, float* __restrict__ fo,
                                double* __restrict__ dout, long long* __restrict__ io) {
  const float a = x[0], b = x[1], c = x[2];
  fo[0] = expf(a);
  fo[1] = logf(b);
  fo[2] = tanhf(a);
  fo[3] = rsqrtf(b);
  fo[4] = erff(a);
  fo[5] = powf(b, a);
  fo[6] = fmaf(a, b, c);
  fo[7] = a * b + c;
  fo[8] = __fmaf_rn(a, b, c);
  fo[9] = __fadd_rn(__fmul_rn(a, b), c);
  fo[10] = min(a, b);
  fo[11] = max(a, b);
  fo[12] = exp2f(a) + log1pf(b) + atan2f(a, b) + fmodf(b, a);
  fo[13] = __int_as_float(__float_as_int(c) + 1);
  dout[0] = exp((double)a);
  dout[1] = rsqrt((double)b);
  dout[2] = __dmul_rn((double)a, (double)b);
  dout[3] = __longlong_as_double(__double_as_longlong(1.5) + 1);
  dout[4] = __fma_rn((double)a, (double)b, (double)c);
  io[0] = min(-3, 2);
  io[1] = max(7u, 9u);
  io[2] = min(-5ll, 4ll);
  io[3] = (long long)max(1ull << 40, 3ull);
  io[4] = isnan(logf(-1.0f)) + 2 * isinf(1.0f / (a - a)) + 4 * isfinite(b);
  io[5] = __popc(0xF0F0u) + 100 * __clz(1);
}

// Lanes waiting at a shuffle for lanes that wait at __syncthreads: can never complete.
extern "C" __global__ void stuck(int* __restrict__ out) {
  if (threadIdx.x < 16) {
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (int)threadIdx.x, 1);
  } else {
    __syncthreads();
  }
}

extern "C" __global__ void say(int value) {
  printf("emulated printf: %d %.2f\n", value, 0.5f * value);
}
)cuda";

std::vector<KernelSignature> kernel_signatures() {
  return {
      {"ew2d", {"const __nv_bfloat16* __restrict__", "float* __restrict__", "int", "int"}},
      {"decode16",
       {"const unsigned short* __restrict__", "float* __restrict__", "float* __restrict__", "int"}},
      {"encode16",
       {"const float* __restrict__", "const double* __restrict__", "unsigned short* __restrict__",
        "int"}},
      {"block_sum", {"const float* __restrict__", "float* __restrict__", "int"}},
      {"early_exit", {"int* __restrict__", "int"}},
      {"warp_ops", {"const int* __restrict__", "long long* __restrict__"}},
      {"dyn_reverse", {"const float* __restrict__", "float* __restrict__", "int"}},
      {"smem_probe", {"unsigned int* __restrict__"}},
      {"atomics",
       {"const int* __restrict__", "int", "unsigned long long* __restrict__", "int* __restrict__",
        "int* __restrict__", "float* __restrict__", "double* __restrict__", "int* __restrict__",
        "unsigned int* __restrict__", "long long* __restrict__"}},
      {"hammer",
       {"float* __restrict__", "unsigned long long* __restrict__", "double* __restrict__", "int"}},
      {"philox",
       {"float* __restrict__", "float* __restrict__", "double* __restrict__",
        "double* __restrict__", "long long", "long long", "int"}},
      {"to_integers",
       {"const float* __restrict__", "const double* __restrict__", "long long* __restrict__",
        "int"}},
      {"math",
       {"const float* __restrict__", "float* __restrict__", "double* __restrict__",
        "long long* __restrict__"}},
      {"stuck", {"int* __restrict__"}},
      {"say", {"int"}},
  };
}

// ---- Helpers --------------------------------------------------------------------------------

// A cache shared by the test processes (ctest runs each test case in its own process, possibly
// in parallel: the cache is safe for that), so the kernels are compiled once: $FUSERC_CACHE_DIR
// (ctest sets it to the build tree's), else one in $TMPDIR.
BuildOptions shared_cache_options() {
  BuildOptions options;
  const char* cache = std::getenv("FUSERC_CACHE_DIR");
  if (cache != nullptr && *cache) return options;
  const char* tmp = std::getenv("TMPDIR");
  options.cache_dir = std::string(tmp != nullptr && *tmp ? tmp : "/tmp") + "/fuserc-unit-tests-" +
                      std::to_string(::getuid());
  return options;
}

// A fresh, empty cache folder, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "fuserc-emu-test-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets an environment variable for a scope (or unsets it, with nullopt).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    const char* old = std::getenv(name);
    if (old != nullptr) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string test_source() {
  return std::string(kIncludes) + read_file(FUSERC_PHILOX_IMPL_PATH) + kKernels;
}

const EmulatedModule& kernels() {
  static const std::unique_ptr<EmulatedModule> module =
      EmulatedModule::build(test_source(), kernel_signatures(), shared_cache_options());
  return *module;
}

template <class... Args>
void run(const std::string& kernel, Dim3 grid, Dim3 block, size_t smem, Args... args) {
  void* params[] = {static_cast<void*>(&args)...};
  kernels().launch(kernel, grid, block, smem, params);
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
uint64_t bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, sizeof u);
  return u;
}
float float_from(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

unsigned blocks_for(size_t n, unsigned block) {
  return static_cast<unsigned>((n + block - 1) / block);
}

// A deterministic stream of 32-bit numbers.
uint32_t next_random(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return static_cast<uint32_t>(state >> 32);
}

std::string launch_error(const std::string& kernel, Dim3 grid, Dim3 block, size_t smem) {
  std::vector<float> x(16), y(16);
  float* px = x.data();
  float* py = y.data();
  int n = 16;
  try {
    run(kernel, grid, block, smem, px, py, n);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<launched>";
}

}  // namespace

// ---- Tests ----------------------------------------------------------------------------------

TEST_CASE("emulator: elementwise kernel over a 2-D grid with tails", "[emulator]") {
  const int rows = 45, cols = 77;  // neither a multiple of the block (32 x 4)
  std::vector<uint16_t> x(rows * cols);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float_to_bf16_bits(0.37f * static_cast<float>(i) - 50.0f);
  std::vector<float> y(rows * cols + 8, -1.0f);  // the 8 past the end must stay untouched
  const uint16_t* px = x.data();
  float* py = y.data();
  run("ew2d", Dim3{blocks_for(cols, 32), blocks_for(rows, 4), 1}, Dim3{32, 4, 1}, 0, px, py, rows,
      cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r) * cols + c;
      INFO("r " << r << " c " << c);
      REQUIRE(y[i] == bf16_bits_to_float(x[i]) * 2.0f + static_cast<float>(r - c));
    }
  }
  for (size_t i = rows * cols; i < y.size(); ++i) REQUIRE(y[i] == -1.0f);
}

TEST_CASE("emulator: f16 and bf16 decoding is bit-exact for all 65536 patterns", "[emulator]") {
  const int n = 65536;
  std::vector<uint16_t> patterns(n);
  std::iota(patterns.begin(), patterns.end(), 0);
  std::vector<float> from_f16(n), from_bf16(n);
  const uint16_t* pp = patterns.data();
  float* pf = from_f16.data();
  float* pb = from_bf16.data();
  run("decode16", Dim3{n / 256}, Dim3{256}, 0, pp, pf, pb, n);
  for (int i = 0; i < n; ++i) {
    INFO("pattern " << i);
    REQUIRE(bits(from_f16[i]) == bits(f16_bits_to_float(patterns[i])));
    REQUIRE(bits(from_bf16[i]) == bits(bf16_bits_to_float(patterns[i])));
  }
}

TEST_CASE("emulator: rounding to f16 and bf16 is bit-exact with half.cc", "[emulator]") {
  std::vector<float> x;
  // Every f16 and bf16 value, the midpoints between neighbours (ties) and the floats just
  // beside them.
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const auto h = static_cast<uint16_t>(b);
    for (float v : {f16_bits_to_float(h), bf16_bits_to_float(h)}) x.push_back(v);
    if ((b & 0x7fffu) < 0x7bffu) {
      const float v0 = f16_bits_to_float(h), v1 = f16_bits_to_float(static_cast<uint16_t>(h + 1));
      const float mid = (v0 + v1) / 2;  // exact in float
      x.insert(x.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)});
    }
    if ((b & 0x7fffu) < 0x7f7fu) {
      const float v0 = bf16_bits_to_float(h), v1 = bf16_bits_to_float(static_cast<uint16_t>(h + 1));
      const float mid = (v0 + v1) / 2;
      x.insert(x.end(), {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)});
    }
  }
  // Overflow, subnormals, NaNs with payloads, and random floats.
  for (uint32_t u : {0x477fefffu, 0x477ff000u, 0x477ff001u, 0x7f7fffffu, 0x7f7f8000u, 0x7f7f7fffu,
                     0x00000001u, 0x007fffffu, 0x33000000u, 0x33000001u, 0x7fc00000u, 0x7f800001u,
                     0xffc12345u, 0x7f800000u, 0xff800000u, 0x80000000u}) {
    x.push_back(float_from(u));
  }
  uint64_t state = 12345;
  for (int i = 0; i < 1 << 20; ++i) x.push_back(float_from(next_random(state)));

  std::vector<double> d(x.begin(), x.end());
  std::vector<uint16_t> out(6 * x.size());
  const float* px = x.data();
  const double* pd = d.data();
  uint16_t* po = out.data();
  const int n = static_cast<int>(x.size());
  run("encode16", Dim3{blocks_for(x.size(), 256)}, Dim3{256}, 0, px, pd, po, n);
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("float bits 0x" << std::hex << bits(x[i]));
    const uint16_t f16 = float_to_f16_bits(x[i]), bf16 = float_to_bf16_bits(x[i]);
    REQUIRE(out[6 * i + 0] == f16);
    REQUIRE(out[6 * i + 1] == f16);
    REQUIRE(out[6 * i + 2] == bf16);
    REQUIRE(out[6 * i + 3] == bf16);
    REQUIRE(out[6 * i + 4] == f16);  // a double holding a float rounds like the float
    REQUIRE(out[6 * i + 5] == bf16);
  }
}

TEST_CASE("emulator: double to f16/bf16 rounds once, not through float", "[emulator]") {
  // Just above / below a midpoint between two 16-bit values: a double rounds to the nearer
  // neighbour, whereas rounding through float would land on the tie and go to even.
  std::vector<double> d;
  std::vector<uint16_t> expect_f16, expect_bf16;
  for (uint16_t h :
       {uint16_t{0x3c00}, uint16_t{0x3c01}, uint16_t{0x0001}, uint16_t{0x7bfe}, uint16_t{0xc123}}) {
    const double lo = f16_bits_to_float(h), hi = f16_bits_to_float(static_cast<uint16_t>(h + 1));
    const double mid = (lo + hi) / 2;
    const bool neg = lo < 0;  // for negatives, h + 1 is further from zero
    d.insert(d.end(),
             {mid, std::nextafter(mid, 0.0), std::nextafter(mid, neg ? -INFINITY : INFINITY)});
    expect_f16.insert(expect_f16.end(), {static_cast<uint16_t>((h & 1u) ? h + 1 : h), h,
                                         static_cast<uint16_t>(h + 1)});
  }
  for (uint16_t h : {uint16_t{0x3f80}, uint16_t{0x3f81}, uint16_t{0x0001}, uint16_t{0x7f7e}}) {
    const double lo = bf16_bits_to_float(h), hi = bf16_bits_to_float(static_cast<uint16_t>(h + 1));
    const double mid = (lo + hi) / 2;
    d.insert(d.end(), {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY)});
    expect_bf16.insert(expect_bf16.end(), {static_cast<uint16_t>((h & 1u) ? h + 1 : h), h,
                                           static_cast<uint16_t>(h + 1)});
  }
  std::vector<float> x(d.size(), 0.0f);
  std::vector<uint16_t> out(6 * d.size());
  const float* px = x.data();
  const double* pd = d.data();
  uint16_t* po = out.data();
  const int n = static_cast<int>(d.size());
  run("encode16", Dim3{1}, Dim3{64}, 0, px, pd, po, n);
  for (size_t i = 0; i < expect_f16.size(); ++i) {
    INFO("f16 case " << i << " value " << d[i]);
    REQUIRE(out[6 * i + 4] == expect_f16[i]);
  }
  for (size_t j = 0; j < expect_bf16.size(); ++j) {
    const size_t i = expect_f16.size() + j;
    INFO("bf16 case " << j << " value " << d[i]);
    REQUIRE(out[6 * i + 5] == expect_bf16[j]);
  }
}

TEST_CASE("emulator: block reduction with static shared memory and __syncthreads", "[emulator]") {
  const int n = 256 * 7 + 100;  // 8 blocks, the last one partial
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>((i * 37) % 101);  // exact sums
  std::vector<float> out(8, -1.0f);
  const float* px = x.data();
  float* po = out.data();
  run("block_sum", Dim3{8}, Dim3{256}, 0, px, po, n);
  for (int b = 0; b < 8; ++b) {
    float expect = 0;
    for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i) expect += x[i];
    INFO("block " << b);
    REQUIRE(out[b] == expect);
  }
}

TEST_CASE("emulator: returned threads do not hold up __syncthreads", "[emulator]") {
  std::vector<int> out(2 * 3, -1);
  int* po = out.data();
  int stay = 100;
  run("early_exit", Dim3{3}, Dim3{256}, 0, po, stay);
  for (int b = 0; b < 3; ++b) {
    REQUIRE(out[2 * b] == 100);     // every staying thread passed the second barrier
    REQUIRE(out[2 * b + 1] == 86);  // __syncthreads_count: tid % 3 == 0 for 86 of 256
  }
}

TEST_CASE("emulator: warp shuffles and votes follow CUDA's semantics", "[emulator]") {
  const int blocks = 2, threads = 64, n = blocks * threads;
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 7919) % 1000 - 300;
  std::vector<long long> out(9 * n);
  const int* px = x.data();
  long long* po = out.data();
  run("warp_ops", Dim3{blocks}, Dim3{threads}, 0, px, po);
  for (int t = 0; t < n; ++t) {
    const int lane = t % 32, warp0 = t - lane;
    auto lane_value = [&](int l) { return x[warp0 + l]; };
    long long all = 0, down = 0, half = 0;
    for (int l = 0; l < 32; ++l) all += lane_value(l);
    for (int l = lane; l < 32; ++l) down += lane_value(l);  // lane 0 gets the total
    for (int l = lane & ~15; l < (lane & ~15) + 16; ++l) half += lane_value(l);
    unsigned ballot = 0;
    for (int l = 0; l < 32; ++l) ballot |= (lane_value(l) % 3 == 0 ? 1u : 0u) << l;
    const long long* o = &out[9 * t];
    INFO("thread " << t);
    REQUIRE(o[0] == all);
    if (lane == 0) REQUIRE(o[1] == down);
    REQUIRE(o[2] == half);
    REQUIRE(o[3] == (lane == 0 ? lane_value(0) : lane_value(lane - 1)));
    REQUIRE(o[4] == lane_value((lane & ~7) + 3));
    REQUIRE(o[5] == 2 * lane_value(lane ^ 1) + 1);
    REQUIRE(o[6] == lane_value((lane % 16) + 2 < 16 ? lane + 2 : lane));
    REQUIRE(o[7] == static_cast<long long>(lane_value(31 - lane)) * (1ll << 33));
    REQUIRE(o[8] == static_cast<long long>(ballot));
  }
}

TEST_CASE("emulator: dynamic shared memory of the size given at launch", "[emulator]") {
  const int n = 20000, blocks = 5;  // 80000 bytes per block, more than the static 48 KiB
  std::vector<float> x(n * blocks), y(n * blocks, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const float* px = x.data();
  float* py = y.data();
  int len = n;
  run("dyn_reverse", Dim3{blocks}, Dim3{128}, n * sizeof(float), px, py, len);
  for (int b = 0; b < blocks; ++b) {
    for (int k = 0; k < n; ++k) REQUIRE(y[b * n + k] == x[b * n + n - 1 - k]);
  }

  // Before a kernel writes it, dynamic shared memory holds 0xCD bytes; it is 16-byte aligned.
  std::vector<unsigned> probe(65, 7);
  unsigned* pp = probe.data();
  run("smem_probe", Dim3{1}, Dim3{64}, 256, pp);
  for (int i = 0; i < 64; ++i) REQUIRE(probe[i] == 0xCDCDCDCDu);
  REQUIRE(probe[64] == 0);
}

TEST_CASE("emulator: atomics from many blocks are exact", "[emulator]") {
  const int n = 300 * 256 - 17, blocks = 300;
  std::vector<int> x(n);
  for (int i = 0; i < n; ++i) x[i] = (i * 2654435761u) % 10007;
  unsigned long long total = 0;
  std::vector<int> hist(16, 0),
      extremes = {std::numeric_limits<int>::min(), std::numeric_limits<int>::max(), 0};
  float fcount = 0;
  double dsum = 0;
  std::vector<int> partial(blocks, 0);
  unsigned done = 0;
  long long final_sum = -1;
  const int* px = x.data();
  unsigned long long* ptotal = &total;
  int* phist = hist.data();
  int* pext = extremes.data();
  float* pf = &fcount;
  double* pd = &dsum;
  int* ppart = partial.data();
  unsigned* pdone = &done;
  long long* pfinal = &final_sum;
  run("atomics", Dim3{blocks}, Dim3{256}, 0, px, n, ptotal, phist, pext, pf, pd, ppart, pdone,
      pfinal);

  unsigned long long expect_total = 0;
  std::vector<int> expect_hist(16, 0);
  for (int v : x) {
    expect_total += v;
    ++expect_hist[v % 16];
  }
  REQUIRE(total == expect_total);
  REQUIRE(hist == expect_hist);
  REQUIRE(extremes[0] == *std::max_element(x.begin(), x.end()));
  REQUIRE(extremes[1] == *std::min_element(x.begin(), x.end()));
  REQUIRE(std::find(x.begin(), x.end(), extremes[2]) != x.end());
  REQUIRE(fcount == static_cast<float>(n));  // exact below 2^24
  REQUIRE(dsum == static_cast<double>(expect_total));
  REQUIRE(done == static_cast<unsigned>(blocks));
  REQUIRE(final_sum == static_cast<long long>(expect_total));
}

TEST_CASE("emulator: contended atomics lose no update", "[emulator]") {
  ScopedEnv threads("FUSERC_EMU_THREADS", "4");  // blocks on several host threads at once
  float f = 0;
  unsigned long long u = 0;
  double d = 0;
  float* pf = &f;
  unsigned long long* pu = &u;
  double* pd = &d;
  int reps = 64;
  run("hammer", Dim3{64}, Dim3{256}, 0, pf, pu, pd, reps);
  const int total = 64 * 256 * 64;  // 2^20: float counts exactly up to 2^24
  REQUIRE(u == static_cast<unsigned long long>(total));
  REQUIRE(f == static_cast<float>(total));
  REQUIRE(d == total * 0.5);
}

TEST_CASE("emulator: philox_impl.h gives the host reference's bits", "[emulator]") {
  const int n = 1000;
  std::vector<float> u32(n), n32(n);
  std::vector<double> u64(n), n64(n);
  float* pu32 = u32.data();
  float* pn32 = n32.data();
  double* pu64 = u64.data();
  double* pn64 = n64.data();
  const uint64_t seed = 0x0123456789ABCDEFull, offset = 0xFEDCBA9876543210ull;
  long long s = static_cast<long long>(seed), o = static_cast<long long>(offset);
  int count = n;
  run("philox", Dim3{blocks_for(n, 128)}, Dim3{128}, 0, pu32, pn32, pu64, pn64, s, o, count);
  for (int i = 0; i < n; ++i) {
    INFO("index " << i);
    REQUIRE(bits(u32[i]) == bits(philox_uniform_f32(seed, offset, i)));
    REQUIRE(bits(n32[i]) == bits(philox_normal_f32(seed, offset, i)));
    REQUIRE(bits(u64[i]) == bits(philox_uniform_f64(seed, offset, i)));
    REQUIRE(bits(n64[i]) == bits(philox_normal_f64(seed, offset, i)));
  }
}

TEST_CASE("emulator: float-to-integer conversions saturate, NaN gives 0", "[emulator]") {
  constexpr long long kIntMax = std::numeric_limits<int>::max();
  constexpr long long kIntMin = std::numeric_limits<int>::min();
  constexpr long long kLlMax = std::numeric_limits<long long>::max();
  constexpr long long kLlMin = std::numeric_limits<long long>::min();
  const long long kUintMax = 0xffffffffll;
  const long long kUllMax = -1;  // 0xffff...ffff seen as long long
  struct Case {
    double value;
    long long i32, u32, i64, u64;  // the _rz results, for the value as float and as double
  };
  const std::vector<Case> cases = {
      {NAN, 0, 0, 0, 0},
      {INFINITY, kIntMax, kUintMax, kLlMax, kUllMax},
      {-INFINITY, kIntMin, 0, kLlMin, 0},
      {3e9, kIntMax, 3000000000ll, 3000000000ll, 3000000000ll},
      {-3e9, kIntMin, 0, -3000000000ll, 0},
      {1e20, kIntMax, kUintMax, kLlMax, kUllMax},
      {-1e20, kIntMin, 0, kLlMin, 0},
      {2.75, 2, 2, 2, 2},
      {-2.75, -2, 0, -2, 0},
      {-0.9, 0, 0, 0, 0},
      {2147483520.0, 2147483520ll, 2147483520ll, 2147483520ll, 2147483520ll},
      {-2147483648.0, kIntMin, 0, -2147483648ll, 0},
      {9223372036854775808.0, kIntMax, kUintMax, kLlMax, static_cast<long long>(1ull << 63)},
      {-9223372036854775808.0, kIntMin, 0, kLlMin, 0},
  };
  std::vector<float> f;
  std::vector<double> d;
  for (const Case& c : cases) {
    f.push_back(static_cast<float>(c.value));
    d.push_back(c.value);
  }
  // Roundings: to nearest even, down, up.
  for (double v : {2.5, 3.5, -2.5, -2.25}) {
    f.push_back(static_cast<float>(v));
    d.push_back(v);
  }
  std::vector<long long> out(12 * f.size());
  const float* pf = f.data();
  const double* pd = d.data();
  long long* po = out.data();
  const int n = static_cast<int>(f.size());
  run("to_integers", Dim3{1}, Dim3{32}, 0, pf, pd, po, n);
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const long long* o = &out[12 * i];
    INFO("case " << i << " value " << c.value);
    CHECK(o[0] == c.i32);
    CHECK(o[1] == c.u32);
    CHECK(o[2] == c.i64);
    CHECK(o[3] == c.u64);
    CHECK(o[4] == c.i32);
    CHECK(o[5] == c.u32);
    CHECK(o[6] == c.i64);
    CHECK(o[7] == c.u64);
  }
  auto rounded = [&](size_t k, int field) { return out[12 * (cases.size() + k) + field]; };
  CHECK(rounded(0, 8) == 2);  // __float2int_rn(2.5)
  CHECK(rounded(1, 8) == 4);  // __float2int_rn(3.5)
  CHECK(rounded(2, 8) == -2);
  CHECK(rounded(2, 9) == -3);   // _rd(-2.5)
  CHECK(rounded(2, 10) == -2);  // _ru(-2.5)
  CHECK(rounded(3, 9) == -3);
  CHECK(rounded(3, 10) == -2);
  CHECK(rounded(0, 11) == 2);  // __double2ll_rn(2.5)
}

TEST_CASE("emulator: math functions, min/max, bit casts, explicit rounding", "[emulator]") {
  // a * b + c is inexact here, so a fused multiply-add differs from two roundings.
  const float a = 1.0f + 0x1p-12f, b = 1.0f + 0x3p-12f, c = -1.0f;
  std::vector<float> x = {a, b, c}, fo(14);
  std::vector<double> dout(5);
  std::vector<long long> io(6);
  const float* px = x.data();
  float* pf = fo.data();
  double* pd = dout.data();
  long long* pi = io.data();
  run("math", Dim3{1}, Dim3{1}, 0, px, pf, pd, pi);
  volatile float product = a * b;  // rounded on its own
  CHECK(fo[0] == std::exp(a));
  CHECK(fo[1] == std::log(b));
  CHECK(fo[2] == std::tanh(a));
  CHECK(fo[3] == 1.0f / std::sqrt(b));
  CHECK(fo[4] == std::erf(a));
  CHECK(fo[5] == std::pow(b, a));
  CHECK(fo[6] == std::fma(a, b, c));
  CHECK(fo[7] == product + c);  // not contracted into an fma
  CHECK(fo[6] != fo[7]);
  CHECK(fo[8] == fo[6]);
  CHECK(fo[9] == fo[7]);
  CHECK(fo[10] == a);
  CHECK(fo[11] == b);
  CHECK(fo[12] == std::exp2(a) + std::log1p(b) + std::atan2(a, b) + std::fmod(b, a));
  CHECK(bits(fo[13]) == bits(c) + 1);
  CHECK(dout[0] == std::exp(static_cast<double>(a)));
  CHECK(dout[1] == 1.0 / std::sqrt(static_cast<double>(b)));
  CHECK(dout[2] == static_cast<double>(a) * static_cast<double>(b));
  CHECK(bits(dout[3]) == bits(1.5) + 1);
  CHECK(dout[4] ==
        std::fma(static_cast<double>(a), static_cast<double>(b), static_cast<double>(c)));
  CHECK(io[0] == -3);
  CHECK(io[1] == 9);
  CHECK(io[2] == -5);
  CHECK(io[3] == (1ll << 40));
  CHECK(io[4] == 1 + 2 + 4);
  CHECK(io[5] == 8 + 100 * 31);
}

TEST_CASE("emulator: device printf reaches stdout", "[emulator]") {
  TempDir dir;
  const std::string path = dir.path() + "/stdout.txt";
  std::fflush(stdout);
  const int saved = ::dup(1);
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  ::dup2(::fileno(f), 1);
  int value = 42;
  run("say", Dim3{1}, Dim3{2}, 0, value);
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  std::fclose(f);
  REQUIRE(read_file(path) == "emulated printf: 42 21.00\nemulated printf: 42 21.00\n");
}

TEST_CASE("emulator: launches CUDA would refuse are user errors naming the kernel", "[emulator]") {
  const std::string too_big = launch_error("block_sum", Dim3{1}, Dim3{2048}, 0);
  CHECK(too_big.find("kernel 'block_sum'") != std::string::npos);
  CHECK(too_big.find("block (2048,1,1)") != std::string::npos);
  CHECK(launch_error("block_sum", Dim3{1}, Dim3{1, 1, 65}, 0).find("block (1,1,65)") !=
        std::string::npos);
  CHECK(launch_error("block_sum", Dim3{1}, Dim3{0}, 0).find("zero") != std::string::npos);
  CHECK(launch_error("block_sum", Dim3{1, 65536, 1}, Dim3{32}, 0).find("grid (1,65536,1)") !=
        std::string::npos);
  CHECK(launch_error("block_sum", Dim3{1}, Dim3{32}, 232449).find("232449 bytes") !=
        std::string::npos);
  // block_sum has __launch_bounds__(256): 512 threads are within CUDA's limits, not its own.
  CHECK(launch_error("block_sum", Dim3{1}, Dim3{512}, 0).find("__launch_bounds__ allows 256") !=
        std::string::npos);
  CHECK(launch_error("block_sum", Dim3{1}, Dim3{256}, 232448) == "<launched>");

  void* no_args[1] = {nullptr};
  CHECK_THROWS_AS(kernels().launch("no_such_kernel", Dim3{1}, Dim3{1}, 0, no_args), InternalError);
}

TEST_CASE("emulator: a barrier that can never complete is reported, not a hang", "[emulator]") {
  std::vector<int> out(32);
  int* po = out.data();
  try {
    run("stuck", Dim3{2}, Dim3{64}, 0, po);
    FAIL("launch succeeded");
  } catch (const InternalError& e) {
    const std::string message = e.what();
    CHECK(message.find("kernel 'stuck'") != std::string::npos);
    CHECK(message.find("deadlock") != std::string::npos);
  }
  // The module still works afterwards.
  std::vector<float> x(256, 1.0f), y(1);
  const float* px = x.data();
  float* py = y.data();
  int n = 256;
  run("block_sum", Dim3{1}, Dim3{256}, 0, px, py, n);
  REQUIRE(y[0] == 256.0f);
}

TEST_CASE("emulator: results do not depend on the number of host threads", "[emulator]") {
  auto results = [](std::optional<std::string> threads) {
    ScopedEnv env("FUSERC_EMU_THREADS", threads);
    std::vector<float> x(256 * 40 + 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 97);
    std::vector<float> sums(41);
    const float* px = x.data();
    float* ps = sums.data();
    int n = static_cast<int>(x.size());
    run("block_sum", Dim3{41}, Dim3{256}, 0, px, ps, n);
    std::vector<int> v(5000, 3);
    unsigned long long total = 0;
    std::vector<int> hist(16), extremes = {0, 1 << 30, 0}, partial(20);
    float fcount = 0;
    double dsum = 0;
    unsigned done = 0;
    long long final_sum = 0;
    const int* pv = v.data();
    int count = 5000;
    unsigned long long* pt = &total;
    int* ph = hist.data();
    int* pe = extremes.data();
    float* pf = &fcount;
    double* pd = &dsum;
    int* pp = partial.data();
    unsigned* pdone = &done;
    long long* pfs = &final_sum;
    run("atomics", Dim3{20}, Dim3{256}, 0, pv, count, pt, ph, pe, pf, pd, pp, pdone, pfs);
    sums.push_back(static_cast<float>(total));
    sums.push_back(static_cast<float>(final_sum));
    return sums;
  };
  const std::vector<float> one = results("1");
  CHECK(one == results(std::nullopt));
  CHECK(one == results("3"));
  CHECK(one[41] == 15000.0f);

  ScopedEnv bad("FUSERC_EMU_THREADS", "lots");
  std::vector<float> x(1), y(1);
  const float* px = x.data();
  float* py = y.data();
  int n = 1;
  CHECK_THROWS_AS(run("block_sum", Dim3{1}, Dim3{32}, 0, px, py, n), UserError);
}

TEST_CASE("emulator: modules are cached by content", "[emulator]") {
  TempDir cache;
  BuildOptions options;
  options.cache_dir = cache.path();
  const std::string source = std::string(kIncludes) + R"cuda(
extern "C" __global__ void add_one(int* __restrict__ x, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] += 1;
}
)cuda";
  const std::vector<KernelSignature> sig = {{"add_one", {"int* __restrict__", "int"}}};
  auto first = EmulatedModule::build(source, sig, options);
  CHECK(first->compiled());
  const std::string so = first->library_path();
  REQUIRE(so.rfind(cache.path() + "/emu/", 0) == 0);
  struct stat st1;
  REQUIRE(::stat(so.c_str(), &st1) == 0);
  // The prelude was written into the cache; no compiler input or temporary is left behind.
  int prelude_files = 0, others = 0;
  for (const auto& entry : fs::recursive_directory_iterator(cache.path() + "/emu")) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    if (name == "cuda_emulation.h" || name == "cuda_fp16.h" || name == "cuda_bf16.h") {
      ++prelude_files;
    } else if (entry.path().string() != so) {
      ++others;
    }
  }
  CHECK(prelude_files == 3);
  CHECK(others == 0);

  auto second = EmulatedModule::build(source, sig, options);
  CHECK_FALSE(second->compiled());
  CHECK(second->library_path() == so);
  struct stat st2;
  REQUIRE(::stat(so.c_str(), &st2) == 0);
  CHECK(st2.st_mtim.tv_sec == st1.st_mtim.tv_sec);
  CHECK(st2.st_mtim.tv_nsec == st1.st_mtim.tv_nsec);
  CHECK(st2.st_ino == st1.st_ino);

  // Both work (one shared object, loaded twice).
  std::vector<int> v = {1, 2, 3};
  int* pv = v.data();
  int n = 3;
  void* args[] = {&pv, &n};
  first->launch("add_one", Dim3{1}, Dim3{32}, 0, args);
  second->launch("add_one", Dim3{1}, Dim3{32}, 0, args);
  CHECK(v == std::vector<int>{3, 4, 5});

  // Another source is another module.
  auto third = EmulatedModule::build(source + "// changed\n", sig, options);
  CHECK(third->compiled());
  CHECK(third->library_path() != so);

  // A damaged cache entry is rebuilt (once no module of this process has it loaded).
  const std::string third_so = third->library_path();
  third.reset();
  write_file_atomically(third_so, "not a shared object");
  auto fourth = EmulatedModule::build(source + "// changed\n", sig, options);
  CHECK(fourth->compiled());
  fourth->launch("add_one", Dim3{1}, Dim3{32}, 0, args);
  CHECK(v == std::vector<int>{4, 5, 6});
}

TEST_CASE("emulator: build errors", "[emulator]") {
  TempDir cache;
  BuildOptions options;
  options.cache_dir = cache.path();
  const std::string broken =
      std::string(kIncludes) +
      "extern \"C\" __global__ void bad(int* x) { x[0] = undeclared_name; }\n";
  try {
    EmulatedModule::build(broken, {{"bad", {"int*"}}}, options);
    FAIL("compiled");
  } catch (const InternalError& e) {
    const std::string message = e.what();
    CHECK(message.find("undeclared_name") != std::string::npos);
    const size_t at = message.find("kept at ");
    REQUIRE(at != std::string::npos);
    const std::string kept = message.substr(at + 8, message.find(';', at) - at - 8);
    CHECK(read_file(kept).find("undeclared_name") != std::string::npos);
  }

  options.compiler = "/nonexistent/c++";
  try {
    EmulatedModule::build(broken, {{"bad", {"int*"}}}, options);
    FAIL("built without a compiler");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).rfind("cannot emulate: no host C++ compiler (set FUSERC_HOST_CXX)",
                                      0) == 0);
  }
  options.compiler = "";
  ScopedEnv path("PATH", "/nonexistent");
  ScopedEnv cxx("FUSERC_HOST_CXX", std::nullopt);
  try {
    EmulatedModule::build(broken, {{"bad", {"int*"}}}, options);
    FAIL("built without a compiler");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()) == "cannot emulate: no host C++ compiler (set FUSERC_HOST_CXX)");
  }
}

}  // namespace fuserc::emu
