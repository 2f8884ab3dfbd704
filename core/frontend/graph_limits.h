// Owns the resource limits of a fusion graph: the caps the parser enforces so that a hostile
// or runaway graph is refused with a one-line error instead of exhausting memory or producing
// names no file system or compiler accepts. README "Limits" lists them with the others.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/base/dtype.h"
#include "core/expr/expr.h"

namespace fuserc {

inline constexpr size_t kMaxNameLength = 128;  // any identifier: graph, input, result, symbol
inline constexpr size_t kMaxRank = 32;         // dimensions of any input or op result
inline constexpr size_t kMaxOps = 1'000'000;   // entries of "ops"
inline constexpr size_t kMaxInputs = 100'000;  // entries of "inputs"
inline constexpr size_t kMaxSymbols = 10'000;  // entries of "symbols"

// Whether the bytes of a tensor of `shape` and `dtype` fit in 64-bit integers at the smallest
// extents the shape allows (the sizes every later stage computes; a larger binding is refused
// at run time). A tensor that cannot fit even then is refused by the parser.
inline bool least_bytes_fit(const std::vector<Expr>& shape, DType dtype) {
  int64_t bytes = static_cast<int64_t>(dtype_size(dtype));
  for (const auto& e : shape)
    if (__builtin_mul_overflow(bytes, e.lo(), &bytes)) return false;
  return true;
}

// Whether the bytes a strided tensor spans (1 + the sum of (extent - 1) x stride elements)
// fit in 64-bit integers at its smallest extents and strides, as its size must
// (least_bytes_fit).
inline bool least_span_fits(const std::vector<Expr>& shape, const std::vector<Expr>& strides,
                            DType dtype) {
  int64_t span = 1;
  for (size_t d = 0; d < shape.size() && d < strides.size(); ++d) {
    int64_t step = 0;
    if (__builtin_mul_overflow(shape[d].lo() > 1 ? shape[d].lo() - 1 : int64_t{0},
                               strides[d].lo(), &step) ||
        __builtin_add_overflow(span, step, &span))
      return false;
  }
  return !__builtin_mul_overflow(span, static_cast<int64_t>(dtype_size(dtype)), &span);
}

}  // namespace fuserc
