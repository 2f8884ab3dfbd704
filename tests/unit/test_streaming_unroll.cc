// Streaming reduction passes (no row kept in registers) load U elements per thread and step
// before folding any in (ReductionParams::unroll): 16 bytes in flight per thread for small
// element computations (4 f32, 8 bf16), 2 for medium ones, 1 past 40 nodes. The generated
// code holds the loaded values in a register array between two unrolled lane loops; the
// emulator agrees with the reference at row counts that leave every remainder of a chunk of U
// (guard pages after each buffer catch a read past the end).
#include <catch2/catch.hpp>

#include "core/schedule/reduction_buckets.h"
#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

bool all_have(const std::vector<std::string>& sources, const std::string& what) {
  for (const auto& s : sources)
    if (s.find(what) == std::string::npos) return false;
  return !sources.empty();
}

bool any_has(const std::vector<std::string>& sources, const std::string& what) {
  for (const auto& s : sources)
    if (s.find(what) != std::string::npos) return true;
  return false;
}

bool none_has(const std::vector<std::string>& sources, const std::string& what) {
  for (const auto& s : sources)
    if (s.find(what) != std::string::npos) return false;
  return true;
}

const std::string kSym = R"("N": {"hint": 257, "min": 0, "max": 100000})";

Bindings rows(std::initializer_list<int64_t> ns) {
  Bindings b;
  for (int64_t n : ns) b.push_back({{"N", n}});
  return b;
}

}  // namespace

TEST_CASE("the unroll follows the element computation's size and the load width",
          "[reduction]") {
  CHECK(reduction_unroll(1, 4) == 4);   // f32: 4 x 4 bytes
  CHECK(reduction_unroll(16, 8) == 8);  // bf16: 8 x 2 bytes
  CHECK(reduction_unroll(3, 2) == 2);   // f64
  CHECK(reduction_unroll(3, 16) == 8);  // bytes: at most 8
  CHECK(reduction_unroll(17, 8) == 2);
  CHECK(reduction_unroll(40, 1) == 1);
  CHECK(reduction_unroll(41, 8) == 1);
}

TEST_CASE("an outer variance loads 4 f32 rows per step and matches the reference",
          "[emulated]") {
  std::string json = graph("outer_var", kSym,
                           R"({"name": "x", "dtype": "f32", "shape": ["N", 64]})",
                           R"({"op": "var_mean", "args": ["x"], "dims": [0], "correction": 1,
                               "out": ["v", "m"]})",
                           R"("v", "m")");
  auto src = kernel_sources(json);
  CHECK(all_have(src, "float held[4];"));
  CHECK(all_have(src, "fz_welford_push(acc_v, held[u])"));
  check_graph(json, rows({0, 1, 3, 4, 5, 8, 9, 31, 33, 257, 1023, 4099, 70001}),
              {false, false});
}

TEST_CASE("an outer bf16 sum loads 8 rows per step; the row count's remainders all run",
          "[emulated]") {
  std::string json = graph("outer_sum_bf16", kSym,
                           R"({"name": "x", "dtype": "bf16", "shape": ["N", 48]})",
                           R"({"op": "sum", "args": ["x"], "dims": [0], "dtype": "f32", "out": "s"},
                               {"op": "amax", "args": ["x"], "dims": [0], "out": "mx"})",
                           R"("s", "mx")");
  auto src = kernel_sources(json);
  CHECK(all_have(src, "[8];"));
  check_graph(json, rows({1, 7, 8, 9, 63, 65, 2049, 9999}), {false, false});
}

TEST_CASE("contiguous rows off the vector path (odd lengths) load 4 per step", "[emulated]") {
  std::string json = graph("inner_odd", R"("N": {"hint": 3}, "C": {"hint": 1001, "max": 100000})",
                           R"({"name": "x", "dtype": "f32", "shape": ["N", "C"]})",
                           R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                               {"op": "var", "args": ["x"], "dims": [1], "correction": 0, "out": "v"})",
                           R"("s", "v")");
  auto src = kernel_sources(json);
  // s8 (rows of at most 8 vectors) keeps one vector per thread; s32, s256 and the 64-bit
  // variant unroll.
  CHECK(any_has(src, "held[4];"));
  CHECK(!all_have(src, "held[4];"));
  check_graph(json,
              {{{"N", 3}, {"C", 1}},
               {{"N", 2}, {"C", 7}},
               {{"N", 5}, {"C", 1025}},
               {{"N", 1}, {"C", 5003}},
               {{"N", 1}, {"C", 70001}}},
              {false, false});
}

TEST_CASE("a large element computation is not unrolled", "[reduction]") {
  std::string ops;
  std::string prev = "x";
  for (int i = 0; i < 45; ++i) {
    std::string out = "t" + std::to_string(i);
    ops += R"({"op": ")" + std::string(i % 2 ? "sin" : "cos") + R"(", "args": [")" + prev +
           R"("], "out": ")" + out + R"("},)";
    prev = out;
  }
  ops += R"({"op": "sum", "args": [")" + prev + R"("], "dims": [0], "out": "s"})";
  std::string json = graph("long_chain", kSym,
                           R"({"name": "x", "dtype": "f32", "shape": ["N", 64]})", ops, R"("s")");
  auto src = kernel_sources(json);
  CHECK(none_has(src, "held["));
  check_graph(json, rows({1, 33, 1000}), {false, false});
}
