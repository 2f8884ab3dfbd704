// Owns the rules for a kernel that writes an output in place into an input it also reads (the
// `aliases` of the graph): whatever order its threads and blocks run in, every read of the
// input must come before the write that overwrites that element. The schedulers ask these
// rules; a group that breaks them is split by the segmenter (and the plan then runs every
// kernel that reads the input before the one that writes it, see segmenter.cc).
//   - Pointwise: each element is written by the thread that computes it, so the input may only
//     be read at that element: through elementwise ops at the input's own shape.
//   - Reduction or normalization, output with one element per row (a statistic accumulated
//     into a buffer): the row's result is written once the row is reduced (by the lead thread;
//     in a grid reduction by the last block, after every block has combined its part), so the
//     input may be read anywhere in the row's own work (broadcast over the row, before the
//     reduction, or beside the result), never on another row, and never by the pass that
//     writes the results broadcast over the row (which runs beside the lead thread's write).
//   - Normalization, output of the domain's shape (a softmax or norm in place): written in the
//     last pass over the row, after every reduction, so the input may feed the reductions, and
//     otherwise be read only at the element being written (elementwise ops at its shape).
// Kernels emit every value of an element (or row) before storing any result, so a thread
// never reads what it has just written.
#pragma once

#include <string>

#include "core/ir/fusion.h"
#include "core/schedule/reduction_analysis.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

// Why a pointwise kernel of `group` could not write its aliased outputs in place; empty when
// it can.
std::string pointwise_in_place_reason(const Fusion& f, const Segment& group);

// The same for a reduction or normalization kernel of `group`, which the analysis `a` accepts.
std::string reduction_in_place_reason(const Fusion& f, const Segment& group,
                                      const ReductionAnalysis& a);

}  // namespace fuserc
