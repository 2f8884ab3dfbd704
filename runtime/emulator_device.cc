#include "runtime/emulator_device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>

#include "core/base/diagnostics.h"
#include "runtime/library/cpu_matmul.h"

namespace fuserc {

namespace {
size_t round_up(size_t x, size_t to) {
  return (x + to - 1) / to * to;
}
}  // namespace

DeviceProps emulator_device_props() {
  DeviceProps p;
  const char* v = std::getenv("FUSERC_EMU_SM_COUNT");
  if (!v || !*v) return p;
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v, &end, 10);
  if (errno != 0 || *end != '\0' || n < 1 || n > kMaxSmCount)
    throw UserError("FUSERC_EMU_SM_COUNT='" + std::string(v) + "' is not a number of SMs in [1, " +
                    std::to_string(kMaxSmCount) + "]");
  p.sm_count = n;
  return p;
}

EmulatorDevice::~EmulatorDevice() {
  while (!allocations_.empty()) release(allocations_.begin()->first);
}

void* EmulatorDevice::allocate(size_t bytes) {
  using Guard = EmulatedMemory::Guard;
  if (memory_.guard == Guard::None) {
    void* base = std::aligned_alloc(256, round_up(bytes + memory_.misalign_bytes + 1, 256));
    if (!base) throw std::bad_alloc();
    void* p = static_cast<uint8_t*>(base) + memory_.misalign_bytes;
    allocations_[p] = Mapping{base, 0};
    return p;
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  size_t body = round_up(bytes + memory_.misalign_bytes + 16, page);
  size_t length = body + page;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) throw std::bad_alloc();
  uint8_t* b = static_cast<uint8_t*>(base);
  void* p;
  if (memory_.guard == Guard::Before) {
    mprotect(b, page, PROT_NONE);
    p = b + page + memory_.misalign_bytes;
  } else {
    mprotect(b + body, page, PROT_NONE);
    p = b + body - round_up(bytes, 16);
  }
  allocations_[p] = Mapping{base, length};
  return p;
}

void EmulatorDevice::release(void* p) {
  auto it = allocations_.find(p);
  FUSERC_CHECK(it != allocations_.end(), "releasing memory the emulator did not allocate");
  if (it->second.length == 0)
    std::free(it->second.base);
  else
    munmap(it->second.base, it->second.length);
  allocations_.erase(it);
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

void EmulatorDevice::matmul(const MatmulProblem& p, const void* a, const void* b,
                            const void* bias, void* c) {
  cpu_matmul(p, a, b, bias, c);
}

void EmulatorDevice::launch(const Executable& exe, uint32_t kernel, const LaunchDims& dims,
                            void** args) {
  const fb::Kernel* k = exe.metadata().kernels()->Get(kernel);
  auto key = std::make_pair(exe.id(), kernel);
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
