#include "core/segment/segmented_fusion.h"

#include <algorithm>
#include <set>

#include "core/base/diagnostics.h"

namespace fuserc {

const char* scheduler_name(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::Pointwise: return "pointwise";
    case SchedulerKind::Reduction: return "reduction";
    case SchedulerKind::Normalization: return "normalization";
  }
  FUSERC_UNREACHABLE("bad scheduler kind");
}

void compute_segment_boundary(const Fusion& f, Segment& s) {
  std::sort(s.ops.begin(), s.ops.end());
  std::set<int> in_set(s.ops.begin(), s.ops.end());
  std::set<ValueId> produced, inputs, outputs;
  for (int k : s.ops)
    for (ValueId o : f.ops[k].outs) produced.insert(o);
  for (int k : s.ops)
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal() && !produced.count(a.value)) inputs.insert(a.value);
  for (ValueId v : produced) {
    bool needed = f.is_output(v);
    for (int c : f.consumers(v)) needed = needed || !in_set.count(c);
    if (needed) outputs.insert(v);
  }
  s.inputs.assign(inputs.begin(), inputs.end());
  s.outputs.assign(outputs.begin(), outputs.end());
}

std::string SegmentedFusion::to_text(const Fusion& f) const {
  std::string s;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& seg = segments[i];
    s += "segment " + std::to_string(i) + " (" + scheduler_name(seg.scheduler) + ")\n  ops:";
    for (int k : seg.ops) s += " " + f.value(f.ops[k].outs[0]).name;
    s += "\n  reads:";
    for (ValueId v : seg.inputs) s += " " + f.value(v).name;
    s += "\n  writes:";
    for (ValueId v : seg.outputs) s += " " + f.value(v).name;
    s += "\n";
  }
  return s;
}

}  // namespace fuserc
