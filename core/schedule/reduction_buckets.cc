#include "core/schedule/reduction_buckets.h"

#include <algorithm>
#include <cmath>

namespace fuserc {
namespace {

// Whether some value of `e` lies in (after, upto] (upto 0: unbounded).
bool reaches(const Expr& e, int64_t after, int64_t upto) {
  return e.hi() > after && (upto == 0 || e.lo() <= upto);
}

}  // namespace

int reduction_unroll(size_t nodes, int vector) {
  if (nodes <= 16) return std::max(1, std::min(vector, 8));
  if (nodes <= 40) return std::max(1, std::min(vector, 2));
  return 1;
}

std::vector<ReductionBucket> inner_reduction_buckets(const Expr& row_length, const Expr& rows,
                                                     int vector, int unroll, bool can_split) {
  ReductionBucket s8{"s8", true, 8, 32, vector, 1, 0, false, int64_t{8} * vector};
  ReductionBucket s32{"s32", true, 32, 8, vector, unroll, 0, false, int64_t{512} * vector};
  ReductionBucket s256{"s256", true, 256, 1, vector, unroll, 0, can_split, 0};
  // One row (a whole-tensor reduction) is small when short: the splitting bucket takes all.
  if (rows.is_const(1)) return {s256};
  std::vector<ReductionBucket> out;
  if (reaches(row_length, -1, s8.limit)) out.push_back(s8);
  if (reaches(row_length, s8.limit, s32.limit)) out.push_back(s32);
  if (reaches(row_length, s32.limit, 0)) out.push_back(s256);
  if (out.empty()) out.push_back(s256);
  out.back().limit = 0;
  return out;
}

std::vector<ReductionBucket> outer_reduction_buckets(const Expr& columns, int vector,
                                                     int unroll) {
  std::vector<ReductionBucket> out;
  int64_t after = -1;
  for (int bx : {4, 8, 16, 32}) {
    int64_t limit = bx == 32 ? 0 : int64_t{bx} * vector;
    if (reaches(columns, after, limit))
      out.push_back(
          {"x" + std::to_string(bx), false, bx, 256 / bx, vector, unroll, 0, true, limit});
    after = limit;
  }
  if (out.empty()) out.push_back({"x32", false, 32, 8, vector, unroll, 0, true, 0});
  out.back().limit = 0;
  return out;
}

namespace {

// Vectors of a row a thread keeps per cached array at `threads` threads per row (0: none fit).
// Register words per thread for cached elements: the rest of 64K registers per SM at full
// occupancy goes to indices, accumulators and the element computation (32 words past 512
// threads per row).
int persistent_vectors(int threads, int vector, double words, bool compact) {
  const int budget = threads > 512 ? 32 : 64;
  int p = 8;
  if (words > 0) p = std::min(8, static_cast<int>(std::floor(budget / (vector * words))));
  // At most 32 elements per thread per array: the caches hold compute-type scalars (a bf16
  // element takes a whole f32 register), and 64 of them spill (log-softmax of bf16, t128).
  p = std::min(p, std::max(1, 32 / vector));
  if (compact) p = std::min(p, 2);
  // Below 512 threads per row, at most 8 elements per thread: more threads per row and more
  // rows resident per SM (more bytes in flight) rather than long per-thread caches. Measured
  // on an H100: softmax_bwd f16 at 1024 926 -> 328 us, RMS norm bf16 596 -> 350 us.
  if (threads < 512) p = std::min(p, std::max(1, 8 / vector));
  return std::max(p, 0);
}

// A row of `length` elements (a constant multiple of `vector`) that the ladder's bucket `b`
// covers with idle threads on the vector path (768 bf16 elements: 96 vectors over t128's 128
// threads): the threads per row that leave the fewest vector slots idle (none where the count
// of vectors allows), a power of two up to 32 or whole warps (fz_row_reduce's shapes), each
// keeping no more vectors than the ladder's register budget allows; at equal idle slots, fewer
// threads with more vectors each. Rows per block make at least 128 threads. `b` itself when
// nothing fits better.
ReductionBucket fit_constant_row(const ReductionBucket& b, int64_t length, int vector,
                                 double words, bool compact) {
  if (b.persistent == 0 || length <= 0 || length % vector != 0) return b;
  const int64_t n = length / vector;
  int64_t best_idle = int64_t{b.threads} * b.persistent - n;
  ReductionBucket best = b;
  bool fitted = false;
  for (int p = 1; p <= 8; ++p) {
    int64_t t = (n + p - 1) / p;
    if (t <= 32) {
      int64_t pow2 = 1;
      while (pow2 < t) pow2 *= 2;
      t = pow2;
    } else {
      t = (t + 31) / 32 * 32;
    }
    if (t > 1024) continue;
    const int threads = static_cast<int>(t);
    const int keep = static_cast<int>((n + t - 1) / t);
    if (keep > persistent_vectors(threads, vector, words, compact)) continue;
    const int64_t idle = t * keep - n;
    if (idle < best_idle || (fitted && idle == best_idle && t < best.threads)) {
      best_idle = idle;
      fitted = true;
      best = ReductionBucket{"t" + std::to_string(threads), true, threads,
                             threads < 128 ? (128 + threads - 1) / threads : 1, vector, 1, keep,
                             false, 0};
    }
  }
  return best;
}

}  // namespace

std::vector<ReductionBucket> normalization_buckets(const Expr& row_length, int vector,
                                                   double words, int unroll, bool compact) {
  struct Rung {
    const char* name;
    int threads, rows;
  };
  static const Rung kLadder[] = {
      {"t8", 8, 16}, {"t32", 32, 4}, {"t128", 128, 1}, {"t512", 512, 1}, {"t1024", 1024, 1}};
  std::vector<ReductionBucket> out;
  int64_t covered = 0;  // rows up to this length have a bucket
  for (const Rung& r : kLadder) {
    const int p = persistent_vectors(r.threads, vector, words, compact);
    if (p < 1) continue;
    ReductionBucket b{r.name, true, r.threads, r.rows, vector, 1, p, false, 0};
    int64_t cap = b.capacity();
    if (cap <= covered) continue;
    if (reaches(row_length, covered, cap)) {
      // Keep only the vectors the longest row of the bucket needs.
      int64_t longest = std::min(row_length.hi(), cap);
      int64_t per_thread = int64_t{r.threads} * vector;
      b.persistent = static_cast<int>(std::min<int64_t>(p, (longest + per_thread - 1) / per_thread));
      b.persistent = std::max(b.persistent, 1);
      b.limit = cap;
      out.push_back(b);
    }
    covered = cap;
    if (row_length.hi() <= covered) break;
  }
  if (out.empty() || row_length.hi() > covered)
    out.push_back({"multi", true, 1024, 1, vector, unroll, 0, false, 0});
  out.back().limit = 0;
  // A constant row length: threads per row that fit its vectors.
  if (out.size() == 1 && row_length.is_const())
    out[0] = fit_constant_row(out[0], row_length.lo(), vector, words, compact);
  return out;
}

}  // namespace fuserc
