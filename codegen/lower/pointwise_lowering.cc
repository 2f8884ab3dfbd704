#include "codegen/lower/pointwise_lowering.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "codegen/lower/element_emitter.h"
#include "codegen/lower/element_graph.h"
#include "codegen/lower/lowering_common.h"
#include "core/base/diagnostics.h"

namespace fuserc::lower {
namespace {

constexpr int64_t kMaxGridX = 2147483647;
constexpr int64_t kMaxGridY = 65535;

std::map<std::string, Expr> coord_map(const std::vector<Expr>& coords,
                                      const std::vector<Expr>& values) {
  std::map<std::string, Expr> m;
  for (size_t k = 0; k < coords.size(); ++k) m[coords[k].name()] = values[k];
  return m;
}

// How an access behaves over the lanes of a vector: the same element, consecutive elements,
// or anything else.
enum class LaneAccess { Invariant, Contiguous, Other };

LaneAccess lane_access(const Expr& offset, const Expr& lane) {
  Expr at0 = substitute(offset, [&](const std::string& s) -> std::optional<Expr> {
    if (s == lane.name()) return Expr(0);
    return std::nullopt;
  });
  Expr diff = offset - at0;
  if (diff.is_const(0)) return LaneAccess::Invariant;
  if (diff == lane) return LaneAccess::Contiguous;
  return LaneAccess::Other;
}

Expr lane_zero(const Expr& offset, const Expr& lane) {
  return substitute(offset, [&](const std::string& s) -> std::optional<Expr> {
    if (s == lane.name()) return Expr(0);
    return std::nullopt;
  });
}

// An index condition as a kernel value, or nothing when it always holds. `always_false` is
// set when it never holds.
std::optional<kir::ValuePtr> condition(const Expr& e, bool* always_false = nullptr) {
  if (e.is_const()) {
    if (always_false && e.value() == 0) *always_false = true;
    return std::nullopt;
  }
  return kir::index_value(e, kir::Type::Bool);
}

// Names of the kernel's index locals, chosen so that no graph name is shadowed.
struct IndexNames {
  std::string base, i, lane, row, col, x;
};

// Past this many element-graph nodes a kernel is emitted compactly: no vector path and the
// loop over a thread's elements kept rolled, so the element computation appears once in the
// kernel (NVRTC's time and the code size grow with the copies: 4 unrolled vector lanes plus
// the scalar path cost about 4.5x one copy).
constexpr size_t kCompactNodes = 64;

struct Plan {
  bool row = false;      // row layout (else flat)
  bool two_d = false;    // 2-D grid (row layout only)
  bool compact = false;  // one copy of the element computation (see kCompactNodes)
  int vector = 1;
};

class PointwiseLowering {
 public:
  PointwiseLowering(const Fusion& f, const Segment& s, const PointwiseParams& p)
      : f_(f), seg_(s), params_(p), graph_(f, s.inputs) {
    domain_ = f.value(s.outputs[0]).shape;
    numel_ = product(domain_);
    for (size_t k = 0; k < domain_.size(); ++k)
      coords_.push_back(Expr::index("fz_c" + std::to_string(k), domain_[k]));
    for (ValueId o : s.outputs) outputs_.emplace_back(o, graph_.value_at(o, coords_));
    for (size_t id = 0; id < graph_.nodes().size(); ++id)
      if (graph_.node(id).kind == ENode::Kind::Load) loads_.push_back(static_cast<int>(id));
  }

  std::vector<LoweredKernel> run(const std::string& name) {
    plan_ = choose_plan();
    Expr max_index = numel_;
    for (ValueId v : seg_.inputs)
      if (!f_.value(v).scalar_input) max_index = max(max_index, addressable_extent(f_.value(v)));
    int64_t margin = int64_t{params_.block} * plan_.vector * 2;
    int64_t limit = int64_t{2147483647} - margin;
    bool need32 = max_index.lo() <= limit;
    bool need64 = max_index.hi() > limit;
    std::vector<LoweredKernel> out;
    if (need32) {
      out.push_back(build(need64 ? name + "_i32" : name, false));
      if (need64) {
        out.back().selected_when = le(max_index, Expr(limit));
        out.back().summary.guards.push_back(
            {KernelGuard::Kind::IndexWidth, le(max_index, Expr(limit)),
             "kernel " + out.back().summary.name + " uses 32-bit indexing"});
      }
    }
    if (need64) out.push_back(build(need32 ? name + "_i64" : name, true));
    return out;
  }

 private:
  const Fusion& f_;
  const Segment& seg_;
  const PointwiseParams& params_;
  ElementGraph graph_;
  std::vector<Expr> domain_;
  Expr numel_;
  std::vector<Expr> coords_;
  std::vector<std::pair<ValueId, int>> outputs_;
  std::vector<int> loads_;
  Plan plan_;
  // The index locals the vector path's guard may read, with their definitions, in the order
  // they are defined (conditions are simplified through them, latest first).
  std::vector<std::pair<std::string, Expr>> index_defs_;

  // `c` with the index locals replaced by their definitions: a condition that then always
  // holds (a vector's first element is a multiple of its width) needs no test.
  bool always_holds(const Expr& c) const {
    Expr e = c;
    for (auto it = index_defs_.rbegin(); it != index_defs_.rend(); ++it)
      e = subst(e, {{it->first, it->second}});
    return e.is_const(1);
  }
  IndexNames ix_;

  Expr last_extent() const { return domain_.back(); }
  Expr rows() const { return product(std::vector<Expr>(domain_.begin(), domain_.end() - 1)); }

  // Coordinates of the lanes of a vector starting at linear index `base` (flat layout) or at
  // (row, xl) (row layout).
  std::vector<Expr> flat_coords(const Expr& linear) const { return delinearize(linear, domain_); }
  std::vector<Expr> row_coords(const Expr& row, const Expr& x) const {
    std::vector<Expr> c = delinearize(row, std::vector<Expr>(domain_.begin(), domain_.end() - 1));
    c.push_back(x);
    return c;
  }

  // The nodes every element computes (see ElementGraph::unconditional_nodes).
  std::set<int> unconditional_nodes() const {
    std::vector<int> roots;
    for (const auto& [o, node] : outputs_) roots.push_back(node);
    return graph_.unconditional_nodes(roots);
  }

  // The test under which a load that not every element performs (a branch of cat or pad) may
  // read a whole vector: its coordinates inside its tensor (ENode::in_bounds), when that test is
  // the same for every lane, so that all lanes' addresses are valid where it holds. Nothing
  // when there is no such test (a load inside the tensor everywhere would read for lanes whose
  // branch does not need it).
  std::optional<Expr> guarded_vector_test(const ENode& n, const std::map<std::string, Expr>& m,
                                          const Expr& lane) const {
    if (!n.deps.empty() || n.in_bounds.empty()) return std::nullopt;
    if (lane_access(subst(n.offset, m), lane) != LaneAccess::Contiguous) return std::nullopt;
    Expr all(1);
    for (const Expr& c : n.in_bounds) {
      Expr at = subst(c, m);
      if (lane_access(at, lane) != LaneAccess::Invariant) return std::nullopt;
      all = all * at;
    }
    return all;
  }

  int count_vectorizable(const std::vector<Expr>& lane_coords, const Expr& lane) const {
    auto m = coord_map(coords_, lane_coords);
    std::set<int> unconditional = unconditional_nodes();
    int n = 0;
    for (int id : loads_) {
      const ENode& node = graph_.node(id);
      if (unconditional.count(id) ? node.deps.empty() && lane_access(subst(node.offset, m),
                                                                     lane) == LaneAccess::Contiguous
                                  : guarded_vector_test(node, m, lane).has_value())
        ++n;
    }
    return n;
  }

  Plan choose_plan() const {
    Plan p;
    p.vector = params_.max_vector;
    if (domain_.empty()) {
      p.vector = 1;
      return p;
    }
    Expr lane = Expr::index("v", Expr(p.vector));
    Expr base = Expr::index("base", numel_);
    int flat = count_vectorizable(flat_coords(base + lane), lane);
    int row = -1;
    if (domain_.size() >= 2) {
      Expr r = Expr::index("row", rows());
      Expr xl = Expr::index("xl", last_extent());
      row = count_vectorizable(row_coords(r, xl + lane), lane);
    }
    p.row = row > flat;
    if (p.row && last_extent().is_const()) {
      while (p.vector > 1 && last_extent().value() % p.vector != 0) p.vector /= 2;
    }
    if (!p.row && numel_.is_const()) {
      while (p.vector > 1 && numel_.value() < p.vector) p.vector /= 2;
    }
    // A 2-D grid (blockIdx.x along the row, blockIdx.y over rows) saves the division that
    // finds a vector's row, but a row that ends just past a block leaves that block nearly
    // idle: only when every row is whole blocks, or long enough that the last partial block
    // of each row costs at most an eighth of the blocks.
    int64_t per_block = int64_t{params_.block} * p.vector;
    Expr last = last_extent();
    p.two_d =
        p.row && ((last.is_const() && last.value() % per_block == 0) || last.lo() >= 8 * per_block);
    p.compact = graph_.nodes().size() > kCompactNodes;
    return p;
  }

  // ---------------------------------------------------------------- kernel

  LoweredKernel build(const std::string& name, bool index64) {
    LoweredKernel lk;
    KernelSummary& ks = lk.summary;
    kir::Kernel& k = lk.kernel;
    k.name = name;
    k.max_threads = params_.block;
    k.index_type = index64 ? kir::Type::Int64 : kir::Type::Int32;
    ks.name = name;
    ks.scheduler = SchedulerKind::Pointwise;
    ks.index64 = index64;

    NameTable names;
    std::map<ValueId, std::string> param_name = name_segment_params(f_, seg_, names);
    auto param_of = [&](ValueId v) { return param_name.at(v); };
    ix_ = IndexNames{names.fresh("base"), names.fresh("i"),   names.fresh("lane"),
                     names.fresh("row"),  names.fresh("col"), names.fresh("j")};

    k.body = plan_.two_d ? body_2d(names, param_of, k.index_type)
                         : body_1d(names, param_of, k.index_type);

    add_tensor_params(f_, seg_, param_name, k, ks);
    kir::remove_unused_locals(k.body);
    add_symbol_params(f_, k, ks);

    // Launch configuration.
    int per_block = params_.block * plan_.vector;
    ks.block[0] = Expr(params_.block);
    if (plan_.two_d) {
      ks.grid[0] = ceildiv(last_extent(), Expr(per_block));
      ks.grid[1] = min(rows(), Expr(kMaxGridY));
    } else {
      ks.grid[0] = ceildiv(numel_, Expr(per_block));
    }
    Expr fits = le(ks.grid[0], Expr(kMaxGridX));
    if (!fits.is_const(1))
      ks.guards.push_back({KernelGuard::Kind::LaunchLimit, fits,
                           "kernel " + name + " would need more than 2^31 - 1 blocks"});
    ks.scheduler_params = {{"block", std::to_string(params_.block)},
                           {"vector", std::to_string(plan_.vector)},
                           {"layout", plan_.row ? (plan_.two_d ? "row-2d" : "row") : "flat"},
                           {"index", index64 ? "64-bit" : "32-bit"}};
    for (const auto& n : graph_.nodes())
      if (n.kind == ENode::Kind::Rand) ks.uses_rng = true;
    ks.comment = op_listing(f_, seg_);

    k.header_comment = {
        "fuserc: graph '" + f_.name + "', kernel " + name + " (pointwise)",
        "computes: " + ks.comment,
        "domain " + shape_to_string(domain_) + ", " +
            (plan_.row ? (plan_.two_d ? "2-D grid over rows" : "vectors within rows") : "flat") +
            ", vector " + std::to_string(plan_.vector) + (plan_.compact ? " (compact)" : "") +
            ", block " + std::to_string(params_.block) + ", " + (index64 ? "64" : "32") +
            "-bit indexing"};
    return lk;
  }

  // The scalar path's loop over the thread's elements.
  kir::Stmt lane_loop(kir::Block body) const {
    Expr width(plan_.vector);
    if (plan_.compact) return kir::rolled_loop(kir::Type::Int32, ix_.lane, Expr(0), width, body);
    return kir::for_loop(kir::Type::Int32, ix_.lane, Expr(0), width, std::move(body));
  }

  // The output nodes (the emitter's roots).
  std::vector<int> output_nodes() const {
    std::vector<int> roots;
    for (const auto& [o, node] : outputs_) roots.push_back(node);
    return roots;
  }

  // The domain coordinates on a path (`m` maps the coordinate variables).
  std::vector<Expr> path_coords(const std::map<std::string, Expr>& m) const {
    std::vector<Expr> c;
    for (const auto& x : coords_) c.push_back(subst(x, m));
    return c;
  }

  // Stores of every output at the path's coordinates `m`, whose row-major index is `linear`
  // (scalar path).
  void emit_element(ElementEmitter& em, kir::Block& b, const std::map<std::string, Expr>& m,
                    const Expr& linear, const std::function<std::string(ValueId)>& param_of) {
    std::vector<kir::ValuePtr> values = em.emit(output_nodes(), b);
    std::vector<Expr> oc = path_coords(m);
    for (size_t i = 0; i < outputs_.size(); ++i) {
      ValueId o = outputs_[i].first;
      b.push_back(
          kir::store(param_of(o), output_offset(f_, o, oc, linear), f_.value(o).dtype, values[i]));
    }
  }

  // The vector path at lane coordinates `m` (which use `lane`; `linear` is the row-major
  // index), or nothing when it cannot help. `conds` are conditions of the layout (whole vector
  // inside the domain or the row). An output written through strides that are not contiguous
  // along the lanes is stored lane by lane.
  std::optional<kir::Block> vector_path(NameTable& names,
                                        const std::function<std::string(ValueId)>& param_of,
                                        kir::Type index_type, const std::map<std::string, Expr>& m,
                                        const Expr& linear, const Expr& lane,
                                        std::vector<kir::ValuePtr> conds) {
    int width = plan_.vector;
    if (width <= 1 || plan_.compact) return std::nullopt;
    auto offset_of = [&](int id) { return subst(graph_.node(id).offset, m); };
    kir::Block pre;
    std::map<int, std::string> vector_loads;
    std::map<std::pair<ValueId, Expr>, std::string,
             std::function<bool(const std::pair<ValueId, Expr>&, const std::pair<ValueId, Expr>&)>>
        by_address([](const auto& a, const auto& b) {
          if (a.first != b.first) return a.first < b.first;
          return compare(a.second, b.second) < 0;
        });
    std::set<int> unconditional = unconditional_nodes();
    auto aligned = [&](const ENode& n, const Expr& off0) {
      conds.push_back(kir::call(
          "fz_is_aligned<" + std::to_string(width * dtype_size(n.dtype)) + ">", kir::Type::Bool,
          {kir::ref(param_of(n.value), kir::Type::UInt64), kir::index_value(off0, index_type)}));
    };
    // Loads every lane performs first (a load under a condition at the same address shares
    // their vector).
    for (int id : loads_) {
      if (!unconditional.count(id)) continue;
      // An indirect load (index_select, gather) reads lane by lane: its address needs the
      // index, which the element computation loads.
      if (!graph_.node(id).deps.empty()) continue;
      Expr off = offset_of(id);
      if (lane_access(off, lane) != LaneAccess::Contiguous) continue;
      const ENode& n = graph_.node(id);
      Expr off0 = lane_zero(off, lane);
      auto key = std::make_pair(n.value, off0);
      auto it = by_address.find(key);
      if (it == by_address.end()) {
        std::string vec = names.fresh(f_.value(n.value).name + "_vec");
        pre.push_back(kir::vec_load(vec, param_of(n.value), off0, n.dtype, width));
        aligned(n, off0);
        it = by_address.emplace(key, vec).first;
      }
      vector_loads[id] = it->second;
    }
    // A load under a condition (pad, cat) may be out of bounds for lanes that do not take its
    // branch: a vector load only where its in-bounds test is the same for every lane, read
    // only where that test holds.
    for (int id : loads_) {
      if (unconditional.count(id)) continue;
      const ENode& n = graph_.node(id);
      auto test = guarded_vector_test(n, m, lane);
      if (!test) continue;
      Expr off0 = lane_zero(offset_of(id), lane);
      auto it = by_address.find(std::make_pair(n.value, off0));
      if (it != by_address.end()) {
        vector_loads[id] = it->second;
        continue;
      }
      Expr when = lane_zero(*test, lane);
      if (when.is_const(0)) continue;
      std::string vec = names.fresh(f_.value(n.value).name + "_vec");
      kir::ValuePtr guard = when.is_const() ? nullptr : kir::index_value(when, kir::Type::Bool);
      pre.push_back(kir::vec_load(vec, param_of(n.value), off0, n.dtype, width, guard));
      aligned(n, off0);
      vector_loads[id] = vec;
    }
    std::vector<Expr> oc = path_coords(m);
    bool any_vector_store = false;
    for (const auto& [o, node] : outputs_)
      any_vector_store = any_vector_store || lane_access(output_offset(f_, o, oc, linear), lane) ==
                                                 LaneAccess::Contiguous;
    if (vector_loads.empty() && !any_vector_store) return std::nullopt;
    ElementEmitter em(
        f_, graph_, names, [m](const Expr& e) { return subst(e, m); }, param_of, index_type);
    em.set_lane(lane, &pre, vector_loads);
    em.set_sequence(lane, eq(lane, Expr(0)), &pre, width);
    kir::Block lane_body, decls, stores;
    std::vector<kir::ValuePtr> values = em.emit(output_nodes(), lane_body);
    for (const Expr& c : em.sequence_conditions())
      if (!always_holds(c)) conds.push_back(kir::index_value(c, kir::Type::Bool));
    for (size_t i = 0; i < outputs_.size(); ++i) {
      ValueId o = outputs_[i].first;
      DType dt = f_.value(o).dtype;
      Expr off = output_offset(f_, o, oc, linear);
      if (lane_access(off, lane) != LaneAccess::Contiguous) {
        lane_body.push_back(kir::store(param_of(o), off, dt, values[i]));
        continue;
      }
      Expr off0 = lane_zero(off, lane);
      std::string vec = names.fresh(f_.value(o).name + "_vec");
      decls.push_back(kir::vec_declare(vec, dt, width));
      lane_body.push_back(kir::lane_store(vec, lane, dt, values[i]));
      stores.push_back(kir::vec_store(vec, param_of(o), off0, dt, width));
      conds.push_back(kir::call(
          "fz_is_aligned<" + std::to_string(width * dtype_size(dt)) + ">", kir::Type::Bool,
          {kir::ref(param_of(o), kir::Type::UInt64), kir::index_value(off0, index_type)}));
    }
    kir::Block b;
    b.push_back(kir::if_then(kir::all_of(std::move(conds)), {}));
    kir::Block& body = b.back().body;
    for (auto& s : pre) body.push_back(std::move(s));
    for (auto& s : decls) body.push_back(std::move(s));
    body.push_back(kir::for_loop(kir::Type::Int32, lane.name(), Expr(0), Expr(width),
                                 std::move(lane_body), true));
    for (auto& s : stores) body.push_back(std::move(s));
    body.push_back(kir::ret());
    return b;
  }

  // Vector path and scalar path each get their own copy of the names, since their locals
  // live in sibling blocks.
  kir::Block body_1d(const NameTable& names, const std::function<std::string(ValueId)>& param_of,
                     kir::Type index_type) {
    kir::Block body;
    int width = plan_.vector;
    int per_block = params_.block * width;
    Expr bx = Expr::index("blockIdx.x", ceildiv(numel_, Expr(per_block)));
    Expr tx = Expr::index("threadIdx.x", Expr(params_.block));
    // Index locals are declared with the extent that holds where they address memory (inside
    // the guards); the guards themselves test them at the extent the grid covers, so that they
    // are not proved away.
    Expr covered = ceildiv(numel_, Expr(per_block)) * per_block;
    Expr base = Expr::index(ix_.base, numel_);
    Expr base_tested = Expr::index(ix_.base, covered);
    body.push_back(kir::let(index_type, ix_.base,
                            kir::index_value((bx * params_.block + tx) * width, index_type)));
    index_defs_ = {{ix_.base, (bx * params_.block + tx) * width}};
    append_guarded(body, le(numel_, base_tested), {kir::ret()});

    // Vector path.
    Expr lane = Expr::index(ix_.lane, Expr(width));
    std::vector<kir::ValuePtr> conds;
    bool never = false;
    NameTable vnames = names;
    if (plan_.row) {
      Expr col = Expr::index(ix_.col, last_extent());
      Expr row = Expr::index(ix_.row, rows());
      if (auto c = condition(eq(mod(last_extent(), Expr(width)), Expr(0)), &never))
        conds.push_back(*c);
      auto m = coord_map(coords_, row_coords(row, col + lane));
      Expr linear = row * last_extent() + col + lane;
      index_defs_.emplace_back(ix_.col, mod(base, last_extent()));
      index_defs_.emplace_back(ix_.row, floordiv(base, last_extent()));
      auto path =
          never ? std::nullopt : vector_path(vnames, param_of, index_type, m, linear, lane, conds);
      if (path) {
        // The row and the column of the vector's first element (the guard reads them).
        body.push_back(
            kir::let(index_type, ix_.col, kir::index_value(mod(base, last_extent()), index_type)));
        body.push_back(kir::let(index_type, ix_.row,
                                kir::index_value(floordiv(base, last_extent()), index_type)));
        for (auto& st : *path) body.push_back(std::move(st));
      }
    } else {
      if (auto c = condition(le(base_tested + width, numel_), &never)) conds.push_back(*c);
      auto m = coord_map(coords_, flat_coords(base + lane));
      auto path = never ? std::nullopt
                        : vector_path(vnames, param_of, index_type, m, base + lane, lane, conds);
      if (path)
        for (auto& st : *path) body.push_back(std::move(st));
    }

    // Scalar path: element by element.
    NameTable snames = names;
    Expr i = Expr::index(ix_.i, numel_);
    auto mi = coord_map(coords_, flat_coords(i));
    ElementEmitter em(
        f_, graph_, snames, [mi](const Expr& e) { return subst(e, mi); }, param_of, index_type);
    kir::Block elem, pre;
    if (width > 1) em.set_sequence(i, eq(Expr::index(ix_.lane, Expr(width)), Expr(0)), &pre);
    emit_element(em, elem, mi, i, param_of);
    if (width == 1) {
      body.push_back(kir::let(index_type, ix_.i, kir::index_value(base, index_type)));
      for (auto& st : elem) body.push_back(std::move(st));
      return body;
    }
    kir::Block loop;
    loop.push_back(kir::let(index_type, ix_.i, kir::index_value(base + lane, index_type)));
    append_guarded(loop, lt(Expr::index(ix_.i, covered), numel_), std::move(elem));
    for (auto& st : pre) body.push_back(std::move(st));
    body.push_back(lane_loop(std::move(loop)));
    return body;
  }

  kir::Block body_2d(const NameTable& names, const std::function<std::string(ValueId)>& param_of,
                     kir::Type index_type) {
    kir::Block body;
    int width = plan_.vector;
    int per_block = params_.block * width;
    Expr bx = Expr::index("blockIdx.x", ceildiv(last_extent(), Expr(per_block)));
    Expr tx = Expr::index("threadIdx.x", Expr(params_.block));
    Expr col = Expr::index(ix_.col, last_extent());
    Expr covered = ceildiv(last_extent(), Expr(per_block)) * per_block;  // as in body_1d
    body.push_back(kir::let(index_type, ix_.col,
                            kir::index_value((bx * params_.block + tx) * width, index_type)));
    index_defs_ = {{ix_.col, (bx * params_.block + tx) * width}};
    append_guarded(body, le(last_extent(), Expr::index(ix_.col, covered)), {kir::ret()});
    Expr row = Expr::index(ix_.row, rows());
    Expr by = Expr::index("blockIdx.y", min(rows(), Expr(kMaxGridY)));
    Expr gy = Expr::index("gridDim.y", Expr(kMaxGridY + 1));

    kir::Block row_body;
    Expr lane = Expr::index(ix_.lane, Expr(width));
    std::vector<kir::ValuePtr> conds;
    bool never = false;
    if (auto c = condition(eq(mod(last_extent(), Expr(width)), Expr(0)), &never))
      conds.push_back(*c);
    auto m = coord_map(coords_, row_coords(row, col + lane));
    NameTable vnames = names;
    auto path = never ? std::nullopt
                      : vector_path(vnames, param_of, index_type, m,
                                    row * last_extent() + col + lane, lane, conds);
    kir::Block scalar = scalar_row(names, param_of, index_type, row, col);
    if (path) {
      // Inside the row loop the vector path goes on to the next row instead of returning.
      path->front().body.pop_back();
      path->front().orelse = std::move(scalar);
      for (auto& st : *path) row_body.push_back(std::move(st));
    } else {
      row_body = std::move(scalar);
    }
    body.push_back(kir::for_loop(index_type, ix_.row, by, rows(), std::move(row_body), false, gy));
    return body;
  }

  kir::Block scalar_row(const NameTable& names, const std::function<std::string(ValueId)>& param_of,
                        kir::Type index_type, const Expr& row, const Expr& col) {
    int width = plan_.vector;
    NameTable snames = names;
    Expr j = Expr::index(ix_.x, last_extent());
    auto m = coord_map(coords_, row_coords(row, j));
    ElementEmitter em(
        f_, graph_, snames, [m](const Expr& e) { return subst(e, m); }, param_of, index_type);
    Expr lane = Expr::index(ix_.lane, Expr(width));
    kir::Block elem, out;
    if (width > 1) em.set_sequence(j, eq(lane, Expr(0)), &out);
    emit_element(em, elem, m, row * last_extent() + j, param_of);
    kir::Block loop;
    loop.push_back(kir::let(index_type, ix_.x, kir::index_value(col + lane, index_type)));
    Expr covered =
        ceildiv(last_extent(), Expr(int64_t{params_.block} * width)) * params_.block * width;
    append_guarded(loop, lt(Expr::index(ix_.x, covered), last_extent()), std::move(elem));
    out.push_back(lane_loop(std::move(loop)));
    return out;
  }
};

}  // namespace

std::vector<LoweredKernel> lower_pointwise(const Fusion& f, const Segment& segment,
                                           const PointwiseParams& params,
                                           const std::string& kernel_name) {
  PointwiseLowering lowering(f, segment, params);
  return lowering.run(kernel_name);
}

}  // namespace fuserc::lower
