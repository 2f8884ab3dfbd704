// Owns lowering reduction and normalization segments to kernel IR (see
// core/schedule/reduction_scheduler.h for the strategies). A kernel walks rows: for each of
// its rows it runs the reduction phases in order (accumulating per thread, then combining
// across the row's threads with fz_row_reduce / fz_column_reduce, and across blocks in a grid
// reduction), then computes the results broadcast back over the row (normalization) and the
// results with one element per row. Variants: persistent (row kept in registers; guarded by
// the row length) and multi-pass, 32-bit and 64-bit indexing.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/pointwise_lowering.h"
#include "core/schedule/reduction_scheduler.h"

namespace fuserc::lower {

// `analysis` is analyze_reductions(f, segment), which the scheduler accepted.
std::vector<LoweredKernel> lower_reduction(const Fusion& f, const Segment& segment,
                                           const ReductionAnalysis& analysis, SchedulerKind kind,
                                           const ReductionParams& params,
                                           const std::string& kernel_name);

}  // namespace fuserc::lower
