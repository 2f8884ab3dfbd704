// scaled_dot_product_attention: typing and refusals, then its expansion (see attention.h).
#include "core/frontend/attention.h"

#include <cmath>
#include <limits>
#include <optional>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/frontend/op_typing.h"
#include "core/frontend/broadcasting.h"
#include "core/frontend/op_builder.h"

namespace fuserc {
namespace {

using typing::arg_path;
using typing::describe;
using typing::fail;
using typing::tensor_arg;

std::vector<Expr> leading(const Value& v, size_t drop) {
  return {v.shape.begin(), v.shape.end() - static_cast<std::ptrdiff_t>(drop)};
}

Expr from_end(const Value& v, size_t i) {
  return v.shape[v.shape.size() - i];
}

// q's heads per k head (grouped-query attention) when that is one number for every binding:
// integer head counts that divide, or q's a constant multiple of k's (2*H and H).
std::optional<int64_t> head_groups(const Expr& hq, const Expr& hk) {
  if (hq.is_const() && hk.is_const()) {
    if (hk.value() <= 0 || hq.value() % hk.value() != 0) return std::nullopt;
    return hq.value() / hk.value();
  }
  // The ratio at one binding, then proved for all.
  auto at_seven = [](const Expr& e) {
    return substitute(e, [](const std::string&) { return std::optional<Expr>(Expr(7)); });
  };
  const Expr q7 = at_seven(hq), k7 = at_seven(hk);
  if (!q7.is_const() || !k7.is_const() || k7.value() <= 0 || q7.value() % k7.value() != 0)
    return std::nullopt;
  const int64_t g = q7.value() / k7.value();
  if (!eq(hq, hk * Expr(g)).is_const(1)) return std::nullopt;
  return g;
}

// Whether q's heads are served by groups of k's (enable_gqa, head counts that differ).
bool grouped(const Fusion& f, const Op& op) {
  const Value& q = f.value(op.args[0].value);
  const Value& k = f.value(op.args[1].value);
  return op.attrs.enable_gqa && q.rank() >= 3 && k.rank() >= 3 && from_end(q, 3) != from_end(k, 3);
}

// The scores' shape [..., L, S], checking that q, k and v's leading dimensions broadcast.
std::vector<Expr> batch_shape(const Fusion& f, const Op& op) {
  const Value& q = f.value(op.args[0].value);
  std::vector<Expr> kb = leading(f.value(op.args[1].value), 2);
  std::vector<Expr> vb = leading(f.value(op.args[2].value), 2);
  if (grouped(f, op)) {  // k and v serve every query head of their group
    kb[kb.size() - 1] = from_end(q, 3);
    vb[vb.size() - 1] = from_end(q, 3);
  }
  BroadcastResult b = broadcast_shapes({leading(q, 2), kb, vb});
  if (b.failure)
    fail(arg_path(b.failure->operand_b),
         "the leading (batch and head) dimensions of q, k and v do not broadcast: " +
             b.failure->reason +
             (op.attrs.enable_gqa ? "" : " (heads that differ need \"enable_gqa\": true)"));
  return b.shape;
}

}  // namespace

std::vector<InferredResult> infer_attention(const Fusion& f, Op& op) {
  const Value& q = tensor_arg(f, op, 0);
  const Value& k = tensor_arg(f, op, 1);
  const Value& v = tensor_arg(f, op, 2);
  const char* names[] = {"q", "k", "v"};
  for (size_t i = 0; i < 3; ++i) {
    const Value& t = f.value(op.args[i].value);
    if (!is_float(t.dtype))
      fail(arg_path(i), std::string("'scaled_dot_product_attention' takes floating q, k and v; ") +
                            names[i] + " is " + describe(t));
    if (t.dtype != q.dtype)
      fail(arg_path(i), std::string("q, k and v must have one dtype: q is ") + describe(q) +
                            ", " + names[i] + " is " + describe(t));
    if (t.rank() < 2)
      fail(arg_path(i), std::string(names[i]) + " must have rank 2 or more ([..., L, E]), got " +
                            describe(t));
  }
  if (from_end(k, 1) != from_end(q, 1))
    fail(arg_path(1), "k's embedding dim " + from_end(k, 1).str() + " differs from q's " +
                          from_end(q, 1).str() + ": q is " + describe(q) + ", k is " +
                          describe(k));
  if (from_end(v, 2) != from_end(k, 2))
    fail(arg_path(2), "v's sequence length " + from_end(v, 2).str() + " differs from k's " +
                          from_end(k, 2).str() + ": k is " + describe(k) + ", v is " +
                          describe(v));
  const bool has_mask = op.args.size() == 4;
  if (has_mask && op.attrs.is_causal)
    fail("is_causal", "is_causal and a mask are not given together (PyTorch refuses it too)");
  if (grouped(f, op)) {
    const Expr hq = from_end(q, 3), hk = from_end(k, 3);
    if (v.rank() < 3 || from_end(v, 3) != hk)
      fail(arg_path(2), "k and v must have the same number of heads: k is " + describe(k) +
                            ", v is " + describe(v));
    if (!head_groups(hq, hk))
      fail(arg_path(1), "q's " + hq.str() + " heads are not " +
                            (hq.is_const() && hk.is_const() ? "a multiple" : "a constant multiple") +
                            " of k's " + hk.str() + " (enable_gqa): q is " + describe(q) +
                            ", k is " + describe(k));
  }
  std::vector<Expr> scores = batch_shape(f, op);
  scores.push_back(from_end(q, 2));
  scores.push_back(from_end(k, 2));
  if (has_mask) {
    const Value& m = tensor_arg(f, op, 3);
    if (m.dtype != DType::Bool && !is_float(m.dtype))
      fail(arg_path(3), "the mask must be bool (true keeps a position) or floating (added to "
                        "the scores), got " + describe(m));
    bool fits = static_cast<size_t>(m.rank()) <= scores.size();
    for (size_t i = 1; fits && i <= static_cast<size_t>(m.rank()); ++i) {
      const Expr& e = m.shape[m.rank() - i];
      fits = e.is_const(1) || e == scores[scores.size() - i];
    }
    if (!fits)
      fail(arg_path(3), "the mask " + describe(m) + " does not broadcast to the scores " +
                            shape_to_string(scores) + " without enlarging them");
  }
  std::vector<Expr> shape(scores.begin(), scores.end() - 1);
  shape.push_back(from_end(v, 1));
  return {{q.dtype, shape}};
}

void expand_attention(Fusion& f, const Op& op, const std::string& out,
                      const std::function<std::string(const std::string&)>& fresh) {
  const ValueId qid = op.args[0].value, kid = op.args[1].value, vid = op.args[2].value;
  const DType dtype = f.value(qid).dtype;
  // The softmax's type: f32, or f64 for f64 operands.
  const DType acc = dtype == DType::F64 ? DType::F64 : DType::F32;
  OpBuilder b(f, op.source_index, out, fresh);
  using B = OpBuilder;
  auto tensor = B::tensor;
  auto literal = B::literal;
  auto emit = [&](OpKind kind, std::vector<Operand> args, OpAttrs attrs, const std::string& name,
                  bool final = false) { return b.emit(kind, std::move(args), std::move(attrs), name, final); };
  auto with_dims = B::dims;
  auto with_dtype = B::dtype;
  auto with_dim = B::dim;
  auto with_shape = B::shape;
  OpAttrs product;
  product.allow_tf32 = op.attrs.allow_tf32;

  // Grouped-query heads: q [..., Hq, L, E] as [..., Hk, G, L, E]; k and v [..., Hk, 1, S, *].
  const bool gqa = grouped(f, op);
  const Value& q0 = f.value(qid);
  const std::vector<Expr> q_shape = q0.shape;
  const Expr E = from_end(q0, 1);
  ValueId q = qid, k = kid, v = vid;
  int64_t groups = 1;
  const Expr hk = gqa ? from_end(f.value(kid), 3) : Expr(1);
  if (gqa) {
    groups = *head_groups(from_end(q0, 3), hk);
    std::vector<Expr> s = leading(q0, 3);
    s.insert(s.end(), {hk, Expr(groups), from_end(q0, 2), E});
    q = emit(OpKind::Reshape, {tensor(qid)}, with_shape(s), "q_groups");
    k = emit(OpKind::Unsqueeze, {tensor(kid)},
             with_dim(static_cast<int64_t>(f.value(kid).rank()) - 2), "k_groups");
    v = emit(OpKind::Unsqueeze, {tensor(vid)},
             with_dim(static_cast<int64_t>(f.value(vid).rank()) - 2), "v_groups");
  }
  // scores = (q @ k^T) in the softmax's type (the library writes them so), times the scale.
  const auto kr = static_cast<int64_t>(f.value(k).rank());
  OpAttrs swap;
  for (int64_t d = 0; d < kr; ++d) swap.dims.push_back(d);
  std::swap(swap.dims[static_cast<size_t>(kr - 1)], swap.dims[static_cast<size_t>(kr - 2)]);
  const ValueId kt = emit(OpKind::Permute, {tensor(k)}, swap, "kt");
  ValueId s = emit(OpKind::Matmul, {tensor(q), tensor(kt)}, product, "qk");
  if (dtype != acc) s = emit(OpKind::Cast, {tensor(s)}, with_dtype(acc), "qk_f");
  if (op.attrs.scale || E.is_const()) {
    const double scale =
        op.attrs.scale ? *op.attrs.scale : 1.0 / std::sqrt(static_cast<double>(E.value()));
    s = emit(OpKind::Mul, {tensor(s), literal(Literal::of_float(scale))}, {}, "scores");
  } else {  // a symbolic E: 1/sqrt(E) at run time, from the size E
    OpAttrs e;
    e.dtype = acc;
    e.value = f.size_literal(E);
    const ValueId ev = emit(OpKind::Full, {}, e, "embedding");
    const ValueId r = emit(OpKind::Rsqrt, {tensor(ev)}, {}, "scale");
    s = emit(OpKind::Mul, {tensor(s), tensor(r)}, {}, "scores");
  }
  const auto rank = static_cast<int64_t>(f.value(s).rank());
  const Operand minus_inf = literal(Literal::of_float(-std::numeric_limits<double>::infinity()));
  if (op.args.size() == 4) {
    ValueId m = op.args[3].value;
    const Value& mv = f.value(m);
    const auto mr = static_cast<int64_t>(mv.rank());
    if (gqa && mr >= 3) {  // the mask's head dimension, as the scores' (groups of heads)
      if (from_end(mv, 3).is_const(1)) {
        m = emit(OpKind::Unsqueeze, {tensor(m)}, with_dim(mr - 2), "mask_groups");
      } else {
        std::vector<Expr> ms = leading(mv, 3);
        // (the mask's heads are q's: k's heads in groups)
        ms.insert(ms.end(), {hk, Expr(groups), from_end(mv, 2), from_end(mv, 1)});
        m = emit(OpKind::Reshape, {tensor(m)}, with_shape(ms), "mask_groups");
      }
    }
    if (f.value(m).dtype == DType::Bool) {
      s = emit(OpKind::Where, {tensor(m), tensor(s), minus_inf}, {}, "masked");
    } else {
      if (f.value(m).dtype != acc) m = emit(OpKind::Cast, {tensor(m)}, with_dtype(acc), "mask_f");
      s = emit(OpKind::Add, {tensor(s), tensor(m)}, {}, "masked");
    }
  } else if (op.attrs.is_causal) {  // keep key j for query i where j <= i (top-left)
    const Value& sv = f.value(s);
    OpAttrs rows, cols;
    rows.length = sv.shape[static_cast<size_t>(rank - 2)];
    cols.length = sv.shape[static_cast<size_t>(rank - 1)];
    for (OpAttrs* a : {&rows, &cols}) {
      a->dtype = DType::I64;
      a->start = Literal::of_int(0);
      a->step = Literal::of_int(1);
    }
    const ValueId i = emit(OpKind::Iota, {}, rows, "query");
    const ValueId j = emit(OpKind::Iota, {}, cols, "key");
    const ValueId ic = emit(OpKind::Unsqueeze, {tensor(i)}, with_dim(1), "query_col");
    const ValueId keep = emit(OpKind::Ge, {tensor(ic), tensor(j)}, {}, "causal");
    s = emit(OpKind::Where, {tensor(keep), tensor(s), minus_inf}, {}, "masked");
  }
  // softmax over the keys, in the softmax's type
  const ValueId mx = emit(OpKind::Amax, {tensor(s)}, with_dims({rank - 1}, true), "max");
  const ValueId d = emit(OpKind::Sub, {tensor(s), tensor(mx)}, {}, "shifted");
  const ValueId e = emit(OpKind::Exp, {tensor(d)}, {}, "exp");
  const ValueId sum = emit(OpKind::Sum, {tensor(e)}, with_dims({rank - 1}, true), "sum");
  ValueId p = emit(OpKind::Div, {tensor(e), tensor(sum)}, {}, "probs");
  if (dtype != acc) p = emit(OpKind::Cast, {tensor(p)}, with_dtype(dtype), "probs_r");
  // out = p @ v ([..., Hk, G, L, Ev] back to [..., Hq, L, Ev] for groups)
  if (!gqa) {
    emit(OpKind::Matmul, {tensor(p), tensor(v)}, product, out, true);
    return;
  }
  const ValueId o = emit(OpKind::Matmul, {tensor(p), tensor(v)}, product, "groups_out");
  const std::vector<Expr> ov = f.value(o).shape;  // [batch.., Hk, G, L, Ev]
  std::vector<Expr> os(ov.begin(), ov.end() - 4);
  os.insert(os.end(), {q_shape[q_shape.size() - 3], ov[ov.size() - 2], ov.back()});
  emit(OpKind::Reshape, {tensor(o)}, with_shape(os), out, true);
}

}  // namespace fuserc
