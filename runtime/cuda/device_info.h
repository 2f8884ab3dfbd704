// Owns what the runtime needs to know about a GPU, read from the driver once per device and
// kept for the process: its name, compute capability, SM count, shared memory per block (the
// default and the opt-in maximum), launch limits, and its peak memory bandwidth.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/device_props.h"
#include "runtime/cuda/driver_api.h"

namespace fuserc::cuda {

struct DeviceInfo {
  CUdevice device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int max_threads_per_block = 0;
  int max_grid[3] = {0, 0, 0};
  int shared_per_block = 0;        // without opting in
  int shared_per_block_optin = 0;  // the most a kernel may ask for
  double peak_bandwidth_gbs = 0;   // from the memory clock and bus width (0 if unknown)

  int arch() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
  std::string arch_name() const { return "sm_" + std::to_string(arch()); }
};

// What a package's launch formulas read about the device (clamped into their ranges).
inline DeviceProps device_props_of(const DeviceInfo& info) {
  DeviceProps p;
  p.sm_count = info.sm_count;
  return device_props_clamped(p);
}

// The properties of `device`, read on first use (thread-safe; a test that installs another
// fake driver reads them afresh).
const DeviceInfo& device_info(CUdevice device);

}  // namespace fuserc::cuda
