// Owns the compile pipeline from a parsed Fusion to compiled kernels, one stage after the
// other (each named, timed and dumpable through the PassContext):
//   presegmentation passes -> segment -> schedule + lower (per segment) -> emit -> nvrtc.
// The result holds everything the package writer needs; nothing downstream re-lowers.
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_summary.h"
#include "codegen/library/matmul_call.h"
#include "codegen/nvrtc/nvrtc_compiler.h"
#include "core/passes/pass_context.h"
#include "core/segment/memory_plan.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

// One step of the run plan: a kernel launch (one of `kernels`, chosen by `conditions`), or a
// library step (`library` >= 0: an index into CompiledFusion::matmuls; no kernels). A combo
// kernel (codegen/lower/combo_kernel.h) runs several segments.
struct LaunchStep {
  std::vector<int> segments;  // indices into SegmentedFusion::segments
  int library = -1;
  std::vector<int> kernels;          // indices into CompiledFusion::kernels
  std::vector<Expr> conditions;      // parallel to kernels; the last is always 1
  std::vector<std::string> reasons;  // parallel to kernels: the conditions in words
};

struct CompiledFusion {
  Fusion fusion;  // after the presegmentation passes
  SegmentedFusion segmented;
  MemoryPlan memory;
  std::vector<KernelSummary> kernels;
  std::vector<MatmulCall> matmuls;  // the library steps
  std::vector<LaunchStep> plan;
  std::vector<int> archs;
  std::string nvrtc_version;
  // Constants of at least this many bytes go to the package's external data section (aligned,
  // mapped, never read until a bind needs them); smaller ones are blobs of the FlatBuffer.
  uint64_t external_constant_bytes = kDefaultExternalConstantBytes;
  bool external(const Value& constant) const {
    return constant.constant->size() >= external_constant_bytes;
  }
  static constexpr uint64_t kDefaultExternalConstantBytes = 64 * 1024;
};

// The tensors a step reads from global memory (scalar inputs aside) and writes, each once, in
// the order of its segments.
std::vector<ValueId> step_reads(const CompiledFusion& c, const LaunchStep& step);
std::vector<ValueId> step_writes(const CompiledFusion& c, const LaunchStep& step);

struct CompileOptions {
  std::vector<int> archs = {80, 90};
  int jobs = 1;
  bool run_nvrtc = true;          // false: stop after emitting CUDA (tests, dumps)
  std::string failure_dir = ".";  // where a kernel NVRTC rejects is saved
  DiskCache* cache = nullptr;     // the NVRTC compile cache, if any (nvrtc/nvrtc_cache.h)
  NvrtcProgress progress;         // told as NVRTC finishes kernels
  NvrtcWaiting waiting;           // told about every quarter second while NVRTC works
  uint64_t external_constant_bytes = CompiledFusion::kDefaultExternalConstantBytes;
  // false: no combo kernels (codegen/lower/combo_kernel.h), every segment its own step in
  // segment order, as before they existed (for timing one against the other).
  bool combo_kernels = true;
};

CompiledFusion compile_fusion(Fusion fusion, const CompileOptions& options, PassContext& ctx);

}  // namespace fuserc
