// The online log-sum-exp (core/schedule/online_lse.h, the preamble's fz_lse): a row's
// sum(exp(x - amax(x))) accumulates with the max in one pass. Cross-entropy and softmax read
// their rows once for the statistics (one loop over the row before the combine, phases 1; the
// split cross-entropy combines (m, s) partials across blocks); values match eval at row lengths
// around the bucket edges, in the multi-pass softmax bucket, with a grid split, for f32, f64,
// bf16 and f16, on the vector and the misaligned (scalar) paths; rows of -inf (masked softmax),
// +inf and NaN give the reference's NaN; results are the same bits on every run.
#include <catch2/catch.hpp>

#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

std::string corpus_graph(const std::string& name) {
  std::ifstream in(std::string(FUSERC_TEST_CORPUS_DIR) + "/" + name + ".json");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Softmax and its log-sum-exp over rows of H; f16/bf16 computed in f32 (cast in and out).
std::string softmax_graph(const std::string& dt) {
  const bool wide = dt == "f32" || dt == "f64";
  const std::string x = wide ? "x" : "xf";
  std::string ops = wide ? "" : R"({"op": "cast", "args": ["x"], "dtype": "f32", "out": "xf"}, )";
  ops += R"({"op": "amax", "args": [")" + x + R"("], "dims": [1], "keepdim": true, "out": "m"},
            {"op": "sub", "args": [")" +
         x + R"(", "m"], "out": "xs"},
            {"op": "exp", "args": ["xs"], "out": "e"},
            {"op": "sum", "args": ["e"], "dims": [1], "keepdim": true, "out": "s"},
            {"op": "log", "args": ["s"], "out": "ls"}, {"op": "add", "args": ["ls", "m"], "out": "lse"},
            {"op": "div", "args": ["e", "s"], "out": "p"})";
  if (!wide) ops += R"(, {"op": "cast", "args": ["p"], "dtype": ")" + dt + R"(", "out": "y"})";
  return graph("softmax_" + dt, R"("N": {"hint": 4}, "H": {"hint": 1024, "max": 1000000})",
               R"({"name": "x", "dtype": ")" + dt + R"(", "shape": ["N", "H"]})", ops,
               wide ? R"("p", "lse")" : R"("y", "lse")");
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

CompiledFusion compile_only(const std::string& json) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  return compile_fusion(parse_text(json), o, ctx);
}

// The kernel's own code (after the preamble).
std::string body(const KernelSummary& k) {
  size_t at = k.source.find("extern \"C\" __global__");
  REQUIRE(at != std::string::npos);
  return k.source.substr(at);
}

std::string param(const KernelSummary& k, const std::string& key) {
  for (const auto& [name, value] : k.scheduler_params)
    if (name == key) return value;
  return "";
}

// Runs `json` at `sizes` on random inputs that `edit` changes; every output must match eval in
// every memory mode, and a second run must give the same bits.
void check_edited(const std::string& json, const std::map<std::string, int64_t>& sizes,
                  const std::function<void(TensorMap&)>& edit) {
  Fusion f = parse_text(json);
  auto exe = compile_graph(f);
  TensorMap in = make_random_inputs(f, choose_symbol_values(f, sizes), 23);
  edit(in);
  auto want = evaluate_fusion(f, in, "inputs");
  for (const auto& mode : memory_modes()) {
    EmulatorDevice device({}, mode);
    auto got = run_package(*exe, device, in, "inputs");
    auto again = run_package(*exe, device, in, "inputs");
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("graph " << f.name << ", output " << want[i].first << ", misalign "
                    << mode.misalign_bytes);
      CHECK(compare_tensors(got[i].second, want[i].second) == "");
      CHECK(again[i].second.bytes() == got[i].second.bytes());
    }
  }
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("cross-entropy and softmax read each row once for the max and the sum of exp",
          "[emulated][online]") {
  CompiledFusion ce = compile_only(corpus_graph("cross_entropy_fwd_bf16"));
  REQUIRE(ce.kernels.size() == 4);  // s8, s32, s256, i64
  for (const auto& k : ce.kernels) {
    INFO("kernel " << k.name);
    const std::string src = body(k);
    CHECK(param(k, "phases") == "1");
    // One loop over the row, folding every logit into (m, s); one combine across the row.
    CHECK(count(src, "fz_lse_push(") == (k.name.ends_with("_i64") ? 1 : 2));
    CHECK(count(src, "fz_row_reduce<") ==
          (k.name.ends_with("_s256") || k.name.ends_with("_i64") ? 2 : 1));
    CHECK(src.find("fz_max_op") == std::string::npos);
    CHECK(src.find("fz_sum_op") == std::string::npos);
    // Each path reads the logits once in the row loop, plus the target's logit.
    CHECK(count(src, "reinterpret_cast<const fz_vec<__nv_bfloat16, 8>*>(logits") ==
          (k.name.ends_with("_i64") ? 0 : 1));
    CHECK(count(src, "logits[") == 2);
  }
  // Long rows, few of them: the row is split across blocks, (m, s) partials combined.
  const KernelSummary& s256 = ce.kernels[2];
  REQUIRE(s256.name.ends_with("_s256"));
  CHECK(s256.grid_reduction);
  CHECK(body(s256).find("fz_lse<float>* partials_m") != std::string::npos);
  CHECK(body(s256).find("fz_lse_combine(acc_m, fz_load_cg(partials_m") != std::string::npos);

  // Softmax streaming (multi): the stats pass and the output pass, not three passes.
  CompiledFusion sm = compile_only(softmax_graph("f32"));
  const KernelSummary* multi = nullptr;
  for (const auto& k : sm.kernels)
    if (k.name.ends_with("_multi")) multi = &k;
  REQUIRE(multi != nullptr);
  CHECK(param(*multi, "phases") == "1");
  const std::string src = body(*multi);
  CHECK(count(src, "reinterpret_cast<const fz_vec<float, 4>*>(x") == 2);
  CHECK(count(src, "x[k") == 2);
  CHECK(count(src, "fz_row_reduce<") == 1);
}

TEST_CASE("a sum of exp of something other than x - max(x) keeps its own phase",
          "[emulated][online]") {
  // exp(y - max(x)) and exp(max(x) - x) are not a log-sum-exp of x.
  const std::string sym = R"("N": {"hint": 4}, "H": {"hint": 100})";
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": ["N", "H"]},
                            {"name": "y", "dtype": "f32", "shape": ["N", "H"]})";
  for (const char* diff : {R"(["y", "m"])", R"(["m", "x"])"}) {
    INFO("sub " << diff);
    std::string json = graph(
        "not_lse", sym, in,
        std::string(R"({"op": "amax", "args": ["x"], "dims": [1], "keepdim": true, "out": "m"},
                 {"op": "sub", "args": )") +
            diff + R"(, "out": "d"}, {"op": "exp", "args": ["d"], "out": "e"},
                 {"op": "sum", "args": ["e"], "dims": [1], "out": "s"})",
        R"("s")");
    CompiledFusion c = compile_only(json);
    for (const auto& k : c.kernels) {
      CHECK(param(k, "phases") == "2");
      CHECK(body(k).find("fz_lse") == std::string::npos);
    }
    check_graph(json, {{{"N", 3}, {"H", 37}}}, {.every_memory_mode = false});
  }
}

TEST_CASE("cross-entropy at vocabularies around the bucket edges and split across blocks",
          "[emulated][online]") {
  const std::string ce = corpus_graph("cross_entropy_fwd_bf16");
  // s8 takes V <= 64, s32 V <= 4096; odd lengths take the scalar path, misaligned buffers too.
  Bindings sizes;
  for (int64_t v : {1, 2, 7, 63, 64, 65, 4095, 4096, 4097}) sizes.push_back({{"N", 3}, {"V", v}});
  check_graph(ce, sizes);
  // Few long rows: s256 with several blocks per row.
  auto exe = compile_graph(parse_text(ce));
  for (auto [n, v] : {std::pair<int64_t, int64_t>{1, 65536}, {2, 50001}, {3, 131072}}) {
    auto b = bind_named(*exe, {{"N", n}, {"V", v}});
    const fb::Kernel* k = exe->metadata().kernels()->Get(b->kernel_of[0]);
    INFO("kernel " << k->name()->str() << " at N=" << n << " V=" << v);
    CHECK(k->name()->str().ends_with("_s256"));
    CHECK(b->slot(k->grid()->Get(1)) > 1);
  }
  check_graph(ce, {{{"N", 1}, {"V", 65536}}, {{"N", 2}, {"V", 50001}}, {{"N", 3}, {"V", 131072}}},
              {.every_memory_mode = false});
}

TEST_CASE("softmax with the online statistics for f32, f64, bf16 and f16, in every bucket",
          "[emulated][online]") {
  for (const char* dt : {"f32", "f64", "bf16", "f16"}) {
    INFO("dtype " << dt);
    const std::string json = softmax_graph(dt);
    // Persistent buckets around their edges, then the multi-pass bucket (rows longer than
    // 1024 threads x 32 elements), vector (36000) and scalar (33001) paths.
    Bindings sizes;
    for (int64_t h : {1, 3, 8, 9, 127, 1025}) sizes.push_back({{"N", 5}, {"H", h}});
    check_graph(json, sizes);
    auto launched = check_graph(json, {{{"N", 2}, {"H", 36000}}, {{"N", 2}, {"H", 33001}}},
                                {.every_memory_mode = false});
    for (const auto& names : launched) {
      REQUIRE(names.size() == 1);
      CHECK(names[0].ends_with("_multi"));
    }
  }
}

TEST_CASE("rows of -inf, +inf and NaN give the reference's results, the same bits every run",
          "[emulated][online]") {
  // Masked softmax: row 0 entirely masked (-inf: NaN, as the reference), row 1 all but one
  // element, row 2 with every other element masked.
  const std::string masked = corpus_graph("masked_softmax_neg_inf_f16");
  for (int64_t s : {5, 64, 1000, 16383}) {
    INFO("S " << s);
    check_edited(masked, {{"N", 4}, {"S", s}}, [s](TensorMap& in) {
      HostTensor& keep = in.at("keep");
      for (int64_t k = 0; k < s; ++k) {
        keep.store_i64(k, 0);
        keep.store_i64(s + k, k == s / 2);
        keep.store_i64(2 * s + k, k % 2);
      }
    });
  }
  // Cross-entropy: a row of -inf, one with a -inf and a +inf, one with a NaN, one whose
  // -inf elements come first (partials of -inf combined with finite ones), one ordinary.
  const std::string ce = corpus_graph("cross_entropy_fwd_bf16");
  for (int64_t v : {9, 64, 3000, 70001}) {
    INFO("V " << v);
    check_edited(ce, {{"N", 5}, {"V", v}}, [v](TensorMap& in) {
      HostTensor& x = in.at("logits");
      for (int64_t k = 0; k < v; ++k) {
        x.store_f64(k, -kInf);
        if (k == v / 3) x.store_f64(v + k, -kInf);
        if (k == v - 1) x.store_f64(v + k, kInf);
        if (k == v / 2) x.store_f64(2 * v + k, kNaN);
        if (k < v / 2) x.store_f64(3 * v + k, -kInf);
      }
    });
  }
}
