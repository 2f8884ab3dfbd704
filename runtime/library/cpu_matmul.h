// Owns running a matrix-product step (runtime/library/matmul_problem.h) on the CPU, as a GPU
// library does it (operands read in their dtype, f32 accumulation for f16/bf16/f32, f64 for
// f64, the bias and epilogue in that type, one rounding to C's dtype): the executor of library
// steps in the emulator, and the reference the fake cuBLASLt of the tests runs.
#pragma once

#include "runtime/library/matmul_problem.h"

namespace fuserc {

// Runs `p` on host memory. Pointers are to element (0, 0) of batch entry (0, 0); `bias` is
// ignored unless p.has_bias. `threads`: host threads to use at most (0: every core; a small
// problem uses one). Each element of C is summed in the order k = 0, 1, ..., so the result has
// the same bits whatever the number of threads. Operands and bias must have float dtypes.
void cpu_matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias, void* c,
                int threads = 0);

}  // namespace fuserc
