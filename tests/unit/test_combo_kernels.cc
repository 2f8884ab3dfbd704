// Combo kernels (codegen/lower/combo_kernel.h, core/segment/launch_groups.h): independent
// pointwise kernels launched as one, a range of blocks each. An Adam step over many
// parameters of mixed shapes is a few launches and matches eval in the emulator (guard pages,
// misaligned buffers); members with 32- and 64-bit variants give a combo of each; and a
// kernel is never moved up past one that writes what it reads or reads what it overwrites.
#include <catch2/catch.hpp>

#include <string>

#include "codegen/cuda/cuda_emitter.h"
#include "emulated_check.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

// An Adam step (as bench/make_adam.py writes it) over `shapes.size()` parameters, updated in
// place from shared scalar hyperparameters.
std::string adam_graph(const std::vector<std::string>& shapes, const std::string& symbols) {
  std::string inputs, ops, outputs, aliases;
  for (const char* s : {"lr", "beta1", "beta2", "eps", "bc1", "bc2"})
    inputs += std::string(inputs.empty() ? "" : ",") + "{\"name\":\"" + s + "\",\"dtype\":\"f32\"}";
  auto op = [&](const std::string& kind, const std::string& a, const std::string& b,
                const std::string& out) {
    ops += std::string(ops.empty() ? "" : ",") + "{\"op\":\"" + kind + "\",\"args\":[" + a +
           (b.empty() ? "" : "," + b) + "],\"out\":\"" + out + "\"}";
  };
  auto q = [](const std::string& s) { return "\"" + s + "\""; };
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string n = std::to_string(i);
    for (const char* t : {"p", "g", "m", "v"})
      inputs += ",{\"name\":\"" + std::string(t) + n + "\",\"dtype\":\"f32\",\"shape\":" +
                shapes[i] + (std::string(t) == "v" ? ",\"range\":[0.0,1.0]" : "") + "}";
    op("mul", q("m" + n), q("beta1"), "m0_" + n);
    op("sub", "1.0", q("beta1"), "ob1_" + n);
    op("mul", q("g" + n), q("ob1_" + n), "m1_" + n);
    op("add", q("m0_" + n), q("m1_" + n), "mn" + n);
    op("mul", q("v" + n), q("beta2"), "v0_" + n);
    op("sub", "1.0", q("beta2"), "ob2_" + n);
    op("mul", q("g" + n), q("g" + n), "g2_" + n);
    op("mul", q("g2_" + n), q("ob2_" + n), "v1_" + n);
    op("add", q("v0_" + n), q("v1_" + n), "vn" + n);
    op("div", q("mn" + n), q("bc1"), "mh" + n);
    op("div", q("vn" + n), q("bc2"), "vh" + n);
    op("sqrt", q("vh" + n), "", "sv" + n);
    op("add", q("sv" + n), q("eps"), "den" + n);
    op("div", q("mh" + n), q("den" + n), "upd" + n);
    op("mul", q("upd" + n), q("lr"), "st" + n);
    op("sub", q("p" + n), q("st" + n), "pn" + n);
    for (const char* t : {"p", "m", "v"}) {
      outputs += std::string(outputs.empty() ? "" : ",") + q(t + std::string("n") + n);
      aliases += std::string(aliases.empty() ? "" : ",") + q(t + std::string("n") + n) + ":" +
                 q(t + n);
    }
  }
  return "{\"fuserc\":1,\"name\":\"adam\",\"symbols\":{" + symbols + "},\"inputs\":[" + inputs +
         "],\"ops\":[" + ops + "],\"outputs\":[" + outputs + "],\"aliases\":{" + aliases + "}}";
}

bool is_combo(const std::string& kernel) { return kernel.find("_combo") != std::string::npos; }

}  // namespace

TEST_CASE("an Adam step over 70 parameters of mixed shapes is two combo launches",
          "[emulated][combo]") {
  // Odd sizes (scalar paths), one element, vectors of 4, and rows: 70 members, so the
  // 64-member limit splits them into two combo kernels.
  const std::vector<std::string> kinds = {"[1]", "[7]", "[33, 5]", "[64]", "[3, 130]", "[2, 2, 9]"};
  std::vector<std::string> shapes;
  for (int i = 0; i < 70; ++i) shapes.push_back(kinds[(i * 5) % kinds.size()]);
  std::string json = adam_graph(shapes, "");
  auto launched = check_graph(json, {{}}, {true, true});
  REQUIRE(launched.size() == 1);
  REQUIRE(launched[0].size() == 2);
  for (const auto& k : launched[0]) CHECK(is_combo(k));
  // One source per launch, each member a device function called once.
  auto sources = kernel_sources(json);
  REQUIRE(sources.size() == 2);
  size_t members = 0;
  for (const auto& s : sources) {
    CHECK(s.find("blockIdx.x") != std::string::npos);
    for (size_t at = s.find("fz_start"); at != std::string::npos; at = s.find("fz_start", at + 1))
      ++members;
  }
  // Each combo of n members has n - 1 starts, each named in the signature, a test and a call.
  CHECK(members == 3 * (70 - 2));
}

TEST_CASE("combo kernels of members with 32- and 64-bit variants", "[emulated][combo]") {
  // N may exceed 2^31: each member has a 32-bit kernel and a 64-bit one, so the combo has both,
  // and small sizes launch the 32-bit one.
  std::string json = adam_graph({"[\"N\"]", "[\"N\", 3]", "[5]"},
                                "\"N\":{\"min\":1,\"max\":4000000000,\"hint\":1000}");
  auto sources = kernel_sources(json);
  REQUIRE(sources.size() == 2);
  CHECK(sources[0].find("_combo_i32(") != std::string::npos);
  CHECK(sources[1].find("_combo_i64(") != std::string::npos);
  auto launched = check_graph(json, {{{"N", 1}}, {{"N", 1001}}}, {true, true});
  for (const auto& l : launched) {
    REQUIRE(l.size() == 1);
    CHECK(l[0].find("_combo_i32") != std::string::npos);
  }
}

TEST_CASE("a kernel joins a combo only where moving it up changes nothing it sees",
          "[emulated][combo]") {
  // y = exp(e) opens a step. s = sum(b) is a reduction after it; z = c * s reads s, so it may
  // not move up to y's step. a2 = a + 1 overwrites a in place after the reduction t = sum(a)
  // reads a, so it may not move up past t either. w = exp(d) reads and writes nothing the
  // others touch: it joins the latest step.
  std::string json = R"({"fuserc": 1, "name": "order",
    "symbols": {"N": {"hint": 1000}},
    "inputs": [{"name": "a", "dtype": "f32", "shape": ["N"]},
               {"name": "b", "dtype": "f32", "shape": ["N"]},
               {"name": "c", "dtype": "f32", "shape": ["N"]},
               {"name": "d", "dtype": "f32", "shape": [7]},
               {"name": "e", "dtype": "f32", "shape": [5]}],
    "ops": [{"op": "exp", "args": ["e"], "out": "y"},
            {"op": "sum", "args": ["b"], "dims": [0], "out": "s"},
            {"op": "mul", "args": ["c", "s"], "out": "z"},
            {"op": "sum", "args": ["a"], "dims": [0], "out": "t"},
            {"op": "add", "args": ["a", 1.0], "out": "a2"},
            {"op": "exp", "args": ["d"], "out": "w"}],
    "outputs": ["y", "z", "t", "a2", "w"],
    "aliases": {"a2": "a"}})";
  Fusion f = parse_text(json);
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(f, o, ctx);
  REQUIRE(c.segmented.segments.size() == 6);
  auto step_writing = [&](const std::string& name) {
    for (size_t i = 0; i < c.plan.size(); ++i)
      for (ValueId v : step_writes(c, c.plan[i]))
        if (c.fusion.value(v).name == name) return static_cast<int>(i);
    FAIL("no step writes " << name);
    return -1;
  };
  CHECK(step_writing("z") > step_writing("s"));
  CHECK(step_writing("a2") > step_writing("t"));
  CHECK(step_writing("z") != step_writing("y"));
  CHECK(step_writing("w") == step_writing("a2"));
  CHECK(c.plan.size() == 5);
  check_graph(json, {{{"N", 1}}, {{"N", 1000}}});
}

TEST_CASE("graph names that look like the combo kernel's own do not clash", "[emulated][combo]") {
  // A symbol named like a member's block-index parameter, an input named like a range start,
  // and a value named like the unroll pragma's word: the combo kernel still compiles and runs.
  std::string json = R"({"fuserc": 1, "name": "names",
    "symbols": {"fz_block": {"hint": 100}},
    "inputs": [{"name": "fz_start1", "dtype": "f32", "shape": ["fz_block"]},
               {"name": "fz_member0", "dtype": "f32", "shape": [7]},
               {"name": "unroll", "dtype": "f32", "shape": [9]}],
    "ops": [{"op": "exp", "args": ["fz_start1"], "out": "y"},
            {"op": "sin", "args": ["fz_member0"], "out": "z"},
            {"op": "cos", "args": ["unroll"], "out": "pragma"}],
    "outputs": ["y", "z", "pragma"]})";
  auto launched = check_graph(json, {{{"fz_block", 1}}, {{"fz_block", 1000}}});
  for (const auto& l : launched) {
    REQUIRE(l.size() == 1);
    CHECK(is_combo(l[0]));
  }
  // The member functions keep their pragmas: `unroll` is a value's name, not the pragma's.
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  CompiledFusion c = compile_fusion(parse_text(json), o, ctx);
  REQUIRE(!c.kernels.empty());  // a 32-bit and a 64-bit combo
  for (const auto& k : c.kernels) {
    std::string own = k.source.substr(cuda::preamble().size());
    CHECK(own.find("#pragma unroll") != std::string::npos);
    CHECK(own.find("#pragma n") == std::string::npos);
  }
}

TEST_CASE("without combo kernels every kernel is its own launch", "[emulated][combo]") {
  std::string json = adam_graph({"[7]", "[33, 5]", "[64]"}, "");
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  o.combo_kernels = false;
  CompiledFusion c = compile_fusion(parse_text(json), o, ctx);
  CHECK(c.plan.size() == 3);
  for (const auto& k : c.kernels) CHECK(!is_combo(k.name));
  o.combo_kernels = true;
  CompiledFusion d = compile_fusion(parse_text(json), o, ctx);
  REQUIRE(d.plan.size() == 1);
  CHECK(is_combo(d.kernels[d.plan[0].kernels[0]].name));
}
