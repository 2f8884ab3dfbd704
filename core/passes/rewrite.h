// Owns what the presegmentation passes share to rewrite the graph: who reads each value, and
// making the ops that read one value read another (of the same dtype and shape) instead, in one
// forward sweep over the ops. The op left without readers is then removed by the dead-code
// pass, which runs last.
#pragma once

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
