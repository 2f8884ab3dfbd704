// The bottom-up step of segmentation (merge_rules.h): among the groups of a shattered region (or
// chunk), repeatedly merge the producer-consumer pair whose union a scheduler accepts, that
// closes no cycle, and that saves the most global-memory bytes at the hints without costing
// bytes at the symbols' bounds (core/segment/traffic.h); ties go to the pair of the lowest
// consumer, then producer. The candidates wait in a priority queue: a pair is evaluated when
// either group changes (its entries with older versions are skipped when they come up), so a
// merge costs the pairs of the group it makes, not a scan of every pair (a region cut into
// hundreds of pieces by segment_set marks took minutes at 10,000 ops with the scan).
// A pair that would close a cycle is dropped: merges only add paths between other groups, so
// it can become possible again only when one of its two groups changes, which queues it anew.
#include <map>
#include <queue>

#include "core/segment/merge_rules.h"

namespace fuserc {
namespace {

// Whether the edge from op `producer` may be inside one kernel: the result of a segment_set is
// always read from global memory.
bool fusible_edge(const Fusion& f, int producer) {
  return f.ops[producer].kind != OpKind::SegmentSet;
}

struct Candidate {
  Bytes saving;
  int p, c;              // producer and consumer group
  int p_version, c_version;
};

// Priority: the most bytes saved, then the lowest consumer, then the lowest producer.
struct LowerPriority {
  bool operator()(const Candidate& a, const Candidate& b) const {
    if (a.saving != b.saving) return a.saving < b.saving;
    if (a.c != b.c) return a.c > b.c;
    return a.p > b.p;
  }
};

}  // namespace

void merge_producers(GroupGraph& g, std::set<int>& members, const SegmentContext& ctx) {
  const Fusion& f = ctx.f;
  struct Own {
    int version;
    Bytes bytes;
  };
  std::map<int, Own> own;  // each group's bytes, by version
  auto bytes_of = [&](int id) -> const Bytes& {
    auto it = own.find(id);
    if (it == own.end() || it->second.version != g.version(id))
      it = own.insert_or_assign(
                  id, Own{g.version(id),
                          traffic_bytes(f, group_traffic(f, g.segment_of(id)), ctx.points)})
               .first;
    return it->second.bytes;
  };
  std::priority_queue<Candidate, std::vector<Candidate>, LowerPriority> queue;
  // Evaluates the pair and queues it when a scheduler takes the union and it saves bytes.
  auto consider = [&](int p, int c) {
    Segment s = g.merged_segment(p, c);
    if (first_accepting(f, s, ctx.schedulers) == nullptr) return;
    Bytes gain =
        saving(bytes_of(p), bytes_of(c), traffic_bytes(f, group_traffic(f, s), ctx.points));
    if (!worth_merging(gain)) return;
    queue.push(Candidate{std::move(gain), p, c, g.version(p), g.version(c)});
  };
  // The member groups whose results group `c` reads over fusible edges.
  auto producer_groups = [&](int c) {
    std::set<int> out;
    for (int k : g.ops(c))
      for (int p : g.producers(k))
        if (g.group_of(p) != c && fusible_edge(f, p) && members.count(g.group_of(p)))
          out.insert(g.group_of(p));
    return out;
  };
  // The member groups that read results of group `p` over fusible edges.
  auto consumer_groups = [&](int p) {
    std::set<int> out;
    for (int k : g.ops(p)) {
      if (!fusible_edge(f, k)) continue;
      for (ValueId v : f.ops[k].outs)
        for (int reader : g.uses().consumers[v])
          if (g.group_of(reader) != p && members.count(g.group_of(reader)))
            out.insert(g.group_of(reader));
    }
    return out;
  };
  for (int c : members)
    for (int p : producer_groups(c)) consider(p, c);
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (!members.count(top.p) || !members.count(top.c) || g.version(top.p) != top.p_version ||
        g.version(top.c) != top.c_version || !g.may_merge(top.p, top.c))
      continue;
    g.merge(top.p, top.c);
    members.erase(top.p);
    for (int p : producer_groups(top.c)) consider(p, top.c);
    for (int c : consumer_groups(top.c)) consider(top.c, c);
  }
}

}  // namespace fuserc
