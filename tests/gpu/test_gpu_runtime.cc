// The runtime on a real GPU (CTest label `gpu`; skipped without one): the corpus through
// `fuserc run`'s path (run_package on CudaDevice) against the interpreter and the PyTorch
// goldens, the embedding
// API's plans and CUDA graphs against the interpreter, the same bits on every run, the PTX
// JIT path, no allocation or synchronisation when launching, and the shared-memory opt-in.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>

#include "alloc_counter.h"
#include "core/base/file_io.h"
#include "core/base/safetensors.h"
#include "cuda_test_util.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/kernel_modules.h"
#include "runtime/api/package_state.h"
#include "runtime/run_package.h"
#include "tensor_compare.h"

using namespace fuserc;
using namespace fuserc::testing;

namespace {

std::vector<std::vector<int64_t>> shapes_of(const TensorMap& inputs, const Executable& exe) {
  std::vector<std::vector<int64_t>> s;
  for (const auto& spec : exe.input_specs()) s.push_back(inputs.at(spec.name).shape());
  return s;
}

std::map<std::string, HostTensor> evaluate(const std::string& json, const TensorMap& inputs) {
  std::map<std::string, HostTensor> want;
  for (auto& [name, t] : evaluate_fusion(parse_text(json), inputs, "inputs")) want.emplace(name, t);
  return want;
}

// The device's architecture, so that packages carry a cubin for it.
int device_arch() {
  const cuda::DriverApi& d = cuda::driver();
  int major = 0, minor = 0;
  d.cuDeviceGetAttribute(&major, cuda::kAttrComputeCapabilityMajor, 0);
  d.cuDeviceGetAttribute(&minor, cuda::kAttrComputeCapabilityMinor, 0);
  return major * 10 + minor;
}

}  // namespace

TEST_CASE("the corpus on the GPU matches the interpreter and PyTorch", "[gpu]") {
  cuda::CudaDevice device;
  int graphs = 0;
  const char* dir = std::getenv("FUSERC_TEST_CORPUS_DIR");  // where the binary moved to
  for (const auto& entry :
       std::filesystem::directory_iterator(dir && *dir ? dir : FUSERC_TEST_CORPUS_DIR)) {
    if (entry.path().extension() != ".json") continue;
    std::string json = read_file(entry.path().string());
    std::string name = entry.path().stem().string();
    INFO("graph " << name);
    Executable exe(PackageView::from_bytes(compile_with_nvrtc(json, {80, 90}), name + ".fpkg"));
    // The goldens of outputs that depend on rand/randn are placeholders (tests/corpus/README):
    // those graphs are judged by the interpreter alone, which has the same Philox stream.
    bool random = json.find("\"rand") != std::string::npos;
    for (int i = 0; i < 2; ++i) {
      std::string base = (entry.path().parent_path() / (name + "." + std::to_string(i))).string();
      if (!std::filesystem::exists(base + ".in.safetensors")) continue;
      TensorMap inputs = read_safetensors(base + ".in.safetensors");
      TensorMap golden = read_safetensors(base + ".expected.safetensors");
      auto want = evaluate(json, inputs);
      for (const auto& [out, t] : run_package(exe, device, inputs, base)) {
        INFO("output " << out << " of " << base);
        CHECK(compare_tensors(t, want.at(out)) == "");
        if (!random) CHECK(compare_tensors(t, golden.at(out)) == "");
      }
    }
    ++graphs;
  }
  CHECK(graphs >= 18);
}

TEST_CASE("plans and graphs on the GPU: right, and the same bits every run", "[gpu]") {
  auto pkg = rt::Package::from_bytes(compile_with_nvrtc(kMixGraph, {80, device_arch()}), "mix");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{300, 257}, {1, 1}, {1000, 333}, {7, 4096}}) {
    INFO("N=" << n << " M=" << m);
    Fusion f = parse_text(kMixGraph);
    TensorMap inputs = make_random_inputs(f, {{"N", n}, {"M", m}}, 11);
    auto want = evaluate(kMixGraph, inputs);
    auto plan = pkg->bind_shapes(shapes_of(inputs, pkg->executable()));
    DeviceBuffers mem;
    PlanBuffers b = upload_inputs(*plan, inputs, mem);
    plan->launch(nullptr, b.inputs.data(), b.outputs.data());
    auto first = download_outputs(*plan, b);
    for (const auto& [name, t] : first) {
      INFO("output " << name);
      CHECK(compare_tensors(t, want.at(name)) == "");
    }
    // Again (p restored, since it is updated in place), then as a CUDA graph: same bits.
    PlanBuffers b2 = upload_inputs(*plan, inputs, mem);
    plan->launch(nullptr, b2.inputs.data(), b2.outputs.data());
    auto second = download_outputs(*plan, b2);
    PlanBuffers b3 = upload_inputs(*plan, inputs, mem);
    cuda::CUstream stream = nullptr;
    cuda::check(cuda::driver().cuStreamCreate(&stream, cuda::kStreamNonBlocking), "stream");
    auto graph = plan->capture(stream, b3.inputs.data(), b3.outputs.data());
    graph->launch(stream);
    cuda::check(cuda::driver().cuStreamSynchronize(stream), "graph");
    auto third = download_outputs(*plan, b3);
    cuda::driver().cuStreamDestroy(stream);
    for (size_t i = 0; i < first.size(); ++i) {
      INFO("output " << first[i].first);
      CHECK(second[i].second.bytes() == first[i].second.bytes());
      CHECK(third[i].second.bytes() == first[i].second.bytes());
    }
  }
}

TEST_CASE("the PTX, JIT-compiled by the driver, gives the same results", "[gpu]") {
  // Only sm_80 code: a GPU of another major version runs the PTX.
  auto pkg = rt::Package::from_bytes(compile_with_nvrtc(kMixGraph, {80}), "mix80");
  Fusion f = parse_text(kMixGraph);
  TensorMap inputs = make_random_inputs(f, {{"N", 129}, {"M", 65}}, 12);
  auto want = evaluate(kMixGraph, inputs);
  auto plan = pkg->bind_shapes(shapes_of(inputs, pkg->executable()));
  auto kind = pkg->state().modules->choice(0).kind;
  CHECK(kind == (device_arch() / 10 == 8 ? cuda::ImageChoice::Kind::Cubin
                                         : cuda::ImageChoice::Kind::Ptx));
  DeviceBuffers mem;
  PlanBuffers b = upload_inputs(*plan, inputs, mem);
  plan->launch(nullptr, b.inputs.data(), b.outputs.data());
  for (const auto& [name, t] : download_outputs(*plan, b)) {
    INFO("output " << name);
    CHECK(compare_tensors(t, want.at(name)) == "");
  }
}

namespace {
// The real driver, with allocations and synchronisations counted.
cuda::DriverApi g_real;
int g_allocs = 0, g_syncs = 0;
}  // namespace

TEST_CASE("launching on the GPU allocates nothing and never synchronises", "[gpu]") {
  g_real = cuda::driver();
  cuda::DriverApi counted = g_real;
  counted.cuMemAlloc = [](cuda::CUdeviceptr* p, size_t n) {
    ++g_allocs;
    return g_real.cuMemAlloc(p, n);
  };
  counted.cuStreamSynchronize = [](cuda::CUstream s) {
    ++g_syncs;
    return g_real.cuStreamSynchronize(s);
  };
  counted.cuCtxSynchronize = []() {
    ++g_syncs;
    return g_real.cuCtxSynchronize();
  };
  cuda::install_driver_for_testing(&counted);
  {
    auto pkg = rt::Package::from_bytes(mix_package(), "mix");
    Fusion f = parse_text(kMixGraph);
    TensorMap inputs = make_random_inputs(f, {{"N", 300}, {"M", 257}}, 13);
    auto plan = pkg->bind_shapes(shapes_of(inputs, pkg->executable()));
    DeviceBuffers mem;
    PlanBuffers b = upload_inputs(*plan, inputs, mem);
    plan->launch(nullptr, b.inputs.data(), b.outputs.data());  // allocates its workspace
    int allocs = g_allocs, syncs = g_syncs;
    {
      HeapCounter heap;
      for (int i = 0; i < 200; ++i) plan->launch(nullptr, b.inputs.data(), b.outputs.data());
      CHECK(heap.allocations() == 0);
    }
    CHECK(g_allocs == allocs);
    CHECK(g_syncs == syncs);
    cuda::check(g_real.cuCtxSynchronize(), "the launches");
  }
  cuda::install_driver_for_testing(nullptr);
}

TEST_CASE("kernels get more than 48 KB of shared memory up to the device's limit", "[gpu]") {
  auto pkg = rt::Package::from_bytes(mix_package(), "mix");
  pkg->bind({257, 300});
  const auto& dev = pkg->state().context->info();
  auto& modules = *pkg->state().modules;
  CHECK_NOTHROW(modules.function(0, 96 * 1024));
  CHECK_THROWS_WITH(modules.function(0, static_cast<uint32_t>(dev.shared_per_block_optin) + 1),
                    Catch::Contains("dynamic shared memory per block"));
}
