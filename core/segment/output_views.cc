#include "core/segment/output_views.h"

#include <set>

#include "core/base/diagnostics.h"

namespace fuserc {

void store_reshaped_outputs(const Fusion& f, SegmentedFusion& s) {
  std::set<ValueId> written, taken;
  for (const auto& seg : s.segments)
    for (ValueId v : seg.outputs) written.insert(v);
  for (const auto& [p, out] : s.stored_in) taken.insert(p);
  // Reshapes no kernel could run (the library scheduler took them) are stored first: where
  // two outputs are reshapes of one product, the other one is then the copy kernel.
  std::vector<bool> elided(s.segments.size(), false);
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < s.segments.size(); ++i) {
      const Segment& seg = s.segments[i];
      if ((seg.scheduler == SchedulerKind::Library) != (pass == 0)) continue;
      if (seg.ops.size() != 1 || !reshape_into_output(f, seg.ops[0], false)) continue;
      ValueId p = f.ops[seg.ops[0]].args[0].value;
      ValueId out = f.ops[seg.ops[0]].outs[0];
      if (!written.count(p) || taken.count(p) || seg.outputs.size() != 1 || seg.outputs[0] != out)
        continue;
      s.stored_in.emplace_back(p, out);
      taken.insert(p);
      elided[i] = true;
    }
  std::vector<Segment> kept;
  kept.reserve(s.segments.size());
  for (size_t i = 0; i < s.segments.size(); ++i) {
    Segment& seg = s.segments[i];
    bool elide = elided[i];
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
