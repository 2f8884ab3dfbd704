// Owns the reduction and normalization schedulers.
//   - Reduction: sum, prod, max, min, mean, amax, amin, var, var_mean over any dims, with the
//     elementwise work before them (prologue) and after them on the reduced rows (epilogue).
//     Full-shape results that depend on no reduction (side outputs: pointwise work on the
//     reduced domain) are written during the first pass over the rows.
//     Rows contiguous in memory ("inner"): a warp or a block per row, warp shuffles and a block
//     reduction; rows strided ("outer"): threads along the contiguous kept dim, a reduction
//     across threadIdx.y. With few rows and long ones the rows are split across blocks and the
//     last block to finish combines the partials (a grid reduction, deterministic).
//   - Normalization: reductions whose results are broadcast back over the same rows (softmax,
//     layer and RMS norm): one kernel per row block that keeps the row in registers when it
//     fits (persistent, reading the input once) and a multi-pass variant that re-reads it
//     otherwise; a guard on the row length picks one at launch.
#pragma once

#include <string>
#include <vector>

#include "core/schedule/reduction_analysis.h"
#include "core/schedule/scheduler.h"

namespace fuserc {

// One compiled variant of a reduction or normalization kernel (a bucket of
// reduction_buckets.h). Nothing here reads hints: the variants follow the symbols' declared
// ranges, and what depends on bound sizes or the device (grid, split factor) is a launch
// formula evaluated at bind time (launch_formulas.h).
struct ReductionParams {
  std::string bucket = "multi";  // "s8", "s32", "s256", "x32", "t32", "multi", ...
  bool inner = true;
  // Inner: threads per row (threadIdx.x) and rows per block (threadIdx.y).
  // Outer: threads across the reduced dim (threadIdx.y) and columns per block (threadIdx.x).
  int threads_per_row = 128;
  int rows_per_block = 1;
  bool grid = false;            // rows may be split over blockIdx.y (a grid reduction)
  int elements_per_thread = 0;  // normalization: row elements each thread keeps in registers
  // Normalization: the vector path (taken when every row is aligned and its length a multiple
  // of `vector`) keeps `vectors` groups of `vector` consecutive elements per thread.
  int vector = 1;
  int vectors = 0;
  // Streaming passes (no row kept in registers): elements a thread loads per step of its loop
  // before folding any of them in (a lane loop the compiler unrolls), so that U loads are in
  // flight; the order of the folds is that of a loop without it (the same bits).
  int unroll = 1;
  int64_t limit = 0;  // inner: the longest row it takes; outer: the most columns; 0: any
};

// The most blocks a split row group takes (grid.y): 4 x the largest SM count modelled.
inline constexpr int64_t kMaxSplit = 4096;

// Normalizations of at most kFewRows rows (2 x the SMs of the largest GPU modelled) that may be
// longer than kLongRow elements (more than one block should walk) are left to a split
// reduction and a pointwise kernel (NormalizationScheduler::reject_reason).
inline constexpr int64_t kFewRows = 264;
inline constexpr int64_t kLongRow = int64_t{1} << 16;

// The most phases (reductions that each need the one before: a pass over the row and a
// block-wide reduction each) one reduction or normalization kernel takes. A layer norm's
// backward needs 2, a softmax 1 or 2; a chain of hundreds of dependent row reductions would be
// one kernel whose passes each recompute the chain before them (source and work growing with
// the square of the chain), so longer chains are cut into kernels of at most this many.
inline constexpr int kMaxPhases = 8;

class ReductionScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Reduction; }
  std::string reject_reason(const GroupFacts& group) const override;
};

class NormalizationScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Normalization; }
  std::string reject_reason(const GroupFacts& group) const override;
};

// Whether a reduction kernel (ReductionScheduler) of this group splits long rows over the grid
// whatever the number of rows: its pass over the domain (and the side outputs written during
// it) then spreads over the whole GPU however few the rows.
bool reduction_splits_rows(const ReductionAnalysis& a);

// The 32-bit variants of a group either scheduler accepted, in the order a launch tries them
// (the last takes any row). `vector`: elements of the widest row-walking dtype in 16 bytes;
// `cached_words`: 32-bit register words one row element needs over the arrays a normalization
// keeps in registers; `large`: the element computation is large (less is unrolled);
// `unroll`: loads in flight per thread in streaming passes (reduction_unroll).
std::vector<ReductionParams> reduction_variants(const ReductionAnalysis& a, SchedulerKind kind,
                                                int vector, double cached_words, bool large,
                                                int unroll);

}  // namespace fuserc
