// Owns the register estimate the segmenter applies to horizontal merges: how many registers per
// thread a kernel needs to hold what it keeps live. A pointwise kernel holds a vector (up to 16
// bytes) of every input it reads and every result it writes until the vector is stored; a
// reduction holds an accumulator per reduction (three words for Welford's) and, when it writes
// side outputs during its pass, the vectors a pointwise kernel of them would, and a normalization
// that keeps its rows in registers holds its elements per thread of every input read along the
// row. Past the budget registers spill (or occupancy falls below what hides memory latency), so
// sibling groups stop merging there instead of at a fixed count of results.
#pragma once

#include <cstdint>

#include "core/schedule/scheduler.h"

namespace fuserc {

// At most this many registers per thread, estimated, for a kernel made of sibling groups (a
// quarter of an SM's threads resident at 255 would halve the bytes in flight; 128 keeps half).
inline constexpr int64_t kRegisterBudget = 128;

// The estimate for `group` (boundary filled in) compiled by a scheduler of `kind`.
int64_t estimated_registers(const GroupFacts& group, SchedulerKind kind,
                            const HeuristicHints& hints);

// The pointwise estimate from the tensors alone: `bytes` holds the dtype size of every
// non-scalar input and every result.
int64_t pointwise_registers(const std::vector<size_t>& bytes);

}  // namespace fuserc
