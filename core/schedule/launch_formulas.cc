#include "core/schedule/launch_formulas.h"

#include "core/schedule/device_model.h"

namespace fuserc {

GridSplit grid_split(const Expr& groups, const Expr& row_length, int64_t min_per_block) {
  constexpr int64_t kBlocksPerSm = 4;  // blocks to aim for per SM when rows are few
  GridSplit g;
  g.groups = groups;
  Expr most = max(Expr(1), floordiv(row_length, Expr(min_per_block)));
  Expr max_groups(2 * kMaxSmCount);
  Expr divisor = max(groups, Expr(1));  // no rows: nothing to split, and no division by 0
  g.split_alloc = select(lt(groups, max_groups),
                         min(most, ceildiv(Expr(kBlocksPerSm * kMaxSmCount), divisor)), Expr(1));
  Expr sm = device_sm_count();
  g.split = select(lt(groups, Expr(2) * sm),
                   min(g.split_alloc, ceildiv(Expr(kBlocksPerSm) * sm, divisor)), Expr(1));
  return g;
}

}  // namespace fuserc
