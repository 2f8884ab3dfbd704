#include "core/segment/group_graph.h"

#include <algorithm>
#include <deque>

#include "core/base/diagnostics.h"

namespace fuserc {

GroupGraph::GroupGraph(const Fusion& f, const std::vector<std::set<int>>& producers,
                       const std::vector<std::set<int>>& readers_before)
    : f_(f),
      producers_(producers),
      readers_before_(readers_before),
      uses_(build_use_index(f)),
      group_of_(f.ops.size(), -1) {}

int GroupGraph::add_group(const std::vector<int>& ops) {
  FUSERC_CHECK(!ops.empty(), "an empty group");
  for (int k : ops) group_of_[k] = ops.front();
  groups_[ops.front()] = ops;
  version_[ops.front()] = 0;
  return ops.front();
}

int GroupGraph::version(int g) const {
  auto it = version_.find(g);
  return it == version_.end() ? -1 : it->second;
}

void GroupGraph::link() {
  succ_.clear();
  pred_.clear();
  for (const auto& [g, ops] : groups_) {
    succ_[g];
    pred_[g];
  }
  for (const auto& [g, ops] : groups_)
    for (int k : ops) {
      for (ValueId v : f_.ops[k].outs)
        for (int c : uses_.consumers[v])
          if (group_of_[c] != g) succ_[g].insert(group_of_[c]);
      // The readers of what op k overwrites run first.
      for (int r : readers_before_[k])
        if (group_of_[r] != g) succ_[group_of_[r]].insert(g);
    }
  for (const auto& [g, s] : succ_)
    for (int n : s) pred_[n].insert(g);
  compute_levels();
}

void GroupGraph::compute_levels() {
  level_.clear();
  std::map<int, int> waiting;
  std::deque<int> ready;
  for (const auto& [g, p] : pred_) {
    waiting[g] = static_cast<int>(p.size());
    level_[g] = 0;
    if (p.empty()) ready.push_back(g);
  }
  size_t done = 0;
  while (!ready.empty()) {
    int g = ready.front();
    ready.pop_front();
    ++done;
    for (int s : succ_[g]) {
      level_[s] = std::max(level_[s], level_[g] + 1);
      if (--waiting[s] == 0) ready.push_back(s);
    }
  }
  leveled_ = done == groups_.size();
}

void GroupGraph::raise_levels(int from) {
  std::vector<int> stack{from};
  const int limit = static_cast<int>(groups_.size());
  while (!stack.empty() && leveled_) {
    int g = stack.back();
    stack.pop_back();
    for (int s : succ_[g]) {
      if (level_[s] > level_[g]) continue;
      level_[s] = level_[g] + 1;
      if (level_[s] > limit) leveled_ = false;  // only a cycle climbs this high
      stack.push_back(s);
    }
  }
}

Segment GroupGraph::as_segment(const std::vector<int>& ops) const {
  Segment s;
  s.ops = ops;
  compute_segment_boundary(f_, uses_, s);
  return s;
}

Segment GroupGraph::merged_segment(int a, int b) const {
  std::vector<int> ops = groups_.at(a);
  ops.insert(ops.end(), groups_.at(b).begin(), groups_.at(b).end());
  return as_segment(ops);
}

bool GroupGraph::path(int from, int to, bool indirect) const {
  if (leveled_ && level_.at(from) >= level_.at(to)) return false;
  int top = leveled_ ? level_.at(to) : 0;
  std::vector<int> stack;
  std::set<int> seen;
  for (int s : succ_.at(from)) {
    if (s == to) {
      if (!indirect) return true;
      continue;
    }
    stack.push_back(s);
  }
  while (!stack.empty()) {
    int g = stack.back();
    stack.pop_back();
    if (g == to) return true;
    if (!seen.insert(g).second) continue;
    if (leveled_ && level_.at(g) >= top) continue;
    for (int s : succ_.at(g)) stack.push_back(s);
  }
  return false;
}

bool GroupGraph::may_merge(int a, int b) const {
  if (leveled_ && level_.at(a) == level_.at(b)) return true;
  bool ab = succ_.at(a).count(b) > 0, ba = succ_.at(b).count(a) > 0;
  if (ab && ba) return false;
  if (ab) return !path(a, b, true);
  if (ba) return !path(b, a, true);
  return !path(a, b, false) && !path(b, a, false);
}

void GroupGraph::merge(int from, int into) {
  FUSERC_CHECK(from != into, "merging a group with itself");
  auto& dst = groups_.at(into);
  for (int k : groups_.at(from)) {
    dst.push_back(k);
    group_of_[k] = into;
  }
  std::sort(dst.begin(), dst.end());
  groups_.erase(from);
  for (int s : succ_.at(from)) {
    pred_[s].erase(from);
    if (s != into) {
      pred_[s].insert(into);
      succ_[into].insert(s);
    }
  }
  for (int p : pred_.at(from)) {
    succ_[p].erase(from);
    if (p != into) {
      succ_[p].insert(into);
      pred_[into].insert(p);
    }
  }
  succ_[into].erase(from);
  pred_[into].erase(from);
  succ_.erase(from);
  pred_.erase(from);
  ++version_[into];
  ++version_[from];
  if (leveled_) {
    level_[into] = std::max(level_[into], level_[from]);
    level_.erase(from);
    raise_levels(into);
  }
}

}  // namespace fuserc
