// Owns compiling generated CUDA C++ with NVRTC: a cubin per requested architecture, the PTX
// of the lowest, ptxas' resource report (registers, spills, shared memory) for each, the exact
// options used. Kernels compile in parallel, each compilation looked up in the compile cache
// first when one is given (nvrtc_cache.h). A compile failure or any warning is a bug in
// fuserc's code generation: every failed compilation is reported in one internal error with
// NVRTC's log, and each failing source is saved beside the output for the bug report.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "codegen/kernel_summary.h"

namespace fuserc {

class DiskCache;

// Called as kernels finish compiling (from any thread, never concurrently): `done` of `total`
// kernels that were not in the cache. Called once with done == 0 before NVRTC starts, and not
// at all when every compilation was cached.
using NvrtcProgress = std::function<void(size_t done, size_t total)>;
// Called about every quarter second while NVRTC works in worker processes, on the calling
// thread (a progress display's clock: it needs no thread of its own, and fuserc forks its
// workers only while it has a single thread, core/base/worker_processes.h).
using NvrtcWaiting = std::function<void()>;

struct NvrtcOptions {
  std::vector<int> archs = {80, 90};  // sm_80, sm_90
  int jobs = 1;                       // parallel NVRTC invocations
  std::string failure_dir = ".";      // where the source of a failed compile is saved
  DiskCache* cache = nullptr;         // the compile cache (nvrtc_cache.h), if any
  NvrtcProgress progress;             // optional
  NvrtcWaiting waiting;               // optional
};

// The options fuserc passes to NVRTC for `arch`, as recorded in packages (the include path of
// the CUDA Toolkit's headers is added at compile time and not recorded).
std::vector<std::string> nvrtc_options(int arch);

// "13.0" (nvrtc_toolchain().version)
std::string nvrtc_version();

// The CUDA Toolkit's include directory (for cuda_fp16.h), found once.
const std::string& cuda_include_dir();

// Compiles every kernel's `source` for every arch, filling binaries, ptx, ptx_arch and
// compile_options. Throws InternalError on failure (see above).
void compile_kernels(std::vector<KernelSummary*> kernels, const NvrtcOptions& options);

// Parses ptxas' -v report into `b` (registers, spills, shared memory, stack frame).
void parse_ptxas_report(const std::string& log, ArchBinary& b);

}  // namespace fuserc
