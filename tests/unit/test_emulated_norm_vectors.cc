// The vector path of normalizations and contiguous row reductions (16-byte loads of the row,
// stores of the full outputs, behind a per-row test) and its scalar fallback: the generated
// code has both; softmax, log-softmax, layer norm, RMS norm and softmax backward (f32, bf16,
// f16) and sums / var_mean agree with the reference at row lengths around the vector width and
// the common model widths, with several rows per block, with aligned and misaligned buffers,
// and through a slice whose rows start at odd offsets (rows of one block on different paths).
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

// V - 1, V, V + 1, 2V +- 1 for V = 4 (f32) and 8 (bf16, f16), and model widths.
const std::vector<int64_t> kEdgeLengths = {3, 4, 5, 7, 8, 9, 15, 17, 768, 1000, 1024, 1025};

const KernelSummary* kernel_ending(const CompiledFusion& c, const std::string& suffix) {
  for (const auto& k : c.kernels)
    if (k.name.size() > suffix.size() &&
        k.name.compare(k.name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return &k;
  return nullptr;
}

}  // namespace

TEST_CASE("normalization buckets load and store rows with 16-byte vectors behind a row test",
          "[emulated][vector]") {
  const std::map<std::string, std::string> vec_of = {{"softmax", "fz_vec<float, 4>"},
                                                     {"log_softmax", "fz_vec<__nv_bfloat16, 8>"},
                                                     {"layer_norm", "fz_vec<__half, 8>"},
                                                     {"rms_norm", "fz_vec<__nv_bfloat16, 8>"},
                                                     {"softmax_bwd", "fz_vec<__half, 8>"}};
  for (const auto& [name, json] : normalization_graphs()) {
    INFO("graph " << name);
    PassContext ctx;
    CompileOptions o;
    o.run_nvrtc = false;
    CompiledFusion c = compile_fusion(parse_text(json), o, ctx);
    for (const char* bucket : {"_t8", "_t128"}) {
      const KernelSummary* k = kernel_ending(c, bucket);
      REQUIRE(k != nullptr);
      INFO("kernel " << k->name);
      const std::string& s = k->source;
      // The per-row test, a vector load of the row and a vector store of the result.
      CHECK(s.find("const bool vec_ok = ") != std::string::npos);
      CHECK(s.find("if (vec_ok) {") != std::string::npos);
      CHECK(s.find("= *reinterpret_cast<const " + vec_of.at(name) + "*>") != std::string::npos);
      CHECK(s.find("*reinterpret_cast<" + vec_of.at(name) + "*>") != std::string::npos);
      // The row length a multiple of the width (H is a symbol).
      const bool f32 = vec_of.at(name) == "fz_vec<float, 4>";
      CHECK(s.find(f32 ? "H % 4 == 0" : "H % 8 == 0") != std::string::npos);
    }
    // The multi-pass bucket streams groups of V (with the same test); the 64-bit variant stays
    // scalar.
    const KernelSummary* multi = kernel_ending(c, "_multi");
    REQUIRE(multi != nullptr);
    CHECK(multi->source.find("if (vec_ok) {") != std::string::npos);
    const KernelSummary* wide = kernel_ending(c, "_i64");
    REQUIRE(wide != nullptr);
    CHECK(wide->source.find("vec_ok") == std::string::npos);
  }
}

TEST_CASE("normalizations at row lengths around the vector width, aligned and misaligned",
          "[emulated][vector]") {
  for (const auto& [name, json] : normalization_graphs()) {
    INFO("graph " << name);
    Bindings sizes;
    // 37 rows: t8 takes 16 rows per block (a partial last block), t32 4.
    for (int64_t h : kEdgeLengths) sizes.push_back({{"N", h >= 768 ? 5 : 37}, {"H", h}});
    check_graph(json, sizes);  // every memory mode: misaligned buffers take the scalar path
  }
}

TEST_CASE("normalizations over a slice whose rows start at odd offsets", "[emulated][vector]") {
  // Rows of x[:, 1:] start at row * H + 1: with H = 1025 (rows of 1024) the rows with
  // row % 8 == 7 are aligned for 8 bf16 elements and the others not, so rows of one block
  // take different paths; H = 9 and 17 do the same with t8 blocks of 16 rows.
  const std::string sym = R"("N": {"hint": 4}, "H": {"hint": 1025, "min": 2})";
  std::string json = graph(
      "sliced_rms", sym,
      R"({"name": "x", "dtype": "bf16", "shape": ["N", "H"]}, {"name": "w", "dtype": "bf16", "shape": ["N", "H"]})",
      R"({"op": "slice", "args": ["x"], "starts": [0, 1], "ends": ["N", "H"], "out": "xs"},
         {"op": "slice", "args": ["w"], "starts": [0, 1], "ends": ["N", "H"], "out": "ws"},
         {"op": "cast", "args": ["xs"], "dtype": "f32", "out": "xf"},
         {"op": "mul", "args": ["xf", "xf"], "out": "sq"},
         {"op": "mean", "args": ["sq"], "dims": [1], "keepdim": true, "out": "ms"},
         {"op": "add", "args": ["ms", 1e-6], "out": "mse"}, {"op": "rsqrt", "args": ["mse"], "out": "r"},
         {"op": "mul", "args": ["xf", "r"], "out": "xn"}, {"op": "cast", "args": ["xn"], "dtype": "bf16", "out": "xb"},
         {"op": "mul", "args": ["xb", "ws"], "out": "y"})",
      R"("y")");
  check_graph(json, {{{"N", 37}, {"H", 9}},
                     {{"N", 37}, {"H", 17}},
                     {{"N", 19}, {"H", 1025}},
                     {{"N", 19}, {"H", 769}},
                     {{"N", 5}, {"H", 1024}}});
}

TEST_CASE("row reductions at row lengths around the vector width, aligned and misaligned",
          "[emulated][vector]") {
  const std::string sym = R"("N": {"hint": 4, "min": 0}, "L": {"hint": 100, "min": 0})";
  Bindings inner;
  // s8 (37 rows: 32 per block), s32 and s256 (split across blocks past 4096 per row).
  for (int64_t l : {3, 4, 5, 7, 8, 9, 15, 17, 63, 64, 65, 768, 1000, 1025})
    inner.push_back({{"N", 37}, {"L", l}});
  inner.push_back({{"N", 2}, {"L", 8192}});
  inner.push_back({{"N", 2}, {"L", 8200}});
  for (const char* dt : {"f32", "bf16", "f16"}) {
    INFO("dtype " << dt);
    std::string json =
        graph("vec_edges", sym,
              std::string(R"({"name": "x", "dtype": ")") + dt + R"(", "shape": ["N", "L"]})",
              R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                                {"op": "var_mean", "args": ["x"], "dims": [1], "out": ["v", "m"]})",
              R"("s", "v", "m")");
    PassContext ctx;
    CompileOptions o;
    o.run_nvrtc = false;
    CompiledFusion c = compile_fusion(parse_text(json), o, ctx);
    for (const char* bucket : {"_s8", "_s32", "_s256"}) {
      const KernelSummary* k = kernel_ending(c, bucket);
      REQUIRE(k != nullptr);
      CHECK(k->source.find("if (vec_ok) {") != std::string::npos);
    }
    check_graph(json, inner);  // every memory mode
  }
}
