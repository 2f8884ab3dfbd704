// Owns the scheduler interface. A scheduler answers two questions about a group of ops: can I
// compile it as one kernel (and if not, why not), and with what parameters. The segmenter
// only asks; lowering (codegen) applies the parameters.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"
#include "core/schedule/group_facts.h"

namespace fuserc {

// Symbol values heuristics plan for (the graph's hints).
struct HeuristicHints {
  std::vector<std::pair<std::string, int64_t>> symbols;
  int64_t value_of(const Expr& e) const;  // e evaluated at the hints
  static HeuristicHints from(const Fusion& f);
};

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual SchedulerKind kind() const = 0;
  // Empty when this scheduler can compile the group (ops, inputs and outputs filled) as one
  // kernel; otherwise the reason it cannot.
  virtual std::string reject_reason(const GroupFacts& group) const = 0;
};

// Every scheduler, in the order the segmenter asks them.
const std::vector<const Scheduler*>& all_schedulers();

}  // namespace fuserc
