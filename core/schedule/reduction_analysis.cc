#include "core/schedule/reduction_analysis.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/schedule/online_lse.h"
#include "core/schedule/pointwise_scheduler.h"
#include "core/schedule/row_alignment.h"

namespace fuserc {

std::vector<Expr> ReductionAnalysis::kept_extents() const {
  std::vector<Expr> e;
  for (int64_t d : kept_dims) e.push_back(domain[d]);
  return e;
}

std::vector<Expr> ReductionAnalysis::reduced_extents() const {
  std::vector<Expr> e;
  for (int64_t d : reduced_dims) e.push_back(domain[d]);
  return e;
}

namespace {

std::string who(const Fusion& f, const Op& op) {
  return "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) + "' (out '" +
         f.value(op.outs[0]).name + "')";
}

}  // namespace

ReductionAnalysis analyze_reductions(const Fusion& f, const Segment& group) {
  ReductionAnalysis a;
  std::set<int> in_group(group.ops.begin(), group.ops.end());
  for (int k : group.ops) {
    const Op& op = f.ops[k];
    if (op.info().group == OpGroup::Matrix) {
      a.error = who(f, op) + " is a matrix product (a library step, not a kernel)";
      return a;
    }
    if (op.info().group != OpGroup::Reduction) continue;
    ReductionInfo r;
    r.op = k;
    r.input = op.args[0].value;
    r.outputs = op.outs;
    const Value& in = f.value(r.input);
    if (a.reductions.empty()) {
      a.domain = in.shape;
      a.reduced_dims = op.attrs.dims;
    } else if (in.shape != a.domain || op.attrs.dims != a.reduced_dims) {
      a.error = who(f, op) + " reduces " + shape_to_string(in.shape) + " over other dims than " +
                who(f, f.ops[a.reductions[0].op]);
      return a;
    }
    a.reductions.push_back(r);
  }
  if (a.reductions.empty()) {
    a.error = "it has no reduction";
    return a;
  }
  for (int d = 0; d < static_cast<int>(a.domain.size()); ++d)
    if (!std::binary_search(a.reduced_dims.begin(), a.reduced_dims.end(), d))
      a.kept_dims.push_back(d);
  a.rows = product(a.kept_extents());
  a.row_length = product(a.reduced_extents());
  a.inner = a.domain.empty() || std::binary_search(a.reduced_dims.begin(), a.reduced_dims.end(),
                                                   static_cast<int64_t>(a.domain.size()) - 1);

  // Which reductions each value depends on (inside the group), the phases, and for each value
  // that depends on a reduction its alignment (see Alignment): whether it is read back on the
  // row it was computed for.
  std::map<ValueId, std::set<int>> depends;  // value -> indices into a.reductions
  std::map<ValueId, Alignment> align;
  std::map<int, int> reduction_of_op;
  for (size_t i = 0; i < a.reductions.size(); ++i)
    reduction_of_op[a.reductions[i].op] = static_cast<int>(i);
  // Values of the domain's size in another shape: views (reshape, squeeze, unsqueeze) of a
  // value of the domain's shape that reads its own row, or of another such view. One may be a
  // result of the group, computed at the domain's coordinates and stored at the same linear
  // index; where it depends on a reduction nothing else may read it (its alignment is lost).
  std::set<ValueId> linear_views;
  auto is_view = [](OpKind k) {
    return k == OpKind::Reshape || k == OpKind::Squeeze || k == OpKind::Unsqueeze;
  };
  for (int k : group.ops) {
    const Op& op = f.ops[k];
    std::set<int> dep;
    for (const auto& arg : op.args)
      if (!arg.is_literal() && depends.count(arg.value))
        dep.insert(depends[arg.value].begin(), depends[arg.value].end());
    if (is_view(op.kind) && f.value(op.outs[0]).shape != a.domain) {
      ValueId in = op.args[0].value;
      auto al = align.find(in);
      bool own_row =
          al == align.end() || (f.value(in).shape == a.domain && reads_own_row(al->second));
      if (linear_views.count(in) || (f.value(in).shape == a.domain && own_row)) {
        linear_views.insert(op.outs[0]);
        if (!dep.empty() && (!align.count(in) || !propagate(f, op, align))) {
          depends[op.outs[0]] = dep;
          continue;
        }
      }
    }
    for (const auto& arg : op.args)
      if (!arg.is_literal() && linear_views.count(arg.value) && depends.count(arg.value) &&
          !align.count(arg.value)) {
        a.error = who(f, op) + " reads a reduction's result viewed in another shape";
        return a;
      }
    if (auto it = reduction_of_op.find(k); it != reduction_of_op.end()) {
      ReductionInfo& r = a.reductions[it->second];
      for (int d : dep) r.phase = std::max(r.phase, a.reductions[d].phase + 1);
      r.after.assign(dep.begin(), dep.end());
      if (!dep.empty() && !reads_own_row(align.at(r.input))) {
        a.error = who(f, op) + " reduces another reduction's result read on other rows";
        return a;
      }
      dep.insert(it->second);
      for (ValueId o : op.outs) align[o] = reduction_alignment(a, f.value(o));
    } else {
      if (!is_pointwise_op(op)) {
        a.error = who(f, op) + " is neither a reduction nor elementwise";
        return a;
      }
      if (!dep.empty() && !op.info().is_elementwise() && !broadcasts_back(op.kind)) {
        a.error = who(f, op) + " moves a reduction's result in a way other than broadcasting it";
        return a;
      }
      if (!dep.empty()) {
        std::optional<Alignment> al = propagate(f, op, align);
        if (!al) {
          a.error = who(f, op) + " mixes a reduction's result across rows";
          return a;
        }
        align[op.outs[0]] = *al;
      }
    }
    for (ValueId o : op.outs)
      if (!dep.empty()) depends[o] = dep;
  }
  find_online_lse(f, group, a);  // also sets the phases (a.phases their count)

  for (ValueId o : group.outputs) {
    const Value& v = f.value(o);
    const size_t full_before = a.full_outputs.size();
    auto al = align.find(o);
    // With rows of one element (reductions over size-1 dims, or rank 0) a result of the
    // domain's shape is also one element per row: a plain reduction.
    bool view = linear_views.count(o) && !a.row_length.is_const(1);
    if (view) {
      for (const auto& [out, in] : f.aliases)
        if (out == o) {
          a.error = "its result '" + v.name + "', a view of the domain " +
                    shape_to_string(a.domain) + ", is written in place";
          return a;
        }
      a.full_outputs.push_back(o);
    } else if (v.shape == a.domain && !a.row_length.is_const(1)) {
      if (al != align.end() && !reads_own_row(al->second)) {
        a.error = "its result '" + v.name + "' reads a reduction's result on other rows";
        return a;
      }
      a.full_outputs.push_back(o);
    } else if (v.numel() == a.rows) {
      if (al != align.end() && !in_row_order(a, v, al->second)) {
        a.error = "its result '" + v.name + "' holds a reduction's results in another order";
        return a;
      }
      a.reduced_outputs.push_back(o);
    } else {
      a.error = "its result '" + v.name + "' " + shape_to_string(v.shape) +
                " is neither the reduced domain " + shape_to_string(a.domain) +
                " nor one element per row";
      return a;
    }
    if (a.full_outputs.size() > full_before && !depends.count(o)) a.side_outputs.push_back(o);
  }
  return a;
}

}  // namespace fuserc
