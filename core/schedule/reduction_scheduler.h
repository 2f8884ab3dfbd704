// Owns the reduction and normalization schedulers.
//   - Reduction: sum, prod, max, min, mean, amax, amin, var, var_mean over any dims, with the
//     elementwise work before them (prologue) and after them on the reduced rows (epilogue).
//     Rows contiguous in memory ("inner"): a warp or a block per row, warp shuffles and a block
//     reduction; rows strided ("outer"): threads along the contiguous kept dim, a reduction
//     across threadIdx.y. With few rows and long ones the rows are split across blocks and the
//     last block to finish combines the partials (a grid reduction, deterministic).
//   - Normalization: reductions whose results are broadcast back over the same rows (softmax,
//     layer and RMS norm): one kernel per row block that keeps the row in registers when it
//     fits (persistent, reading the input once) and a multi-pass variant that re-reads it
//     otherwise; a guard on the row length picks one at launch.
#pragma once

#include "core/schedule/reduction_analysis.h"
#include "core/schedule/scheduler.h"

namespace fuserc {

struct ReductionParams {
  bool inner = true;
  // Inner: threads per row (threadIdx.x) and rows per block (threadIdx.y).
  // Outer: threads across the reduced dim (threadIdx.y) and columns per block (threadIdx.x).
  int threads_per_row = 128;
  int rows_per_block = 1;
  bool grid = false;            // split each row over blockIdx.y (a grid reduction)
  int max_blocks_per_row = 1;   // the cap of that split
  int elements_per_thread = 0;  // normalization: row elements each thread keeps in registers
};

class ReductionScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Reduction; }
  std::string reject_reason(const Fusion& f, const Segment& group) const override;
};

class NormalizationScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Normalization; }
  std::string reject_reason(const Fusion& f, const Segment& group) const override;
};

// The parameters for a group either scheduler accepted.
ReductionParams reduction_heuristics(const ReductionAnalysis& a, SchedulerKind kind,
                                     const HeuristicHints& hints);

}  // namespace fuserc
