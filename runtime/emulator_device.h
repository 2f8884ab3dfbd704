// Owns the CPU-emulation Device: host memory, and launches through EmulatedModule, which
// compiles each kernel's own CUDA source (verified against its hash first) with the host
// compiler, once per kernel (and cached on disk across runs).
#pragma once

#include <map>
#include <memory>

#include "runtime/device.h"
#include "runtime/emulator/emulated_module.h"

namespace fuserc {

class EmulatorDevice : public Device {
 public:
  explicit EmulatorDevice(emu::BuildOptions options = {}) : options_(std::move(options)) {}
  std::string name() const override { return "CPU emulation"; }
  void* allocate(size_t bytes) override;
  void release(void* p) override;
  void to_device(void* dst, const void* src, size_t bytes) override;
  void to_host(void* dst, const void* src, size_t bytes) override;
  void fill_zero(void* dst, size_t bytes) override;
  void launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims, void** args) override;
  void synchronize() override {}

 private:
  emu::BuildOptions options_;
  std::map<std::pair<const Executable*, uint32_t>, std::unique_ptr<emu::EmulatedModule>> modules_;
};

}  // namespace fuserc
