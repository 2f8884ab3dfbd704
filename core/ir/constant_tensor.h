// Owns the copy of a constant input's data (inline, folded or mapped from a file) into a
// HostTensor of its dtype and shape, for the passes and the interpreter that compute with it.
#pragma once

#include "core/base/host_tensor.h"
#include "core/ir/fusion.h"

namespace fuserc {

// `v` must be a constant (v.is_constant()) whose extents are integers; its bytes must fill the
// shape (an internal error otherwise).
HostTensor constant_tensor(const Value& v);

}  // namespace fuserc
