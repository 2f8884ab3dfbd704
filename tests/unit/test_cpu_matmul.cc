// cpu_matmul (runtime/library/cpu_matmul.h) against a plain long double loop written here:
// dtypes, layouts, batches and broadcasts, bias and epilogues, sizes around the block sizes,
// non-finite operands, determinism across thread counts, and no write outside C.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "core/base/half.h"
#include "runtime/library/cpu_matmul.h"

namespace fuserc {
namespace {

using LD = long double;

// How an operand's rows and columns lie in memory.
enum class Layout { RowMajor, ColMajor, Padded, Strided, StridedColMajor };

// One operand (rows x cols per batch entry) with its strides and host bytes.
struct Operand {
  MatmulOperand desc;
  std::vector<unsigned char> bytes;

  int64_t offset(int64_t o, int64_t b, int64_t i, int64_t j) const {
    return o * desc.outer_stride + b * desc.batch_stride + i * desc.row_stride +
           j * desc.col_stride;
  }
  int64_t size() const { return static_cast<int64_t>(bytes.size() / dtype_size(desc.dtype)); }

  LD get(int64_t e) const {
    const unsigned char* p = bytes.data() + e * dtype_size(desc.dtype);
    uint16_t h;
    float f;
    double d;
    switch (desc.dtype) {
      case DType::F16: std::memcpy(&h, p, 2); return f16_bits_to_float(h);
      case DType::BF16: std::memcpy(&h, p, 2); return bf16_bits_to_float(h);
      case DType::F32: std::memcpy(&f, p, 4); return f;
      default: std::memcpy(&d, p, 8); return d;
    }
  }
  void set(int64_t e, double v) {
    unsigned char* p = bytes.data() + e * dtype_size(desc.dtype);
    uint16_t h;
    float f = static_cast<float>(v);
    switch (desc.dtype) {
      case DType::F16:
        h = float_to_f16_bits(f);
        std::memcpy(p, &h, 2);
        break;
      case DType::BF16:
        h = float_to_bf16_bits(f);
        std::memcpy(p, &h, 2);
        break;
      case DType::F32: std::memcpy(p, &f, 4); break;
      default: std::memcpy(p, &v, 8); break;
    }
  }
};

// Strides for `layout`; batch entries one after another with a gap (or 0: a broadcast), outer
// entries after the batch. Every element of the buffer, gaps included, holds a value.
Operand make_operand(DType dtype, int64_t rows, int64_t cols, Layout layout, int64_t batch,
                     int64_t outer, bool bcast_batch, bool bcast_outer) {
  Operand op;
  MatmulOperand& d = op.desc;
  d.dtype = dtype;
  switch (layout) {
    case Layout::RowMajor: d.row_stride = cols, d.col_stride = 1; break;
    case Layout::ColMajor: d.row_stride = 1, d.col_stride = rows; break;
    case Layout::Padded: d.row_stride = cols + 3, d.col_stride = 1; break;
    case Layout::Strided: d.row_stride = 2 * cols + 5, d.col_stride = 2; break;
    case Layout::StridedColMajor: d.row_stride = 3, d.col_stride = 3 * rows + 1; break;
  }
  const int64_t span =
      rows > 0 && cols > 0 ? (rows - 1) * d.row_stride + (cols - 1) * d.col_stride + 1 : 0;
  d.batch_stride = bcast_batch ? 0 : span + 2;
  d.outer_stride = bcast_outer ? 0 : (bcast_batch ? 1 : std::max<int64_t>(batch, 1)) * (span + 2);
  const int64_t total = std::max<int64_t>(outer, 1) * (d.outer_stride + span + 2);
  op.bytes.resize(total * dtype_size(dtype));
  return op;
}

void fill_random(Operand& op, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t e = 0; e < op.size(); ++e) op.set(e, u(rng));
}

constexpr unsigned char kSentinel = 0x5a;

struct Case {
  int64_t m = 1, n = 1, k = 1, batch = 1, outer = 1;
  DType a = DType::F32, b = DType::F32, c = DType::F32, bias = DType::F32;
  Layout la = Layout::RowMajor, lb = Layout::RowMajor, lc = Layout::RowMajor;
  bool a_bcast_batch = false, b_bcast_batch = false, b_bcast_outer = false;
  bool has_bias = false;
  MatmulEpilogue epilogue = MatmulEpilogue::None;
  int threads = 0;
};

struct Built {
  MatmulProblem p;
  Operand a, b, bias, c;
};

Built build(const Case& t, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  Built x;
  x.a = make_operand(t.a, t.m, t.k, t.la, t.batch, t.outer, t.a_bcast_batch, false);
  x.b = make_operand(t.b, t.k, t.n, t.lb, t.batch, t.outer, t.b_bcast_batch, t.b_bcast_outer);
  x.c = make_operand(t.c, t.m, t.n, t.lc, t.batch, t.outer, false, false);
  x.bias = make_operand(t.bias, 1, t.n, Layout::Strided, t.batch, t.outer, true, false);
  fill_random(x.a, rng);
  fill_random(x.b, rng);
  fill_random(x.bias, rng);
  std::fill(x.c.bytes.begin(), x.c.bytes.end(), kSentinel);
  MatmulProblem& p = x.p;
  p.m = t.m, p.n = t.n, p.k = t.k, p.batch = t.batch, p.outer = t.outer;
  p.a = x.a.desc, p.b = x.b.desc, p.c = x.c.desc, p.bias = x.bias.desc;
  p.has_bias = t.has_bias;
  p.epilogue = t.epilogue;
  return x;
}

void run(Built& x, int threads = 0) {
  cpu_matmul(x.p, x.a.bytes.data(), x.b.bytes.data(), x.p.has_bias ? x.bias.bytes.data() : nullptr,
             x.c.bytes.data(), threads);
}

LD epilogue_ref(MatmulEpilogue e, LD v) {
  switch (e) {
    case MatmulEpilogue::None: return v;
    case MatmulEpilogue::Relu: return v > 0 ? v : 0;
    case MatmulEpilogue::Gelu: return 0.5L * v * (1 + std::erf(v / std::sqrt(2.0L)));
    case MatmulEpilogue::GeluTanh:
      return 0.5L * v *
             (1 +
              std::tanh(std::sqrt(2 / 3.14159265358979323846264L) * (v + 0.044715L * v * v * v)));
  }
  return v;
}

// `v` rounded to `dtype` (through double and float, as the runtime rounds), and one unit in
// the last place of that dtype at v.
LD round_to(DType dtype, LD v) {
  Operand one;
  one.desc.dtype = dtype;
  one.bytes.resize(dtype_size(dtype));
  one.set(0, static_cast<double>(v));
  return one.get(0);
}
LD ulp(DType dtype, LD v) {
  const int mant = dtype == DType::F16    ? 10
                   : dtype == DType::BF16 ? 7
                   : dtype == DType::F32  ? 23
                                          : 52;
  const int emin = dtype == DType::F16 ? -14 : dtype == DType::F64 ? -1022 : -126;
  const int e = v == 0 ? emin : std::max(emin, std::ilogb(static_cast<double>(v)));
  return std::ldexp(1.0L, e - mant);
}

// Compares C with the reference; "" when every element is within tolerance and no byte outside
// C changed, else the first mismatch.
std::string check(const Built& x) {
  const MatmulProblem& p = x.p;
  const bool f64 = p.a.dtype == DType::F64 || p.b.dtype == DType::F64;
  const LD acc_tol = f64 ? 1e-12L : 1e-5L;
  std::vector<bool> in_c(x.c.size(), false);
  std::ostringstream err;
  for (int64_t o = 0; o < p.outer; ++o)
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t i = 0; i < p.m; ++i)
        for (int64_t j = 0; j < p.n; ++j) {
          LD sum = 0, scale = 0;
          for (int64_t l = 0; l < p.k; ++l) {
            const LD t = x.a.get(x.a.offset(o, b, i, l)) * x.b.get(x.b.offset(o, b, l, j));
            sum += t;
            scale += std::fabs(t);
          }
          if (p.has_bias) {
            const LD v = x.bias.get(x.bias.offset(o, b, 0, j));
            sum += v;
            scale += std::fabs(v);
          }
          const LD want = round_to(p.c.dtype, epilogue_ref(p.epilogue, sum));
          const int64_t e = x.c.offset(o, b, i, j);
          in_c[e] = true;
          const LD got = x.c.get(e);
          const bool ok = std::isnan(want) ? std::isnan(got)
                          : !std::isfinite(want)
                              ? got == want
                              : std::fabs(got - want) <= acc_tol * scale + ulp(p.c.dtype, want);
          if (!ok && err.tellp() == 0)
            err << "C[" << o << "][" << b << "][" << i << "][" << j << "] = " << double(got)
                << ", want " << double(want) << " (scale " << double(scale) << ")";
        }
  const size_t es = dtype_size(p.c.dtype);
  for (int64_t e = 0; e < x.c.size() && err.tellp() == 0; ++e)
    for (size_t q = 0; q < es && !in_c[e]; ++q)
      if (x.c.bytes[e * es + q] != kSentinel) err << "element " << e << " outside C written";
  return err.str();
}

std::string run_and_check(const Case& t) {
  Built x = build(t);
  run(x, t.threads);
  return check(x);
}

const DType kDTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

}  // namespace

TEST_CASE("cpu_matmul: every dtype of A, B and C", "[cpu_matmul]") {
  for (DType ab : kDTypes)
    for (DType c : kDTypes) {
      Case t;
      t.m = 33, t.n = 65, t.k = 129, t.a = t.b = ab, t.c = c;
      INFO(dtype_name(ab) << " x " << dtype_name(ab) << " -> " << dtype_name(c));
      CHECK(run_and_check(t) == "");
    }
  // Mixed operands: f32 accumulation, or f64 where either is f64.
  const DType mixed[][2] = {{DType::BF16, DType::F32},
                            {DType::F16, DType::BF16},
                            {DType::F64, DType::F32},
                            {DType::F32, DType::F64}};
  for (const auto& ab : mixed) {
    Case t;
    t.m = 7, t.n = 31, t.k = 65, t.a = ab[0], t.b = ab[1], t.c = DType::F32;
    INFO(dtype_name(ab[0]) << " x " << dtype_name(ab[1]));
    CHECK(run_and_check(t) == "");
  }
}

TEST_CASE("cpu_matmul: every f16 and bf16 bit pattern reads as half.h decodes it", "[cpu_matmul]") {
  // A column of every pattern times 1: C holds the operand's value (the sum starts at +0).
  for (DType dtype : {DType::F16, DType::BF16}) {
    std::vector<uint16_t> a(1 << 16);
    for (uint32_t h = 0; h < a.size(); ++h) a[h] = static_cast<uint16_t>(h);
    const float one = 1.0f;
    std::vector<float> c(a.size());
    MatmulProblem p;
    p.m = static_cast<int64_t>(a.size()), p.n = 1, p.k = 1;
    p.a = {dtype, 1, 1, 0, 0};
    p.b = {DType::F32, 1, 1, 0, 0};
    p.c = {DType::F32, 1, 1, 0, 0};
    cpu_matmul(p, a.data(), &one, nullptr, c.data());
    int64_t wrong = 0;
    for (uint32_t h = 0; h < a.size(); ++h) {
      const float want = dtype == DType::F16 ? f16_bits_to_float(a[h]) : bf16_bits_to_float(a[h]);
      if (std::isnan(want) ? !std::isnan(c[h]) : c[h] != want) ++wrong;
    }
    INFO(dtype_name(dtype));
    CHECK(wrong == 0);
  }
}

TEST_CASE("cpu_matmul: transposed and strided operands", "[cpu_matmul]") {
  const Layout layouts[] = {Layout::RowMajor, Layout::ColMajor, Layout::Padded, Layout::Strided,
                            Layout::StridedColMajor};
  for (Layout la : layouts)
    for (Layout lb : layouts) {
      Case t;
      t.m = 37, t.n = 41, t.k = 300, t.la = la, t.lb = lb;  // k crosses a K block
      t.lc = la == Layout::RowMajor ? Layout::Padded : lb;
      t.a = DType::BF16;
      INFO("layouts " << int(la) << " " << int(lb));
      CHECK(run_and_check(t) == "");
    }
}

TEST_CASE("cpu_matmul: batches, outer entries and broadcast operands", "[cpu_matmul]") {
  for (int variant = 0; variant < 4; ++variant) {
    Case t;
    t.m = 19, t.n = 23, t.k = 17, t.batch = 3, t.outer = 2;
    t.a_bcast_batch = variant == 1;
    t.b_bcast_batch = variant == 2 || variant == 3;
    t.b_bcast_outer = variant == 3;
    t.has_bias = variant >= 2;
    t.lb = Layout::ColMajor;
    INFO("variant " << variant);
    CHECK(run_and_check(t) == "");
  }
}

TEST_CASE("cpu_matmul: bias with each epilogue", "[cpu_matmul]") {
  const MatmulEpilogue epilogues[] = {MatmulEpilogue::None, MatmulEpilogue::Relu,
                                      MatmulEpilogue::Gelu, MatmulEpilogue::GeluTanh};
  for (MatmulEpilogue e : epilogues)
    for (DType dtype : kDTypes)
      for (bool bias : {false, true}) {
        Case t;
        t.m = 21, t.n = 35, t.k = 9, t.a = t.b = t.c = t.bias = dtype;
        t.has_bias = bias, t.epilogue = e;
        INFO("epilogue " << int(e) << " " << dtype_name(dtype) << " bias " << bias);
        CHECK(run_and_check(t) == "");
      }
  // k = 0: the bias (or 0) through the epilogue.
  for (MatmulEpilogue e : epilogues) {
    Case t;
    t.m = 5, t.n = 9, t.k = 0, t.has_bias = true, t.epilogue = e, t.c = DType::BF16;
    CHECK(run_and_check(t) == "");
  }
}

TEST_CASE("cpu_matmul: sizes around the block sizes", "[cpu_matmul]") {
  for (int64_t m : {0, 1, 7, 33, 129})
    for (int64_t n : {0, 1, 7, 31, 65, 513})
      for (int64_t k : {0, 1, 7, 33, 257}) {
        if (m * n * k > 129 * 65 * 257) continue;  // the reference's time
        Case t;
        t.m = m, t.n = n, t.k = k, t.has_bias = (m + n + k) % 2 == 0;
        INFO("m " << m << " n " << n << " k " << k);
        CHECK(run_and_check(t) == "");
      }
  // Vector-like products, and nothing to do for an empty batch or outer count.
  const int64_t vectors[][3] = {{1, 700, 300}, {600, 1, 300}, {1, 1, 1000}};
  for (const auto& mnk : vectors) {
    Case t;
    t.m = mnk[0], t.n = mnk[1], t.k = mnk[2], t.lb = Layout::ColMajor;
    CHECK(run_and_check(t) == "");
  }
  for (int which = 0; which < 2; ++which) {
    Case t;
    t.m = 8, t.n = 8, t.k = 8, t.batch = which == 0 ? 0 : 2, t.outer = which == 1 ? 0 : 2;
    CHECK(run_and_check(t) == "");
  }
}

TEST_CASE("cpu_matmul: NaN and infinity propagate", "[cpu_matmul]") {
  for (DType dtype : {DType::BF16, DType::F32, DType::F64}) {
    Case t;
    t.m = 9, t.n = 17, t.k = 11, t.a = t.b = t.c = dtype;
    Built x = build(t);
    x.a.set(x.a.offset(0, 0, 1, 2), INFINITY);   // row 1: +-inf (or NaN where B is 0)
    x.a.set(x.a.offset(0, 0, 4, 3), NAN);        // row 4: NaN
    x.b.set(x.b.offset(0, 0, 5, 6), -INFINITY);  // column 6: -+inf, NaN in row 1 if signs meet
    x.b.set(x.b.offset(0, 0, 7, 8), 0.0);
    x.a.set(x.a.offset(0, 0, 6, 7), INFINITY);  // C[6][8]: inf * 0 = NaN
    run(x);
    INFO(dtype_name(dtype));
    CHECK(check(x) == "");
    CHECK(std::isnan(x.c.get(x.c.offset(0, 0, 4, 0))));
    CHECK(std::isnan(x.c.get(x.c.offset(0, 0, 6, 8))));
    CHECK(std::isinf(x.c.get(x.c.offset(0, 0, 1, 0))));
    CHECK(std::isinf(x.c.get(x.c.offset(0, 0, 0, 6))));
  }
}

TEST_CASE("cpu_matmul: the same bits for every thread count and run", "[cpu_matmul]") {
  for (DType dtype : {DType::F32, DType::BF16, DType::F64}) {
    Case t;
    t.m = 150, t.n = 600, t.k = 300, t.batch = 2,  // 8 tiles t.a = t.b = t.c = dtype;
        t.has_bias = true, t.epilogue = MatmulEpilogue::Gelu, t.la = Layout::ColMajor;
    Built first = build(t);
    run(first, 1);
    for (int threads : {2, 3, 1, 0, 64}) {
      Built x = build(t);
      run(x, threads);
      INFO(dtype_name(dtype) << " threads " << threads);
      CHECK(x.c.bytes == first.c.bytes);
    }
    if (dtype == DType::BF16) CHECK(check(first) == "");
  }
}

}  // namespace fuserc
