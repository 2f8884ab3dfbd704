// Owns symbolic integer expressions: the one representation of every extent, stride, index
// bound, launch dimension, buffer size and guard in fuserc. Expressions are immutable,
// structurally compared and hashed (so equal expressions are recognised wherever they were
// built), and kept in a canonical form by their constructors:
//   - sums and products of symbols are expanded polynomials: terms sorted, like terms
//     combined, constants folded (so B*S*512 and (B*S*8)*64 are the same expression);
//   - x*1, x+0, x/1, ceildiv(x, 1), exact divisions, nested divisions, mod of a multiple and
//     min/max/compare whose answer the operands' bounds decide are simplified away.
// Every node knows an interval [lo, hi] containing all its values, derived from the symbols'
// declared ranges; simplifications rely on it. Arithmetic that overflows int64 while folding
// constants throws UserError.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace fuserc {

enum class ExprOp : uint8_t {
  Const,
  Sym,
  Mul,  // value = coefficient (never 0 or, with one factor, 1); args = sorted factors
  Add,  // value = constant addend; args = sorted non-constant terms (at least one)
  FloorDiv,
  CeilDiv,
  Mod,  // floor modulo: the result has the divisor's sign
  Min,
  Max,
  Lt,
  Le,
  Eq,
  Ne,
  Select,  // args = {cond, if_true, if_false}
};

class Expr;
struct ExprNode;

class Expr {
 public:
  Expr() : Expr(int64_t{0}) {}
  Expr(int64_t value);  // NOLINT(google-explicit-constructor): constants read naturally
  Expr(int value) : Expr(int64_t{value}) {}  // NOLINT

  // A named symbol whose values lie in [lo, hi].
  static Expr symbol(const std::string& name, int64_t lo, int64_t hi);
  // An index variable: a symbol whose values lie in [0, extent) for an expression `extent`
  // (a loop or thread index over a symbolic extent). Knowing that i < extent lets divisions
  // and modulos of linearized indices simplify (e.g. (b * S + s) % S == s).
  static Expr index(const std::string& name, const Expr& extent);

  ExprOp op() const;
  bool is_const() const { return op() == ExprOp::Const; }
  bool is_const(int64_t v) const { return is_const() && value() == v; }
  bool is_symbol() const { return op() == ExprOp::Sym; }
  bool is_index() const { return op() == ExprOp::Sym && !args().empty(); }
  int64_t value() const;            // Const: the value; Mul: coefficient; Add: constant addend
  const std::string& name() const;  // Sym
  const std::vector<Expr>& args() const;
  int64_t lo() const;  // every value of the expression lies in [lo, hi]
  int64_t hi() const;
  size_t hash() const;
  // Nodes of the expression written out as a tree (what printing it costs), saturating at
  // 2^40; sharing keeps the expression itself small.
  int64_t size() const;

  std::string str() const;  // human-readable formula, e.g. "ceildiv(N * 64, 128)"

  friend bool operator==(const Expr& a, const Expr& b);
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }

  const ExprNode* node() const { return n_.get(); }

 private:
  explicit Expr(std::shared_ptr<const ExprNode> n) : n_(std::move(n)) {}
  std::shared_ptr<const ExprNode> n_;
  friend Expr make_expr_node(ExprNode&& node);
};

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr floordiv(const Expr& a, const Expr& b);
Expr ceildiv(const Expr& a, const Expr& b);
Expr mod(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr lt(const Expr& a, const Expr& b);
Expr le(const Expr& a, const Expr& b);
Expr eq(const Expr& a, const Expr& b);
Expr ne(const Expr& a, const Expr& b);
Expr select(const Expr& cond, const Expr& if_true, const Expr& if_false);

// Product of a list (1 for an empty list).
Expr product(const std::vector<Expr>& factors);

// A total, deterministic order on expressions (no pointer values): by operation, then
// value, name and arguments. Used for canonical sorting.
int compare(const Expr& a, const Expr& b);
struct ExprLess {
  bool operator()(const Expr& a, const Expr& b) const { return compare(a, b) < 0; }
};
struct ExprHash {
  size_t operator()(const Expr& e) const { return e.hash(); }
};

// True when a == b for every value of the symbols (as far as the canonical form shows).
inline bool provably_equal(const Expr& a, const Expr& b) {
  return a == b;
}

// True when a < b for every value of the symbols, as far as bounds, index variables' extents
// and monotonicity show (false: "not proven"; a step that would overflow proves nothing).
bool provably_less(const Expr& a, const Expr& b);
// True when a <= b for every value of the symbols, also through min, max and divisions by
// positive numbers (min(x, y) <= b when either is; x / 2 <= b when x >= 0 is).
bool provably_le(const Expr& a, const Expr& b);

// Symbols occurring in an expression, sorted by name, each once.
std::vector<std::string> free_symbols(const Expr& e);

// Replaces symbols by expressions (e.g. a symbol by its value).
Expr substitute(const Expr& e, const std::function<std::optional<Expr>(const std::string&)>& f);

// Evaluates with the given symbol values; throws UserError when a symbol is unbound, on
// division by zero and on int64 overflow.
using SymbolLookup = std::function<std::optional<int64_t>(const std::string&)>;
int64_t evaluate(const Expr& e, const SymbolLookup& lookup);

// Printing with a custom spelling of symbols (e.g. kernel parameter names).
using SymbolNamer = std::function<std::string(const std::string&)>;
std::string to_string(const Expr& e, const SymbolNamer& namer);

}  // namespace fuserc
