#include "codegen/lower/reduction_lowering.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "codegen/lower/element_emitter.h"
#include "codegen/lower/element_graph.h"
#include "codegen/lower/lowering_common.h"
#include "codegen/lower/reduction_accumulator.h"
#include "core/base/diagnostics.h"
#include "core/schedule/launch_formulas.h"
#include "core/schedule/reduction_buckets.h"

namespace fuserc::lower {
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

class ReductionLowering {
 public:
  ReductionLowering(const Fusion& f, const Segment& s, const ReductionAnalysis& a,
                    SchedulerKind kind)
      : f_(f), seg_(s), kind_(kind), a_(a), graph_(f, s.inputs) {
    FUSERC_CHECK(a_.ok(), "lowering a reduction group the analysis rejects: " + a_.error);
    // (An axis of extent 1 has coordinate 0: broadcasting reads it so too.)
    for (size_t d = 0; d < a_.domain.size(); ++d)
      coords_.push_back(a_.domain[d].is_const(1)
                            ? Expr(0)
                            : Expr::index("fz_c" + std::to_string(d), a_.domain[d]));
    Expr row_linear = row_linear_coords();
    for (size_t r = 0; r < a_.reductions.size(); ++r) {
      const auto& info = a_.reductions[r];
      for (size_t i = 0; i < info.outputs.size(); ++i) {
        const Value& out = f_.value(info.outputs[i]);
        graph_.set_reduced(info.outputs[i], static_cast<int>(r), static_cast<int>(i),
                           coords_of(out, row_linear));
      }
    }
    for (const auto& info : a_.reductions)
      input_nodes_.push_back(graph_.value_at(info.input, coords_));
    for (ValueId o : a_.full_outputs)
      full_.emplace_back(o, graph_.value_at(o, full_coords(o, coords_)));
    for (ValueId o : a_.reduced_outputs)
      reduced_.emplace_back(o, graph_.value_at(o, coords_of(f_.value(o), row_linear)));
  }

  std::vector<LoweredKernel> run(const std::string& name) {
    Expr max_index = a_.rows * a_.row_length;
    for (ValueId v : seg_.inputs)
      if (!f_.value(v).scalar_input) max_index = max(max_index, addressable_extent(f_.value(v)));
    // Row and element indices run past their ends by at most a grid stride.
    int64_t limit = int64_t{2147483647} - (int64_t{1} << 24);
    bool need32 = max_index.lo() <= limit;
    bool need64 = max_index.hi() > limit;
    Expr fits32 = le(max_index, Expr(limit));
    const bool normalization = kind_ == SchedulerKind::Normalization;
    std::vector<ReductionParams> buckets =
        reduction_variants(a_, kind_, vector_width(), cached_words(), graph_.nodes().size() > 64,
                           reduction_unroll(graph_.nodes().size(), vector_width()));
    std::vector<LoweredKernel> out;
    size_t variants = (need32 ? buckets.size() : 0) + (need64 ? 1 : 0);
    auto add = [&](const ReductionParams& params, bool index64, Expr when, std::string reason) {
      p_ = params;
      std::string suffix = index64 ? "_i64" : "_" + params.bucket;
      LoweredKernel lk = build(variants > 1 ? name + suffix : name, index64,
                               index64 ? 0 : params.elements_per_thread);
      lk.selected_when = when;
      lk.reason = std::move(reason);
      out.push_back(std::move(lk));
    };
    if (need32) {
      for (size_t i = 0; i < buckets.size(); ++i) {
        const ReductionParams& b = buckets[i];
        bool last = i + 1 == buckets.size();
        Expr bound = p_inner_bound(b);
        Expr when = last ? Expr(1) : le(bound, Expr(b.limit));
        if (need64) when = when * fits32;
        std::string reason = last ? std::string()
                                  : (b.inner ? "row length " : "columns ") + bound.str() +
                                        " <= " + std::to_string(b.limit);
        if (need64)
          reason += std::string(reason.empty() ? "" : "; ") + "every index fits in 32 bits";
        add(b, false, when, reason);
      }
    }
    // The 64-bit variant takes anything: streaming passes (a normalization re-reads its rows
    // with 1024 threads per row), split like the last 32-bit bucket.
    if (need64) {
      ReductionParams wide = buckets.back();
      wide.elements_per_thread = 0;
      if (normalization) {
        wide.bucket = "multi";
        wide.threads_per_row = 1024;
        wide.rows_per_block = 1;
      }
      add(wide, true, Expr(1), "");
    }
    return out;
  }

 private:
  const Fusion& f_;
  const Segment& seg_;
  SchedulerKind kind_;
  ReductionParams p_;  // of the variant being built

  // The compiled configuration in words.
  std::string variant_note(int elements, bool index64, int vec) const {
    std::string t = std::to_string(p_.threads_per_row), r = std::to_string(p_.rows_per_block);
    std::string s = p_.bucket + ": ";
    if (p_.inner)
      s +=
          t + " threads per row, " + r + (p_.rows_per_block == 1 ? " row" : " rows") + " per block";
    else
      s += r + " columns per block, " + t + " threads across the reduced rows";
    if (elements > 0)
      s += ", " + std::to_string(elements) + " elements per thread kept in registers";
    if (vec > 0)
      s += ", " + std::to_string(vec) +
           "-element (16-byte) accesses for rows that are aligned and a multiple of " +
           std::to_string(vec) + " long";
    if (p_.grid) s += ", rows split across blocks when they are few";
    return s + (index64 ? ", 64-bit indexing" : "");
  }

  // What a bucket's limit bounds: the row length (inner) or the kept columns (outer).
  Expr p_inner_bound(const ReductionParams& b) const { return b.inner ? a_.row_length : a_.rows; }

  // The loads a persistent variant keeps in registers: every unconditional load that walks
  // along the row.
  std::vector<int> row_loads() const {
    std::set<int> unconditional = unconditional_nodes();
    Expr row = Expr::index("fz_row", a_.rows);
    Expr kk = Expr::index("fz_k", a_.row_length);
    auto m = coord_map(row, kk);
    std::vector<int> out;
    for (size_t id = 0; id < graph_.nodes().size(); ++id) {
      const ENode& n = graph_.node(id);
      if (n.kind != ENode::Kind::Load || !unconditional.count(static_cast<int>(id))) continue;
      bool along_row = false;
      for (const auto& s : free_symbols(subst(n.offset, m))) along_row = along_row || s == "fz_k";
      if (along_row) out.push_back(static_cast<int>(id));
    }
    return out;
  }
  // Elements of the widest row-walking dtype in 16 bytes.
  int vector_width() const {
    size_t widest = 1;
    for (int id : row_loads())
      widest = std::max(widest, dtype_size(f_.value(graph_.node(id).value).dtype));
    if (row_loads().empty()) widest = 4;
    return static_cast<int>(std::max<size_t>(1, 16 / widest));
  }
  // Register words per row element over the cached arrays (kept in their compute types).
  double cached_words() const {
    double words = 0;
    for (int id : row_loads())
      words +=
          static_cast<double>(kernel_type_size(kir::compute_type_of(graph_.node(id).dtype))) / 4;
    return words;
  }
  const ReductionAnalysis& a_;
  ElementGraph graph_;
  std::vector<Expr> coords_;
  std::vector<int> input_nodes_;
  std::vector<std::pair<ValueId, int>> full_, reduced_;

  // The row's linear index over the kept dims, in the coordinate variables.
  Expr row_linear_coords() const {
    std::vector<Expr> kept, extents;
    for (int64_t d : a_.kept_dims) {
      kept.push_back(coords_[d]);
      extents.push_back(a_.domain[d]);
    }
    return linearize(kept, extents);
  }
  // Coordinates in a full output (the domain's shape, or a view of it in another shape: the
  // element at the same linear index) for the domain coordinates `c`.
  std::vector<Expr> full_coords(ValueId o, const std::vector<Expr>& c) const {
    const Value& v = f_.value(o);
    if (v.shape == a_.domain) return c;
    return delinearize(linearize(c, a_.domain), v.shape);
  }
  // Coordinates in a value with one element per row (any placement of 1s).
  static std::vector<Expr> coords_of(const Value& v, const Expr& row_linear) {
    return delinearize(row_linear, v.shape);
  }

  // One per reduction, except that a sum folded into its max (an online log-sum-exp) is the
  // max's accumulator too.
  std::vector<Accumulator> accumulators(NameTable& names) const {
    std::vector<Accumulator> accs;
    std::map<int, size_t> acc_of;  // reduction -> index into accs
    for (size_t r = 0; r < a_.reductions.size(); ++r) {
      if (int m = a_.reductions[r].online_max; m >= 0) {
        make_online(accs[acc_of.at(m)], static_cast<int>(r));
        continue;
      }
      acc_of[static_cast<int>(r)] = accs.size();
      accs.push_back(
          make_accumulator(f_, a_.reductions[r], static_cast<int>(r), input_nodes_[r], names));
    }
    return accs;
  }

  // ---------------------------------------------------------------- the kernel

  struct Ctx {
    kir::Type index_type;
    int elements = 0;  // persistent: elements per thread kept in registers
    NameTable names;
    std::function<std::string(ValueId)> param_of;
    std::vector<Accumulator> accs;
    std::string row, row_base, k, j, active, counters, last, g;
    std::map<int, std::string> caches;  // load node -> register array
    // The vector path (vec > 0: its width): groups of `vec` consecutive elements, `vectors` per
    // thread, taken where the local `vflag` holds (the row aligned, its length a multiple).
    int vec = 0, vectors = 0;
    std::string vflag, vg, lane;
  };

  std::map<std::string, Expr> coord_map(const Expr& row, const Expr& k) const {
    std::map<std::string, Expr> m;
    std::vector<Expr> kept = delinearize(row, a_.kept_extents());
    std::vector<Expr> red = delinearize(k, a_.reduced_extents());
    auto set = [&](int64_t d, const Expr& e) {
      if (coords_[d].is_index()) m[coords_[d].name()] = e;
    };
    for (size_t i = 0; i < a_.kept_dims.size(); ++i) set(a_.kept_dims[i], kept[i]);
    for (size_t i = 0; i < a_.reduced_dims.size(); ++i) set(a_.reduced_dims[i], red[i]);
    return m;
  }

  // The nodes every element of a row computes: the reductions' inputs and the results
  // broadcast back (see ElementGraph::unconditional_nodes).
  std::set<int> unconditional_nodes() const {
    std::vector<int> roots(input_nodes_.begin(), input_nodes_.end());
    for (const auto& [o, n] : full_) roots.push_back(n);
    return graph_.unconditional_nodes(roots);
  }

  // One pass over the row's elements computing `roots`: `body` gets their values and the
  // element block. Persistent kernels unroll over the registers; others stride.
  using PassBody = std::function<void(const std::vector<kir::ValuePtr>&, kir::Block&)>;

  // The offset of full output `i` at element `k` of `row`.
  Expr full_offset(const Expr& row, const Expr& k, size_t i) const {
    auto m = coord_map(row, k);
    std::vector<Expr> oc;
    for (const auto& x : coords_) oc.push_back(subst(x, m));
    Expr linear = subst(linearize(coords_, a_.domain), m);
    ValueId o = full_[i].first;
    return output_offset(f_, o, full_coords(o, oc), linear);
  }

  // A pass over the row (see scalar_row_pass); with a vector path, both behind its flag.
  // `full_at` (kNoFull: none): roots from there on are the full outputs' nodes, stored at
  // every element.
  static constexpr size_t kNoFull = static_cast<size_t>(-1);
  kir::Block row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                      const std::vector<int>& roots, const PassBody& body, size_t full_at) {
    kir::Block scalar = scalar_row_pass(c, row, grid_split, fill_caches, roots, body, full_at);
    if (c.vec == 0) return scalar;
    kir::Block vector = vector_row_pass(c, row, grid_split, fill_caches, roots, body, full_at);
    kir::Block out;
    out.push_back(
        kir::if_then(kir::ref(c.vflag, kir::Type::Bool), std::move(vector), std::move(scalar)));
    return out;
  }

  // The vector path's element index `g * V + lane` and its coordinate map.
  Expr vector_k(const Ctx& c, Expr* g, Expr* lane) const {
    *lane = Expr::index(c.lane, Expr(c.vec));
    *g = Expr::index(c.vg, ceildiv(a_.row_length, Expr(c.vec)));
    return *g * c.vec + *lane;
  }

  // The vector path's accesses: loads along the row (cached ones in a persistent variant;
  // node -> offset at lane 0) and full outputs (index -> offset at lane 0) that move 16 bytes
  // or less per vector.
  std::map<int, Expr> vector_loads_at(const Ctx& c, const Expr& row) const {
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
      // index moves the address by a multiple of V (tested with the row), else lane by lane.
      if (!n.deps.empty() && !indirect_stride(n, with_index(*at, g, Expr(0)), c.vec)) continue;
      out.emplace(node, *at);
    }
    return out;
  }

  // An indirect load's base (`base`, its offset at the row's first group) with its one index
  // variable `ix` at 0, and the condition that `ix` moves it by a multiple of `width` (the
  // offset linear in `ix`); nothing when it is not so or never holds.
  struct IndirectBase {
    Expr base, multiple;
  };
  std::optional<IndirectBase> indirect_stride(const ENode& n, const Expr& base, int width) const {
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
  std::map<size_t, Expr> vector_stores_at(const Ctx& c, const Expr& row) const {
    Expr g, lane;
    Expr k = vector_k(c, &g, &lane);
    std::map<size_t, Expr> out;
    for (size_t i = 0; i < full_.size(); ++i) {
      if (dtype_size(f_.value(full_[i].first).dtype) * c.vec > 16) continue;
      if (auto at = vector_access(full_offset(row, k, i), g, lane, c.vec)) out.emplace(i, *at);
    }
    return out;
  }

  // The vector path's test for a row: its length a multiple of V and the first group of every
  // vector access aligned; nothing when no access would be a vector.
  std::optional<kir::ValuePtr> vector_condition(const Ctx& c, const Expr& row) const {
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

  // The vector path of a pass: thread t takes groups of V consecutive elements, element
  // k = g * V + lane. Persistent: g = j * T + t (j < vectors), kept at j * V + lane in the
  // registers, cached loads (when filling) and full outputs moving whole vectors. Streaming:
  // g = t, t + T, ... (over the row's split blocks too), loads moving whole vectors.
  kir::Block vector_row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                             const std::vector<int>& roots, const PassBody& body, size_t full_at) {
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
      Expr begin = tx, step(p_.threads_per_row);
      if (grid_split) {
        Expr by = Expr::index("blockIdx.y", Expr(kMaxSplit));
        Expr gy = Expr::index("gridDim.y", Expr(kMaxSplit + 1));
        begin = by * p_.threads_per_row + tx;
        step = gy * p_.threads_per_row;
      }
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

  kir::Block scalar_row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                             const std::vector<int>& roots, const PassBody& body, size_t full_at) {
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
    Expr begin = tx, step(p_.threads_per_row);
    if (grid_split) {
      Expr by = Expr::index("blockIdx.y", Expr(kMaxSplit));
      Expr gy = Expr::index("gridDim.y", Expr(kMaxSplit + 1));
      begin = by * p_.threads_per_row + tx;
      step = gy * p_.threads_per_row;
    }
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

  std::map<int, kir::ValuePtr> reduced_values_;  // Reduced node -> the finalized local

  // An emitter after a phase: the reductions' results (and the reciprocals of divisors) of the
  // row are locals, not computed again.
  void use_row_results(ElementEmitter& em) const {
    for (const auto& [node, value] : reduced_values_) em.set_override(node, value);
    for (const auto& [node, value] : reciprocals_) em.set_reciprocal(node, value);
  }

  // `locals`: the accumulator's results (an online log-sum-exp: the max's, then the sum's).
  void set_reduced_values(const Accumulator& acc, const std::vector<std::string>& locals) {
    for (size_t id = 0; id < graph_.nodes().size(); ++id) {
      const ENode& n = graph_.node(id);
      if (n.kind != ENode::Kind::Reduced) continue;
      int at = n.reduction == acc.reduction                             ? n.output
               : (acc.online_sum >= 0 && n.reduction == acc.online_sum) ? 1
                                                                        : -1;
      if (at >= 0)
        reduced_values_[static_cast<int>(id)] = kir::ref(locals[at], kir::compute_type_of(n.dtype));
    }
  }

  std::map<int, kir::ValuePtr> reciprocals_;  // Div node -> its divisor's reciprocal (local)

  // An f32 division by the sum of an online log-sum-exp (softmax's e / s) multiplies by the
  // sum's reciprocal, computed once per row (an IEEE division per element costs about ten
  // instructions). The sum lies in [1, row length] or is NaN, so 1 / s neither overflows nor
  // underflows, and x * (1 / s) is within 1.5 ulp of x / s (the oracle allows 2e-5 relative for
  // f32). f64 divisions (and f16 arithmetic) stay divisions.
  void add_reciprocals(Ctx& c, kir::Block& b, const Accumulator& acc) {
    if (acc.online_sum < 0) return;
    std::map<int, kir::ValuePtr> of_divisor;
    for (size_t id = 0; id < graph_.nodes().size(); ++id) {
      const ENode& n = graph_.node(id);
      if (n.kind != ENode::Kind::Op || n.op != OpKind::Div || n.computation != DType::F32 ||
          n.args.size() != 2)
        continue;
      const ENode& d = graph_.node(n.args[1]);
      if (d.kind != ENode::Kind::Reduced || d.reduction != acc.online_sum ||
          d.dtype != DType::F32)
        continue;
      auto it = reduced_values_.find(n.args[1]);
      if (it == reduced_values_.end()) continue;
      kir::ValuePtr& r = of_divisor[n.args[1]];
      if (!r) {
        std::string local = c.names.fresh(f_.value(d.value).name + "_inv");
        b.push_back(kir::let(kir::Type::Float, local,
                             kir::op(OpKind::Div, DType::F32, kir::Type::Float,
                                     {kir::literal(Literal::of_float(1.0), kir::Type::Float),
                                      it->second})));
        r = kir::ref(local, kir::Type::Float);
      }
      reciprocals_[static_cast<int>(id)] = r;
    }
  }

  // Combines the accumulators of one phase across the row's threads (and blocks).
  // Combines the accumulators across the row's threads (every thread of the block calls it).
  void block_combine(kir::Block& b, const std::vector<Accumulator*>& accs) const {
    for (Accumulator* acc : accs) {
      std::string fn;
      std::vector<kir::ValuePtr> args;
      args.reserve(3);
      args.push_back(kir::ref(acc->name, acc->type));
      args.push_back(kir::call(acc->functor, acc->type, {}));
      if (p_.inner) {
        fn = "fz_row_reduce<" + std::to_string(p_.threads_per_row) + ">";
        args.push_back(p_.threads_per_row > 32
                           ? kir::ref(acc->smem, acc->type)
                           : kir::literal(Literal::of_int(0), kir::Type::Int32));
      } else {
        fn = "fz_column_reduce<" + std::to_string(p_.rows_per_block) + ", " +
             std::to_string(p_.threads_per_row) + ">";
        args.push_back(kir::ref(acc->smem, acc->type));
      }
      b.push_back(kir::assign(acc->name, kir::call(fn, acc->type, std::move(args))));
    }
  }

  // Combines the accumulators of one phase across the row's threads (and blocks).
  void combine_phase(Ctx& c, kir::Block& b, const std::vector<Accumulator*>& accs, bool grid,
                     const Expr& row, const Expr& row_block) {
    block_combine(b, accs);
    if (!grid) return;
    // Split rows (gridDim.y > 1, a uniform test): every block of the row group writes its
    // partials; the last to arrive folds them, thread t taking partials t, t + T, ... in order,
    // then the same tree as above, so the result is the same bits for a given split whichever
    // block finished last.
    Expr gy = Expr::index("gridDim.y", Expr(kMaxSplit + 1));
    Expr by = Expr::index("blockIdx.y", Expr(kMaxSplit));
    Expr lead = Expr::index(p_.inner ? "threadIdx.x" : "threadIdx.y", Expr(p_.threads_per_row));
    kir::Block split;
    kir::Block write;
    for (Accumulator* acc : accs)
      write.push_back(
          kir::element_store(acc->partials, row * gy + by, kir::ref(acc->name, acc->type)));
    split.push_back(
        kir::if_then(kir::all_of({kir::ref(c.active, kir::Type::Bool),
                                  kir::index_value(eq(lead, Expr(0)), kir::Type::Bool)}),
                     std::move(write)));
    split.push_back(kir::let(kir::Type::Bool, c.last,
                             kir::call("fz_last_block", kir::Type::Bool,
                                       {kir::ref(c.counters, kir::Type::UInt32),
                                        kir::index_value(row_block, c.index_type),
                                        kir::index_value(gy, kir::Type::UInt32)})));
    kir::ValuePtr not_last = kir::op(OpKind::LogicalNot, DType::Bool, kir::Type::Bool,
                                     {kir::ref(c.last, kir::Type::Bool)});
    split.push_back(kir::if_then(not_last, {p_.inner ? kir::continue_loop() : kir::ret()}));
    Expr g = Expr::index(c.g, Expr(kMaxSplit + 1));
    kir::Block loop;
    for (Accumulator* acc : accs) {
      split.push_back(kir::assign(acc->name, accumulator_identity(*acc)));
      kir::ValuePtr partial = kir::call(
          "fz_load_cg", acc->type,
          {kir::ref(acc->partials, acc->type), kir::index_value(row * gy + g, c.index_type)});
      loop.push_back(kir::assign(
          acc->name, accumulator_combine(*acc, kir::ref(acc->name, acc->type), partial)));
    }
    kir::Block fold;
    fold.push_back(kir::for_loop(kir::Type::Int32, c.g, lead, gy, std::move(loop), false,
                                 Expr(p_.threads_per_row)));
    split.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(fold)));
    block_combine(split, accs);
    b.push_back(kir::if_then(kir::index_value(lt(Expr(1), gy), kir::Type::Bool), std::move(split)));
  }

  LoweredKernel build(const std::string& name, bool index64, int elements) {
    LoweredKernel lk;
    KernelSummary& ks = lk.summary;
    kir::Kernel& k = lk.kernel;
    Ctx c;
    c.index_type = index64 ? kir::Type::Int64 : kir::Type::Int32;
    c.elements = elements;
    std::map<ValueId, std::string> param_name = name_segment_params(f_, seg_, c.names);
    c.param_of = [param_name](ValueId v) { return param_name.at(v); };
    c.row = c.names.fresh("row");
    c.row_base = c.names.fresh("row_base");
    c.k = c.names.fresh("k");
    c.j = c.names.fresh("j");
    c.active = c.names.fresh("active");
    c.counters = c.names.fresh("counters");
    c.last = c.names.fresh("last");
    c.g = c.names.fresh("g");
    c.accs = accumulators(c.names);
    reduced_values_.clear();
    reciprocals_.clear();
    bool grid = p_.grid;
    int tpr = p_.threads_per_row, rpb = p_.rows_per_block;
    // A reduction kernel's full outputs depend on no reduction (ReductionScheduler).
    const bool side_outputs = kind_ == SchedulerKind::Reduction;
    FUSERC_CHECK(!side_outputs || a_.full_outputs.size() == a_.side_outputs.size(),
                 "a reduction kernel writes a full output that depends on a reduction");

    k.name = name;
    k.index_type = c.index_type;
    k.max_threads = tpr * rpb;
    kir::Block& body = k.body;

    // Shared memory for the combines.
    for (const auto& acc : c.accs) {
      int width = p_.inner ? (tpr > 32 ? rpb * tpr / 32 : 0) : tpr * rpb;
      if (width > 0) body.push_back(kir::shared_array(acc.type, acc.smem, width));
    }

    Expr rows = a_.rows;
    Expr row = Expr::index(c.row, rows);
    // `row` is declared with the extent `rows`, which holds wherever it is used: under
    // `active`. The test itself is on the row's definition.
    kir::Block row_body;
    Expr row_block, row_value;
    if (p_.inner) {
      Expr ty = rpb == 1 ? Expr(0) : Expr::index("threadIdx.y", Expr(rpb));
      Expr rb = Expr::index(c.row_base, rows);
      row_value = rb + ty;
      row_body.push_back(kir::let(c.index_type, c.row, kir::index_value(row_value, c.index_type)));
      row_block = floordiv(rb, Expr(rpb));
    } else {
      Expr bx = Expr::index("blockIdx.x", ceildiv(rows, Expr(rpb)));
      Expr tx = Expr::index("threadIdx.x", Expr(rpb));
      row_value = bx * rpb + tx;
      body.push_back(kir::let(c.index_type, c.row, kir::index_value(row_value, c.index_type)));
      row_block = bx;
    }
    kir::Block& rb_body = p_.inner ? row_body : body;
    rb_body.push_back(kir::let(kir::Type::Bool, c.active, condition_value(lt(row_value, rows))));

    // Register caches for the persistent variant: every unconditional load along the row.
    if (elements > 0)
      for (int id : row_loads())
        c.caches[id] = c.names.fresh(f_.value(graph_.node(id).value).name + "_r");
    // The vector path: 16-byte accesses for rows that allow them (see vector_condition), for
    // contiguous rows, in 32-bit variants, when the element computation is small.
    if (p_.inner && !index64 && p_.vector > 1 && (elements == 0 || p_.vectors > 0) &&
        graph_.nodes().size() <= 64) {
      c.vec = p_.vector;
      c.vectors = elements > 0 ? p_.vectors : 0;
      c.vg = c.names.fresh("g");
      c.lane = c.names.fresh("lane");
      c.vflag = c.names.fresh("vec_ok");
      if (auto cond = vector_condition(c, row))
        rb_body.push_back(kir::let(kir::Type::Bool, c.vflag, *cond));
      else
        c.vec = 0;
    }
    if (elements > 0) {
      int slots = c.vec > 0 ? std::max(elements, c.vec * c.vectors) : elements;
      for (const auto& [id, array] : c.caches)
        rb_body.push_back(kir::array(kir::compute_type_of(graph_.node(id).dtype), array, slots));
    }

    // The phases. A persistent variant's threads fold in at most `slots` elements of a row.
    const bool few_per_thread =
        elements > 0 && std::max(elements, c.vec * c.vectors) <= kFewPerThread;
    for (int phase = 1; phase <= a_.phases; ++phase) {
      std::vector<Accumulator*> accs;
      for (auto& acc : c.accs)
        if (a_.reductions[acc.reduction].phase == phase) accs.push_back(&acc);
      for (Accumulator* acc : accs)
        rb_body.push_back(kir::declare(acc->type, acc->name, accumulator_identity(*acc)));
      std::vector<int> inputs;
      for (Accumulator* acc : accs) inputs.push_back(acc->input_node);
      // A reduction kernel's full outputs (side outputs, see reduction_analysis.h) are written
      // during the first pass, each element once by the thread that reads it.
      size_t full_at = kNoFull;
      if (side_outputs && phase == 1) {
        full_at = inputs.size();
        for (const auto& [o, node] : full_) inputs.push_back(node);
      }
      kir::Block pass = row_pass(
          c, row, grid, elements > 0 && phase == 1, inputs,
          [&](const std::vector<kir::ValuePtr>& v, kir::Block& b) {
            for (size_t i = 0; i < accs.size(); ++i)
              b.push_back(kir::assign(
                  accs[i]->name, accumulator_push(*accs[i], v[i], graph_.node(inputs[i]).dtype,
                                                  few_per_thread)));
          },
          full_at);
      rb_body.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(pass)));
      combine_phase(c, rb_body, accs, grid, row, row_block);
      for (Accumulator* acc : accs) {
        std::vector<kir::ValuePtr> results = accumulator_results(*acc, a_.row_length, c.index_type);
        std::vector<std::string> locals;
        std::vector<ValueId> outs = a_.reductions[acc->reduction].outputs;
        if (acc->online_sum >= 0) outs.push_back(a_.reductions[acc->online_sum].outputs[0]);
        for (size_t i = 0; i < results.size(); ++i) {
          std::string local = c.names.fresh(f_.value(outs[i]).name);
          rb_body.push_back(kir::let(results[i]->type, local, results[i]));
          locals.push_back(local);
        }
        set_reduced_values(*acc, locals);
        add_reciprocals(c, rb_body, *acc);
      }
    }

    // Results broadcast back over the row.
    if (!full_.empty() && !side_outputs) {
      std::vector<int> nodes;
      for (const auto& [o, node] : full_) nodes.push_back(node);
      kir::Block pass = row_pass(c, row, false, false, nodes, nullptr, 0);
      rb_body.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(pass)));
    }

    // Results with one element per row, written by the row's lead thread.
    if (!reduced_.empty()) {
      auto m = coord_map(row, Expr(0));
      ElementEmitter em(
          f_, graph_, c.names, [m](const Expr& e) { return subst(e, m); }, c.param_of,
          c.index_type);
      use_row_results(em);
      kir::Block b;
      std::vector<int> nodes;
      for (const auto& [o, node] : reduced_) nodes.push_back(node);
      std::vector<kir::ValuePtr> v = em.emit(nodes, b);
      for (size_t i = 0; i < reduced_.size(); ++i) {
        ValueId o = reduced_[i].first;
        const Value& out = f_.value(o);
        b.push_back(kir::store(c.param_of(o), output_offset(f_, o, coords_of(out, row), row),
                               out.dtype, v[i]));
      }
      Expr lead = Expr::index(p_.inner ? "threadIdx.x" : "threadIdx.y", Expr(tpr));
      rb_body.push_back(
          kir::if_then(kir::all_of({kir::ref(c.active, kir::Type::Bool),
                                    kir::index_value(eq(lead, Expr(0)), kir::Type::Bool)}),
                       std::move(b)));
    }

    if (p_.inner) {
      Expr bx = Expr::index("blockIdx.x", ceildiv(rows, Expr(rpb)));
      Expr gx = Expr::index("gridDim.x", ceildiv(rows, Expr(rpb)) + 1);
      body.push_back(kir::for_loop(c.index_type, c.row_base, bx * rpb, rows, std::move(row_body),
                                   false, gx * rpb));
    }

    add_tensor_params(f_, seg_, param_name, k, ks);

    // Launch configuration.
    Expr row_groups = ceildiv(rows, Expr(rpb));
    if (p_.inner) {
      ks.block[0] = Expr(tpr);
      ks.block[1] = Expr(rpb);
      ks.grid[0] = min(row_groups, Expr(int64_t{1} << 20));
    } else {
      ks.block[0] = Expr(rpb);
      ks.block[1] = Expr(tpr);
      ks.grid[0] = row_groups;
    }
    ks.launch_values.push_back({p_.inner ? "row_blocks" : "column_blocks", ks.grid[0]});
    if (grid) {
      // Each split block takes at least 16 elements of the row per thread; partials (one per
      // row and block of the row, sized for any device) and the semaphores.
      GridSplit split = grid_split(row_groups, a_.row_length, int64_t{tpr} * 16);
      ks.grid[1] = split.split;
      ks.launch_values.push_back({"split", split.split});
      Expr slots = (p_.inner ? row_groups * rpb : rows) * split.split_alloc;
      for (const auto& acc : c.accs)
        add_scratch_param(acc.partials, acc.type, slots * static_cast<int64_t>(acc.bytes), false, k,
                          ks);
      add_scratch_param(c.counters, kir::Type::UInt32, row_groups * 4, true, k, ks);
      ks.grid_reduction = true;
    }
    ks.variant_note = variant_note(elements, index64, c.vec);
    kir::remove_unused_locals(k.body);
    add_symbol_params(f_, k, ks);

    ks.name = name;
    ks.scheduler = kind_;
    ks.index64 = index64;
    ks.block_reduction = true;
    for (const auto& n : graph_.nodes())
      if (n.kind == ENode::Kind::Rand) ks.uses_rng = true;
    ks.scheduler_params = {
        {"layout", p_.inner ? "inner" : "outer"},
        {p_.inner ? "threads_per_row" : "threads_across_rows", std::to_string(tpr)},
        {p_.inner ? "rows_per_block" : "columns_per_block", std::to_string(rpb)},
        {"phases", std::to_string(a_.phases)},
        {"grid_reduction", grid ? "yes" : "no"},
        {"persistent", elements > 0 ? std::to_string(elements) + " per thread" : "no"},
        {"index", index64 ? "64-bit" : "32-bit"}};
    std::string ops = op_listing(f_, seg_);
    ks.comment = ops;
    k.header_comment = {
        "fuserc: graph '" + f_.name + "', kernel " + name + " (" + scheduler_name(kind_) + ")",
        "computes: " + ops,
        "reduces " + shape_to_string(a_.domain) + " over rows of " + a_.row_length.str() + " (" +
            a_.rows.str() + (a_.rows.is_const(1) ? " row), " : " rows), ") +
            (p_.inner ? "contiguous" : "strided") + " rows, " + std::to_string(tpr) +
            (p_.inner ? " threads per row, " : " threads across rows, ") + std::to_string(rpb) +
            (p_.inner ? (rpb == 1 ? " row per block" : " rows per block") : " columns per block") +
            (grid ? ", rows split across blocks" : "") +
            (elements > 0 ? ", row in registers (" + std::to_string(elements) + " per thread)"
                          : "") +
            (c.vec > 0 ? ", vectors of " + std::to_string(c.vec) + " when the row allows" : "") +
            ", " + (index64 ? "64" : "32") + "-bit indexing"};
    // A maximum or minimum over an empty row has no value (the reference refuses it too).
    for (const auto& acc : c.accs) {
      bool extremum = acc.op == OpKind::Max || acc.op == OpKind::Min || acc.op == OpKind::Amax ||
                      acc.op == OpKind::Amin;
      if (!extremum || a_.row_length.lo() > 0) continue;
      Expr holds = lt(Expr(0), a_.row_length + eq(a_.rows, Expr(0)));
      if (!holds.is_const(1))
        ks.guards.push_back({KernelGuard::Kind::Other, holds,
                             "'" + f_.value(a_.reductions[acc.reduction].outputs[0]).name +
                                 "': the reduction is over an empty dimension, which has no "
                                 "maximum or minimum"});
    }
    Expr fits = le(ks.grid[0], Expr(2147483647));
    if (!fits.is_const(1))
      ks.guards.push_back(
          {KernelGuard::Kind::LaunchLimit, fits, "kernel " + name + " needs too many blocks"});
    return lk;
  }
};

}  // namespace

std::vector<LoweredKernel> lower_reduction(const Fusion& f, const Segment& segment,
                                           const ReductionAnalysis& analysis, SchedulerKind kind,
                                           const std::string& kernel_name) {
  ReductionLowering lowering(f, segment, analysis, kind);
  return lowering.run(kernel_name);
}

}  // namespace fuserc::lower
