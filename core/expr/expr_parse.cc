#include "core/expr/expr_parse.h"

#include <cctype>
#include <map>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/expr/expr_node.h"

namespace fuserc {
namespace {

constexpr int64_t kMaxLiteral = int64_t{1} << 62;

struct ParseFailure {
  size_t offset;
  std::string message;
};

// Recursive descent over a bounded depth (kMaxExprParseDepth): every recursion goes through
// parenthesis or a unary sign, and each costs one level.
class Parser {
 public:
  Parser(std::string_view text, const SymbolResolver& resolve,
         const std::function<std::string(const std::string&)>& hint)
      : s_(text), resolve_(resolve), hint_(hint) {}

  Expr parse() {
    skip_space();
    if (pos_ == s_.size()) fail(pos_, "empty expression");
    Expr e = sum(0);
    skip_space();
    if (pos_ != s_.size()) {
      const unsigned char c = static_cast<unsigned char>(s_[pos_]);
      if (c == ')') fail(pos_, "unbalanced ')'");
      if (!std::isalnum(c) && c != '_' && c != '(') unexpected();
      fail(pos_, "expected an operator (+ - * // %) before " + describe_here());
    }
    return e;
  }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  const SymbolResolver& resolve_;
  const std::function<std::string(const std::string&)>& hint_;

  [[noreturn]] void fail(size_t at, const std::string& message) {
    throw ParseFailure{at, message};
  }
  void skip_space() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  std::string describe_here() const {
    if (pos_ >= s_.size()) return "the end";
    return "'" + std::string(1, s_[pos_]) + "'";
  }

  // Runs an Expr operation, turning its UserError (overflow, division by zero) into a
  // placed failure.
  template <class F>
  Expr arith(size_t at, F&& f) {
    try {
      return f();
    } catch (const UserError& e) {
      fail(at, e.what());
    }
  }

  Expr sum(int depth) {
    Expr e = product(depth);
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) return e;
      char op = s_[pos_];
      size_t at = pos_++;
      Expr r = product(depth);
      e = arith(at, [&] { return op == '+' ? e + r : e - r; });
    }
  }

  Expr product(int depth) {
    Expr e = unary(depth);
    for (;;) {
      skip_space();
      if (pos_ >= s_.size()) return e;
      size_t at = pos_;
      char c = s_[pos_];
      if (c == '*') {
        ++pos_;
        Expr r = unary(depth);
        e = arith(at, [&] { return e * r; });
      } else if (c == '/' || c == '%') {
        bool div = c == '/';
        if (div && (pos_ + 1 >= s_.size() || s_[pos_ + 1] != '/'))
          fail(at, "'/' is not an extent operator: floor division is '//'");
        pos_ += div ? 2 : 1;
        skip_space();
        size_t rhs_at = pos_;
        Expr r = unary(depth);
        if (r.lo() <= 0 && r.hi() >= 0) {
          std::string what = std::string(s_.substr(rhs_at, pos_ - rhs_at));
          fail(rhs_at, std::string(div ? "floor division" : "modulo") + " by '" + what +
                           "', which can be 0");
        }
        e = arith(at, [&] { return div ? floordiv(e, r) : mod(e, r); });
      } else {
        return e;
      }
    }
  }

  Expr unary(int depth) {
    skip_space();
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) {
      if (depth + 1 > kMaxExprParseDepth) fail(pos_, "nested too deeply");
      char op = s_[pos_];
      size_t at = pos_++;
      Expr e = unary(depth + 1);
      return op == '-' ? arith(at, [&] { return -e; }) : e;
    }
    return primary(depth);
  }

  Expr primary(int depth) {
    skip_space();
    if (pos_ >= s_.size()) fail(pos_, "expected a number, a symbol or '(' at the end");
    char c = s_[pos_];
    if (c == '(') {
      if (depth + 1 > kMaxExprParseDepth)
        fail(pos_, "nested too deeply (more than " + std::to_string(kMaxExprParseDepth) +
                       " levels)");
      size_t open = pos_++;
      Expr e = sum(depth + 1);
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ')') fail(open, "this '(' is not closed");
      ++pos_;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        const int digit = s_[pos_] - '0';
        if (v > (kMaxLiteral - digit) / 10) fail(start, "integer is not below 2^62");
        v = v * 10 + digit;
        ++pos_;
      }
      if (pos_ < s_.size() && (std::isalpha(static_cast<unsigned char>(s_[pos_])) ||
                               s_[pos_] == '_' || s_[pos_] == '.'))
        fail(pos_, "unexpected '" + std::string(1, s_[pos_]) + "' after the number " +
                       std::string(s_.substr(start, pos_ - start)) +
                       (s_[pos_] == '.' ? " (extents are integers)" : " (write '*' to multiply)"));
      return Expr(v);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      std::string name(s_.substr(start, pos_ - start));
      std::optional<Expr> e = resolve_(name);
      if (!e) fail(start, "unknown symbol '" + name + "'" + (hint_ ? hint_(name) : ""));
      return *e;
    }
    if (c == ')') fail(pos_, "expected a number, a symbol or '(' before ')'");
    unexpected();
  }

  [[noreturn]] void unexpected() {
    const unsigned char c = static_cast<unsigned char>(s_[pos_]);
    std::string shown = std::isprint(c) ? "'" + std::string(1, static_cast<char>(c)) + "'"
                                        : "byte " + std::to_string(c);
    fail(pos_, "unexpected " + shown +
                   " (an extent expression has integers, symbols, + - * // % and parentheses)");
  }
};

// Every symbol (not an index variable) an expression uses, by name, without recursion.
std::map<std::string, Expr> symbols_of(const Expr& e) {
  std::map<std::string, Expr> out;
  std::vector<Expr> stack = {e};
  while (!stack.empty()) {
    Expr x = stack.back();
    stack.pop_back();
    if (x.is_symbol()) {
      if (!x.is_index()) out.emplace(x.name(), x);
      continue;
    }
    for (const auto& a : x.args()) stack.push_back(a);
  }
  return out;
}

}  // namespace

std::optional<Expr> parse_extent_expr(std::string_view text, const SymbolResolver& resolve,
                                      ExprParseError* error,
                                      const std::function<std::string(const std::string&)>&
                                          unknown_hint) {
  try {
    if (text.size() > kMaxExprTextLength)
      throw ParseFailure{0, "is " + std::to_string(text.size()) +
                                " characters long; the limit is " +
                                std::to_string(kMaxExprTextLength)};
    return Parser(text, resolve, unknown_hint).parse();
  } catch (const ParseFailure& f) {
    if (error) *error = {f.offset, f.message};
    return std::nullopt;
  }
}

bool can_be_negative(const Expr& e, std::string* witness) {
  if (witness) witness->clear();
  if (e.lo() >= 0) return false;
  std::map<std::string, Expr> syms = symbols_of(e);
  // Over each symbol's distance from its minimum, a polynomial whose coefficients are all
  // non-negative is bounded below by its constant term.
  try {
    Expr shifted = substitute(e, [&](const std::string& name) -> std::optional<Expr> {
      auto it = syms.find(name);
      if (it == syms.end()) return std::nullopt;
      const Expr& s = it->second;
      return Expr(s.lo()) + Expr::symbol("__from_min_" + name, 0, s.hi() - s.lo());
    });
    if (shifted.lo() >= 0) return false;
  } catch (const UserError&) {
    // Overflow while rewriting proves nothing.
  }
  if (witness) {
    // The corners of the symbols' box, all of them when there are few symbols.
    std::vector<std::pair<std::string, Expr>> list(syms.begin(), syms.end());
    const size_t n = list.size();
    const size_t corners = n <= 10 ? size_t{1} << n : 2;
    for (size_t mask = 0; mask < corners; ++mask) {
      std::map<std::string, int64_t> at;
      for (size_t i = 0; i < n; ++i) {
        bool high = n <= 10 ? (mask >> i) & 1 : mask == 1;
        at[list[i].first] = high ? list[i].second.hi() : list[i].second.lo();
      }
      try {
        int64_t v = evaluate(e, [&](const std::string& s) -> std::optional<int64_t> {
          auto it = at.find(s);
          if (it == at.end()) return std::nullopt;
          return it->second;
        });
        if (v < 0) {
          std::string b;
          for (const auto& [name, value] : at)
            b += (b.empty() ? "" : ", ") + name + " = " + std::to_string(value);
          *witness = (b.empty() ? std::string("it") : b + " gives") + " " + std::to_string(v);
          break;
        }
      } catch (const UserError&) {
      }
    }
  }
  return true;
}

}  // namespace fuserc
