// Owns the description of one matrix-product step of a plan as the runtime executes it, with
// every size already evaluated for a binding; shared by its executors (the CPU one,
// runtime/library/cpu_matmul.h, and cuBLASLt on a GPU) and the fake library of the tests.
//
//   C[o][b] = epilogue(A[o][b] * B[o][b] + bias[o][b]), rounded to C's dtype,
//   for every o < outer and b < batch, where A is m x k, B is k x n, C is m x n.
//
// Element (i, j) of batch entry (o, b) of an operand lies at
//   o * outer_stride + b * batch_stride + i * row_stride + j * col_stride   (elements)
// from its base pointer. A stride may be 0 (a broadcast). `batch` products are one strided
// batched call of a library; `outer` counts the calls (a batch whose entries one batch stride
// cannot reach, e.g. a broadcast over one of two batch dimensions).
//
// Arithmetic (the contract's): products accumulate in f32 for f16, bf16 and f32 operands (at
// full f32 precision unless allow_tf32), in f64 for f64; the bias (a row of n, added to every
// row) is added in that type, then the epilogue, then one rounding to C's dtype (to nearest
// even). k = 0 gives the bias (or 0) through the epilogue.
#pragma once

#include <cstdint>

#include "core/base/dtype.h"

namespace fuserc {

enum class MatmulEpilogue : uint8_t { None = 0, Relu, Gelu, GeluTanh };

struct MatmulOperand {
  DType dtype = DType::F32;
  int64_t row_stride = 0;
  int64_t col_stride = 1;
  int64_t batch_stride = 0;
  int64_t outer_stride = 0;
};

struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  int64_t outer = 1;
  MatmulOperand a, b, c;
  bool has_bias = false;
  MatmulOperand bias;  // element j of the row: j * col_stride (row_stride unused)
  MatmulEpilogue epilogue = MatmulEpilogue::None;
  bool allow_tf32 = false;
};

}  // namespace fuserc
