// Extent expressions ("B*197", "S+1", "(N+63)//64*64"): the parser, the canonical form that
// makes equal polynomials equal extents, the refusal of expressions that can be negative, how
// the compiler plans to bind each symbol, and the binding itself in eval, in generated kernels
// (the emulator) and at every runtime entry point.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "core/expr/expr_parse.h"
#include "core/frontend/symbol_binding.h"
#include "emulated_check.h"
#include "fuserc_runtime.h"
#include "runtime/api/package.h"
#include "runtime/api/plan.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

const Expr kB = Expr::symbol("B", 1, 1024);
const Expr kH = Expr::symbol("H", 1, 512);
const Expr kS = Expr::symbol("S", 1, 100);

Expr parse(const std::string& text) {
  ExprParseError e;
  auto x = parse_extent_expr(
      text,
      [](const std::string& n) -> std::optional<Expr> {
        if (n == "B") return kB;
        if (n == "H") return kH;
        if (n == "S") return kS;
        return std::nullopt;
      },
      &e);
  if (!x) FAIL("'" << text << "': " << e.message);
  return *x;
}

// "offset: message" of a refused expression.
std::string refusal(const std::string& text) {
  ExprParseError e;
  auto x = parse_extent_expr(
      text,
      [](const std::string& n) -> std::optional<Expr> {
        if (n == "S") return kS;
        return std::nullopt;
      },
      &e);
  if (x) return "<accepted>";
  return std::to_string(e.offset) + ": " + e.message;
}

int64_t at(const Expr& e, int64_t b, int64_t h = 1, int64_t s = 1) {
  return evaluate(e, [&](const std::string& n) -> std::optional<int64_t> {
    return n == "B" ? b : n == "H" ? h : s;
  });
}

}  // namespace

TEST_CASE("extent expressions parse to canonical polynomials", "[extent]") {
  CHECK(parse("B*197") == parse("197*B"));
  CHECK(parse("B * 197") == kB * Expr(197));
  CHECK(parse("(H-1)*2+2") == parse("2*H"));
  CHECK(parse("S+1") == kS + Expr(1));
  CHECK(parse("-S+2*S") == kS);
  CHECK(parse("2+3*S") == parse("3*S+2"));
  CHECK(parse("((B))") == kB);
  // Floor division and modulo, by the contract's floor semantics.
  Expr up = parse("(B+63)//64*64");
  CHECK(at(up, 1) == 64);
  CHECK(at(up, 64) == 64);
  CHECK(at(up, 65) == 128);
  CHECK(at(parse("(B-1)%4"), 6) == 1);
  CHECK(at(parse("B*H - B"), 3, 5) == 12);
  // `//` and `%` terms are compared by their own canonical operands: these two always agree
  // but are different extents (the contract says so).
  CHECK(at(parse("(H+1)//2"), 1, 7) == at(parse("(H-1)//2+1"), 1, 7));
}

TEST_CASE("malformed extent expressions are refused at the offending byte", "[extent]") {
  CHECK(refusal("S*") == "2: expected a number, a symbol or '(' at the end");
  CHECK(refusal("S/2") == "1: '/' is not an extent operator: floor division is '//'");
  CHECK(refusal("S*x") == "2: unknown symbol 'x'");
  CHECK(refusal("((S)") == "0: this '(' is not closed");
  CHECK(refusal("S)") == "1: unbalanced ')'");
  CHECK(refusal("S 2") == "2: expected an operator (+ - * // %) before '2'");
  CHECK(refusal("3.5") == "1: unexpected '.' after the number 3 (extents are integers)");
  CHECK(refusal("2S") == "1: unexpected 'S' after the number 2 (write '*' to multiply)");
  CHECK(refusal("S^2") == "1: unexpected '^' (an extent expression has integers, symbols, + - * "
                          "// % and parentheses)");
  CHECK(refusal("") == "0: empty expression");
  CHECK(refusal("S // (S-1)") ==
        "5: floor division by '(S-1)', which can be 0");  // S may be 1
  CHECK(refusal("S % 0") == "4: modulo by '0', which can be 0");
  CHECK(refusal("S // 2") == "<accepted>");
  CHECK(refusal("S // -2") == "<accepted>");  // never 0 (the result may still be checked)
  CHECK(refusal("9999999999999999999") == "0: integer is not below 2^62");
  CHECK(refusal("4611686018427387903*4611686018427387903").find(
            "size arithmetic overflows 64-bit integers") != std::string::npos);
  std::string deep = std::string(70, '(') + "S" + std::string(70, ')');
  CHECK(refusal(deep).find("nested too deeply") != std::string::npos);
  std::string minus(70, '-');
  CHECK(refusal(minus + "S").find("nested too deeply") != std::string::npos);
  CHECK(refusal(std::string(5000, 'S')).find("the limit is 4096") != std::string::npos);
}

TEST_CASE("an extent that can be negative is found, with a binding that shows it", "[extent]") {
  std::string w;
  CHECK(can_be_negative(parse("S-5"), &w));
  CHECK(w == "S = 1 gives -4");
  CHECK_FALSE(can_be_negative(parse("S-1")));
  // Summing the terms' intervals apart says S*S - S >= 1 - 100; its shared factor bounds it as
  // S * (S - 1) >= 0, as does the proof over S = 1 + t (t*t + t >= 0).
  CHECK(parse("S*S-S").lo() == 0);
  CHECK_FALSE(can_be_negative(parse("S*S-S")));
  CHECK(parse("B*H-B").lo() == 0);
  CHECK_FALSE(can_be_negative(parse("B*H-B")));
  CHECK(can_be_negative(parse("H-B"), &w));
  CHECK(w == "B = 1024, H = 1 gives -1023");
  CHECK_FALSE(can_be_negative(parse("(S-1)//2")));
  // A term and its own floor division move together: S - S//2 is (S + S%2)/2, in [1, 50];
  // 2*((S+1)//2) - S is 1 - (S+1)%2 + ..., in [0, 1]; 3*(S//3) - S is -(S%3), in [-2, 0].
  // (Summing the terms' intervals apart gave S - S//2 >= 1 - 50.)
  CHECK(parse("S-S//2").lo() == 1);
  CHECK(parse("S-S//2").hi() == 50);
  CHECK_FALSE(can_be_negative(parse("S-(S//2)")));
  CHECK(parse("2*((S+1)//2)-S").lo() == 0);
  CHECK(parse("2*((S+1)//2)-S").hi() == 1);
  CHECK(parse("3*(S//3)-S").lo() == -2);
  CHECK(parse("3*(S//3)-S").hi() == 0);
  CHECK(can_be_negative(parse("3*(S//3)-S")));
  CHECK(parse("H+S-S//2").lo() == 2);  // other terms keep their own bounds
}

TEST_CASE("the compiler plans how every symbol is bound", "[extent]") {
  // linear_in: the extent as k * S + c in one symbol.
  auto kc = linear_in(parse("B*197"), "B");
  REQUIRE(kc);
  CHECK((kc->first == Expr(197) && kc->second == Expr(0)));
  kc = linear_in(parse("2*S+2"), "S");
  REQUIRE(kc);
  CHECK((kc->first == Expr(2) && kc->second == Expr(2)));
  kc = linear_in(parse("B*S+H"), "S");
  REQUIRE(kc);
  CHECK((kc->first == kB && kc->second == kH));
  CHECK_FALSE(linear_in(parse("S*S"), "S"));
  CHECK_FALSE(linear_in(parse("(S+1)//2"), "S"));

  // Plain extents first, then scalar inputs, then solved (in rounds: T needs B).
  Fusion f = parse_text(R"({"fuserc": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["B*T", "S+1"]},
               {"name": "y", "dtype": "f32", "shape": ["B", "2*U+2"]},
               {"name": "k", "dtype": "i32", "symbol": "S"}],
    "ops": [{"op": "sum", "args": ["x"], "dims": [0, 1], "out": "s"}],
    "outputs": ["s", "y"]})");
  std::vector<std::string> plan;
  for (const auto& s : f.bind_steps) {
    const char* kind = s.kind == SymbolBindStep::Kind::Extent   ? "extent"
                       : s.kind == SymbolBindStep::Kind::Scalar ? "scalar"
                                                                : "solve";
    plan.push_back(s.symbol + " " + kind + " " + std::to_string(s.input) + ":" +
                   std::to_string(s.dim));
  }
  CHECK(plan == std::vector<std::string>{"B extent 1:0", "S scalar 2:-1", "T solve 0:0",
                                          "U solve 1:1"});
  // The scalar sets S; S+1 is then only checked.
  CHECK(f.value(f.inputs[2]).sets_symbol == "S");
}

TEST_CASE("extent expressions in the graph: what is refused, and where", "[extent]") {
  auto graph = [](const std::string& inputs, const std::string& ops) {
    return R"({"fuserc": 1, "name": "g", "symbols": {"S": {"max": 100}, "N": {"max": 64}},
      "inputs": [)" + inputs + R"(], "ops": [)" + ops + R"(], "outputs": ["y"]})";
  };
  const std::string x = R"({"name": "x", "dtype": "f32", "shape": ["S"]})";
  CHECK(parse_error(graph(x, R"({"op": "full", "args": [], "out": "y", "shape": ["S-5", 4],
                                  "value": 0, "dtype": "f32"})")) ==
        "t.json:2:123: op 0 'full' (out 'y') at $.ops[0].shape[0]: extent 'S-5' can be negative "
        "(S = 1 gives -4); an extent expression must be at least 0 for every binding");
  // The column points at the bad byte inside the string.
  CHECK(parse_error(graph(x, R"({"op": "full", "args": [], "out": "y", "shape": ["S*Q"],
                                  "value": 0, "dtype": "f32"})")) ==
        "t.json:2:126: op 0 'full' (out 'y') at $.ops[0].shape[0]: extent 'S*Q': unknown symbol "
        "'Q'");
  // A symbol of an op attribute must be bound by the inputs.
  CHECK(parse_error(graph(x, R"({"op": "full", "args": [], "out": "y", "shape": ["N*2"],
                                  "value": 0, "dtype": "f32"})"))
            .find("unknown symbol 'N' (declared, but bound by no input)") != std::string::npos);
  // An input extent no rule can solve.
  CHECK(parse_error(graph(R"({"name": "y", "dtype": "f32", "shape": ["S*S"]})", "")) ==
        "t.json:2:58: $.inputs[0].shape[0]: symbol 'S' is bound by nothing: input 'y' dimension "
        "0 is S * S, which cannot be solved for it, and no input extent is the symbol itself, "
        "k*S+c, or a scalar input with \"symbol\"");
  // A scalar that sets a symbol is an integer scalar.
  CHECK(parse_error(graph(x + R"(, {"name": "k", "dtype": "f32", "symbol": "N"})",
                          R"({"op": "neg", "args": ["x"], "out": "y"})")) ==
        "t.json:2:88: $.inputs[1].dtype: scalar input 'k' sets a symbol, so it must be i32 or "
        "i64 (a size is an integer), got f32");
  CHECK(parse_error(graph(R"({"name": "k", "dtype": "i64", "shape": [2], "symbol": "N"})",
                          R"({"op": "neg", "args": ["k"], "out": "y"})"))
            .find("only a scalar input (no shape) can set a symbol") != std::string::npos);
  // A size literal is an extent: never negative.
  CHECK(parse_error(graph(x, R"({"op": "mul", "args": ["x", {"size": "S-2"}], "out": "y"})"))
            .find("size 'S-2' can be negative (S = 1 gives -1)") != std::string::npos);
}

namespace {

// Every op attribute that takes an extent, with expressions, and a size literal.
const char* kExprGraph = R"({"fuserc": 1, "name": "exprs",
 "symbols": {"B": {"hint": 3, "max": 64}, "T": {"hint": 5, "max": 64}},
 "inputs": [
  {"name": "x", "dtype": "f32", "shape": ["B*6", 8]},
  {"name": "p", "dtype": "f32", "shape": ["T+1", 4]},
  {"name": "c", "dtype": "f16", "shape": ["B", 2, "T", 3], "strides": ["2*T*3", 1, 6, 2]}],
 "ops": [
  {"op": "reshape", "args": ["x"], "shape": ["B", 6, 8], "out": "x3"},
  {"op": "slice", "args": ["x3"], "starts": [0, "1", 0], "ends": ["B", "6-1", 8],
   "steps": [1, 2, 1], "out": "xs"},
  {"op": "pad", "args": ["p"], "pads": [["T//2", 1], [0, "T%3"]], "value": 2, "out": "pp"},
  {"op": "iota", "args": [], "length": "T*2+1", "dtype": "f32", "out": "io"},
  {"op": "mul", "args": ["io", {"size": "B*T-1"}], "out": "ios"},
  {"op": "full", "args": [], "shape": ["B", "T"], "value": {"size": "T*T"}, "dtype": "i32",
   "out": "fu"},
  {"op": "sum", "args": ["c"], "dims": [1, 3], "dtype": "f32", "out": "cs"},
  {"op": "div", "args": ["cs", {"size": "2*3"}], "out": "cm"}],
 "outputs": ["xs", "pp", "ios", "fu", "cm"]})";

}  // namespace

TEST_CASE("extent expressions and size literals: eval and generated kernels agree",
          "[extent][emulated]") {
  Fusion f = parse_text(kExprGraph);
  CHECK(shape_to_string(f.value(*f.find_value("pp")).shape) ==
        "[T + T / 2 + 2, T % 3 + 4]");
  // A size of integers only is a plain literal; the others are the graph's size literals.
  CHECK(f.size_literals().size() == 2);
  check_graph(kExprGraph, {{{"B", 1}, {"T", 1}}, {{"B", 3}, {"T", 5}}, {{"B", 7}, {"T", 11}}});
  // The kernels take the size literals as arguments.
  bool found = false;
  for (const auto& k : kernel_sources(kExprGraph))
    found = found || k.find("long long fz_size0") != std::string::npos;
  CHECK(found);
}

TEST_CASE("slice steps that are symbols or expressions: eval and generated kernels agree",
          "[extent][emulated]") {
  // The contract's slice takes symbols as steps: x[::K] with K set by a scalar input, and an
  // expression step over a symbol of the input's shape.
  const char* graph = R"G({"fuserc": 1, "name": "symbolic_steps",
   "symbols": {"N": {"hint": 10}, "M": {"hint": 7}, "K": {"hint": 3}},
   "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "M"]},
              {"name": "k", "dtype": "i64", "symbol": "K"}],
   "ops": [{"op": "slice", "args": ["x"], "starts": [1, 0], "ends": ["N", "M"],
            "steps": ["K", "M//3+1"], "out": "y"},
           {"op": "exp", "args": ["y"], "out": "z"}],
   "outputs": ["z"]})G";
  Fusion f = parse_text(graph);
  CHECK(shape_to_string(f.value(*f.find_value("y")).shape) ==
        "[ceildiv(N - 1, K), ceildiv(M, M / 3 + 1)]");
  check_graph(graph, {{{"N", 1}, {"M", 1}, {"K", 1}}, {{"N", 10}, {"M", 7}, {"K", 3}},
                      {{"N", 5}, {"M", 9}, {"K", 9}}, {{"N", 33}, {"M", 2}, {"K", 4}}});
  // A step that can be 0 is refused.
  std::string zero = graph;
  zero.replace(zero.find("\"K\": {\"hint\": 3}"), 16, "\"K\": {\"hint\": 3, \"min\": 0}");
  CHECK(parse_error(zero).find("step K can be 0 for some binding") != std::string::npos);
}

TEST_CASE("a term and its own floor division: the halves of a chunk, padding to even",
          "[extent][emulated]") {
  // x[:, :N - N//2] and padding H up to an even length: valid for every N and H, once the
  // bounds see that the term and its division move together (they were refused as possibly
  // negative). Eval against the emulator at odd and even sizes.
  const char* graph = R"G({"fuserc": 1, "name": "halves", "symbols": {"N": {"hint": 8}},
   "inputs": [{"name": "x", "dtype": "f32", "shape": [3, "N"]}],
   "ops": [{"op": "slice", "args": ["x"], "starts": [0, 0], "ends": [3, "N-(N//2)"],
            "steps": [1, 1], "out": "first"},
           {"op": "slice", "args": ["x"], "starts": [0, "N-(N//2)"], "ends": [3, "N"],
            "steps": [1, 1], "out": "second"},
           {"op": "pad", "args": ["x"], "pads": [[0, 0], [1, "2*((N+1)//2)-N"]], "out": "even"},
           {"op": "mul", "args": ["first", 2], "out": "y"}],
   "outputs": ["y", "second", "even"]})G";
  check_graph(graph, {{{"N", 1}}, {{"N", 2}}, {{"N", 7}}, {{"N", 10}}});
}

TEST_CASE("binding from expressions: eval and every runtime entry point agree, and refuse",
          "[extent][c_api]") {
  const char* json = R"({"fuserc": 1, "name": "tokens",
   "symbols": {"B": {"hint": 3, "max": 64}, "K": {"hint": 2, "max": 9}},
   "inputs": [
    {"name": "x", "dtype": "f32", "shape": ["B*197", 4]},
    {"name": "k", "dtype": "i64", "symbol": "K"},
    {"name": "y", "dtype": "f32", "shape": ["K+1", "B*2"]}],
   "ops": [
    {"op": "reshape", "args": ["x"], "shape": ["B", 197, 4], "out": "x3"},
    {"op": "sum", "args": ["x3"], "dims": [1], "out": "s"},
    {"op": "full", "args": [], "shape": ["K", 4], "value": 1.5, "dtype": "f32", "out": "f"},
    {"op": "mul", "args": ["y", "k"], "out": "yk"}],
   "outputs": ["s", "f", "yk"]})";
  Fusion f = parse_text(json);
  auto exe = compile_graph(f);
  auto inputs_at = [&](int64_t rows, int64_t k, int64_t y0, int64_t y1) {
    TensorMap in;
    in.emplace("x", HostTensor(DType::F32, {rows, 4}));
    HostTensor kt(DType::I64, {});
    kt.store_i64(0, k);
    in.emplace("k", kt);
    in.emplace("y", HostTensor(DType::F32, {y0, y1}));
    return in;
  };
  // Good: B = 3 from x (591 = 3 * 197), K = 2 from k.
  TensorMap good = inputs_at(591, 2, 3, 6);
  auto symbols = bind_fusion_inputs(f, good, "in.st");
  CHECK(symbols == SymbolValues{{"B", 3}, {"K", 2}});
  auto b = exe->bind_inputs(good, "in.st");
  CHECK(b->symbols == std::vector<int64_t>{3, 2});
  EmulatorDevice device;
  auto got = run_package(*exe, device, good, "in.st");
  auto want = evaluate_fusion(f, good, "in.st");
  for (size_t i = 0; i < got.size(); ++i) CHECK(compare_tensors(got[i].second, want[i].second) == "");

  // Refusals, the same words from eval and the runtime.
  auto both = [&](const TensorMap& in) {
    std::string a = error_of([&] { bind_fusion_inputs(f, in, "in.st"); });
    std::string r = error_of([&] { exe->bind_inputs(in, "in.st"); });
    CHECK(a == r);
    return a;
  };
  CHECK(both(inputs_at(590, 2, 3, 6)) ==
        "in.st: input 'x' dimension 0 is 590, but the graph says B * 197, which no integer B "
        "makes 590 (590 is not a multiple of 197)");
  CHECK(both(inputs_at(591, 2, 4, 6)) == "in.st: input 'y' dimension 0 is 4 but the graph says "
                                         "K + 1 = 3");
  CHECK(both(inputs_at(591, 2, 3, 7)) == "in.st: input 'y' dimension 1 is 7 but the graph says "
                                         "B * 2 = 6");
  CHECK(both(inputs_at(591, 0, 1, 6)) ==
        "in.st: symbol 'K' = 0 (from scalar input 'k') is outside its declared range [1, 9]");
  CHECK(both(inputs_at(197 * 65, 2, 3, 130)) ==
        "in.st: symbol 'B' = 65 (from input 'x' dimension 0 (B * 197 = 12805)) is outside its "
        "declared range [1, 64]");

  // The C++ and C interfaces (emulated): shapes alone cannot bind K.
  rt::LoadOptions lo;
  lo.device = rt::kEmulatorDevice;
  std::string bytes;
  {
    PassContext ctx;
    CompileOptions o;
    o.run_nvrtc = false;
    bytes = serialize_package(compile_fusion(parse_text(json), o, ctx), {});
  }
  auto pkg = rt::Package::from_bytes(bytes, "p.fpkg", lo);
  std::vector<std::vector<int64_t>> shapes = {{591, 4}, {}, {3, 6}};
  CHECK(error_of([&] { pkg->bind_shapes(shapes); }) ==
        "p.fpkg: scalar input 'k' sets symbol 'K': binding needs its value, not only the inputs' "
        "shapes");
  int64_t k = 2;
  auto plan = pkg->bind_shapes(shapes, {nullptr, &k, nullptr});
  CHECK(plan->binding().symbols == std::vector<int64_t>{3, 2});
  shapes[0] = {590, 4};
  CHECK(error_of([&] { pkg->bind_shapes(shapes, {nullptr, &k, nullptr}); })
            .find("590 is not a multiple of 197") != std::string::npos);

  fuserc_load_options options{FUSERC_DEVICE_EMULATOR, nullptr};
  fuserc_package* p = nullptr;
  REQUIRE(fuserc_package_load_bytes(bytes.data(), bytes.size(), 0, &options, &p) == FUSERC_OK);
  CHECK(fuserc_package_input_symbol(p, 1) == 1);  // K (symbols sorted: B, K)
  CHECK(fuserc_package_input_symbol(p, 0) == -1);
  int64_t xs[2] = {591, 4}, ys[2] = {3, 6};
  const int64_t* sh[3] = {xs, nullptr, ys};
  int32_t ranks[3] = {2, 0, 2};
  fuserc_plan* cp = nullptr;
  CHECK(fuserc_bind_shapes(p, sh, ranks, 3, &cp) == FUSERC_ERROR_SHAPE);
  CHECK(std::string(fuserc_last_error()).find("binding needs its value") != std::string::npos);
  const void* scalars[3] = {nullptr, &k, nullptr};
  REQUIRE(fuserc_bind_inputs(p, sh, ranks, scalars, 3, &cp) == FUSERC_OK);
  int64_t values[2];
  REQUIRE(fuserc_plan_symbol_values(cp, values) == FUSERC_OK);
  CHECK((values[0] == 3 && values[1] == 2));
  // Launching with another value of k than the plan was bound with is refused.
  HostTensor x(DType::F32, {591, 4}), y(DType::F32, {3, 6});
  HostTensor s(DType::F32, {3, 4}), fo(DType::F32, {2, 4}), yk(DType::F32, {3, 6});
  int64_t k3 = 3;
  const void* in[3] = {x.data(), &k3, y.data()};
  void* out[3] = {s.data(), fo.data(), yk.data()};
  CHECK(fuserc_launch(cp, nullptr, in, out, nullptr, 0) == FUSERC_ERROR_INVALID_ARGUMENT);
  CHECK(std::string(fuserc_last_error()) ==
        "<memory>: scalar input 'k' is 3, but this plan was bound with K = 2 (bind again for the "
        "new size)");
  in[1] = &k;
  CHECK(fuserc_launch(cp, nullptr, in, out, nullptr, 0) == FUSERC_OK);
  CHECK(fo.load_f32(7) == 1.5f);
  fuserc_plan_free(cp);
  fuserc_package_free(p);
}

TEST_CASE("the public reshape_tokens_f32 graph: eval and generated kernels agree",
          "[extent][emulated]") {
  std::ifstream in(std::string(FUSERC_TEST_GRAPHS_DIR) + "/public/reshape_tokens_f32.json");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  check_graph(s.str(), {{{"B", 1}}, {{"B", 2}}}, {false, false});
}
