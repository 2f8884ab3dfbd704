#include "core/base/host_tensor.h"

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "core/base/diagnostics.h"
#include "core/base/half.h"

namespace fuserc {
namespace {

template <class T>
T read_as(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write_as(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}

// double -> float rounding to nearest even without the undefined behaviour of converting a
// value outside float's range: such values become +-FLT_MAX or +-infinity as IEEE rounds them.
float double_to_float(double v) {
  if (std::isnan(v)) return static_cast<float>(v);
  const double magnitude = std::fabs(v);
  if (magnitude > static_cast<double>(FLT_MAX)) {
    // FLT_MAX plus half an ulp (2^103) is the tie, which rounds to even: to infinity.
    const double halfway = static_cast<double>(FLT_MAX) + 0x1p103;
    const float rounded = magnitude >= halfway ? std::numeric_limits<float>::infinity() : FLT_MAX;
    return std::signbit(v) ? -rounded : rounded;
  }
  return static_cast<float>(v);
}

int32_t float_to_int32_saturating(double v) {
  const int64_t t = float_to_int64_saturating(v);
  if (t > std::numeric_limits<int32_t>::max()) return std::numeric_limits<int32_t>::max();
  if (t < std::numeric_limits<int32_t>::min()) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(t);
}

// Two's complement wrap to 32 bits (well defined: conversions to signed types are modular).
int32_t wrap_to_int32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(v));
}

// Byte offset of element i, checked against the storage actually present.
size_t element_offset(const HostTensor& t, int64_t i) {
  const size_t size = dtype_size(t.dtype());
  FUSERC_CHECK(i >= 0 && static_cast<uint64_t>(i) < t.nbytes() / size,
               "element " + std::to_string(i) + " out of range for tensor " + t.shape_string());
  return static_cast<size_t>(i) * size;
}

}  // namespace

int64_t float_to_int64_saturating(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (v <= -0x1p63) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(v);  // in range: truncates toward zero
}

HostTensor::HostTensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  int64_t numel = 1;
  for (int64_t extent : shape_) {
    FUSERC_CHECK(extent >= 0, "negative extent in tensor shape " + shape_string());
    FUSERC_CHECK(!__builtin_mul_overflow(numel, extent, &numel),
                 "tensor shape " + shape_string() + " has too many elements");
  }
  int64_t nbytes = 0;
  FUSERC_CHECK(!__builtin_mul_overflow(numel, static_cast<int64_t>(dtype_size(dtype)), &nbytes),
               "tensor shape " + shape_string() + " has too many bytes");
  numel_ = numel;
  bytes_.assign(static_cast<size_t>(nbytes), 0);
}

double HostTensor::load_f64(int64_t i) const {
  const uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return read_as<uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::I32: return static_cast<double>(read_as<int32_t>(p));
    case DType::I64: return static_cast<double>(read_as<int64_t>(p));
    case DType::F16: return static_cast<double>(f16_bits_to_float(read_as<uint16_t>(p)));
    case DType::BF16: return static_cast<double>(bf16_bits_to_float(read_as<uint16_t>(p)));
    case DType::F32: return static_cast<double>(read_as<float>(p));
    case DType::F64: return read_as<double>(p);
  }
  FUSERC_UNREACHABLE("bad dtype");
}

float HostTensor::load_f32(int64_t i) const {
  const uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return read_as<uint8_t>(p) != 0 ? 1.0f : 0.0f;
    case DType::I32: return static_cast<float>(read_as<int32_t>(p));
    case DType::I64: return static_cast<float>(read_as<int64_t>(p));
    case DType::F16: return f16_bits_to_float(read_as<uint16_t>(p));
    case DType::BF16: return bf16_bits_to_float(read_as<uint16_t>(p));
    case DType::F32: return read_as<float>(p);
    case DType::F64: return double_to_float(read_as<double>(p));
  }
  FUSERC_UNREACHABLE("bad dtype");
}

int64_t HostTensor::load_i64(int64_t i) const {
  const uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return read_as<uint8_t>(p) != 0 ? 1 : 0;
    case DType::I32: return read_as<int32_t>(p);
    case DType::I64: return read_as<int64_t>(p);
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64: return float_to_int64_saturating(load_f64(i));
  }
  FUSERC_UNREACHABLE("bad dtype");
}

bool HostTensor::load_bool(int64_t i) const {
  const uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return read_as<uint8_t>(p) != 0;
    case DType::I32: return read_as<int32_t>(p) != 0;
    case DType::I64: return read_as<int64_t>(p) != 0;
    case DType::F16:
    case DType::BF16:
    case DType::F32:
    case DType::F64: return load_f64(i) != 0.0;  // NaN != 0 holds: NaN is true
  }
  FUSERC_UNREACHABLE("bad dtype");
}

void HostTensor::store_f64(int64_t i, double v) {
  uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return write_as<uint8_t>(p, v != 0.0 ? 1 : 0);
    case DType::I32: return write_as<int32_t>(p, float_to_int32_saturating(v));
    case DType::I64: return write_as<int64_t>(p, float_to_int64_saturating(v));
    case DType::F16: return write_as<uint16_t>(p, float_to_f16_bits(double_to_float(v)));
    case DType::BF16: return write_as<uint16_t>(p, float_to_bf16_bits(double_to_float(v)));
    case DType::F32: return write_as<float>(p, double_to_float(v));
    case DType::F64: return write_as<double>(p, v);
  }
  FUSERC_UNREACHABLE("bad dtype");
}

void HostTensor::store_f32(int64_t i, float v) {
  // Every float is exactly a double, and every rule below gives the same result either way.
  store_f64(i, static_cast<double>(v));
}

void HostTensor::store_i64(int64_t i, int64_t v) {
  uint8_t* p = data() + element_offset(*this, i);
  switch (dtype_) {
    case DType::Bool: return write_as<uint8_t>(p, v != 0 ? 1 : 0);
    case DType::I32: return write_as<int32_t>(p, wrap_to_int32(v));
    case DType::I64: return write_as<int64_t>(p, v);
    case DType::F16: return write_as<uint16_t>(p, float_to_f16_bits(static_cast<float>(v)));
    case DType::BF16: return write_as<uint16_t>(p, float_to_bf16_bits(static_cast<float>(v)));
    case DType::F32: return write_as<float>(p, static_cast<float>(v));
    case DType::F64: return write_as<double>(p, static_cast<double>(v));
  }
  FUSERC_UNREACHABLE("bad dtype");
}

void HostTensor::store_bool(int64_t i, bool v) {
  store_i64(i, v ? 1 : 0);
}

std::string HostTensor::shape_string() const {
  std::string s = "[";
  for (size_t d = 0; d < shape_.size(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(shape_[d]);
  }
  return s + "]";
}

}  // namespace fuserc
