// Owns the declaration of ReductionLowering (private to codegen/lower, not installed): the state
// of lowering one reduction or normalization segment (the analysis, its element graph, the
// domain's coordinate variables, the variant being built, the row's results as locals), the
// names one kernel uses (Ctx), and the coordinate helpers every part shares. Its members are
// defined by part: reduction_lowering.cc (construction, the variants, the kernel's assembly),
// reduction_row_pass.cc (a pass over a row, the scalar path), reduction_vector_path.cc (the
// vector path), reduction_combine.cc (combines across threads and blocks, the row's results).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lower/element_emitter.h"
#include "codegen/lower/element_graph.h"
#include "codegen/lower/lowering_common.h"
#include "codegen/lower/reduction_accumulator.h"
#include "codegen/lower/reduction_lowering.h"

namespace fuserc::lower::detail {

class ReductionLowering {
 public:
  ReductionLowering(const Fusion& f, const Segment& s, const ReductionAnalysis& a,
                    SchedulerKind kind);

  // The segment's kernels: one per bucket (reduction_variants) the 32-bit indices allow, each
  // guarded by its bound, then a 64-bit one when indices may not fit in 32 bits.
  std::vector<LoweredKernel> run(const std::string& name);

 private:
  const Fusion& f_;
  const Segment& seg_;
  SchedulerKind kind_;
  ReductionParams p_;  // of the variant being built
  const ReductionAnalysis& given_;  // the segment's
  // The variant's (build): a persistent one separates online log-sum-exps again.
  ReductionAnalysis analysis_;
  const ReductionAnalysis& a_ = analysis_;
  ElementGraph graph_;
  std::vector<Expr> coords_;
  std::vector<int> input_nodes_;
  std::vector<std::pair<ValueId, int>> full_, reduced_;
  std::map<int, kir::ValuePtr> reduced_values_;  // Reduced node -> the finalized local
  std::map<int, kir::ValuePtr> reciprocals_;     // Div node -> its divisor's reciprocal (local)

  // The compiled configuration in words.
  std::string variant_note(int elements, bool index64, int vec) const;

  // What a bucket's limit bounds: the row length (inner) or the kept columns (outer).
  Expr p_inner_bound(const ReductionParams& b) const { return b.inner ? a_.row_length : a_.rows; }

  // The loads a persistent variant keeps in registers: every unconditional load that walks
  // along the row.
  std::vector<int> row_loads() const;
  // Elements of the widest row-walking dtype in 16 bytes.
  int vector_width() const;
  // Register words per row element over the cached arrays (kept in their compute types).
  double cached_words() const;

  // The row's linear index over the kept dims, in the coordinate variables.
  Expr row_linear_coords() const;
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
  std::vector<Accumulator> accumulators(NameTable& names) const;

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

  // The coordinate variables' values at element `k` of `row` (the kept and reduced dims'
  // coordinates, delinearized).
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
                      const std::vector<int>& roots, const PassBody& body, size_t full_at);
  // Where a streaming pass's thread `tx` starts along the row and how far it steps: tx and T
  // (threads per row); split over the grid, block y's T elements first and gridDim.y * T.
  struct RowWalk {
    Expr begin, step;
  };
  RowWalk row_walk(const Expr& tx, bool grid_split) const;

  // The scalar path of a pass: thread t takes elements t, t + T, ... (a persistent variant: j
  // < elements, kept at j in the registers; streaming: over the row's split blocks too, U
  // elements loaded per step).
  kir::Block scalar_row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                             const std::vector<int>& roots, const PassBody& body, size_t full_at);

  // The vector path's element index `g * V + lane` and its coordinate map.
  Expr vector_k(const Ctx& c, Expr* g, Expr* lane) const;

  // The vector path's accesses: loads along the row (cached ones in a persistent variant;
  // node -> offset at lane 0) and full outputs (index -> offset at lane 0) that move 16 bytes
  // or less per vector.
  std::map<int, Expr> vector_loads_at(const Ctx& c, const Expr& row) const;
  std::map<size_t, Expr> vector_stores_at(const Ctx& c, const Expr& row) const;

  // An indirect load's base (`base`, its offset at the row's first group) with its one index
  // variable `ix` at 0, and the condition that `ix` moves it by a multiple of `width` (the
  // offset linear in `ix`); nothing when it is not so or never holds.
  struct IndirectBase {
    Expr base, multiple;
  };
  std::optional<IndirectBase> indirect_stride(const ENode& n, const Expr& base, int width) const;

  // The vector path's test for a row: its length a multiple of V and the first group of every
  // vector access aligned; nothing when no access would be a vector.
  std::optional<kir::ValuePtr> vector_condition(const Ctx& c, const Expr& row) const;

  // The vector path of a pass: thread t takes groups of V consecutive elements, element
  // k = g * V + lane. Persistent: g = j * T + t (j < vectors), kept at j * V + lane in the
  // registers, cached loads (when filling) and full outputs moving whole vectors. Streaming:
  // g = t, t + T, ... (over the row's split blocks too), loads moving whole vectors.
  kir::Block vector_row_pass(Ctx& c, const Expr& row, bool grid_split, bool fill_caches,
                             const std::vector<int>& roots, const PassBody& body, size_t full_at);

  // An emitter after a phase: the reductions' results (and the reciprocals of divisors) of the
  // row are locals, not computed again.
  void use_row_results(ElementEmitter& em) const;
  // `locals`: the accumulator's results (an online log-sum-exp: the max's, then the sum's).
  void set_reduced_values(const Accumulator& acc, const std::vector<std::string>& locals);
  // Locals for the reciprocals of `acc`'s sum (an online log-sum-exp, or a softmax's sum in a
  // phase of its own) that f32 divisions by it multiply by instead.
  void add_reciprocals(Ctx& c, kir::Block& b, const Accumulator& acc);
  // Combines the accumulators across the row's threads (every thread of the block calls it).
  void block_combine(kir::Block& b, const std::vector<Accumulator*>& accs) const;
  // Combines the accumulators of one phase across the row's threads (and blocks).
  void combine_phase(Ctx& c, kir::Block& b, const std::vector<Accumulator*>& accs, bool grid,
                     const Expr& row, const Expr& row_block);

  // A variance over a row held in registers (Accumulator::two_pass; `sum` combined across the
  // row's threads): the mean, a second pass summing the squared deviations from it into `m2`
  // (combined the same way), and the results as accumulator_results gives them (the
  // variance, then the mean for var_mean). Two sums cost a fraction of combining Welford
  // states, and the deviations from the row's own mean keep the variance of data far from
  // zero exact to the dtype's precision.
  std::vector<kir::ValuePtr> variance_from_registers(Ctx& c, kir::Block& b, const Accumulator& sum,
                                                     Accumulator& m2, const Expr& row,
                                                     const Expr& row_block);

  // One kernel of the variant p_ (`elements` per thread kept in registers; 0: streaming).
  LoweredKernel build(const std::string& name, bool index64, int elements);
};

}  // namespace fuserc::lower::detail
