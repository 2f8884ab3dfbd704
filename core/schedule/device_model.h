// Owns the compiler's model of the GPU: the device properties a launch formula may read at
// bind time (as reserved symbols "device.<property>", which the package's program reads with
// its Device opcode; graph symbols are identifiers, so they can never collide) and the fixed
// per-SM limits the heuristics plan with (those of sm_80 and sm_90 parts alike).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "core/base/device_props.h"
#include "core/expr/expr.h"

namespace fuserc {

inline constexpr int64_t kThreadsPerSm = 2048;
inline constexpr int64_t kRegistersPerSm = 65536;
inline constexpr int64_t kMaxSmemPerBlock = 232448;  // opt-in maximum on sm_90 (227 KB)

// The number of SMs of the device a package is bound for, in [1, kMaxSmCount].
inline Expr device_sm_count() {
  return Expr::symbol("device.sm_count", 1, kMaxSmCount);
}

// The device property a symbol name reads ("device.sm_count"), if it is one.
inline std::optional<DeviceProp> device_prop_of(const std::string& symbol) {
  if (symbol == "device.sm_count") return DeviceProp::SmCount;
  return std::nullopt;
}
inline bool is_device_symbol(const std::string& symbol) {
  return symbol.rfind("device.", 0) == 0;
}

}  // namespace fuserc
