// Owns choosing which code of a kernel runs on a device, by CUDA's compatibility rules:
//   1. the cubin built for the device's compute capability;
//   2. else the best compatible cubin: same major version, the highest minor not above the
//      device's (a cubin for sm_XY runs on X.Z for Z >= Y; never across major versions);
//   3. else the PTX, JIT-compiled by the driver, if its architecture is not above the device's
//      (PTX for compute_XY compiles for any later architecture, across major versions);
//   4. else nothing: the refusal names the device's architecture and the package's.
// A kernel whose min_compute_capability is above the device's is refused whatever it carries.
// fuserc writes plain cubins (sm_80, sm_90), never arch-specific ones (sm_90a runs only on 9.0,
// sm_100f only within its family), so these rules are the whole story for its packages.
#pragma once

#include <string>
#include <vector>

namespace fuserc::cuda {

struct ImageChoice {
  enum class Kind { Cubin, Ptx, None } kind = Kind::None;
  int arch = 0;         // the cubin's (Cubin) or the PTX's (Ptx) architecture, e.g. 80
  std::string refusal;  // None: why, naming the device's and the package's architectures
};

// `device_arch` as 10 * major + minor (90); `cubin_archs` those the kernel has cubins for;
// `ptx_arch` 0 when it has no PTX; `device_name` only for the refusal.
ImageChoice choose_image(int device_arch, const std::vector<int>& cubin_archs, int ptx_arch,
                         int min_compute_capability, const std::string& kernel,
                         const std::string& device_name);

}  // namespace fuserc::cuda
