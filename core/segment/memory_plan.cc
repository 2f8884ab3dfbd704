#include "core/segment/memory_plan.h"

#include <algorithm>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

Expr align_up(const Expr& e) {
  return ceildiv(e, Expr(kWorkspaceAlignment)) * kWorkspaceAlignment;
}

}  // namespace

MemoryPlan plan_memory(const Fusion& f, const SegmentedFusion& s) {
  MemoryPlan plan;
  auto add = [&](ValueId v, BufferInfo b) {
    b.value = v;
    const Value& val = f.value(v);
    b.bytes = val.numel() * static_cast<int64_t>(dtype_size(val.dtype));
    plan.buffer_of[v] = static_cast<int>(plan.buffers.size());
    plan.buffers.push_back(b);
  };
  const std::vector<int> interface = interface_indices(f);
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    BufferInfo b;
    b.kind = f.value(f.inputs[i]).is_constant() ? BufferInfo::Kind::Constant
                                                : BufferInfo::Kind::Input;
    b.io_index = interface[i];
    add(f.inputs[i], b);
  }
  for (size_t i = 0; i < f.outputs.size(); ++i) {
    ValueId o = f.outputs[i];
    if (plan.buffer_of.count(o)) continue;  // an input, or listed twice
    BufferInfo b;
    b.kind = BufferInfo::Kind::Output;
    b.io_index = static_cast<int>(i);
    for (const auto& [out, in] : f.aliases)
      if (out == o) b.alias_input = interface[f.value(in).input_index];
    add(o, b);
  }
  // Intermediates: values written by one kernel and read by a later one. Lifetimes count plan
  // steps: the segments of one step run side by side.
  const std::vector<int> step = s.launch_of();
  std::vector<int> intermediates;
  // Intermediates stored in the output they are reshaped to share its buffer.
  for (const auto& [p, out] : s.stored_in) plan.buffer_of[p] = plan.buffer_of.at(out);
  for (size_t k = 0; k < s.segments.size(); ++k) {
    for (ValueId v : s.segments[k].outputs) {
      if (plan.buffer_of.count(v)) continue;
      BufferInfo b;
      b.kind = BufferInfo::Kind::Intermediate;
      b.first_segment = b.last_segment = step[k];
      add(v, b);
      intermediates.push_back(plan.buffer_of[v]);
    }
  }
  for (size_t k = 0; k < s.segments.size(); ++k)
    for (ValueId v : s.segments[k].inputs) {
      auto it = plan.buffer_of.find(v);
      FUSERC_CHECK(it != plan.buffer_of.end(), "segment " + std::to_string(k) + " reads '" +
                                                   f.value(v).name + "', which no buffer holds");
      BufferInfo& b = plan.buffers[it->second];
      if (b.kind == BufferInfo::Kind::Intermediate)
        b.last_segment = std::max(b.last_segment, step[k]);
    }
  // First fit over lifetimes: each intermediate (in order of first use, which keeps the plan
  // deterministic) goes at the lowest candidate offset (0, or the end of a buffer it lives
  // alongside) that provably clears every buffer whose lifetime overlaps its own; when sizes
  // are too symbolic to prove that, after all of them.
  for (size_t i = 0; i < intermediates.size(); ++i) {
    BufferInfo& b = plan.buffers[intermediates[i]];
    std::vector<const BufferInfo*> alive;
    for (size_t j = 0; j < i; ++j) {
      const BufferInfo& other = plan.buffers[intermediates[j]];
      if (!(other.last_segment < b.first_segment || b.last_segment < other.first_segment))
        alive.push_back(&other);
    }
    Expr size = align_up(b.bytes);
    auto clears = [&](const Expr& offset) {
      for (const BufferInfo* o : alive) {
        bool below = le(offset + size, o->offset).is_const(1);
        bool above = le(o->offset + align_up(o->bytes), offset).is_const(1);
        if (!below && !above) return false;
      }
      return true;
    };
    std::vector<Expr> candidates = {Expr(0)};
    for (const BufferInfo* o : alive) candidates.push_back(o->offset + align_up(o->bytes));
    Expr after_all(0);
    for (const BufferInfo* o : alive) after_all = max(after_all, o->offset + align_up(o->bytes));
    b.offset = after_all;
    for (const Expr& c : candidates)
      if (clears(c)) {
        b.offset = c;
        break;
      }
    plan.workspace_bytes = max(plan.workspace_bytes, b.offset + size);
  }
  return plan;
}

std::string MemoryPlan::to_text(const Fusion& f) const {
  std::string s;
  for (const auto& b : buffers) {
    s += "  " + f.value(b.value).name + ": ";
    switch (b.kind) {
      case BufferInfo::Kind::Input: s += "input " + std::to_string(b.io_index); break;
      case BufferInfo::Kind::Constant: s += "constant " + std::to_string(b.io_index); break;
      case BufferInfo::Kind::Output:
        s += "output " + std::to_string(b.io_index);
        if (b.alias_input >= 0) s += " (in place into input " + std::to_string(b.alias_input) + ")";
        break;
      case BufferInfo::Kind::Intermediate:
        s += "workspace at " + b.offset.str() + ", steps " + std::to_string(b.first_segment) +
             ".." + std::to_string(b.last_segment);
        break;
    }
    s += ", " + b.bytes.str() + " bytes\n";
  }
  s += "  workspace: " + workspace_bytes.str() + " bytes\n";
  return s;
}

}  // namespace fuserc
