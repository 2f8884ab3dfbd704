// Owns deciding, at compile time, how every symbol of a graph gets its value from the inputs
// at run time (Fusion::bind_steps), in the contract's order: from an input extent that is the
// symbol itself; then from scalar inputs declared with "symbol"; then, repeatedly, solved from
// an input extent that is k * S + c in the one symbol S it leaves unbound (k and c over symbols
// already bound, k provably positive: `B*197`, `S+1`, `2*T+2`, `B*S` once B is bound). Every
// other input extent is checked against the bound values at run time (core/base/
// input_binding.h).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/fusion.h"

namespace fuserc {

// An input extent's symbols that nothing binds: the first such extent, for the message.
struct UnboundExtent {
  std::string symbol;
  int input = -1;  // index into Fusion::inputs
  int dim = -1;
};

// Plans the steps for `f`'s inputs. `unbound` gets the first input extent with a symbol no
// step binds (nullopt when every symbol of the inputs' shapes is bound).
std::vector<SymbolBindStep> plan_symbol_binding(const Fusion& f,
                                                std::optional<UnboundExtent>* unbound);

// k and c with e == k * s + c where neither uses `s`, when e is linear in `s` (s appears
// only as a factor of products, never inside a division, modulo, min or max).
std::optional<std::pair<Expr, Expr>> linear_in(const Expr& e, const std::string& s);

}  // namespace fuserc
