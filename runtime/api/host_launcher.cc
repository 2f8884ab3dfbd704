#include "runtime/api/host_launcher.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "runtime/api/package_state.h"
#include "runtime/cuda/cuda_error.h"

namespace fuserc::rt {
namespace {

uint8_t* host_alloc(uint64_t bytes) {
  uint64_t rounded = (bytes + kPlanAlignment - 1) / kPlanAlignment * kPlanAlignment;
  void* p = std::aligned_alloc(kPlanAlignment, rounded);
  if (!p) throw std::bad_alloc();
  return static_cast<uint8_t*>(p);
}

}  // namespace

void HostLauncher::Freer::operator()(uint8_t* p) const {
  std::free(p);
}

HostLauncher::HostLauncher(std::shared_ptr<PackageState> state, const LaunchPlan& plan)
    : state_(std::move(state)), plan_(plan) {
  if (plan_.counter_bytes() > 0) {
    counters_.reset(host_alloc(plan_.counter_bytes()));
    std::memset(counters_.get(), 0, plan_.counter_bytes());
  }
  storage_.resize(std::max<uint32_t>(plan_.max_args(), 1));
  for (uint64_t& slot : storage_) params_.push_back(&slot);
}

HostLauncher::~HostLauncher() = default;

void HostLauncher::launch(size_t first, size_t last, const void* const* inputs,
                          void* const* outputs, void* workspace, size_t workspace_size) {
  uint64_t need = plan_.workspace_bytes();
  if (need > 0 && workspace && workspace_size < need)
    throw cuda::CudaError(cuda::Failure::InvalidArgument,
                          state_->exe->package().name() + ": the workspace has " +
                              std::to_string(workspace_size) + " B but this binding needs " +
                              std::to_string(need) + " B (workspace_bytes())");
  if (need > 0 && !workspace) {
    if (!owned_workspace_) owned_workspace_.reset(host_alloc(need));
    workspace = owned_workspace_.get();
  }
  ArgBases bases;
  bases.inputs = inputs;
  bases.constants = state_->constants.data();
  bases.outputs = outputs;
  bases.workspace = static_cast<uint8_t*>(workspace);
  bases.counters = counters_.get();
  const auto& launches = plan_.launches();
  {
    std::lock_guard<std::mutex> lock(state_->emulator_mutex);
    for (size_t i = first; i < last; ++i) {
      if (launches[i].matmul >= 0) {  // a library step: the CPU executor
        const PlannedMatmul& mm = plan_.matmuls()[static_cast<size_t>(launches[i].matmul)];
        state_->emulator->matmul(mm.problem, plan_.pointer(mm.a, bases),
                                 plan_.pointer(mm.b, bases),
                                 mm.problem.has_bias ? plan_.pointer(mm.bias, bases) : nullptr,
                                 const_cast<void*>(plan_.pointer(mm.c, bases)));
        continue;
      }
      plan_.write_args(launches[i], bases, storage_.data());
      state_->emulator->launch(*state_->exe, launches[i].kernel, launches[i].dims, params_.data());
    }
  }
  if (first != 0 || last != launches.size()) return;
  const auto& outs = plan_.outputs();
  for (size_t j = 0; j < outs.size(); ++j) {
    const OutputSource& o = outs[j];
    if (!o.copied() || !outputs || !outputs[j] || o.bytes == 0) continue;
    const void* src = o.from_input >= 0      ? inputs[o.from_input]
                      : o.from_constant >= 0 ? state_->constants[o.from_constant]
                                             : outputs[o.from_output];
    if (src && src != outputs[j]) std::memmove(outputs[j], src, o.bytes);
  }
}

}  // namespace fuserc::rt
