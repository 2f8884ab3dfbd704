// segment_fusion_in_place (segmenter.h): when an input written in place must also be read
// after the kernel that overwrites it, the readers that cannot run earlier read a copy of the
// input instead, taken by a segment_set before anything is overwritten.
#include <set>

#include "core/passes/presegmentation.h"
#include "core/segment/segmenter.h"

namespace fuserc {
namespace {

// Makes op `reader` read a copy of `input` made by a segment_set placed first (one copy per
// input, shared by every reader that needs it).
void read_copy(Fusion& f, int reader, ValueId input) {
  ValueId copy = kNoValue;
  for (const Op& op : f.ops)
    if (op.kind == OpKind::SegmentSet && op.source_index < 0 && op.args[0].value == input)
      copy = op.outs[0];
  if (copy == kNoValue) {
    std::set<std::string> names;
    for (const Value& v : f.values) names.insert(v.name);
    Value v;
    v.name = f.value(input).name + "_before_write";
    for (int i = 2; names.count(v.name); ++i)
      v.name = f.value(input).name + "_before_write" + std::to_string(i);
    v.dtype = f.value(input).dtype;
    v.shape = f.value(input).shape;
    v.def_op = 0;
    for (Value& w : f.values)
      if (w.def_op >= 0) ++w.def_op;
    copy = f.add_value(std::move(v));
    Op op;
    op.kind = OpKind::SegmentSet;
    op.args.push_back(Operand{input, {}});
    op.outs.push_back(copy);
    f.ops.insert(f.ops.begin(), std::move(op));
    ++reader;
  }
  for (Operand& a : f.ops[reader].args)
    if (!a.is_literal() && a.value == input) a.value = copy;
}

}  // namespace

SegmentedFusion segment_fusion_in_place(Fusion& f, const std::vector<const Scheduler*>& schedulers,
                                        const HeuristicHints& hints, PassContext* timing) {
  // Each retry moves one read off an input for good, so this ends.
  while (true) {
    try {
      return segment_fusion(f, schedulers, hints, timing);
    } catch (const OverwriteCycle& c) {
      read_copy(f, c.reader, c.input);
      verify_fusion(f);
    }
  }
}

}  // namespace fuserc
