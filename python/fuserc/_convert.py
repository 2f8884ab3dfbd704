"""Owns turning three aligned traces (see _trace.py, _symbolic.py) into a fusion graph: inputs
and symbols, each live ATen op through a table of ops (the `table` a Converter is given:
_aten.convert), in-place updates of inputs as aliased outputs, and the structure of what the
function returns.

Imports go one way: export.py -> _aten.py -> _aten_shape.py / _aten_products.py -> this module
(Context, Multi, Unsupported) -> _graph.py, _symbolic.py, _trace.py. The converter knows the
table only as the function it is handed, so it imports none of the table's modules."""
import operator

import torch
import torch.utils._pytree as pytree

from ._graph import GraphBuilder, Size, Value
from ._symbolic import Extent, resolve, resolve_multiple, resolve_product
from ._trace import ATEN_NAMESPACES, ExportError, op_namespace, user_location

_MISSING = object()


class Unsupported:
    """A result that cannot be expressed, reported only if something uses it."""

    def __init__(self, message):
        self.message = message


class MaskedSelect(Unsupported):
    """masked_select's result, whose extent depends on the mask's values: only a sum or a mean
    of it is expressed (of `x` where `mask`, broadcast together); any other use is refused."""

    def __init__(self, message, x, mask):
        super().__init__(message)
        self.x = x
        self.mask = mask


class Multi:
    """An op with several results, each made when a getitem asks for it: items[i](ctx)."""

    def __init__(self, items):
        self.items = items


def target_name(node):
    t = node.target
    if node.op == "get_attr":
        return f"constant {t}"
    name = getattr(t, "__name__", None) or str(t)
    if hasattr(t, "overloadpacket"):
        return f"{op_namespace(t)}.{t.overloadpacket.__name__}.{t._overloadname}"
    return getattr(t, "__module__", "") + "." + name if name == "getitem" else name


def _meta(node):
    """Per result of the node: (shape tuple, dtype), or None where it is not a tensor. The
    tensor's metadata as recorded when the node was traced comes first: its fake tensor (`val`)
    has the shape of later in-place views of it (F.linear of a vector squeezes its mm in place:
    `val` says [N], the product is [1, N])."""
    val = node.meta.get("val", _MISSING)
    if val is _MISSING:
        val = node.meta.get("tensor_meta", None)
    snap = node.meta.get("tensor_meta", None)

    def one(v):
        if v is None or not hasattr(v, "shape") or not hasattr(v, "dtype"):
            return None
        try:
            return tuple(int(d) for d in v.shape), v.dtype
        except Exception:  # noqa: BLE001 - a size that depends on the data (torch.export)
            return None

    def best(v, s):
        return one(s) or one(v)
    single = hasattr(snap, "shape")  # a TensorMetadata (itself a named tuple)
    if isinstance(val, (tuple, list)):
        snaps = snap if not single and isinstance(snap, (tuple, list)) and \
            len(snap) == len(val) else [None] * len(val)
        return [best(v, s) for v, s in zip(val, snaps)]
    return [best(val, snap if single else None)]


# Ops that write arguments other than their first in place although their schema does not say
# so (PyTorch 1.13's native_batch_norm updates the running statistics in training mode): their
# table entry records the writes with Context.update, and they are kept even if no output
# needs their results.
_WRITES_OTHER_ARGS = ("native_batch_norm", "_native_batch_norm_legit")


def _writes_other_args(node):
    t = node.target
    return op_namespace(t) == "aten" and t.overloadpacket.__name__ in _WRITES_OTHER_ARGS


def aten_name(target):
    """(name, overload) of an ATen op (or a test stand-in for one: ATEN_NAMESPACES), None for
    an op of another namespace (prims.where is not aten.where), (its name, "") for a Python
    callable."""
    ns = op_namespace(target)
    if ns is None:
        return getattr(target, "__name__", str(target)), ""
    if ns not in ATEN_NAMESPACES:
        return None
    return target.overloadpacket.__name__, target._overloadname


def _out_argument(node):
    """The name of the keyword argument an `.out` overload writes (torch.mul(x, y, out=x)),
    where the call passes a tensor there; None otherwise."""
    schema = getattr(node.target, "_schema", None)
    for a in getattr(schema, "arguments", []):
        if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write and \
                isinstance(node.kwargs.get(a.name), torch.fx.Node):
            return a.name
    return None


def _is_inplace(node):
    schema = getattr(node.target, "_schema", None)
    if schema is None or not schema.arguments:
        return False
    alias = schema.arguments[0].alias_info
    return alias is not None and alias.is_write and not schema.arguments[0].kwarg_only


class Context:
    """What a converter sees of one node: its arguments (aligned across the three traces),
    its results' shapes and dtype, and the graph to emit into."""

    def __init__(self, conv, nodes):
        self.conv = conv
        self.nodes = nodes  # the node in each trace
        self.node = nodes[0]
        self.g = conv.g
        self.name = target_name(self.node)
        self.candidates = []  # extents this op's results may have, tried first (see learn)

    def learn(self, *extents):
        """Extents (symbolic expressions) that this op's results may have, from the op's own
        formula (a convolution's `(H+2p-d(k-1)-1)//s+1`): a size of this node is matched
        against them first, by its values in the traces, then (the results of an op with
        several results are sized by the getitems that take them) as known extents."""
        for e in extents:
            if not e.is_constant:
                self.candidates.append(e)
                self.conv.learn(e)

    def operand_extents(self):
        """The extents of this node's tensor operands (an elementwise op's result has theirs),
        each once, in order."""
        out = []
        for n in self.node.all_input_nodes:
            v = self.conv.lookup(n) if n in self.conv.values or n in self.conv.current else None
            if isinstance(v, Value):
                out.extend(e for e in v.shape if not e.is_constant and e not in out)
        return out

    def guess(self, *extents):
        """Extents a size of this node may be (a pad to a multiple of 8 is (-N) % 8): tried
        first, like learn's, but known afterwards only where one is a size of the node."""
        self.candidates.extend(e for e in extents if not e.is_constant)

    # ---- arguments
    def _raw(self, i, kw, default):
        out = []
        for n in self.nodes:
            if i is not None and i < len(n.args):
                out.append(n.args[i])
            elif kw is not None and kw in n.kwargs:
                out.append(n.kwargs[kw])
            elif default is _MISSING:
                self.fail(f"argument {kw or i} is missing")
            else:
                out.append(default)
        return out

    def has(self, i, kw=None):
        return (i is not None and i < len(self.node.args)) or (kw is not None and
                                                              kw in self.node.kwargs)

    def arg(self, i, kw=None, default=_MISSING):
        """A tensor argument as a Value, a number (the same in every trace, or a size that
        becomes a computed value), None, or a list of those."""
        return self.conv.convert_arg(self, self._raw(i, kw, default))

    def tensor(self, i, kw=None):
        v = self.arg(i, kw)
        if not isinstance(v, Value):
            self.fail(f"argument {kw or i} is not a tensor")
        return v

    def const(self, i, kw=None, default=_MISSING):
        """A Python value that must be the same in every trace (a dim, a flag, a number)."""
        raw = self._raw(i, kw, default)
        if any(r != raw[0] for r in raw[1:]):
            self.fail(f"argument {kw or i} ({raw[0]!r}) changes with the sizes of the inputs "
                      f"({', '.join(map(repr, raw))} in three traces)")
        return raw[0]

    def size(self, i, kw=None, default=_MISSING):
        return self.conv.extent(self, self._raw(i, kw, default))

    def sizes(self, i, kw=None, default=_MISSING):
        raw = self._raw(i, kw, default)
        if raw[0] is None:
            return None
        if isinstance(raw[0], int) and not isinstance(raw[0], bool):
            return [self.conv.extent(self, raw)]
        if any(len(r) != len(raw[0]) for r in raw):
            self.fail("a list of sizes changes length with the sizes of the inputs")
        return [self.conv.extent(self, [r[k] for r in raw]) for k in range(len(raw[0]))]

    # ---- results
    def meta(self, k=0):
        m = self.conv.metas[self.node][k] if k < len(self.conv.metas[self.node]) else None
        if m is None:
            self.fail("PyTorch recorded no shape for this op's result")
        return m

    def out_shape(self, k=0):
        return self.conv.shape_of(self, [self.conv.metas[n][k][0] for n in self.nodes])

    def out_dtype(self, k=0):
        return self.meta(k)[1]

    def result(self, name, k=0, **flags):
        return Value(name, self.out_dtype(k), self.out_shape(k), **flags)

    def emit(self, op, args, **attrs):
        """Emits the op as this node's result (cast to PyTorch's dtype if the contract's
        differs)."""
        name = self.g.emit(op, args, self.base(), **attrs)
        return self.result(name)

    def tmp(self, op, args, dtype, value_shape, /, **attrs):
        """An intermediate Value of `dtype` and `value_shape` (the op's own `shape` attribute,
        for reshape or full, is among `attrs`)."""
        return Value(self.g.emit(op, args, self.base(), **attrs), dtype, value_shape)

    def update(self, i, kw, value):
        """Records that this op writes `value` in place into its tensor argument `i` (or
        keyword `kw`): a write into a function input or a module buffer becomes an aliased
        output (see Converter.update)."""
        a = self.node.args[i] if i < len(self.node.args) else self.node.kwargs.get(kw)
        if not isinstance(a, torch.fx.Node):
            self.fail(f"argument {kw or i} is not a tensor")
        self.conv.update(self, a, value)

    def target(self, i=0):
        """The tensor an in-place op overwrites, which may be uninitialized (torch.empty)."""
        a = self.node.args[i]
        v = self.conv.lookup(a)
        if not isinstance(v, Value):
            self.fail(f"argument {i} is not a tensor")
        return v

    def base(self):
        return self.node.name

    def fail(self, message):
        raise ExportError(self.conv.describe(self.node, message))

    def unsupported(self, why=None):
        return ExportError(self.conv.describe(
            self.node, f"cannot express {self.name}" + (f" ({why})" if why else "") +
            " in a fuserc graph"))


class ReturnSpec:
    """How the package's outputs become what the traced function returned."""

    def __init__(self, spec, leaves):
        self.spec = spec
        self.leaves = leaves  # per leaf: an output index, or None

    def build(self, results):
        return pytree.tree_unflatten([None if j is None else results[j] for j in self.leaves],
                                     self.spec)


_SPLITS = ("split", "split_with_sizes", "unbind", "chunk", "unsafe_split",
           "unsafe_split_with_sizes")


def _splits(node):
    """Whether fx node `node` splits a tensor into pieces (views of it, taken by getitem)."""
    packet = getattr(getattr(node, "target", None), "overloadpacket", None)
    return node.op == "call_function" and getattr(packet, "__name__", None) in _SPLITS


def _other_piece(u, piece):
    """Whether `u` and `piece` are different pieces of one split (disjoint views)."""
    return all(isinstance(n, torch.fx.Node) and n.op == "call_function" and
               n.target is operator.getitem for n in (u, piece)) and \
        u.args[0] is piece.args[0] and _splits(u.args[0]) and u.args[1] != piece.args[1]


class Converter:
    def __init__(self, traces, sizes, inputs, name, ranges, table, constant_names=None,
                 buffers=None, hints=None, qualified=None):
        """`table(ctx)`: the value of one traced node (see _aten.convert). `constant_names`:
        id of a tensor the trace holds as a constant (a module's buffer) -> its graph name.
        `buffers`: ids of those tensors that are a module's buffers, which the function may
        update in place: such a buffer becomes an input (no `data`) written in place, and
        `updated_buffers` (graph name -> id) lists them after run(). `hints`: a symbol's
        example size, where trace A is not at it (an example size of 1: see _trace).
        `qualified`: a constant's graph name -> the module's name for it (errors say it)."""
        self.qualified = qualified or {}
        self.table = table
        self.constant_names = constant_names or {}
        self.buffers = set(buffers or ())
        self.updated_buffers = {}
        self.buffer_roots = []  # (graph name, root node, dtype) of each updated buffer
        self.attr_nodes = {}  # get_attr target -> the first get_attr node of it (trace A)
        self.constants = {}  # id of a constant tensor -> (tensor, Value)
        self.traces = traces
        self.sizes = sizes
        self.inputs = inputs
        self.g = GraphBuilder(name)
        self.values = {}  # node of trace A -> Value / Multi / Unsupported / list
        self.current = {}  # node of trace A -> its value after in-place updates
        self.root = {}  # an in-place op's node -> the node it updated (the same tensor)
        # A view node -> place(ctx, parent, value): the parent's Value with the view's elements
        # replaced by `value` (slices and selects record one; see update).
        self.places = {}
        self.multiples_needed = []  # (Extent, m) of each entry of requirements
        self.metas = {}
        self.random_ops = 0
        self.rng = None
        self.size_cache = {}
        self.symbol_inputs = {}  # symbol -> the int input that sets it (a Value)
        self.known = {}  # Extent -> its values in the traces, in the order met (see learn)
        self.requirements = []  # sizes assumed to be multiples (see require)
        self.extents = {}  # graph name of a node's result -> its shape (json extents)
        self.empties = {}  # graph name of a result with an extent of 0 -> why it is refused
        for s in sorted(sizes[0]):
            entry = {"hint": max(1, (hints or {}).get(s, sizes[0][s]))}
            lo, hi = (ranges or {}).get(s, (None, None))
            if lo is not None:
                entry["min"] = int(lo)
            if hi is not None:
                entry["max"] = int(hi)
            self.g.symbols[s] = entry

    # ---- sizes
    def learn(self, e):
        """Records extent `e` as known: later sizes with its values in the traces are `e`."""
        if not e.is_constant and e not in self.known:
            self.known[e] = tuple(e.evaluate(sv) for sv in self.sizes)
        return e

    def at_least(self, e, lo):
        """Raises the least value of the symbol of `e` so that `e` is at least `lo`, where
        PyTorch's op fails below it (a window larger than the padded input): the graph then
        compiles for the sizes PyTorch can run. `e` is a bare symbol, or an expression of one
        symbol that grows with it (a strided convolution's output, H // 4, feeding the next
        window); other extents are left to fuserc's own checks."""
        names = e.symbols()
        if len(names) != 1 or names[0] not in self.g.symbols:
            return
        entry = self.g.symbols[names[0]]
        least = entry.get("min", 1)
        if e.evaluate({names[0]: least}) >= lo:
            return
        top = entry.get("max", 1 << 40)
        if e.evaluate({names[0]: top}) < lo:
            return  # never: fuserc refuses the graph, naming the extent
        while least < top:  # the least value that makes e >= lo (e grows with the symbol)
            mid = (least + top) // 2
            if e.evaluate({names[0]: mid}) >= lo:
                top = mid
            else:
                least = mid + 1
        entry["min"] = int(least)

    def require(self, ctx, e, m, what):
        """Records that extent `e` must be a multiple of `m` at run time, which a graph cannot
        state (a view that splits a symbolic extent in pieces of m); `what` needs it."""
        self.at_least(e, m)  # a positive multiple of m is at least m (so E // m is not 0)
        where = user_location(ctx.node).split(" in ")[0]
        entry = {"extent": e.text(), "multiple": int(m),
                 "what": f"{ctx.name}" + (f" at {where}" if where else "") + f": {what}"}
        if entry not in self.requirements:
            self.requirements.append(entry)
            self.multiples_needed.append((e, int(m)))

    def try_extent(self, ctx, raw, deep=True):
        """The Extent of a size given as its value in each trace (see _symbolic.resolve): the
        op's own candidates first, then its operands' extents, the extents known so far,
        monomials of the symbols, and (`deep`) products of known extents; None when nothing
        fits. (Where two known extents agree in the three traces, (N+1)//4 and (N+2)//4 at 7,
        11 and 47, an operand's is the one an elementwise result has.)"""
        if not all(isinstance(r, int) and not isinstance(r, bool) for r in raw):
            ctx.fail(f"expected a size, got {raw[0]!r}")
        local = [(e, tuple(e.evaluate(sv) for sv in self.sizes))
                 for e in ctx.candidates + ctx.operand_extents()]
        e = resolve(list(raw), self.sizes, local + list(self.known.items()))
        if e is None and deep:
            e = resolve_product(list(raw), self.sizes, list(self.known.items()))
        if e is None and deep:
            hit = resolve_multiple(list(raw), self.sizes, list(self.known.items()))
            if hit is not None:
                unit, m = hit
                e = unit // m
                self.require(ctx, unit, m, f"{unit.text()} // {m} taken as an exact division "
                             "(the function traces only where it is)")
        return None if e is None else self.learn(e)

    def extent(self, ctx, raw):
        e = self.try_extent(ctx, raw)
        if e is None:
            ctx.fail(f"a size ({', '.join(map(str, raw))} in three traces) that fuserc cannot "
                     "state as an expression of the symbols (products, sums and floor "
                     "divisions of the symbols and of the extents before it)")
        return e

    def shape_of(self, ctx, shapes):
        if any(len(s) != len(shapes[0]) for s in shapes):
            ctx.fail("the rank of a result changes with the sizes of the inputs")
        return [self.extent(ctx, [s[k] for s in shapes]) for k in range(len(shapes[0]))]

    def size_value(self, ctx, e):
        """A rank-0 i64 value equal to extent `e` at run time: for `c * S1 * ... + d` a sum of
        ones per symbol, times c, plus d; for any other expression a `full` of the size
        literal {"size": e}."""
        if e in self.size_cache:
            return self.size_cache[e]
        mono = (e - e.const).monomial()
        if mono is None:
            v = Value(self.g.emit("full", [], "size", shape=[], value=Size(e.text()),
                                  dtype=torch.int64), torch.int64, [])
            self.size_cache[e] = v
            return v
        coeff, symbols = mono
        v = None
        for s in symbols:
            n = self.symbol_inputs.get(s)  # an int input that sets the size is its value
            if n is None:
                ones = self.g.emit("full", [], f"{s}_ones", shape=[s], value=1,
                                   dtype=torch.int64)
                n = Value(self.g.emit("sum", [Value(ones, torch.int64, [Extent(1, (s,))])],
                                      f"{s}_value", dims=[0]), torch.int64, [])
            v = n if v is None else Value(self.g.emit("mul", [v, n], "size"), torch.int64, [])
        if coeff != 1:
            v = Value(self.g.emit("mul", [v, int(coeff)], "size"), torch.int64, [])
        if e.const:
            v = Value(self.g.emit("add", [v, e.const], "size"), torch.int64, [])
        self.size_cache[e] = v
        return v

    # ---- arguments
    def convert_arg(self, ctx, raw):
        a = raw[0]
        if isinstance(a, torch.fx.Node):
            v = self.lookup(a)
            if v is None:
                ctx.fail(f"uses {a.name}, which was not converted")
            if isinstance(v, Unsupported):
                raise ExportError(v.message)
            if isinstance(v, Value) and v.uninitialized:
                ctx.fail(f"reads {a.name}, an uninitialized tensor (torch.empty)")
            return v
        if isinstance(a, (list, tuple)):
            if any(not isinstance(r, (list, tuple)) or len(r) != len(a) for r in raw):
                ctx.fail("a list argument changes length with the sizes of the inputs")
            return [self.convert_arg(ctx, [r[k] for r in raw]) for k in range(len(a))]
        if isinstance(a, bool) or a is None or isinstance(a, (str, torch.dtype, torch.device,
                                                              torch.layout, torch.memory_format)):
            if any(r != a for r in raw[1:]):
                ctx.fail(f"argument {a!r} changes with the sizes of the inputs")
            return a
        if isinstance(a, int):
            if all(r == a for r in raw):
                return a
            return self.size_value(ctx, self.extent(ctx, raw))
        if isinstance(a, float):
            if any(r != a and not (r != r and a != a) for r in raw[1:]):
                ctx.fail(f"the number {a!r} depends on the sizes of the inputs or on a scalar "
                         f"input read as a Python number ({', '.join(map(repr, raw))} in three "
                         "traces); compute it with tensor operations")
            return a
        ctx.fail(f"an argument of type {type(a).__name__}")

    def constant(self, ctx, t, base):
        """The graph input holding tensor `t`'s values (`data`), made once per tensor."""
        hit = self.constants.get(id(t))
        if hit is not None:
            return hit[1]
        from ._dtypes import NAME_OF
        if t.dtype not in NAME_OF:
            name = self.constant_names.get(id(t))
            what = f"the module's tensor {self.qualified.get(name, name)!r}" if name else \
                "a tensor the function closes over"
            ctx.fail(f"{what} is a {t.dtype} constant, which fuserc graphs do not have (keep "
                     "such tensors outside the exported function, or store them as real ones)")
        name = self.g.fresh(self.constant_names.get(id(t), base))
        shape = [int(d) for d in t.shape]
        self.g.add_constant(name, t.dtype, shape, t)
        v = Value(name, t.dtype, [Extent(d) for d in shape])
        self.constants[id(t)] = (t, v)  # keeps t alive, so its id stays its own
        return v

    def lookup(self, node):
        """The value of a node now (after the in-place updates of its tensor so far)."""
        return self.current.get(self._root(node), self.values.get(node))

    def _root(self, node):
        """The node standing for the tensor that `node` is (after in-place ops on it): every
        get_attr of one constant tensor stands for the same tensor."""
        root = self.root.get(node, node)
        if isinstance(root, torch.fx.Node) and root.op == "get_attr":
            root = self.attr_nodes.setdefault(root.target, root)
        return root

    def update(self, ctx, base, result):
        """Records `result` as the new value of the tensor of node `base` (an in-place write);
        returns the node that stands for that tensor."""
        # The view the written tensor is, also after earlier writes into it (whose results
        # hold no view flag: a.view(64) written by add_ and then mul_).
        view = self._root(base)
        made = self.values.get(view)
        if isinstance(made, Value) and made.view and not self._view_written_alone(ctx.node,
                                                                                  view):
            # A write into a view (t[..., -1:] = 0, shifted[:, 0] = start_id, a.view(64) += 3):
            # the tensor it views, with that part replaced, where no other view of it read
            # later would miss the write.
            base = view
            place = self.places.get(base)
            parent = base.args[0] if place is not None and base.args else None
            if parent is None or not self._no_stale_views(ctx.node, parent, base):
                ctx.fail("updates a view of another tensor in place, which a fuserc graph "
                         "cannot express (update the whole tensor, or return the result)")
            self.update(ctx, parent, place(ctx, self.lookup(parent), result))
            root = self._root(base)  # the view itself (and the in-place op) now holds result
            self.current[root] = result
            return root
        root = self._root(base)
        if isinstance(root, torch.fx.Node) and root.op == "get_attr":
            t = getattr(self.traces[0].module, root.target, None)
            what = self.constant_names.get(id(t))
            if id(t) not in self.buffers:
                ctx.fail("updates " + (f"{what!r}" if what else "a tensor") +
                         " in place, which is neither an input of the function nor a buffer "
                         "of the module (pass the tensor as an argument)")
            # A buffer the module updates (running statistics): an input written in place.
            v = self.lookup(root)
            if not isinstance(v, Value):
                v = self.constant(ctx, t, "buffer")
                self.values[root] = v
            if v.name not in self.updated_buffers:
                entry = next(i for i in self.g.inputs if i["name"] == v.name)
                entry.pop("data", None)
                self.updated_buffers[v.name] = id(t)
                self.buffer_roots.append((v.name, root, t.dtype))
        if not isinstance(result, Value):
            ctx.fail("an in-place update with no tensor result")
        self.current[root] = result
        return root

    def _no_stale_views(self, node, parent, view):
        """Whether no view of `parent` but `view`, made before the write by `node`, is read
        after it (such a view would show the write in PyTorch, and not in the graph)."""
        at = self.order.get(node)
        if at is None:
            return False
        for u in parent.users:
            if u is view or self.order.get(u, at + 1) > at:
                continue
            uv = self.values.get(u)
            if not (isinstance(uv, Value) and uv.view):
                continue
            stack, seen = list(u.users), set()
            while stack:
                w = stack.pop()
                if w in seen:
                    continue
                seen.add(w)
                if self.order.get(w, at + 1) > at:
                    return False
                wv = self.values.get(w)
                if isinstance(wv, Value) and wv.view:
                    stack.extend(w.users)
        return True

    def _view_written_alone(self, node, view):
        """Whether an in-place write by `node` into `view`, a view of an intermediate tensor
        (nn.ReLU(inplace=True) after instance norm, which PyTorch 1.13 computes on a reshaped
        copy and views back), can be the view's own new value: nothing reads the tensor it
        views, or another view of it, after `node` (the write would show through them), and
        that tensor is no input or buffer (whose update the graph would have to return)."""
        order = self.order
        at = order.get(node)
        if at is None:
            return False
        cur = view
        while True:
            v = self.values.get(cur)
            if not (isinstance(v, Value) and v.view) and not _splits(cur):
                # A computed tensor, unless it is an input or buffer that in-place ops wrote
                # before (a.sigmoid_(); a.view(64).add_(3) writes the input a).
                root = self._root(cur) if isinstance(cur, torch.fx.Node) else None
                if isinstance(root, torch.fx.Node) and root.op in ("placeholder", "get_attr"):
                    return False
                return isinstance(cur, torch.fx.Node) and cur.op == "call_function" and \
                    cur is not view
            parent = cur.args[0] if cur.args and isinstance(cur.args[0], torch.fx.Node) \
                else None
            if parent is None:
                return False
            # Every other alias of parent, and what reads it, must come before the write; the
            # other pieces of a split are apart from this one (an LSTM cell's gates, chunked
            # and each activated in place).
            stack = [u for u in parent.users if u is not cur and not _other_piece(u, cur)]
            seen = set()
            while stack:
                u = stack.pop()
                if u in seen:
                    continue
                seen.add(u)
                if order.get(u, at + 1) > at:
                    return False
                uv = self.values.get(u)
                if isinstance(uv, Value) and uv.view:
                    stack.extend(u.users)
            cur = parent

    def describe(self, node, message):
        where = user_location(node)
        if not where and node.op == "get_attr":  # a constant: where it is first used
            order = getattr(self, "order", {})
            for user in sorted(node.users, key=lambda u: order.get(u, len(order))):
                where = user_location(user)
                if where:
                    break
        return (f"fuserc.export: {target_name(node)} ('{node.name}'): {message}" +
                (f"\n  from {where}" if where else ""))

    # ---- the whole graph
    def run(self):
        A = self.traces[0]
        for t in self.traces[1:]:
            if len(t.nodes) != len(A.nodes) or any(
                    target_name(a) != target_name(b) for a, b in zip(A.nodes, t.nodes)):
                k = next((k for k, (a, b) in enumerate(zip(A.nodes, t.nodes))
                          if target_name(a) != target_name(b)), min(len(A.nodes), len(t.nodes)))
                node = A.nodes[min(k, len(A.nodes) - 1)] if A.nodes else None
                msg = ("the function runs different ops at other sizes of its symbols "
                       "(shape-dependent control flow), from here on; if it does so only at "
                       "small sizes, say where it is used with ranges=")
                err = ExportError(self.describe(node, msg) if node else "fuserc.export: " + msg)
                err.ops_differ = True
                raise err
        self.order = {n: k for k, n in enumerate(A.nodes)}
        for trace in self.traces:
            for n in trace.nodes:
                self.metas[n] = _meta(n)
            for n in trace.placeholders:
                if n is not None:  # None: an int that sets a size
                    self.metas[n] = _meta(n)
        # Inputs.
        for i, inp in enumerate(self.inputs):
            phs = [t.placeholders[i] for t in self.traces]
            if inp.symbol is not None:  # an int that sets a size: read in the graph as one
                self.g.add_input(inp.name, torch.int64, symbol=inp.symbol)
                self.symbol_inputs[inp.symbol] = Value(inp.name, torch.int64, [], scalar=True)
                continue
            if inp.kind == "scalar":
                self.g.add_input(inp.name, inp.scalar_dtype)
                self.values[phs[0]] = Value(inp.name, inp.scalar_dtype, [], scalar=True)
                continue
            shapes = [tuple(int(d) for d in m[0][0]) for m in (self.metas[p] for p in phs)]
            ctx = Context(self, phs)
            shape = self.shape_of(ctx, shapes)
            if any(e.is_constant and e.constant == 0 for e in shape):
                raise ExportError(
                    f"fuserc.export: input {inp.name!r} is empty (shape {list(shapes[0])}): a "
                    "fuserc graph's fixed extents are positive, and an empty extent is a symbol "
                    "whose min is 0 (pass a non-empty example, or leave the empty tensor out)")
            self.g.add_input(inp.name, inp.value.dtype, [e.json() for e in shape])
            self.values[phs[0]] = Value(inp.name, inp.value.dtype, shape)
        live = self._live()
        aligned = list(zip(*[t.nodes for t in self.traces]))
        for nodes in aligned:
            if nodes[0] not in live:
                continue
            ctx = Context(self, nodes)
            narrow = self._narrow_dtype(nodes[0])
            emitted = len(self.g.ops), len(self.g.inputs)
            result = Unsupported(self.describe(nodes[0], narrow)) if narrow else self.table(ctx)
            self.values[nodes[0]] = result
            self._note_literal_zeros(nodes[0], *emitted)
            if isinstance(result, Value) and not result.scalar:
                self.extents[result.name] = [e.json() for e in result.shape]
            if _is_inplace(nodes[0]) and isinstance(result, Value):
                self.root[nodes[0]] = self.update(ctx, nodes[0].args[0], result)
            out = _out_argument(nodes[0])
            if out is not None and isinstance(result, Value):
                target = self.lookup(nodes[0].kwargs[out])
                if isinstance(target, Value):
                    if [e for e in result.shape] != [e for e in target.shape]:
                        ctx.fail(f"writes a result of shape {result.shape} into `{out}=` of "
                                 f"shape {target.shape} (PyTorch resizes it)")
                    if result.dtype != target.dtype:
                        result = Value(ctx.g.emit("cast", [result], ctx.base(),
                                                  dtype=target.dtype), target.dtype, result.shape)
                self.root[nodes[0]] = self.update(ctx, nodes[0].kwargs[out], result)
        return self._outputs()

    def _note_literal_zeros(self, node, ops_before, inputs_before):
        """Records the results of `node`'s ops (and constants) that write an extent of 0 as a
        number (a `full` of shape [0], a constant torch.tensor([])), which the contract has
        only as an expression's value: refused if the graph keeps them (document); a cat drops
        such a part. Extents of 0 that ops infer (a slice past the end) are fine."""
        why = "an empty tensor: a fuserc graph writes extents of 0 only as expressions (a " \
              "slice past the end, a symbol whose min is 0), never as a number"
        for op in self.g.ops[ops_before:]:
            shape = op.get("shape") if isinstance(op.get("shape"), list) else []
            if 0 in shape or op.get("length") == 0:
                for out in op["out"] if isinstance(op["out"], list) else [op["out"]]:
                    self.empties[out] = self.describe(node, why)
        for entry in self.g.inputs[inputs_before:]:
            if 0 in (entry.get("shape") or []):
                self.empties[entry["name"]] = self.describe(node, why)

    def _defined(self, name):
        return any(i["name"] == name for i in self.g.inputs) or any(
            name == op["out"] or (isinstance(op["out"], list) and name in op["out"])
            for op in self.g.ops)

    def _narrow_dtype(self, node):
        """Why a node whose results are all tensors of a dtype the contract lacks (int8,
        uint8, int16, complex: PyTorch's grid_sample decomposition casts to int8) cannot be
        converted, or None. Its result fails only where something uses it."""
        from ._dtypes import NAME_OF
        metas = [m for m in self.metas[node] if m is not None]
        odd = [m[1] for m in metas if m[1] not in NAME_OF]
        if not metas or len(odd) < len(metas):
            return None
        return (f"a {odd[0]} result, a dtype fuserc graphs do not have (they hold "
                f"{', '.join(str(d) for d in NAME_OF)})")

    def _live(self):
        A = self.traces[0]
        roots = [o for o in A.outputs if isinstance(o, torch.fx.Node)]
        roots += [n for n in A.nodes if _is_inplace(n) or _writes_other_args(n) or
                  _out_argument(n) is not None]
        live, stack = set(), list(roots)
        while stack:
            n = stack.pop()
            if n in live:
                continue
            live.add(n)
            stack.extend(n.all_input_nodes)
        return live

    def _outputs(self):
        A = self.traces[0]
        names, leaves, aliases = [], [], {}
        user = [o for k, o in enumerate(A.outputs) if k not in A.mutations]
        for o in user:
            if o is None:
                leaves.append(None)
                continue
            if not isinstance(o, torch.fx.Node):
                raise ExportError(f"fuserc.export: the function returns {o!r}, not a tensor")
            v = self.lookup(o)
            if isinstance(v, Unsupported):
                raise ExportError(v.message)
            if not isinstance(v, Value) or v.scalar:
                raise ExportError(f"fuserc.export: the function returns {o.name}, which is not "
                                  "a tensor of the graph")
            if any(e.is_constant and e.constant == 0 for e in v.shape) and \
                    not self._defined(v.name):  # an empty tensor no op makes (x.repeat(0, 1))
                raise ExportError(self.empties.get(v.name) or self.describe(
                    o, f"returns an empty tensor (shape {[e.json() for e in v.shape]}) that no "
                       "op of the graph makes: a fuserc graph writes extents of 0 only as "
                       "expressions (a slice past the end, a symbol whose min is 0)"))
            if getattr(v, "uninitialized", False):
                raise ExportError(self.describe(
                    o, "returns a tensor nothing writes (torch.empty, empty_like: its values are "
                       "undefined), which a fuserc graph cannot make"))
            leaves.append(len(names))
            names.append(v.name)
        # Inputs updated in place: in-place ops (make_fx), or torch.export's mutation outputs.
        updated = []
        for i, inp in enumerate(self.inputs):
            ph = A.placeholders[i]
            if ph in self.current and self.current[ph] is not self.values[ph]:
                updated.append((i, self.current[ph]))
        for k, i in A.mutations.items():
            o = A.outputs[k]
            updated.append((i, self.lookup(o)))
        for i, v in updated:
            if self.inputs[i].kind != "tensor":
                raise ExportError(f"fuserc.export: input {self.inputs[i].name!r} is a number "
                                  "updated in place")
        # Per input written in place: (its name, its dtype, its new value); buffers last.
        updated = [(self.inputs[i].name, self.inputs[i].value.dtype, v) for i, v in updated]
        updated += [(name, dtype, self.current[root]) for name, root, dtype in self.buffer_roots]
        graph_inputs = {i["name"] for i in self.g.inputs}
        declared = {i["name"]: i.get("shape") for i in self.g.inputs}
        for name, dtype, v in updated:
            was, now = declared.get(name), [e.json() for e in v.shape]
            if was is not None and (len(was) != len(now) or any(
                    isinstance(a, int) and isinstance(b, int) and a != b
                    for a, b in zip(was, now))):
                raise ExportError(f"fuserc.export: input {name!r} of shape {was} is given a "
                                  f"value of shape {now} in place (PyTorch resizes it), which a "
                                  "fuserc graph cannot express")
            if v.dtype != dtype:
                v = Value(self.g.emit("cast", [v], name + "_new", dtype=dtype), dtype, v.shape)
            if v.name in graph_inputs or v.name in aliases:
                v = Value(self.g.emit("segment_set", [v], name + "_new"), v.dtype, v.shape)
            elif v.name not in names:  # readable: the updated value of p is p_new
                old = v.name
                v = Value(self.g.rename(v.name, name + "_new"), v.dtype, v.shape)
                if old in self.extents:
                    self.extents[v.name] = self.extents.pop(old)
            aliases[v.name] = name
            names.append(v.name)
        if not names:
            raise ExportError("fuserc.export: the function returns no tensor and updates no "
                              "input")
        doc = self.g.document(names, aliases)
        kept = [i["name"] for i in doc["inputs"]]
        for op in doc["ops"]:
            kept += op["out"] if isinstance(op["out"], list) else [op["out"]]
        for name in kept:
            if name in self.empties:
                raise ExportError(self.empties[name])
        return doc, ReturnSpec(A.out_spec, leaves)

    def rng_args(self):
        """The [seed, offset] arguments of the next random op (the graph's rng_seed and
        rng_offset inputs; each op gets its own offset)."""
        if self.rng is None:
            for n in ("rng_seed", "rng_offset"):
                if any(i.name == n for i in self.inputs):
                    raise ExportError(f"fuserc.export: an input is named {n!r}, the name of the "
                                      "random ops' seed input")
                self.g.add_input(n, torch.int64)
            self.rng = (Value("rng_seed", torch.int64, [], scalar=True),
                        Value("rng_offset", torch.int64, [], scalar=True))
        k = self.random_ops
        self.random_ops += 1
        if k == 0:
            return list(self.rng)
        off = Value(self.g.emit("add", [self.rng[1], k], "rng_offset"), torch.int64, [])
        return [self.rng[0], off]
