#include "runtime/cuda/cuda_device.h"

#include <algorithm>

#include "runtime/cuda/cublaslt_matmul.h"

#include "runtime/cuda/cuda_error.h"
#include "runtime/launch_plan.h"

namespace fuserc::cuda {

void launch_kernel(const DriverApi& d, CUfunction f, const char* name, const LaunchDims& dims,
                   CUstream stream, void** args) {
  CUresult r =
      d.cuLaunchKernel(f, dims.grid[0], dims.grid[1], dims.grid[2], dims.block[0], dims.block[1],
                       dims.block[2], dims.dynamic_shared_bytes, stream, args, nullptr);
  if (r != CUDA_SUCCESS)
    fail(r, std::string("launching kernel ") + name + " (" + describe_dims(dims) + ")");
}

CudaDevice::CudaDevice(int ordinal)
    : context_(Context::current_or_primary(ordinal)), driver_(&driver()) {}

CudaDevice::~CudaDevice() {
  modules_.clear();  // before the context is released
  if (library_workspace_) {
    ContextScope scope(context_.get());
    driver_->cuMemFree(library_workspace_);
  }
}

std::string CudaDevice::name() const {
  return context_.info().name + " (" + context_.info().arch_name() + ")";
}

DeviceProps CudaDevice::properties() const {
  return device_props_of(context_.info());
}

void* CudaDevice::allocate(size_t bytes) {
  ContextScope scope(context_.get());
  CUdeviceptr p = 0;
  CUresult r = driver_->cuMemAlloc(&p, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) fail(r, "allocating " + std::to_string(bytes) + " B on " + name());
  return reinterpret_cast<void*>(static_cast<uintptr_t>(p));
}

void CudaDevice::release(void* p) {
  ContextScope scope(context_.get());
  driver_->cuMemFree(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p)));
}

void CudaDevice::to_device(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  ContextScope scope(context_.get());
  check(
      driver_->cuMemcpyHtoD(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(dst)), src, bytes),
      "copying inputs to the device");
}

void CudaDevice::to_host(void* dst, const void* src, size_t bytes) {
  if (!bytes) return;
  ContextScope scope(context_.get());
  check(
      driver_->cuMemcpyDtoH(dst, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(src)), bytes),
      "copying outputs from the device");
}

void CudaDevice::fill_zero(void* dst, size_t bytes) {
  if (!bytes) return;
  ContextScope scope(context_.get());
  check(driver_->cuMemsetD8Async(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(dst)), 0,
                                 bytes, nullptr),
        "zeroing scratch memory");
}

void CudaDevice::matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias,
                        void* c) {
  ContextScope scope(context_.get());
  // `fuserc run`: each product set up where it runs, any alignment of its operands (the
  // runtime's plans set theirs up at bind); the workspace is kept for later products.
  size_t align = dtype_size(p.a.dtype);
  for (DType d : {p.b.dtype, p.c.dtype}) align = std::min(align, dtype_size(d));
  MatmulRunner runner(p, kLibraryWorkspace, static_cast<uint32_t>(align));
  if (runner.workspace_bytes() > 0 && !library_workspace_) {
    CUdeviceptr w = 0;
    check(driver_->cuMemAlloc(&w, kLibraryWorkspace), "allocating the library's workspace");
    library_workspace_ = w;
  }
  runner.run(a, b, bias, c, reinterpret_cast<void*>(static_cast<uintptr_t>(library_workspace_)),
             nullptr);
}

void CudaDevice::launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims,
                        void** args) {
  ContextScope scope(context_.get());
  auto& modules = modules_[exe.id()];
  if (!modules) modules = std::make_unique<KernelModules>(exe, context_);
  CUfunction f = modules->function(kernel, dims.dynamic_shared_bytes);
  launch_kernel(*driver_, f, exe.metadata().kernels()->Get(kernel)->name()->c_str(), dims, nullptr,
                args);
}

void CudaDevice::synchronize() {
  ContextScope scope(context_.get());
  CUresult r = driver_->cuStreamSynchronize(nullptr);
  if (r != CUDA_SUCCESS)
    fail(r, "a kernel failed on " + name() +
                " (run with CUDA_LAUNCH_BLOCKING=1 to have the failing launch named)");
}

}  // namespace fuserc::cuda
