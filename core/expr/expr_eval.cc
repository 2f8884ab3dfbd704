// Evaluation of expressions, substitution of symbols and the symbols an expression uses.
#include <algorithm>

#include "core/base/diagnostics.h"
#include "core/expr/expr.h"
#include "core/expr/expr_node.h"

namespace fuserc {

using namespace expr_detail;

int64_t evaluate(const Expr& e, const SymbolLookup& lookup) {
  auto arg = [&](size_t i) { return evaluate(e.args()[i], lookup); };
  switch (e.op()) {
    case ExprOp::Const: return e.value();
    case ExprOp::Sym: {
      auto v = lookup(e.name());
      if (!v) throw UserError("symbol " + quote(e.name()) + " has no value");
      return *v;
    }
    case ExprOp::Mul: {
      int64_t r = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) r = checked_mul(r, arg(i));
      return r;
    }
    case ExprOp::Add: {
      int64_t r = e.value();
      for (size_t i = 0; i < e.args().size(); ++i) r = checked_add(r, arg(i));
      return r;
    }
    case ExprOp::FloorDiv:
    case ExprOp::CeilDiv:
    case ExprOp::Mod: {
      int64_t a = arg(0), b = arg(1);
      if (b == 0) throw UserError("division by zero while evaluating " + e.str());
      if (e.op() == ExprOp::FloorDiv) return floor_div(a, b);
      if (e.op() == ExprOp::CeilDiv) return ceil_div(a, b);
      return floor_mod(a, b);
    }
    case ExprOp::Min: return std::min(arg(0), arg(1));
    case ExprOp::Max: return std::max(arg(0), arg(1));
    case ExprOp::Lt: return arg(0) < arg(1);
    case ExprOp::Le: return arg(0) <= arg(1);
    case ExprOp::Eq: return arg(0) == arg(1);
    case ExprOp::Ne: return arg(0) != arg(1);
    case ExprOp::Select: return arg(0) != 0 ? arg(1) : arg(2);
  }
  FUSERC_UNREACHABLE("bad expression op");
}

Expr substitute(const Expr& e, const std::function<std::optional<Expr>(const std::string&)>& f) {
  if (e.is_const()) return e;
  if (e.is_symbol()) {
    auto r = f(e.name());
    return r ? *r : e;
  }
  std::vector<Expr> a;
  a.reserve(e.args().size());
  for (const auto& x : e.args()) a.push_back(substitute(x, f));
  switch (e.op()) {
    case ExprOp::Mul: {
      Expr r(e.value());
      for (const auto& x : a) r = r * x;
      return r;
    }
    case ExprOp::Add: {
      Expr r(e.value());
      for (const auto& x : a) r = r + x;
      return r;
    }
    case ExprOp::FloorDiv: return floordiv(a[0], a[1]);
    case ExprOp::CeilDiv: return ceildiv(a[0], a[1]);
    case ExprOp::Mod: return mod(a[0], a[1]);
    case ExprOp::Min: return min(a[0], a[1]);
    case ExprOp::Max: return max(a[0], a[1]);
    case ExprOp::Lt: return lt(a[0], a[1]);
    case ExprOp::Le: return le(a[0], a[1]);
    case ExprOp::Eq: return eq(a[0], a[1]);
    case ExprOp::Ne: return ne(a[0], a[1]);
    case ExprOp::Select: return select(a[0], a[1], a[2]);
    default: break;
  }
  FUSERC_UNREACHABLE("bad expression op");
}

namespace {
void collect_symbols(const Expr& e, std::vector<std::string>& out) {
  if (e.is_symbol()) out.push_back(e.name());
  for (const auto& a : e.args()) collect_symbols(a, out);
}
}  // namespace

std::vector<std::string> free_symbols(const Expr& e) {
  std::vector<std::string> out;
  collect_symbols(e, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace fuserc
