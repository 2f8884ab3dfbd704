#include "codegen/library/matmul_call.h"

#include <vector>

#include "core/base/diagnostics.h"
#include "core/ir/matmul_geometry.h"

namespace fuserc {
namespace {

// The strides (elements) of a tensor as it lies in memory: declared, else row-major.
std::vector<Expr> strides_of(const Value& v) {
  return v.strides.empty() ? row_major_strides(v.shape) : v.strides;
}

// An operand as the product reads it: through an absorbed view, else as it lies.
struct Read {
  std::vector<Expr> shape, strides;
  Expr offset = Expr(0);
};

Read read_of(const Fusion& f, const Op& op, size_t i) {
  const Value& v = f.value(op.args[i].value);
  if (i < 2 && op.attrs.views[i].active()) {
    const OperandView& view = op.attrs.views[i];
    return {view.shape, view.memory, view.memory_offset};
  }
  return {v.shape, strides_of(v)};
}

}  // namespace

MatmulCall lower_matmul(const Fusion& f, const Segment& s, const std::string& name) {
  FUSERC_CHECK(s.ops.size() == 1, "a library segment holds one op");
  const Op& op = f.ops[s.ops[0]];
  const Value& x = f.value(op.args[0].value);
  const Value& y = f.value(op.args[1].value);
  const Value& out = f.value(op.outs[0]);
  const bool linear = op.kind == OpKind::Linear;
  MatmulCall call;
  call.name = name;
  call.allow_tf32 = op.attrs.allow_tf32;
  call.epilogue = static_cast<MatmulEpilogueKind>(static_cast<uint8_t>(op.attrs.activation));
  call.workspace_bytes = Expr(kLibraryWorkspaceBytes);

  const Read xr = read_of(f, op, 0), yr = read_of(f, op, 1);
  // C: the result, contiguous, or a permute of it written through strides.
  const OperandView& rv = op.attrs.result_view;
  const StridedTensor c{rv.active() ? rv.shape : out.shape,
                        rv.active() ? rv.memory : strides_of(out)};
  const MatmulGeometry g =
      matmul_geometry(linear, {xr.shape, xr.strides}, {yr.shape, yr.strides}, c);
  call.m = g.m;
  call.k = g.k;
  call.n = g.n;
  call.a = {op.args[0].value, x.dtype, g.a_row, g.a_col};
  call.b = {op.args[1].value, y.dtype, g.b_row, g.b_col};
  call.a.offset = xr.offset;
  call.b.offset = yr.offset;
  call.c = {op.outs[0], out.dtype, g.c_row, g.c_col};
  if (linear && op.args.size() == 3) {
    const Value& bias = f.value(op.args[2].value);
    call.bias = {op.args[2].value, bias.dtype, Expr(0), strides_of(bias)[0]};
  }
  // The absorb-views pass leaves no product that needs more levels (it copies an operand).
  FUSERC_CHECK(g.levels.size() <= kMaxMatmulBatchLevels,
               "op '" + out.name + "': a product whose batch needs " +
                   std::to_string(g.levels.size()) + " levels of strides");
  if (!g.levels.empty()) {
    call.batch = g.levels[0].extent;
    call.a.batch_stride = g.levels[0].a;
    call.b.batch_stride = g.levels[0].b;
    call.c.batch_stride = g.levels[0].c;
  }
  if (g.levels.size() == 2) {
    call.outer = g.levels[1].extent;
    call.a.outer_stride = g.levels[1].a;
    call.b.outer_stride = g.levels[1].b;
    call.c.outer_stride = g.levels[1].c;
  }
  std::string args;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const std::string& arg = f.value(op.args[i].value).name;
    const OperandView* view = i < 2 && op.attrs.views[i].active() ? &op.attrs.views[i] : nullptr;
    // A view left to a kernel before the product (none of its chain could be read in place).
    const Op* producer = f.producer(op.args[i].value);
    const bool copied =
        producer &&
        (producer->kind == OpKind::Permute || producer->kind == OpKind::Reshape ||
         producer->kind == OpKind::Expand || producer->kind == OpKind::BroadcastInDim ||
         producer->kind == OpKind::Squeeze || producer->kind == OpKind::Unsqueeze ||
         producer->kind == OpKind::Slice);
    args += (args.empty() ? "" : ", ") + (view ? view->views + " of " + arg : arg) +
            (copied ? " [" + arg + ": a " + std::string(op_name(producer->kind)) +
                          " no strides express, copied by a kernel]"
                    : "");
  }
  call.comment = out.name + " = " + (rv.active() ? rv.views + " of " : "") + op_name(op.kind) +
                 "(" + args + ")";
  return call;
}

}  // namespace fuserc
