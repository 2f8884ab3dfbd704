// End-to-end tests of transpose kernels (see emulated_check.h): operands read transposed go
// through shared-memory tiles, the rest of the element computation is fused. Extents around
// the tile (1, 31, 32, 33 and long ones) on both dimensions, so partial tiles and the
// pointwise kernels chosen for small extents both run; every dtype in the tile; 2-D and 3-D
// permutes onto each dimension; several inputs with different layouts (permuted, strided,
// broadcast) in one kernel; random draws, outputs written in place, long chains (rolled
// loop) and the 64-bit variant's selection.
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

const std::string kAB = R"("A": {"hint": 40, "max": 100000}, "B": {"hint": 70, "max": 100000})";

// Both dimensions at 1, 31, 32, 33 and 1000 (never two long ones: the emulator is slow).
const Bindings kTileSizes = {{{"A", 1}, {"B", 1}},     {{"A", 31}, {"B", 33}},
                             {{"A", 32}, {"B", 32}},   {{"A", 33}, {"B", 1000}},
                             {{"A", 1000}, {"B", 31}}, {{"A", 1000}, {"B", 8}},
                             {{"A", 5}, {"B", 1000}},  {{"A", 64}, {"B", 96}}};

// Names of the kernels each binding launched.
bool launched_tile(const std::vector<std::vector<std::string>>& launched, size_t b) {
  for (const auto& k : launched[b])
    if (k.find("_tile") != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("transposes of every dtype through tiles, at sizes around the tile", "[emulated]") {
  for (const char* dt : kDtypes) {
    INFO("dtype " << dt);
    // yt is stored as is (bit-exact), z fuses a contiguous operand and a broadcast one.
    std::string in = std::string(R"({"name": "x", "dtype": "f32", "shape": ["A", "B"]},
                                    {"name": "b", "dtype": "f32", "shape": ["B"]},
                                    {"name": "y", "dtype": ")") +
                     dt + R"(", "shape": ["B", "A"]})";
    std::string ops = R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                         {"op": "cast", "args": ["yt"], "dtype": "f32", "out": "yf"},
                         {"op": "add", "args": ["x", "yf"], "out": "s"},
                         {"op": "mul", "args": ["s", "b"], "out": "z"})";
    auto launched = check_graph(graph(std::string("transpose_") + dt, kAB, in, ops, R"("z", "yt")"),
                                kTileSizes);
    // Tiles for A >= 16 and B >= 32, the pointwise kernel otherwise.
    for (size_t i = 0; i < kTileSizes.size(); ++i) {
      bool big = kTileSizes[i].at("A") >= 16 && kTileSizes[i].at("B") >= 32;
      CHECK(launched_tile(launched, i) == big);
    }
  }
}

TEST_CASE("3-D permutes onto every dimension, several layouts in one kernel", "[emulated]") {
  const std::string sym =
      R"("B": {"hint": 3, "max": 1000}, "M": {"hint": 40, "max": 1000}, "N": {"hint": 36, "max": 1000})";
  const Bindings sizes = {{{"B", 2}, {"M", 33}, {"N", 40}},
                          {{"B", 1}, {"M", 1}, {"N", 1}},
                          {{"B", 3}, {"M", 64}, {"N", 17}},
                          {{"B", 40}, {"M", 5}, {"N", 33}}};
  // [B, M, N] -> [B, N, M] (the contiguous dim lands on dim 1), -> [N, B, M] (on dim 0),
  // -> [M, N, B] (on dim 1 again, the innermost output dim is the outermost input dim).
  for (const char* dims : {"[0, 2, 1]", "[2, 0, 1]", "[1, 2, 0]"}) {
    INFO("dims " << dims);
    auto launched = check_graph(
        graph("permute3", sym, R"({"name": "x", "dtype": "bf16", "shape": ["B", "M", "N"]})",
              std::string(R"({"op": "permute", "args": ["x"], "dims": )") + dims +
                  R"(, "out": "xp"},
                         {"op": "exp", "args": ["xp"], "out": "e"},
                         {"op": "neg", "args": ["xp"], "out": "n"})",
              R"("e", "n", "xp")"),
        sizes);
    CHECK((launched_tile(launched, 0) || launched_tile(launched, 3)));
  }
  // One kernel reading a contiguous input, two permuted ones (two tiles), an input whose
  // strides make it column-major (a third tile), a broadcast row and a broadcast column, and
  // the permuted input a second time through a slice (read directly: not contiguous along
  // the tile's dimension at the same position).
  std::string in = R"({"name": "x", "dtype": "f32", "shape": ["A", "B"]},
                      {"name": "y", "dtype": "f16", "shape": ["B", "A"]},
                      {"name": "v", "dtype": "f64", "shape": ["B", "A"]},
                      {"name": "w", "dtype": "f32", "shape": ["A", "B"], "strides": [1, "A"]},
                      {"name": "r", "dtype": "f32", "shape": ["B"]},
                      {"name": "c", "dtype": "i32", "shape": ["A", 1]})";
  std::string ops = R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                       {"op": "permute", "args": ["v"], "dims": [1, 0], "out": "vt"},
                       {"op": "add", "args": ["x", "yt"], "out": "s1"},
                       {"op": "mul", "args": ["s1", "vt"], "out": "s2"},
                       {"op": "sub", "args": ["s2", "w"], "out": "s3"},
                       {"op": "add", "args": ["s3", "r"], "out": "s4"},
                       {"op": "mul", "args": ["s4", "c"], "out": "z"},
                       {"op": "cast", "args": ["z"], "dtype": "f32", "out": "zf"})";
  Fusion f = parse_text(graph("layouts", kAB, in, ops, R"("zf")"));
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(f, o, ctx);
  REQUIRE(c.kernels.size() >= 1);
  CHECK(c.kernels[0].scheduler == SchedulerKind::Transpose);
  std::string tiled;
  for (const auto& [k, v] : c.kernels[0].scheduler_params)
    if (k == "tiled") tiled = v;
  std::vector<std::string> names;
  for (size_t at = 0; at <= tiled.size();) {
    size_t comma = std::min(tiled.find(',', at), tiled.size());
    names.push_back(tiled.substr(at, comma - at));
    at = comma + 1;
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"v", "w", "y"});
  check_graph(graph("layouts", kAB, in, ops, R"("zf")"), kTileSizes);
}

TEST_CASE("transposes with random draws, in place, in long chains, 64-bit variants", "[emulated]") {
  // A draw per element in the write phase: bit-exact with eval.
  check_graph(graph("transpose_rand", kAB,
                    R"({"name": "y", "dtype": "f32", "shape": ["B", "A"]},
                       {"name": "seed", "dtype": "i64"}, {"name": "offset", "dtype": "i64"})",
                    R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                       {"op": "rand", "args": ["seed", "offset"], "shape": ["A", "B"], "dtype": "f32", "out": "u"},
                       {"op": "add", "args": ["yt", "u"], "out": "z"})",
                    R"("z")"),
              kTileSizes, {.exact = true});
  // The contiguous operand is written in place: each element is read where it is written.
  check_graph(graph("transpose_in_place", kAB,
                    R"({"name": "p", "dtype": "f32", "shape": ["A", "B"]},
                       {"name": "y", "dtype": "f32", "shape": ["B", "A"]})",
                    R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                       {"op": "add", "args": ["p", "yt"], "out": "p_new"})",
                    R"("p_new")", R"(, "aliases": {"p_new": "p"})"),
              kTileSizes);
  // More than 64 element nodes: the write loop stays rolled.
  std::string chain = R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "c0"})";
  for (int k = 1; k <= 70; ++k)
    chain += R"(, {"op": "mul", "args": ["c)" + std::to_string(k - 1) +
             R"(", 1.0078125], "out": "c)" + std::to_string(k) + "\"}";
  auto launched =
      check_graph(graph("transpose_chain", kAB,
                        R"({"name": "y", "dtype": "f32", "shape": ["B", "A"]})", chain, R"("c70")"),
                  {{{"A", 33}, {"B", 70}}}, {.exact = true});
  CHECK(launched_tile(launched, 0));

  // Without a max, offsets may pass 2^31: the 64-bit tile kernel then runs.
  std::string g = graph("transpose_wide", R"("A": {"hint": 100}, "B": {"hint": 100})",
                        R"({"name": "y", "dtype": "f32", "shape": ["B", "A"]})",
                        R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                           {"op": "exp", "args": ["yt"], "out": "z"})",
                        R"("z")");
  auto exe = compile_graph(parse_text(g));
  auto kernel_name = [&](int64_t a, int64_t b) {
    uint32_t k = bind_named(*exe, {{"A", a}, {"B", b}})->kernel_of[0];
    return exe->metadata().kernels()->Get(k)->name()->str();
  };
  CHECK(kernel_name(100, 100) == "transpose_wide_k0_tile_i32");
  CHECK(kernel_name(int64_t{1} << 16, int64_t{1} << 16) == "transpose_wide_k0_tile_i64");
  CHECK(kernel_name(int64_t{1} << 28, 8) == "transpose_wide_k0_i64");
  check_graph(g, {{{"A", 100}, {"B", 100}}, {{"A", 7}, {"B", 3}}});
}

TEST_CASE("a transposed read in a branch of a pad or a cat stays pointwise", "[emulated]") {
  // The read cannot be staged for the whole tile (only some elements make it).
  std::string g = graph("transpose_cat", kAB,
                        R"({"name": "x", "dtype": "f32", "shape": ["A", "B"]},
                           {"name": "y", "dtype": "f32", "shape": ["B", "A"]})",
                        R"({"op": "permute", "args": ["y"], "dims": [1, 0], "out": "yt"},
                           {"op": "cat", "args": ["yt", "x"], "dim": 1, "out": "z"})",
                        R"("z")");
  Fusion f = parse_text(g);
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(f, o, ctx);
  for (const auto& k : c.kernels) CHECK(k.scheduler == SchedulerKind::Pointwise);
  check_graph(g, {{{"A", 33}, {"B", 40}}, {{"A", 1}, {"B", 2}}});
}

TEST_CASE("transposes at prime, empty and non-multiple extents", "[emulated]") {
  // Symbols that may be 0: an empty tensor launches no block of either kernel; primes and
  // extents one past a tile leave partial tiles on both dimensions.
  const std::string sym = R"("A": {"hint": 40, "min": 0, "max": 5000},
                             "B": {"hint": 70, "min": 0, "max": 5000},
                             "C": {"hint": 3, "min": 0, "max": 64})";
  std::string in = R"({"name": "x", "dtype": "f32", "shape": ["C", "A", "B"]},
                      {"name": "y", "dtype": "bf16", "shape": ["C", "B", "A"]})";
  std::string ops = R"({"op": "permute", "args": ["y"], "dims": [0, 2, 1], "out": "yt"},
                       {"op": "sub", "args": ["x", "yt"], "out": "z"})";
  const Bindings sizes = {{{"A", 0}, {"B", 0}, {"C", 0}},    {{"A", 0}, {"B", 64}, {"C", 2}},
                          {{"A", 64}, {"B", 0}, {"C", 2}},   {{"A", 64}, {"B", 64}, {"C", 0}},
                          {{"A", 97}, {"B", 61}, {"C", 1}},  {{"A", 17}, {"B", 65}, {"C", 3}},
                          {{"A", 131}, {"B", 37}, {"C", 2}}, {{"A", 1}, {"B", 1009}, {"C", 1}},
                          {{"A", 1009}, {"B", 1}, {"C", 1}}, {{"A", 16}, {"B", 32}, {"C", 5}}};
  auto launched = check_graph(graph("transpose_edges", sym, in, ops, R"("z", "yt")"), sizes);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto& s = sizes[i];
    INFO("binding " << i);
    // Tiles from A >= 16 and B >= 32 on; an empty domain may take either kernel (no blocks).
    if (s.at("A") * s.at("B") * s.at("C") != 0)
      CHECK(launched_tile(launched, i) == (s.at("A") >= 16 && s.at("B") >= 32));
  }
  // The tile kernel at C = 0 (no blocks) with tile-sized A and B: nothing written, no error.
  CHECK(launched_tile(launched, 3));
}
