#include "core/ir/constant_tensor.h"

#include <cstring>

#include "core/base/diagnostics.h"

namespace fuserc {

HostTensor constant_tensor(const Value& v) {
  std::vector<int64_t> shape;
  for (const auto& e : v.shape) shape.push_back(e.value());
  HostTensor t(v.dtype, shape);
  FUSERC_CHECK(t.nbytes() == v.constant->size(), "a constant's bytes do not fit its shape");
  if (t.nbytes()) std::memcpy(t.data(), v.constant->data(), t.nbytes());
  return t;
}

}  // namespace fuserc
