// The horizontal step of segmentation (merge_rules.h): groups that read the same tensor and do
// not depend on each other become one kernel, which reads the tensor once. Groups are indexed by
// the tensors they read; tensors are taken largest first, and each group reading one is offered
// to the few most recent kernels being filled with groups of the same domain (first fit), so
// the work is about the number of (group, tensor) reads, not the square of the groups. A merge
// is taken when a scheduler accepts the union, its kind is one of the two groups' kinds without
// losing parallelism (pointwise work on a reduction's domain may ride the reduction's pass over
// it as side outputs: merge_rules.h), the estimated registers stay within budget
// (core/schedule/register_cost.h) and it saves bytes at the hints and costs none at the bounds
// (reads of disjoint slices of one tensor save nothing). A pair's verdict is kept until either
// group changes.
#include <algorithm>
#include <map>

#include "core/schedule/reduction_analysis.h"
#include "core/schedule/register_cost.h"
#include "core/segment/merge_rules.h"

namespace fuserc {
namespace {

// How many kernels being filled a group is offered to, most recent first.
constexpr size_t kTries = 4;

struct GroupInfo {
  int version = -1;
  SchedulerKind kind = SchedulerKind::Pointwise;
  std::string domain;  // pointwise: the results' shape; reductions: the reduced domain
  GroupTraffic traffic;
  Bytes bytes;
};

class SiblingMerger {
 public:
  SiblingMerger(GroupGraph& g, const SegmentContext& ctx) : g_(g), ctx_(ctx), f_(ctx.f) {}

  const GroupInfo& info(int id) {
    GroupInfo& i = info_[id];
    if (i.version == g_.version(id)) return i;
    Segment s = g_.segment_of(id);
    const GroupFacts facts(f_, s);
    i.version = g_.version(id);
    // Transpose tiles and plain pointwise kernels merge as one family.
    i.kind = kernel_family(first_accepting(facts, ctx_.schedulers)->kind());
    i.traffic = group_traffic(f_, s);
    i.bytes = traffic_bytes(f_, i.traffic, ctx_.points);
    if (i.kind == SchedulerKind::Pointwise) {
      i.domain = shape_to_string(f_.value(s.outputs.at(0)).shape);
    } else if (i.kind == SchedulerKind::Library) {
      i.domain = "library";  // never merged with anything
    } else {
      i.domain = shape_to_string(facts.reductions().domain);
    }
    return i;
  }

  // Merges `x` into `y` when the rules allow it.
  bool try_merge(int y, int x) {
    auto key = std::make_pair(y, x);
    auto versions = std::make_pair(g_.version(y), g_.version(x));
    auto it = verdicts_.find(key);
    if (it != verdicts_.end() && it->second.first == versions) return false;  // refused before
    bool ok = allowed(y, x);
    if (!ok) {
      verdicts_[key] = {versions, false};
      return false;
    }
    g_.merge(x, y);
    return true;
  }

 private:
  GroupGraph& g_;
  const SegmentContext& ctx_;
  const Fusion& f_;
  std::map<int, GroupInfo> info_;
  std::map<std::pair<int, int>, std::pair<std::pair<int, int>, bool>> verdicts_;

  bool allowed(int y, int x) {
    const GroupInfo& a = info(y);
    const GroupInfo& b = info(x);
    if (a.kind == SchedulerKind::Library || b.kind == SchedulerKind::Library) return false;
    GroupTraffic t = merged_siblings(a.traffic, b.traffic);
    // Cheap first: a pointwise union's registers follow from its tensors alone.
    if (a.kind == SchedulerKind::Pointwise && b.kind == SchedulerKind::Pointwise) {
      std::vector<size_t> sizes;
      for (const auto& [v, slices] : t.reads) sizes.push_back(dtype_size(f_.value(v).dtype));
      for (ValueId v : t.writes) sizes.push_back(dtype_size(f_.value(v).dtype));
      if (pointwise_registers(sizes) > kRegisterBudget) return false;
    }
    if (!worth_merging(saving(a.bytes, b.bytes, traffic_bytes(f_, t, ctx_.points)))) return false;
    // Independent: no path joins them either way (one overwriting what the other reads is fine
    // in one kernel: the scheduler checks the in-place rules).
    if (g_.path(y, x, false) || g_.path(x, y, false)) return false;
    Segment s = g_.merged_segment(y, x);
    const GroupFacts facts(f_, s);
    const Scheduler* sch = first_accepting(facts, ctx_.schedulers);
    if (!sch) return false;
    const SchedulerKind kind = kernel_family(sch->kind());
    if (kind != a.kind && kind != b.kind) return false;
    if (!parallelism_reason(ctx_, facts, kind, a.kind, b.kind, true).empty()) return false;
    return estimated_registers(facts, sch->kind(), ctx_.hints) <= kRegisterBudget;
  }
};

}  // namespace

void merge_siblings(GroupGraph& g, const SegmentContext& ctx, const std::set<int>& excluded) {
  const Fusion& f = ctx.f;
  SiblingMerger m(g, ctx);
  // Tensors read by two groups or more, largest first.
  std::vector<std::pair<double, ValueId>> tensors;
  for (size_t v = 0; v < f.values.size(); ++v) {
    const auto& readers = g.uses().consumers[v];
    if (readers.size() < 2 || f.value(static_cast<ValueId>(v)).scalar_input) continue;
    tensors.emplace_back(-read_bytes(f, static_cast<ValueId>(v), {}, ctx.points)[0],
                         static_cast<ValueId>(v));
  }
  std::sort(tensors.begin(), tensors.end());
  for (const auto& [bytes, v] : tensors) {
    std::vector<int> bucket;
    for (int k : g.uses().consumers[v]) {
      int id = g.group_of(k);
      if (!excluded.count(id)) bucket.push_back(id);
    }
    std::sort(bucket.begin(), bucket.end());
    bucket.erase(std::unique(bucket.begin(), bucket.end()), bucket.end());
    if (bucket.size() < 2) continue;
    std::map<std::string, std::vector<int>> filling;  // by domain
    for (int x : bucket) {
      std::vector<int>& open = filling[m.info(x).domain];
      bool merged = false;
      for (size_t i = 0; i < std::min(open.size(), kTries) && !merged; ++i)
        merged = m.try_merge(open[open.size() - 1 - i], x);
      if (!merged) open.push_back(x);
    }
  }
}

}  // namespace fuserc
