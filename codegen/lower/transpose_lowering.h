// Owns lowering a transpose segment (core/schedule/transpose_scheduler.h) to kernel IR. Each
// block handles one tile of tile x tile output elements over (dim, innermost) and one
// combination of the other coordinates, decoded from a 1-D grid:
//   1. read phase: every operand read transposed (unconditionally, contiguous along `dim`) is
//      copied into its own shared-memory tile, threadIdx.x walking `dim`, so the reads are
//      coalesced; rows are padded by one 4-byte word so that the column reads of phase 2 hit
//      32 different banks;
//   2. __syncthreads(), then the write phase: threadIdx.x walks the innermost dimension, the
//      element computation runs once per element with the tiled operands read from shared
//      memory and the others straight from memory, and the stores are coalesced.
// Partial tiles are predicated on both extents, so any size works. When the symbols' ranges
// allow extents too small for tiles, the pointwise kernels follow the tile kernels in the
// variant list, chosen at launch by the extents. 32-bit indexing with a guarded 64-bit variant,
// as for pointwise kernels.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/pointwise_lowering.h"
#include "core/schedule/transpose_scheduler.h"

namespace fuserc::lower {

std::vector<LoweredKernel> lower_transpose(const Fusion& f, const Segment& segment,
                                           const TransposeParams& params,
                                           const PointwiseParams& pointwise,
                                           const std::string& kernel_name);

}  // namespace fuserc::lower
