#include "core/ir/matmul_geometry.h"

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

// Whether level `outer` (before `inner`) folds into `inner` for every operand.
bool collapses(const MatmulBatchLevel& outer, const MatmulBatchLevel& inner) {
  return outer.a == inner.a * inner.extent && outer.b == inner.b * inner.extent &&
         outer.c == inner.c * inner.extent;
}

}  // namespace

std::vector<Expr> row_major_strides(const std::vector<Expr>& shape) {
  std::vector<Expr> s(shape.size(), Expr(1));
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

MatmulGeometry matmul_geometry(bool linear, const StridedTensor& a, const StridedTensor& b,
                               const StridedTensor& c) {
  MatmulGeometry g;
  // A as a matrix [.., M, K] (a rank-1 a is one row).
  std::vector<Expr> xs = a.shape, xst = a.strides;
  if (xs.size() == 1) {
    xs.insert(xs.begin(), Expr(1));
    xst.insert(xst.begin(), xst[0] * xs[1]);
  }
  // B as a matrix [.., K, N]: linear's weight [N, K] read transposed; a rank-1 b is a column.
  std::vector<Expr> ys, yst;
  if (linear) {
    ys = {b.shape[1], b.shape[0]};
    yst = {b.strides[1], b.strides[0]};
  } else {
    ys = b.shape;
    yst = b.strides;
    if (ys.size() == 1) {
      ys.push_back(Expr(1));
      yst.push_back(Expr(1));
    }
  }
  g.m = xs[xs.size() - 2];
  g.k = xs.back();
  g.n = ys.back();
  g.a_row = xst[xst.size() - 2];
  g.a_col = xst.back();
  g.b_row = yst[yst.size() - 2];
  g.b_col = yst.back();
  // C as [batch.., M, N].
  const size_t m_dim = a.shape.size() > 1 ? 1 : 0;
  const size_t n_dim = linear || b.shape.size() > 1 ? 1 : 0;
  const std::vector<Expr>& cs = c.shape;
  const std::vector<Expr>& cst = c.strides;
  FUSERC_CHECK(cs.size() >= m_dim + n_dim, "a matrix product's result lost dimensions");
  const size_t nb = cs.size() - m_dim - n_dim;
  g.c_col = n_dim ? cst.back() : Expr(1);
  g.c_row = m_dim ? cst[cs.size() - 1 - n_dim] : g.n * g.c_col;
  std::vector<MatmulBatchLevel> dims;
  for (size_t d = nb; d-- > 0;) {
    MatmulBatchLevel bd;
    bd.extent = cs[d];
    bd.c = cst[d];
    // An operand lacking the dimension, or of extent 1 there, is broadcast along it.
    const size_t xb = xs.size() - 2, yb = ys.size() - 2;
    if (d + xb >= nb && !xs[d + xb - nb].is_const(1)) bd.a = xst[d + xb - nb];
    if (d + yb >= nb && !ys[d + yb - nb].is_const(1)) bd.b = yst[d + yb - nb];
    if (!bd.extent.is_const(1)) dims.insert(dims.begin(), bd);
  }
  // B broadcast over every batch dimension, and A's batch dimensions and rows lying one after
  // another: the batch is more rows of one product.
  bool fold = !dims.empty();
  for (size_t i = 0; fold && i < dims.size(); ++i) {
    const MatmulBatchLevel rows{g.m, g.a_row, Expr(0), g.c_row};
    const MatmulBatchLevel& inner = i + 1 < dims.size() ? dims[i + 1] : rows;
    fold = dims[i].b.is_const(0) && dims[i].a == inner.a * inner.extent &&
           dims[i].c == inner.c * inner.extent;
  }
  if (fold) {
    for (const MatmulBatchLevel& d : dims) g.m = g.m * d.extent;
    return g;
  }
  // The rest: groups of dimensions one stride reaches, innermost first.
  for (size_t i = dims.size(); i-- > 0;) {
    if (!g.levels.empty() && collapses(dims[i], g.levels.back())) {
      g.levels.back().extent = g.levels.back().extent * dims[i].extent;
      continue;
    }
    g.levels.push_back(dims[i]);
  }
  return g;
}

}  // namespace fuserc
