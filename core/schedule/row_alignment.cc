#include "core/schedule/row_alignment.h"

#include <algorithm>

namespace fuserc {
namespace {

bool is_one(const Expr& e) {
  return e.is_const(1);
}

}  // namespace

bool broadcasts_back(OpKind k) {
  switch (k) {
    case OpKind::BroadcastInDim:
    case OpKind::Expand:
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze: return true;
    default: return false;
  }
}

Alignment reduction_alignment(const ReductionAnalysis& a, const Value& out) {
  Alignment al;
  if (out.shape.size() == a.domain.size()) {  // keepdim (or nothing reduced away)
    for (size_t d = 0; d < a.domain.size(); ++d) {
      bool kept =
          std::binary_search(a.kept_dims.begin(), a.kept_dims.end(), static_cast<int64_t>(d));
      al.push_back(kept && !is_one(a.domain[d]) ? static_cast<int>(d) : -1);
    }
  } else {
    for (int64_t d : a.kept_dims) al.push_back(is_one(a.domain[d]) ? -1 : static_cast<int>(d));
  }
  return al;
}

bool reads_own_row(const Alignment& al) {
  for (size_t j = 0; j < al.size(); ++j)
    if (al[j] >= 0 && al[j] != static_cast<int>(j)) return false;
  return true;
}

bool in_row_order(const ReductionAnalysis& a, const Value& v, const Alignment& al) {
  std::vector<int> seen, want;
  for (size_t j = 0; j < al.size(); ++j) {
    if (is_one(v.shape[j])) continue;
    if (al[j] < 0) return false;
    seen.push_back(al[j]);
  }
  for (int64_t d : a.kept_dims)
    if (!is_one(a.domain[d])) want.push_back(static_cast<int>(d));
  return seen == want;
}

std::optional<Alignment> propagate(const Fusion& f, const Op& op,
                                   const std::map<ValueId, Alignment>& align) {
  const Value& out = f.value(op.outs[0]);
  const size_t rank = out.shape.size();
  auto of = [&](size_t i) -> const Alignment* {
    const Operand& arg = op.args[i];
    if (arg.is_literal()) return nullptr;
    auto it = align.find(arg.value);
    return it == align.end() ? nullptr : &it->second;
  };
  if (op.info().is_elementwise()) {
    Alignment al(rank, -1);
    for (size_t i = 0; i < op.args.size(); ++i) {
      const Alignment* in = of(i);
      if (!in) continue;
      size_t shift = rank - in->size();  // operands align on the right
      for (size_t j = 0; j < in->size(); ++j) {
        int d = (*in)[j];
        if (d < 0) continue;
        if (al[j + shift] >= 0 && al[j + shift] != d) return std::nullopt;
        al[j + shift] = d;
      }
    }
    return al;
  }
  const Alignment& in = *of(0);
  const Value& x = f.value(op.args[0].value);
  switch (op.kind) {
    case OpKind::BroadcastInDim: {
      Alignment al(rank, -1);
      for (size_t i = 0; i < in.size(); ++i) al[op.attrs.broadcast_dims[i]] = in[i];
      return al;
    }
    case OpKind::Expand: {
      Alignment al(rank, -1);
      for (size_t i = 0; i < in.size(); ++i) al[i + rank - in.size()] = in[i];
      return al;
    }
    case OpKind::Permute: {
      Alignment al(rank, -1);
      for (size_t j = 0; j < rank; ++j) al[j] = in[op.attrs.dims[j]];
      return al;
    }
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Reshape: {
      // Only size-1 axes may come and go: the other axes keep their order and extents.
      std::vector<Expr> xs, os;
      std::vector<int> kept;
      for (size_t i = 0; i < x.shape.size(); ++i)
        if (!is_one(x.shape[i])) xs.push_back(x.shape[i]), kept.push_back(in[i]);
      for (const Expr& e : out.shape)
        if (!is_one(e)) os.push_back(e);
      if (xs != os) return std::nullopt;
      Alignment al(rank, -1);
      size_t next = 0;
      for (size_t j = 0; j < rank; ++j)
        if (!is_one(out.shape[j])) al[j] = kept[next++];
      return al;
    }
    case OpKind::SegmentSet: return in;
    default: return std::nullopt;
  }
}

}  // namespace fuserc
