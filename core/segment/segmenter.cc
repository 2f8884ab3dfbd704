#include "core/segment/segmenter.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <queue>

#include "core/base/diagnostics.h"
#include "core/schedule/element_cost.h"

namespace fuserc {
namespace {

// Whether the edge from op `producer` to op `consumer` may be inside one kernel: the result of
// a segment_set is always read from global memory.
bool fusible_edge(const Fusion& f, int producer) {
  return f.ops[producer].kind != OpKind::SegmentSet;
}

// Op-level edges: for each op, the ops producing its arguments.
std::vector<std::set<int>> producers_of(const Fusion& f) {
  std::vector<std::set<int>> p(f.ops.size());
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal() && f.value(a.value).def_op >= 0) p[k].insert(f.value(a.value).def_op);
  return p;
}

// Write-after-read edges: an output written in place into an input overwrites it, so every op
// that reads the input runs no later than the op that computes the output (in an earlier
// kernel, or in the same kernel under the in-place rules of core/schedule/in_place.h). For each
// op, the ops that must not run after it.
std::vector<std::set<int>> overwrite_edges(const Fusion& f) {
  std::vector<std::set<int>> e(f.ops.size());
  for (const auto& [out, in] : f.aliases) {
    int writer = f.value(out).def_op;
    if (writer < 0) continue;
    for (int reader : f.consumers(in))
      if (reader != writer) e[writer].insert(reader);
  }
  return e;
}

struct Grouping {
  const Fusion& f;
  const std::vector<std::set<int>>& producers;
  const std::vector<std::set<int>>& readers_before;  // overwrite_edges
  UseIndex uses;
  std::vector<int> group_of;  // op -> group id
  std::map<int, std::vector<int>> groups;
  // For each op, the ops that overwrite (in place) an input it reads: readers_before inverted.
  std::vector<std::vector<int>> overwriters;
  // Whether every edge (results and write-after-read) runs from an earlier op to a later one,
  // so that a search for a path to a group can stop at groups that start after it ends.
  bool forward_edges = true;

  void index_overwrites() {
    overwriters.assign(f.ops.size(), {});
    for (size_t k = 0; k < f.ops.size(); ++k)
      for (int p : readers_before[k]) {
        overwriters[p].push_back(static_cast<int>(k));
        if (p > static_cast<int>(k)) forward_edges = false;
      }
  }

  // Whether a search for `to` (whose last op is `last`) must look at group `s`.
  bool may_lead(int s, int last) const { return !forward_edges || groups.at(s).front() < last; }

  Segment as_segment(const std::vector<int>& ops) const {
    Segment s;
    s.ops = ops;
    compute_segment_boundary(f, uses, s);
    return s;
  }

  // Group-level successors (O(ops of g and their uses)): the groups that read a result of
  // `g`, and the groups that overwrite (in place) an input `g` reads.
  std::set<int> successors(int g) const {
    std::set<int> out;
    for (int k : groups.at(g)) {
      for (ValueId v : f.ops[k].outs)
        for (int c : uses.consumers[v])
          if (group_of[c] != g) out.insert(group_of[c]);
      for (int w : overwriters[k])
        if (group_of[w] != g) out.insert(group_of[w]);
    }
    return out;
  }

  // Whether group `b` reads a result of group `a`.
  bool reads_result(int a, int b) const {
    for (int k : groups.at(b))
      for (int p : producers[k])
        if (group_of[p] == a) return true;
    return false;
  }

  void merge(int from, int into_id) {
    auto& into = groups[into_id];
    for (int k : groups[from]) {
      into.push_back(k);
      group_of[k] = into_id;
    }
    std::sort(into.begin(), into.end());
    groups.erase(from);
  }

  // Whether `to` is reachable from `from` through some other group. Without write-after-read
  // edges that run backwards, ops are in dependency order, so a path to `to` only passes
  // groups that start before `to` ends.
  bool indirect_path(int from, int to) const {
    std::vector<int> stack;
    std::set<int> seen;
    int last = groups.at(to).back();
    for (int s : successors(from))
      if (s != to && may_lead(s, last)) stack.push_back(s);
    while (!stack.empty()) {
      int g = stack.back();
      stack.pop_back();
      if (g == to) return true;
      if (!seen.insert(g).second) continue;
      for (int s : successors(g))
        if (s == to || may_lead(s, last)) stack.push_back(s);
    }
    return false;
  }
};

// The first scheduler that takes the group whole, provided its element computation is within
// the cost bounds (core/schedule/element_cost.h); nullptr when none does.
const Scheduler* first_accepting(const Fusion& f, const Segment& s,
                                 const std::vector<const Scheduler*>& schedulers,
                                 std::string* reasons) {
  for (const Scheduler* sch : schedulers) {
    std::string why = sch->reject_reason(f, s);
    if (why.empty()) {
      why = element_cost_reason(f, s);
      if (why.empty()) return sch;
    }
    if (reasons)
      *reasons +=
          std::string(reasons->empty() ? "" : "; ") + scheduler_name(sch->kind()) + ": " + why;
  }
  return nullptr;
}

int64_t bytes_at_hints(const Fusion& f, ValueId v, const HeuristicHints& hints) {
  const Value& val = f.value(v);
  return hints.value_of(val.numel()) * static_cast<int64_t>(dtype_size(val.dtype));
}

// Greedy bottom-up merging among the groups `members` (single ops of one region, or of one
// chunk of a large region); `members` follows the merges. Whether a pair's union is accepted
// and what it saves are remembered until either group changes.
void merge_bottom_up(Grouping& g, std::set<int>& members,
                     const std::vector<const Scheduler*>& schedulers, const HeuristicHints& hints) {
  const Fusion& f = g.f;
  struct Candidate {
    int p_version, c_version;
    bool accepted;
    int64_t saving;
  };
  std::map<std::pair<int, int>, Candidate> known;
  std::map<int, int> version;  // bumped when a group changes
  while (true) {
    int best_p = -1, best_c = -1;
    int64_t best_saving = -1;
    for (int c : members) {
      const std::vector<int>& c_ops = g.groups.at(c);
      std::set<int> prods;
      for (int k : c_ops)
        for (int p : g.producers[k])
          if (g.group_of[p] != c && fusible_edge(f, p) && members.count(g.group_of[p]))
            prods.insert(g.group_of[p]);
      for (int p : prods) {
        if (g.indirect_path(p, c)) continue;
        auto it = known.find({p, c});
        if (it == known.end() || it->second.p_version != version[p] ||
            it->second.c_version != version[c]) {
          Candidate cand{version[p], version[c], false, 0};
          std::vector<int> merged = g.groups.at(p);
          merged.insert(merged.end(), c_ops.begin(), c_ops.end());
          Segment s = g.as_segment(merged);
          cand.accepted = first_accepting(f, s, schedulers, nullptr) != nullptr;
          if (cand.accepted) {
            // Bytes that stop crossing global memory: values the producer wrote that the
            // merged group no longer writes.
            Segment ps = g.as_segment(g.groups.at(p));
            for (ValueId v : ps.outputs)
              if (std::find(s.outputs.begin(), s.outputs.end(), v) == s.outputs.end())
                cand.saving += bytes_at_hints(f, v, hints);
          }
          it = known.insert_or_assign({p, c}, cand).first;
        }
        if (!it->second.accepted) continue;
        if (it->second.saving > best_saving)
          best_saving = it->second.saving, best_p = p, best_c = c;
      }
    }
    if (best_p < 0) return;
    g.merge(best_p, best_c);
    members.erase(best_p);
    ++version[best_c];
    ++version[best_p];
  }
}

// Regions larger than this are first cut into chunks of this many consecutive ops (bottom-up
// merging costs about the cube of the ops it considers). Chunks a scheduler takes whole are
// joined with the next while the union stays within the schedulers' and the cost model's
// bounds; the others are merged bottom-up within the chunk. A chain of 100,000 elementwise ops
// becomes kernels of a few thousand ops each, in time linear in the chain.
constexpr size_t kMaxMergeOps = 128;

// The groups of one region whose ops (sorted) are `ops`: whole, or as single ops to merge
// bottom-up (added to `shattered`), or in chunks (their groups added to `chunks` in order, -1
// after a chunk that was shattered).
void group_region(Grouping& g, const std::vector<int>& ops,
                  const std::vector<const Scheduler*>& schedulers,
                  std::vector<std::set<int>>& shattered, std::vector<int>& chunks) {
  const Fusion& f = g.f;
  auto add_group = [&](const std::vector<int>& members) {
    for (int k : members) g.group_of[k] = members.front();
    g.groups[members.front()] = members;
    return members.front();
  };
  auto shatter = [&](const std::vector<int>& members) {
    std::set<int> ids;
    for (int k : members) {
      std::string reasons;
      if (!first_accepting(f, g.as_segment({k}), schedulers, &reasons)) {
        const Op& op = f.ops[k];
        throw UserError(SourcePlace{f.source_file},
                        "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) +
                            "' (out '" + f.value(op.outs[0]).name +
                            "'): not supported yet: no scheduler can compile it (" + reasons + ")");
      }
      ids.insert(add_group({k}));
    }
    shattered.push_back(std::move(ids));
  };
  if (first_accepting(f, g.as_segment(ops), schedulers, nullptr)) {
    add_group(ops);
    return;
  }
  if (ops.size() <= kMaxMergeOps) {
    shatter(ops);
    return;
  }
  for (size_t begin = 0; begin < ops.size(); begin += kMaxMergeOps) {
    std::vector<int> chunk(ops.begin() + begin,
                           ops.begin() + std::min(ops.size(), begin + kMaxMergeOps));
    if (first_accepting(f, g.as_segment(chunk), schedulers, nullptr)) {
      chunks.push_back(add_group(chunk));
    } else {
      shatter(chunk);
      chunks.push_back(-1);
    }
  }
  chunks.push_back(-1);
}

// Joins each whole-chunk group with the next while the union is accepted and no path between
// them leaves it. Returns the groups left (they stay out of sibling merging: they are at the
// size bound already).
std::set<int> join_chunks(Grouping& g, const std::vector<int>& chunks,
                          const std::vector<const Scheduler*>& schedulers) {
  std::set<int> out;
  int previous = -1;
  for (int id : chunks) {
    if (previous >= 0 && id >= 0) {
      std::vector<int> merged = g.groups.at(previous);
      merged.insert(merged.end(), g.groups.at(id).begin(), g.groups.at(id).end());
      if (first_accepting(g.f, g.as_segment(merged), schedulers, nullptr) &&
          !g.indirect_path(previous, id) && !g.indirect_path(id, previous)) {
        g.merge(id, previous);
        continue;
      }
    }
    if (id >= 0) out.insert(id);
    previous = id;
  }
  return out;
}

// Horizontal merging: groups that read the same tensor and do not depend on each other become
// one kernel when the scheduler that takes each of them takes the union too (a sum and a max
// of the same input read it once). Kinds must match, so a reduction never absorbs unrelated
// pointwise work that would then run at the reduction's (row-limited) parallelism.
// Each result a kernel writes keeps its own values live (and, in a reduction, an
// accumulator): past this many, registers spill and the merged kernel stops paying off.
constexpr size_t kMaxSiblingOutputs = 8;

void merge_siblings(Grouping& g, const std::vector<const Scheduler*>& schedulers,
                    const HeuristicHints& hints, const std::set<int>& excluded) {
  const Fusion& f = g.f;
  // Each group's boundary and scheduler kind, kept up to date as groups merge.
  std::map<int, Segment> segs;
  std::map<int, SchedulerKind> kinds;
  for (const auto& [id, ops] : g.groups) {
    if (excluded.count(id)) continue;
    segs[id] = g.as_segment(ops);
    kinds[id] = first_accepting(f, segs[id], schedulers, nullptr)->kind();
  }
  while (true) {
    int best_a = -1, best_b = -1;
    int64_t best_saving = 0;
    for (auto a = g.groups.begin(); a != g.groups.end(); ++a) {
      if (excluded.count(a->first)) continue;
      for (auto b = std::next(a); b != g.groups.end(); ++b) {
        if (excluded.count(b->first)) continue;
        if (kinds[a->first] != kinds[b->first]) continue;
        int64_t saving = 0;
        for (ValueId v : segs[a->first].inputs)
          if (!f.value(v).scalar_input &&
              std::count(segs[b->first].inputs.begin(), segs[b->first].inputs.end(), v))
            saving += bytes_at_hints(f, v, hints);
        if (saving <= best_saving) continue;
        // Independent: neither reads the other's results, and no path joins them through
        // another group (one overwriting what the other reads is fine in one kernel: the
        // scheduler checks the in-place rules).
        if (g.reads_result(a->first, b->first) || g.reads_result(b->first, a->first) ||
            g.indirect_path(a->first, b->first) || g.indirect_path(b->first, a->first))
          continue;
        std::vector<int> merged = a->second;
        merged.insert(merged.end(), b->second.begin(), b->second.end());
        Segment ms = g.as_segment(merged);
        if (ms.outputs.size() > kMaxSiblingOutputs) continue;
        const Scheduler* sch = first_accepting(f, ms, schedulers, nullptr);
        if (!sch || sch->kind() != kinds[a->first]) continue;
        best_saving = saving, best_a = a->first, best_b = b->first;
      }
    }
    if (best_a < 0) return;
    g.merge(best_b, best_a);
    segs.erase(best_b);
    kinds.erase(best_b);
    segs[best_a] = g.as_segment(g.groups.at(best_a));  // the kind stays the same
  }
}

// No kernel can run next: a kernel reads an input written in place by another kernel whose
// results it also needs (only write-after-read edges can close a cycle; results always flow
// forward).
[[noreturn]] void refuse_overwrite_cycle(const Grouping& g, const std::set<int>& done) {
  const Fusion& f = g.f;
  for (const auto& [out, in] : f.aliases) {
    int writer = f.value(out).def_op;
    if (writer < 0 || done.count(g.group_of[writer])) continue;
    for (int reader : g.readers_before[writer]) {
      if (g.group_of[reader] == g.group_of[writer] || done.count(g.group_of[reader])) continue;
      const Op& op = f.ops[reader];
      throw OverwriteCycle(
          SourcePlace{f.source_file},
          "op " + std::to_string(op.source_index) + " '" + op_name(op.kind) + "' (out '" +
              f.value(op.outs[0]).name + "'): not supported yet: it reads '" + f.value(in).name +
              "', which output '" + f.value(out).name +
              "' overwrites in place, but needs results of the kernel that writes '" +
              f.value(out).name + "', and no single kernel can compute both",
          reader, in);
    }
  }
  FUSERC_UNREACHABLE("segments depend on each other in a cycle");
}

}  // namespace

SegmentedFusion segment_fusion(const Fusion& f, const std::vector<const Scheduler*>& schedulers,
                               const HeuristicHints& hints) {
  auto producers = producers_of(f);
  // Regions: connected components over fusible edges.
  std::vector<int> region(f.ops.size());
  std::iota(region.begin(), region.end(), 0);
  auto find = [&](int x) {
    while (region[x] != x) x = region[x] = region[region[x]];
    return x;
  };
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (int p : producers[k])
      if (fusible_edge(f, p)) region[find(static_cast<int>(k))] = find(p);
  std::map<int, std::vector<int>> regions;
  for (size_t k = 0; k < f.ops.size(); ++k) regions[find(static_cast<int>(k))].push_back(k);

  // A region a scheduler takes whole is one group; the others start as single ops and are
  // merged bottom-up (merges follow fusible edges only, so they stay inside a region), large
  // ones chunk by chunk.
  auto readers_before = overwrite_edges(f);
  Grouping g{f, producers, readers_before, build_use_index(f), std::vector<int>(f.ops.size(), -1),
             {}};
  g.index_overwrites();
  std::vector<std::set<int>> shattered;
  std::vector<int> chunks;
  for (const auto& [root, ops] : regions) group_region(g, ops, schedulers, shattered, chunks);
  std::set<int> chunked = join_chunks(g, chunks, schedulers);
  for (auto& members : shattered) merge_bottom_up(g, members, schedulers, hints);
  merge_siblings(g, schedulers, hints, chunked);

  // Order the groups topologically (ties: the earliest op first) and name their schedulers.
  std::map<int, std::set<int>> preds;
  std::map<int, int> waiting;
  for (const auto& [id, ops] : g.groups) {
    std::set<int>& p = preds[id];
    for (int k : ops) {
      for (int q : producers[k])
        if (g.group_of[q] != id) p.insert(g.group_of[q]);
      for (int q : readers_before[k])
        if (g.group_of[q] != id) p.insert(g.group_of[q]);
    }
    waiting[id] = static_cast<int>(p.size());
  }
  std::map<int, std::vector<int>> succs;
  for (const auto& [id, p] : preds)
    for (int q : p) succs[q].push_back(id);
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;  // group id = first op
  for (const auto& [id, n] : waiting)
    if (n == 0) ready.push(id);
  SegmentedFusion out;
  std::set<int> done;
  while (!ready.empty()) {
    int id = ready.top();
    ready.pop();
    done.insert(id);
    Segment s = g.as_segment(g.groups.at(id));
    s.scheduler = first_accepting(f, s, schedulers, nullptr)->kind();
    out.segments.push_back(std::move(s));
    for (int next : succs[id])
      if (--waiting[next] == 0) ready.push(next);
  }
  if (out.segments.size() < g.groups.size()) refuse_overwrite_cycle(g, done);
  return out;
}

}  // namespace fuserc
