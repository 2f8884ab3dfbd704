#include "cmd/bench_gpu.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/base/diagnostics.h"
#include "core/base/half.h"
#include "core/base/safetensors.h"
#include "runtime/api/package.h"
#include "runtime/api/package_state.h"
#include "runtime/api/plan.h"
#include "runtime/cuda/cuda_error.h"

namespace fuserc::cmd {
namespace {

using namespace fuserc::cuda;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Element i of a fixed pattern: floats in [-1, 1), integers 0 (safe as indices), alternating
// bools; 4096 elements made, then repeated.
void fill_pattern(uint8_t* p, DType dtype, size_t n) {
  constexpr size_t kBlock = 4096;
  if (n > kBlock) {
    fill_pattern(p, dtype, kBlock);
    size_t done = kBlock, size = dtype_size(dtype);
    while (done < n) {
      size_t k = std::min(done, n - done);
      std::memcpy(p + done * size, p, k * size);
      done += k;
    }
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    float v = static_cast<float>(static_cast<int64_t>((i * 2654435761u) % 2000) - 1000) / 1000;
    switch (dtype) {
      case DType::Bool: p[i] = static_cast<uint8_t>(i % 2); break;
      case DType::I32: std::memset(p + 4 * i, 0, 4); break;
      case DType::I64: std::memset(p + 8 * i, 0, 8); break;
      case DType::F16: {
        uint16_t h = float_to_f16_bits(v);
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      case DType::BF16: {
        uint16_t h = float_to_bf16_bits(v);
        std::memcpy(p + 2 * i, &h, 2);
        break;
      }
      case DType::F32: std::memcpy(p + 4 * i, &v, 4); break;
      case DType::F64: {
        double dv = v;
        std::memcpy(p + 8 * i, &dv, 8);
        break;
      }
    }
  }
}

// The bytes of `t` laid out in `strides` (elements).
std::string strided(const HostTensor& t, const std::vector<int64_t>& strides) {
  size_t size = dtype_size(t.dtype());
  int64_t extent = t.numel() == 0 ? 0 : 1;
  // An empty tensor spans no bytes (an extent of 0 would make the span negative).
  for (int d = 0; d < t.rank(); ++d)
    if (t.numel() > 0) extent += (t.shape()[d] - 1) * strides[d];
  std::string bytes(static_cast<size_t>(extent) * size, '\0');
  std::vector<int64_t> idx(t.rank(), 0);
  for (int64_t e = 0; e < t.numel(); ++e) {
    int64_t off = 0;
    for (int d = 0; d < t.rank(); ++d) off += idx[d] * strides[d];
    std::memcpy(bytes.data() + off * size, t.data() + e * size, size);
    for (int d = t.rank() - 1; d >= 0; --d) {
      if (++idx[d] < t.shape()[d]) break;
      idx[d] = 0;
    }
  }
  return bytes;
}

class DeviceMemory {
 public:
  explicit DeviceMemory(const DriverApi& d) : d_(d) {}
  ~DeviceMemory() {
    for (CUdeviceptr p : owned_) d_.cuMemFree(p);
  }
  void* alloc(size_t bytes) {
    CUdeviceptr p = 0;
    CUresult r = d_.cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) fail(r, "allocating " + std::to_string(bytes) + " B");
    owned_.push_back(p);
    return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  }

 private:
  const DriverApi& d_;
  std::vector<CUdeviceptr> owned_;
};

std::string dims_text(const uint32_t* v) {
  return std::to_string(v[0]) + "x" + std::to_string(v[1]) + "x" + std::to_string(v[2]);
}

}  // namespace

void run_gpu_bench(const GpuBenchOptions& o) {
  if (o.runs < 1 || o.warmup < 0) throw UsageError("--runs must be >= 1 and --warmup >= 0");
  rt::LoadOptions lo;
  lo.device = o.device;
  auto pkg = rt::Package::load(o.package, lo);
  const Executable& exe = pkg->executable();
  const fb::Metadata& m = exe.metadata();

  // The binding: from the inputs file, or the symbols given (hints for the rest).
  TensorMap host_inputs;
  std::shared_ptr<rt::Plan> plan;
  if (!o.inputs.empty()) {
    host_inputs = read_safetensors(o.inputs);
    plan = pkg->bind(exe.symbols_of_inputs(host_inputs, o.inputs));
    exe.check_expression_extents(plan->binding(),
                                 shapes_of_tensors(exe.rules(), host_inputs, o.inputs), o.inputs);
  } else {
    std::vector<int64_t> symbols;
    for (const auto& r : exe.symbol_ranges()) {
      const auto* s = m.symbols()->Get(static_cast<uint32_t>(symbols.size()));
      auto it = o.bind.find(r.name);
      symbols.push_back(it != o.bind.end() ? it->second
                                           : std::clamp<int64_t>(s->hint(), r.min, r.max));
    }
    for (const auto& [name, value] : o.bind) {
      bool known = false;
      for (const auto& r : exe.symbol_ranges()) known = known || r.name == name;
      if (!known) throw UsageError("--bind: the package has no symbol " + quote(name));
    }
    plan = pkg->bind(symbols);
  }
  const Binding& b = plan->binding();
  const DeviceInfo& dev = pkg->state().context->info();
  const DriverApi& d = driver();
  ContextScope scope(pkg->state().context->get());
  DeviceMemory mem(d);

  // Inputs (in the layout the package wants), outputs, workspace.
  std::vector<const void*> inputs;
  std::vector<std::string> scalars(m.inputs()->size());
  uint64_t input_bytes = 0, output_bytes = 0;
  for (uint32_t i = 0; i < m.inputs()->size(); ++i) {
    const fb::Tensor* t = m.inputs()->Get(i);
    auto dtype = static_cast<DType>(t->dtype());
    HostTensor host;
    if (!o.inputs.empty()) {
      host = host_inputs.at(t->name()->str());
    } else {
      host = HostTensor(dtype, t->scalar() ? std::vector<int64_t>{} : plan->input_shape(i));
      if (t->symbol() >= 0)  // a scalar that sets a symbol: its value
        host.store_i64(0, b.symbols[static_cast<size_t>(t->symbol())]);
      else
        fill_pattern(host.data(), dtype, static_cast<size_t>(host.numel()));
    }
    if (t->scalar()) {
      scalars[i].assign(reinterpret_cast<const char*>(host.data()), host.nbytes());
      inputs.push_back(scalars[i].data());
      continue;
    }
    std::string bytes = strided(host, plan->input_strides(i));
    void* p = mem.alloc(bytes.size());
    check(d.cuMemcpyHtoD(reinterpret_cast<uintptr_t>(p), bytes.data(), bytes.size()),
          "copying an input");
    inputs.push_back(p);
    input_bytes += static_cast<uint64_t>(b.slot(t->bytes_slot()));
  }
  // The constants are read from device memory like inputs (uploaded by the first bind).
  for (size_t c = 0; c < exe.num_constants(); ++c)
    input_bytes += exe.metadata().constants()->Get(static_cast<uint32_t>(c))->data()->size();
  std::vector<void*> outputs(m.outputs()->size(), nullptr);
  for (uint32_t j = 0; j < m.outputs()->size(); ++j) {
    const OutputSource& src = plan->launches().outputs()[j];
    if (!src.copied()) outputs[j] = mem.alloc(src.bytes);
  }
  for (const auto* buf : *m.buffers())
    if (buf->kind() == fb::BufferKind::Output)
      output_bytes += static_cast<uint64_t>(b.slot(buf->bytes_slot()));
  size_t ws_bytes = plan->workspace_bytes();
  void* ws = ws_bytes ? mem.alloc(ws_bytes) : nullptr;

  CUstream stream = nullptr;
  check(d.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
  CUevent e0 = nullptr, e1 = nullptr;
  check(d.cuEventCreate(&e0, kEventDefault), "cuEventCreate");
  check(d.cuEventCreate(&e1, kEventDefault), "cuEventCreate");
  struct Cleanup {
    const DriverApi& d;
    CUstream s;
    CUevent a, b;
    ~Cleanup() {
      d.cuStreamSynchronize(s);
      d.cuEventDestroy(a);
      d.cuEventDestroy(b);
      d.cuStreamDestroy(s);
    }
  } cleanup{d, stream, e0, e1};

  auto launch = [&] { plan->launch(stream, inputs.data(), outputs.data(), ws, ws_bytes); };
  // Microseconds of `f` on the GPU: CUDA events, after a warm-up, the median of the runs.
  auto gpu_us = [&](const std::function<void()>& f) {
    for (int i = 0; i < o.warmup; ++i) f();
    std::vector<double> t;
    for (int r = 0; r < o.runs; ++r) {
      check(d.cuEventRecord(e0, stream), "cuEventRecord");
      f();
      check(d.cuEventRecord(e1, stream), "cuEventRecord");
      check(d.cuEventSynchronize(e1), "a kernel failed");
      float ms = 0;
      check(d.cuEventElapsedTime(&ms, e0, e1), "cuEventElapsedTime");
      t.push_back(ms * 1e3);
    }
    return median(t);
  };
  // Host microseconds per call of `f`: batches of 50 calls, the median batch; at most 20
  // batches, fewer when the GPU would take more than about half a second for them.
  auto host_us = [&](const std::function<void()>& f, double gpu_us_per_call) {
    constexpr int kBatch = 50;
    int batches =
        static_cast<int>(std::clamp(5e5 / (kBatch * std::max(gpu_us_per_call, 1.0)), 3.0, 20.0));
    std::vector<double> t;
    for (int r = 0; r < batches; ++r) {
      auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < kBatch; ++i) f();
      auto end = std::chrono::steady_clock::now();
      check(d.cuStreamSynchronize(stream), "a kernel failed");
      t.push_back(std::chrono::duration<double, std::micro>(end - start).count() / kBatch);
    }
    return median(t);
  };

  launch();
  check(d.cuStreamSynchronize(stream), "a kernel failed");
  double plan_us = gpu_us(launch);
  nlohmann::json kernels = nlohmann::json::array();
  size_t library_steps = 0;
  for (size_t i = 0; i < plan->num_kernel_launches(); ++i) {
    const PlannedLaunch& l = plan->launches().launches()[i];
    const fb::Launch* pl = m.plan()->Get(l.launch);
    double us =
        gpu_us([&] { plan->launch_one(i, stream, inputs.data(), outputs.data(), ws, ws_bytes); });
    if (l.matmul >= 0) {  // a library step: its product's rate
      const PlannedMatmul& pm = plan->launches().matmuls()[static_cast<size_t>(l.matmul)];
      const MatmulProblem& p = pm.problem;
      double flop = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) *
                    static_cast<double>(p.k) * static_cast<double>(p.batch * p.outer);
      ++library_steps;
      kernels.push_back({{"name", "library: " + pm.name},
                         {"library", true},
                         {"m", p.m},
                         {"n", p.n},
                         {"k", p.k},
                         {"batch", p.batch * p.outer},
                         {"us", us},
                         {"tflops", us > 0 ? flop / us / 1e6 : 0.0}});
      continue;
    }
    uint64_t bytes = 0;
    for (uint32_t buf : *pl->reads())
      bytes += static_cast<uint64_t>(b.slot(m.buffers()->Get(buf)->bytes_slot()));
    for (uint32_t buf : *pl->writes())
      bytes += static_cast<uint64_t>(b.slot(m.buffers()->Get(buf)->bytes_slot()));
    kernels.push_back({{"name", m.kernels()->Get(l.kernel)->name()->str()},
                       {"grid", dims_text(l.dims.grid)},
                       {"block", dims_text(l.dims.block)},
                       {"dynamic_shared_bytes", l.dims.dynamic_shared_bytes},
                       {"us", us},
                       {"bytes", bytes},
                       {"gbs", us > 0 ? bytes / us / 1e3 : 0.0}});
  }
  auto graph = plan->capture(stream, inputs.data(), outputs.data(), ws, ws_bytes);
  double graph_us = gpu_us([&] { graph->launch(stream); });
  double host_launch = host_us(launch, plan_us);
  double host_graph = host_us([&] { graph->launch(stream); }, graph_us);
  check(d.cuStreamSynchronize(stream), "a kernel failed");

  int driver_version = 0;
  d.cuDriverGetVersion(&driver_version);
  uint64_t bytes = input_bytes + output_bytes;
  double gbs = plan_us > 0 ? bytes / plan_us / 1e3 : 0;
  size_t n = plan->num_kernel_launches() - library_steps;
  nlohmann::json symbols = nlohmann::json::object();
  for (size_t i = 0; i < b.symbols.size(); ++i) symbols[exe.symbol_ranges()[i].name] = b.symbols[i];
  nlohmann::json j = {
      {"package", m.name()->str()},
      {"device", dev.name},
      {"arch", dev.arch_name()},
      {"sm_count", dev.sm_count},
      {"driver_cuda_version", driver_version},
      {"peak_bandwidth_gbs", dev.peak_bandwidth_gbs},
      {"symbols", symbols},
      {"kernel_launches", n},
      {"library_steps", library_steps},
      {"kernels", kernels},
      {"plan_us", plan_us},
      {"bytes", bytes},
      {"gbs", gbs},
      {"percent_of_peak", dev.peak_bandwidth_gbs > 0 ? 100 * gbs / dev.peak_bandwidth_gbs : 0.0},
      {"graph_us", graph_us},
      {"host_launch_us", host_launch},
      {"host_launch_us_per_step", plan->num_kernel_launches() ? host_launch / static_cast<double>(plan->num_kernel_launches()) : 0.0},
      {"host_graph_launch_us", host_graph}};
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return;
  }
  char line[512];
  std::string syms;
  for (auto& [k, v] : symbols.items()) syms += (syms.empty() ? "" : ", ") + k + "=" + v.dump();
  std::snprintf(line, sizeof line,
                "fuserc bench %s on %s (%s, %d SMs, driver CUDA %d.%d), %s: %zu kernel "
                "launches and %zu library steps, medians of %d runs\n",
                m.name()->c_str(), dev.name.c_str(), dev.arch_name().c_str(), dev.sm_count,
                driver_version / 1000, driver_version % 1000 / 10, syms.c_str(), n, library_steps, o.runs);
  std::cout << line;
  for (const auto& k : kernels) {
    if (k.contains("library")) {
      std::snprintf(line, sizeof line, "  %-34s %lld x %lld x %lld, batch %lld %9.2f us %8.1f TFLOP/s\n",
                    k["name"].get<std::string>().c_str(), static_cast<long long>(k["m"].get<int64_t>()),
                    static_cast<long long>(k["n"].get<int64_t>()),
                    static_cast<long long>(k["k"].get<int64_t>()),
                    static_cast<long long>(k["batch"].get<int64_t>()), k["us"].get<double>(),
                    k["tflops"].get<double>());
      std::cout << line;
      continue;
    }
    std::snprintf(
        line, sizeof line, "  %-34s grid %-14s block %-10s %9.2f us %12llu B %8.1f GB/s\n",
        k["name"].get<std::string>().c_str(), k["grid"].get<std::string>().c_str(),
        k["block"].get<std::string>().c_str(), k["us"].get<double>(),
        static_cast<unsigned long long>(k["bytes"].get<uint64_t>()), k["gbs"].get<double>());
    std::cout << line;
  }
  std::snprintf(
      line, sizeof line,
      "  plan: %.2f us, %llu B (inputs once, outputs once): %.1f GB/s (%.0f%% of %.0f GB/s "
      "peak)\n  plan as a CUDA graph: %.2f us\n"
      "  host cost: %.2f us per plan launch (%.2f us per step), %.2f us per graph launch\n",
      plan_us, static_cast<unsigned long long>(bytes), gbs, j["percent_of_peak"].get<double>(),
      dev.peak_bandwidth_gbs, graph_us, host_launch, j["host_launch_us_per_step"].get<double>(),
      host_graph);
  std::cout << line;
}

}  // namespace fuserc::cmd
