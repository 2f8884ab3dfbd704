#include "codegen/kernel_summary.h"

#include "core/base/diagnostics.h"

namespace fuserc {

const char* arg_role_name(KernelArg::Role role) {
  switch (role) {
    case KernelArg::Role::Input: return "input";
    case KernelArg::Role::Output: return "output";
    case KernelArg::Role::Scalar: return "scalar";
    case KernelArg::Role::Symbol: return "symbol";
    case KernelArg::Role::Workspace: return "workspace";
    case KernelArg::Role::Size: return "size";
  }
  FUSERC_UNREACHABLE("bad argument role");
}

}  // namespace fuserc
