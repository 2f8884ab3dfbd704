// Tests for the package: round trip (compile -> write -> load -> inspect JSON equals the
// compiler's own view, and every size evaluates as the expressions did), byte-identical
// output, refusal of every truncation and every single flipped byte, clear messages for
// foreign, empty and future packages, and binding (cache, ranges, guards, arithmetic errors).
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <random>

#include "codegen/compile_fusion.h"
#include "core/base/file_io.h"
#include "core/eval/random_inputs.h"
#include "runtime/executable.h"
#include "runtime/package_report.h"
#include "serde/compiled_view.h"
#include "serde/package_writer.h"
#include "serde/reader/package_layout.h"
#include "serde/reader/package_reader.h"
#include "serde/reader/program_evaluator.h"
#include "test_util.h"

using namespace fuserc;
using fuserc::testing::error_of;
using fuserc::testing::parse_text;

namespace {

const std::string kGraph = R"({"fuserc": 1, "name": "pkg_test",
  "symbols": {"N": {"hint": 64, "max": 4096}, "M": {"hint": 96}},
  "inputs": [{"name": "x", "dtype": "bf16", "shape": ["N", "M"]},
             {"name": "b", "dtype": "bf16", "shape": ["M"]},
             {"name": "s", "dtype": "f32"}],
  "ops": [{"op": "add", "args": ["x", "b"], "out": "t"},
          {"op": "mul", "args": ["t", "s"], "out": "u"},
          {"op": "segment_set", "args": ["u"], "out": "us"},
          {"op": "gelu", "args": ["us"], "out": "y"}],
  "outputs": ["y", "t"]})";

CompiledFusion compile(const std::string& json, bool nvrtc) {
  PassContext ctx;
  CompileOptions o;
  o.run_nvrtc = nvrtc;
  o.jobs = 2;
  return compile_fusion(parse_text(json), o, ctx);
}

}  // namespace

TEST_CASE("round trip: inspect --json of the loaded package equals the compiler's view",
          "[package]") {
  CompiledFusion c = compile(kGraph, true);
  std::string bytes = serialize_package(c, {});
  Executable exe(PackageView::from_bytes(bytes, "p.fpkg"));
  nlohmann::json loaded = package_json(exe, nullptr);
  CHECK(loaded["size_bytes"] == bytes.size());
  loaded.erase("size_bytes");
  nlohmann::json view = compiled_view(c);
  CHECK(loaded.dump(1) == view.dump(1));
  // The keys scripts rely on.
  for (const char* key : {"name", "format_version", "archs", "buffers", "workspace", "kernels"})
    CHECK(loaded.contains(key));
  for (const auto& k : loaded["kernels"])
    for (const char* key : {"name", "scheduler", "archs", "registers", "spill_bytes"})
      CHECK(k.contains(key));
  CHECK(loaded["kernels"].size() >= 2);
  CHECK(loaded["archs"] == nlohmann::json::array({"sm_80", "sm_90"}));
}

TEST_CASE("round trip: every size evaluates in the package as its expression does", "[package]") {
  CompiledFusion c = compile(kGraph, false);
  Executable exe(PackageView::from_bytes(serialize_package(c, {}), "p.fpkg"));
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    int64_t n = 1 + rng() % 4096, m = 1 + rng() % 100000;
    auto b = exe.bind({m, n});  // symbols are sorted by name: M, N
    auto value = [&](const Expr& e) {
      return evaluate(
          e, [&](const std::string& s) -> std::optional<int64_t> { return s == "N" ? n : m; });
    };
    for (uint32_t l = 0; l < c.plan.size(); ++l) {
      const auto& step = c.plan[l];
      size_t chosen = 0;
      while (chosen + 1 < step.kernels.size() && value(step.conditions[chosen]) == 0) ++chosen;
      REQUIRE(b->kernel_of[l] == static_cast<uint32_t>(step.kernels[chosen]));
      const KernelSummary& k = c.kernels[step.kernels[chosen]];
      const fb::Kernel* pk = exe.metadata().kernels()->Get(b->kernel_of[l]);
      for (int d = 0; d < 3; ++d) {
        CHECK(b->slot(pk->grid()->Get(d)) == value(k.grid[d]));
        CHECK(b->slot(pk->block()->Get(d)) == value(k.block[d]));
      }
    }
    for (uint32_t i = 0; i < c.memory.buffers.size(); ++i) {
      CHECK(b->slot(exe.metadata().buffers()->Get(i)->bytes_slot()) ==
            value(c.memory.buffers[i].bytes));
      CHECK(b->slot(exe.metadata().buffers()->Get(i)->offset_slot()) ==
            (c.memory.buffers[i].kind == BufferInfo::Kind::Intermediate
                 ? value(c.memory.buffers[i].offset)
                 : 0));
    }
    CHECK(b->slot(exe.metadata().workspace_bytes_slot()) == value(c.memory.workspace_bytes));
  }
}

TEST_CASE("the same graph compiled twice gives identical bytes", "[package]") {
  std::string a = serialize_package(compile(kGraph, true), {{"--arch=sm_80,sm_90"}});
  std::string b = serialize_package(compile(kGraph, true), {{"--arch=sm_80,sm_90"}});
  CHECK(a.size() == b.size());
  CHECK(a == b);
}

TEST_CASE("every truncation and every flipped byte is refused, never a crash", "[package]") {
  std::string bytes = serialize_package(compile(kGraph, false), {});
  REQUIRE_NOTHROW(PackageView::from_bytes(bytes, "p.fpkg")->verify_all());
  for (size_t len = 0; len < bytes.size(); ++len) {
    INFO("truncated to " << len << " bytes");
    CHECK_THROWS_AS(
        PackageView::view_bytes(reinterpret_cast<const uint8_t*>(bytes.data()), len, "p")
            ->verify_all(),
        UserError);
  }
  std::string mutated = bytes;
  const uint8_t* data = reinterpret_cast<const uint8_t*>(mutated.data());
  for (size_t i = 0; i < mutated.size(); ++i) {
    for (uint8_t flip : {uint8_t{0x01}, uint8_t{0x80}}) {
      mutated[i] = static_cast<char>(mutated[i] ^ flip);
      INFO("byte " << i << " flipped by " << int(flip));
      CHECK_THROWS_AS(PackageView::view_bytes(data, mutated.size(), "p")->verify_all(), UserError);
      mutated[i] = bytes[i];
    }
  }
}

TEST_CASE("each failed check says which one", "[package]") {
  std::string bytes = serialize_package(compile(kGraph, false), {});
  auto open = [](const std::string& b) {
    return error_of([&] { PackageView::from_bytes(b, "p.fpkg")->verify_all(); });
  };
  CHECK(open("") == "p.fpkg: not a fuserc package: the file is empty");
  CHECK(open("{\"fuserc\": 1, \"name\": \"g\"}") ==
        "p.fpkg: not a fuserc package (no FZPK identifier; was it written by fuserc compile?)");
  CHECK(open(bytes.substr(0, bytes.size() - 5)) ==
        "p.fpkg: truncated or corrupted package: the end marker is missing (" +
            std::to_string(bytes.size() - 5) + " bytes)");
  std::string head = bytes;
  head[40] = static_cast<char>(head[40] ^ 1);
  CHECK(open(head) == "p.fpkg: corrupted package: the checksum of its structure does not match");
  // A blob flip is caught when the blob is first used.
  const fb::Package* pkg = fb::GetPackage(bytes.data());
  size_t blob = static_cast<size_t>(pkg->blob_data()->data() -
                                    reinterpret_cast<const uint8_t*>(bytes.data()));
  std::string body = bytes;
  body[blob + 10] = static_cast<char>(body[blob + 10] ^ 1);
  auto view = PackageView::from_bytes(body, "p.fpkg");
  const fb::Kernel* k = view->metadata().kernels()->Get(0);
  CHECK(error_of([&] { view->blob(*k->source(), "source of kernel k"); }) ==
        "p.fpkg: corrupted package: the source of kernel k does not match its hash");
  // A package from a newer fuserc: bump the version, keep the checksum valid.
  std::string future = bytes;
  REQUIRE(fb::GetMutablePackage(future.data())->mutate_format_version(5));
  size_t fb_size = future.size() - kPackageTrailerSize;
  PackageTrailer t;
  REQUIRE(decode_trailer(reinterpret_cast<const uint8_t*>(future.data()) + fb_size, t));
  t.head_hash = package_head_hash(reinterpret_cast<const uint8_t*>(future.data()), fb_size,
                                  t.blob_offset, t.blob_size);
  encode_trailer(t, reinterpret_cast<uint8_t*>(future.data()) + fb_size);
  CHECK(open(future) ==
        "p.fpkg: the package was written by a newer fuserc (format version 5; this fuserc reads "
        "version 4)");
}

TEST_CASE("the reader refuses a program reading an unknown device property", "[package]") {
  std::string bytes = serialize_package(compile(kGraph, false), {});
  auto reads_property = [&](int64_t prop) {
    std::string b = bytes;
    // Turn the first constant of the program into a device read, keeping the checksum valid.
    const fb::Package* pkg = fb::GetPackage(b.data());
    auto* meta = const_cast<fb::Metadata*>(pkg->metadata_nested_root());
    auto* program = meta->mutable_program();
    for (uint32_t i = 0; i < program->size(); ++i) {
      auto* in = program->GetMutableObject(i);
      if (in->op() != fb::Opcode::Const) continue;
      in->mutate_op(fb::Opcode::Device);
      in->mutate_imm(prop);
      break;
    }
    size_t fb_size = b.size() - kPackageTrailerSize;
    PackageTrailer t;
    REQUIRE(decode_trailer(reinterpret_cast<const uint8_t*>(b.data()) + fb_size, t));
    t.head_hash = package_head_hash(reinterpret_cast<const uint8_t*>(b.data()), fb_size,
                                    t.blob_offset, t.blob_size);
    encode_trailer(t, reinterpret_cast<uint8_t*>(b.data()) + fb_size);
    return error_of([&] { PackageView::from_bytes(b, "p.fpkg"); });
  };
  CHECK(reads_property(0) == "<no error>");
  CHECK(reads_property(1) ==
        "p.fpkg: corrupted package: a program slot reads an unknown device property");
  CHECK(reads_property(-1) ==
        "p.fpkg: corrupted package: a program slot reads an unknown device property");
}

TEST_CASE("packages on disk are read lazily and checked the same way", "[package]") {
  auto dir = std::filesystem::temp_directory_path() / "fuserc_package_test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / "p.fpkg").string();
  std::string bytes = serialize_package(compile(kGraph, true), {});
  REQUIRE(bytes.size() > 16 * 1024);  // large enough to take the lazy path
  write_file_atomically(path, bytes);
  auto exe = Executable::load(path);
  REQUIRE_NOTHROW(exe->package().verify_all());
  for (size_t len : {size_t{0}, size_t{7}, size_t{100}, bytes.size() / 2, bytes.size() - 1}) {
    write_file_atomically(path, bytes.substr(0, len));
    CHECK_THROWS_AS(Executable::load(path)->package().verify_all(), UserError);
  }
  std::string flipped = bytes;
  flipped[bytes.size() / 2] = static_cast<char>(flipped[bytes.size() / 2] ^ 4);
  write_file_atomically(path, flipped);
  CHECK_THROWS_AS(Executable::load(path)->package().verify_all(), UserError);
  CHECK(error_of([&] {
          Executable::load((dir / "missing.fpkg").string());
        }).find("cannot read: No such file or directory") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("binding: cached by shape, ranges and guards checked", "[package]") {
  Executable exe(PackageView::from_bytes(serialize_package(compile(kGraph, false), {}), "p.fpkg"));
  auto a = exe.bind({96, 64});
  CHECK(exe.bind({96, 64}) == a);  // a cache hit returns the same binding
  CHECK(exe.bind({97, 64}) != a);
  // The device is part of the signature (launch formulas may read its SM count), clamped into
  // the range the compiler planned for.
  CHECK(a->device.sm_count == kDefaultSmCount);
  auto a108 = exe.bind({96, 64}, DeviceProps{108});
  CHECK(a108 != a);
  CHECK(a108->device.sm_count == 108);
  CHECK(exe.bind({96, 64}, DeviceProps{108}) == a108);
  CHECK(exe.bind({96, 64}, DeviceProps{1 << 20})->device.sm_count == kMaxSmCount);
  CHECK(exe.bind({96, 64}, DeviceProps{0})->device.sm_count == 1);
  for (int64_t m = 1; m <= static_cast<int64_t>(Executable::kCacheCapacity) + 4; ++m)
    exe.bind({m, 8});
  CHECK(exe.cache_size() == Executable::kCacheCapacity);
  CHECK(error_of([&] {
          exe.bind({96, 5000});
        }) == "p.fpkg: symbol 'N' = 5000 is outside its range [1, 4096]");
  CHECK(error_of([&] {
          exe.bind({0, 5});
        }) == "p.fpkg: symbol 'M' = 0 is outside its range [1, 4611686018427387903]");
  // Binding from tensors checks them like eval does.
  Fusion f = parse_text(kGraph);
  TensorMap in = make_random_inputs(f, choose_symbol_values(f, {{"N", 3}, {"M", 5}}), 1);
  auto b = exe.bind_inputs(in, "in.st");
  CHECK(b->symbols == std::vector<int64_t>{5, 3});
  in.erase("b");
  CHECK(error_of([&] { exe.bind_inputs(in, "in.st"); }) == "in.st: missing input tensor 'b'");
}

TEST_CASE("the program evaluator refuses overflow and division by zero", "[package]") {
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<fb::Instr> prog = {
      fb::Instr(fb::Opcode::Symbol, 0, 0, 0, 0), fb::Instr(fb::Opcode::Const, 0, 0, 0, 0),
      fb::Instr(fb::Opcode::FloorDiv, 0, 1, 0, 0), fb::Instr(fb::Opcode::Mul, 0, 0, 0, 0)};
  auto v = fbb.CreateVectorOfStructs(prog);
  fbb.Finish(v);
  const auto* vec =
      flatbuffers::GetRoot<flatbuffers::Vector<const fb::Instr*>>(fbb.GetBufferPointer());
  int64_t slots[4];
  int64_t sym = 5;
  std::string error;
  CHECK_FALSE(evaluate_program(*vec, &sym, DeviceProps{}, slots, &error));
  CHECK(error == "division by zero or overflow in size slot 2");
  std::vector<fb::Instr> prog2 = {fb::Instr(fb::Opcode::Symbol, 0, 0, 0, 0),
                                  fb::Instr(fb::Opcode::Mul, 0, 0, 0, 0)};
  flatbuffers::FlatBufferBuilder fbb2;
  fbb2.Finish(fbb2.CreateVectorOfStructs(prog2));
  const auto* vec2 =
      flatbuffers::GetRoot<flatbuffers::Vector<const fb::Instr*>>(fbb2.GetBufferPointer());
  int64_t big = int64_t{1} << 40;
  CHECK_FALSE(evaluate_program(*vec2, &big, DeviceProps{}, slots, &error));
  CHECK(error == "size arithmetic overflows 64 bits in slot 1");
  int64_t small = 1000;
  CHECK(evaluate_program(*vec2, &small, DeviceProps{}, slots, &error));
  CHECK(slots[1] == 1000000);
  // The Device opcode reads the bound device's property.
  std::vector<fb::Instr> prog3 = {
      fb::Instr(fb::Opcode::Device, 0, 0, 0, static_cast<int64_t>(DeviceProp::SmCount)),
      fb::Instr(fb::Opcode::Const, 0, 0, 0, 4), fb::Instr(fb::Opcode::Mul, 0, 1, 0, 0)};
  flatbuffers::FlatBufferBuilder fbb3;
  fbb3.Finish(fbb3.CreateVectorOfStructs(prog3));
  const auto* vec3 =
      flatbuffers::GetRoot<flatbuffers::Vector<const fb::Instr*>>(fbb3.GetBufferPointer());
  CHECK(evaluate_program(*vec3, nullptr, DeviceProps{}, slots, &error));
  CHECK(slots[2] == 4 * kDefaultSmCount);
  CHECK(evaluate_program(*vec3, nullptr, DeviceProps{108}, slots, &error));
  CHECK(slots[2] == 432);
}

// Found by fuzz/fuzz_package.cc (UBSan: misaligned fb::Instr): the nested metadata holds
// 8-byte structs, so the writer aligns it to 8 and the reader never reads it in place from an
// address that is not 8-byte aligned (a package embedded at an odd address is copied).
TEST_CASE("the metadata is 8-byte aligned in the file and in memory", "[package]") {
  std::string bytes = serialize_package(compile(kGraph, false), {});
  const auto* pkg = fb::GetPackage(bytes.data());
  CHECK((pkg->metadata()->data() - reinterpret_cast<const uint8_t*>(bytes.data())) % 8 == 0);
  auto expected = Executable(PackageView::from_bytes(bytes, "p.fpkg")).bind({96, 64})->slots;
  std::vector<uint64_t> storage(bytes.size() / 8 + 2);
  for (size_t shift : {1, 4, 7}) {
    auto* at = reinterpret_cast<uint8_t*>(storage.data()) + shift;
    std::memcpy(at, bytes.data(), bytes.size());
    Executable exe(PackageView::view_bytes(at, bytes.size(), "p.fpkg"));
    CHECK(reinterpret_cast<uintptr_t>(exe.metadata().program()->Data()) % 8 == 0);
    CHECK(exe.bind({96, 64})->slots == expected);
  }
}
