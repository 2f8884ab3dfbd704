#include "core/segment/merge_rules.h"

#include "core/schedule/element_cost.h"
#include "core/schedule/reduction_analysis.h"
#include "core/schedule/reduction_scheduler.h"

namespace fuserc {
namespace {

// About one row block per SM of a large GPU (as the reduction heuristics count them).
constexpr int64_t kBusyRows = 132;
// Rows longer than this take more than one block's worth of work per row.
constexpr int64_t kLongestRow = 16384;

}  // namespace

const Scheduler* first_accepting(const GroupFacts& group,
                                 const std::vector<const Scheduler*>& schedulers,
                                 std::string* reasons) {
  for (const Scheduler* sch : schedulers) {
    std::string why = sch->reject_reason(group);
    if (why.empty()) {
      // A library step computes no elements in a kernel: the cost model has nothing to bound.
      why = sch->kind() == SchedulerKind::Library
                ? ""
                : element_cost_reason(group.fusion(), group.segment());
      if (why.empty()) return sch;
    }
    if (reasons)
      *reasons +=
          std::string(reasons->empty() ? "" : "; ") + scheduler_name(sch->kind()) + ": " + why;
  }
  return nullptr;
}

const Scheduler* first_accepting(const Fusion& f, const Segment& s,
                                 const std::vector<const Scheduler*>& schedulers,
                                 std::string* reasons) {
  const GroupFacts facts(f, s);
  return first_accepting(facts, schedulers, reasons);
}

std::string parallelism_reason(const SegmentContext& ctx, const GroupFacts& merged,
                               SchedulerKind merged_kind, SchedulerKind a, SchedulerKind b,
                               bool side_outputs) {
  if (kernel_family(merged_kind) == SchedulerKind::Pointwise ||
      (a == merged_kind && b == merged_kind))
    return "";
  const ReductionAnalysis& an = merged.reductions();
  if (!an.ok()) return an.error;
  // A reduction kernel that splits long rows over the grid spreads its pass over the domain,
  // and the pointwise work written during it (side outputs), over the whole GPU however few the
  // rows; pointwise work on one element per row is as small as the rows are few.
  if (side_outputs && merged_kind == SchedulerKind::Reduction && reduction_splits_rows(an))
    return "";
  const HeuristicHints& hints = ctx.points.points[0];
  const HeuristicHints& largest = ctx.points.points.back();
  int64_t rows = hints.value_of(an.rows);
  if (rows < kBusyRows)
    return "it would run " + std::to_string(rows) +
           " rows at the hints, too few to keep a GPU busy";
  int64_t length = largest.value_of(an.row_length);
  if (length > kLongestRow)
    return "its rows may hold " + std::to_string(length) + " elements, too many for one block";
  return "";
}

}  // namespace fuserc
