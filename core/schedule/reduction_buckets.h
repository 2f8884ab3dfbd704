// Owns which compiled variants ("buckets") a reduction or normalization kernel gets, and the
// fixed shape of each. A bucket fixes what changes the code (threads per row, rows per block,
// the vector width, the unroll, how many vectors a thread keeps in registers); everything that
// depends on the bound sizes or the device (grid, split factor) is a launch formula
// (launch_formulas.h). Buckets follow the symbols' declared ranges, never the hints: a row
// length that is a constant gets one bucket, a symbol in [1, 65536] every bucket its range
// reaches. The launch picks the first bucket whose limit holds (the last has none).
//   Inner (contiguous rows) streaming reductions:
//     s8    L <= 8 V       8 threads per row, 32 rows per block, one vector per thread
//     s32   L <= 512 V     a warp per row, 8 rows per block
//     s256  otherwise      256 threads per row, rows split across blocks when rows are few
//                          (the grid split, chosen at bind time)
//     s32 and s256 move 16-byte vectors where the row allows, else U elements per thread and
//     step (all loaded before any is folded in: U loads in flight, reduction_unroll).
//   Outer (strided rows) reductions: Bx threads across columns (one column each: a warp reads
//     Bx consecutive elements of a row), 256 / Bx threads across the reduced rows, each
//     loading U rows per step before folding them in; a bucket per Bx in {4, 8, 16, 32} that
//     the column count reaches; every bucket may split the reduced rows.
//   Normalizations (the row kept in registers): T threads per row in {8, 32, 128, 512, 1024},
//     each keeping P <= 8 vectors per cached array (P from a register budget of 64 words per
//     thread, 32 at 1024 threads; at most 32 elements per thread per array), then a multi-pass
//     bucket that re-reads rows (1024 threads). A row length that is a constant multiple of V
//     whose bucket would leave threads without a vector gets threads fitted to it instead:
//     768 bf16 elements (96 vectors of 8) take "t96", 96 threads (3 warps) of one vector each,
//     2 rows per block; a power of two up to 32 or whole warps, the fewest idle vector slots.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/expr/expr.h"

namespace fuserc {

struct ReductionBucket {
  std::string name;      // "s8", "s32", "s256", "x16" (outer, Bx 16), "t32", "multi"
  bool inner = true;     // rows contiguous (else strided: the outer layout)
  int threads = 128;     // inner: threads per row (T); outer: threads across columns (Bx)
  int rows = 1;          // inner: rows per block (R); outer: threads across reduced rows (By)
  int vector = 1;        // elements per access (V): 16 bytes of the widest row-walking dtype
  int unroll = 1;        // streaming scalar passes: elements a thread loads per step (U)
  int persistent = 0;    // vectors per thread kept in registers per cached array (P); 0: none
  bool split = false;    // rows may be split across blocks (a grid reduction)
  int64_t limit = 0;     // inner: the longest row it takes; outer: the most columns; 0: any

  int block_threads() const { return threads * rows; }
  // Elements of a row a persistent bucket holds.
  int64_t capacity() const { return int64_t{threads} * persistent * vector; }
};

// Streaming reductions over contiguous rows of length L (rows kept extent `rows`).
std::vector<ReductionBucket> inner_reduction_buckets(const Expr& row_length, const Expr& rows,
                                                     int vector, int unroll, bool can_split);

// Reductions over strided rows: `columns` kept elements (contiguous), reduced rows split.
std::vector<ReductionBucket> outer_reduction_buckets(const Expr& columns, int vector, int unroll);

// Normalizations: persistent buckets for the rows `row_length` reaches, given the register
// words one element of the cached arrays needs (`words`, summed over arrays live together),
// then the multi-pass bucket when rows may be longer than the last holds. `compact` (a large
// element computation) caps what is unrolled.
std::vector<ReductionBucket> normalization_buckets(const Expr& row_length, int vector,
                                                   double words, int unroll, bool compact);

// The unroll of a streaming pass (elements a thread loads before folding them in) for an
// element computation of `nodes` nodes whose widest row-walking load takes `vector` elements
// in 16 bytes: V (16 bytes in flight per thread: 4 f32, 8 bf16) up to 16 nodes, at most 2 up
// to 40, else 1 (the compiler repeats the computation per unrolled element).
int reduction_unroll(size_t nodes, int vector);

}  // namespace fuserc
