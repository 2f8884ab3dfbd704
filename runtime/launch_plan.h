// Owns the launches of one binding, resolved once so that launching does no lookups: for each
// launch of the run plan whose grid is not empty, the kernel variant the binding chose, its
// grid, block and dynamic shared memory, and where each argument comes from (an input, an
// output, the workspace, scratch memory, a scalar input's value, a symbol's value). Also the
// memory the plan needs besides the graph's inputs and outputs:
//
//   workspace = [intermediates, as the package lays them out][scratch of the running launch]
//   counters  = the zero-filled scratch (grid-reduction counters), one region for all launches
//
// The launches of a plan run in order on one stream, so one launch's scratch (the partials of
// a grid reduction) is dead when the next starts: every launch uses the same scratch bytes.
// The kernels leave their counters at zero again (schemas/PACKAGE_FORMAT.md), so one region,
// zeroed once, serves every launch and every later run on that stream.
// Device-independent: run_package and the CUDA plan (runtime/cuda/cuda_plan.h) both use it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/dtype.h"
#include "runtime/device.h"
#include "runtime/library/matmul_problem.h"
#include "runtime/executable.h"

namespace fuserc {

// The C++ type of a scalar kernel parameter (KernelArg.c_type).
enum class ParamType : uint8_t { F32, F64, I32, I64, Bool };

struct ArgSource {
  enum class Kind : uint8_t {
    Input,      // pointer: graph input `index` (an output written in place is its input)
    Constant,   // pointer: the package's constant `index`, on the device
    Output,     // pointer: graph output `index`
    Workspace,  // pointer: workspace + `offset` (an intermediate)
    Scratch,    // pointer: the launch's allocation `index`; in the shared layout workspace + offset
    Counters,   // pointer: the launch's zeroed allocation `index`; shared: counters + offset
    Scalar,     // value: scalar input `index` (a host value of dtype `from`) as `type`
    Value,      // value: `bits` (a symbol's value), `bytes` wide
  };
  Kind kind = Kind::Value;
  ParamType type = ParamType::I64;
  DType from = DType::I64;
  uint8_t bytes = 8;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t view_bytes = 0;  // a library operand: from the buffer's start to its first element
  uint64_t bits = 0;
};

struct PlannedLaunch {
  uint32_t launch = 0;  // index into the package's plan
  uint32_t kernel = 0;  // the variant the binding chose, or kLibraryStep
  int32_t matmul = -1;  // a library step: index into LaunchPlan::matmuls()
  LaunchDims dims;
  uint32_t first_arg = 0, num_args = 0;  // into LaunchPlan::args()
  uint32_t first_allocation = 0, num_allocations = 0;
};

// A library step of the binding: the product with every size evaluated, where its operands
// are (buffers, never scalars), and the workspace the library may use (in the scratch region,
// which it shares with the kernels' scratch: steps run in order on one stream).
struct PlannedMatmul {
  uint32_t launch = 0;
  std::string name;
  MatmulProblem problem;
  ArgSource a, b, c, bias;
  uint64_t workspace_bytes = 0;
};

struct PlannedAllocation {
  uint64_t bytes = 0;
  bool zero_init = false;
  uint64_t offset = 0;  // in the scratch part of the workspace, or in the counters
};

// An output the launches do not write where the caller wants it: an output that is a graph
// input (`from_input`), a constant (`from_constant`), or a second listing of a buffer
// (`from_output`); copied after the plan.
struct OutputSource {
  int32_t from_input = -1;
  int32_t from_output = -1;
  int32_t from_constant = -1;  // an output that is a constant of the package (or folded to one)
  uint64_t bytes = 0;
  bool copied() const { return from_input >= 0 || from_output >= 0 || from_constant >= 0; }
};

// Where the pointers of one run are. A scalar input's entry in `inputs` is the host address of
// its value (in the input's dtype). `scratch`, when set, gives each allocation of the current
// launch its own memory (run_package); otherwise they are laid out in the workspace/counters.
struct ArgBases {
  const void* const* inputs = nullptr;
  const void* const* constants = nullptr;  // per constant: its data where kernels read it
  void* const* outputs = nullptr;
  uint8_t* workspace = nullptr;
  uint8_t* counters = nullptr;
  void* const* scratch = nullptr;
};

inline constexpr uint64_t kPlanAlignment = 256;
// The largest size (bytes) of any buffer, workspace or output a bound plan accepts: 2^56.
inline constexpr uint64_t kMaxPlanBytes = uint64_t{1} << 56;

class LaunchPlan {
 public:
  // Throws UserError if a kernel parameter type is unknown to this runtime.
  LaunchPlan(const Executable& exe, const Binding& binding);

  // In plan order; a step with nothing to compute (an empty tensor) is left out.
  const std::vector<PlannedLaunch>& launches() const { return launches_; }
  const std::vector<PlannedMatmul>& matmuls() const { return matmuls_; }
  // Where an operand of a library step is for one run.
  const void* pointer(const ArgSource& s, const ArgBases& bases) const;
  const std::vector<ArgSource>& args() const { return args_; }
  const std::vector<PlannedAllocation>& allocations() const { return allocations_; }
  // One entry per graph output (-1/-1 when the launches write it in its own buffer).
  const std::vector<OutputSource>& outputs() const { return outputs_; }

  uint64_t intermediate_bytes() const { return intermediate_bytes_; }
  uint64_t scratch_offset() const { return scratch_offset_; }
  uint64_t workspace_bytes() const { return workspace_bytes_; }
  uint64_t counter_bytes() const { return counter_bytes_; }
  uint32_t max_args() const { return max_args_; }

  // Writes the parameters of `l` into storage[0, l.num_args), one 8-byte slot each.
  void write_args(const PlannedLaunch& l, const ArgBases& bases, uint64_t* storage) const;

 private:
  ArgSource buffer_source(const fb::Metadata& m, const Binding& b, const std::string& file,
                          uint32_t buffer, bool written) const;
  void plan_matmul(const fb::Metadata& m, const Binding& b, const std::string& file, uint32_t l,
                   uint64_t& scratch_bytes);
  std::vector<PlannedLaunch> launches_;
  std::vector<PlannedMatmul> matmuls_;
  std::vector<ArgSource> args_;
  std::vector<PlannedAllocation> allocations_;
  std::vector<OutputSource> outputs_;
  uint64_t intermediate_bytes_ = 0, scratch_offset_ = 0, workspace_bytes_ = 0;
  uint64_t counter_bytes_ = 0;
  uint32_t max_args_ = 0;
};

// The value of a scalar (a host value of dtype `from`) as a kernel parameter of type `to`,
// written to the low bytes of `*out`.
void write_scalar_param(DType from, const void* value, ParamType to, uint64_t* out);

// The launch geometry, for messages: "grid 128x1x1, block 256x1x1, 0 B dynamic shared memory".
std::string describe_dims(const LaunchDims& dims);

}  // namespace fuserc
