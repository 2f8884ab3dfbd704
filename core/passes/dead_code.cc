// The dead-code pass: ops none of whose results reach an output are removed, and values are
// renumbered densely (inputs keep their place, since they are the graph's interface).
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
  if (all_live) return;

  // Keep the inputs and the results of live ops; renumber.
  std::vector<ValueId> remap(f.values.size(), kNoValue);
  Fusion g;
  g.name = f.name;
  g.source_file = f.source_file;
  g.symbols = f.symbols;
  for (ValueId id : f.inputs) {
    remap[id] = g.add_value(f.value(id));
    g.inputs.push_back(remap[id]);
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
