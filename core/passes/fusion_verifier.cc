// The Fusion IR verifier: run after every pass (and in tests) so that a pass that breaks an
// invariant fails at once, naming the invariant, instead of producing a wrong kernel later.
#include <set>

#include "core/base/diagnostics.h"
#include "core/passes/presegmentation.h"

namespace fuserc {

void verify_fusion(const Fusion& f) {
  auto check = [](bool ok, const std::string& what) {
    if (!ok) throw InternalError("Fusion verifier: " + what);
  };
  std::set<std::string> names;
  for (size_t i = 0; i < f.values.size(); ++i) {
    const Value& v = f.values[i];
    check(names.insert(v.name).second, "value name '" + v.name + "' is not unique");
    check(v.is_input() != (v.def_op >= 0),
          "value '" + v.name + "' must be an input or an op result");
  }
  for (size_t i = 0; i < f.inputs.size(); ++i)
    check(f.value(f.inputs[i]).input_index == static_cast<int>(i), "input numbering");
  std::vector<bool> defined(f.values.size(), false);
  for (ValueId id : f.inputs) defined[id] = true;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    const Op& op = f.ops[k];
    const OpInfo& info = op.info();
    check(static_cast<int>(op.outs.size()) == info.num_results,
          std::string("op ") + info.name + " has the wrong number of results");
    check(op.args.size() >= static_cast<size_t>(info.min_args) &&
              (info.max_args < 0 || op.args.size() <= static_cast<size_t>(info.max_args)),
          std::string("op ") + info.name + " has the wrong number of arguments");
    for (const auto& a : op.args)
      if (!a.is_literal())
        check(a.value >= 0 && static_cast<size_t>(a.value) < f.values.size() && defined[a.value],
              std::string("op ") + info.name + " reads a value before it is defined");
    for (ValueId out : op.outs) {
      check(!defined[out], "value '" + f.value(out).name + "' is defined twice");
      check(f.value(out).def_op == static_cast<int>(k),
            "value '" + f.value(out).name + "' does not point back at its op");
      defined[out] = true;
    }
  }
  for (ValueId o : f.outputs) check(o >= 0 && defined[o], "an output is not defined");
}

}  // namespace fuserc
