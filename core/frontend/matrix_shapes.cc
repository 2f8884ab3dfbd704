// Typing matmul and linear as PyTorch does: matmul of rank-1 and rank-2 operands (a rank-1
// operand is a row on the left, a column on the right, its dimension dropped from the result)
// and of batched ones whose batch dimensions broadcast (an extent of literal 1, or a missing
// leading dimension); linear(x, w, b) is x @ w^T + b with w [out, in] and b [out]. Inner
// extents must be equal expressions; operands are floating point of one dtype (the mask of
// attention aside, not here), the result has that dtype.
#include <string>

#include "core/base/text_util.h"
#include "core/frontend/attention.h"
#include "core/frontend/convolution.h"
#include "core/frontend/op_typing.h"
#include "core/frontend/shape_inference.h"

namespace fuserc {
namespace {

using typing::arg_path;
using typing::describe;
using typing::fail;
using typing::tensor_arg;

// Floating operands of one dtype.
DType operand_dtype(const Fusion& f, const Op& op) {
  const Value& first = tensor_arg(f, op, 0);
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Value& v = tensor_arg(f, op, i);
    if (!is_float(v.dtype))
      fail(arg_path(i), std::string("'") + op_name(op.kind) +
                            "' multiplies floating-point matrices; " + describe(v) +
                            " is not (cast it first)");
    if (v.dtype != first.dtype)
      fail(arg_path(i), std::string("'") + op_name(op.kind) + "' takes operands of one dtype: " +
                            describe(first) + " and " + describe(v) + " differ (cast one)");
  }
  return first.dtype;
}

std::vector<InferredResult> infer_matmul(const Fusion& f, Op& op) {
  const Value& a = tensor_arg(f, op, 0);
  const Value& b = tensor_arg(f, op, 1);
  DType dtype = operand_dtype(f, op);
  for (size_t i = 0; i < 2; ++i)
    if (tensor_arg(f, op, i).rank() == 0)
      fail(arg_path(i), "'matmul' needs operands of rank 1 or more, got " +
                            describe(tensor_arg(f, op, i)) + " (multiply a scalar with 'mul')");
  // As matrices: a rank-1 `a` is [1, K], a rank-1 `b` is [K, 1].
  std::vector<Expr> as = a.shape, bs = b.shape;
  if (a.rank() == 1) as.insert(as.begin(), Expr(1));
  if (b.rank() == 1) bs.push_back(Expr(1));
  const Expr& ka = as.back();
  const Expr& kb = bs[bs.size() - 2];
  if (ka != kb)
    fail(arg_path(1), "the inner extents of " + describe(a) + " and " + describe(b) +
                          " differ: " + ka.str() + " and " + kb.str() +
                          (ka.is_const() || kb.is_const()
                               ? ""
                               : " (symbols must be the same expression)"));
  // Batch dimensions broadcast, aligned on the right.
  const size_t ab = as.size() - 2, bb = bs.size() - 2, nb = std::max(ab, bb);
  std::vector<Expr> shape;
  for (size_t d = 0; d < nb; ++d) {
    const bool in_a = d + ab >= nb, in_b = d + bb >= nb;
    Expr ea = in_a ? as[d + ab - nb] : Expr(1);
    Expr eb = in_b ? bs[d + bb - nb] : Expr(1);
    if (ea == eb || eb.is_const(1)) {
      shape.push_back(ea);
    } else if (ea.is_const(1)) {
      shape.push_back(eb);
    } else {
      fail(arg_path(1), "the batch dimensions of " + describe(a) + " and " + describe(b) +
                            " do not broadcast: " + ea.str() + " and " + eb.str() +
                            " in batch dimension " + std::to_string(d));
    }
  }
  if (a.rank() > 1) shape.push_back(as[as.size() - 2]);
  if (b.rank() > 1) shape.push_back(bs.back());
  return {{dtype, shape}};
}

std::vector<InferredResult> infer_linear(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  const Value& w = tensor_arg(f, op, 1);
  DType dtype = operand_dtype(f, op);
  if (x.rank() == 0)
    fail(arg_path(0), "'linear' needs an input of rank 1 or more, got " + describe(x));
  if (w.rank() != 2)
    fail(arg_path(1), "the weight of 'linear' is [out, in], got " + describe(w));
  if (x.shape.back() != w.shape[1])
    fail(arg_path(1), "the weight " + describe(w) + " takes inputs of " + w.shape[1].str() +
                          " features, but " + describe(x) + " has " + x.shape.back().str());
  if (op.args.size() == 3) {
    const Value& bias = tensor_arg(f, op, 2);
    if (bias.rank() != 1 || bias.shape[0] != w.shape[0])
      fail(arg_path(2), "the bias of 'linear' is [out] = [" + w.shape[0].str() + "], got " +
                            describe(bias));
  }
  std::vector<Expr> shape = x.shape;
  shape.back() = w.shape[0];
  return {{dtype, shape}};
}

}  // namespace

std::vector<InferredResult> infer_matrix(const Fusion& f, Op& op) {
  if (op.kind == OpKind::Matmul) return infer_matmul(f, op);
  if (op.kind == OpKind::Attention) return infer_attention(f, op);
  if (op.kind == OpKind::Conv) return infer_conv(f, op);
  return infer_linear(f, op);
}

}  // namespace fuserc
