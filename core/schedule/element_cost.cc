#include "core/schedule/element_cost.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/element_access.h"

namespace fuserc {
namespace {

using Key = std::pair<ValueId, std::vector<Expr>>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<ValueId>()(k.first);
    for (const auto& e : k.second) h = h * 1000003u ^ e.hash();
    return h;
  }
};

std::vector<Expr> index_coords(const Value& v) {
  std::vector<Expr> c;
  for (size_t d = 0; d < v.shape.size(); ++d)
    c.push_back(Expr::index("fz_c" + std::to_string(d), v.shape[d]));
  return c;
}

}  // namespace

ElementCost element_cost(const Fusion& f, const Segment& group) {
  std::unordered_set<int> in_group(group.ops.begin(), group.ops.end());
  std::vector<Key> stack;
  for (ValueId o : group.outputs) stack.emplace_back(o, index_coords(f.value(o)));
  for (int k : group.ops)
    if (f.ops[k].info().group == OpGroup::Reduction && !f.ops[k].args[0].is_literal()) {
      ValueId in = f.ops[k].args[0].value;
      stack.emplace_back(in, index_coords(f.value(in)));
    }
  std::unordered_set<Key, KeyHash> seen;
  std::unordered_set<ValueId> values;
  ElementCost cost;
  while (!stack.empty()) {
    Key key = std::move(stack.back());
    stack.pop_back();
    if (seen.count(key)) continue;
    for (const auto& c : key.second) cost.index_size = std::max(cost.index_size, c.size());
    if (cost.index_size > kMaxIndexSize ||
        static_cast<int64_t>(seen.size()) > kMaxPositionsPerValue * kMaxKernelPositions)
      break;
    const Value& v = f.value(key.first);
    values.insert(key.first);
    bool computed =
        v.def_op >= 0 && in_group.count(v.def_op) && has_element_access(f.ops[v.def_op]);
    if (computed) {
      const Op& op = f.ops[v.def_op];
      auto coords = operand_coords(f, op, key.second);
      for (size_t i = 0; i < op.args.size(); ++i)
        if (!op.args[i].is_literal()) stack.emplace_back(op.args[i].value, std::move(coords[i]));
    }
    seen.insert(std::move(key));
  }
  cost.positions = static_cast<int64_t>(seen.size());
  cost.values = static_cast<int64_t>(values.size());
  return cost;
}

std::string element_cost_reason(const Fusion& f, const Segment& group) {
  ElementCost c = element_cost(f, group);
  if (c.positions > kMaxPositionsPerValue * c.values)
    return "it would compute its " + std::to_string(c.values) + " values at " +
           std::to_string(c.positions) + " positions (more than " +
           std::to_string(kMaxPositionsPerValue) + " per value)";
  if (c.positions > kMaxKernelPositions)
    return "it would compute " + std::to_string(c.positions) + " element values (more than " +
           std::to_string(kMaxKernelPositions) + " in one kernel)";
  if (c.index_size > kMaxIndexSize)
    return "its index arithmetic would grow to " + std::to_string(c.index_size) +
           " terms (more than " + std::to_string(kMaxIndexSize) + ")";
  return "";
}

}  // namespace fuserc
