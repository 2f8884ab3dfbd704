#include "runtime/cuda/device_info.h"

#include <map>
#include <memory>
#include <mutex>

#include "runtime/cuda/cuda_error.h"

namespace fuserc::cuda {
namespace {

std::mutex g_mutex;
using Key = std::pair<uint64_t, CUdevice>;  // driver generation, device
std::map<Key, std::unique_ptr<DeviceInfo>>& cache() {
  static auto* c = new std::map<Key, std::unique_ptr<DeviceInfo>>();  // never destroyed
  return *c;
}

DeviceInfo read_info(CUdevice device) {
  const DriverApi& d = driver();
  DeviceInfo info;
  info.device = device;
  char name[256] = {0};
  check(d.cuDeviceGetName(name, sizeof name - 1, device), "cuDeviceGetName");
  info.name = name;
  auto attr = [&](int a) {
    int v = 0;
    check(d.cuDeviceGetAttribute(&v, a, device), "cuDeviceGetAttribute");
    return v;
  };
  info.cc_major = attr(kAttrComputeCapabilityMajor);
  info.cc_minor = attr(kAttrComputeCapabilityMinor);
  info.sm_count = attr(kAttrMultiprocessorCount);
  info.max_threads_per_block = attr(kAttrMaxThreadsPerBlock);
  info.max_grid[0] = attr(kAttrMaxGridDimX);
  info.max_grid[1] = attr(kAttrMaxGridDimY);
  info.max_grid[2] = attr(kAttrMaxGridDimZ);
  info.shared_per_block = attr(kAttrMaxSharedPerBlock);
  info.shared_per_block_optin = attr(kAttrMaxSharedPerBlockOptin);
  // Peak bandwidth: double data rate over the bus. Some drivers no longer report the clock.
  int clock_khz = 0, bus_bits = 0;
  if (d.cuDeviceGetAttribute(&clock_khz, kAttrMemoryClockKHz, device) == CUDA_SUCCESS &&
      d.cuDeviceGetAttribute(&bus_bits, kAttrMemoryBusWidthBits, device) == CUDA_SUCCESS)
    info.peak_bandwidth_gbs = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;
  return info;
}

}  // namespace

const DeviceInfo& device_info(CUdevice device) {
  driver();  // loads the driver (or throws) before anything is read
  Key key{driver_generation(), device};
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& c = cache();
  auto it = c.find(key);
  if (it == c.end()) it = c.emplace(key, std::make_unique<DeviceInfo>(read_info(device))).first;
  return *it->second;
}

}  // namespace fuserc::cuda
