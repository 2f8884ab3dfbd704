#include "core/schedule/reduction_scheduler.h"

#include <algorithm>

#include "core/schedule/in_place.h"

namespace fuserc {
namespace {

int pow2_at_least(int64_t v) {
  int p = 1;
  while (p < v && p < (1 << 20)) p *= 2;
  return p;
}

}  // namespace

std::string ReductionScheduler::reject_reason(const Fusion& f, const Segment& group) const {
  ReductionAnalysis a = analyze_reductions(f, group);
  if (!a.ok()) return a.error;
  if (!a.full_outputs.empty())
    return "its result '" + f.value(a.full_outputs[0]).name +
           "' is not reduced (that is a normalization)";
  if (!a.inner && a.phases > 1)
    return "a reduction over strided rows needs another reduction's result";
  return reduction_in_place_reason(f, group, a);
}

std::string NormalizationScheduler::reject_reason(const Fusion& f, const Segment& group) const {
  ReductionAnalysis a = analyze_reductions(f, group);
  if (!a.ok()) return a.error;
  if (a.full_outputs.empty()) return "no result is broadcast back over the rows";
  if (!a.inner) return "the reduced rows are not contiguous";
  return reduction_in_place_reason(f, group, a);
}

ReductionParams reduction_heuristics(const ReductionAnalysis& a, SchedulerKind kind,
                                     const HeuristicHints& hints) {
  ReductionParams p;
  p.inner = a.inner;
  int64_t rows = std::max<int64_t>(1, hints.value_of(a.rows));
  int64_t length = std::max<int64_t>(1, hints.value_of(a.row_length));
  constexpr int64_t kBusyRows = 132;  // about one row block per SM of a large GPU
  if (a.inner) {
    int tpr = std::clamp(pow2_at_least((length + 3) / 4), 8, 1024);
    if (kind == SchedulerKind::Normalization) {
      // Up to 8 elements per thread in registers; longer rows take more threads.
      tpr = std::clamp(pow2_at_least((length + 7) / 8), 32, 1024);
      p.elements_per_thread = static_cast<int>(std::min<int64_t>(16, (length + tpr - 1) / tpr));
    }
    p.threads_per_row = tpr;
    p.rows_per_block = std::max(1, 128 / tpr);
    p.grid = kind == SchedulerKind::Reduction && a.phases == 1 && rows < kBusyRows &&
             length > int64_t{tpr} * 8;
  } else {
    p.rows_per_block = 32;  // columns per block: 128 contiguous bytes of f32
    p.threads_per_row = 8;  // rows in flight
    int64_t column_blocks = (rows + 31) / 32;
    p.grid = column_blocks < kBusyRows && length > 8 * 16;
  }
  // Split rows over enough blocks to give every SM a few (the split depends on the shape
  // only, so results stay deterministic).
  if (p.grid) {
    int64_t row_groups = (rows + p.rows_per_block - 1) / p.rows_per_block;
    p.max_blocks_per_row = static_cast<int>(
        std::clamp<int64_t>((4 * kBusyRows + row_groups - 1) / row_groups, 2, 256));
  }
  return p;
}

}  // namespace fuserc
