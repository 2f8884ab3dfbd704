#include "runtime/cuda/image_selection.h"

namespace fuserc::cuda {
namespace {

std::string sm(int arch) {
  return "sm_" + std::to_string(arch);
}

}  // namespace

ImageChoice choose_image(int device_arch, const std::vector<int>& cubin_archs, int ptx_arch,
                         int min_compute_capability, const std::string& kernel,
                         const std::string& device_name) {
  ImageChoice c;
  std::string device = device_name + " (" + sm(device_arch) + ")";
  std::string have;
  for (int a : cubin_archs) have += (have.empty() ? "" : ", ") + sm(a);
  if (ptx_arch > 0)
    have += (have.empty() ? "" : ", ") + ("PTX for compute_" + std::to_string(ptx_arch));
  if (have.empty()) have = "no code at all";
  if (min_compute_capability > device_arch) {
    c.refusal = "kernel " + kernel + " needs compute capability " +
                std::to_string(min_compute_capability / 10) + "." +
                std::to_string(min_compute_capability % 10) + " or newer; the device is " + device +
                " (the package has " + have + ")";
    return c;
  }
  int best = -1;
  for (int a : cubin_archs) {
    if (a == device_arch) {
      c.kind = ImageChoice::Kind::Cubin;
      c.arch = a;
      return c;
    }
    if (a / 10 == device_arch / 10 && a % 10 < device_arch % 10 && a > best) best = a;
  }
  if (best >= 0) {
    c.kind = ImageChoice::Kind::Cubin;
    c.arch = best;
    return c;
  }
  if (ptx_arch > 0 && ptx_arch <= device_arch) {
    c.kind = ImageChoice::Kind::Ptx;
    c.arch = ptx_arch;
    return c;
  }
  c.refusal = "kernel " + kernel + " cannot run on " + device + ": the package has " + have +
              " (recompile with --arch " + sm(device_arch) + ")";
  return c;
}

}  // namespace fuserc::cuda
