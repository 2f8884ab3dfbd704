#include "codegen/lower/element_graph.h"

#include "core/base/diagnostics.h"
#include "core/ir/op_semantics.h"

namespace fuserc::lower {

Expr linearize(const std::vector<Expr>& coords, const std::vector<Expr>& shape) {
  FUSERC_CHECK(coords.size() == shape.size(), "linearize: rank mismatch");
  Expr r(0);
  for (size_t d = 0; d < shape.size(); ++d) r = r * shape[d] + coords[d];
  return r;
}

std::vector<Expr> delinearize(const Expr& linear, const std::vector<Expr>& shape) {
  std::vector<Expr> coords(shape.size());
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

bool ElementGraph::KeyLess::operator()(const std::pair<ValueId, std::vector<Expr>>& a,
                                       const std::pair<ValueId, std::vector<Expr>>& b) const {
  if (a.first != b.first) return a.first < b.first;
  if (a.second.size() != b.second.size()) return a.second.size() < b.second.size();
  for (size_t i = 0; i < a.second.size(); ++i)
    if (int c = compare(a.second[i], b.second[i]); c != 0) return c < 0;
  return false;
}

ElementGraph::ElementGraph(const Fusion& f, const std::vector<ValueId>& memory_values)
    : f_(f), in_memory_(f.values.size(), false) {
  for (ValueId v : memory_values) in_memory_[v] = true;
}

int ElementGraph::add(ENode n) {
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

int ElementGraph::literal(const fuserc::Literal& l, DType dtype) {
  // A literal is written in the compute type; an element of an f16/bf16 tensor (a fill or
  // pad value) is that value rounded to the dtype.
  bool rounded = dtype == DType::F16 || dtype == DType::BF16;
  ENode n;
  n.kind = ENode::Kind::Literal;
  n.literal = l;
  n.dtype = rounded ? DType::F32 : dtype;
  int id = add(std::move(n));
  if (!rounded) return id;
  ENode c;
  c.kind = ENode::Kind::Convert;
  c.dtype = dtype;
  c.args = {id};
  return add(std::move(c));
}

int ElementGraph::operand_literal(const fuserc::Literal& l, DType computation) {
  ENode n;
  n.kind = ENode::Kind::Literal;
  n.literal = l;
  n.dtype = canonical_dtype(computation);
  return add(std::move(n));
}

Expr ElementGraph::memory_offset(ValueId v, const std::vector<Expr>& coords) const {
  const Value& val = f_.value(v);
  FUSERC_CHECK(coords.size() == val.shape.size(), "memory_offset: rank mismatch");
  if (val.strides.empty()) return linearize(coords, val.shape);
  Expr off(0);
  for (size_t d = 0; d < coords.size(); ++d) off = off + coords[d] * val.strides[d];
  return off;
}

int ElementGraph::value_at(ValueId v, const std::vector<Expr>& coords) {
  auto key = std::make_pair(v, coords);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  int id = compute(v, coords);
  memo_.emplace(std::move(key), id);
  return id;
}

DType canonical_dtype(DType d) {
  return d == DType::F16 || d == DType::BF16 ? DType::F32 : d;
}

int ElementGraph::promote(int node, DType computation) {
  // A value conversion into the computation's kernel type (int, long long, float, double,
  // bool), without rounding to f16/bf16.
  DType have = nodes_[node].dtype;
  DType target = canonical_dtype(computation);
  if (canonical_dtype(have) == target) return node;
  ENode n;
  n.kind = ENode::Kind::Convert;
  n.dtype = target;
  n.args = {node};
  return add(std::move(n));
}

std::set<int> ElementGraph::unconditional_nodes(const std::vector<int>& roots) const {
  std::set<int> seen;
  std::vector<int> stack = roots;
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const ENode& n = nodes_[id];
    if (n.kind == ENode::Kind::Cond) continue;
    for (int a : n.args) stack.push_back(a);
  }
  return seen;
}

void ElementGraph::set_reduced(ValueId v, int reduction, int output, std::vector<Expr> row_coords) {
  reduced_[v] = ReducedValue{reduction, output, std::move(row_coords)};
}

int ElementGraph::compute(ValueId v, const std::vector<Expr>& coords) {
  const Value& val = f_.value(v);
  FUSERC_CHECK(coords.size() == val.shape.size(),
               "value_at " + val.name + ": coordinates do not match the rank");
  if (auto it = reduced_.find(v); it != reduced_.end()) {
    FUSERC_CHECK(coords == it->second.row_coords,
                 "the reduction result '" + val.name + "' is read outside its row");
    ENode n;
    n.kind = ENode::Kind::Reduced;
    n.value = v;
    n.dtype = val.dtype;
    n.reduction = it->second.reduction;
    n.output = it->second.output;
    return add(std::move(n));
  }
  if (in_memory_[v]) {
    ENode n;
    n.value = v;
    n.dtype = val.dtype;
    if (val.scalar_input) {
      n.kind = ENode::Kind::Scalar;
    } else {
      n.kind = ENode::Kind::Load;
      n.offset = memory_offset(v, coords);
    }
    return add(std::move(n));
  }
  FUSERC_CHECK(val.def_op >= 0, "value " + val.name + " is neither computed nor in memory");
  const Op& op = f_.ops[val.def_op];
  int id;
  if (op.info().is_elementwise()) {
    id = elementwise(op, val, coords);
  } else {
    id = view(op, val, coords);
  }
  if (nodes_[id].value == kNoValue) nodes_[id].value = v;
  return id;
}

int ElementGraph::elementwise(const Op& op, const Value& out, const std::vector<Expr>& coords) {
  const OpInfo& info = op.info();
  if (info.dtype_rule == DtypeRule::Cast) {
    const Operand& a = op.args[0];
    int x = a.is_literal() ? operand_literal(a.literal, a.literal.dtype())
                           : value_at(a.value, broadcast_coords(coords, f_.value(a.value).shape));
    if (nodes_[x].dtype == out.dtype) return x;
    ENode n;
    n.kind = ENode::Kind::Convert;
    n.dtype = out.dtype;
    n.args = {x};
    return add(std::move(n));
  }
  DType computation = computation_dtype(f_, op);
  ENode n;
  n.kind = ENode::Kind::Op;
  n.op = op.kind;
  n.dtype = out.dtype;
  n.computation = computation;
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Operand& a = op.args[i];
    // The condition of `where` stays bool; every other operand joins the computation.
    bool is_condition = info.dtype_rule == DtypeRule::Where && i == 0;
    DType want = is_condition ? DType::Bool : computation;
    if (a.is_literal()) {
      n.args.push_back(operand_literal(a.literal, want));
    } else {
      int x = value_at(a.value, broadcast_coords(coords, f_.value(a.value).shape));
      n.args.push_back(promote(x, want));
    }
  }
  return add(std::move(n));
}

int ElementGraph::view(const Op& op, const Value& out, const std::vector<Expr>& coords) {
  const OpAttrs& a = op.attrs;
  auto arg = [&](size_t i) -> const Value& { return f_.value(op.args[i].value); };
  switch (op.kind) {
    case OpKind::SegmentSet: return value_at(op.args[0].value, coords);
    case OpKind::BroadcastInDim: {
      const Value& x = arg(0);
      std::vector<Expr> c;
      for (size_t i = 0; i < x.shape.size(); ++i)
        c.push_back(x.shape[i].is_const(1) ? Expr(0) : coords[a.broadcast_dims[i]]);
      return value_at(op.args[0].value, c);
    }
    case OpKind::Expand: return value_at(op.args[0].value, broadcast_coords(coords, arg(0).shape));
    case OpKind::Permute: {
      std::vector<Expr> c(coords.size());
      for (size_t j = 0; j < coords.size(); ++j) c[a.dims[j]] = coords[j];
      return value_at(op.args[0].value, c);
    }
    case OpKind::Reshape:
      return value_at(op.args[0].value, delinearize(linearize(coords, out.shape), arg(0).shape));
    case OpKind::Squeeze: {
      std::vector<Expr> c;
      size_t j = 0;
      for (int d = 0; d < arg(0).rank(); ++d) {
        bool squeezed = false;
        for (int64_t s : a.dims) squeezed = squeezed || s == d;
        c.push_back(squeezed ? Expr(0) : coords[j++]);
      }
      return value_at(op.args[0].value, c);
    }
    case OpKind::Unsqueeze: {
      std::vector<Expr> c = coords;
      c.erase(c.begin() + a.dim);
      return value_at(op.args[0].value, c);
    }
    case OpKind::Slice: {
      std::vector<Expr> c;
      for (size_t d = 0; d < coords.size(); ++d) c.push_back(a.starts[d] + coords[d] * a.steps[d]);
      return value_at(op.args[0].value, c);
    }
    case OpKind::Pad: {
      const Value& x = arg(0);
      std::vector<Expr> c, pred;
      for (size_t d = 0; d < coords.size(); ++d) {
        Expr in = coords[d] - Expr(a.pads[d].first);
        c.push_back(in);
        Expr lo = le(Expr(0), in), hi = lt(in, x.shape[d]);
        if (!lo.is_const(1)) pred.push_back(lo);
        if (!hi.is_const(1)) pred.push_back(hi);
      }
      if (pred.empty()) return value_at(op.args[0].value, c);
      ENode n;
      n.kind = ENode::Kind::Cond;
      n.dtype = out.dtype;
      n.predicate = pred;
      n.args = {value_at(op.args[0].value, c), literal(a.value, out.dtype)};
      return add(std::move(n));
    }
    case OpKind::Cat: {
      // Nested conditions from the last operand backwards.
      std::vector<Expr> begins;
      Expr pos(0);
      for (size_t i = 0; i < op.args.size(); ++i) {
        begins.push_back(pos);
        pos = pos + arg(i).shape[a.dim];
      }
      int result = -1;
      for (int i = static_cast<int>(op.args.size()) - 1; i >= 0; --i) {
        std::vector<Expr> c = coords;
        c[a.dim] = coords[a.dim] - begins[i];
        int x = promote(value_at(op.args[i].value, c), out.dtype);
        if (result < 0) {
          result = x;
          continue;
        }
        Expr cond = lt(coords[a.dim], begins[i] + arg(i).shape[a.dim]);
        if (cond.is_const(1)) {
          result = x;
          continue;
        }
        ENode n;
        n.kind = ENode::Kind::Cond;
        n.dtype = out.dtype;
        n.predicate = {cond};
        n.args = {x, result};
        result = add(std::move(n));
      }
      return result;
    }
    case OpKind::Full: return literal(a.value, out.dtype);
    case OpKind::Iota: {
      ENode n;
      n.kind = ENode::Kind::Iota;
      n.dtype = out.dtype;
      n.index = coords[0];
      n.start = a.start;
      n.step = a.step;
      return add(std::move(n));
    }
    case OpKind::Rand:
    case OpKind::Randn: {
      ENode n;
      n.kind = ENode::Kind::Rand;
      n.op = op.kind;
      n.dtype = out.dtype;
      n.index = linearize(coords, out.shape);
      n.args = {value_at(op.args[0].value, {}), value_at(op.args[1].value, {})};
      return add(std::move(n));
    }
    default: break;
  }
  FUSERC_UNREACHABLE(std::string("index propagation through op ") + op_name(op.kind));
}

}  // namespace fuserc::lower
