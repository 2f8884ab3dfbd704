// Segmentation and memory planning: which graphs become one kernel and with which scheduler,
// sibling groups merged only when it is safe and worth it, segment_set boundaries, and the
// workspace plan (lifetimes share bytes, in-place outputs take their input's buffer).
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "codegen/compile_fusion.h"
#include "core/passes/presegmentation.h"
#include "core/schedule/register_cost.h"
#include "core/schedule/scheduler.h"
#include "core/segment/memory_plan.h"
#include "core/segment/segmenter.h"
#include "op_coverage.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;
using fuserc::testing::coverage::graph;

namespace {

std::string read_corpus(const std::string& name) {
  std::ifstream in(std::string(FUSERC_TEST_CORPUS_DIR) + "/" + name + ".json");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Segmented {
  Fusion f;
  SegmentedFusion s;
  MemoryPlan memory;
};

Segmented segment(const std::string& json) {
  Segmented r{parse_text(json), {}, {}};
  PassContext ctx;
  run_presegmentation_passes(r.f, ctx);
  r.s = segment_fusion(r.f, all_schedulers(), HeuristicHints::from(r.f));
  r.memory = plan_memory(r.f, r.s);
  return r;
}

std::vector<std::string> names_of(const Fusion& f, const std::vector<ValueId>& values) {
  std::vector<std::string> n;
  for (ValueId v : values) n.push_back(f.value(v).name);
  return n;
}

const BufferInfo& buffer(const Segmented& r, const std::string& name) {
  for (const auto& b : r.memory.buffers)
    if (r.f.value(b.value).name == name) return b;
  FAIL("no buffer " << name);
  throw;
}

}  // namespace

TEST_CASE("normalizations and statistics of the corpus are single kernels", "[segment]") {
  struct Want {
    const char* graph;
    SchedulerKind kind;
  };
  for (const Want& w : {Want{"softmax_f32", SchedulerKind::Normalization},
                        Want{"layer_norm_fwd_bf16", SchedulerKind::Normalization},
                        Want{"rms_norm_fwd_bf16", SchedulerKind::Normalization},
                        Want{"softmax_bwd_f16", SchedulerKind::Normalization},
                        Want{"batchnorm_stats", SchedulerKind::Reduction},
                        Want{"bias_grad_sum_outer", SchedulerKind::Reduction},
                        Want{"reduce_all", SchedulerKind::Reduction}}) {
    INFO("graph " << w.graph);
    Segmented r = segment(read_corpus(w.graph));
    REQUIRE(r.s.segments.size() == 1);
    CHECK(r.s.segments[0].scheduler == w.kind);
    CHECK(r.memory.workspace_bytes.is_const(0));  // nothing crosses global memory
  }
}

TEST_CASE("sibling groups reading the same input merge only when safe and of one kind",
          "[segment]") {
  const std::string sym = R"("N": {"hint": 64}, "M": {"hint": 256})";
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})";
  // Three reductions of x over the same rows: one kernel reading x once.
  Segmented same = segment(graph("siblings", sym, x,
                                 R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                                    {"op": "amax", "args": ["x"], "dims": [1], "out": "m"},
                                    {"op": "var", "args": ["x"], "dims": [1], "out": "v"})",
                                 R"("s", "m", "v")"));
  REQUIRE(same.s.segments.size() == 1);
  CHECK(names_of(same.f, same.s.segments[0].inputs) == std::vector<std::string>{"x"});
  // Over other dims: different rows, two kernels.
  Segmented other_dims = segment(graph("other_dims", sym, x,
                                       R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                                          {"op": "sum", "args": ["x"], "dims": [0], "out": "c"})",
                                       R"("s", "c")"));
  CHECK(other_dims.s.segments.size() == 2);
  // A reduction and pointwise work on x of another shape: kinds and domains differ, two
  // kernels (the pointwise one keeps its full parallelism).
  Segmented kinds = segment(graph("kinds", sym, x,
                                  R"({"op": "sum", "args": ["x"], "dims": [0, 1], "out": "s"},
                                     {"op": "slice", "args": ["x"], "starts": [0, 0], "ends": ["N", 8], "out": "xs"},
                                     {"op": "exp", "args": ["xs"], "out": "e"})",
                                  R"("s", "e")"));
  CHECK(kinds.s.segments.size() == 2);
  // Siblings where one depends on the other through a third kernel: merging them would make a
  // cycle, so they stay apart (and run in dependency order).
  Segmented chain = segment(graph("chain", sym, x,
                                  R"({"op": "exp", "args": ["x"], "out": "e"},
                                     {"op": "segment_set", "args": ["e"], "out": "es"},
                                     {"op": "sum", "args": ["es"], "dims": [1], "keepdim": true, "out": "s"},
                                     {"op": "add", "args": ["x", "s"], "out": "y"})",
                                  R"("y")"));
  REQUIRE(chain.s.segments.size() == 2);
  CHECK(names_of(chain.f, chain.s.segments[1].inputs) == std::vector<std::string>{"x", "es"});
  // Results per merged kernel are bounded by the register estimate, not a count: twelve f32
  // results of x fit one kernel; forty do not, and are packed into as few kernels as fit.
  auto many_outputs = [&](int n) {
    std::string ops, outs;
    for (int i = 0; i < n; ++i) {
      ops += std::string(i ? ", " : "") + R"({"op": "mul", "args": ["x", )" +
             std::to_string(i + 2) + R"(], "out": "y)" + std::to_string(i) + "\"}";
      outs += std::string(i ? ", " : "") + "\"y" + std::to_string(i) + "\"";
    }
    return segment(graph("many", sym, x, ops, outs));
  };
  Segmented twelve = many_outputs(12);
  CHECK(twelve.s.segments.size() == 1);
  Segmented forty = many_outputs(40);
  CHECK(forty.s.segments.size() >= 2);
  CHECK(forty.s.segments.size() <= 3);
  size_t outputs = 0;
  for (const auto& seg : forty.s.segments) {
    outputs += seg.outputs.size();
    CHECK(estimated_registers(GroupFacts(forty.f, seg), seg.scheduler, HeuristicHints::from(forty.f)) <=
          kRegisterBudget);
  }
  CHECK(outputs == 40);
}

TEST_CASE("the register estimate counts Welford's five words of state per variance",
          "[segment][registers]") {
  const std::string sym = R"("N": {"hint": 64}, "M": {"hint": 256})";
  auto registers_of = [&](const std::string& dtype, const std::string& op) {
    const std::string x = R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": ["N", "M"]})";
    Segmented r = segment(graph("r", sym, x,
                                R"({"op": ")" + op +
                                    R"(", "args": ["x"], "dims": [1], "out": "r"})",
                                R"("r")"));
    REQUIRE(r.s.segments.size() == 1);
    const Segment& seg = r.s.segments[0];
    return estimated_registers(GroupFacts(r.f, seg), seg.scheduler, HeuristicHints::from(r.f));
  };
  // fz_welford holds mean, m2, count, sum and the mean's rounding error; a sum holds one.
  CHECK(registers_of("f32", "var") - registers_of("f32", "sum") == 4);
  CHECK(registers_of("f64", "var") - registers_of("f64", "sum") == 8);
}

TEST_CASE("pointwise work on a reduction's domain rides its pass when that saves bytes",
          "[segment][side_outputs]") {
  const std::string sym = R"("N": {"hint": 64}, "M": {"hint": 256})";
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})";
  auto outputs_of = [](const Segmented& r, size_t i) {
    std::vector<std::string> n = names_of(r.f, r.s.segments.at(i).outputs);
    std::sort(n.begin(), n.end());
    return n;
  };
  // int_ops: the whole-tensor sum of a and the pointwise results of a and b, one reduction
  // kernel reading a once (it was a pointwise kernel and a grid reduction).
  Segmented int_ops = segment(read_corpus("int_ops"));
  REQUIRE(int_ops.s.segments.size() == 1);
  CHECK(int_ops.s.segments[0].scheduler == SchedulerKind::Reduction);
  CHECK(outputs_of(int_ops, 0) == std::vector<std::string>{"pos", "sa", "w", "y"});
  // A whole-tensor sum and exp of the same x: one reduction kernel (split over the grid).
  Segmented whole = segment(graph("whole", sym, x,
                                  R"({"op": "sum", "args": ["x"], "dims": [0, 1], "out": "s"},
                                     {"op": "exp", "args": ["x"], "out": "e"})",
                                  R"("s", "e")"));
  REQUIRE(whole.s.segments.size() == 1);
  CHECK(whole.s.segments[0].scheduler == SchedulerKind::Reduction);
  // Row sums of few rows beside a full-shape result: one reduction kernel (rows split).
  Segmented rows = segment(graph("rows", R"("N": {"hint": 4}, "M": {"hint": 100000})", x,
                                 R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                                    {"op": "mul", "args": ["x", 3], "out": "y"})",
                                 R"("s", "y")"));
  REQUIRE(rows.s.segments.size() == 1);
  CHECK(rows.s.segments[0].scheduler == SchedulerKind::Reduction);
  // The byte-cost model decides: the reduction and the pointwise work reading disjoint halves
  // of x save nothing by sharing a kernel (two kernels); the same half, one.
  auto halves = [&](int second_start) {
    return segment(
        graph("halves", sym, x,
              R"({"op": "slice", "args": ["x"], "starts": [0, 0], "ends": ["N", 128], "out": "a"},
           {"op": "slice", "args": ["x"], "starts": [0, )" +
                  std::to_string(second_start) + R"(], "ends": ["N", )" +
                  std::to_string(second_start + 128) + R"(], "out": "b"},
           {"op": "sum", "args": ["a"], "dims": [0, 1], "out": "s"},
           {"op": "exp", "args": ["b"], "out": "e"})",
              R"("s", "e")"));
  };
  CHECK(halves(128).s.segments.size() == 2);
  CHECK(halves(0).s.segments.size() == 1);
  // Parallelism decides: a two-phase reduction does not split its rows, so with few long rows
  // the pointwise work keeps its own kernel; with many rows it joins the reduction.
  const std::string two_phase =
      R"({"op": "mean", "args": ["x"], "dims": [1], "keepdim": true, "out": "m"},
         {"op": "sub", "args": ["x", "m"], "out": "d"},
         {"op": "mul", "args": ["d", "d"], "out": "dd"},
         {"op": "sum", "args": ["dd"], "dims": [1], "out": "q"},
         {"op": "exp", "args": ["x"], "out": "e"})";
  Segmented few = segment(
      graph("few", R"("N": {"hint": 4}, "M": {"hint": 100000})", x, two_phase, R"("q", "e")"));
  CHECK(few.s.segments.size() == 2);
  Segmented many = segment(graph("many", R"("N": {"hint": 4096}, "M": {"hint": 512, "max": 8192})",
                                 x, two_phase, R"("q", "e")"));
  REQUIRE(many.s.segments.size() == 1);
  CHECK(many.s.segments[0].scheduler == SchedulerKind::Reduction);
  // A full-shape result that needs the reduction's result is a normalization's, not a side
  // output.
  Segmented norm =
      segment(graph("norm", sym, x,
                    R"({"op": "sum", "args": ["x"], "dims": [1], "keepdim": true, "out": "s"},
                                    {"op": "sub", "args": ["x", "s"], "out": "y"})",
                    R"("y")"));
  REQUIRE(norm.s.segments.size() == 1);
  CHECK(norm.s.segments[0].scheduler == SchedulerKind::Normalization);
}

TEST_CASE("the workspace plan shares bytes between intermediates whose lives do not overlap",
          "[segment]") {
  // x -> e1 -> e2 -> e3 -> y through forced boundaries: e1 lives in kernels 0..1, e2 in 1..2,
  // e3 in 2..3; e1 and e3 may share bytes, e2 may share with neither.
  Segmented r = segment(graph("chain4", R"("N": {"hint": 1000})",
                              R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
                              R"({"op": "exp", "args": ["x"], "out": "a"},
                                 {"op": "segment_set", "args": ["a"], "out": "e1"},
                                 {"op": "log", "args": ["e1"], "out": "b"},
                                 {"op": "segment_set", "args": ["b"], "out": "e2"},
                                 {"op": "sin", "args": ["e2"], "out": "c"},
                                 {"op": "segment_set", "args": ["c"], "out": "e3"},
                                 {"op": "sum", "args": ["e3"], "dims": [0], "out": "y"})",
                              R"("y")"));
  REQUIRE(r.s.segments.size() == 4);
  const BufferInfo &e1 = buffer(r, "e1"), &e2 = buffer(r, "e2"), &e3 = buffer(r, "e3");
  CHECK(e1.first_segment == 0);
  CHECK(e1.last_segment == 1);
  CHECK(e3.first_segment == 2);
  CHECK(e1.offset == e3.offset);
  CHECK(e2.offset != e1.offset);
  // Two intermediates of N floats, each rounded up to 256 bytes.
  for (int64_t n : {1, 1000, 12345}) {
    int64_t bytes = evaluate(r.memory.workspace_bytes,
                             [&](const std::string&) -> std::optional<int64_t> { return n; });
    CHECK(bytes == 2 * ((n * 4 + 255) / 256 * 256));
  }
  // An output written in place takes its input's buffer.
  Segmented in_place = segment(graph(
      "in_place", R"("N": {"hint": 1000})", R"({"name": "p", "dtype": "f32", "shape": ["N"]})",
      R"({"op": "mul", "args": ["p", 0.5], "out": "q"})", R"("q")", R"(, "aliases": {"q": "p"})"));
  CHECK(buffer(in_place, "q").alias_input == 0);
}

TEST_CASE("a reduction's result read on other rows is not fused with its reduction", "[segment]") {
  const std::string sym = R"("N": {"hint": 64})";
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["N", "N"]})";
  // r holds row sums; x + r broadcasts r along rows (r[j] at (i, j)): a column of the domain,
  // not the row's own result. Two kernels.
  Segmented across = segment(graph("across", sym, x,
                                   R"({"op": "sum", "args": ["x"], "dims": [1], "out": "r"},
                                      {"op": "add", "args": ["x", "r"], "out": "y"})",
                                   R"("y")"));
  CHECK(across.s.segments.size() == 2);
  // The same with keepdim reads the row's own result: one kernel.
  Segmented own =
      segment(graph("own", sym, x,
                    R"({"op": "sum", "args": ["x"], "dims": [1], "keepdim": true, "out": "r"},
                                   {"op": "add", "args": ["x", "r"], "out": "y"})",
                    R"("y")"));
  CHECK(own.s.segments.size() == 1);
  // A permuted result stored as one element per row would be in another order: two kernels.
  Segmented permuted = segment(graph("permuted", R"("A": {"hint": 4}, "B": {"hint": 6})",
                                     R"({"name": "x", "dtype": "f32", "shape": ["A", "B", 8]})",
                                     R"({"op": "sum", "args": ["x"], "dims": [2], "out": "r"},
                                        {"op": "permute", "args": ["r"], "dims": [1, 0], "out": "y"})",
                                     R"("y")"));
  CHECK(permuted.s.segments.size() == 2);
}

TEST_CASE("inputs written in place: readers first, and a copy when no order works", "[segment]") {
  const std::string sym = R"("N": {"hint": 64})";
  // exp(x) is written into x, which a reduction also reads: the reduction's kernel runs first
  // although the graph lists it second.
  Segmented order = segment(graph(
      "order", sym, R"({"name": "x", "dtype": "f32", "shape": ["N", "N"]})",
      R"({"op": "exp", "args": ["x"], "out": "y"}, {"op": "sum", "args": ["x"], "dims": [1], "out": "z"})",
      R"("y", "z")", R"(, "aliases": {"y": "x"})"));
  REQUIRE(order.s.segments.size() == 2);
  CHECK(names_of(order.f, order.s.segments[0].outputs) == std::vector<std::string>{"z"});
  CHECK(names_of(order.f, order.s.segments[1].outputs) == std::vector<std::string>{"y"});
  // m reads x, which s overwrites, but needs the maximum of s (a reduction of another domain):
  // no order of kernels works without a copy of x.
  const std::string cycle = graph(
      "cycle", R"("S": {"hint": 16}, "T": {"hint": 32})",
      R"({"name": "z", "dtype": "f32", "shape": ["S", "T"]}, {"name": "x", "dtype": "f32", "shape": ["S"]})",
      R"({"op": "sum", "args": ["z"], "dims": [1], "out": "s"}, {"op": "amax", "args": ["s"], "dims": [0], "out": "q"},
         {"op": "add", "args": ["x", "q"], "out": "m"})",
      R"("s", "m")", R"(, "aliases": {"s": "x"})");
  Fusion f = parse_text(cycle);
  CHECK_THROWS_WITH(segment_fusion(f, all_schedulers(), HeuristicHints::from(f)),
                    Catch::Contains("op 2 'add' (out 'm'): not supported yet: it reads 'x', which "
                                    "output 's' overwrites in place"));
  SegmentedFusion s = segment_fusion_in_place(f, all_schedulers(), HeuristicHints::from(f));
  // The copy, the sum, the maximum over all of s (one row of up to S elements: a split
  // reduction, not a one-block normalization) and the add.
  REQUIRE(s.segments.size() == 4);
  CHECK(names_of(f, s.segments[0].outputs) == std::vector<std::string>{"x_before_write"});
  CHECK(f.ops[0].kind == OpKind::SegmentSet);
  CHECK(f.value(f.ops.back().args[0].value).name == "x_before_write");
}

TEST_CASE("an op that reads the input it overwrites at other elements reads a copy", "[segment]") {
  // The pad shifts x by one column and is written back into x: no kernel can do it in place
  // (a thread would read a neighbour another thread has overwritten), so it reads a copy.
  const std::string g = graph(
      "shift", R"("N": {"hint": 64})", R"({"name": "x", "dtype": "f32", "shape": ["N", 8]})",
      R"({"op": "pad", "args": ["x"], "pads": [[0, 0], [-1, 1]], "out": "y"})", R"("y")",
      R"(, "aliases": {"y": "x"})");
  Fusion f = parse_text(g);
  CHECK_THROWS_WITH(segment_fusion(f, all_schedulers(), HeuristicHints::from(f)),
                    Catch::Contains("op 0 'pad' (out 'y'): not supported yet"));
  SegmentedFusion s = segment_fusion_in_place(f, all_schedulers(), HeuristicHints::from(f));
  REQUIRE(s.segments.size() == 2);
  CHECK(names_of(f, s.segments[0].outputs) == std::vector<std::string>{"x_before_write"});
  CHECK(f.value(f.ops.back().args[0].value).name == "x_before_write");
}
