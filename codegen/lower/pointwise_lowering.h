// Owns lowering a pointwise segment to kernel IR. Each thread handles one vector of `vector`
// consecutive elements of the iteration domain (the shape of the segment's results):
//   - flat layout: the domain is walked as one linear index when every contiguous access is
//     contiguous across rows too; a vector may start anywhere;
//   - row layout: vectors stay inside rows of the innermost extent (a broadcast operand such
//     as a bias is then a vector load too), rows packed one after the other over a 1-D grid;
//     when every row is whole blocks (or the symbols' ranges guarantee long rows) the grid is
//     2-D (blockIdx.y walks the rows, looping when there are more than 65535).
// Blocks are 128 threads and every launch dimension is an expression over the symbols: the
// hints play no part, so one package launches well at any size.
// A vector path (16-byte loads and stores, taken when every vector access is aligned and the
// vector is whole) and a scalar path (per element, predicated) are both in the kernel.
// Kernels use 32-bit indexing when every offset fits, with a 64-bit variant when the
// symbols' ranges allow larger tensors; a guard selects one at launch.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_summary.h"
#include "codegen/kir/kir.h"
#include "core/schedule/pointwise_scheduler.h"

namespace fuserc::lower {

struct LoweredKernel {
  KernelSummary summary;  // everything but the source and the binaries
  kir::Kernel kernel;
  // When several variants exist, launch the first whose condition holds (non-zero); `reason`
  // says the condition in words ("row length H <= 2048; every index fits in 32 bits").
  Expr selected_when = Expr(1);
  std::string reason;
};

std::vector<LoweredKernel> lower_pointwise(const Fusion& f, const Segment& segment,
                                           const PointwiseParams& params,
                                           const std::string& kernel_name);

}  // namespace fuserc::lower
