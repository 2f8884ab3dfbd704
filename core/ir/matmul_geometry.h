// Owns how a matrix product (matmul, linear) lies in memory as a library call takes it: M, N,
// K, each operand's row and column strides, and its batch dimensions folded into M (an operand
// broadcast over the whole batch beside one whose batch lies row after row) or grouped into
// levels that one stride each reaches (a library call's strided batch, then fuserc's loop). The
// absorb-views pass asks it whether a view keeps the levels a plan can run; lowering fills the
// library call from it.
#pragma once

#include <vector>

#include "core/expr/expr.h"

namespace fuserc {

// A tensor as the product reads or writes it: its extents and strides (elements).
struct StridedTensor {
  std::vector<Expr> shape, strides;
};

// One level of the batch: its extent and the stride of A, B and C along it.
struct MatmulBatchLevel {
  Expr extent;
  Expr a = Expr(0), b = Expr(0), c = Expr(0);
};

struct MatmulGeometry {
  Expr m, n, k;
  Expr a_row, a_col, b_row, b_col, c_row, c_col;
  std::vector<MatmulBatchLevel> levels;  // innermost first; empty: one product
};

// The most levels a plan runs: the library's strided batch and one loop of fuserc's.
constexpr size_t kMaxMatmulBatchLevels = 2;

// `a` [.., M, K] (rank 1: one row), `b` [.., K, N] (rank 1: a column), or for `linear` the
// weight [N, K]; `c` the result [batch.., M, N] (without the dims a rank-1 operand lacks).
MatmulGeometry matmul_geometry(bool linear, const StridedTensor& a, const StridedTensor& b,
                               const StridedTensor& c);

// Row-major strides of `shape`.
std::vector<Expr> row_major_strides(const std::vector<Expr>& shape);

}  // namespace fuserc
