// The wide-cat pass: a cat of more than kMaxCatOperands tensors becomes a cat of cats of at
// most that many each (levels of them, as many as it takes). One kernel computes a value per
// operand it reads (the element cost model bounds them at 2,048 per kernel), so a cat of
// thousands of tensors had no scheduler at all; its parts are kernels within the bounds, and
// the segmenter merges what fits. The values are the same: a cat of consecutive parts is the
// cat of their operands.
#include <set>
#include <string>

#include "core/passes/presegmentation.h"

namespace fuserc {
namespace {

constexpr size_t kMaxCatOperands = 256;

}  // namespace

void split_wide_cats(Fusion& f) {
  bool any = false;
  for (const Op& op : f.ops)
    any = any || (op.kind == OpKind::Cat && op.args.size() > kMaxCatOperands);
  if (!any) return;
  std::set<std::string> names;
  for (const Value& v : f.values) names.insert(v.name);
  std::vector<Op> ops;
  for (Op& op : f.ops) {
    bool literal = false;
    for (const Operand& a : op.args) literal = literal || a.is_literal();
    if (op.kind != OpKind::Cat || op.args.size() <= kMaxCatOperands || literal) {
      ops.push_back(std::move(op));
      continue;
    }
    const Value out = f.value(op.outs[0]);
    const size_t dim = static_cast<size_t>(op.attrs.dim);
    int part = 0;
    while (op.args.size() > kMaxCatOperands) {
      std::vector<Operand> parts;
      for (size_t begin = 0; begin < op.args.size(); begin += kMaxCatOperands) {
        const size_t end = std::min(op.args.size(), begin + kMaxCatOperands);
        Op cat = op;
        cat.source_index = -1;
        cat.args.assign(op.args.begin() + static_cast<std::ptrdiff_t>(begin),
                        op.args.begin() + static_cast<std::ptrdiff_t>(end));
        Value v;
        v.dtype = out.dtype;
        v.shape = out.shape;
        Expr extent(0);
        for (const Operand& a : cat.args) extent = extent + f.value(a.value).shape[dim];
        v.shape[dim] = extent;
        std::string name = out.name + "_part" + std::to_string(part++);
        while (names.count(name)) name += "_";
        names.insert(name);
        v.name = name;
        const ValueId id = f.add_value(std::move(v));
        cat.outs = {id};
        ops.push_back(std::move(cat));
        Operand read;
        read.value = id;
        parts.push_back(read);
      }
      op.args = std::move(parts);
    }
    ops.push_back(std::move(op));
  }
  f.ops = std::move(ops);
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(k);
}

}  // namespace fuserc
