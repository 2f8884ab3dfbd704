// Owns the transpose scheduler: a pointwise group in which some operand is read transposed,
// i.e. its contiguous dimension lands on an output dimension other than the innermost (a
// permute that moves the innermost dimension, or an input whose strides say so). A flat walk
// of the output reads such an operand one strided element per lane; this scheduler's kernels
// (codegen/lower/transpose_lowering.h) stage it through shared-memory tiles instead, so that
// both the reads and the writes are coalesced, with the fused elementwise work in the same
// kernel. It accepts exactly the groups the pointwise scheduler accepts that have such a read
// (the segmenter asks it first), so segmentation does not change, only the kernel.
#pragma once

#include <optional>
#include <vector>

#include "core/schedule/scheduler.h"

namespace fuserc {

// How `offset` moves when coordinate `c` (one of `coords`, index variables) grows by one: the
// step, when the offset is affine in `c` with a step free of coordinates; nothing otherwise.
std::optional<Expr> affine_step(const Expr& offset, const Expr& c, const std::vector<Expr>& coords);

// The output dimension along which an element offset (over the output's coordinates `coords`)
// is contiguous, when it is read transposed: step 1 along that dimension and, along the
// innermost, a step free of coordinates that is neither 0 (a broadcast) nor 1 (contiguous).
// -1 when the read is not transposed.
int transposed_dim(const Expr& offset, const std::vector<Expr>& coords);

struct TransposeParams {
  int dim = 0;             // the output dimension the tiled operands are contiguous along
  int tile = 32;           // tiles of tile x tile elements of (dim, innermost)
  int block_rows = 8;      // blocks of tile x block_rows threads: tile / block_rows elements each
  int tile_bytes = 32768;  // at most this much shared memory for the tiles of one kernel
  // Below these extents of the innermost dimension and of `dim` a tile is mostly idle and a
  // plain pointwise kernel reads whole sectors anyway: the package then also holds the
  // pointwise kernel, chosen at launch when an extent is smaller.
  int64_t min_inner = 32, min_dim = 16;
};

class TransposeScheduler : public Scheduler {
 public:
  SchedulerKind kind() const override { return SchedulerKind::Transpose; }
  std::string reject_reason(const GroupFacts& group) const override;
  TransposeParams heuristics(const Fusion& f, const Segment& segment) const;
};

}  // namespace fuserc
