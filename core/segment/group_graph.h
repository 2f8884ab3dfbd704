// Owns the graph of groups the segmenter merges: which ops each group holds, the edges between
// groups (a group reads another's result; a group reads an input that another overwrites in
// place, so it must run first), kept up to date as groups merge, and the question every merge
// asks: would it close a cycle? Each group carries a level (every edge runs from a lower level
// to a higher one), so a search for a path between two groups only visits the groups whose
// level lies between theirs, and two groups of one level never depend on each other.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

class GroupGraph {
 public:
  // `producers[k]`: the ops whose results op k reads; `readers_before[k]`: the ops that must
  // not run after op k (they read an input op k overwrites in place).
  GroupGraph(const Fusion& f, const std::vector<std::set<int>>& producers,
             const std::vector<std::set<int>>& readers_before);

  const Fusion& fusion() const { return f_; }
  const UseIndex& uses() const { return uses_; }

  // Makes `ops` (sorted) one group; its id is its first op. Every op must be in a group before
  // link() builds the edges.
  int add_group(const std::vector<int>& ops);
  void link();

  const std::map<int, std::vector<int>>& groups() const { return groups_; }
  const std::vector<int>& ops(int g) const { return groups_.at(g); }
  int group_of(int op) const { return group_of_[op]; }
  // Bumped whenever the group changes (merges keep the id of the group merged into).
  int version(int g) const;
  const std::set<int>& successors(int g) const { return succ_.at(g); }
  const std::set<int>& predecessors(int g) const { return pred_.at(g); }
  const std::set<int>& producers(int op) const { return producers_[op]; }

  // The group's boundary.
  Segment as_segment(const std::vector<int>& ops) const;
  Segment segment_of(int g) const { return as_segment(ops(g)); }
  // The boundary of two groups as one.
  Segment merged_segment(int a, int b) const;

  // Whether some path leads from `from` to `to` (through other groups only, when `indirect`).
  bool path(int from, int to, bool indirect) const;
  // Whether two groups may become one without closing a cycle: `a` and `b` joined by an edge
  // and no other path, or not connected at all.
  bool may_merge(int a, int b) const;

  // Merges group `from` into group `into`.
  void merge(int from, int into);

 private:
  const Fusion& f_;
  const std::vector<std::set<int>>& producers_;
  const std::vector<std::set<int>>& readers_before_;
  UseIndex uses_;
  std::vector<int> group_of_;
  std::map<int, std::vector<int>> groups_;
  std::map<int, std::set<int>> succ_, pred_;
  std::map<int, int> version_;
  // Levels: valid while the group graph has no cycle (a cycle, from writes in place, is refused
  // once segmentation ends; until then paths are searched without them).
  std::map<int, int> level_;
  bool leveled_ = false;

  void compute_levels();
  void raise_levels(int from);
};

}  // namespace fuserc
