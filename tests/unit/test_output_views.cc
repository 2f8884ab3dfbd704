// A product reshaped into a graph output (core/segment/output_views.h) is stored straight into
// the output's buffer: a convolution whose result is a graph output is one library step with no
// copy kernel after it, two chained strided and dilated convolutions over symbolic sizes
// compile (the copy's index arithmetic under nested floor divisions did not fit a kernel), a
// kernel reading the output runs after the product that wrote it, and a product that other
// kernels also read is read from the output's buffer. Each runs in the
// emulator against eval.
#include <catch2/catch.hpp>

#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

size_t library_steps(const std::vector<std::string>& launched) {
  return static_cast<size_t>(std::count(launched.begin(), launched.end(), "library step"));
}

}  // namespace

TEST_CASE("a convolution into a graph output is a library step with no copy after it",
          "[emulated][conv]") {
  std::string json = R"({"fuserc": 1, "name": "conv_out",
   "symbols": {"B": {"hint": 2, "max": 8}, "H": {"hint": 16, "min": 12, "max": 512},
               "W": {"hint": 16, "min": 12, "max": 512}},
   "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", 4, "H", "W"]},
              {"name": "w1", "dtype": "f32", "shape": [4, 4, 3, 3]},
              {"name": "w3", "dtype": "f32", "shape": [5, 4, 3, 3]}],
   "ops": [{"op": "conv", "args": ["x", "w1"], "out": "c1", "stride": [2, 2], "padding": [1, 1]},
           {"op": "conv", "args": ["c1", "w3"], "out": "c3", "stride": [3, 3],
            "dilation": [2, 2]},
           {"op": "relu", "args": ["c3"], "out": "r"}],
   "outputs": ["c3", "r"]})";
  auto launched = check_graph(json, {{{"B", 1}, {"H", 12}, {"W", 12}},
                                     {{"B", 2}, {"H", 37}, {"W", 50}}},
                              {false, false});
  for (const auto& l : launched) {
    // Two patch-gathering kernels, two products and the relu: nothing copies c3's product into
    // c3. The relu reads c3 where the product wrote it, so it runs after the product (it may not
    // join the second patch-gathering kernel's step, before the product).
    CHECK(l.size() == 5);
    CHECK(library_steps(l) == 2);
  }
}

TEST_CASE("a product reshaped into an output and read by another kernel", "[emulated][conv]") {
  // p is stored in `out`'s buffer; the kernel computing r reads it there.
  std::string json = R"({"fuserc": 1, "name": "mm_out",
   "symbols": {"M": {"hint": 6, "max": 64}},
   "inputs": [{"name": "a", "dtype": "f32", "shape": ["M", 8]},
              {"name": "b", "dtype": "f32", "shape": [8, 6]}],
   "ops": [{"op": "matmul", "args": ["a", "b"], "out": "p"},
           {"op": "reshape", "args": ["p"], "shape": ["M", 2, 3], "out": "out"},
           {"op": "sum", "args": ["p"], "dims": [1], "out": "r"}],
   "outputs": ["out", "r"]})";
  auto launched = check_graph(json, {{{"M", 1}}, {{"M", 37}}}, {false, false});
  for (const auto& l : launched) {
    CHECK(l.size() == 2);
    CHECK(library_steps(l) == 1);
  }
}
