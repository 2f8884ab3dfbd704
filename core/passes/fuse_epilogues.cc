// The epilogue-fusion pass: the elementwise ops a matrix-product library can apply to its
// result before writing it become part of the library step (cuBLASLt's epilogues; the CPU
// executor does the same), in the order the library applies them:
//   - a bias: an `add` of a packed vector of the product's dtype and last extent (a row of n
//     added to every row: cuBLASLt's BIAS epilogue), to a product that has none. A `linear`
//     takes it as its third operand; a `matmul` by a 2-D right operand becomes the `linear` of
//     its transpose (x @ w + b is linear(x, w^T, b); absorb-views then reads w^T in place);
//   - an activation (relu, or gelu with tanh: cuBLASLt's GELU epilogue is the tanh form; the erf
//     form has none, so it stays a kernel) of the same dtype;
//   - a cast to another floating dtype the library writes for these operands (cuBLASLt's type
//     table: f16 and bf16 operands give f32 as well as their own dtype; f32 and f64 products
//     write only their own, so a cast after one stays a kernel), where the product adds no
//     bias: cuBLASLt reads a bias in the dtype it writes (an H200 run found no algorithm for a
//     bf16 bias with an f32 result), so a product with a bias keeps its dtype and the cast is a
//     kernel.
// The product's result then never goes through memory in its own dtype: the bias and the
// activation are applied to the f32 accumulator and the result rounded once, as a fused kernel
// keeps intermediates in f32 (eval agrees: it never rounds them either). Only a result read by
// that one op, not a graph output and not written in place, is fused. The ops taken are
// removed; the dead-code pass after it drops their old results.
#include <vector>

#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

MatmulActivation activation_of(OpKind kind) {
  switch (kind) {
    case OpKind::Relu: return MatmulActivation::Relu;
    case OpKind::GeluTanh: return MatmulActivation::GeluTanh;
    default: return MatmulActivation::None;
  }
}

// Whether the library writes a product of `operand` operands as `result` (see the top).
bool library_writes(DType operand, DType result) {
  return result == operand ||
         ((operand == DType::F16 || operand == DType::BF16) && result == DType::F32);
}

// The bias operand of `add` (which reads product result r) when the product `m`, the op at
// index `k`, can add it in its epilogue (see the top), else kNoValue.
ValueId bias_of(const Fusion& f, const Op& m, int k, const Op& add, ValueId r) {
  if (add.kind != OpKind::Add || add.args.size() != 2 || m.args.size() != 2) return kNoValue;
  if (m.kind == OpKind::Matmul &&
      (m.args[1].is_literal() || f.value(m.args[1].value).rank() != 2))
    return kNoValue;
  const Operand& other = add.args[0].is_literal() || add.args[0].value != r ? add.args[0]
                                                                            : add.args[1];
  if (other.is_literal() || other.value == r) return kNoValue;
  const Value& bias = f.value(other.value);
  const Value& result = f.value(r);
  // Defined before the product, which will read it.
  if (bias.def_op >= k) return kNoValue;
  if (result.rank() < 1 || bias.rank() != 1 || !(bias.shape[0] == result.shape.back()))
    return kNoValue;
  if (!is_float(result.dtype) || bias.dtype != result.dtype ||
      f.value(add.outs[0]).dtype != result.dtype)
    return kNoValue;
  if (!bias.strides.empty() && !bias.strides[0].is_const(1)) return kNoValue;  // packed only
  return other.value;
}

bool has_bias(const Op& m) { return m.kind == OpKind::Linear && m.args.size() == 3; }

// Makes product `m` add `bias` in its epilogue: a matmul becomes the linear of its right
// operand's transpose (the permute goes into `before`, to be placed before the product).
void take_bias(Fusion& f, Op& m, ValueId bias, std::vector<Op>& before) {
  if (m.kind == OpKind::Matmul) {
    const Value& w = f.value(m.args[1].value);
    Op& p = add_unary_op(f, OpKind::Permute, m.args[1].value, w.dtype,
                         {w.shape[1], w.shape[0]}, "_t", m.source_index, before);
    p.attrs.dims = {1, 0};
    m.kind = OpKind::Linear;
    m.args[1].value = p.outs[0];
  }
  Operand b;
  b.value = bias;
  m.args.push_back(b);
}

}  // namespace

void fuse_library_epilogues(Fusion& f) {
  // Readers of each value (ops only read earlier values, so one sweep fills them).
  const std::vector<std::vector<int>> readers = readers_of(f);
  const std::vector<bool> aliased = aliased_values(f);
  std::vector<bool> drop(f.ops.size(), false);
  std::vector<std::vector<Op>> before(f.ops.size());  // ops to place before each op
  bool any = false;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    if (f.ops[k].info().group != OpGroup::Matrix) continue;
    bool cast_taken = false;
    for (;;) {
      Op& m = f.ops[k];
      const ValueId r = m.outs[0];
      if (f.is_output(r) || aliased[r] || readers[r].size() != 1) break;
      Op& c = f.ops[readers[r][0]];
      const ValueId out = c.outs[0];
      const MatmulActivation act = activation_of(c.kind);
      const ValueId bias = cast_taken || m.attrs.activation != MatmulActivation::None
                               ? kNoValue
                               : bias_of(f, m, static_cast<int>(k), c, r);
      if (bias != kNoValue) {
        take_bias(f, m, bias, before[k]);
      } else if (act != MatmulActivation::None && !cast_taken &&
          m.attrs.activation == MatmulActivation::None &&
          f.value(out).dtype == f.value(r).dtype) {
        m.attrs.activation = act;
      } else if (c.kind == OpKind::Cast && !cast_taken && !has_bias(m) &&
                 library_writes(f.value(m.args[0].value).dtype, f.value(out).dtype)) {
        cast_taken = true;
      } else {
        break;
      }
      m.outs[0] = out;
      f.value(out).def_op = static_cast<int>(k);
      drop[static_cast<size_t>(readers[r][0])] = true;
      any = true;
    }
  }
  if (!any) return;
  std::vector<Op> kept;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    for (Op& op : before[k]) kept.push_back(std::move(op));
    if (drop[k]) continue;
    kept.push_back(std::move(f.ops[k]));
  }
  for (size_t k = 0; k < kept.size(); ++k)
    for (ValueId o : kept[k].outs) f.value(o).def_op = static_cast<int>(k);
  f.ops = std::move(kept);
}

}  // namespace fuserc
