#include "core/frontend/broadcasting.h"

#include <algorithm>

namespace fuserc {

BroadcastResult broadcast_shapes(const std::vector<std::vector<Expr>>& shapes) {
  BroadcastResult r;
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  r.shape.assign(rank, Expr(1));
  std::vector<int> owner(rank, -1);  // which operand decided each result extent
  for (size_t k = 0; k < shapes.size(); ++k) {
    const auto& s = shapes[k];
    size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      const Expr& e = s[d];
      size_t out = offset + d;
      if (e.is_const(1)) continue;
      if (owner[out] < 0) {
        r.shape[out] = e;
        owner[out] = static_cast<int>(k);
        continue;
      }
      const Expr& have = r.shape[out];
      if (have == e) continue;
      std::string reason;
      if (have.is_const() && e.is_const()) {
        reason = "extents " + have.str() + " and " + e.str() + " differ";
      } else if (have.is_const() || e.is_const()) {
        reason = "symbolic extent " + (have.is_const() ? e : have).str() +
                 " cannot be matched with " + (have.is_const() ? have : e).str() +
                 " (only a literal 1 broadcasts)";
      } else {
        reason = "symbolic extents " + have.str() + " and " + e.str() + " are not the same symbol";
      }
      r.failure =
          BroadcastFailure{static_cast<size_t>(owner[out]), k, static_cast<int>(out), reason};
      return r;
    }
  }
  return r;
}

}  // namespace fuserc
