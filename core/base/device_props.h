// Owns DeviceProps: the properties of the GPU a package is bound for that its expression
// program may read (the `Device` opcode), so that launch configurations follow the device at
// bind time without recompiling. A real device's values are clamped into the ranges the
// compiler assumed (device_props_clamped); the CPU emulator and `fuserc inspect` bind
// kDefaultSmCount (an H100 SXM) unless told otherwise.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fuserc {

// Properties a program may read, by number (the package's DeviceProp enum).
enum class DeviceProp : uint8_t { SmCount = 0 };
inline constexpr int kNumDeviceProps = 1;

// How formulas spell a property ("device.sm_count").
inline const char* device_prop_name(DeviceProp p) {
  switch (p) {
    case DeviceProp::SmCount: return "device.sm_count";
  }
  return "device.?";
}

inline constexpr int64_t kDefaultSmCount = 132;  // NVIDIA H100 SXM
inline constexpr int64_t kMaxSmCount = 1024;     // the range the compiler plans for: [1, 1024]

struct DeviceProps {
  int64_t sm_count = kDefaultSmCount;

  int64_t value(DeviceProp p) const {
    switch (p) {
      case DeviceProp::SmCount: return sm_count;
    }
    return 0;
  }
  friend bool operator==(const DeviceProps& a, const DeviceProps& b) {
    return a.sm_count == b.sm_count;
  }
  friend bool operator!=(const DeviceProps& a, const DeviceProps& b) { return !(a == b); }
};

// `p` with every value inside the range compiled packages assume.
inline DeviceProps device_props_clamped(DeviceProps p) {
  p.sm_count = std::clamp<int64_t>(p.sm_count, 1, kMaxSmCount);
  return p;
}

}  // namespace fuserc
