// Owns the per-group evaluation routines of the interpreter (elementwise, reductions, shape
// and creation ops). Internal to core/eval; interpreter.cc dispatches to them.
#pragma once

#include <vector>

#include "core/base/host_tensor.h"
#include "core/base/input_binding.h"
#include "core/ir/fusion.h"

namespace fuserc::eval {

struct EvalContext {
  const Fusion& fusion;
  const SymbolValues& symbols;
  // The tensors computed so far, by value id (empty tensors for values not yet computed).
  const std::vector<HostTensor>& env;

  std::vector<int64_t> concrete_shape(const std::vector<Expr>& shape) const;
  int64_t concrete(const Expr& e) const;
  // A literal with a value: a size literal's expression evaluated for the bound symbols.
  Literal resolve(const Literal& l) const {
    return l.is_size() ? l.with_size_value(concrete(l.size)) : l;
  }
  const HostTensor& operand(const Operand& a) const { return env[a.value]; }
};

// The dtype the interpreter stores a computed value in: f16 and bf16 results of arithmetic are
// kept in f32, as a kernel keeps them in registers (the contract rounds a value to its declared
// dtype only where it is written to memory: outputs, and explicitly by `cast`); every other
// dtype is stored as declared. evaluate_fusion rounds the outputs to their declared dtypes.
DType storage_dtype(DType declared);

// Row-major strides of a shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

// One op's results (each in its storage dtype), whatever its group.
std::vector<HostTensor> evaluate_op(const EvalContext& ctx, const Op& op);

std::vector<HostTensor> eval_elementwise(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_reduction(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_shape_op(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_creation(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_matrix(const EvalContext& ctx, const Op& op);

}  // namespace fuserc::eval
