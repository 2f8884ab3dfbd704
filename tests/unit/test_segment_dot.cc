// The DOT picture of a segmentation (core/segment/segment_dot.h): one cluster per kernel with
// its scheduler, and the tensors that cross kernels drawn bold with their sizes at the hints.
#include <catch2/catch.hpp>

#include "core/passes/presegmentation.h"
#include "core/segment/segment_dot.h"
#include "core/segment/segmenter.h"
#include "op_coverage.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;
using fuserc::testing::coverage::graph;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("fuserc dot: kernels as clusters, crossing tensors with their sizes", "[segment]") {
  Fusion f = parse_text(graph("pic", R"("N": {"hint": 1024})",
                              R"({"name": "x", "dtype": "f32", "shape": ["N", 32]})",
                              R"({"op": "exp", "args": ["x"], "out": "e"},
                                 {"op": "segment_set", "args": ["e"], "out": "es"},
                                 {"op": "log", "args": ["es"], "out": "l"},
                                 {"op": "sum", "args": ["l"], "dims": [1], "out": "s"})",
                              R"("s")"));
  PassContext ctx;
  run_presegmentation_passes(f, ctx);
  HeuristicHints hints = HeuristicHints::from(f);
  SegmentedFusion s = segment_graph(f, all_schedulers(), hints);
  std::string dot = segmentation_dot(f, s, hints);
  CHECK(dot.rfind("digraph \"pic\" {", 0) == 0);
  CHECK(count(dot, "subgraph cluster_") == 2);
  CHECK_THAT(dot, Catch::Contains("label=\"kernel 0: pointwise\""));
  CHECK_THAT(dot, Catch::Contains("label=\"kernel 1: reduction\""));
  // Only es crosses kernels: 1024 x 32 f32 = 128 KiB at the hints.
  CHECK(count(dot, "style=bold") == 1);
  CHECK_THAT(dot, Catch::Contains("label=\"es f32[N, 32]\\n128 KiB\""));
  // The output is doubly outlined; the input is a box outside the clusters.
  CHECK_THAT(dot, Catch::Contains("peripheries=2, label=\"s = sum\""));
  CHECK_THAT(dot, Catch::Contains(
                      "shape=box, style=filled, fillcolor=\"#e8e8e8\", label=\"x\\nf32[N, 32]\""));
  CHECK(dot.back() == '\n');
  CHECK(dot.substr(dot.size() - 2) == "}\n");
  CHECK_THAT(dot, Catch::Contains("label=\"pic: 2 kernels per run (sizes at the hints)\""));
}

TEST_CASE("fuserc dot: a library step is its own kind of cluster", "[segment][matmul]") {
  Fusion f = parse_text(graph("mm", R"("N": {"hint": 64})",
                              R"({"name": "x", "dtype": "bf16", "shape": ["N", 32]},
                                 {"name": "w", "dtype": "bf16", "shape": [16, 32]})",
                              R"({"op": "linear", "args": ["x", "w"], "out": "y"},
                                 {"op": "exp", "args": ["y"], "out": "e"})",
                              R"("e")"));
  PassContext ctx;
  run_presegmentation_passes(f, ctx);
  HeuristicHints hints = HeuristicHints::from(f);
  std::string dot = segmentation_dot(f, segment_graph(f, all_schedulers(), hints), hints);
  CHECK_THAT(dot, Catch::Contains("label=\"library step 0: matrix product\""));
  CHECK_THAT(dot, Catch::Contains("label=\"kernel 1: pointwise\""));
  CHECK_THAT(dot, Catch::Contains("mm: 1 kernel and 1 library step per run"));
}
