#include "core/schedule/pointwise_scheduler.h"

#include <algorithm>

#include "core/base/diagnostics.h"
#include "core/ir/element_access.h"
#include "core/schedule/in_place.h"

namespace fuserc {

bool is_pointwise_op(const Op& op) {
  return has_element_access(op);  // every op but reductions reads its operands per element
}

std::string PointwiseScheduler::reject_reason(const GroupFacts& facts) const {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  for (int k : group.ops) {
    const Op& op = f.ops[k];
    if (!is_pointwise_op(op))
      return "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) + "' (out '" +
             f.value(op.outs[0]).name + "') is not elementwise";
  }
  if (group.outputs.empty()) return "it writes nothing";
  const auto& domain = f.value(group.outputs[0]).shape;
  for (ValueId o : group.outputs)
    if (f.value(o).shape != domain)
      return "its results '" + f.value(group.outputs[0]).name + "' " + shape_to_string(domain) +
             " and '" + f.value(o).name + "' " + shape_to_string(f.value(o).shape) +
             " have different shapes";
  return pointwise_in_place_reason(f, group);
}

PointwiseParams PointwiseScheduler::heuristics(const Fusion& f, const Segment& segment) const {
  PointwiseParams p;
  size_t widest = 1;
  for (ValueId v : segment.inputs)
    if (!f.value(v).scalar_input) widest = std::max(widest, dtype_size(f.value(v).dtype));
  for (ValueId v : segment.outputs) widest = std::max(widest, dtype_size(f.value(v).dtype));
  p.max_vector = static_cast<int>(16 / widest);
  // The block stays at 128 threads for any size: a small domain simply gets few blocks (the
  // grid is an expression over the symbols), while smaller blocks would cap a large one at
  // half an SM's threads (32 resident blocks of 32).
  return p;
}

}  // namespace fuserc
