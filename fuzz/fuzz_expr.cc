// Fuzz target: symbolic expressions and their evaluator (differential). The input is a small
// stack program over three symbols (ranges and values from the input) and constants; each
// step builds the canonical Expr (the constructors simplify) and evaluates the same operation
// naively. Findings: a simplified expression whose value differs from the naive one (when no
// naive step overflowed), a value outside the node's [lo, hi] interval, a provably_le/_less
// that is false for the chosen values or throws, or anything but a UserError thrown.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/expr/expr.h"
#include "fuzz/fuzz_common.h"

namespace {

struct Value {
  fuserc::Expr expr;
  std::optional<int64_t> naive;  // empty when a naive step overflowed or divided by zero
};

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<int64_t> apply(int op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
    case 0: return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case 1: return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case 2: return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional(r);
    case 3:
    case 4:
    case 5: {
      if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
      if (op == 3) return floor_div(a, b);
      if (op == 4) {
        if (a == INT64_MIN) return std::nullopt;
        return -floor_div(-a, b);
      }
      if (b == -1) return 0;
      r = a % b;
      return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
    }
    case 6: return std::min(a, b);
    case 7: return std::max(a, b);
    case 8: return int64_t{a < b};
    case 9: return int64_t{a <= b};
    case 10: return int64_t{a == b};
    default: return int64_t{a != b};
  }
}

fuserc::Expr build(int op, const fuserc::Expr& a, const fuserc::Expr& b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return fuserc::floordiv(a, b);
    case 4: return fuserc::ceildiv(a, b);
    case 5: return fuserc::mod(a, b);
    case 6: return fuserc::min(a, b);
    case 7: return fuserc::max(a, b);
    case 8: return fuserc::lt(a, b);
    case 9: return fuserc::le(a, b);
    case 10: return fuserc::eq(a, b);
    default: return fuserc::ne(a, b);
  }
}

}  // namespace

int fuserc_fuzz::fuzz_expr(const uint8_t* data, size_t size) {
  if (size < 12) return 0;
  const char* names[3] = {"A", "B", "C"};
  int64_t values[3];
  std::vector<Value> stack;
  size_t p = 0;
  auto byte = [&]() -> uint8_t { return p < size ? data[p++] : 0; };
  auto word = [&](int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | byte();
    return v;
  };
  std::vector<fuserc::Expr> symbols;
  for (int s = 0; s < 3; ++s) {
    // Ranges as the front end makes them: lo >= 0 (1 mostly), hi up to 2^62 - 1.
    int64_t lo = byte() % 4;
    int64_t hi = lo + static_cast<int64_t>(word(2) % 5 == 0 ? (word(8) >> 2) : word(2));
    if (hi < lo) hi = lo;
    uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    values[s] = lo + static_cast<int64_t>(word(2) % span);
    symbols.push_back(fuserc::Expr::symbol(names[s], lo, hi));
  }
  auto lookup = [&](const std::string& n) -> std::optional<int64_t> {
    for (int s = 0; s < 3; ++s)
      if (n == names[s]) return values[s];
    return std::nullopt;
  };
  try {
    while (p < size && stack.size() < 64) {
      uint8_t code = byte();
      if (code < 64) {  // push a symbol or a constant
        if (code % 4 < 3) {
          stack.push_back({symbols[code % 4], values[code % 4]});
        } else {
          int64_t c = static_cast<int64_t>(code & 32 ? word(8) : word(1)) - (code & 16 ? 128 : 0);
          stack.push_back({fuserc::Expr(c), c});
        }
        continue;
      }
      if (stack.size() < 2) continue;
      Value b = stack.back();
      stack.pop_back();
      Value a = stack.back();
      stack.pop_back();
      int op = code % 13;
      Value r;
      if (op == 12) {  // select(a, b, a + b)
        if (stack.empty()) {
          stack.push_back(a);
          continue;
        }
        Value c = stack.back();
        stack.pop_back();
        r.expr = fuserc::select(c.expr, a.expr, b.expr);
        if (c.naive && a.naive && b.naive) r.naive = *c.naive != 0 ? *a.naive : *b.naive;
      } else {
        r.expr = build(op, a.expr, b.expr);
        if (a.naive && b.naive) r.naive = apply(op, *a.naive, *b.naive);
      }
      stack.push_back(r);
    }
  } catch (const fuserc::UserError&) {
    return 0;  // folding constants overflowed: refused, as documented
  }
  for (const Value& v : stack) {
    if (!v.naive) continue;
    int64_t got;
    try {
      got = fuserc::evaluate(v.expr, lookup);
    } catch (const fuserc::UserError&) {
      continue;  // the canonical form may overflow where the naive order did not
    }
    if (got != *v.naive) fuserc_fuzz::fail("simplified value differs from the naive one");
    if (got < v.expr.lo() || got > v.expr.hi()) fuserc_fuzz::fail("value outside [lo, hi]");
  }
  if (stack.size() >= 2) {
    const Value& a = stack[stack.size() - 2];
    const Value& b = stack.back();
    // Neither throws: a step of a proof that would overflow proves nothing.
    if (a.naive && b.naive) {
      if (fuserc::provably_le(a.expr, b.expr) && !(*a.naive <= *b.naive))
        fuserc_fuzz::fail("provably_le is wrong");
      if (fuserc::provably_less(a.expr, b.expr) && !(*a.naive < *b.naive))
        fuserc_fuzz::fail("provably_less is wrong");
    }
  }
  return 0;
}

#ifndef FUSERC_FUZZ_REPLAY
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return fuserc_fuzz::fuzz_expr(data, size);
}
#endif
