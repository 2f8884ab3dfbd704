// Owns the launch formulas of reductions decided at bind time, as expressions over the
// symbols and the device's SM count (device_model.h): how many blocks share one row group
// (the grid split factor S) and the bound on S that sizes the partials.
//
//   G        row groups (or column blocks): the blocks one per group would launch
//   S_max    max(1, L div min_per_block): every split block gets at least
//            `min_per_block` elements of the row (16 per thread)
//   S_alloc  G < 2 x 1024 ? min(S_max, ceildiv(4 x 1024, G)) : 1   symbols only: the most any
//            device in the model's range can use, so scratch never depends on the device
//   S        G < 2 x SM ? min(S_alloc, ceildiv(4 x SM, G)) : 1
//
// So a launch whose groups already fill the GPU (G >= 2 x SM) is not split; otherwise about
// 4 x SM blocks work, each on a contiguous chunk of the row (a whole-tensor sum on an H100:
// 528 blocks). The partials of a split launch take G x S_alloc values per row of a group: at
// most about 6K values, whatever the sizes.
#pragma once

#include <cstdint>

#include "core/expr/expr.h"

namespace fuserc {

struct GridSplit {
  Expr groups;       // G
  Expr split;        // S (reads the device)
  Expr split_alloc;  // S_alloc (symbols only), >= S
};

GridSplit grid_split(const Expr& groups, const Expr& row_length, int64_t min_per_block);

}  // namespace fuserc
