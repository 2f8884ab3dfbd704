// Owns the runtime's view of cuBLASLt: the few types, enums and constants fuserc uses (declared
// here with the values of cublasLt.h, cublas_api.h and library_types.h, so that the runtime
// builds without the CUDA Toolkit's headers) and the table of its functions, loaded with dlopen
// the first time a plan with a matrix product is bound on a GPU. The runtime links no CUDA
// library: a machine without cuBLASLt loads and runs every package without products, and gets
// one clear error (CudaError NoLibrary) when it binds one that has them.
//
// The table is a struct of function pointers: tests install a fake one
// (install_cublaslt_for_testing, tests/support/fake_cublaslt.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/cuda/driver_api.h"

namespace fuserc::cuda {

using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
// The library's descriptors are pointers to opaque structs of its own.
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque*;

// cublasLtMatmulAlgo_t: semi-opaque, passed by value.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};

// cublasLtMatmulHeuristicResult_t.
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "as in cublasLt.h");

// cublasStatus_t
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_INITIALIZED = 1;
inline constexpr cublasStatus_t CUBLAS_STATUS_ALLOC_FAILED = 3;
inline constexpr cublasStatus_t CUBLAS_STATUS_INVALID_VALUE = 7;
inline constexpr cublasStatus_t CUBLAS_STATUS_ARCH_MISMATCH = 8;
inline constexpr cublasStatus_t CUBLAS_STATUS_EXECUTION_FAILED = 13;
inline constexpr cublasStatus_t CUBLAS_STATUS_INTERNAL_ERROR = 14;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;

// cudaDataType_t (library_types.h)
inline constexpr int CUDA_R_32F = 0;
inline constexpr int CUDA_R_64F = 1;
inline constexpr int CUDA_R_16F = 2;
inline constexpr int CUDA_R_16BF = 14;

// cublasComputeType_t (cublas_api.h)
inline constexpr int CUBLAS_COMPUTE_32F = 68;
inline constexpr int CUBLAS_COMPUTE_32F_FAST_TF32 = 77;
inline constexpr int CUBLAS_COMPUTE_64F = 70;

// cublasOperation_t
inline constexpr int32_t CUBLAS_OP_N = 0;
inline constexpr int32_t CUBLAS_OP_T = 1;

// cublasLtMatmulDescAttributes_t (the type each attribute takes in brackets)
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSA = 3;              // int32_t
inline constexpr int CUBLASLT_MATMUL_DESC_TRANSB = 4;              // int32_t
inline constexpr int CUBLASLT_MATMUL_DESC_EPILOGUE = 7;            // uint32_t
inline constexpr int CUBLASLT_MATMUL_DESC_BIAS_POINTER = 8;        // const void*
inline constexpr int CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE = 10;  // int64_t
inline constexpr int CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE = 26;     // int32_t (cudaDataType_t)

// cublasLtEpilogue_t
inline constexpr uint32_t CUBLASLT_EPILOGUE_DEFAULT = 1;
inline constexpr uint32_t CUBLASLT_EPILOGUE_RELU = 2;
inline constexpr uint32_t CUBLASLT_EPILOGUE_BIAS = 4;
inline constexpr uint32_t CUBLASLT_EPILOGUE_RELU_BIAS = 6;
inline constexpr uint32_t CUBLASLT_EPILOGUE_GELU = 32;
inline constexpr uint32_t CUBLASLT_EPILOGUE_GELU_BIAS = 36;

// cublasLtMatrixLayoutAttribute_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_TYPE = 0;                  // uint32_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_ORDER = 1;                 // int32_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_ROWS = 2;                  // uint64_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_COLS = 3;                  // uint64_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_LD = 4;                    // int64_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT = 5;           // int32_t
inline constexpr int CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET = 6;  // int64_t
// cublasLtOrder_t
inline constexpr int32_t CUBLASLT_ORDER_COL = 0;

// cublasLtMatmulPreferenceAttributes_t
inline constexpr int CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1;    // uint64_t
inline constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES = 5;  // uint32_t
inline constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES = 6;  // uint32_t
inline constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES = 7;  // uint32_t
inline constexpr int CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES = 8;  // uint32_t

// The cuBLASLt functions the runtime calls. Enum parameters are ints (the C ABI passes an enum
// as an int). cublasLtGetStatusName and cublasLtGetStatusString may be null (libraries before
// they existed).
struct CublasLtApi {
  cublasStatus_t (*cublasLtCreate)(cublasLtHandle_t* handle);
  cublasStatus_t (*cublasLtDestroy)(cublasLtHandle_t handle);
  size_t (*cublasLtGetVersion)();
  const char* (*cublasLtGetStatusName)(cublasStatus_t status);
  const char* (*cublasLtGetStatusString)(cublasStatus_t status);
  cublasStatus_t (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t* desc, int compute_type,
                                             int scale_type);
  cublasStatus_t (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t desc);
  cublasStatus_t (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t desc, int attribute,
                                                   const void* value, size_t bytes);
  cublasStatus_t (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t* layout, int type,
                                               uint64_t rows, uint64_t cols, int64_t ld);
  cublasStatus_t (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t layout);
  cublasStatus_t (*cublasLtMatrixLayoutSetAttribute)(cublasLtMatrixLayout_t layout, int attribute,
                                                     const void* value, size_t bytes);
  cublasStatus_t (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t* pref);
  cublasStatus_t (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t pref);
  cublasStatus_t (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t pref,
                                                         int attribute, const void* value,
                                                         size_t bytes);
  cublasStatus_t (*cublasLtMatmulAlgoGetHeuristic)(
      cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
      cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
      cublasLtMatmulPreference_t pref, int requested, cublasLtMatmulHeuristicResult_t* results,
      int* returned);
  cublasStatus_t (*cublasLtMatmul)(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                   const void* alpha, const void* a, cublasLtMatrixLayout_t a_desc,
                                   const void* b, cublasLtMatrixLayout_t b_desc, const void* beta,
                                   const void* c, cublasLtMatrixLayout_t c_desc, void* d,
                                   cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo,
                                   void* workspace, size_t workspace_bytes, CUstream stream);
};

// The cuBLASLt table, loaded on first use (once per process). Throws CudaError (kind NoLibrary)
// with one line naming the library and how to provide it when it cannot be loaded or lacks a
// function the runtime calls.
const CublasLtApi& cublaslt();

// Replaces the table until called again with nullptr (then the real library is loaded on next
// use). For tests only; the table must outlive its use.
void install_cublaslt_for_testing(const CublasLtApi* table);

// Counts install_cublaslt_for_testing calls, so that handles made with one table are not used
// with another.
uint64_t cublaslt_generation();

// The library dlopen loads: FUSERC_LIBCUBLASLT if set, else libcublasLt.so.13 (then
// libcublasLt.so.12 and libcublasLt.so are tried too).
std::string cublaslt_library_name();

// Loads `path` (or, when empty, what cublaslt() would) with dlopen and resolves the table,
// without caching or installing it: the loading cublaslt() does once. Throws as cublaslt() does.
// For tests of the messages.
CublasLtApi load_cublaslt(const std::string& path);

// "CUBLAS_STATUS_NOT_SUPPORTED (the functionality requested is not supported)" when the library
// can say, else the number.
std::string cublas_status_text(cublasStatus_t s);

}  // namespace fuserc::cuda
