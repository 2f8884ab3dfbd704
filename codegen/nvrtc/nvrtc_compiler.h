// Owns compiling generated CUDA C++ with NVRTC: a cubin per requested architecture, the PTX
// of the lowest, ptxas' resource report (registers, spills, shared memory) for each, the exact
// options used. Kernels compile in parallel. A compile failure or any warning is a bug in
// fuserc's code generation: it is reported as an internal error with NVRTC's log, and the
// source is saved beside the output for the bug report.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_summary.h"

namespace fuserc {

struct NvrtcOptions {
  std::vector<int> archs = {80, 90};  // sm_80, sm_90
  int jobs = 1;                       // parallel NVRTC invocations
  std::string failure_dir = ".";      // where the source of a failed compile is saved
};

// The options fuserc passes to NVRTC for `arch`, as recorded in packages (the include path of
// the CUDA Toolkit's headers is added at compile time and not recorded).
std::vector<std::string> nvrtc_options(int arch);

// "13.0"
std::string nvrtc_version();

// The CUDA Toolkit's include directory (for cuda_fp16.h), found once.
const std::string& cuda_include_dir();

// Compiles every kernel's `source` for every arch, filling binaries, ptx, ptx_arch and
// compile_options. Throws InternalError on failure (see above).
void compile_kernels(std::vector<KernelSummary*> kernels, const NvrtcOptions& options);

// Parses ptxas' -v report into `b` (registers, spills, shared memory, stack frame).
void parse_ptxas_report(const std::string& log, ArchBinary& b);

}  // namespace fuserc
