// The epilogue-fusion pass: the elementwise ops a matrix-product library can apply to its
// result before writing it become part of the library step (cuBLASLt's epilogues; the CPU
// executor does the same): an activation (relu, or gelu with tanh: cuBLASLt's GELU epilogue is
// the tanh form; the erf form has none, so it stays a kernel) of the same dtype, then a cast to
// another floating dtype the library writes for these operands (cuBLASLt's type table: f16 and
// bf16 operands give f32 as well as their own dtype; f32 and f64 products write only their own,
// so a cast after one stays a kernel). The product's result then never goes through memory in
// its own dtype: the activation is applied to the f32 accumulator and the result rounded once,
// as a fused kernel keeps intermediates in f32 (eval agrees: it never rounds them either). Only
// a result read by that one op, not a graph output and not written in place, is fused. The ops
// taken are removed; the dead-code pass after it drops their old results.
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

}  // namespace

void fuse_library_epilogues(Fusion& f) {
  // Readers of each value (ops only read earlier values, so one sweep fills them).
  const std::vector<std::vector<int>> readers = readers_of(f);
  const std::vector<bool> aliased = aliased_values(f);
  std::vector<bool> drop(f.ops.size(), false);
  bool any = false;
  for (size_t k = 0; k < f.ops.size(); ++k) {
    Op& m = f.ops[k];
    if (m.info().group != OpGroup::Matrix) continue;
    bool cast_taken = false;
    for (;;) {
      const ValueId r = m.outs[0];
      if (f.is_output(r) || aliased[r] || readers[r].size() != 1) break;
      Op& c = f.ops[readers[r][0]];
      const ValueId out = c.outs[0];
      const MatmulActivation act = activation_of(c.kind);
      if (act != MatmulActivation::None && !cast_taken &&
          m.attrs.activation == MatmulActivation::None &&
          f.value(out).dtype == f.value(r).dtype) {
        m.attrs.activation = act;
      } else if (c.kind == OpKind::Cast && !cast_taken &&
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
    if (drop[k]) continue;
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(kept.size());
    kept.push_back(std::move(f.ops[k]));
  }
  f.ops = std::move(kept);
}

}  // namespace fuserc
