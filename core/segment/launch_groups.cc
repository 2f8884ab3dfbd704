#include "core/segment/launch_groups.h"

#include <unordered_map>

namespace fuserc {
namespace {

// Pointwise segments, as combo kernels take them: not those drawing random numbers (their
// kernels launch alone, so moving them up would only lengthen lifetimes).
bool groupable(const Fusion& f, const Segment& s) {
  if (s.scheduler != SchedulerKind::Pointwise) return false;
  for (int k : s.ops)
    if (f.ops[k].info().group == OpGroup::Random) return false;
  return true;
}

}  // namespace

void group_independent_launches(const Fusion& f, SegmentedFusion& s) {
  // The buffer a value lives in: an output written in place is its input's buffer.
  // So is an intermediate stored in the output it is reshaped to (output_views.h): a reader of
  // the output reads what the intermediate's writer wrote.
  std::unordered_map<ValueId, ValueId> alias_of;
  for (const auto& [out, in] : f.aliases) alias_of[out] = in;
  for (const auto& [p, out] : s.stored_in) alias_of[p] = out;
  auto buffer = [&](ValueId v) {
    auto it = alias_of.find(v);
    return it == alias_of.end() ? v : it->second;
  };
  // The latest segment (original position) that read or wrote each buffer so far.
  std::unordered_map<ValueId, int> last_read, last_write;
  auto latest = [](const std::unordered_map<ValueId, int>& m, ValueId b) {
    auto it = m.find(b);
    return it == m.end() ? -1 : it->second;
  };

  std::vector<std::vector<int>> steps;  // original segment indices
  int open = -1;                        // index into steps of the step being filled
  int open_at = -1;                     // the original position of its first member
  for (size_t k = 0; k < s.segments.size(); ++k) {
    const Segment& seg = s.segments[k];
    bool joins = false;
    if (groupable(f, seg) && open >= 0) {
      joins = true;
      for (ValueId v : seg.inputs)
        if (!f.value(v).scalar_input && latest(last_write, buffer(v)) >= open_at) joins = false;
      for (ValueId v : seg.outputs) {
        ValueId b = buffer(v);
        if (latest(last_write, b) >= open_at || latest(last_read, b) >= open_at) joins = false;
      }
    }
    if (joins) {
      steps[open].push_back(static_cast<int>(k));
    } else {
      steps.push_back({static_cast<int>(k)});
      if (groupable(f, seg)) {
        open = static_cast<int>(steps.size()) - 1;
        open_at = static_cast<int>(k);
      }
    }
    for (ValueId v : seg.inputs)
      if (!f.value(v).scalar_input) last_read[buffer(v)] = static_cast<int>(k);
    for (ValueId v : seg.outputs) last_write[buffer(v)] = static_cast<int>(k);
  }

  std::vector<Segment> ordered;
  ordered.reserve(s.segments.size());
  s.launches.clear();
  for (const auto& step : steps) {
    std::vector<int> members;
    for (int k : step) {
      members.push_back(static_cast<int>(ordered.size()));
      ordered.push_back(std::move(s.segments[k]));
    }
    s.launches.push_back(std::move(members));
  }
  s.segments = std::move(ordered);
}

}  // namespace fuserc
