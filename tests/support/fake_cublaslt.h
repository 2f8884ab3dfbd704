// Owns a fake cuBLASLt for tests: a complete CublasLtApi table (runtime/cuda/cublaslt_api.h)
// installed for the lifetime of a FakeCublasLt, next to a FakeDriver. Descriptors, layouts and
// preferences are host structs holding what was set (an attribute of the wrong size is
// refused, as the library does). The heuristic checks that the product is one the library can
// run (shapes of op(A), op(B) and D agree, leading dimensions, batch counts, the types for the
// compute type, the epilogue and the bias type) and returns one algorithm, whose workspace need
// is configurable, unless told to find none. cublasLtMatmul rebuilds the product from the
// descriptor and layouts in the library's own column-major terms and runs cpu_matmul on the
// FakeDriver's device memory (host memory) on the stream (recorded into the graph while it is
// captured), so a wrong mapping in the runtime gives wrong numbers, as it would on a GPU. It
// refuses pointers less aligned than the preference promised. Every call is recorded.
//
// Assumed of the real library (not checkable here): CUBLASLT_EPILOGUE_GELU is the tanh
// approximation; a bias may be f32 when D is f16 or bf16. One FakeCublasLt at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fake_driver.h"
#include "runtime/cuda/cublaslt_api.h"

namespace fuserc::testing {

// One cublasLtMatmul, in the library's terms: D (m x n) = op(A) (m x k) * op(B) (k x n).
struct FakeMatmulCall {
  cuda::cublasLtHandle_t handle = nullptr;
  int64_t m = 0, n = 0, k = 0;
  int32_t batch = 1;
  int32_t transa = 0, transb = 0;
  int64_t lda = 0, ldb = 0, ldd = 0;
  int64_t batch_offset_a = 0, batch_offset_b = 0, batch_offset_d = 0;
  uint32_t epilogue = 0;
  int compute_type = 0, scale_type = 0;
  int a_type = 0, b_type = 0, d_type = 0;
  int bias_type = -1;  // as set (-1: unset, D's type)
  const void* a = nullptr;
  const void* b = nullptr;
  const void* bias = nullptr;
  void* d = nullptr;
  size_t workspace_bytes = 0;
  cuda::CUstream stream = nullptr;
};

struct FakeHeuristicCall {
  uint64_t max_workspace = 0;
  uint32_t min_alignment[4] = {};  // A, B, C, D
  uintptr_t bias_pointer = 0;
};

class FakeCublasLt {
 public:
  explicit FakeCublasLt(FakeDriver& driver);
  ~FakeCublasLt();
  FakeCublasLt(const FakeCublasLt&) = delete;
  FakeCublasLt& operator=(const FakeCublasLt&) = delete;

  const cuda::CublasLtApi& table() const { return table_; }

  // Configuration: the workspace the algorithm needs (when the preference allows that much;
  // else it returns one that needs none), and a heuristic that finds nothing
  // (CUBLAS_STATUS_NOT_SUPPORTED, as the library answers).
  size_t workspace_need = 0;
  bool no_algorithm = false;

  // What happened.
  std::vector<cuda::CUcontext> handle_contexts;  // the current context of each cublasLtCreate
  std::vector<FakeHeuristicCall> heuristics;
  std::vector<FakeMatmulCall> matmuls;
  // Descriptors, layouts and preferences created and not destroyed.
  size_t live_objects() const;

  // Implementation, used by the table's functions.
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  cuda::CublasLtApi table_{};
  std::unique_ptr<Impl> impl_;
};

}  // namespace fuserc::testing
