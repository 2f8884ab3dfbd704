// Owns the seven element types of the fusion format: their names (graph JSON and
// safetensors spellings), sizes, categories and PyTorch-style promotion between them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fuserc {

enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };
inline constexpr int kNumDTypes = 7;

// The category used by type promotion: bool < integer < floating.
enum class DTypeCategory : uint8_t { Bool = 0, Integer = 1, Float = 2 };

// The type a value of a dtype is computed in: f16/bf16/f32 in float, f64 in double, integers
// in int64 (wrapped to 32 bits when an i32 is stored), bool as bool.
enum class ComputeType : uint8_t { F32, F64, I64, Bool };

const char* dtype_name(DType t);                                      // "bf16"
const char* dtype_safetensors_name(DType t);                          // "BF16"
std::optional<DType> parse_dtype(std::string_view name);              // graph spelling
std::optional<DType> parse_safetensors_dtype(std::string_view name);  // "F32", ...
size_t dtype_size(DType t);
DTypeCategory dtype_category(DType t);
inline bool is_float(DType t) {
  return dtype_category(t) == DTypeCategory::Float;
}
inline bool is_integer(DType t) {
  return dtype_category(t) == DTypeCategory::Integer;
}
ComputeType compute_type(DType t);

// Promotion of two dtypes of the same priority level (torch.promote_types):
// the higher category wins, the wider type within one; f16 with bf16 gives f32.
DType promote_types(DType a, DType b);

}  // namespace fuserc
