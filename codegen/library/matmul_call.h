// Owns lowering a matrix product (matmul, linear) to a library step: M, N, K, the batch and the
// strides of A, B, C and the bias as expressions over the symbols, from the operands' shapes
// and memory layouts (declared strides, or contiguous). Batch dimensions a single stride
// reaches form the strided batch of one library call; the rest, when one stride reaches them,
// the calls ("outer"); an operand broadcast over every batch dimension (linear's weight, a
// shared matrix) folds the batch into M instead: one large product. The runtime evaluates
// these for a binding (runtime/library/matmul_problem.h) and its executor runs them.
#pragma once

#include <string>

#include "core/expr/expr.h"
#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

struct MatmulLayout {
  ValueId value = kNoValue;  // the tensor (a buffer); kNoValue: absent (no bias)
  DType dtype = DType::F32;
  Expr row_stride = Expr(0), col_stride = Expr(1);
  Expr batch_stride = Expr(0), outer_stride = Expr(0);
  Expr offset = Expr(0);  // elements from the buffer's start to element (0, 0)
};

enum class MatmulEpilogueKind : uint8_t { None = 0, Relu, Gelu, GeluTanh };

struct MatmulCall {
  std::string name;  // "<graph>_k<i>", as kernels are named
  int segment = -1;
  Expr m, n, k, batch = Expr(1), outer = Expr(1);
  MatmulLayout a, b, c, bias;
  MatmulEpilogueKind epilogue = MatmulEpilogueKind::None;
  bool allow_tf32 = false;
  Expr workspace_bytes;  // how much of the plan's workspace the library may use
  std::string comment;   // what it computes, e.g. "h = linear(x, w1, b1)"
};

// The workspace a library step may use (the plan reserves it in its scratch region).
inline constexpr int64_t kLibraryWorkspaceBytes = 32 << 20;

// Lowers the one matrix product of library segment `s` (whose batch the absorb-views pass left
// within two levels of strides).
MatmulCall lower_matmul(const Fusion& f, const Segment& s, const std::string& name);

}  // namespace fuserc
