// segment_graph (segmenter.h): after segmentation, a tensor one kernel writes only so that
// another can read it, when it is a few elementwise ops away from what the reader could read
// itself, is recomputed by the reader instead. Batch-norm and layer-norm backward normalize x
// (x - mean) * rstd both in the row or column reduction of the weight's gradient and in the
// input's gradient: recomputed in both, nothing goes through memory and the graph is two kernels,
// not three. Each reader kernel gets its own copy of the ops (clones named
// `<value>_recomputed`); the originals no longer needed are removed. A recomputation is taken
// when the reader's scheduler still accepts it and it saves bytes (core/segment/traffic.h);
// the whole segmentation is kept only when it moves fewer bytes than before.
#include <algorithm>
#include <map>
#include <set>

#include "core/passes/pass_context.h"
#include "core/passes/presegmentation.h"
#include "core/segment/merge_rules.h"
#include "core/segment/segmenter.h"

namespace fuserc {
namespace {

// At most this many ops are recomputed for one tensor.
constexpr size_t kMaxRecomputed = 16;
// Rounds of segmentation and recomputation.
constexpr int kRounds = 3;
// Per reader kernel, at most this many candidate tensors are checked (a scheduler's verdict and
// the bytes of the kernel with the cone, each linear in the kernel): those that save the most
// by a first estimate (the tensor's bytes less those of the cone's new reads). A kernel reading
// a thousand slices of another's results cost a million op visits without the bound.
constexpr size_t kMaxCandidatesPerReader = 16;
// A recomputation reads the cone's operands instead of its result: at the symbols' minimum
// (extents of 1) that can be a few bytes more, which no launch notices. Losses up to this many
// bytes at the bounds are tolerated; at the hints it must save.
constexpr double kSlackBytes = 4096;

bool worth_recomputing(const Bytes& gain) {
  if (gain.empty() || gain[0] <= 0) return false;
  for (double g : gain)
    if (g < -kSlackBytes) return false;
  return true;
}

struct Recompute {
  ValueId tensor = kNoValue;
  int reader = -1;        // segment
  std::vector<int> cone;  // ops of the writer the tensor depends on, in order
  Bytes gain;
};

bool in_place_input(const Fusion& f, ValueId v) {
  for (const auto& [out, in] : f.aliases)
    if (in == v) return true;
  return false;
}

// The ops of segment `writer` that `t` depends on, when all are cheap elementwise ops and few;
// else empty.
std::vector<int> cone_of(const Fusion& f, ValueId t, const std::vector<int>& segment_of,
                         int writer) {
  std::set<int> cone;
  std::vector<int> stack{f.value(t).def_op};
  while (!stack.empty()) {
    int k = stack.back();
    stack.pop_back();
    if (k < 0 || segment_of[k] != writer || !cone.insert(k).second) continue;
    const Op& op = f.ops[k];
    bool cheap =
        op.info().group == OpGroup::Unary || op.info().group == OpGroup::Binary ||
        op.info().group == OpGroup::Ternary || op.info().group == OpGroup::Cast ||
        (op.info().group == OpGroup::Shape && op.kind != OpKind::Cat && op.kind != OpKind::Pad);
    if (!cheap || cone.size() > kMaxRecomputed) return {};
    for (const auto& a : op.args)
      if (!a.is_literal()) stack.push_back(f.value(a.value).def_op);
  }
  return {cone.begin(), cone.end()};
}

// The bytes the kernels move, and their launches counted as kLaunchBytes each.
Bytes cost(const Fusion& f, const SegmentedFusion& s, const TrafficPoints& at) {
  Bytes total(at.points.size(), kLaunchBytes * static_cast<double>(s.segments.size()));
  for (const Segment& seg : s.segments) {
    Bytes b = traffic_bytes(f, group_traffic(f, seg), at);
    for (size_t i = 0; i < b.size(); ++i) total[i] += b[i];
  }
  return total;
}

// The recomputations worth making: at most one per reader segment, the one saving most.
std::vector<Recompute> plan(const Fusion& f, const SegmentedFusion& s,
                            const std::vector<const Scheduler*>& schedulers,
                            const TrafficPoints& at) {
  std::vector<int> segment_of(f.ops.size(), -1);
  for (size_t i = 0; i < s.segments.size(); ++i)
    for (int k : s.segments[i].ops) segment_of[k] = static_cast<int>(i);
  std::map<ValueId, std::vector<Recompute>> by_tensor;
  for (size_t c = 0; c < s.segments.size(); ++c) {
    const Segment& seg = s.segments[c];
    struct Candidate {
      ValueId t;
      std::vector<int> cone;
      std::set<ValueId> made, needed;
      Bytes estimate;
    };
    std::vector<Candidate> candidates;
    for (ValueId t : seg.inputs) {
      int def = f.value(t).def_op;
      if (def < 0) continue;
      Candidate cand{t, cone_of(f, t, segment_of, segment_of[def]), {}, {}, {}};
      if (cand.cone.empty()) continue;
      for (int k : cand.cone)
        for (ValueId o : f.ops[k].outs) cand.made.insert(o);
      for (int k : cand.cone)
        for (const auto& a : f.ops[k].args)
          if (!a.is_literal() && !cand.made.count(a.value)) cand.needed.insert(a.value);
      bool safe = true;
      for (ValueId v : cand.needed) safe = safe && !in_place_input(f, v);
      if (!safe) continue;
      cand.estimate = read_bytes(f, t, {}, at);
      for (ValueId v : cand.needed) {
        if (std::binary_search(seg.inputs.begin(), seg.inputs.end(), v)) continue;
        Bytes more = read_bytes(f, v, {}, at);
        for (size_t i = 0; i < more.size(); ++i) cand.estimate[i] -= more[i];
      }
      candidates.push_back(std::move(cand));
    }
    if (candidates.size() > kMaxCandidatesPerReader) {
      std::stable_sort(candidates.begin(), candidates.end(),
                       [](const Candidate& a, const Candidate& b) {
                         return b.estimate < a.estimate;
                       });
      candidates.resize(kMaxCandidatesPerReader);
    }
    Bytes before;  // the reader's bytes as it is (computed once, when a candidate is accepted)
    for (Candidate& cand : candidates) {
      // The reader with the cone: it reads what the cone needs instead of what the cone makes.
      Segment with;
      with.ops = seg.ops;
      with.ops.insert(with.ops.end(), cand.cone.begin(), cand.cone.end());
      std::sort(with.ops.begin(), with.ops.end());
      std::set<ValueId> inputs(cand.needed);
      for (ValueId v : seg.inputs)
        if (!cand.made.count(v)) inputs.insert(v);
      with.inputs.assign(inputs.begin(), inputs.end());
      with.outputs = seg.outputs;
      if (!first_accepting(f, with, schedulers)) continue;
      if (before.empty()) before = traffic_bytes(f, group_traffic(f, seg), at);
      Bytes gain = before;
      Bytes after = traffic_bytes(f, group_traffic(f, with), at);
      for (size_t i = 0; i < gain.size(); ++i) gain[i] -= after[i];
      by_tensor[cand.t].push_back(Recompute{cand.t, static_cast<int>(c), cand.cone, gain});
    }
  }
  // A tensor no kernel but its writer needs then is not written either, and a writer that
  // writes nothing else is not launched.
  std::map<int, Recompute> best;  // by reader
  UseIndex uses = build_use_index(f);
  for (auto& [t, list] : by_tensor) {
    int writer = segment_of[f.value(t).def_op];
    std::set<int> readers;
    for (int k : uses.consumers[t])
      if (segment_of[k] != writer) readers.insert(segment_of[k]);
    bool all = readers.size() == list.size() && !f.is_output(t);
    bool vanishes = all && s.segments[writer].outputs.size() == 1;
    Bytes write = read_bytes(f, t, {}, at);
    for (Recompute& r : list) {
      for (size_t i = 0; all && i < write.size(); ++i) r.gain[i] += write[i] / list.size();
      if (vanishes)
        for (double& g : r.gain) g += kLaunchBytes / list.size();
      if (!worth_recomputing(r.gain)) continue;
      auto it = best.find(r.reader);
      if (it == best.end() || it->second.gain < r.gain) best[r.reader] = r;
    }
  }
  std::vector<Recompute> out;
  for (auto& [reader, r] : best) out.push_back(std::move(r));
  return out;
}

// Gives each planned reader its own copy of the cone, each clone placed after its original.
void apply(Fusion& f, const SegmentedFusion& s, const std::vector<Recompute>& todo) {
  std::set<std::string> names;
  for (const Value& v : f.values) names.insert(v.name);
  std::map<int, std::vector<Op>> after;  // op index -> clones placed after it
  for (const Recompute& r : todo) {
    std::map<ValueId, ValueId> clone;
    for (int k : r.cone) {
      Op op = f.ops[k];
      op.source_index = -1;
      for (Operand& a : op.args)
        if (!a.is_literal() && clone.count(a.value)) a.value = clone[a.value];
      for (ValueId& o : op.outs) {
        Value v = f.value(o);
        std::string base = v.name + "_recomputed";
        v.name = base;
        for (int i = 2; names.count(v.name); ++i) v.name = base + std::to_string(i);
        names.insert(v.name);
        ValueId id = f.add_value(std::move(v));
        clone[o] = id;
        o = id;
      }
      // Right after its original: its operands are defined by then (they are defined before
      // the original, or are clones placed after earlier originals), and every op of the
      // reader that reads a clone read the original, so it comes later.
      after[k].push_back(std::move(op));
    }
    for (int k : s.segments[r.reader].ops)
      for (Operand& a : f.ops[k].args)
        if (!a.is_literal() && clone.count(a.value)) a.value = clone[a.value];
  }
  std::vector<Op> ops;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    ops.push_back(std::move(f.ops[k]));
    if (auto it = after.find(static_cast<int>(k)); it != after.end())
      for (Op& op : it->second) ops.push_back(std::move(op));
  }
  f.ops = std::move(ops);
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(k);
}

}  // namespace

SegmentedFusion segment_graph(Fusion& f, const std::vector<const Scheduler*>& schedulers,
                              const HeuristicHints& hints, PassContext* timing) {
  SegmentedFusion s = segment_fusion_in_place(f, schedulers, hints, timing);
  TrafficPoints at = TrafficPoints::from(f, hints);
  for (int round = 0; round < kRounds; ++round) {
    std::vector<Recompute> todo =
        timed_step(timing, "segment", "recompute plan", [&] { return plan(f, s, schedulers, at); });
    if (todo.empty()) break;
    Fusion before = f;
    apply(f, s, todo);
    remove_dead_ops(f);
    verify_fusion(f);
    SegmentedFusion next = segment_fusion_in_place(f, schedulers, hints, timing);
    if (!worth_recomputing(
            saving(cost(before, s, at), Bytes(at.points.size(), 0.0), cost(f, next, at)))) {
      f = std::move(before);
      break;
    }
    s = std::move(next);
  }
  return s;
}

}  // namespace fuserc
