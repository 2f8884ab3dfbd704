// Owns lowering reduction and normalization segments to kernel IR (see
// core/schedule/reduction_scheduler.h for the strategies). A kernel walks rows: for each of
// its rows it runs the reduction phases in order (accumulating per thread, then combining
// across the row's threads with fz_row_reduce / fz_column_reduce, and across blocks in a grid
// reduction), then computes the results broadcast back over the row (normalization) and the
// results with one element per row. Variants: one per bucket the row length's (or the
// columns') range reaches (reduction_variants), guarded by it, then a 64-bit one.
// Contiguous rows in 32-bit variants also get a vector path: each thread takes groups of V
// consecutive elements (16 bytes of the widest row-walking dtype) with vector loads of the
// row's loads (indirect ones too, e.g. an embedding's table row, when the index moves the
// address by a multiple of V) and vector stores of the results broadcast back, taken for a row
// when its length is a multiple of V and every such access starts aligned (a per-row test),
// the scalar path (one element per thread and step) otherwise.
// The ReductionLowering behind it is declared in reduction_lowering_impl.h and defined in
// parts: reduction_lowering.cc (variants, kernel assembly), reduction_row_pass.cc (passes over a
// row, the scalar path), reduction_vector_path.cc, reduction_combine.cc (combines, row results).
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/pointwise_lowering.h"
#include "core/schedule/reduction_scheduler.h"

namespace fuserc::lower {

// `analysis` is analyze_reductions(f, segment), which the scheduler accepted.
std::vector<LoweredKernel> lower_reduction(const Fusion& f, const Segment& segment,
                                           const ReductionAnalysis& analysis, SchedulerKind kind,
                                           const std::string& kernel_name);

}  // namespace fuserc::lower
