// A blocked, multithreaded matrix product on the host (GotoBLAS's loop nest in portable C++):
//   - packing: a block of A (MC x KC) and of B (KC x NC), read in their dtype and strides,
//     converted to the accumulation type into contiguous panels of MR rows / NR columns;
//   - the micro-kernel: one MR x NR tile of accumulators over a K block, written so that the
//     compiler vectorizes it (fixed trip counts, restrict pointers, no intrinsics);
//   - the loop nest: the tiles of C (outer, batch, M block, N block) shared out to threads;
//     each tile keeps its sums in a buffer of the accumulation type across the K blocks;
//   - the epilogue and store: bias, epilogue, one rounding to C's dtype.
// Each element of C is summed in one accumulator in the order k = 0, 1, ..., k - 1, whatever
// the blocking and the number of threads: the same bits every run (and the plain loop's bits).
#include "runtime/library/cpu_matmul.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/half.h"

namespace fuserc {
namespace {

// Block sizes, in elements. MC is a multiple of MR and NC of NR (the buffers are padded to
// whole panels). The micro-kernel's accumulators fill 8 of the 16 SSE registers of x86-64;
// a B micro-panel (KC x NR) stays in L1, a block of A (MC x KC) and of B (KC x NC) in L2.
template <class Acc>
struct Blocking;
template <>
struct Blocking<float> {
  static constexpr int MR = 4, NR = 8;
};
template <>
struct Blocking<double> {
  static constexpr int MR = 4, NR = 4;
};
constexpr int64_t kMC = 128, kNC = 512, kKC = 256;
// Below this many multiply-adds one thread does it all.
constexpr double kMinParallelWork = 1 << 20;

int64_t round_up(int64_t x, int64_t to) {
  return (x + to - 1) / to * to;
}

// ---- Element access (memcpy: host buffers need not be aligned to their element) ----

struct F16Bits {
  uint16_t bits;
};
struct BF16Bits {
  uint16_t bits;
};

template <class T>
T read(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
float float_of_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
// An element of type T at p, in Acc. The 16-bit formats are decoded inline here (packing
// converts every element of A and B several times): bf16 and normal f16 by moving their bits
// into place, exactly as core/base/half.h does; other f16 values (zero, subnormal, infinity,
// NaN) through half.h.
template <class Acc, class T>
Acc to_acc(const char* p) {
  if constexpr (std::is_same_v<T, F16Bits>) {
    const uint32_t h = read<uint16_t>(p), exponent = (h >> 10) & 0x1fu;
    if (exponent == 0 || exponent == 0x1fu) return static_cast<Acc>(f16_bits_to_float(h));
    const uint32_t bits = (h & 0x8000u) << 16 | (exponent + 112u) << 23 | (h & 0x3ffu) << 13;
    return static_cast<Acc>(float_of_bits(bits));
  } else if constexpr (std::is_same_v<T, BF16Bits>) {
    return static_cast<Acc>(float_of_bits(uint32_t{read<uint16_t>(p)} << 16));
  } else {
    return static_cast<Acc>(read<T>(p));
  }
}

int64_t elem_size(DType dtype) {
  return static_cast<int64_t>(dtype_size(dtype));
}

template <class Acc>
Acc load(DType dtype, const char* p) {
  switch (dtype) {
    case DType::F16: return to_acc<Acc, F16Bits>(p);
    case DType::BF16: return to_acc<Acc, BF16Bits>(p);
    case DType::F32: return to_acc<Acc, float>(p);
    case DType::F64: return to_acc<Acc, double>(p);
    default: return 0;
  }
}

template <class Acc>
void store(DType dtype, char* p, Acc v) {
  switch (dtype) {
    case DType::F16: {
      uint16_t h = float_to_f16_bits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::BF16: {
      uint16_t h = float_to_bf16_bits(static_cast<float>(v));
      std::memcpy(p, &h, 2);
      break;
    }
    case DType::F32: {
      float f = static_cast<float>(v);
      std::memcpy(p, &f, 4);
      break;
    }
    case DType::F64: {
      double d = static_cast<double>(v);
      std::memcpy(p, &d, 8);
      break;
    }
    default: break;
  }
}

// ---- Packing ----

// One panel: dst[l * W + x] = src[l * s_k + x * s_x] (strides in bytes) for l < kc, x < w,
// converted to Acc; columns w..W-1 are zero. Walks the source along its smaller stride.
template <class Acc, class T>
void pack_panel_typed(const char* src, int64_t s_k, int64_t s_x, int64_t kc, int w, int W,
                      Acc* __restrict dst) {
  if (std::llabs(s_x) <= std::llabs(s_k)) {
    for (int64_t l = 0; l < kc; ++l) {
      const char* row = src + l * s_k;
      for (int x = 0; x < w; ++x) dst[l * W + x] = to_acc<Acc, T>(row + x * s_x);
      for (int x = w; x < W; ++x) dst[l * W + x] = 0;
    }
  } else {
    for (int x = 0; x < w; ++x) {
      const char* col = src + x * s_x;
      for (int64_t l = 0; l < kc; ++l) dst[l * W + x] = to_acc<Acc, T>(col + l * s_k);
    }
    for (int64_t l = 0; l < kc; ++l)
      for (int x = w; x < W; ++x) dst[l * W + x] = 0;
  }
}

// Packs `count` rows (A: s_x = the row stride) or columns (B: the column stride) of an
// operand, kc long, into panels of W, one after another (panel p at dst + p * W * kc).
template <class Acc>
void pack(DType dtype, const char* src, int64_t s_k, int64_t s_x, int64_t kc, int64_t count, int W,
          Acc* dst) {
  const int64_t es = elem_size(dtype);
  s_k *= es;
  s_x *= es;
  for (int64_t x0 = 0; x0 < count; x0 += W) {
    const char* s = src + x0 * s_x;
    const int w = static_cast<int>(std::min<int64_t>(W, count - x0));
    Acc* d = dst + x0 * kc;
    switch (dtype) {
      case DType::F16: pack_panel_typed<Acc, F16Bits>(s, s_k, s_x, kc, w, W, d); break;
      case DType::BF16: pack_panel_typed<Acc, BF16Bits>(s, s_k, s_x, kc, w, W, d); break;
      case DType::F32: pack_panel_typed<Acc, float>(s, s_k, s_x, kc, w, W, d); break;
      case DType::F64: pack_panel_typed<Acc, double>(s, s_k, s_x, kc, w, W, d); break;
      default: break;
    }
  }
}

// ---- The micro-kernel ----

// c[i * ldc + j] += sum over l < kc of a[l * MR + i] * b[l * NR + j], for an MR x NR tile,
// the terms added one at a time in the order of l. The shape (a flat tile of accumulators, the
// row of B copied, A's element broadcast, j innermost) is one g++ and clang both keep in
// vector registers.
template <class Acc>
void micro_kernel(int64_t kc, const Acc* __restrict a, const Acc* __restrict b, Acc* __restrict c,
                  int64_t ldc) {
  constexpr int MR = Blocking<Acc>::MR, NR = Blocking<Acc>::NR;
  Acc acc[MR * NR];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) acc[i * NR + j] = c[i * ldc + j];
  for (int64_t l = 0; l < kc; ++l) {
    Acc bl[NR];
    for (int j = 0; j < NR; ++j) bl[j] = b[l * NR + j];
    for (int i = 0; i < MR; ++i) {
      const Acc ai = a[l * MR + i];
      for (int j = 0; j < NR; ++j) acc[i * NR + j] += ai * bl[j];
    }
  }
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) c[i * ldc + j] = acc[i * NR + j];
}

// ---- The epilogue and store ----

template <class Acc>
Acc epilogue(MatmulEpilogue e, Acc x) {
  switch (e) {
    case MatmulEpilogue::None: return x;
    case MatmulEpilogue::Relu: return x > 0 ? x : Acc(0);
    case MatmulEpilogue::Gelu: return Acc(0.5) * x * (Acc(1) + std::erf(x / std::sqrt(Acc(2))));
    case MatmulEpilogue::GeluTanh: {
      const Acc c = std::sqrt(Acc(2) / Acc(3.14159265358979323846));
      return Acc(0.5) * x * (Acc(1) + std::tanh(c * (x + Acc(0.044715) * x * x * x)));
    }
  }
  return x;
}

// ---- The loop nest ----

// One thread's packed panels and sums.
template <class Acc>
struct Workspace {
  std::vector<Acc> a, b, sums;
};

template <class Acc>
class Runner {
 public:
  Runner(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c)
      : p_(p),
        a_(static_cast<const char*>(a)),
        b_(static_cast<const char*>(b)),
        bias_(static_cast<const char*>(bias)),
        c_(static_cast<char*>(c)),
        mc_(round_up(std::min(kMC, p.m), MR)),
        nc_(round_up(std::min(kNC, p.n), NR)),
        kc_(std::max<int64_t>(1, std::min(kKC, p.k))),
        m_blocks_((p.m + kMC - 1) / kMC),
        n_blocks_((p.n + kNC - 1) / kNC) {}

  int64_t tiles() const { return p_.outer * p_.batch * m_blocks_ * n_blocks_; }

  void run(int threads) {
    const int64_t count = tiles();
    std::vector<Workspace<Acc>> ws(threads);
    for (auto& w : ws) {
      w.a.resize(mc_ * kc_);
      w.b.resize(kc_ * nc_);
      w.sums.resize(mc_ * nc_);
    }
    std::atomic<int64_t> next{0};
    auto worker = [&](Workspace<Acc>& w) {
      for (int64_t t = next++; t < count; t = next++) tile(t, w);
    };
    std::vector<std::thread> pool;
    try {
      for (int i = 1; i < threads; ++i) pool.emplace_back(worker, std::ref(ws[i]));
    } catch (const std::system_error&) {
      // No more threads: those started and this one take every tile.
    }
    worker(ws[0]);
    for (auto& th : pool) th.join();
  }

 private:
  static constexpr int MR = Blocking<Acc>::MR, NR = Blocking<Acc>::NR;

  // Tile t: entry (o, bt), rows [i0, i0 + MC), columns [j0, j0 + NC) of C.
  void tile(int64_t t, Workspace<Acc>& w) const {
    const int64_t jb = t % n_blocks_, ib = t / n_blocks_ % m_blocks_;
    const int64_t entry = t / n_blocks_ / m_blocks_;
    const int64_t bt = entry % p_.batch, o = entry / p_.batch;
    const int64_t i0 = ib * kMC, j0 = jb * kNC;
    const int64_t mc = std::min(kMC, p_.m - i0), nc = std::min(kNC, p_.n - j0);
    const int64_t ldc = round_up(nc, NR), m_pad = round_up(mc, MR);
    const MatmulOperand &A = p_.a, &B = p_.b;
    const char* a =
        a_ + (o * A.outer_stride + bt * A.batch_stride + i0 * A.row_stride) * elem_size(A.dtype);
    const char* b =
        b_ + (o * B.outer_stride + bt * B.batch_stride + j0 * B.col_stride) * elem_size(B.dtype);
    Acc* sums = w.sums.data();
    std::fill(sums, sums + m_pad * ldc, Acc(0));
    for (int64_t l0 = 0; l0 < p_.k; l0 += kKC) {
      const int64_t kc = std::min(kKC, p_.k - l0);
      pack(A.dtype, a + l0 * A.col_stride * elem_size(A.dtype), A.col_stride, A.row_stride, kc, mc,
           MR, w.a.data());
      pack(B.dtype, b + l0 * B.row_stride * elem_size(B.dtype), B.row_stride, B.col_stride, kc, nc,
           NR, w.b.data());
      for (int64_t j = 0; j < nc; j += NR)
        for (int64_t i = 0; i < mc; i += MR)
          micro_kernel<Acc>(kc, w.a.data() + i * kc, w.b.data() + j * kc, sums + i * ldc + j, ldc);
    }
    store_tile(o, bt, i0, j0, mc, nc, sums, ldc);
  }

  // Bias, epilogue and rounding to C's dtype for the mc x nc sums of a tile.
  void store_tile(int64_t o, int64_t bt, int64_t i0, int64_t j0, int64_t mc, int64_t nc,
                  const Acc* sums, int64_t ldc) const {
    const MatmulOperand &C = p_.c, &V = p_.bias;
    const int64_t ces = elem_size(C.dtype), ves = elem_size(V.dtype);
    const char* bias =
        p_.has_bias ? bias_ + (o * V.outer_stride + bt * V.batch_stride + j0 * V.col_stride) * ves
                    : nullptr;
    for (int64_t i = 0; i < mc; ++i) {
      char* row = c_ + (o * C.outer_stride + bt * C.batch_stride + (i0 + i) * C.row_stride +
                        j0 * C.col_stride) *
                           ces;
      for (int64_t j = 0; j < nc; ++j) {
        Acc v = sums[i * ldc + j];
        if (bias) v += load<Acc>(V.dtype, bias + j * V.col_stride * ves);
        store<Acc>(C.dtype, row + j * C.col_stride * ces, epilogue(p_.epilogue, v));
      }
    }
  }

  const MatmulProblem& p_;
  const char* a_;
  const char* b_;
  const char* bias_;
  char* c_;
  int64_t mc_, nc_, kc_;  // the buffers' sizes (padded to whole panels)
  int64_t m_blocks_, n_blocks_;
};

template <class Acc>
void run(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c,
         int threads) {
  Runner<Acc> runner(p, a, b, bias, c);
  const int64_t tiles = runner.tiles();
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const double work =
      static_cast<double>(p.m) * p.n * std::max<int64_t>(p.k, 1) * p.batch * p.outer;
  if (work < kMinParallelWork) threads = 1;
  threads = static_cast<int>(std::min<int64_t>(threads, tiles));
  runner.run(threads);
}

}  // namespace

void cpu_matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c,
                int threads) {
  for (DType t : {p.a.dtype, p.b.dtype, p.c.dtype})
    FUSERC_CHECK(is_float(t), std::string("cpu_matmul: operand of dtype ") + dtype_name(t));
  FUSERC_CHECK(!p.has_bias || is_float(p.bias.dtype), "cpu_matmul: bias of a non-float dtype");
  if (p.m <= 0 || p.n <= 0 || p.batch <= 0 || p.outer <= 0) return;
  if (p.a.dtype == DType::F64 || p.b.dtype == DType::F64)
    run<double>(p, a, b, bias, c, threads);
  else
    run<float>(p, a, b, bias, c, threads);
}

}  // namespace fuserc
