// Owns the typing rules of every op: given an op whose operands are values of the fusion (or
// literals) and whose attributes were read from JSON as written, it checks them, normalizes
// the attributes in place (negative dims, slice clamping, reshape's -1, ...) and returns the
// dtype and symbolic shape of each result.
#pragma once

#include <string>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// A typing error in an op. `where` is the part of the op the error is about, as a JSON path
// relative to the op ("args[1]", "dims", "shape[2]"), or empty for the op as a whole.
struct OpError {
  std::string where;
  std::string message;
};

struct InferredResult {
  DType dtype;
  std::vector<Expr> shape;
};

// Throws OpError.
std::vector<InferredResult> infer_op(const Fusion& fusion, Op& op);

// matmul and linear (matrix_shapes.cc): PyTorch's rules, equal inner extents, floating
// operands of one dtype. Throws OpError.
std::vector<InferredResult> infer_matrix(const Fusion& fusion, Op& op);

}  // namespace fuserc
