// The presegmentation passes (core/passes): cast folding, view-chain collapsing, no-op view
// removal and dead code, each checked on the ops it leaves; graph outputs keep their names.
#include <catch2/catch.hpp>

#include "core/passes/presegmentation.h"
#include "op_coverage.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;
using fuserc::testing::coverage::graph;

namespace {

const std::string kSym = R"("N": {"hint": 8}, "M": {"hint": 16})";

Fusion after_passes(const std::string& ops, const std::string& outs,
                    const std::string& dtype = "f32") {
  Fusion f = parse_text(graph(
      "p", kSym, R"({"name": "x", "dtype": ")" + dtype + R"(", "shape": ["N", "M"]})", ops, outs));
  PassContext ctx;
  run_presegmentation_passes(f, ctx);
  return f;
}

std::vector<OpKind> kinds(const Fusion& f) {
  std::vector<OpKind> k;
  for (const Op& op : f.ops) k.push_back(op.kind);
  return k;
}

}  // namespace

TEST_CASE("fold-casts: exact casts of casts read the original value", "[passes]") {
  // bf16 -> f32 -> bf16 is the input itself; the output stays a cast (it keeps its name).
  Fusion round = after_passes(R"({"op": "cast", "args": ["x"], "dtype": "f32", "out": "a"},
                                 {"op": "cast", "args": ["a"], "dtype": "bf16", "out": "b"},
                                 {"op": "neg", "args": ["b"], "out": "y"})",
                              R"("y")", "bf16");
  REQUIRE(kinds(round) == std::vector<OpKind>{OpKind::Neg});
  CHECK(round.value(round.ops[0].args[0].value).name == "x");
  // f32 -> bf16 loses bits: the second cast keeps reading the first.
  Fusion lossy = after_passes(R"({"op": "cast", "args": ["x"], "dtype": "bf16", "out": "a"},
                                 {"op": "cast", "args": ["a"], "dtype": "f32", "out": "y"})",
                              R"("y")");
  REQUIRE(kinds(lossy) == (std::vector<OpKind>{OpKind::Cast, OpKind::Cast}));
  CHECK(lossy.value(lossy.ops[1].args[0].value).name == "a");
}

TEST_CASE("collapse-views and noop-views: one view where a chain was, none where it is void",
          "[passes]") {
  // A reshape back to the original shape through an unsqueeze disappears.
  Fusion back = after_passes(R"({"op": "unsqueeze", "args": ["x"], "dim": 0, "out": "a"},
                                {"op": "reshape", "args": ["a"], "shape": ["N", "M"], "out": "b"},
                                {"op": "exp", "args": ["b"], "out": "y"})",
                             R"("y")");
  REQUIRE(kinds(back) == std::vector<OpKind>{OpKind::Exp});
  CHECK(back.value(back.ops[0].args[0].value).name == "x");
  // Two permutes compose into one reading x.
  Fusion perm = after_passes(R"({"op": "unsqueeze", "args": ["x"], "dim": 2, "out": "a"},
                                {"op": "permute", "args": ["a"], "dims": [2, 0, 1], "out": "b"},
                                {"op": "permute", "args": ["b"], "dims": [0, 2, 1], "out": "y"})",
                             R"("y")");
  REQUIRE(kinds(perm) == (std::vector<OpKind>{OpKind::Unsqueeze, OpKind::Permute}));
  CHECK(perm.ops[1].attrs.dims == std::vector<int64_t>{2, 1, 0});
  CHECK(perm.value(perm.ops[1].args[0].value).name == "a");
  // The identity permutation is removed; a graph output is never replaced.
  Fusion ident = after_passes(R"({"op": "permute", "args": ["x"], "dims": [0, 1], "out": "a"},
                                 {"op": "abs", "args": ["a"], "out": "y"},
                                 {"op": "permute", "args": ["x"], "dims": [0, 1], "out": "z"})",
                              R"("y", "z")");
  REQUIRE(kinds(ident) == (std::vector<OpKind>{OpKind::Abs, OpKind::Permute}));
  CHECK(ident.value(ident.ops[0].args[0].value).name == "x");
  // Views of ops without operands (full, iota) are left alone (this crashed once).
  Fusion made =
      after_passes(R"({"op": "full", "shape": [1], "value": 2.0, "dtype": "f32", "out": "a"},
                                {"op": "full", "shape": [1], "value": 3.0, "dtype": "f32", "out": "b"},
                                {"op": "cat", "args": ["a", "b"], "dim": 0, "out": "c"},
                                {"op": "reshape", "args": ["a"], "shape": [1, 1], "out": "d"},
                                {"op": "mul", "args": ["x", "d"], "out": "y"})",
                   R"("c", "y")");
  CHECK(kinds(made) == (std::vector<OpKind>{OpKind::Full, OpKind::Full, OpKind::Cat,
                                            OpKind::Reshape, OpKind::Mul}));
}
