// Owns the cost model of a kernel's element computation, which the segmenter applies to every
// group a scheduler accepts. A fused kernel computes each value at every position (coordinates)
// it is read at: pad, cat and slices of one value read it at several positions, and a value read
// at two positions whose operands are read at two more each is recomputed at a number of
// positions that can grow with the length of the chain. Past the bounds below, the group is not
// one kernel: the segmenter cuts it and the values cross global memory instead, so that kernel
// source, compile time and per-element work stay linear in the graph.
#pragma once

#include <string>

#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

struct ElementCost {
  int64_t positions = 0;   // distinct (value, coordinates) the group's results need
  int64_t values = 0;      // distinct values among them
  int64_t index_size = 0;  // the largest coordinate expression, as printed (Expr::size)
};

// At most this many positions per value on average (a stencil of a few taps is fine; a chain
// of shifted reads of shifted reads is not),
inline constexpr int64_t kMaxPositionsPerValue = 4;
// at most this many positions in one kernel (its source and NVRTC's time grow with them),
inline constexpr int64_t kMaxKernelPositions = 2048;
// and coordinate expressions of at most this many nodes as printed (chains of views that do
// not simplify, whose index arithmetic can double with each view).
inline constexpr int64_t kMaxIndexSize = 128;

// The cost of computing the results of `group` (its boundary filled in) element by element,
// with the results of reductions in the group as leaves. Linear in the positions; the walk
// stops early once a bound below is passed (the counts are then lower bounds).
ElementCost element_cost(const Fusion& f, const Segment& group);

// Why `group` is too costly for one kernel, or "" when it is within the bounds.
std::string element_cost_reason(const Fusion& f, const Segment& group);

}  // namespace fuserc
