// Owns recognising an online log-sum-exp in a reduction group: a row's
// sum(exp(x - amax(x))) (max or amax; the max's result read back on its own row, directly or
// through views that broadcast it; x, the difference, the exp and the sum all f32 or all f64)
// needs the max only to rescale, so both can accumulate in one pass over the row: each thread
// keeps (m, s) and rescales s by exp(m_old - m_new) when its maximum grows, and partials
// combine the same way (the preamble's fz_lse). The sum is marked (ReductionInfo::online_max)
// and runs in the max's phase; the phases of the reductions after it are recomputed. This
// makes softmax, log-softmax and cross-entropy read their rows once for the statistics.
#pragma once

#include "core/schedule/reduction_analysis.h"

namespace fuserc {

// Marks every such sum in `a` (whose reductions have their `after` sets) and computes the
// phases (each reduction's, and a.phases).
void find_online_lse(const Fusion& f, const Segment& group, ReductionAnalysis& a);

// Undoes it: every sum accumulates in a phase after its max's again, and the phases are
// recomputed. For a kernel that holds its row in registers, where the max pass reads nothing
// twice: the sum then takes one exp per element, where the online form takes two and each
// combine of partial (m, s) pairs two more.
void separate_online_lse(ReductionAnalysis& a);

}  // namespace fuserc
