// The constant-folding pass: a value computed only from constants (a mask made from a constant
// table, a scaled or cast weight, a reduction of a constant) is computed here, once, by the
// reference interpreter and becomes a constant itself, so kernels read one tensor instead of
// recomputing it on every call. Folded: elementwise, shape, indexing and reduction ops whose
// every tensor operand is a constant or such a value. Not folded: anything that reads a
// run-time value (a non-constant input, a scalar input, a size literal, a symbol in its shape),
// random draws and `segment_set`; a value bigger than max(64 KiB, its largest constant source)
// (an expand of a small table is free in a kernel and costly in memory); an f16/bf16 value
// whose f32 result does not round to it exactly (kernels keep such intermediates in f32, so a
// rounded constant would change results); an output written in place into an input. Where a
// value is not folded, the values it reads may be. A result with no element (an extent that is
// the constant 0) folds to an empty constant whatever it reads. Ops left without a reader are
// removed by dead-code.
#include <algorithm>
#include <map>
#include <optional>

#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"
#include "core/ir/constant_tensor.h"
#include "core/passes/presegmentation.h"

namespace fuserc {
namespace {

constexpr int64_t kFoldMinLimitBytes = 64 * 1024;

// Whether the op's results are a function of its operands alone (not random draws, not a
// forced kernel boundary).
bool pure(const Op& op) {
  switch (op.info().group) {
    case OpGroup::Random:
    case OpGroup::Control:
    case OpGroup::Reserved: return false;
    default: return true;
  }
}

bool eligible(const Fusion& f, const Op& op) {
  if (!pure(op) || op.info().group == OpGroup::Creation) return false;
  for (const auto& a : op.args)
    if (a.is_literal() && a.literal.is_size()) return false;
  if (op.attrs.value.is_size()) return false;
  for (ValueId o : op.outs)
    for (const auto& e : f.value(o).shape)
      if (!e.is_const()) return false;
  return true;
}

// Whether every result of `op` has no element (an extent that is the constant 0: x[:, 3:3], a
// full of shape [0, 3]): such a result depends on nothing and folds to an empty constant, so
// that no kernel is built over an empty domain and a reduction of it folds to its identity.
bool empty_result(const Fusion& f, const Op& op) {
  if (!pure(op) || op.outs.empty()) return false;
  for (ValueId o : op.outs) {
    bool empty = false;
    for (const auto& e : f.value(o).shape) {
      if (!e.is_const()) return false;
      empty = empty || e.value() == 0;
    }
    if (!empty) return false;
  }
  return true;
}

int64_t bytes_of(const Value& v) {
  int64_t n = static_cast<int64_t>(dtype_size(v.dtype));
  for (const auto& e : v.shape) n *= e.value();
  return n;
}

// The bytes of a computed value in its declared dtype, or nothing when an f16/bf16 value kept
// in f32 does not round to its dtype exactly.
std::optional<std::string> declared_bytes(const HostTensor& t, DType dtype) {
  if (t.dtype() == dtype)
    return std::string(reinterpret_cast<const char*>(t.data()), t.nbytes());
  HostTensor r(dtype, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) {
    float x = t.load_f32(i);
    r.store_f32(i, x);
    float back = r.load_f32(i);
    if (!(back == x || (back != back && x != x))) return std::nullopt;
  }
  return std::string(reinterpret_cast<const char*>(r.data()), r.nbytes());
}

}  // namespace

void fold_constants(Fusion& f) {
  const size_t nv = f.values.size();
  // 1. Which values are computable from constants alone, and the largest constant each reads.
  std::vector<bool> computable(nv, false);
  std::vector<int64_t> source_bytes(nv, 0);
  bool any_constant = false;
  for (ValueId id : f.inputs)
    if (f.value(id).is_constant()) {
      computable[id] = true;
      source_bytes[id] = static_cast<int64_t>(f.value(id).constant->size());
      any_constant = true;
    }
  std::vector<bool> empty(f.ops.size(), false);
  for (size_t k = 0; k < f.ops.size(); ++k) {
    empty[k] = empty_result(f, f.ops[k]);
    any_constant = any_constant || empty[k];
  }
  if (!any_constant) return;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    const Op& op = f.ops[k];
    if (empty[k]) {
      for (ValueId o : op.outs) computable[o] = true;
      continue;
    }
    if (!eligible(f, op)) continue;
    bool all = true, some_tensor = false;
    int64_t src = 0;
    for (const auto& a : op.args) {
      if (a.is_literal()) continue;
      some_tensor = true;
      all = all && computable[a.value];
      src = std::max(src, source_bytes[a.value]);
    }
    if (!all || !some_tensor) continue;
    for (ValueId o : op.outs) computable[o] = true, source_bytes[o] = src;
  }
  // 2. The values to fold: computable op results read by work that is not, or listed as
  //    outputs; where one is too large, the computable values it reads instead (walking back).
  std::vector<bool> wanted(nv, false);
  for (const Op& op : f.ops) {
    bool op_computable = !op.outs.empty() && computable[op.outs[0]];
    if (op_computable) continue;
    for (const auto& a : op.args)
      if (!a.is_literal() && computable[a.value]) wanted[a.value] = true;
  }
  for (ValueId o : f.outputs)
    if (computable[o]) wanted[o] = true;
  std::vector<bool> no_fold(nv, false);  // outputs written in place into an input
  for (const auto& [out, in] : f.aliases) no_fold[out] = true;
  // Evaluate in op order what the wanted values need (an op that fails, e.g. an integer
  // division by zero, is left to run time, where kernels give their own answer).
  std::vector<bool> needed = wanted;
  for (size_t k = f.ops.size(); k-- > 0;) {
    const Op& op = f.ops[k];
    bool need = false;
    for (ValueId o : op.outs) need = need || needed[o];
    if (!need || !computable[op.outs[0]] || empty[k]) continue;  // an empty result reads nothing
    for (const auto& a : op.args)
      if (!a.is_literal()) needed[a.value] = true;
  }
  std::vector<HostTensor> env(nv);
  for (ValueId id : f.inputs) {
    const Value& v = f.value(id);
    if (!v.is_constant() || !needed[id]) continue;
    env[id] = constant_tensor(v);
  }
  std::vector<bool> failed(nv, false);
  SymbolValues no_symbols;
  eval::EvalContext ctx{f, no_symbols, env};
  for (size_t k = 0; k < f.ops.size(); ++k) {
    const Op& op = f.ops[k];
    bool need = false, bad = false;
    for (ValueId o : op.outs) need = need || needed[o];
    if (!need || !computable[op.outs[0]]) continue;
    if (empty[k]) {
      for (ValueId o : op.outs) {
        std::vector<int64_t> shape;
        for (const auto& e : f.value(o).shape) shape.push_back(e.value());
        env[o] = HostTensor(f.value(o).dtype, shape);
      }
      continue;
    }
    for (const auto& a : op.args) bad = bad || (!a.is_literal() && failed[a.value]);
    std::vector<HostTensor> results;
    if (!bad) {
      try {
        results = eval::evaluate_op(ctx, op);
      } catch (const UserError&) {
        bad = true;
      }
    }
    for (size_t i = 0; i < op.outs.size(); ++i) {
      if (bad)
        failed[op.outs[i]] = true;
      else
        env[op.outs[i]] = std::move(results[i]);
    }
  }
  // 3. Fold, walking back from a value that may not be folded to the values it reads. An op's
  //    results are folded together (var_mean's two) or not at all.
  auto foldable = [&](ValueId v) -> std::optional<std::string> {
    const Value& val = f.value(v);
    if (!computable[v] || failed[v] || no_fold[v] || val.is_input()) return std::nullopt;
    if (bytes_of(val) > std::max(kFoldMinLimitBytes, source_bytes[v])) return std::nullopt;
    return declared_bytes(env[v], val.dtype);
  };
  std::map<ValueId, std::string> folded;  // value -> its bytes
  std::vector<ValueId> work;
  for (ValueId v = 0; v < static_cast<ValueId>(nv); ++v)
    if (wanted[v]) work.push_back(v);
  std::vector<bool> seen(nv, false);
  while (!work.empty()) {
    ValueId v = work.back();
    work.pop_back();
    if (seen[v] || !computable[v] || f.value(v).is_input()) continue;
    const Op& op = f.ops[f.value(v).def_op];
    std::vector<std::string> bytes;
    for (ValueId o : op.outs) {
      seen[o] = true;
      auto b = foldable(o);
      if (!b) break;
      bytes.push_back(std::move(*b));
    }
    if (bytes.size() == op.outs.size()) {
      for (size_t i = 0; i < op.outs.size(); ++i) folded[op.outs[i]] = std::move(bytes[i]);
      continue;
    }
    for (const auto& a : op.args)
      if (!a.is_literal()) work.push_back(a.value);
  }
  if (folded.empty()) return;
  // 4. The folded values become constant inputs; their ops go (others are left to dead-code).
  std::vector<bool> drop(f.ops.size(), false);
  for (auto& [v, bytes] : folded) {
    Value& val = f.value(v);
    drop[val.def_op] = true;
    val.def_op = -1;
    val.input_index = static_cast<int>(f.inputs.size());
    val.constant = ConstantData::from_bytes(std::move(bytes), "folded");
    f.inputs.push_back(v);
  }
  std::vector<Op> kept;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    if (drop[k]) continue;
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(kept.size());
    kept.push_back(std::move(f.ops[k]));
  }
  f.ops = std::move(kept);
}

}  // namespace fuserc
