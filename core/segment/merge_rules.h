// Owns what the segmenter's steps share: the schedulers and the points bytes are evaluated at
// (SegmentContext), which scheduler takes a group (first_accepting: a scheduler's verdict and the
// element cost model's), and the rule that a merge changing a group's kind must not cost it its
// parallelism. The steps themselves (one file each): region_groups.cc (top-down: regions between
// segment_set marks, shattered or cut into chunks), merge_producers.cc (bottom-up: a producer
// into its consumer, most bytes saved first), merge_siblings.cc (horizontal: groups reading the
// same tensors).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/schedule/scheduler.h"
#include "core/segment/group_graph.h"
#include "core/segment/traffic.h"

namespace fuserc {

struct SegmentContext {
  const Fusion& f;
  const std::vector<const Scheduler*>& schedulers;
  HeuristicHints hints;
  TrafficPoints points;
};

// The first scheduler that takes the group whole, provided its element computation is within
// the cost bounds (core/schedule/element_cost.h); nullptr when none does. With `reasons`, each
// refusal is appended to it.
const Scheduler* first_accepting(const GroupFacts& group,
                                 const std::vector<const Scheduler*>& schedulers,
                                 std::string* reasons = nullptr);
const Scheduler* first_accepting(const Fusion& f, const Segment& s,
                                 const std::vector<const Scheduler*>& schedulers,
                                 std::string* reasons = nullptr);

// Why a kernel of kind `merged` made of groups of kinds `a` and `b` would lose parallelism, or
// "" when it would not. A reduction or normalization kernel runs its rows over the blocks; work
// that ran as its own pointwise kernel (or a reduction that split its rows over the grid) keeps
// its speed only when there are many rows (at the hints) and rows stay short enough for one
// block at the symbols' bounds. With `side_outputs` (a sibling merge, taken only when it saves
// bytes), also when the kernel is a reduction that splits long rows over the grid: the
// pointwise work then rides its pass over the domain (side outputs, reduction_analysis.h).
std::string parallelism_reason(const SegmentContext& ctx, const GroupFacts& merged,
                               SchedulerKind merged_kind, SchedulerKind a, SchedulerKind b,
                               bool side_outputs = false);

// Regions and chunks (region_groups.cc). `ops` is one region (sorted): it becomes one group, or
// single-op groups (their ids added to `shattered`), or chunks (their groups added to `chunks`
// in order, -1 after a chunk that was shattered and after the region).
void group_region(GroupGraph& g, const std::vector<int>& ops, const SegmentContext& ctx,
                  std::vector<std::set<int>>& shattered, std::vector<int>& chunks);
// A region cut into convex pieces (fusible_regions.h): each piece one group when a scheduler
// takes it whole, else single-op groups; all of them added to `shattered` as one set, so that
// pieces merge bottom-up where no cycle closes.
void group_cut_region(GroupGraph& g, const std::vector<std::vector<int>>& pieces,
                      const SegmentContext& ctx, std::vector<std::set<int>>& shattered);
// Joins each whole chunk with the next while the union is accepted and acyclic. Returns the
// groups left (at the size bound: they stay out of horizontal merging).
std::set<int> join_chunks(GroupGraph& g, const std::vector<int>& chunks, const SegmentContext& ctx);

// Bottom-up merging of producers into consumers among `members` (merge_producers.cc).
void merge_producers(GroupGraph& g, std::set<int>& members, const SegmentContext& ctx);

// Horizontal merging of independent groups that read the same tensors, `excluded` aside
// (merge_siblings.cc).
void merge_siblings(GroupGraph& g, const SegmentContext& ctx, const std::set<int>& excluded);

}  // namespace fuserc
