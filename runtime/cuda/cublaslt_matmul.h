// Owns running one matrix-product step (runtime/library/matmul_problem.h) on a GPU with
// cuBLASLt: everything the library needs is set up when the runner is made (at bind time: the
// handle of the context, the descriptors, the layouts, the algorithm), so that run() only
// enqueues cublasLtMatmul calls on a stream (no synchronisation, no allocation: capturable in
// a CUDA graph).
//
// cuBLASLt is column-major. A row-major C is computed as C^T = B^T A^T (the library's A is our
// B, its B our A, its D our C^T), a column-major C directly; an operand is row-major when its
// column stride is 1 and column-major when its row stride is 1 (with its other stride at least
// the length of its rows or columns); anything else is refused (the compiler copies such an
// operand first). The bias is a row of n added to every row of C: cuBLASLt adds a vector along
// the rows of its D, which is our C^T only when C is row-major, so a bias needs a row-major C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "runtime/cuda/cublaslt_api.h"
#include "runtime/library/matmul_problem.h"

namespace fuserc::cuda {

class MatmulRunner {
 public:
  // Sets up `p` for the calling thread's current CUDA context. `workspace_grant`: the most
  // workspace bytes run() may be given (the algorithm is chosen within it).
  // `pointer_alignment`: what the pointers given to run() are aligned to, in bytes (a power of
  // two; the plan's buffers are 256-aligned); algorithms that need more are not chosen.
  // Throws CudaError: NoLibrary without cuBLASLt; InvalidArgument for a product the library
  // cannot express or has no algorithm for (naming it); Driver, OutOfMemory if a call fails.
  MatmulRunner(const MatmulProblem& p, size_t workspace_grant, uint32_t pointer_alignment = 256);
  ~MatmulRunner();
  MatmulRunner(const MatmulRunner&) = delete;
  MatmulRunner& operator=(const MatmulRunner&) = delete;

  const MatmulProblem& problem() const { return problem_; }
  // The workspace the chosen algorithm needs (at most the grant); run() must get this much.
  size_t workspace_bytes() const { return workspace_bytes_; }
  // False when the library cannot apply the problem's epilogue (MatmulEpilogue::Gelu, the erf
  // form: cuBLASLt's GELU is the tanh approximation). The bias is still added by the library;
  // the caller applies the epilogue to C after run().
  bool epilogue_in_library() const { return epilogue_in_library_; }

  // Enqueues C = epilogue(A * B + bias) on `stream`: one cublasLtMatmul per outer entry, the
  // pointers advanced by the outer strides. Pointers are to element (0, 0) of entry (0, 0), on
  // the device, aligned to pointer_alignment; `bias` is ignored unless the problem has one;
  // `workspace` holds workspace_bytes(). The bias pointer is set in the descriptor per call, so
  // calls of one runner are serialised (by a mutex); runners are independent.
  void run(const void* a, const void* b, const void* bias, void* c, void* workspace,
           CUstream stream) const;

 private:
  void release() noexcept;

  MatmulProblem problem_;
  const CublasLtApi* api_ = nullptr;  // the table it was made with (tests swap tables)
  bool empty_ = false;                // nothing to compute (m, n, batch or outer is 0)
  bool swap_ = false;                 // C row-major: the library's A is our B
  bool epilogue_in_library_ = true;
  uint32_t pointer_alignment_ = 256;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t lt_a_ = nullptr, lt_b_ = nullptr, lt_d_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_bytes_ = 0;
  union Scalar {
    float f32;
    double f64;
  } alpha_{}, beta_{};
  // Byte steps between outer entries.
  int64_t a_outer_ = 0, b_outer_ = 0, c_outer_ = 0, bias_outer_ = 0;
  mutable std::mutex run_mutex_;
};

}  // namespace fuserc::cuda
