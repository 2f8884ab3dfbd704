#include "codegen/nvrtc/nvrtc_library.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include "core/base/diagnostics.h"

#ifndef FUSERC_NVRTC_LIBRARY
#define FUSERC_NVRTC_LIBRARY ""
#endif
#ifndef FUSERC_NVRTC_SONAME
#define FUSERC_NVRTC_SONAME "libnvrtc.so"
#endif

namespace fuserc {
namespace {

template <typename Fn>
void bind(void* handle, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, name));
  if (fn == nullptr)
    throw UserError(std::string("the NVRTC library has no function ") + name +
                    " (a CUDA Toolkit older than the one fuserc was built with?)");
}

NvrtcApi load() {
  void* handle = nullptr;
  std::string file = nvrtc_library_file();
  if (!file.empty()) handle = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) handle = ::dlopen(FUSERC_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    throw UserError(std::string("cannot load NVRTC (") + FUSERC_NVRTC_SONAME +
                    "): " + (why ? why : "unknown error") +
                    "; install the CUDA Toolkit fuserc was built with or add its lib64 folder "
                    "to LD_LIBRARY_PATH");
  }
  NvrtcApi api{};
  bind(handle, api.version, "nvrtcVersion");
  bind(handle, api.get_num_supported_archs, "nvrtcGetNumSupportedArchs");
  bind(handle, api.get_supported_archs, "nvrtcGetSupportedArchs");
  bind(handle, api.create_program, "nvrtcCreateProgram");
  bind(handle, api.destroy_program, "nvrtcDestroyProgram");
  bind(handle, api.compile_program, "nvrtcCompileProgram");
  bind(handle, api.get_program_log_size, "nvrtcGetProgramLogSize");
  bind(handle, api.get_program_log, "nvrtcGetProgramLog");
  bind(handle, api.get_ptx_size, "nvrtcGetPTXSize");
  bind(handle, api.get_ptx, "nvrtcGetPTX");
  bind(handle, api.get_cubin_size, "nvrtcGetCUBINSize");
  bind(handle, api.get_cubin, "nvrtcGetCUBIN");
  bind(handle, api.get_error_string, "nvrtcGetErrorString");
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const NvrtcApi& nvrtc() {
  static const NvrtcApi api = load();  // a failed load throws and is retried on the next call
  return api;
}

std::string nvrtc_library_file() {
  struct stat st;
  const std::string file = FUSERC_NVRTC_LIBRARY;
  if (!file.empty() && ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return file;
  return "";
}

}  // namespace fuserc
