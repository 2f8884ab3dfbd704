#include "core/ir/segmented_fusion.h"

#include <algorithm>
#include <set>

#include "core/base/diagnostics.h"

namespace fuserc {

const char* scheduler_name(SchedulerKind kind) {
  switch (kind) {
    case SchedulerKind::Pointwise: return "pointwise";
    case SchedulerKind::Reduction: return "reduction";
    case SchedulerKind::Normalization: return "normalization";
    case SchedulerKind::Transpose: return "transpose";
    case SchedulerKind::Library: return "library";
  }
  FUSERC_UNREACHABLE("bad scheduler kind");
}

SchedulerKind kernel_family(SchedulerKind kind) {
  return kind == SchedulerKind::Transpose ? SchedulerKind::Pointwise : kind;
}

bool reshape_into_output(const Fusion& f, int k, bool of_library_result) {
  const Op& op = f.ops[k];
  if (op.kind != OpKind::Reshape || op.args.empty() || op.args[0].is_literal()) return false;
  const Value& p = f.value(op.args[0].value);
  ValueId out = op.outs[0];
  if (p.def_op < 0 || f.is_output(op.args[0].value) || !f.is_output(out) ||
      f.value(out).is_input() || p.dtype != f.value(out).dtype)
    return false;
  for (const auto& [o, in] : f.aliases)
    if (o == out) return false;
  return !of_library_result || f.ops[p.def_op].info().group == OpGroup::Matrix;
}

UseIndex build_use_index(const Fusion& f) {
  UseIndex u;
  u.consumers.resize(f.values.size());
  u.is_output.assign(f.values.size(), false);
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal() &&
          (u.consumers[a.value].empty() || u.consumers[a.value].back() != static_cast<int>(k)))
        u.consumers[a.value].push_back(static_cast<int>(k));
  for (ValueId o : f.outputs) u.is_output[o] = true;
  return u;
}

void compute_segment_boundary(const Fusion& f, const UseIndex& uses, Segment& s) {
  std::sort(s.ops.begin(), s.ops.end());
  auto in_set = [&](int k) { return std::binary_search(s.ops.begin(), s.ops.end(), k); };
  std::set<ValueId> produced, inputs, outputs;
  for (int k : s.ops)
    for (ValueId o : f.ops[k].outs) produced.insert(o);
  for (int k : s.ops)
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal() && !produced.count(a.value)) inputs.insert(a.value);
  for (ValueId v : produced) {
    bool needed = uses.is_output[v];
    for (int c : uses.consumers[v]) needed = needed || !in_set(c);
    if (needed) outputs.insert(v);
  }
  s.inputs.assign(inputs.begin(), inputs.end());
  s.outputs.assign(outputs.begin(), outputs.end());
}

void compute_segment_boundary(const Fusion& f, Segment& s) {
  compute_segment_boundary(f, build_use_index(f), s);
}

std::vector<int> SegmentedFusion::launch_of() const {
  std::vector<int> step(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) step[i] = static_cast<int>(i);
  for (size_t l = 0; l < launches.size(); ++l)
    for (int k : launches[l]) step[k] = static_cast<int>(l);
  return step;
}

std::string SegmentedFusion::to_text(const Fusion& f) const {
  std::string s;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& seg = segments[i];
    s += "segment " + std::to_string(i) + " (" + scheduler_name(seg.scheduler) + ")\n  ops:";
    for (int k : seg.ops) s += " " + f.value(f.ops[k].outs[0]).name;
    s += "\n  reads:";
    for (ValueId v : seg.inputs) s += " " + f.value(v).name;
    s += "\n  writes:";
    for (ValueId v : seg.outputs) s += " " + f.value(v).name;
    s += "\n";
  }
  for (const auto& [p, out] : stored_in)
    s += "stored in output " + f.value(out).name + " (a reshape, no kernel): " + f.value(p).name +
         "\n";
  return s;
}

}  // namespace fuserc
