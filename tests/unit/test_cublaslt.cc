// Matrix products on a GPU through cuBLASLt, without a GPU: MatmulRunner over the fake library
// (tests/support/fake_cublaslt.h), whose cublasLtMatmul rebuilds the product from the
// descriptor and layouts it is given, in the library's column-major terms, and runs cpu_matmul
// on the fake driver's memory. The results equal cpu_matmul's on the problem only when the
// runner maps the problem onto the library correctly. Also the refusals, the handle per
// context, capture into a graph, and the loader's message when the library is missing.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "core/base/half.h"
#include "fake_cublaslt.h"
#include "fake_driver.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/cublaslt_api.h"
#include "runtime/cuda/cublaslt_matmul.h"
#include "runtime/cuda/cuda_error.h"
#include "runtime/library/cpu_matmul.h"

using namespace fuserc;
using namespace fuserc::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::EndsWith;
using Catch::Matchers::StartsWith;
using cuda::CudaError;
using cuda::CUdeviceptr;
using cuda::Failure;
using cuda::MatmulRunner;

namespace {

// The fake driver and library, and the device's primary context made current.
struct Env {
  FakeDriver fd;
  FakeCublasLt lt{fd};
  cuda::Context ctx = cuda::Context::current_or_primary();
};

void row_major(MatmulOperand& x, int64_t cols, int64_t pad = 0) {
  x.row_stride = cols + pad;
  x.col_stride = 1;
}
void col_major(MatmulOperand& x, int64_t rows, int64_t pad = 0) {
  x.row_stride = 1;
  x.col_stride = rows + pad;
}

// Every operand row-major and packed, batch entries one after another, dtype `t` throughout.
MatmulProblem make_problem(int64_t m, int64_t n, int64_t k, DType t, int64_t batch = 1) {
  MatmulProblem p;
  p.m = m, p.n = n, p.k = k, p.batch = batch;
  p.a.dtype = p.b.dtype = p.c.dtype = p.bias.dtype = t;
  row_major(p.a, k);
  row_major(p.b, n);
  row_major(p.c, n);
  p.a.batch_stride = m * k;
  p.b.batch_stride = k * n;
  p.c.batch_stride = m * n;
  p.bias.col_stride = 1;
  return p;
}

// Elements an operand's buffer spans (strides non-negative).
int64_t span(const MatmulOperand& x, int64_t rows, int64_t cols, const MatmulProblem& p) {
  return (p.outer - 1) * x.outer_stride + (p.batch - 1) * x.batch_stride +
         (rows - 1) * x.row_stride + (cols - 1) * x.col_stride + 1;
}

std::vector<uint8_t> random_bytes(DType t, int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<uint8_t> out(static_cast<size_t>(count) * dtype_size(t));
  for (int64_t i = 0; i < count; ++i) {
    float v = u(rng);
    uint8_t* p = out.data() + i * dtype_size(t);
    if (t == DType::F16) {
      uint16_t h = float_to_f16_bits(v);
      std::memcpy(p, &h, 2);
    } else if (t == DType::BF16) {
      uint16_t h = float_to_bf16_bits(v);
      std::memcpy(p, &h, 2);
    } else if (t == DType::F64) {
      double d = v;
      std::memcpy(p, &d, 8);
    } else {
      std::memcpy(p, &v, 4);
    }
  }
  return out;
}

double element(DType t, const std::vector<uint8_t>& bytes, size_t i) {
  const uint8_t* p = bytes.data() + i * dtype_size(t);
  uint16_t h;
  float f;
  double d;
  switch (t) {
    case DType::F16: std::memcpy(&h, p, 2); return f16_bits_to_float(h);
    case DType::BF16: std::memcpy(&h, p, 2); return bf16_bits_to_float(h);
    case DType::F64: std::memcpy(&d, p, 8); return d;
    default: std::memcpy(&f, p, 4); return f;
  }
}

struct HostOperands {
  std::vector<uint8_t> a, b, bias, c;  // c: what C holds before the product
};

HostOperands random_operands(const MatmulProblem& p, uint32_t seed) {
  HostOperands h;
  h.a = random_bytes(p.a.dtype, span(p.a, p.m, p.k, p), seed);
  h.b = random_bytes(p.b.dtype, span(p.b, p.k, p.n, p), seed + 1);
  h.bias = random_bytes(p.bias.dtype, p.has_bias ? span(p.bias, 1, p.n, p) : 1, seed + 2);
  h.c = random_bytes(p.c.dtype, span(p.c, p.m, p.n, p), seed + 3);
  return h;
}

CUdeviceptr to_device(const std::vector<uint8_t>& h) {
  CUdeviceptr p = 0;
  REQUIRE(cuda::driver().cuMemAlloc(&p, h.size()) == cuda::CUDA_SUCCESS);
  REQUIRE(cuda::driver().cuMemcpyHtoD(p, h.data(), h.size()) == cuda::CUDA_SUCCESS);
  return p;
}

std::vector<uint8_t> from_device(CUdeviceptr p, size_t bytes) {
  std::vector<uint8_t> h(bytes);
  REQUIRE(cuda::driver().cuMemcpyDtoH(h.data(), p, bytes) == cuda::CUDA_SUCCESS);
  return h;
}

void* ptr(CUdeviceptr p) {
  return reinterpret_cast<void*>(p);
}

// cpu_matmul's C for `p` from `h`; without the epilogue when the library leaves it to the
// caller (what the runner's C holds then).
std::vector<uint8_t> reference(MatmulProblem p, const HostOperands& h, bool epilogue_in_library) {
  if (!epilogue_in_library) p.epilogue = MatmulEpilogue::None;
  std::vector<uint8_t> c = h.c;
  cpu_matmul(p, h.a.data(), h.b.data(), h.bias.data(), c.data(), 1);
  return c;
}

// C through MatmulRunner on the fake, and cpu_matmul's, from the same inputs and starting C.
struct Outcome {
  std::vector<uint8_t> got, want;
  DType dtype;
  bool epilogue_in_library;
};

Outcome run_both(const MatmulProblem& p, size_t grant = 0, uint32_t seed = 7) {
  HostOperands h = random_operands(p, seed);
  CUdeviceptr a = to_device(h.a), b = to_device(h.b), bias = to_device(h.bias), c = to_device(h.c);
  MatmulRunner r(p, grant);
  CUdeviceptr ws = 0;
  if (r.workspace_bytes() > 0) REQUIRE(cuda::driver().cuMemAlloc(&ws, r.workspace_bytes()) == 0);
  r.run(ptr(a), ptr(b), ptr(bias), ptr(c), ptr(ws), nullptr);
  Outcome o{from_device(c, h.c.size()), reference(p, h, r.epilogue_in_library()), p.c.dtype,
            r.epilogue_in_library()};
  for (CUdeviceptr x : {a, b, bias, c, ws})
    if (x) cuda::driver().cuMemFree(x);
  return o;
}

double tolerance(DType t) {
  switch (t) {
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    case DType::F64: return 1e-12;
    default: return 1e-5;
  }
}

void check_same(const Outcome& o) {
  REQUIRE(o.got.size() == o.want.size());
  size_t n = o.got.size() / dtype_size(o.dtype), bad = 0;
  for (size_t i = 0; i < n; ++i) {
    double g = element(o.dtype, o.got, i), w = element(o.dtype, o.want, i);
    if (!(std::abs(g - w) <= tolerance(o.dtype) * (1 + std::abs(w))) && bad++ == 0) {
      INFO("first difference at element " << i);
      CHECK(g == w);
    }
  }
  CHECK(bad == 0);
}

std::string describe_for_test(const MatmulProblem& p) {
  return std::string(dtype_name(p.a.dtype)) + " x " + dtype_name(p.b.dtype) + " -> " +
         dtype_name(p.c.dtype) + ", epilogue " + std::to_string(static_cast<int>(p.epilogue)) +
         (p.has_bias ? std::string(", bias ") + dtype_name(p.bias.dtype) : "");
}

std::string error_of(const std::function<void()>& f, Failure kind) {
  try {
    f();
  } catch (const CudaError& e) {
    CHECK(e.kind() == kind);
    return e.what();
  }
  FAIL("no CudaError");
  return "";
}

}  // namespace

TEST_CASE("cuBLASLt products of row- and column-major operands equal cpu_matmul's", "[cublaslt]") {
  Env env;
  const int64_t m = 5, n = 7, k = 3;
  for (bool a_col : {false, true})
    for (bool b_col : {false, true})
      for (int64_t pad : {0, 3}) {
        INFO("A " << (a_col ? "column" : "row") << "-major, B " << (b_col ? "column" : "row")
                  << "-major, padding " << pad);
        MatmulProblem p = make_problem(m, n, k, DType::F32);
        if (a_col)
          col_major(p.a, m, pad);
        else
          row_major(p.a, k, pad);
        if (b_col)
          col_major(p.b, k, pad);
        else
          row_major(p.b, n, pad);
        row_major(p.c, n, pad);
        check_same(run_both(p));
        // C^T = B^T A^T: the library's A is B, its B is A, its D is C^T (n x m).
        const FakeMatmulCall& call = env.lt.matmuls.back();
        CHECK(call.m == n);
        CHECK(call.n == m);
        CHECK(call.k == k);
        CHECK(call.transa == (b_col ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N));
        CHECK(call.transb == (a_col ? cuda::CUBLAS_OP_T : cuda::CUBLAS_OP_N));
        CHECK(call.lda == (b_col ? k : n) + pad);
        CHECK(call.ldb == (a_col ? m : k) + pad);
        CHECK(call.ldd == n + pad);
      }
}

TEST_CASE("cuBLASLt computes a column-major C as it is, and refuses it a bias", "[cublaslt]") {
  Env env;
  for (bool a_col : {false, true}) {
    MatmulProblem p = make_problem(6, 4, 5, DType::F32);
    col_major(p.c, 6, 2);
    if (a_col) col_major(p.a, 6);
    check_same(run_both(p));
    const FakeMatmulCall& call = env.lt.matmuls.back();
    CHECK(call.m == 6);  // D is C
    CHECK(call.n == 4);
    CHECK(call.ldd == 8);
    CHECK(call.transa == (a_col ? cuda::CUBLAS_OP_N : cuda::CUBLAS_OP_T));
  }
  MatmulProblem p = make_problem(6, 4, 5, DType::F32);
  col_major(p.c, 6);
  p.has_bias = true;
  CHECK_THAT(error_of([&] { MatmulRunner r(p, 0); }, Failure::InvalidArgument),
             Contains("cuBLASLt cannot add the bias to a column-major C (6 x 4)"));
}

TEST_CASE("cuBLASLt batches: strided, broadcast, and outer calls", "[cublaslt]") {
  Env env;
  const int64_t m = 4, n = 6, k = 5;
  SECTION("a strided batch with a broadcast operand") {
    MatmulProblem p = make_problem(m, n, k, DType::F32, 3);
    p.b.batch_stride = 0;
    check_same(run_both(p));
    REQUIRE(env.lt.matmuls.size() == 1);
    const FakeMatmulCall& call = env.lt.matmuls.back();
    CHECK(call.batch == 3);
    CHECK(call.batch_offset_a == 0);  // B
    CHECK(call.batch_offset_b == m * k);
    CHECK(call.batch_offset_d == m * n);
  }
  SECTION("outer entries: one call each, the pointers advanced") {
    MatmulProblem p = make_problem(m, n, k, DType::F32, 2);
    p.outer = 3;
    p.a.outer_stride = 2 * m * k;
    p.b.outer_stride = 0;  // broadcast over the outer dimension
    p.c.outer_stride = 2 * m * n;
    p.has_bias = true;
    p.bias.batch_stride = n;
    p.bias.outer_stride = 2 * n;
    p.epilogue = MatmulEpilogue::Relu;
    check_same(run_both(p));
    REQUIRE(env.lt.matmuls.size() == 3);
    const auto& calls = env.lt.matmuls;
    auto bytes = [](const void* x, const void* y) {
      return static_cast<const char*>(x) - static_cast<const char*>(y);
    };
    CHECK(bytes(calls[1].b, calls[0].b) == 2 * m * k * 4);  // A
    CHECK(calls[1].a == calls[0].a);                        // B
    CHECK(bytes(calls[2].d, calls[1].d) == 2 * m * n * 4);
    CHECK(bytes(calls[2].bias, calls[1].bias) == 2 * n * 4);
    // Steps of 80 and 160 bytes: what the algorithm may assume of the pointers drops to 16.
    CHECK(env.lt.heuristics.back().min_alignment[1] == 16);
    CHECK(env.lt.heuristics.back().bias_pointer == 8);  // 24- and 48-byte bias steps
  }
}

TEST_CASE("cuBLASLt epilogues, with and without a bias", "[cublaslt]") {
  Env env;
  using E = MatmulEpilogue;
  for (E e : {E::None, E::Relu, E::Gelu, E::GeluTanh})
    for (bool bias : {false, true})
      for (int64_t batch : {1, 2}) {
        INFO("epilogue " << static_cast<int>(e) << ", bias " << bias << ", batch " << batch);
        MatmulProblem p = make_problem(6, 5, 4, DType::F32, batch);
        p.epilogue = e;
        p.has_bias = bias;
        p.bias.batch_stride = batch > 1 ? 5 : 0;
        Outcome o = run_both(p);
        check_same(o);
        // The erf GELU is not the library's (its GELU is the tanh form): the caller applies it.
        CHECK(o.epilogue_in_library == (e != E::Gelu));
        uint32_t want = 0;
        switch (e) {
          case E::None:
          case E::Gelu:
            want = bias ? cuda::CUBLASLT_EPILOGUE_BIAS : cuda::CUBLASLT_EPILOGUE_DEFAULT;
            break;
          case E::Relu:
            want = bias ? cuda::CUBLASLT_EPILOGUE_RELU_BIAS : cuda::CUBLASLT_EPILOGUE_RELU;
            break;
          case E::GeluTanh:
            want = bias ? cuda::CUBLASLT_EPILOGUE_GELU_BIAS : cuda::CUBLASLT_EPILOGUE_GELU;
            break;
        }
        CHECK(env.lt.matmuls.back().epilogue == want);
      }
}

TEST_CASE("cuBLASLt element types, compute types and TF32", "[cublaslt]") {
  Env env;
  struct Case {
    DType ab, c, bias;
    bool tf32;
    int compute, scale, bias_type;
  };
  using cuda::CUBLAS_COMPUTE_32F, cuda::CUBLAS_COMPUTE_64F, cuda::CUBLAS_COMPUTE_32F_FAST_TF32;
  using cuda::CUDA_R_32F, cuda::CUDA_R_64F;
  const Case cases[] = {
      {DType::F16, DType::F16, DType::F16, false, CUBLAS_COMPUTE_32F, CUDA_R_32F, -1},
      {DType::BF16, DType::BF16, DType::BF16, false, CUBLAS_COMPUTE_32F, CUDA_R_32F, -1},
      {DType::F32, DType::F32, DType::F32, false, CUBLAS_COMPUTE_32F, CUDA_R_32F, -1},
      {DType::F64, DType::F64, DType::F64, false, CUBLAS_COMPUTE_64F, CUDA_R_64F, -1},
      {DType::F32, DType::F32, DType::F32, true, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, -1},
      {DType::F16, DType::F16, DType::F16, true, CUBLAS_COMPUTE_32F, CUDA_R_32F, -1},
      {DType::F64, DType::F64, DType::F64, true, CUBLAS_COMPUTE_64F, CUDA_R_64F, -1},
      {DType::F16, DType::F32, DType::F32, false, CUBLAS_COMPUTE_32F, CUDA_R_32F, -1},
      {DType::BF16, DType::BF16, DType::F32, false, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_32F},
  };
  for (const Case& c : cases) {
    INFO(dtype_name(c.ab) << " x " << dtype_name(c.ab) << " -> " << dtype_name(c.c) << ", bias "
                          << dtype_name(c.bias) << ", tf32 " << c.tf32);
    MatmulProblem p = make_problem(7, 9, 8, c.ab);
    p.c.dtype = c.c;
    p.bias.dtype = c.bias;
    p.has_bias = true;
    p.epilogue = MatmulEpilogue::GeluTanh;
    p.allow_tf32 = c.tf32;
    check_same(run_both(p));
    const FakeMatmulCall& call = env.lt.matmuls.back();
    CHECK(call.compute_type == c.compute);
    CHECK(call.scale_type == c.scale);
    CHECK(call.bias_type == c.bias_type);
  }
}

TEST_CASE("cuBLASLt refuses what it cannot express, naming it, before anything runs",
          "[cublaslt]") {
  Env env;
  auto refusal = [&](const MatmulProblem& p) {
    return error_of([&] { MatmulRunner r(p, 0); }, Failure::InvalidArgument);
  };
  MatmulProblem p = make_problem(4, 5, 6, DType::F32);
  SECTION("an operand neither row- nor column-major") {
    p.a.row_stride = 12;
    p.a.col_stride = 2;
    CHECK(refusal(p) ==
          "cuBLASLt cannot read operand A (m x k = 4 x 6, row stride 12, column stride 2): it "
          "takes row-major (column stride 1, row stride >= 6) or column-major (row stride 1, "
          "column stride >= 4) operands; copy it to one first");
    p = make_problem(4, 5, 6, DType::F32);
    p.b.row_stride = 3;  // rows overlap
    CHECK_THAT(refusal(p), StartsWith("cuBLASLt cannot read operand B (k x n = 6 x 5"));
    p = make_problem(4, 5, 6, DType::F32);
    p.c.col_stride = 0;
    CHECK_THAT(refusal(p), StartsWith("cuBLASLt cannot read operand C (m x n = 4 x 5"));
    p = make_problem(4, 5, 6, DType::F32);
    p.has_bias = true;
    p.bias.col_stride = 2;
    CHECK_THAT(refusal(p), Contains("cannot read the bias: it takes a packed row"));
  }
  SECTION("sizes past 32 bits") {
    p.a.row_stride = 3'000'000'000;
    CHECK(refusal(p) ==
          "cuBLASLt has no algorithm for this product: m 4, n 5, k 6, batch 1, A f32, B f32, "
          "C f32 (the leading dimension of A 3000000000 is past 2^31 - 1)");
  }
  SECTION("other element types, a C written twice") {
    p.b.dtype = DType::I32;
    CHECK_THAT(refusal(p), Contains("take f16, bf16, f32 or f64 operands, not i32 (B)"));
    p = make_problem(4, 5, 6, DType::F32, 2);
    p.c.batch_stride = 0;
    CHECK_THAT(refusal(p), Contains("C's batch stride is 0 for a batch of 2"));
  }
  CHECK(env.lt.heuristics.empty());
  CHECK(env.lt.live_objects() == 0);
}

TEST_CASE("cuBLASLt without an algorithm for a product says which", "[cublaslt]") {
  Env env;
  MatmulProblem p = make_problem(4, 5, 6, DType::F16, 2);
  p.has_bias = true;
  p.epilogue = MatmulEpilogue::Relu;
  env.lt.no_algorithm = true;
  CHECK_THAT(error_of([&] { MatmulRunner r(p, 1024); }, Failure::InvalidArgument),
             StartsWith("cuBLASLt has no algorithm for this product: m 4, n 5, k 6, batch 2, "
                        "A f16, B f16, C f16, bias f16, relu, workspace up to 1024 bytes ("));
  env.lt.no_algorithm = false;
  // Types the library does not pair (its heuristic refuses them): the same message.
  p.b.dtype = DType::F32;
  CHECK_THAT(error_of([&] { MatmulRunner r(p, 0); }, Failure::InvalidArgument),
             StartsWith("cuBLASLt has no algorithm for this product: m 4, n 5, k 6, batch 2, "
                        "A f16, B f32"));
  CHECK(env.lt.live_objects() == 0);  // what the refused runner made is destroyed
  CHECK(env.lt.matmuls.empty());
}

TEST_CASE("cuBLASLt workspace: what the algorithm needs, within the grant", "[cublaslt]") {
  Env env;
  MatmulProblem p = make_problem(8, 8, 8, DType::BF16);
  env.lt.workspace_need = 4096;
  {
    MatmulRunner r(p, 1 << 20);
    CHECK(r.workspace_bytes() == 4096);
    CHECK(env.lt.heuristics.back().max_workspace == 1 << 20);
    check_same(run_both(p, 1 << 20));
    CHECK(env.lt.matmuls.back().workspace_bytes == 4096);
    CHECK_THAT(error_of([&] { r.run(ptr(256), ptr(256), nullptr, ptr(256), nullptr, nullptr); },
                        Failure::InvalidArgument),
               Contains("no workspace"));
  }
  MatmulRunner small(p, 1024);
  CHECK(small.workspace_bytes() == 0);
  CHECK(env.lt.heuristics.back().max_workspace == 1024);
}

TEST_CASE("cuBLASLt handles: one per context, shared by its runners", "[cublaslt]") {
  Env env;
  MatmulProblem p = make_problem(3, 4, 5, DType::F32);
  check_same(run_both(p));
  check_same(run_both(p));
  REQUIRE(env.lt.handle_contexts.size() == 1);
  CHECK(env.lt.handle_contexts[0] == env.ctx.get());
  REQUIRE(env.lt.matmuls.size() == 2);
  CHECK(env.lt.matmuls[0].handle == env.lt.matmuls[1].handle);
  {
    cuda::Context other = cuda::Context::borrowed(env.fd.user_context());
    env.fd.set_current(other.get());
    check_same(run_both(p));
    env.fd.set_current(env.ctx.get());
  }
  REQUIRE(env.lt.handle_contexts.size() == 2);
  CHECK(env.lt.handle_contexts[1] == env.fd.user_context());
  CHECK(env.lt.matmuls[2].handle != env.lt.matmuls[0].handle);
  check_same(run_both(p));
  CHECK(env.lt.handle_contexts.size() == 2);
  CHECK(env.lt.matmuls[3].handle == env.lt.matmuls[0].handle);
}

TEST_CASE("cuBLASLt runs enqueue on the stream: captured into a graph, no allocation",
          "[cublaslt]") {
  Env env;
  const cuda::DriverApi& d = cuda::driver();
  MatmulProblem p = make_problem(6, 5, 4, DType::F32, 2);
  p.outer = 2;
  p.a.outer_stride = 2 * 6 * 4;
  p.c.outer_stride = 2 * 6 * 5;
  p.has_bias = true;
  HostOperands h = random_operands(p, 3);
  CUdeviceptr a = to_device(h.a), b = to_device(h.b), bias = to_device(h.bias), c = to_device(h.c);
  MatmulRunner r(p, 0);
  cuda::CUstream s = nullptr;
  REQUIRE(d.cuStreamCreate(&s, cuda::kStreamNonBlocking) == 0);
  REQUIRE(d.cuStreamBeginCapture(s, cuda::kCaptureModeThreadLocal) == 0);
  {
    HeapCounter heap;
    r.run(ptr(a), ptr(b), ptr(bias), ptr(c), nullptr, s);
    CHECK(heap.allocations() == 0);
  }
  cuda::CUgraph graph = nullptr;
  REQUIRE(d.cuStreamEndCapture(s, &graph) == 0);
  CHECK(from_device(c, h.c.size()) == h.c);  // recorded, not run
  REQUIRE(env.lt.matmuls.size() == 2);
  CHECK(env.lt.matmuls[0].stream == s);
  cuda::CUgraphExec exec = nullptr;
  REQUIRE(d.cuGraphInstantiate(&exec, graph, 0) == 0);
  REQUIRE(d.cuGraphLaunch(exec, s) == 0);
  check_same({from_device(c, h.c.size()), reference(p, h, true), p.c.dtype, true});
  CHECK(env.fd.syncs == 0);
}

TEST_CASE("cuBLASLt runners: descriptors freed, empty products, pointer alignment", "[cublaslt]") {
  Env env;
  MatmulProblem p = make_problem(4, 4, 4, DType::F32);
  {
    MatmulRunner r(p, 0);
    CHECK(env.lt.live_objects() == 4);  // the descriptor and three layouts
  }
  CHECK(env.lt.live_objects() == 0);

  MatmulProblem empty = make_problem(0, 4, 4, DType::F32);
  MatmulRunner e(empty, 0);
  e.run(nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  CHECK(env.lt.heuristics.size() == 1);  // the first runner's
  CHECK(env.lt.matmuls.empty());

  // Pointers aligned to less than promised are refused; promise less and they run.
  HostOperands h = random_operands(p, 5);
  auto padded = [](std::vector<uint8_t> v) {
    v.insert(v.begin(), 4, 0);
    return v;
  };
  CUdeviceptr a = to_device(padded(h.a)), b = to_device(padded(h.b)), c = to_device(padded(h.c));
  MatmulRunner strict(p, 0);
  CHECK_THAT(
      error_of([&] { strict.run(ptr(a + 4), ptr(b + 4), nullptr, ptr(c + 4), nullptr, nullptr); },
               Failure::InvalidArgument),
      Contains("not aligned to 256 bytes"));
  MatmulRunner loose(p, 0, 4);
  CHECK(env.lt.heuristics.back().min_alignment[0] == 4);
  loose.run(ptr(a + 4), ptr(b + 4), nullptr, ptr(c + 4), nullptr, nullptr);
  std::vector<uint8_t> got = from_device(c, h.c.size() + 4);
  got.erase(got.begin(), got.begin() + 4);
  check_same({got, reference(p, h, true), p.c.dtype, true});
}

TEST_CASE("without cuBLASLt, binding a product says so in one line", "[cublaslt]") {
  const std::string fix =
      "matrix products on a GPU need cuBLASLt (CUDA 12+ toolkit or the nvidia-cublas wheel); set "
      "FUSERC_LIBCUBLASLT to its path";
  std::string e =
      error_of([] { cuda::load_cublaslt("/nonexistent/libcublasLt.so.13"); }, Failure::NoLibrary);
  CHECK_THAT(e, StartsWith("cannot load /nonexistent/libcublasLt.so.13 ("));
  CHECK_THAT(e, EndsWith("): " + fix));
  CHECK(e.find('\n') == std::string::npos);
  CHECK(error_of([] { cuda::load_cublaslt("libm.so.6"); }, Failure::NoLibrary) ==
        "libm.so.6 has no cublasLtCreate: " + fix);

  // Through a runner, with the library the environment names missing. The load is cached for
  // the process: no other test here uses the real library (they install the fake).
  const char* old = std::getenv("FUSERC_LIBCUBLASLT");
  std::string saved = old ? old : "";
  setenv("FUSERC_LIBCUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
  {
    FakeDriver fd;
    cuda::Context ctx = cuda::Context::current_or_primary();
    CHECK_THAT(
        error_of([] { MatmulRunner r(make_problem(2, 2, 2, DType::F32), 0); }, Failure::NoLibrary),
        StartsWith("cannot load /nonexistent/libcublasLt.so.13 ("));
  }
  if (old)
    setenv("FUSERC_LIBCUBLASLT", saved.c_str(), 1);
  else
    unsetenv("FUSERC_LIBCUBLASLT");
}

TEST_CASE("the runner's descriptors are ones the real cuBLASLt accepts, when it is installed",
          "[cublaslt]") {
  // Descriptors, layouts and preferences are host objects: the real library checks every
  // attribute (its size) without a GPU. The handle, the heuristic and the product are faked.
  static cuda::CublasLtApi spy;
  try {
    spy = cuda::load_cublaslt("");
  } catch (const CudaError& e) {
    WARN("not checked: " << e.what());
    return;
  }
  spy.cublasLtCreate = [](cuda::cublasLtHandle_t* h) {
    *h = reinterpret_cast<cuda::cublasLtHandle_t>(uintptr_t{0x100});
    return cuda::CUBLAS_STATUS_SUCCESS;
  };
  spy.cublasLtMatmulAlgoGetHeuristic =
      [](cuda::cublasLtHandle_t, cuda::cublasLtMatmulDesc_t, cuda::cublasLtMatrixLayout_t,
         cuda::cublasLtMatrixLayout_t, cuda::cublasLtMatrixLayout_t, cuda::cublasLtMatrixLayout_t,
         cuda::cublasLtMatmulPreference_t, int, cuda::cublasLtMatmulHeuristicResult_t* results,
         int* returned) {
        results[0] = {};
        *returned = 1;
        return cuda::CUBLAS_STATUS_SUCCESS;
      };
  spy.cublasLtMatmul = [](cuda::cublasLtHandle_t, cuda::cublasLtMatmulDesc_t, const void*,
                          const void*, cuda::cublasLtMatrixLayout_t, const void*,
                          cuda::cublasLtMatrixLayout_t, const void*, const void*,
                          cuda::cublasLtMatrixLayout_t, void*, cuda::cublasLtMatrixLayout_t,
                          const cuda::cublasLtMatmulAlgo_t*, void*, size_t,
                          cuda::CUstream) { return cuda::CUBLAS_STATUS_SUCCESS; };
  struct Installed {
    Installed() { cuda::install_cublaslt_for_testing(&spy); }
    ~Installed() { cuda::install_cublaslt_for_testing(nullptr); }
  } installed;
  FakeDriver fd;
  cuda::Context ctx = cuda::Context::current_or_primary();
  {  // it does check: an attribute of the wrong size is refused
    cuda::cublasLtMatmulDesc_t desc = nullptr;
    REQUIRE(spy.cublasLtMatmulDescCreate(&desc, cuda::CUBLAS_COMPUTE_32F, cuda::CUDA_R_32F) == 0);
    int64_t wide = cuda::CUBLAS_OP_T;
    CHECK(spy.cublasLtMatmulDescSetAttribute(desc, cuda::CUBLASLT_MATMUL_DESC_TRANSA, &wide,
                                             sizeof wide) == cuda::CUBLAS_STATUS_INVALID_VALUE);
    spy.cublasLtMatmulDescDestroy(desc);
  }
  int runs = 0;
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
    for (MatmulEpilogue e : {MatmulEpilogue::None, MatmulEpilogue::Relu, MatmulEpilogue::Gelu,
                             MatmulEpilogue::GeluTanh})
      for (int variant = 0; variant < 3; ++variant) {
        MatmulProblem p = make_problem(8, 16, 32, t, 4);
        p.epilogue = e;
        p.allow_tf32 = true;
        p.has_bias = variant > 0;
        p.bias.batch_stride = 16;
        if (variant == 2 && t != DType::F64) p.bias.dtype = DType::F32;
        if (variant == 0) col_major(p.c, 8);
        INFO(describe_for_test(p));
        MatmulRunner r(p, 1 << 20);
        void* x = reinterpret_cast<void*>(uintptr_t{1} << 20);
        r.run(x, x, x, x, x, nullptr);
        ++runs;
      }
  CHECK(runs == 48);
}
