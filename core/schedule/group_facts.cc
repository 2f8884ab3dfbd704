#include "core/schedule/group_facts.h"

namespace fuserc {

const ReductionAnalysis& GroupFacts::reductions() const {
  if (!reductions_) reductions_ = analyze_reductions(f_, group_);
  return *reductions_;
}

}  // namespace fuserc
