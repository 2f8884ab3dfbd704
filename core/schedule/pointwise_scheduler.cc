#include "core/schedule/pointwise_scheduler.h"

#include <algorithm>

#include "core/base/diagnostics.h"
#include "core/schedule/in_place.h"

namespace fuserc {

bool is_pointwise_op(const Op& op) {
  switch (op.info().group) {
    case OpGroup::Unary:
    case OpGroup::Binary:
    case OpGroup::Ternary:
    case OpGroup::Cast:
    case OpGroup::Shape:
    case OpGroup::Creation:
    case OpGroup::Random:
    case OpGroup::Control: return true;
    case OpGroup::Reduction:
    case OpGroup::Reserved: return false;
  }
  return false;
}

std::string PointwiseScheduler::reject_reason(const Fusion& f, const Segment& group) const {
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

PointwiseParams PointwiseScheduler::heuristics(const Fusion& f, const Segment& segment,
                                               const HeuristicHints& hints) const {
  PointwiseParams p;
  size_t widest = 1;
  for (ValueId v : segment.inputs)
    if (!f.value(v).scalar_input) widest = std::max(widest, dtype_size(f.value(v).dtype));
  for (ValueId v : segment.outputs) widest = std::max(widest, dtype_size(f.value(v).dtype));
  p.max_vector = static_cast<int>(16 / widest);
  // Small domains get smaller blocks, so that more than one block shares the work.
  int64_t numel = hints.value_of(f.value(segment.outputs[0]).numel());
  int64_t per_thread = p.max_vector;
  while (p.block > 32 && numel < static_cast<int64_t>(p.block) * per_thread * 4) p.block /= 2;
  return p;
}

}  // namespace fuserc
