#include "core/schedule/in_place.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/schedule/row_alignment.h"

namespace fuserc {
namespace {

std::string who(const Fusion& f, const Op& op) {
  return "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) + "' (out '" +
         f.value(op.outs[0]).name + "')";
}

std::string written(const Fusion& f, ValueId out, ValueId in) {
  return "output '" + f.value(out).name + "' is written in place into '" + f.value(in).name + "'";
}

bool contains(const std::vector<ValueId>& vs, ValueId v) {
  return std::find(vs.begin(), vs.end(), v) != vs.end();
}

template <class Set>
bool reads_any(const Op& op, const Set& values) {
  for (const auto& a : op.args)
    if (!a.is_literal() && values.count(a.value)) return true;
  return false;
}

// The element rule: what the group computes from `in` is read only at the element being
// written, through elementwise ops (or segment_set) at the input's shape; with
// `reductions_ok`, reductions may read it too (they finish before any element is written).
std::string element_rule(const Fusion& f, const Segment& g, ValueId out, ValueId in,
                         bool reductions_ok) {
  std::set<ValueId> from = {in};
  for (int k : g.ops) {
    const Op& op = f.ops[k];
    if (!reads_any(op, from)) continue;
    if (reductions_ok && op.info().group == OpGroup::Reduction) continue;
    bool same_element = op.info().is_elementwise() || op.kind == OpKind::SegmentSet;
    if (!same_element || f.value(op.outs[0]).shape != f.value(in).shape)
      return written(f, out, in) + ", which " + who(f, op) + " reads at other positions";
    for (ValueId o : op.outs) from.insert(o);
  }
  return "";
}

// The alignment of an input with one element per row, laid out as the rows are (as the
// reduced output written into it is): its axes of extent other than 1 follow the kept dims of
// extent other than 1, in order. Nothing when its layout is not the rows'.
std::optional<Alignment> row_layout(const ReductionAnalysis& a, const Value& in) {
  std::vector<int> kept;
  for (int64_t d : a.kept_dims)
    if (!a.domain[d].is_const(1)) kept.push_back(static_cast<int>(d));
  Alignment al(in.shape.size(), -1);
  size_t next = 0;
  for (size_t j = 0; j < in.shape.size(); ++j) {
    if (in.shape[j].is_const(1)) continue;
    if (next == kept.size() || in.shape[j] != a.domain[kept[next]]) return std::nullopt;
    al[j] = kept[next++];
  }
  if (next != kept.size()) return std::nullopt;
  return al;
}

// The row rule (see in_place.h) for `out`, one element per row, written into `in`.
std::string row_rule(const Fusion& f, const Segment& g, const ReductionAnalysis& a, ValueId out,
                     ValueId in) {
  std::optional<Alignment> seed = row_layout(a, f.value(in));
  if (!seed) return written(f, out, in) + ", whose layout is not that of the rows";
  std::map<ValueId, Alignment> from = {{in, *seed}};
  for (int k : g.ops) {
    const Op& op = f.ops[k];
    if (!reads_any(op, from)) continue;
    auto other_rows = [&]() {
      return written(f, out, in) + ", which " + who(f, op) + " reads on other rows";
    };
    if (op.info().group == OpGroup::Reduction) {
      auto it = from.find(op.args[0].value);
      if (!reads_own_row(it->second)) return other_rows();
      continue;  // the reduced rows no longer read the input
    }
    if (!op.info().is_elementwise() && !broadcasts_back(op.kind)) return other_rows();
    std::optional<Alignment> al = propagate(f, op, from);
    if (!al) return other_rows();
    from[op.outs[0]] = *al;
  }
  for (ValueId o : a.full_outputs)
    if (from.count(o))
      return written(f, out, in) + ", which the result '" + f.value(o).name +
             "', written over the row while the row's result is stored, reads";
  for (ValueId o : a.reduced_outputs) {
    auto it = from.find(o);
    if (it != from.end() && !in_row_order(a, f.value(o), it->second))
      return written(f, out, in) + ", which the result '" + f.value(o).name +
             "' reads on other rows";
  }
  return "";
}

}  // namespace

std::string pointwise_in_place_reason(const Fusion& f, const Segment& group) {
  for (const auto& [out, in] : f.aliases) {
    if (!contains(group.outputs, out)) continue;
    std::string why = element_rule(f, group, out, in, false);
    if (!why.empty()) return why;
  }
  return "";
}

std::string reduction_in_place_reason(const Fusion& f, const Segment& group,
                                      const ReductionAnalysis& a) {
  for (const auto& [out, in] : f.aliases) {
    if (!contains(group.outputs, out)) continue;
    std::string why = contains(a.full_outputs, out) ? element_rule(f, group, out, in, true)
                                                    : row_rule(f, group, a, out, in);
    if (!why.empty()) return why;
  }
  return "";
}

}  // namespace fuserc
