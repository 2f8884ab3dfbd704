// Owns the grouping of independent kernels into plan steps that run side by side (horizontal
// fusion across domains, Inductor's combo kernels, PyTorch's multi-tensor apply): pointwise
// segments that neither read nor write what the others of their step write are gathered into
// one step, at the place of the first of them, so that code generation can launch them as one
// kernel (codegen/lower/combo_kernel.h). An optimizer step over hundreds of parameters is the
// case: hundreds of small independent kernels.
//
// A segment joins the open step only when moving it up to the step's place changes nothing it
// sees or leaves: none of the segments it passes (or the step's members) writes what it reads,
// or reads or writes what it writes (an output written in place counts as its input's buffer).
// The memory plan then treats a step's members as live at once. Linear in the segments'
// reads and writes.
#pragma once

#include "core/ir/segmented_fusion.h"

namespace fuserc {

// Reorders `s.segments` so that each step's members are consecutive and fills `s.launches`.
void group_independent_launches(const Fusion& f, SegmentedFusion& s);

}  // namespace fuserc
