// Loads under a condition (a branch of cat or pad) become 16-byte vector loads when their
// in-bounds test is the same for every lane of the vector (a cat or pad along a dimension
// other than the innermost, whose extent is a multiple of the vector): each reads only where
// its test holds (fz_vec_load_if), so no lane reads outside its tensor. The emulator, with
// guard pages before and after every buffer and misaligned buffers (the scalar path), agrees
// with the reference at sizes where a branch is empty.
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

std::string kernel_source(const std::string& json) {
  std::vector<std::string> sources = kernel_sources(json);
  REQUIRE(sources.size() == 1u);
  return sources[0];
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("a KV-cache append (cat along the sequence) reads both sides as guarded vectors",
          "[emulated]") {
  std::string json =
      graph("kv_append", R"("B": {"hint": 2, "max": 64}, "T": {"hint": 5, "min": 0, "max": 4096},
                             "S": {"hint": 1, "min": 0, "max": 512})",
            R"({"name": "cache", "dtype": "bf16", "shape": ["B", 4, "T", 64]},
               {"name": "new", "dtype": "bf16", "shape": ["B", 4, "S", 64]})",
            R"({"op": "cat", "args": ["cache", "new"], "dim": 2, "out": "y"})", R"("y")");
  std::string src = kernel_source(json);
  CHECK(count(src, "fz_vec_load_if<8>(") == 2u);
  check_graph(json, {{{"B", 2}, {"T", 5}, {"S", 1}},
                     {{"B", 1}, {"T", 0}, {"S", 3}},
                     {{"B", 3}, {"T", 7}, {"S", 0}},
                     {{"B", 1}, {"T", 1}, {"S", 1}},
                     {{"B", 2}, {"T", 33}, {"S", 17}}});
}

TEST_CASE("a pad along an outer dimension reads its input as a guarded vector", "[emulated]") {
  std::string json = graph("pad_rows", R"("N": {"hint": 5, "min": 0, "max": 1000})",
                           R"({"name": "x", "dtype": "f32", "shape": ["N", 32]})",
                           R"({"op": "pad", "args": ["x"], "pads": [[2, 1], [0, 0]], "value": 0.5,
                               "out": "p"},
                              {"op": "exp", "args": ["p"], "out": "y"})",
                           R"("y")");
  std::string src = kernel_source(json);
  CHECK(count(src, "fz_vec_load_if<4>(") == 1u);
  check_graph(json, {{{"N", 0}}, {{"N", 1}}, {{"N", 5}}, {{"N", 129}}});
}

TEST_CASE("a cat of a padded tensor: a load under two tests", "[emulated]") {
  std::string json = graph("cat_pad", R"("N": {"hint": 5, "max": 1000}, "M": {"hint": 3, "max": 1000})",
                           R"({"name": "a", "dtype": "f16", "shape": ["N", 16]},
                              {"name": "b", "dtype": "f16", "shape": ["M", 16]})",
                           R"({"op": "pad", "args": ["a"], "pads": [[1, 2], [0, 0]], "value": -3.0,
                               "out": "ap"},
                              {"op": "cat", "args": ["ap", "b", "a"], "dim": 0, "out": "y"})",
                           R"("y")");
  std::string src = kernel_source(json);
  CHECK(count(src, "fz_vec_load_if<8>(") >= 2u);
  check_graph(json, {{{"N", 1}, {"M", 1}}, {{"N", 5}, {"M", 3}}, {{"N", 70}, {"M", 9}}});
}

TEST_CASE("a cat along the innermost dimension stays lane by lane", "[emulated]") {
  std::string json = graph("cat_inner", R"("N": {"hint": 5, "max": 1000})",
                           R"({"name": "a", "dtype": "f32", "shape": ["N", 12]},
                              {"name": "b", "dtype": "f32", "shape": ["N", 4]})",
                           R"({"op": "cat", "args": ["a", "b"], "dim": 1, "out": "y"})", R"("y")");
  CHECK(count(kernel_source(json), "fz_vec_load_if") == 0u);
  check_graph(json, {{{"N", 1}}, {{"N", 7}}});
}
