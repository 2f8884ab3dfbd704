#include "codegen/compile_fusion.h"

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/lower/pointwise_lowering.h"
#include "codegen/lower/reduction_lowering.h"
#include "codegen/lower/transpose_lowering.h"
#include "codegen/nvrtc/nvrtc_compiler.h"
#include "core/base/diagnostics.h"
#include "core/passes/presegmentation.h"
#include "core/schedule/pointwise_scheduler.h"
#include "core/schedule/transpose_scheduler.h"
#include "core/segment/segmenter.h"

namespace fuserc {
namespace {

std::vector<lower::LoweredKernel> lower_segment(const Fusion& f, const Segment& s,
                                                const std::string& name) {
  switch (s.scheduler) {
    case SchedulerKind::Pointwise: {
      PointwiseScheduler scheduler;
      PointwiseParams params = scheduler.heuristics(f, s);
      return lower::lower_pointwise(f, s, params, name);
    }
    case SchedulerKind::Transpose: {
      TransposeParams params = TransposeScheduler().heuristics(f, s);
      return lower::lower_transpose(f, s, params, PointwiseScheduler().heuristics(f, s), name);
    }
    case SchedulerKind::Reduction:
    case SchedulerKind::Normalization: {
      ReductionAnalysis analysis = analyze_reductions(f, s);
      return lower::lower_reduction(f, s, analysis, s.scheduler, name);
    }
    default: break;
  }
  FUSERC_UNREACHABLE(std::string("no lowering for the ") + scheduler_name(s.scheduler) +
                     " scheduler");
}

}  // namespace

CompiledFusion compile_fusion(Fusion fusion, const CompileOptions& options, PassContext& ctx) {
  CompiledFusion out;
  out.external_constant_bytes = options.external_constant_bytes;
  run_presegmentation_passes(fusion, ctx);
  HeuristicHints hints = HeuristicHints::from(fusion);
  // (May give readers of an input written in place a copy taken before, and readers of a
  // cheap intermediate their own copy of the ops computing it: adds ops.)
  out.segmented =
      ctx.timed("segment", [&] { return segment_graph(fusion, all_schedulers(), hints); });
  out.fusion = std::move(fusion);
  const Fusion& f = out.fusion;
  ctx.dump("segment", [&] { return out.segmented.to_text(f); });
  out.memory = ctx.timed("plan-memory", [&] { return plan_memory(f, out.segmented); });
  ctx.dump("plan-memory", [&] { return out.memory.to_text(f); });

  std::vector<kir::Kernel> kirs;
  ctx.timed("lower", [&] {
    for (size_t i = 0; i < out.segmented.segments.size(); ++i) {
      const Segment& s = out.segmented.segments[i];
      std::string name = f.name + "_k" + std::to_string(i);
      LaunchStep step;
      step.segment = static_cast<int>(i);
      if (s.scheduler == SchedulerKind::Library) {  // a library step, no kernel
        step.library = static_cast<int>(out.matmuls.size());
        out.matmuls.push_back(lower_matmul(f, s, name));
        out.plan.push_back(std::move(step));
        continue;
      }
      for (auto& lk : lower_segment(f, s, name)) {
        step.kernels.push_back(static_cast<int>(out.kernels.size()));
        step.conditions.push_back(lk.selected_when);
        step.reasons.push_back(lk.reason);
        out.kernels.push_back(std::move(lk.summary));
        kirs.push_back(std::move(lk.kernel));
      }
      step.conditions.back() = Expr(1);
      // Variants that say nothing about why they run: the 32-bit one of a pair, and the last.
      for (size_t v = 0; v < step.reasons.size(); ++v) {
        if (!step.reasons[v].empty()) continue;
        const KernelSummary& k = out.kernels[step.kernels[v]];
        if (v + 1 == step.reasons.size())
          step.reasons[v] = step.reasons.size() == 1 ? "always" : "otherwise";
        else if (!k.index64)
          step.reasons[v] = "every index fits in 32 bits";
      }
      out.plan.push_back(std::move(step));
    }
  });
  ctx.dump("lower", [&] {
    std::string s;
    for (const auto& k : kirs) s += kir::to_text(k);
    return s;
  });

  ctx.timed("emit", [&] {
    for (size_t i = 0; i < kirs.size(); ++i) {
      KernelSummary& k = out.kernels[i];
      k.source = cuda::emit_source(kirs[i]);
      for (size_t a = 0; a < k.args.size(); ++a)
        k.args[a].c_type = cuda::param_c_type(kirs[i].params[a]);
    }
  });
  ctx.dump("emit", [&] {
    std::string s;
    for (const auto& k : out.kernels) s += cuda::emit_kernel(kirs[&k - out.kernels.data()]);
    return s;
  });

  out.archs = options.archs;
  out.nvrtc_version = nvrtc_version();
  if (options.run_nvrtc) {
    ctx.timed("nvrtc", [&] {
      std::vector<KernelSummary*> ks;
      for (auto& k : out.kernels) ks.push_back(&k);
      NvrtcOptions no;
      no.archs = options.archs;
      no.jobs = options.jobs;
      no.failure_dir = options.failure_dir;
      no.cache = options.cache;
      no.progress = options.progress;
      compile_kernels(ks, no);
    });
  }
  return out;
}

}  // namespace fuserc
