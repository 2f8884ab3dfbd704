// scaled_dot_product_attention: typing and refusals, eval of its expansion against a direct
// float64 attention written here (PyTorch's definition), and the emulator against eval for each
// variant: causal, bool mask, additive mask, grouped-query heads, L != S, a given scale.
#include <catch2/catch.hpp>

#include <cmath>

#include "emulated_check.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::string graph(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return R"({"fuserc": 1, "name": "att", "symbols": {"B": {"hint": 2, "max": 4},
            "L": {"hint": 5, "max": 40}, "S": {"hint": 7, "max": 40}}, "inputs": [)" +
         inputs + R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
}

std::string input(const std::string& name, const std::string& dtype, const std::string& shape) {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape + "}";
}

// The one-line refusal of a graph (test_util.h's error_of).
std::string refusal(const std::string& json) {
  return error_of([&] { parse_text(json); });
}

// Element of `t` at the 4-d index `i` of [B, H, L, S]-like shapes, broadcasting as PyTorch
// does (t aligned on the right, extents of 1 repeated).
double at4(const HostTensor& t, const std::array<int64_t, 4>& i) {
  int64_t flat = 0, stride = 1;
  for (int d = t.rank() - 1, j = 3; d >= 0; --d, --j) {
    int64_t e = t.shape()[static_cast<size_t>(d)];
    flat += (e == 1 ? 0 : i[static_cast<size_t>(j)]) * stride;
    stride *= e;
  }
  return t.load_f64(flat);
}

struct Reference {
  bool causal = false;
  double scale = 0;  // 0: 1 / sqrt(E)
};

// softmax(q k^T * scale + mask) v over rank-4 q [B, Hq, L, E], k [B, Hk, S, E],
// v [B, Hk, S, Ev], in float64; query head h uses key/value head h / (Hq / Hk).
HostTensor reference(const HostTensor& q, const HostTensor& k, const HostTensor& v,
                     const HostTensor* mask, Reference r) {
  const int64_t B = q.shape()[0], Hq = q.shape()[1], L = q.shape()[2], E = q.shape()[3];
  const int64_t Hk = k.shape()[1], S = k.shape()[2], Ev = v.shape()[3];
  const double scale = r.scale != 0 ? r.scale : 1 / std::sqrt(static_cast<double>(E));
  HostTensor out(DType::F64, {B, Hq, L, Ev});
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < L; ++i) {
        const int64_t hk = h / (Hq / Hk);
        std::vector<double> s(static_cast<size_t>(S));
        double mx = -INFINITY;
        for (int64_t j = 0; j < S; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < E; ++e)
            acc += at4(q, {b, h, i, e}) * at4(k, {b, hk, j, e});
          acc *= scale;
          if (mask && mask->dtype() == DType::Bool && at4(*mask, {b, h, i, j}) == 0) acc = -INFINITY;
          if (mask && mask->dtype() != DType::Bool) acc += at4(*mask, {b, h, i, j});
          if (r.causal && j > i) acc = -INFINITY;
          s[static_cast<size_t>(j)] = acc;
          mx = std::max(mx, acc);
        }
        double sum = 0;
        for (double& x : s) sum += (x = std::exp(x - mx));
        for (int64_t c = 0; c < Ev; ++c) {
          double o = 0;
          for (int64_t j = 0; j < S; ++j) o += s[static_cast<size_t>(j)] / sum * at4(v, {b, hk, j, c});
          out.store_f64(((b * Hq + h) * L + i) * Ev + c, o);
        }
      }
  return out;
}

// eval of `json` (whose first output is the attention y) against the direct reference, and the
// emulator against eval, at two bindings.
void check_variant(const std::string& json, Reference r, double tolerance) {
  Fusion f = parse_text(json);
  for (const std::map<std::string, int64_t>& at : std::vector<std::map<std::string, int64_t>>{
           {{"B", 1}, {"L", 3}, {"S", 5}}, {{"B", 2}, {"L", 9}, {"S", 4}}}) {
    auto symbols = choose_symbol_values(f, at);
    TensorMap inputs = make_random_inputs(f, symbols, 3);
    auto got = evaluate_fusion(f, inputs, "inputs");
    std::map<std::string, HostTensor> env = inputs;
    for (auto& [name, t] : got) env.emplace(name, t);
    const HostTensor* mask = env.count("keep") ? &env.at("keep") : nullptr;
    HostTensor want = reference(env.at("q"), env.at("k"), env.at("v"), mask, r);
    const HostTensor& y = env.at("y");
    REQUIRE(y.numel() == want.numel());
    double worst = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::abs(y.load_f64(i) - want.load_f64(i)));
    INFO("L=" << symbols["L"] << " S=" << symbols["S"]);
    CHECK(worst <= tolerance);
  }
  check_graph(json, {{{"B", 1}, {"L", 3}, {"S", 5}}, {{"B", 2}, {"L", 9}, {"S", 4}}},
              {false, false});
}

}  // namespace

TEST_CASE("attention: result shapes, and what is refused naming the op", "[attention]") {
  Fusion f = parse_text(graph(input("q", "bf16", R"(["B", 8, "L", 16])") + ", " +
                                  input("k", "bf16", R"(["B", 2, "S", 16])") + ", " +
                                  input("v", "bf16", R"(["B", 2, "S", 12])"),
                              R"({"op": "scaled_dot_product_attention", "args": ["q", "k", "v"],
                                  "enable_gqa": true, "out": "y"})",
                              R"("y")"));
  const Value& y = f.value(*f.find_value("y"));
  CHECK(shape_to_string(y.shape) == "[B, 8, L, 12]");
  CHECK(y.dtype == DType::BF16);
  // The expansion is what the IR holds: two products, no attention op.
  int products = 0;
  for (const Op& op : f.ops) {
    CHECK(op.kind != OpKind::Attention);
    products += op.kind == OpKind::Matmul;
  }
  CHECK(products == 2);

  auto refused = [](const std::string& q, const std::string& k, const std::string& v,
                    const std::string& extra_inputs, const std::string& args,
                    const std::string& attrs) {
    return refusal(graph(input("q", "f16", q) + ", " + input("k", "f16", k) + ", " +
                              input("v", "f16", v) + extra_inputs,
                          R"({"op": "scaled_dot_product_attention", "args": [)" + args + "]" +
                              attrs + R"(, "out": "y"})",
                          R"("y")"));
  };
  const std::string q = R"([2, 4, "L", 16])", kv = R"([2, 4, "S", 16])";
  const std::string qkv = R"("q", "k", "v")";
  CHECK_THAT(refused(q, R"([2, 4, "S", 8])", kv, "", qkv, ""),
             Catch::Contains("k's embedding dim 8 differs from q's 16"));
  CHECK_THAT(refused(q, kv, R"([2, 4, "L", 16])", "", qkv, ""),
             Catch::Contains("v's sequence length L differs from k's S"));
  CHECK_THAT(refused(q, kv, kv, ", " + input("keep", "bool", R"(["L", "S"])"),
                     R"("q", "k", "v", "keep")", R"(, "is_causal": true)"),
             Catch::Contains("is_causal and a mask are not given together"));
  CHECK_THAT(refused(R"([2, 6, "L", 16])", kv, kv, "", qkv, R"(, "enable_gqa": true)"),
             Catch::Contains("q's 6 heads are not a multiple of k's 4"));
  CHECK_THAT(refused(R"([2, 8, "L", 16])", kv, kv, "", qkv, ""),
             Catch::Contains("heads that differ need \"enable_gqa\": true"));
  CHECK_THAT(refused(R"([2, 8, "L", 16])", kv, R"([2, 2, "S", 16])", "", qkv,
                     R"(, "enable_gqa": true)"),
             Catch::Contains("k and v must have the same number of heads"));
  CHECK_THAT(refused(q, kv, kv, ", " + input("keep", "bool", R"([3, "S"])"),
                     R"("q", "k", "v", "keep")", ""),
             Catch::Contains("does not broadcast to the scores [2, 4, L, S]"));
  CHECK_THAT(refused(q, kv, kv, ", " + input("keep", "i32", R"(["L", "S"])"),
                     R"("q", "k", "v", "keep")", ""),
             Catch::Contains("the mask must be bool"));
  CHECK_THAT(refused(R"(["S"])", kv, kv, "", qkv, ""), Catch::Contains("must have rank 2 or more"));
  // A symbolic embedding dim takes the default scale 1/sqrt(E) at run time; grouped heads
  // may be symbolic when q's are a constant multiple of k's.
  CHECK(refused(R"([2, 4, "L", "S"])", R"([2, 4, "S", "S"])", kv, "", qkv, "") == "<no error>");
  CHECK(refused(R"([2, "2*H", "L", 16])", R"([2, "H", "S", 16])", R"([2, "H", "S", 16])", "",
                qkv, R"(, "enable_gqa": true)") == "<no error>");
  CHECK_THAT(refused(R"([2, "H+1", "L", 16])", R"([2, "H", "S", 16])", R"([2, "H", "S", 16])",
                     "", qkv, R"(, "enable_gqa": true)"),
             Catch::Contains("q's H + 1 heads are not a constant multiple of k's H"));
  CHECK_THAT(refused(q, kv, kv, "", qkv, R"(, "scale": "big")"),
             Catch::Contains("scale must be a number"));
  std::string mixed = refusal(graph(input("q", "f16", q) + ", " + input("k", "f32", kv) + ", " +
                                         input("v", "f16", kv),
                                     R"({"op": "scaled_dot_product_attention",
                                         "args": ["q", "k", "v"], "out": "y"})",
                                     R"("y")"));
  CHECK_THAT(mixed, Catch::Contains("op 0 'scaled_dot_product_attention' (out 'y') at "
                                    "$.ops[0].args[1]: q, k and v must have one dtype"));
}

TEST_CASE("attention variants: eval against a direct float64 attention, the emulator against "
          "eval",
          "[attention][emulated]") {
  const std::string sdpa = R"({"op": "scaled_dot_product_attention", "out": "y", )";
  SECTION("causal, L != S (top-left triangle)") {
    check_variant(graph(input("q", "bf16", R"(["B", 4, "L", 16])") + ", " +
                            input("k", "bf16", R"(["B", 4, "S", 16])") + ", " +
                            input("v", "bf16", R"(["B", 4, "S", 16])"),
                        sdpa + R"("args": ["q", "k", "v"], "is_causal": true})", R"("y")"),
                  {true, 0}, 2e-2);
  }
  SECTION("a bool mask over keys, every row keeping key 0") {
    check_variant(
        graph(input("q", "f16", R"(["B", 2, "L", 8])") + ", " +
                  input("k", "f16", R"(["B", 2, "S", 8])") + ", " +
                  input("v", "f16", R"(["B", 2, "S", 8])") + ", " +
                  input("m", "bool", R"(["B", 1, 1, "S"])"),
              R"({"op": "iota", "args": [], "out": "pos", "length": "S", "dtype": "i64"},
                 {"op": "eq", "args": ["pos", 0], "out": "first"},
                 {"op": "logical_or", "args": ["m", "first"], "out": "keep"},)" +
                  sdpa + R"("args": ["q", "k", "v", "keep"]})",
              R"("y", "keep")"),
        {}, 5e-3);
  }
  SECTION("an additive f32 mask with f16 operands, a given scale, Ev != E") {
    check_variant(graph(input("q", "f16", R"(["B", 2, "L", 8])") + ", " +
                            input("k", "f16", R"(["B", 2, "S", 8])") + ", " +
                            input("v", "f16", R"(["B", 2, "S", 6])") + ", " +
                            input("keep", "f32", R"(["L", "S"])"),
                        sdpa + R"("args": ["q", "k", "v", "keep"], "scale": 0.3})", R"("y")"),
                  {false, 0.3}, 5e-3);
  }
  SECTION("grouped-query heads, causal, f32") {
    check_variant(graph(input("q", "f32", R"(["B", 6, "L", 8])") + ", " +
                            input("k", "f32", R"(["B", 2, "S", 8])") + ", " +
                            input("v", "f32", R"(["B", 2, "S", 8])"),
                        sdpa + R"("args": ["q", "k", "v"], "is_causal": true,
                                  "enable_gqa": true})",
                        R"("y")"),
                  {true, 0}, 1e-5);
  }
  SECTION("grouped-query heads with a per-head additive mask, f64") {
    check_variant(graph(input("q", "f64", R"(["B", 4, "L", 8])") + ", " +
                            input("k", "f64", R"(["B", 2, "S", 8])") + ", " +
                            input("v", "f64", R"(["B", 2, "S", 8])") + ", " +
                            input("keep", "f64", R"([4, "L", "S"])"),
                        sdpa + R"("args": ["q", "k", "v", "keep"], "enable_gqa": true})",
                        R"("y")"),
                  {}, 1e-12);
  }
}
