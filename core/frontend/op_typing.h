// Owns the helpers the typing of the matrix ops (matmul, linear, attention, conv) shares to
// refuse an op: the OpError naming the part of the op it is about, an argument's JSON path, a
// tensor described with its name, dtype and shape, and a tensor argument that must not be a
// literal.
#pragma once

#include <string>

#include "core/base/text_util.h"
#include "core/frontend/shape_inference.h"

namespace fuserc::typing {

[[noreturn]] inline void fail(const std::string& where, const std::string& message) {
  throw OpError{where, message};
}

inline std::string arg_path(size_t i) {
  return "args[" + std::to_string(i) + "]";
}

// "'x' (bf16[N, 64])"
inline std::string describe(const Value& v) {
  return "'" + v.name + "' (" + dtype_name(v.dtype) + shape_to_string(v.shape) + ")";
}

inline const Value& tensor_arg(const Fusion& f, const Op& op, size_t i) {
  const Operand& a = op.args[i];
  if (a.is_literal())
    fail(arg_path(i), std::string("'") + op_name(op.kind) + "' takes a tensor name here, not " +
                          "the literal " + a.literal.str());
  return f.value(a.value);
}

}  // namespace fuserc::typing
