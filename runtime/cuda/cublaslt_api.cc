// Loads cuBLASLt with dlopen and resolves the table of cublaslt_api.h, once per process (or
// uses the table a test installed).
#include "runtime/cuda/cublaslt_api.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "runtime/cuda/cuda_error.h"

namespace fuserc::cuda {
namespace {

// cuBLASLt 12.0: the first with every attribute and value of cublaslt_api.h at these values.
constexpr size_t kMinVersion = 120000;

template <class F>
bool resolve(void* lib, F& slot, const char* name, std::string& missing) {
  if (void* p = dlsym(lib, name)) {
    slot = reinterpret_cast<F>(p);
    return true;
  }
  missing = name;
  return false;
}

template <class F>
void resolve_optional(void* lib, F& slot, const char* name) {
  slot = reinterpret_cast<F>(dlsym(lib, name));
}

std::string how_to_fix() {
  return "matrix products on a GPU need cuBLASLt (CUDA 12+ toolkit or the nvidia-cublas wheel); "
         "set FUSERC_LIBCUBLASLT to its path";
}

struct Loaded {
  CublasLtApi table{};
  std::string error;  // empty when loaded
};

Loaded load(const std::string& path) {
  Loaded out;
  std::vector<std::string> names;
  if (!path.empty())
    names.push_back(path);
  else if (const char* env = std::getenv("FUSERC_LIBCUBLASLT"); env && *env)
    names.push_back(env);
  else
    names = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"};
  void* lib = nullptr;
  std::string name, first_error;
  for (const std::string& n : names) {
    lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      name = n;
      break;
    }
    if (first_error.empty()) {
      const char* why = dlerror();
      first_error = why ? why : "not found";
    }
  }
  if (!lib) {
    out.error = "cannot load " + names.front() + " (" + first_error + "): " + how_to_fix();
    return out;
  }
  CublasLtApi& t = out.table;
  std::string missing;
  bool ok =
      resolve(lib, t.cublasLtCreate, "cublasLtCreate", missing) &&
      resolve(lib, t.cublasLtDestroy, "cublasLtDestroy", missing) &&
      resolve(lib, t.cublasLtGetVersion, "cublasLtGetVersion", missing) &&
      resolve(lib, t.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate", missing) &&
      resolve(lib, t.cublasLtMatmulDescDestroy, "cublasLtMatmulDescDestroy", missing) &&
      resolve(lib, t.cublasLtMatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute", missing) &&
      resolve(lib, t.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate", missing) &&
      resolve(lib, t.cublasLtMatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", missing) &&
      resolve(lib, t.cublasLtMatrixLayoutSetAttribute, "cublasLtMatrixLayoutSetAttribute",
              missing) &&
      resolve(lib, t.cublasLtMatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate", missing) &&
      resolve(lib, t.cublasLtMatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy", missing) &&
      resolve(lib, t.cublasLtMatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute",
              missing) &&
      resolve(lib, t.cublasLtMatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic", missing) &&
      resolve(lib, t.cublasLtMatmul, "cublasLtMatmul", missing);
  if (!ok) {
    out.error = name + " has no " + missing + ": " + how_to_fix();
    return out;  // the library stays loaded, as the driver does
  }
  resolve_optional(lib, t.cublasLtGetStatusName, "cublasLtGetStatusName");
  resolve_optional(lib, t.cublasLtGetStatusString, "cublasLtGetStatusString");
  size_t version = t.cublasLtGetVersion();
  if (version < kMinVersion) {
    out.error = name + " is cuBLASLt " + std::to_string(version / 10000) + "." +
                std::to_string(version / 100 % 100) + ": " + how_to_fix();
  }
  return out;
}

std::atomic<const CublasLtApi*> g_fake{nullptr};
std::atomic<uint64_t> g_generation{0};

const Loaded& loaded() {
  static const Loaded l = load("");
  return l;
}

}  // namespace

std::string cublaslt_library_name() {
  const char* env = std::getenv("FUSERC_LIBCUBLASLT");
  return env && *env ? env : "libcublasLt.so.13";
}

CublasLtApi load_cublaslt(const std::string& path) {
  Loaded l = load(path);
  if (!l.error.empty()) throw CudaError(Failure::NoLibrary, l.error);
  return l.table;
}

const CublasLtApi& cublaslt() {
  if (const CublasLtApi* fake = g_fake.load(std::memory_order_acquire)) return *fake;
  const Loaded& l = loaded();
  if (!l.error.empty()) throw CudaError(Failure::NoLibrary, l.error);
  return l.table;
}

void install_cublaslt_for_testing(const CublasLtApi* table) {
  g_generation.fetch_add(1);
  g_fake.store(table, std::memory_order_release);
}

uint64_t cublaslt_generation() {
  return g_generation.load();
}

std::string cublas_status_text(cublasStatus_t s) {
  const CublasLtApi* t = g_fake.load(std::memory_order_acquire);
  if (!t && loaded().error.empty()) t = &loaded().table;
  const char* name = t && t->cublasLtGetStatusName ? t->cublasLtGetStatusName(s) : nullptr;
  const char* text = t && t->cublasLtGetStatusString ? t->cublasLtGetStatusString(s) : nullptr;
  std::string out = name ? name : "cuBLAS status " + std::to_string(s);
  if (text && (!name || std::string(text) != name)) out += std::string(" (") + text + ")";
  return out;
}

}  // namespace fuserc::cuda
