// The host cost of the runtime's hot path, for the one-kernel and six-kernel packages of this
// folder (or any others): binding a shape seen before (from symbol values and from input
// shapes), launching the plan through the C++ API and through the C API, and launching it as a
// CUDA graph, each the median of batches of calls. With the fake driver (the default: its
// calls do almost nothing, so the figures are the runtime's own cost) or with --real, the
// CUDA driver of this machine (the cost a program sees, the driver's included).
//
//   launch_overhead [--real] PACKAGE.fpkg...
// A benchmark: it prints figures and checks nothing.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fake_driver.h"
#include "fuserc_runtime.h"
#include "runtime/api/package.h"
#include "runtime/api/package_state.h"
#include "runtime/api/plan.h"
#include "runtime/cuda/cuda_error.h"

using namespace fuserc;

namespace {

// Nanoseconds per call of `f`: 30 batches of `batch` calls, the median batch; `after` runs
// after each batch, untimed (e.g. waiting for the GPU).
double ns_per_call(int batch, const std::function<void()>& f, const std::function<void()>& after) {
  std::vector<double> t;
  for (int r = 0; r < 30; ++r) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i) f();
    auto end = std::chrono::steady_clock::now();
    after();
    t.push_back(std::chrono::duration<double, std::nano>(end - start).count() / batch);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void bench(const std::string& path) {
  const cuda::DriverApi& d = cuda::driver();
  auto pkg = rt::Package::load(path);
  const fb::Metadata& m = pkg->executable().metadata();
  std::vector<int64_t> symbols;
  for (const auto* s : *m.symbols()) symbols.push_back(std::clamp(s->hint(), s->min(), s->max()));

  auto t0 = std::chrono::steady_clock::now();
  auto plan = pkg->bind(symbols);
  double first_bind_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  size_t kernels = plan->num_kernel_launches();

  // Buffers: the plan's shapes, contents irrelevant.
  cuda::ContextScope scope(pkg->state().context->get());
  std::vector<cuda::CUdeviceptr> owned;
  auto alloc = [&](size_t bytes) {
    cuda::CUdeviceptr p = 0;
    cuda::check(d.cuMemAlloc(&p, bytes ? bytes : 1), "allocating");
    cuda::check(d.cuMemsetD8Async(p, 0, bytes ? bytes : 1, nullptr), "zeroing");
    owned.push_back(p);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  };
  std::vector<const void*> inputs;
  std::vector<uint64_t> scalar(m.inputs()->size(), 0);
  std::vector<std::vector<int64_t>> shapes;
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    shapes.push_back(t->scalar() ? std::vector<int64_t>{} : plan->input_shape(i));
    inputs.push_back(t->scalar()
                         ? static_cast<const void*>(&scalar[i])
                         : alloc(static_cast<size_t>(plan->binding().slot(t->bytes_slot()))));
  }
  std::vector<void*> outputs;
  for (const auto& o : plan->launches().outputs()) outputs.push_back(alloc(o.bytes));
  size_t ws_bytes = plan->workspace_bytes();
  void* ws = alloc(ws_bytes);
  cuda::CUstream stream = nullptr;
  cuda::check(d.cuStreamCreate(&stream, cuda::kStreamNonBlocking), "cuStreamCreate");
  auto wait = [&] { cuda::check(d.cuStreamSynchronize(stream), "a kernel failed"); };

  double bind_ns = ns_per_call(
      1000, [&] { pkg->bind(symbols); }, [] {});
  double bind_shapes_ns = ns_per_call(
      1000, [&] { pkg->bind_shapes(shapes); }, [] {});
  double launch_ns = ns_per_call(
      50, [&] { plan->launch(stream, inputs.data(), outputs.data(), ws, ws_bytes); }, wait);
  double bind_launch_ns = ns_per_call(
      50, [&] { pkg->bind(symbols)->launch(stream, inputs.data(), outputs.data(), ws, ws_bytes); },
      wait);

  fuserc_package* cp = nullptr;
  fuserc_plan* cplan = nullptr;
  if (fuserc_package_load(path.c_str(), nullptr, &cp) != FUSERC_OK ||
      fuserc_bind(cp, symbols.data(), static_cast<int32_t>(symbols.size()), &cplan) != FUSERC_OK)
    throw std::runtime_error(fuserc_last_error());
  double c_launch_ns = ns_per_call(
      50, [&] { fuserc_launch(cplan, stream, inputs.data(), outputs.data(), ws, ws_bytes); }, wait);
  auto graph = plan->capture(stream, inputs.data(), outputs.data(), ws, ws_bytes);
  double graph_ns = ns_per_call(
      50, [&] { graph->launch(stream); }, wait);
  // The floor: the driver alone launching the plan's kernels (cuLaunchKernel with arguments
  // prepared beforehand), so that the runtime's share can be told from the driver's.
  std::vector<std::vector<uint64_t>> storage;
  std::vector<std::vector<void*>> params;
  std::vector<cuda::CUfunction> functions;
  ArgBases bases;
  bases.inputs = inputs.data();
  bases.outputs = outputs.data();
  bases.workspace = static_cast<uint8_t*>(ws);
  for (const PlannedLaunch& l : plan->launches().launches()) {
    storage.emplace_back(std::max<uint32_t>(l.num_args, 1));
    plan->launches().write_args(l, bases, storage.back().data());
    params.emplace_back();
    for (auto& v : storage.back()) params.back().push_back(&v);
    functions.push_back(pkg->state().modules->function(l.kernel, l.dims.dynamic_shared_bytes));
  }
  const auto& launches = plan->launches().launches();
  if (plan->launches().counter_bytes() > 0)  // the counters are the plan's own memory
    throw std::runtime_error("the driver-alone baseline needs a package without counters");
  double driver_ns = ns_per_call(
      50,
      [&] {
        for (size_t i = 0; i < launches.size(); ++i) {
          const LaunchDims& g = launches[i].dims;
          d.cuLaunchKernel(functions[i], g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
                           g.block[2], g.dynamic_shared_bytes, stream, params[i].data(), nullptr);
        }
      },
      wait);
  wait();
  fuserc_plan_free(cplan);
  fuserc_package_free(cp);
  graph.reset();
  d.cuStreamDestroy(stream);
  for (auto p : owned) d.cuMemFree(p);

  std::printf(
      "%-14s %zu kernel%s: first bind %8.1f us | bind (cached) %6.3f us, from shapes %6.3f us | "
      "launch %6.2f us (%5.2f us/kernel) | bind+launch %6.2f us (%5.2f us/kernel) | C launch "
      "%6.2f us | graph launch %6.2f us | driver alone %6.2f us (%5.2f us/kernel)\n",
      m.name()->c_str(), kernels, kernels == 1 ? " " : "s", first_bind_us, bind_ns / 1e3,
      bind_shapes_ns / 1e3, launch_ns / 1e3, launch_ns / 1e3 / static_cast<double>(kernels),
      bind_launch_ns / 1e3, bind_launch_ns / 1e3 / static_cast<double>(kernels), c_launch_ns / 1e3,
      graph_ns / 1e3, driver_ns / 1e3, driver_ns / 1e3 / static_cast<double>(kernels));
}

}  // namespace

int main(int argc, char** argv) {
  bool real = false;
  std::vector<std::string> packages;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--real") == 0)
      real = true;
    else
      packages.push_back(argv[i]);
  }
  if (packages.empty()) {
    std::fprintf(stderr, "usage: launch_overhead [--real] PACKAGE.fpkg...\n");
    return 2;
  }
  std::unique_ptr<testing::FakeDriver> fake;
  if (!real) {
    fake = std::make_unique<testing::FakeDriver>();
    fake->record_launches = false;
  }
  try {
    std::printf("host cost of the runtime's hot path, %s (medians)\n",
                real ? "real CUDA driver" : "fake driver: the runtime's own cost");
    for (const auto& p : packages) bench(p);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_overhead: %s\n", e.what());
    return 1;
  }
  return 0;
}
