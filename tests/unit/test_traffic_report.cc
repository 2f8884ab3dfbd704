// The traffic report of `fuserc inspect --bind` (runtime/package_report.h): global_bytes counts
// every buffer once per kernel that reads or writes it, min_global_bytes the graph's inputs
// read once and outputs written once; both per binding, in JSON and text.
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"
#include "runtime/package_report.h"

using namespace fuserc;
using namespace fuserc::testing;
using fuserc::testing::coverage::graph;

TEST_CASE("inspect --bind reports global_bytes and min_global_bytes", "[package]") {
  // x -> exp -> segment_set -> neg -> y: two kernels; the intermediate is written by the
  // first and read by the second. At N = 1024 (f32): each kernel moves 8 KiB, 16 KiB in all,
  // twice the 8 KiB of reading x and writing y once.
  auto exe = compile_graph(parse_text(graph("traffic", R"("N": {"hint": 256})",
                                            R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
                                            R"({"op": "exp", "args": ["x"], "out": "e"},
         {"op": "segment_set", "args": ["e"], "out": "es"},
         {"op": "neg", "args": ["es"], "out": "y"})",
                                            R"("y")")));
  nlohmann::json j = package_json(*exe, exe->bind({1024}).get());
  const nlohmann::json& b = j["bound"];
  REQUIRE(b["launches"].size() == 2);
  CHECK(b["launches"][0]["global_bytes"] == 8192);
  CHECK(b["launches"][1]["global_bytes"] == 8192);
  CHECK(b["global_bytes"] == 16384);
  CHECK(b["min_global_bytes"] == 8192);
  CHECK(b["traffic_ratio"].get<double>() == 2.0);
  std::string text = package_text(*exe, exe->bind({1024}).get());
  CHECK_THAT(text, Catch::Contains("global_bytes: 16384"));
  CHECK_THAT(text, Catch::Contains("min_global_bytes: 8192"));
  CHECK_THAT(text, Catch::Contains("traffic ratio: 2.000"));

  // One kernel reading x twice and writing two results: each tensor once, ratio 1.
  auto one = compile_graph(parse_text(
      graph("one", R"("N": {"hint": 256})", R"({"name": "x", "dtype": "f32", "shape": ["N"]})",
            R"({"op": "exp", "args": ["x"], "out": "a"}, {"op": "neg", "args": ["x"], "out": "b"})",
            R"("a", "b")")));
  nlohmann::json k = package_json(*one, one->bind({1000}).get())["bound"];
  REQUIRE(k["launches"].size() == 1);
  CHECK(k["global_bytes"] == 12000);
  CHECK(k["min_global_bytes"] == 12000);
  // Without a binding there is no traffic (sizes are symbolic).
  CHECK_FALSE(package_json(*one, nullptr).contains("bound"));
}
