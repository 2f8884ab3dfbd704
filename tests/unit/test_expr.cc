// Tests for symbolic integer expressions: canonical forms, simplification, printing,
// evaluation, and a randomized check that simplification never changes a value.
#include <catch2/catch.hpp>

#include <limits>
#include <map>
#include <random>

#include "core/base/diagnostics.h"
#include "core/expr/expr.h"
#include "core/expr/expr_node.h"

using namespace fuserc;

namespace {

const Expr N = Expr::symbol("N", 1, 1 << 20);
const Expr M = Expr::symbol("M", 1, 1 << 20);
const Expr Z = Expr::symbol("Z", 0, 100);  // may be zero

int64_t eval_with(const Expr& e, std::map<std::string, int64_t> values) {
  return evaluate(e, [&](const std::string& s) -> std::optional<int64_t> {
    auto it = values.find(s);
    if (it == values.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace

TEST_CASE("constants fold and identities vanish", "[expr]") {
  CHECK((Expr(3) + Expr(4)).is_const(7));
  CHECK((Expr(3) * Expr(4)).is_const(12));
  CHECK((N * 1) == N);
  CHECK((N + 0) == N);
  CHECK((N * 0).is_const(0));
  CHECK((N - N).is_const(0));
  CHECK(floordiv(N, 1) == N);
  CHECK(ceildiv(N, 1) == N);
  CHECK(mod(N, 1).is_const(0));
  CHECK(floordiv(Expr(-7), Expr(2)).is_const(-4));
  CHECK(ceildiv(Expr(7), Expr(2)).is_const(4));
  CHECK(mod(Expr(-7), Expr(3)).is_const(2));
}

TEST_CASE("polynomials have one canonical form", "[expr]") {
  Expr a = N * M * 512;
  Expr b = (N * M * 8) * 64;
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  CHECK((N + M) == (M + N));
  CHECK(((N + 1) * 2) == (N * 2 + 2));
  CHECK(((N + 1) * (N - 1)) == (N * N - 1));
  CHECK((N * 3 - N * 2) == N);
  CHECK((N + M) != (N + M + 1));
  CHECK(provably_equal(N * 4 + M * 4, (M + N) * 4));
}

TEST_CASE("divisions simplify when exact or decided by bounds", "[expr]") {
  CHECK(floordiv(N * 8 + 16, 8) == N + 2);
  CHECK(ceildiv(N * 128, 128) == N);
  CHECK(floordiv(N * M * 512, N * M) == Expr(512));
  CHECK(floordiv(N * M * 512, M * 64) == N * 8);
  CHECK(ceildiv(N * 4 + 3, 4) == N + 1);
  CHECK(floordiv(N * 4 + 3, 4) == N);
  CHECK(floordiv(floordiv(N, 4), 8) == floordiv(N, 32));
  CHECK(mod(N * 6 + 5, 3) == Expr(2));
  CHECK(mod(mod(N, 12), 4) == mod(N, 4));
  CHECK(mod(Z, 128) == Z);  // Z in [0, 100]
  CHECK(floordiv(Z, 128).is_const(0));
  CHECK(ceildiv(N, 128).str() == "ceildiv(N, 128)");
  CHECK_THROWS_AS(floordiv(N, 0), UserError);
}

TEST_CASE("min, max, comparisons and select use bounds", "[expr]") {
  CHECK(min(N, N + 3) == N);
  CHECK(max(N, N + 3) == N + 3);
  CHECK(max(N, Expr(0)) == N);     // N >= 1
  CHECK(min(Z, Expr(1000)) == Z);  // Z <= 100
  CHECK(lt(N, N + 1).is_const(1));
  CHECK(le(N + 1, N).is_const(0));
  CHECK(eq(N * 2, N + N).is_const(1));
  CHECK(ne(N, Expr(0)).is_const(1));
  CHECK(select(lt(N, Expr(0)), M, N) == N);
  CHECK(select(lt(N, M), Z, Z) == Z);
  CHECK(min(N, M) == min(M, N));
  CHECK(min(N, M).lo() == 1);
}

TEST_CASE("bounds follow the symbols' ranges", "[expr]") {
  Expr e = N * 4 + 2;
  CHECK(e.lo() == 6);
  CHECK(e.hi() == (int64_t{1} << 22) + 2);
  Expr d = ceildiv(N, 128);
  CHECK(d.lo() == 1);
  CHECK(d.hi() == (1 << 20) / 128);
  CHECK(mod(N, 32).hi() == 31);
}

TEST_CASE("printing reads like C", "[expr]") {
  CHECK((N * M * 512).str() == "M * N * 512");
  CHECK((N - 1).str() == "N - 1");
  CHECK((N * 4 - M * 2 + 3).str() == "-M * 2 + N * 4 + 3");
  CHECK(floordiv(N + M, M * 2).str() == "(M + N) / (M * 2)");
  CHECK(mod(N, 7).str() == "N % 7");
  CHECK(select(lt(N, M), N, M).str() == "N < M ? N : M");
  CHECK(max(N - 3, Expr(0)).str() == "max(N - 3, 0)");
  CHECK(to_string(N * 2, [](const std::string& s) { return "sym_" + s; }) == "sym_N * 2");
}

TEST_CASE("evaluation, substitution and free symbols", "[expr]") {
  Expr e = ceildiv(N * M, 128) + mod(N, 3);
  CHECK(eval_with(e, {{"N", 100}, {"M", 7}}) == 6 + 1);
  CHECK_THROWS_WITH(eval_with(e, {{"N", 1}}), Catch::Contains("'M' has no value"));
  CHECK(free_symbols(e) == std::vector<std::string>{"M", "N"});
  Expr s = substitute(e, [](const std::string& n) -> std::optional<Expr> {
    if (n == "M") return Expr(128);
    return std::nullopt;
  });
  CHECK(s == N + mod(N, 3));
  CHECK_THROWS_AS(Expr(INT64_MAX) + Expr(1), UserError);
  CHECK_THROWS_AS(eval_with(N * N * N * N, {{"N", 1 << 20}}), UserError);
}

// Random expression trees: the canonical expression must evaluate to exactly what direct
// integer arithmetic on the same tree gives.
namespace {

struct Tree {
  Expr expr;
  std::function<int64_t(const std::map<std::string, int64_t>&)> ref;
};

int64_t fdiv(int64_t a, int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}
int64_t cdiv(int64_t a, int64_t b) {
  return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
}
int64_t fmod_(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

Tree random_tree(std::mt19937& rng, int depth) {
  static const Expr A = Expr::symbol("A", 1, 64);
  static const Expr B = Expr::symbol("B", 1, 64);
  static const Expr C = Expr::symbol("C", 0, 64);
  int pick = depth <= 0 ? static_cast<int>(rng() % 2) : static_cast<int>(rng() % 11);
  if (pick == 0) {
    int64_t c = static_cast<int64_t>(rng() % 9) - 2;
    return {Expr(c), [c](const auto&) { return c; }};
  }
  if (pick == 1) {
    const Expr* s[] = {&A, &B, &C};
    const Expr& sym = *s[rng() % 3];
    std::string name = sym.name();
    return {sym, [name](const auto& v) { return v.at(name); }};
  }
  Tree a = random_tree(rng, depth - 1);
  Tree b = random_tree(rng, depth - 1);
  auto fa = a.ref, fb = b.ref;
  switch (pick) {
    case 2: return {a.expr + b.expr, [=](const auto& v) { return fa(v) + fb(v); }};
    case 3: return {a.expr - b.expr, [=](const auto& v) { return fa(v) - fb(v); }};
    case 4: return {a.expr * b.expr, [=](const auto& v) { return fa(v) * fb(v); }};
    case 5: {
      int64_t c = 1 + rng() % 8;
      return {floordiv(a.expr, Expr(c)), [=](const auto& v) { return fdiv(fa(v), c); }};
    }
    case 6: {
      int64_t c = 1 + rng() % 8;
      return {ceildiv(a.expr, Expr(c)), [=](const auto& v) { return cdiv(fa(v), c); }};
    }
    case 7: {
      int64_t c = 1 + rng() % 8;
      return {mod(a.expr, Expr(c)), [=](const auto& v) { return fmod_(fa(v), c); }};
    }
    case 8: return {min(a.expr, b.expr), [=](const auto& v) { return std::min(fa(v), fb(v)); }};
    case 9: return {max(a.expr, b.expr), [=](const auto& v) { return std::max(fa(v), fb(v)); }};
    default:
      return {select(lt(a.expr, b.expr), a.expr, b.expr + 1),
              [=](const auto& v) { return fa(v) < fb(v) ? fa(v) : fb(v) + 1; }};
  }
}

}  // namespace

TEST_CASE("simplification preserves values (randomized)", "[expr]") {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 3000; ++trial) {
    Tree t = random_tree(rng, 4);
    for (int k = 0; k < 5; ++k) {
      std::map<std::string, int64_t> v = {{"A", 1 + static_cast<int64_t>(rng() % 64)},
                                          {"B", 1 + static_cast<int64_t>(rng() % 64)},
                                          {"C", static_cast<int64_t>(rng() % 65)}};
      int64_t want = t.ref(v);
      int64_t got = eval_with(t.expr, v);
      INFO(t.expr.str() << " with A=" << v["A"] << " B=" << v["B"] << " C=" << v["C"]);
      REQUIRE(got == want);
      REQUIRE(got >= t.expr.lo());
      REQUIRE(got <= t.expr.hi());
    }
  }
}

TEST_CASE("index variables let linearized indices come apart again", "[expr]") {
  const Expr B = Expr::symbol("B", 1, 64), S = Expr::symbol("S", 1, 4096);
  const Expr b = Expr::index("b", B), s = Expr::index("s", S);
  const Expr h = Expr::index("h", Expr(8)), d = Expr::index("d", Expr(64));
  CHECK(s.lo() == 0);
  CHECK(s.hi() == 4095);
  Expr L = ((b * S + s) * 8 + h) * 64 + d;
  CHECK(mod(L, Expr(512)) == h * 64 + d);
  CHECK(mod(floordiv(L, Expr(512)), S) == s);
  CHECK(floordiv(floordiv(L, Expr(512)), S) == b);
  CHECK(floordiv(L, S * 512) == b);
  CHECK(mod(b * S + s, S) == s);
  CHECK(provably_less(s * 512 + h * 64 + d, S * 512));
  CHECK_FALSE(provably_less(s * 512 + h * 64 + d, S * 511));
  // Delinearizing and linearizing again gives the index back.
  const Expr M = Expr::symbol("M", 1, 1000);
  const Expr x = Expr::index("x", B * M);
  CHECK(floordiv(x, M) * M + mod(x, M) == x);
  CHECK(floordiv(x, Expr(16)) * 32 + mod(x, Expr(16)) * 2 == x * 2);
  CHECK(floordiv(x, M) * M * 3 + mod(x, M) * 3 + 1 == x * 3 + 1);
}

TEST_CASE("index-variable simplification preserves values (randomized)", "[expr]") {
  std::mt19937 rng(7);
  const Expr S = Expr::symbol("S", 1, 50);
  for (int trial = 0; trial < 2000; ++trial) {
    int64_t e1 = 1 + rng() % 6, e2 = 1 + rng() % 6;
    const Expr i = Expr::index("i", S), j = Expr::index("j", Expr(e1)),
               k = Expr::index("k", Expr(e2));
    // A linearization of (i, j, k) in [S, e1, e2], then a random delinearization.
    Expr L = (i * e1 + j) * e2 + k;
    int64_t div = 1 + rng() % 12;
    Expr q = floordiv(L, Expr(div)), r = mod(L, Expr(div));
    Expr qs = floordiv(L, S), rs = mod(L, S);
    for (int n = 0; n < 4; ++n) {
      int64_t sv = 1 + rng() % 50;
      int64_t iv = rng() % sv, jv = rng() % e1, kv = rng() % e2;
      std::map<std::string, int64_t> v = {{"S", sv}, {"i", iv}, {"j", jv}, {"k", kv}};
      int64_t lv = (iv * e1 + jv) * e2 + kv;
      INFO(L.str() << " div " << div << " S=" << sv);
      REQUIRE(eval_with(q, v) == lv / div);
      REQUIRE(eval_with(r, v) == lv % div);
      REQUIRE(eval_with(qs, v) == lv / sv);
      REQUIRE(eval_with(rs, v) == lv % sv);
      REQUIRE(eval_with(q * div + r, v) == lv);
    }
  }
}

TEST_CASE("delinearized indices fold back over sums of symbols and extents that may be 0",
          "[expr]") {
  const Expr B = Expr::symbol("B", 1, 1000), C = Expr::symbol("C", 1, 1000);
  // A [2, B + 3] domain (a pad along an inner symbolic dimension).
  const Expr x = Expr::index("x", (B + 3) * 2);
  CHECK(floordiv(x, B + 3) * (B + 3) + mod(x, B + 3) == x);
  // [A, B + C] (a cat), with a coefficient and a constant around it.
  const Expr y = Expr::index("y", (B + C) * 7);
  CHECK((floordiv(y, B + C) * (B + C) + mod(y, B + C)) * 4 + 1 == y * 4 + 1);
  // [2, Z, 1] with Z >= 0: no element exists when Z is 0, so the fold holds wherever it is used.
  const Expr z = Expr::index("z", Z * 2);
  CHECK((floordiv(z, Z) * Z + mod(z, Z)) * 1 == z);
  // Values agree wherever the divisor is not 0.
  for (int64_t b : {1, 2, 5}) {
    for (int64_t xv = 0; xv < (b + 3) * 2; ++xv) {
      Expr e = floordiv(x, B + 3) * 100 + mod(x, B + 3);
      CHECK(eval_with(e, {{"B", b}, {"x", xv}}) == xv / (b + 3) * 100 + xv % (b + 3));
    }
  }
}

TEST_CASE("an index of an extent that may be 0 divides to 0 and is its own remainder",
          "[expr]") {
  // A row index r of S rows, S >= 0: r / S is 0 and r % S is r wherever r exists (when S is
  // 0 no r does). Without this, the row coordinates of a keepdim reduction result [1, S, 1]
  // (r / S, r % S, 0) did not match those of its readers (0, r, 0): an internal error.
  const Expr S = Expr::symbol("S", 0, 1000);
  const Expr r = Expr::index("r", S);
  CHECK(floordiv(r, S) == Expr(0));
  CHECK(mod(r, S) == r);
  // Not for values that may reach the divisor.
  CHECK(floordiv(S, S + 1) == Expr(0));
  CHECK(floordiv(S, Expr::symbol("T", 0, 1000)).op() == ExprOp::FloorDiv);
}

TEST_CASE("clamps of clamps and divisions of divisions stay flat", "[expr]") {
  const Expr S = Expr::symbol("S", 0, 1000);
  Expr e = max(N - 2, Expr(0));
  CHECK(provably_le(e, N));
  CHECK_FALSE(provably_le(N, e));
  CHECK(min(N, e) == e);
  CHECK(max(e - 1, Expr(0)) == max(N - 3, Expr(0)));
  CHECK(max(max(N - S, Expr(0)) - S, Expr(0)) == max(N - S * 2, Expr(0)));
  CHECK(min(N, ceildiv(N, Expr(2))) == ceildiv(N, Expr(2)));
  CHECK(ceildiv(ceildiv(N, Expr(2)), Expr(3)) == ceildiv(N, Expr(6)));
  CHECK(lt(Expr::index("i", N), N).is_const(1));
  CHECK(le(N, max(N, M)).is_const(1));
  // An index variable of extent 1 only takes the value 0.
  CHECK((Expr::index("i", Expr(1)) * 5 + 3).is_const(3));
  // Values are unchanged.
  for (int64_t n : {1, 2, 3, 7}) {
    for (int64_t s : {0, 1, 4}) {
      std::map<std::string, int64_t> v = {{"N", n}, {"S", s}};
      CHECK(eval_with(max(max(N - S, Expr(0)) - S, Expr(0)), v) ==
            std::max<int64_t>(std::max<int64_t>(n - s, 0) - s, 0));
      CHECK(eval_with(ceildiv(ceildiv(N, Expr(2)), Expr(3)), v) == ((n + 1) / 2 + 2) / 3);
    }
  }
}

TEST_CASE("expressions nest at most kMaxExprDepth deep, and every walk handles the deepest",
          "[expr]") {
  // floor((3e + N) / 7) does not simplify: each step nests the expression three levels deeper.
  auto deep = [](int steps) {
    Expr e = N;
    for (int k = 0; k < steps; ++k) e = floordiv(e * 3 + N, Expr(7));
    return e;
  };
  int steps = 1990 / 3;
  Expr a = deep(steps), b = deep(steps);  // equal, but built apart (compare walks all of it)
  CHECK(a.node() != b.node());
  CHECK(compare(a, b) == 0);
  CHECK(a == b);
  CHECK(!a.str().empty());
  CHECK(eval_with(a, {{"N", 5}}) >= 0);
  CHECK(free_symbols(a) == std::vector<std::string>{"N"});
  Expr c = substitute(a, [](const std::string&) -> std::optional<Expr> { return M; });
  CHECK(free_symbols(c) == std::vector<std::string>{"M"});
  CHECK_THROWS_AS(deep(700), UserError);
}

TEST_CASE("a proof whose own arithmetic would overflow answers \"not proven\"", "[expr]") {
  const int64_t big = int64_t{1} << 62;
  // Decided by bounds although a - b overflows (its constant would be 2^63 + 1).
  const Expr X = Expr::symbol("X", 0, big - 1);
  Expr a = X + big;
  Expr b = Expr(-big) - X - Expr(1);
  CHECK_THROWS_AS(a - b, UserError);
  CHECK(provably_le(b, a));
  CHECK(provably_less(b, a));
  CHECK_FALSE(provably_le(a, b));
  CHECK_FALSE(provably_less(a, b));
  CHECK(min(a, b) == b);
  CHECK(max(b, a) == a);
  CHECK(lt(b, a).is_const(1));
  CHECK(le(a, b).is_const(0));
  CHECK(ne(a, b).is_const(1));
  // Not decided either way (the ranges overlap): "not proven", and min/max stay nodes whose
  // values are right.
  const Expr W = Expr::symbol("W", 0, std::numeric_limits<int64_t>::max());
  Expr c = W - big - Expr(1);
  Expr d = Expr(big) - W;
  CHECK_FALSE(provably_le(c, d));
  CHECK_FALSE(provably_le(d, c));
  CHECK_FALSE(provably_less(c, d));
  Expr lo = min(c, d);
  Expr hi = max(c, d);
  Expr less = lt(c, d);
  for (int64_t w : {int64_t{0}, big, big + 1, big + big / 2}) {
    int64_t cv = w - big - 1, dv = big - w;
    CHECK(eval_with(lo, {{"W", w}}) == std::min(cv, dv));
    CHECK(eval_with(hi, {{"W", w}}) == std::max(cv, dv));
    CHECK(eval_with(less, {{"W", w}}) == (cv < dv ? 1 : 0));
  }
}

TEST_CASE("bounds of a negative number divided by an unbounded positive divisor", "[expr]") {
  // Found by the expr fuzz target: ceil(-128 / d) for d in [1, inf) is in [-128, 0], but the
  // bounds said [-128, -1] (the floor's limit), so a value of 0 lay outside them.
  Expr d = max(Expr::symbol("A", 1, 769), Expr::symbol("U", 0, expr_detail::kPosInf));
  REQUIRE(d.hi() == expr_detail::kPosInf);
  Expr c = ceildiv(Expr(-128), d);
  CHECK(c.lo() == -128);
  CHECK(c.hi() == 0);
  Expr f = floordiv(Expr(-128), d);
  CHECK(f.lo() == -128);
  CHECK(f.hi() == -1);
  Expr p = ceildiv(Expr(5), d);  // positive: ceil is at least 1
  CHECK(p.lo() == 1);
  CHECK(p.hi() == 5);
}

TEST_CASE("long chains of remainders and divisions simplify in linear time", "[expr]") {
  // Found by the expr fuzz target: each remainder's simplification proved bounds of its
  // operand, which divided it again, so a chain x % A % C % A ... cost about 2^n steps (20
  // levels took 0.5 s; 40 would not finish). Division and remainder are memoized per operand
  // nodes (core/expr/expr.cc memo_div).
  const Expr A = Expr::symbol("A", 1, 769), C = Expr::symbol("C", 3, 5934);
  Expr x = ceildiv(A, Expr(-103)) * Expr(93);
  int64_t a = 500, c = 77;
  auto floor_mod = [](int64_t p, int64_t q) { return ((p % q) + q) % q; };
  int64_t naive = evaluate(x, [&](const std::string& n) -> std::optional<int64_t> {
    return n == "A" ? a : c;
  });  // the start value, from the evaluator; the chain below is checked step by step
  for (int i = 0; i < 40; ++i) {
    x = i % 2 ? mod(x, C) : mod(x * Expr(37), A);
    naive = i % 2 ? floor_mod(naive, c) : floor_mod(naive * 37, a);
    if (i % 8 == 7) x = floordiv(x, Expr(3)) + x;
    if (i % 8 == 7) naive = naive / 3 + naive;
  }
  CHECK(evaluate(x, [&](const std::string& n) -> std::optional<int64_t> {
          return n == "A" ? a : c;
        }) == naive);
}

TEST_CASE("a multiple of a floor division is bounded by its dividend", "[expr]") {
  // A strided slice's end in max pooling after a stride-2 conv: 2 * ((x + 1) // 2) - 1 fits in
  // x + 2 (the padded extent), so the slice needs no clamp.
  const Expr x = floordiv(N + Expr(1), Expr(2));
  const Expr end = Expr(2) * floordiv(x + Expr(1), Expr(2)) - Expr(1);
  CHECK(provably_le(end, x + Expr(2)));
  CHECK(provably_le(end, x));
  CHECK_FALSE(provably_le(end, x - Expr(1)));  // x = 1 gives end 1
  CHECK(provably_le(Expr(3) * floordiv(N, Expr(3)), N));
  CHECK_FALSE(provably_le(N, Expr(3) * floordiv(N, Expr(3))));
}

TEST_CASE("a row-major index over an extent that is a sum divides back into its coordinates",
          "[expr]") {
  // The rows of [B, S + 1] (a ViT's patches and class token, a cache of S + 1 positions)
  // linearized as c0 * (S + 1) + c1, which the polynomial form expands to c0 + c1 + S * c0:
  // a normalization's reduction result is read at (c0, c1), and its row at (L / (S + 1),
  // L % (S + 1)) must be the same, or lowering stops with an internal error.
  const Expr B = Expr::symbol("B", 1, 64), S = Expr::symbol("S", 1, 4096);
  const Expr H = Expr::symbol("H", 1, 4096), W = Expr::symbol("W", 1, 4096);
  const Expr c0 = Expr::index("c0", B);
  for (const Expr& e : {S + 1, S * 2 + 3, floordiv(H, Expr(4)) * floordiv(W, Expr(4)) + 1,
                        H + W}) {
    const Expr c1 = Expr::index("c1", e);
    INFO(e.str());
    const Expr L = c0 * e + c1;
    CHECK(floordiv(L, e) == c0);
    CHECK(mod(L, e) == c1);
    CHECK(floordiv(L * 8 + 5, e * 8) == c0);
  }
  // A remainder that is the dividend itself stays it, and a negative rest is folded back:
  // the last row of [B, S + 1] (x[:, -1]) is c0 * (S + 1) + S.
  CHECK(mod(S, S + 1) == S);
  CHECK(mod(S - 1, S + 1) == S - 1);
  CHECK(floordiv(S, S + 1) == Expr(0));
  CHECK(mod(c0 * (S + 1) + S, S + 1) == S);
  CHECK(floordiv(c0 * (S + 1) + S, S + 1) == c0);
  // Values hold where the rest is not within [0, S + 1): c0 + c1 + S * c0 + S + 7.
  const Expr c1 = Expr::index("c1", S + 1);
  const Expr odd = c0 * (S + 1) + c1 + S + 7;
  for (int64_t s : {1, 2, 5})
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t k = 0; k <= s; ++k) {
        std::map<std::string, int64_t> v = {{"S", s}, {"c0", b}, {"c1", k}};
        int64_t x = b * (s + 1) + k + s + 7;
        REQUIRE(eval_with(floordiv(odd, S + 1), v) == x / (s + 1));
        REQUIRE(eval_with(mod(odd, S + 1), v) == x % (s + 1));
        REQUIRE(eval_with(ceildiv(odd, S + 1), v) == (x + s) / (s + 1));
      }
}

TEST_CASE("a sum with a remainder and its argument negated is a multiple of the divisor",
          "[expr]") {
  // torchvision's Swin pads an image of H rows by (4 - H % 4) % 4 to whole windows: the padded
  // extent H + (-H) % 4 must divide by 4 (the windows view back to the padded image), and
  // H - H % 4 is 4 * (H / 4).
  const Expr H = Expr::symbol("H", 1, 4096), W = Expr::symbol("W", 0, 4096);
  const Expr padded = H + mod(-H, Expr(4));
  CHECK(mod(padded, Expr(4)) == Expr(0));
  CHECK(floordiv(padded, Expr(4)) * 4 == padded);
  CHECK(H - mod(H, Expr(4)) == floordiv(H, Expr(4)) * 4);
  // Over a sum, with a coefficient and a constant: 2 * (H + W + 3 + (-(H + W + 3)) % 7).
  const Expr x = H + W + 3;
  const Expr scaled = x * 2 + mod(-x, Expr(7)) * 2;
  CHECK(mod(scaled, Expr(14)) == Expr(0));
  for (int64_t h : {1, 2, 3, 4, 5, 13, 4096})
    for (int64_t w : {0, 1, 6, 7}) {
      std::map<std::string, int64_t> v = {{"H", h}, {"W", w}};
      INFO("H=" << h << " W=" << w);
      REQUIRE(eval_with(padded, v) == h + ((4 - h % 4) % 4));
      REQUIRE(eval_with(scaled, v) == 2 * (h + w + 3 + (7 - (h + w + 3) % 7) % 7));
      REQUIRE(eval_with(H - mod(H, Expr(4)), v) == h - h % 4);
    }
}

TEST_CASE("a row-major index over an extent that may be 0 divides back into its coordinates",
          "[expr]") {
  // [2, L - 1, 8] (x[:, 1:] of a sequence that may be one long), [2, L // 2, 8], [3, T, 4]
  // with T min 0: where the extent is 0 there is no element, so the division is never taken.
  const Expr L = Expr::symbol("L", 1, 4096), T = Expr::symbol("T", 0, 4096);
  const Expr c0 = Expr::index("c0", Expr(2));
  for (const Expr& e : {L - 1, floordiv(L, Expr(2)), T, T * 3}) {
    INFO(e.str());
    const Expr c1 = Expr::index("c1", e);
    const Expr row = c0 * e + c1;
    CHECK(floordiv(row, e) == c0);
    CHECK(mod(row, e) == c1);
  }
}

TEST_CASE("a sum whose terms share a factor is bounded by the factor times the rest", "[expr]") {
  // A causal LM's shifted logits, [B * (S - 1), V] written B*S - B: at least B, not -B.
  const Expr B = Expr::symbol("B", 1, std::numeric_limits<int64_t>::max() / 4);
  const Expr S = Expr::symbol("S", 2, 32);
  const Expr rows = B * S - B;
  CHECK(rows.lo() == 1);
  CHECK(rows.hi() > 0);
  const Expr H = Expr::symbol("H", 1, 100), W = Expr::symbol("W", 3, 7);
  const Expr e = H * W * 2 - H * 4;  // 2H(W - 2), in [2, 1000]
  CHECK(e.lo() == 2);
  CHECK(e.hi() == 1000);
}

TEST_CASE("a product of shifted symbols, expanded, is bounded from the symbols' lows", "[expr]") {
  // Two sliding windows of 3 (Tensor.unfold over H and W): (H-2)*(W-2) expands to
  // H*W - 2*H - 2*W + 4, whose terms summed apart reach -inf for unbounded H and W.
  const int64_t big = std::numeric_limits<int64_t>::max() / 4;
  const Expr H = Expr::symbol("H", 3, big), W = Expr::symbol("W", 3, big);
  const Expr area = (H - 2) * (W - 2);
  CHECK(area.lo() == 1);
  const Expr count = area * 18;  // what reshape divides back by 18
  CHECK(floordiv(count, Expr(18)).lo() == 1);
  // Bounded symbols give a finite high as well: (A-1)*(C-1) for A, C in [2, 5] is in [1, 16].
  const Expr A = Expr::symbol("A", 2, 5), C = Expr::symbol("C", 2, 5);
  const Expr box = (A - 1) * (C - 1);
  CHECK(box.lo() == 1);
  CHECK(box.hi() == 16);
  // A negative coefficient on an unbounded shift leaves the low where it was (no false proof).
  const Expr falls = H * 2 - H * W;  // H*(2 - W) <= -3 for W >= 3
  CHECK(falls.lo() == std::numeric_limits<int64_t>::min());
}
