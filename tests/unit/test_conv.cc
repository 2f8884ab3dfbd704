// conv: typing and refusals, eval of its expansion against a direct float64 convolution
// written here (PyTorch's definition), and the emulator against eval for each variant:
// stride, padding, dilation, groups and depthwise, 1-D and 3-D, a channels-last input, a bias.
#include <catch2/catch.hpp>

#include <cstring>

#include "core/passes/presegmentation.h"
#include "emulated_check.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::string graph(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return R"({"fuserc": 1, "name": "cv", "symbols": {"N": {"hint": 2, "max": 4},
            "H": {"hint": 9, "min": 4, "max": 40}, "W": {"hint": 7, "min": 4, "max": 40}},
            "inputs": [)" +
         inputs + R"(], "ops": [)" + ops + R"(], "outputs": [)" + outputs + "]}";
}

std::string input(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& extra = "") {
  return R"({"name": ")" + name + R"(", "dtype": ")" + dtype + R"(", "shape": )" + shape +
         extra + "}";
}

// The one-line refusal of a graph (test_util.h's error_of).
std::string refusal(const std::string& json) {
  return error_of([&] { parse_text(json); });
}

struct Params {
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups = 1;
  std::vector<int64_t> output_padding;  // set: a transposed conv
};

// A transposed conv in float64 by its definition (the gradient of a conv with respect to its
// input): each x[n, c, i] adds x * w[c, o - group start, k] to y[n, o, i * stride - padding +
// k * dilation] for the output channels o of c's group.
HostTensor reference_transposed(const HostTensor& x, const HostTensor& w, const HostTensor* b,
                                const Params& pr) {
  const size_t sd = static_cast<size_t>(w.rank()) - 2;
  const int64_t n = x.shape()[0], c = x.shape()[1], cog = w.shape()[1], co = cog * pr.groups;
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end()), out(sd);
  int64_t positions = 1, kernel = 1, spatial = 1;
  for (size_t i = 0; i < sd; ++i) {
    out[i] = (in[i] - 1) * pr.stride[i] - 2 * pr.padding[i] + pr.dilation[i] * (k[i] - 1) +
             pr.output_padding[i] + 1;
    positions *= out[i];
    kernel *= k[i];
    spatial *= in[i];
  }
  std::vector<int64_t> shape = {n, co};
  shape.insert(shape.end(), out.begin(), out.end());
  HostTensor y(DType::F64, shape);
  for (int64_t bi = 0; bi < n; ++bi)
    for (int64_t o = 0; o < co; ++o)
      for (int64_t p = 0; p < positions; ++p)
        y.store_f64((bi * co + o) * positions + p, b ? b->load_f64(o) : 0);
  const int64_t cg = c / pr.groups;
  for (int64_t bi = 0; bi < n; ++bi)
    for (int64_t ci = 0; ci < c; ++ci)
      for (int64_t s = 0; s < spatial; ++s)
        for (int64_t q = 0; q < kernel; ++q) {
          int64_t rs = s, rq = q, flat = 0;
          bool inside = true;
          std::vector<int64_t> pos(sd), kp(sd);
          for (size_t i = sd; i-- > 0;) {
            pos[i] = rs % in[i];
            rs /= in[i];
            kp[i] = rq % k[i];
            rq /= k[i];
          }
          for (size_t i = 0; i < sd; ++i) {
            const int64_t at = pos[i] * pr.stride[i] - pr.padding[i] + kp[i] * pr.dilation[i];
            inside = inside && at >= 0 && at < out[i];
            flat = flat * out[i] + at;
          }
          if (!inside) continue;
          const double xv = x.load_f64((bi * c + ci) * spatial + s);
          for (int64_t ol = 0; ol < cog; ++ol) {
            const int64_t o = ci / cg * cog + ol;
            const int64_t at = (bi * co + o) * positions + flat;
            y.store_f64(at, y.load_f64(at) + xv * w.load_f64((ci * cog + ol) * kernel + q));
          }
        }
  return y;
}

// y[n, o, *p] = b[o] + sum over c in o's group and kernel positions k of
// x[n, c, p * stride - padding + k * dilation] * w[o, c - group start, k], in float64.
HostTensor reference(const HostTensor& x, const HostTensor& w, const HostTensor* b,
                     const Params& pr) {
  const size_t sd = static_cast<size_t>(w.rank()) - 2;
  const int64_t n = x.shape()[0], c = x.shape()[1], co = w.shape()[0], cg = w.shape()[1];
  std::vector<int64_t> in(x.shape().begin() + 2, x.shape().end());
  std::vector<int64_t> k(w.shape().begin() + 2, w.shape().end()), out(sd);
  int64_t positions = 1, kernel = 1, spatial = 1;
  for (size_t i = 0; i < sd; ++i) {
    out[i] = (in[i] + 2 * pr.padding[i] - pr.dilation[i] * (k[i] - 1) - 1) / pr.stride[i] + 1;
    positions *= out[i];
    kernel *= k[i];
    spatial *= in[i];
  }
  std::vector<int64_t> shape = {n, co};
  shape.insert(shape.end(), out.begin(), out.end());
  HostTensor y(DType::F64, shape);
  for (int64_t bi = 0; bi < n; ++bi)
    for (int64_t o = 0; o < co; ++o)
      for (int64_t p = 0; p < positions; ++p) {
        double acc = b ? b->load_f64(o) : 0;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t cin = o / (co / pr.groups) * cg + ci;
          for (int64_t q = 0; q < kernel; ++q) {
            int64_t flat = 0, rp = p, rq = q;
            bool inside = true;
            std::vector<int64_t> pos(sd), kp(sd);
            for (size_t i = sd; i-- > 0;) {
              pos[i] = rp % out[i];
              rp /= out[i];
              kp[i] = rq % k[i];
              rq /= k[i];
            }
            for (size_t i = 0; i < sd; ++i) {
              int64_t at = pos[i] * pr.stride[i] - pr.padding[i] + kp[i] * pr.dilation[i];
              inside = inside && at >= 0 && at < in[i];
              flat = flat * in[i] + at;
            }
            if (inside)
              acc += x.load_f64((bi * c + cin) * spatial + flat) *
                     w.load_f64((o * cg + ci) * kernel + q);
          }
        }
        y.store_f64((bi * co + o) * positions + p, acc);
      }
  return y;
}

void check_variant(const std::string& json, const Params& pr, double tolerance) {
  Fusion f = parse_text(json);
  const std::vector<std::map<std::string, int64_t>> at = {{{"N", 1}, {"H", 5}, {"W", 6}},
                                                          {{"N", 2}, {"H", 11}, {"W", 8}}};
  for (const auto& binding : at) {
    auto symbols = choose_symbol_values(f, binding);
    TensorMap inputs = make_random_inputs(f, symbols, 9);
    auto got = evaluate_fusion(f, inputs, "inputs");
    const HostTensor* b = inputs.count("b") ? &inputs.at("b") : nullptr;
    HostTensor want = pr.output_padding.empty()
                          ? reference(inputs.at("x"), inputs.at("w"), b, pr)
                          : reference_transposed(inputs.at("x"), inputs.at("w"), b, pr);
    const HostTensor& y = got.at(0).second;
    REQUIRE(y.shape() == want.shape());
    double worst = 0;
    for (int64_t i = 0; i < y.numel(); ++i)
      worst = std::max(worst, std::abs(y.load_f64(i) - want.load_f64(i)));
    INFO("H=" << symbols["H"] << " W=" << symbols["W"]);
    CHECK(worst <= tolerance);
  }
  check_graph(json, at, {false, false});
}

}  // namespace

TEST_CASE("conv: output extents, and what is refused naming the op", "[conv]") {
  Fusion f = parse_text(graph(input("x", "f16", R"(["N", 3, "H", "W"])") + ", " +
                                  input("w", "f16", "[8, 3, 7, 7]"),
                              R"({"op": "conv", "args": ["x", "w"], "stride": [2, 2],
                                  "padding": [3, 3], "out": "y"})",
                              R"("y")"));
  const Value& y = f.value(*f.find_value("y"));
  CHECK(shape_to_string(y.shape) == "[N, 8, (H + 1) / 2, (W + 1) / 2]");
  for (const Op& op : f.ops) CHECK(op.kind != OpKind::Conv);
  Fusion t = parse_text(graph(input("x", "f32", R"(["N", 4, "H", 5])") + ", " +
                                  input("w", "f32", "[4, 3, 3, 2]"),
                              R"({"op": "conv", "args": ["x", "w"], "stride": [2, 3],
                                  "padding": [1, 0], "output_padding": [1, 2], "groups": 2,
                                  "transposed": true, "out": "y"})",
                              R"("y")"));
  CHECK(shape_to_string(t.value(*t.find_value("y")).shape) == "[N, 6, H * 2, 16]");

  auto refused = [](const std::string& x, const std::string& w, const std::string& attrs,
                    const std::string& dtype = "f32") {
    return refusal(graph(input("x", dtype, x) + ", " + input("w", "f32", w),
                          R"({"op": "conv", "args": ["x", "w"], "out": "y")" + attrs + "}",
                          R"("y")"));
  };
  CHECK_THAT(refused("[2, 16, 8, 8]", "[32, 8, 3, 3]", ""),
             Catch::Contains("takes 8 input channels per group, but 'x' (f32[2, 16, 8, 8]) has "
                             "16 channels in 1 group"));
  CHECK_THAT(refused("[2, 10, 8, 8]", "[12, 2, 3, 3]", R"(, "groups": 5)"),
             Catch::Contains("groups 5 does not divide the 12 output channels"));
  CHECK_THAT(refused("[1, 2, 4, 4]", "[2, 2, 3, 3]", "", "i32"),
             Catch::Contains("'conv' takes floating operands"));
  CHECK_THAT(refused("[1, 2, 4, 4]", "[2, 2, 3, 3]", "", "f16"),
             Catch::Contains("must have one dtype"));
  CHECK_THAT(refused("[1, 1, 2, 2]", "[1, 1, 3, 3]", ""),
             Catch::Contains("the output extent 0 of spatial dim 0 is not positive for every binding"));
  CHECK_THAT(refused(R"([1, 1, "H", "W"])", "[1, 1, 5, 5]", ""),  // H >= 4: 5 - 1 too big
             Catch::Contains("is not positive for every binding (less 1: H = 4"));
  CHECK_THAT(refused("[1, 2, 8, 8]", "[2, 2, 3, 3]", R"(, "stride": [1])"),
             Catch::Contains("stride has 1 entry but the conv has 2 spatial dims"));
  CHECK_THAT(refused("[1, 2, 8, 8]", "[2, 2, 3, 3]", R"(, "dilation": [1, 0])"),
             Catch::Contains("dilation must be at least 1"));
  CHECK_THAT(refused("[1, 2, 8, 8]", "[2, 2, 3, 3]",
                     R"(, "transposed": true, "stride": [2, 2], "output_padding": [2, 0])"),
             Catch::Contains("output_padding 2 must be below the stride or the dilation"));
  CHECK_THAT(refused("[1, 2, 8, 8]", "[3, 2, 3, 3]", R"(, "transposed": true)"),
             Catch::Contains("of a transposed 'conv' is [C_in, C_out/groups, *kernel] with C_in 2"));
  CHECK_THAT(refused("[1, 1, 1, 1]", "[1, 1, 1, 1]", R"(, "transposed": true, "padding": [1, 1])"),
             Catch::Contains("the output extent -1 of spatial dim 0 is not positive"));
  CHECK_THAT(refused("[1, 2, 8, 8]", "[2, 2, 3]", ""),
             Catch::Contains("the input of 'conv' is [N, C_in, *spatial] with 1 spatial dims"));
  CHECK_THAT(refused(R"([1, "H", 8, 8])", "[2, 2, 3, 3]", ""),
             Catch::Contains("the channel extent of 'conv' must be an integer"));
}

TEST_CASE("conv variants: eval against a direct float64 convolution, the emulator against eval",
          "[conv][emulated]") {
  auto conv = [](const std::string& attrs, bool bias) {
    return std::string(R"({"op": "conv", "args": ["x", "w")") + (bias ? R"(, "b")" : "") +
           R"(], "out": "y")" + attrs + "}";
  };
  SECTION("2-D, stride 2, padding 3, a bias, bf16") {
    check_variant(graph(input("x", "bf16", R"(["N", 3, "H", "W"])") + ", " +
                            input("w", "bf16", "[4, 3, 5, 5]") + ", " + input("b", "bf16", "[4]"),
                        conv(R"(, "stride": [2, 2], "padding": [3, 3])", true), R"("y")"),
                  {{2, 2}, {3, 3}, {1, 1}}, 0.15);
  }
  SECTION("2-D, dilation 2 and groups 2, f32") {
    check_variant(graph(input("x", "f32", R"(["N", 4, "H", "W"])") + ", " +
                            input("w", "f32", "[6, 2, 3, 3]"),
                        conv(R"(, "dilation": [2, 1], "padding": [2, 1], "groups": 2)", false),
                        R"("y")"),
                  {{1, 1}, {2, 1}, {2, 1}, 2}, 1e-4);
  }
  SECTION("depthwise 3x3 then pointwise 1x1 stride 2, f64") {
    check_variant(graph(input("x", "f64", R"(["N", 3, "H", "W"])") + ", " +
                            input("w", "f64", "[3, 1, 3, 3]") + ", " + input("b", "f64", "[3]"),
                        conv(R"(, "padding": [1, 1], "groups": 3)", true), R"("y")"),
                  {{1, 1}, {1, 1}, {1, 1}, 3}, 1e-12);
    check_variant(graph(input("x", "f64", R"(["N", 3, "H", "W"])") + ", " +
                            input("w", "f64", "[5, 3, 1, 1]"),
                        conv(R"(, "stride": [2, 2])", false), R"("y")"),
                  {{2, 2}, {0, 0}, {1, 1}}, 1e-12);
  }
  SECTION("a channels-last input read through its strides, f16") {
    check_variant(graph(input("x", "f16", R"(["N", 3, "H", "W"])",
                              R"(, "strides": ["H*W*3", 1, "W*3", 3])") +
                            ", " + input("w", "f16", "[2, 3, 3, 3]"),
                        conv(R"(, "padding": [1, 1])", false), R"("y")"),
                  {{1, 1}, {1, 1}, {1, 1}}, 2e-2);
  }
  SECTION("1-D with stride and dilation; 3-D") {
    check_variant(graph(input("x", "f32", R"(["N", 2, "H"])") + ", " +
                            input("w", "f32", "[3, 2, 3]"),
                        conv(R"(, "stride": [2], "dilation": [2], "padding": [1])", false),
                        R"("y")"),
                  {{2}, {1}, {2}}, 1e-4);
    check_variant(graph(input("x", "f32", R"(["N", 2, 3, "H", "W"])") + ", " +
                            input("w", "f32", "[2, 2, 2, 3, 3]"),
                        conv(R"(, "padding": [1, 1, 0])", false), R"("y")"),
                  {{1, 1, 1}, {1, 1, 0}, {1, 1, 1}}, 1e-4);
  }
  SECTION("a kernel that tiles the input (a patch embedding): a reshape and a permute, no taps") {
    for (const char* attrs : {R"(, "stride": [3, 3])", R"(, "stride": [3, 3], "groups": 2)"}) {
      const bool grouped = std::string(attrs).find("groups") != std::string::npos;
      const std::string json =
          graph(input("x", "f32", R"(["N", 4, "H", "W"])") + ", " +
                    input("w", "f32", grouped ? "[6, 2, 3, 3]" : "[6, 4, 3, 3]") + ", " +
                    input("b", "f32", "[6]"),
                conv(attrs, true), R"("y")");
      Fusion f = parse_text(json);
      for (const Op& op : f.ops) CHECK(op.kind != OpKind::Cat);
      check_variant(json, {{3, 3}, {0, 0}, {1, 1}, grouped ? 2 : 1}, 1e-4);
    }
  }
  SECTION("transposed: stride 2 with output_padding and a bias, f32") {
    check_variant(graph(input("x", "f32", R"(["N", 3, "H", "W"])") + ", " +
                            input("w", "f32", "[3, 2, 3, 3]") + ", " + input("b", "f32", "[2]"),
                        conv(R"(, "transposed": true, "stride": [2, 2], "padding": [1, 1],
                                 "output_padding": [1, 0])",
                             true),
                        R"("y")"),
                  {{2, 2}, {1, 1}, {1, 1}, 1, {1, 0}}, 1e-4);
  }
  SECTION("transposed: groups 2, dilation 2, padding beyond the kernel (a crop), bf16") {
    check_variant(graph(input("x", "bf16", R"(["N", 4, "H", "W"])") + ", " +
                            input("w", "bf16", "[4, 3, 2, 3]"),
                        conv(R"(, "transposed": true, "groups": 2, "stride": [3, 1],
                                 "dilation": [1, 2], "padding": [2, 1], "output_padding": [2, 1])",
                             false),
                        R"("y")"),
                  {{3, 1}, {2, 1}, {1, 2}, 2, {2, 1}}, 0.15);
  }
  SECTION("transposed: 1-D and 3-D, f64") {
    check_variant(graph(input("x", "f64", R"(["N", 2, "H"])") + ", " +
                            input("w", "f64", "[2, 3, 4]"),
                        conv(R"(, "transposed": true, "stride": [2], "padding": [1])", false),
                        R"("y")"),
                  {{2}, {1}, {1}, 1, {0}}, 1e-12);
    check_variant(graph(input("x", "f64", R"(["N", 2, 2, "H", "W"])") + ", " +
                            input("w", "f64", "[2, 1, 2, 2, 2]"),
                        conv(R"(, "transposed": true, "stride": [2, 1, 2])", false), R"("y")"),
                  {{2, 1, 2}, {0, 0, 0}, {1, 1, 1}, 1, {0, 0, 0}}, 1e-12);
  }
}

namespace {

// Inline data for a constant of `n` values: a deterministic ramp around zero.
std::string ramp(int64_t n, double step, double from) {
  std::string s = "[";
  for (int64_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(from + step * (i % 17));
  return s + "]";
}

std::string constant(const std::string& name, const std::string& dtype, const std::string& shape,
                     int64_t n, double step, double from) {
  return input(name, dtype, shape, R"(, "data": )" + ramp(n, step, from));
}

// The name of the constant the (one) product reads on its left.
std::string scaled_weight(const Fusion& f) {
  for (const Op& op : f.ops)
    if (op.kind == OpKind::Matmul) {
      const Value& w = f.value(op.args[0].value);
      return w.is_constant() ? w.name : "not a constant";
    }
  return "no product";
}

int count_kind(const Fusion& f, OpKind kind) {
  int n = 0;
  for (const Op& op : f.ops) n += op.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("fold-batch-norm: an inference batch norm after a conv with constant weights is "
          "folded into them",
          "[conv][emulated]") {
  // conv (constant weight and bias) -> (y - mean) * rsqrt(var + eps) * gamma + beta -> relu;
  // `residual` adds the conv's result again, so that it has two readers.
  auto bn_graph = [](const std::string& dtype, bool residual) {
    return graph(input("x", dtype, R"(["N", 3, "H", "W"])") + ", " +
                     constant("w", dtype, "[4, 3, 3, 3]", 108, 0.05, -0.4) + ", " +
                     constant("cb", dtype, "[4]", 4, 0.1, -0.1) + ", " +
                     constant("mean", dtype, "[4, 1, 1]", 4, 0.2, -0.3) + ", " +
                     constant("var", dtype, "[4, 1, 1]", 4, 0.5, 0.25) + ", " +
                     constant("gamma", dtype, "[4, 1, 1]", 4, 0.3, 0.7) + ", " +
                     constant("beta", dtype, "[1, 4, 1, 1]", 4, -0.2, 0.1),
                 std::string(R"({"op": "conv", "args": ["x", "w", "cb"], "padding": [1, 1],
                                 "out": "c"},
                    {"op": "sub", "args": ["c", "mean"], "out": "centered"},
                    {"op": "add", "args": ["var", 1e-5], "out": "var_eps"},
                    {"op": "rsqrt", "args": ["var_eps"], "out": "inv"},
                    {"op": "mul", "args": ["centered", "inv"], "out": "normed"},
                    {"op": "mul", "args": ["gamma", "normed"], "out": "scaled"},
                    {"op": "add", "args": ["scaled", "beta"], "out": "bn"},
                    {"op": "relu", "args": ["bn"], "out": "r"})") +
                     (residual ? R"(, {"op": "add", "args": ["r", "c"], "out": "y"})" : ""),
                 residual ? R"("y")" : R"("r")");
  };
  auto passed = [](const std::string& json) {
    Fusion f = parse_text(json);
    PassContext ctx;
    run_presegmentation_passes(f, ctx);
    return f;
  };
  const Bindings at = {{{"N", 1}, {"H", 5}, {"W", 6}}, {{"N", 2}, {"H", 9}, {"W", 4}}};
  SECTION("f32 and bf16: one product and one bias add are left, and the plan matches eval") {
    for (const char* dtype : {"f32", "bf16"}) {
      INFO(dtype);
      const std::string json = bn_graph(dtype, false);
      Fusion f = passed(json);
      CHECK(count_kind(f, OpKind::Matmul) == 1);
      CHECK(count_kind(f, OpKind::Mul) == 0);
      CHECK(count_kind(f, OpKind::Sub) == 0);
      CHECK(count_kind(f, OpKind::Add) == 1);  // the conv's bias and beta - mean * scale
      CHECK(scaled_weight(f) == "c_weight_bn");
      CHECK_FALSE(f.find_value("w"));  // the unscaled weights are no longer in the package
      check_graph(json, at, {false, false});
    }
  }
  SECTION("a conv result read twice folds nothing") {
    Fusion f = passed(bn_graph("f32", true));
    CHECK(count_kind(f, OpKind::Mul) == 2);
    CHECK(scaled_weight(f) == "c_weight");
    check_graph(bn_graph("f32", true), at, {false, false});
  }
}

TEST_CASE("fold-batch-norm: what must not fold", "[conv]") {
  auto passed = [](const std::string& json) {
    Fusion f = parse_text(json);
    PassContext ctx;
    run_presegmentation_passes(f, ctx);
    return f;
  };
  auto weights = [](const Fusion& f) {
    for (const Op& op : f.ops)
      if (op.kind == OpKind::Matmul) {
        const Value& w = f.value(op.args[0].value);
        REQUIRE(w.is_constant());
        HostTensor t(w.dtype, {static_cast<int64_t>(w.constant->size() / dtype_size(w.dtype))});
        std::memcpy(t.data(), w.constant->data(), w.constant->size());
        std::vector<double> out;
        for (int64_t i = 0; i < t.numel(); ++i) out.push_back(t.load_f64(i));
        return out;
      }
    FAIL("no product");
    return std::vector<double>{};
  };
  // A step one channel cannot take (a division by zero) ends the chain for every channel:
  // the weights take the multiplication by 3 only.
  Fusion div = passed(R"({"fuserc": 1, "name": "d", "inputs": [
      {"name": "x", "dtype": "f32", "shape": [1, 2, 2, 2]},
      {"name": "w", "dtype": "f32", "shape": [2, 2, 1, 1], "data": [1, 2, 3, 4]},
      {"name": "d", "dtype": "f32", "shape": [2, 1, 1], "data": [4, 0]}],
      "ops": [{"op": "conv", "args": ["x", "w"], "out": "y"},
              {"op": "mul", "args": ["y", 3.0], "out": "z"},
              {"op": "div", "args": ["z", "d"], "out": "u"}], "outputs": ["u"]})");
  CHECK(weights(div) == std::vector<double>{3, 6, 9, 12});
  CHECK(count_kind(div, OpKind::Div) == 1);
  // A product whose reshape does not keep the batch first and the rows second is no conv's.
  const std::string plain = R"({"fuserc": 1, "name": "p", "inputs": [
      {"name": "x", "dtype": "f32", "shape": [2, 2, 4]},
      {"name": "w", "dtype": "f32", "shape": [3, 2], "data": [1, 0, 0, 1, 1, 1]},
      {"name": "s", "dtype": "f32", "shape": [3, 1], "data": [1, 10, 100]}],
      "ops": [{"op": "matmul", "args": ["w", "x"], "out": "m"},
              {"op": "reshape", "args": ["m"], "shape": [4, 3, 2], "out": "r"},
              {"op": "mul", "args": ["r", "s"], "out": "o"}], "outputs": ["o"]})";
  CHECK(count_kind(passed(plain), OpKind::Mul) == 1);
  check_graph(plain, {{}}, {false, false});
  // f16 weights scaled past 65504 (or below the normal range) stay unscaled.
  for (const char* factor : {"100.0", "1e-5"}) {
    INFO(factor);
    Fusion h = passed(std::string(R"({"fuserc": 1, "name": "h", "inputs": [
        {"name": "x", "dtype": "f16", "shape": [1, 2, 2, 2]},
        {"name": "w", "dtype": "f16", "shape": [2, 2, 1, 1], "data": [1000, 2000, 3000, 0.004]}],
        "ops": [{"op": "conv", "args": ["x", "w"], "out": "y"},
                {"op": "mul", "args": ["y", )") + factor + R"(], "out": "z"}], "outputs": ["z"]})");
    CHECK(count_kind(h, OpKind::Mul) == 1);
  }
}
