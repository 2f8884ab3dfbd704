// The bottom-up step of segmentation (merge_rules.h): among the groups of a shattered region (or
// chunk), repeatedly merge the producer-consumer pair whose union a scheduler accepts, that
// closes no cycle, and that saves the most global-memory bytes at the hints without costing
// bytes at the symbols' bounds (core/segment/traffic.h). A pair's verdict and saving are kept
// until either group changes.
#include <map>

#include "core/segment/merge_rules.h"

namespace fuserc {
namespace {

// Whether the edge from op `producer` may be inside one kernel: the result of a segment_set is
// always read from global memory.
bool fusible_edge(const Fusion& f, int producer) {
  return f.ops[producer].kind != OpKind::SegmentSet;
}

}  // namespace

void merge_producers(GroupGraph& g, std::set<int>& members, const SegmentContext& ctx) {
  const Fusion& f = ctx.f;
  struct Candidate {
    int p_version, c_version;
    bool accepted;
    Bytes saving;
  };
  std::map<std::pair<int, int>, Candidate> known;
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
  while (true) {
    int best_p = -1, best_c = -1;
    Bytes best;
    for (int c : members) {
      std::set<int> prods;
      for (int k : g.ops(c))
        for (int p : g.producers(k))
          if (g.group_of(p) != c && fusible_edge(f, p) && members.count(g.group_of(p)))
            prods.insert(g.group_of(p));
      for (int p : prods) {
        auto it = known.find({p, c});
        if (it == known.end() || it->second.p_version != g.version(p) ||
            it->second.c_version != g.version(c)) {
          Candidate cand{g.version(p), g.version(c), false, {}};
          Segment s = g.merged_segment(p, c);
          cand.accepted = first_accepting(f, s, ctx.schedulers) != nullptr;
          if (cand.accepted) {
            cand.saving =
                saving(bytes_of(p), bytes_of(c), traffic_bytes(f, group_traffic(f, s), ctx.points));
            cand.accepted = worth_merging(cand.saving);
          }
          it = known.insert_or_assign({p, c}, std::move(cand)).first;
        }
        const Candidate& cand = it->second;
        if (!cand.accepted || (best_p >= 0 && cand.saving <= best)) continue;
        if (!g.may_merge(p, c)) continue;
        best = cand.saving, best_p = p, best_c = c;
      }
    }
    if (best_p < 0) return;
    g.merge(best_p, best_c);
    members.erase(best_p);
  }
}

}  // namespace fuserc
