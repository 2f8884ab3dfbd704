// Owns HostTensor, a dense row-major tensor in host memory stored in its own dtype (so that
// rounding to f16/bf16 happens exactly when a value is stored), and the element loads and
// stores between storage dtypes and compute types used by the interpreter and the runtime.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/base/dtype.h"

namespace fuserc {

class HostTensor {
 public:
  HostTensor() = default;
  HostTensor(DType dtype, std::vector<int64_t> shape);  // zero-filled

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return bytes_.size(); }
  uint8_t* data() { return bytes_.data(); }
  const uint8_t* data() const { return bytes_.data(); }
  std::vector<uint8_t>& bytes() { return bytes_; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

  // Element access in a compute type (see ComputeType). `i` is the linear row-major index.
  double load_f64(int64_t i) const;
  float load_f32(int64_t i) const;
  int64_t load_i64(int64_t i) const;
  bool load_bool(int64_t i) const;
  template <class T>
  T load(int64_t i) const;

  // Stores convert with the contract's rules: floats round to nearest even (to f16/bf16 through
  // float), float -> integer truncates toward zero and saturates (NaN -> 0), integer -> i32
  // wraps, anything -> bool tests for non-zero.
  void store_f64(int64_t i, double v);
  void store_f32(int64_t i, float v);
  void store_i64(int64_t i, int64_t v);
  void store_bool(int64_t i, bool v);
  template <class T>
  void store(int64_t i, T v);

  std::string shape_string() const;  // "[2, 3]"

 private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  int64_t numel_ = 1;
  std::vector<uint8_t> bytes_;
};

// Saturating float -> integer conversion used by every cast to an integer dtype.
int64_t float_to_int64_saturating(double v);

template <>
inline double HostTensor::load<double>(int64_t i) const {
  return load_f64(i);
}
template <>
inline float HostTensor::load<float>(int64_t i) const {
  return load_f32(i);
}
template <>
inline int64_t HostTensor::load<int64_t>(int64_t i) const {
  return load_i64(i);
}
template <>
inline bool HostTensor::load<bool>(int64_t i) const {
  return load_bool(i);
}
template <>
inline void HostTensor::store<double>(int64_t i, double v) {
  store_f64(i, v);
}
template <>
inline void HostTensor::store<float>(int64_t i, float v) {
  store_f32(i, v);
}
template <>
inline void HostTensor::store<int64_t>(int64_t i, int64_t v) {
  store_i64(i, v);
}
template <>
inline void HostTensor::store<bool>(int64_t i, bool v) {
  store_bool(i, v);
}

}  // namespace fuserc
