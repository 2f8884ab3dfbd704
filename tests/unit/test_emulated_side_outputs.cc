// End-to-end tests of reduction kernels that write pointwise results on the reductions' domain
// during their pass over it (side outputs, core/schedule/reduction_analysis.h): whole-tensor
// reductions (one row, split over the grid) and row reductions over contiguous and strided rows,
// at sizes that take the vector path (aligned, a multiple of the vector) and the scalar one
// (misaligned buffers, odd lengths, tails), split and not split, and a two-phase reduction.
// Every element of every output is compared with the reference (see emulated_check.h); each
// graph is one kernel.
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using fuserc::testing::coverage::graph;

namespace {

// The kernels each binding launched are one, and they are the same kernel of the plan.
void check_one_kernel(const std::vector<std::vector<std::string>>& launched) {
  for (const auto& names : launched) CHECK(names.size() == 1u);
}

}  // namespace

TEST_CASE("whole-tensor reductions write pointwise results beside them on their pass",
          "[emulated][side_outputs]") {
  // int_ops' shape: pointwise results of a and b (i32, f32, bool) and sums of a, one kernel.
  const std::string g = graph("whole", R"("L": {"hint": 333, "min": 0})",
                              R"({"name": "a", "dtype": "i32", "shape": ["L"], "range": [-50, 50]},
               {"name": "x", "dtype": "f32", "shape": ["L"]})",
                              R"({"op": "gt", "args": ["a", 0], "out": "pos"},
               {"op": "cast", "args": ["a"], "dtype": "f32", "out": "af"},
               {"op": "mul", "args": ["af", "x"], "out": "y"},
               {"op": "bitwise_xor", "args": ["a", 5], "out": "w"},
               {"op": "sum", "args": ["a"], "dims": [0], "out": "sa"},
               {"op": "amax", "args": ["x"], "dims": [0], "out": "mx"})",
                              R"("pos", "y", "w", "sa", "mx")");
  // Every memory layout (misaligned buffers take the scalar path) below and at the split edge
  // (8192: 2 blocks), odd lengths (the scalar path) and a split with a tail.
  Bindings small;
  for (int64_t l : {1, 3, 255, 4097, 8192, 8193}) small.push_back({{"L", l}});
  check_one_kernel(check_graph(g, small));
  Bindings large;
  for (int64_t l : {12289, (1 << 20), (1 << 20) + 3}) large.push_back({{"L", l}});
  check_one_kernel(check_graph(g, large, {.every_memory_mode = false}));
  // The kernel keeps the reduction's launch: the rows split over blocks as a sum alone would.
  auto exe = compile_graph(parse_text(g));
  for (int64_t l : {8191, 8192, (1 << 20) + 3}) {
    auto b = bind_named(*exe, {{"L", l}});
    REQUIRE(b->kernel_of.size() == 1u);
    const fb::Kernel* k = exe->metadata().kernels()->Get(b->kernel_of[0]);
    CHECK(k->grid_reduction());
    CHECK(b->slot(k->grid()->Get(1)) == std::max<int64_t>(1, l / 4096));
  }
}

TEST_CASE("row reductions write full-shape pointwise results beside them",
          "[emulated][side_outputs]") {
  const std::string sym = R"("N": {"hint": 4, "min": 0}, "L": {"hint": 100000, "min": 0})";
  // Contiguous rows: s8, s32 and s256 (split when the rows are few), f32 and bf16 results.
  const std::string inner =
      graph("rows", sym, R"({"name": "x", "dtype": "f32", "shape": ["N", "L"]})",
            R"({"op": "mul", "args": ["x", "x"], "out": "xx"},
                                     {"op": "sub", "args": ["xx", 1], "out": "y"},
                                     {"op": "cast", "args": ["x"], "dtype": "bf16", "out": "xb"},
                                     {"op": "sum", "args": ["x"], "dims": [1], "out": "s"})",
            R"("y", "xb", "s")");
  Bindings rows;
  for (int64_t l : {1, 8, 33, 2048, 2049}) rows.push_back({{"N", 3}, {"L", l}});
  rows.push_back({{"N", 0}, {"L", 5}});
  rows.push_back({{"N", 3}, {"L", 0}});
  check_one_kernel(check_graph(inner, rows));
  Bindings long_rows = {
      {{"N", 2}, {"L", 70001}}, {{"N", 2}, {"L", 70000}}, {{"N", 130}, {"L", 64}}};
  check_one_kernel(check_graph(inner, long_rows, {.every_memory_mode = false}));
  // Strided rows: every bucket of columns, the reduced rows split.
  const std::string outer =
      graph("columns", sym, R"({"name": "x", "dtype": "f32", "shape": ["L", "N"]})",
            R"({"op": "abs", "args": ["x"], "out": "y"},
                                     {"op": "sum", "args": ["x"], "dims": [0], "out": "s"})",
            R"("y", "s")");
  Bindings columns;
  for (int64_t c : {1, 5, 9, 17, 33}) columns.push_back({{"N", c}, {"L", 4099}});
  columns.push_back({{"N", 3}, {"L", 0}});
  check_one_kernel(check_graph(outer, columns, {.every_memory_mode = false}));
}

TEST_CASE("a two-phase reduction writes its side outputs once, on the first pass",
          "[emulated][side_outputs]") {
  // The centred sum of squares reads each row twice (mean, then the squares); e is written
  // on the first pass only. Many rows at the hints: one kernel (core/segment/merge_rules.h).
  const std::string g =
      graph("two_phase", R"("N": {"hint": 256}, "L": {"hint": 512, "max": 8192})",
            R"({"name": "x", "dtype": "f32", "shape": ["N", "L"]})",
            R"({"op": "mean", "args": ["x"], "dims": [1], "keepdim": true, "out": "m"},
                                 {"op": "sub", "args": ["x", "m"], "out": "d"},
                                 {"op": "mul", "args": ["d", "d"], "out": "dd"},
                                 {"op": "sum", "args": ["dd"], "dims": [1], "out": "q"},
                                 {"op": "exp", "args": ["x"], "out": "e"})",
            R"("q", "e")");
  check_one_kernel(check_graph(g, {{{"N", 3}, {"L", 1}},
                                   {{"N", 5}, {"L", 130}},
                                   {{"N", 2}, {"L", 8192}},
                                   {{"N", 300}, {"L", 33}}}));
}
