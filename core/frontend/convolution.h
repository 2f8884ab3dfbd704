// Owns conv in the front end: its typing and refusals (PyTorch's convolution over 1 to 3
// spatial dims: x [N, C, *spatial], w [C_out, C/groups, *kernel], b [C_out]; stride, padding,
// dilation and groups; output extents as expressions of symbolic inputs, refused where one can
// be non-positive) and its expansion into what computes it: the input padded, one strided slice
// of it per kernel position gathered into patches [N, groups, C/groups * K, P] (K kernel
// positions, P output positions), one product with the weight as [groups, C_out/groups,
// C/groups * K], and the bias added. A transposed conv ([C, C_out/groups, *kernel] weight,
// output_padding) is the same over its input spread apart by the stride and padded by
// d(k-1) - p, with the taps in reverse order (the flipped kernel) and each group's channel dims
// of the weight swapped. The conv op never reaches the IR.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/frontend/shape_inference.h"

namespace fuserc {

// Types a conv op (normalizing its spatial attributes to their defaults): its one result.
// Throws OpError naming the argument or attribute.
std::vector<InferredResult> infer_conv(const Fusion& f, Op& op);

// Appends to `f` the ops that compute the typed conv op `op`, the last one defining `out`.
void expand_conv(Fusion& f, const Op& op, const std::string& out,
                 const std::function<std::string(const std::string&)>& fresh);

}  // namespace fuserc
