// Owns OpKind and the op table built from ops.def: for every op its JSON name, group, arity,
// number of results, dtype rule, accepted attributes and reference implementation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/dtype.h"

namespace fuserc {

enum class OpKind : uint16_t {
#define FUSERC_OP(kind, ...) kind,
#include "core/ir/ops.def"
#undef FUSERC_OP
};

enum class OpGroup : uint8_t {
  Unary,      // elementwise, one operand
  Binary,     // elementwise, two operands, broadcast
  Ternary,    // elementwise, three operands, broadcast
  Cast,       // elementwise conversion to the "dtype" attribute
  Reduction,  // reduces "dims"
  Shape,      // moves elements: broadcast, reshape, permute, slice, pad, cat, index_select, gather
  Creation,   // makes a tensor from attributes alone (full, iota)
  Random,     // rand/randn from (seed, offset)
  Control,    // segment_set
  Matrix,     // matrix products (matmul, linear): library steps of the plan, not kernels
  Reserved,   // names kept for later; refused
};

enum class DtypeRule : uint8_t {
  Promote,        // result_type of the operands
  PromoteNoBool,  // as Promote; a bool result is an error (neg, sub, abs, ...)
  FloatResult,    // as Promote, but an integer or bool result becomes f32 (div, exp, ...)
  FloatOnly,      // as Promote; operands must be floating point (lerp)
  Predicate,      // result bool, computed in the operands' result_type
  Bitwise,        // as Promote; must be integer or bool
  Where,          // result_type of operands 1 and 2; operand 0 must be bool
  Cast,           // the "dtype" attribute
  Special,        // decided by the op's own shape/type inference
};

// Reference implementation of an elementwise op (or the combine of a reduction) in each
// compute type; operands are passed as an array. Null for ops without one.
template <class T>
using RefFn = T (*)(const T*);
struct ReferenceFns {
  RefFn<float> f32 = nullptr;
  RefFn<double> f64 = nullptr;
  RefFn<int64_t> i64 = nullptr;
  RefFn<bool> b8 = nullptr;
  bool present() const { return f32 != nullptr; }
};

struct OpAttrSpec {
  std::string key;
  bool required;
};

struct OpInfo {
  OpKind kind;
  const char* name;
  OpGroup group;
  int min_args;
  int max_args;  // -1: any number
  int num_results;
  DtypeRule dtype_rule;
  std::vector<OpAttrSpec> attrs;
  const char* cuda;  // CUDA expression template (see ops.def); "" when the op has none
  ReferenceFns ref;

  bool is_elementwise() const {
    return group == OpGroup::Unary || group == OpGroup::Binary || group == OpGroup::Ternary ||
           group == OpGroup::Cast;
  }
  bool is_internal() const { return name[0] == '_'; }
};

const OpInfo& op_info(OpKind kind);
const char* op_name(OpKind kind);
// Looks up a name of the JSON vocabulary (internal names are not found).
std::optional<OpKind> op_by_name(std::string_view name);
// Every op of the table, in declaration order.
const std::vector<OpInfo>& all_ops();

}  // namespace fuserc
