// The view-chain pass (a canonicalisation for the schedulers): a view of a view reads the
// original value through one view. A reshape, squeeze or unsqueeze of a reshape becomes one
// reshape (and one that gives back the original shape disappears), a permute of a permute one
// permute with the composed order. Index arithmetic then goes through one view instead of
// several, which keeps coordinate expressions small (the element cost model bounds them) and
// lets the reduction analysis see a normalization's result viewed in another shape directly.
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

bool reshapes(OpKind k) {
  return k == OpKind::Reshape || k == OpKind::Squeeze || k == OpKind::Unsqueeze;
}

}  // namespace

void collapse_views(Fusion& f) {
  Replacements r(f);
  for (Op& op : f.ops) {
    r.read(op);
    if (op.info().group != OpGroup::Shape || op.args[0].is_literal()) continue;
    const Op* p = f.producer(op.args[0].value);
    if (!p || p->args.empty() || p->args[0].is_literal()) continue;
    ValueId source = p->args[0].value;
    const Value& out = f.value(op.outs[0]);
    if (reshapes(op.kind) && reshapes(p->kind)) {
      if (out.shape == f.value(source).shape && replaceable(f, op.outs[0])) {
        r.replace(f, op.outs[0], source);
      } else if (op.kind == OpKind::Reshape || p->kind == OpKind::Reshape) {
        op.kind = OpKind::Reshape;
        op.attrs = OpAttrs{};
        op.attrs.shape = out.shape;
        op.args[0].value = source;
      }
    } else if (op.kind == OpKind::Permute && p->kind == OpKind::Permute) {
      std::vector<int64_t> dims(op.attrs.dims.size());
      for (size_t j = 0; j < dims.size(); ++j) dims[j] = p->attrs.dims[op.attrs.dims[j]];
      op.attrs.dims = dims;
      op.args[0].value = source;
    }
  }
}

}  // namespace fuserc
