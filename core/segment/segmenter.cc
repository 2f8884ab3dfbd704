#include "core/segment/segmenter.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>

#include "core/base/diagnostics.h"
#include "core/passes/pass_context.h"
#include "core/schedule/register_cost.h"
#include "core/segment/fusible_regions.h"
#include "core/segment/merge_rules.h"

namespace fuserc {
namespace {

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

// No kernel can run next: a kernel reads an input written in place by another kernel whose
// results it also needs (only write-after-read edges can close a cycle; results always flow
// forward).
[[noreturn]] void refuse_overwrite_cycle(const GroupGraph& g,
                                         const std::vector<std::set<int>>& readers_before,
                                         const std::set<int>& done) {
  const Fusion& f = g.fusion();
  for (const auto& [out, in] : f.aliases) {
    int writer = f.value(out).def_op;
    if (writer < 0 || done.count(g.group_of(writer))) continue;
    for (int reader : readers_before[writer]) {
      if (g.group_of(reader) == g.group_of(writer) || done.count(g.group_of(reader))) continue;
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

// Top-down: the whole graph when one scheduler takes it (and no segment_set cuts it), else
// regions, the connected components over fusible edges (cut where a path leaves one through
// a library step and comes back, see fusible_regions.h).
// Several regions as one kernel are a horizontal merge, under its rules: a reduction kernel
// takes them only when pointwise work keeps its parallelism, and registers must allow.
// A region a scheduler takes whole is one group; the others start as single ops (their sets in
// `shattered`, merged bottom-up next: merges follow fusible edges only, so they stay inside a
// region), large ones chunk by chunk (the joined chunks left at the size bound in `chunked`).
void group_top_down(GroupGraph& g, const SegmentContext& ctx,
                    const std::vector<std::set<int>>& producers,
                    std::vector<std::set<int>>& shattered, std::set<int>& chunked) {
  const Fusion& f = ctx.f;
  std::vector<int> all(f.ops.size());
  std::iota(all.begin(), all.end(), 0);
  std::map<int, std::vector<std::vector<int>>> regions = fusible_regions(f, producers);
  bool cut = false;
  for (const Op& op : f.ops)
    cut = cut || op.kind == OpKind::SegmentSet || op.info().group == OpGroup::Matrix;
  if (!cut && regions.size() > 1) {
    Segment whole = g.as_segment(all);
    const GroupFacts facts(f, whole);
    const Scheduler* sch = first_accepting(facts, ctx.schedulers);
    if (sch &&
        parallelism_reason(ctx, facts, sch->kind(), sch->kind(), SchedulerKind::Pointwise)
            .empty() &&
        estimated_registers(facts, sch->kind(), ctx.hints) <= kRegisterBudget)
      regions = {{0, {all}}};
  }
  std::vector<int> chunks;
  for (const auto& [root, pieces] : regions) {
    if (pieces.size() == 1)
      group_region(g, pieces[0], ctx, shattered, chunks);
    else
      group_cut_region(g, pieces, ctx, shattered);
  }
  g.link();
  chunked = join_chunks(g, chunks, ctx);
}

}  // namespace

SegmentedFusion segment_fusion(const Fusion& f, const std::vector<const Scheduler*>& schedulers,
                               const HeuristicHints& hints, PassContext* timing) {
  SegmentContext ctx{f, schedulers, hints, TrafficPoints::from(f, hints)};
  auto producers = producers_of(f);
  auto readers_before = overwrite_edges(f);
  GroupGraph g(f, producers, readers_before);

  // Top-down, then bottom-up, then horizontally.
  std::vector<std::set<int>> shattered;
  std::set<int> chunked;
  timed_step(timing, "segment", "regions",
             [&] { group_top_down(g, ctx, producers, shattered, chunked); });
  timed_step(timing, "segment", "merge producers", [&] {
    for (auto& members : shattered) merge_producers(g, members, ctx);
  });
  timed_step(timing, "segment", "merge siblings", [&] { merge_siblings(g, ctx, chunked); });

  // Order the groups topologically (ties: the earliest op first) and name their schedulers.
  std::map<int, int> waiting;
  std::priority_queue<std::pair<int, int>, std::vector<std::pair<int, int>>, std::greater<>>
      ready;  // (first op, group)
  for (const auto& [id, ops] : g.groups()) {
    waiting[id] = static_cast<int>(g.predecessors(id).size());
    if (waiting[id] == 0) ready.emplace(ops.front(), id);
  }
  SegmentedFusion out;
  std::set<int> done;
  while (!ready.empty()) {
    int id = ready.top().second;
    ready.pop();
    done.insert(id);
    Segment s = g.segment_of(id);
    s.scheduler = first_accepting(f, s, schedulers)->kind();
    out.segments.push_back(std::move(s));
    for (int next : g.successors(id))
      if (--waiting[next] == 0) ready.emplace(g.ops(next).front(), next);
  }
  if (out.segments.size() < g.groups().size()) refuse_overwrite_cycle(g, readers_before, done);
  return out;
}

}  // namespace fuserc
