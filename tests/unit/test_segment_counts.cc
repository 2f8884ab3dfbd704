// Kernel counts the segmenter reaches on the graphs issue 11 names: every corpus graph one
// scheduler could take whole is one kernel, segment_set is always a boundary, layer-norm and
// batch-norm backward (row and column reductions of one input) are two kernels, and reads of
// disjoint slices of one buffer are not fused only to share it (IREE's false dependency).
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <sstream>

#include "core/passes/presegmentation.h"
#include "core/schedule/scheduler.h"
#include "core/segment/segmenter.h"
#include "core/segment/traffic.h"
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

struct Result {
  Fusion f;
  SegmentedFusion s;
};

Result segment(const std::string& json) {
  Result r{parse_text(json), {}};
  PassContext ctx;
  run_presegmentation_passes(r.f, ctx);
  r.s = segment_graph(r.f, all_schedulers(), HeuristicHints::from(r.f));  // what compile runs
  return r;
}

std::vector<SchedulerKind> kinds(const Result& r) {
  std::vector<SchedulerKind> k;
  for (const auto& seg : r.s.segments) k.push_back(seg.scheduler);
  return k;
}

const std::string kSym = R"("N": {"hint": 4096, "max": 1048576}, "H": {"hint": 768, "max": 8192})";

}  // namespace

TEST_CASE("corpus graphs: one kernel wherever one scheduler could take the graph", "[segment]") {
  // Every graph of the corpus fuserc compiles is one kernel, except segment_set_chain (its
  // segment_set is a boundary). int_ops (a whole-tensor sum beside pointwise work on the same
  // input) is one grid-split reduction kernel writing the pointwise results on its pass.
  const std::map<std::string, size_t> two = {{"segment_set_chain", 2}};
  for (const char* name : {"adam_step_inplace",
                           "batchnorm_stats",
                           "bias_gelu_bf16",
                           "bias_grad_sum_outer",
                           "dropout_residual_bf16",
                           "int_ops",
                           "kv_cache_append_bf16",
                           "layer_norm_fwd_bf16",
                           "layer_norm_to_heads_bf16",
                           "masked_softmax_neg_inf_f16",
                           "pad_cat",
                           "permute_gelu_exp_cos",
                           "reduce_all",
                           "rms_norm_fwd_bf16",
                           "rope_bf16",
                           "segment_set_chain",
                           "softmax_bwd_f16",
                           "softmax_f32",
                           "split_heads_scale",
                           "swiglu_bf16",
                           "transpose_add",
                           "window_softmax_view_f32"}) {
    INFO("graph " << name);
    Result r = segment(read_corpus(name));
    CHECK(r.s.segments.size() == (two.count(name) ? two.at(name) : 1u));
  }
  // segment_set_chain: the kernel boundary is exactly at the segment_set.
  Result chain = segment(read_corpus("segment_set_chain"));
  REQUIRE(chain.s.segments.size() == 2);
  REQUIRE(chain.s.segments[0].outputs.size() == 1);
  CHECK(chain.f.value(chain.s.segments[0].outputs[0]).name == "es");
  CHECK(kinds(chain) ==
        std::vector<SchedulerKind>{SchedulerKind::Pointwise, SchedulerKind::Reduction});
}

TEST_CASE("segment_set is a boundary even where one kernel would do", "[segment]") {
  // exp then neg is one pointwise kernel; with a segment_set between them, two.
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["N", "H"]})";
  Result fused = segment(graph("fused", kSym, x,
                               R"({"op": "exp", "args": ["x"], "out": "e"},
                                  {"op": "neg", "args": ["e"], "out": "y"})",
                               R"("y")"));
  CHECK(fused.s.segments.size() == 1);
  Result split = segment(graph("split", kSym, x,
                               R"({"op": "exp", "args": ["x"], "out": "e"},
                                  {"op": "segment_set", "args": ["e"], "out": "es"},
                                  {"op": "neg", "args": ["es"], "out": "y"})",
                               R"("y")"));
  REQUIRE(split.s.segments.size() == 2);
  CHECK(split.f.value(split.s.segments[0].outputs.at(0)).name == "es");
}

TEST_CASE("layer-norm and batch-norm backward are two kernels", "[segment]") {
  // Layer norm backward: dx needs row reductions, dw and db column reductions of the same
  // tensors; xhat is recomputed in both kernels instead of going through memory (even though
  // at extents of 1 that reads a few bytes more: core/segment/recompute.cc).
  const std::string ln_inputs =
      R"({"name": "x", "dtype": "f32", "shape": ["N", "H"]},
         {"name": "dy", "dtype": "f32", "shape": ["N", "H"]},
         {"name": "mean", "dtype": "f32", "shape": ["N", 1]},
         {"name": "rstd", "dtype": "f32", "shape": ["N", 1]},
         {"name": "w", "dtype": "f32", "shape": ["H"]})";
  const std::string ln_ops = R"(
      {"op": "sub", "args": ["x", "mean"], "out": "xc"},
      {"op": "mul", "args": ["xc", "rstd"], "out": "xhat"},
      {"op": "mul", "args": ["dy", "xhat"], "out": "dyx"},
      {"op": "sum", "args": ["dyx"], "dims": [0], "out": "dw"},
      {"op": "sum", "args": ["dy"], "dims": [0], "out": "db"},
      {"op": "mul", "args": ["dy", "w"], "out": "g"},
      {"op": "mean", "args": ["g"], "dims": [1], "keepdim": true, "out": "mg"},
      {"op": "mul", "args": ["g", "xhat"], "out": "gx"},
      {"op": "mean", "args": ["gx"], "dims": [1], "keepdim": true, "out": "mgx"},
      {"op": "sub", "args": ["g", "mg"], "out": "t0"},
      {"op": "mul", "args": ["xhat", "mgx"], "out": "t1"},
      {"op": "sub", "args": ["t0", "t1"], "out": "t2"},
      {"op": "mul", "args": ["t2", "rstd"], "out": "dx"})";
  Result ln = segment(graph("ln_bwd", kSym, ln_inputs, ln_ops, R"("dx", "dw", "db")"));
  CHECK(ln.s.segments.size() == 2);
  // Nothing goes through global memory between them: each reads graph inputs only.
  for (const auto& seg : ln.s.segments)
    for (ValueId v : seg.inputs) CHECK(ln.f.value(v).is_input());
  // Batch norm backward over (N, H) with statistics per channel H: the column reductions give
  // the sums, the input's gradient reads them back per row.
  const std::string bn_inputs =
      R"({"name": "x", "dtype": "f32", "shape": ["N", "H"]},
         {"name": "dy", "dtype": "f32", "shape": ["N", "H"]},
         {"name": "mean", "dtype": "f32", "shape": ["H"]},
         {"name": "rstd", "dtype": "f32", "shape": ["H"]},
         {"name": "w", "dtype": "f32", "shape": ["H"]})";
  const std::string bn_ops = R"(
      {"op": "sub", "args": ["x", "mean"], "out": "xc"},
      {"op": "mul", "args": ["xc", "rstd"], "out": "xhat"},
      {"op": "sum", "args": ["dy"], "dims": [0], "out": "db"},
      {"op": "mul", "args": ["dy", "xhat"], "out": "dyx"},
      {"op": "sum", "args": ["dyx"], "dims": [0], "out": "dw"},
      {"op": "mul", "args": ["db", 0.001], "out": "mdb"},
      {"op": "mul", "args": ["dw", 0.001], "out": "mdw"},
      {"op": "mul", "args": ["xhat", "mdw"], "out": "t0"},
      {"op": "sub", "args": ["dy", "mdb"], "out": "t1"},
      {"op": "sub", "args": ["t1", "t0"], "out": "t2"},
      {"op": "mul", "args": ["rstd", "w"], "out": "s"},
      {"op": "mul", "args": ["t2", "s"], "out": "dx"})";
  Result bn = segment(graph("bn_bwd", kSym, bn_inputs, bn_ops, R"("dx", "dw", "db")"));
  CHECK(bn.s.segments.size() == 2);
}

TEST_CASE("the cost model: reads of disjoint slices of one buffer save nothing together",
          "[segment]") {
  // Two kernels reading the two halves of x's columns would save no bytes by becoming one
  // (each reads its own half): no false dependency on the whole buffer is made for nothing.
  // The same half read by both saves one read of it.
  const std::string sym = R"("N": {"hint": 4096, "max": 1048576})";
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["N", 256]})";
  auto saved = [&](int second_start) {
    Fusion f = parse_text(
        graph("halves", sym, x,
              R"({"op": "slice", "args": ["x"], "starts": [0, 0], "ends": ["N", 128], "out": "a"},
           {"op": "slice", "args": ["x"], "starts": [0, )" +
                  std::to_string(second_start) + R"(], "ends": ["N", )" +
                  std::to_string(second_start + 128) + R"(], "out": "b"},
           {"op": "amax", "args": ["a"], "dims": [1], "out": "ya"},
           {"op": "sum", "args": ["b"], "dims": [1], "out": "yb"})",
              R"("ya", "yb")"));
    ValueId xv = *f.find_value("x");
    Segment first{{0, 2}, {xv}, {*f.find_value("ya")}}, second{{1, 3}, {xv}, {*f.find_value("yb")}};
    TrafficPoints at = TrafficPoints::from(f, HeuristicHints::from(f));
    GroupTraffic a = group_traffic(f, first), b = group_traffic(f, second);
    Bytes s = saving(traffic_bytes(f, a, at), traffic_bytes(f, b, at),
                     traffic_bytes(f, merged_siblings(a, b), at));
    CHECK(traffic_bytes(f, a, at)[0] == 4096.0 * 128 * 4 + 4096 * 4);  // half of x, ya
    return s;
  };
  Bytes disjoint = saved(128);
  CHECK(disjoint[0] == 0);
  CHECK_FALSE(worth_merging(disjoint));
  Bytes same = saved(0);
  CHECK(same[0] == 4096.0 * 128 * 4);
  CHECK(worth_merging(same));
}

TEST_CASE("a recomputed cone is placed so that every reader of a clone comes after it",
          "[segment]") {
  // Found by scripts/random_graphs.py: the cone {abs, add} recomputed for the kernel of
  // unsqueeze and ge was placed after the cone's last op (add), behind the unsqueeze that
  // reads the abs clone; the dead-code pass then read that operand as a literal and the
  // reduction analysis failed with "bad value id -1".
  Result r = segment(graph("clone_order", R"("S0": {"hint": 256})",
                           R"({"name": "in1", "dtype": "f64", "shape": ["S0"]})", R"(
      {"op": "abs", "args": ["in1"], "out": "t2"},
      {"op": "maximum", "args": ["in1", "t2"], "out": "t3"},
      {"op": "amax", "args": ["t3"], "dims": [-1], "keepdim": true, "out": "t6"},
      {"op": "unsqueeze", "args": ["t2"], "dim": 1, "out": "t7"},
      {"op": "add", "args": ["in1", "t2"], "out": "t8"},
      {"op": "ge", "args": ["t7", "t8"], "out": "t9"})",
                           R"("t9", "t3", "t6")"));
  REQUIRE(r.s.segments.size() == 2);
  bool cloned = false;
  for (const Value& v : r.f.values) cloned = cloned || v.name == "t2_recomputed";
  CHECK(cloned);
  // Every tensor operand is defined before its reader (the verifier's rule, checked here on
  // what compile goes on with).
  for (size_t k = 0; k < r.f.ops.size(); ++k)
    for (const auto& a : r.f.ops[k].args) {
      if (a.is_literal()) continue;
      CHECK(r.f.value(a.value).def_op < static_cast<int>(k));
    }
  // The unsqueeze still reads a tensor, not a literal.
  for (const Op& op : r.f.ops)
    if (op.kind == OpKind::Unsqueeze) CHECK(!op.args[0].is_literal());
}
