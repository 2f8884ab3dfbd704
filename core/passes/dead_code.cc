// The dead-code pass: ops none of whose results reach an output are removed, so are constants
// nothing reads (the package would carry them for nothing; they are not part of the caller's
// interface), and values are renumbered densely (the other inputs keep their order, since
// they are the graph's interface).
#include <vector>

#include "core/base/diagnostics.h"
#include "core/passes/presegmentation.h"

namespace fuserc {

void remove_dead_ops(Fusion& f) {
  std::vector<bool> live_value(f.values.size(), false);
  for (ValueId o : f.outputs) live_value[o] = true;
  std::vector<bool> live_op(f.ops.size(), false);
  for (int k = static_cast<int>(f.ops.size()) - 1; k >= 0; --k) {
    const Op& op = f.ops[k];
    for (ValueId out : op.outs) live_op[k] = live_op[k] || live_value[out];
    if (!live_op[k]) continue;
    for (const auto& a : op.args)
      if (!a.is_literal()) live_value[a.value] = true;
  }
  bool all_live = true;
  for (bool l : live_op) all_live = all_live && l;
  for (ValueId id : f.inputs)
    if (f.value(id).is_constant() && !live_value[id]) all_live = false;
  // Values no op defines any more (results another pass moved) go too.
  size_t defined = f.inputs.size();
  for (const Op& op : f.ops) defined += op.outs.size();
  if (defined != f.values.size()) all_live = false;
  if (all_live) return;

  // Keep the inputs and the results of live ops; renumber.
  std::vector<ValueId> remap(f.values.size(), kNoValue);
  Fusion g;
  g.name = f.name;
  g.source_file = f.source_file;
  g.symbols = f.symbols;
  g.bind_steps = f.bind_steps;  // by input position, which is unchanged
  for (const Expr& e : f.size_literals()) g.size_literal(e);  // the same indices, in order
  std::vector<int> input_position(f.inputs.size(), -1);
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    ValueId id = f.inputs[i];
    if (f.value(id).is_constant() && !live_value[id]) continue;
    Value v = f.value(id);
    v.input_index = static_cast<int>(g.inputs.size());
    input_position[i] = v.input_index;
    remap[id] = g.add_value(std::move(v));
    g.inputs.push_back(remap[id]);
  }
  for (auto& step : g.bind_steps) {  // constants bind nothing: every step's input stays
    FUSERC_CHECK(input_position[step.input] >= 0, "a binding step reads a removed input");
    step.input = input_position[step.input];
  }
  for (size_t k = 0; k < f.ops.size(); ++k) {
    if (!live_op[k]) continue;
    Op op = f.ops[k];
    for (auto& a : op.args) {
      if (a.is_literal()) continue;
      FUSERC_CHECK(remap[a.value] != kNoValue,
                   "op " + std::to_string(k) + " reads a value defined after it");
      a.value = remap[a.value];
    }
    int index = static_cast<int>(g.ops.size());
    for (auto& out : op.outs) {
      Value v = f.value(out);
      v.def_op = index;
      out = remap[out] = g.add_value(std::move(v));
    }
    g.ops.push_back(std::move(op));
  }
  for (ValueId o : f.outputs) g.outputs.push_back(remap[o]);
  for (const auto& [out, in] : f.aliases) g.aliases.emplace_back(remap[out], remap[in]);
  f = std::move(g);
}

}  // namespace fuserc
