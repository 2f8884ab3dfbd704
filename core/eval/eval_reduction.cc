// Reductions: sum, prod, max/min/amax/amin, mean, var, var_mean over any set of dims.
// Floating-point results accumulate in double, integer results in wrapping int64.
#include <algorithm>
#include <optional>

#include "core/base/diagnostics.h"
#include "core/eval/eval_ops.h"

namespace fuserc::eval {
namespace {

// Walks the reduced elements of each output element.
class ReductionWalk {
 public:
  ReductionWalk(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides = contiguous_strides(in_shape);
    for (size_t d = 0; d < in_shape.size(); ++d) {
      bool reduced = false;
      for (int64_t r : dims) reduced = reduced || r == static_cast<int64_t>(d);
      (reduced ? red_extent_ : kept_extent_).push_back(in_shape[d]);
      (reduced ? red_stride_ : kept_stride_).push_back(strides[d]);
    }
    count_ = 1;
    for (int64_t e : red_extent_) count_ *= e;
    outputs_ = 1;
    for (int64_t e : kept_extent_) outputs_ *= e;
  }

  int64_t outputs() const { return outputs_; }
  int64_t count() const { return count_; }

  // Calls f(offset) for every reduced element of output `o`, in row-major order.
  template <class F>
  void for_each(int64_t o, F&& f) const {
    int64_t base = 0;
    for (int d = static_cast<int>(kept_extent_.size()) - 1; d >= 0; --d) {
      base += (o % kept_extent_[d]) * kept_stride_[d];
      o /= kept_extent_[d];
    }
    if (count_ == 0) return;
    const int r = static_cast<int>(red_extent_.size());
    std::vector<int64_t> idx(r, 0);
    int64_t off = base;
    for (int64_t k = 0; k < count_; ++k) {
      f(off);
      for (int d = r - 1; d >= 0; --d) {
        off += red_stride_[d];
        if (++idx[d] < red_extent_[d]) break;
        off -= red_stride_[d] * red_extent_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> kept_extent_, kept_stride_, red_extent_, red_stride_;
  int64_t count_ = 1;
  int64_t outputs_ = 1;
};

// sum, prod, max/min/amax/amin: fold the op table's combine over the elements, starting from
// the identity (sum, prod) or the first element (max, min).
template <class T>
void fold(const ReductionWalk& w, const HostTensor& x, HostTensor& out, RefFn<T> combine,
          std::optional<T> identity) {
  for (int64_t o = 0; o < w.outputs(); ++o) {
    std::optional<T> acc = identity;
    w.for_each(o, [&](int64_t off) {
      T v = x.load<T>(off);
      if (!acc) {
        acc = v;
      } else {
        T pair[2] = {*acc, v};
        acc = combine(pair);
      }
    });
    if (!acc)
      throw UserError("the reduction is over an empty dimension, which has no maximum or minimum");
    out.store<T>(o, *acc);
  }
}

void mean_var(const ReductionWalk& w, const HostTensor& x, HostTensor* var, HostTensor* mean,
              int64_t correction) {
  double n = static_cast<double>(w.count());
  for (int64_t o = 0; o < w.outputs(); ++o) {
    double sum = 0;
    w.for_each(o, [&](int64_t off) { sum += x.load_f64(off); });
    double m = sum / n;
    if (mean) mean->store_f64(o, m);
    if (!var) continue;
    double sq = 0;
    w.for_each(o, [&](int64_t off) {
      double d = x.load_f64(off) - m;
      sq += d * d;
    });
    double denom = std::max(0.0, n - static_cast<double>(correction));
    var->store_f64(o, sq / denom);
  }
}

}  // namespace

std::vector<HostTensor> eval_reduction(const EvalContext& ctx, const Op& op) {
  const HostTensor& x = ctx.operand(op.args[0]);
  ReductionWalk walk(x.shape(), op.attrs.dims);
  std::vector<HostTensor> results;
  for (ValueId id : op.outs) {
    const Value& v = ctx.fusion.value(id);
    results.emplace_back(storage_dtype(v.dtype), ctx.concrete_shape(v.shape));
  }
  HostTensor& out = results[0];
  const ReferenceFns& ref = op.info().ref;
  bool float_acc = is_float(out.dtype());
  switch (op.kind) {
    case OpKind::Sum:
      if (float_acc)
        fold<double>(walk, x, out, ref.f64, 0.0);
      else
        fold<int64_t>(walk, x, out, ref.i64, int64_t{0});
      break;
    case OpKind::Prod:
      if (float_acc)
        fold<double>(walk, x, out, ref.f64, 1.0);
      else
        fold<int64_t>(walk, x, out, ref.i64, int64_t{1});
      break;
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Amax:
    case OpKind::Amin:
      if (float_acc)
        fold<double>(walk, x, out, ref.f64, std::nullopt);
      else
        fold<int64_t>(walk, x, out, ref.i64, std::nullopt);
      break;
    case OpKind::Mean: mean_var(walk, x, nullptr, &out, 0); break;
    case OpKind::Var: mean_var(walk, x, &out, nullptr, op.attrs.correction); break;
    case OpKind::VarMean: mean_var(walk, x, &out, &results[1], op.attrs.correction); break;
    default: FUSERC_UNREACHABLE(std::string("not a reduction: ") + op_name(op.kind));
  }
  return results;
}

}  // namespace fuserc::eval
