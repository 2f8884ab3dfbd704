#include "codegen/lower/transpose_lowering.h"

#include <map>
#include <set>

#include "codegen/lower/element_emitter.h"
#include "codegen/lower/element_graph.h"
#include "codegen/lower/lowering_common.h"
#include "core/base/diagnostics.h"
#include "core/ir/element_access.h"

namespace fuserc::lower {
namespace {

constexpr int64_t kMaxGridX = 2147483647;

// As in pointwise kernels: past this many element nodes the write loop stays rolled, so the
// element computation appears once in the compiled code.
constexpr size_t kCompactNodes = 64;

// Elements of padding per tile row: one 4-byte word (one element of 8-byte dtypes), so that a
// warp reading a column of the tile touches 32 different banks.
int row_pad(DType d) {
  size_t s = dtype_size(d);
  return s >= 4 ? 1 : static_cast<int>(4 / s);
}

std::map<std::string, Expr> coord_map(const std::vector<Expr>& coords,
                                      const std::vector<Expr>& values) {
  std::map<std::string, Expr> m;
  for (size_t k = 0; k < coords.size(); ++k) m[coords[k].name()] = values[k];
  return m;
}

// `body` under every condition of `conds` that may fail (inline when none may).
void append_if(kir::Block& out, const std::vector<Expr>& conds, kir::Block body) {
  std::vector<kir::ValuePtr> tests;
  for (const Expr& c : conds)
    if (!c.is_const(1)) tests.push_back(kir::index_value(c, kir::Type::Bool));
  if (tests.empty()) {
    for (auto& s : body) out.push_back(std::move(s));
    return;
  }
  out.push_back(kir::if_then(kir::all_of(std::move(tests)), std::move(body)));
}

class TransposeLowering {
 public:
  TransposeLowering(const Fusion& f, const Segment& s, const TransposeParams& p)
      : f_(f), seg_(s), p_(p), graph_(f, s.inputs) {
    domain_ = f.value(s.outputs[0]).shape;
    for (size_t k = 0; k < domain_.size(); ++k)
      coords_.push_back(Expr::index("fz_c" + std::to_string(k), domain_[k]));
    for (ValueId o : s.outputs) outputs_.emplace_back(o, graph_.value_at(o, coords_));
    for (const auto& [o, node] : outputs_) roots_.push_back(node);
    // The operands staged through tiles: loads every element makes, contiguous along `dim`,
    // as many as the shared-memory budget holds (the others are read directly).
    std::set<int> unconditional = graph_.unconditional_nodes(roots_);
    int64_t bytes = 0;
    for (int id : unconditional) {
      const ENode& n = graph_.node(id);
      if (n.kind != ENode::Kind::Load || transposed_dim(n.offset, coords_) != p.dim) continue;
      int64_t b =
          int64_t{p.tile} * (p.tile + row_pad(n.dtype)) * static_cast<int64_t>(dtype_size(n.dtype));
      if (bytes + b > p.tile_bytes) continue;
      bytes += b;
      tiles_.push_back({id, ""});
    }
  }

  bool has_tiles() const { return !tiles_.empty(); }
  const std::vector<Expr>& domain() const { return domain_; }

  LoweredKernel build(const std::string& name, bool index64) {
    LoweredKernel lk;
    KernelSummary& ks = lk.summary;
    kir::Kernel& k = lk.kernel;
    const int T = p_.tile, R = p_.block_rows;
    k.name = name;
    k.max_threads = T * R;
    k.index_type = index64 ? kir::Type::Int64 : kir::Type::Int32;
    kir::Type it = k.index_type;
    ks.name = name;
    ks.scheduler = SchedulerKind::Transpose;
    ks.index64 = index64;

    NameTable names;
    std::map<ValueId, std::string> param_name = name_segment_params(f_, seg_, names);
    auto param_of = [&](ValueId v) { return param_name.at(v); };

    // Which tile: blockIdx.x = (other coordinates, tile along dim, tile along the innermost).
    const size_t last = domain_.size() - 1;
    const Expr L = domain_[last], J = domain_[p_.dim];
    std::vector<Expr> other;
    std::vector<size_t> other_dims;
    for (size_t d = 0; d < last; ++d)
      if (static_cast<int>(d) != p_.dim) other.push_back(domain_[d]), other_dims.push_back(d);
    const Expr TL = ceildiv(L, Expr(T)), TJ = ceildiv(J, Expr(T)), NB = product(other);
    const Expr tiles = TL * TJ * NB;
    Expr bid = Expr::index("blockIdx.x", tiles);
    Expr tx = Expr::index("threadIdx.x", Expr(T)), ty = Expr::index("threadIdx.y", Expr(R));
    kir::Block body;
    std::string tl_name = names.fresh("tile_l"), tj_name = names.fresh("tile_j");
    body.push_back(kir::let(it, tl_name, kir::index_value(mod(bid, TL), it)));
    body.push_back(kir::let(it, tj_name, kir::index_value(mod(floordiv(bid, TL), TJ), it)));
    Expr tl = Expr::index(tl_name, TL), tj = Expr::index(tj_name, TJ);
    Expr rest(0);
    if (!NB.is_const(1)) {
      std::string rest_name = names.fresh("outer");
      body.push_back(kir::let(it, rest_name, kir::index_value(floordiv(bid, TL * TJ), it)));
      rest = Expr::index(rest_name, NB);
    }
    std::vector<Expr> other_coords = other.empty() ? std::vector<Expr>{} : delinearize(rest, other);
    auto coords_at = [&](const Expr& cj, const Expr& cl) {
      std::vector<Expr> c(domain_.size());
      for (size_t i = 0; i < other_dims.size(); ++i) c[other_dims[i]] = other_coords[i];
      c[p_.dim] = cj;
      c[last] = cl;
      return c;
    };

    for (auto& t : tiles_) {
      const ENode& n = graph_.node(t.node);
      t.name = names.fresh(f_.value(n.value).name + "_tile");
      t.row = T + row_pad(n.dtype);
      body.push_back(kir::shared_array(kir::storage_type_of(n.dtype), t.name, T * t.row));
    }

    // Read phase: threadIdx.x along dim (contiguous in the tiled operands).
    std::string r_name = names.fresh("r");
    Expr r = Expr::index(r_name, Expr(T / R));
    std::string ij_name = names.fresh("in_j"), il_name = names.fresh("in_l");
    body.push_back(kir::let(it, ij_name, kir::index_value(tj * T + tx, it)));
    {
      // Locals are declared with the extent that holds where they address memory (inside the
      // guard); the guard tests them at the extent the tiles cover, so it is not proved away.
      Expr ij = Expr::index(ij_name, J), il = Expr::index(il_name, L);
      auto m = coord_map(coords_, coords_at(ij, il));
      kir::Block copy;
      for (const auto& t : tiles_) {
        const ENode& n = graph_.node(t.node);
        copy.push_back(kir::element_store(
            t.name, (ty + r * R) * t.row + tx,
            kir::element(param_of(n.value), subst(n.offset, m), kir::storage_type_of(n.dtype))));
      }
      kir::Block step;
      step.push_back(kir::let(it, il_name, kir::index_value(tl * T + ty + r * R, it)));
      append_if(step, {lt(Expr::index(ij_name, TJ * T), J), lt(Expr::index(il_name, TL * T), L)},
                std::move(copy));
      body.push_back(
          kir::for_loop(kir::Type::Int32, r_name, Expr(0), Expr(T / R), std::move(step), true));
    }
    body.push_back(kir::eval(kir::call("__syncthreads", kir::Type::Bool, {})));

    // Write phase: threadIdx.x along the innermost dimension (coalesced stores).
    std::string ol_name = names.fresh("out_l"), oj_name = names.fresh("out_j");
    body.push_back(kir::let(it, ol_name, kir::index_value(tl * T + tx, it)));
    {
      Expr oj = Expr::index(oj_name, J), ol = Expr::index(ol_name, L);
      std::vector<Expr> oc = coords_at(oj, ol);
      auto m = coord_map(coords_, oc);
      NameTable wnames = names;
      ElementEmitter em(
          f_, graph_, wnames, [m](const Expr& e) { return subst(e, m); }, param_of, it);
      for (const auto& t : tiles_) {
        const ENode& n = graph_.node(t.node);
        em.set_override(t.node, kir::load(t.name, tx * t.row + ty + r * R, n.dtype,
                                          kir::compute_type_of(n.dtype)));
      }
      kir::Block elem;
      std::vector<kir::ValuePtr> values = em.emit(roots_, elem);
      Expr linear = linearize(oc, domain_);
      for (size_t i = 0; i < outputs_.size(); ++i) {
        ValueId o = outputs_[i].first;
        elem.push_back(kir::store(param_of(o), output_offset(f_, o, oc, linear), f_.value(o).dtype,
                                  values[i]));
      }
      kir::Block step;
      step.push_back(kir::let(it, oj_name, kir::index_value(tj * T + ty + r * R, it)));
      append_if(step, {lt(Expr::index(ol_name, TL * T), L), lt(Expr::index(oj_name, TJ * T), J)},
                std::move(elem));
      bool compact = graph_.nodes().size() > kCompactNodes;
      body.push_back(compact ? kir::rolled_loop(kir::Type::Int32, r_name, Expr(0), Expr(T / R),
                                                std::move(step))
                             : kir::for_loop(kir::Type::Int32, r_name, Expr(0), Expr(T / R),
                                             std::move(step), true));
    }
    k.body = std::move(body);

    add_tensor_params(f_, seg_, param_name, k, ks);
    kir::remove_unused_locals(k.body);
    add_symbol_params(f_, k, ks);

    ks.grid[0] = tiles;
    ks.block[0] = Expr(T);
    ks.block[1] = Expr(R);
    Expr fits = le(tiles, Expr(kMaxGridX));
    if (!fits.is_const(1))
      ks.guards.push_back({KernelGuard::Kind::LaunchLimit, fits,
                           "kernel " + name + " would need more than 2^31 - 1 blocks"});
    std::string tiled;
    for (const auto& t : tiles_)
      tiled += (tiled.empty() ? "" : ",") + f_.value(graph_.node(t.node).value).name;
    std::string shape = std::to_string(T) + "x" + std::to_string(T);
    ks.scheduler_params = {{"tile", shape},
                           {"block", std::to_string(T) + "x" + std::to_string(R)},
                           {"dim", std::to_string(p_.dim)},
                           {"tiled", tiled},
                           {"index", index64 ? "64-bit" : "32-bit"}};
    for (const auto& n : graph_.nodes())
      if (n.kind == ENode::Kind::Rand) ks.uses_rng = true;
    ks.comment = op_listing(f_, seg_);
    k.header_comment = {"fuserc: graph '" + f_.name + "', kernel " + name + " (transpose)",
                        "computes: " + ks.comment,
                        "domain " + shape_to_string(domain_) + ", tiles " + shape + " over dims (" +
                            std::to_string(p_.dim) + ", " + std::to_string(last) +
                            ") through shared memory: " + tiled + ", block " + std::to_string(T) +
                            "x" + std::to_string(R) + ", " + (index64 ? "64" : "32") +
                            "-bit indexing"};
    return lk;
  }

 private:
  struct Tile {
    int node;
    std::string name;
    int row = 0;  // elements per tile row, padding included
  };
  const Fusion& f_;
  const Segment& seg_;
  const TransposeParams& p_;
  ElementGraph graph_;
  std::vector<Expr> domain_;
  std::vector<Expr> coords_;
  std::vector<std::pair<ValueId, int>> outputs_;
  std::vector<int> roots_;
  std::vector<Tile> tiles_;
};

}  // namespace

std::vector<LoweredKernel> lower_transpose(const Fusion& f, const Segment& segment,
                                           const TransposeParams& params,
                                           const PointwiseParams& pointwise,
                                           const std::string& kernel_name) {
  TransposeLowering lowering(f, segment, params);
  // (The scheduler saw a transposed read that the element graph has in a branch: plain
  // pointwise kernels then.)
  if (!lowering.has_tiles()) return lower_pointwise(f, segment, pointwise, kernel_name);

  const std::vector<Expr>& domain = lowering.domain();
  Expr max_index = product(domain);
  for (ValueId v : segment.inputs)
    if (!f.value(v).scalar_input) max_index = max(max_index, addressable_extent(f.value(v)));
  // Coordinates pass an extent by less than a tile; offsets are only formed inside it.
  int64_t limit = int64_t{2147483647} - int64_t{params.tile} * params.tile * 2;
  Expr fits32 = le(max_index, Expr(limit));
  bool need32 = max_index.lo() <= limit;
  bool need64 = max_index.hi() > limit;
  Expr tiled =
      le(Expr(params.min_inner), domain.back()) * le(Expr(params.min_dim), domain[params.dim]);

  std::vector<LoweredKernel> out;
  std::string name = kernel_name + "_tile";
  if (need32) {
    out.push_back(lowering.build(need64 ? name + "_i32" : name, false));
    if (need64) {
      out.back().selected_when = fits32;
      out.back().summary.guards.push_back(
          {KernelGuard::Kind::IndexWidth, fits32,
           "kernel " + out.back().summary.name + " uses 32-bit indexing"});
    }
  }
  if (need64) out.push_back(lowering.build(need32 ? name + "_i64" : name, true));
  if (tiled.is_const(1)) return out;
  // Extents the tiles would mostly idle on run the pointwise kernels.
  for (auto& lk : out) lk.selected_when = lk.selected_when * tiled;
  for (auto& lk : lower_pointwise(f, segment, pointwise, kernel_name)) out.push_back(std::move(lk));
  return out;
}

}  // namespace fuserc::lower
