// Matrix products (matmul, linear): typing and its refusals, eval against hand-computed values,
// the library step the compiler plans (sizes, strides, the batch folded into rows or kept as a
// strided batch and outer calls), and the emulator's product against eval for every layout:
// transposed, batched with broadcast, rank 1 on either side, a strided input, with constants
// and with kernels around it.
#include <catch2/catch.hpp>

#include "core/passes/presegmentation.h"
#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::string graph(const std::string& inputs, const std::string& ops, const std::string& outputs,
                  const std::string& symbols = "{}") {
  return R"({"fuserc": 1, "name": "mm", "symbols": )" + symbols + R"(, "inputs": [)" + inputs +
         R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
}

std::string input(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         extra + "}";
}

CompiledFusion compiled(const std::string& json) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  return compile_fusion(parse_text(json), o, ctx);
}

}  // namespace

TEST_CASE("matmul and linear: result shapes as PyTorch gives them", "[matmul]") {
  auto shape_of = [](const std::string& a, const std::string& b, const char* op = "matmul") {
    Fusion f = parse_text(graph(input("a", "f32", a) + ", " + input("b", "f32", b),
                                std::string(R"({"op": ")") + op +
                                    R"(", "args": ["a", "b"], "out": "c"})",
                                R"("c")", R"({"N": {}, "B": {}})"));
    return shape_to_string(f.value(*f.find_value("c")).shape);
  };
  CHECK(shape_of("[3, 4]", "[4, 5]") == "[3, 5]");
  CHECK(shape_of("[4]", "[4]") == "[]");
  CHECK(shape_of("[3, 4]", "[4]") == "[3]");
  CHECK(shape_of("[4]", "[4, 5]") == "[5]");
  CHECK(shape_of("[\"B\", 3, 4]", "[4, 5]") == "[B, 3, 5]");
  CHECK(shape_of("[\"B\", 1, 3, 4]", "[7, 4, 5]") == "[B, 7, 3, 5]");
  CHECK(shape_of("[\"N\", 4]", "[\"B\", 4, 2]") == "[B, N, 2]");
  CHECK(shape_of("[4]", "[\"B\", 4, 2]") == "[B, 2]");
  CHECK(shape_of("[\"B\", 3, 4]", "[4]") == "[B, 3]");
  CHECK(shape_of("[\"B\", \"N\", 16]", "[32, 16]", "linear") == "[B, N, 32]");
  CHECK(shape_of("[16]", "[32, 16]", "linear") == "[32]");
}

TEST_CASE("matmul and linear: bad operands are refused naming the op", "[matmul]") {
  auto bad = [](const std::string& inputs, const std::string& op) {
    return parse_error(graph(inputs, op, R"("c")", R"({"N": {}, "M": {}})"));
  };
  const std::string mm = R"({"op": "matmul", "args": ["a", "b"], "out": "c"})";
  CHECK(bad(input("a", "f32", "[\"N\", 64]") + ", " + input("b", "f32", "[32, 16]"), mm)
            .find("op 0 'matmul' (out 'c') at $.ops[0].args[1]: the inner extents of 'a' "
                  "(f32[N, 64]) and 'b' (f32[32, 16]) differ: 64 and 32") != std::string::npos);
  CHECK(bad(input("a", "f32", "[\"N\", \"M\"]") + ", " + input("b", "f32", "[\"N\", 4]"), mm)
            .find("differ: M and N (symbols must be the same expression)") != std::string::npos);
  CHECK(bad(input("a", "i32", "[4, 8]") + ", " + input("b", "i32", "[8, 2]"), mm)
            .find("'matmul' multiplies floating-point matrices; 'a' (i32[4, 8]) is not") !=
        std::string::npos);
  CHECK(bad(input("a", "f16", "[4, 8]") + ", " + input("b", "f32", "[8, 2]"), mm)
            .find("takes operands of one dtype") != std::string::npos);
  CHECK(bad(input("a", "f32", "[]") + ", " + input("b", "f32", "[8, 2]"), mm)
            .find("needs operands of rank 1 or more") != std::string::npos);
  CHECK(bad(input("a", "f32", "[3, 4, 8]") + ", " + input("b", "f32", "[5, 8, 2]"), mm)
            .find("do not broadcast: 3 and 5 in batch dimension 0") != std::string::npos);
  const std::string lin = R"({"op": "linear", "args": ["a", "b", "z"], "out": "c"})";
  CHECK(bad(input("a", "f32", "[4, 8]") + ", " + input("b", "f32", "[8]") + ", " +
                input("z", "f32", "[8]"),
            lin)
            .find("the weight of 'linear' is [out, in]") != std::string::npos);
  CHECK(bad(input("a", "f32", "[4, 8]") + ", " + input("b", "f32", "[3, 8]") + ", " +
                input("z", "f32", "[4]"),
            lin)
            .find("the bias of 'linear' is [out] = [3], got 'z' (f32[4])") != std::string::npos);
  CHECK(bad(input("a", "f32", "[4, 8]") + ", " + input("b", "f32", "[3, 7]") + ", " +
                input("z", "f32", "[3]"),
            lin)
            .find("takes inputs of 7 features, but 'a' (f32[4, 8]) has 8") != std::string::npos);
}

TEST_CASE("matmul and linear in eval: hand-computed values", "[matmul]") {
  Fusion f = parse_text(graph(input("a", "f32", "[2, 3]") + ", " + input("b", "f32", "[3, 2]") +
                                  ", " + input("w", "f32", "[2, 3]") + ", " +
                                  input("z", "f32", "[2]") + ", " + input("v", "f32", "[3]"),
                              R"({"op": "matmul", "args": ["a", "b"], "out": "c"},
                                 {"op": "linear", "args": ["a", "w", "z"], "out": "l"},
                                 {"op": "matmul", "args": ["v", "b"], "out": "vb"},
                                 {"op": "matmul", "args": ["a", "v"], "out": "av"})",
                              R"("c", "l", "vb", "av")"));
  TensorMap in;
  in.emplace("a", tensor<float>(DType::F32, {2, 3}, {1, 2, 3, 4, 5, 6}));
  in.emplace("b", tensor<float>(DType::F32, {3, 2}, {1, 0, 0, 1, 1, 1}));
  in.emplace("w", tensor<float>(DType::F32, {2, 3}, {1, 1, 1, 0, 1, 0}));
  in.emplace("z", tensor<float>(DType::F32, {2}, {10, 20}));
  in.emplace("v", tensor<float>(DType::F32, {3}, {1, -1, 2}));
  auto out = evaluate_fusion(f, in, "in");
  CHECK(as_doubles(out[0].second) == std::vector<double>{4, 5, 10, 11});
  CHECK(as_doubles(out[1].second) == std::vector<double>{16, 22, 25, 25});
  CHECK(as_doubles(out[2].second) == std::vector<double>{3, 1});
  CHECK(as_doubles(out[3].second) == std::vector<double>{5, 11});
}

TEST_CASE("the library step the compiler plans for each layout", "[matmul]") {
  // linear over [B, S, K]: the weight is shared, so the batch is more rows (M = B * S).
  CompiledFusion c = compiled(graph(input("x", "bf16", "[\"B\", \"S\", 64]") + ", " +
                                        input("w", "bf16", "[32, 64]"),
                                    R"({"op": "linear", "args": ["x", "w"], "out": "y"})",
                                    R"("y")", R"({"B": {}, "S": {}})"));
  REQUIRE(c.matmuls.size() == 1);
  REQUIRE(c.plan.size() == 1);
  CHECK(c.plan[0].library == 0);
  CHECK(c.kernels.empty());
  const MatmulCall& l = c.matmuls[0];
  CHECK(l.m.str() == "B * S");
  CHECK((l.n == Expr(32) && l.k == Expr(64) && l.batch == Expr(1) && l.outer == Expr(1)));
  // w [32, 64] read transposed: B(l, j) = w[j][l] is column-major.
  CHECK((l.b.row_stride == Expr(1) && l.b.col_stride == Expr(64)));
  CHECK((l.a.row_stride == Expr(64) && l.a.col_stride == Expr(1)));

  // Attention scores: q [B, H, L, E] @ kT [B, H, E, L]: a strided batch of B * H.
  c = compiled(graph(input("q", "f16", "[\"B\", 4, \"L\", 16]") + ", " +
                         input("k", "f16", "[\"B\", 4, 16, \"L\"]"),
                     R"({"op": "matmul", "args": ["q", "k"], "out": "s"})", R"("s")",
                     R"({"B": {}, "L": {}})"));
  const MatmulCall& s = c.matmuls[0];
  CHECK(s.batch.str() == "B * 4");
  CHECK(s.outer == Expr(1));
  CHECK(s.a.batch_stride.str() == "L * 16");

  // A batch broadcast over one of two dimensions: a strided batch and outer calls.
  c = compiled(graph(input("a", "f32", "[\"B\", 3, 5, 8]") + ", " +
                         input("b", "f32", "[\"B\", 1, 8, 2]"),
                     R"({"op": "matmul", "args": ["a", "b"], "out": "c"})", R"("c")",
                     R"({"B": {}})"));
  const MatmulCall& g = c.matmuls[0];
  CHECK((g.batch == Expr(3) && g.b.batch_stride == Expr(0)));
  CHECK(g.outer.str() == "B");
  CHECK((g.a.outer_stride == Expr(120) && g.b.outer_stride == Expr(16)));
}

TEST_CASE("the epilogue takes the casts the library writes, and no others", "[matmul]") {
  // relu then a cast: into the epilogue where cuBLASLt writes that dtype for these operands
  // (f16/bf16 products as f32), a kernel after the product where it does not (an f32 product
  // as f16, an f64 product as f32: cuBLASLt has no such algorithm).
  struct Case {
    const char* operands;
    const char* result;
    bool folded;
  };
  for (const Case& k : {Case{"bf16", "f32", true}, Case{"f16", "f32", true},
                        Case{"bf16", "f16", false}, Case{"f32", "f16", false},
                        Case{"f64", "f32", false}}) {
    INFO(k.operands << " product cast to " << k.result);
    CompiledFusion c = compiled(graph(
        input("a", k.operands, "[\"N\", 8]") + ", " + input("b", k.operands, "[8, 6]"),
        std::string(R"({"op": "matmul", "args": ["a", "b"], "out": "p"},
                       {"op": "relu", "args": ["p"], "out": "r"},
                       {"op": "cast", "args": ["r"], "out": "y", "dtype": ")") +
            k.result + R"("})",
        R"("y")", R"({"N": {}})"));
    REQUIRE(c.matmuls.size() == 1);
    CHECK(c.matmuls[0].epilogue == MatmulEpilogueKind::Relu);
    CHECK((c.matmuls[0].c.dtype == *parse_dtype(k.result)) == k.folded);
    CHECK(c.plan.size() == (k.folded ? 1u : 2u));  // the library step, then a kernel or none
  }
}

TEST_CASE("the epilogue adds a bias vector after a product, and nothing it cannot add",
          "[matmul]") {
  // x @ w + b (b added on either side) and linear(x, w) + b: one library step that adds b as it
  // writes, then applies the relu after it; a matmul becomes the linear of w's transpose, read
  // in place (B is w as it lies, row-major).
  auto product = [](const std::string& bias_dtype, const std::string& bias_shape,
                    const std::string& ops, const std::string& extra = "") {
    return compiled(graph(input("x", "f16", "[\"N\", 8]") + ", " +
                              input("w", "f16", "[8, 6]") + ", " +
                              input("v", "f16", "[6, 8]") + ", " +
                              input("b", bias_dtype, bias_shape, extra),
                          ops, R"("y")", R"({"N": {}})"));
  };
  for (const char* add : {R"({"op": "add", "args": ["p", "b"], "out": "q"})",
                          R"({"op": "add", "args": ["b", "p"], "out": "q"})"}) {
    CompiledFusion c =
        product("f16", "[6]", std::string(R"({"op": "matmul", "args": ["x", "w"], "out": "p"},)") +
                                  add + R"(, {"op": "relu", "args": ["q"], "out": "y"})");
    REQUIRE(c.matmuls.size() == 1);
    CHECK(c.plan.size() == 1);
    const MatmulCall& m = c.matmuls[0];
    CHECK(m.bias.value == *c.fusion.find_value("b"));
    CHECK(m.epilogue == MatmulEpilogueKind::Relu);
    CHECK((m.b.value == *c.fusion.find_value("w") && m.b.row_stride == Expr(6) &&
           m.b.col_stride == Expr(1)));
  }
  CompiledFusion l = product("f16", "[6]",
                             R"({"op": "linear", "args": ["x", "v"], "out": "p"},
                                {"op": "add", "args": ["p", "b"], "out": "y"})");
  CHECK((l.plan.size() == 1 && l.matmuls[0].bias.value == *l.fusion.find_value("b")));
  // A bias, then a cast to f32: cuBLASLt reads the bias in the dtype it writes (it has no
  // algorithm for an f16 bias with an f32 result), so the product keeps f16 and a kernel casts;
  // the same for linear's own bias.
  for (const char* first : {R"({"op": "matmul", "args": ["x", "w"], "out": "p0"},
                              {"op": "add", "args": ["p0", "b"], "out": "p"},)",
                            R"({"op": "linear", "args": ["x", "v", "b"], "out": "p"},)"}) {
    INFO(first);
    CompiledFusion c = product("f16", "[6]", std::string(first) +
                                                 R"({"op": "cast", "args": ["p"], "out": "y",
                                                     "dtype": "f32"})");
    REQUIRE(c.matmuls.size() == 1);
    CHECK(c.matmuls[0].bias.value == *c.fusion.find_value("b"));
    CHECK(c.matmuls[0].c.dtype == DType::F16);
    CHECK(c.plan.size() == 2);
  }

  // Left to a kernel after the product: a bias of another dtype, of rank 2, read with a stride,
  // added after the activation, or to a batch of right operands.
  struct Refused {
    const char* why;
    std::string dtype, shape, extra, ops;
  };
  const std::string mm = R"({"op": "matmul", "args": ["x", "w"], "out": "p"},)";
  for (const Refused& k :
       {Refused{"another dtype", "f32", "[6]", "", mm + R"({"op": "add", "args": ["p", "b"], "out": "y"})"},
        Refused{"rank 2", "f16", "[1, 6]", "", mm + R"({"op": "add", "args": ["p", "b"], "out": "y"})"},
        Refused{"strided", "f16", "[6]", R"(, "strides": [2])",
                mm + R"({"op": "add", "args": ["p", "b"], "out": "y"})"},
        Refused{"after relu", "f16", "[6]", "",
                mm + R"({"op": "relu", "args": ["p"], "out": "r"},
                        {"op": "add", "args": ["r", "b"], "out": "y"})"}}) {
    INFO(k.why);
    CompiledFusion c = product(k.dtype, k.shape, k.ops, k.extra);
    REQUIRE(c.matmuls.size() == 1);
    CHECK(c.matmuls[0].bias.value == kNoValue);
    CHECK(c.plan.size() == 2);
  }
  CompiledFusion batched = compiled(graph(
      input("x", "f32", "[3, 4, 8]") + ", " + input("w", "f32", "[3, 8, 6]") + ", " +
          input("b", "f32", "[6]"),
      R"({"op": "matmul", "args": ["x", "w"], "out": "p"},
         {"op": "add", "args": ["p", "b"], "out": "y"})",
      R"("y")"));
  CHECK((batched.matmuls[0].bias.value == kNoValue && batched.plan.size() == 2));

  // A bias is a row of C as the library lays it out: a linear with a bias whose result is
  // transposed writes C row-major and a kernel transposes it (cuBLASLt refuses a bias with a
  // column-major C); without a bias the library writes the transpose itself.
  for (bool with_bias : {true, false}) {
    INFO("bias " << with_bias);
    CompiledFusion c = compiled(graph(
        input("x", "f32", "[\"N\", 8]") + ", " + input("v", "f32", "[6, 8]") + ", " +
            input("b", "f32", "[6]"),
        std::string(R"({"op": "linear", "args": ["x", "v")") + (with_bias ? R"(, "b")" : "") +
            R"(], "out": "p"}, {"op": "permute", "args": ["p"], "dims": [1, 0], "out": "y"})",
        R"("y")", R"({"N": {}})"));
    REQUIRE(c.matmuls.size() == 1);
    CHECK(c.matmuls[0].c.col_stride.str() == (with_bias ? "1" : "N"));
    CHECK(c.plan.size() == (with_bias ? 2u : 1u));
  }
  // cuBLASLt reads a bias as a packed row: an input bias with a stride is copied first.
  CompiledFusion strided = compiled(graph(
      input("x", "f32", "[\"N\", 8]") + ", " + input("v", "f32", "[6, 8]") + ", " +
          input("b", "f32", "[6]", R"(, "strides": [2])"),
      R"({"op": "linear", "args": ["x", "v", "b"], "out": "y"})", R"("y")", R"({"N": {}})"));
  REQUIRE(strided.matmuls.size() == 1);
  CHECK(strided.plan.size() == 2);
  const MatmulLayout& bias = strided.matmuls[0].bias;
  CHECK((bias.value != *strided.fusion.find_value("b") && bias.col_stride == Expr(1)));
}

TEST_CASE("library steps in the emulator match eval for every layout", "[matmul][emulated]") {
  const std::string syms = R"({"B": {"hint": 2, "max": 9}, "N": {"hint": 5, "max": 70}})";
  auto run = [&](const std::string& inputs, const std::string& ops, const std::string& outputs) {
    check_graph(graph(inputs, ops, outputs, syms), {{{"B", 1}, {"N", 1}}, {{"B", 3}, {"N", 37}}},
                {false, false});
  };
  // Plain, with a bias and the kernels around it.
  run(input("x", "bf16", "[\"N\", 24]") + ", " + input("w", "bf16", "[40, 24]") + ", " +
          input("b", "bf16", "[40]"),
      R"({"op": "linear", "args": ["x", "w", "b"], "out": "h"},
         {"op": "gelu", "args": ["h"], "approximate": "tanh", "out": "g"},
         {"op": "add", "args": ["g", 1.0], "out": "y"})",
      R"("y", "h")");
  // Transposed operands (a permute feeding the product), f32 and f64.
  for (const char* dt : {"f32", "f64"})
    run(input("a", dt, "[24, \"N\"]") + ", " + input("b", dt, "[24, 7]"),
        R"({"op": "permute", "args": ["a"], "dims": [1, 0], "out": "at"},
           {"op": "matmul", "args": ["at", "b"], "out": "c"})",
        R"("c")");
  // Batched, broadcast over one batch dimension; rank 1 on either side.
  run(input("a", "f16", "[\"B\", 3, \"N\", 8]") + ", " + input("b", "f16", "[\"B\", 1, 8, 6]") +
          ", " + input("v", "f16", "[8]") + ", " + input("u", "f16", "[\"N\"]"),
      R"({"op": "matmul", "args": ["a", "b"], "out": "c"},
         {"op": "matmul", "args": ["a", "v"], "out": "av"},
         {"op": "matmul", "args": ["u", "a"], "out": "ua"})",
      R"("c", "av", "ua")");
  // A strided input read as it lies (column-major), and a constant weight.
  run(input("a", "f32", "[\"N\", 5]", R"(, "strides": [1, "N"])") + ", " +
          input("w", "f32", "[3, 5]", R"(, "data": [1, 2, 3, 4, 5, -1, -2, -3, -4, -5, 0.5, 0, 0, 0, 2])"),
      R"({"op": "linear", "args": ["a", "w"], "out": "y"})", R"("y")");
}

namespace {

// eval of the graph after the presegmentation passes (views absorbed into the products) equals
// eval of the graph as written.
void check_passes_keep_values(const std::string& json, const std::map<std::string, int64_t>& at) {
  Fusion f = parse_text(json);
  Fusion passed = f;
  PassContext ctx;
  run_presegmentation_passes(passed, ctx);
  auto symbols = choose_symbol_values(f, at);
  TensorMap inputs = make_random_inputs(f, symbols, 5);
  auto want = evaluate_fusion(f, inputs, "inputs");
  auto got = evaluate_fusion(passed, inputs, "inputs");
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << want[i].first);
    CHECK(compare_tensors(got[i].second, want[i].second) == "");
  }
}

}  // namespace

TEST_CASE("views of an operand are read in place, through strides", "[matmul]") {
  const std::string syms = R"({"B": {"hint": 2, "max": 9}, "L": {"hint": 5, "max": 70}})";
  // Attention scores with K split into heads and transposed: reshape then permute, no kernel.
  const std::string scores =
      graph(input("q", "f16", "[\"B\", 4, \"L\", 16]") + ", " +
                input("k", "f16", "[\"B\", \"L\", 64]"),
            R"({"op": "reshape", "args": ["k"], "shape": ["B", "L", 4, 16], "out": "kh"},
               {"op": "permute", "args": ["kh"], "dims": [0, 2, 3, 1], "out": "kt"},
               {"op": "matmul", "args": ["q", "kt"], "out": "s"})",
            R"("s")", syms);
  CompiledFusion c = compiled(scores);
  CHECK(c.kernels.empty());
  REQUIRE(c.matmuls.size() == 1);
  const MatmulCall& s = c.matmuls[0];
  CHECK(s.comment == "s = matmul(q, reshape permute of k)");
  CHECK((s.b.row_stride == Expr(1) && s.b.col_stride == Expr(64)));  // K-major: transposed
  CHECK((s.batch == Expr(4) && s.b.batch_stride == Expr(16)));       // the heads
  CHECK((s.outer.str() == "B" && s.b.outer_stride.str() == "L * 64"));

  // A weight broadcast over the batch by expand: the batch becomes rows of one product.
  const std::string shared_weight =
      graph(input("a", "f32", "[\"B\", \"L\", 8]") + ", " + input("w", "f32", "[8, 6]"),
            R"({"op": "expand", "args": ["w"], "shape": ["B", 8, 6], "out": "wb"},
               {"op": "matmul", "args": ["a", "wb"], "out": "c"})",
            R"("c")", syms);
  c = compiled(shared_weight);
  CHECK(c.kernels.empty());
  CHECK(c.matmuls[0].m.str() == "B * L");
  CHECK(c.matmuls[0].b.batch_stride == Expr(0));

  // A merge of dimensions that do not lie one after another: the permute is copied by a
  // kernel, the reshape of its result read in place, and the step says so.
  const std::string merged =
      graph(input("x", "f32", "[4, \"B\", 8]") + ", " + input("w", "f32", "[32, 5]"),
            R"({"op": "permute", "args": ["x"], "dims": [1, 0, 2], "out": "xp"},
               {"op": "reshape", "args": ["xp"], "shape": ["B", 32], "out": "xr"},
               {"op": "matmul", "args": ["xr", "w"], "out": "c"})",
            R"("c")", syms);
  c = compiled(merged);
  CHECK(c.kernels.size() == 1);
  CHECK(c.matmuls[0].comment ==
        "c = matmul(reshape of xp [xp: a permute no strides express, copied by a kernel], w)");

  // A permute leaving no unit stride in the matrix (x [B, 4, 6] as [6, B, 4]: its matrix
  // [B, 4] has strides 24 and 6): the library cannot read it in place; a kernel copies it.
  const std::string not_readable =
      graph(input("x", "f32", "[\"B\", 4, 6]") + ", " + input("w", "f32", "[4, 3]"),
            R"({"op": "permute", "args": ["x"], "dims": [2, 0, 1], "out": "xp"},
               {"op": "matmul", "args": ["xp", "w"], "out": "c"})",
            R"("c")", syms);
  c = compiled(not_readable);
  CHECK(c.kernels.size() == 1);
  CHECK(c.matmuls[0].comment ==
        "c = matmul(xp [xp: a permute no strides express, copied by a kernel], w)");

  // Attention as GPT-2 writes it: Q and V sliced out of one QKV tensor, split into heads, and
  // the heads merged back by a permute of the product: no kernel at all.
  const std::string heads =
      graph(input("qkv", "bf16", "[\"B\", \"L\", 48]") + ", " +
                input("p", "bf16", "[\"B\", 2, \"L\", \"L\"]"),
            R"({"op": "slice", "args": ["qkv"], "starts": [0, 0, 32], "ends": ["B", "L", 48],
                "out": "v0"},
               {"op": "reshape", "args": ["v0"], "shape": ["B", "L", 2, 8], "out": "v1"},
               {"op": "permute", "args": ["v1"], "dims": [0, 2, 1, 3], "out": "v"},
               {"op": "matmul", "args": ["p", "v"], "out": "o"},
               {"op": "permute", "args": ["o"], "dims": [0, 2, 1, 3], "out": "o1"})",
            R"("o1")", syms);
  c = compiled(heads);
  CHECK(c.kernels.empty());
  const MatmulCall& h = c.matmuls[0];
  CHECK(h.comment == "o1 = permute of matmul(p, slice reshape permute of qkv)");
  CHECK(h.b.offset == Expr(32));
  CHECK((h.b.row_stride == Expr(48) && h.b.batch_stride == Expr(8)));
  CHECK((h.c.row_stride == Expr(16) && h.c.col_stride == Expr(1) && h.c.batch_stride == Expr(8)));
  // A slice with a step over the matrix's columns leaves no unit stride: copied.
  const std::string stepped =
      graph(input("x", "f32", "[\"L\", 12]") + ", " + input("w", "f32", "[6, 3]"),
            R"({"op": "slice", "args": ["x"], "starts": [0, 1], "ends": ["L", 12], "steps": [1, 2],
                "out": "xs"},
               {"op": "matmul", "args": ["xs", "w"], "out": "c"})",
            R"("c")", syms);
  c = compiled(stepped);
  CHECK(c.kernels.size() == 1);

  for (const std::string& g : {scores, shared_weight, merged, not_readable, heads, stepped}) {
    check_passes_keep_values(g, {{"B", 3}, {"L", 7}});
    check_graph(g, {{{"B", 1}, {"L", 1}}, {{"B", 3}, {"L", 37}}}, {false, false});
  }
}

TEST_CASE("a residual around a product: the kernel before it and the add after it stay apart",
          "[matmul][emulated]") {
  // r feeds the product and the add after it: one kernel holding both would wait for itself.
  // Twice over, as in a stack of residual blocks, and with work beside the add that may join it.
  const std::string syms = R"({"N": {"hint": 64, "max": 4096}})";
  const std::string g = graph(
      input("x", "f32", R"(["N", 16])") + ", " + input("w", "f32", "[16, 16]") + ", " +
          input("v", "f32", "[16, 16]"),
      R"({"op": "relu", "args": ["x"], "out": "r"},
         {"op": "matmul", "args": ["r", "w"], "out": "m"},
         {"op": "add", "args": ["m", "r"], "out": "s"},
         {"op": "relu", "args": ["s"], "out": "r2"},
         {"op": "matmul", "args": ["r2", "v"], "out": "m2"},
         {"op": "mul", "args": ["x", 0.5], "out": "h"},
         {"op": "add", "args": ["m2", "r2"], "out": "s2"},
         {"op": "add", "args": ["s2", "h"], "out": "y"})",
      R"("y")", syms);
  CompiledFusion c = compiled(g);
  CHECK(c.matmuls.size() == 2);
  CHECK(c.kernels.size() == 3);  // r | m | s, r2 | m2 | s2, y (h joins one of them)
  check_graph(g, {{{"N", 1}}, {{"N", 37}}}, {false, false});

  // A block with a projection, as in a ResNet: the projection's scale (one product deep) and
  // the add after the long path (two products deep) are cut apart with the region, then merged
  // back, since no path leads from one to the other through a product.
  const std::string block = graph(
      input("x", "f32", R"(["N", 16])") + ", " + input("w", "f32", "[16, 16]") + ", " +
          input("v", "f32", "[16, 16]") + ", " + input("u", "f32", "[16, 16]"),
      R"({"op": "relu", "args": ["x"], "out": "r"},
         {"op": "matmul", "args": ["r", "w"], "out": "p"},
         {"op": "matmul", "args": ["p", "v"], "out": "q"},
         {"op": "matmul", "args": ["r", "u"], "out": "d"},
         {"op": "mul", "args": ["d", 2.0], "out": "e"},
         {"op": "add", "args": ["q", "e"], "out": "s"},
         {"op": "relu", "args": ["s"], "out": "t"},
         {"op": "matmul", "args": ["t", "w"], "out": "p2"},
         {"op": "add", "args": ["p2", "t"], "out": "y"})",
      R"("y")", syms);
  CompiledFusion cb = compiled(block);
  CHECK(cb.matmuls.size() == 4);
  CHECK(cb.kernels.size() == 3);  // r | e, s, t | y
  check_graph(block, {{{"N", 1}}, {{"N", 37}}}, {false, false});
}

TEST_CASE("a product written in place into what it reads, or through strides, writes a copy",
          "[matmul]") {
  // The library reads its operands whole while it writes its result whole, and writes it
  // row-major: into x it reads, or into a column-major z, it writes a new value that a kernel
  // then copies (tests/graphs/library_* check the values in the emulator); into a dense z it
  // reads nothing of, it writes z directly.
  auto plan_of = [&](const std::string& z_extra, const std::string& into) {
    std::string json = graph(input("w", "f32", "[\"N\", \"N\"]") + ", " +
                                 input("x", "f32", "[\"N\", 1]") + ", " +
                                 input("z", "f32", "[\"N\", 1]", z_extra),
                             R"({"op": "matmul", "args": ["w", "x"], "out": "y"})", R"("y")",
                             R"({"N": {}})");
    json.insert(json.size() - 1, R"(, "aliases": {"y": ")" + into + R"("})");
    return compiled(json).plan.size();
  };
  CHECK(plan_of("", "z") == 1u);                          // the product writes z
  CHECK(plan_of("", "x") == 2u);                          // x is an operand: a copy
  CHECK(plan_of(R"(, "strides": [1, "N"])", "z") == 1u);  // a column of one: dense anyway
  CHECK(plan_of(R"(, "strides": [2, 1])", "z") == 2u);    // padded rows: a copy
}
