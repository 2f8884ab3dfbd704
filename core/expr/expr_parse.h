// Owns reading extent expressions, the strings a graph may write wherever an extent stands
// ("B*197", "S+1", "(N+63)//64*64"): integers, symbols, `+ - *`, `//` (floor division), `%`
// (floor modulo), unary minus and parentheses, with the usual precedence (`* // %` bind
// tighter than `+ -`, left to right). The result is an Expr in canonical form, so equal
// polynomials are equal expressions (`197*B` == `B*197`, `(H-1)*2+2` == `2*H`). Also the
// check every extent expression must pass: never negative for any binding of its symbols.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/expr/expr.h"

namespace fuserc {

// A malformed expression: `offset` is the byte in the text the problem is at.
struct ExprParseError {
  size_t offset = 0;
  std::string message;
};

// The Expr of a symbol name, or nullopt when the name is unknown there (the message then says
// "unknown symbol 'X'" plus what `unknown_hint` returns for it, e.g. a did-you-mean).
using SymbolResolver = std::function<std::optional<Expr>(const std::string& name)>;

// Parses `text` into an Expr. Refuses (ExprParseError) a character outside the grammar, a
// missing operand or parenthesis, an unknown symbol, a single `/` (fuserc's division is
// `//`), a floor division or modulo by something that can be 0 for some binding, integers
// beyond 2^62, nesting deeper than kMaxExprParseDepth, and arithmetic that overflows 64 bits.
// Never throws for bad text.
std::optional<Expr> parse_extent_expr(std::string_view text, const SymbolResolver& resolve,
                                      ExprParseError* error,
                                      const std::function<std::string(const std::string&)>&
                                          unknown_hint = nullptr);

inline constexpr int kMaxExprParseDepth = 64;
inline constexpr size_t kMaxExprTextLength = 4096;

// True when `e` may be negative for some values of its symbols within their ranges, as far as
// their bounds show: its interval, then the polynomial rewritten over each symbol's distance
// from its minimum (S = min + t, t >= 0), which proves e.g. S*S - S >= 0 for S >= 1. When it
// can be, `witness` (if given) gets a binding at the symbols' minima or maxima where it is
// negative ("S = 1 gives -4"), or is left empty when no corner shows it.
bool can_be_negative(const Expr& e, std::string* witness = nullptr);

}  // namespace fuserc
