// Owns the byte-cost model of segmentation: the global-memory bytes a group of ops moves when it
// is one kernel. The kernel reads each of its input tensors once and writes each of its results
// once; a tensor the group reads only through slices costs the box those slices cover, so that
// a slice of part of a larger buffer is charged for that part (and two kernels reading disjoint
// parts of one buffer save nothing by sharing it: IREE's dispatch-region lesson). Bytes are
// evaluated at several bindings of the symbols: the hints, which rank the merges, and the
// symbols' bounds, at which no merge may cost more than it saves.
#pragma once

#include <map>
#include <vector>

#include "core/ir/fusion.h"
#include "core/schedule/scheduler.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

// The bindings bytes are evaluated at: [0] the hints, [1] every symbol at its minimum, [2] every
// symbol at its maximum (at most 2^20, where a symbol has no maximum or a larger one: only
// signs are compared there).
struct TrafficPoints {
  std::vector<HeuristicHints> points;
  static TrafficPoints from(const Fusion& f, const HeuristicHints& hints);
};

// Bytes at each point of a TrafficPoints.
using Bytes = std::vector<double>;

// What a group moves: per tensor it reads, the slice ops through which it reads it (empty: it
// reads the whole tensor), and the results it writes.
struct GroupTraffic {
  std::map<ValueId, std::vector<int>> reads;
  std::vector<ValueId> writes;
};

// For a group whose boundary (inputs, outputs) is filled in. Scalar inputs cost nothing.
GroupTraffic group_traffic(const Fusion& f, const Segment& group);

// The traffic of two independent groups made one kernel (neither reads the other's results).
GroupTraffic merged_siblings(const GroupTraffic& a, const GroupTraffic& b);

// The bytes a group moves at each point.
Bytes traffic_bytes(const Fusion& f, const GroupTraffic& t, const TrafficPoints& at);

// The bytes one read of `v` costs at each point (the slices' bounding box, or all of it).
Bytes read_bytes(const Fusion& f, ValueId v, const std::vector<int>& slices,
                 const TrafficPoints& at);

// a + b - merged, per point: what making two groups one kernel saves.
Bytes saving(const Bytes& a, const Bytes& b, const Bytes& merged);

// What one kernel launch costs, counted in bytes: a few microseconds of launch and ramp-up and
// tail, at a bandwidth of terabytes per second, are worth megabytes; one is a floor.
inline constexpr double kLaunchBytes = 1 << 20;

// Whether a change that saves `saving` bytes and `kernels` launches is positive at the hints
// and nowhere negative.
bool worth_merging(const Bytes& saving, int kernels = 0);

}  // namespace fuserc
