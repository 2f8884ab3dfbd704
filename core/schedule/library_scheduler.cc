#include "core/schedule/library_scheduler.h"

namespace fuserc {

std::string LibraryScheduler::reject_reason(const Fusion& f, const Segment& group) const {
  if (group.ops.size() != 1) return "a library step is one matrix product";
  const Op& op = f.ops[group.ops[0]];
  if (op.info().group != OpGroup::Matrix)
    return std::string("'") + op_name(op.kind) + "' is not a matrix product";
  return "";
}

}  // namespace fuserc
