// Tests for the graph front end on valid graphs: symbols, inputs, dtype rules, shape
// inference of every op kind and the normalization of its attributes. (Invalid graphs are
// covered by the errors corpus in tests/errors.)
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "test_util.h"

using namespace fuserc;
using fuserc::testing::parse_error;
using fuserc::testing::parse_text;

namespace {

// A graph with the given inputs and ops and outputs.
std::string graph(const std::string& inputs, const std::string& ops, const std::string& outputs,
                  const std::string& extra = "") {
  return R"({"fuserc": 1, "name": "g", )" + extra + R"("inputs": [)" + inputs + R"(], "ops": [)" +
         ops + R"(], "outputs": [)" + outputs + "]}";
}

const Value& out(const Fusion& f, const std::string& name) {
  return f.value(*f.find_value(name));
}

std::string type_of(const Fusion& f, const std::string& name) {
  const Value& v = out(f, name);
  return std::string(dtype_name(v.dtype)) + shape_to_string(v.shape);
}

const std::string X = R"({"name": "x", "dtype": "f32", "shape": ["N", 4]})";

}  // namespace

TEST_CASE("symbols: declared, implicit, defaults", "[parser]") {
  Fusion f = parse_text(graph(R"({"name": "x", "dtype": "bf16", "shape": ["N", "H", 3]},
                                  {"name": "s", "dtype": "f32"})",
                              "", R"("x", "s", "x")",
                              R"("symbols": {"N": {"hint": 64, "max": 4096}, "Unused": {}}, )"));
  REQUIRE(f.symbols.size() == 3);
  CHECK(f.symbols[0].name == "H");  // sorted by name
  CHECK_FALSE(f.symbols[0].declared);
  CHECK(f.symbols[0].min == 1);
  CHECK(f.symbols[0].hint == 1024);
  CHECK(f.symbols[1].name == "N");
  CHECK(f.symbols[1].hint == 64);
  CHECK(f.symbols[1].max == 4096);
  CHECK(f.symbols[2].name == "Unused");
  const Value& s = out(f, "s");
  CHECK(s.scalar_input);
  CHECK(s.rank() == 0);
  CHECK(f.outputs.size() == 3);  // an input, and the same name twice, are allowed
  CHECK(out(f, "x").shape[0].lo() == 1);
  CHECK(out(f, "x").shape[0].hi() == 4096);
}

TEST_CASE("elementwise dtype rules", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "i", "dtype": "i32", "shape": [4]}, {"name": "b", "dtype": "bool", "shape": [4]},
         {"name": "h", "dtype": "bf16", "shape": [4]}, {"name": "d", "dtype": "f64"})",
      R"({"op": "div", "args": ["i", 2], "out": "q"},
         {"op": "exp", "args": ["b"], "out": "e"},
         {"op": "lt", "args": ["i", 0.5], "out": "c"},
         {"op": "where", "args": ["c", "h", 0.0], "out": "w"},
         {"op": "mul", "args": ["h", "d"], "out": "hd"},
         {"op": "mul", "args": ["i", "d"], "out": "id"},
         {"op": "add", "args": ["b", 1], "out": "bi"},
         {"op": "neg", "args": ["i"], "out": "ni"},
         {"op": "floor", "args": ["i"], "out": "fi"},
         {"op": "cast", "args": ["h"], "dtype": "i64", "out": "hc"},
         {"op": "bitwise_not", "args": ["b"], "out": "nb"},
         {"op": "gelu", "args": ["h"], "approximate": "tanh", "out": "gt"},
         {"op": "gelu", "args": ["h"], "out": "ge"},
         {"op": "clamp", "args": ["i", 0, 3.5], "out": "cl"},
         {"op": "isnan", "args": ["h"], "out": "nan"})",
      R"("q")"));
  CHECK(type_of(f, "q") == "f32[4]");
  CHECK(type_of(f, "e") == "f32[4]");
  CHECK(type_of(f, "c") == "bool[4]");
  CHECK(type_of(f, "w") == "bf16[4]");
  CHECK(type_of(f, "hd") == "bf16[4]");
  CHECK(type_of(f, "id") == "f64[4]");
  CHECK(type_of(f, "bi") == "i64[4]");
  CHECK(type_of(f, "ni") == "i32[4]");
  CHECK(type_of(f, "fi") == "i32[4]");
  CHECK(type_of(f, "hc") == "i64[4]");
  CHECK(type_of(f, "nb") == "bool[4]");
  CHECK(type_of(f, "cl") == "f32[4]");
  CHECK(type_of(f, "nan") == "bool[4]");
  CHECK(f.ops[f.value(*f.find_value("gt")).def_op].kind == OpKind::GeluTanh);
  CHECK(f.ops[f.value(*f.find_value("ge")).def_op].kind == OpKind::Gelu);
}

TEST_CASE("the unary ops added to the contract: integer and bool inputs give f32", "[parser]") {
  for (const char* name : {"asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                           "log10", "erfinv", "lgamma", "frac", "signbit"}) {
    INFO("op " << name);
    const bool predicate = std::string(name) == "signbit";
    for (const char* dt : {"bool", "i32", "i64", "f16", "bf16", "f32", "f64"}) {
      INFO("dtype " << dt);
      Fusion f = parse_text(
          graph(R"({"name": "x", "dtype": ")" + std::string(dt) + R"(", "shape": [3]})",
                R"({"op": ")" + std::string(name) + R"(", "args": ["x"], "out": "y"})", R"("y")"));
      const bool float_input = std::string(dt).find('f') != std::string::npos;  // f16 bf16 ...
      std::string want = predicate ? "bool" : float_input ? std::string(dt) : "f32";
      CHECK(type_of(f, "y") == want + "[3]");
    }
  }
  // atan2 of integers and bools is f32 too.
  Fusion f = parse_text(graph(
      R"({"name": "i", "dtype": "i64", "shape": [3]}, {"name": "b", "dtype": "bool", "shape": [3]})",
      R"({"op": "atan2", "args": ["i", "b"], "out": "ib"}, {"op": "atan2", "args": ["b", 1], "out": "b1"})",
      R"("ib", "b1")"));
  CHECK(type_of(f, "ib") == "f32[3]");
  CHECK(type_of(f, "b1") == "f32[3]");
}

TEST_CASE("literals inf, -inf and nan", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "x", "dtype": "f16", "shape": [2, 3]}, {"name": "i", "dtype": "i32", "shape": [3]},
         {"name": "c", "dtype": "bool", "shape": [3]})",
      R"({"op": "maximum", "args": ["x", {"value": "-inf"}], "out": "a"},
         {"op": "add", "args": ["i", {"value": "inf"}], "out": "b"},
         {"op": "mul", "args": [{"value": 2}, "i"], "out": "d"},
         {"op": "full", "shape": [3], "value": "nan", "dtype": "bf16", "out": "e"},
         {"op": "pad", "args": ["x"], "pads": [[0, 0], [1, 0]], "value": "-inf", "out": "p"},
         {"op": "pad", "args": ["c"], "pads": [[1, 0]], "value": "nan", "out": "pc"},
         {"op": "full", "shape": [3], "value": 2.9, "dtype": "i32", "out": "t"})",
      R"("a", "b", "d", "e", "p", "pc", "t")"));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(type_of(f, "a") == "f16[2, 3]");  // a float literal does not widen a float tensor
  CHECK(f.ops[0].args[1].literal == Literal::of_float(-inf));
  CHECK(type_of(f, "b") == "f32[3]");  // nor does it stay integer
  CHECK(f.ops[1].args[1].literal == Literal::of_float(inf));
  CHECK(type_of(f, "d") == "i32[3]");
  CHECK(f.ops[2].args[0].literal == Literal::of_int(2));
  CHECK(std::isnan(f.ops[3].attrs.value.f));
  CHECK(f.ops[4].attrs.value == Literal::of_float(-inf));
  CHECK(type_of(f, "pc") == "bool[4]");  // a bool result tests for non-zero: NaN is true
  CHECK(type_of(f, "t") == "i32[3]");    // a fraction truncates, as in PyTorch
  CHECK(parse_error(
            graph(R"({"name": "i", "dtype": "i32", "shape": [3]})",
                  R"({"op": "pad", "args": ["i"], "pads": [[1, 0]], "value": "-inf", "out": "p"})",
                  R"("p")"))
            .find("value -inf cannot be converted to i32") != std::string::npos);
}

TEST_CASE("reductions: dims, keepdim, result dtypes", "[parser]") {
  Fusion f =
      parse_text(graph(X + R"(, {"name": "i", "dtype": "i32", "shape": ["N", 4]},
             {"name": "h", "dtype": "f16", "shape": [2, 3, 5]})",
                       R"({"op": "sum", "args": ["x"], "dims": [-1], "keepdim": true, "out": "s1"},
         {"op": "sum", "args": ["x"], "dims": [1, 0], "out": "s0"},
         {"op": "sum", "args": ["i"], "dims": [0], "out": "si"},
         {"op": "sum", "args": ["h"], "dims": [2], "dtype": "f32", "out": "sh"},
         {"op": "prod", "args": ["i"], "dims": [1], "out": "pi"},
         {"op": "amax", "args": ["i"], "dims": [1], "out": "mi"},
         {"op": "mean", "args": ["h"], "dims": [0, 2], "keepdim": true, "out": "mh"},
         {"op": "var_mean", "args": ["x"], "dims": [0], "correction": 0, "out": ["v", "m"]})",
                       R"("s1")"));
  CHECK(type_of(f, "s1") == "f32[N, 1]");
  CHECK(type_of(f, "s0") == "f32[]");
  CHECK(type_of(f, "si") == "i64[4]");
  CHECK(type_of(f, "sh") == "f32[2, 3]");
  CHECK(type_of(f, "pi") == "i64[N]");
  CHECK(type_of(f, "mi") == "i32[N]");
  CHECK(type_of(f, "mh") == "f16[1, 3, 1]");
  CHECK(type_of(f, "v") == "f32[4]");
  CHECK(type_of(f, "m") == "f32[4]");
  const Op& s0 = f.ops[1];
  CHECK(s0.attrs.dims == std::vector<int64_t>{0, 1});  // sorted
  CHECK(f.ops[0].attrs.dims == std::vector<int64_t>{1});
  CHECK(f.ops.back().attrs.correction == 0);
}

TEST_CASE("shape ops: broadcast, expand, reshape, permute, squeeze, unsqueeze", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "x", "dtype": "f16", "shape": ["B", "S", 512]},
         {"name": "c", "dtype": "f32", "shape": ["S", 1]})",
      R"({"op": "reshape", "args": ["x"], "shape": ["B", "S", 8, -1], "out": "r"},
         {"op": "reshape", "args": ["x"], "shape": [-1, 64], "out": "r2"},
         {"op": "permute", "args": ["r"], "dims": [0, 2, -3, 3], "out": "p"},
         {"op": "broadcast_in_dim", "args": ["c"], "shape": ["B", "S", 7], "broadcast_dims": [1, 2], "out": "b"},
         {"op": "expand", "args": ["c"], "shape": [3, -1, 9], "out": "e"},
         {"op": "unsqueeze", "args": ["c"], "dim": -1, "out": "u"},
         {"op": "squeeze", "args": ["u"], "dims": [-1, 1], "out": "q"})",
      R"("p")"));
  CHECK(type_of(f, "r") == "f16[B, S, 8, 64]");
  CHECK(type_of(f, "r2") == "f16[B * S * 8, 64]");
  CHECK(type_of(f, "p") == "f16[B, 8, S, 64]");
  CHECK(f.ops[2].attrs.dims == std::vector<int64_t>{0, 2, 1, 3});
  CHECK(type_of(f, "b") == "f32[B, S, 7]");
  CHECK(type_of(f, "e") == "f32[3, S, 9]");
  CHECK(type_of(f, "u") == "f32[S, 1, 1]");
  CHECK(f.ops[5].attrs.dim == 2);
  CHECK(type_of(f, "q") == "f32[S]");
}

TEST_CASE("slice, pad and cat", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "q", "dtype": "bf16", "shape": ["S", 64]},
         {"name": "a", "dtype": "i32", "shape": ["S", 10]})",
      R"({"op": "slice", "args": ["q"], "starts": [0, 32], "ends": ["S", 64], "out": "hi"},
         {"op": "slice", "args": ["q"], "starts": [1, -10], "ends": [-1, 1000], "steps": [2, 3], "out": "st"},
         {"op": "slice", "args": ["q"], "starts": [0, 0], "ends": [5, 64], "out": "head"},
         {"op": "pad", "args": ["a"], "pads": [[0, 0], [2, -1]], "value": 7, "out": "pd"},
         {"op": "cat", "args": ["hi", "pd", "hi"], "dim": -1, "out": "ct"})",
      R"("ct")"));
  CHECK(type_of(f, "hi") == "bf16[S, 32]");
  // rows 1, 3, ... below S - 1; columns 54, 57, 60, 63
  CHECK(type_of(f, "st") == "bf16[ceildiv(S, 2) - 1, 4]");
  CHECK(f.ops[1].attrs.starts[1] == Expr(54));
  CHECK(f.ops[1].attrs.ends[1] == Expr(64));
  CHECK(type_of(f, "head") == "bf16[min(S, 5), 64]");
  CHECK(type_of(f, "pd") == "i32[S, 11]");
  CHECK(f.ops[3].attrs.value == Literal::of_int(7));
  CHECK(type_of(f, "ct") == "bf16[S, 75]");  // bf16 and i32 promote to bf16
  CHECK(f.ops[4].attrs.dim == 1);
}

TEST_CASE("creation and random ops", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "x", "dtype": "f32", "shape": ["N", 3]},
         {"name": "seed", "dtype": "i64"}, {"name": "offset", "dtype": "i64"})",
      R"({"op": "full", "shape": ["N", 3], "value": 1.5, "dtype": "bf16", "out": "c"},
         {"op": "iota", "length": "N", "dtype": "i64", "out": "r"},
         {"op": "iota", "length": 5, "start": 1, "step": 0.5, "dtype": "f32", "out": "r2"},
         {"op": "randn", "args": ["seed", "offset"], "shape": ["N", 3], "dtype": "f16", "out": "z"},
         {"op": "segment_set", "args": ["z"], "out": "zs"})",
      R"("c", "r", "zs")"));
  CHECK(type_of(f, "c") == "bf16[N, 3]");
  CHECK(type_of(f, "r") == "i64[N]");
  CHECK(f.ops[1].attrs.start == Literal::of_int(0));
  CHECK(f.ops[1].attrs.step == Literal::of_int(1));
  CHECK(type_of(f, "r2") == "f32[5]");
  CHECK(f.ops[2].attrs.step == Literal::of_float(0.5));
  CHECK(type_of(f, "z") == "f16[N, 3]");
  CHECK(type_of(f, "zs") == "f16[N, 3]");
}

TEST_CASE("aliases are recorded", "[parser]") {
  Fusion f = parse_text(graph(
      R"({"name": "p", "dtype": "f32", "shape": ["N"]}, {"name": "g", "dtype": "f32", "shape": ["N"]})",
      R"({"op": "sub", "args": ["p", "g"], "out": "p_new"})", R"("p_new")",
      R"("aliases": {"p_new": "p"}, )"));
  REQUIRE(f.aliases.size() == 1);
  CHECK(f.value(f.aliases[0].first).name == "p_new");
  CHECK(f.value(f.aliases[0].second).name == "p");
  CHECK(f.updated_value(*f.find_value("p")) == f.aliases[0].first);
  CHECK(f.updated_value(*f.find_value("g")) == *f.find_value("g"));
  // An input written in place may be listed as an output too: its updated value.
  Fusion g = parse_text(graph(
      R"({"name": "x", "dtype": "f32", "shape": ["N", 8]}, {"name": "acc", "dtype": "f32", "shape": ["N"]})",
      R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"})", R"("s", "acc", "x")",
      R"("aliases": {"s": "acc"}, )"));
  CHECK(g.outputs.size() == 3);
  CHECK(g.updated_value(g.outputs[1]) == g.outputs[0]);
  CHECK(g.updated_value(g.outputs[2]) == g.outputs[2]);
}

TEST_CASE("errors carry file, line, column, op and path", "[parser]") {
  std::string g =
      "{\"fuserc\": 1, \"name\": \"g\",\n"
      " \"inputs\": [{\"name\": \"x\", \"dtype\": \"f32\", \"shape\": [4]}],\n"
      " \"ops\": [{\"op\": \"add\", \"args\": [\"x\", \"zz\"], \"out\": \"y\"}],\n"
      " \"outputs\": [\"y\"]}";
  CHECK(parse_error(g) ==
        "t.json:3:38: op 0 'add' (out 'y') at $.ops[0].args[1]: unknown name 'zz'");
  CHECK(
      parse_error(graph(X, R"({"op": "sum", "args": ["x"], "dims": [2], "out": "s"})", R"("s")")) ==
      "t.json:1:136: op 0 'sum' (out 's') at $.ops[0].dims[0]: dimension 2 is out of range for a "
      "tensor of rank 2 (valid: -2 to 1)");
}

TEST_CASE("the IR listing shows every value", "[parser]") {
  Fusion f = parse_text(graph(X, R"({"op": "mul", "args": ["x", 2], "out": "y"})", R"("y")"));
  CHECK(f.to_text() ==
        "fusion g\n"
        "  symbol N in [1, 4611686018427387903] hint 1024\n"
        "  input x: f32[N, 4]\n"
        "  y: f32[N, 4] = mul(x, 2)\n"
        "  outputs y\n");
}
