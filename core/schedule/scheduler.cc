#include "core/schedule/scheduler.h"

#include "core/schedule/library_scheduler.h"
#include "core/schedule/pointwise_scheduler.h"
#include "core/schedule/reduction_scheduler.h"
#include "core/schedule/transpose_scheduler.h"

namespace fuserc {

int64_t HeuristicHints::value_of(const Expr& e) const {
  return evaluate(e, [&](const std::string& s) -> std::optional<int64_t> {
    for (const auto& [name, v] : symbols)
      if (name == s) return v;
    return std::nullopt;
  });
}

HeuristicHints HeuristicHints::from(const Fusion& f) {
  HeuristicHints h;
  for (const auto& s : f.symbols) h.symbols.emplace_back(s.name, s.hint);
  return h;
}

const std::vector<const Scheduler*>& all_schedulers() {
  static const TransposeScheduler transpose;  // before pointwise: it takes a subset of its groups
  static const PointwiseScheduler pointwise;
  static const ReductionScheduler reduction;
  static const NormalizationScheduler normalization;
  static const LibraryScheduler library;
  static const std::vector<const Scheduler*> list = {&transpose, &pointwise, &reduction,
                                                     &normalization, &library};
  return list;
}

}  // namespace fuserc
