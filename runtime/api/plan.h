// Owns launching one binding of a package on a GPU: the hot path of the embedding API.
//
// A Plan holds everything resolved at bind time (the kernels' functions, grids, argument
// sources, the workspace layout: runtime/launch_plan.h), so launch() only writes the caller's
// pointers into preallocated parameter storage and calls cuLaunchKernel per kernel: no host
// synchronisation, no allocation, no lookups. Memory:
//   * inputs and outputs are the caller's device buffers (a scalar input is passed as the host
//     address of its value, in the input's dtype); an input with declared strides must be laid
//     out in them (input_strides()), others are contiguous;
//   * intermediates and per-launch scratch live in one workspace of workspace_bytes(): the
//     caller's, or else one the plan allocates on the first launch that passes none and reuses;
//   * grid-reduction counters live in memory the plan owns, zeroed (on the launch stream) before
//     its first launch; the kernels leave them at zero.
// Launches of one plan are serialised on the host (they share the counters and the parameter
// storage); run a plan on one stream at a time, or bind it once per stream via separate
// packages. capture() records the whole plan into a CUDA graph: one cuGraphLaunch instead of a
// launch per kernel, worth it for small shapes where launching costs more than the kernels.
// A plan of a package loaded for the CPU emulator (emulated()) takes host pointers, a null
// stream, and runs its kernels before launch() returns (runtime/api/host_launcher.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/launch_plan.h"

namespace fuserc::cuda {
struct DriverApi;
class MatmulRunner;
using CUstream = struct CUstream_st*;
}

namespace fuserc::rt {

struct PackageState;
class Graph;
class HostLauncher;

class Plan : public std::enable_shared_from_this<Plan> {
 public:
  // Loads the kernels the binding launches (the state's context exists).
  Plan(std::shared_ptr<PackageState> state, std::shared_ptr<const Binding> binding);
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  const Binding& binding() const { return *binding_; }
  const fb::Metadata& package_metadata() const;
  const LaunchPlan& launches() const { return plan_; }
  size_t workspace_bytes() const { return static_cast<size_t>(plan_.workspace_bytes()); }
  size_t num_kernel_launches() const { return plan_.launches().size(); }
  bool emulated() const { return host_ != nullptr; }

  // Shapes (elements) of the bound inputs and outputs; the strides (elements) an input must
  // have in memory (its declared strides, or contiguous).
  const std::vector<int64_t>& input_shape(uint32_t input) const { return shapes_.at(input); }
  const std::vector<int64_t>& input_strides(uint32_t input) const { return strides_.at(input); }
  std::vector<int64_t> output_shape(uint32_t output) const;

  // Launches the plan on `stream` (a CUstream / cudaStream_t; null: the legacy default stream).
  // `inputs[i]` per graph input, `outputs[j]` per graph output (an output written in place, or
  // one that is an input, may be null: it is the input's buffer; a different pointer receives
  // a copy, unless that input is laid out in non-contiguous strides). `input_strides`, if given,
  // has per input null or the strides the caller's buffer has, checked against input_strides().
  // Throws cuda::CudaError on a bad argument or a failed launch (naming the kernel, grid, block and
  // shared memory).
  void launch(void* stream, const void* const* inputs, void* const* outputs,
              void* workspace = nullptr, size_t workspace_size = 0,
              const int64_t* const* input_strides = nullptr);

  // Launches only the `i`-th kernel of the plan (launches()[i]), with the same arguments as
  // launch(): for timing kernels one by one (the inputs of later kernels are whatever an
  // earlier full launch left in the workspace).
  void launch_one(size_t i, void* stream, const void* const* inputs, void* const* outputs,
                  void* workspace = nullptr, size_t workspace_size = 0);

  // Captures one launch with these arguments into a CUDA graph (the stream must not be the
  // legacy default stream). The graph replays with the same pointers and scalar values.
  std::unique_ptr<Graph> capture(void* stream, const void* const* inputs, void* const* outputs,
                                 void* workspace = nullptr, size_t workspace_size = 0);

 private:
  friend class Graph;
  std::shared_ptr<PackageState> state_;
  const cuda::DriverApi* driver_;  // the table it was bound with (null in the emulator)
  std::shared_ptr<const Binding> binding_;
  LaunchPlan plan_;
  std::vector<void*> functions_;  // CUfunction per planned launch
  std::vector<const char*> names_;
  std::vector<uint64_t> storage_;                   // parameter values of the launch being made
  std::vector<void*> params_;                       // &storage_[i]
  std::vector<bool> input_needed_, output_needed_;  // non-empty tensors
  std::vector<bool> input_scalar_;
  std::vector<std::vector<int64_t>> shapes_, strides_;  // per input
  std::vector<bool> output_in_strided_input_;           // the output is a strided input's memory
  std::vector<uint64_t> input_bytes_;                   // the memory each input spans
  std::vector<uint32_t> input_align_, output_align_;    // element sizes
  std::vector<bool> input_written_;                     // an output is written in its place
  uint64_t counters_ = 0;                               // CUdeviceptr
  uint64_t owned_workspace_ = 0;
  std::atomic<bool> counters_zeroed_{false};
  std::unique_ptr<HostLauncher> host_;  // set for the CPU emulator
  // Per planned launch: for a library step, its cuBLASLt runners (for 256-byte aligned
  // operands, and for any operands aligned to their elements).
  struct LibraryStep {
    std::unique_ptr<cuda::MatmulRunner> aligned, any;
  };
  std::vector<LibraryStep> library_;
  static uint32_t element_alignment(const MatmulProblem& p);
  void run_library_step(size_t launch, const ArgBases& bases, cuda::CUstream stream);
  std::mutex mutex_;

  uint8_t* workspace_for(void* workspace, size_t size);  // mutex_ held
  // The argument bases of a launch; zeroes the counters before the first (mutex_ held).
  ArgBases prepare(void* stream, const void* const* inputs, void* const* outputs, void* workspace,
                   size_t workspace_size);
  const cuda::DriverApi& table() const { return *driver_; }
  void describe_tensors();  // shapes_, strides_ and the flags below them, from the binding
  void check_host_stream(void* stream) const;
  // Null, misaligned and overlapping pointers, strides: a CudaError(InvalidArgument) naming
  // the tensor.
  void check_pointers(const void* const* inputs, void* const* outputs, const void* workspace,
                      const int64_t* const* input_strides) const;
  void check_memory(const void* const* inputs, void* const* outputs, const void* workspace,
                    const std::function<void(const std::string&)>& bad) const;
};

class Graph {
 public:
  Graph(std::shared_ptr<Plan> plan, void* graph, void* exec);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  // Replays the captured plan on `stream`.
  void launch(void* stream);

 private:
  std::shared_ptr<Plan> plan_;  // keeps the workspace and counters alive
  void* graph_;
  void* exec_;
};

}  // namespace fuserc::rt
