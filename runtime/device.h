// Owns the interface between the runtime and where kernels run: memory and launches. The CPU
// emulator implements it now; the CUDA driver (loaded with dlopen) will implement it too, so
// that run_package is the same for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base/device_props.h"
#include "runtime/executable.h"
#include "runtime/library/matmul_problem.h"

namespace fuserc {

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamic_shared_bytes = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  // What the package's launch formulas may read about the device (bound once per binding).
  virtual DeviceProps properties() const = 0;
  // Memory that kernels can read and write (alignment at least 256 bytes).
  virtual void* allocate(size_t bytes) = 0;
  virtual void release(void* p) = 0;
  virtual void to_device(void* dst, const void* src, size_t bytes) = 0;
  virtual void to_host(void* dst, const void* src, size_t bytes) = 0;
  virtual void fill_zero(void* dst, size_t bytes) = 0;
  // Launches kernel `kernel` of the executable; args[i] points to the value of parameter i.
  virtual void launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims,
                      void** args) = 0;
  // Runs a library step (a matrix product) on device memory (the device keeps whatever
  // workspace the library needs).
  virtual void matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias,
                      void* c) = 0;
  virtual void synchronize() = 0;
  // True when kernels read host memory as it lies (the CPU emulator): a package's constants
  // are then read in place (mapped from the file), not copied.
  virtual bool reads_host_memory() const { return false; }
};

}  // namespace fuserc
