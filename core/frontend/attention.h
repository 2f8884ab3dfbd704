// Owns scaled_dot_product_attention in the front end: its typing and refusals (PyTorch's
// rules: q [..., L, E], k [..., S, E], v [..., S, Ev], a bool or float mask that broadcasts to
// the scores [..., L, S], is_causal, scale, grouped-query heads) and its expansion into the ops
// that compute it: q @ k^T written as f32 by the library's epilogue, the scale, the mask or
// the causal triangle, a softmax in f32 (max, exp, sum, divide), the probabilities rounded to
// the operands' dtype as flash attention does, and the product with v. The attention op never
// reaches the IR: the segmenter, eval, the emulator and the GPU run what it expands to (the
// plan's fallback until a fused attention library step exists).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/frontend/shape_inference.h"

namespace fuserc {

// Types an attention op: its one result (throws OpError naming the argument).
std::vector<InferredResult> infer_attention(const Fusion& f, Op& op);

// Appends to `f` the ops that compute the typed attention op `op` (its args and attributes
// read), the last one defining a value named `out`; intermediate values are named by `fresh`
// from a base name ("<out>_scores", ...). Every op appended has op's source index.
void expand_attention(Fusion& f, const Op& op, const std::string& out,
                      const std::function<std::string(const std::string&)>& fresh);

}  // namespace fuserc
