// Loads the CUDA driver with dlopen, resolves the table of driver_api.h and calls cuInit, once
// per process (or uses the table a test installed).
#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "runtime/cuda/cuda_error.h"
#include "runtime/cuda/driver_api.h"

namespace fuserc::cuda {
namespace {

struct Loaded {
  DriverApi table{};
  std::string error;  // empty when loaded
};

// Resolves the first of `names` the library exports.
template <class F>
bool resolve(void* lib, F& slot, std::initializer_list<const char*> names, std::string& missing) {
  for (const char* n : names) {
    if (void* p = dlsym(lib, n)) {
      slot = reinterpret_cast<F>(p);
      return true;
    }
  }
  missing = *names.begin();
  return false;
}

Loaded load_driver() {
  Loaded out;
  std::string lib_name = driver_library_name();
  void* lib = dlopen(lib_name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    out.error = "no CUDA driver: cannot load " + lib_name + " (" + (why ? why : "not found") +
                "); running on a GPU needs the NVIDIA driver";
    return out;
  }
  DriverApi& t = out.table;
  std::string missing;
  bool ok = resolve(lib, t.cuInit, {"cuInit"}, missing) &&
            resolve(lib, t.cuDriverGetVersion, {"cuDriverGetVersion"}, missing) &&
            resolve(lib, t.cuGetErrorString, {"cuGetErrorString"}, missing) &&
            resolve(lib, t.cuGetErrorName, {"cuGetErrorName"}, missing) &&
            resolve(lib, t.cuDeviceGet, {"cuDeviceGet"}, missing) &&
            resolve(lib, t.cuDeviceGetCount, {"cuDeviceGetCount"}, missing) &&
            resolve(lib, t.cuDeviceGetName, {"cuDeviceGetName"}, missing) &&
            resolve(lib, t.cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing) &&
            resolve(lib, t.cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing) &&
            resolve(lib, t.cuDevicePrimaryCtxRelease,
                    {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing) &&
            resolve(lib, t.cuCtxGetCurrent, {"cuCtxGetCurrent"}, missing) &&
            resolve(lib, t.cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing) &&
            resolve(lib, t.cuCtxPushCurrent, {"cuCtxPushCurrent_v2"}, missing) &&
            resolve(lib, t.cuCtxPopCurrent, {"cuCtxPopCurrent_v2"}, missing) &&
            resolve(lib, t.cuCtxGetDevice, {"cuCtxGetDevice"}, missing) &&
            resolve(lib, t.cuCtxSynchronize, {"cuCtxSynchronize"}, missing) &&
            resolve(lib, t.cuModuleLoadData, {"cuModuleLoadData"}, missing) &&
            resolve(lib, t.cuModuleLoadDataEx, {"cuModuleLoadDataEx"}, missing) &&
            resolve(lib, t.cuModuleUnload, {"cuModuleUnload"}, missing) &&
            resolve(lib, t.cuLinkCreate, {"cuLinkCreate_v2"}, missing) &&
            resolve(lib, t.cuLinkAddData, {"cuLinkAddData_v2"}, missing) &&
            resolve(lib, t.cuLinkComplete, {"cuLinkComplete"}, missing) &&
            resolve(lib, t.cuLinkDestroy, {"cuLinkDestroy"}, missing) &&
            resolve(lib, t.cuModuleGetFunction, {"cuModuleGetFunction"}, missing) &&
            resolve(lib, t.cuFuncSetAttribute, {"cuFuncSetAttribute"}, missing) &&
            resolve(lib, t.cuLaunchKernel, {"cuLaunchKernel"}, missing) &&
            resolve(lib, t.cuMemAlloc, {"cuMemAlloc_v2"}, missing) &&
            resolve(lib, t.cuMemFree, {"cuMemFree_v2"}, missing) &&
            resolve(lib, t.cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing) &&
            resolve(lib, t.cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing) &&
            resolve(lib, t.cuMemcpyHtoDAsync, {"cuMemcpyHtoDAsync_v2"}, missing) &&
            resolve(lib, t.cuMemcpyDtoHAsync, {"cuMemcpyDtoHAsync_v2"}, missing) &&
            resolve(lib, t.cuMemcpyDtoDAsync, {"cuMemcpyDtoDAsync_v2"}, missing) &&
            resolve(lib, t.cuMemsetD8Async, {"cuMemsetD8Async"}, missing) &&
            resolve(lib, t.cuStreamCreate, {"cuStreamCreate"}, missing) &&
            resolve(lib, t.cuStreamDestroy, {"cuStreamDestroy_v2", "cuStreamDestroy"}, missing) &&
            resolve(lib, t.cuStreamSynchronize, {"cuStreamSynchronize"}, missing) &&
            resolve(lib, t.cuEventCreate, {"cuEventCreate"}, missing) &&
            resolve(lib, t.cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, missing) &&
            resolve(lib, t.cuEventRecord, {"cuEventRecord"}, missing) &&
            resolve(lib, t.cuEventSynchronize, {"cuEventSynchronize"}, missing) &&
            resolve(lib, t.cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"},
                    missing) &&
            resolve(lib, t.cuStreamBeginCapture, {"cuStreamBeginCapture_v2"}, missing) &&
            resolve(lib, t.cuStreamEndCapture, {"cuStreamEndCapture"}, missing) &&
            resolve(lib, t.cuGraphInstantiate, {"cuGraphInstantiateWithFlags"}, missing) &&
            resolve(lib, t.cuGraphLaunch, {"cuGraphLaunch"}, missing) &&
            resolve(lib, t.cuGraphExecDestroy, {"cuGraphExecDestroy"}, missing) &&
            resolve(lib, t.cuGraphDestroy, {"cuGraphDestroy"}, missing);
  if (!ok) {
    out.error = "the CUDA driver " + lib_name + " has no " + missing +
                " (the runtime needs a driver for CUDA 12 or newer)";
    return out;  // the library stays loaded: unloading a driver is not worth the risk
  }
  CUresult r = t.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    const char* text = nullptr;
    t.cuGetErrorName(r, &name);
    t.cuGetErrorString(r, &text);
    out.error = "no usable CUDA driver: cuInit failed with " +
                std::string(name ? name : std::to_string(r)) + " (" + (text ? text : "?") + ")" +
                (r == CUDA_ERROR_NO_DEVICE ? "; no GPU is visible to this process" : "");
  }
  return out;
}

std::atomic<const DriverApi*> g_fake{nullptr};
std::atomic<uint64_t> g_generation{0};

const Loaded& loaded() {
  static const Loaded l = load_driver();
  return l;
}

}  // namespace

std::string driver_library_name() {
  const char* env = std::getenv("FUSERC_LIBCUDA");
  return env && *env ? env : "libcuda.so.1";
}

const DriverApi& driver() {
  if (const DriverApi* fake = g_fake.load(std::memory_order_acquire)) return *fake;
  const Loaded& l = loaded();
  if (!l.error.empty()) throw CudaError(Failure::NoDriver, l.error);
  return l.table;
}

bool driver_available(std::string* why) {
  try {
    driver();
    return true;
  } catch (const CudaError& e) {
    if (why) *why = e.what();
    return false;
  }
}

void install_driver_for_testing(const DriverApi* table) {
  g_generation.fetch_add(1);
  g_fake.store(table, std::memory_order_release);
}

uint64_t driver_generation() {
  return g_generation.load();
}

std::string error_text(CUresult r) {
  const DriverApi* d = nullptr;
  if (const DriverApi* fake = g_fake.load(std::memory_order_acquire))
    d = fake;
  else if (loaded().error.empty())
    d = &loaded().table;
  const char* name = nullptr;
  const char* text = nullptr;
  if (d) {
    if (d->cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    if (d->cuGetErrorString(r, &text) != CUDA_SUCCESS) text = nullptr;
  }
  std::string s = name ? name : "CUDA error " + std::to_string(r);
  if (text) s += std::string(" (") + text + ")";
  return s;
}

void fail(CUresult r, const std::string& what) {
  throw CudaError(r == CUDA_ERROR_OUT_OF_MEMORY ? Failure::OutOfMemory : Failure::Driver,
                  what + ": " + error_text(r), r);
}

}  // namespace fuserc::cuda
