// Launch shapes of reduction and normalization kernels at large bindings, read off the bound
// package without a GPU: the compiled variant the launch picks, its grid and block, and the
// grid split, which follows the device's SM count; none of it follows the hints.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using coverage::graph;

namespace {

std::string corpus_graph(const std::string& name) {
  std::ifstream in(std::string(FUSERC_TEST_CORPUS_DIR) + "/" + name + ".json");
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Launch {
  std::string kernel;
  int64_t grid[3], block[3];
};

// The launches of a plan bound to `values` on a device of `sms` SMs.
std::vector<Launch> launches(const std::string& json,
                             const std::map<std::string, int64_t>& values, int64_t sms = 132) {
  auto exe = compile_graph(parse_text(json));
  std::vector<int64_t> v;
  for (const auto& s : exe->symbol_ranges()) v.push_back(values.at(s.name));
  DeviceProps device;
  device.sm_count = sms;
  auto b = exe->bind(v, device);
  std::vector<Launch> out;
  for (uint32_t ki : b->kernel_of) {
    const fb::Kernel* k = exe->metadata().kernels()->Get(ki);
    Launch l{k->name()->str(), {}, {}};
    for (int d = 0; d < 3; ++d) {
      l.grid[d] = b->slot(k->grid()->Get(d));
      l.block[d] = b->slot(k->block()->Get(d));
    }
    out.push_back(l);
  }
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A graph whose only symbol hint is replaced.
std::string with_hint(std::string json, const std::string& from, const std::string& to) {
  size_t at = json.find(from);
  REQUIRE(at != std::string::npos);
  return json.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("a whole-tensor sum is split over about 4 blocks per SM of the bound device",
          "[launch]") {
  // int_ops: the sum writes the pointwise results beside it during its pass (one kernel), with
  // the launch the sum alone would have.
  std::string json = corpus_graph("int_ops");
  auto at132 = launches(json, {{"N", 33554432}});
  REQUIRE(at132.size() == 1);
  const Launch& sum = at132[0];
  INFO(sum.kernel);
  CHECK(ends_with(sum.kernel, "_s256"));
  CHECK(sum.grid[0] == 1);
  CHECK(sum.grid[1] == 4 * 132);
  CHECK(sum.block[0] == 256);
  CHECK(launches(json, {{"N", 33554432}}, 108)[0].grid[1] == 4 * 108);
  // A short tensor is not split past 16 elements per thread.
  CHECK(launches(json, {{"N", 10000}})[0].grid[1] == 2);
  CHECK(launches(json, {{"N", 5000}})[0].grid[1] == 1);
  CHECK(launches(json, {{"N", 1}})[0].grid[1] == 1);
}

TEST_CASE("an outer reduction over few columns is split over the reduced rows", "[launch]") {
  std::string json = corpus_graph("batchnorm_stats");  // var_mean of [N, 64] over N
  auto l = launches(json, {{"N", 2105344}});
  REQUIRE(l.size() == 1);
  INFO(l[0].kernel);
  CHECK(l[0].grid[0] == 2);  // 64 columns, 32 per block
  CHECK(l[0].grid[1] == 264);
  CHECK(l[0].block[0] * l[0].block[1] == 256);
  CHECK(launches(json, {{"N", 2105344}}, 108)[0].grid[1] == 216);
  // Many reduced rows are needed before a split: 16 per thread row.
  CHECK(launches(json, {{"N", 100}})[0].grid[1] == 1);
}

TEST_CASE("normalizations fit threads to the bound row, whatever the hint", "[launch]") {
  std::string json = corpus_graph("rms_norm_fwd_bf16");  // hint H = 512
  auto l = launches(json, {{"N", 196608}, {"H", 1024}});
  REQUIRE(l.size() == 1);
  INFO(l[0].kernel);
  // 128 threads per row of 1024, 8 elements each (below 512 threads a thread caches at most 8:
  // more rows resident, more bytes in flight).
  CHECK(ends_with(l[0].kernel, "_t128"));
  CHECK(l[0].grid[0] == 196608);
  CHECK(l[0].block[0] == 128);
  CHECK(l[0].block[1] == 1);
  // Short rows: 8 threads per row, 16 rows per block; long ones: more threads per row.
  CHECK(ends_with(launches(json, {{"N", 1000}, {"H", 40}})[0].kernel, "_t8"));
  CHECK(launches(json, {{"N", 1000}, {"H", 40}})[0].block[1] == 16);
  CHECK(ends_with(launches(json, {{"N", 100}, {"H", 8192}})[0].kernel, "_t512"));
  CHECK(ends_with(launches(json, {{"N", 4}, {"H", 40000}})[0].kernel, "_multi"));
  // The same launch under other hints.
  for (const char* hint : {"\"hint\": 4096", "\"hint\": 8"}) {
    auto other = launches(with_hint(json, "\"hint\": 512", hint), {{"N", 196608}, {"H", 1024}});
    REQUIRE(other.size() == 1);
    CHECK(other[0].kernel == l[0].kernel);
    for (int d = 0; d < 3; ++d) {
      CHECK(other[0].grid[d] == l[0].grid[d]);
      CHECK(other[0].block[d] == l[0].block[d]);
    }
  }
}

TEST_CASE("reductions over many short rows pack rows into blocks", "[launch]") {
  const std::string sym = R"("N": {"hint": 4}, "L": {"hint": 1000})";
  std::string json = graph("rows", sym, R"({"name": "x", "dtype": "f32", "shape": ["N", "L"]})",
                           R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"})", R"("s")");
  auto s8 = launches(json, {{"N", 1 << 20}, {"L", 32}});
  CHECK(ends_with(s8[0].kernel, "_s8"));
  CHECK(s8[0].block[0] * s8[0].block[1] == 256);
  CHECK(s8[0].grid[0] == (1 << 20) / 32);
  auto s32 = launches(json, {{"N", 1 << 16}, {"L", 1024}});
  CHECK(ends_with(s32[0].kernel, "_s32"));
  CHECK(s32[0].grid[1] == 1);
  // Few long rows: split so that about 4 x 132 blocks work.
  auto s256 = launches(json, {{"N", 8}, {"L", 1 << 22}});
  CHECK(ends_with(s256[0].kernel, "_s256"));
  CHECK(s256[0].grid[0] == 8);
  CHECK(s256[0].grid[1] == 66);
}

TEST_CASE("a normalization over few long rows is a split reduction and a pointwise pass",
          "[launch]") {
  // Batch norm in training: 64 channels of N*H*W elements. One block per channel would put 64
  // blocks on a 132-SM GPU, each walking 1.8M elements twice.
  std::string json = corpus_graph("batchnorm_train_fwd_f32");
  const std::map<std::string, int64_t> big = {{"N", 256}, {"H", 14}, {"W", 512}};
  const int64_t elements = 256 * 64 * 14 * 512;
  auto l = launches(json, big);
  REQUIRE(l.size() == 2);
  INFO(l[0].kernel << ", " << l[1].kernel);
  // The statistics (and the running-stat updates on them): rows split across blocks, enough
  // blocks for every SM twice over.
  CHECK(l[0].grid[0] == 64);
  CHECK(l[0].grid[0] * l[0].grid[1] >= 2 * 132);
  CHECK(l[0].block[0] * l[0].block[1] >= 128);
  // The normalized output: a pointwise pass over every element, at most 16 per thread.
  const int64_t threads = l[1].grid[0] * l[1].grid[1] * l[1].block[0] * l[1].block[1];
  CHECK(elements <= 16 * threads);
  // At 8 channels (a statistics-only batch norm over [N, 8, H, W]) the split gives each row
  // more blocks.
  const std::string eight = R"({"fuserc": 1, "name": "bn8",
      "symbols": {"N": {"hint": 4, "max": 4096}, "H": {"hint": 14, "max": 512},
                  "W": {"hint": 14, "max": 512}},
      "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", 8, "H", "W"]}],
      "ops": [{"op": "var_mean", "args": ["x"], "out": ["v", "m"], "dims": [0, 2, 3],
               "keepdim": true, "correction": 0},
              {"op": "sub", "args": ["x", "m"], "out": "d"},
              {"op": "add", "args": ["v", 1e-05], "out": "ve"},
              {"op": "rsqrt", "args": ["ve"], "out": "r"},
              {"op": "mul", "args": ["d", "r"], "out": "y"}],
      "outputs": ["y"]})";
  auto l8 = launches(eight, {{"N", 64}, {"H", 64}, {"W", 256}});
  REQUIRE(l8.size() == 2);
  CHECK(l8[0].grid[0] == 8);
  CHECK(l8[0].grid[0] * l8[0].grid[1] >= 2 * 132);
}
