#include "runtime/emulator_device.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/base/diagnostics.h"

namespace fuserc {

void* EmulatorDevice::allocate(size_t bytes) {
  size_t rounded = (bytes + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  if (!p) throw std::bad_alloc();
  return p;
}

void EmulatorDevice::release(void* p) {
  std::free(p);
}

void EmulatorDevice::to_device(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void EmulatorDevice::to_host(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

void EmulatorDevice::fill_zero(void* dst, size_t bytes) {
  if (bytes) std::memset(dst, 0, bytes);
}

void EmulatorDevice::launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims,
                            void** args) {
  const fb::Kernel* k = exe.metadata().kernels()->Get(kernel);
  auto key = std::make_pair(&exe, kernel);
  auto it = modules_.find(key);
  if (it == modules_.end()) {
    std::string_view source =
        exe.package().blob(*k->source(), "source of kernel " + k->name()->str());
    emu::KernelSignature sig;
    sig.name = k->name()->str();
    for (const auto* a : *k->args()) sig.param_types.push_back(a->c_type()->str());
    it = modules_.emplace(key, emu::EmulatedModule::build(std::string(source), {sig}, options_))
             .first;
  }
  emu::Dim3 grid{dims.grid[0], dims.grid[1], dims.grid[2]};
  emu::Dim3 block{dims.block[0], dims.block[1], dims.block[2]};
  it->second->launch(k->name()->str(), grid, block, dims.dynamic_shared_bytes, args);
}

}  // namespace fuserc
