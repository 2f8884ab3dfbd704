#include "core/schedule/transpose_scheduler.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/ir/element_access.h"
#include "core/schedule/element_cost.h"
#include "core/schedule/pointwise_scheduler.h"

namespace fuserc {

std::optional<Expr> affine_step(const Expr& offset, const Expr& c,
                                const std::vector<Expr>& coords) {
  auto at = [&](int64_t value, const Expr& e) {
    return substitute(e, [&](const std::string& s) -> std::optional<Expr> {
      if (s == c.name()) return Expr(value);
      return std::nullopt;
    });
  };
  Expr diff = offset - at(0, offset);
  Expr step = at(1, diff);
  if (!(diff == step * c)) return std::nullopt;
  for (const auto& s : free_symbols(step))
    for (const auto& x : coords)
      if (s == x.name()) return std::nullopt;
  return step;
}

int transposed_dim(const Expr& offset, const std::vector<Expr>& coords) {
  if (coords.size() < 2) return -1;
  std::optional<Expr> inner = affine_step(offset, coords.back(), coords);
  if (!inner || inner->is_const(0) || inner->is_const(1)) return -1;
  for (size_t d = 0; d + 1 < coords.size(); ++d) {
    std::optional<Expr> s = affine_step(offset, coords[d], coords);
    if (s && s->is_const(1)) return static_cast<int>(d);
  }
  return -1;
}

namespace {

using Key = std::pair<ValueId, std::vector<Expr>>;

struct KeyHash {
  size_t operator()(const Key& k) const {
    size_t h = std::hash<ValueId>()(k.first);
    for (const auto& e : k.second) h = h * 1000003u ^ e.hash();
    return h;
  }
};

// Only a permute or an input with strides can make a read transposed (a reshape's offsets
// divide, which affine_step refuses): groups without one are refused without a walk.
bool may_read_transposed(const Fusion& f, const Segment& group) {
  for (int k : group.ops)
    if (f.ops[k].kind == OpKind::Permute) return true;
  for (ValueId v : group.inputs)
    if (!f.value(v).strides.empty()) return true;
  return false;
}

Expr memory_offset(const Value& v, const std::vector<Expr>& coords) {
  if (v.strides.empty()) return linearize(coords, v.shape);
  Expr off(0);
  for (size_t d = 0; d < coords.size(); ++d) off = off + coords[d] * v.strides[d];
  return off;
}

// The output dimension the group's transposed reads are contiguous along (the one with the
// most bytes per element when they disagree), or -1. Only reads every element makes count:
// a read in a branch of a pad or a cat may be out of bounds for the others, so it cannot be
// staged for the whole tile. One walk over the (value, position) pairs, as the cost model's.
int transpose_dim(const Fusion& f, const Segment& group) {
  const auto& domain = f.value(group.outputs[0]).shape;
  std::vector<Expr> coords;
  for (size_t d = 0; d < domain.size(); ++d)
    coords.push_back(Expr::index("fz_c" + std::to_string(d), domain[d]));
  std::unordered_set<int> in_group(group.ops.begin(), group.ops.end());
  std::unordered_map<Key, bool, KeyHash> seen;  // -> reached by a read every element makes
  std::vector<std::pair<Key, bool>> stack;
  for (ValueId o : group.outputs) stack.push_back({{o, coords}, true});
  std::map<int, int64_t> bytes;
  const size_t limit = static_cast<size_t>(kMaxPositionsPerValue * kMaxKernelPositions);
  while (!stack.empty() && seen.size() <= limit) {
    auto [key, always] = std::move(stack.back());
    stack.pop_back();
    auto it = seen.find(key);
    if (it != seen.end() && (it->second || !always)) continue;
    seen[key] = always;
    const Value& v = f.value(key.first);
    if (v.def_op >= 0 && in_group.count(v.def_op) && has_element_access(f.ops[v.def_op])) {
      const Op& op = f.ops[v.def_op];
      bool branch = op.kind == OpKind::Pad || op.kind == OpKind::Cat;
      auto arg_coords = operand_coords(f, op, key.second);
      for (size_t i = 0; i < op.args.size(); ++i)
        if (!op.args[i].is_literal())
          stack.push_back({{op.args[i].value, std::move(arg_coords[i])}, always && !branch});
      continue;
    }
    if (!always || v.scalar_input || v.shape.empty()) continue;
    int d = transposed_dim(memory_offset(v, key.second), coords);
    if (d >= 0) bytes[d] += static_cast<int64_t>(dtype_size(v.dtype));
  }
  int best = -1;
  int64_t best_bytes = 0;
  for (const auto& [d, b] : bytes)
    if (b > best_bytes) best = d, best_bytes = b;
  return best;
}

}  // namespace

std::string TransposeScheduler::reject_reason(const GroupFacts& facts) const {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  // The cheap test first: most groups the segmenter asks about have no permute.
  if (!may_read_transposed(f, group)) return "no operand is read transposed";
  if (!PointwiseScheduler().reject_reason(facts).empty()) return "it is not a pointwise group";
  const auto& domain = f.value(group.outputs[0]).shape;
  if (domain.size() < 2) return "no operand is read transposed";
  int dim = transpose_dim(f, group);
  if (dim < 0) return "no operand is read transposed";
  TransposeParams p;
  if (domain.back().hi() < p.min_inner || domain[dim].hi() < p.min_dim)
    return "the transposed extents are too small for tiles";
  return "";
}

TransposeParams TransposeScheduler::heuristics(const Fusion& f, const Segment& segment) const {
  TransposeParams p;
  p.dim = transpose_dim(f, segment);
  return p;
}

}  // namespace fuserc
