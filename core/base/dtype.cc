#include "core/base/dtype.h"

#include "core/base/diagnostics.h"

namespace fuserc {
namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  const char* st_name;
  size_t size;
  DTypeCategory category;
  int rank;  // order within promotion: bool < i32 < i64 < f16,bf16 < f32 < f64
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {DType::Bool, "bool", "BOOL", 1, DTypeCategory::Bool, 0},
    {DType::I32, "i32", "I32", 4, DTypeCategory::Integer, 1},
    {DType::I64, "i64", "I64", 8, DTypeCategory::Integer, 2},
    {DType::F16, "f16", "F16", 2, DTypeCategory::Float, 3},
    {DType::BF16, "bf16", "BF16", 2, DTypeCategory::Float, 3},
    {DType::F32, "f32", "F32", 4, DTypeCategory::Float, 4},
    {DType::F64, "f64", "F64", 8, DTypeCategory::Float, 5},
};

const DTypeInfo& info(DType t) {
  auto i = static_cast<size_t>(t);
  FUSERC_CHECK(i < kNumDTypes, "bad dtype value " + std::to_string(i));
  return kInfo[i];
}

}  // namespace

const char* dtype_name(DType t) {
  return info(t).name;
}
const char* dtype_safetensors_name(DType t) {
  return info(t).st_name;
}
size_t dtype_size(DType t) {
  return info(t).size;
}
DTypeCategory dtype_category(DType t) {
  return info(t).category;
}

std::optional<DType> parse_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (name == i.name) return i.dtype;
  return std::nullopt;
}

std::optional<DType> parse_safetensors_dtype(std::string_view name) {
  for (const auto& i : kInfo)
    if (name == i.st_name) return i.dtype;
  return std::nullopt;
}

ComputeType compute_type(DType t) {
  switch (t) {
    case DType::Bool: return ComputeType::Bool;
    case DType::I32:
    case DType::I64: return ComputeType::I64;
    case DType::F16:
    case DType::BF16:
    case DType::F32: return ComputeType::F32;
    case DType::F64: return ComputeType::F64;
  }
  FUSERC_UNREACHABLE("bad dtype");
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if ((a == DType::F16 && b == DType::BF16) || (a == DType::BF16 && b == DType::F16))
    return DType::F32;
  return info(a).rank > info(b).rank ? a : b;
}

}  // namespace fuserc
