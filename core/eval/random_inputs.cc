#include "core/eval/random_inputs.h"

#include <algorithm>
#include <cmath>

#include "core/base/diagnostics.h"
#include "core/base/philox.h"

namespace fuserc {

std::map<std::string, int64_t> choose_symbol_values(const Fusion& f,
                                                    const std::map<std::string, int64_t>& given) {
  std::map<std::string, int64_t> values;
  for (const auto& [name, v] : given) {
    const SymbolDecl* s = f.find_symbol(name);
    if (!s) throw UsageError("graph " + f.name + " has no symbol " + quote(name));
    if (v < s->min || v > s->max)
      throw UsageError("symbol " + name + " = " + std::to_string(v) + " is outside its range [" +
                       std::to_string(s->min) + ", " + std::to_string(s->max) + "]");
    values[name] = v;
  }
  for (const auto& s : f.symbols) values.emplace(s.name, s.hint);
  return values;
}

namespace {

// Integer inputs without a range that reach the index of index_select or gather through views
// and casts only: for each, the smallest extent it indexes (as the reference draws them, so
// that the indices stay inside every tensor they index).
std::map<ValueId, int64_t> index_extents(const Fusion& f, const SymbolLookup& lookup) {
  std::vector<ValueId> source(f.values.size(), kNoValue);
  for (ValueId v : f.inputs) source[v] = v;
  std::map<ValueId, int64_t> out;
  for (const Op& op : f.ops) {
    if (op.args.empty() || op.args[0].is_literal()) continue;
    switch (op.kind) {
      case OpKind::Cast:
      case OpKind::Reshape:
      case OpKind::Unsqueeze:
      case OpKind::Squeeze:
      case OpKind::Expand:
      case OpKind::BroadcastInDim:
      case OpKind::Permute:
      case OpKind::SegmentSet: source[op.outs[0]] = source[op.args[0].value]; break;
      case OpKind::IndexSelect:
      case OpKind::Gather: {
        if (op.args[1].is_literal()) break;
        ValueId in = source[op.args[1].value];
        if (in == kNoValue || f.value(in).range) break;
        int64_t n = evaluate(f.value(op.args[0].value).shape[op.attrs.dim], lookup);
        auto it = out.find(in);
        out[in] = it == out.end() ? n : std::min(it->second, n);
        break;
      }
      default: break;
    }
  }
  return out;
}

}  // namespace

TensorMap make_random_inputs(const Fusion& f, const std::map<std::string, int64_t>& symbols,
                             uint64_t seed) {
  auto lookup = [&](const std::string& s) -> std::optional<int64_t> {
    auto it = symbols.find(s);
    if (it == symbols.end()) return std::nullopt;
    return it->second;
  };
  const std::map<ValueId, int64_t> indexes = index_extents(f, lookup);
  TensorMap out;
  for (size_t k = 0; k < f.inputs.size(); ++k) {
    const Value& v = f.value(f.inputs[k]);
    if (v.is_constant()) continue;  // the graph holds its values
    std::vector<int64_t> shape;
    for (const auto& e : v.shape) shape.push_back(evaluate(e, lookup));
    HostTensor t(v.dtype, shape);
    double lo = -2, hi = 2;
    if (v.scalar_input) {
      if (is_float(v.dtype))
        lo = 0.01, hi = 0.51;
      else
        lo = 0, hi = 999;
    }
    if (v.range) std::tie(lo, hi) = *v.range;
    if (auto it = indexes.find(f.inputs[k]); it != indexes.end() && is_integer(v.dtype))
      lo = 0, hi = static_cast<double>(std::max<int64_t>(it->second, 1) - 1);
    if (!v.sets_symbol.empty()) {  // its value is the symbol's
      t.store_i64(0, symbols.at(v.sets_symbol));
      out.emplace(v.name, std::move(t));
      continue;
    }
    for (int64_t i = 0; i < t.numel(); ++i) {
      double u = philox_uniform_f64(seed, k, static_cast<uint64_t>(i));
      if (v.dtype == DType::Bool) {
        t.store_bool(i, v.scalar_input && !v.range ? true : u < 0.5);
      } else if (is_float(v.dtype)) {
        t.store_f64(i, lo + (hi - lo) * u);
      } else {
        double ilo = std::ceil(lo), ihi = std::floor(hi);
        if (ihi < ilo) ihi = ilo;
        t.store_i64(i, static_cast<int64_t>(ilo + std::floor((ihi - ilo + 1) * u)));
      }
    }
    out.emplace(v.name, std::move(t));
  }
  return out;
}

}  // namespace fuserc
