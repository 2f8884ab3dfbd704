#include "core/schedule/online_lse.h"

#include <algorithm>
#include <set>

namespace fuserc {
namespace {

bool is_float_compute(DType d) {
  return d == DType::F32 || d == DType::F64;
}

// The op of the group that defines `v`, or nullptr (an input of the group, or a literal).
const Op* defined_in(const Fusion& f, const std::set<int>& in_group, ValueId v) {
  if (v == kNoValue) return nullptr;
  int k = f.value(v).def_op;
  return k >= 0 && in_group.count(k) ? &f.ops[k] : nullptr;
}

// `v` with the views that only move a reduction's result around its row (the analysis has
// checked that it is read back on its own row) looked through.
ValueId through_views(const Fusion& f, const std::set<int>& in_group, ValueId v) {
  for (const Op* op = defined_in(f, in_group, v); op; op = defined_in(f, in_group, v)) {
    switch (op->kind) {
      case OpKind::Unsqueeze:
      case OpKind::Squeeze:
      case OpKind::Reshape:
      case OpKind::BroadcastInDim:
      case OpKind::Expand: v = op->args[0].value; break;
      default: return v;
    }
  }
  return v;
}

// Phases again, in order (a reduction's `after` precede it): an online sum's result is there
// after its max's phase.
void assign_phases(ReductionAnalysis& a) {
  a.phases = 0;
  for (auto& r : a.reductions) {
    if (r.online_max >= 0) {
      r.phase = a.reductions[r.online_max].phase;
    } else {
      r.phase = 1;
      for (int d : r.after) r.phase = std::max(r.phase, a.reductions[d].phase + 1);
    }
    a.phases = std::max(a.phases, r.phase);
  }
}

}  // namespace

void find_online_lse(const Fusion& f, const Segment& group, ReductionAnalysis& a) {
  std::set<int> in_group(group.ops.begin(), group.ops.end());
  std::set<int> paired;  // max reductions already folded with a sum
  for (size_t s = 0; s < a.reductions.size(); ++s) {
    ReductionInfo& sum = a.reductions[s];
    const Op& sum_op = f.ops[sum.op];
    if (sum_op.kind != OpKind::Sum) continue;
    DType dt = f.value(sum.outputs[0]).dtype;
    if (!is_float_compute(dt)) continue;
    const Op* exp = defined_in(f, in_group, sum.input);
    if (!exp || exp->kind != OpKind::Exp || f.value(exp->outs[0]).dtype != dt) continue;
    const Op* diff = defined_in(f, in_group, exp->args[0].value);
    if (!diff || diff->kind != OpKind::Sub || f.value(diff->outs[0]).dtype != dt) continue;
    if (diff->args[0].is_literal() || diff->args[1].is_literal()) continue;
    ValueId x = diff->args[0].value;
    ValueId m = through_views(f, in_group, diff->args[1].value);
    if (f.value(x).dtype != dt) continue;
    for (size_t r = 0; r < s; ++r) {
      const ReductionInfo& max = a.reductions[r];
      OpKind k = f.ops[max.op].kind;
      if ((k != OpKind::Amax && k != OpKind::Max) || max.input != x || max.outputs[0] != m ||
          f.value(m).dtype != dt || paired.count(static_cast<int>(r)))
        continue;
      sum.online_max = static_cast<int>(r);
      paired.insert(static_cast<int>(r));
      break;
    }
  }
  assign_phases(a);
}

void separate_online_lse(ReductionAnalysis& a) {
  for (auto& r : a.reductions) r.online_max = -1;
  assign_phases(a);
}

}  // namespace fuserc
