// End-to-end tests of generated pointwise kernels (see emulated_check.h): every output is
// compared with the reference interpreter's. Sizes are chosen so that vector widths and
// block sizes do not divide them, buffers are misaligned, and guard pages catch out-of-bounds
// accesses. Covers every elementwise op of the op table for every dtype it accepts, casts
// between all dtypes, every view op, creation and random ops (bit-exact), multi-kernel plans,
// in-place outputs, strided inputs and scalar inputs.
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

TEST_CASE("every unary op, for every dtype it accepts, in one kernel per dtype", "[emulated]") {
  for (const char* dt : kDtypes) {
    INFO("dtype " << dt);
    check_graph(unary_ops_graph(dt), kSizes);
  }
}

TEST_CASE("every binary op with broadcasting and literals, for every dtype", "[emulated]") {
  for (const char* dt : kDtypes) {
    INFO("dtype " << dt);
    check_graph(binary_ops_graph(dt), kSizes);
  }
}

TEST_CASE("ternary ops and mixed-dtype promotion", "[emulated]") {
  std::string in = R"({"name": "c", "dtype": "bool", "shape": ["N", "M"]},
                      {"name": "x", "dtype": "bf16", "shape": ["N", "M"]},
                      {"name": "y", "dtype": "f16", "shape": ["M"]},
                      {"name": "i", "dtype": "i32", "shape": ["N", 1], "range": [-5, 5]},
                      {"name": "s", "dtype": "f64"},
                      {"name": "h", "dtype": "bf16"},
                      {"name": "k", "dtype": "i64"},
                      {"name": "b", "dtype": "bool"})";
  std::string ops = R"({"op": "where", "args": ["c", "x", "y"], "out": "w"},
                       {"op": "where", "args": ["c", "i", 0.5], "out": "wl"},
                       {"op": "clamp", "args": ["x", -1, 1.5], "out": "cl"},
                       {"op": "clamp", "args": ["i", "k", 3], "out": "ci"},
                       {"op": "lerp", "args": ["x", "y", 0.25], "out": "lp"},
                       {"op": "fma", "args": ["x", "i", "s"], "out": "fm"},
                       {"op": "mul", "args": ["i", "s"], "out": "is"},
                       {"op": "add", "args": ["x", "h"], "out": "xh"},
                       {"op": "add", "args": ["i", "k"], "out": "ik"},
                       {"op": "logical_and", "args": ["c", "b"], "out": "cb"},
                       {"op": "div", "args": ["i", "k"], "out": "dk"},
                       {"op": "lt", "args": ["i", 0.5], "out": "lt"})";
  check_graph(graph("ternary", kNM, in, ops,
                    R"("w", "wl", "cl", "ci", "lp", "fm", "is", "xh", "ik", "cb", "dk", "lt")"),
              kSizes);
}

TEST_CASE("casts between all dtypes, saturating and rounding", "[emulated]") {
  for (const char* from : kDtypes) {
    INFO("from " << from);
    check_graph(casts_graph(from), kSizes);
  }
}

TEST_CASE("view ops become index arithmetic", "[emulated]") {
  const std::string sym = R"("B": {"hint": 3, "max": 1000}, "S": {"hint": 5, "max": 1000})";
  const std::vector<std::map<std::string, int64_t>> sizes = {
      {{"B", 3}, {"S", 5}}, {{"B", 1}, {"S", 1}}, {{"B", 2}, {"S", 17}}};
  // reshape split + permute + scale (split heads), and the merge back.
  check_graph(graph("views_heads", sym, R"({"name": "x", "dtype": "f16", "shape": ["B", "S", 24]})",
                    R"({"op": "reshape", "args": ["x"], "shape": ["B", "S", 4, -1], "out": "x4"},
                       {"op": "permute", "args": ["x4"], "dims": [0, 2, 1, 3], "out": "xp"},
                       {"op": "mul", "args": ["xp", 0.5], "out": "y"})",
                    R"("y")"),
              sizes);
  check_graph(
      graph("views_merge", sym, R"({"name": "x", "dtype": "f32", "shape": ["B", 4, "S", 6]})",
            R"({"op": "permute", "args": ["x"], "dims": [0, 2, 1, 3], "out": "xp"},
                       {"op": "exp", "args": ["xp"], "out": "e"},
                       {"op": "reshape", "args": ["e"], "shape": ["B", "S", 24], "out": "y"})",
            R"("y")"),
      sizes);
  // broadcast_in_dim, expand, squeeze, unsqueeze.
  check_graph(
      graph(
          "views_broadcast", sym,
          R"({"name": "x", "dtype": "bf16", "shape": ["S", 1]}, {"name": "b", "dtype": "f32", "shape": [7]},
                       {"name": "shape_b", "dtype": "bool", "shape": ["B"]})",
          R"({"op": "broadcast_in_dim", "args": ["x"], "shape": ["B", "S", 7], "broadcast_dims": [1, 2], "out": "xb"},
                       {"op": "expand", "args": ["b"], "shape": ["B", "S", -1], "out": "be"},
                       {"op": "add", "args": ["xb", "be"], "out": "y"},
                       {"op": "unsqueeze", "args": ["y"], "dim": -1, "out": "yu"},
                       {"op": "squeeze", "args": ["yu"], "dims": [3], "out": "z"})",
          R"("z")"),
      sizes);
  // slices with steps and negative bounds, pads that grow and crop, cat of mixed dtypes.
  check_graph(
      graph(
          "views_slice_pad_cat", sym,
          R"({"name": "q", "dtype": "f32", "shape": ["S", 20]}, {"name": "r", "dtype": "i32", "shape": ["S", 3]})",
          R"({"op": "slice", "args": ["q"], "starts": [0, -15], "ends": ["S", 19], "steps": [1, 3], "out": "a"},
                       {"op": "pad", "args": ["r"], "pads": [[0, 0], [2, -1]], "value": -7, "out": "p"},
                       {"op": "neg", "args": ["a"], "out": "na"},
                       {"op": "cat", "args": ["na", "p", "a"], "dim": 1, "out": "y"})",
          R"("y")"),
      sizes);
  check_graph(
      graph(
          "views_rope_like", sym, R"({"name": "q", "dtype": "bf16", "shape": ["B", "S", 16]})",
          R"({"op": "slice", "args": ["q"], "starts": [0, 0, 0], "ends": ["B", "S", 8], "out": "x1"},
                       {"op": "slice", "args": ["q"], "starts": [0, 0, 8], "ends": ["B", "S", 16], "out": "x2"},
                       {"op": "neg", "args": ["x2"], "out": "n2"},
                       {"op": "cat", "args": ["n2", "x1"], "dim": 2, "out": "rot"},
                       {"op": "mul", "args": ["q", "rot"], "out": "y"})",
          R"("y")"),
      sizes);
}

TEST_CASE("creation ops, and random ops bit-exact with the reference", "[emulated]") {
  check_graph(
      graph("creation", kNM, R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})",
            R"({"op": "full", "shape": ["N", "M"], "value": 0.1, "dtype": "bf16", "out": "c"},
                       {"op": "iota", "length": "M", "start": 3, "step": -2, "dtype": "i32", "out": "r"},
                       {"op": "iota", "length": "M", "start": 0.5, "step": 0.25, "dtype": "f16", "out": "rf"},
                       {"op": "add", "args": ["x", "r"], "out": "a"},
                       {"op": "mul", "args": ["a", "rf"], "out": "b"},
                       {"op": "add", "args": ["b", "c"], "out": "y"})",
            R"("y")"),
      kSizes);
  check_graph(
      graph(
          "random", kNM,
          R"({"name": "seed", "dtype": "i64"}, {"name": "offset", "dtype": "i64"},
                       {"name": "shape_nm", "dtype": "bool", "shape": ["N", "M"]})",
          R"({"op": "rand", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f32", "out": "u"},
                       {"op": "rand", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f64", "out": "u64"},
                       {"op": "randn", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "bf16", "out": "z"},
                       {"op": "randn", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f64", "out": "z64"})",
          R"("u", "u64", "z", "z64")"),
      kSizes, {.exact = true});
}

TEST_CASE("random draws share Philox blocks across lanes, through views, bit-exact", "[emulated]") {
  // Consecutive elements take their values from one Philox block (4 for rand, 2 for randn and
  // rand f64): the block is filled once per group. Draws stored directly in 16-bit dtypes
  // (lanes of 8), read through a slice and a reshape (groups that do not start at a vector's
  // first lane), a broadcast (the same draws on every row: row layout), a permute (not
  // consecutive: per element), a pad (in a branch: per element), next to f64 data (vectors of
  // 2, narrower than a rand group) and in a kernel of more than 64 nodes (no vector path, one
  // rolled loop) must all give eval's bits. (Arithmetic on 16-bit draws is not bit-exact:
  // kernels keep intermediates in f32.)
  std::string in = R"({"name": "seed", "dtype": "i64"}, {"name": "offset", "dtype": "i64"},
                      {"name": "x", "dtype": "f32", "shape": ["N", "M"]},
                      {"name": "d", "dtype": "f64", "shape": ["N", "M"]})";
  std::string ops =
      R"({"op": "rand", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f32", "out": "u"},
         {"op": "rand", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "bf16", "out": "h"},
         {"op": "randn", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f16", "out": "hn"},
         {"op": "rand", "args": ["seed", "offset"], "shape": ["N", 3, "M"], "dtype": "f32", "out": "w"},
         {"op": "slice", "args": ["w"], "starts": [0, 1, 1], "ends": ["N", 2, "M"], "out": "ws"},
         {"op": "reshape", "args": ["ws"], "shape": ["N", -1], "out": "wr"},
         {"op": "pad", "args": ["wr"], "pads": [[0, 0], [1, 0]], "value": 2, "out": "wp"},
         {"op": "mul", "args": ["ws", 0.5], "out": "wh"},
         {"op": "randn", "args": ["seed", "offset"], "shape": ["M"], "dtype": "f32", "out": "zr"},
         {"op": "add", "args": ["x", "zr"], "out": "xz"},
         {"op": "randn", "args": ["seed", "offset"], "shape": ["M", "N"], "dtype": "f32", "out": "zt"},
         {"op": "permute", "args": ["zt"], "dims": [1, 0], "out": "ztp"},
         {"op": "rand", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f64", "out": "u64"},
         {"op": "mul", "args": ["u", "d"], "out": "ud"},
         {"op": "add", "args": ["ud", "u64"], "out": "y"},
         {"op": "add", "args": ["wp", "ztp"], "out": "q"})";
  check_graph(graph("random_groups", kNM, in, ops, R"("y", "xz", "q", "u", "h", "hn", "wh")"),
              kSizes, {.exact = true});
  // A long chain after the draw: past 64 element nodes the kernel keeps only the scalar path.
  std::string chain =
      R"({"op": "randn", "args": ["seed", "offset"], "shape": ["N", "M"], "dtype": "f32", "out": "c0"})";
  for (int k = 1; k <= 70; ++k)
    chain += R"(, {"op": "mul", "args": ["c)" + std::to_string(k - 1) +
             R"(", 1.0078125], "out": "c)" + std::to_string(k) + "\"}";
  auto launched =
      check_graph(graph("random_compact", kNM, in, chain, R"("c70")"), kSizes, {.exact = true});
  CHECK(launched[0].size() == 1);
}

TEST_CASE("plans, aliases, strides, scalars and odd outputs", "[emulated]") {
  // segment_set forces two kernels with an intermediate in the workspace.
  check_graph(graph("two_kernels", kNM, R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})",
                    R"({"op": "exp", "args": ["x"], "out": "e"},
                       {"op": "segment_set", "args": ["e"], "out": "es"},
                       {"op": "log", "args": ["es"], "out": "y"})",
                    R"("y", "e")"),
              kSizes);
  // An output written in place into its input.
  check_graph(
      graph(
          "in_place", kNM,
          R"({"name": "p", "dtype": "f32", "shape": ["N", "M"]}, {"name": "g", "dtype": "f32", "shape": ["N", "M"]}, {"name": "lr", "dtype": "f32"})",
          R"({"op": "mul", "args": ["g", "lr"], "out": "s"}, {"op": "sub", "args": ["p", "s"], "out": "p_new"})",
          R"("p_new")", R"(, "aliases": {"p_new": "p"})"),
      kSizes);
  // A strided (transposed) input, scalar inputs of 16-bit and integer dtypes, an output that
  // is an input, the same output twice, a rank-0 result.
  check_graph(graph("misc", kNM,
                    R"({"name": "x", "dtype": "f32", "shape": ["N", "M"], "strides": [1, "N"]},
                       {"name": "h", "dtype": "f16"}, {"name": "k", "dtype": "i64"},
                       {"name": "t", "dtype": "bf16", "shape": []})",
                    R"({"op": "mul", "args": ["x", "h"], "out": "a"},
                       {"op": "add", "args": ["a", "k"], "out": "y"},
                       {"op": "mul", "args": ["t", 2], "out": "t2"})",
                    R"("y", "x", "y", "t2")"),
              kSizes);
  // A strided input with an empty extent spans no bytes (its span was once -1 elements: an
  // allocation of 2^64 bytes that `run` reported as an internal error).
  check_graph(graph("strided_empty", R"("N": {"hint": 5, "min": 0})",
                    R"({"name": "x", "dtype": "i32", "shape": ["N", 8], "strides": [1, "N"]})",
                    R"({"op": "abs", "args": ["x"], "out": "y"})", R"("y")"),
              {{{"N", 0}}, {{"N", 5}}});
}

TEST_CASE("a broadcast input (a stride of 0) runs where its rows agree, else is refused",
          "[emulated]") {
  std::string g = graph("broadcast_input", R"("N": {"hint": 3})",
                        R"({"name": "x", "dtype": "f32", "shape": ["N", 2], "strides": [0, 1]})",
                        R"({"op": "mul", "args": ["x", 2], "out": "y"})", R"("y")");
  Fusion f = parse_text(g);
  auto exe = compile_graph(f);
  HostTensor x(DType::F32, {3, 2});
  for (int64_t i = 0; i < 6; ++i) x.store_f32(i, i % 2 ? 5.0f : 4.0f);  // every row [4, 5]
  TensorMap inputs;
  inputs.emplace("x", x);
  EmulatorDevice device({}, EmulatedMemory{});
  auto got = run_package(*exe, device, inputs, "in.safetensors");
  auto want = evaluate_fusion(f, inputs, "in.safetensors");
  REQUIRE(got.size() == 1);
  CHECK(compare_tensors(got[0].second, want[0].second) == "");
  // Rows that differ cannot lie in one row of memory: the last one would silently win.
  x.store_f32(5, 7.0f);
  inputs.at("x") = x;
  try {
    run_package(*exe, device, inputs, "in.safetensors");
    FAIL("a broadcast input whose rows differ ran");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("in.safetensors") &&
                             Catch::Contains("input 'x': its strides place element [2, 1]"));
  }
}

TEST_CASE("64-bit indexing variant runs when the 32-bit guard does not hold", "[emulated]") {
  // Without a max, N could make offsets exceed 2^31: two variants, chosen by the guard.
  std::string g =
      graph("wide", R"("N": {"hint": 100})", R"({"name": "x", "dtype": "f32", "shape": ["N", 3]})",
            R"({"op": "sigmoid", "args": ["x"], "out": "y"})", R"("y")");
  Fusion f = parse_text(g);
  auto exe = compile_graph(f);
  REQUIRE(exe->metadata().kernels()->size() == 2);
  CHECK(exe->bind({100})->kernel_of[0] == 0);
  CHECK(exe->bind({int64_t{1} << 31})->kernel_of[0] == 1);
  check_graph(g, {{{"N", 100}}, {{"N", 7}}});
}

TEST_CASE("fixed shapes: grids that cover more than the tensor stay in bounds", "[emulated]") {
  // With constant extents, bounds are known at compile time; the guards that keep the threads
  // past the end from touching memory must survive (guard pages catch any access).
  for (const char* shape : {"[4]", "[3, 5]", "[1]", "[7, 33]", "[1000]", "[2, 1, 4097]"}) {
    INFO("shape " << shape);
    std::string in = std::string(R"({"name": "x", "dtype": "f32", "shape": )") + shape +
                     R"(}, {"name": "h", "dtype": "f16", "shape": )" + shape + "}";
    check_graph(graph("fixed", "", in,
                      R"({"op": "exp", "args": ["x"], "out": "e"},
                         {"op": "mul", "args": ["e", "h"], "out": "y"},
                         {"op": "sum", "args": ["x"], "dims": [-1], "out": "s"},
                         {"op": "amax", "args": ["h"], "dims": [0], "keepdim": true, "out": "m"})",
                      R"("y", "s", "m")"),
                {{}});
  }
}

TEST_CASE("pointwise layouts follow the graph, not the hints, at every row length", "[emulated]") {
  // y = x * b + 1 with a broadcast row b: the row layout. Its 2-D grid is chosen only when every
  // row is whole blocks of 128 x 4 f32 (a constant multiple of 512) or the range guarantees
  // rows of at least 8 blocks; other rows are packed over a 1-D grid. The hints never matter:
  // a large hint on a short-row range still gives the 1-D grid.
  auto layout_of = [](const std::string& json) {
    Fusion f = parse_text(json);
    PassContext ctx;
    CompileOptions o;
    o.run_nvrtc = false;
    CompiledFusion c = compile_fusion(f, o, ctx);
    std::string layout;
    for (const auto& k : c.kernels)
      for (const auto& [key, value] : k.scheduler_params)
        if (key == "layout") {
          if (!layout.empty() && layout != value) return std::string("mixed");
          layout = value;
        }
    return layout;
  };
  auto bias = [](const std::string& sym, const std::string& m) {
    return graph(m[0] == '"' ? "bias_symbolic" : "bias_" + m, sym,
                 R"({"name": "x", "dtype": "f32", "shape": ["N", )" + m +
                     R"(]}, {"name": "b", "dtype": "f32", "shape": [)" + m + "]}",
                 R"({"op": "mul", "args": ["x", "b"], "out": "xb"},
                    {"op": "add", "args": ["xb", 1.0], "out": "y"})",
                 R"("y")");
  };
  const std::string n = R"("N": {"hint": 3, "max": 100000})";
  // Constant rows: whole blocks -> 2-D; 513 (one past a block) -> 1-D.
  std::string whole = bias(n, "1024"), past = bias(n, "513");
  CHECK(layout_of(whole) == "row-2d");
  CHECK(layout_of(past) == "row");
  check_graph(whole, {{{"N", 1}}, {{"N", 3}}, {{"N", 7}}});
  check_graph(past, {{{"N", 1}}, {{"N", 5}}});
  // Symbolic rows: a large hint alone does not give the 2-D grid; a range of long rows does.
  std::string shortish = bias(n + R"(, "M": {"hint": 100000, "max": 100000})", "\"M\"");
  std::string longrows = bias(n + R"(, "M": {"hint": 5000, "min": 4096, "max": 100000})", "\"M\"");
  CHECK(layout_of(shortish) == "row");
  CHECK(layout_of(longrows) == "row-2d");
  check_graph(shortish, {{{"N", 3}, {"M", 1}},
                         {{"N", 7}, {"M", 127}},
                         {{"N", 2}, {"M", 511}},
                         {{"N", 3}, {"M", 513}},
                         {{"N", 2}, {"M", 1031}}});
  check_graph(longrows,
              {{{"N", 1}, {"M", 4096}}, {{"N", 2}, {"M", 4099}}, {{"N", 3}, {"M", 5003}}});
  // No broadcast: the flat layout, whose vectors cross rows.
  std::string flat = graph("flat", n + R"(, "M": {"hint": 7, "max": 100000})",
                           R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})",
                           R"({"op": "exp", "args": ["x"], "out": "y"})", R"("y")");
  CHECK(layout_of(flat) == "flat");
  check_graph(flat, {{{"N", 1}, {"M", 1}}, {{"N", 3}, {"M", 171}}, {{"N", 2}, {"M", 1025}}});
}
