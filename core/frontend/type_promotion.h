// Owns PyTorch's result_type for the fusion format: operands of rank >= 1 promote among
// themselves; rank-0 operands count only where their category is higher than that result;
// number literals only where their category is higher still (a float literal stands for f32,
// an integer literal for i64, true/false for bool).
#pragma once

#include <vector>

#include "core/base/dtype.h"

namespace fuserc {

enum class OperandLevel : uint8_t { Tensor, ZeroDim, Literal };

struct TypedOperand {
  OperandLevel level;
  DType dtype;
};

DType result_type(const std::vector<TypedOperand>& operands);

}  // namespace fuserc
