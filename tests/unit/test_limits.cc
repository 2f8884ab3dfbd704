// Tests for the resource limits: the graph parser's caps on the number of ops, inputs and
// symbols (names and ranks are in the errors corpus), and a bound plan's refusal of launch
// geometry and sizes that a hostile package computes (grid beyond the CUDA limits, negative
// or absurd sizes, an intermediate outside the workspace) with a one-line UserError.
#include <catch2/catch.hpp>

#include <functional>

#include "codegen/compile_fusion.h"
#include "core/frontend/graph_limits.h"
#include "runtime/executable.h"
#include "runtime/launch_plan.h"
#include "serde/package_writer.h"
#include "serde/reader/package_layout.h"
#include "serde/reader/package_reader.h"
#include "test_util.h"

using namespace fuserc;
using fuserc::testing::error_of;
using fuserc::testing::parse_error;
using fuserc::testing::parse_text;

namespace {

// `n` copies of `item`, comma-separated.
std::string repeated(const std::string& item, size_t n) {
  std::string s;
  s.reserve(n * (item.size() + 1));
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += item;
  }
  return s;
}

// A package of `json` (no NVRTC) whose program slot `slot_of(metadata)` is turned into the
// constant `value`, with its checksum made valid again, as a hostile writer would.
std::string with_slot(const std::string& json,
                      const std::function<uint32_t(const fb::Metadata&)>& slot_of, int64_t value) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  std::string b = serialize_package(compile_fusion(parse_text(json), o, ctx), {});
  const fb::Package* pkg = fb::GetPackage(b.data());
  auto* meta = const_cast<fb::Metadata*>(pkg->metadata_nested_root());
  auto* in = meta->mutable_program()->GetMutableObject(slot_of(*meta));
  in->mutate_op(fb::Opcode::Const);
  in->mutate_imm(value);
  size_t fb_size = b.size() - kPackageTrailerSize;
  PackageTrailer t;
  REQUIRE(decode_trailer(reinterpret_cast<const uint8_t*>(b.data()) + fb_size, t));
  t.head_hash = package_head_hash(reinterpret_cast<const uint8_t*>(b.data()), fb_size,
                                  t.blob_offset, t.blob_size);
  encode_trailer(t, reinterpret_cast<uint8_t*>(b.data()) + fb_size);
  return b;
}

// The error of binding (symbols all 8) and planning the package `bytes`, or "<no error>".
std::string plan_error(const std::string& bytes) {
  return error_of([&] {
    Executable exe(PackageView::from_bytes(bytes, "p.fpkg"));
    auto b = exe.bind(std::vector<int64_t>(exe.metadata().symbols()->size(), 8));
    LaunchPlan plan(exe, *b);
  });
}

const std::string kPointwise = R"({"fuserc": 1, "name": "g",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [1000]}],
  "ops": [{"op": "neg", "args": ["x"], "out": "y"}], "outputs": ["y"]})";

// Two kernels, so that an intermediate lives in the workspace.
const std::string kTwoKernels = R"({"fuserc": 1, "name": "g",
  "inputs": [{"name": "x", "dtype": "f32", "shape": [64, 64]}],
  "ops": [{"op": "neg", "args": ["x"], "out": "t"},
          {"op": "segment_set", "args": ["t"], "out": "ts"},
          {"op": "sum", "args": ["ts"], "dims": [1], "out": "y"}], "outputs": ["y"]})";

}  // namespace

TEST_CASE("limits: more ops, inputs or symbols than the caps are refused early", "[limits]") {
  const std::string head = R"({"fuserc": 1, "name": "g", )";
  // The count is checked before any entry is read, so empty entries suffice.
  CHECK(parse_error(head + R"("inputs": [], "ops": [)" + repeated("{}", kMaxOps + 1) +
                    R"(], "outputs": ["x"]})") ==
        "t.json:1:49: $.ops: has 1000001 ops; the limit is 1000000");
  CHECK(parse_error(head + R"("inputs": [)" + repeated("{}", kMaxInputs + 1) +
                    R"(], "ops": [], "outputs": ["x"]})")
            .find("has 100001 inputs; the limit is 100000") != std::string::npos);
  std::string symbols;
  for (size_t i = 0; i <= kMaxSymbols; ++i)
    symbols += (i ? ",\"s" : "\"s") + std::to_string(i) + "\": {}";
  CHECK(parse_error(head + R"("symbols": {)" + symbols +
                    R"(}, "inputs": [], "ops": [], "outputs": ["x"]})")
            .find("has 10001 symbols; the limit is 10000") != std::string::npos);
  // At the caps themselves names and ranks are accepted.
  std::string name(kMaxNameLength, 'n');
  std::string shape = repeated("1", kMaxRank);
  Fusion f = parse_text(head + R"("inputs": [{"name": ")" + name +
                        R"(", "dtype": "f32", "shape": [)" + shape + R"(]}], "ops": [],
                        "outputs": [")" +
                        name + "\"]}");
  CHECK(f.value(f.inputs[0]).shape.size() == kMaxRank);
}

TEST_CASE("limits: a 2^40-element f64 tensor sizes exactly or is refused, never wraps",
          "[limits]") {
  // 2^40 elements of 8 bytes: 2^43 bytes fit in 64 bits, but the pointwise grid
  // (2^40 / 512 elements per block = 2^31 blocks) is beyond the CUDA limit: the guard says so.
  const std::string big = R"({"fuserc": 1, "name": "g",
    "inputs": [{"name": "x", "dtype": "f64", "shape": [1048576, 1048576]}],
    "ops": [{"op": "neg", "args": ["x"], "out": "y"}], "outputs": ["y"]})";
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  Executable exe(PackageView::from_bytes(
      serialize_package(compile_fusion(parse_text(big), o, ctx), {}), "big.fpkg"));
  CHECK(error_of([&] { exe.bind({}); }).find("big.fpkg: cannot launch: kernel") == 0);
  // A symbolic square whose element count overflows 64 bits at bind time.
  const std::string square = R"({"fuserc": 1, "name": "g", "symbols": {"N": {}},
    "inputs": [{"name": "x", "dtype": "f64", "shape": ["N", "N"]}],
    "ops": [{"op": "neg", "args": ["x"], "out": "y"}], "outputs": ["y"]})";
  Executable sq(PackageView::from_bytes(
      serialize_package(compile_fusion(parse_text(square), o, ctx), {}), "sq.fpkg"));
  CHECK(error_of([&] {
          sq.bind({int64_t{1} << 32});
        }).find("sq.fpkg: cannot size this shape: size arithmetic overflows 64 bits") == 0);
  CHECK(error_of([&] { sq.bind({int64_t{1} << 16}); }) == "<no error>");
}

TEST_CASE("limits: a hostile package cannot launch an out-of-range grid", "[limits]") {
  auto grid = [](int d) {
    return [d](const fb::Metadata& m) { return m.kernels()->Get(0)->grid()->Get(d); };
  };
  auto block = [](int d) {
    return [d](const fb::Metadata& m) { return m.kernels()->Get(0)->block()->Get(d); };
  };
  CHECK(plan_error(with_slot(kPointwise, grid(0), 2)) == "<no error>");
  CHECK(plan_error(with_slot(kPointwise, grid(0), int64_t{1} << 31))
            .find("p.fpkg: cannot launch kernel 'g_k0': grid 2147483648x1x1") == 0);
  // Beyond 32 bits: clamped for the message, never wrapped to a small grid.
  CHECK(plan_error(with_slot(kPointwise, grid(0), (int64_t{1} << 32) + 5))
            .find("grid 4294967295x1x1") != std::string::npos);
  CHECK(plan_error(with_slot(kPointwise, grid(1), 65536)).find("beyond the CUDA limits") !=
        std::string::npos);
  CHECK(plan_error(with_slot(kPointwise, block(0), 2048)).find("beyond the CUDA limits") !=
        std::string::npos);
  CHECK(plan_error(with_slot(kPointwise, block(2), 65)).find("beyond the CUDA limits") !=
        std::string::npos);
}

TEST_CASE("limits: negative, absurd or misplaced sizes in a package are refused", "[limits]") {
  auto workspace = [](const fb::Metadata& m) { return m.workspace_bytes_slot(); };
  CHECK(plan_error(with_slot(kTwoKernels, workspace, -1)) ==
        "p.fpkg: cannot launch: the workspace size is -1 bytes, outside [0, 2^56]");
  CHECK(plan_error(with_slot(kTwoKernels, workspace, int64_t{1} << 60)) ==
        "p.fpkg: cannot launch: the workspace size is 1152921504606846976 bytes, outside "
        "[0, 2^56]");
  // An intermediate placed past the end of the workspace: the kernels would write beyond it.
  auto intermediate_offset = [](const fb::Metadata& m) {
    for (const auto* b : *m.buffers())
      if (b->kind() == fb::BufferKind::Intermediate) return b->offset_slot();
    FAIL("no intermediate buffer");
    return uint32_t{0};
  };
  CHECK(plan_error(with_slot(kTwoKernels, intermediate_offset, 1 << 20)) ==
        "p.fpkg: corrupted package: buffer 'ts' lies outside the workspace");
  auto output_bytes = [](const fb::Metadata& m) { return m.outputs()->Get(0)->bytes_slot(); };
  CHECK(plan_error(with_slot(kTwoKernels, output_bytes, -8)) ==
        "p.fpkg: cannot launch: the output size is -8 bytes, outside [0, 2^56]");
}
