#include "core/passes/rewrite.h"

#include "core/base/diagnostics.h"

namespace fuserc {

std::vector<std::vector<int>> readers_of(const Fusion& f) {
  std::vector<std::vector<int>> readers(f.values.size());
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (const auto& a : f.ops[k].args)
      if (!a.is_literal()) readers[a.value].push_back(static_cast<int>(k));
  return readers;
}

std::vector<bool> aliased_values(const Fusion& f) {
  std::vector<bool> aliased(f.values.size(), false);
  for (const auto& [out, in] : f.aliases) aliased[out] = aliased[in] = true;
  return aliased;
}

bool replaceable(const Fusion& f, ValueId v) {
  if (f.is_output(v)) return false;
  for (const auto& [out, in] : f.aliases)
    if (out == v || in == v) return false;
  return true;
}

void Replacements::read(Op& op) const {
  for (Operand& a : op.args)
    if (!a.is_literal() && to_[a.value] != kNoValue) a.value = to_[a.value];
}

void Replacements::replace(const Fusion& f, ValueId from, ValueId to) {
  FUSERC_CHECK(replaceable(f, from), "replacing a graph output");
  FUSERC_CHECK(f.value(from).dtype == f.value(to).dtype && f.value(from).shape == f.value(to).shape,
               "replacing a value by one of another type");
  to_[from] = to;
}

}  // namespace fuserc
