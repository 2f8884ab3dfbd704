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
  const HostTensor& operand(const Operand& a) const { return env[a.value]; }
};

// Row-major strides of a shape.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

std::vector<HostTensor> eval_elementwise(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_reduction(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_shape_op(const EvalContext& ctx, const Op& op);
std::vector<HostTensor> eval_creation(const EvalContext& ctx, const Op& op);

}  // namespace fuserc::eval
