// The no-op-view pass: a view that gives back its operand unchanged (a reshape, expand,
// squeeze or unsqueeze to the same shape, the identity permutation or broadcast, a slice of
// everything, a pad by nothing, a cat of one tensor) is removed: its readers read the operand.
// Fewer views mean shorter index arithmetic and fewer values the schedulers must reason about.
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

bool identity_order(const std::vector<int64_t>& dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool is_noop(const Fusion& f, const Op& op) {
  if (op.info().group != OpGroup::Shape || op.args[0].is_literal()) return false;
  const Value& in = f.value(op.args[0].value);
  if (in.shape != f.value(op.outs[0]).shape) return false;
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::Reshape:
    case OpKind::Expand:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze: return true;
    case OpKind::Permute: return identity_order(a.dims);
    case OpKind::BroadcastInDim: return identity_order(a.broadcast_dims);
    case OpKind::Slice:
      for (size_t d = 0; d < a.starts.size(); ++d)
        if (!a.starts[d].is_const(0) || !a.steps[d].is_const(1)) return false;
      return true;
    case OpKind::Pad:
      for (const auto& [lo, hi] : a.pads)
        if (lo != 0 || hi != 0) return false;
      return true;
    case OpKind::Cat: return op.args.size() == 1;
    default: return false;
  }
}

}  // namespace

void remove_noop_views(Fusion& f) {
  Replacements r(f);
  for (Op& op : f.ops) {
    r.read(op);
    if (is_noop(f, op) && replaceable(f, op.outs[0])) r.replace(f, op.outs[0], op.args[0].value);
  }
}

}  // namespace fuserc
