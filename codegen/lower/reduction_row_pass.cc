// Owns the passes of a reduction kernel over a row's elements: row_pass (the vector path of
// reduction_vector_path.cc behind its per-row flag, else the scalar path) and the scalar path
// (registers of a persistent variant; a streaming loop, unrolled, over the row's split blocks).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "codegen/lower/reduction_lowering_impl.h"

namespace fuserc::lower::detail {

kir::Block ReductionLowering::row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                                       const std::vector<int>& roots, const PassBody& body,
                                       size_t full_at) {
  kir::Block scalar = scalar_row_pass(c, row, grid_split, fill_caches, roots, body, full_at);
  if (c.vec == 0) return scalar;
  kir::Block vector = vector_row_pass(c, row, grid_split, fill_caches, roots, body, full_at);
  kir::Block out;
  out.push_back(
      kir::if_then(kir::ref(c.vflag, kir::Type::Bool), std::move(vector), std::move(scalar)));
  return out;
}

ReductionLowering::RowWalk ReductionLowering::row_walk(const Expr& tx, bool grid_split) const {
  if (!grid_split) return {tx, Expr(p_.threads_per_row)};
  Expr by = Expr::index("blockIdx.y", Expr(kMaxSplit));
  Expr gy = Expr::index("gridDim.y", Expr(kMaxSplit + 1));
  return {by * p_.threads_per_row + tx, gy * p_.threads_per_row};
}

kir::Block ReductionLowering::scalar_row_pass(Ctx& c, const Expr& row, bool grid_split,
                                              bool fill_caches, const std::vector<int>& roots,
                                              const PassBody& body, size_t full_at) {
  Expr k = Expr::index(c.k, a_.row_length);
  auto m = coord_map(row, k);
  ElementEmitter em(
      f_, graph_, c.names, [m](const Expr& e) { return subst(e, m); }, c.param_of, c.index_type);
  kir::Block pre, elem;
  em.set_lane(k, &pre, {});
  for (const auto& [node, array] : c.caches)
    if (!fill_caches)
      em.set_override(node, kir::element(array, Expr::index(c.j, Expr(c.elements)),
                                         kir::compute_type_of(graph_.node(node).dtype)));
  use_row_results(em);
  std::vector<int> all = roots;
  if (fill_caches)
    for (const auto& [node, array] : c.caches) all.push_back(node);
  std::vector<kir::ValuePtr> values = em.emit(all, elem);
  if (fill_caches) {
    size_t i = roots.size();
    for (const auto& [node, array] : c.caches)
      elem.push_back(kir::element_store(array, Expr::index(c.j, Expr(c.elements)), values[i++]));
  }
  values.resize(roots.size());
  // A streaming pass that loads U elements per step: the values it folds in wait in register
  // arrays (one per value) until all U are loaded.
  const int unroll = c.elements > 0 ? 1 : p_.unroll;
  Expr u = unroll > 1 ? Expr::index(c.names.fresh("u"), Expr(unroll)) : Expr(0);
  kir::Block held_arrays, fold;
  if (body && unroll > 1) {
    std::vector<kir::ValuePtr> held;
    for (size_t i = 0; i < std::min(values.size(), full_at); ++i) {
      std::string array = c.names.fresh("held");
      held_arrays.push_back(kir::array(values[i]->type, array, unroll));
      elem.push_back(kir::element_store(array, u, values[i]));
      held.push_back(kir::element(array, u, values[i]->type));
    }
    body(held, fold);
  } else if (body) {
    body(values, elem);
  }
  if (full_at != kNoFull)
    for (size_t i = 0; i < full_.size(); ++i) {
      ValueId o = full_[i].first;
      elem.push_back(kir::store(c.param_of(o), full_offset(row, k, i), f_.value(o).dtype,
                                values[full_at + i]));
    }
  kir::Block out = std::move(pre);
  Expr tx = Expr::index(p_.inner ? "threadIdx.x" : "threadIdx.y", Expr(p_.threads_per_row));
  if (c.elements > 0) {
    // `k` has the extent of the row inside the guard, where it is used.
    Expr j = Expr::index(c.j, Expr(c.elements));
    Expr k_value = tx + j * p_.threads_per_row;
    kir::Block loop;
    Expr guard = lt(k_value, a_.row_length);
    if (kir::symbols_used(elem).count(c.k) || !guard.is_const()) {
      loop.push_back(kir::let(c.index_type, c.k, kir::index_value(k_value, c.index_type)));
      // The same test on the local (of its true extent, so that it is not folded away).
      if (!guard.is_const())
        guard =
            lt(Expr::index(c.k, Expr(int64_t{p_.threads_per_row} * c.elements)), a_.row_length);
    }
    append_guarded(loop, guard, std::move(elem));
    out.push_back(
        kir::for_loop(kir::Type::Int32, c.j, Expr(0), Expr(c.elements), std::move(loop), true));
    return out;
  }
  auto [begin, step] = row_walk(tx, grid_split);
  if (unroll == 1) {
    out.push_back(
        kir::for_loop(c.index_type, c.k, begin, a_.row_length, std::move(elem), false, step));
    return out;
  }
  // for (k0 = begin; k0 < L; k0 += U * step): elements k0 + u * step (u < U) below L are
  // loaded (and their full outputs stored) in one unrolled lane loop, then folded in, in
  // order, in another: the same elements in the same order as a loop of `step`. Indices run
  // past L by less than U grid strides (the 32-bit variants leave 2^24 of room).
  std::string k0 = c.names.fresh("k0");
  Expr k_value = Expr::index(k0, a_.row_length) + u * step;
  // The test on the local, of the extent it has before the test (so that it is not folded).
  Expr guard = lt(Expr::index(c.k, a_.row_length + step * unroll), a_.row_length);
  auto lane_loop = [&](kir::Block b) {
    kir::Block lane;
    lane.push_back(kir::let(c.index_type, c.k, kir::index_value(k_value, c.index_type)));
    append_guarded(lane, guard, std::move(b));
    return kir::for_loop(kir::Type::Int32, u.name(), Expr(0), Expr(unroll), std::move(lane),
                         true);
  };
  kir::Block chunk = std::move(held_arrays);
  chunk.push_back(lane_loop(std::move(elem)));
  if (!fold.empty()) chunk.push_back(lane_loop(std::move(fold)));
  out.push_back(kir::for_loop(c.index_type, k0, begin, a_.row_length, std::move(chunk), false,
                              step * unroll));
  return out;
}

}  // namespace fuserc::lower::detail
