#include "runtime/cuda/context.h"

#include "runtime/cuda/cuda_error.h"

namespace fuserc::cuda {

Context::Context(CUcontext c, CUdevice d, bool primary)
    : driver_(&driver()),
      context_(c),
      device_(d),
      retained_primary_(primary),
      info_(&device_info(d)) {}

Context::Context(Context&& o) noexcept
    : driver_(o.driver_),
      context_(o.context_),
      device_(o.device_),
      retained_primary_(o.retained_primary_),
      info_(o.info_) {
  o.retained_primary_ = false;
}

Context::~Context() {
  if (retained_primary_) driver_->cuDevicePrimaryCtxRelease(device_);
}

Context Context::current_or_primary(int ordinal) {
  const DriverApi& d = driver();
  CUcontext current = nullptr;
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current) return borrowed(current);
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count)
    throw CudaError(Failure::NoDevice, "no CUDA device " + std::to_string(ordinal) + " (" +
                                           std::to_string(count) + " visible)");
  CUdevice device = 0;
  check(d.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  CUcontext primary = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&primary, device), "cuDevicePrimaryCtxRetain");
  CUresult r = d.cuCtxSetCurrent(primary);
  if (r != CUDA_SUCCESS) {
    d.cuDevicePrimaryCtxRelease(device);
    fail(r, "cuCtxSetCurrent");
  }
  return Context(primary, device, true);
}

Context Context::borrowed(CUcontext context) {
  const DriverApi& d = driver();
  CUdevice device = 0;
  {
    ContextScope scope(context);
    check(d.cuCtxGetDevice(&device), "cuCtxGetDevice");
  }
  // A device's primary context (a framework's, or ours from before) is retained while used:
  // that keeps it alive, and brings it back if its last user had released it.
  CUcontext primary = nullptr;
  check(d.cuDevicePrimaryCtxRetain(&primary, device), "cuDevicePrimaryCtxRetain");
  if (primary == context) return Context(context, device, true);
  d.cuDevicePrimaryCtxRelease(device);
  return Context(context, device, false);
}

ContextScope::ContextScope(CUcontext context) : driver_(&driver()) {
  const DriverApi& d = *driver_;
  CUcontext current = nullptr;
  check(d.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  if (current == context) return;
  check(d.cuCtxPushCurrent(context), "cuCtxPushCurrent");
  pushed_ = true;
}

ContextScope::~ContextScope() {
  if (pushed_) {
    CUcontext popped = nullptr;
    driver_->cuCtxPopCurrent(&popped);
  }
}

}  // namespace fuserc::cuda
