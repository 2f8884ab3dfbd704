#include "core/frontend/symbol_binding.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>

namespace fuserc {
namespace {

bool uses(const Expr& e, const std::string& s) {
  std::vector<std::string> syms = free_symbols(e);
  return std::binary_search(syms.begin(), syms.end(), s);
}

}  // namespace

std::optional<std::pair<Expr, Expr>> linear_in(const Expr& e, const std::string& s) {
  if (!uses(e, s)) return std::make_pair(Expr(0), e);
  switch (e.op()) {
    case ExprOp::Sym:
      if (e.name() == s && !e.is_index()) return std::make_pair(Expr(1), Expr(0));
      return std::nullopt;
    case ExprOp::Add: {
      Expr k(0), c(e.value());
      for (const auto& t : e.args()) {
        auto kc = linear_in(t, s);  // a term: a symbol, a product or an opaque node
        if (!kc) return std::nullopt;
        k = k + kc->first;
        c = c + kc->second;
      }
      return std::make_pair(k, c);
    }
    case ExprOp::Mul: {
      // coefficient * factors: exactly one factor is s itself, no other uses it.
      Expr rest(e.value());
      int found = 0;
      for (const auto& f : e.args()) {
        if (f.is_symbol() && f.name() == s && !f.is_index()) {
          ++found;
          continue;
        }
        if (uses(f, s)) return std::nullopt;
        rest = rest * f;
      }
      if (found != 1) return std::nullopt;
      return std::make_pair(rest, Expr(0));
    }
    default: return std::nullopt;
  }
}

std::vector<SymbolBindStep> plan_symbol_binding(const Fusion& f,
                                                std::optional<UnboundExtent>* unbound) {
  std::vector<SymbolBindStep> steps;
  std::set<std::string> bound;
  auto tensor_inputs = [&](auto&& visit) {
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const Value& v = f.value(f.inputs[i]);
      if (v.scalar_input || v.is_constant()) continue;
      for (size_t d = 0; d < v.shape.size(); ++d)
        visit(static_cast<int>(i), static_cast<int>(d), v.shape[d]);
    }
  };
  // 1. Extents that are a symbol.
  tensor_inputs([&](int i, int d, const Expr& e) {
    if (e.is_symbol() && bound.insert(e.name()).second) {
      SymbolBindStep s;
      s.kind = SymbolBindStep::Kind::Extent;
      s.symbol = e.name();
      s.input = i;
      s.dim = d;
      steps.push_back(std::move(s));
    }
  });
  // 2. Scalar inputs that set a symbol.
  for (size_t i = 0; i < f.inputs.size(); ++i) {
    const Value& v = f.value(f.inputs[i]);
    if (v.sets_symbol.empty() || !bound.insert(v.sets_symbol).second) continue;
    SymbolBindStep s;
    s.kind = SymbolBindStep::Kind::Scalar;
    s.symbol = v.sets_symbol;
    s.input = static_cast<int>(i);
    steps.push_back(std::move(s));
  }
  // 3. Extents linear in their one unbound symbol, until nothing more can be solved: an extent
  //    becomes a candidate when all its symbols but one are bound, earliest extent first, and
  //    binding a symbol revisits only the extents that use it (n log n in the extents).
  struct Site {
    int input, dim;
    const Expr* e;
    std::vector<std::string> symbols;
    int unbound = 0;
  };
  std::vector<Site> sites;
  std::map<std::string, std::vector<int>> users;  // symbol -> sites using it
  tensor_inputs([&](int i, int d, const Expr& e) {
    Site site{i, d, &e, free_symbols(e), 0};
    for (const auto& name : site.symbols) {
      if (!bound.count(name)) ++site.unbound;
      users[name].push_back(static_cast<int>(sites.size()));
    }
    sites.push_back(std::move(site));
  });
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t k = 0; k < sites.size(); ++k)
    if (sites[k].unbound == 1) ready.push(static_cast<int>(k));
  while (!ready.empty()) {
    Site& site = sites[ready.top()];
    ready.pop();
    if (site.unbound != 1) continue;
    std::string only;
    for (const auto& name : site.symbols)
      if (!bound.count(name)) only = name;
    auto kc = linear_in(*site.e, only);
    if (!kc || kc->first.lo() <= 0) continue;  // maybe bound by another extent later
    SymbolBindStep step;
    step.kind = SymbolBindStep::Kind::Solve;
    step.symbol = only;
    step.input = site.input;
    step.dim = site.dim;
    step.k = kc->first;
    step.c = kc->second;
    steps.push_back(std::move(step));
    bound.insert(only);
    for (int u : users[only])
      if (--sites[u].unbound == 1) ready.push(u);
  }
  if (unbound) {
    unbound->reset();
    tensor_inputs([&](int i, int d, const Expr& e) {
      if (unbound->has_value()) return;
      for (const auto& name : free_symbols(e))
        if (!bound.count(name)) {
          *unbound = UnboundExtent{name, i, d};
          return;
        }
    });
  }
  return steps;
}

}  // namespace fuserc
