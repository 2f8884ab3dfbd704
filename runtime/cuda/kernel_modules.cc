#include "runtime/cuda/kernel_modules.h"

#include <map>

#include "runtime/cuda/cuda_error.h"

namespace fuserc::cuda {
namespace {

// The process's JIT results: cubins by (PTX hash, architecture).
struct JitCache {
  std::mutex mutex;
  std::map<std::pair<uint64_t, int>, std::string> cubins;
  int compilations = 0;
};
JitCache& jit_cache() {
  static auto* c = new JitCache();  // never destroyed: used until the process ends
  return *c;
}

// JIT-compiles `ptx` for the current context's device with the driver's linker.
std::string jit_compile(const DriverApi& d, std::string_view ptx, const std::string& kernel) {
  std::string text(ptx);  // the linker wants a NUL-terminated PTX image
  char log[8192] = {0};
  int options[2] = {kJitErrorLogBuffer, kJitErrorLogBufferBytes};
  void* values[2] = {log, reinterpret_cast<void*>(static_cast<uintptr_t>(sizeof log - 1))};
  CUlinkState state = nullptr;
  check(d.cuLinkCreate(2, options, values, &state), "cuLinkCreate");
  struct Destroy {
    const DriverApi& d;
    CUlinkState s;
    ~Destroy() { d.cuLinkDestroy(s); }
  } destroy{d, state};
  CUresult r = d.cuLinkAddData(state, kJitInputPtx, text.data(), text.size() + 1, kernel.c_str(), 0,
                               nullptr, nullptr);
  void* cubin = nullptr;
  size_t bytes = 0;
  if (r == CUDA_SUCCESS) r = d.cuLinkComplete(state, &cubin, &bytes);
  if (r != CUDA_SUCCESS) {
    std::string why = log[0] ? std::string(": ") + log : "";
    if (r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      why +=
          " (the driver is older than the NVRTC that wrote the package; update the driver "
          "or compile for this GPU's architecture)";
    fail(r, "JIT compiling the PTX of kernel " + kernel + why);
  }
  return std::string(static_cast<const char*>(cubin), bytes);  // copied before the destroy
}

}  // namespace

int jit_compilations() {
  std::lock_guard<std::mutex> lock(jit_cache().mutex);
  return jit_cache().compilations;
}

KernelModules::KernelModules(const Executable& exe, const Context& context)
    : exe_(exe),
      context_(context),
      driver_(&driver()),
      entries_(exe.metadata().kernels()->size()) {}

KernelModules::~KernelModules() {
  for (Entry& e : entries_)
    if (e.module) driver_->cuModuleUnload(e.module);
}

KernelModules::Entry& KernelModules::chosen(uint32_t kernel) {
  Entry& e = entries_.at(kernel);
  if (e.chosen) return e;
  const fb::Kernel* k = exe_.metadata().kernels()->Get(kernel);
  std::vector<int> archs;
  for (const auto* b : *k->binaries()) archs.push_back(b->arch());
  int ptx_arch = k->ptx() && k->ptx()->size() > 0 ? k->ptx_arch() : 0;
  const DeviceInfo& dev = context_.info();
  e.choice = choose_image(dev.arch(), archs, ptx_arch, k->min_compute_capability(),
                          k->name()->str(), dev.name);
  e.chosen = true;
  return e;
}

const ImageChoice& KernelModules::choice(uint32_t kernel) {
  std::lock_guard<std::mutex> lock(mutex_);
  return chosen(kernel).choice;
}

CUfunction KernelModules::function(uint32_t kernel, uint32_t dynamic_shared) {
  std::lock_guard<std::mutex> lock(mutex_);
  Entry& e = chosen(kernel);
  const fb::Kernel* k = exe_.metadata().kernels()->Get(kernel);
  const std::string name = k->name()->str();
  const DriverApi& d = *driver_;
  const DeviceInfo& dev = context_.info();
  if (!e.function) {
    if (e.choice.kind == ImageChoice::Kind::None)
      throw CudaError(Failure::NoCompatibleKernel, exe_.package().name() + ": " + e.choice.refusal);
    ContextScope scope(context_.get());
    std::string jitted;
    std::string_view image;
    if (e.choice.kind == ImageChoice::Kind::Cubin) {
      for (const auto* b : *k->binaries())
        if (b->arch() == e.choice.arch) {
          image = exe_.package().blob(
              *b->cubin(), "sm_" + std::to_string(b->arch()) + " cubin of kernel " + name);
          e.static_shared = static_cast<uint32_t>(std::max(0, b->shared_bytes()));
        }
    } else {
      std::string_view ptx = exe_.package().blob(*k->ptx(), "PTX of kernel " + name);
      JitCache& cache = jit_cache();
      auto key = std::make_pair(k->ptx()->hash(), dev.arch());
      std::lock_guard<std::mutex> jit_lock(cache.mutex);
      auto it = cache.cubins.find(key);
      if (it == cache.cubins.end()) {
        it = cache.cubins.emplace(key, jit_compile(d, ptx, name)).first;
        ++cache.compilations;
      }
      jitted = it->second;
      image = jitted;
    }
    CUmodule module = nullptr;
    CUresult r = d.cuModuleLoadData(&module, image.data());
    if (r != CUDA_SUCCESS)
      fail(r, "loading the " +
                  (e.choice.kind == ImageChoice::Kind::Cubin
                       ? "sm_" + std::to_string(e.choice.arch) + " cubin"
                       : "JIT-compiled PTX (compute_" + std::to_string(e.choice.arch) + ")") +
                  " of kernel " + name + " on " + dev.name + " (" + dev.arch_name() + ")");
    CUfunction f = nullptr;
    r = d.cuModuleGetFunction(&f, module, name.c_str());
    if (r != CUDA_SUCCESS) {
      d.cuModuleUnload(module);
      fail(r, "kernel " + name + " is not in its module");
    }
    e.module = module;
    e.function = f;
    ++loaded_;
  }
  if (dynamic_shared > e.shared_allowed && dynamic_shared > 0) {
    uint64_t total = uint64_t{dynamic_shared} + e.static_shared;
    if (total > static_cast<uint64_t>(dev.shared_per_block_optin))
      throw CudaError(Failure::InvalidArgument,
                      "kernel " + name + " needs " + std::to_string(dynamic_shared) +
                          " B of dynamic shared memory per block (+" +
                          std::to_string(e.static_shared) + " B static); " + dev.name + " (" +
                          dev.arch_name() + ") allows at most " +
                          std::to_string(dev.shared_per_block_optin) + " B");
    if (total > static_cast<uint64_t>(dev.shared_per_block)) {
      ContextScope scope(context_.get());
      CUresult r = d.cuFuncSetAttribute(e.function, kFuncAttrMaxDynamicSharedBytes,
                                        static_cast<int>(dynamic_shared));
      if (r != CUDA_SUCCESS)
        fail(r, "allowing kernel " + name + " " + std::to_string(dynamic_shared) +
                    " B of dynamic shared memory");
    }
    e.shared_allowed = dynamic_shared;
  }
  return e.function;
}

}  // namespace fuserc::cuda
