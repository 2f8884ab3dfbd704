// Constant tensors (inputs with `data`): reading them (inline values, a tensor of a
// safetensors file beside the graph) and refusing bad ones; eval and generated kernels on
// them; the package holding them (never among the inputs the caller passes, verified when
// used); folding values computed from constants alone at compile time.
#include <catch2/catch.hpp>

#include <fstream>

#include "core/base/file_io.h"
#include "serde/package_writer.h"
#include "core/frontend/graph_parser.h"
#include "core/passes/presegmentation.h"
#include "runtime/package_report.h"
#include "cuda_test_util.h"
#include "emulated_check.h"
#include "fake_driver.h"
#include "fuserc_runtime.h"
#include "runtime/api/package.h"
#include "runtime/api/plan.h"
#include "temp_dir.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

// A graph with one constant input `c` (its entry given) added to x.
std::string with_constant(const std::string& entry) {
  return R"({"fuserc": 1, "name": "g", "inputs": [{"name": "x", "dtype": "f32", "shape": [2, 3]},
    )" + entry + R"(], "ops": [{"op": "add", "args": ["x", "c"], "out": "y"}], "outputs": ["y"]})";
}

// Writes a safetensors file of one bf16 tensor `w` [3, 4] (values 0..11) and an f32 `v` [4].
void write_weights(const std::string& path) {
  HostTensor w(DType::BF16, {3, 4}), v(DType::F32, {4});
  for (int i = 0; i < 12; ++i) w.store_f32(i, static_cast<float>(i));
  for (int i = 0; i < 4; ++i) v.store_f32(i, 0.25f * static_cast<float>(i));
  write_safetensors(path, {{"w", &w}, {"v", &v}});
}

Fusion parse_file(const std::string& dir, const std::string& json) {
  std::string path = dir + "/g.json";
  write_file_atomically(path, json);
  return parse_fusion_file(path);
}

std::string file_error(const std::string& dir, const std::string& json) {
  return error_of([&] { parse_file(dir, json); });
}

}  // namespace

TEST_CASE("constants: inline values are read in row-major order, bad ones refused",
          "[constants]") {
  Fusion f = parse_text(with_constant(
      R"({"name": "c", "dtype": "f16", "shape": [3], "data": [1.5, "-inf", "nan"]})"));
  const Value& c = f.value(f.inputs[1]);
  REQUIRE(c.is_constant());
  CHECK(c.constant->size() == 6);
  HostTensor t(DType::F16, {3});
  std::memcpy(t.data(), c.constant->data(), 6);
  CHECK(t.load_f32(0) == 1.5f);
  CHECK(std::isinf(t.load_f32(1)));
  CHECK(std::isnan(t.load_f32(2)));
  // Nested lists and a flat list are the same values.
  Fusion nested = parse_text(with_constant(
      R"({"name": "c", "dtype": "i32", "shape": [2, 3], "data": [[1, 2, 3], [4, 5, 6]]})"));
  Fusion flat = parse_text(with_constant(
      R"({"name": "c", "dtype": "i32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]})"));
  CHECK(nested.value(nested.inputs[1]).constant->bytes() ==
        flat.value(flat.inputs[1]).constant->bytes());

  auto bad = [](const std::string& entry) { return parse_error(with_constant(entry)); };
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5]})") ==
        "t.json:2:60: $.inputs[1].data: constant 'c' has 5 values but its shape [2, 3] holds 6");
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [2], "data": [1, 2, 3]})")
            .find("has more than 2 values but its shape [2] holds 2") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "bool", "shape": [2], "data": [true, 2]})")
            .find("$.inputs[1].data[1]: constant 'c' is bool: 2 is not 0 or 1") !=
        std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "i64", "shape": [1], "data": [0.5]})")
            .find("constant 'c' is i64: 0.5 is not an integer") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "i32", "shape": [1], "data": [4294967296]})")
            .find("constant 'c' is i32: 4294967296 is out of its range") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [1], "data": ["one"]})")
            .find("$.inputs[1].data[0]: a value of constant 'c' must be a number") !=
        std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": ["N"], "data": [1]})")
            .find("constant 'c' has a symbolic extent; the shape of a constant is integers only") !=
        std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "data": [1]})")
            .find("a constant needs a shape") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [3], "strides": [1], "data": [1, 2, 3]})")
            .find("a constant is dense and row-major (no strides)") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [3], "data": 7})")
            .find("must be a list of numbers") != std::string::npos);
  // Nesting that is neither flat nor the shape's is refused at the first list that does not fit.
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [2, 2], "data": [[1, 2, 3], [4]]})")
            .find("$.inputs[1].data[0]: constant 'c' of shape [2, 2] nests its data as no shape "
                  "does: a list of 2 was expected here") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [2, 3], "data": [[1, 2, 3], 4, 5, 6]})")
            .find("$.inputs[1].data: constant 'c' of shape [2, 3] nests its data as no shape "
                  "does: a list of 2 was expected here") != std::string::npos);
  CHECK(bad(R"({"name": "c", "dtype": "f32", "shape": [2], "data": [[1], [2]]})")
            .find("$.inputs[1].data[0]: constant 'c' nests its data deeper than its shape [2]") !=
        std::string::npos);
  // A rank-0 constant may be its one number, bare or in a list.
  Fusion bare = parse_text(with_constant(R"({"name": "c", "dtype": "f32", "shape": [], "data": 2.5})"));
  Fusion listed =
      parse_text(with_constant(R"({"name": "c", "dtype": "f32", "shape": [], "data": [2.5]})"));
  CHECK(bare.value(bare.inputs[1]).constant->bytes() ==
        listed.value(listed.inputs[1]).constant->bytes());
  // A constant is never written in place.
  CHECK(parse_error(R"({"fuserc": 1, "name": "g", "inputs": [
      {"name": "c", "dtype": "f32", "shape": [2], "data": [1, 2]}],
      "ops": [{"op": "neg", "args": ["c"], "out": "y"}], "outputs": ["y"],
      "aliases": {"y": "c"}})")
            .find("alias target 'c' is a constant") != std::string::npos);
}

TEST_CASE("constants: a tensor of a safetensors file beside the graph", "[constants]") {
  TempDir dir;
  write_weights(dir / "w.safetensors");
  Fusion f = parse_file(dir.path(), R"({"fuserc": 1, "name": "g", "inputs": [
      {"name": "x", "dtype": "f32", "shape": [2, 4]},
      {"name": "c", "dtype": "f32", "shape": [4], "data": {"file": "w.safetensors", "tensor": "v"}}],
      "ops": [{"op": "add", "args": ["x", "c"], "out": "y"}], "outputs": ["y"]})");
  const Value& c = f.value(f.inputs[1]);
  REQUIRE(c.is_constant());
  CHECK(c.constant->source() == "w.safetensors:v");
  CHECK(c.constant->file() == dir / "w.safetensors");
  float v2;
  std::memcpy(&v2, c.constant->data() + 8, 4);
  CHECK(v2 == 0.5f);

  auto bad = [&](const std::string& data) {
    return file_error(dir.path(), with_constant(R"({"name": "c", "dtype": "f32", "shape": [4],
      "data": )" + data + "}"));
  };
  CHECK(bad(R"({"file": "missing.safetensors", "tensor": "v"})")
            .find("$.inputs[1].data.file: cannot read the weights file of constant 'c'") !=
        std::string::npos);
  CHECK(bad(R"({"file": "w.safetensors", "tensor": "vv"})")
            .find("$.inputs[1].data.tensor: the weights file 'w.safetensors' has no tensor "
                  "'vv'") != std::string::npos);
  CHECK(bad(R"({"file": "w.safetensors", "tensor": "w"})")
            .find("constant 'c' is f32 but tensor 'w' of 'w.safetensors' is bf16") !=
        std::string::npos);
  CHECK(file_error(dir.path(), with_constant(R"({"name": "c", "dtype": "bf16", "shape": [4, 3],
      "data": {"file": "w.safetensors", "tensor": "w"}})"))
            .find("constant 'c' has shape [4, 3] but tensor 'w' of 'w.safetensors' has shape "
                  "[3, 4]") != std::string::npos);
  CHECK(bad(R"({"file": "w.safetensors", "tensor": "v", "offset": 3})")
            .find("unknown key 'offset'") != std::string::npos);
  write_file_atomically(dir / "junk.safetensors", "not safetensors at all");
  CHECK(bad(R"({"file": "junk.safetensors", "tensor": "v"})")
            .find("the weights file is not valid safetensors") != std::string::npos);
}

namespace {

// Constants of several dtypes and shapes, one from a file, one listed as an output, and a
// mask computed from a constant alone (folded).
std::string constants_graph() {
  return R"({"fuserc": 1, "name": "consts",
   "symbols": {"N": {"hint": 8, "max": 4096}},
   "inputs": [
    {"name": "x", "dtype": "f32", "shape": ["N", 4]},
    {"name": "c", "dtype": "f32", "shape": [4], "data": [1, 2, "inf", -0.5]},
    {"name": "m", "dtype": "bool", "shape": [2, 2], "data": [[true, false], [0, 1]]},
    {"name": "h", "dtype": "f16", "shape": [1, 4], "data": [0.5, 0.25, 2, 3]},
    {"name": "w", "dtype": "bf16", "shape": [3, 4], "data": {"file": "w.safetensors", "tensor": "w"}}],
   "ops": [
    {"op": "add", "args": ["x", "c"], "out": "y"},
    {"op": "reshape", "args": ["m"], "out": "m4", "shape": [4]},
    {"op": "where", "args": ["m4", "y", 0.0], "out": "z"},
    {"op": "sum", "args": ["w"], "dims": [0], "out": "ws"},
    {"op": "mul", "args": ["z", "ws"], "out": "o"},
    {"op": "mul", "args": ["o", "h"], "out": "oh"}],
   "outputs": ["oh", "c"]})";
}

}  // namespace

TEST_CASE("constants: eval and generated kernels agree, and values made of constants fold",
          "[constants][emulated]") {
  TempDir dir;
  write_weights(dir / "w.safetensors");
  Fusion f = parse_file(dir.path(), constants_graph());
  // Folding: m4 (a view of a constant) and ws (a reduction of one) are computed at compile
  // time; the constants they came from are no longer needed.
  Fusion folded = f;
  PassContext ctx;
  run_presegmentation_passes(folded, ctx);
  std::vector<std::string> constants;
  for (ValueId id : folded.inputs)
    if (folded.value(id).is_constant()) constants.push_back(folded.value(id).name);
  CHECK(constants == std::vector<std::string>{"c", "h", "m4", "ws"});
  for (const Op& op : folded.ops) CHECK((op.kind != OpKind::Sum && op.kind != OpKind::Reshape));

  auto exe = compile_graph(f);
  // The caller passes x only; the package holds four constants.
  CHECK(exe->metadata().inputs()->size() == 1);
  CHECK(exe->num_constants() == 4);
  for (int64_t n : {1, 8, 37}) {
    auto symbols = choose_symbol_values(f, {{"N", n}});
    TensorMap inputs = make_random_inputs(f, symbols, 3);
    CHECK(inputs.size() == 1);  // no constant is drawn
    auto want = evaluate_fusion(f, inputs, "in");
    for (const auto& mode : memory_modes()) {
      EmulatorDevice device({}, mode);
      auto got = run_package(*exe, device, inputs, "in");
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i)
        CHECK(compare_tensors(got[i].second, want[i].second) == "");
    }
    // In place (no copy) when the emulator reads host memory as it lies.
    EmulatorDevice plain;
    auto got = run_package(*exe, plain, inputs, "in");
    CHECK(compare_tensors(got[1].second, want[1].second) == "");
  }
  // Passing a constant is refused, from eval and the runtime alike.
  TensorMap extra = make_random_inputs(f, choose_symbol_values(f, {}), 1);
  extra.emplace("c", HostTensor(DType::F32, {4}));
  std::string want =
      "in: tensor 'c' is a constant of the graph: its values are in the graph and the package, "
      "so it is never passed";
  CHECK(error_of([&] { evaluate_fusion(f, extra, "in"); }) == want);
  CHECK(error_of([&] { exe->bind_inputs(extra, "in"); }) == want);
}

TEST_CASE("constants: an f16 value that does not round exactly, or a large one, is not folded",
          "[constants]") {
  Fusion f = parse_text(R"({"fuserc": 1, "name": "g",
   "inputs": [{"name": "x", "dtype": "f16", "shape": [3]},
              {"name": "c", "dtype": "f16", "shape": [3], "data": [1, 3, 7]},
              {"name": "d", "dtype": "f16", "shape": [1, 3], "data": [1, 2, 4]}],
   "ops": [{"op": "div", "args": ["c", 10.0], "out": "inexact"},
           {"op": "mul", "args": ["c", 2.0], "out": "exact"},
           {"op": "expand", "args": ["d"], "shape": [65536, 3], "out": "big"},
           {"op": "add", "args": ["x", "inexact"], "out": "a"},
           {"op": "add", "args": ["a", "exact"], "out": "b"},
           {"op": "add", "args": ["b", "big"], "out": "y"}],
   "outputs": ["y"]})");
  PassContext ctx;
  run_presegmentation_passes(f, ctx);
  std::vector<std::string> constants, ops;
  for (ValueId id : f.inputs)
    if (f.value(id).is_constant()) constants.push_back(f.value(id).name);
  for (const Op& op : f.ops) ops.push_back(f.value(op.outs[0]).name);
  // 1/10 in f32 is not an f16: c stays and the division stays in the kernel. The expand of d
  // (384 KiB from 6 bytes) is left to the kernel too.
  CHECK(constants == std::vector<std::string>{"c", "d", "exact"});
  CHECK(ops == std::vector<std::string>{"inexact", "big", "a", "b", "y"});
}

TEST_CASE("constants in the package: inspected, verified when used, through every entry point",
          "[constants][c_api][package]") {
  TempDir dir;
  write_weights(dir / "w.safetensors");
  Fusion f = parse_file(dir.path(), constants_graph());
  // In the FlatBuffer (the default for small ones), and all in the external data section.
  const bool external = GENERATE(false, true);
  INFO((external ? "external" : "inline") << " constants");
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = false;
  o.external_constant_bytes = external ? 1 : CompiledFusion::kDefaultExternalConstantBytes;
  CompiledFusion c = compile_fusion(f, o, ctx);
  std::string bytes = serialize_package(c, {});
  // Written to a file (streamed) and read back: the same bytes.
  write_package(dir / "p.fpkg", c, {});
  CHECK(read_file(dir / "p.fpkg") == bytes);
  // Borrowed: the views it gives point into `bytes`.
  Executable exe(PackageView::view_bytes(reinterpret_cast<const uint8_t*>(bytes.data()),
                                         bytes.size(), "p.fpkg"));
  nlohmann::json j = package_json(exe, nullptr);
  REQUIRE(j["constants"].size() == 4);
  CHECK(j["constants"][0]["name"] == "c");
  CHECK(j["constants"][0]["dtype"] == "f32");
  CHECK(j["constants"][0]["bytes"] == 16);
  CHECK(j["constants"][0]["hash"].get<std::string>().size() == 16);
  for (const auto& k : j["constants"]) CHECK(k["stored"] == (external ? "external" : "inline"));
  CHECK(j["inputs"].size() == 1);
  // The `fuserc run` path, from the file: the emulator reads mapped constants in place.
  {
    auto from_file = Executable::load(dir / "p.fpkg");
    TensorMap in = make_random_inputs(f, choose_symbol_values(f, {{"N", 9}}), 5);
    EmulatorDevice device;
    auto got = run_package(*from_file, device, in, "in");
    auto want = evaluate_fusion(f, in, "in");
    for (size_t i = 0; i < got.size(); ++i) CHECK(compare_tensors(got[i].second, want[i].second) == "");
    if (external)
      CHECK(reinterpret_cast<uintptr_t>(from_file->constant_bytes(0).data()) % 256 == 0);
  }

  // The C interface: one input, four constants; in the emulator, bound and launched.
  fuserc_load_options options{FUSERC_DEVICE_EMULATOR, nullptr};
  fuserc_package* p = nullptr;
  REQUIRE(fuserc_package_load_bytes(bytes.data(), bytes.size(), 0, &options, &p) == FUSERC_OK);
  CHECK(fuserc_package_num_inputs(p) == 1);
  REQUIRE(fuserc_package_num_constants(p) == 4);
  fuserc_constant_info info;
  REQUIRE(fuserc_package_constant(p, 1, &info) == FUSERC_OK);
  CHECK(std::string(info.name) == "h");
  CHECK((info.dtype == FUSERC_F16 && info.rank == 2 && info.shape[0] == 1 && info.shape[1] == 4 &&
         info.bytes == 8));
  CHECK(fuserc_package_constant(p, 4, &info) == FUSERC_ERROR_INVALID_ARGUMENT);
  TensorMap inputs = make_random_inputs(f, choose_symbol_values(f, {{"N", 5}}), 2);
  auto want = evaluate_fusion(f, inputs, "in");
  int64_t xs[2] = {5, 4};
  const int64_t* shapes[1] = {xs};
  int32_t ranks[1] = {2};
  fuserc_plan* plan = nullptr;
  REQUIRE(fuserc_bind_shapes(p, shapes, ranks, 1, &plan) == FUSERC_OK);
  HostTensor oh(DType::F32, {5, 4}), cout(DType::F32, {4});
  const void* in[1] = {inputs.at("x").data()};
  void* out[2] = {oh.data(), cout.data()};
  REQUIRE(fuserc_launch(plan, nullptr, in, out, nullptr, 0) == FUSERC_OK);
  CHECK(compare_tensors(oh, want[0].second) == "");
  CHECK(compare_tensors(cout, want[1].second) == "");  // a constant listed as an output
  fuserc_plan_free(plan);
  fuserc_package_free(p);

  // A damaged constant: the package still loads (its data is read when used), then every
  // use refuses it.
  std::string damaged = bytes;
  const fb::Constant* h = exe.metadata().constants()->Get(1);
  std::string_view h_bytes = exe.constant_bytes(1);
  REQUIRE(h_bytes.size() == 8);
  damaged[static_cast<size_t>(h_bytes.data() - bytes.data()) + 3] ^= 0x40;
  (void)h;
  Executable bad(PackageView::from_bytes(damaged, "bad.fpkg"));
  EmulatorDevice device;
  std::string error = error_of([&] { run_package(bad, device, inputs, "in"); });
  CHECK(error.find("bad.fpkg: corrupted package:") == 0);
  CHECK(error.find("'h'") != std::string::npos);
  CHECK(error_of([&] { bad.package().verify_all(); }).find("bad.fpkg: corrupted package") == 0);
  REQUIRE(fuserc_package_load_bytes(damaged.data(), damaged.size(), 0, &options, &p) ==
          FUSERC_OK);
  CHECK(fuserc_bind_shapes(p, shapes, ranks, 1, &plan) != FUSERC_OK);
  CHECK(std::string(fuserc_last_error()).find("corrupted package") != std::string::npos);
  fuserc_package_free(p);
}

TEST_CASE("constants on a GPU (fake driver): uploaded once, on the first bind, and read there",
          "[constants][cuda_fake]") {
  TempDir dir;
  write_weights(dir / "w.safetensors");
  Fusion f = parse_file(dir.path(), constants_graph());
  PassContext ctx;
  CompileOptions o;
  o.archs = {90};
  o.external_constant_bytes = 8;  // two of the four outside the FlatBuffer
  std::string bytes = serialize_package(compile_fusion(f, o, ctx), {});
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(bytes, "p.fpkg");
  fake.register_package(pkg->executable(), true);
  for (int64_t n : {3, 40}) {
    TensorMap in = make_random_inputs(f, choose_symbol_values(f, {{"N", n}}), 7);
    auto want = evaluate_fusion(f, in, "in");
    const int copies_before = fake.copies;
    auto plan = pkg->bind_shapes({in.at("x").shape()});
    // Four constants uploaded by the first bind only.
    CHECK(fake.copies - copies_before == (n == 3 ? 4 : 0));
    DeviceBuffers mem;
    PlanBuffers b = upload_inputs(*plan, in, mem);
    plan->launch(nullptr, b.inputs.data(), b.outputs.data());
    auto got = download_outputs(*plan, b);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("output " << got[i].first << " at N = " << n);
      CHECK(compare_tensors(got[i].second, want[i].second) == "");
    }
  }
}
