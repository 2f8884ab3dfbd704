// End-to-end tests of generated reduction and normalization kernels (see emulated_check.h):
// every reduction op for every dtype it accepts over contiguous ("inner") and strided
// ("outer") rows, keepdim, rank 0, all dims, size-1 and empty extents, variance corrections;
// softmax, log-softmax, layer norm, RMS norm and softmax backward at row lengths 1, 31, 1024,
// 5000 and 70000 (each register bucket and the multi-pass variant run); grid reductions run
// with a grid of several blocks (in parallel host threads) and give the same bits on every run,
// at split edges (1, 2, a warp and a block +-1, primes, empty rows).
#include <catch2/catch.hpp>

#include "emulated_check.h"
#include "op_coverage.h"

using namespace fuserc;
using namespace fuserc::testing;
using namespace fuserc::testing::coverage;

namespace {

const std::vector<int64_t> kRowLengths = {1, 31, 1024, 5000, 70000};

}  // namespace

TEST_CASE("every reduction, for every dtype it accepts, over contiguous and strided rows",
          "[emulated]") {
  for (const char* dt : kDtypes) {
    INFO("dtype " << dt);
    auto launched = check_graph(reductions_graph(dt), {{{"N", 37}, {"M", 53}},
                                                       {{"N", 1}, {"M", 1}},
                                                       {{"N", 5}, {"M", 130}},
                                                       {{"N", 300}, {"M", 2}},
                                                       {{"N", 2}, {"M", 300}}});
    // Reductions sharing rows are fused while registers allow (core/schedule/register_cost.h):
    // one kernel per row layout, for the 6 results of integers and bools and the 10 of floats.
    CHECK(launched[0].size() == 2u);
  }
}

TEST_CASE("keepdim, rank 0, all dims, middle dims, size-1 extents, corrections, result dtypes",
          "[emulated]") {
  const std::string sym = R"("A": {"hint": 3}, "B": {"hint": 5}, "C": {"hint": 7})";
  const Bindings sizes = {{{"A", 3}, {"B", 5}, {"C", 7}},
                          {{"A", 1}, {"B", 1}, {"C", 1}},
                          {{"A", 2}, {"B", 33}, {"C", 65}}};
  // Over a middle dim (strided rows with a contiguous kept dim), over the outer and inner dims
  // (contiguous runs inside a row), over all dims (one row), keepdim at rank 3.
  check_graph(graph("dims", sym, R"({"name": "x", "dtype": "f32", "shape": ["A", "B", "C"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s_mid"},
                       {"op": "amax", "args": ["x"], "dims": [0, 2], "keepdim": true, "out": "m_ends"},
                       {"op": "mean", "args": ["x"], "dims": [-3, -2, -1], "out": "mean_all"},
                       {"op": "var", "args": ["x"], "dims": [0, 1, 2], "keepdim": true, "correction": 0, "out": "var_all"})",
                    R"("s_mid", "m_ends", "mean_all", "var_all")"),
              sizes);
  // A size-1 reduced extent and a size-1 kept extent; correction 2; the sum's dtype attribute;
  // integer and bool results (sum of bools is i64, max of bools is bool).
  check_graph(graph("odd", sym,
                    R"({"name": "x", "dtype": "f16", "shape": ["A", 1, "C"]},
               {"name": "i", "dtype": "i32", "shape": ["A", "C"], "range": [-100, 100]},
               {"name": "b", "dtype": "bool", "shape": ["A", "C"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s1"},
               {"op": "sum", "args": ["x"], "dims": [0, 2], "dtype": "f32", "out": "s32"},
               {"op": "var", "args": ["x"], "dims": [2], "correction": 2, "out": "v2"},
               {"op": "sum", "args": ["b"], "dims": [1], "out": "nb"},
               {"op": "max", "args": ["b"], "dims": [1], "out": "anyb"},
               {"op": "prod", "args": ["i"], "dims": [0], "out": "pi"},
               {"op": "min", "args": ["i"], "dims": [1], "out": "mi"})",
                    R"("s1", "s32", "v2", "nb", "anyb", "pi", "mi")"),
              sizes);
  // Rank 0: a reduction of a rank-0 tensor, and results of rank 0 used by elementwise work.
  check_graph(graph("rank0", sym,
                    R"({"name": "t", "dtype": "f32", "shape": []},
                       {"name": "x", "dtype": "bf16", "shape": ["A", "B"]})",
                    R"({"op": "sum", "args": ["t"], "dims": [], "out": "t_sum"},
                       {"op": "amax", "args": ["x"], "dims": [0, 1], "out": "xm"},
                       {"op": "mul", "args": ["xm", 2], "out": "xm2"})",
                    R"("t_sum", "xm2")"),
              sizes);
}

TEST_CASE("empty extents: empty rows and no rows", "[emulated]") {
  const std::string sym = R"("N": {"hint": 3, "min": 0}, "M": {"hint": 4, "min": 0})";
  const std::string in = R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})";
  // Sums of nothing are 0, products 1, means and variances NaN; no rows, nothing to write.
  check_graph(
      graph("empty", sym, in,
            R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                       {"op": "prod", "args": ["x"], "dims": [1], "out": "p"},
                       {"op": "mean", "args": ["x"], "dims": [1], "out": "m"},
                       {"op": "var", "args": ["x"], "dims": [0], "out": "v"})",
            R"("s", "p", "m", "v")"),
      {{{"N", 3}, {"M", 0}}, {{"N", 0}, {"M", 4}}, {{"N", 0}, {"M", 0}}, {{"N", 2}, {"M", 5}}});
  // A leading extent of 1 before a middle reduction over rows of a min-0 symbol: the row's
  // coordinate along it is a quotient by the symbol that cannot be folded (the symbol may be 0),
  // and the epilogue reading the result there once failed an internal check.
  check_graph(graph("lead1", R"("S": {"hint": 8, "min": 0})",
                    R"({"name": "x", "dtype": "f32", "shape": [1, 4, 6, "S"]})",
                    R"({"op": "var", "args": ["x"], "dims": [-2], "out": "v"},
                       {"op": "trunc", "args": ["v"], "out": "t"})",
                    R"("t", "v")"),
              {{{"S", 0}}, {{"S", 5}}});
  // A maximum over an empty row is refused at binding, as the reference refuses it.
  Fusion f = parse_text(graph(
      "empty_max", sym, in, R"({"op": "amax", "args": ["x"], "dims": [1], "out": "m"})", R"("m")"));
  auto exe = compile_graph(f);
  CHECK_NOTHROW(bind_named(*exe, {{"N", 0}, {"M", 0}}));  // no rows: nothing to reduce
  CHECK_NOTHROW(bind_named(*exe, {{"N", 3}, {"M", 5}}));
  try {
    bind_named(*exe, {{"N", 3}, {"M", 0}});
    FAIL("an empty maximum was bound");
  } catch (const UserError& e) {
    CHECK_THAT(e.what(), Catch::Contains("'m': the reduction is over an empty dimension"));
  }
}

TEST_CASE("infinities and NaN in reductions", "[emulated]") {
  // log(relu(x)) is -inf for about half of the elements, sqrt(x) NaN: sums and means of
  // -inf are -inf (not Welford's inf - inf = NaN), maxima and minima propagate NaN.
  check_graph(graph("nonfinite", kNM, R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})",
                    R"({"op": "relu", "args": ["x"], "out": "r"},
                       {"op": "log", "args": ["r"], "out": "l"},
                       {"op": "sqrt", "args": ["x"], "out": "q"},
                       {"op": "var_mean", "args": ["l"], "dims": [1], "out": ["v", "m"]},
                       {"op": "sum", "args": ["l"], "dims": [1], "out": "s"},
                       {"op": "amax", "args": ["q"], "dims": [1], "out": "hi"},
                       {"op": "amin", "args": ["l"], "dims": [1], "out": "lo"},
                       {"op": "var_mean", "args": ["l"], "dims": [0], "out": ["v0", "m0"]})",
                    R"("v", "m", "s", "hi", "lo", "v0", "m0")"),
              kSizes);
}

TEST_CASE("variances of rows far from zero, in two passes over registers", "[emulated]") {
  // Rows of values in [99, 101] (mean about 100, variance about 1/3): a persistent variant
  // sums the row held in registers, then sums the squared deviations from its mean (no
  // Welford state, no division per element); the variance must still match eval's
  // double-precision one to f32's tolerance (2e-5), as must a layer norm's output built from
  // it. A naive sum of squares in f32 would be off by about 1e-3 here. (At offsets of 1e4 the
  // output of a layer norm is limited by f32 itself, x - mean with the mean an f32; its
  // variance is not: the next test.)
  const std::string g = R"({"fuserc": 1, "name": "offset_var", "symbols": {"N": {"hint": 4}, "H": {"hint": 768}},
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "H"], "range": [99, 101]}],
    "ops": [{"op": "var_mean", "args": ["x"], "dims": [1], "keepdim": true, "correction": 0, "out": ["v", "m"]},
            {"op": "sub", "args": ["x", "m"], "out": "xc"},
            {"op": "add", "args": ["v", 1e-5], "out": "ve"},
            {"op": "rsqrt", "args": ["ve"], "out": "r"},
            {"op": "mul", "args": ["xc", "r"], "out": "y"}],
    "outputs": ["v", "m", "y"]})";
  Bindings sizes;
  for (int64_t h : {1, 2, 7, 31, 768, 1000, 4096}) sizes.push_back({{"N", 5}, {"H", h}});
  auto launched = check_graph(g, sizes, {.every_memory_mode = false});
  for (const auto& names : launched) REQUIRE(names.size() == 1);
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(parse_text(g), o, ctx);
  int two_pass = 0, plain = 0;
  for (const auto& k : c.kernels) {
    bool p = k.source.find("= fz_welford_push(") != std::string::npos;
    bool s = k.source.find("float m2_v = 0.0f;") != std::string::npos && !p;
    INFO("kernel " << k.name);
    CHECK(s != p);
    two_pass += s;
    plain += p;
  }
  CHECK(two_pass > 0);  // the persistent variants: two sums over the registers
  CHECK(plain > 0);     // the streaming ones (rows too long for registers) keep Welford's push
}

TEST_CASE("variances of values far from zero in every reduction variant", "[emulated]") {
  // Values in [10000, 10001]: spread 0.29 beside an ulp of 1e-3. Welford's f32 running mean
  // rounded to that ulp leaked about 1e-4 into m2 (a relative error of 8.6e-4 at 5 x 97, the
  // nvFuser probe's repro); the mean is now kept with its rounding error (mean + lo), in the
  // pushes and in every combine (warp, block, grid split), so the variances of rows and of
  // columns, short and split across blocks, match eval's f64 to f32's tolerance (2e-5).
  const std::string g = R"({"fuserc": 1, "name": "far_var", "symbols": {"N": {"hint": 5}, "L": {"hint": 97}},
    "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "L"], "range": [10000, 10001]}],
    "ops": [{"op": "var_mean", "args": ["x"], "dims": [1], "correction": 0, "out": ["v", "m"]},
            {"op": "var", "args": ["x"], "dims": [0], "out": "v0"}],
    "outputs": ["v", "m", "v0"]})";
  Bindings sizes;
  for (int64_t l : kRowLengths) sizes.push_back({{"N", l == 70000 ? 2 : 5}, {"L", l}});
  sizes.push_back({{"N", 3000}, {"L", 3}});  // long columns, split across blocks
  sizes.push_back({{"N", 5}, {"L", 97}});
  check_graph(g, sizes, {.every_memory_mode = false});
}

TEST_CASE("normalizations at row lengths 1, 31, 1024, 5000 and 70000", "[emulated]") {
  for (const auto& [name, json] : normalization_graphs()) {
    INFO("graph " << name);
    Bindings sizes;
    for (int64_t h : kRowLengths) sizes.push_back({{"N", h == 70000 ? 2 : 3}, {"H", h}});
    auto launched = check_graph(json, sizes, {.every_memory_mode = false});
    for (const auto& names : launched) REQUIRE(names.size() == 1);  // one kernel
    // Whatever the hint: short rows take 8 threads each (16 rows per block), rows of 1024 a
    // warp (or 128 threads when three arrays are cached), 5000 128 or 512 threads, all with the
    // row in registers; rows of 70000 are re-read.
    const std::vector<std::vector<std::string>> want = {
        {"_t8"}, {"_t8"}, {"_t32", "_t128"}, {"_t128", "_t512"}, {"_multi"}};
    for (size_t i = 0; i < kRowLengths.size(); ++i) {
      INFO("row length " << kRowLengths[i] << ": " << launched[i][0]);
      const std::string& k = launched[i][0];
      bool ok = false;
      for (const std::string& w : want[i])
        ok = ok || (k.size() > w.size() && k.compare(k.size() - w.size(), w.size(), w) == 0);
      CHECK(ok);
    }
  }
}

TEST_CASE("inner and outer reductions at row lengths 1, 31, 1024, 5000 and 70000", "[emulated]") {
  const std::string sym = R"("N": {"hint": 4}, "L": {"hint": 1024})";
  Bindings inner, outer;
  for (int64_t l : kRowLengths) {
    inner.push_back({{"N", l == 70000 ? 2 : 5}, {"L", l}});
    outer.push_back({{"N", l == 70000 ? 3 : 40}, {"L", l}});
  }
  check_graph(graph("inner", sym, R"({"name": "x", "dtype": "bf16", "shape": ["N", "L"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                       {"op": "var_mean", "args": ["x"], "dims": [1], "out": ["v", "m"]},
                       {"op": "amin", "args": ["x"], "dims": [1], "out": "lo"})",
                    R"("s", "v", "m", "lo")"),
              inner, {.every_memory_mode = false});
  check_graph(graph("outer", sym, R"({"name": "x", "dtype": "f32", "shape": ["L", "N"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [0], "out": "s"},
                       {"op": "var_mean", "args": ["x"], "dims": [0], "out": ["v", "m"]},
                       {"op": "amax", "args": ["x"], "dims": [0], "out": "hi"})",
                    R"("s", "v", "m", "hi")"),
              outer, {.every_memory_mode = false});
}

TEST_CASE("grid reductions run with several blocks per row and give the same bits every run",
          "[emulated]") {
  const std::string sym = R"("N": {"hint": 8}, "L": {"hint": 100000})";
  std::string inner =
      graph("grid_inner", sym, R"({"name": "x", "dtype": "f32", "shape": ["N", "L"]})",
            R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                               {"op": "var", "args": ["x"], "dims": [1], "out": "v"},
                               {"op": "amax", "args": ["x"], "dims": [1], "out": "m"})",
            R"("s", "v", "m")");
  std::string outer =
      graph("grid_outer", sym, R"({"name": "x", "dtype": "f16", "shape": ["L", "N"]})",
            R"({"op": "sum", "args": ["x"], "dims": [0], "out": "s"},
                               {"op": "var_mean", "args": ["x"], "dims": [0], "out": ["v", "m"]})",
            R"("s", "v", "m")");
  for (const std::string& json : {inner, outer}) {
    Fusion f = parse_text(json);
    auto exe = compile_graph(f);
    auto binding = bind_named(*exe, {{"N", 8}, {"L", 100000}});
    REQUIRE(binding->kernel_of.size() == 1);
    const fb::Kernel* k = exe->metadata().kernels()->Get(binding->kernel_of[0]);
    INFO("kernel " << k->name()->str());
    CHECK(k->grid_reduction());
    CHECK(binding->slot(k->grid()->Get(1)) > 1);  // several blocks share each row
    const Bindings sizes = {
        {{"N", 8}, {"L", 100000}}, {{"N", 3}, {"L", 20000}}, {{"N", 1}, {"L", 1}}};
    check_graph(json, sizes, {.every_memory_mode = false});
    // The same bits on every run, whichever block finishes last.
    TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, sizes[0]), 5);
    EmulatorDevice device;
    auto first = run_package(*exe, device, inputs, "inputs");
    for (int run = 0; run < 3; ++run) {
      auto again = run_package(*exe, device, inputs, "inputs");
      for (size_t i = 0; i < first.size(); ++i)
        CHECK(again[i].second.bytes() == first[i].second.bytes());
    }
  }
}

TEST_CASE("reductions fused with prologue, epilogue and siblings; multi-kernel plans",
          "[emulated]") {
  // A reduction of a computed value, its result used by elementwise work on the rows
  // (epilogue), siblings reading the same input fused, and a plan of several kernels with
  // intermediates in the workspace (segment_set, and a reduction of a reduction).
  // (f32: the reference rounds every intermediate to the graph's dtype, kernels keep them in
  // f32, and log(sum(exp)) of 16-bit values near 0 magnifies that difference.)
  check_graph(
      graph("fused", kNM,
            R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]}, {"name": "s", "dtype": "f32"})",
            R"({"op": "mul", "args": ["x", "s"], "out": "xs"},
                       {"op": "exp", "args": ["xs"], "out": "e"},
                       {"op": "sum", "args": ["e"], "dims": [1], "out": "se"},
                       {"op": "log", "args": ["se"], "out": "lse"},
                       {"op": "amax", "args": ["x"], "dims": [1], "out": "mx"},
                       {"op": "segment_set", "args": ["e"], "out": "es"},
                       {"op": "sum", "args": ["es"], "dims": [0], "out": "col"},
                       {"op": "sum", "args": ["lse"], "dims": [0], "out": "total"})",
            R"("lse", "mx", "col", "total")"),
      kSizes);
  // Intermediates sharing workspace bytes (e3 reuses e1's, dead after kernel 1); e2 is also
  // reduced by the last kernel, so it must survive kernel 2's writes to e3.
  check_graph(graph("chain4", kNM, R"({"name": "x", "dtype": "f32", "shape": ["N", "M"]})",
                    R"({"op": "exp", "args": ["x"], "out": "a"},
                       {"op": "segment_set", "args": ["a"], "out": "e1"},
                       {"op": "log", "args": ["e1"], "out": "b"},
                       {"op": "segment_set", "args": ["b"], "out": "e2"},
                       {"op": "sin", "args": ["e2"], "out": "c"},
                       {"op": "segment_set", "args": ["c"], "out": "e3"},
                       {"op": "sub", "args": ["e3", "e2"], "out": "d"},
                       {"op": "sum", "args": ["d"], "dims": [1], "out": "y"})",
                    R"("y")"),
              kSizes);
  // Results read back on other rows (split into two kernels) and permuted results.
  check_graph(graph("across", R"("N": {"hint": 37})",
                    R"({"name": "x", "dtype": "f32", "shape": ["N", "N"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [1], "out": "r"},
                       {"op": "add", "args": ["x", "r"], "out": "y"},
                       {"op": "amax", "args": ["x"], "dims": [0], "keepdim": true, "out": "m"},
                       {"op": "permute", "args": ["m"], "dims": [1, 0], "out": "mt"},
                       {"op": "mul", "args": ["x", "mt"], "out": "z"})",
                    R"("y", "z")"),
              {{{"N", 37}}, {{"N", 1}}, {{"N", 130}}});
}

TEST_CASE("reduction buckets and grid splits at their edges", "[emulated]") {
  // Contiguous rows: s8 up to 8 x V elements (32 f32, 64 bf16), s32 up to 512 x V, then s256,
  // which splits rows once a block gets 16 elements per thread (4096): a whole-tensor sum of
  // 8191 elements runs on 1 block, 8192 on 2, 2^20 + 3 on 256 with a tail.
  const std::string sym = R"("N": {"hint": 4, "min": 0}, "L": {"hint": 100, "min": 0})";
  Bindings inner;
  for (int64_t l : {0, 1, 2, 31, 32, 33, 63, 64, 65, 2047, 2048, 2049, 4099})
    inner.push_back({{"N", 3}, {"L", l}});
  inner.push_back({{"N", 0}, {"L", 5}});
  for (const char* dt : {"f32", "bf16"}) {
    INFO("dtype " << dt);
    check_graph(graph("edges", sym,
                      std::string(R"({"name": "x", "dtype": ")") + dt +
                          R"(", "shape": ["N", "L"]})",
                      R"({"op": "sum", "args": ["x"], "dims": [1], "out": "s"},
                         {"op": "var_mean", "args": ["x"], "dims": [1], "out": ["v", "m"]})",
                      R"("s", "v", "m")"),
                inner, {.every_memory_mode = false});
  }
  std::string all = graph("all", R"("L": {"hint": 100, "min": 0})",
                          R"({"name": "x", "dtype": "f32", "shape": ["L"]})",
                          R"({"op": "sum", "args": ["x"], "dims": [0], "out": "s"},
                             {"op": "var", "args": ["x"], "dims": [0], "out": "v"})",
                          R"("s", "v")");
  Bindings whole;
  for (int64_t l : {0, 1, 255, 257, 8191, 8192, 8193, 12289, (1 << 20) + 3})
    whole.push_back({{"L", l}});
  check_graph(all, whole, {.every_memory_mode = false});
  auto exe = compile_graph(parse_text(all));
  for (int64_t l : {8191, 8192, (1 << 20) + 3}) {
    auto b = bind_named(*exe, {{"L", l}});
    const fb::Kernel* k = exe->metadata().kernels()->Get(b->kernel_of[0]);
    CHECK(b->slot(k->grid()->Get(1)) == std::max<int64_t>(1, l / 4096));
  }
  // The same bits on every run of a split sum (the last block to finish varies).
  Fusion f = parse_text(all);
  TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, whole.back()), 7);
  EmulatorDevice device;
  auto first = run_package(*exe, device, inputs, "inputs");
  auto again = run_package(*exe, device, inputs, "inputs");
  for (size_t i = 0; i < first.size(); ++i) CHECK(again[i].second.bytes() == first[i].second.bytes());

  // Strided rows: a bucket per 4, 8, 16, 32 columns per block, rows split 16 per thread row.
  Bindings outer;
  for (int64_t c : {1, 4, 5, 8, 9, 16, 17, 33}) outer.push_back({{"N", c}, {"L", 4099}});
  outer.push_back({{"N", 3}, {"L", 0}});
  outer.push_back({{"N", 0}, {"L", 7}});
  check_graph(graph("outer_edges", sym, R"({"name": "x", "dtype": "f32", "shape": ["L", "N"]})",
                    R"({"op": "sum", "args": ["x"], "dims": [0], "out": "s"},
                       {"op": "var_mean", "args": ["x"], "dims": [0], "out": ["v", "m"]})",
                    R"("s", "v", "m")"),
              outer, {.every_memory_mode = false});
}
