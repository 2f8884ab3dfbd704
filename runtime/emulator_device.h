// Owns the CPU-emulation Device: host memory, and launches through EmulatedModule, which
// compiles each kernel's own CUDA source (verified against its hash first) with the host
// compiler, once per kernel (and cached on disk across runs). Launch formulas see the device
// properties of emulator_device_props(): kDefaultSmCount SMs (an H100 SXM) unless the
// environment variable FUSERC_EMU_SM_COUNT says otherwise.
#pragma once

#include <map>
#include <memory>

#include "runtime/device.h"
#include "runtime/emulator/emulated_module.h"

namespace fuserc {

// Test and debugging aids for the memory the emulated kernels see.
struct EmulatedMemory {
  // Every buffer starts this many bytes past a 256-byte boundary (8 keeps every element
  // aligned but breaks 16-byte vector alignment, which must fall back to scalar code).
  size_t misalign_bytes = 0;
  // A page that cannot be touched right before each buffer, or right after it (to 16 bytes),
  // so that an out-of-bounds access faults instead of reading a neighbour.
  enum class Guard : uint8_t { None, Before, After } guard = Guard::None;
};

// kDefaultSmCount SMs, or $FUSERC_EMU_SM_COUNT (a positive integer; UserError otherwise).
DeviceProps emulator_device_props();

class EmulatorDevice : public Device {
 public:
  explicit EmulatorDevice(emu::BuildOptions options = {}, EmulatedMemory memory = {})
      : options_(std::move(options)), memory_(memory) {}
  ~EmulatorDevice() override;
  std::string name() const override { return "CPU emulation"; }
  DeviceProps properties() const override { return emulator_device_props(); }
  void* allocate(size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, size_t bytes) override;
  void to_host(void* dst, const void* src, size_t bytes) override;
  void fill_zero(void* dst, size_t bytes) override;
  void launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims, void** args) override;
  // The CPU executor (runtime/library/cpu_matmul.h), on every core.
  void matmul(const MatmulProblem& p, const void* a, const void* b, const void* bias,
              void* c) override;
  void synchronize() override {}
  // Not when testing with guard pages or misaligned buffers: those apply to copies.
  bool reads_host_memory() const override {
    return memory_.guard == EmulatedMemory::Guard::None && memory_.misalign_bytes == 0;
  }

 private:
  emu::BuildOptions options_;
  EmulatedMemory memory_;
  struct Mapping {
    void* base;
    size_t length;  // 0: from aligned_alloc
  };
  std::map<void*, Mapping> allocations_;
  // By executable id (not address: a later executable may reuse one) and kernel.
  std::map<std::pair<uint64_t, uint32_t>, std::unique_ptr<emu::EmulatedModule>> modules_;
};

}  // namespace fuserc
