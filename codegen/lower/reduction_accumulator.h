// Owns what one reduction accumulates in a kernel and how: the accumulator's dtype and C type
// (f32 for f16/bf16/f32 sums, f64 for f64, i64 for integer and bool sums and products, the
// input's type for max/min, Welford structs for var/var_mean, fz_lse for a max folded with a
// sum of exp(x - max), an online log-sum-exp), its identity, folding one element in, combining
// two accumulators (the functor the preamble's fz_row_reduce and fz_column_reduce take), and
// the results it gives for a row (a variance over registers: see two_pass).
#pragma once

#include <string>
#include <vector>

#include "codegen/kir/kir.h"
#include "codegen/lower/element_emitter.h"
#include "core/schedule/reduction_analysis.h"

namespace fuserc::lower {

struct Accumulator {
  int reduction = 0;  // index into ReductionAnalysis::reductions
  OpKind op = OpKind::Sum;
  DType acc = DType::F32;  // the dtype it accumulates in (f32, f64, i32, i64 or bool)
  DType out = DType::F32;  // the dtype of the reduction's (first) result
  int outputs = 1;         // var_mean has two
  bool welford = false;
  // A variance over a row held in registers (a persistent variant): this accumulates the plain
  // sum; the squared deviations from the mean are a second pass over the registers
  // (ReductionLowering::variance_from_registers), not Welford's running state.
  bool two_pass = false;
  int online_sum = -1;  // online log-sum-exp: the sum of exp(x - max) this max also gives
  kir::Type type = kir::Type::Float;
  std::string functor;     // fz_sum_op, fz_prod_op, fz_max_op, fz_min_op, fz_welford_op, fz_lse_op
  std::string name;        // the local
  std::string smem;        // its shared array, for the combine across threads
  std::string partials;    // its partials parameter, in a grid reduction
  int input_node = -1;     // the element-graph node it folds in
  int64_t correction = 1;  // var, var_mean
  size_t bytes = 4;        // sizeof the C type (a grid reduction's partials)
};

Accumulator make_accumulator(const Fusion& f, const ReductionInfo& info, int index, int input_node,
                             NameTable& names);
// The max `acc` (of f32 or f64) made an online log-sum-exp that also gives reduction
// `sum_index`, a sum of exp(input - max) (ReductionInfo::online_max).
void make_online(Accumulator& acc, int sum_index);

// Welford accumulator `acc` made the sum of a two-pass variance (Accumulator::two_pass).
void make_two_pass(Accumulator& acc);

// The value an empty accumulator starts from.
kir::ValuePtr accumulator_identity(const Accumulator& acc);
// The accumulator with one element (of `value_dtype`) folded in.
kir::ValuePtr accumulator_push(const Accumulator& acc, const kir::ValuePtr& value,
                               DType value_dtype);
// Two accumulators combined.
kir::ValuePtr accumulator_combine(const Accumulator& acc, const kir::ValuePtr& a,
                                  const kir::ValuePtr& b);
// The reduction's results for a row of `row_length` elements, in compute types (an online
// log-sum-exp: the max, then the sum).
std::vector<kir::ValuePtr> accumulator_results(const Accumulator& acc, const Expr& row_length,
                                               kir::Type index_type);

// The row length as a value of `dtype` (the index converted: a mean's or variance's count).
kir::ValuePtr row_length_as(const Expr& row_length, kir::Type index_type, DType dtype);

// sizeof of a kernel type in generated code.
size_t kernel_type_size(kir::Type t);

}  // namespace fuserc::lower
