#include "core/schedule/register_cost.h"

#include <algorithm>

#include "core/schedule/reduction_analysis.h"
#include "core/schedule/reduction_scheduler.h"

namespace fuserc {
namespace {

// Indexing, loop counters, pointers and temporaries.
constexpr int64_t kBaseRegisters = 24;

int64_t words(DType t) {
  return dtype_size(t) > 4 ? 2 : 1;
}

}  // namespace

int64_t pointwise_registers(const std::vector<size_t>& bytes) {
  size_t widest = 1;
  for (size_t b : bytes) widest = std::max(widest, b);
  const int64_t lanes = static_cast<int64_t>(16 / widest);
  int64_t regs = kBaseRegisters;
  for (size_t b : bytes) regs += (lanes * static_cast<int64_t>(b) + 3) / 4;
  return regs;
}

int64_t estimated_registers(const GroupFacts& facts, SchedulerKind kind,
                            const HeuristicHints& hints) {
  const Fusion& f = facts.fusion();
  const Segment& group = facts.segment();
  if (kernel_family(kind) == SchedulerKind::Pointwise) {  // transpose tiles: same registers
    std::vector<size_t> bytes;
    for (ValueId v : group.inputs)
      if (!f.value(v).scalar_input) bytes.push_back(dtype_size(f.value(v).dtype));
    for (ValueId v : group.outputs) bytes.push_back(dtype_size(f.value(v).dtype));
    return pointwise_registers(bytes);
  }
  const ReductionAnalysis& a = facts.reductions();
  if (!a.ok()) return kBaseRegisters;
  int64_t regs = kBaseRegisters;
  for (const ReductionInfo& r : a.reductions) {
    const Op& op = f.ops[r.op];
    DType t = f.value(r.outputs[0]).dtype;
    if (op.kind == OpKind::Max || op.kind == OpKind::Min || op.kind == OpKind::Amax ||
        op.kind == OpKind::Amin)
      t = f.value(r.input).dtype;
    // Welford's state is fz_welford (codegen/cuda/preamble.cuh): mean, m2, count, sum and the
    // mean's rounding error.
    bool welford = op.kind == OpKind::Var || op.kind == OpKind::VarMean;
    regs += (welford ? 5 : 1) * (is_float(t) ? words(t) : 2);
  }
  if (kind != SchedulerKind::Normalization) {
    // Side outputs (written during the pass) hold vectors as a pointwise kernel's do.
    if (a.side_outputs.empty()) return regs;
    std::vector<size_t> bytes;
    for (ValueId v : group.inputs)
      if (!f.value(v).scalar_input) bytes.push_back(dtype_size(f.value(v).dtype));
    for (ValueId v : a.side_outputs) bytes.push_back(dtype_size(f.value(v).dtype));
    return regs + pointwise_registers(bytes) - kBaseRegisters;
  }
  // The variant a launch at the hints picks (the first whose row limit holds): its cached
  // elements per thread stay in registers.
  const int64_t row = hints.value_of(a.row_length);
  int cached = 0;
  for (const ReductionParams& p : reduction_variants(a, kind, 4, 1.0, false, 1))
    if (p.limit == 0 || row <= p.limit) {
      cached = p.elements_per_thread;
      break;
    }
  if (cached > 0)
    for (ValueId v : group.inputs)
      if (!f.value(v).scalar_input) regs += cached * words(f.value(v).dtype);
  return regs;
}

}  // namespace fuserc
