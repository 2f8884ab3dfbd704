// Printing expressions as C-like formulas with the fewest parentheses.
#include <cstdlib>

#include "core/base/diagnostics.h"
#include "core/expr/expr.h"
#include "core/expr/expr_node.h"

namespace fuserc {
namespace {

enum Prec { kSelect = 1, kCompare = 2, kAdd = 3, kMul = 4, kAtom = 5 };

class Printer {
 public:
  explicit Printer(const SymbolNamer& namer) : namer_(namer) {}

  std::string print(const Expr& e, int min_prec) {
    int p = precedence(e);
    std::string s = body(e);
    return p < min_prec ? "(" + s + ")" : s;
  }

 private:
  const SymbolNamer& namer_;

  static int precedence(const Expr& e) {
    switch (e.op()) {
      case ExprOp::Const: return e.value() < 0 ? kMul : kAtom;
      case ExprOp::Sym:
      case ExprOp::CeilDiv:
      case ExprOp::Min:
      case ExprOp::Max: return kAtom;
      case ExprOp::Mul:
      case ExprOp::FloorDiv:
      case ExprOp::Mod: return kMul;
      case ExprOp::Add: return kAdd;
      case ExprOp::Lt:
      case ExprOp::Le:
      case ExprOp::Eq:
      case ExprOp::Ne: return kCompare;
      case ExprOp::Select: return kSelect;
    }
    return kAtom;
  }

  // A product without its sign: "N * S * 4".
  std::string magnitude_of_term(const Expr& t) {
    if (t.op() != ExprOp::Mul) return print(t, kMul);
    std::string s;
    for (const auto& f : t.args()) {
      if (!s.empty()) s += " * ";
      s += print(f, kMul + 1);
    }
    int64_t c = t.value();
    if (c != 1 && c != -1) s += " * " + std::to_string(c < 0 ? -static_cast<uint64_t>(c) : c);
    return s;
  }

  static bool negative_term(const Expr& t) { return t.op() == ExprOp::Mul && t.value() < 0; }

  std::string binary(const Expr& e, const char* op, int prec) {
    return print(e.args()[0], prec) + " " + op + " " + print(e.args()[1], prec + 1);
  }

  std::string call(const char* fn, const Expr& e) {
    std::string s = std::string(fn) + "(";
    for (size_t i = 0; i < e.args().size(); ++i) {
      if (i) s += ", ";
      s += print(e.args()[i], kSelect);
    }
    return s + ")";
  }

  std::string body(const Expr& e) {
    switch (e.op()) {
      case ExprOp::Const: return std::to_string(e.value());
      case ExprOp::Sym: return namer_ ? namer_(e.name()) : e.name();
      case ExprOp::Mul: return (e.value() < 0 ? "-" : "") + magnitude_of_term(e);
      case ExprOp::Add: {
        std::string s;
        for (const auto& t : e.args()) {
          if (s.empty()) {
            s = negative_term(t) ? "-" + magnitude_of_term(t) : print(t, kAdd);
          } else {
            s += negative_term(t) ? " - " + magnitude_of_term(t) : " + " + print(t, kAdd + 1);
          }
        }
        int64_t c = e.value();
        if (c > 0) s += " + " + std::to_string(c);
        if (c < 0) s += " - " + std::to_string(-static_cast<uint64_t>(c));
        return s;
      }
      case ExprOp::FloorDiv: return binary(e, "/", kMul);
      case ExprOp::Mod: return binary(e, "%", kMul);
      case ExprOp::CeilDiv: return call("ceildiv", e);
      case ExprOp::Min: return call("min", e);
      case ExprOp::Max: return call("max", e);
      case ExprOp::Lt: return binary(e, "<", kCompare);
      case ExprOp::Le: return binary(e, "<=", kCompare);
      case ExprOp::Eq: return binary(e, "==", kCompare);
      case ExprOp::Ne: return binary(e, "!=", kCompare);
      case ExprOp::Select:
        return print(e.args()[0], kCompare) + " ? " + print(e.args()[1], kCompare) + " : " +
               print(e.args()[2], kSelect);
    }
    FUSERC_UNREACHABLE("bad expression op");
  }
};

}  // namespace

std::string to_string(const Expr& e, const SymbolNamer& namer) {
  return Printer(namer).print(e, kSelect);
}

std::string Expr::str() const {
  return to_string(*this, nullptr);
}

}  // namespace fuserc
