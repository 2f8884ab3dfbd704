// Owns the pointwise scheduler: one kernel for any connected group of elementwise, cast,
// broadcast, expand, permute, reshape, squeeze/unsqueeze, slice, pad, cat, full, iota,
// rand/randn, where and segment_set ops whose results written to memory share one shape (the
// iteration domain). Views (permute, slice, pad, cat, ...) become index arithmetic.
#pragma once

#include "core/schedule/scheduler.h"

namespace fuserc {

// Ops a pointwise kernel can compute element by element.
bool is_pointwise_op(const Op& op);

// Launch parameters depend on the graph alone (dtypes, constant extents, the symbols'
// ranges), never on the hints: hints steer segmentation only, and a package must launch well
// at every size its symbols allow.
struct PointwiseParams {
  int block = 128;     // threads per block, always: 16 blocks of 128 fill an SM's 2048 threads
  int max_vector = 4;  // elements per vector access: 16 bytes of the widest dtype accessed
};

class PointwiseScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Pointwise; }
  std::string reject_reason(const GroupFacts& group) const override;
  PointwiseParams heuristics(const Fusion& f, const Segment& segment) const;
};

}  // namespace fuserc
