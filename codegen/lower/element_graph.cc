#include "codegen/lower/element_graph.h"

#include "core/base/diagnostics.h"
#include "core/ir/op_semantics.h"

namespace fuserc::lower {

size_t ElementGraph::KeyHash::operator()(const std::pair<ValueId, std::vector<Expr>>& k) const {
  size_t h = std::hash<ValueId>()(k.first);
  for (const auto& e : k.second) h = h * 1000003u ^ e.hash();
  return h;
}

ElementGraph::ElementGraph(const Fusion& f, const std::vector<ValueId>& memory_values)
    : f_(f), in_memory_(f.values.size(), false) {
  for (ValueId v : memory_values) in_memory_[v] = true;
}

int ElementGraph::add(ENode n) {
  if (!index_nodes_.empty()) {
    std::vector<const Expr*> exprs;
    if (n.kind == ENode::Kind::Load) exprs.push_back(&n.offset);
    for (const auto& e : n.in_bounds) exprs.push_back(&e);
    for (const auto& e : n.predicate) exprs.push_back(&e);
    if (n.kind == ENode::Kind::Iota || n.kind == ENode::Kind::Rand) exprs.push_back(&n.index);
    std::set<int> deps;
    for (const Expr* e : exprs)
      for (int d : index_sources(*e)) deps.insert(d);
    n.deps.assign(deps.begin(), deps.end());
  }
  nodes_.push_back(std::move(n));
  return static_cast<int>(nodes_.size() - 1);
}

std::vector<int> ElementGraph::index_sources(const Expr& e) const {
  std::vector<int> out;
  if (index_nodes_.empty()) return out;
  for (const auto& s : free_symbols(e))
    if (auto it = index_nodes_.find(s); it != index_nodes_.end()) out.push_back(it->second);
  return out;
}

std::vector<Expr> ElementGraph::index_coordinates(const Expr& e) const {
  std::vector<Expr> out;
  std::set<int> seen;
  std::vector<int> stack = index_sources(e);
  while (!stack.empty()) {
    int id = stack.back();
    stack.pop_back();
    if (!seen.insert(id).second) continue;
    const Expr& at = index_read_at_.at(id);
    out.push_back(at);
    for (int d : index_sources(at)) stack.push_back(d);
  }
  return out;
}

int ElementGraph::index_node(int element, const Expr& extent, const Expr& read_at) {
  auto key = std::make_pair(element, extent);
  if (auto it = index_memo_.find(key); it != index_memo_.end()) return it->second;
  ENode n;
  n.kind = ENode::Kind::Index;
  n.dtype = DType::I64;
  n.args = {promote(element, DType::I64)};
  n.offset = extent;
  int id = add(std::move(n));
  std::string name = "fz_ix" + std::to_string(id);
  nodes_[id].index = Expr::index(name, extent);
  index_nodes_[name] = id;
  index_read_at_[id] = read_at;
  index_memo_.emplace(key, id);
  return id;
}

int ElementGraph::find(const Key& key) const {
  auto it = memo_.find(key);
  return it == memo_.end() ? -1 : it->second;
}

int ElementGraph::literal(const fuserc::Literal& l, DType dtype) {
  // A literal is written in the compute type. An element of an f16/bf16 tensor made by `full`
  // or a pad fill stays that value in f32, like every f16/bf16 value inside a kernel: the
  // contract rounds to the dtype only where a value is written to memory (`eval` agrees).
  bool half = dtype == DType::F16 || dtype == DType::BF16;
  ENode n;
  n.kind = ENode::Kind::Literal;
  n.literal = l;
  n.dtype = half ? DType::F32 : dtype;
  return add(std::move(n));
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
    for (int d : n.deps) stack.push_back(d);  // its addresses or conditions need them
    if (n.kind == ENode::Kind::Cond) continue;
    for (int a : n.args) stack.push_back(a);
  }
  return seen;
}

void ElementGraph::set_reduced(ValueId v, int reduction, int output, std::vector<Expr> row_coords) {
  reduced_[v] = ReducedValue{reduction, output, std::move(row_coords)};
}

int ElementGraph::value_at(ValueId v, const std::vector<Expr>& coords) {
  // Depth-first with an explicit stack: a frame is expanded once (its operands' coordinates
  // computed and pushed) and built when every operand has its node.
  struct Frame {
    Key key;
    std::vector<std::vector<Expr>> arg_coords;
    bool expanded = false;
    int index_node = -1;  // indexing ops: the Index node, once the index element is built
  };
  std::vector<Frame> stack;
  stack.push_back({Key(v, coords), {}, false, -1});
  while (!stack.empty()) {
    size_t top = stack.size() - 1;
    if (find(stack[top].key) >= 0) {
      stack.pop_back();
      continue;
    }
    const ValueId fv = stack[top].key.first;
    if (!stack[top].expanded) {
      int id = leaf(fv, stack[top].key.second);
      if (id >= 0) {
        memo_.emplace(std::move(stack[top].key), id);
        stack.pop_back();
        continue;
      }
      const Op& op = f_.ops[f_.value(fv).def_op];
      stack[top].arg_coords = operand_coords(f_, op, stack[top].key.second);
      stack[top].expanded = true;
      // Operands are built first to last (cat: last to first, as its conditions nest).
      if (is_indexing(op)) {  // the index first; the input once its element is known
        Key k(op.args[1].value, stack[top].arg_coords[1]);
        if (find(k) < 0) stack.push_back({std::move(k), {}, false, -1});
        continue;
      }
      for (size_t j = 0; j < op.args.size(); ++j) {
        size_t i = op.kind == OpKind::Cat ? j : op.args.size() - 1 - j;
        if (op.args[i].is_literal()) continue;
        Key k(op.args[i].value, stack[top].arg_coords[i]);
        if (find(k) < 0) stack.push_back({std::move(k), {}, false, -1});
      }
      continue;
    }
    const Op& op = f_.ops[f_.value(fv).def_op];
    if (is_indexing(op) && stack[top].index_node < 0) {
      // The index element is built: its Index node gives the input's coordinate along dim.
      const Value& ix = f_.value(op.args[1].value);
      int element = find(Key(op.args[1].value, stack[top].arg_coords[1]));
      Expr extent = f_.value(op.args[0].value).shape[op.attrs.dim];
      int id = index_node(element, extent, linearize(stack[top].arg_coords[1], ix.shape));
      stack[top].index_node = id;
      stack[top].arg_coords[0] =
          operand_coords(f_, op, stack[top].key.second, &nodes_[id].index)[0];
      Key k(op.args[0].value, stack[top].arg_coords[0]);
      if (find(k) < 0) {
        stack.push_back({std::move(k), {}, false, -1});
        continue;
      }
    }
    std::vector<int> arg_nodes(op.args.size(), -1);
    for (size_t i = 0; i < op.args.size(); ++i)
      if (!op.args[i].is_literal())
        arg_nodes[i] = find(Key(op.args[i].value, stack[top].arg_coords[i]));
    int id = build(fv, stack[top].key.second, arg_nodes);
    memo_.emplace(std::move(stack[top].key), id);
    stack.pop_back();
  }
  return find(Key(v, coords));
}

int ElementGraph::leaf(ValueId v, const std::vector<Expr>& coords) {
  const Value& val = f_.value(v);
  FUSERC_CHECK(coords.size() == val.shape.size(),
               "value_at " + val.name + ": coordinates do not match the rank");
  if (auto it = reduced_.find(v); it != reduced_.end()) {
    // Along an extent of (at most) 1 every coordinate is 0, however it is written (the row's
    // may be a quotient the simplifier cannot fold, as x / S / 32 is not folded when S may be
    // 0; or folded to 0 where the reader's is not, along a symbol whose range ends at 1).
    bool same_row = true;
    for (size_t d = 0; d < coords.size(); ++d)
      same_row = same_row && (provably_le(val.shape[d], Expr(1)) ||
                              coords[d] == it->second.row_coords[d]);
    if (!same_row) {
      std::string at, row;
      for (const Expr& c : coords) at += (at.empty() ? "" : ", ") + c.str();
      for (const Expr& c : it->second.row_coords) row += (row.empty() ? "" : ", ") + c.str();
      FUSERC_CHECK(false, "the reduction result '" + val.name + "' is read at [" + at +
                              "], outside its row [" + row + "]");
    }
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
      for (size_t d = 0; d < coords.size(); ++d) {
        for (const Expr& c : {le(Expr(0), coords[d]), lt(coords[d], val.shape[d])})
          if (!c.is_const(1)) n.in_bounds.push_back(c);
      }
    }
    return add(std::move(n));
  }
  FUSERC_CHECK(val.def_op >= 0, "value " + val.name + " is neither computed nor in memory");
  const Op& op = f_.ops[val.def_op];
  FUSERC_CHECK(has_element_access(op),
               std::string("op ") + op_name(op.kind) + " is not computed element by element");
  if (op.kind == OpKind::Full || op.kind == OpKind::Iota) return build(v, coords, {});
  return -1;
}

int ElementGraph::build(ValueId v, const std::vector<Expr>& coords,
                        const std::vector<int>& arg_nodes) {
  const Value& val = f_.value(v);
  const Op& op = f_.ops[val.def_op];
  int id = op.info().is_elementwise() ? elementwise(op, val, arg_nodes)
                                      : view(op, val, coords, arg_nodes);
  if (nodes_[id].value == kNoValue) nodes_[id].value = v;
  return id;
}

int ElementGraph::elementwise(const Op& op, const Value& out, const std::vector<int>& arg_nodes) {
  const OpInfo& info = op.info();
  if (info.dtype_rule == DtypeRule::Cast) {
    const Operand& a = op.args[0];
    int x = a.is_literal() ? operand_literal(a.literal, a.literal.dtype()) : arg_nodes[0];
    // A cast to the dtype x already has is x, but for an f16/bf16 value that arithmetic made:
    // it is carried in f32 and the cast is its rounding (only a load or a conversion is
    // already rounded).
    const ENode& xn = nodes_[x];
    bool half = out.dtype == DType::F16 || out.dtype == DType::BF16;
    if (xn.dtype == out.dtype &&
        (!half || xn.kind == ENode::Kind::Load || xn.kind == ENode::Kind::Convert))
      return x;
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
      n.args.push_back(promote(arg_nodes[i], want));
    }
  }
  return add(std::move(n));
}

int ElementGraph::view(const Op& op, const Value& out, const std::vector<Expr>& coords,
                       const std::vector<int>& arg_nodes) {
  const OpAttrs& a = op.attrs;
  auto arg = [&](size_t i) -> const Value& { return f_.value(op.args[i].value); };
  switch (op.kind) {
    case OpKind::SegmentSet:
    case OpKind::BroadcastInDim:
    case OpKind::Expand:
    case OpKind::Permute:
    case OpKind::Reshape:
    case OpKind::Squeeze:
    case OpKind::Unsqueeze:
    case OpKind::Slice: return arg_nodes[0];
    case OpKind::Pad: {
      const Value& x = arg(0);
      std::vector<Expr> pred;
      for (size_t d = 0; d < coords.size(); ++d) {
        Expr in = coords[d] - a.pads[d].first;
        Expr lo = le(Expr(0), in), hi = lt(in, x.shape[d]);
        if (!lo.is_const(1)) pred.push_back(lo);
        if (!hi.is_const(1)) pred.push_back(hi);
      }
      if (pred.empty()) return arg_nodes[0];
      ENode n;
      n.kind = ENode::Kind::Cond;
      n.dtype = out.dtype;
      n.predicate = pred;
      n.args = {arg_nodes[0], literal(a.value, out.dtype)};
      return add(std::move(n));
    }
    case OpKind::Cat: {
      // The operand whose range holds the coordinate: conditions nested from the last operand
      // backwards, and past kCatChain operands a balanced tree of them (a search of depth
      // log n: a cat of thousands of tensors nested as deep in the source, which NVRTC took
      // superlinear time on, and compared that many times per element). An explicit stack, no
      // recursion.
      constexpr size_t kCatChain = 16;
      std::vector<Expr> ends;
      Expr pos(0);
      for (size_t i = 0; i < op.args.size(); ++i) {
        pos = pos + arg(i).shape[a.dim];
        ends.push_back(pos);
      }
      // `then` where `cond` (the coordinate below an operand's end) holds, else `otherwise`.
      auto below = [&](const Expr& cond, int then, int otherwise) {
        ENode n;
        n.kind = ENode::Kind::Cond;
        n.dtype = out.dtype;
        n.predicate = {cond};
        n.args = {then, otherwise};
        return add(std::move(n));
      };
      // The node of operands lo..hi (a chain of conditions, the last one unconditional).
      auto chain = [&](size_t lo, size_t hi) {
        int result = -1;
        for (size_t i = hi + 1; i-- > lo;) {
          int x = promote(arg_nodes[i], out.dtype);
          if (result < 0) {
            result = x;
            continue;
          }
          Expr cond = lt(coords[a.dim], ends[i]);
          result = cond.is_const(1) ? x : below(cond, x, result);
        }
        return result;
      };
      struct Range {
        size_t lo, hi;
        bool split;  // its halves are built (their nodes on `built`)
      };
      std::vector<Range> todo{{0, op.args.size() - 1, false}};
      std::vector<int> built;
      while (!todo.empty()) {
        Range r = todo.back();
        todo.pop_back();
        if (r.hi - r.lo < kCatChain) {
          built.push_back(chain(r.lo, r.hi));
          continue;
        }
        const size_t mid = r.lo + (r.hi - r.lo) / 2;
        if (!r.split) {
          todo.push_back({r.lo, r.hi, true});
          todo.push_back({mid + 1, r.hi, false});
          todo.push_back({r.lo, mid, false});
          continue;
        }
        const int right = built.back();
        built.pop_back();
        const int left = built.back();
        built.pop_back();
        Expr cond = lt(coords[a.dim], ends[mid]);
        built.push_back(cond.is_const(1)   ? left
                        : cond.is_const(0) ? right
                                           : below(cond, left, right));
      }
      return built.back();
    }
    case OpKind::IndexSelect:
    case OpKind::Gather: {
      // An empty indexed extent has nothing to read: the (unspecified) value is 0.
      Expr nonempty = lt(Expr(0), arg(0).shape[a.dim]);
      if (nonempty.is_const(1)) return arg_nodes[0];
      ENode n;
      n.kind = ENode::Kind::Cond;
      n.dtype = out.dtype;
      n.predicate = {nonempty};
      n.args = {arg_nodes[0], literal(fuserc::Literal::of_int(0), out.dtype)};
      return add(std::move(n));
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
      n.args = {arg_nodes[0], arg_nodes[1]};
      return add(std::move(n));
    }
    default: break;
  }
  FUSERC_UNREACHABLE(std::string("index propagation through op ") + op_name(op.kind));
}

}  // namespace fuserc::lower
