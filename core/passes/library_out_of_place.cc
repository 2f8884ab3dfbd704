// The library-out-of-place pass: a library step (a matrix product, a convolution, attention)
// writes its result whole, as the library computes it, and reads its operands whole while it
// does. Written in place into a tensor it reads (`y = w @ x` into x, `relu(linear(x, w))` into
// x, attention into v), it would read elements it has already overwritten; written into an
// input that declares strides (a column-major or padded output), it would write row-major over
// them. There the step writes a new intermediate instead, and a cast to the same dtype copies
// it into the output, which the kernel that computes it writes through the input's strides
// after the step has run. Found by differential fuzzing (2026-11-28): the emulator gave
// relative errors of 0.05 to 1.7 for both. A product reached through views of its result
// (a reshape stored straight into the output) counts as the writer.
#include <string>

#include "core/ir/matmul_geometry.h"
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

constexpr int kMaxViewChain = 8;

bool moves_no_element(OpKind k) {
  switch (k) {
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Permute: return true;
    default: return false;
  }
}

// The library op whose result `out` is, directly or through views of it that nothing else
// reads; nullptr if none.
const Op* library_writer(const Fusion& f, ValueId out, const std::vector<std::vector<int>>& readers) {
  const Op* op = f.producer(out);
  for (int depth = 0; op && depth < kMaxViewChain; ++depth) {
    if (op->info().group == OpGroup::Matrix) return op;
    if (!moves_no_element(op->kind) || op->args.empty() || op->args[0].is_literal()) return nullptr;
    const ValueId source = op->args[0].value;
    if (readers[static_cast<size_t>(source)].size() != 1 || !replaceable(f, source)) return nullptr;
    op = f.producer(source);
  }
  return nullptr;
}

bool reads(const Op& op, ValueId v) {
  for (const Operand& a : op.args)
    if (!a.is_literal() && a.value == v) return true;
  return false;
}

// Whether an input's declared strides differ from row-major ones (dimensions of extent 1
// aside: their stride is never used).
bool strided(const Value& v) {
  if (v.strides.empty()) return false;
  const std::vector<Expr> dense = row_major_strides(v.shape);
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (!v.shape[d].is_const(1) && !(v.strides[d] == dense[d])) return true;
  return false;
}

}  // namespace

void write_library_results_out_of_place(Fusion& f) {
  if (f.aliases.empty()) return;
  const std::vector<std::vector<int>> readers = readers_of(f);
  std::vector<int> copy_after(f.ops.size(), -1);  // op index -> the output it now copies into
  bool any = false;
  for (const auto& [out, in] : f.aliases) {
    const Op* writer = library_writer(f, out, readers);
    if (!writer || (!reads(*writer, in) && !strided(f.value(in)))) continue;
    const int def = f.value(out).def_op;
    copy_after[static_cast<size_t>(def)] = static_cast<int>(out);
    any = true;
  }
  if (!any) return;
  std::vector<Op> ops;
  ops.reserve(f.ops.size() + 1);
  for (size_t k = 0; k < f.ops.size(); ++k) {
    ops.push_back(std::move(f.ops[k]));
    if (copy_after[k] < 0) continue;
    const ValueId out = static_cast<ValueId>(copy_after[k]);
    Value t;
    t.dtype = f.value(out).dtype;
    t.shape = f.value(out).shape;
    std::string name = f.value(out).name + "_result";
    while (f.find_value(name)) name += "_";
    t.name = name;
    const ValueId temp = f.add_value(std::move(t));
    ops.back().outs[0] = temp;
    Op copy;
    copy.kind = OpKind::Cast;
    copy.attrs.dtype = f.value(out).dtype;
    Operand read;
    read.value = temp;
    copy.args = {read};
    copy.outs = {out};
    ops.push_back(std::move(copy));
  }
  f.ops = std::move(ops);
  for (size_t k = 0; k < f.ops.size(); ++k)
    for (ValueId o : f.ops[k].outs) f.value(o).def_op = static_cast<int>(k);
}

}  // namespace fuserc
