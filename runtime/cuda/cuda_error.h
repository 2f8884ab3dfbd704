// Owns the errors of running on a GPU: one type, CudaError, whose kind says what went wrong
// (no driver, no device, no kernel for this device, a driver call that failed, a bad
// argument, no cuBLASLt), so that the C API can map it to an error code. It is a UserError:
// the command line reports it as one line and exit status 1, like any problem with what it
// was given.
#pragma once

#include <string>

#include "core/base/diagnostics.h"
#include "runtime/cuda/driver_api.h"

namespace fuserc::cuda {

enum class Failure {
  NoDriver,            // libcuda.so.1 missing or cuInit failed
  NoDevice,            // no such device
  NoCompatibleKernel,  // neither a cubin nor the PTX fits the device
  Driver,              // a driver call failed (the CUresult is kept)
  OutOfMemory,         // a device allocation failed
  InvalidArgument,     // a launch or capture was given something it cannot use
  NoLibrary,           // a CUDA library the plan needs (cuBLASLt) is missing or too old
};

class CudaError : public UserError {
 public:
  CudaError(Failure kind, const std::string& message, CUresult code = 0)
      : UserError(message), kind_(kind), code_(code) {}
  Failure kind() const { return kind_; }
  CUresult code() const { return code_; }

 private:
  Failure kind_;
  CUresult code_;
};

// Throws CudaError("<what>: <error text>") for a failed driver call (OutOfMemory for
// CUDA_ERROR_OUT_OF_MEMORY, else Driver).
[[noreturn]] void fail(CUresult r, const std::string& what);
inline void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) fail(r, what);
}

}  // namespace fuserc::cuda
