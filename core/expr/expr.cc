// Construction of expressions in canonical form (see expr.h).
#include "core/expr/expr.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "core/base/diagnostics.h"
#include "core/expr/expr_node.h"

namespace fuserc {

using namespace expr_detail;

// ---------------------------------------------------------------- integer helpers

namespace expr_detail {

[[noreturn]] static void overflow() {
  throw SizeOverflow("size arithmetic overflows 64-bit integers");
}

int64_t checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) overflow();
  return r;
}
int64_t checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) overflow();
  return r;
}
int64_t checked_neg(int64_t a) {
  if (a == kNegInf) overflow();
  return -a;
}
int64_t floor_div(int64_t a, int64_t b) {
  if (a == kNegInf && b == -1) overflow();
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t ceil_div(int64_t a, int64_t b) {
  if (a == kNegInf && b == -1) overflow();
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) == (b < 0))) ++q;
  return q;
}
int64_t floor_mod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
int64_t sat_add(int64_t a, int64_t b) {
  if (a == kPosInf || b == kPosInf) return (a == kNegInf || b == kNegInf) ? kPosInf : kPosInf;
  if (a == kNegInf || b == kNegInf) return kNegInf;
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return a > 0 ? kPosInf : kNegInf;
  return r;
}
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  bool neg = (a < 0) != (b < 0);
  int64_t r;
  if (a == kPosInf || a == kNegInf || b == kPosInf || b == kNegInf ||
      __builtin_mul_overflow(a, b, &r))
    return neg ? kNegInf : kPosInf;
  return r;
}

}  // namespace expr_detail

// ---------------------------------------------------------------- nodes

namespace {

size_t hash_combine(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

ExprNode leaf(ExprOp op) {
  ExprNode n;
  n.op = op;
  return n;
}

}  // namespace

Expr make_expr_node(ExprNode&& node) {
  size_t h = std::hash<int>()(static_cast<int>(node.op));
  h = hash_combine(h, std::hash<int64_t>()(node.value));
  if (!node.name.empty()) h = hash_combine(h, std::hash<std::string>()(node.name));
  int64_t size = 1;
  int depth = 0;
  for (const auto& a : node.args) {
    h = hash_combine(h, a.hash());
    size = std::min<int64_t>(size + a.node()->size, int64_t{1} << 40);
    depth = std::max(depth, a.node()->depth);
  }
  if (depth >= kMaxExprDepth)
    throw UserError("not supported yet: a size or index expression nested deeper than " +
                    std::to_string(kMaxExprDepth) + " levels");
  node.hash = h;
  node.size = size;
  node.depth = depth + 1;
  return Expr(std::make_shared<const ExprNode>(std::move(node)));
}

Expr::Expr(int64_t value) {
  ExprNode n = leaf(ExprOp::Const);
  n.value = value;
  n.lo = n.hi = value;
  *this = make_expr_node(std::move(n));
}

Expr Expr::symbol(const std::string& name, int64_t lo, int64_t hi) {
  FUSERC_CHECK(!name.empty() && lo <= hi, "bad symbol " + name);
  ExprNode n = leaf(ExprOp::Sym);
  n.name = name;
  n.lo = lo;
  n.hi = hi;
  return make_expr_node(std::move(n));
}

Expr Expr::index(const std::string& name, const Expr& extent) {
  FUSERC_CHECK(!name.empty(), "index variable without a name");
  ExprNode n = leaf(ExprOp::Sym);
  n.name = name;
  n.args = {extent};
  n.lo = 0;
  n.hi = extent.hi() == kPosInf ? kPosInf : std::max<int64_t>(0, extent.hi() - 1);
  return make_expr_node(std::move(n));
}

ExprOp Expr::op() const {
  return n_->op;
}
int64_t Expr::value() const {
  return n_->value;
}
const std::string& Expr::name() const {
  return n_->name;
}
const std::vector<Expr>& Expr::args() const {
  return n_->args;
}
int64_t Expr::lo() const {
  return n_->lo;
}
int64_t Expr::hi() const {
  return n_->hi;
}
size_t Expr::hash() const {
  return n_->hash;
}
int64_t Expr::size() const {
  return n_->size;
}

bool operator==(const Expr& a, const Expr& b) {
  if (a.node() == b.node()) return true;
  if (a.hash() != b.hash()) return false;
  return compare(a, b) == 0;
}

int compare(const Expr& a, const Expr& b) {
  if (a.node() == b.node()) return 0;
  if (a.op() != b.op()) return a.op() < b.op() ? -1 : 1;
  if (a.value() != b.value()) return a.value() < b.value() ? -1 : 1;
  if (int c = a.name().compare(b.name()); c != 0) return c < 0 ? -1 : 1;
  const auto& x = a.args();
  const auto& y = b.args();
  if (x.size() != y.size()) return x.size() < y.size() ? -1 : 1;
  for (size_t i = 0; i < x.size(); ++i)
    if (int c = compare(x[i], y[i]); c != 0) return c;
  return 0;
}

// ---------------------------------------------------------------- polynomials

namespace {

using Monomial = std::vector<Expr>;  // sorted factors

struct Term {
  Monomial factors;
  int64_t coef;
};

struct Poly {
  int64_t constant = 0;
  std::vector<Term> terms;
};

int compare_monomials(const Monomial& a, const Monomial& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = compare(a[i], b[i]); c != 0) return c;
  return 0;
}

Term term_of(const Expr& t) {
  if (t.op() == ExprOp::Mul) return Term{t.args(), t.value()};
  return Term{{t}, 1};
}

Poly to_poly(const Expr& e) {
  Poly p;
  switch (e.op()) {
    case ExprOp::Const: p.constant = e.value(); break;
    case ExprOp::Add:
      p.constant = e.value();
      for (const auto& t : e.args()) p.terms.push_back(term_of(t));
      break;
    default: p.terms.push_back(term_of(e)); break;
  }
  return p;
}

std::pair<int64_t, int64_t> monomial_bounds(const Monomial& m, int64_t coef) {
  int64_t lo = coef, hi = coef;
  if (coef < 0) std::swap(lo, hi);
  for (const auto& f : m) {
    int64_t c[4] = {sat_mul(lo, f.lo()), sat_mul(lo, f.hi()), sat_mul(hi, f.lo()),
                    sat_mul(hi, f.hi())};
    lo = *std::min_element(c, c + 4);
    hi = *std::max_element(c, c + 4);
  }
  return {lo, hi};
}

Expr make_term(const Term& t) {
  if (t.coef == 1 && t.factors.size() == 1) return t.factors[0];
  ExprNode n;
  n.op = ExprOp::Mul;
  n.value = t.coef;
  n.args = t.factors;
  std::tie(n.lo, n.hi) = monomial_bounds(t.factors, t.coef);
  return make_expr_node(std::move(n));
}

std::vector<Term> merge_like_terms(std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) {
    return compare_monomials(a.factors, b.factors) < 0;
  });
  std::vector<Term> merged;
  for (auto& t : terms) {
    if (!merged.empty() && compare_monomials(merged.back().factors, t.factors) == 0) {
      merged.back().coef = checked_add(merged.back().coef, t.coef);
    } else {
      merged.push_back(std::move(t));
    }
  }
  std::vector<Term> nonzero;
  for (auto& t : merged)
    if (t.coef != 0) nonzero.push_back(std::move(t));
  return nonzero;
}

Monomial without_one(const Monomial& m, const Expr& f) {
  Monomial out;
  bool removed = false;
  for (const auto& x : m) {
    if (!removed && x == f) {
      removed = true;
    } else {
      out.push_back(x);
    }
  }
  return out;
}

// Finds, for each wanted term, a distinct term of `terms` (other than `skip`) with the same
// monomial and coefficient; their indices, or nothing.
std::optional<std::vector<size_t>> find_terms(const std::vector<Term>& terms,
                                              const std::vector<Term>& wanted, size_t skip) {
  std::vector<size_t> found;
  for (const auto& w : wanted) {
    bool ok = false;
    for (size_t j = 0; j < terms.size() && !ok; ++j) {
      if (j == skip || std::find(found.begin(), found.end(), j) != found.end()) continue;
      if (terms[j].coef == w.coef && compare_monomials(terms[j].factors, w.factors) == 0) {
        found.push_back(j);
        ok = true;
      }
    }
    if (!ok) return std::nullopt;
  }
  return found;
}

// The identity of delinearized indices: k*E*(x / E) + k*(x % E) == k*x, for any divisor E (a
// sum of symbols too: the product is then either expanded over E's terms or kept whole). E
// must not change sign; when it may be 0 (an extent with min 0), the tensor it delinearizes
// is empty and no element is ever addressed. Finds one such group of terms in `terms` and
// replaces it; returns false when there is none.
bool fold_div_mod_pair(std::vector<Term>& terms, int64_t& constant) {
  for (size_t i = 0; i < terms.size(); ++i) {
    for (const auto& mod_factor : terms[i].factors) {
      if (mod_factor.op() != ExprOp::Mod) continue;
      const Expr& x = mod_factor.args()[0];
      const Expr& e = mod_factor.args()[1];
      if (!(e.lo() >= 0 || e.hi() < 0)) continue;
      Monomial rest = without_one(terms[i].factors, mod_factor);
      const int64_t k = terms[i].coef;
      Expr quotient = floordiv(x, e);
      auto partner = [&](const Monomial& extra, int64_t coef) -> std::optional<Term> {
        Term t{rest, 0};
        t.factors.push_back(quotient);
        for (const auto& f : extra) t.factors.push_back(f);
        std::sort(t.factors.begin(), t.factors.end(), ExprLess());
        if (__builtin_mul_overflow(k, coef, &t.coef)) return std::nullopt;
        return t;
      };
      // The partners of k * E * q * rest: E expanded over its terms, or E kept as a factor.
      std::vector<std::vector<Term>> forms(2);
      bool ok = true;
      Poly pe = to_poly(e);
      if (pe.constant != 0) {
        auto t = partner({}, pe.constant);
        ok = ok && t.has_value();
        if (t) forms[0].push_back(*t);
      }
      for (const auto& et : pe.terms) {
        auto t = partner(et.factors, et.coef);
        ok = ok && t.has_value();
        if (t) forms[0].push_back(*t);
      }
      if (!ok) forms[0].clear();
      if (e.op() == ExprOp::Add)
        if (auto t = partner({e}, 1)) forms[1].push_back(*t);
      for (const auto& wanted : forms) {
        if (wanted.empty()) continue;
        auto found = find_terms(terms, wanted, i);
        if (!found) continue;
        // Replace them all by k * rest * x.
        Poly px = to_poly(x);
        std::vector<Term> out;
        for (size_t t = 0; t < terms.size(); ++t)
          if (t != i && std::find(found->begin(), found->end(), t) == found->end())
            out.push_back(terms[t]);
        if (rest.empty())
          constant = checked_add(constant, checked_mul(k, px.constant));
        else if (px.constant != 0)
          out.push_back(Term{rest, checked_mul(k, px.constant)});
        for (const auto& xt : px.terms) {
          Monomial m = rest;
          for (const auto& f : xt.factors) m.push_back(f);
          std::sort(m.begin(), m.end(), ExprLess());
          out.push_back(Term{m, checked_mul(k, xt.coef)});
        }
        terms = merge_like_terms(std::move(out));
        return true;
      }
    }
  }
  return false;
}

// The identity k*(x % c) - k*x == -k*c*(x // c) (c a positive constant): a sum that holds a
// remainder and its argument negated is a multiple of c. A pad to the next multiple,
// H + (-H) % 4 (torchvision's Swin pads each image to whole windows), is then -4*((-H) // 4),
// which 4 divides, so its windows view back to the padded image. Finds one such group in
// `terms` and replaces it; returns false when there is none.
Poly scale(Poly p, int64_t c);

bool fold_mod_with_its_argument(std::vector<Term>& terms, int64_t& constant) {
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    if (t.factors.size() != 1 || t.factors[0].op() != ExprOp::Mod) continue;
    const Expr& x = t.factors[0].args()[0];
    const Expr& c = t.factors[0].args()[1];
    if (!c.is_const() || c.value() <= 0) continue;
    const int64_t k = t.coef;
    const Poly px = to_poly(x);
    if (px.terms.empty()) continue;
    std::vector<Term> wanted;
    int64_t kc = 0, kx = 0;
    bool ok = !__builtin_mul_overflow(k, c.value(), &kc) &&
              !__builtin_mul_overflow(k, px.constant, &kx);
    for (const auto& xt : px.terms) {
      Term w{xt.factors, 0};
      ok = ok && !__builtin_mul_overflow(-k, xt.coef, &w.coef);
      wanted.push_back(std::move(w));
    }
    if (!ok) continue;
    auto found = find_terms(terms, wanted, i);
    if (!found) continue;
    int64_t new_constant;
    if (__builtin_add_overflow(constant, kx, &new_constant) || kc == kNegInf) continue;
    std::vector<Term> out;
    for (size_t j = 0; j < terms.size(); ++j)
      if (j != i && std::find(found->begin(), found->end(), j) == found->end())
        out.push_back(terms[j]);
    const Poly q = scale(to_poly(floordiv(x, c)), -kc);
    for (const auto& qt : q.terms) out.push_back(qt);
    constant = checked_add(new_constant, q.constant);
    terms = merge_like_terms(std::move(out));
    return true;
  }
  return false;
}

// Tighter bounds for a sum that holds a*X + b*(X // c) (c a positive constant, X any
// polynomial with finite bounds): with r = X mod c in [0, c), the pair is exactly
// ((a*c + b)*X - b*r) / c, bounded at the ends of X and r. Summing the two terms' intervals
// apart loses that they move together: N - N//2 would reach -N/2, and 2*((H+1)//2) - H
// (which is H % 2 + ... in [0, 1]) would reach -H. Narrows [lo, hi]; never widens it.
void refine_floordiv_pair_bounds(const std::vector<Term>& terms, int64_t constant, int64_t& lo,
                                 int64_t& hi) {
  __extension__ using I = __int128;
  auto finite = [](int64_t v) { return v != kNegInf && v != kPosInf; };
  for (size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    if (t.factors.size() != 1 || t.factors[0].op() != ExprOp::FloorDiv) continue;
    const Expr& x = t.factors[0].args()[0];
    const Expr& divisor = t.factors[0].args()[1];
    if (divisor.op() != ExprOp::Const || divisor.value() <= 0) continue;
    if (!finite(x.lo()) || !finite(x.hi())) continue;
    const Poly px = to_poly(x);
    if (px.terms.empty()) continue;
    // a, from the term of this sum with the monomial of X's first term.
    std::optional<int64_t> a;
    for (size_t j = 0; j < terms.size() && !a; ++j)
      if (j != i && compare_monomials(terms[j].factors, px.terms[0].factors) == 0 &&
          terms[j].coef % px.terms[0].coef == 0)
        a = terms[j].coef / px.terms[0].coef;
    if (!a) continue;
    std::vector<Term> wanted;
    bool ok = true;
    for (const auto& xt : px.terms) {
      Term w{xt.factors, 0};
      ok = ok && !__builtin_mul_overflow(*a, xt.coef, &w.coef);
      wanted.push_back(std::move(w));
    }
    if (!ok) continue;
    auto found = find_terms(terms, wanted, i);
    if (!found) continue;
    // The rest of the sum: its constant (less a times X's) and the other terms' bounds.
    I rest_lo = I(constant) - I(*a) * I(px.constant), rest_hi = rest_lo;
    for (size_t j = 0; j < terms.size() && ok; ++j) {
      if (j == i || std::find(found->begin(), found->end(), j) != found->end()) continue;
      auto [tlo, thi] = monomial_bounds(terms[j].factors, terms[j].coef);
      ok = finite(tlo) && finite(thi);
      rest_lo += tlo;
      rest_hi += thi;
    }
    if (!ok) continue;
    const I c = divisor.value(), b = t.coef, k = I(*a) * c + b;
    I vmin = 0, vmax = 0;
    bool first = true;
    for (I xv : {I(x.lo()), I(x.hi())})
      for (I r : {I(0), c - 1}) {
        const I v = k * xv - b * r;
        vmin = first || v < vmin ? v : vmin;
        vmax = first || v > vmax ? v : vmax;
        first = false;
      }
    // ceil(vmin / c) and floor(vmax / c), c > 0.
    const I pair_lo = vmin >= 0 ? (vmin + c - 1) / c : -((-vmin) / c);
    const I pair_hi = vmax >= 0 ? vmax / c : -((-vmax + c - 1) / c);
    const I new_lo = rest_lo + pair_lo, new_hi = rest_hi + pair_hi;
    const I min64 = I(kNegInf) + 1, max64 = I(kPosInf) - 1;
    if (new_lo > I(lo) && new_lo >= min64 && new_lo <= max64) lo = static_cast<int64_t>(new_lo);
    if (new_hi < I(hi) && new_hi >= min64 && new_hi <= max64) hi = static_cast<int64_t>(new_hi);
  }
}

// Tighter bounds for a sum whose terms share a factor F >= 0 (and no constant): F times the
// bounds of the rest. Summing the terms' intervals apart loses that they move together:
// B*S - B (a causal LM's shifted logits, [B*(S-1), V]) would reach -B, where it is at least B
// for S >= 2. Narrows [lo, hi]; never widens it.
void refine_common_factor_bounds(const std::vector<Term>& terms, int64_t constant, int64_t& lo,
                                 int64_t& hi) {
  if (constant != 0 || terms.size() < 2) return;
  for (const Expr& f : terms[0].factors) {
    if (f.lo() < 0) continue;
    bool shared = true;
    for (const auto& t : terms)
      shared = shared && std::find(t.factors.begin(), t.factors.end(), f) != t.factors.end();
    if (!shared) continue;
    int64_t rlo = 0, rhi = 0;
    for (const auto& t : terms) {
      auto [a, b] = monomial_bounds(without_one(t.factors, f), t.coef);
      rlo = sat_add(rlo, a);
      rhi = sat_add(rhi, b);
    }
    const int64_t c[4] = {sat_mul(f.lo(), rlo), sat_mul(f.lo(), rhi), sat_mul(f.hi(), rlo),
                          sat_mul(f.hi(), rhi)};
    lo = std::max(lo, *std::min_element(c, c + 4));
    hi = std::min(hi, *std::max_element(c, c + 4));
  }
}

// Tighter bounds for a polynomial in atoms with finite lower bounds (symbols, mostly): each
// atom written as its lo plus a shift y in [0, hi - lo], the polynomial expanded in the
// shifts. A monomial of y with a coefficient c >= 0 adds [0, c * (product of the shifts'
// highs)], one with c < 0 the mirror, and the constant is the value at every atom's lo.
// Summing the terms' intervals apart loses that they move together: (H-2)*(W-2) expanded,
// H*W - 2*H - 2*W + 4, would reach -inf for unbounded H and W; shifted from H, W >= 3 it is
// yH*yW + yH + yW + 1, at least 1. Terms of more than 6 factors are left out (the expansion
// doubles per factor). Runs where lo is below 0, so that an extent proves non-negative.
// Narrows [lo, hi]; never widens it.
void refine_shifted_bounds(const std::vector<Term>& terms, int64_t constant, int64_t& lo,
                           int64_t& hi) {
  __extension__ using I = __int128;
  constexpr int kMaxFactors = 6;
  if (lo >= 0 || terms.size() < 2 || terms.size() > 64) return;  // only a lo below 0 matters
  std::vector<Expr> atoms;  // distinct factors, in first-seen order
  for (const auto& t : terms) {
    if (t.factors.size() > kMaxFactors) return;
    for (const auto& f : t.factors) {
      if (f.lo() == kNegInf || f.lo() == kPosInf || f.lo() < -(int64_t{1} << 40) ||
          f.lo() > (int64_t{1} << 40))
        return;
      if (std::find(atoms.begin(), atoms.end(), f) == atoms.end()) atoms.push_back(f);
    }
  }
  if (atoms.size() > 16) return;
  // A monomial of shifts: the count of each atom's shift, packed 4 bits per atom.
  std::map<uint64_t, I> coef;
  I base = constant;
  const I limit = I(1) << 100;
  for (const auto& t : terms) {
    // Expand coef * prod(lo_f + y_f) over the term's factors: 2^k products.
    const size_t k = t.factors.size();
    for (uint32_t pick = 0; pick < (1u << k); ++pick) {
      I c = t.coef;
      uint64_t key = 0;
      for (size_t j = 0; j < k; ++j) {
        const size_t a = static_cast<size_t>(
            std::find(atoms.begin(), atoms.end(), t.factors[j]) - atoms.begin());
        if (pick & (1u << j)) {
          key += uint64_t{1} << (4 * a);
        } else {
          c *= t.factors[j].lo();
        }
        if (c > limit || c < -limit) return;
      }
      if (key == 0)
        base += c;
      else
        coef[key] += c;
      if (base > limit || base < -limit) return;
    }
  }
  // Each monomial of shifts lies in [0, prod of the shifts' highs] (or [0, inf)).
  I new_lo = base, new_hi = base;
  bool lo_finite = true, hi_finite = true;
  for (const auto& [key, c] : coef) {
    if (c == 0) continue;
    I top = 1;
    bool bounded = true;
    for (size_t a = 0; a < atoms.size() && bounded; ++a) {
      const uint64_t power = (key >> (4 * a)) & 15;
      if (power == 0) continue;
      if (atoms[a].hi() == kPosInf) {
        bounded = false;
        break;
      }
      const I width = I(atoms[a].hi()) - I(atoms[a].lo());
      for (uint64_t e = 0; e < power && bounded; ++e) {
        top *= width;
        bounded = top <= limit;
      }
    }
    if (c > 0) {
      if (!bounded) hi_finite = false;
      else new_hi += c * top;
    } else {
      if (!bounded) lo_finite = false;
      else new_lo += c * top;
    }
  }
  const I min64 = kNegInf, max64 = kPosInf;
  if (lo_finite && new_lo > I(lo) && new_lo > min64 && new_lo < max64)
    lo = static_cast<int64_t>(new_lo);
  if (hi_finite && new_hi < I(hi) && new_hi > min64 && new_hi < max64)
    hi = static_cast<int64_t>(new_hi);
}

Expr from_poly(Poly p) {
  std::vector<Term> merged = merge_like_terms(std::move(p.terms));
  while (fold_div_mod_pair(merged, p.constant) || fold_mod_with_its_argument(merged, p.constant)) {
  }
  std::vector<Expr> terms;
  for (const auto& t : merged)
    if (t.coef != 0) terms.push_back(make_term(t));
  if (terms.empty()) return Expr(p.constant);
  if (terms.size() == 1 && p.constant == 0) return terms[0];
  ExprNode n;
  n.op = ExprOp::Add;
  n.value = p.constant;
  n.lo = n.hi = p.constant;
  for (const auto& t : terms) {
    n.lo = sat_add(n.lo, t.lo());
    n.hi = sat_add(n.hi, t.hi());
  }
  refine_floordiv_pair_bounds(merged, p.constant, n.lo, n.hi);
  refine_common_factor_bounds(merged, p.constant, n.lo, n.hi);
  refine_shifted_bounds(merged, p.constant, n.lo, n.hi);
  n.args = std::move(terms);
  return make_expr_node(std::move(n));
}

Poly scale(Poly p, int64_t c) {
  p.constant = checked_mul(p.constant, c);
  for (auto& t : p.terms) t.coef = checked_mul(t.coef, c);
  return p;
}

Monomial merge_factors(const Monomial& a, const Monomial& b) {
  Monomial out;
  out.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out), ExprLess());
  return out;
}

// Divides every term of p exactly by the monomial `m` with coefficient `c`, if possible.
std::optional<Poly> divide_exactly(const Poly& p, const Monomial& m, int64_t c) {
  if (c == 0) return std::nullopt;
  Poly q;
  if (p.constant != 0) {
    if (!m.empty() || p.constant % c != 0) return std::nullopt;
    q.constant = p.constant / c;
  }
  for (const auto& t : p.terms) {
    if (t.coef % c != 0) return std::nullopt;
    Monomial rest;
    size_t j = 0;
    for (const auto& f : t.factors) {
      if (j < m.size() && f == m[j]) {
        ++j;
      } else {
        rest.push_back(f);
      }
    }
    if (j != m.size()) return std::nullopt;
    int64_t coef = t.coef / c;
    if (rest.empty()) {
      q.constant = checked_add(q.constant, coef);
    } else {
      q.terms.push_back(Term{rest, coef});
    }
  }
  return q;
}

// Splits p (for a positive constant divisor c) into the part divisible by c, already
// divided, and the rest: p == c * divisible + rest, rest's constant in [0, c).
std::pair<Poly, Poly> split_divisible(const Poly& p, int64_t c) {
  Poly div, rest;
  div.constant = floor_div(p.constant, c);
  rest.constant = floor_mod(p.constant, c);
  for (const auto& t : p.terms) {
    if (t.coef % c == 0) {
      div.terms.push_back(Term{t.factors, t.coef / c});
    } else {
      rest.terms.push_back(t);
    }
  }
  return {div, rest};
}

bool has_divisible_part(const Poly& div) {
  return div.constant != 0 || !div.terms.empty();
}

Expr make_binary(ExprOp op, const Expr& a, const Expr& b, int64_t lo, int64_t hi) {
  ExprNode n;
  n.op = op;
  n.args = {a, b};
  n.lo = lo;
  n.hi = hi;
  return make_expr_node(std::move(n));
}

// Bounds of floor(a / b) and ceil(a / b) when b's values are all positive.
std::pair<int64_t, int64_t> div_bounds(const Expr& a, const Expr& b, bool ceil) {
  if (b.lo() <= 0) return {kNegInf, kPosInf};
  auto d = [&](int64_t x, int64_t y) {
    if (x == kPosInf || x == kNegInf) return x;
    // y unbounded: x / y tends to 0 from x's side; a negative x floors to -1, ceils to 0.
    if (y == kPosInf) return x >= 0 ? int64_t{ceil && x > 0 ? 1 : 0} : int64_t{ceil ? 0 : -1};
    return ceil ? ceil_div(x, y) : floor_div(x, y);
  };
  int64_t lo = a.lo() >= 0 ? d(a.lo(), b.hi()) : d(a.lo(), b.lo());
  int64_t hi = a.hi() >= 0 ? d(a.hi(), b.lo()) : d(a.hi(), b.hi());
  return {lo, hi};
}

}  // namespace

namespace {

// An expression whose bounds leave one value (e.g. an index variable of extent 1) is that
// constant.
Expr pinned(const Expr& e) {
  if (e.is_const() || e.lo() != e.hi() || e.lo() == kNegInf || e.lo() == kPosInf) return e;
  return Expr(e.lo());
}

}  // namespace

Expr operator+(const Expr& a_in, const Expr& b_in) {
  Expr a = pinned(a_in), b = pinned(b_in);
  if (a.is_const() && b.is_const()) return Expr(checked_add(a.value(), b.value()));
  if (a.is_const(0)) return b;
  if (b.is_const(0)) return a;
  Poly p = to_poly(a);
  Poly q = to_poly(b);
  p.constant = checked_add(p.constant, q.constant);
  for (auto& t : q.terms) p.terms.push_back(std::move(t));
  return from_poly(std::move(p));
}

Expr operator-(const Expr& a) {
  if (a.is_const()) return Expr(checked_neg(a.value()));
  return from_poly(scale(to_poly(a), -1));
}

Expr operator-(const Expr& a, const Expr& b) {
  return a + (-b);
}

Expr operator*(const Expr& a_in, const Expr& b_in) {
  Expr a = pinned(a_in), b = pinned(b_in);
  if (a.is_const() && b.is_const()) return Expr(checked_mul(a.value(), b.value()));
  if (a.is_const(0) || b.is_const(0)) return Expr(0);
  if (a.is_const(1)) return b;
  if (b.is_const(1)) return a;
  if (a.is_const()) return from_poly(scale(to_poly(b), a.value()));
  if (b.is_const()) return from_poly(scale(to_poly(a), b.value()));
  Poly p = to_poly(a);
  Poly q = to_poly(b);
  size_t np = p.terms.size() + (p.constant != 0);
  size_t nq = q.terms.size() + (q.constant != 0);
  if (np * nq > 64) {
    // Too large to expand: keep the product of the two sums as one term.
    Monomial m = {a, b};
    std::sort(m.begin(), m.end(), ExprLess());
    return make_term(Term{m, 1});
  }
  Poly r;
  r.constant = checked_mul(p.constant, q.constant);
  for (const auto& t : p.terms) {
    if (q.constant != 0) r.terms.push_back(Term{t.factors, checked_mul(t.coef, q.constant)});
    for (const auto& u : q.terms)
      r.terms.push_back(Term{merge_factors(t.factors, u.factors), checked_mul(t.coef, u.coef)});
  }
  if (p.constant != 0)
    for (const auto& u : q.terms)
      r.terms.push_back(Term{u.factors, checked_mul(u.coef, p.constant)});
  return from_poly(std::move(r));
}

Expr product(const std::vector<Expr>& factors) {
  Expr r(1);
  for (const auto& f : factors) r = r * f;
  return r;
}

namespace {

// An upper bound of a polynomial that is nondecreasing in each index variable (every term has a
// positive coefficient and only nonnegative factors): index variables replaced by extent - 1.
std::optional<Expr> index_upper_bound(const Expr& a) {
  Poly p = to_poly(a);
  Expr ub(p.constant);
  for (const auto& t : p.terms) {
    if (t.coef <= 0) return std::nullopt;
    Expr term(t.coef);
    for (const auto& f : t.factors) {
      if (f.lo() < 0) return std::nullopt;
      term = term * (f.is_index() ? f.args()[0] - Expr(1) : f);
    }
    ub = ub + term;
  }
  return ub;
}

// Splits `a` into (quotient, rest) with a == quotient * b + rest, where quotient collects the
// terms divisible by the monomial b (b not a sum).
std::pair<Poly, Poly> split_divisible_by_monomial(const Poly& a, const Expr& b) {
  Term bt = term_of(b);
  Poly div, rest;
  rest.constant = a.constant;
  for (const auto& t : a.terms) {
    Poly single;
    single.terms.push_back(t);
    if (auto q = divide_exactly(single, bt.factors, bt.coef)) {
      div.constant = checked_add(div.constant, q->constant);
      for (auto& x : q->terms) div.terms.push_back(x);
    } else {
      rest.terms.push_back(t);
    }
  }
  return {div, rest};
}

// Splits `a` by the sum `b` (a == q * b + r), where it shortens a: each term of a divisible by
// b's leading term (the one of most factors; not a constant) adds term / lead to q and
// subtracts (term / lead) * b from r, so that c0 + c1 + c0 * X divided by X + 1 is
// c0 rest c1 (a row-major index over a [B, X + 1] domain, split again). None where no term
// divides or r is not shorter than a (then nothing is gained and the caller stops).
std::optional<std::pair<Expr, Expr>> split_divisible_by_sum(const Expr& a, const Expr& b) {
  Poly bp = to_poly(b);
  const Term* lead = nullptr;
  for (const auto& t : bp.terms)
    if (!lead || t.factors.size() > lead->factors.size()) lead = &t;
  if (!lead || lead->factors.empty()) return std::nullopt;
  Poly ap = to_poly(a);
  Poly q;
  for (const auto& t : ap.terms) {
    Poly single;
    single.terms.push_back(t);
    if (auto m = divide_exactly(single, lead->factors, lead->coef)) {
      q.constant = checked_add(q.constant, m->constant);
      for (auto& x : m->terms) q.terms.push_back(x);
    }
  }
  if (!has_divisible_part(q)) return std::nullopt;
  try {
    Expr qe = from_poly(q);
    Expr r = a - qe * b;
    if (to_poly(r).terms.size() >= ap.terms.size()) return std::nullopt;
    return std::make_pair(qe, r);
  } catch (const SizeOverflow&) {
    return std::nullopt;  // q * b overflows where a and b do not: no split, not an error
  }
}

// A proof's own arithmetic (b - a, b + 1) may overflow where a and b themselves are fine (a
// bound near 2^62 on each side): that step then proves nothing, and the answer is "not proven"
// rather than the user error the overflow is elsewhere. False (not proven) is always sound.
template <typename F>
bool proven(F&& f) {
  try {
    return f();
  } catch (const SizeOverflow&) {
    return false;
  }
}

}  // namespace

bool provably_less(const Expr& a, const Expr& b) {
  if (a.hi() < b.lo()) return true;
  if (proven([&] { return (b - a).lo() >= 1; })) return true;
  if (a.op() == ExprOp::Mod && a.args()[1] == b && b.lo() > 0) return true;
  if (a.lo() >= 0) {
    if (proven([&] {
          auto ub = index_upper_bound(a);
          return ub && *ub != a && (b - *ub).lo() >= 1;
        }))
      return true;
  }
  return false;
}

namespace {

// A lower bound of `e` in which each term m * (u // c), c > 0 a constant dividing m, is
// replaced by the linear bound it is at least (u // c lies in [(u - c + 1) / c, u / c]):
// (m/c) * u - (m/c) * (c - 1) for m > 0, (m/c) * u for m < 0. Proves that a strided slice's
// end, c * ((x + c - 1) // c) - 1 and the like, stays within x + c. None when no term is such.
std::optional<Expr> floordiv_linear_lower_bound(const Expr& e) {
  std::vector<Expr> terms = e.op() == ExprOp::Add ? e.args() : std::vector<Expr>{e};
  Expr sum(e.op() == ExprOp::Add ? e.value() : 0);
  bool changed = false;
  for (const Expr& t : terms) {
    int64_t m = 1;
    Expr fd = t;
    if (t.op() == ExprOp::Mul && t.args().size() == 1) {
      m = t.value();
      fd = t.args()[0];
    }
    if (fd.op() == ExprOp::FloorDiv && fd.args()[1].is_const() && fd.args()[1].value() > 0 &&
        m % fd.args()[1].value() == 0) {
      const int64_t c = fd.args()[1].value(), q = m / c;
      sum = sum + Expr(q) * fd.args()[0] - (m > 0 ? Expr(q * (c - 1)) : Expr(0));
      changed = true;
    } else {
      sum = sum + t;
    }
  }
  if (!changed) return std::nullopt;
  return sum;
}

bool le_within(const Expr& a, const Expr& b, int depth) {
  if (a == b || (a.hi() < kPosInf && a.hi() <= b.lo())) return true;
  if (proven([&] { return (b - a).lo() >= 0; })) return true;
  if (proven([&] {
        auto l = floordiv_linear_lower_bound(b - a);
        return l && l->lo() >= 0;
      }))
    return true;
  if (proven([&] { return provably_less(a, b + Expr(1)); })) return true;
  if (depth >= 4) return false;
  switch (a.op()) {
    case ExprOp::Max:
      return le_within(a.args()[0], b, depth + 1) && le_within(a.args()[1], b, depth + 1);
    case ExprOp::Min:
      return le_within(a.args()[0], b, depth + 1) || le_within(a.args()[1], b, depth + 1);
    case ExprOp::FloorDiv:
    case ExprOp::CeilDiv:
      // x / c <= x for x >= 0 and c >= 1
      if (a.args()[1].lo() >= 1 && a.args()[0].lo() >= 0 && le_within(a.args()[0], b, depth + 1))
        return true;
      break;
    default: break;
  }
  switch (b.op()) {
    case ExprOp::Min:
      return le_within(a, b.args()[0], depth + 1) && le_within(a, b.args()[1], depth + 1);
    case ExprOp::Max:
      return le_within(a, b.args()[0], depth + 1) || le_within(a, b.args()[1], depth + 1);
    default: break;
  }
  return false;
}

}  // namespace

bool provably_le(const Expr& a, const Expr& b) {
  return le_within(a, b, 0);
}

namespace {

// Division and remainder are pure, and simplifying one proves bounds of its operands, which
// divides again: without a memo a chain of n remainders cost about 2^n steps (x % A % C % A ...
// took 0.5 s at 20 levels; found by the expr fuzz target). A per-thread table keeps each
// (op, a, b) computed once. Keys are the operands' nodes themselves, not structural equality:
// two symbols of one name may carry other bounds (another graph), and bounds decide results.
struct DivKey {
  int op;
  Expr a, b;
  bool operator==(const DivKey& o) const {
    return op == o.op && a.node() == o.a.node() && b.node() == o.b.node();
  }
};
struct DivKeyHash {
  size_t operator()(const DivKey& k) const {
    return hash_combine(hash_combine(static_cast<size_t>(k.op),
                                     std::hash<const void*>()(k.a.node())),
                        std::hash<const void*>()(k.b.node()));
  }
};
constexpr size_t kDivMemoEntries = 4096;  // cleared when full: the table only saves time

template <typename F>
Expr memo_div(int op, const Expr& a, const Expr& b, F&& compute) {
  thread_local std::unordered_map<DivKey, Expr, DivKeyHash> memo;
  if (auto it = memo.find(DivKey{op, a, b}); it != memo.end()) return it->second;
  Expr r = compute();  // may recurse into memo_div; no iterator is held across it
  if (memo.size() >= kDivMemoEntries) memo.clear();
  memo.emplace(DivKey{op, a, b}, r);
  return r;
}

Expr floordiv_uncached(const Expr& a, const Expr& b);
Expr ceildiv_uncached(const Expr& a, const Expr& b);
Expr mod_uncached(const Expr& a, const Expr& b);

}  // namespace

Expr floordiv(const Expr& a, const Expr& b) {
  return memo_div(0, a, b, [&] { return floordiv_uncached(a, b); });
}

Expr ceildiv(const Expr& a, const Expr& b) {
  return memo_div(1, a, b, [&] { return ceildiv_uncached(a, b); });
}

Expr mod(const Expr& a, const Expr& b) {
  return memo_div(2, a, b, [&] { return mod_uncached(a, b); });
}

namespace {

Expr floordiv_uncached(const Expr& a, const Expr& b) {
  if (b.is_const(0)) throw UserError("division by zero in size expression " + a.str() + " / 0");
  if (a.is_const() && b.is_const()) return Expr(floor_div(a.value(), b.value()));
  if (a.is_const(0) || b.is_const(1)) return a;
  if (b.is_const(-1)) return -a;
  if (b.is_const() && b.value() > 0) {
    int64_t c = b.value();
    auto [div, rest] = split_divisible(to_poly(a), c);
    if (has_divisible_part(div)) return from_poly(div) + floordiv(from_poly(rest), b);
    if (a.lo() >= 0 && provably_less(a, b)) return Expr(0);
    if (a.op() == ExprOp::FloorDiv && a.args()[1].is_const() && a.args()[1].value() > 0)
      return floordiv(a.args()[0], Expr(checked_mul(a.args()[1].value(), c)));
  } else if (!b.is_const()) {
    if (a == b && b.lo() > 0) return Expr(1);
    if (b.op() != ExprOp::Add && b.lo() >= 0) {
      auto [div, rest] = split_divisible_by_monomial(to_poly(a), b);
      if (has_divisible_part(div)) return from_poly(div) + floordiv(from_poly(rest), b);
    }
    // a in [0, b): 0. Also where b may be 0: then no value of a is in range (a is, e.g., an
    // index of extent b), so the expression is never evaluated.
    if (a.lo() >= 0 && b.lo() >= 0 && provably_less(a, b)) return Expr(0);
    if (b.op() == ExprOp::Add && b.lo() >= 0)
      if (auto qr = split_divisible_by_sum(a, b)) return qr->first + floordiv(qr->second, b);
    if (a.op() == ExprOp::FloorDiv && a.args()[1].lo() > 0 && b.lo() > 0)
      return floordiv(a.args()[0], a.args()[1] * b);
  }
  auto [lo, hi] = div_bounds(a, b, false);
  return make_binary(ExprOp::FloorDiv, a, b, lo, hi);
}

Expr ceildiv_uncached(const Expr& a, const Expr& b) {
  if (b.is_const(0))
    throw UserError("division by zero in size expression ceildiv(" + a.str() + ", 0)");
  if (a.is_const() && b.is_const()) return Expr(ceil_div(a.value(), b.value()));
  if (a.is_const(0) || b.is_const(1)) return a;
  if (b.is_const() && b.value() > 0) {
    int64_t c = b.value();
    auto [div, rest] = split_divisible(to_poly(a), c);
    if (has_divisible_part(div)) return from_poly(div) + ceildiv(from_poly(rest), b);
    if (a.lo() >= 1 && a.hi() <= c) return Expr(1);
    if (a.lo() > -c && a.hi() <= 0) return Expr(0);
    int64_t cc;
    if (a.op() == ExprOp::CeilDiv && a.args()[1].is_const() && a.args()[1].value() > 0 &&
        !__builtin_mul_overflow(a.args()[1].value(), c, &cc))
      return ceildiv(a.args()[0], Expr(cc));  // ceil(ceil(x / p) / c) == ceil(x / (p * c))
  } else if (!b.is_const()) {
    if (a == b && b.lo() > 0) return Expr(1);
    if (b.op() != ExprOp::Add && b.lo() >= 0) {
      auto [div, rest] = split_divisible_by_monomial(to_poly(a), b);
      if (has_divisible_part(div)) return from_poly(div) + ceildiv(from_poly(rest), b);
    }
    if (b.op() == ExprOp::Add && b.lo() >= 0)
      if (auto qr = split_divisible_by_sum(a, b)) return qr->first + ceildiv(qr->second, b);
    if (b.lo() > 0 && a.lo() >= 1 && (a.hi() <= b.lo() || provably_less(a - Expr(1), b)))
      return Expr(1);
  }
  auto [lo, hi] = div_bounds(a, b, true);
  return make_binary(ExprOp::CeilDiv, a, b, lo, hi);
}

Expr mod_uncached(const Expr& a, const Expr& b) {
  if (b.is_const(0)) throw UserError("division by zero in size expression " + a.str() + " % 0");
  if (a.is_const() && b.is_const()) return Expr(floor_mod(a.value(), b.value()));
  if (b.is_const(1) || b.is_const(-1) || a.is_const(0)) return Expr(0);
  if (b.is_const() && b.value() > 0) {
    int64_t c = b.value();
    auto [div, rest] = split_divisible(to_poly(a), c);
    if (has_divisible_part(div)) return mod(from_poly(rest), b);
    if (a.lo() >= 0 && provably_less(a, b)) return a;
    if (a.op() == ExprOp::Mod && a.args()[1].is_const() && a.args()[1].value() > 0 &&
        a.args()[1].value() % c == 0)
      return mod(a.args()[0], b);
    int64_t hi = c - 1;
    if (a.lo() >= 0) hi = std::min(hi, a.hi());
    return make_binary(ExprOp::Mod, a, b, 0, hi);
  }
  if (!b.is_const()) {
    if (a == b) return Expr(0);
    if (b.op() != ExprOp::Add && b.lo() >= 0) {
      auto [div, rest] = split_divisible_by_monomial(to_poly(a), b);
      if (has_divisible_part(div)) return mod(from_poly(rest), b);
    }
    if (b.lo() >= 0 && a.lo() >= 0 && provably_less(a, b)) return a;  // as in floordiv
    // The rest may be negative (S by S + 1 leaves -1): where its quotient is a number k, the
    // remainder is rest - k * b (S), not an opaque remainder of a negative number.
    if (b.op() == ExprOp::Add && b.lo() >= 0)
      if (auto qr = split_divisible_by_sum(a, b)) {
        Expr k = floordiv(qr->second, b);
        if (k.lo() == k.hi()) return qr->second - Expr(k.lo()) * b;
        return mod(qr->second, b);
      }
    if (b.lo() > 0) {
      int64_t hi = b.hi() == kPosInf ? kPosInf : b.hi() - 1;
      if (a.lo() >= 0) hi = std::min(hi, a.hi());
      return make_binary(ExprOp::Mod, a, b, 0, hi);
    }
  }
  return make_binary(ExprOp::Mod, a, b, kNegInf, kPosInf);
}

}  // namespace

namespace {

// min (is_min) or max of a and b, decided by bounds where possible.
// `e` as m + k with m a min (is_min) or max node (a term of e), if it has one.
std::optional<std::pair<Expr, Expr>> extremum_plus(const Expr& e, bool is_min) {
  ExprOp want = is_min ? ExprOp::Min : ExprOp::Max;
  if (e.op() == want) return std::make_pair(e, Expr(0));
  if (e.op() == ExprOp::Add)
    for (const auto& t : e.args())
      if (t.op() == want) return std::make_pair(t, e - t);
  return std::nullopt;
}

Expr min_max(const Expr& a, const Expr& b, bool is_min) {
  if (a.is_const() && b.is_const())
    return Expr(is_min ? std::min(a.value(), b.value()) : std::max(a.value(), b.value()));
  if (a == b) return a;
  int64_t dlo = kNegInf, dhi = kPosInf;  // bounds of a - b (unknown where that overflows)
  try {
    Expr d = a - b;
    dlo = d.lo();
    dhi = d.hi();
  } catch (const SizeOverflow&) {
  }
  if (dhi <= 0) return is_min ? a : b;  // a <= b everywhere
  if (dlo >= 0) return is_min ? b : a;  // a >= b everywhere
  if (provably_le(a, b)) return is_min ? a : b;
  if (provably_le(b, a)) return is_min ? b : a;
  // max(max(x, y) + k, z) == max(x + k, z) when y + k <= z (min alike), so that clamps of
  // clamps (slices of slices) stay flat.
  for (int side = 0; side < 2; ++side) {
    const Expr& e = side == 0 ? a : b;
    const Expr& z = side == 0 ? b : a;
    auto mk = extremum_plus(e, is_min);
    if (!mk) continue;
    const Expr& m = mk->first;
    const Expr& k = mk->second;
    for (int i = 0; i < 2; ++i) {
      if (proven([&] {
            Expr dropped = m.args()[1 - i] + k;
            return is_min ? provably_le(z, dropped) : provably_le(dropped, z);
          }))
        return min_max(m.args()[i] + k, z, is_min);
    }
  }
  // Commutative: canonical argument order, with a constant written last.
  bool swap = b.is_const() ? false : a.is_const() ? true : compare(a, b) > 0;
  const Expr& x = swap ? b : a;
  const Expr& y = swap ? a : b;
  if (is_min)
    return make_binary(ExprOp::Min, x, y, std::min(a.lo(), b.lo()), std::min(a.hi(), b.hi()));
  return make_binary(ExprOp::Max, x, y, std::max(a.lo(), b.lo()), std::max(a.hi(), b.hi()));
}

Expr comparison(ExprOp op, const Expr& a, const Expr& b) {
  // a - b decides by its value or bounds; where it overflows, only the proofs below can.
  int64_t dlo = kNegInf, dhi = kPosInf;
  try {
    Expr d = a - b;
    if (d.is_const()) {
      int64_t v = d.value();
      switch (op) {
        case ExprOp::Lt: return Expr(v < 0);
        case ExprOp::Le: return Expr(v <= 0);
        case ExprOp::Eq: return Expr(v == 0);
        case ExprOp::Ne: return Expr(v != 0);
        default: break;
      }
    }
    dlo = d.lo();
    dhi = d.hi();
  } catch (const SizeOverflow&) {
  }
  switch (op) {
    case ExprOp::Lt:
      if (dhi < 0 || proven([&] { return provably_le(a + Expr(1), b); })) return Expr(1);
      if (dlo >= 0 || provably_le(b, a)) return Expr(0);
      break;
    case ExprOp::Le:
      if (dhi <= 0 || provably_le(a, b)) return Expr(1);
      if (dlo > 0 || proven([&] { return provably_le(b + Expr(1), a); })) return Expr(0);
      break;
    case ExprOp::Eq:
    case ExprOp::Ne:
      if (dlo > 0 || dhi < 0 || a.hi() < b.lo() || b.hi() < a.lo()) return Expr(op == ExprOp::Ne);
      if (a.is_const() || (!b.is_const() && compare(a, b) > 0)) return make_binary(op, b, a, 0, 1);
      break;
    default: break;
  }
  return make_binary(op, a, b, 0, 1);
}

}  // namespace

Expr min(const Expr& a, const Expr& b) {
  return min_max(a, b, true);
}
Expr max(const Expr& a, const Expr& b) {
  return min_max(a, b, false);
}
Expr lt(const Expr& a, const Expr& b) {
  return comparison(ExprOp::Lt, a, b);
}
Expr le(const Expr& a, const Expr& b) {
  return comparison(ExprOp::Le, a, b);
}
Expr eq(const Expr& a, const Expr& b) {
  return comparison(ExprOp::Eq, a, b);
}
Expr ne(const Expr& a, const Expr& b) {
  return comparison(ExprOp::Ne, a, b);
}

Expr select(const Expr& cond, const Expr& if_true, const Expr& if_false) {
  if (cond.is_const()) return cond.value() != 0 ? if_true : if_false;
  if (if_true == if_false) return if_true;
  if (cond.lo() > 0 || cond.hi() < 0) return if_true;
  ExprNode n;
  n.op = ExprOp::Select;
  n.args = {cond, if_true, if_false};
  n.lo = std::min(if_true.lo(), if_false.lo());
  n.hi = std::max(if_true.hi(), if_false.hi());
  return make_expr_node(std::move(n));
}

}  // namespace fuserc
