// Tests for PyTorch-style result_type, including every example the contract gives.
#include <catch2/catch.hpp>

#include "core/frontend/type_promotion.h"

using namespace fuserc;

namespace {
TypedOperand T(DType d) {
  return {OperandLevel::Tensor, d};
}
TypedOperand Z(DType d) {
  return {OperandLevel::ZeroDim, d};
}
TypedOperand L(DType d) {
  return {OperandLevel::Literal, d};
}
}  // namespace

TEST_CASE("promote_types follows torch.promote_types", "[promotion]") {
  CHECK(promote_types(DType::F16, DType::BF16) == DType::F32);
  CHECK(promote_types(DType::BF16, DType::F16) == DType::F32);
  CHECK(promote_types(DType::I32, DType::I64) == DType::I64);
  CHECK(promote_types(DType::Bool, DType::I32) == DType::I32);
  CHECK(promote_types(DType::I64, DType::F16) == DType::F16);
  CHECK(promote_types(DType::F32, DType::F64) == DType::F64);
  CHECK(promote_types(DType::BF16, DType::F32) == DType::F32);
}

TEST_CASE("the contract's promotion examples", "[promotion]") {
  // bf16 * 0.5 is bf16
  CHECK(result_type({T(DType::BF16), L(DType::F32)}) == DType::BF16);
  // i32 * 0.5 is f32
  CHECK(result_type({T(DType::I32), L(DType::F32)}) == DType::F32);
  // a bf16 tensor plus an f32 scalar input is bf16
  CHECK(result_type({T(DType::BF16), Z(DType::F32)}) == DType::BF16);
  // an i32 tensor times an f64 scalar input is f64
  CHECK(result_type({T(DType::I32), Z(DType::F64)}) == DType::F64);
  // bool + 1 is i64
  CHECK(result_type({T(DType::Bool), L(DType::I64)}) == DType::I64);
}

TEST_CASE("levels: tensors, then rank-0 values, then literals", "[promotion]") {
  CHECK(result_type({T(DType::I32), L(DType::I64)}) == DType::I32);  // same category
  CHECK(result_type({T(DType::I32), Z(DType::I64)}) == DType::I32);
  CHECK(result_type({T(DType::F16), Z(DType::F64)}) == DType::F16);
  CHECK(result_type({Z(DType::I32), L(DType::F32)}) == DType::F32);
  CHECK(result_type({Z(DType::F64), L(DType::F32)}) == DType::F64);
  CHECK(result_type({Z(DType::F16), Z(DType::BF16)}) == DType::F32);
  CHECK(result_type({T(DType::F16), T(DType::BF16), L(DType::F32)}) == DType::F32);
  CHECK(result_type({T(DType::Bool), Z(DType::I32), L(DType::F32)}) == DType::F32);
  CHECK(result_type({T(DType::Bool), Z(DType::Bool)}) == DType::Bool);
  CHECK(result_type({L(DType::I64), L(DType::F32)}) == DType::F32);
  CHECK(result_type({T(DType::I64), Z(DType::Bool), L(DType::Bool)}) == DType::I64);
}
