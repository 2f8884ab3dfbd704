// Owns writing an intermediate straight into the graph output that is only a reshape of it:
// `out = reshape(p)` where `p` is written by another segment (a matrix product or a
// convolution's product, whose result comes out flat) and `out` is a graph output not written
// in place. A reshape changes no byte of a contiguous tensor, so `p` is stored in `out`'s
// buffer and the reshape is no kernel: a convolution whose result is a graph output is one
// library step, not a library step and a copy (whose index arithmetic, under floor-divided
// extents such as a strided convolution of a strided convolution's output, may not even fit a
// kernel).
#pragma once

#include "core/ir/segmented_fusion.h"

namespace fuserc {

// Removes each such reshape's segment and records (p, out) in `s.stored_in`.
void store_reshaped_outputs(const Fusion& f, SegmentedFusion& s);

}  // namespace fuserc
