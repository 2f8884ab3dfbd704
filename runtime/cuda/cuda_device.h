// Owns the GPU Device of run_package (`fuserc run`): device memory, copies and launches through
// the CUDA driver, on the legacy default stream of the calling thread's context (else device
// `ordinal`'s primary context). Kernels are loaded per package on first launch
// (KernelModules). A failed launch names the kernel, its grid, block and shared memory; an
// error found when synchronising says how to find the kernel (CUDA_LAUNCH_BLOCKING=1).
#pragma once

#include <map>
#include <memory>

#include "runtime/cuda/context.h"
#include "runtime/cuda/kernel_modules.h"
#include "runtime/device.h"

namespace fuserc::cuda {

class CudaDevice : public Device {
 public:
  explicit CudaDevice(int ordinal = 0);
  ~CudaDevice() override;
  std::string name() const override;
  DeviceProps properties() const override;
  void* allocate(size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, size_t bytes) override;
  void to_host(void* dst, const void* src, size_t bytes) override;
  void fill_zero(void* dst, size_t bytes) override;
  void launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims, void** args) override;
  void matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias,
              void* c) override;
  void synchronize() override;

  const Context& context() const { return context_; }

 private:
  Context context_;
  const DriverApi* driver_;
  // By executable id (an address may be reused by a later executable). The kernels of an
  // executable stay loaded until the device is destroyed.
  std::map<uint64_t, std::unique_ptr<KernelModules>> modules_;
  // The workspace of library steps (allocated by the first product that needs one).
  static constexpr size_t kLibraryWorkspace = 32 << 20;
  CUdeviceptr library_workspace_ = 0;
};

// Launches `f` (kernel `name`) on `stream`; a failure names the kernel and its geometry.
void launch_kernel(const DriverApi& d, CUfunction f, const char* name, const LaunchDims& dims,
                   CUstream stream, void** args);

}  // namespace fuserc::cuda
