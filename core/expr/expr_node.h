// Owns the node behind an Expr and the checked/saturating integer helpers shared by the
// expression constructors, printer and evaluator. Internal to core/expr.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/expr/expr.h"

namespace fuserc {

struct ExprNode {
  ExprOp op = ExprOp::Const;
  int64_t value = 0;
  std::string name;
  std::vector<Expr> args;
  int64_t lo = 0;
  int64_t hi = 0;
  size_t hash = 0;
  int64_t size = 1;  // nodes of the expression as a tree (shared arguments counted each time),
                     // saturating at 2^40
  int depth = 1;     // 1 + the deepest argument's; at most kMaxExprDepth
};

// Expressions nest at most this deep, so that every walk over one (printing, evaluating,
// comparing, freeing) is a recursion of bounded depth; deeper is refused as a user error.
inline constexpr int kMaxExprDepth = 2000;

// Wraps a filled-in node (hash computed here). Bounds must already be set.
Expr make_expr_node(ExprNode&& node);

namespace expr_detail {

inline constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();

// The error of size arithmetic that overflows 64 bits: a UserError, of a type of its own so
// that proofs (provably_le, provably_less) can take an overflowing intermediate step of theirs
// as "not proven" rather than as an error of the graph.
class SizeOverflow : public UserError {
 public:
  using UserError::UserError;
};

// Exact arithmetic; throws SizeOverflow on overflow ("size arithmetic overflows 64 bits").
int64_t checked_add(int64_t a, int64_t b);
int64_t checked_mul(int64_t a, int64_t b);
int64_t checked_neg(int64_t a);
// Floor division and floor modulo (divisor != 0).
int64_t floor_div(int64_t a, int64_t b);
int64_t ceil_div(int64_t a, int64_t b);
int64_t floor_mod(int64_t a, int64_t b);

// Interval arithmetic that saturates at +/- infinity (kPosInf / kNegInf).
int64_t sat_add(int64_t a, int64_t b);
int64_t sat_mul(int64_t a, int64_t b);

}  // namespace expr_detail
}  // namespace fuserc
