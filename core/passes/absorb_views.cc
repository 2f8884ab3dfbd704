// The absorb-views pass: a matrix product reads an operand that is a view of another value
// (a slice such as Q out of a fused QKV projection, a permute such as K transposed, a reshape
// that splits heads, a broadcast over a batch, unit dimensions added or removed) straight from
// that value, through strides and an offset, as the library takes them (transpose flags, leading
// dimensions, batch strides, a pointer), instead of a kernel copying the view into a buffer
// first. The view goes into the product's OperandView; the view ops then have no reader left and
// the dead-code pass drops them (a view another op also reads stays for it). A product whose only
// reader is a permute (heads merged back: [B, H, S, D] to [B, S, H, D]) writes the permuted
// tensor directly, through the result's strides, and the permute goes.
// A chain is absorbed from its deepest source the strides can express; a view the library cannot
// read (no unit stride in the matrix, a merge of dimensions that do not lie one after another,
// a batch more than two levels of strides reach) is left to a kernel, and `inspect` says the
// operand was copied. A product whose operands as they lie still need more levels (a batch
// broadcast in an inner dimension and not an outer one, as grouped-query attention's k beside
// a q with a batch) reads instead a copy of each operand expanded to the whole batch. A bias
// input that declares a stride is copied packed (cuBLASLt reads a bias as a packed row), and a
// product with a bias writes no transposed result (cuBLASLt adds no bias to a column-major C).
#include <algorithm>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/ir/matmul_geometry.h"
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

constexpr int kMaxChain = 8;

bool is_view(OpKind k) {
  switch (k) {
    case OpKind::Permute:
    case OpKind::Expand:
    case OpKind::BroadcastInDim:
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Slice: return true;
    default: return false;
  }
}

struct Strided {
  std::vector<Expr> shape, strides;
  Expr offset = Expr(0);
};

// Operand i of product m as it reads it: through its view, else as it lies.
StridedTensor operand_read(const Fusion& f, const Op& m, size_t i) {
  if (m.attrs.views[i].active()) return {m.attrs.views[i].shape, m.attrs.views[i].memory};
  const Value& v = f.value(m.args[i].value);
  return {v.shape, v.strides.empty() ? row_major_strides(v.shape) : v.strides};
}

// The levels of strides product m's batch needs, operand i read as `read` (the other as it
// reads it now).
size_t batch_levels(const Fusion& f, const Op& m, size_t i, const StridedTensor& read) {
  const StridedTensor ops[2] = {i == 0 ? read : operand_read(f, m, 0),
                                i == 1 ? read : operand_read(f, m, 1)};
  const Value& r = f.value(m.outs[0]);
  const StridedTensor c = m.attrs.result_view.active()
                              ? StridedTensor{m.attrs.result_view.shape, m.attrs.result_view.memory}
                              : StridedTensor{r.shape, row_major_strides(r.shape)};
  return matmul_geometry(m.kind == OpKind::Linear, ops[0], ops[1], c).levels.size();
}

// The levels product m's batch needs as both operands read now.
size_t batch_levels(const Fusion& f, const Op& m) {
  return batch_levels(f, m, 0, operand_read(f, m, 0));
}

// A reshape as strides: dimensions equal on both sides keep theirs, a source dimension split
// into several gives each the stride of the ones inside it, several source dimensions lying one
// after another merge. Unit dimensions are dropped first and come back with stride 0.
bool reshape(Strided& t, const std::vector<Expr>& to) {
  std::vector<Expr> e, s;
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (!t.shape[d].is_const(1)) {
      e.push_back(t.shape[d]);
      s.push_back(t.strides[d]);
    }
  std::vector<size_t> dims;  // the result's non-unit dimensions
  for (size_t d = 0; d < to.size(); ++d)
    if (!to[d].is_const(1)) dims.push_back(d);
  std::vector<Expr> out(to.size(), Expr(0));
  size_t i = 0, j = 0;
  while (i < e.size() && j < dims.size()) {
    if (e[i] == to[dims[j]]) {
      out[dims[j++]] = s[i++];
      continue;
    }
    // Split: e[i] = to[j] * ... * to[j + n].
    Expr p = to[dims[j]];
    size_t n = 0;
    while (!(p == e[i]) && j + n + 1 < dims.size() && n < kMaxChain) p = p * to[dims[j + ++n]];
    if (p == e[i]) {
      Expr stride = s[i];
      for (size_t q = j + n + 1; q-- > j;) {
        out[dims[q]] = stride;
        stride = stride * to[dims[q]];
      }
      j += n + 1;
      ++i;
      continue;
    }
    // Merge: to[j] = e[i] * ... * e[i + n], each lying at the stride of the next one's extent.
    p = e[i];
    n = 0;
    bool contiguous = true;
    while (!(p == to[dims[j]]) && i + n + 1 < e.size() && n < kMaxChain) {
      contiguous = contiguous && s[i + n] == s[i + n + 1] * e[i + n + 1];
      p = p * e[i + ++n];
    }
    if (!(p == to[dims[j]]) || !contiguous) return false;
    out[dims[j++]] = s[i + n];
    i += n + 1;
  }
  if (i != e.size() || j != dims.size()) return false;
  t.shape = to;
  t.strides = std::move(out);
  return true;
}

// Applies one view op (result shape `to`) to a strided tensor.
bool apply(const Op& op, const std::vector<Expr>& to, Strided& t) {
  const size_t r = t.shape.size();
  std::vector<Expr> st(to.size(), Expr(0));
  switch (op.kind) {
    case OpKind::Permute:
      for (size_t d = 0; d < to.size(); ++d) st[d] = t.strides[op.attrs.dims[d]];
      break;
    case OpKind::Expand:
      for (size_t d = 0; d < to.size(); ++d) {
        if (d + r < to.size()) continue;
        const size_t i = d + r - to.size();
        if (t.shape[i] == to[d]) st[d] = t.strides[i];
      }
      break;
    case OpKind::BroadcastInDim:
      for (size_t i = 0; i < r; ++i) {
        const size_t d = static_cast<size_t>(op.attrs.broadcast_dims[i]);
        if (t.shape[i] == to[d]) st[d] = t.strides[i];
      }
      break;
    case OpKind::Slice:  // the first element moves; a step multiplies the stride
      for (size_t d = 0; d < r; ++d) {
        st[d] = t.strides[d] * (op.attrs.steps.empty() ? Expr(1) : op.attrs.steps[d]);
        t.offset = t.offset + op.attrs.starts[d] * t.strides[d];
      }
      break;
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze: return reshape(t, to);
    default: return false;
  }
  t.shape = to;
  t.strides = std::move(st);
  return true;
}

// Whether the library reads the operand as a matrix in place: in its matrix dimensions one of
// more than one element has stride 1, and none of more than one element is broadcast.
bool library_reads(const Strided& t, int matrix_dims) {
  bool unit = false, many = false;
  for (size_t d = t.shape.size() - static_cast<size_t>(matrix_dims); d < t.shape.size(); ++d) {
    if (t.shape[d].is_const(1)) continue;
    many = true;
    if (t.strides[d].is_const(0)) return false;
    unit = unit || t.strides[d].is_const(1);
  }
  return unit || !many;
}

// Makes `m` write the result of `permute` (its only reader) through strides; true if the
// library can write it so.
bool absorb_result_permute(Fusion& f, Op& m, int k, const Op& permute) {
  const Value& r = f.value(m.outs[0]);
  const Value& out = f.value(permute.outs[0]);
  std::vector<Expr> out_strides = row_major_strides(out.shape);
  Strided result{r.shape, std::vector<Expr>(r.shape.size(), Expr(0))};
  for (size_t d = 0; d < out.shape.size(); ++d)
    result.strides[static_cast<size_t>(permute.attrs.dims[d])] = out_strides[d];
  if (!library_reads(result, std::min(r.rank(), 2))) return false;
  // A bias is a row added to every row of C as the library lays C out: it cannot be added to a
  // C whose rows are not contiguous (cuBLASLt refuses a bias with a column-major C).
  if (m.args.size() == 3 && !result.strides.back().is_const(1)) return false;
  OperandView& view = m.attrs.result_view;
  view.shape = r.shape;
  view.logical = result.strides;
  view.memory = result.strides;
  view.views = "permute";
  m.outs[0] = permute.outs[0];
  f.value(permute.outs[0]).def_op = k;
  return true;
}

// An expand of operand i of product m (a value of rank 2 or more) to the product's whole batch
// and its own matrix dimensions, which a kernel writes out row-major: the operand then lies
// batch after batch as the result does. kNoValue where it already does.
ValueId expanded_operand(Fusion& f, const Op& m, size_t i, std::vector<Op>& before) {
  const ValueId v = m.args[i].value;
  const Value& val = f.value(v);
  const Value& r = f.value(m.outs[0]);
  const size_t matrix_dims = std::min<size_t>(2, val.shape.size());
  // The result's batch dims: its rank less M and N (a rank-1 operand lacks one of them).
  const size_t lost =
      (f.value(m.args[0].value).rank() == 1) + (f.value(m.args[1].value).rank() == 1);
  const size_t nb = r.shape.size() + lost - 2;
  std::vector<Expr> to(r.shape.begin(), r.shape.begin() + static_cast<std::ptrdiff_t>(nb));
  to.insert(to.end(), val.shape.end() - static_cast<std::ptrdiff_t>(matrix_dims), val.shape.end());
  if (to == val.shape && val.strides.empty()) return kNoValue;
  Op& e = add_unary_op(f, OpKind::Expand, v, val.dtype, to, "_batched", m.source_index, before);
  e.attrs.shape = to;
  return e.outs[0];
}

// A packed copy of `v` (a cast to its own dtype: a kernel writes it contiguous), made by an op
// placed in `before`.
ValueId packed_copy(Fusion& f, ValueId v, int source_index, std::vector<Op>& before) {
  const Value& val = f.value(v);
  Op& c = add_unary_op(f, OpKind::Cast, v, val.dtype, val.shape, "_packed", source_index, before);
  c.attrs.dtype = f.value(c.outs[0]).dtype;
  return c.outs[0];
}

}  // namespace

void absorb_operand_views(Fusion& f) {
  // Readers of each value (ops only read earlier values; a product's result is read only by
  // later ops, whose operands this sweep has not changed yet).
  const std::vector<std::vector<int>> readers = readers_of(f);
  const std::vector<bool> aliased = aliased_values(f);
  std::vector<bool> drop(f.ops.size(), false);
  std::vector<std::vector<Op>> before(f.ops.size());  // ops to insert before each op
  for (size_t k = 0; k < f.ops.size(); ++k) {
    if (f.ops[k].info().group != OpGroup::Matrix) continue;
    Op& m = f.ops[k];
    // The library reads a bias as a packed row: an input that declares a stride is copied.
    if (m.args.size() == 3 && !m.args[2].is_literal()) {
      const Value& b = f.value(m.args[2].value);
      if (!b.strides.empty() && !b.strides[0].is_const(1) && !b.shape[0].is_const(1))
        m.args[2].value = packed_copy(f, m.args[2].value, m.source_index, before[k]);
    }
    const ValueId r = m.outs[0];
    const ValueId operands[2] = {m.args[0].value, m.args[1].value};
    const bool result_permute =
        !m.attrs.result_view.active() && !f.is_output(r) && !aliased[r] &&
        readers[r].size() == 1 && f.ops[readers[r][0]].kind == OpKind::Permute &&
        absorb_result_permute(f, m, static_cast<int>(k), f.ops[readers[r][0]]);
    if (result_permute) drop[readers[r][0]] = true;
    for (size_t i = 0; i < 2; ++i) {
      if (m.args[i].is_literal() || m.attrs.views[i].active()) continue;
      const ValueId operand = m.args[i].value;
      const int matrix_dims = std::min(f.value(operand).rank(), 2);
      // The chain of views, nearest first.
      std::vector<const Op*> chain;
      for (ValueId v = operand; static_cast<int>(chain.size()) < kMaxChain;) {
        const Op* p = f.producer(v);
        if (!p || !is_view(p->kind) || p->args[0].is_literal()) break;
        chain.push_back(p);
        v = p->args[0].value;
      }
      for (size_t depth = chain.size(); depth > 0; --depth) {
        const Value& source = f.value(chain[depth - 1]->args[0].value);
        Strided logical{source.shape, row_major_strides(source.shape)};
        Strided memory{source.shape, source.strides.empty() ? logical.strides : source.strides};
        std::string names;
        bool ok = true;
        for (size_t q = depth; ok && q-- > 0;) {
          const std::vector<Expr>& to = f.value(chain[q]->outs[0]).shape;
          ok = apply(*chain[q], to, logical) && apply(*chain[q], to, memory);
          names += (names.empty() ? "" : " ") + std::string(op_name(chain[q]->kind));
        }
        if (!ok || !library_reads(memory, matrix_dims) ||
            batch_levels(f, m, i, {memory.shape, memory.strides}) > kMaxMatmulBatchLevels)
          continue;
        OperandView& view = m.attrs.views[i];
        view.shape = memory.shape;
        view.logical = std::move(logical.strides);
        view.memory = std::move(memory.strides);
        view.logical_offset = logical.offset;
        view.memory_offset = memory.offset;
        view.views = names;
        m.args[i].value = chain[depth - 1]->args[0].value;
        break;
      }
    }
    if (m.args[0].is_literal() || m.args[1].is_literal() ||
        batch_levels(f, m) <= kMaxMatmulBatchLevels)
      continue;
    // Too many levels as the operands lie: the permute of the result is written by a kernel
    // again, and each operand is read from a row-major copy over the whole batch.
    if (result_permute) {
      const Op& permute = f.ops[readers[r][0]];
      f.value(permute.outs[0]).def_op = readers[r][0];
      drop[readers[r][0]] = false;
      m.outs[0] = r;
      m.attrs.result_view = OperandView{};
    }
    for (size_t i = 0; i < 2; ++i) {
      m.args[i].value = operands[i];
      m.attrs.views[i] = OperandView{};
      if (f.value(operands[i]).rank() < 2 || (i == 1 && m.kind == OpKind::Linear)) continue;
      const ValueId copy = expanded_operand(f, f.ops[k], i, before[k]);
      if (copy != kNoValue) f.ops[k].args[i].value = copy;
    }
    FUSERC_CHECK(batch_levels(f, f.ops[k]) <= kMaxMatmulBatchLevels,
                 "a product's batch over row-major copies needs more than two levels");
  }
  // The permutes products now write: their results have another definition; the copies made
  // go before their products.
  std::vector<Op> kept;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    for (Op& op : before[k]) {
      for (ValueId o : op.outs) f.value(o).def_op = static_cast<int>(kept.size());
      kept.push_back(std::move(op));
    }
    if (drop[k]) continue;
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(kept.size());
    kept.push_back(std::move(f.ops[k]));
  }
  f.ops = std::move(kept);
}

}  // namespace fuserc
