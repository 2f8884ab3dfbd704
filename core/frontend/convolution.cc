// conv: typing and refusals, then its expansion (see convolution.h).
#include "core/frontend/convolution.h"

#include <algorithm>
#include <optional>

#include "core/base/text_util.h"
#include "core/frontend/op_typing.h"
#include "core/expr/expr_parse.h"
#include "core/frontend/op_builder.h"

namespace fuserc {
namespace {

using typing::arg_path;
using typing::describe;
using typing::fail;
using typing::tensor_arg;

int64_t literal_extent(const Value& v, size_t d, size_t arg, const char* what) {
  const Expr& e = v.shape[d];
  if (!e.is_const())
    fail(arg_path(arg), std::string("the ") + what + " of 'conv' must be an integer, got " +
                            e.str() + " in " + describe(v));
  return e.value();
}

// Output extent of one spatial dim: PyTorch's (H + 2p - d(k-1) - 1) // s + 1, and for a
// transposed conv (H - 1)s - 2p + d(k-1) + output_padding + 1.
Expr output_extent(const Expr& h, int64_t k, int64_t s, int64_t p, int64_t d) {
  return floordiv(h + Expr(2 * p - d * (k - 1) - 1), Expr(s)) + Expr(1);
}

Expr output_extent(const Expr& h, const OpAttrs& a, int64_t k, size_t i) {
  if (!a.transposed) return output_extent(h, k, a.stride[i], a.padding[i], a.dilation[i]);
  return (h - Expr(1)) * Expr(a.stride[i]) +
         Expr(a.dilation[i] * (k - 1) - 2 * a.padding[i] + a.output_padding[i] + 1);
}

}  // namespace

std::vector<InferredResult> infer_conv(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  const Value& w = tensor_arg(f, op, 1);
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Value& t = tensor_arg(f, op, i);
    if (!is_float(t.dtype))
      fail(arg_path(i), "'conv' takes floating operands; " + describe(t) + " is not (cast it first)");
    if (t.dtype != x.dtype)
      fail(arg_path(i), "the operands of 'conv' must have one dtype: " + describe(x) + " and " +
                            describe(t));
  }
  if (w.rank() < 3 || w.rank() > 5)
    fail(arg_path(1), "the weight of 'conv' is [C_out, C_in/groups, *kernel] over 1 to 3 "
                      "spatial dims, got " + describe(w));
  const size_t sd = static_cast<size_t>(w.rank()) - 2;
  if (x.rank() != w.rank())
    fail(arg_path(0), "the input of 'conv' is [N, C_in, *spatial] with " + std::to_string(sd) +
                          " spatial dims (as the weight " + describe(w) + " has), got " +
                          describe(x));
  OpAttrs& a = op.attrs;
  struct List {
    const char* key;
    std::vector<int64_t>* values;
    int64_t fallback, least;
  };
  for (const List& l : {List{"stride", &a.stride, 1, 1}, List{"padding", &a.padding, 0, 0},
                        List{"dilation", &a.dilation, 1, 1},
                        List{"output_padding", &a.output_padding, 0, 0}}) {
    if (l.values->empty()) l.values->assign(sd, l.fallback);
    if (l.values->size() != sd)
      fail(l.key, std::string(l.key) + " has " +
                      count_of(static_cast<int64_t>(l.values->size()), "entry", "entries") +
                      " but the conv has " + std::to_string(sd) + " spatial dims");
    for (size_t i = 0; i < sd; ++i)
      if ((*l.values)[i] < l.least)
        fail(std::string(l.key) + "[" + std::to_string(i) + "]",
             std::string(l.key) + " must be at least " + std::to_string(l.least) + ", got " +
                 std::to_string((*l.values)[i]));
  }
  if (a.groups < 1) fail("groups", "groups must be at least 1, got " + std::to_string(a.groups));
  for (size_t i = 0; i < sd; ++i) {
    if (!a.transposed && a.output_padding[i] != 0)
      fail("output_padding", "output_padding is for transposed convolution only");
    if (a.output_padding[i] >= std::max(a.stride[i], a.dilation[i]))
      fail("output_padding[" + std::to_string(i) + "]",
           "output_padding " + std::to_string(a.output_padding[i]) +
               " must be below the stride or the dilation (" + std::to_string(a.stride[i]) +
               ", " + std::to_string(a.dilation[i]) + ")");
  }
  const int64_t c = literal_extent(x, 1, 0, "channel extent");
  const int64_t w0 = literal_extent(w, 0, 1, "channel extent");
  const int64_t w1 = literal_extent(w, 1, 1, "channel extent");
  for (size_t i = 0; i < sd; ++i) literal_extent(w, 2 + i, 1, "kernel extent");
  if (c % a.groups != 0)
    fail("groups", "groups " + std::to_string(a.groups) + " does not divide the " +
                       std::to_string(c) + " input channels of " + describe(x));
  // The weight is [C_out, C/g, *kernel], or [C, C_out/g, *kernel] when transposed.
  const int64_t c_out = a.transposed ? w1 * a.groups : w0;
  if (a.transposed) {
    if (w0 != c)
      fail(arg_path(1), "the weight " + describe(w) + " of a transposed 'conv' is [C_in, " +
                            "C_out/groups, *kernel] with C_in " + std::to_string(c) +
                            " as the input " + describe(x) + " has");
  } else {
    if (w0 % a.groups != 0)
      fail("groups", "groups " + std::to_string(a.groups) + " does not divide the " +
                         std::to_string(w0) + " output channels of the weight " + describe(w));
    if (w1 != c / a.groups)
      fail(arg_path(1), "the weight " + describe(w) + " takes " + std::to_string(w1) +
                            " input channels per group, but " + describe(x) + " has " +
                            std::to_string(c) + " channels in " + std::to_string(a.groups) +
                            (a.groups == 1 ? " group" : " groups"));
  }
  if (op.args.size() == 3) {
    const Value& b = tensor_arg(f, op, 2);
    if (b.rank() != 1 || !b.shape[0].is_const(c_out))
      fail(arg_path(2), "the bias of 'conv' is [C_out] = [" + std::to_string(c_out) + "], got " +
                            describe(b));
  }
  std::vector<Expr> shape = {x.shape[0], Expr(c_out)};
  for (size_t i = 0; i < sd; ++i) {
    const int64_t k = w.shape[2 + i].value();
    Expr o = output_extent(x.shape[2 + i], a, k, i);
    std::string witness;
    if ((o.is_const() && o.value() <= 0) || (!o.is_const() && can_be_negative(o - Expr(1), &witness)))
      fail(arg_path(0), "the output extent " + o.str() + " of spatial dim " + std::to_string(i) +
                            " is not positive for every binding" +
                            (witness.empty() ? "" : " (less 1: " + witness + ")") +
                            " (input " + describe(x) + ", kernel " + std::to_string(k) +
                            ", stride " + std::to_string(a.stride[i]) + ", padding " +
                            std::to_string(a.padding[i]) + ", dilation " +
                            std::to_string(a.dilation[i]) +
                            (a.transposed ? ", output_padding " +
                                                std::to_string(a.output_padding[i]) + ", transposed"
                                          : std::string()) +
                            ")");
    shape.push_back(o);
  }
  return {{x.dtype, shape}};
}

namespace {

// A transposed conv is a direct one over its input with stride - 1 zeros between elements and
// d(k-1) - p zeros at the front (d(k-1) - p + output_padding at the back; negative pads crop),
// at stride 1, with the kernel flipped and each group's in and out channels swapped. Returns
// that input: [N, C, (H-1)s + 1 + 2(d(k-1) - p) + output_padding, ...].
ValueId spread_input(OpBuilder& b, ValueId x, const Value& xv, const OpAttrs& a,
                     const std::vector<int64_t>& kernel) {
  using B = OpBuilder;
  const size_t sd = kernel.size();
  bool strided = false;
  for (int64_t s : a.stride) strided = strided || s > 1;
  ValueId cur = x;
  if (strided) {
    // [N, C, H, 1, W, 1] padded to [N, C, H, s0, W, s1], merged to [N, C, H s0, W s1]: every
    // element followed by stride - 1 zeros (the last ones cropped below).
    std::vector<Expr> apart = {xv.shape[0], xv.shape[1]}, merged = apart;
    OpAttrs pad;
    pad.pads = {{Expr(0), Expr(0)}, {Expr(0), Expr(0)}};
    pad.value = Literal::of_int(0);
    for (size_t i = 0; i < sd; ++i) {
      apart.push_back(xv.shape[2 + i]);
      apart.push_back(Expr(1));
      merged.push_back(xv.shape[2 + i] * Expr(a.stride[i]));
      pad.pads.push_back({Expr(0), Expr(0)});
      pad.pads.push_back({Expr(0), Expr(a.stride[i] - 1)});
    }
    cur = b.emit(OpKind::Reshape, {B::tensor(cur)}, B::shape(apart), "apart");
    cur = b.emit(OpKind::Pad, {B::tensor(cur)}, pad, "spread");
    cur = b.emit(OpKind::Reshape, {B::tensor(cur)}, B::shape(merged), "spread_m");
  }
  OpAttrs pad;
  pad.pads = {{Expr(0), Expr(0)}, {Expr(0), Expr(0)}};
  pad.value = Literal::of_int(0);
  bool any = false;
  for (size_t i = 0; i < sd; ++i) {
    const int64_t front = a.dilation[i] * (kernel[i] - 1) - a.padding[i];
    const int64_t back = front + a.output_padding[i] - (a.stride[i] - 1);
    pad.pads.push_back({Expr(front), Expr(back)});
    any = any || front != 0 || back != 0;
  }
  if (any) cur = b.emit(OpKind::Pad, {B::tensor(cur)}, pad, "padded");
  return cur;
}

// The weight as the product's left operand [g, C_out/g, C/g * K] ([C_out, C * K] for one group).
// A transposed conv's [C, C_out/g, *kernel] has each group's two channel dims swapped; its
// kernel flip is in the order of the taps instead.
ValueId weight_matrix(OpBuilder& b, ValueId w, const OpAttrs& a, int64_t c, int64_t co,
                      int64_t positions) {
  using B = OpBuilder;
  const int64_t g = a.groups, ck = c / g * positions;
  std::vector<Expr> ws = g > 1 ? std::vector<Expr>{Expr(g), Expr(co / g), Expr(ck)}
                               : std::vector<Expr>{Expr(co), Expr(ck)};
  if (!a.transposed) return b.emit(OpKind::Reshape, {B::tensor(w)}, B::shape(ws), "weight");
  const ValueId split = b.emit(
      OpKind::Reshape, {B::tensor(w)},
      B::shape({Expr(g), Expr(c / g), Expr(co / g), Expr(positions)}), "weight_g");
  OpAttrs perm;
  perm.dims = {0, 2, 1, 3};
  const ValueId swapped = b.emit(OpKind::Permute, {B::tensor(split)}, perm, "weight_t");
  return b.emit(OpKind::Reshape, {B::tensor(swapped)}, B::shape(ws), "weight");
}

}  // namespace

void expand_conv(Fusion& f, const Op& op, const std::string& out,
                 const std::function<std::string(const std::string&)>& fresh) {
  OpBuilder b(f, op.source_index, out, fresh);
  using B = OpBuilder;
  const OpAttrs& a = op.attrs;
  const ValueId x = op.args[0].value, w = op.args[1].value;
  const Value xv = f.value(x);  // copies: the builder adds values
  const Value wv = f.value(w);
  const size_t sd = static_cast<size_t>(wv.rank()) - 2;
  const int64_t c = xv.shape[1].value(), g = a.groups;
  const int64_t co = a.transposed ? wv.shape[1].value() * g : wv.shape[0].value();
  std::vector<int64_t> kernel;
  int64_t positions = 1;
  for (size_t i = 0; i < sd; ++i) {
    kernel.push_back(wv.shape[2 + i].value());
    positions *= kernel.back();
  }
  std::vector<Expr> outs;  // output spatial extents
  Expr p(1);
  for (size_t i = 0; i < sd; ++i) {
    outs.push_back(output_extent(xv.shape[2 + i], a, kernel[i], i));
    p = p * outs.back();
  }
  // The input the taps slice: padded with zeros (transposed: spread apart by the stride too),
  // and the taps' stride (1 for a transposed conv).
  ValueId xp = x;
  std::vector<int64_t> step = a.stride;
  bool padded = false;
  if (a.transposed) {
    xp = spread_input(b, x, xv, a, kernel);
    padded = xp != x;
    step.assign(sd, 1);
  } else {
    for (int64_t v : a.padding) padded = padded || v != 0;
    if (padded) {
      OpAttrs pad;
      pad.pads = {{Expr(0), Expr(0)}, {Expr(0), Expr(0)}};
      for (size_t i = 0; i < sd; ++i)
        pad.pads.push_back({Expr(a.padding[i]), Expr(a.padding[i])});
      pad.value = Literal::of_int(0);
      xp = b.emit(OpKind::Pad, {B::tensor(x)}, pad, "padded");
    }
  }
  // A kernel that tiles the input (stride = kernel, no padding or dilation: a vision
  // transformer's patch embedding, a ConvNeXt stem or downsampling) needs no taps: the input,
  // cropped to whole tiles, is reshaped to [N, C, o1, k1, o2, k2, ...] and permuted to
  // [N, C, k1, k2, ..., o1, o2, ...], the patches' layout.
  bool tiles = !a.transposed && positions > 1;
  for (size_t i = 0; i < sd; ++i)
    tiles = tiles && a.stride[i] == kernel[i] && a.padding[i] == 0 && a.dilation[i] == 1;
  std::optional<ValueId> tiled;
  if (tiles) {
    std::vector<Expr> whole = {xv.shape[0], Expr(c)}, apart = whole;
    OpAttrs crop;
    crop.starts = {Expr(0), Expr(0)};
    crop.ends = {xv.shape[0], Expr(c)};
    crop.steps = {Expr(1), Expr(1)};
    bool cropped = false;
    for (size_t i = 0; i < sd; ++i) {
      const Expr e = outs[i] * Expr(kernel[i]);
      whole.push_back(e);
      crop.starts.push_back(Expr(0));
      crop.ends.push_back(e);
      crop.steps.push_back(Expr(1));
      cropped = cropped || !(e == xv.shape[2 + i]);
      apart.push_back(outs[i]);
      apart.push_back(Expr(kernel[i]));
    }
    ValueId cur = x;
    if (cropped)
      cur = b.emit_typed(OpKind::Slice, {B::tensor(cur)}, crop, "tiles", xv.dtype, whole);
    cur = b.emit(OpKind::Reshape, {B::tensor(cur)}, B::shape(apart), "tiles_apart");
    OpAttrs perm;
    perm.dims = {0, 1};
    for (size_t i = 0; i < sd; ++i) perm.dims.push_back(static_cast<int64_t>(3 + 2 * i));
    for (size_t i = 0; i < sd; ++i) perm.dims.push_back(static_cast<int64_t>(2 + 2 * i));
    tiled = b.emit(OpKind::Permute, {B::tensor(cur)}, perm, "patches");  // [N, C, *k, *out]
  }
  // One strided slice per kernel position: [N, C, *out] (typed here: its extent is `outs`,
  // which inference could only reach through a clamp it cannot prove away). A transposed conv
  // takes them in reverse order: the flipped kernel.
  std::vector<Expr> slice_shape = {xv.shape[0], Expr(c)};
  slice_shape.insert(slice_shape.end(), outs.begin(), outs.end());
  std::vector<Operand> parts;
  std::vector<int64_t> at(sd, 0);  // the kernel position, last dim fastest
  for (int64_t q = 0; q < (tiled ? 0 : positions); ++q) {
    OpAttrs s;
    s.starts = {Expr(0), Expr(0)};
    s.ends = {xv.shape[0], Expr(c)};
    s.steps = {Expr(1), Expr(1)};
    for (size_t i = 0; i < sd; ++i) {
      const int64_t start = at[i] * a.dilation[i];
      s.starts.push_back(Expr(start));
      s.ends.push_back(Expr(start + 1) + (outs[i] - Expr(1)) * Expr(step[i]));
      s.steps.push_back(Expr(step[i]));
    }
    bool whole = !padded && positions == 1;
    for (size_t i = 0; i < sd; ++i) whole = whole && step[i] == 1;
    ValueId part = whole ? xp
                         : b.emit_typed(OpKind::Slice, {B::tensor(xp)}, s,
                                        "tap" + std::to_string(q), xv.dtype, slice_shape);
    if (positions > 1) part = b.emit(OpKind::Unsqueeze, {B::tensor(part)}, B::dim(2), "tap_u");
    parts.push_back(B::tensor(part));
    for (size_t i = sd; i-- > 0;) {
      if (++at[i] < kernel[i]) break;
      at[i] = 0;
    }
  }
  if (a.transposed) std::reverse(parts.begin(), parts.end());
  ValueId patches = tiled ? *tiled : parts[0].value;
  if (positions > 1 && !tiled) {
    OpAttrs cat;
    cat.dim = 2;
    patches = b.emit(OpKind::Cat, parts, cat, "patches");  // [N, C, K, *out]
  }
  // [N, g, C/g * K, P] @ ... : the weight [g, C_out/g, C/g * K] on the left, shared by N.
  const Expr n = xv.shape[0];
  const int64_t ck = c / g * positions;
  std::vector<Expr> cols = g > 1 ? std::vector<Expr>{n, Expr(g), Expr(ck), p}
                                 : std::vector<Expr>{n, Expr(ck), p};
  const ValueId xc = b.emit(OpKind::Reshape, {B::tensor(patches)}, B::shape(cols), "columns");
  const ValueId wr = weight_matrix(b, w, a, c, co, positions);
  OpAttrs product;
  product.allow_tf32 = a.allow_tf32;
  const ValueId y = b.emit(OpKind::Matmul, {B::tensor(wr), B::tensor(xc)}, product, "product");
  std::vector<Expr> ys = {n, Expr(co)};
  ys.insert(ys.end(), outs.begin(), outs.end());
  const bool bias = op.args.size() == 3;
  const ValueId yr = b.emit(OpKind::Reshape, {B::tensor(y)}, B::shape(ys), bias ? "y" : out, !bias);
  if (!bias) return;
  std::vector<Expr> bs = {Expr(co)};
  bs.insert(bs.end(), sd, Expr(1));
  const ValueId br = b.emit(OpKind::Reshape, {op.args[2]}, B::shape(bs), "bias");
  b.emit(OpKind::Add, {B::tensor(yr), B::tensor(br)}, {}, out, true);
}

}  // namespace fuserc
