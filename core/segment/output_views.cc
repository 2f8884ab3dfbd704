#include "core/segment/output_views.h"

#include <set>

#include "core/base/diagnostics.h"

namespace fuserc {

void store_reshaped_outputs(const Fusion& f, SegmentedFusion& s) {
  std::set<ValueId> written, taken;
  for (const auto& seg : s.segments)
    for (ValueId v : seg.outputs) written.insert(v);
  for (const auto& [p, out] : s.stored_in) taken.insert(p);
  std::vector<Segment> kept;
  kept.reserve(s.segments.size());
  for (auto& seg : s.segments) {
    bool elide = false;
    if (seg.ops.size() == 1 && reshape_into_output(f, seg.ops[0], false)) {
      ValueId p = f.ops[seg.ops[0]].args[0].value;
      ValueId out = f.ops[seg.ops[0]].outs[0];
      elide = written.count(p) && !taken.count(p) && seg.outputs.size() == 1 &&
              seg.outputs[0] == out;
      if (elide) {
        s.stored_in.emplace_back(p, out);
        taken.insert(p);
      }
    }
    // The library scheduler takes such a reshape only to have it stored here.
    if (!elide && seg.scheduler == SchedulerKind::Library &&
        f.ops[seg.ops[0]].info().group != OpGroup::Matrix)
      throw UserError(SourcePlace{f.source_file},
                      "op " + std::to_string(f.ops[seg.ops[0]].source_index) +
                          " 'reshape' (out '" + f.value(f.ops[seg.ops[0]].outs[0]).name +
                          "'): not supported yet: a second output reshaped from the same "
                          "product needs a copy kernel that its index arithmetic does not allow");
    if (!elide) kept.push_back(std::move(seg));
  }
  s.segments = std::move(kept);
}

}  // namespace fuserc
