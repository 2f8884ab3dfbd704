// Owns which CUDA context the runtime works in. A Context is either the one current on the
// calling thread when it was made (a framework's, or one the caller created) or the primary
// context of a device, made current on the calling thread when none was (as the CUDA runtime
// does on first use). A primary context is retained for the Context's lifetime (also when it
// was found current: a primary context whose users all released it is inactive until
// retained again). ContextScope makes a context
// current for a scope only when it is not already, so a launch from the right thread costs one
// cuCtxGetCurrent.
#pragma once

#include "runtime/cuda/device_info.h"
#include "runtime/cuda/driver_api.h"

namespace fuserc::cuda {

class Context {
 public:
  // The calling thread's current context, else device `ordinal`'s primary context.
  static Context current_or_primary(int ordinal = 0);
  // A context the caller owns (it must outlive this object).
  static Context borrowed(CUcontext context);

  Context(Context&& other) noexcept;
  Context& operator=(Context&&) = delete;
  Context(const Context&) = delete;
  ~Context();

  CUcontext get() const { return context_; }
  CUdevice device() const { return device_; }
  const DeviceInfo& info() const { return *info_; }

 private:
  Context(CUcontext c, CUdevice d, bool primary);
  const DriverApi* driver_ = nullptr;  // the table it was made with (tests swap tables)
  CUcontext context_ = nullptr;
  CUdevice device_ = 0;
  bool retained_primary_ = false;
  const DeviceInfo* info_ = nullptr;
};

class ContextScope {
 public:
  explicit ContextScope(CUcontext context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  const DriverApi* driver_ = nullptr;
  bool pushed_ = false;
};

}  // namespace fuserc::cuda
