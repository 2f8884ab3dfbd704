// Owns row alignments: how a value computed in a reduction kernel lines up with the rows of
// the reduced domain D (see reduction_analysis.h). Per axis of the value, the domain dim whose
// coordinate it follows (a kept dim of D), or -1 where it does not vary (extent 1, or
// broadcast). The reduction analysis uses them to check that a reduction's result is only read
// back on its own row; the in-place rules (in_place.h) use them to check that an input written
// in place is only read on the row that overwrites it.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "core/ir/fusion.h"
#include "core/schedule/reduction_analysis.h"

namespace fuserc {

using Alignment = std::vector<int>;

// The view ops that may carry a reduction's result back over its row.
bool broadcasts_back(OpKind k);

// The alignment of a reduction's result `out` (one element per row, keepdim or not).
Alignment reduction_alignment(const ReductionAnalysis& a, const Value& out);

// Read at the domain's coordinates, a value with this alignment reads its own row.
bool reads_own_row(const Alignment& al);

// A value with one element per row stores the rows in the order of their linear index.
bool in_row_order(const ReductionAnalysis& a, const Value& v, const Alignment& al);

// The alignment of an op's result from its operands' (those in `align`; the others do not
// vary with the rows), or nothing when the op combines values of different rows.
std::optional<Alignment> propagate(const Fusion& f, const Op& op,
                                   const std::map<ValueId, Alignment>& align);

}  // namespace fuserc
