#include "codegen/compile_fusion.h"

#include <set>

#include "codegen/cuda/cuda_emitter.h"
#include "codegen/lower/combo_kernel.h"
#include "codegen/lower/pointwise_lowering.h"
#include "codegen/lower/reduction_lowering.h"
#include "codegen/lower/transpose_lowering.h"
#include "codegen/nvrtc/nvrtc_compiler.h"
#include "core/base/diagnostics.h"
#include "core/passes/presegmentation.h"
#include "core/schedule/pointwise_scheduler.h"
#include "core/schedule/transpose_scheduler.h"
#include "core/segment/launch_groups.h"
#include "core/segment/output_views.h"
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

namespace {

// The values of a step's segments that `pick` lists (inputs or outputs), each once, in order;
// scalar inputs aside.
std::vector<ValueId> step_values(const CompiledFusion& c, const LaunchStep& step,
                                 std::vector<ValueId> Segment::*pick) {
  std::vector<ValueId> out;
  std::set<ValueId> seen;
  for (int i : step.segments)
    for (ValueId v : c.segmented.segments[i].*pick)
      if (!c.fusion.value(v).scalar_input && seen.insert(v).second) out.push_back(v);
  return out;
}

}  // namespace

std::vector<ValueId> step_reads(const CompiledFusion& c, const LaunchStep& step) {
  return step_values(c, step, &Segment::inputs);
}

std::vector<ValueId> step_writes(const CompiledFusion& c, const LaunchStep& step) {
  return step_values(c, step, &Segment::outputs);
}

CompiledFusion compile_fusion(Fusion fusion, const CompileOptions& options, PassContext& ctx) {
  CompiledFusion out;
  out.external_constant_bytes = options.external_constant_bytes;
  run_presegmentation_passes(fusion, ctx);
  HeuristicHints hints = HeuristicHints::from(fusion);
  // (May give readers of an input written in place a copy taken before, and readers of a
  // cheap intermediate their own copy of the ops computing it: adds ops.)
  out.segmented =
      ctx.timed("segment", [&] { return segment_graph(fusion, all_schedulers(), hints, &ctx); });
  out.fusion = std::move(fusion);
  const Fusion& f = out.fusion;
  ctx.timed("group-launches", [&] {
    store_reshaped_outputs(f, out.segmented);
    if (options.combo_kernels) {
      group_independent_launches(f, out.segmented);
    } else {
      out.segmented.launches.clear();
      for (size_t i = 0; i < out.segmented.segments.size(); ++i)
        out.segmented.launches.push_back({static_cast<int>(i)});
    }
  });
  ctx.dump("segment", [&] { return out.segmented.to_text(f); });
  out.memory = ctx.timed("plan-memory", [&] { return plan_memory(f, out.segmented); });
  ctx.dump("plan-memory", [&] { return out.memory.to_text(f); });

  std::vector<kir::Kernel> kirs;
  // A kernel step: its variants, in order (the last always holds).
  auto add_kernel_step = [&](std::vector<int> segments, std::vector<lower::LoweredKernel> lks) {
    LaunchStep step;
    step.segments = std::move(segments);
    for (auto& lk : lks) {
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
  };
  FUSERC_CHECK(out.segmented.launch_of().size() == out.segmented.segments.size() &&
                   (out.segmented.segments.empty() || !out.segmented.launches.empty()),
               "segments not grouped into plan steps");
  ctx.timed("lower", [&] {
    for (const auto& launch : out.segmented.launches) {
      auto name_of = [&](int i) { return f.name + "_k" + std::to_string(i); };
      const Segment& s0 = out.segmented.segments[launch[0]];
      if (s0.scheduler == SchedulerKind::Library) {  // a library step, no kernel
        LaunchStep step;
        step.segments = {launch[0]};
        step.library = static_cast<int>(out.matmuls.size());
        out.matmuls.push_back(lower_matmul(f, s0, name_of(launch[0])));
        out.plan.push_back(std::move(step));
        continue;
      }
      std::vector<std::vector<lower::LoweredKernel>> members;
      for (int i : launch) members.push_back(lower_segment(f, out.segmented.segments[i], name_of(i)));
      // Independent segments of one step: combo kernels where their kernels allow.
      for (const auto& combo : lower::plan_combos(members)) {
        if (combo.size() == 1) {
          add_kernel_step({launch[combo[0]]}, std::move(members[combo[0]]));
          continue;
        }
        std::vector<int> segments;
        for (int m : combo) segments.push_back(launch[m]);
        add_kernel_step(segments,
                        lower::lower_combo(members, combo, name_of(segments[0]) + "_combo"));
      }
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
      no.waiting = options.waiting;
      compile_kernels(ks, no);
    });
  }
  return out;
}

}  // namespace fuserc
