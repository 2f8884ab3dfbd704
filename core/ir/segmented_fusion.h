// Owns SegmentedFusion: the Fusion split into segments (one kernel each, in execution order)
// with the scheduler that compiles each, and which values live in global memory.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// Library: a step run by a vendor library (a matrix product: cuBLASLt on a GPU, the CPU
// executor in the emulator), not a generated kernel.
enum class SchedulerKind : uint8_t { Pointwise, Reduction, Normalization, Transpose, Library };
const char* scheduler_name(SchedulerKind kind);
// Kinds whose groups merge as siblings: a transpose kernel is a pointwise kernel with tiles.
SchedulerKind kernel_family(SchedulerKind kind);

struct Segment {
  std::vector<int> ops;          // indices into Fusion::ops, in dependency order
  std::vector<ValueId> inputs;   // values read from global memory (graph inputs or other segments')
  std::vector<ValueId> outputs;  // values written to global memory
  SchedulerKind scheduler = SchedulerKind::Pointwise;
};

struct SegmentedFusion {
  std::vector<Segment> segments;  // in execution order
  // Segments that run side by side, as one step of the plan (core/segment/launch_groups.h):
  // each entry lists consecutive indices into `segments`, independent of each other. Empty:
  // every segment is its own step.
  std::vector<std::vector<int>> launches;

  // (intermediate, graph output): the intermediate is stored in the output's buffer, of which
  // the output is a reshape that no kernel runs (core/segment/output_views.h).
  std::vector<std::pair<ValueId, ValueId>> stored_in;

  // The plan step each segment runs in (its index when `launches` is empty).
  std::vector<int> launch_of() const;

  std::string to_text(const Fusion& f) const;
};

// Whether op `k` is a reshape that no kernel needs to run: its operand is an op's result (not
// a graph output) and its result a graph output not written in place, so the operand can be
// stored straight into the output's buffer (core/segment/output_views.h). With
// `of_library_result`, only where the operand is a matrix product's.
bool reshape_into_output(const Fusion& f, int k, bool of_library_result);

// For each value, the ops that read it (in order), and whether it is a graph output.
struct UseIndex {
  std::vector<std::vector<int>> consumers;
  std::vector<bool> is_output;
};
UseIndex build_use_index(const Fusion& f);

// The inputs and outputs of a set of ops: inputs are the values read but not produced in the
// set; outputs are the values produced in the set that are graph outputs or read outside it.
// O(size of the set), given the use index.
void compute_segment_boundary(const Fusion& f, const UseIndex& uses, Segment& s);
void compute_segment_boundary(const Fusion& f, Segment& s);

}  // namespace fuserc
