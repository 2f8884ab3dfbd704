// Owns combo kernels: independent pointwise kernels of one plan step
// (core/segment/launch_groups.h) launched as one kernel, a range of blocks per member, as
// Inductor's combo kernels and PyTorch's multi-tensor apply do for an optimizer's hundreds of
// small parameters. Each member keeps the code its own lowering gave it (a device function of
// its block index within its range); the combo kernel's grid is the sum of the members' grids,
// the ranges' starts are size arguments from the size program, and a block finds its member
// by comparing its index with them. Members that differ only in names (an optimizer's
// parameters of one shape) share one device function, compiled once and called, not inlined:
// an Adam step over 200 parameters of 7 shapes is 4 kernels of at most 7 functions. Variants: members with a 32-bit and a 64-bit kernel give a
// combo of their 32-bit kernels (when all of them fit) and one of their 64-bit kernels.
#pragma once

#include <string>
#include <vector>

#include "codegen/lower/pointwise_lowering.h"

namespace fuserc::lower {

// At most this many members per combo kernel, and at most this many bytes of parameters (the
// limit every CUDA driver accepts).
inline constexpr size_t kMaxComboMembers = 64;
inline constexpr size_t kMaxComboParamBytes = 4096;

// Whether a segment's lowered variants can be a combo member: pointwise, a 1-D grid, no
// scratch, no random numbers, and one variant or a 32/64-bit pair.
bool combinable(const std::vector<LoweredKernel>& variants);

// Splits members (each combinable) into combo kernels: same block size, within the limits
// above, in order. Each entry lists indices into `members`; an entry of one runs alone.
std::vector<std::vector<int>> plan_combos(const std::vector<std::vector<LoweredKernel>>& members);

// The combo kernel's variants (the first whose condition holds runs) for members named by
// `which` (indices into `members`, at least two).
std::vector<LoweredKernel> lower_combo(const std::vector<std::vector<LoweredKernel>>& members,
                                       const std::vector<int>& which, const std::string& name);

}  // namespace fuserc::lower
