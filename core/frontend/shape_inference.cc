#include "core/frontend/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>

#include "core/base/diagnostics.h"
#include "core/base/text_util.h"
#include "core/frontend/broadcasting.h"
#include "core/frontend/type_promotion.h"
#include "core/ir/op_semantics.h"

namespace fuserc {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw OpError{where, message};
}

std::string arg_path(size_t i) {
  return "args[" + std::to_string(i) + "]";
}
std::string index_path(const char* key, size_t i) {
  return std::string(key) + "[" + std::to_string(i) + "]";
}

std::string describe(const Fusion& f, const Operand& a) {
  if (a.is_literal()) return "the literal " + a.literal.str();
  const Value& v = f.value(a.value);
  return "'" + v.name + "' (" + dtype_name(v.dtype) + shape_to_string(v.shape) + ")";
}

const Value& tensor_arg(const Fusion& f, const Op& op, size_t i) {
  const Operand& a = op.args[i];
  if (a.is_literal())
    fail(arg_path(i),
         std::string("'") + op_name(op.kind) + "' takes a tensor name here, not " + describe(f, a));
  return f.value(a.value);
}

int64_t normalize_dim(int64_t d, int rank, const std::string& where) {
  int r = std::max(rank, 1);  // rank-0 tensors accept dims 0 and -1, as in PyTorch
  if (d < -r || d >= r)
    fail(where, "dimension " + std::to_string(d) + " is out of range for a tensor of rank " +
                    std::to_string(rank) + " (valid: " + std::to_string(-r) + " to " +
                    std::to_string(r - 1) + ")");
  return d < 0 ? d + r : d;
}

std::vector<int64_t> normalize_unique_dims(const std::vector<int64_t>& dims, int rank,
                                           const char* key) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = normalize_dim(dims[i], rank, index_path(key, i));
    if (std::find(out.begin(), out.end(), d) != out.end())
      fail(index_path(key, i), "dimension " + std::to_string(d) + " is listed twice");
    out.push_back(d);
  }
  return out;
}

// ---------------------------------------------------------------- elementwise

std::vector<InferredResult> infer_elementwise(const Fusion& f, Op& op) {
  const OpInfo& info = op.info();
  std::vector<std::vector<Expr>> shapes;
  std::vector<size_t> shape_arg;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if (op.args[i].is_literal()) continue;
    shapes.push_back(f.value(op.args[i].value).shape);
    shape_arg.push_back(i);
  }
  BroadcastResult bc = broadcast_shapes(shapes);
  if (bc.failure) {
    const auto& fl = *bc.failure;
    size_t a = shape_arg[fl.operand_a], b = shape_arg[fl.operand_b];
    fail(arg_path(b), "cannot broadcast " + describe(f, op.args[a]) + " with " +
                          describe(f, op.args[b]) + ": in result dimension " +
                          std::to_string(fl.dim) + ", " + fl.reason);
  }
  std::vector<TypedOperand> typed;
  size_t first = info.dtype_rule == DtypeRule::Where ? 1 : 0;
  for (size_t i = first; i < op.args.size(); ++i) typed.push_back(typed_operand(f, op.args[i]));
  DType rt = result_type(typed);
  DType out = rt;
  switch (info.dtype_rule) {
    case DtypeRule::Promote: break;
    case DtypeRule::PromoteNoBool:
      if (rt == DType::Bool)
        fail("", std::string("'") + info.name + "' is not defined for bool operands");
      break;
    case DtypeRule::FloatResult:
      if (!is_float(rt)) out = DType::F32;
      break;
    case DtypeRule::FloatOnly:
      if (!is_float(rt))
        fail("", std::string("'") + info.name + "' needs floating-point operands, got " +
                     dtype_name(rt));
      break;
    case DtypeRule::Predicate: out = DType::Bool; break;
    case DtypeRule::Bitwise:
      if (is_float(rt))
        fail("", std::string("'") + info.name + "' needs integer or bool operands, got " +
                     dtype_name(rt));
      break;
    case DtypeRule::Where: {
      TypedOperand c = typed_operand(f, op.args[0]);
      if (c.dtype != DType::Bool)
        fail(arg_path(0), "the condition of 'where' must be bool, got " + describe(f, op.args[0]));
      break;
    }
    case DtypeRule::Cast: out = *op.attrs.dtype; break;
    case DtypeRule::Special: FUSERC_UNREACHABLE("elementwise op with a special dtype rule");
  }
  return {InferredResult{out, bc.shape}};
}

// ---------------------------------------------------------------- reductions

std::vector<InferredResult> infer_reduction(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  OpAttrs& a = op.attrs;
  if (a.dims.empty() && x.rank() > 0)
    fail("dims", "is empty: list the dimensions to reduce (all of them for a full reduction)");
  a.dims = normalize_unique_dims(a.dims, x.rank(), "dims");
  if (x.rank() == 0) a.dims.clear();  // reducing the single element of a rank-0 tensor
  std::sort(a.dims.begin(), a.dims.end());
  std::vector<Expr> shape;
  for (int d = 0; d < x.rank(); ++d) {
    bool reduced = std::binary_search(a.dims.begin(), a.dims.end(), d);
    if (!reduced)
      shape.push_back(x.shape[d]);
    else if (a.keepdim)
      shape.push_back(Expr(1));
  }
  DType in = x.dtype;
  DType out = in;
  auto need_float = [&]() {
    if (!is_float(in))
      fail(arg_path(0), std::string("'") + op_name(op.kind) + "' of " + describe(f, op.args[0]) +
                            " is not defined: it needs a floating-point input (cast it first)");
  };
  switch (op.kind) {
    case OpKind::Sum: out = a.dtype ? *a.dtype : (is_float(in) ? in : DType::I64); break;
    case OpKind::Prod: out = is_float(in) ? in : DType::I64; break;
    case OpKind::Mean:
      need_float();
      if (a.dtype && !is_float(*a.dtype))
        fail("dtype", std::string("the dtype of 'mean' must be floating point, got ") +
                          dtype_name(*a.dtype));
      out = a.dtype ? *a.dtype : in;
      break;
    case OpKind::Var:
    case OpKind::VarMean:
      need_float();
      if (a.correction < 0)
        fail("correction", "correction " + std::to_string(a.correction) + " must not be negative");
      break;
    default: break;  // max, min, amax, amin keep the dtype
  }
  std::vector<InferredResult> r = {{out, shape}};
  if (op.kind == OpKind::VarMean) r.push_back({out, shape});
  return r;
}

// ---------------------------------------------------------------- shape ops

std::vector<InferredResult> infer_broadcast_in_dim(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  const auto& shape = op.attrs.shape;
  const auto& bd = op.attrs.broadcast_dims;
  int out_rank = static_cast<int>(shape.size());
  if (static_cast<int>(bd.size()) != x.rank())
    fail("broadcast_dims", "has " + count_of(static_cast<int64_t>(bd.size()), "entry", "entries") +
                               " but " + describe(f, op.args[0]) + " has rank " +
                               std::to_string(x.rank()));
  for (size_t i = 0; i < bd.size(); ++i) {
    std::string where = index_path("broadcast_dims", i);
    if (bd[i] < 0 || bd[i] >= out_rank)
      fail(where, "result dimension " + std::to_string(bd[i]) + " is out of range for rank " +
                      std::to_string(out_rank));
    if (i > 0 && bd[i] <= bd[i - 1]) fail(where, "broadcast_dims must be strictly increasing");
    const Expr& xe = x.shape[i];
    const Expr& oe = shape[bd[i]];
    if (!xe.is_const(1) && xe != oe)
      fail(where, "operand dimension " + std::to_string(i) + " (extent " + xe.str() +
                      ") cannot become result dimension " + std::to_string(bd[i]) + " (extent " +
                      oe.str() + "): only extents of 1 broadcast");
  }
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_expand(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  auto& shape = op.attrs.shape;
  int out_rank = static_cast<int>(shape.size());
  if (out_rank < x.rank())
    fail("shape", "has " + count_of(out_rank, "dimension", "dimensions") +
                      ", fewer than the rank " + std::to_string(x.rank()) + " of " +
                      describe(f, op.args[0]));
  int offset = out_rank - x.rank();
  for (int j = 0; j < out_rank; ++j) {
    std::string where = index_path("shape", j);
    int i = j - offset;
    if (i < 0) {
      if (shape[j].is_const(-1)) fail(where, "-1 (keep) is only allowed for existing dimensions");
      continue;
    }
    const Expr& xe = x.shape[i];
    if (shape[j].is_const(-1)) {
      shape[j] = xe;
    } else if (!xe.is_const(1) && xe != shape[j]) {
      fail(where, "cannot expand dimension " + std::to_string(i) + " of extent " + xe.str() +
                      " to " + shape[j].str() + ": only extents of 1 expand");
    }
  }
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_reshape(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  auto& shape = op.attrs.shape;
  Expr total = x.numel();
  int infer_at = -1;
  Expr known(1);
  for (size_t j = 0; j < shape.size(); ++j) {
    if (shape[j].is_const(-1)) {
      if (infer_at >= 0) fail(index_path("shape", j), "only one extent may be -1");
      infer_at = static_cast<int>(j);
    } else {
      known = known * shape[j];
    }
  }
  if (infer_at >= 0) {
    Expr q = floordiv(total, known);
    if (q * known != total)
      fail(index_path("shape", infer_at), "cannot infer -1: the element count " + total.str() +
                                              " of " + describe(f, op.args[0]) +
                                              " is not provably a multiple of " + known.str());
    shape[infer_at] = q;
  } else if (known != total) {
    fail("shape", "reshape to " + shape_to_string(shape) + " (" + known.str() + " elements) from " +
                      describe(f, op.args[0]) + " (" + total.str() +
                      " elements): the element counts are not provably equal");
  }
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_permute(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  auto& dims = op.attrs.dims;
  if (static_cast<int>(dims.size()) != x.rank())
    fail("dims", "has " + count_of(static_cast<int64_t>(dims.size()), "entry", "entries") +
                     " but " + describe(f, op.args[0]) + " has rank " + std::to_string(x.rank()));
  dims = normalize_unique_dims(dims, x.rank(), "dims");
  std::vector<Expr> shape;
  for (int64_t d : dims) shape.push_back(x.shape[d]);
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_squeeze(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  auto& dims = op.attrs.dims;
  dims = normalize_unique_dims(dims, x.rank(), "dims");
  if (x.rank() == 0) dims.clear();
  for (size_t i = 0; i < dims.size(); ++i)
    if (!x.shape[dims[i]].is_const(1))
      fail(index_path("dims", i), "dimension " + std::to_string(dims[i]) + " of " +
                                      describe(f, op.args[0]) + " has extent " +
                                      x.shape[dims[i]].str() + ", not 1");
  std::sort(dims.begin(), dims.end());
  std::vector<Expr> shape;
  for (int d = 0; d < x.rank(); ++d)
    if (!std::binary_search(dims.begin(), dims.end(), d)) shape.push_back(x.shape[d]);
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_unsqueeze(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  int r = x.rank() + 1;
  int64_t d = op.attrs.dim;
  if (d < -r || d >= r)
    fail("dim", "dimension " + std::to_string(d) +
                    " is out of range for unsqueezing a tensor of "
                    "rank " +
                    std::to_string(x.rank()) + " (valid: " + std::to_string(-r) + " to " +
                    std::to_string(r - 1) + ")");
  if (d < 0) d += r;
  op.attrs.dim = d;
  std::vector<Expr> shape = x.shape;
  shape.insert(shape.begin() + d, Expr(1));
  return {{x.dtype, shape}};
}

// A slice bound as PyTorch reads it: negatives count from the end; clamped to [0, extent].
Expr clamp_bound(const Expr& v, const Expr& extent) {
  Expr e = v;
  if (v.is_const() && v.value() < 0) e = extent + v;
  return max(Expr(0), min(e, extent));
}

std::vector<InferredResult> infer_slice(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  OpAttrs& a = op.attrs;
  size_t r = static_cast<size_t>(x.rank());
  const char* keys[] = {"starts", "ends", "steps"};
  size_t sizes[] = {a.starts.size(), a.ends.size(), a.steps.size()};
  for (int k = 0; k < 3; ++k)
    if (sizes[k] != r)
      fail(keys[k], "has " + count_of(static_cast<int64_t>(sizes[k]), "entry", "entries") +
                        " but " + describe(f, op.args[0]) + " has rank " + std::to_string(r));
  std::vector<Expr> shape;
  for (size_t d = 0; d < r; ++d) {
    if (a.steps[d].is_const() && a.steps[d].value() <= 0)
      fail(index_path("steps", d), "steps must be positive");
    if (a.steps[d].lo() <= 0)
      fail(index_path("steps", d), "step " + a.steps[d].str() +
                                       " can be 0 for some binding in the symbols' ranges; steps must be positive");
    Expr s = clamp_bound(a.starts[d], x.shape[d]);
    Expr e = clamp_bound(a.ends[d], x.shape[d]);
    // A start that is not negative (a constant c >= 0 or a symbol) is kept unclamped: past the
    // extent it gives an empty slice just as the clamped one would (e <= extent), and slices of
    // slices keep flat extents and coordinates instead of nesting clamps.
    if (a.starts[d].lo() >= 0) s = a.starts[d];
    a.starts[d] = s;
    a.ends[d] = e;
    shape.push_back(max(Expr(0), ceildiv(e - s, a.steps[d])));
  }
  return {{x.dtype, shape}};
}

// The fill value of `pad` and `full` must be representable in an integer result dtype, as
// PyTorch requires: no infinity or NaN, nothing beyond the dtype's range (a fraction is
// truncated). Floating-point results take any value; bool results test for non-zero.
void check_fill_value(const Op& op, DType dtype) {
  if (!is_integer(dtype)) return;
  const Literal& v = op.attrs.value;
  if (v.is_size()) return;  // an extent: non-negative, below 2^62 (i32 wraps, as a cast does)
  const double lo = dtype == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
  const double hi = dtype == DType::I32 ? 2147483648.0 : 9223372036854775808.0;  // exclusive
  bool fits = true;
  if (v.kind == Literal::Kind::Float)
    fits = std::isfinite(v.f) && std::trunc(v.f) >= lo && std::trunc(v.f) < hi;
  else if (v.kind == Literal::Kind::Int && dtype == DType::I32)
    fits = v.i >= INT32_MIN && v.i <= INT32_MAX;
  if (!fits)
    fail("value", "value " + v.str() + " cannot be converted to " + dtype_name(dtype) +
                      (op.kind == OpKind::Pad ? " (the dtype of the padded tensor)" : "") +
                      " without overflow");
}

std::vector<InferredResult> infer_pad(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  check_fill_value(op, x.dtype);
  const auto& pads = op.attrs.pads;
  if (static_cast<int>(pads.size()) != x.rank())
    fail("pads", "has " + count_of(static_cast<int64_t>(pads.size()), "pair", "pairs") + " but " +
                     describe(f, op.args[0]) + " has rank " + std::to_string(x.rank()));
  std::vector<Expr> shape;
  for (size_t d = 0; d < pads.size(); ++d) {
    const Expr& e = x.shape[d];
    Expr out = e + pads[d].first + pads[d].second;
    Expr after_lo = e + pads[d].first;
    Expr after_hi = e + pads[d].second;
    if (out.lo() < 0 || after_lo.lo() < 0 || after_hi.lo() < 0)
      fail(index_path("pads", d), "crops dimension " + std::to_string(d) + " (extent " + e.str() +
                                      (e.is_const() ? "" : ", at least " + std::to_string(e.lo())) +
                                      ") by more than its extent");
    shape.push_back(out);
  }
  return {{x.dtype, shape}};
}

std::vector<InferredResult> infer_cat(const Fusion& f, Op& op) {
  const Value& x0 = tensor_arg(f, op, 0);
  if (x0.rank() == 0) fail(arg_path(0), "cannot concatenate rank-0 " + describe(f, op.args[0]));
  op.attrs.dim = normalize_dim(op.attrs.dim, x0.rank(), "dim");
  int64_t dim = op.attrs.dim;
  std::vector<Expr> shape = x0.shape;
  std::vector<TypedOperand> typed;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Value& x = tensor_arg(f, op, i);
    typed.push_back({OperandLevel::Tensor, x.dtype});
    if (i == 0) continue;
    if (x.rank() != x0.rank())
      fail(arg_path(i), describe(f, op.args[i]) + " has rank " + std::to_string(x.rank()) +
                            " but " + describe(f, op.args[0]) + " has rank " +
                            std::to_string(x0.rank()));
    for (int d = 0; d < x.rank(); ++d) {
      if (d == dim) continue;
      if (x.shape[d] != x0.shape[d])
        fail(arg_path(i), "dimension " + std::to_string(d) + " of " + describe(f, op.args[i]) +
                              " differs from that of " + describe(f, op.args[0]));
    }
    shape[dim] = shape[dim] + x.shape[dim];
  }
  return {{result_type(typed), shape}};
}

// ---------------------------------------------------------------- indexing

// index_select(input, index) and gather(input, index) along `dim`: the index must be an
// i32/i64 tensor; index_select's of rank 1 (the result's extent along dim is the index's),
// gather's of the input's rank with the input's extents except along dim (the result has the
// index's shape).
std::vector<InferredResult> infer_indexing(const Fusion& f, Op& op) {
  const Value& x = tensor_arg(f, op, 0);
  const Value& ix = tensor_arg(f, op, 1);
  const char* name = op_name(op.kind);
  if (x.rank() == 0)
    fail(arg_path(0), std::string("'") + name + "' indexes a tensor of rank at least 1, got " +
                          describe(f, op.args[0]));
  op.attrs.dim = normalize_dim(op.attrs.dim, x.rank(), "dim");
  const int64_t dim = op.attrs.dim;
  if (ix.dtype != DType::I32 && ix.dtype != DType::I64)
    fail(arg_path(1), std::string("the index of '") + name +
                          "' must be an i32 or i64 tensor, got " + describe(f, op.args[1]));
  if (op.kind == OpKind::IndexSelect) {
    if (ix.rank() != 1)
      fail(arg_path(1),
           "the index of 'index_select' must have rank 1, got " + describe(f, op.args[1]));
    std::vector<Expr> shape = x.shape;
    shape[dim] = ix.shape[0];
    return {{x.dtype, shape}};
  }
  if (ix.rank() != x.rank())
    fail(arg_path(1), "the index of 'gather' must have the rank of " + describe(f, op.args[0]) +
                          ", got " + describe(f, op.args[1]));
  for (int d = 0; d < x.rank(); ++d)
    if (d != dim && ix.shape[d] != x.shape[d])
      fail(arg_path(1), "dimension " + std::to_string(d) + " of the index " +
                            describe(f, op.args[1]) + " differs from that of " +
                            describe(f, op.args[0]) + " (only dimension " + std::to_string(dim) +
                            ", the gathered one, may differ)");
  return {{x.dtype, ix.shape}};
}

// ---------------------------------------------------------------- creation, random, control

std::vector<InferredResult> infer_random(const Fusion& f, Op& op) {
  for (size_t i = 0; i < 2; ++i) {
    const Value& v = tensor_arg(f, op, i);
    if (v.rank() != 0 || v.dtype != DType::I64)
      fail(arg_path(i), std::string(i == 0 ? "the seed" : "the offset") + " of '" +
                            op_name(op.kind) + "' must be an i64 scalar, got " +
                            describe(f, op.args[i]));
  }
  if (!is_float(*op.attrs.dtype))
    fail("dtype", std::string("'") + op_name(op.kind) + "' makes floating-point values; got " +
                      dtype_name(*op.attrs.dtype));
  return {{*op.attrs.dtype, op.attrs.shape}};
}

}  // namespace

std::vector<InferredResult> infer_op(const Fusion& f, Op& op) {
  const OpInfo& info = op.info();
  switch (info.group) {
    case OpGroup::Unary:
    case OpGroup::Binary:
    case OpGroup::Ternary:
    case OpGroup::Cast: return infer_elementwise(f, op);
    case OpGroup::Reduction: return infer_reduction(f, op);
    case OpGroup::Shape:
      switch (op.kind) {
        case OpKind::BroadcastInDim: return infer_broadcast_in_dim(f, op);
        case OpKind::Expand: return infer_expand(f, op);
        case OpKind::Reshape: return infer_reshape(f, op);
        case OpKind::Permute: return infer_permute(f, op);
        case OpKind::Squeeze: return infer_squeeze(f, op);
        case OpKind::Unsqueeze: return infer_unsqueeze(f, op);
        case OpKind::Slice: return infer_slice(f, op);
        case OpKind::Pad: return infer_pad(f, op);
        case OpKind::Cat: return infer_cat(f, op);
        case OpKind::IndexSelect:
        case OpKind::Gather: return infer_indexing(f, op);
        default: break;
      }
      break;
    case OpGroup::Creation:
      if (op.kind == OpKind::Full) {
        check_fill_value(op, *op.attrs.dtype);
        return {{*op.attrs.dtype, op.attrs.shape}};
      }
      if (op.kind == OpKind::Iota) {
        if (*op.attrs.dtype == DType::Bool)
          fail("dtype", "iota makes numbers; bool is not a dtype it can make");
        return {{*op.attrs.dtype, {op.attrs.length}}};
      }
      break;
    case OpGroup::Random: return infer_random(f, op);
    case OpGroup::Matrix: return infer_matrix(f, op);
    case OpGroup::Control: {
      const Value& x = tensor_arg(f, op, 0);
      return {{x.dtype, x.shape}};
    }
    case OpGroup::Reserved: break;
  }
  FUSERC_UNREACHABLE(std::string("no shape inference for op ") + info.name);
}

}  // namespace fuserc
