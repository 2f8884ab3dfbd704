// The GPU paths of the runtime without a GPU: a fake CUDA driver (tests/support/fake_driver.h)
// records every driver call and runs the launched kernels in the CPU emulator, so binding,
// image selection, the workspace and counters, argument passing, CUDA graphs, contexts and the
// errors are checked against the reference interpreter.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "alloc_counter.h"
#include "cmd/bench_gpu.h"
#include "cuda_test_util.h"
#include "fake_driver.h"
#include "runtime/api/package_state.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/image_selection.h"
#include "runtime/cuda/kernel_modules.h"
#include "runtime/run_package.h"
#include "tensor_compare.h"

using namespace fuserc;
using namespace fuserc::testing;
using cuda::CudaError;
using cuda::Failure;
using cuda::ImageChoice;

namespace {

Failure failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CudaError& e) {
    return e.kind();
  }
  FAIL("no CudaError");
  return Failure::Driver;
}

struct MixRun {
  TensorMap inputs;
  std::map<std::string, HostTensor> want;
};

// Random inputs for the mix graph at N x M, and what the interpreter makes of them.
MixRun mix_inputs(int64_t n, int64_t m, uint64_t seed) {
  Fusion f = parse_text(kMixGraph);
  MixRun r;
  r.inputs = make_random_inputs(f, {{"N", n}, {"M", m}}, seed);
  for (auto& [name, t] : evaluate_fusion(f, r.inputs, "inputs")) r.want.emplace(name, t);
  return r;
}

void check_outputs(const std::vector<std::pair<std::string, HostTensor>>& got,
                   const std::map<std::string, HostTensor>& want) {
  for (const auto& [name, t] : got) {
    INFO("output " << name);
    CHECK(compare_tensors(t, want.at(name)) == "");
  }
}

std::vector<std::vector<int64_t>> shapes_of(const TensorMap& inputs, const Executable& exe) {
  std::vector<std::vector<int64_t>> s;
  for (const auto& spec : exe.input_specs()) s.push_back(inputs.at(spec.name).shape());
  return s;
}

}  // namespace

TEST_CASE("image selection follows CUDA's compatibility rules", "[cuda_fake]") {
  auto pick = [](int device, std::vector<int> cubins, int ptx, int min_cc = 0) {
    ImageChoice c = cuda::choose_image(device, cubins, ptx, min_cc, "k", "GPU");
    return std::make_pair(c.kind, c.arch);
  };
  using K = ImageChoice::Kind;
  CHECK(pick(90, {80, 90}, 80) == std::make_pair(K::Cubin, 90));      // exact
  CHECK(pick(86, {80, 90}, 80) == std::make_pair(K::Cubin, 80));      // same major, lower minor
  CHECK(pick(89, {80, 86, 90}, 80) == std::make_pair(K::Cubin, 86));  // the best such
  CHECK(pick(87, {80, 89}, 80) == std::make_pair(K::Cubin, 80));      // never a higher minor
  CHECK(pick(100, {80, 90}, 80) == std::make_pair(K::Ptx, 80));       // no cubin across majors
  CHECK(pick(120, {90}, 90) == std::make_pair(K::Ptx, 90));
  CHECK(pick(90, {}, 80) == std::make_pair(K::Ptx, 80));
  CHECK(pick(75, {80, 90}, 80).first == K::None);   // PTX too new for the device
  CHECK(pick(90, {90}, 80, 100).first == K::None);  // the kernel needs a newer GPU
  ImageChoice none = cuda::choose_image(75, {80, 90}, 80, 0, "g_k0", "Tesla T4");
  CHECK(none.refusal ==
        "kernel g_k0 cannot run on Tesla T4 (sm_75): the package has sm_80, sm_90, PTX for "
        "compute_80 (recompile with --arch sm_75)");
  CHECK(cuda::choose_image(80, {90}, 90, 90, "g_k0", "A100").refusal ==
        "kernel g_k0 needs compute capability 9.0 or newer; the device is A100 (sm_80) (the "
        "package has sm_90, PTX for compute_90)");
}

TEST_CASE("a plan launched through the driver computes what the interpreter does", "[cuda_fake]") {
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  fake.register_package(pkg->executable(), true);
  MixRun run = mix_inputs(300, 257, 3);
  auto plan = pkg->bind_shapes(shapes_of(run.inputs, pkg->executable()));
  CHECK(plan == pkg->bind_shapes(shapes_of(run.inputs, pkg->executable())));  // cached
  CHECK(plan->input_strides(0) == std::vector<int64_t>{1, 300});  // declared: transposed
  CHECK(plan->input_strides(1) == std::vector<int64_t>{257, 1});  // contiguous
  // The workspace: the intermediate (300 x 257 f32, rounded to 256 B), then the partials of
  // the grid reduction (at most 18 blocks, 4 B each, rounded up to 256 B).
  CHECK(plan->workspace_bytes() == (300 * 257 * 4 + 255) / 256 * 256 + 256);
  CHECK(plan->launches().counter_bytes() == 256);

  DeviceBuffers mem;
  PlanBuffers b = upload_inputs(*plan, run.inputs, mem);
  plan->launch(nullptr, b.inputs.data(), b.outputs.data());
  REQUIRE(fake.launches.size() == 3);
  // k0 reads the transposed input: shared-memory tiles of 32 x 32 (ceildiv(257, 32) x ceildiv(300, 32)).
  CHECK(fake.launches[0].kernel == "runtime_mix_k0_tile_i32");
  CHECK(fake.launches[0].dims.grid[0] == 9 * 10);
  CHECK(fake.launches[2].kernel == "runtime_mix_k2_s256");
  // One row of 77100 split over blocks of 256 threads taking >= 16 elements each:
  // min(4 x 132 SMs, floor(77100 / 4096)) = 18.
  CHECK(fake.launches[2].dims.grid[1] == 18);
  check_outputs(download_outputs(*plan, b), run.want);

  // Again with fresh inputs (p was updated in place): the counters the kernels left at zero
  // and the reused workspace give the right sums again.
  MixRun again = mix_inputs(300, 257, 4);
  PlanBuffers b2 = upload_inputs(*plan, again.inputs, mem);
  plan->launch(nullptr, b2.inputs.data(), b2.outputs.data());
  check_outputs(download_outputs(*plan, b2), again.want);
  CHECK(fake.memsets == 1);  // the counters were zeroed once, before the first launch
}

TEST_CASE("launching allocates nothing, never synchronises, reuses its workspace", "[cuda_fake]") {
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  fake.register_package(pkg->executable(), false);  // record launches only
  MixRun run = mix_inputs(300, 257, 5);
  auto plan = pkg->bind_shapes(shapes_of(run.inputs, pkg->executable()));
  CHECK(fake.allocations == 1);  // binding: the counters only
  DeviceBuffers mem;
  PlanBuffers b = upload_inputs(*plan, run.inputs, mem);
  int base = fake.allocations;
  plan->launch(nullptr, b.inputs.data(), b.outputs.data());
  CHECK(fake.allocations == base + 1);  // the plan's own workspace, once
  int syncs = fake.syncs;
  {
    HeapCounter heap;
    for (int i = 0; i < 100; ++i) plan->launch(nullptr, b.inputs.data(), b.outputs.data());
    CHECK(heap.allocations() == 0);
  }
  CHECK(fake.allocations == base + 1);
  CHECK(fake.syncs == syncs);
  CHECK(fake.launches.size() == 101 * 3);

  // A workspace the caller gives is used instead (and none is allocated for it).
  auto pkg2 = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  auto plan2 = pkg2->bind({257, 300});  // symbols in package order: M, N
  void* ws = mem.alloc(plan2->workspace_bytes());
  int before = fake.allocations;
  {
    HeapCounter heap;
    plan2->launch(nullptr, b.inputs.data(), b.outputs.data(), ws, plan2->workspace_bytes());
    CHECK(heap.allocations() == 0);
  }
  CHECK(fake.allocations == before);
  CHECK(error_of([&] { plan2->launch(nullptr, b.inputs.data(), b.outputs.data(), ws, 1000); }) ==
        "mix.fpkg: the workspace has 1000 B but this binding needs " +
            std::to_string(plan2->workspace_bytes()) + " B (workspace_bytes())");
}

// The counter behind "launching allocates nothing": every form of operator new counts (a hot
// path's nothrow or over-aligned allocation too), and each is released by its operator delete
// (the sanitizer build checks that they pair up: a form left unreplaced was an alloc-dealloc
// mismatch there).
TEST_CASE("the heap counter counts every form of operator new", "[cuda_fake]") {
  HeapCounter heap;
  void* p1 = ::operator new(8);
  void* p2 = ::operator new[](24);
  void* p3 = ::operator new(8, std::nothrow);
  void* p4 = ::operator new[](0, std::nothrow);
  void* p5 = ::operator new(100, std::align_val_t{64});
  void* p6 = ::operator new[](64, std::align_val_t{128}, std::nothrow);
  CHECK(heap.allocations() == 6);
  CHECK(reinterpret_cast<uintptr_t>(p5) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(p6) % 128 == 0);
  ::operator delete(p1, std::size_t{8});
  ::operator delete[](p2);
  ::operator delete(p3, std::nothrow);
  ::operator delete[](p4, std::nothrow);
  ::operator delete(p5, std::size_t{100}, std::align_val_t{64});
  ::operator delete[](p6, std::align_val_t{128});
  {
    HeapCountPause pause;
    delete new int(1);
  }
  CHECK(heap.allocations() == 6);
}

TEST_CASE("each kernel runs the cubin for the device, a compatible one, or the PTX",
          "[cuda_fake]") {
  auto loaded = [](int major, int minor) {
    FakeDeviceSpec spec;
    spec.cc_major = major;
    spec.cc_minor = minor;
    FakeDriver fake(spec);
    auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
    fake.register_package(pkg->executable(), false);
    pkg->bind({257, 300});
    return fake.loaded_images;
  };
  std::vector<std::string> sm90 = {"sm_90 cubin of runtime_mix_k0_tile_i32",
                                   "sm_90 cubin of runtime_mix_k1_i32",
                                   "sm_90 cubin of runtime_mix_k2_s256"};
  CHECK(loaded(9, 0) == sm90);
  CHECK(loaded(8, 6)[0] == "sm_80 cubin of runtime_mix_k0_tile_i32");
  CHECK(loaded(8, 9)[2] == "sm_80 cubin of runtime_mix_k2_s256");
  CHECK(loaded(8, 0)[1] == "sm_80 cubin of runtime_mix_k1_i32");

  // A newer major version: the PTX, JIT-compiled once per process and architecture.
  FakeDeviceSpec blackwell;
  blackwell.cc_major = 10;
  FakeDriver fake(blackwell);
  int jit_before = cuda::jit_compilations();
  auto a = rt::Package::from_bytes(mix_package(), "a.fpkg");
  fake.register_package(a->executable(), false);
  a->bind({257, 300});
  CHECK(fake.loaded_images[0] == "JIT(sm_100) of runtime_mix_k0_tile_i32");
  CHECK(fake.jit_links == 3);
  auto b = rt::Package::from_bytes(mix_package(), "b.fpkg");  // the same kernels again
  b->bind({257, 300});
  CHECK(fake.jit_links == 3);
  CHECK(fake.loaded_images.size() == 6);
  CHECK(cuda::jit_compilations() == jit_before + 3);
}

TEST_CASE("a device the package has no code for is refused, naming both architectures",
          "[cuda_fake]") {
  FakeDeviceSpec turing;
  turing.name = "Tesla T4";
  turing.cc_major = 7;
  turing.cc_minor = 5;
  FakeDriver fake(turing);
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  CHECK(error_of([&] {
          pkg->bind({257, 300});
        }) ==
        "mix.fpkg: kernel runtime_mix_k0_tile_i32 cannot run on Tesla T4 (sm_75): the package has "
        "sm_80, sm_90, PTX for compute_80 (recompile with --arch sm_75)");
  CHECK(failure_of([&] { pkg->bind({257, 300}); }) == Failure::NoCompatibleKernel);
}

TEST_CASE("launch failures name the kernel, its grid, block and shared memory", "[cuda_fake]") {
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  auto plan = pkg->bind({257, 300});
  DeviceBuffers mem;
  MixRun run = mix_inputs(300, 257, 6);
  PlanBuffers b = upload_inputs(*plan, run.inputs, mem);
  fake.fail_next_launch = cuda::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  CHECK(error_of([&] { plan->launch(nullptr, b.inputs.data(), b.outputs.data()); }) ==
        "launching kernel runtime_mix_k0_tile_i32 (grid 90x1x1, block 32x8x1, 0 B dynamic shared "
        "memory): CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)");

  // Bad arguments are refused before anything is launched.
  size_t launched = fake.launches.size();
  std::vector<const void*> in = b.inputs;
  in[1] = nullptr;
  CHECK(error_of([&] { plan->launch(nullptr, in.data(), b.outputs.data()); }) ==
        "mix.fpkg: input 'p' is null");
  in = b.inputs;
  in[2] = nullptr;
  CHECK(error_of([&] { plan->launch(nullptr, in.data(), b.outputs.data()); }) ==
        "mix.fpkg: scalar input 'lr' is null");
  std::vector<void*> out = b.outputs;
  out[3] = nullptr;  // 'x' is an input: nothing to copy
  out[2] = nullptr;  // 'p_new' is written into 'p'
  out[4] = nullptr;  // the second 'y' is the first one's buffer
  plan->launch(nullptr, b.inputs.data(), out.data());
  out[1] = nullptr;
  CHECK(error_of([&] { plan->launch(nullptr, b.inputs.data(), out.data()); }) ==
        "mix.fpkg: output 's' is null");
  out = b.outputs;
  out[3] = mem.alloc(64);
  CHECK(error_of([&] { plan->launch(nullptr, b.inputs.data(), out.data()); }) ==
        "mix.fpkg: output 'x' is the memory of input 'x', which is strided: pass NULL or that "
        "input's pointer");
  int64_t contiguous[2] = {257, 1};
  const int64_t* strides[4] = {contiguous, nullptr, nullptr, nullptr};
  CHECK(error_of([&] {
          plan->launch(nullptr, b.inputs.data(), b.outputs.data(), nullptr, 0, strides);
        }) ==
        "mix.fpkg: input 'x' has strides [257, 1] but the package needs [1, 300] (copy "
        "it to that layout first)");
  CHECK(fake.launches.size() == launched + 3);  // only the good launch ran

  // Out of device memory at bind: the allocation that failed is named.
  auto pkg2 = rt::Package::from_bytes(mix_package(), "mix2.fpkg");
  fake.fail_next_alloc = cuda::CUDA_ERROR_OUT_OF_MEMORY;
  CHECK(error_of([&] {
          pkg2->bind({257, 300});
        }) == "allocating grid-reduction counters: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST_CASE("kernels opt in to large shared memory, within the device's limit", "[cuda_fake]") {
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  pkg->bind({257, 300});
  auto& modules = *pkg->state().modules;
  modules.function(0, 40 * 1024);  // under the default 48 KB: no attribute
  CHECK(fake.shared_attributes.empty());
  modules.function(0, 100 * 1024);
  modules.function(0, 90 * 1024);  // already allowed
  REQUIRE(fake.shared_attributes.size() == 1);
  CHECK(fake.shared_attributes[0] == std::make_pair(std::string("runtime_mix_k0_tile_i32"), 102400));
  CHECK(error_of([&] { modules.function(0, 300 * 1024); }) ==
        "kernel runtime_mix_k0_tile_i32 needs 307200 B of dynamic shared memory per block (+4224 B "
        "static); Fake GPU (sm_90) allows at most 232448 B");
}

TEST_CASE("the runtime works in the current context, or retains the primary one", "[cuda_fake]") {
  FakeDriver fake;
  auto held = [&] { return fake.primary_retains - fake.primary_releases; };
  {
    auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
    auto plan = pkg->bind({257, 300});
    CHECK(held() == 1);
    cuda::CUcontext current = nullptr;
    fake.table().cuCtxGetCurrent(&current);
    CHECK(current == pkg->state().context->get());  // made current, as cudart does
    pkg.reset();
    CHECK(held() == 1);  // the plan still holds it
  }
  CHECK(held() == 0);
  {
    // The primary context is still current, but nobody holds it: it is retained again.
    auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
    pkg->bind({257, 300});
    CHECK(held() == 1);
  }
  CHECK(held() == 0);

  // A framework's own context, current on this thread: used, not held.
  fake.set_current(fake.user_context());
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  pkg->bind({257, 300});
  CHECK(pkg->state().context->get() == fake.user_context());
  CHECK(held() == 0);

  // A context given explicitly, with none current at launch: pushed and popped.
  fake.set_current(nullptr);
  rt::LoadOptions o;
  o.context = fake.user_context();
  auto pkg2 = rt::Package::from_bytes(mix_package(), "mix.fpkg", o);
  fake.register_package(pkg2->executable(), false);
  auto plan2 = pkg2->bind({257, 300});
  DeviceBuffers mem;
  fake.set_current(fake.user_context());
  MixRun run = mix_inputs(300, 257, 1);  // alive while launching: scalars are read from it
  PlanBuffers b = upload_inputs(*plan2, run.inputs, mem);
  fake.set_current(nullptr);
  size_t launched = fake.launches.size();
  plan2->launch(nullptr, b.inputs.data(), b.outputs.data());
  CHECK(fake.launches.size() == launched + 3);
  cuda::CUcontext current = nullptr;
  fake.table().cuCtxGetCurrent(&current);
  CHECK(current == nullptr);
  CHECK(held() == 0);
}

TEST_CASE("a plan captured into a CUDA graph replays every kernel", "[cuda_fake]") {
  FakeDriver fake;
  auto pkg = rt::Package::from_bytes(mix_package(), "mix.fpkg");
  fake.register_package(pkg->executable(), true);
  MixRun run = mix_inputs(40, 33, 7);
  auto plan = pkg->bind_shapes(shapes_of(run.inputs, pkg->executable()));
  DeviceBuffers mem;
  PlanBuffers b = upload_inputs(*plan, run.inputs, mem);
  CHECK(error_of([&] { plan->capture(nullptr, b.inputs.data(), b.outputs.data()); }) ==
        "capturing a CUDA graph needs a stream other than the legacy default stream");
  cuda::CUstream stream = nullptr;
  fake.table().cuStreamCreate(&stream, cuda::kStreamNonBlocking);
  auto graph = plan->capture(stream, b.inputs.data(), b.outputs.data());
  CHECK(fake.launches.size() == 3);
  // Nothing ran yet: the output is still the 0xA5 of fresh device memory.
  float y0 = 0;
  DeviceBuffers::download(&y0, b.outputs[0], 4);
  uint32_t bits;
  std::memcpy(&bits, &y0, 4);
  CHECK(bits == 0xA5A5A5A5u);
  graph->launch(stream);
  check_outputs(download_outputs(*plan, b), run.want);
}

TEST_CASE("run_package on the CUDA device: the whole `fuserc run` path", "[cuda_fake]") {
  FakeDriver fake;
  Executable exe(PackageView::from_bytes(mix_package(), "mix.fpkg"));
  fake.register_package(exe, true);
  MixRun run = mix_inputs(21, 64, 8);
  cuda::CudaDevice device;
  CHECK(device.name() == "Fake GPU (sm_90)");
  auto got = run_package(exe, device, run.inputs, "in.safetensors");
  REQUIRE(got.size() == 4);  // y, s, p_new, x (each name once)
  check_outputs(got, run.want);
  CHECK(fake.launches.size() == 3);
  CHECK(fake.live_bytes() == 0);  // everything run_package allocated is freed
}

TEST_CASE("fuserc bench --gpu times every kernel and the plan through the runtime", "[cuda_fake]") {
  FakeDriver fake;
  std::string path = (std::filesystem::temp_directory_path() /
                      ("fuserc_bench_mix_" + std::to_string(::getpid()) + ".fpkg"))
                         .string();
  {
    std::ofstream f(path, std::ios::binary);
    f << mix_package();
  }
  cmd::GpuBenchOptions o;
  o.package = path;
  o.bind = {{"N", 64}, {"M", 32}};
  o.runs = 3;
  o.warmup = 1;
  o.json = true;
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  try {
    cmd::run_gpu_bench(o);
  } catch (...) {
    std::cout.rdbuf(old);
    throw;
  }
  std::cout.rdbuf(old);
  auto j = nlohmann::json::parse(out.str());
  CHECK(j["device"] == "Fake GPU");
  CHECK(j["symbols"]["N"] == 64);
  REQUIRE(j["kernels"].size() == 3);
  CHECK(j["kernels"][2]["name"] == "runtime_mix_k2_s256");
  CHECK(j["kernels"][0]["grid"] == "2x1x1");  // 32 x 32 tiles of the transposed read
  // Inputs read once (x and p; the scalars are not buffers) and outputs written once (y, s,
  // p_new in place): 4 * (2 * 64 * 32) + 4 * (64 * 32 + 1 + 64 * 32).
  CHECK(j["bytes"] == 4 * (2 * 64 * 32) + 4 * (2 * 64 * 32 + 1));
  // Warm-up and timed runs of the plan, of each kernel alone, of the graph; host batches.
  CHECK(fake.launches.size() > 3 * (1 + 3) + 3 * (1 + 3));
  CHECK(fake.live_bytes() == 0);
  CHECK(error_of([&] {
          o.bind = {{"Q", 3}};
          cmd::run_gpu_bench(o);
        }) == "--bind: the package has no symbol 'Q'");
  std::filesystem::remove(path);
}

TEST_CASE("a CUDA device running one package after another launches each one's kernels",
          "[cuda_fake]") {
  // Two executables at the same address, one after the other: the device must not take the
  // second for the first (it keys its loaded kernels by Executable::id()).
  FakeDriver fake;
  cuda::CudaDevice device;
  std::optional<Executable> exe;
  exe.emplace(PackageView::from_bytes(mix_package(), "mix.fpkg"));
  MixRun run = mix_inputs(5, 7, 1);
  run_package(*exe, device, run.inputs, "in");
  CHECK(fake.launches.back().kernel == "runtime_mix_k2_s256");
  exe.reset();
  exe.emplace(PackageView::from_bytes(
      compile_with_nvrtc(R"({"fuserc": 1, "name": "other", "inputs": [{"name": "x",
        "dtype": "f32", "shape": [5]}], "ops": [{"op": "neg", "args": ["x"], "out": "y"}],
        "outputs": ["y"]})",
                         {90}),
      "other.fpkg"));
  TensorMap in;
  in.emplace("x", HostTensor(DType::F32, {5}));
  run_package(*exe, device, in, "in");
  CHECK(fake.launches.back().kernel.rfind("other_k0", 0) == 0);
}
