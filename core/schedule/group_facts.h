// Owns the facts the schedulers and the segmenter's rules ask about one candidate group (a
// Segment with its boundary filled in), each computed on its first use and kept for the next
// question about the same group. The reduction analysis is asked for by the reduction
// scheduler, then by the normalization scheduler when the reduction one refuses, then by the
// parallelism rule and the register estimate of a merge: once per candidate instead of up to
// four times (segmenting spends most of its time evaluating candidates).
#pragma once

#include <optional>

#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"
#include "core/schedule/reduction_analysis.h"

namespace fuserc {

class GroupFacts {
 public:
  // Both are borrowed: they must outlive the facts.
  GroupFacts(const Fusion& f, const Segment& group) : f_(f), group_(group) {}
  GroupFacts(const GroupFacts&) = delete;
  GroupFacts& operator=(const GroupFacts&) = delete;

  const Fusion& fusion() const { return f_; }
  const Segment& segment() const { return group_; }
  // analyze_reductions(fusion(), segment()).
  const ReductionAnalysis& reductions() const;

 private:
  const Fusion& f_;
  const Segment& group_;
  mutable std::optional<ReductionAnalysis> reductions_;
};

}  // namespace fuserc
