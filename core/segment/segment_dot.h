// Owns the picture of a segmentation: Graphviz DOT of a graph's ops with each kernel drawn as a
// cluster labelled with its scheduler, graph inputs as boxes outside every cluster, outputs
// doubly outlined, and every tensor that crosses kernels (goes through global memory) drawn as
// a bold edge labelled with its name, dtype, shape and bytes at the hints (`fuserc dot`).
#pragma once

#include <string>

#include "core/ir/fusion.h"
#include "core/schedule/scheduler.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

// `s` as a DOT string literal (quotes and backslashes escaped, newlines as \n).
std::string dot_quoted(const std::string& s);

std::string segmentation_dot(const Fusion& f, const SegmentedFusion& s,
                             const HeuristicHints& hints);

}  // namespace fuserc
