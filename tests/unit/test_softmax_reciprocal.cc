// Softmax's write pass multiplies by the reciprocal of the row's sum (computed once per row)
// instead of dividing every element, where the sum is an online log-sum-exp's (in [1, row
// length] or NaN: 1 / s cannot overflow) and the division is in f32; f64 softmax and a
// division by a plain sum keep the division. The results agree with the reference in the
// emulator, fully masked rows (NaN) included.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

const std::string kSym = R"("N": {"hint": 4}, "C": {"hint": 1000, "max": 8192})";

std::string softmax(const std::string& dtype, const std::string& divisor_op) {
  return graph("softmax_" + dtype, kSym,
               R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": ["N", "C"]})",
               R"({"op": "amax", "args": ["x"], "dims": [-1], "keepdim": true, "out": "m"},
                  {"op": "sub", "args": ["x", "m"], "out": "xs"},
                  {"op": "exp", "args": ["xs"], "out": "e"},
                  {"op": ")" + divisor_op +
                   R"(", "args": ["e"], "dims": [-1], "keepdim": true, "out": "s"},
                  {"op": "div", "args": ["e", "s"], "out": "y"})",
               R"("y")");
}

std::string masked_softmax_f16() {
  std::ifstream in(std::string(FUSERC_TEST_CORPUS_DIR) + "/masked_softmax_neg_inf_f16.json");
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool has(const std::string& s, const std::string& what) {
  return s.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE("softmax multiplies by the reciprocal of its online sum, once per row", "[reciprocal]") {
  for (const std::string& json : {softmax("f32", "sum"), masked_softmax_f16()}) {
    auto all = kernel_sources(json);
    REQUIRE(!all.empty());
    for (const std::string& s : all) {
      INFO(s.substr(0, 200));
      CHECK(has(s, "const float s_inv = (1.0f / s);"));
      CHECK(has(s, " * s_inv)"));
      CHECK(!has(s, "(e / s)"));
      CHECK(!has(s, "(e_v / s)"));
    }
  }
  // f64 keeps the division (its tolerance is 1e-9); so does a division by a sum that is no
  // log-sum-exp's (it may be tiny, and its reciprocal overflow).
  for (const std::string& s : kernel_sources(softmax("f64", "sum"))) {
    CHECK(!has(s, "s_inv"));
    CHECK(has(s, " / s)"));
  }
  std::string plain =
      graph("normalize", kSym, R"({"name": "x", "dtype": "f32", "shape": ["N", "C"]})",
            R"({"op": "sum", "args": ["x"], "dims": [-1], "keepdim": true, "out": "s"},
                {"op": "div", "args": ["x", "s"], "out": "y"})",
            R"("y")");
  for (const std::string& s : kernel_sources(plain)) {
    CHECK(!has(s, "s_inv"));
    CHECK(has(s, " / s)"));
  }
}

TEST_CASE("softmax with the reciprocal agrees with the reference", "[reciprocal][emulated]") {
  Bindings sizes = {{{"N", 5}, {"C", 1}}, {{"N", 5}, {"C", 31}}, {{"N", 3}, {"C", 768}},
                    {{"N", 2}, {"C", 5000}}};
  check_graph(softmax("f32", "sum"), sizes, {.every_memory_mode = false});
  // Rows of one element: about half are masked out entirely (NaN rows).
  check_graph(masked_softmax_f16(),
              {{{"N", 40}, {"S", 1}}, {{"N", 5}, {"S", 768}}, {{"N", 2}, {"S", 5000}}},
              {.every_memory_mode = false});
}
