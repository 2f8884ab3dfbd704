// The device-memory helpers of the C interface (fuserc_runtime.h): allocation, synchronous
// copies and stream synchronisation, in the current context or device 0's primary context.
#include <memory>
#include <mutex>

#include "fuserc_runtime.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/cuda_error.h"

namespace fuserc::rt {
// c_api.cc: maps exceptions to a status and the thread's message.
fuserc_status c_api_guarded(void (*f)(void*), void* data);
}  // namespace fuserc::rt

namespace {

using namespace fuserc::cuda;

// Makes a context current on this thread: the current one, else device 0's primary context,
// retained once for the process.
void ensure_context() {
  static std::mutex mutex;
  static std::unique_ptr<Context> primary;  // released when the process ends
  const DriverApi& d = driver();
  CUcontext current = nullptr;
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) return;
  std::lock_guard<std::mutex> lock(mutex);
  if (!primary) {
    primary = std::make_unique<Context>(Context::current_or_primary(0));
    return;
  }
  check(d.cuCtxSetCurrent(primary->get()), "cuCtxSetCurrent");
}

CUdeviceptr dptr(const void* p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

template <class F>
fuserc_status run(F f) {
  return fuserc::rt::c_api_guarded([](void* data) { (*static_cast<F*>(data))(); }, &f);
}

}  // namespace

extern "C" {

fuserc_status fuserc_device_malloc(size_t bytes, void** out) {
  return run([&] {
    if (!out) throw CudaError(Failure::InvalidArgument, "fuserc_device_malloc: out is NULL");
    *out = nullptr;
    ensure_context();
    CUdeviceptr p = 0;
    CUresult r = driver().cuMemAlloc(&p, bytes ? bytes : 1);
    if (r != CUDA_SUCCESS) fail(r, "allocating " + std::to_string(bytes) + " B");
    *out = reinterpret_cast<void*>(static_cast<uintptr_t>(p));
  });
}

fuserc_status fuserc_device_free(void* pointer) {
  return run([&] {
    if (!pointer) return;
    ensure_context();
    check(driver().cuMemFree(dptr(pointer)), "cuMemFree");
  });
}

fuserc_status fuserc_copy_to_device(void* device_dst, const void* host_src, size_t bytes) {
  return run([&] {
    if (!bytes) return;
    ensure_context();
    check(driver().cuMemcpyHtoD(dptr(device_dst), host_src, bytes), "copying to the device");
  });
}

fuserc_status fuserc_copy_to_host(void* host_dst, const void* device_src, size_t bytes) {
  return run([&] {
    if (!bytes) return;
    ensure_context();
    check(driver().cuMemcpyDtoH(host_dst, dptr(device_src), bytes), "copying to the host");
  });
}

fuserc_status fuserc_stream_synchronize(void* stream) {
  return run([&] {
    ensure_context();
    check(driver().cuStreamSynchronize(static_cast<CUstream>(stream)), "a kernel failed");
  });
}

}  // extern "C"
