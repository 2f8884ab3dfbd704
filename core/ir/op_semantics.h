// Owns the questions later stages ask about a typed op: the dtype its operands are combined
// in (e.g. a comparison of an i32 tensor with 0.5 is computed in f32), and how its operands
// count for type promotion.
#pragma once

#include <vector>

#include "core/frontend/type_promotion.h"
#include "core/ir/fusion.h"

namespace fuserc {

// How operand `a` counts in result_type: a literal, a rank-0 value, or a tensor.
TypedOperand typed_operand(const Fusion& f, const Operand& a);

// The dtype an elementwise op loads its operands in and computes in: the source dtype for a
// cast, the promoted operand dtype for predicates (comparisons, isnan, logical ops), and the
// result dtype otherwise. For `where`, operand 0 (the condition) is loaded as this dtype too.
DType computation_dtype(const Fusion& f, const Op& op);

}  // namespace fuserc
