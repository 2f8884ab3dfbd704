#include "runtime/cuda/cublaslt_matmul.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "runtime/cuda/cuda_error.h"

namespace fuserc::cuda {
namespace {

constexpr int64_t kInt32Max = INT32_MAX;

[[noreturn]] void fail_lt(cublasStatus_t s, const std::string& what) {
  throw CudaError(s == CUBLAS_STATUS_ALLOC_FAILED ? Failure::OutOfMemory : Failure::Driver,
                  what + ": " + cublas_status_text(s));
}

void check_lt(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) fail_lt(s, what);
}

template <class T>
void set_desc(const CublasLtApi& api, cublasLtMatmulDesc_t d, int attribute, const T& value) {
  check_lt(api.cublasLtMatmulDescSetAttribute(d, attribute, &value, sizeof value),
           "cublasLtMatmulDescSetAttribute");
}

template <class T>
void set_layout(const CublasLtApi& api, cublasLtMatrixLayout_t l, int attribute, const T& value) {
  check_lt(api.cublasLtMatrixLayoutSetAttribute(l, attribute, &value, sizeof value),
           "cublasLtMatrixLayoutSetAttribute");
}

template <class T>
void set_pref(const CublasLtApi& api, cublasLtMatmulPreference_t p, int attribute, const T& value) {
  check_lt(api.cublasLtMatmulPreferenceSetAttribute(p, attribute, &value, sizeof value),
           "cublasLtMatmulPreferenceSetAttribute");
}

// The library's handle for the current context: one per CUcontext, made on first use and kept
// for the process (the library has no per-context teardown to order with the context's end).
// A test that installs another table (of the library or of the driver) starts afresh.
cublasLtHandle_t handle_for_current_context(const CublasLtApi& api) {
  static std::mutex mutex;
  static std::map<CUcontext, cublasLtHandle_t> handles;
  static std::pair<uint64_t, uint64_t> tables{~uint64_t{0}, ~uint64_t{0}};
  CUcontext context = nullptr;
  check(driver().cuCtxGetCurrent(&context), "cuCtxGetCurrent");
  if (!context)
    throw CudaError(Failure::InvalidArgument,
                    "a matrix product on a GPU needs a current CUDA context");
  std::lock_guard<std::mutex> lock(mutex);
  std::pair<uint64_t, uint64_t> now{cublaslt_generation(), driver_generation()};
  if (now != tables) {
    handles.clear();  // made by tables that are gone
    tables = now;
  }
  auto it = handles.find(context);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  check_lt(api.cublasLtCreate(&h), "cublasLtCreate");
  handles.emplace(context, h);
  return h;
}

std::optional<int> lt_type(DType t) {
  switch (t) {
    case DType::F16: return CUDA_R_16F;
    case DType::BF16: return CUDA_R_16BF;
    case DType::F32: return CUDA_R_32F;
    case DType::F64: return CUDA_R_64F;
    default: return std::nullopt;
  }
}

const char* epilogue_name(MatmulEpilogue e) {
  switch (e) {
    case MatmulEpilogue::None: return "none";
    case MatmulEpilogue::Relu: return "relu";
    case MatmulEpilogue::Gelu: return "gelu";
    case MatmulEpilogue::GeluTanh: return "gelu_tanh";
  }
  return "?";
}

std::string describe(const MatmulProblem& p) {
  std::string s = "m " + std::to_string(p.m) + ", n " + std::to_string(p.n) + ", k " +
                  std::to_string(p.k) + ", batch " + std::to_string(p.batch);
  if (p.outer != 1) s += ", outer " + std::to_string(p.outer);
  s += std::string(", A ") + dtype_name(p.a.dtype) + ", B " + dtype_name(p.b.dtype) + ", C " +
       dtype_name(p.c.dtype);
  if (p.has_bias) s += std::string(", bias ") + dtype_name(p.bias.dtype);
  if (p.epilogue != MatmulEpilogue::None) s += std::string(", ") + epilogue_name(p.epilogue);
  if (p.allow_tf32) s += ", tf32 allowed";
  return s;
}

// A matrix as the library takes it: column-major, rows x cols with leading dimension ld, used
// as it is (CUBLAS_OP_N) or transposed.
struct LtMatrix {
  int32_t op = CUBLAS_OP_N;
  int64_t rows = 0, cols = 0, ld = 1;
};

// The leading dimension of the r x c matrix whose element (i, j) lies at i * rs + j * cs, if it
// is column-major (rs 1, columns apart by at least r). A stride of a dimension of one element
// is never used, so any will do; the library wants ld >= max(rows, 1).
std::optional<int64_t> column_major_ld(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  if (r == 0 || c == 0) return std::max<int64_t>(r, 1);
  if (rs != 1 && r > 1) return std::nullopt;
  if (c == 1) return r;
  if (cs < r) return std::nullopt;
  return cs;
}

// The r x c matrix (strides rs, cs) as the library's operand: itself when column-major, else
// the transpose of its row-major storage.
std::optional<LtMatrix> lt_operand(int64_t r, int64_t c, int64_t rs, int64_t cs) {
  if (auto ld = column_major_ld(r, c, rs, cs)) return LtMatrix{CUBLAS_OP_N, r, c, *ld};
  if (auto ld = column_major_ld(c, r, cs, rs)) return LtMatrix{CUBLAS_OP_T, c, r, *ld};
  return std::nullopt;
}

[[noreturn]] void refuse_operand(const char* name, const char* dims, int64_t r, int64_t c,
                                 const MatmulOperand& x) {
  throw CudaError(Failure::InvalidArgument,
                  std::string("cuBLASLt cannot read operand ") + name + " (" + dims + " = " +
                      std::to_string(r) + " x " + std::to_string(c) + ", row stride " +
                      std::to_string(x.row_stride) + ", column stride " +
                      std::to_string(x.col_stride) +
                      "): it takes row-major (column stride 1, row stride >= " + std::to_string(c) +
                      ") or column-major (row stride 1, column stride >= " + std::to_string(r) +
                      ") operands; copy it to one first");
}

// The largest power of two, at most `align`, that divides `step_bytes` (0 divides by all).
uint32_t step_alignment(uint32_t align, int64_t step_bytes) {
  if (step_bytes == 0) return align;
  uint64_t s = step_bytes < 0 ? uint64_t{0} - static_cast<uint64_t>(step_bytes)
                              : static_cast<uint64_t>(step_bytes);
  uint64_t low = s & (~s + 1);
  return low < align ? static_cast<uint32_t>(low) : align;
}

// What every matrix of an operand is aligned to when its base is aligned to `base`: the outer
// steps are ours; the batch steps are the library's, counted too to be safe (it may take the
// preference for every matrix of the batch).
uint32_t operand_alignment(uint32_t base, const MatmulOperand& x, const MatmulProblem& p) {
  int64_t e = static_cast<int64_t>(dtype_size(x.dtype));
  uint32_t a = base;
  if (p.outer > 1) a = step_alignment(a, x.outer_stride * e);
  if (p.batch > 1) a = step_alignment(a, x.batch_stride * e);
  return a;
}

struct PreferenceGuard {
  const CublasLtApi& api;
  cublasLtMatmulPreference_t pref = nullptr;
  ~PreferenceGuard() {
    if (pref) api.cublasLtMatmulPreferenceDestroy(pref);
  }
};

}  // namespace

MatmulRunner::MatmulRunner(const MatmulProblem& p, size_t workspace_grant,
                           uint32_t pointer_alignment)
    : problem_(p), api_(&cublaslt()), pointer_alignment_(pointer_alignment) {
  const CublasLtApi& api = *api_;
  if (pointer_alignment == 0 || (pointer_alignment & (pointer_alignment - 1)) != 0)
    throw CudaError(Failure::InvalidArgument, "matrix product: pointer alignment " +
                                                  std::to_string(pointer_alignment) +
                                                  " is not a power of two");
  // Types.
  std::pair<const char*, const MatmulOperand*> operands[] = {
      {"A", &p.a}, {"B", &p.b}, {"C", &p.c}, {"bias", &p.bias}};
  for (auto [name, x] : operands) {
    if (x == &p.bias && !p.has_bias) continue;
    if (!lt_type(x->dtype))
      throw CudaError(Failure::InvalidArgument,
                      std::string("cuBLASLt products take f16, bf16, f32 or f64 operands, not ") +
                          dtype_name(x->dtype) + " (" + name + ")");
    if (x->batch_stride < 0 && p.batch > 1)
      throw CudaError(Failure::InvalidArgument,
                      std::string("cuBLASLt cannot read operand ") + name + ": its batch stride " +
                          std::to_string(x->batch_stride) + " is negative");
  }
  if (p.m < 0 || p.n < 0 || p.k < 0 || p.batch < 0 || p.outer < 0)
    throw CudaError(Failure::InvalidArgument,
                    "matrix product with a negative size: " + describe(p));
  empty_ = p.m == 0 || p.n == 0 || p.batch == 0 || p.outer == 0;
  if (empty_) return;

  // Orientation: the library's D is C^T when C is row-major, else C.
  std::optional<int64_t> ld_row = column_major_ld(p.n, p.m, p.c.col_stride, p.c.row_stride);
  std::optional<int64_t> ld_col = column_major_ld(p.m, p.n, p.c.row_stride, p.c.col_stride);
  if (!ld_row && ld_col && p.has_bias)
    throw CudaError(Failure::InvalidArgument,
                    "cuBLASLt cannot add the bias to a column-major C (" + std::to_string(p.m) +
                        " x " + std::to_string(p.n) +
                        "): it adds a vector along its output's rows, a row of C only when C "
                        "is row-major (column stride 1)");
  if (!ld_row && !ld_col) refuse_operand("C", "m x n", p.m, p.n, p.c);
  swap_ = ld_row.has_value();
  LtMatrix d =
      swap_ ? LtMatrix{CUBLAS_OP_N, p.n, p.m, *ld_row} : LtMatrix{CUBLAS_OP_N, p.m, p.n, *ld_col};
  if (p.batch > 1 && p.c.batch_stride == 0)
    throw CudaError(Failure::InvalidArgument,
                    "matrix product: C's batch stride is 0 for a batch of " +
                        std::to_string(p.batch) + " (the products would write the same elements)");
  // C^T = B^T A^T: the library's A is B^T (n x k), its B is A^T (k x m).
  std::optional<LtMatrix> la = swap_ ? lt_operand(p.n, p.k, p.b.col_stride, p.b.row_stride)
                                     : lt_operand(p.m, p.k, p.a.row_stride, p.a.col_stride);
  std::optional<LtMatrix> lb = swap_ ? lt_operand(p.k, p.m, p.a.col_stride, p.a.row_stride)
                                     : lt_operand(p.k, p.n, p.b.row_stride, p.b.col_stride);
  if (!(swap_ ? lb : la)) refuse_operand("A", "m x k", p.m, p.k, p.a);
  if (!(swap_ ? la : lb)) refuse_operand("B", "k x n", p.k, p.n, p.b);
  if (p.has_bias && p.n > 1 && p.bias.col_stride != 1)
    throw CudaError(Failure::InvalidArgument,
                    "cuBLASLt cannot read the bias: it takes a packed row (column stride 1), not "
                    "column stride " +
                        std::to_string(p.bias.col_stride));
  const MatmulOperand& xa = swap_ ? p.b : p.a;  // what the library's A and B are
  const MatmulOperand& xb = swap_ ? p.a : p.b;

  // Sizes the library takes in 32 bits.
  auto too_big = [&](const std::string& what, int64_t v) {
    if (v > kInt32Max)
      throw CudaError(Failure::InvalidArgument,
                      "cuBLASLt has no algorithm for this product: " + describe(p) + " (" + what +
                          " " + std::to_string(v) + " is past 2^31 - 1)");
  };
  const char* name_a = swap_ ? "B" : "A";
  const char* name_b = swap_ ? "A" : "B";
  for (auto [name, x] : {std::pair{name_a, &*la}, std::pair{name_b, &*lb}, std::pair{"C", &d}}) {
    too_big(std::string("the rows of the library's view of ") + name, x->rows);
    too_big(std::string("the columns of the library's view of ") + name, x->cols);
    too_big(std::string("the leading dimension of ") + name, x->ld);
  }
  too_big("the batch", p.batch);

  const bool f64 = p.a.dtype == DType::F64;
  const int compute = f64 ? CUBLAS_COMPUTE_64F
                      : p.allow_tf32 && p.a.dtype == DType::F32 && p.b.dtype == DType::F32
                          ? CUBLAS_COMPUTE_32F_FAST_TF32
                          : CUBLAS_COMPUTE_32F;
  const int scale = f64 ? CUDA_R_64F : CUDA_R_32F;
  if (f64) {
    alpha_.f64 = 1.0;
    beta_.f64 = 0.0;
  } else {
    alpha_.f32 = 1.0f;
    beta_.f32 = 0.0f;
  }
  // cuBLASLt's GELU epilogue is the tanh approximation (GeluTanh); it has no erf form, so for
  // Gelu the library adds only the bias and the caller applies the epilogue.
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  switch (p.epilogue) {
    case MatmulEpilogue::None:
      epilogue = p.has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      break;
    case MatmulEpilogue::Relu:
      epilogue = p.has_bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      break;
    case MatmulEpilogue::GeluTanh:
      epilogue = p.has_bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
    case MatmulEpilogue::Gelu:
      epilogue = p.has_bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      epilogue_in_library_ = false;
      break;
  }

  try {
    handle_ = handle_for_current_context(api);
    check_lt(api.cublasLtMatmulDescCreate(&desc_, compute, scale), "cublasLtMatmulDescCreate");
    set_desc(api, desc_, CUBLASLT_MATMUL_DESC_TRANSA, la->op);
    set_desc(api, desc_, CUBLASLT_MATMUL_DESC_TRANSB, lb->op);
    set_desc(api, desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue);
    if (p.has_bias) {
      // The bias's type defaults to C's; say it only when it differs.
      if (p.bias.dtype != p.c.dtype)
        set_desc(api, desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t{*lt_type(p.bias.dtype)});
      if (p.batch > 1 && p.bias.batch_stride != 0)
        set_desc(api, desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, int64_t{p.bias.batch_stride});
      // The heuristic reads the bias pointer only for its alignment (run() sets the real one):
      // give it a value with the alignment every bias pointer of run() has.
      uint32_t bias_alignment = operand_alignment(pointer_alignment, p.bias, p);
      set_desc(api, desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
               reinterpret_cast<const void*>(static_cast<uintptr_t>(bias_alignment)));
    }
    auto make_layout = [&](cublasLtMatrixLayout_t& l, const MatmulOperand& x, const LtMatrix& m) {
      check_lt(api.cublasLtMatrixLayoutCreate(&l, *lt_type(x.dtype), static_cast<uint64_t>(m.rows),
                                              static_cast<uint64_t>(m.cols), m.ld),
               "cublasLtMatrixLayoutCreate");
      if (p.batch > 1) {
        set_layout(api, l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, static_cast<int32_t>(p.batch));
        set_layout(api, l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, int64_t{x.batch_stride});
      }
    };
    make_layout(lt_a_, xa, *la);
    make_layout(lt_b_, xb, *lb);
    make_layout(lt_d_, p.c, d);

    PreferenceGuard pref{api};
    check_lt(api.cublasLtMatmulPreferenceCreate(&pref.pref), "cublasLtMatmulPreferenceCreate");
    set_pref(api, pref.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t{workspace_grant});
    set_pref(api, pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
             operand_alignment(pointer_alignment, xa, p));
    set_pref(api, pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
             operand_alignment(pointer_alignment, xb, p));
    uint32_t c_alignment = operand_alignment(pointer_alignment, p.c, p);
    set_pref(api, pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, c_alignment);
    set_pref(api, pref.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, c_alignment);

    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    cublasStatus_t s = api.cublasLtMatmulAlgoGetHeuristic(handle_, desc_, lt_a_, lt_b_, lt_d_,
                                                          lt_d_, pref.pref, 1, &result, &returned);
    std::string why;
    if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_INVALID_VALUE)
      why = "cublasLtMatmulAlgoGetHeuristic: " + cublas_status_text(s);
    else if (s != CUBLAS_STATUS_SUCCESS)
      fail_lt(s, "cublasLtMatmulAlgoGetHeuristic");
    else if (returned < 1 || result.state != CUBLAS_STATUS_SUCCESS)
      why = "none found";
    else if (result.workspaceSize > workspace_grant)
      why = "its algorithm needs " + std::to_string(result.workspaceSize) + " bytes of workspace";
    if (!why.empty())
      throw CudaError(Failure::InvalidArgument,
                      "cuBLASLt has no algorithm for this product: " + describe(p) +
                          ", workspace up to " + std::to_string(workspace_grant) + " bytes (" +
                          why + ")");
    algo_ = result.algo;
    workspace_bytes_ = result.workspaceSize;
  } catch (...) {
    release();
    throw;
  }
  a_outer_ = p.a.outer_stride * static_cast<int64_t>(dtype_size(p.a.dtype));
  b_outer_ = p.b.outer_stride * static_cast<int64_t>(dtype_size(p.b.dtype));
  c_outer_ = p.c.outer_stride * static_cast<int64_t>(dtype_size(p.c.dtype));
  bias_outer_ = p.bias.outer_stride * static_cast<int64_t>(dtype_size(p.bias.dtype));
}

MatmulRunner::~MatmulRunner() {
  release();
}

void MatmulRunner::release() noexcept {
  if (lt_a_) api_->cublasLtMatrixLayoutDestroy(lt_a_);
  if (lt_b_) api_->cublasLtMatrixLayoutDestroy(lt_b_);
  if (lt_d_) api_->cublasLtMatrixLayoutDestroy(lt_d_);
  if (desc_) api_->cublasLtMatmulDescDestroy(desc_);
  lt_a_ = lt_b_ = lt_d_ = nullptr;
  desc_ = nullptr;
}

void MatmulRunner::run(const void* a, const void* b, const void* bias, void* c, void* workspace,
                       CUstream stream) const {
  if (empty_) return;
  const bool has_bias = problem_.has_bias;
  uintptr_t bits = reinterpret_cast<uintptr_t>(a) | reinterpret_cast<uintptr_t>(b) |
                   reinterpret_cast<uintptr_t>(c) |
                   (has_bias ? reinterpret_cast<uintptr_t>(bias) : 0);
  if ((bits & (pointer_alignment_ - 1)) != 0 || !a || !b || !c || (has_bias && !bias) ||
      (workspace_bytes_ > 0 && !workspace))
    throw CudaError(Failure::InvalidArgument,
                    "matrix product: a null pointer, or one not aligned to " +
                        std::to_string(pointer_alignment_) + " bytes (A " +
                        std::to_string(reinterpret_cast<uintptr_t>(a)) + ", B " +
                        std::to_string(reinterpret_cast<uintptr_t>(b)) + ", C " +
                        std::to_string(reinterpret_cast<uintptr_t>(c)) +
                        (workspace_bytes_ > 0 && !workspace ? ", no workspace" : "") + ")");
  std::unique_lock<std::mutex> lock(run_mutex_, std::defer_lock);
  if (has_bias) lock.lock();
  const CublasLtApi& api = *api_;
  for (int64_t o = 0; o < problem_.outer; ++o) {
    const void* pa = static_cast<const char*>(a) + o * a_outer_;
    const void* pb = static_cast<const char*>(b) + o * b_outer_;
    void* pc = static_cast<char*>(c) + o * c_outer_;
    if (has_bias)
      set_desc(api, desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
               static_cast<const void*>(static_cast<const char*>(bias) + o * bias_outer_));
    cublasStatus_t s = api.cublasLtMatmul(handle_, desc_, &alpha_, swap_ ? pb : pa, lt_a_,
                                          swap_ ? pa : pb, lt_b_, &beta_, pc, lt_d_, pc, lt_d_,
                                          &algo_, workspace, workspace_bytes_, stream);
    if (s != CUBLAS_STATUS_SUCCESS) fail_lt(s, "cublasLtMatmul (" + describe(problem_) + ")");
  }
}

}  // namespace fuserc::cuda
