#include "core/ir/element_access.h"

#include <algorithm>

#include "core/base/diagnostics.h"

namespace fuserc {

Expr linearize(const std::vector<Expr>& coords, const std::vector<Expr>& shape) {
  FUSERC_CHECK(coords.size() == shape.size(), "linearize: rank mismatch");
  Expr r(0);
  for (size_t d = 0; d < shape.size(); ++d) r = r * shape[d] + coords[d];
  return r;
}

std::vector<Expr> delinearize(const Expr& linear, const std::vector<Expr>& shape) {
  std::vector<Expr> coords(shape.size(), Expr(0));
  // A tensor with an extent of 0 has no element to address (x[:, 3:3]).
  for (const Expr& e : shape)
    if (e.is_const(0)) return coords;
  Expr rest = linear;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      coords[d] = rest;
    } else {
      coords[d] = mod(rest, shape[d]);
      rest = floordiv(rest, shape[d]);
    }
  }
  return coords;
}

std::vector<Expr> broadcast_coords(const std::vector<Expr>& coords,
                                   const std::vector<Expr>& shape) {
  std::vector<Expr> out;
  size_t offset = coords.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    out.push_back(shape[d].is_const(1) ? Expr(0) : coords[offset + d]);
  return out;
}

Expr elements_distinct(const Fusion& f, const Value& v) {
  if (v.strides.empty()) return Expr(1);
  auto at_hints = [&](const Expr& e) {
    return evaluate(e, [&](const std::string& name) -> std::optional<int64_t> {
      if (const SymbolDecl* s = f.find_symbol(name)) return s->hint;
      return std::nullopt;
    });
  };
  std::vector<size_t> dims;
  for (size_t d = 0; d < v.shape.size(); ++d)
    if (!v.shape[d].is_const(1)) dims.push_back(d);
  std::stable_sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    return at_hints(v.strides[a]) < at_hints(v.strides[b]);
  });
  Expr all(1);
  for (size_t i = 0; i < dims.size(); ++i) {
    const Expr& s = v.strides[dims[i]];
    Expr below = i == 0 ? Expr(1) : v.strides[dims[i - 1]] * v.shape[dims[i - 1]];
    all = min(all, le(below, s));
  }
  return max(all, le(v.numel(), Expr(1)));
}

bool has_element_access(const Op& op) {
  switch (op.info().group) {
    case OpGroup::Unary:
    case OpGroup::Binary:
    case OpGroup::Ternary:
    case OpGroup::Cast:
    case OpGroup::Shape:
    case OpGroup::Creation:
    case OpGroup::Random:
    case OpGroup::Control: return true;
    case OpGroup::Reduction:
    case OpGroup::Matrix:
    case OpGroup::Reserved: return false;
  }
  return false;
}

bool is_indexing(const Op& op) {
  return op.kind == OpKind::IndexSelect || op.kind == OpKind::Gather;
}

Expr indexed_placeholder(const Fusion& f, const Op& op, const std::string& name) {
  FUSERC_CHECK(is_indexing(op), "indexed_placeholder of a non-indexing op");
  return Expr::index(name, f.value(op.args[0].value).shape[op.attrs.dim]);
}

std::vector<std::vector<Expr>> operand_coords(const Fusion& f, const Op& op,
                                              const std::vector<Expr>& coords,
                                              const Expr* indexed) {
  const OpAttrs& a = op.attrs;
  auto arg = [&](size_t i) -> const Value& { return f.value(op.args[i].value); };
  std::vector<std::vector<Expr>> out(op.args.size());
  if (op.info().is_elementwise()) {
    for (size_t i = 0; i < op.args.size(); ++i)
      if (!op.args[i].is_literal()) out[i] = broadcast_coords(coords, arg(i).shape);
    return out;
  }
  const Value& result = f.value(op.outs[0]);
  switch (op.kind) {
    case OpKind::SegmentSet: out[0] = coords; return out;
    case OpKind::BroadcastInDim: {
      const Value& x = arg(0);
      for (size_t i = 0; i < x.shape.size(); ++i)
        out[0].push_back(x.shape[i].is_const(1) ? Expr(0) : coords[a.broadcast_dims[i]]);
      return out;
    }
    case OpKind::Expand: out[0] = broadcast_coords(coords, arg(0).shape); return out;
    case OpKind::Permute: {
      out[0].resize(coords.size());
      for (size_t j = 0; j < coords.size(); ++j) out[0][a.dims[j]] = coords[j];
      return out;
    }
    case OpKind::Reshape:
      out[0] = delinearize(linearize(coords, result.shape), arg(0).shape);
      return out;
    case OpKind::Squeeze: {
      size_t j = 0;
      for (int d = 0; d < arg(0).rank(); ++d) {
        bool squeezed = false;
        for (int64_t s : a.dims) squeezed = squeezed || s == d;
        out[0].push_back(squeezed ? Expr(0) : coords[j++]);
      }
      return out;
    }
    case OpKind::Unsqueeze:
      out[0] = coords;
      out[0].erase(out[0].begin() + a.dim);
      return out;
    case OpKind::Slice:
      for (size_t d = 0; d < coords.size(); ++d)
        out[0].push_back(a.starts[d] + coords[d] * a.steps[d]);
      return out;
    case OpKind::Pad:
      for (size_t d = 0; d < coords.size(); ++d)
        out[0].push_back(coords[d] - a.pads[d].first);
      return out;
    case OpKind::Cat: {
      Expr begin(0);
      for (size_t i = 0; i < op.args.size(); ++i) {
        out[i] = coords;
        out[i][a.dim] = coords[a.dim] - begin;
        begin = begin + arg(i).shape[a.dim];
      }
      return out;
    }
    case OpKind::IndexSelect:
    case OpKind::Gather: {
      out[1] = op.kind == OpKind::IndexSelect ? std::vector<Expr>{coords[a.dim]} : coords;
      out[0] = coords;
      out[0][a.dim] = indexed ? *indexed : indexed_placeholder(f, op);
      return out;
    }
    case OpKind::Full:
    case OpKind::Iota: return out;
    case OpKind::Rand:
    case OpKind::Randn: return out;  // the seed and the offset are scalars
    default: break;
  }
  FUSERC_UNREACHABLE(std::string("index propagation through op ") + op_name(op.kind));
}

}  // namespace fuserc
