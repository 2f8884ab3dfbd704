// Helpers shared by tests that compare tensors computed two ways (kernels against the CPU
// reference): the oracle's rules. Integers and bools must match exactly; floats must have NaN
// and infinities in the same places and a relative L2 error over the finite elements within
// the dtype's tolerance (f64 1e-9, f32 2e-5, f16 2e-3, bf16 1.6e-2).
#pragma once

#include <cmath>
#include <sstream>
#include <string>

#include "core/base/host_tensor.h"

namespace fuserc::testing {

inline double tolerance(DType d) {
  switch (d) {
    case DType::F64: return 1e-9;
    case DType::F32: return 2e-5;
    case DType::F16: return 2e-3;
    case DType::BF16: return 1.6e-2;
    default: return 0;
  }
}

// Empty when `got` matches `want`; otherwise what differs.
inline std::string compare_tensors(const HostTensor& got, const HostTensor& want,
                                   double tol_scale = 1.0) {
  std::ostringstream s;
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + " vs " + dtype_name(want.dtype());
  if (got.shape() != want.shape())
    return "shape " + got.shape_string() + " vs " + want.shape_string();
  if (!is_float(got.dtype())) {
    int64_t bad = 0, first = -1;
    for (int64_t i = 0; i < got.numel(); ++i)
      if (got.load_i64(i) != want.load_i64(i)) {
        if (first < 0) first = i;
        ++bad;
      }
    if (bad) {
      s << bad << " of " << got.numel() << " elements differ (first at " << first << ": "
        << got.load_i64(first) << " vs " << want.load_i64(first) << ")";
    }
    return s.str();
  }
  double num = 0, den = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.load_f64(i), w = want.load_f64(i);
    if (std::isnan(g) != std::isnan(w)) {
      s << "NaN at " << i << " in only one (" << g << " vs " << w << ")";
      return s.str();
    }
    if (std::isnan(w)) continue;
    if (std::isinf(g) || std::isinf(w)) {
      if (g != w) {
        s << "infinity at " << i << " differs (" << g << " vs " << w << ")";
        return s.str();
      }
      continue;
    }
    num += (g - w) * (g - w);
    den += w * w;
  }
  double rel = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
  if (rel > tolerance(got.dtype()) * tol_scale) {
    s << "relative error " << rel << " above " << tolerance(got.dtype()) * tol_scale;
  }
  return s.str();
}

}  // namespace fuserc::testing
