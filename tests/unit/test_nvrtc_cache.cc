// Tests of the NVRTC compile cache (codegen/nvrtc/nvrtc_cache.h and compile_kernels with a
// cache): a warm compile gives the very same binaries, PTX and ptxas figures without running
// NVRTC, a damaged entry is rebuilt, every input of a compilation changes its key, and every
// failed compilation is reported, not just the first.
#include <catch2/catch.hpp>

#include <filesystem>

#include "codegen/compile_fusion.h"
#include "codegen/nvrtc/nvrtc_cache.h"
#include "codegen/nvrtc/nvrtc_compiler.h"
#include "codegen/nvrtc/nvrtc_toolchain.h"
#include "core/base/disk_cache.h"
#include "core/base/file_io.h"
#include "temp_dir.h"
#include "test_util.h"

using namespace fuserc;
using fuserc::testing::parse_text;
using fuserc::testing::TempDir;
namespace fs = std::filesystem;

namespace {

// Three pointwise kernels, split by segment_set.
const char* kGraph = R"({"fuserc": 1, "name": "g", "symbols": {"N": {"hint": 64, "max": 4096}},
  "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", 32]}],
  "ops": [{"op": "exp", "args": ["x"], "out": "e"},
          {"op": "segment_set", "args": ["e"], "out": "es"},
          {"op": "log", "args": ["es"], "out": "l"},
          {"op": "segment_set", "args": ["l"], "out": "ls"},
          {"op": "sin", "args": ["ls"], "out": "y"}],
  "outputs": ["y"]})";

struct Run {
  CompiledFusion c;
  std::vector<std::pair<size_t, size_t>> progress;
};

Run compile(DiskCache* cache, int jobs = 2) {
  Run r;
  PassContext ctx;
  CompileOptions o;
  o.archs = {80, 90};
  o.jobs = jobs;
  o.cache = cache;
  o.progress = [&r](size_t done, size_t total) { r.progress.emplace_back(done, total); };
  r.c = compile_fusion(parse_text(kGraph), o, ctx);
  return r;
}

void check_same(const CompiledFusion& a, const CompiledFusion& b) {
  REQUIRE(a.kernels.size() == b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const KernelSummary& x = a.kernels[i];
    const KernelSummary& y = b.kernels[i];
    INFO("kernel " << x.name);
    CHECK(x.ptx == y.ptx);
    CHECK(x.ptx_arch == y.ptx_arch);
    CHECK(x.compile_options == y.compile_options);
    REQUIRE(x.binaries.size() == y.binaries.size());
    for (size_t j = 0; j < x.binaries.size(); ++j) {
      CHECK(x.binaries[j].arch == y.binaries[j].arch);
      CHECK(x.binaries[j].cubin == y.binaries[j].cubin);
      CHECK(x.binaries[j].registers == y.binaries[j].registers);
      CHECK(x.binaries[j].spill_store_bytes == y.binaries[j].spill_store_bytes);
      CHECK(x.binaries[j].spill_load_bytes == y.binaries[j].spill_load_bytes);
      CHECK(x.binaries[j].shared_bytes == y.binaries[j].shared_bytes);
      CHECK(x.binaries[j].local_bytes == y.binaries[j].local_bytes);
    }
  }
}

std::vector<std::string> entry_files(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().size() == 32)
      out.push_back(e.path().string());
  return out;
}

}  // namespace

TEST_CASE("nvrtc cache: a warm compile gives the same results without running NVRTC",
          "[nvrtc_cache]") {
  TempDir tmp;
  const std::string dir = tmp / "nvrtc";
  Run fresh = compile(nullptr);
  const size_t kernels = fresh.c.kernels.size();
  REQUIRE(kernels == 3);
  // Without a cache, progress goes from 0 to every kernel, one step per kernel.
  REQUIRE(fresh.progress.size() == kernels + 1);
  for (size_t i = 0; i <= kernels; ++i) CHECK(fresh.progress[i] == std::make_pair(i, kernels));

  DiskCache cache(dir, 0);
  Run cold = compile(&cache);
  check_same(fresh.c, cold.c);
  CHECK(cold.progress.size() == kernels + 1);
  CHECK(cache.local_counters().stores == 2 * kernels);  // one per kernel and architecture
  CHECK(cache.local_counters().misses == 2 * kernels);

  Run warm = compile(&cache, 1);
  check_same(fresh.c, warm.c);
  CHECK(warm.progress.empty());  // NVRTC never ran
  CHECK(cache.local_counters().hits == 2 * kernels);

  SECTION("a damaged entry is rebuilt") {
    std::vector<std::string> files = entry_files(dir);
    REQUIRE(files.size() >= 2 * kernels);
    std::string bytes = read_file(files[0]);
    bytes[bytes.size() / 2] ^= 0x40;
    write_file_atomically(files[0], bytes);
    Run again = compile(&cache);
    check_same(fresh.c, again.c);
    CHECK(again.progress.size() == 2);  // one kernel compiled
    CHECK(cache.local_counters().discarded == 1);
    Run warm_again = compile(&cache);
    CHECK(warm_again.progress.empty());
  }
  SECTION("an entry without the PTX a compile needs is rebuilt with it") {
    // Compiling for sm_90 alone stores sm_90 entries without PTX: sm_90 + sm_80 then needs the
    // PTX only of sm_80, and sm_90 alone later needs the PTX of sm_90.
    TempDir tmp2;
    DiskCache c2(tmp2 / "nvrtc", 0);
    PassContext ctx;
    CompileOptions o;
    o.archs = {80, 90};
    o.cache = &c2;
    compile_fusion(parse_text(kGraph), o, ctx);
    o.archs = {90};
    size_t calls = 0;
    o.progress = [&](size_t, size_t) { ++calls; };
    CompiledFusion only90 = compile_fusion(parse_text(kGraph), o, ctx);
    CHECK(calls == kernels + 1);  // every kernel compiled again, for its PTX
    for (const auto& k : only90.kernels) CHECK(k.ptx.find(".target sm_90") != std::string::npos);
    calls = 0;
    compile_fusion(parse_text(kGraph), o, ctx);
    CHECK(calls == 0);
  }
}

TEST_CASE("nvrtc cache: every input of a compilation is in its key", "[nvrtc_cache]") {
  const std::vector<std::string> opts = {"--gpu-architecture=sm_80", "--std=c++17"};
  const std::string base = nvrtc_cache_key("src", "k.cu", opts, "13.0", "abc");
  CHECK(base.size() == 32);
  CHECK(base == nvrtc_cache_key("src", "k.cu", opts, "13.0", "abc"));
  CHECK(base != nvrtc_cache_key("src ", "k.cu", opts, "13.0", "abc"));
  CHECK(base != nvrtc_cache_key("src", "k2.cu", opts, "13.0", "abc"));
  CHECK(base !=
        nvrtc_cache_key("src", "k.cu", {"--gpu-architecture=sm_90", "--std=c++17"}, "13.0", "abc"));
  CHECK(base != nvrtc_cache_key("src", "k.cu", {"--gpu-architecture=sm_80"}, "13.0", "abc"));
  CHECK(base != nvrtc_cache_key("src", "k.cu", opts, "13.1", "abc"));
  CHECK(base != nvrtc_cache_key("src", "k.cu", opts, "13.0", "abd"));
  // Parts cannot run into each other.
  CHECK(nvrtc_cache_key("ab", "c", {}, "", "") != nvrtc_cache_key("a", "bc", {}, "", ""));
}

TEST_CASE("nvrtc cache: values round-trip and malformed ones are refused", "[nvrtc_cache]") {
  NvrtcOutput r;
  r.binary.arch = 90;
  r.binary.cubin = std::string(
      "\x7f"
      "ELF\0\1\2",
      7);
  r.binary.registers = 40;
  r.binary.spill_store_bytes = 8;
  r.binary.spill_load_bytes = 12;
  r.binary.shared_bytes = 512;
  r.binary.local_bytes = 24;
  r.has_ptx = true;
  r.ptx = ".version 9.0\n.target sm_90\n";
  const std::string bytes = encode_nvrtc_result(r);
  auto back = decode_nvrtc_result(bytes);
  REQUIRE(back.has_value());
  CHECK(back->binary.arch == 90);
  CHECK(back->binary.cubin == r.binary.cubin);
  CHECK(back->binary.registers == 40);
  CHECK(back->binary.spill_store_bytes == 8);
  CHECK(back->binary.spill_load_bytes == 12);
  CHECK(back->binary.shared_bytes == 512);
  CHECK(back->binary.local_bytes == 24);
  CHECK(back->has_ptx);
  CHECK(back->ptx == r.ptx);
  r.has_ptx = false;
  auto no_ptx = decode_nvrtc_result(encode_nvrtc_result(r));
  REQUIRE(no_ptx.has_value());
  CHECK_FALSE(no_ptx->has_ptx);
  for (size_t n = 0; n < bytes.size(); ++n)
    CHECK_FALSE(decode_nvrtc_result(bytes.substr(0, n)).has_value());
  CHECK_FALSE(decode_nvrtc_result(bytes + "x").has_value());
}

TEST_CASE("every failed NVRTC compilation is reported, not just the first", "[nvrtc_cache]") {
  TempDir tmp;
  KernelSummary a, b, good;
  a.name = "broken_a";
  a.source = "extern \"C\" __global__ void broken_a(float* y) { y[0] = undefined_a; }\n";
  b.name = "broken_b";
  b.source = "extern \"C\" __global__ void broken_b(float* y) { y[0] = undefined_b; }\n";
  good.name = "good";
  good.source = "extern \"C\" __global__ void good(float* y) { y[0] = 1.0f; }\n";
  DiskCache cache(tmp / "nvrtc", 0);
  NvrtcOptions o;
  o.archs = {80, 90};
  o.jobs = 2;
  o.failure_dir = tmp.path();
  o.cache = &cache;
  try {
    compile_kernels({&a, &good, &b}, o);
    FAIL("compile_kernels accepted broken kernels");
  } catch (const InternalError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("4 of 6 NVRTC compilations failed") != std::string::npos);
    for (const char* part : {"broken_a for sm_80", "broken_a for sm_90", "broken_b for sm_80",
                             "broken_b for sm_90", "undefined_a", "undefined_b"})
      CHECK(msg.find(part) != std::string::npos);
    CHECK(msg.find("good") == std::string::npos);
  }
  CHECK(read_file(tmp / "__failed_broken_a.cu") == a.source);
  CHECK(read_file(tmp / "__failed_broken_b.cu") == b.source);
  // Failures are not cached; the good kernel's results are.
  CHECK(cache.local_counters().stores == 2);
}

TEST_CASE("the NVRTC description comes from the cache when the library is unchanged",
          "[nvrtc_cache]") {
  TempDir tmp;
  DiskCache cache(tmp / "nvrtc", 0);
  const NvrtcToolchain& t = nvrtc_toolchain(&cache);
  CHECK(t.version.find('.') != std::string::npos);
  // The library's GNU build ID (NVIDIA's libnvrtc has one), else a hash of the file.
  CHECK((t.identity.rfind("build-id-", 0) == 0 ? t.identity.size() > 9 : t.identity.size() == 32));
  CHECK(std::find(t.supported_archs.begin(), t.supported_archs.end(), 80) !=
        t.supported_archs.end());
  CHECK(nvrtc_version() == t.version);
}
