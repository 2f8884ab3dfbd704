// Owns loading NVRTC: libnvrtc is opened with dlopen at its first use rather than linked, so
// that commands which need no compilation (a warm compile cache, codegen, inspect) do not pay
// for mapping the 100 MB library. nvrtc() returns the table of the functions fuserc calls.
#pragma once

#include <nvrtc.h>

#include <string>

namespace fuserc {

struct NvrtcApi {
  decltype(&::nvrtcVersion) version;
  decltype(&::nvrtcGetNumSupportedArchs) get_num_supported_archs;
  decltype(&::nvrtcGetSupportedArchs) get_supported_archs;
  decltype(&::nvrtcCreateProgram) create_program;
  decltype(&::nvrtcDestroyProgram) destroy_program;
  decltype(&::nvrtcCompileProgram) compile_program;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size;
  decltype(&::nvrtcGetProgramLog) get_program_log;
  decltype(&::nvrtcGetPTXSize) get_ptx_size;
  decltype(&::nvrtcGetPTX) get_ptx;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size;
  decltype(&::nvrtcGetCUBIN) get_cubin;
  decltype(&::nvrtcGetErrorString) get_error_string;
};

// Loads libnvrtc on the first call (thread-safe). Throws UserError naming the library when it
// cannot be loaded.
const NvrtcApi& nvrtc();

// The library file fuserc was built against and loads first, if it exists; "" otherwise (then
// the dynamic linker's search finds libnvrtc.so.<major>).
std::string nvrtc_library_file();

}  // namespace fuserc
