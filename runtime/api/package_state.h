// Owns what a Package and the Plans bound from it share, so that a plan stays valid after the
// package handle is dropped: the executable, the CUDA context (chosen at the first bind) and
// the kernels loaded in it; or, for a package run in the CPU emulator, the emulator device.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "runtime/api/package.h"
#include "runtime/cuda/context.h"
#include "runtime/cuda/kernel_modules.h"
#include "runtime/emulator_device.h"

namespace fuserc::rt {

struct PackageState {
  ~PackageState();
  std::unique_ptr<Executable> exe;
  LoadOptions options;
  std::mutex mutex;  // guards the lazy creation below
  std::unique_ptr<cuda::Context> context;
  std::unique_ptr<cuda::KernelModules> modules;  // destroyed before the context

  // The CPU emulator (options.device == kEmulatorDevice): its compiled kernels, per package.
  std::unique_ptr<EmulatorDevice> emulator;
  std::mutex emulator_mutex;  // one launch at a time in it
  bool emulated() const { return options.device == kEmulatorDevice; }

  // The constants where kernels read them, by constant index: device memory in `context`,
  // uploaded once on the first bind and kept while the package or a plan lives; in the
  // emulator the package's bytes in place (a copy when they are not 256-byte aligned).
  std::vector<const void*> constants;
  bool constants_ready = false;
  std::vector<unsigned long long> device_constants;  // CUdeviceptr, freed with the state
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::vector<std::unique_ptr<uint8_t, Free>> host_copies;  // aligned_alloc'd

  // Picks the context and loads nothing yet (mutex held by the caller).
  void ensure_context();
  // Uploads the constants (after ensure_context() for a GPU; mutex held).
  void ensure_constants();
  // The properties launch formulas are bound with: the emulator's, or the context's device
  // (ensure_context() first, mutex held).
  DeviceProps device_props() const;
};

}  // namespace fuserc::rt
