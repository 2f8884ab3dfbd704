// Owns running one binding's launches in the CPU emulator, for a Package loaded with
// LoadOptions::device = kEmulatorDevice: the same LaunchPlan a GPU plan uses (the workspace and
// counters laid out alike), on host memory, each kernel through the package's EmulatorDevice
// (its CUDA source compiled once by the host compiler, cached on disk). A launch returns when
// its kernels have run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/launch_plan.h"

namespace fuserc::rt {

struct PackageState;

class HostLauncher {
 public:
  HostLauncher(std::shared_ptr<PackageState> state, const LaunchPlan& plan);
  ~HostLauncher();
  HostLauncher(const HostLauncher&) = delete;
  HostLauncher& operator=(const HostLauncher&) = delete;

  // Runs launches [first, last) of the plan (all: 0, launches().size()), then, when it ran all
  // of them, copies the outputs that are an input or another output (as the GPU plan does).
  // The caller serialises launches of one plan.
  void launch(size_t first, size_t last, const void* const* inputs, void* const* outputs,
              void* workspace, size_t workspace_size);

 private:
  std::shared_ptr<PackageState> state_;
  const LaunchPlan& plan_;
  struct Freer {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t, Freer> counters_;         // zeroed once; kernels leave them at zero
  std::unique_ptr<uint8_t, Freer> owned_workspace_;  // when the caller passes none
  std::vector<uint64_t> storage_;
  std::vector<void*> params_;
};

}  // namespace fuserc::rt
