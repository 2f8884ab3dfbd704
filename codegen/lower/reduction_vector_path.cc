// Owns the vector path of a reduction kernel's passes over a row, where thread t takes groups
// of V consecutive elements (16 bytes of the widest row-walking dtype): which of the row's
// accesses move whole vectors (direct loads, indirect ones whose index moves the address by a
// multiple of V, full outputs), the per-row test that takes the path (the row's length a
// multiple of V, every vector access aligned), and the pass itself.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "codegen/lower/reduction_lowering_impl.h"
#include "core/base/diagnostics.h"

namespace fuserc::lower::detail {
namespace {

Expr with_index(const Expr& e, const Expr& var, const Expr& value) {
  return substitute(e, [&](const std::string& s) -> std::optional<Expr> {
    if (s == var.name()) return value;
    return std::nullopt;
  });
}

// The vector path's access at `offset` (element k = g * V + lane of the row): its offset at
// lane 0 when the lanes are consecutive elements and the groups V apart (so that the row's
// first group being aligned makes every group aligned), else nothing.
std::optional<Expr> vector_access(const Expr& offset, const Expr& g, const Expr& lane, int width) {
  Expr at0 = with_index(offset, lane, Expr(0));
  if (!(offset - at0 == lane)) return std::nullopt;
  if (!(at0 - with_index(at0, g, Expr(0)) == g * width)) return std::nullopt;
  return at0;
}

// Whether node `id` of `graph` has the same value at every lane of a vector group (element
// k = g * V + lane): none of the loads, positions and conditions it needs moves with the lane.
// An indirect access (gather, index_select) moves as one vector only when its index does not
// vary along the lanes: a gather's index read along the row picks another table row per lane.
bool lane_invariant(const ElementGraph& graph, int id, const std::map<std::string, Expr>& m,
                    const Expr& lane) {
  auto moves = [&](const Expr& e) {
    for (const auto& s : free_symbols(subst(e, m)))
      if (s == lane.name()) return true;
    return false;
  };
  std::set<int> seen;
  std::vector<int> stack = {id};
  while (!stack.empty()) {
    const int at = stack.back();
    stack.pop_back();
    if (!seen.insert(at).second) continue;
    const ENode& n = graph.node(at);
    if (n.kind == ENode::Kind::Load) {
      if (moves(n.offset)) return false;
      for (const auto& c : n.in_bounds)
        if (moves(c)) return false;
    }
    if ((n.kind == ENode::Kind::Iota || n.kind == ENode::Kind::Rand) && moves(n.index))
      return false;
    for (const auto& p : n.predicate)
      if (moves(p)) return false;
    for (int a : n.args) stack.push_back(a);
    for (int d : n.deps) stack.push_back(d);
  }
  return true;
}

}  // namespace

Expr ReductionLowering::vector_k(const Ctx& c, Expr* g, Expr* lane) const {
  *lane = Expr::index(c.lane, Expr(c.vec));
  *g = Expr::index(c.vg, ceildiv(a_.row_length, Expr(c.vec)));
  return *g * c.vec + *lane;
}

std::map<int, Expr> ReductionLowering::vector_loads_at(const Ctx& c, const Expr& row) const {
  Expr g, lane;
  Expr k = vector_k(c, &g, &lane);
  auto m = coord_map(row, k);
  std::map<int, Expr> out;
  std::vector<int> candidates = row_loads();
  for (int node : candidates) {
    if (c.vectors > 0 && !c.caches.count(node)) continue;
    const ENode& n = graph_.node(node);
    auto at = vector_access(subst(n.offset, m), g, lane, c.vec);
    if (!at) continue;
    // Indirect (index_select, gather): a whole row of the table moves as vectors when the
    // index is the same for the group's lanes and moves the address by a multiple of V (tested
    // with the row), else lane by lane.
    if (!n.deps.empty() && (n.deps.size() != 1 || !lane_invariant(graph_, n.deps[0], m, lane) ||
                            !indirect_stride(n, with_index(*at, g, Expr(0)), c.vec)))
      continue;
    out.emplace(node, *at);
  }
  return out;
}

std::optional<ReductionLowering::IndirectBase> ReductionLowering::indirect_stride(
    const ENode& n, const Expr& base, int width) const {
  if (n.deps.size() != 1) return std::nullopt;
  Expr ix = graph_.node(n.deps[0]).index;
  Expr at0 = with_index(base, ix, Expr(0));
  Expr diff = base - at0;
  Expr stride = with_index(diff, ix, Expr(1));
  for (const auto& s : free_symbols(stride))
    if (s == ix.name()) return std::nullopt;
  if (!(diff == ix * stride)) return std::nullopt;
  Expr multiple = eq(mod(stride, Expr(width)), Expr(0));
  if (multiple.is_const(0)) return std::nullopt;
  return IndirectBase{at0, multiple};
}

std::map<size_t, Expr> ReductionLowering::vector_stores_at(const Ctx& c, const Expr& row) const {
  Expr g, lane;
  Expr k = vector_k(c, &g, &lane);
  std::map<size_t, Expr> out;
  for (size_t i = 0; i < full_.size(); ++i) {
    if (dtype_size(f_.value(full_[i].first).dtype) * c.vec > 16) continue;
    if (auto at = vector_access(full_offset(row, k, i), g, lane, c.vec)) out.emplace(i, *at);
  }
  return out;
}

std::optional<kir::ValuePtr> ReductionLowering::vector_condition(const Ctx& c,
                                                                 const Expr& row) const {
  Expr g, lane;
  vector_k(c, &g, &lane);
  std::vector<kir::ValuePtr> conds;
  auto aligned = [&](ValueId v, const Expr& at) {
    conds.push_back(
        kir::call("fz_is_aligned<" + std::to_string(c.vec * dtype_size(f_.value(v).dtype)) + ">",
                  kir::Type::Bool,
                  {kir::ref(c.param_of(v), kir::Type::UInt64),
                   kir::index_value(with_index(at, g, Expr(0)), c.index_type)}));
  };
  for (const auto& [node, at] : vector_loads_at(c, row)) {
    const ENode& n = graph_.node(node);
    if (n.deps.empty()) {
      aligned(n.value, at);
      continue;
    }
    auto ind = indirect_stride(n, with_index(at, g, Expr(0)), c.vec);
    FUSERC_CHECK(ind.has_value(), "an indirect vector load without its base");
    aligned(n.value, ind->base);
    if (!ind->multiple.is_const(1))
      conds.push_back(kir::index_value(ind->multiple, kir::Type::Bool));
  }
  for (const auto& [i, at] : vector_stores_at(c, row)) aligned(full_[i].first, at);
  if (conds.empty()) return std::nullopt;
  Expr multiple = eq(mod(a_.row_length, Expr(c.vec)), Expr(0));
  if (multiple.is_const(0)) return std::nullopt;
  if (!multiple.is_const(1))
    conds.insert(conds.begin(), kir::index_value(multiple, kir::Type::Bool));
  return kir::all_of(std::move(conds));
}

kir::Block ReductionLowering::vector_row_pass(Ctx& c, const Expr& row, bool grid_split,
                                              bool fill_caches, const std::vector<int>& roots,
                                              const PassBody& body, size_t full_at) {
  const int width = c.vec;
  Expr g, lane;
  Expr k = vector_k(c, &g, &lane);
  auto m = coord_map(row, k);
  ElementEmitter em(
      f_, graph_, c.names, [m](const Expr& e) { return subst(e, m); }, c.param_of, c.index_type);
  kir::Block pre, lane_body, decls, stores;
  const bool persistent = c.vectors > 0;
  Expr slot = persistent ? Expr::index(c.j, Expr(c.vectors)) * width + lane : Expr(0);
  std::map<int, std::string> vector_loads;
  std::map<int, Expr> indirect;  // vector loads whose address needs an index: the emitter's
  // The loads this pass reads (a streaming pass may need only some of the row's).
  std::vector<int> used_roots = roots;
  if (fill_caches)
    for (const auto& [node, array] : c.caches) used_roots.push_back(node);
  std::set<int> used = graph_.unconditional_nodes(used_roots);
  if (fill_caches || !persistent)
    for (const auto& [node, at] : vector_loads_at(c, row)) {
      if (!used.count(node)) continue;
      const ENode& n = graph_.node(node);
      std::string vec = c.names.fresh(f_.value(n.value).name + "_vec");
      if (n.deps.empty())
        pre.push_back(kir::vec_load(vec, c.param_of(n.value), at, n.dtype, width));
      else
        indirect.emplace(node, at);
      vector_loads[node] = vec;
    }
  em.set_lane(lane, &pre, vector_loads);
  for (const auto& [node, at] : indirect)
    em.set_indirect_vector_load(node, vector_loads.at(node), at, width);
  for (const auto& [node, array] : c.caches)
    if (!fill_caches)
      em.set_override(node,
                      kir::element(array, slot, kir::compute_type_of(graph_.node(node).dtype)));
  use_row_results(em);
  std::vector<int> all = roots;
  if (fill_caches)
    for (const auto& [node, array] : c.caches) all.push_back(node);
  std::vector<kir::ValuePtr> values = em.emit(all, lane_body);
  if (fill_caches) {
    size_t i = roots.size();
    for (const auto& [node, array] : c.caches)
      lane_body.push_back(kir::element_store(array, slot, values[i++]));
  }
  values.resize(roots.size());
  if (body) body(values, lane_body);
  if (full_at != kNoFull) {
    std::map<size_t, Expr> vstores = vector_stores_at(c, row);
    for (size_t i = 0; i < full_.size(); ++i) {
      ValueId o = full_[i].first;
      DType dt = f_.value(o).dtype;
      auto it = vstores.find(i);
      if (it == vstores.end()) {
        lane_body.push_back(
            kir::store(c.param_of(o), full_offset(row, k, i), dt, values[full_at + i]));
        continue;
      }
      std::string vec = c.names.fresh(f_.value(o).name + "_vec");
      decls.push_back(kir::vec_declare(vec, dt, width));
      lane_body.push_back(kir::lane_store(vec, lane, dt, values[full_at + i]));
      stores.push_back(kir::vec_store(vec, c.param_of(o), it->second, dt, width));
    }
  }
  kir::Block inner = std::move(pre);
  for (auto& s : decls) inner.push_back(std::move(s));
  inner.push_back(
      kir::for_loop(kir::Type::Int32, c.lane, Expr(0), Expr(width), std::move(lane_body), true));
  for (auto& s : stores) inner.push_back(std::move(s));
  Expr tx = Expr::index("threadIdx.x", Expr(p_.threads_per_row));
  if (!persistent) {
    auto [begin, step] = row_walk(tx, grid_split);
    kir::Block out;
    out.push_back(kir::for_loop(c.index_type, c.vg, begin, floordiv(a_.row_length, Expr(width)),
                                std::move(inner), false, step));
    return out;
  }
  Expr j = Expr::index(c.j, Expr(c.vectors));
  kir::Block loop;
  loop.push_back(
      kir::let(c.index_type, c.vg, kir::index_value(j * p_.threads_per_row + tx, c.index_type)));
  // A pass that only reads the registers of a row the threads cover exactly reads no `g`.
  loop.back().maybe_unused = true;
  // The test on the local at the extent the threads cover (so that it is not folded away).
  Expr covered = Expr::index(c.vg, Expr(int64_t{p_.threads_per_row} * c.vectors));
  append_guarded(loop, lt(covered * width, a_.row_length), std::move(inner));
  kir::Block out;
  out.push_back(
      kir::for_loop(kir::Type::Int32, c.j, Expr(0), Expr(c.vectors), std::move(loop), true));
  return out;
}

}  // namespace fuserc::lower::detail
