#include "fake_cublaslt.h"

#include "alloc_counter.h"

#include <cstring>
#include <map>
#include <string>

#include "core/base/diagnostics.h"
#include "runtime/library/cpu_matmul.h"

namespace fuserc::testing {

using namespace cuda;

namespace {

FakeCublasLt* g_lt = nullptr;
FakeDriver* g_driver = nullptr;

constexpr uint64_t kAlgoMagic = 0xFA4EA190;

struct FakeHandle {
  CUcontext context = nullptr;
};
struct FakeDesc {
  int compute = 0, scale = 0;
  int32_t transa = CUBLAS_OP_N, transb = CUBLAS_OP_N;
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int64_t bias_batch_stride = 0;
  int32_t bias_type = -1;
};
struct FakeLayout {
  int type = 0;
  uint64_t rows = 0, cols = 0;
  int64_t ld = 0;
  int32_t order = CUBLASLT_ORDER_COL;
  int32_t batch = 1;
  int64_t batch_offset = 0;
};
struct FakePref {
  uint64_t max_workspace = 0;
  uint32_t alignment[4] = {256, 256, 256, 256};
};

// Copies an attribute of exactly `bytes` bytes into `slot` (the library refuses other sizes).
template <class T>
bool take(T& slot, const void* value, size_t bytes) {
  if (!value || bytes != sizeof(T)) return false;
  std::memcpy(&slot, value, sizeof(T));
  return true;
}

bool has_bias(uint32_t epilogue) {
  return epilogue == CUBLASLT_EPILOGUE_BIAS || epilogue == CUBLASLT_EPILOGUE_RELU_BIAS ||
         epilogue == CUBLASLT_EPILOGUE_GELU_BIAS;
}

bool is_16bit(int type) {
  return type == CUDA_R_16F || type == CUDA_R_16BF;
}

DType dtype_of(int type) {
  switch (type) {
    case CUDA_R_16F: return DType::F16;
    case CUDA_R_16BF: return DType::BF16;
    case CUDA_R_64F: return DType::F64;
    default: return DType::F32;
  }
}

uint32_t alignment_of(uintptr_t p) {
  if (p == 0) return 256;
  uintptr_t low = p & (~p + 1);
  return low >= 256 ? 256 : static_cast<uint32_t>(low);
}

}  // namespace

struct FakeCublasLt::Impl {
  // Descriptors, layouts, preferences: each with its deleter, which is also its kind.
  std::map<void*, void (*)(void*)> live;
  std::vector<std::unique_ptr<FakeHandle>> handles;

  template <class T>
  static void deleter(void* p) {
    delete static_cast<T*>(p);
  }
  template <class T>
  T* add(T* object) {
    live.emplace(object, &deleter<T>);
    return object;
  }
  template <class T>
  T* find(void* p) {
    auto it = live.find(p);
    return it != live.end() && it->second == &deleter<T> ? static_cast<T*>(p) : nullptr;
  }
  template <class T>
  cublasStatus_t destroy(void* p) {
    if (!find<T>(p)) return CUBLAS_STATUS_INVALID_VALUE;  // unknown, or destroyed twice
    live.erase(p);
    delete static_cast<T*>(p);
    return CUBLAS_STATUS_SUCCESS;
  }
  bool known_handle(cublasLtHandle_t h) const {
    for (const auto& x : handles)
      if (reinterpret_cast<cublasLtHandle_t>(x.get()) == h) return true;
    return false;
  }

  // Why the library would refuse this product ("" when it runs it).
  static std::string refusal(const FakeDesc& d, const FakeLayout& a, const FakeLayout& b,
                             const FakeLayout& c, const FakeLayout& out) {
    for (const FakeLayout* l : {&a, &b, &c, &out}) {
      if (l->order != CUBLASLT_ORDER_COL) return "order";
      if (l->ld < static_cast<int64_t>(std::max<uint64_t>(l->rows, 1))) return "ld < rows";
      if (l->batch < 1) return "batch count";
    }
    uint64_t am = d.transa == CUBLAS_OP_N ? a.rows : a.cols;
    uint64_t ak = d.transa == CUBLAS_OP_N ? a.cols : a.rows;
    uint64_t bk = d.transb == CUBLAS_OP_N ? b.rows : b.cols;
    uint64_t bn = d.transb == CUBLAS_OP_N ? b.cols : b.rows;
    if (am != out.rows || bn != out.cols || ak != bk) return "shapes";
    if (c.rows != out.rows || c.cols != out.cols || c.type != out.type || c.ld != out.ld)
      return "C and D differ";
    if (a.batch != out.batch || b.batch != out.batch || c.batch != out.batch)
      return "batch counts differ";
    if (a.type != b.type) return "A and B types differ";
    switch (d.compute) {
      case CUBLAS_COMPUTE_32F:
        if (!is_16bit(a.type) && a.type != CUDA_R_32F) return "types for 32F";
        if (out.type != a.type && out.type != CUDA_R_32F) return "D type for 32F";
        if (d.scale != CUDA_R_32F) return "scale type";
        break;
      case CUBLAS_COMPUTE_32F_FAST_TF32:
        if (a.type != CUDA_R_32F || out.type != CUDA_R_32F) return "types for TF32";
        if (d.scale != CUDA_R_32F) return "scale type";
        break;
      case CUBLAS_COMPUTE_64F:
        if (a.type != CUDA_R_64F || out.type != CUDA_R_64F) return "types for 64F";
        if (d.scale != CUDA_R_64F) return "scale type";
        break;
      default: return "compute type";
    }
    if (d.transa > CUBLAS_OP_T || d.transb > CUBLAS_OP_T || d.transa < 0 || d.transb < 0)
      return "op";
    switch (d.epilogue) {
      case CUBLASLT_EPILOGUE_DEFAULT:
      case CUBLASLT_EPILOGUE_RELU:
      case CUBLASLT_EPILOGUE_GELU:
      case CUBLASLT_EPILOGUE_BIAS:
      case CUBLASLT_EPILOGUE_RELU_BIAS:
      case CUBLASLT_EPILOGUE_GELU_BIAS: break;
      default: return "epilogue";
    }
    if (has_bias(d.epilogue)) {
      int bias = d.bias_type == -1 ? out.type : d.bias_type;
      if (bias != out.type && !(bias == CUDA_R_32F && is_16bit(out.type))) return "bias type";
    }
    return "";
  }
};

FakeCublasLt::FakeCublasLt(FakeDriver& driver) : impl_(new Impl) {
  FUSERC_CHECK(!g_lt, "one FakeCublasLt at a time");
  g_lt = this;
  g_driver = &driver;
  CublasLtApi& t = table_;
  t.cublasLtCreate = [](cublasLtHandle_t* h) {
    HeapCountPause pause;
    auto handle = std::make_unique<FakeHandle>();
    cuda::driver().cuCtxGetCurrent(&handle->context);
    g_lt->handle_contexts.push_back(handle->context);
    *h = reinterpret_cast<cublasLtHandle_t>(handle.get());
    g_lt->impl().handles.push_back(std::move(handle));
    return CUBLAS_STATUS_SUCCESS;
  };
  t.cublasLtDestroy = [](cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; };
  t.cublasLtGetVersion = []() -> size_t { return 130100; };
  t.cublasLtGetStatusName = [](cublasStatus_t s) -> const char* {
    switch (s) {
      case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
      case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
      case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
      default: return "CUBLAS_STATUS_FAKE";
    }
  };
  t.cublasLtGetStatusString = [](cublasStatus_t) -> const char* { return "fake status"; };
  t.cublasLtMatmulDescCreate = [](cublasLtMatmulDesc_t* d, int compute, int scale) {
    HeapCountPause pause;
    auto* desc = new FakeDesc;
    desc->compute = compute;
    desc->scale = scale;
    g_lt->impl().add(desc);
    *d = reinterpret_cast<cublasLtMatmulDesc_t>(desc);
    return CUBLAS_STATUS_SUCCESS;
  };
  t.cublasLtMatmulDescDestroy = [](cublasLtMatmulDesc_t d) {
    HeapCountPause pause;
    return g_lt->impl().destroy<FakeDesc>(d);
  };
  t.cublasLtMatmulDescSetAttribute = [](cublasLtMatmulDesc_t d, int attribute, const void* v,
                                        size_t bytes) {
    HeapCountPause pause;
    FakeDesc* desc = g_lt->impl().find<FakeDesc>(d);
    if (!desc) return CUBLAS_STATUS_INVALID_VALUE;
    bool ok = false;
    switch (attribute) {
      case CUBLASLT_MATMUL_DESC_TRANSA: ok = take(desc->transa, v, bytes); break;
      case CUBLASLT_MATMUL_DESC_TRANSB: ok = take(desc->transb, v, bytes); break;
      case CUBLASLT_MATMUL_DESC_EPILOGUE: ok = take(desc->epilogue, v, bytes); break;
      case CUBLASLT_MATMUL_DESC_BIAS_POINTER: ok = take(desc->bias, v, bytes); break;
      case CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE:
        ok = take(desc->bias_batch_stride, v, bytes);
        break;
      case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: ok = take(desc->bias_type, v, bytes); break;
      default: break;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  };
  t.cublasLtMatrixLayoutCreate = [](cublasLtMatrixLayout_t* l, int type, uint64_t rows,
                                    uint64_t cols, int64_t ld) {
    HeapCountPause pause;
    auto* layout = new FakeLayout;
    layout->type = type;
    layout->rows = rows;
    layout->cols = cols;
    layout->ld = ld;
    g_lt->impl().add(layout);
    *l = reinterpret_cast<cublasLtMatrixLayout_t>(layout);
    return CUBLAS_STATUS_SUCCESS;
  };
  t.cublasLtMatrixLayoutDestroy = [](cublasLtMatrixLayout_t l) {
    HeapCountPause pause;
    return g_lt->impl().destroy<FakeLayout>(l);
  };
  t.cublasLtMatrixLayoutSetAttribute = [](cublasLtMatrixLayout_t l, int attribute, const void* v,
                                          size_t bytes) {
    HeapCountPause pause;
    FakeLayout* layout = g_lt->impl().find<FakeLayout>(l);
    if (!layout) return CUBLAS_STATUS_INVALID_VALUE;
    bool ok = false;
    switch (attribute) {
      case CUBLASLT_MATRIX_LAYOUT_ORDER: ok = take(layout->order, v, bytes); break;
      case CUBLASLT_MATRIX_LAYOUT_ROWS: ok = take(layout->rows, v, bytes); break;
      case CUBLASLT_MATRIX_LAYOUT_COLS: ok = take(layout->cols, v, bytes); break;
      case CUBLASLT_MATRIX_LAYOUT_LD: ok = take(layout->ld, v, bytes); break;
      case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT: ok = take(layout->batch, v, bytes); break;
      case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
        ok = take(layout->batch_offset, v, bytes);
        break;
      default: break;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  };
  t.cublasLtMatmulPreferenceCreate = [](cublasLtMatmulPreference_t* p) {
    HeapCountPause pause;
    auto* pref = new FakePref;
    g_lt->impl().add(pref);
    *p = reinterpret_cast<cublasLtMatmulPreference_t>(pref);
    return CUBLAS_STATUS_SUCCESS;
  };
  t.cublasLtMatmulPreferenceDestroy = [](cublasLtMatmulPreference_t p) {
    HeapCountPause pause;
    return g_lt->impl().destroy<FakePref>(p);
  };
  t.cublasLtMatmulPreferenceSetAttribute = [](cublasLtMatmulPreference_t p, int attribute,
                                              const void* v, size_t bytes) {
    HeapCountPause pause;
    FakePref* pref = g_lt->impl().find<FakePref>(p);
    if (!pref) return CUBLAS_STATUS_INVALID_VALUE;
    bool ok = false;
    switch (attribute) {
      case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
        ok = take(pref->max_workspace, v, bytes);
        break;
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
        ok =
            take(pref->alignment[attribute - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES], v, bytes);
        break;
      default: break;
    }
    return ok ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
  };
  t.cublasLtMatmulAlgoGetHeuristic = [](cublasLtHandle_t h, cublasLtMatmulDesc_t dd,
                                        cublasLtMatrixLayout_t la, cublasLtMatrixLayout_t lb,
                                        cublasLtMatrixLayout_t lc, cublasLtMatrixLayout_t ld,
                                        cublasLtMatmulPreference_t pp, int requested,
                                        cublasLtMatmulHeuristicResult_t* results, int* returned) {
    HeapCountPause pause;
    Impl& im = g_lt->impl();
    *returned = 0;
    auto* d = im.find<FakeDesc>(dd);
    auto* a = im.find<FakeLayout>(la);
    auto* b = im.find<FakeLayout>(lb);
    auto* c = im.find<FakeLayout>(lc);
    auto* out = im.find<FakeLayout>(ld);
    auto* pref = im.find<FakePref>(pp);
    if (!im.known_handle(h) || !d || !a || !b || !c || !out || !pref || requested < 1)
      return CUBLAS_STATUS_INVALID_VALUE;
    FakeHeuristicCall call;
    call.max_workspace = pref->max_workspace;
    std::memcpy(call.min_alignment, pref->alignment, sizeof call.min_alignment);
    call.bias_pointer = reinterpret_cast<uintptr_t>(d->bias);
    g_lt->heuristics.push_back(call);
    if (!Impl::refusal(*d, *a, *b, *c, *out).empty()) return CUBLAS_STATUS_INVALID_VALUE;
    if (g_lt->no_algorithm) return CUBLAS_STATUS_NOT_SUPPORTED;
    cublasLtMatmulHeuristicResult_t& r = results[0];
    r = {};
    size_t need = g_lt->workspace_need <= pref->max_workspace ? g_lt->workspace_need : 0;
    r.algo.data[0] = kAlgoMagic;
    for (int i = 0; i < 4; ++i) r.algo.data[1 + i] = pref->alignment[i];
    r.algo.data[5] = alignment_of(call.bias_pointer);
    r.algo.data[6] = need;
    r.workspaceSize = need;
    r.state = CUBLAS_STATUS_SUCCESS;
    r.wavesCount = 1.0f;
    *returned = 1;
    return CUBLAS_STATUS_SUCCESS;
  };
  t.cublasLtMatmul = [](cublasLtHandle_t h, cublasLtMatmulDesc_t dd, const void* alpha,
                        const void* pa, cublasLtMatrixLayout_t la, const void* pb,
                        cublasLtMatrixLayout_t lb, const void* beta, const void* pc,
                        cublasLtMatrixLayout_t lc, void* pd, cublasLtMatrixLayout_t ld,
                        const cublasLtMatmulAlgo_t* algo, void* workspace, size_t workspace_bytes,
                        CUstream stream) {
    HeapCountPause pause;
    Impl& im = g_lt->impl();
    auto* d = im.find<FakeDesc>(dd);
    auto* a = im.find<FakeLayout>(la);
    auto* b = im.find<FakeLayout>(lb);
    auto* c = im.find<FakeLayout>(lc);
    auto* out = im.find<FakeLayout>(ld);
    if (!im.known_handle(h) || !d || !a || !b || !c || !out || !algo ||
        algo->data[0] != kAlgoMagic || !alpha || !beta)
      return CUBLAS_STATUS_INVALID_VALUE;
    if (!Impl::refusal(*d, *a, *b, *c, *out).empty()) return CUBLAS_STATUS_INVALID_VALUE;
    // What the algorithm was chosen for: its workspace and the alignments promised.
    if (workspace_bytes < algo->data[6] || (algo->data[6] > 0 && !workspace))
      return CUBLAS_STATUS_INVALID_VALUE;
    const void* pointers[4] = {pa, pb, pc, pd};
    for (int i = 0; i < 4; ++i)
      if (alignment_of(reinterpret_cast<uintptr_t>(pointers[i])) < algo->data[1 + i])
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool bias = has_bias(d->epilogue);
    if (bias && (!d->bias || alignment_of(reinterpret_cast<uintptr_t>(d->bias)) < algo->data[5]))
      return CUBLAS_STATUS_INVALID_VALUE;
    // alpha 1, beta 0: all the runtime asks (and all cpu_matmul does).
    double al = 0, be = 0;
    if (d->scale == CUDA_R_64F) {
      std::memcpy(&al, alpha, 8);
      std::memcpy(&be, beta, 8);
    } else {
      float f = 0, g = 0;
      std::memcpy(&f, alpha, 4);
      std::memcpy(&g, beta, 4);
      al = f, be = g;
    }
    if (al != 1.0 || be != 0.0) return CUBLAS_STATUS_NOT_SUPPORTED;

    FakeMatmulCall call;
    call.handle = h;
    call.m = static_cast<int64_t>(out->rows);
    call.n = static_cast<int64_t>(out->cols);
    call.k = static_cast<int64_t>(d->transa == CUBLAS_OP_N ? a->cols : a->rows);
    call.batch = out->batch;
    call.transa = d->transa, call.transb = d->transb;
    call.lda = a->ld, call.ldb = b->ld, call.ldd = out->ld;
    call.batch_offset_a = a->batch_offset, call.batch_offset_b = b->batch_offset;
    call.batch_offset_d = out->batch_offset;
    call.epilogue = d->epilogue;
    call.compute_type = d->compute, call.scale_type = d->scale;
    call.a_type = a->type, call.b_type = b->type, call.d_type = out->type;
    call.bias_type = d->bias_type;
    call.a = pa, call.b = pb, call.d = pd;
    call.bias = bias ? d->bias : nullptr;
    call.workspace_bytes = workspace_bytes;
    call.stream = stream;
    g_lt->matmuls.push_back(call);

    // The library's product, D = op(A) op(B) (+ bias[i] on row i of D), is the problem
    // D^T = op(B)^T op(A)^T with the bias along D^T's columns: fuserc's terms, for cpu_matmul.
    // Element (i, j) of op(X) lies at i * rs + j * cs.
    auto op_strides = [](int32_t op, int64_t lead) {
      return op == CUBLAS_OP_N ? std::pair<int64_t, int64_t>{1, lead}
                               : std::pair<int64_t, int64_t>{lead, 1};
    };
    auto [a_rs, a_cs] = op_strides(d->transa, a->ld);
    auto [b_rs, b_cs] = op_strides(d->transb, b->ld);
    MatmulProblem p;
    p.m = call.n;
    p.n = call.m;
    p.k = call.k;
    p.batch = out->batch;
    p.a = {dtype_of(b->type), b_cs, b_rs, b->batch_offset, 0};  // op(B)^T
    p.b = {dtype_of(a->type), a_cs, a_rs, a->batch_offset, 0};  // op(A)^T
    p.c = {dtype_of(out->type), out->ld, 1, out->batch_offset, 0};
    p.has_bias = bias;
    p.bias = {dtype_of(d->bias_type == -1 ? out->type : d->bias_type), 0, 1, d->bias_batch_stride,
              0};
    switch (d->epilogue) {
      case CUBLASLT_EPILOGUE_RELU:
      case CUBLASLT_EPILOGUE_RELU_BIAS: p.epilogue = MatmulEpilogue::Relu; break;
      case CUBLASLT_EPILOGUE_GELU:
      case CUBLASLT_EPILOGUE_GELU_BIAS: p.epilogue = MatmulEpilogue::GeluTanh; break;
      default: p.epilogue = MatmulEpilogue::None; break;
    }
    p.allow_tf32 = d->compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    const void* bias_pointer = call.bias;
    g_driver->enqueue(stream, [p, pa, pb, bias_pointer, pd] {
      HeapCountPause quiet;
      cpu_matmul(p, pb, pa, bias_pointer, pd, 1);
    });
    return CUBLAS_STATUS_SUCCESS;
  };
  install_cublaslt_for_testing(&table_);
}

FakeCublasLt::~FakeCublasLt() {
  install_cublaslt_for_testing(nullptr);
  for (auto [p, free] : impl_->live) free(p);  // leaked by the code under test
  g_lt = nullptr;
  g_driver = nullptr;
}

size_t FakeCublasLt::live_objects() const {
  return impl_->live.size();
}

}  // namespace fuserc::testing
