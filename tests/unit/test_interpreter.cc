// Tests for the CPU reference interpreter: each op group against values computed by hand,
// the contract's numerics (rounding when stored, integer semantics, NaN handling), and the
// refusal of bad input tensors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "core/base/philox.h"
#include "core/eval/interpreter.h"
#include "test_util.h"

using namespace fuserc;
using fuserc::testing::as_doubles;
using fuserc::testing::as_ints;
using fuserc::testing::parse_text;
using fuserc::testing::tensor;

namespace {

std::string graph(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return R"({"fuserc": 1, "name": "g", "inputs": [)" + inputs + R"(], "ops": [)" + ops +
         R"(], "outputs": [)" + outputs + "]}";
}

std::map<std::string, HostTensor> run(const std::string& g, TensorMap inputs) {
  Fusion f = parse_text(g);
  std::map<std::string, HostTensor> out;
  for (auto& [name, t] : evaluate_fusion(f, inputs, "in.safetensors")) out[name] = t;
  return out;
}

std::string run_error(const std::string& g, TensorMap inputs) {
  try {
    run(g, std::move(inputs));
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

HostTensor f32(std::vector<int64_t> shape, std::vector<double> v) {
  return tensor<double>(DType::F32, std::move(shape), v);
}
HostTensor i32(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return tensor<int64_t>(DType::I32, std::move(shape), v);
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("elementwise ops broadcast and follow PyTorch", "[eval]") {
  auto out = run(graph(R"({"name": "x", "dtype": "f32", "shape": [2, 3]},
                          {"name": "b", "dtype": "f32", "shape": [3]},
                          {"name": "s", "dtype": "f32"})",
                       R"({"op": "add", "args": ["x", "b"], "out": "y"},
                          {"op": "mul", "args": ["y", "s"], "out": "z"},
                          {"op": "maximum", "args": ["x", "b"], "out": "mx"},
                          {"op": "round", "args": ["x"], "out": "r"},
                          {"op": "remainder", "args": ["x", -2], "out": "rm"},
                          {"op": "fmod", "args": ["x", -2], "out": "fm"},
                          {"op": "gt", "args": ["x", 0], "out": "pos"},
                          {"op": "where", "args": ["pos", "x", 0.25], "out": "w"})",
                       R"("z", "mx", "r", "rm", "fm", "pos", "w")"),
                 {{"x", f32({2, 3}, {0.5, 1.5, 2.5, -0.5, -3.0, kNaN})},
                  {"b", f32({3}, {1, 2, 3})},
                  {"s", f32({}, {2})}});
  CHECK(as_doubles(out["z"])[0] == 3.0);
  CHECK(as_doubles(out["z"])[4] == -2.0);
  CHECK(std::isnan(as_doubles(out["z"])[5]));
  auto mx = as_doubles(out["mx"]);
  CHECK(mx[0] == 1.0);
  CHECK(mx[2] == 3.0);
  CHECK(std::isnan(mx[5]));  // maximum propagates NaN
  auto r = as_doubles(out["r"]);
  CHECK(r[0] == 0.0);  // half to even
  CHECK(r[1] == 2.0);
  CHECK(r[2] == 2.0);
  CHECK(r[3] == -0.0);
  auto rm = as_doubles(out["rm"]);
  CHECK(rm[1] == -0.5);  // remainder takes the divisor's sign
  CHECK(rm[3] == -0.5);
  CHECK(rm[4] == -1.0);
  auto fm = as_doubles(out["fm"]);
  CHECK(fm[1] == 1.5);  // fmod takes the dividend's sign
  CHECK(fm[4] == -1.0);
  CHECK(as_ints(out["pos"]) == std::vector<int64_t>{1, 1, 1, 0, 0, 0});
  CHECK(as_doubles(out["w"])[3] == 0.25);
}

TEST_CASE("integer semantics: wrapping, true division, remainder, casts", "[eval]") {
  auto out =
      run(graph(R"({"name": "a", "dtype": "i32", "shape": [4]},
                          {"name": "f", "dtype": "f32", "shape": [4]})",
                R"({"op": "mul", "args": ["a", "a"], "out": "sq"},
                          {"op": "div", "args": ["a", 2], "out": "d"},
                          {"op": "remainder", "args": ["a", 3], "out": "r"},
                          {"op": "bitwise_xor", "args": ["a", 5], "out": "x"},
                          {"op": "cast", "args": ["f"], "dtype": "i32", "out": "fi"},
                          {"op": "cast", "args": ["f"], "dtype": "bool", "out": "fb"},
                          {"op": "sum", "args": ["a"], "dims": [0], "out": "s"})",
                R"("sq", "d", "r", "x", "fi", "fb", "s")"),
          {{"a", i32({4}, {65536, -7, 7, 2147483647})}, {"f", f32({4}, {-2.7, 3e10, kNaN, 0.0})}});
  CHECK(as_ints(out["sq"]) == std::vector<int64_t>{0, 49, 49, 1});  // i32 wraps
  CHECK(out["d"].dtype() == DType::F32);
  CHECK(as_doubles(out["d"])[1] == -3.5);
  CHECK(as_ints(out["r"]) == std::vector<int64_t>{1, 2, 1, 1});
  CHECK(as_ints(out["x"]) == std::vector<int64_t>{65541, -4, 2, 2147483642});
  CHECK(as_ints(out["fi"]) == std::vector<int64_t>{-2, 2147483647, 0, 0});  // saturating, NaN->0
  CHECK(as_ints(out["fb"]) == std::vector<int64_t>{1, 1, 1, 0});
  CHECK(out["s"].dtype() == DType::I64);
  CHECK(as_ints(out["s"]) == std::vector<int64_t>{int64_t{65536} - 7 + 7 + 2147483647});
}

TEST_CASE("the added unary ops at edge values, as PyTorch gives them", "[eval]") {
  const double inf = std::numeric_limits<double>::infinity();
  // x = 1, -1, 0.5, -0, 2, 0, -2.5, inf, -inf, nan, -nan (expected values from torch 1.13).
  std::string ops, outs;
  for (const char* name :
       {"asin", "acos", "atanh", "log10", "erfinv", "lgamma", "frac", "signbit", "sinh", "acosh"}) {
    ops += std::string(ops.empty() ? "" : ", ") + R"({"op": ")" + name +
           R"(", "args": ["x"], "out": ")" + name + "\"}";
    outs += std::string(outs.empty() ? "\"" : ", \"") + name + "\"";
  }
  ops += R"(, {"op": "signbit", "args": ["i"], "out": "sb_int"},
            {"op": "signbit", "args": ["b"], "out": "sb_bool"},
            {"op": "lgamma", "args": ["i"], "out": "lg_int"})";
  outs += R"(, "sb_int", "sb_bool", "lg_int")";
  auto out = run(graph(R"({"name": "x", "dtype": "f64", "shape": [11]},
                          {"name": "i", "dtype": "i32", "shape": [3]},
                          {"name": "b", "dtype": "bool", "shape": [2]})",
                       ops, outs),
                 {{"x", tensor<double>(DType::F64, {11},
                                       {1, -1, 0.5, -0.0, 2, 0, -2.5, inf, -inf, kNaN, -kNaN})},
                  {"i", i32({3}, {-3, 0, 4})},
                  {"b", tensor<int64_t>(DType::Bool, {2}, {1, 0})}});
  // Equal as PyTorch prints them: NaN as NaN, zeros with their sign.
  auto same = [](const std::vector<double>& got, const std::vector<double>& want,
                 double eps = 1e-15) {
    REQUIRE(got.size() == want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      INFO("element " << k << ": " << got[k] << " vs " << want[k]);
      if (std::isnan(want[k])) {
        CHECK(std::isnan(got[k]));
      } else {
        CHECK(got[k] == Approx(want[k]).epsilon(eps));
        CHECK(std::signbit(got[k]) == std::signbit(want[k]));
      }
    }
  };
  same(as_doubles(out["asin"]), {1.5707963267948966, -1.5707963267948966, 0.5235987755982989, -0.0,
                                 kNaN, 0.0, kNaN, kNaN, kNaN, kNaN, kNaN});
  same(as_doubles(out["acos"]), {0.0, 3.141592653589793, 1.0471975511965976, 1.5707963267948966,
                                 kNaN, 1.5707963267948966, kNaN, kNaN, kNaN, kNaN, kNaN});
  same(as_doubles(out["atanh"]),
       {inf, -inf, 0.5493061443340548, -0.0, kNaN, 0.0, kNaN, kNaN, kNaN, kNaN, kNaN});
  same(as_doubles(out["log10"]), {0.0, kNaN, -0.3010299956639812, -inf, 0.3010299956639812, -inf,
                                  kNaN, inf, kNaN, kNaN, kNaN});
  same(as_doubles(out["erfinv"]),
       {inf, -inf, 0.4769362762044699, -0.0, kNaN, 0.0, kNaN, kNaN, kNaN, kNaN, kNaN});
  same(as_doubles(out["lgamma"]),
       {0.0, inf, 0.5723649429247001, inf, 0.0, inf, -0.05624371649767405, inf, inf, kNaN, kNaN});
  same(as_doubles(out["frac"]), {0.0, 0.0, 0.5, 0.0, 0.0, 0.0, -0.5, kNaN, kNaN, kNaN, kNaN});
  same(as_doubles(out["sinh"]),
       {1.1752011936438014, -1.1752011936438014, 0.5210953054937474, -0.0, 3.6268604078470186, 0.0,
        -6.0502044810397875, inf, -inf, kNaN, kNaN});
  same(as_doubles(out["acosh"]),
       {0.0, kNaN, kNaN, kNaN, 1.3169578969248166, kNaN, kNaN, inf, kNaN, kNaN, kNaN});
  CHECK(out["signbit"].dtype() == DType::Bool);
  CHECK(as_ints(out["signbit"]) == std::vector<int64_t>{0, 1, 0, 1, 0, 0, 1, 0, 1, 0, 1});
  CHECK(as_ints(out["sb_int"]) == std::vector<int64_t>{1, 0, 0});
  CHECK(as_ints(out["sb_bool"]) == std::vector<int64_t>{0, 0});
  CHECK(out["lg_int"].dtype() == DType::F32);
  same(as_doubles(out["lg_int"]), {inf, inf, 1.7917594692280550}, 1e-7);
}

TEST_CASE("gelu of negative f32 keeps its digits (no 1 + erf / 1 + tanh cancellation)", "[eval]") {
  auto out = run(graph(R"({"name": "x", "dtype": "f32", "shape": [4]})",
                       R"({"op": "gelu", "args": ["x"], "out": "e"},
                          {"op": "gelu", "args": ["x"], "approximate": "tanh", "out": "t"})",
                       R"("e", "t")"),
                 {{"x", tensor<double>(DType::F32, {4}, {-6.0, -5.0, -3.0, 2.0})}});
  const double xs[] = {-6.0, -5.0, -3.0, 2.0};
  for (int i = 0; i < 4; ++i) {
    const double x = xs[i];
    const double e = 0.5 * x * std::erfc(-x / std::sqrt(2.0));
    const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    const double t = 0.5 * x * (1.0 + std::tanh(u));
    // float's 1 + erf(-6/sqrt 2) is 0 (gelu 0) and its 1 + tanh(u(-5)) is off by 30%.
    CHECK(std::abs(as_doubles(out["e"])[i] - e) <= 1e-5 * std::abs(e));
    CHECK(std::abs(as_doubles(out["t"])[i] - t) <= 1e-5 * std::abs(t));
  }
}

TEST_CASE("literals inf, -inf and nan in args, full and pad", "[eval]") {
  const double inf = std::numeric_limits<double>::infinity();
  auto out = run(graph(R"({"name": "x", "dtype": "bf16", "shape": [3]},
                          {"name": "c", "dtype": "bool", "shape": [3]})",
                       R"({"op": "where", "args": ["c", "x", {"value": "-inf"}], "out": "m"},
                          {"op": "amax", "args": ["m"], "dims": [0], "out": "mx"},
                          {"op": "pad", "args": ["x"], "pads": [[1, 1]], "value": "nan", "out": "p"},
                          {"op": "full", "shape": [2], "value": "inf", "dtype": "f16", "out": "f"},
                          {"op": "pad", "args": ["c"], "pads": [[0, 1]], "value": "nan", "out": "pc"})",
                       R"("m", "mx", "p", "f", "pc")"),
                 {{"x", tensor<double>(DType::BF16, {3}, {1.5, -2, 3})},
                  {"c", tensor<int64_t>(DType::Bool, {3}, {0, 1, 0})}});
  CHECK(as_doubles(out["m"]) == std::vector<double>{-inf, -2, -inf});
  CHECK(as_doubles(out["mx"]) == std::vector<double>{-2});
  auto p = as_doubles(out["p"]);
  CHECK((std::isnan(p[0]) && p[1] == 1.5 && std::isnan(p[4])));
  CHECK(as_doubles(out["f"]) == std::vector<double>{inf, inf});
  CHECK(as_ints(out["pc"]) == std::vector<int64_t>{0, 1, 0, 1});  // NaN is non-zero: true
}

TEST_CASE("f16 and bf16 values are rounded by casts and as outputs, not between ops", "[eval]") {
  // 1 + 2^-9 is not a bf16. Kept in f32 between ops (as a kernel keeps it in registers, and as
  // the contract asks: values round where they are written to memory), the sub gives 2^-9;
  // rounded by a cast to bf16 it is 1 and the sub gives 0; as an output it rounds to 1.
  auto out = run(graph(R"({"name": "x", "dtype": "bf16", "shape": [1]})",
                       R"({"op": "add", "args": ["x", 0.001953125], "out": "y"},
                          {"op": "sub", "args": ["y", "x"], "out": "z"},
                          {"op": "cast", "args": ["y"], "dtype": "bf16", "out": "yc"},
                          {"op": "sub", "args": ["yc", "x"], "out": "zc"},
                          {"op": "gelu", "args": ["y"], "out": "g"},
                          {"op": "cast", "args": ["g"], "dtype": "f32", "out": "gf"},
                          {"op": "sum", "args": ["y"], "dims": [0], "out": "s"},
                          {"op": "cast", "args": ["s"], "dtype": "f32", "out": "sf"})",
                       R"("y", "z", "zc", "gf", "sf")"),
                 {{"x", tensor<double>(DType::BF16, {1}, {1.0})}});
  CHECK(out["y"].dtype() == DType::BF16);
  CHECK(as_doubles(out["y"])[0] == 1.0);
  CHECK(as_doubles(out["z"])[0] == 0.001953125);
  CHECK(as_doubles(out["zc"])[0] == 0.0);
  // gelu of the unrounded 1 + 2^-9, in float; rounding y first would give gelu(1).
  const float y = 1.0f + 0.001953125f;
  const float gelu = 0.5f * y * (1.0f + std::erf(y / std::sqrt(2.0f)));
  CHECK(std::abs(as_doubles(out["gf"])[0] - gelu) < 1e-6);
  CHECK(std::abs(as_doubles(out["gf"])[0] - 0.8413447460685429) > 1e-3);
  CHECK(as_doubles(out["sf"])[0] == 1.001953125);  // a bf16 reduction's result, unrounded
}

TEST_CASE("reductions", "[eval]") {
  auto out = run(graph(R"({"name": "x", "dtype": "f32", "shape": [2, 3]},
                          {"name": "h", "dtype": "f16", "shape": [2, 3]},
                          {"name": "b", "dtype": "bool", "shape": [2, 3]})",
                       R"({"op": "sum", "args": ["x"], "dims": [1], "keepdim": true, "out": "s"},
                          {"op": "amax", "args": ["x"], "dims": [0], "out": "m"},
                          {"op": "prod", "args": ["x"], "dims": [0, 1], "out": "p"},
                          {"op": "mean", "args": ["h"], "dims": [0], "out": "mh"},
                          {"op": "var", "args": ["x"], "dims": [1], "out": "v1"},
                          {"op": "var_mean", "args": ["x"], "dims": [1], "correction": 0, "out": ["v0", "mu"]},
                          {"op": "sum", "args": ["b"], "dims": [0, 1], "out": "nb"},
                          {"op": "amin", "args": ["b"], "dims": [1], "out": "allb"})",
                       R"("s", "m", "p", "mh", "v1", "v0", "mu", "nb", "allb")"),
                 {{"x", f32({2, 3}, {1, 2, 3, 4, kNaN, 6})},
                  {"h", tensor<double>(DType::F16, {2, 3}, {1, 2, 3, 2, 3, 4.5})},
                  {"b", tensor<int64_t>(DType::Bool, {2, 3}, {1, 1, 1, 0, 1, 1})}});
  CHECK(out["s"].shape() == std::vector<int64_t>{2, 1});
  CHECK(as_doubles(out["s"])[0] == 6.0);
  CHECK(std::isnan(as_doubles(out["s"])[1]));
  auto m = as_doubles(out["m"]);
  CHECK(m[0] == 4.0);
  CHECK(std::isnan(m[1]));  // amax propagates NaN
  CHECK(m[2] == 6.0);
  CHECK(std::isnan(as_doubles(out["p"])[0]));
  CHECK(out["mh"].dtype() == DType::F16);
  CHECK(as_doubles(out["mh"]) == std::vector<double>{1.5, 2.5, 3.75});
  CHECK(as_doubles(out["v1"])[0] == 1.0);                // correction 1
  CHECK(as_doubles(out["v0"])[0] == Approx(2.0 / 3.0));  // correction 0
  CHECK(as_doubles(out["mu"])[0] == 2.0);
  CHECK(out["nb"].dtype() == DType::I64);
  CHECK(as_ints(out["nb"])[0] == 5);
  CHECK(as_ints(out["allb"]) == std::vector<int64_t>{1, 0});
}

TEST_CASE("reductions over empty extents", "[eval]") {
  std::string g = graph(R"({"name": "x", "dtype": "f32", "shape": ["N", 2]})",
                        R"({"op": "sum", "args": ["x"], "dims": [0], "out": "s"},
                           {"op": "mean", "args": ["x"], "dims": [0], "out": "m"})",
                        R"("s", "m")");
  g.insert(g.find("\"inputs\""), R"("symbols": {"N": {"min": 0}}, )");
  auto out = run(g, {{"x", HostTensor(DType::F32, {0, 2})}});
  CHECK(as_doubles(out["s"]) == std::vector<double>{0.0, 0.0});
  CHECK(std::isnan(as_doubles(out["m"])[0]));
  std::string g2 = graph(R"({"name": "x", "dtype": "f32", "shape": ["N", 2]})",
                         R"({"op": "amax", "args": ["x"], "dims": [0], "out": "m"})", R"("m")");
  g2.insert(g2.find("\"inputs\""), R"("symbols": {"N": {"min": 0}}, )");
  CHECK(run_error(g2, {{"x", HostTensor(DType::F32, {0, 2})}}) ==
        "in.safetensors: op 0 'amax' (out 'm'): the reduction is over an empty dimension, which "
        "has no maximum or minimum");
}

TEST_CASE("ops no output depends on are not evaluated", "[eval]") {
  // The dead maximum would be refused (empty row); the dead integer division would fail.
  std::string g = graph(
      R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]}, {"name": "i", "dtype": "i32", "shape": [2]})",
      R"({"op": "amax", "args": ["x"], "dims": [1], "out": "dead"},
                           {"op": "div", "args": ["i", 0], "out": "dead2"},
                           {"op": "mul", "args": ["x", 2], "out": "y"})",
      R"("y")");
  g.insert(g.find("\"inputs\""), R"("symbols": {"N": {}, "M": {"min": 0}}, )");
  auto out = run(g, {{"x", HostTensor(DType::F32, {3, 0})}, {"i", i32({2}, {1, 2})}});
  CHECK(out.at("y").shape() == std::vector<int64_t>{3, 0});
}

TEST_CASE("shape ops move elements", "[eval]") {
  auto out = run(graph(R"({"name": "x", "dtype": "i32", "shape": [2, 3]},
                          {"name": "f", "dtype": "f32", "shape": [2, 1]})",
                       R"({"op": "permute", "args": ["x"], "dims": [1, 0], "out": "t"},
                          {"op": "slice", "args": ["x"], "starts": [0, -1], "ends": [2, -4], "steps": [1, 1], "out": "empty"},
                          {"op": "slice", "args": ["x"], "starts": [1, 0], "ends": [2, 3], "steps": [1, 2], "out": "sl"},
                          {"op": "pad", "args": ["x"], "pads": [[1, 0], [0, -2]], "value": -1, "out": "pd"},
                          {"op": "cat", "args": ["x", "f"], "dim": 1, "out": "ct"},
                          {"op": "broadcast_in_dim", "args": ["f"], "shape": [3, 2, 2], "broadcast_dims": [1, 2], "out": "bc"},
                          {"op": "expand", "args": ["f"], "shape": [2, 4], "out": "ex"},
                          {"op": "reshape", "args": ["x"], "shape": [3, -1], "out": "rs"},
                          {"op": "iota", "length": 4, "start": 10, "step": -3, "dtype": "i64", "out": "io"},
                          {"op": "full", "shape": [2], "value": 0.1, "dtype": "f16", "out": "fl"})",
                       R"("t", "empty", "sl", "pd", "ct", "bc", "ex", "rs", "io", "fl")"),
                 {{"x", i32({2, 3}, {1, 2, 3, 4, 5, 6})}, {"f", f32({2, 1}, {0.5, 1.5})}});
  CHECK(as_ints(out["t"]) == std::vector<int64_t>{1, 4, 2, 5, 3, 6});
  CHECK(out["empty"].shape() == std::vector<int64_t>{2, 0});
  CHECK(as_ints(out["sl"]) == std::vector<int64_t>{4, 6});
  CHECK(out["pd"].shape() == std::vector<int64_t>{3, 1});
  CHECK(as_ints(out["pd"]) == std::vector<int64_t>{-1, 1, 4});
  CHECK(out["ct"].dtype() == DType::F32);
  CHECK(as_doubles(out["ct"]) == std::vector<double>{1, 2, 3, 0.5, 4, 5, 6, 1.5});
  CHECK(as_doubles(out["bc"]) ==
        std::vector<double>{0.5, 0.5, 1.5, 1.5, 0.5, 0.5, 1.5, 1.5, 0.5, 0.5, 1.5, 1.5});
  CHECK(as_doubles(out["ex"]) == std::vector<double>{0.5, 0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5});
  CHECK(out["rs"].shape() == std::vector<int64_t>{3, 2});
  CHECK(as_ints(out["io"]) == std::vector<int64_t>{10, 7, 4, 1});
  CHECK(as_doubles(out["fl"])[0] == 0.0999755859375);  // 0.1 rounded to f16
}

TEST_CASE("rand and randn follow the Philox mapping", "[eval]") {
  auto out = run(
      graph(
          R"({"name": "seed", "dtype": "i64"}, {"name": "offset", "dtype": "i64"})",
          R"({"op": "rand", "args": ["seed", "offset"], "shape": [3, 5], "dtype": "f32", "out": "u"},
                          {"op": "randn", "args": ["seed", "offset"], "shape": [7], "dtype": "f64", "out": "z"})",
          R"("u", "z")"),
      {{"seed", tensor<int64_t>(DType::I64, {}, {123456789012345})},
       {"offset", tensor<int64_t>(DType::I64, {}, {42})}});
  for (int i = 0; i < 15; ++i)
    CHECK(out["u"].load_f32(i) == philox_uniform_f32(123456789012345, 42, i));
  for (int i = 0; i < 7; ++i)
    CHECK(out["z"].load_f64(i) == philox_normal_f64(123456789012345, 42, i));
}

TEST_CASE("bad input tensors are refused with clear messages", "[eval]") {
  std::string g = graph(R"({"name": "x", "dtype": "f32", "shape": ["N", 4]},
                           {"name": "y", "dtype": "f32", "shape": ["N"]},
                           {"name": "s", "dtype": "f32"})",
                        R"({"op": "mul", "args": ["x", "s"], "out": "z"})", R"("z")");
  HostTensor x = HostTensor(DType::F32, {3, 4});
  HostTensor y3 = HostTensor(DType::F32, {3});
  HostTensor s = HostTensor(DType::F32, {});
  CHECK(run_error(g, {{"x", x}, {"s", s}}) == "in.safetensors: missing input tensor 'y'");
  CHECK(run_error(g, {{"x", x}, {"y", HostTensor(DType::F32, {5})}, {"s", s}}) ==
        "in.safetensors: symbol 'N' is bound to two sizes: 3 by input 'x' dimension 0 and 5 by "
        "input 'y' dimension 0");
  CHECK(run_error(g, {{"x", HostTensor(DType::F32, {3, 5})}, {"y", y3}, {"s", s}}) ==
        "in.safetensors: input 'x' dimension 1 is 5 but the graph says 4");
  CHECK(run_error(g, {{"x", HostTensor(DType::F16, {3, 4})}, {"y", y3}, {"s", s}}) ==
        "in.safetensors: input 'x' is f32 in the graph but F16 in the file");
  CHECK(run_error(g, {{"x", x}, {"y", y3}, {"s", HostTensor(DType::F32, {1})}}) ==
        "in.safetensors: input 's' has rank 1 [1] in the file but rank 0 in the graph (a scalar "
        "input is a rank-0 tensor)");
  CHECK(run_error(g, {{"x", x}, {"y", y3}, {"s", s}, {"w", s}}) ==
        "in.safetensors: tensor 'w' is not an input of the graph (inputs: x, y, s)");
  std::string bounded = g;
  bounded.insert(bounded.find("\"inputs\""), R"("symbols": {"N": {"max": 2}}, )");
  CHECK(run_error(bounded, {{"x", x}, {"y", y3}, {"s", s}}) ==
        "in.safetensors: symbol 'N' = 3 (from input 'x' dimension 0) is outside its declared "
        "range [1, 2]");
}
