// Owns the segmenter's top-down cut: the regions of a fusion, the connected components of its
// ops over the edges one kernel may hold (none into or out of a matrix product, which is a
// library step, nor out of a segment_set), made convex: where a path leaves a region through a
// library step and comes back into it (a residual around a convolution or a product), the
// region is cut by level (the most library steps and segment_sets on a path to the op), so that
// no path leaves a region and returns and the regions are ordered without a cycle.
#pragma once

#include <map>
#include <set>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// Whether the edge from op `producer` to op `consumer` may be inside one kernel: the result of a
// segment_set is always read from global memory, and so are a matrix product's operands and
// result (a library step of its own).
bool fusible_edge(const Fusion& f, int producer, int consumer);

// The regions keyed by a representative op (the root of the component), each as its pieces,
// each piece its ops in order: one piece for a region no path leaves and re-enters, its convex
// pieces (at least two) for a region that had to be cut. `producers[k]`: the ops producing op
// k's arguments.
std::map<int, std::vector<std::vector<int>>> fusible_regions(
    const Fusion& f, const std::vector<std::set<int>>& producers);

}  // namespace fuserc
