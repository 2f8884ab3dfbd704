// The cast-folding pass: a cast to the dtype its operand already has is removed (but for an f16 or
// bf16 result of arithmetic, which the cast rounds), and a cast of a
// cast that lost nothing (bf16 to f32, i32 to i64, bool to anything, ...) casts the original
// value directly, so that bf16 -> f32 -> bf16 is no op at all. Converting a value exactly and
// then converting the result is the same as converting the value once, so results are the same
// bits.
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

// Whether every value of `from` is exactly a value of `to`.
bool exact(DType from, DType to) {
  if (from == to || from == DType::Bool) return true;
  switch (from) {
    case DType::I32: return to == DType::I64 || to == DType::F64;
    case DType::F16:
    case DType::BF16: return to == DType::F32 || to == DType::F64;
    case DType::F32: return to == DType::F64;
    default: return false;
  }
}

// Whether `v` holds exactly a value of its dtype. An f16/bf16 result of arithmetic is carried
// in f32 inside a kernel and rounded only where it is written to memory (the contract), so a
// cast to its own dtype is the rounding the graph asks for (x * 1000 in f16 is inf only once
// rounded; x - x.to(bf16) is the rounding error): only a value read from memory (an input) or
// one a cast has rounded already needs no cast.
bool rounded(const Fusion& f, ValueId v) {
  DType t = f.value(v).dtype;
  if (t != DType::F16 && t != DType::BF16) return true;
  const Op* p = f.producer(v);
  return p == nullptr || p->kind == OpKind::Cast;
}

}  // namespace

void fold_casts(Fusion& f) {
  Replacements r(f);
  for (Op& op : f.ops) {
    r.read(op);
    if (op.kind != OpKind::Cast || op.args[0].is_literal()) continue;
    // Through exact casts to the first value that is not one.
    ValueId in = op.args[0].value;
    while (const Op* p = f.producer(in)) {
      if (p->kind != OpKind::Cast || p->args[0].is_literal()) break;
      ValueId src = p->args[0].value;
      if (!exact(f.value(src).dtype, f.value(in).dtype)) break;
      // Not through a cast that rounds (an f16 result of arithmetic cast to f16): the cast
      // read afterwards (cast(cast(x + y, f16), f32), PyTorch's (x + y).float()) reads the
      // rounded value.
      if (!rounded(f, src)) break;
      in = src;
    }
    op.args[0].value = in;
    ValueId out = op.outs[0];
    if (f.value(in).dtype == f.value(out).dtype && replaceable(f, out) && rounded(f, in))
      r.replace(f, out, in);
  }
}

}  // namespace fuserc
