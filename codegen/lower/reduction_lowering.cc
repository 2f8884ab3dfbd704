// Owns building a reduction or normalization segment's kernels: the ReductionLowering's
// coordinates and accumulators, the variants (one per bucket, then a 64-bit one: run) and the
// assembly of one kernel (build: rows, register caches, the phases, the results, the launch
// configuration and guards), and lower_reduction(). The passes over a row are in
// reduction_row_pass.cc and reduction_vector_path.cc, the combines in reduction_combine.cc.
#include "codegen/lower/reduction_lowering.h"

#include <algorithm>
#include <map>
#include <set>

#include "codegen/lower/reduction_lowering_impl.h"
#include "core/base/diagnostics.h"
#include "core/schedule/launch_formulas.h"
#include "core/schedule/online_lse.h"
#include "core/schedule/reduction_buckets.h"

namespace fuserc::lower {
namespace detail {

ReductionLowering::ReductionLowering(const Fusion& f, const Segment& s, const ReductionAnalysis& a,
                                     SchedulerKind kind)
    : f_(f), seg_(s), kind_(kind), given_(a), analysis_(a), graph_(f, s.inputs) {
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

std::vector<LoweredKernel> ReductionLowering::run(const std::string& name) {
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

std::string ReductionLowering::variant_note(int elements, bool index64, int vec) const {
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

std::vector<int> ReductionLowering::row_loads() const {
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

int ReductionLowering::vector_width() const {
  size_t widest = 1;
  for (int id : row_loads())
    widest = std::max(widest, dtype_size(f_.value(graph_.node(id).value).dtype));
  if (row_loads().empty()) widest = 4;
  return static_cast<int>(std::max<size_t>(1, 16 / widest));
}

double ReductionLowering::cached_words() const {
  double words = 0;
  for (int id : row_loads())
    words +=
        static_cast<double>(kernel_type_size(kir::compute_type_of(graph_.node(id).dtype))) / 4;
  return words;
}

Expr ReductionLowering::row_linear_coords() const {
  std::vector<Expr> kept, extents;
  for (int64_t d : a_.kept_dims) {
    kept.push_back(coords_[d]);
    extents.push_back(a_.domain[d]);
  }
  return linearize(kept, extents);
}

std::vector<Accumulator> ReductionLowering::accumulators(NameTable& names) const {
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

LoweredKernel ReductionLowering::build(const std::string& name, bool index64, int elements) {
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
  // A variant that holds the row in registers and is not split over blocks computes a
  // softmax's max and sum of exp in two phases over the registers (separate_online_lse), and a
  // variance in two passes (variance_from_registers below): both cheaper than their one-pass
  // forms, which only save reading the row twice from memory.
  const bool from_registers = elements > 0 && !p_.grid;
  analysis_ = given_;
  if (from_registers) separate_online_lse(analysis_);
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

  // A persistent variant that is not split over blocks computes a variance in two passes over
  // its registers (see variance_from_registers); m2_of holds the second pass's accumulator.
  std::map<int, Accumulator> m2_of;  // reduction -> its squared deviations' accumulator
  if (from_registers)
    for (Accumulator& acc : c.accs)
      if (acc.welford) {
        make_two_pass(acc);
        Accumulator m2 = acc;
        const std::string base = f_.value(a_.reductions[acc.reduction].outputs[0]).name;
        m2.name = c.names.fresh("m2_" + base);
        m2.smem = c.names.fresh("smem_m2_" + base);
        m2_of.emplace(acc.reduction, std::move(m2));
      }

  // Shared memory for the combines.
  auto declare_smem = [&](const Accumulator& acc) {
    int width = p_.inner ? (tpr > 32 ? rpb * tpr / 32 : 0) : tpr * rpb;
    if (width > 0) body.push_back(kir::shared_array(acc.type, acc.smem, width));
  };
  for (const auto& acc : c.accs) declare_smem(acc);
  for (const auto& [r, m2] : m2_of) declare_smem(m2);

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

  // The phases.
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
                accs[i]->name, accumulator_push(*accs[i], v[i], graph_.node(inputs[i]).dtype)));
        },
        full_at);
    rb_body.push_back(kir::if_then(kir::ref(c.active, kir::Type::Bool), std::move(pass)));
    combine_phase(c, rb_body, accs, grid, row, row_block);
    for (Accumulator* acc : accs) {
      std::vector<kir::ValuePtr> results =
          acc->two_pass ? variance_from_registers(c, rb_body, *acc, m2_of.at(acc->reduction), row,
                                                  row_block)
                        : accumulator_results(*acc, a_.row_length, c.index_type);
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
  analysis_ = given_;
  return lk;
}

}  // namespace detail

std::vector<LoweredKernel> lower_reduction(const Fusion& f, const Segment& segment,
                                           const ReductionAnalysis& analysis, SchedulerKind kind,
                                           const std::string& kernel_name) {
  detail::ReductionLowering lowering(f, segment, analysis, kind);
  return lowering.run(kernel_name);
}

}  // namespace fuserc::lower
