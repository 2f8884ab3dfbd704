// Owns segmentation: splitting a Fusion into the fewest, cheapest kernels the schedulers
// accept. Top-down first: the whole graph when one scheduler takes it, else segment_set marks
// cut the graph into regions, and a region a scheduler takes whole is one kernel. Otherwise
// the region is shattered into single ops and merged bottom-up, always taking the merge (of a
// producer group into a consumer group, never creating a cycle) that keeps the most bytes out
// of global memory (core/segment/traffic.h), while a scheduler accepts the merged group. Then
// groups that read the same tensors merge horizontally while registers allow
// (merge_siblings.cc). Regions of more than 128 ops are first cut into chunks of consecutive
// ops (whole chunks joined while accepted, the others merged bottom-up inside), so that long
// graphs segment in linear time. "Accepted" includes the element cost model
// (core/schedule/element_cost.h): recomputation, kernel size and index size are bounded.
// The steps are in merge_rules.h; the group graph and its acyclicity checks in group_graph.h.
#pragma once

#include <string>
#include <vector>

#include "core/base/diagnostics.h"

#include "core/schedule/scheduler.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

class PassContext;  // core/passes/pass_context.h: with one, the steps are timed

// Thrown by segment_fusion when its kernels have no valid order: op `reader` reads `input`,
// which an output overwrites in place, and needs results of the kernel that overwrites it.
class OverwriteCycle : public UserError {
 public:
  OverwriteCycle(const SourcePlace& place, const std::string& message, int reader, ValueId input)
      : UserError(place, message), reader(reader), input(input) {}
  int reader;
  ValueId input;
};

// Throws UserError naming the op when no scheduler can compile some op at all, and
// OverwriteCycle (see above).
SegmentedFusion segment_fusion(const Fusion& f, const std::vector<const Scheduler*>& schedulers,
                               const HeuristicHints& hints, PassContext* timing = nullptr);

// segment_fusion, except that a reader caught in an OverwriteCycle is given a copy of the input
// taken before it is overwritten (a segment_set of the input: one more kernel, which runs
// first), and segmentation tries again. Adds those ops and values to `f` (read_copies.cc).
SegmentedFusion segment_fusion_in_place(Fusion& f, const std::vector<const Scheduler*>& schedulers,
                                        const HeuristicHints& hints,
                                        PassContext* timing = nullptr);

// What the compiler runs: segment_fusion_in_place, then recomputation of cheap producers: a
// tensor a kernel writes only for another kernel, a few elementwise ops from what the reader
// reads anyway, is computed again by the reader (recompute.cc). Adds those ops to `f` (and
// removes the ones no longer needed) when the result moves fewer bytes.
// With `timing`, its steps are rows under the "segment" stage of --time-passes.
SegmentedFusion segment_graph(Fusion& f, const std::vector<const Scheduler*>& schedulers,
                              const HeuristicHints& hints, PassContext* timing = nullptr);

}  // namespace fuserc
