// Owns KernelSummary: everything needed to launch one compiled kernel without re-lowering it
// (nvFuser's KernelSummary, made complete): the ordered argument list with roles, launch
// dimensions and dynamic shared memory as expressions over the graph's symbols, guards,
// flags, the scheduler and its parameters, and per architecture the binary with the
// resources ptxas reported; plus the CUDA source and the exact compile options.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/expr/expr.h"
#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

struct KernelArg {
  enum class Role : uint8_t {
    Input,      // a tensor read from global memory (a graph input or an earlier kernel's result)
    Output,     // a tensor this kernel writes
    Scalar,     // a scalar graph input, passed by value
    Symbol,     // the value of a symbol, passed by value in the kernel's index type
    Workspace,  // scratch global memory (reductions)
    Size,       // an expression's value from the size program, as long long: a size literal
                // ({"size": E}), or a combo kernel's range start (codegen/lower/combo_kernel.h)
  };
  std::string name;  // the parameter's name in the CUDA source
  Role role = Role::Input;
  ValueId value = kNoValue;  // Input/Output/Scalar: the fusion value
  std::string symbol;        // Symbol
  DType dtype = DType::F32;  // element dtype (tensors), dtype (scalars), i32/i64 (symbols)
  std::string c_type;        // the exact C++ parameter type, e.g. "const float* __restrict__"
  int allocation = -1;       // Workspace: index into KernelSummary::allocations
  Expr size;                 // Size: the expression
};

const char* arg_role_name(KernelArg::Role role);

// Scratch memory a kernel needs (grid-reduction partials, semaphores).
struct KernelAllocation {
  Expr bytes;
  bool zero_init = false;
};

// A condition every launch must satisfy; `condition` evaluates to non-zero when it holds.
struct KernelGuard {
  enum class Kind : uint8_t { IndexWidth, SymbolRange, LaunchLimit, Other };
  Kind kind = Kind::Other;
  Expr condition;
  std::string message;  // said when the condition fails
};

// A launch parameter worth showing for a binding ("row_blocks", "split", ...), as an
// expression over the symbols and the device's properties (core/schedule/device_model.h).
struct LaunchValue {
  std::string name;
  Expr value;
};

struct ArchBinary {
  int arch = 80;  // sm_80
  std::string cubin;
  int registers = 0;
  int spill_store_bytes = 0;
  int spill_load_bytes = 0;
  int shared_bytes = 0;  // static shared memory
  int local_bytes = 0;   // stack frame
};

struct KernelSummary {
  std::string name;
  SchedulerKind scheduler = SchedulerKind::Pointwise;
  std::vector<std::pair<std::string, std::string>> scheduler_params;  // e.g. {"vector", "8"}
  std::vector<KernelArg> args;                                        // in parameter order
  Expr grid[3] = {Expr(1), Expr(1), Expr(1)};
  Expr block[3] = {Expr(1), Expr(1), Expr(1)};
  Expr dynamic_shared_bytes = Expr(0);
  std::vector<KernelAllocation> allocations;
  std::vector<KernelGuard> guards;
  bool index64 = false;
  bool uses_rng = false;
  bool block_reduction = false;
  bool grid_reduction = false;
  bool cooperative = false;
  int min_compute_capability = 75;
  std::string comment;  // one line: what the kernel computes
  // The compiled configuration in words ("rows <= 2048: 32 threads per row, ...") and the
  // launch parameters chosen at bind time. Launch dimensions and launch values may read the
  // device's properties; allocation sizes never do (scratch is sized from the symbols alone).
  std::string variant_note;
  std::vector<LaunchValue> launch_values;

  // Filled by code generation and compilation.
  std::string source;  // CUDA C++, preamble included
  std::vector<ArchBinary> binaries;
  std::string ptx;
  int ptx_arch = 0;
  std::vector<std::string> compile_options;
};

}  // namespace fuserc
