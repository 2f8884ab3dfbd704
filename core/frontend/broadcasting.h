// Owns NumPy-style broadcasting of symbolic shapes: aligned on the right, a literal extent of 1
// or a missing leading dimension broadcasts; other extents must be provably equal (two
// symbols must be the same symbol; a symbol against an integer other than 1 is an error).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/expr/expr.h"

namespace fuserc {

struct BroadcastFailure {
  size_t operand_a;  // indices into the shapes given
  size_t operand_b;
  int dim;  // dimension of the result where they disagree
  std::string reason;
};

// The broadcast shape, or the first disagreement.
struct BroadcastResult {
  std::vector<Expr> shape;
  std::optional<BroadcastFailure> failure;
};

BroadcastResult broadcast_shapes(const std::vector<std::vector<Expr>>& shapes);

}  // namespace fuserc
