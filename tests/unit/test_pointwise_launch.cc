// Launch configuration of pointwise and transpose kernels, without a GPU: every launch
// dimension is an expression over the symbols that does not depend on the graph's hints
// (hints steer segmentation only), and at large sizes every launch can fill an H100 (at least
// 2 x 132 blocks of at least 128 threads, or at most 16 elements per thread). Also the code
// shape these launches rely on: transposes through shared-memory tiles, one Philox block per
// group of random elements.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "codegen/compile_fusion.h"
#include "core/base/diagnostics.h"
#include "test_util.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

constexpr int64_t kSms = 132;  // an H100 SXM

std::string read_file_text(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> corpus_graphs() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(FUSERC_TEST_CORPUS_DIR))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The graph compiled to CUDA (no NVRTC), or nothing when fuserc refuses it.
std::optional<CompiledFusion> compile(const Fusion& f) {
  try {
    PassContext ctx;
    CompileOptions o;
    o.run_nvrtc = false;
    return compile_fusion(f, o, ctx);
  } catch (const UserError&) {
    return std::nullopt;
  }
}

using Symbols = std::map<std::string, int64_t>;

int64_t eval_at(const Expr& e, const Symbols& s) {
  return evaluate(e, [&](const std::string& n) -> std::optional<int64_t> {
    auto it = s.find(n);
    if (it != s.end()) return it->second;
    // Reduction grids in the same plans read the device (an H100 SXM's SM count).
    if (n == "device.sm_count") return int64_t{132};
    return std::nullopt;
  });
}

struct Launch {
  std::string kernel;
  SchedulerKind scheduler;
  int64_t grid[3], block[3];
  int64_t elements;  // of the kernel's iteration domain
  bool operator==(const Launch& o) const {
    return kernel == o.kernel && std::equal(grid, grid + 3, o.grid) &&
           std::equal(block, block + 3, o.block);
  }
};

// The launches of the plan at symbol values `s` (the first variant whose condition holds).
std::vector<Launch> launches(const CompiledFusion& c, const Symbols& s) {
  std::vector<Launch> out;
  for (const auto& step : c.plan) {
    if (step.library >= 0) continue;  // a library step launches no kernel of ours
    size_t v = 0;
    while (v + 1 < step.kernels.size() && eval_at(step.conditions[v], s) == 0) ++v;
    const KernelSummary& k = c.kernels[step.kernels[v]];
    const Segment& seg = c.segmented.segments[step.segments[0]];
    Launch l{k.name, k.scheduler, {}, {}, eval_at(c.fusion.value(seg.outputs[0]).numel(), s)};
    for (int d = 0; d < 3; ++d) {
      l.grid[d] = eval_at(k.grid[d], s);
      l.block[d] = eval_at(k.block[d], s);
    }
    out.push_back(l);
  }
  return out;
}

bool pointwise_like(SchedulerKind k) {
  return k == SchedulerKind::Pointwise || k == SchedulerKind::Transpose;
}

int64_t traffic(const Fusion& f, const Symbols& s) {
  int64_t bytes = 0;
  for (ValueId v : f.inputs)
    bytes += eval_at(f.value(v).numel(), s) * static_cast<int64_t>(dtype_size(f.value(v).dtype));
  for (ValueId v : f.outputs)
    bytes += eval_at(f.value(v).numel(), s) * static_cast<int64_t>(dtype_size(f.value(v).dtype));
  return bytes;
}

// The independent launcher's large binding (../shared/tools/gpu/prep.py): symbols that are some
// input's innermost extent at least 1024, then the others doubled in order of appearance until
// inputs and outputs move `target` bytes.
Symbols large_binding(const Fusion& f, int64_t target) {
  Symbols s;
  for (const auto& d : f.symbols) s[d.name] = d.hint;
  std::vector<std::string> order;
  std::set<std::string> inner;
  for (ValueId v : f.inputs) {
    const auto& shape = f.value(v).shape;
    if (!shape.empty() && shape.back().is_symbol()) inner.insert(shape.back().name());
  }
  for (const auto& d : f.symbols)
    if (inner.count(d.name)) s[d.name] = std::min(d.max, std::max(s[d.name], int64_t{1024}));
  for (ValueId v : f.inputs)
    for (const auto& e : f.value(v).shape)
      if (e.is_symbol() && !inner.count(e.name()) &&
          std::find(order.begin(), order.end(), e.name()) == order.end())
        order.push_back(e.name());
  for (const auto& name : order) {
    int64_t hi = 0;
    for (const auto& d : f.symbols)
      if (d.name == name) hi = d.max;
    while (traffic(f, s) < target && s[name] * 2 <= hi) s[name] *= 2;
  }
  return s;
}

}  // namespace

TEST_CASE("pointwise and transpose launches do not depend on the hints", "[launch]") {
  int checked = 0;
  for (const auto& path : corpus_graphs()) {
    Fusion f = parse_text(read_file_text(path));
    Fusion g = f;
    // Other hints: small where they were large and the other way round.
    for (auto& sym : g.symbols) sym.hint = sym.hint > 64 ? 3 : std::min(sym.max, int64_t{50000});
    auto a = compile(f), b = compile(g);
    if (!a) continue;
    REQUIRE(b);
    bool all_pointwise = true;
    for (const auto& k : a->kernels) all_pointwise = all_pointwise && pointwise_like(k.scheduler);
    if (!all_pointwise) continue;
    INFO("graph " << f.name);
    for (const Symbols& s : {large_binding(f, int64_t{256} << 20), large_binding(f, 1 << 16)}) {
      std::vector<Launch> la = launches(*a, s), lb = launches(*b, s);
      REQUIRE(la.size() == lb.size());
      for (size_t i = 0; i < la.size(); ++i) {
        INFO("launch " << i << ": " << la[i].kernel << " / " << lb[i].kernel);
        CHECK(la[i] == lb[i]);
      }
    }
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("at large sizes every pointwise and transpose launch can fill an H100", "[launch]") {
  int checked = 0;
  for (const auto& path : corpus_graphs()) {
    Fusion f = parse_text(read_file_text(path));
    auto c = compile(f);
    if (!c) continue;
    Symbols s = large_binding(f, int64_t{256} << 20);
    for (const Launch& l : launches(*c, s)) {
      if (!pointwise_like(l.scheduler)) continue;
      int64_t blocks = l.grid[0] * l.grid[1] * l.grid[2];
      int64_t threads = l.block[0] * l.block[1] * l.block[2];
      INFO("graph " << f.name << ", " << l.kernel << ": " << blocks << " blocks of " << threads
                    << " threads over " << l.elements << " elements");
      CHECK(threads >= 128);  // any size: small blocks would cap an SM at half its threads
      if (l.elements >= (int64_t{1} << 20))
        CHECK(((blocks >= 2 * kSms) || l.elements <= 16 * blocks * threads));
      ++checked;
    }
  }
  // (int_ops' pointwise work runs in its grid-split sum: test_launch_shapes.cc.)
  CHECK(checked >= 11);
}

TEST_CASE("transposes run through tiles, small extents through the pointwise kernel", "[launch]") {
  Fusion f =
      parse_text(read_file_text(std::string(FUSERC_TEST_CORPUS_DIR) + "/transpose_add.json"));
  auto c = compile(f);
  REQUIRE(c);
  REQUIRE(c->segmented.segments.size() == 1);
  CHECK(c->segmented.segments[0].scheduler == SchedulerKind::Transpose);
  // A and B are symbols of range [1, ...]: tile kernels, then pointwise kernels for extents
  // the tiles would mostly idle on.
  std::vector<std::string> names;
  for (int k : c->plan[0].kernels) names.push_back(c->kernels[k].name);
  CHECK(names == std::vector<std::string>{"transpose_add_k0_tile_i32", "transpose_add_k0_tile_i64",
                                          "transpose_add_k0_i32", "transpose_add_k0_i64"});
  // z[A, B] = x + y^T: tiles over (A, B), 32 x 32, blocks of 32 x 8 threads.
  Launch big = launches(*c, {{"A", 65536}, {"B", 1024}})[0];
  CHECK(big.kernel == "transpose_add_k0_tile_i32");
  CHECK(big.grid[0] == 2048 * 32);
  CHECK(big.block[0] == 32);
  CHECK(big.block[1] == 8);
  CHECK(launches(*c, {{"A", 65536}, {"B", 8}})[0].kernel == "transpose_add_k0_i32");
  CHECK(launches(*c, {{"A", 4}, {"B", 4096}})[0].kernel == "transpose_add_k0_i32");

  // A permute that keeps the innermost dimension is not a transpose; constant extents give
  // the tile kernel only.
  f = parse_text(
      read_file_text(std::string(FUSERC_TEST_CORPUS_DIR) + "/permute_gelu_exp_cos.json"));
  c = compile(f);
  REQUIRE(c);
  CHECK(c->segmented.segments[0].scheduler == SchedulerKind::Transpose);
  for (int k : c->plan[0].kernels) CHECK(c->kernels[k].name.find("_tile") != std::string::npos);
  Launch p = launches(*c, {{"B", 16384}})[0];
  CHECK(p.grid[0] == 16384 * 2 * 3);  // [B, 96, 64]: tiles of (96, 64)
  for (const char* name : {"split_heads_scale", "rope_bf16"}) {
    INFO(name);
    f = parse_text(read_file_text(std::string(FUSERC_TEST_CORPUS_DIR) + "/" + name + ".json"));
    c = compile(f);
    REQUIRE(c);
    for (const auto& seg : c->segmented.segments) CHECK(seg.scheduler == SchedulerKind::Pointwise);
  }
}

TEST_CASE("random draws fill one Philox block per group of elements", "[launch]") {
  Fusion f = parse_text(
      read_file_text(std::string(FUSERC_TEST_CORPUS_DIR) + "/dropout_residual_bf16.json"));
  auto c = compile(f);
  REQUIRE(c);
  for (const auto& k : c->kernels) {
    std::string body = k.source.substr(k.source.find("extern \"C\" __global__"));
    INFO(body);
    // No per-element draw: a block per 4 lanes on the vector path (lanes 0 and 4 of 8), once
    // per group on the scalar path.
    CHECK(body.find("fuserc_rand_f32(") == std::string::npos);
    CHECK(body.find("if (lane % 4 == 0) {\n        fuserc_philox_fill(") != std::string::npos);
    CHECK(body.find("fuserc_rand_f32_of(") != std::string::npos);
  }
}
