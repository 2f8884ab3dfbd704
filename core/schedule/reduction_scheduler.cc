#include "core/schedule/reduction_scheduler.h"

#include <algorithm>

#include "core/schedule/in_place.h"
#include "core/schedule/reduction_buckets.h"

namespace fuserc {

namespace {

std::string phases_reason(const ReductionAnalysis& a) {
  if (a.phases <= kMaxPhases) return "";
  return std::to_string(a.phases) + " reductions that each need the one before (at most " +
         std::to_string(kMaxPhases) + " passes over the rows in one kernel)";
}

}  // namespace

std::string ReductionScheduler::reject_reason(const GroupFacts& facts) const {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  const ReductionAnalysis& a = facts.reductions();
  if (!a.ok()) return a.error;
  if (std::string why = phases_reason(a); !why.empty()) return why;
  // Full outputs that depend on no reduction are written during the first pass over the domain
  // (side outputs); one broadcast back from a reduction's result is a normalization's.
  for (ValueId o : a.full_outputs)
    if (std::find(a.side_outputs.begin(), a.side_outputs.end(), o) == a.side_outputs.end())
      return "its result '" + f.value(o).name +
             "' is a reduction's result broadcast back (that is a normalization)";
  if (!a.inner && a.phases > 1)
    return "a reduction over strided rows needs another reduction's result";
  // A side output written in place overwrites its element during the first pass, which later
  // passes would read again.
  if (a.phases > 1)
    for (const auto& [out, in] : f.aliases)
      if (std::find(a.side_outputs.begin(), a.side_outputs.end(), out) != a.side_outputs.end())
        return "output '" + f.value(out).name + "' is written in place into '" + f.value(in).name +
               "' during the first of " + std::to_string(a.phases) + " passes over the rows";
  return reduction_in_place_reason(f, group, a);
}

std::string NormalizationScheduler::reject_reason(const GroupFacts& facts) const {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  const ReductionAnalysis& a = facts.reductions();
  if (!a.ok()) return a.error;
  if (a.full_outputs.empty()) return "no result is broadcast back over the rows";
  if (std::string why = phases_reason(a); !why.empty()) return why;
  if (!a.inner) return "the reduced rows are not contiguous";
  // A normalization kernel gives each row one block; at most kFewRows rows longer than
  // kLongRow (a batch norm's channels of N*H*W elements) would leave most of a GPU idle while
  // each block walks its row twice. A reduction kernel splits such rows across blocks (a grid
  // reduction) and a pointwise kernel applies the statistics: the same passes over memory
  // (the statistics, then the row read again and written), on every SM.
  if (a.rows.hi() > 0 && a.rows.hi() <= kFewRows && a.row_length.hi() > kLongRow)
    return "at most " + std::to_string(a.rows.hi()) + " rows of up to " +
           std::to_string(a.row_length.hi()) +
           " elements: a split reduction and a pointwise pass fill the GPU";
  return reduction_in_place_reason(f, group, a);
}

bool reduction_splits_rows(const ReductionAnalysis& a) {
  return !a.inner || a.phases == 1;
}

std::vector<ReductionParams> reduction_variants(const ReductionAnalysis& a, SchedulerKind kind,
                                                int vector, double cached_words, bool large,
                                                int unroll) {
  std::vector<ReductionBucket> buckets;
  if (kind == SchedulerKind::Normalization)
    buckets = normalization_buckets(a.row_length, vector, cached_words, unroll, large);
  else if (a.inner)
    buckets = inner_reduction_buckets(a.row_length, a.rows, vector, unroll, a.phases == 1);
  else
    buckets = outer_reduction_buckets(a.rows, 1, unroll);  // one column per thread
  std::vector<ReductionParams> out;
  for (const ReductionBucket& b : buckets) {
    ReductionParams p;
    p.bucket = b.name;
    p.inner = b.inner;
    p.limit = b.limit;
    p.grid = b.split;
    p.unroll = b.persistent > 0 ? 1 : b.unroll;
    if (b.inner) {
      p.threads_per_row = b.threads;
      p.rows_per_block = b.rows;
      p.elements_per_thread = b.persistent * b.vector;
      p.vector = b.vector;
      p.vectors = b.persistent;
      // On the scalar path row elements are loaded one per thread and step, so a thread caches no
      // more than the longest row this bucket sees needs (768 over 128 threads: 6, not a whole
      // vector of 8, whose guarded extra steps cost layer norm a third of its bandwidth on an
      // H100).
      if (p.elements_per_thread > 0 && a.row_length.hi() > 0) {
        const int64_t longest = std::min(a.row_length.hi(), b.capacity());
        p.elements_per_thread = static_cast<int>(
            std::min<int64_t>(p.elements_per_thread, (longest + b.threads - 1) / b.threads));
      }
    } else {
      p.threads_per_row = b.rows;    // threads across the reduced rows
      p.rows_per_block = b.threads;  // columns per block
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace fuserc
