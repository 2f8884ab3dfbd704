#include "fake_driver.h"

#include "alloc_counter.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/base/content_hash.h"
#include "core/base/diagnostics.h"

namespace fuserc::testing {

using namespace cuda;

namespace {

FakeDriver* g_fake = nullptr;
thread_local CUcontext t_current = nullptr;
thread_local std::vector<CUcontext> t_stack;

constexpr CUresult kNotFound = 500;
constexpr CUresult kInvalidHandle = 400;
constexpr CUresult kCaptureUnsupported = 900;

CUcontext primary_context(CUdevice d) {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x1000 + d));
}

}  // namespace

struct FakeModule {
  std::string kernel;  // the kernel the image is known to hold ("" if unknown)
};
struct FakeFunction {
  std::string name;
};
struct FakeStream {
  bool capturing = false;
  std::vector<std::function<void()>>* graph = nullptr;
};
struct FakeGraph {
  std::vector<std::function<void()>> steps;
};

struct FakeDriver::Impl {
  FakeDriver* self;
  std::mutex mutex;
  std::map<void*, size_t> memory;
  // Registered packages: cubins by content, kernels by name.
  struct Known {
    const Executable* exe;
    uint32_t kernel;
    bool execute;
  };
  std::map<std::string, Known> kernels;
  std::map<std::string, std::string> cubins;  // bytes -> "sm_90 cubin of k"
  std::map<uint64_t, std::string> ptx;        // PTX hash -> kernel
  std::vector<std::unique_ptr<FakeModule>> modules;
  std::vector<std::unique_ptr<FakeFunction>> functions;
  std::vector<std::unique_ptr<FakeStream>> streams;
  std::vector<std::unique_ptr<FakeGraph>> graphs;
  std::vector<std::unique_ptr<std::string>> jit_images;
  FakeStream default_stream;
  int events = 0;
  std::unique_ptr<EmulatorDevice> emulator = std::make_unique<EmulatorDevice>();

  FakeStream& stream(CUstream s) { return s ? *reinterpret_cast<FakeStream*>(s) : default_stream; }
  // Runs `step` now, or records it when the stream is being captured.
  CUresult enqueue(CUstream s, std::function<void()> step) {
    FakeStream& st = stream(s);
    if (st.capturing)
      st.graph->push_back(std::move(step));
    else
      step();
    return CUDA_SUCCESS;
  }
};

FakeDriver::FakeDriver(FakeDeviceSpec spec) : spec_(std::move(spec)), impl_(new Impl{this}) {
  FUSERC_CHECK(!g_fake, "one FakeDriver at a time");
  g_fake = this;
  t_current = nullptr;
  t_stack.clear();
  DriverApi& t = table_;
  t.cuInit = [](unsigned) { return CUDA_SUCCESS; };
  t.cuDriverGetVersion = [](int* v) {
    HeapCountPause pause;
    *v = 13000;
    return CUDA_SUCCESS;
  };
  t.cuGetErrorString = [](CUresult r, const char** s) {
    HeapCountPause pause;
    *s = r == CUDA_ERROR_OUT_OF_MEMORY             ? "out of memory"
         : r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "too many resources requested for launch"
                                                   : "fake error";
    return CUDA_SUCCESS;
  };
  t.cuGetErrorName = [](CUresult r, const char** s) {
    HeapCountPause pause;
    *s = r == CUDA_ERROR_OUT_OF_MEMORY             ? "CUDA_ERROR_OUT_OF_MEMORY"
         : r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES ? "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"
                                                   : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
  };
  t.cuDeviceGet = [](CUdevice* d, int ordinal) {
    HeapCountPause pause;
    if (ordinal < 0 || ordinal >= g_fake->spec_.devices) return CUDA_ERROR_INVALID_VALUE;
    *d = ordinal;
    return CUDA_SUCCESS;
  };
  t.cuDeviceGetCount = [](int* n) {
    HeapCountPause pause;
    *n = g_fake->spec_.devices;
    return CUDA_SUCCESS;
  };
  t.cuDeviceGetName = [](char* name, int length, CUdevice) {
    HeapCountPause pause;
    std::snprintf(name, static_cast<size_t>(length), "%s", g_fake->spec_.name.c_str());
    return CUDA_SUCCESS;
  };
  t.cuDeviceGetAttribute = [](int* v, int a, CUdevice) {
    HeapCountPause pause;
    const FakeDeviceSpec& s = g_fake->spec_;
    switch (a) {
      case kAttrComputeCapabilityMajor: *v = s.cc_major; break;
      case kAttrComputeCapabilityMinor: *v = s.cc_minor; break;
      case kAttrMultiprocessorCount: *v = s.sm_count; break;
      case kAttrMaxThreadsPerBlock: *v = 1024; break;
      case kAttrMaxGridDimX: *v = 2147483647; break;
      case kAttrMaxGridDimY:
      case kAttrMaxGridDimZ: *v = 65535; break;
      case kAttrMaxSharedPerBlock: *v = s.shared_per_block; break;
      case kAttrMaxSharedPerBlockOptin: *v = s.shared_per_block_optin; break;
      case kAttrMemoryClockKHz: *v = 2619000; break;
      case kAttrMemoryBusWidthBits: *v = 5120; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
  };
  t.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice d) {
    HeapCountPause pause;
    ++g_fake->primary_retains;
    *c = primary_context(d);
    return CUDA_SUCCESS;
  };
  t.cuDevicePrimaryCtxRelease = [](CUdevice) {
    HeapCountPause pause;
    ++g_fake->primary_releases;
    return CUDA_SUCCESS;
  };
  t.cuCtxGetCurrent = [](CUcontext* c) {
    HeapCountPause pause;
    *c = t_current;
    return CUDA_SUCCESS;
  };
  t.cuCtxSetCurrent = [](CUcontext c) {
    HeapCountPause pause;
    t_current = c;
    return CUDA_SUCCESS;
  };
  t.cuCtxPushCurrent = [](CUcontext c) {
    HeapCountPause pause;
    t_stack.push_back(t_current);
    t_current = c;
    return CUDA_SUCCESS;
  };
  t.cuCtxPopCurrent = [](CUcontext* c) {
    HeapCountPause pause;
    if (t_stack.empty()) return CUDA_ERROR_INVALID_VALUE;
    if (c) *c = t_current;
    t_current = t_stack.back();
    t_stack.pop_back();
    return CUDA_SUCCESS;
  };
  t.cuCtxGetDevice = [](CUdevice* d) {
    HeapCountPause pause;
    if (!t_current) return CUDA_ERROR_INVALID_VALUE;
    *d = 0;
    return CUDA_SUCCESS;
  };
  t.cuCtxSynchronize = []() {
    HeapCountPause pause;
    ++g_fake->syncs;
    return CUDA_SUCCESS;
  };
  t.cuModuleLoadData = [](CUmodule* m, const void* image) {
    HeapCountPause pause;
    Impl& im = g_fake->impl();
    auto mod = std::make_unique<FakeModule>();
    const auto* b = static_cast<const uint8_t*>(image);
    std::string what = "unknown image";
    if (std::memcmp(b, "FAKEJIT:", 8) == 0) {
      what = std::string(reinterpret_cast<const char*>(b) + 8);
      mod->kernel = what.substr(what.find(" of ") + 4);
    } else if (std::memcmp(b,
                           "\x7f"
                           "ELF",
                           4) == 0) {
      // A cubin: its size is the end of whatever lies furthest (ELF64: section and program
      // headers, and every section with contents).
      auto u64 = [&](size_t off) {
        uint64_t v;
        std::memcpy(&v, b + off, 8);
        return v;
      };
      auto u16 = [&](size_t off) {
        uint16_t v;
        std::memcpy(&v, b + off, 2);
        return v;
      };
      uint64_t shoff = u64(0x28), phoff = u64(0x20);
      uint16_t shentsize = u16(0x3A), shnum = u16(0x3C), phentsize = u16(0x36), phnum = u16(0x38);
      uint64_t end =
          std::max(shoff + uint64_t{shentsize} * shnum, phoff + uint64_t{phentsize} * phnum);
      for (uint16_t i = 0; i < shnum; ++i) {
        size_t h = shoff + size_t{i} * shentsize;
        uint32_t type;
        std::memcpy(&type, b + h + 4, 4);
        if (type != 8) end = std::max(end, u64(h + 0x18) + u64(h + 0x20));  // not NOBITS
      }
      std::string bytes(reinterpret_cast<const char*>(b), end);
      auto it = im.cubins.find(bytes);
      if (it != im.cubins.end()) {
        what = it->second;
        mod->kernel = what.substr(what.find(" of ") + 4);
      }
    } else {
      return CUDA_ERROR_INVALID_VALUE;  // neither a cubin nor a JIT result
    }
    g_fake->loaded_images.push_back(what);
    *m = reinterpret_cast<CUmodule>(mod.get());
    im.modules.push_back(std::move(mod));
    return CUDA_SUCCESS;
  };
  t.cuModuleLoadDataEx = [](CUmodule* m, const void* image, unsigned, int*, void**) {
    HeapCountPause pause;
    return g_fake->table_.cuModuleLoadData(m, image);
  };
  t.cuModuleUnload = [](CUmodule) { return CUDA_SUCCESS; };
  t.cuLinkCreate = [](unsigned, int*, void**, CUlinkState* s) {
    HeapCountPause pause;
    *s = reinterpret_cast<CUlinkState>(new std::string());
    return CUDA_SUCCESS;
  };
  t.cuLinkAddData = [](CUlinkState s, int type, void* data, size_t bytes, const char*, unsigned,
                       int*, void**) {
    HeapCountPause pause;
    if (type != kJitInputPtx || bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    Impl& im = g_fake->impl();
    // The PTX as given (without the NUL the linker wants) identifies the kernel.
    std::string_view ptx(static_cast<const char*>(data), bytes - 1);
    auto it = im.ptx.find(content_hash64(ptx));
    std::string kernel = it == im.ptx.end() ? "?" : it->second;
    auto arch = std::to_string(g_fake->spec_.cc_major * 10 + g_fake->spec_.cc_minor);
    *reinterpret_cast<std::string*>(s) = "FAKEJIT:JIT(sm_" + arch + ") of " + kernel;
    return CUDA_SUCCESS;
  };
  t.cuLinkComplete = [](CUlinkState s, void** cubin, size_t* bytes) {
    HeapCountPause pause;
    ++g_fake->jit_links;
    auto* text = reinterpret_cast<std::string*>(s);
    *cubin = text->data();
    *bytes = text->size() + 1;  // with the NUL
    return CUDA_SUCCESS;
  };
  t.cuLinkDestroy = [](CUlinkState s) {
    HeapCountPause pause;
    delete reinterpret_cast<std::string*>(s);
    return CUDA_SUCCESS;
  };
  t.cuModuleGetFunction = [](CUfunction* f, CUmodule m, const char* name) {
    HeapCountPause pause;
    auto* mod = reinterpret_cast<FakeModule*>(m);
    if (!mod->kernel.empty() && mod->kernel != name) return kNotFound;
    auto fn = std::make_unique<FakeFunction>();
    fn->name = name;
    *f = reinterpret_cast<CUfunction>(fn.get());
    g_fake->impl().functions.push_back(std::move(fn));
    return CUDA_SUCCESS;
  };
  t.cuFuncSetAttribute = [](CUfunction f, int attribute, int value) {
    HeapCountPause pause;
    if (attribute != kFuncAttrMaxDynamicSharedBytes) return CUDA_ERROR_INVALID_VALUE;
    g_fake->shared_attributes.emplace_back(reinterpret_cast<FakeFunction*>(f)->name, value);
    return CUDA_SUCCESS;
  };
  t.cuLaunchKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                        unsigned by, unsigned bz, unsigned shared, CUstream s, void** params,
                        void**) {
    HeapCountPause pause;
    FakeDriver& fd = *g_fake;
    if (fd.fail_next_launch != CUDA_SUCCESS) {
      CUresult r = fd.fail_next_launch;
      fd.fail_next_launch = CUDA_SUCCESS;
      return r;
    }
    if (!fd.record_launches) return CUDA_SUCCESS;
    FakeLaunch l;
    l.kernel = reinterpret_cast<FakeFunction*>(f)->name;
    l.dims.grid[0] = gx, l.dims.grid[1] = gy, l.dims.grid[2] = gz;
    l.dims.block[0] = bx, l.dims.block[1] = by, l.dims.block[2] = bz;
    l.dims.dynamic_shared_bytes = shared;
    l.stream = s;
    fd.launches.push_back(l);
    Impl& im = fd.impl();
    auto it = im.kernels.find(l.kernel);
    if (it == im.kernels.end() || !it->second.execute) return CUDA_SUCCESS;
    // Copy the parameters (8-byte slots) so that a recorded launch replays them.
    Impl::Known k = it->second;
    size_t n = k.exe->metadata().kernels()->Get(k.kernel)->args()->size();
    std::vector<uint64_t> values(n);
    for (size_t a = 0; a < n; ++a) std::memcpy(&values[a], params[a], 8);
    LaunchDims dims = l.dims;
    return im.enqueue(s, [&im, k, dims, values]() mutable {
      std::vector<void*> args;
      for (auto& v : values) args.push_back(&v);
      im.emulator->launch(*k.exe, k.kernel, dims, args.data());
    });
  };
  t.cuMemAlloc = [](CUdeviceptr* p, size_t bytes) {
    HeapCountPause pause;
    FakeDriver& fd = *g_fake;
    if (fd.fail_next_alloc != CUDA_SUCCESS) {
      CUresult r = fd.fail_next_alloc;
      fd.fail_next_alloc = CUDA_SUCCESS;
      return r;
    }
    size_t rounded = (bytes + 255) / 256 * 256;
    void* m = std::aligned_alloc(256, rounded ? rounded : 256);
    std::memset(m, 0xA5, rounded ? rounded : 256);
    std::lock_guard<std::mutex> lock(fd.impl().mutex);
    fd.impl().memory[m] = bytes;
    ++fd.allocations;
    *p = reinterpret_cast<uintptr_t>(m);
    return CUDA_SUCCESS;
  };
  t.cuMemFree = [](CUdeviceptr p) {
    HeapCountPause pause;
    FakeDriver& fd = *g_fake;
    std::lock_guard<std::mutex> lock(fd.impl().mutex);
    auto it = fd.impl().memory.find(reinterpret_cast<void*>(p));
    if (it == fd.impl().memory.end()) return CUDA_ERROR_INVALID_VALUE;
    std::free(it->first);
    fd.impl().memory.erase(it);
    ++fd.frees;
    return CUDA_SUCCESS;
  };
  t.cuMemcpyHtoD = [](CUdeviceptr d, const void* s, size_t n) {
    HeapCountPause pause;
    ++g_fake->copies;
    std::memcpy(reinterpret_cast<void*>(d), s, n);
    return CUDA_SUCCESS;
  };
  t.cuMemcpyDtoH = [](void* d, CUdeviceptr s, size_t n) {
    HeapCountPause pause;
    ++g_fake->copies;
    std::memcpy(d, reinterpret_cast<const void*>(s), n);
    return CUDA_SUCCESS;
  };
  t.cuMemcpyHtoDAsync = [](CUdeviceptr d, const void* s, size_t n, CUstream st) {
    HeapCountPause pause;
    ++g_fake->copies;
    return g_fake->impl().enqueue(st, [=] { std::memcpy(reinterpret_cast<void*>(d), s, n); });
  };
  t.cuMemcpyDtoHAsync = [](void* d, CUdeviceptr s, size_t n, CUstream st) {
    HeapCountPause pause;
    ++g_fake->copies;
    return g_fake->impl().enqueue(st, [=] { std::memcpy(d, reinterpret_cast<const void*>(s), n); });
  };
  t.cuMemcpyDtoDAsync = [](CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st) {
    HeapCountPause pause;
    ++g_fake->copies;
    return g_fake->impl().enqueue(
        st, [=] { std::memcpy(reinterpret_cast<void*>(d), reinterpret_cast<const void*>(s), n); });
  };
  t.cuMemsetD8Async = [](CUdeviceptr d, unsigned char v, size_t n, CUstream st) {
    HeapCountPause pause;
    ++g_fake->memsets;
    return g_fake->impl().enqueue(st, [=] { std::memset(reinterpret_cast<void*>(d), v, n); });
  };
  t.cuStreamCreate = [](CUstream* s, unsigned) {
    HeapCountPause pause;
    auto st = std::make_unique<FakeStream>();
    *s = reinterpret_cast<CUstream>(st.get());
    g_fake->impl().streams.push_back(std::move(st));
    return CUDA_SUCCESS;
  };
  t.cuStreamDestroy = [](CUstream) { return CUDA_SUCCESS; };
  t.cuStreamSynchronize = [](CUstream) {
    HeapCountPause pause;
    ++g_fake->syncs;
    return CUDA_SUCCESS;
  };
  t.cuEventCreate = [](CUevent* e, unsigned) {
    HeapCountPause pause;
    *e = reinterpret_cast<CUevent>(static_cast<uintptr_t>(++g_fake->impl().events));
    return CUDA_SUCCESS;
  };
  t.cuEventDestroy = [](CUevent) { return CUDA_SUCCESS; };
  t.cuEventRecord = [](CUevent, CUstream) { return CUDA_SUCCESS; };
  t.cuEventSynchronize = [](CUevent) {
    HeapCountPause pause;
    ++g_fake->syncs;
    return CUDA_SUCCESS;
  };
  t.cuEventElapsedTime = [](float* ms, CUevent, CUevent) {
    HeapCountPause pause;
    *ms = 0.001f;
    return CUDA_SUCCESS;
  };
  t.cuStreamBeginCapture = [](CUstream s, int) {
    HeapCountPause pause;
    if (!s) return kCaptureUnsupported;  // not on the legacy stream
    FakeStream& st = g_fake->impl().stream(s);
    auto g = std::make_unique<FakeGraph>();
    st.capturing = true;
    st.graph = &g->steps;
    g_fake->impl().graphs.push_back(std::move(g));
    return CUDA_SUCCESS;
  };
  t.cuStreamEndCapture = [](CUstream s, CUgraph* g) {
    HeapCountPause pause;
    FakeStream& st = g_fake->impl().stream(s);
    if (!st.capturing) return kInvalidHandle;
    st.capturing = false;
    *g = reinterpret_cast<CUgraph>(g_fake->impl().graphs.back().get());
    st.graph = nullptr;
    return CUDA_SUCCESS;
  };
  t.cuGraphInstantiate = [](CUgraphExec* e, CUgraph g, unsigned long long) {
    HeapCountPause pause;
    *e = reinterpret_cast<CUgraphExec>(g);
    return CUDA_SUCCESS;
  };
  t.cuGraphLaunch = [](CUgraphExec e, CUstream s) {
    HeapCountPause pause;
    auto* g = reinterpret_cast<FakeGraph*>(e);
    for (auto& step : g->steps) g_fake->impl().enqueue(s, step);
    return CUDA_SUCCESS;
  };
  t.cuGraphExecDestroy = [](CUgraphExec) { return CUDA_SUCCESS; };
  t.cuGraphDestroy = [](CUgraph) { return CUDA_SUCCESS; };
  install_driver_for_testing(&table_);
}

FakeDriver::~FakeDriver() {
  install_driver_for_testing(nullptr);
  for (auto& [p, n] : impl_->memory) std::free(p);
  g_fake = nullptr;
  t_current = nullptr;
  t_stack.clear();
}

void FakeDriver::register_package(const Executable& exe, bool execute) {
  const auto& m = exe.metadata();
  for (uint32_t i = 0; i < m.kernels()->size(); ++i) {
    const fb::Kernel* k = m.kernels()->Get(i);
    std::string name = k->name()->str();
    impl_->kernels[name] = Impl::Known{&exe, i, execute};
    for (const auto* b : *k->binaries()) {
      std::string what = "sm_" + std::to_string(b->arch()) + " cubin of " + name;
      impl_->cubins[std::string(exe.package().blob(*b->cubin(), what))] = what;
    }
    if (k->ptx() && k->ptx()->size() > 0)
      impl_->ptx[content_hash64(exe.package().blob(*k->ptx(), "PTX of " + name))] = name;
  }
}

CUresult FakeDriver::enqueue(CUstream s, std::function<void()> step) {
  return impl_->enqueue(s, std::move(step));
}

size_t FakeDriver::live_bytes() const {
  size_t n = 0;
  for (const auto& [p, b] : impl_->memory) n += b;
  return n;
}

void FakeDriver::set_current(CUcontext c) {
  t_current = c;
}

CUcontext FakeDriver::user_context() const {
  return reinterpret_cast<CUcontext>(static_cast<uintptr_t>(0x2000));
}

}  // namespace fuserc::testing
