// Owns the scheduler of library steps: a matrix product (matmul, linear) is run by a vendor
// library (cuBLASLt on a GPU; the CPU executor in the emulator), one op per step. The
// segmenter gives it the op alone (its edges are not fusible: segmenter.cc); it refuses every
// other group, and every kernel scheduler refuses a group holding a matrix product.
#pragma once

#include "core/schedule/scheduler.h"

namespace fuserc {

class LibraryScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Library; }
  std::string reject_reason(const GroupFacts& group) const override;
};

}  // namespace fuserc
