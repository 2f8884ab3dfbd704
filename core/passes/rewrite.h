// Owns what the presegmentation passes share to rewrite the graph: who reads each value, making
// the ops that read one value read another (of the same dtype and shape) instead, in one
// forward sweep over the ops, and new ops that compute a value from one other. The op left
// without readers is then removed by the dead-code pass, which runs last.
#pragma once

#include <string>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// The ops that read each value, in op order (indices into f.ops; an op that reads a value
// twice is listed twice). Ops only read earlier values, so one sweep fills it.
std::vector<std::vector<int>> readers_of(const Fusion& f);

// Per value: whether it is an output written in place or the input it is written into.
std::vector<bool> aliased_values(const Fusion& f);

// Whether `v` may be replaced: it is neither a graph output nor written in place (those are
// the graph's interface and keep their names and buffers).
bool replaceable(const Fusion& f, ValueId v);

// `stem`, or stem_2, stem_3, ... : the first that names no value of `f`.
std::string unique_value_name(const Fusion& f, const std::string& stem);

// A new op of `kind` reading `v` into a new value of `dtype` and `shape` named after v with
// `suffix` (unique_value_name), appended to `before` (ops a pass places before another, from
// which it takes `source_index`); the caller sets the op's attributes.
Op& add_unary_op(Fusion& f, OpKind kind, ValueId v, DType dtype, std::vector<Expr> shape,
                 const std::string& suffix, int source_index, std::vector<Op>& before);

// Replacements decided while sweeping the ops in order: read(op) makes the op read the
// replacements of its operands (decided at earlier ops), replace(from, to) makes later readers
// of `from` read `to`.
class Replacements {
 public:
  explicit Replacements(const Fusion& f) : to_(f.values.size(), kNoValue) {}
  void read(Op& op) const;
  void replace(const Fusion& f, ValueId from, ValueId to);

 private:
  std::vector<ValueId> to_;
};

}  // namespace fuserc
