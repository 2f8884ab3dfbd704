// Graphs the contract allows that once crashed or blew up (issue 14): symbolic extents inside
// outputs (pad and cat along every dimension, `min: 0` symbols at every position, a KV cache
// append), inputs written in place through their strides, deep chains, and values read at
// several positions. Each graph of tests/graphs runs in the emulator at several sizes against
// the reference interpreter; deep chains and shifted reads check that code and the front end
// grow linearly.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "codegen/compile_fusion.h"
#include "codegen/cuda/cuda_emitter.h"
#include "codegen/lower/pointwise_lowering.h"
#include "core/passes/presegmentation.h"
#include "core/schedule/element_cost.h"
#include "core/schedule/pointwise_scheduler.h"
#include "core/schedule/reduction_analysis.h"
#include "core/schedule/reduction_scheduler.h"
#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::string read_graph(const std::string& name) {
  std::ifstream in(std::string(FUSERC_TEST_GRAPHS_DIR) + "/" + name + ".json");
  REQUIRE(in.good());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// K times: s = slice(a, [0, 1], [N, 64]); p = pad(s, [[0, 0], [0, 1]]); a = add(a, p).
std::string shifted(int k) {
  std::string ops, a = "x";
  for (int i = 0; i < k; ++i) {
    std::string n = std::to_string(i);
    ops += std::string(i ? "," : "") + R"({"op": "slice", "args": [")" + a +
           R"("], "starts": [0, 1], "ends": ["N", 64], "out": "s)" + n + R"("},
             {"op": "pad", "args": ["s)" +
           n + R"("], "pads": [[0, 0], [0, 1]], "out": "p)" + n +
           R"("}, {"op": "add", "args": [")" + a + R"(", "p)" + n + R"("], "out": "a)" + n +
           R"("})";
    a = "a" + n;
  }
  return R"({"fuserc": 1, "name": "shifted", "symbols": {"N": {"hint": 256}},
             "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", 64]}],
             "ops": [)" +
         ops + R"(], "outputs": [")" + a + R"("]})";
}

// n elementwise ops, each reading the previous result (and the second input every other op).
std::string chain(int n) {
  std::string ops, prev = "x";
  for (int i = 0; i < n; ++i) {
    std::string out = "t" + std::to_string(i);
    ops +=
        std::string(i ? "," : "") +
        (i % 2 == 0 ? R"({"op": "add", "args": [")" + prev + R"(", "y"], "out": ")" + out + "\"}"
                    : R"({"op": "mul", "args": [")" + prev + R"(", 0.5], "out": ")" + out + "\"}");
    prev = out;
  }
  return R"({"fuserc": 1, "name": "chain", "symbols": {"N": {"hint": 64}},
             "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]},
                        {"name": "y", "dtype": "f32", "shape": ["N"]}],
             "ops": [)" +
         ops + R"(], "outputs": [")" + prev + R"("]})";
}

// k dependent row normalizations of [N, M]: s = sum(t, 1); t = tanh(t - s).
std::string normalization_chain(int k) {
  std::string ops, prev = "x";
  for (int i = 0; i < k; ++i) {
    std::string n = std::to_string(i);
    ops += std::string(i ? "," : "") + R"({"op": "sum", "args": [")" + prev +
           R"("], "dims": [1], "keepdim": true, "out": "s)" + n + R"("},
             {"op": "sub", "args": [")" + prev + R"(", "s)" + n + R"("], "out": "d)" + n +
           R"("}, {"op": "tanh", "args": ["d)" + n + R"("], "out": "t)" + n + R"("})";
    prev = "t" + n;
  }
  return R"({"fuserc": 1, "name": "norms", "symbols": {"N": {"hint": 256}, "M": {"hint": 1024}},
             "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "M"]}],
             "ops": [)" +
         ops + R"(], "outputs": [")" + prev + R"("]})";
}

// Each of the n columns of x [N, n] sliced out, scaled, and all concatenated again: hundreds of
// kernels' results alive at once.
std::string columns(int n) {
  std::string ops, parts;
  for (int i = 0; i < n; ++i) {
    std::string k = std::to_string(i);
    ops += std::string(i ? "," : "") + R"({"op": "slice", "args": ["x"], "starts": [0, )" + k +
           R"(], "ends": ["N", )" + std::to_string(i + 1) + R"(], "out": "s)" + k + R"("},
             {"op": "mul", "args": ["s)" + k + R"(", )" + k + R"(.5], "out": "t)" + k + "\"}";
    parts += std::string(i ? ", " : "") + "\"t" + k + "\"";
  }
  return R"({"fuserc": 1, "name": "columns", "symbols": {"N": {"hint": 256}},
             "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", )" +
         std::to_string(n) + R"(]}], "ops": [)" + ops +
         R"(, {"op": "cat", "args": [)" + parts +
         R"(], "dim": 1, "out": "y"}], "outputs": ["y"]})";
}

// A cat along dim 1 of n tensors [N, E_i]: every fifth E_i the symbol Z (min 0: empty
// operands), the others 1, 2 or 3.
std::string wide_cat(int n) {
  std::string inputs, args;
  for (int i = 0; i < n; ++i) {
    std::string extent = i % 5 == 0 ? "\"Z\"" : std::to_string(i % 3 + 1);
    inputs += std::string(i ? ", " : "") + R"({"name": "x)" + std::to_string(i) +
              R"(", "dtype": "f32", "shape": ["N", )" + extent + "]}";
    args += std::string(i ? ", " : "") + "\"x" + std::to_string(i) + "\"";
  }
  return R"({"fuserc": 1, "name": "wide_cat",
             "symbols": {"N": {"hint": 64}, "Z": {"hint": 2, "min": 0}},
             "inputs": [)" +
         inputs + R"(], "ops": [{"op": "cat", "args": [)" + args +
         R"(], "dim": 1, "out": "y"}], "outputs": ["y"]})";
}

// The deepest nesting of braces in CUDA source.
int brace_depth(const std::string& source) {
  int depth = 0, deepest = 0;
  for (char ch : source) {
    if (ch == '{') deepest = std::max(deepest, ++depth);
    if (ch == '}') --depth;
  }
  return deepest;
}

CompiledFusion codegen(const std::string& json) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  return compile_fusion(parse_text(json), o, ctx);
}

size_t source_bytes(const CompiledFusion& c) {
  size_t n = 0;
  for (const auto& k : c.kernels) n += k.source.size() - cuda::preamble().size();
  return n;
}

}  // namespace

TEST_CASE("symbolic extents inside outputs: pad and cat along every dimension", "[emulated]") {
  check_graph(read_graph("pad_inner_sym"), {{{"B", 1}}, {{"B", 4}}, {{"B", 13}}});
  check_graph(
      read_graph("cat_inner_sym"),
      {{{"A", 1}, {"B", 1}, {"C", 1}}, {{"A", 3}, {"B", 8}, {"C", 5}}, {{"A", 2}, {"B", 33}}});
  check_graph(
      read_graph("pad_every_dim_sym"),
      {{{"A", 1}, {"B", 2}, {"C", 3}}, {{"A", 3}, {"B", 5}, {"C", 7}}, {{"A", 5}, {"C", 16}}});
  check_graph(read_graph("cat_every_dim_sym"),
              {{{"A", 1}, {"B", 1}, {"C", 1}, {"D", 1}, {"E", 1}, {"F", 1}},
               {{"A", 3}, {"B", 5}, {"C", 6}, {"D", 2}, {"E", 4}, {"F", 9}},
               {{"A", 2}, {"B", 3}, {"C", 8}, {"D", 5}, {"E", 1}, {"F", 4}}});
  // A cache of T positions (possibly none) and S new ones along dim 2.
  check_graph(read_graph("kv_cache_append_bf16"), {{{"B", 1}, {"T", 0}, {"S", 1}},
                                                   {{"B", 2}, {"T", 5}, {"S", 3}},
                                                   {{"B", 1}, {"T", 8}, {"S", 4}}});
}

TEST_CASE("min: 0 symbols at every position, empty and not", "[emulated]") {
  check_graph(read_graph("empty_mid"), {{{"Z", 0}}, {{"Z", 1}}, {{"Z", 4}}, {{"Z", 7}}});
  check_graph(read_graph("empty_dims"), {{{"Z", 0}, {"Y", 0}},
                                         {{"Z", 0}, {"Y", 3}},
                                         {{"Z", 5}, {"Y", 0}},
                                         {{"Z", 1}, {"Y", 1}},
                                         {{"Z", 6}, {"Y", 3}}});
}

TEST_CASE("inputs with declared strides written in place through their strides", "[emulated]") {
  // Transposed, a row pitch wider than the row (read back through the pitch), and a 3-D
  // permutation; the vector path stores lane by lane where the strides are not contiguous.
  check_graph(read_graph("strided_inplace"), {{{"N", 1}, {"M", 1}, {"S", 1}},
                                              {{"N", 6}, {"M", 5}, {"S", 8}},
                                              {{"N", 4}, {"M", 8}, {"S", 8}},
                                              {{"N", 9}, {"M", 16}, {"S", 21}}});
  // A binding whose strides make elements share memory is refused at launch, naming the input.
  Fusion f = parse_text(read_graph("strided_inplace"));
  auto exe = compile_graph(f);
  CHECK_NOTHROW(bind_named(*exe, {{"N", 4}, {"M", 8}, {"S", 8}}));
  try {
    bind_named(*exe, {{"N", 4}, {"M", 8}, {"S", 5}});
    FAIL("a row pitch below the row length was accepted");
  } catch (const UserError& e) {
    CHECK(std::string(e.what()).find("input 'q' is written in place through strides") !=
          std::string::npos);
  }
  // Strides that always overlap are refused when the graph is read.
  CHECK(parse_error(R"({"fuserc": 1, "name": "g",
      "inputs": [{"name": "x", "dtype": "f32", "shape": [4, 4], "strides": [1, 0]}],
      "ops": [{"op": "neg", "args": ["x"], "out": "y"}], "outputs": ["y"],
      "aliases": {"y": "x"}})")
            .find("share memory") != std::string::npos);
}

TEST_CASE("a value read at two positions per step: code grows linearly with the chain",
          "[emulated]") {
  // The whole shifted chain as one kernel: every (value, position) is computed once, so the
  // source grows with the positions (quadratically here), never with the paths to them (2^K).
  auto whole_kernel_bytes = [](int k) {
    Fusion f = parse_text(shifted(k));
    PassContext ctx;
    run_presegmentation_passes(f, ctx);
    Segment s;
    for (size_t i = 0; i < f.ops.size(); ++i) s.ops.push_back(static_cast<int>(i));
    compute_segment_boundary(f, s);
    PointwiseScheduler sch;
    auto kernels = lower::lower_pointwise(f, s, sch.heuristics(f, s), "k");
    size_t bytes = 0;
    for (const auto& lk : kernels) bytes += cuda::emit_kernel(lk.kernel).size();
    return bytes;
  };
  size_t w8 = whole_kernel_bytes(8), w16 = whole_kernel_bytes(16);
  INFO("one kernel: K=8 " << w8 << " bytes, K=16 " << w16 << " bytes");
  CHECK(w16 < 6 * w8);
  // The cost bound cuts the chain into kernels of bounded recomputation: linear in K.
  auto c8 = codegen(shifted(8)), c16 = codegen(shifted(16)), c32 = codegen(shifted(32));
  double r16 = static_cast<double>(source_bytes(c16)) / static_cast<double>(source_bytes(c8));
  double r32 = static_cast<double>(source_bytes(c32)) / static_cast<double>(source_bytes(c16));
  INFO("sources: K=8 " << source_bytes(c8) << ", K=16 " << source_bytes(c16) << ", K=32 "
                       << source_bytes(c32) << " bytes");
  CHECK(r16 > 1.5);
  CHECK(r16 < 2.6);
  CHECK(r32 > 1.5);
  CHECK(r32 < 2.6);
  for (const auto& seg : c32.segmented.segments) CHECK(element_cost_reason(c32.fusion, seg) == "");
  // And it computes the same values.
  check_graph(read_graph("shifted_slices"), {{{"N", 1}}, {{"N", 5}}});
}

TEST_CASE("deep chains: no recursion grows with the graph, kernels stay bounded", "[emulated]") {
  // 20,000 ops (7,000 used to be the most the compiler survived): parse, evaluate and lower.
  std::string deep = chain(20000);
  Fusion f = parse_text(deep);
  CHECK(f.ops.size() == 20000);
  TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, {{"N", 3}}), 5);
  auto out = evaluate_fusion(f, inputs, "inputs");
  REQUIRE(out.size() == 1);
  CompiledFusion c = codegen(deep);
  CHECK(c.segmented.segments.size() >= 20000 / kMaxKernelPositions);
  CHECK(c.segmented.segments.size() <= 4 * 20000 / kMaxKernelPositions);
  for (const auto& seg : c.segmented.segments) CHECK(element_cost_reason(c.fusion, seg) == "");
  // A chain cut in two runs right: the intermediate crosses the workspace.
  check_graph(chain(2500), {{{"N", 3}}, {{"N", 37}}}, {false, false});
}

TEST_CASE("dependent row reductions: kernels of bounded passes, code linear in the chain",
          "[emulated]") {
  // 500 of them were one normalization kernel whose passes each recomputed the chain before
  // them (more than 5 minutes of lowering); kernels now take at most kMaxPhases.
  auto c24 = codegen(normalization_chain(24)), c48 = codegen(normalization_chain(48));
  CHECK(c24.segmented.segments.size() >= 24 / kMaxPhases);
  for (const auto& seg : c48.segmented.segments) {
    ReductionAnalysis a = analyze_reductions(c48.fusion, seg);
    CHECK(a.phases <= kMaxPhases);
  }
  double r = static_cast<double>(source_bytes(c48)) / static_cast<double>(source_bytes(c24));
  INFO("sources: 24 " << source_bytes(c24) << ", 48 " << source_bytes(c48) << " bytes");
  CHECK(r > 1.5);
  CHECK(r < 2.6);
  // Cut after 8 phases, the chain computes the same values.
  check_graph(normalization_chain(kMaxPhases + 2), {{{"N", 3}, {"M", 37}}});
}

TEST_CASE("hundreds of intermediates alive at once: a valid memory plan, found in linear time",
          "[segment]") {
  // 700 columns: 640 of the scaled slices cross kernels into the cat, all alive together. Past
  // 512 live buffers the first fit stops proving candidates (cubic before) and stacks each
  // buffer above the others: every intermediate gets its own aligned column of the workspace
  // (offsets distinct multiples of one column, all below the workspace's end).
  CompiledFusion c = codegen(columns(700));
  const std::string column = "ceildiv(N * 4, 256)";
  std::set<int64_t> slots;
  size_t intermediates = 0;
  for (const auto& b : c.memory.buffers) {
    if (b.kind != BufferInfo::Kind::Intermediate) continue;
    ++intermediates;
    CHECK(b.bytes.str() == "N * 4");
    const std::string at = b.offset.str();
    int64_t slot = 0;
    if (at != "0") {
      REQUIRE(at.rfind(column + " * ", 0) == 0);
      const int64_t m = std::stoll(at.substr(column.size() + 3));
      CHECK(m % 256 == 0);
      slot = m / 256;
    }
    slots.insert(slot);
  }
  REQUIRE(intermediates > 512);
  CHECK(slots.size() == intermediates);
  CHECK(*slots.rbegin() < static_cast<int64_t>(intermediates));
  CHECK(c.memory.workspace_bytes.str() ==
        column + " * " + std::to_string(256 * intermediates));
}

TEST_CASE("a cat of many tensors, some empty: a balanced search over their ranges",
          "[emulated]") {
  // Conditions nested as deep as the operands (2,000 of them: NVRTC took 28 s on 1,000) become
  // a tree past 16 operands: the source's nesting grows with log n.
  const int d64 = brace_depth(codegen(wide_cat(64)).kernels.at(0).source);
  const int d512 = brace_depth(codegen(wide_cat(512)).kernels.at(0).source);
  INFO("brace depth: 64 operands " << d64 << ", 512 operands " << d512);
  CHECK(d512 < 50);
  CHECK(d512 - d64 <= 8);
  // Every operand's elements land in its range, empty operands (Z = 0) between them too.
  check_graph(wide_cat(40), {{{"N", 3}, {"Z", 0}}, {{"N", 2}, {"Z", 1}}, {{"N", 1}, {"Z", 4}}});
}

TEST_CASE("a cat of thousands of tensors: cats of at most 256, the same values", "[passes]") {
  // A cat of 3,000 tensors had no scheduler (one kernel would compute a value per operand, past
  // the cost model's 2,048): the split-wide-cats pass makes cats of cats, each within bounds.
  CompiledFusion c = codegen(columns(1200));
  for (const Op& op : c.fusion.ops)
    if (op.kind == OpKind::Cat) CHECK(op.args.size() <= 256);
  CHECK(c.segmented.segments.size() > 1);
  // The split graph computes the cat's values exactly (the reference interpreter on both).
  Fusion whole = parse_text(wide_cat(600));
  Fusion split = whole;
  split_wide_cats(split);
  verify_fusion(split);
  size_t cats = 0;
  for (const Op& op : split.ops) {
    if (op.kind != OpKind::Cat) continue;
    ++cats;
    CHECK(op.args.size() <= 256);
  }
  CHECK(cats == 4);  // 600 = 256 + 256 + 88, and the cat of the three parts
  TensorMap inputs =
      make_random_inputs(whole, choose_symbol_values(whole, {{"N", 2}, {"Z", 1}}), 3);
  auto want = evaluate_fusion(whole, inputs, "inputs");
  auto got = evaluate_fusion(split, inputs, "inputs");
  REQUIRE(want.size() == 1);
  REQUIRE(got.size() == 1);
  CHECK(want.begin()->second.bytes() == got.begin()->second.bytes());
}
