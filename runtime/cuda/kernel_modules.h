// Owns the loaded code of one package in one CUDA context: per kernel, the image chosen for the
// device (runtime/cuda/image_selection.h), loaded as a module on first use, its function, and
// the dynamic shared memory it has been allowed (kernels asking for more than the default 48 KB
// opt in with cuFuncSetAttribute, once per size). PTX is JIT-compiled through the driver's
// linker and the resulting cubin is cached for the process (by the PTX's hash and the
// architecture), so other contexts and other loads of the same package reuse it.
// Functions are looked up at bind time; the context must be current (see ContextScope).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/context.h"
#include "runtime/cuda/image_selection.h"
#include "runtime/executable.h"

namespace fuserc::cuda {

class KernelModules {
 public:
  KernelModules(const Executable& exe, const Context& context);
  ~KernelModules();  // unloads the modules (errors ignored: the context may be gone)
  KernelModules(const KernelModules&) = delete;
  KernelModules& operator=(const KernelModules&) = delete;

  // The function of kernel `kernel`, able to use `dynamic_shared` bytes of dynamic shared
  // memory. Throws CudaError naming the kernel and the device when no image fits, when the
  // shared memory is more than the device allows, or when loading fails.
  CUfunction function(uint32_t kernel, uint32_t dynamic_shared);

  // What was chosen for `kernel` (chosen on first call).
  const ImageChoice& choice(uint32_t kernel);

  // How many images were loaded and how many of them were JIT-compiled by this object.
  int modules_loaded() const { return loaded_; }

 private:
  struct Entry {
    bool chosen = false;
    ImageChoice choice;
    CUmodule module = nullptr;
    CUfunction function = nullptr;
    uint32_t shared_allowed = 0;  // dynamic shared memory opted in (0: the default)
    uint32_t static_shared = 0;   // from ptxas's report of the chosen cubin
  };
  const Executable& exe_;
  const Context& context_;
  const DriverApi* driver_;
  std::mutex mutex_;
  std::vector<Entry> entries_;
  int loaded_ = 0;

  Entry& chosen(uint32_t kernel);
};

// How many PTX images the process has JIT-compiled (each once per architecture).
int jit_compilations();

}  // namespace fuserc::cuda
