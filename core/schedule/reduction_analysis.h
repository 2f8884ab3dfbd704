// Owns the analysis of a group of ops around reductions, shared by the reduction and
// normalization schedulers and by their lowering. A group fits when:
//   - every reduction reduces the same domain D (the shape of its input) over the same dims;
//   - every other op is elementwise or a view (computed per element, as in pointwise kernels),
//     and what consumes a reduction's result only broadcasts it back (elementwise ops,
//     broadcast_in_dim, expand, reshape, squeeze, unsqueeze);
//   - every result written to memory has the domain's shape ("full" outputs, computed per
//     element after the reductions they need), or is a view of such a value in another shape
//     (reshape, squeeze, unsqueeze: also a full output, stored at the domain's linear index),
//     or has one element per row ("reduced" outputs).
// Full outputs that depend on no reduction of the group are also "side" outputs: pointwise work
// on the reductions' domain, which a reduction kernel writes during its pass over the domain.
// Rows are the kept dims of D (linearized), a row's elements its reduced dims. A reduction
// whose input depends on another reduction's result runs in a later phase over the same row,
// except a row's sum(exp(x - max(x))), which runs with the max (an online log-sum-exp).
#pragma once

#include <string>
#include <vector>

#include "core/ir/fusion.h"
#include "core/ir/segmented_fusion.h"

namespace fuserc {

struct ReductionInfo {
  int op = -1;  // index into Fusion::ops
  ValueId input = kNoValue;
  std::vector<ValueId> outputs;  // var_mean has two
  int phase = 1;                 // 1 + the latest phase its input depends on
  std::vector<int> after;        // the reductions whose results its input needs
  // A sum of exp(x - max) over the row, with max = reduction `online_max` of the same x: both
  // accumulate in one pass (an online log-sum-exp, see online_lse.h), in the max's phase.
  int online_max = -1;
};

struct ReductionAnalysis {
  std::string error;         // why the group does not fit; empty when it does
  std::vector<Expr> domain;  // D
  std::vector<int64_t> reduced_dims, kept_dims;
  std::vector<ReductionInfo> reductions;
  int phases = 0;
  std::vector<ValueId> full_outputs;     // group outputs of the domain's shape, or views of it
  std::vector<ValueId> side_outputs;     // the full outputs that depend on no reduction
  std::vector<ValueId> reduced_outputs;  // group outputs with one element per row
  bool inner = true;                     // the innermost dim of D is reduced (rows are contiguous)
  Expr rows = Expr(1);                   // product of the kept extents
  Expr row_length = Expr(1);             // product of the reduced extents

  bool ok() const { return error.empty(); }
  std::vector<Expr> kept_extents() const;
  std::vector<Expr> reduced_extents() const;
};

ReductionAnalysis analyze_reductions(const Fusion& f, const Segment& group);

}  // namespace fuserc
