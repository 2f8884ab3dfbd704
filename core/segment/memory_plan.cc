#include "core/segment/memory_plan.h"

#include <algorithm>
#include <optional>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

Expr align_up(const Expr& e) {
  return ceildiv(e, Expr(kWorkspaceAlignment)) * kWorkspaceAlignment;
}

// A buffer's bytes [begin, end) in the workspace at one binding of the symbols.
struct NumericSpan {
  bool known = false;
  int64_t begin = 0, end = 0;
};

// One binding inside every symbol's range: its hint where the hint is in range, else its min.
SymbolLookup hint_binding(const Fusion& f) {
  return [&f](const std::string& name) -> std::optional<int64_t> {
    const SymbolDecl* d = f.find_symbol(name);
    if (d == nullptr) return std::nullopt;
    const bool in_range = d->hint >= d->min && d->hint <= d->max;
    return in_range ? d->hint : d->min;
  };
}

std::optional<int64_t> evaluate_or_none(const Expr& e, const SymbolLookup& lookup) {
  try {
    return evaluate(e, lookup);
  } catch (const UserError&) {  // an unbound symbol, or a size past int64 at that binding
    return std::nullopt;
  }
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
  // are too symbolic to prove that, after all of them. A proof holds at every binding, so a
  // candidate that overlaps a live buffer at one binding in range (the symbols' hints) is
  // passed over without one: each candidate costs a binary search among the live buffers
  // sorted by offset at that binding, and proofs are left for the candidate that fits there.
  // Proofs cost about the size of the offsets compared: with hundreds of intermediates alive at
  // once (a cat of a thousand kernels' results), trying every candidate against every live
  // buffer was cubic. Past kMaxProofsPerBuffer comparisons for one buffer (or live buffers), it
  // goes at `top`, an offset provably above every live buffer (kept with two comparisons per
  // buffer placed).
  constexpr int kMaxProofsPerBuffer = 512;
  Expr top(0);
  const SymbolLookup at_hints = hint_binding(f);
  std::vector<NumericSpan> span(plan.buffers.size());
  std::vector<Expr> end_of(plan.buffers.size());  // an intermediate's offset + aligned size
  for (size_t i = 0; i < intermediates.size(); ++i) {
    BufferInfo& b = plan.buffers[intermediates[i]];
    std::vector<int> alive;
    std::vector<NumericSpan> taken;  // the live buffers' spans at the hints, non-empty ones
    for (size_t j = 0; j < i; ++j) {
      const BufferInfo& other = plan.buffers[intermediates[j]];
      if (other.last_segment < b.first_segment || b.last_segment < other.first_segment)
        continue;
      alive.push_back(intermediates[j]);
      const NumericSpan& sp = span[intermediates[j]];
      if (sp.known && sp.end > sp.begin) taken.push_back(sp);
    }
    std::sort(taken.begin(), taken.end(),
              [](const NumericSpan& x, const NumericSpan& y) { return x.begin < y.begin; });
    const Expr size = align_up(b.bytes);
    const std::optional<int64_t> size_at_hints = evaluate_or_none(size, at_hints);
    // Whether [offset, offset + size) overlaps a live buffer at the hints (then no proof can
    // clear it). The live buffers are disjoint there, as they are at every binding.
    auto overlaps_at_hints = [&](std::optional<int64_t> lo) {
      if (!lo || !size_at_hints || *size_at_hints == 0) return false;
      const int64_t hi = *lo + *size_at_hints;
      auto it = std::upper_bound(taken.begin(), taken.end(), *lo,
                                 [](int64_t v, const NumericSpan& x) { return v < x.begin; });
      if (it != taken.begin() && std::prev(it)->end > *lo) return true;
      return it != taken.end() && it->begin < hi;
    };
    // Whether [offset, offset + size) provably clears every live buffer: below it or above it,
    // trying first (or only, where the hints decide) the side it lies on at the hints.
    // Each live buffer takes a proof at least: past the bound, none is tried.
    bool gave_up = alive.size() > static_cast<size_t>(kMaxProofsPerBuffer);
    int proofs = 0;
    auto proves = [&](const Expr& a, const Expr& c) {
      if (++proofs > kMaxProofsPerBuffer) gave_up = true;
      return le(a, c).is_const(1);
    };
    auto clears = [&](const Expr& offset, std::optional<int64_t> lo) {
      if (overlaps_at_hints(lo)) return false;
      const Expr end = offset + size;
      for (int o : alive) {
        if (gave_up) return false;
        const NumericSpan& sp = span[o];
        const bool numeric = lo && size_at_hints && sp.known;
        const bool may_be_below = !numeric || *lo + *size_at_hints <= sp.begin;
        const bool may_be_above = !numeric || sp.end <= *lo;
        if (may_be_below && proves(end, plan.buffers[o].offset)) continue;
        if (may_be_above && proves(end_of[o], offset)) continue;
        return false;
      }
      return true;
    };
    bool placed = !gave_up && clears(Expr(0), 0);
    if (placed) b.offset = Expr(0);
    for (size_t j = 0; j < alive.size() && !placed && !gave_up; ++j) {
      const NumericSpan& sp = span[alive[j]];
      if (clears(end_of[alive[j]], sp.known ? std::optional<int64_t>(sp.end) : std::nullopt)) {
        b.offset = end_of[alive[j]];
        placed = true;
      }
    }
    if (!placed && gave_up) {
      b.offset = top;
    } else if (!placed) {
      Expr after_all(0);
      for (int o : alive) after_all = max(after_all, end_of[o]);
      b.offset = after_all;
    }
    end_of[intermediates[i]] = b.offset + size;
    // `top` stays above every buffer placed so far, so above every live one.
    if (le(top, end_of[intermediates[i]]).is_const(1))
      top = end_of[intermediates[i]];
    else if (!le(end_of[intermediates[i]], top).is_const(1))
      top = max(top, end_of[intermediates[i]]);
    std::optional<int64_t> lo = evaluate_or_none(b.offset, at_hints);
    if (lo && size_at_hints) span[intermediates[i]] = NumericSpan{true, *lo, *lo + *size_at_hints};
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
