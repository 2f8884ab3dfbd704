#include "core/frontend/type_promotion.h"

#include <optional>

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

// PyTorch's combine_categories(higher, lower) (c10/core/ScalarType.h): a float
// higher-priority dtype wins; otherwise the lower-priority dtype counts when the higher one is
// bool or the lower one is a float; otherwise the higher-priority dtype wins.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_float(*higher)) return higher;
  if (*higher == DType::Bool || is_float(*lower)) return promote_types(*higher, *lower);
  return higher;
}

}  // namespace

DType result_type(const std::vector<TypedOperand>& operands) {
  std::optional<DType> acc[3];
  for (const auto& o : operands) {
    auto& a = acc[static_cast<int>(o.level)];
    a = a ? promote_types(*a, o.dtype) : o.dtype;
  }
  auto r = combine(acc[0], combine(acc[1], acc[2]));
  FUSERC_CHECK(r.has_value(), "result_type of no operands");
  return *r;
}

}  // namespace fuserc
