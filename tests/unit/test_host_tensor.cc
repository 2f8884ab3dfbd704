#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include <catch2/catch.hpp>

#include "core/base/diagnostics.h"
#include "core/base/host_tensor.h"

namespace fuserc {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

// The raw element 0 of a one-element tensor.
template <class T>
T raw(const HostTensor& t) {
  T v;
  REQUIRE(t.nbytes() >= sizeof v);
  std::memcpy(&v, t.data(), sizeof v);
  return v;
}

template <class T>
void set_raw(HostTensor& t, T v) {
  REQUIRE(t.nbytes() >= sizeof v);
  std::memcpy(t.data(), &v, sizeof v);
}

int32_t stored_i32_f64(double v) {
  HostTensor t(DType::I32, {1});
  t.store_f64(0, v);
  return raw<int32_t>(t);
}

int64_t stored_i64_f64(double v) {
  HostTensor t(DType::I64, {1});
  t.store_f64(0, v);
  return raw<int64_t>(t);
}

int32_t stored_i32_i64(int64_t v) {
  HostTensor t(DType::I32, {1});
  t.store_i64(0, v);
  return raw<int32_t>(t);
}

uint8_t stored_bool_f64(double v) {
  HostTensor t(DType::Bool, {1});
  t.store_f64(0, v);
  return raw<uint8_t>(t);
}

uint16_t stored_16_f64(DType dtype, double v) {
  HostTensor t(dtype, {1});
  t.store_f64(0, v);
  return raw<uint16_t>(t);
}

}  // namespace

TEST_CASE("HostTensor: construction, sizes and zero fill", "[host_tensor]") {
  for (DType d :
       {DType::Bool, DType::I32, DType::I64, DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostTensor t(d, {2, 3});
    CHECK(t.dtype() == d);
    CHECK(t.rank() == 2);
    CHECK(t.numel() == 6);
    CHECK(t.nbytes() == 6 * dtype_size(d));
    for (uint8_t byte : t.bytes()) CHECK(byte == 0);
    for (int64_t i = 0; i < 6; ++i) CHECK(t.load_f64(i) == 0.0);
  }
  HostTensor scalar(DType::F64, {});
  CHECK(scalar.rank() == 0);
  CHECK(scalar.numel() == 1);
  CHECK(scalar.nbytes() == 8);
  HostTensor empty(DType::F32, {3, 0, 2});
  CHECK(empty.numel() == 0);
  CHECK(empty.nbytes() == 0);
  CHECK_THROWS_AS(empty.load_f32(0), InternalError);
}

TEST_CASE("HostTensor: shape_string", "[host_tensor]") {
  CHECK(HostTensor(DType::F32, {2, 3}).shape_string() == "[2, 3]");
  CHECK(HostTensor(DType::F32, {}).shape_string() == "[]");
  CHECK(HostTensor(DType::I32, {0}).shape_string() == "[0]");
  CHECK(HostTensor(DType::I32, {4, 1, 7}).shape_string() == "[4, 1, 7]");
}

TEST_CASE("HostTensor: bad shapes and indices are internal errors", "[host_tensor]") {
  CHECK_THROWS_AS(HostTensor(DType::F32, {2, -1}), InternalError);
  CHECK_THROWS_AS(HostTensor(DType::F32, {int64_t(1) << 40, int64_t(1) << 40}), InternalError);
  CHECK_THROWS_AS(HostTensor(DType::F64, {int64_t(1) << 61}), InternalError);  // bytes overflow
  HostTensor t(DType::I32, {3});
  CHECK_THROWS_AS(t.load_i64(3), InternalError);
  CHECK_THROWS_AS(t.load_i64(-1), InternalError);
  CHECK_THROWS_AS(t.store_f64(3, 1.0), InternalError);
  HostTensor none;  // default: no storage at all
  CHECK_THROWS_AS(none.load_f32(0), InternalError);
}

TEST_CASE("float_to_int64_saturating", "[host_tensor]") {
  CHECK(float_to_int64_saturating(2.9) == 2);
  CHECK(float_to_int64_saturating(-2.9) == -2);
  CHECK(float_to_int64_saturating(-0.5) == 0);
  CHECK(float_to_int64_saturating(kNaN) == 0);
  CHECK(float_to_int64_saturating(-kNaN) == 0);
  CHECK(float_to_int64_saturating(INFINITY) == kI64Max);
  CHECK(float_to_int64_saturating(-INFINITY) == kI64Min);
  CHECK(float_to_int64_saturating(1e19) == kI64Max);
  CHECK(float_to_int64_saturating(-1e19) == kI64Min);
  CHECK(float_to_int64_saturating(0x1p63) == kI64Max);
  CHECK(float_to_int64_saturating(-0x1p63) == kI64Min);
  CHECK(float_to_int64_saturating(std::nextafter(0x1p63, 0.0)) == 9223372036854774784);
  CHECK(float_to_int64_saturating(std::nextafter(-0x1p63, 0.0)) == -9223372036854774784);
}

TEST_CASE("HostTensor: float -> i32 truncates and saturates, NaN -> 0", "[host_tensor]") {
  CHECK(stored_i32_f64(3.99) == 3);
  CHECK(stored_i32_f64(-3.99) == -3);
  CHECK(stored_i32_f64(2147483647.9) == kI32Max);
  CHECK(stored_i32_f64(2147483648.0) == kI32Max);
  CHECK(stored_i32_f64(1e10) == kI32Max);  // not wrapped: 1e10 mod 2^32 would be 1410065408
  CHECK(stored_i32_f64(-2147483648.9) == kI32Min);
  CHECK(stored_i32_f64(-1e10) == kI32Min);
  CHECK(stored_i32_f64(1e300) == kI32Max);
  CHECK(stored_i32_f64(INFINITY) == kI32Max);
  CHECK(stored_i32_f64(-INFINITY) == kI32Min);
  CHECK(stored_i32_f64(kNaN) == 0);
  HostTensor t(DType::I32, {2});
  t.store_f32(0, 3e9f);
  t.store_f32(1, std::numeric_limits<float>::quiet_NaN());
  CHECK(t.load_i64(0) == kI32Max);
  CHECK(t.load_i64(1) == 0);
}

TEST_CASE("HostTensor: float -> i64 truncates and saturates, NaN -> 0", "[host_tensor]") {
  CHECK(stored_i64_f64(-7.7) == -7);
  CHECK(stored_i64_f64(1e15 + 0.5) == 1000000000000000);
  CHECK(stored_i64_f64(1e19) == kI64Max);
  CHECK(stored_i64_f64(-1e19) == kI64Min);
  CHECK(stored_i64_f64(kNaN) == 0);
  CHECK(stored_i64_f64(INFINITY) == kI64Max);
  HostTensor t(DType::I64, {1});
  t.store_f32(0, -1e30f);
  CHECK(t.load_i64(0) == kI64Min);
}

TEST_CASE("HostTensor: integer -> i32 wraps two's complement", "[host_tensor]") {
  CHECK(stored_i32_i64(0x100000001) == 1);
  CHECK(stored_i32_i64(0x80000000) == kI32Min);
  CHECK(stored_i32_i64(0xffffffff) == -1);
  CHECK(stored_i32_i64(-1) == -1);
  CHECK(stored_i32_i64(-0x80000001LL) == kI32Max);
  CHECK(stored_i32_i64(kI64Min) == 0);
  CHECK(stored_i32_i64(kI64Max) == -1);
  HostTensor t(DType::I32, {1});
  t.store_i64(0, -5);
  CHECK(t.load_i64(0) == -5);  // sign-extended on load
  CHECK(t.load_f64(0) == -5.0);
}

TEST_CASE("HostTensor: anything -> bool tests for non-zero", "[host_tensor]") {
  CHECK(stored_bool_f64(0.0) == 0);
  CHECK(stored_bool_f64(-0.0) == 0);
  CHECK(stored_bool_f64(0.25) == 1);
  CHECK(stored_bool_f64(-3.0) == 1);
  CHECK(stored_bool_f64(kNaN) == 1);
  CHECK(stored_bool_f64(std::numeric_limits<double>::denorm_min()) == 1);
  HostTensor t(DType::Bool, {4});
  t.store_i64(0, 256);  // not truncated to a byte
  t.store_i64(1, 0);
  t.store_f32(2, 0.5f);
  t.store_bool(3, true);
  CHECK(t.bytes() == std::vector<uint8_t>{1, 0, 1, 1});
  CHECK(t.load_bool(0));
  CHECK_FALSE(t.load_bool(1));
  HostTensor f(DType::F32, {3});
  f.store_f64(0, kNaN);
  f.store_f64(1, -0.0);
  f.store_f64(2, 1e-30);
  CHECK(f.load_bool(0));  // NaN is true
  CHECK_FALSE(f.load_bool(1));
  CHECK(f.load_bool(2));
  HostTensor h(DType::F16, {1});
  h.store_f64(0, 1e-30);  // rounds to zero in f16 before the test
  CHECK_FALSE(h.load_bool(0));
  HostTensor i(DType::I64, {1});
  i.store_i64(0, kI64Min);
  CHECK(i.load_bool(0));
}

TEST_CASE("HostTensor: bool loads as 0/1 and stores as one", "[host_tensor]") {
  HostTensor b(DType::Bool, {1});
  set_raw<uint8_t>(b, 2);  // any non-zero byte is true
  CHECK(b.load_i64(0) == 1);
  CHECK(b.load_f64(0) == 1.0);
  CHECK(b.load_f32(0) == 1.0f);
  CHECK(b.load_bool(0));
  struct Case {
    DType dtype;
    uint64_t bits;
  };
  for (Case c : {Case{DType::I32, 1}, Case{DType::I64, 1}, Case{DType::F16, 0x3c00},
                 Case{DType::BF16, 0x3f80}, Case{DType::F32, 0x3f800000},
                 Case{DType::F64, 0x3ff0000000000000}}) {
    HostTensor t(c.dtype, {1});
    t.store_bool(0, true);
    uint64_t bits = 0;
    std::memcpy(&bits, t.data(), t.nbytes());
    CHECK(bits == c.bits);
    t.store_bool(0, false);
    CHECK(t.load_i64(0) == 0);
    CHECK_FALSE(t.load_bool(0));
  }
}

TEST_CASE("HostTensor: f16/bf16 stores round once, doubles through float", "[host_tensor]") {
  CHECK(stored_16_f64(DType::F16, 1.0) == 0x3c00);
  CHECK(stored_16_f64(DType::BF16, 1.0) == 0x3f80);
  CHECK(stored_16_f64(DType::F16, 65520.0) == 0x7c00);
  CHECK(stored_16_f64(DType::F16, 1e300) == 0x7c00);
  CHECK(stored_16_f64(DType::BF16, -1e300) == 0xff80);
  CHECK(stored_16_f64(DType::F16, kNaN) == 0x7fff);
  // Just above the midpoint between 1 and the next f16/bf16: rounding the double directly
  // would round up, but through float it becomes the exact tie, which rounds to even (1).
  CHECK(stored_16_f64(DType::F16, 1.0 + 0x1p-11 + 0x1p-40) == 0x3c00);
  CHECK(stored_16_f64(DType::BF16, 1.0 + 0x1p-8 + 0x1p-40) == 0x3f80);
  CHECK(stored_16_f64(DType::F16, 1.0 + 0x1p-11 + 0x1p-20) == 0x3c01);
  HostTensor h(DType::F16, {1});
  h.store_f32(0, 0.1f);
  CHECK(raw<uint16_t>(h) == 0x2e66);
  CHECK(h.load_f32(0) == 0.0999755859375f);
  CHECK(h.load_f64(0) == 0.0999755859375);
  h.store_i64(0, 2049);  // tie between 2048 and 2050: even mantissa wins
  CHECK(h.load_i64(0) == 2048);
  h.store_i64(0, 65519);
  CHECK(h.load_f32(0) == 65504.0f);
  h.store_i64(0, 70000);
  CHECK(std::isinf(h.load_f32(0)));
  CHECK(h.load_i64(0) == kI64Max);  // inf saturates on the way to an integer
  HostTensor bf(DType::BF16, {1});
  bf.store_i64(0, 257);  // bf16 has 8 significant bits: tie rounds to 256
  CHECK(bf.load_i64(0) == 256);
  bf.store_f32(0, -2.5f);
  CHECK(bf.load_i64(0) == -2);
}

TEST_CASE("HostTensor: f32 and f64 conversions", "[host_tensor]") {
  HostTensor f(DType::F32, {1});
  f.store_f64(0, 1.0 + 0x1p-24);  // tie: to even
  CHECK(f.load_f32(0) == 1.0f);
  f.store_f64(0, 1.0 + 0x1p-24 + 0x1p-50);
  CHECK(f.load_f32(0) == 1.0f + 0x1p-23f);
  f.store_f64(0, 1e300);
  CHECK(f.load_f32(0) == INFINITY);
  f.store_f64(0, -1e300);
  CHECK(f.load_f32(0) == -INFINITY);
  f.store_f64(0, static_cast<double>(FLT_MAX) + 0x1p102);  // below the halfway point
  CHECK(f.load_f32(0) == FLT_MAX);
  f.store_f64(0, static_cast<double>(FLT_MAX) + 0x1p103);  // the tie rounds to infinity
  CHECK(f.load_f32(0) == INFINITY);
  f.store_f64(0, kNaN);
  CHECK(std::isnan(f.load_f32(0)));
  f.store_i64(0, (1 << 24) + 1);
  CHECK(f.load_i64(0) == 1 << 24);
  f.store_f32(0, 1e20f);
  CHECK(f.load_i64(0) == kI64Max);
  f.store_f32(0, -7.9f);
  CHECK(f.load_i64(0) == -7);

  HostTensor d(DType::F64, {1});
  d.store_f64(0, 1e300);
  CHECK(d.load_f64(0) == 1e300);
  CHECK(d.load_f32(0) == INFINITY);  // no undefined out-of-range conversion
  d.store_f64(0, -1e-300);
  CHECK(d.load_f32(0) == 0.0f);
  CHECK(std::signbit(d.load_f32(0)));
  d.store_i64(0, (int64_t(1) << 53) + 1);
  CHECK(d.load_f64(0) == 0x1p53);
  d.store_f32(0, 0.1f);
  CHECK(d.load_f64(0) == static_cast<double>(0.1f));

  HostTensor i(DType::I64, {1});
  i.store_i64(0, kI64Max);
  CHECK(i.load_i64(0) == kI64Max);
  CHECK(i.load_f64(0) == 0x1p63);
  CHECK(i.load_f32(0) == 0x1p63f);
}

TEST_CASE("HostTensor: templated load/store and row-major elements", "[host_tensor]") {
  HostTensor t(DType::F32, {2, 2});
  t.store<double>(0, 1.5);
  t.store<float>(1, 2.5f);
  t.store<int64_t>(2, 3);
  t.store<bool>(3, true);
  CHECK(t.load<float>(0) == 1.5f);
  CHECK(t.load<double>(1) == 2.5);
  CHECK(t.load<int64_t>(2) == 3);
  CHECK(t.load<bool>(3));
  float raw_values[4];
  std::memcpy(raw_values, t.data(), sizeof raw_values);
  CHECK(raw_values[0] == 1.5f);
  CHECK(raw_values[1] == 2.5f);
  CHECK(raw_values[2] == 3.0f);
  CHECK(raw_values[3] == 1.0f);
}

}  // namespace fuserc
