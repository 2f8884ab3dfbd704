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

std::string unique_value_name(const Fusion& f, const std::string& stem) {
  std::string name = stem;
  for (int n = 2; f.find_value(name); ++n) name = stem + "_" + std::to_string(n);
  return name;
}

Op& add_unary_op(Fusion& f, OpKind kind, ValueId v, DType dtype, std::vector<Expr> shape,
                 const std::string& suffix, int source_index, std::vector<Op>& before) {
  Value out;
  out.dtype = dtype;
  out.shape = std::move(shape);
  out.name = unique_value_name(f, f.value(v).name + suffix);
  Op op;
  op.kind = kind;
  Operand arg;
  arg.value = v;
  op.args = {arg};
  op.source_index = source_index;
  op.outs = {f.add_value(std::move(out))};
  before.push_back(std::move(op));
  return before.back();
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
