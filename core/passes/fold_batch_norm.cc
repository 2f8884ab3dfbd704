// The batch-norm folding pass (as TensorRT folds an inference batch norm into the convolution
// before it): a convolution whose weights are constants, followed by a chain of per-channel
// adds, subtractions, multiplications and divisions by constants (a batch norm in inference,
// written as a converter writes it: `(y - mean) * rsqrt(var + eps) * gamma + beta`, or as one
// scale and shift, with or without the conv's own constant bias before it), becomes the
// convolution with its weights scaled per output channel and one add of a constant bias. The
// scale and shift are composed in float64 and the new weights rounded once to their dtype, so
// the result differs from the unfolded graph's only by that rounding (a chain whose scaled
// weights or bias would leave their dtype's normal range is not folded) (and by the intermediate
// roundings the unfolded graph had and this one no longer has). The per-channel operands may
// be computed from constants by a few elementwise ops (evaluated here by the interpreter).
//
// It runs after constant folding, so the weights are one constant the product reads (the
// expansion's reshape of them folded) and `rsqrt(var + eps)` is a constant too. It recognizes a
// convolution by its expansion (core/frontend/convolution.cc): a product whose left operand is
// a constant [C_out, C/g * K] or [g, C_out/g, C/g * K] and whose result [N, C_out, P] or
// [N, g, C_out/g, P] is read only by a reshape to [N, C_out, *spatial]. A chain step must be
// the only reader of the value before it, keep its dtype and shape, and read a constant (or a
// number) that varies along the channels at most; the chain must scale (a multiplication or a
// division), or there is nothing to fold into the weights. The ops the chain leaves unread go
// with dead-code.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "core/base/diagnostics.h"
#include "core/base/host_tensor.h"
#include "core/eval/eval_ops.h"
#include "core/ir/constant_tensor.h"
#include "core/passes/presegmentation.h"
#include "core/passes/rewrite.h"

namespace fuserc {
namespace {

bool all_const(const std::vector<Expr>& shape) {
  for (const auto& e : shape)
    if (!e.is_const()) return false;
  return true;
}

// The values of `v` when it is a constant, or computed from constants alone by at most a few
// elementwise ops and views of fixed shape (a bf16 batch norm's rsqrt(var + eps), which constant
// folding leaves to the kernel because it does not round to bf16 exactly; the interpreter keeps
// it in f32 as kernels do); else nothing.
std::optional<HostTensor> constant_tensor(const Fusion& f, ValueId v) {
  constexpr size_t kMostOps = 16;
  std::vector<int> ops;
  std::vector<ValueId> stack = {v}, constants;
  while (!stack.empty()) {
    const ValueId id = stack.back();
    stack.pop_back();
    const Value& val = f.value(id);
    if (!all_const(val.shape)) return std::nullopt;
    if (val.is_constant()) {
      constants.push_back(id);
      continue;
    }
    if (val.is_input()) return std::nullopt;
    const Op& op = f.ops[val.def_op];
    switch (op.info().group) {
      case OpGroup::Unary:
      case OpGroup::Binary:
      case OpGroup::Ternary:
      case OpGroup::Cast:
      case OpGroup::Shape: break;
      default: return std::nullopt;
    }
    if (ops.size() == kMostOps) return std::nullopt;
    ops.push_back(val.def_op);
    for (const auto& a : op.args) {
      if (a.is_literal() && a.literal.is_size()) return std::nullopt;
      if (!a.is_literal()) stack.push_back(a.value);
    }
  }
  std::sort(ops.begin(), ops.end());
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  std::vector<HostTensor> env(f.values.size());
  for (ValueId c : constants) env[c] = constant_tensor(f.value(c));
  SymbolValues no_symbols;
  eval::EvalContext ctx{f, no_symbols, env};
  try {
    for (int k : ops) {
      std::vector<HostTensor> results = eval::evaluate_op(ctx, f.ops[k]);
      env[f.ops[k].outs[0]] = std::move(results[0]);
    }
  } catch (const UserError&) {
    return std::nullopt;
  }
  return std::move(env[v]);
}

// The `co` per-channel values of operand `o` broadcast against `like`, whose channel dim is 1;
// nothing when `o` is not a constant or a number, varies along another dim, or would enlarge
// the result.
std::optional<std::vector<double>> per_channel(const Fusion& f, const Operand& o,
                                               const Value& like, int64_t co) {
  if (o.is_literal()) {
    if (o.literal.is_size()) return std::nullopt;
    return std::vector<double>(static_cast<size_t>(co), o.literal.as_double());
  }
  const Value& v = f.value(o.value);
  if (v.rank() > like.rank() || !all_const(v.shape)) return std::nullopt;
  const int offset = like.rank() - v.rank();
  bool along = false;
  for (int d = 0; d < v.rank(); ++d) {
    const int64_t e = v.shape[d].value();
    if (d + offset == 1 && e == co && co != 1)
      along = true;
    else if (e != 1)
      return std::nullopt;
  }
  const std::optional<HostTensor> t = constant_tensor(f, o.value);
  if (!t) return std::nullopt;
  std::vector<double> out(static_cast<size_t>(co));
  for (int64_t c = 0; c < co; ++c) out[c] = t->load_f64(along ? c : 0);
  return out;
}

// Whether product `m` is a convolution's (see the top): its rows, C_out, or 0.
int64_t conv_rows(const Fusion& f, const Op& m) {
  if (m.kind != OpKind::Matmul || m.args[0].is_literal() || m.args[1].is_literal()) return 0;
  const Value& w = f.value(m.args[0].value);
  const Value& y = f.value(m.outs[0]);
  if (!w.is_constant() || f.value(m.args[1].value).is_constant()) return 0;
  if ((w.rank() != 2 && w.rank() != 3) || !all_const(w.shape) || y.rank() != w.rank() + 1)
    return 0;
  int64_t rows = 1;
  for (int d = 0; d + 1 < w.rank(); ++d) {
    if (!(y.shape[1 + d] == w.shape[d])) return 0;
    rows *= w.shape[d].value();
  }
  return rows;
}

// Whether `rounded` (`exact` in `dtype`) is as good as a rounding: finite, and zero or normal
// only where `exact` is.
bool stays_normal(double exact, double rounded, DType dtype) {
  if (exact == 0) return true;
  double least = 0;
  switch (dtype) {
    case DType::F16: least = 6.103515625e-05; break;
    case DType::BF16:
    case DType::F32: least = 1.1754943508222875e-38; break;
    default: least = 2.2250738585072014e-308; break;
  }
  return std::isfinite(rounded) && std::abs(rounded) >= least;
}

Value constant_value(const Fusion& f, const std::string& stem, const HostTensor& t) {
  Value v;
  std::string name = stem;
  for (int i = 2; f.find_value(name); ++i) name = stem + "_" + std::to_string(i);
  v.name = name;
  v.dtype = t.dtype();
  for (int64_t e : t.shape()) v.shape.push_back(Expr(e));
  v.constant = ConstantData::from_bytes(
      std::string(reinterpret_cast<const char*>(t.data()), t.nbytes()), "folded");
  return v;
}

ValueId add_constant(Fusion& f, Value v) {
  v.input_index = static_cast<int>(f.inputs.size());
  const ValueId id = f.add_value(std::move(v));
  f.inputs.push_back(id);
  return id;
}

}  // namespace

void fold_batch_norm(Fusion& f) {
  const std::vector<std::vector<int>> readers = readers_of(f);
  const std::vector<bool> aliased = aliased_values(f);
  auto sole_reader = [&](ValueId v) -> int {
    if (f.is_output(v) || aliased[v] || readers[v].size() != 1) return -1;
    return readers[v][0];
  };
  const size_t nops = f.ops.size();  // the ops to look at (constants added are not ops)
  for (size_t k = 0; k < nops; ++k) {
    const int64_t co = conv_rows(f, f.ops[k]);
    if (co == 0) continue;
    const int r = sole_reader(f.ops[k].outs[0]);
    if (r < 0 || f.ops[r].kind != OpKind::Reshape) continue;
    const ValueId y = f.ops[r].outs[0];
    const Value& yv = f.value(y);
    // The reshape keeps the batch and makes the product's rows the channels: [N, C_out, P] or
    // [N, g, C_out/g, P] to [N, C_out, *spatial] (a reshape that moves rows elsewhere does not).
    if (yv.rank() < 3 || !yv.shape[1].is_const(co) || !is_float(yv.dtype) ||
        !(yv.shape[0] == f.value(f.ops[k].outs[0]).shape[0]))
      continue;
    // The chain: y * scale + shift per channel after each step.
    std::vector<double> scale(static_cast<size_t>(co), 1.0), shift(static_cast<size_t>(co), 0.0);
    bool scaled = false;
    int last = -1;
    for (ValueId cur = y;;) {
      const int e = sole_reader(cur);
      if (e < 0) break;
      const Op& op = f.ops[e];
      if (op.args.size() != 2 || f.value(op.outs[0]).dtype != yv.dtype ||
          !(f.value(op.outs[0]).shape == yv.shape))
        break;
      const bool first = !op.args[0].is_literal() && op.args[0].value == cur;
      const Operand& other = first ? op.args[1] : op.args[0];
      if (!other.is_literal() && other.value == cur) break;
      const auto c = per_channel(f, other, yv, co);
      if (!c) break;
      // The step on every channel, kept only when every channel takes it.
      std::vector<double> next_scale = scale, next_shift = shift;
      bool ok = true;
      for (int64_t i = 0; i < co && ok; ++i) {
        const double v = (*c)[i];
        double& a = next_scale[i];
        double& b = next_shift[i];
        switch (op.kind) {
          case OpKind::Add: b += v; break;
          case OpKind::Sub:
            if (first) {
              b -= v;
            } else {
              a = -a;
              b = v - b;
            }
            break;
          case OpKind::Mul: a *= v, b *= v; break;
          case OpKind::Div:
            ok = first && v != 0;
            if (ok) a /= v, b /= v;
            break;
          default: ok = false; break;
        }
        ok = ok && std::isfinite(a) && std::isfinite(b);
      }
      if (!ok) break;
      scale = std::move(next_scale);
      shift = std::move(next_shift);
      scaled = scaled || op.kind == OpKind::Mul || op.kind == OpKind::Div;
      last = e;
      cur = op.outs[0];
    }
    if (!scaled) continue;
    // The scaled weights, one row per output channel: none may leave its dtype's normal range
    // (an f16 weight scaled past 65504 or below 6.1e-5 would change results by more than a
    // rounding; such a chain stays unfolded).
    Op& m = f.ops[k];
    const Value& wv = f.value(m.args[0].value);
    HostTensor w = constant_tensor(wv);
    const int64_t cols = w.numel() / co;
    bool representable = true;
    for (int64_t row = 0; row < co && representable; ++row)
      for (int64_t i = 0; i < cols && representable; ++i) {
        const double exact = w.load_f64(row * cols + i) * scale[row];
        w.store_f64(row * cols + i, exact);
        representable = stays_normal(exact, w.load_f64(row * cols + i), wv.dtype);
      }
    if (!representable) continue;
    HostTensor bias(f.value(y).dtype, {co});
    for (int64_t c = 0; c < co && representable; ++c) {
      bias.store_f64(c, shift[c]);
      representable = std::isfinite(bias.load_f64(c));
    }
    if (!representable) continue;
    m.args[0].value = add_constant(f, constant_value(f, wv.name + "_bn", w));
    // The chain's last op adds the composed shift (or gives y back unchanged).
    Op& tail = f.ops[last];
    const std::vector<Expr> shape = f.value(y).shape;
    bool shifted = false;
    for (double b : shift) shifted = shifted || b != 0;
    tail.attrs = OpAttrs{};
    if (shifted) {
      std::vector<int64_t> bs(shape.size() - 1, 1);
      bs[0] = co;
      HostTensor shaped(f.value(y).dtype, bs);
      for (int64_t c = 0; c < co; ++c) shaped.store_f64(c, bias.load_f64(c));
      const std::string stem = f.value(tail.outs[0]).name + "_bias";
      const ValueId b = add_constant(f, constant_value(f, stem, shaped));
      tail.kind = OpKind::Add;
      tail.args = {Operand{y, {}}, Operand{b, {}}};
    } else {
      tail.kind = OpKind::Reshape;
      tail.args = {Operand{y, {}}};
      tail.attrs.shape = shape;
    }
  }
}

}  // namespace fuserc
