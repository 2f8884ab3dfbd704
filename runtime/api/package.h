// Owns the C++ embedding API: a package loaded for running on a GPU.
//
//   auto pkg = fuserc::rt::Package::load("model.fpkg");
//   auto plan = pkg->bind_shapes({{4096, 1024}, {1024}});      // once per shape (cached)
//   plan->launch(stream, inputs, outputs);                      // every call: no sync, no malloc
//
// Loading reads and verifies the package only (no GPU work). The first bind picks the CUDA
// context the package runs in: LoadOptions::context if given, else the calling thread's
// current context (a framework's), else device LoadOptions::device's primary context (made
// current, as the CUDA runtime does), and launch configurations are bound for that context's
// device (its SM count; in the emulator, runtime/emulator_device.h's). Binding loads the
// kernels the plan needs (the cubin for the device, a compatible one, or the PTX JIT-compiled
// once per process), opts in to large shared memory, allocates the zeroed counters of grid
// reductions, and returns a Plan (see runtime/api/plan.h), cached per shape signature. With
// LoadOptions::device = kEmulatorDevice no GPU is involved: plans run the kernels on the CPU in
// fuserc's CUDA emulator, on host memory. The plain C interface over this is
// runtime/api/fuserc_runtime.h.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/executable.h"

namespace fuserc::rt {

class Plan;
struct PackageState;  // runtime/api/package_state.h: what a Package and its Plans share

// LoadOptions::device for running in the CPU emulator (FUSERC_DEVICE_EMULATOR in the C API).
inline constexpr int kEmulatorDevice = -1;

struct LoadOptions {
  int device = 0;           // the device whose primary context is used when none is current,
                            // or kEmulatorDevice
  void* context = nullptr;  // a CUcontext to run in (the caller keeps it alive), or null
};

class Package {
 public:
  static std::shared_ptr<Package> load(const std::string& path, LoadOptions options = {});
  // A package in memory: copied, or borrowed (kept alive and unchanged by the caller).
  static std::shared_ptr<Package> from_bytes(std::string bytes, const std::string& name,
                                             LoadOptions options = {});
  static std::shared_ptr<Package> view_bytes(const void* data, size_t size, const std::string& name,
                                             LoadOptions options = {});
  ~Package();
  Package(const Package&) = delete;
  Package& operator=(const Package&) = delete;

  const Executable& executable() const;
  const std::string& name() const;
  bool emulated() const { return options_device_ == kEmulatorDevice; }

  // A plan for symbol values (package order) or the inputs' shapes (graph order; a scalar's
  // shape is empty). Throws UserError when the shapes are refused, cuda::CudaError for the
  // GPU (no driver, no compatible kernel, ...).
  // `scalar_values[i]`, when given, is the host address of scalar input i's value: needed for
  // the scalar inputs that set a symbol ("symbol" in the graph), ignored for the others.
  std::shared_ptr<Plan> bind(const std::vector<int64_t>& symbols);
  std::shared_ptr<Plan> bind_shapes(const std::vector<std::vector<int64_t>>& input_shapes,
                                    const std::vector<const void*>& scalar_values = {});
  // The sizes symbol values give (no GPU work, no kernel loaded): for describing a binding,
  // with the device of the plans once a bind has chosen one (else kDefaultSmCount SMs).
  std::shared_ptr<const Binding> sizes(const std::vector<int64_t>& symbols);

  // The GPU state the plans share (the context and the loaded kernels).
  const PackageState& state() const { return *state_; }

  static constexpr size_t kPlanCacheCapacity = 16;

 private:
  Package(std::unique_ptr<Executable> exe, LoadOptions options);
  std::shared_ptr<PackageState> state_;
  int options_device_;
  std::mutex mutex_;
  std::list<std::shared_ptr<Plan>> plans_;  // most recently used first
};

}  // namespace fuserc::rt
