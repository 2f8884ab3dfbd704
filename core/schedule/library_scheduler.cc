#include "core/schedule/library_scheduler.h"

namespace fuserc {

std::string LibraryScheduler::reject_reason(const GroupFacts& facts) const {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  if (group.ops.size() != 1) return "a library step is one matrix product";
  // A reshape of a product into a graph output: the product is stored in the output's buffer
  // and no kernel runs (core/segment/output_views.h), whatever its index arithmetic.
  if (reshape_into_output(f, group.ops[0], true)) return "";
  const Op& op = f.ops[group.ops[0]];
  if (op.info().group != OpGroup::Matrix)
    return std::string("'") + op_name(op.kind) + "' is not a matrix product";
  return "";
}

}  // namespace fuserc
