"""Owns the part of the ATen-to-contract table (see _aten.py) that moves data rather than
computing: views and shape ops (reshape, expand, permute, slices, cat, pad, indexing), creation
(full, arange) and random ops. convert(ctx, name, overload) returns None for other ops."""
import torch

from . import _convert
from ._dtypes import HALF as _HALF
from ._graph import Value
from ._symbolic import (MAX_MULTIPLE, Extent, ceildiv, mod, product, provably_nonnegative,
                        quotient)
from ._trace import MASK_INDEXING, ExportError

_F32 = torch.float32


def _cast(ctx, v, dtype):
    """v as `dtype`. An f16/bf16 value is rounded to its dtype first, as PyTorch holds it: a
    fuserc kernel carries the result of f16 arithmetic in f32 until it is written to memory,
    and a cast to its own dtype is that rounding (fuserc drops it where v is already rounded,
    an input or a cast)."""
    if isinstance(v, Value) and v.dtype != dtype:
        if v.dtype in _HALF:
            v = Value(ctx.g.emit("cast", [v], ctx.base(), dtype=v.dtype), v.dtype, v.shape)
        return Value(ctx.g.emit("cast", [v], ctx.base(), dtype=dtype), dtype, v.shape)
    return v

def _json_shape(ctx, shape, what):
    out = []
    for e in shape:
        j = e.json()
        if j is None:
            ctx.fail(f"{what} has an extent {e} that a fuserc graph cannot name (only integers, "
                     "symbols and integer expressions of them)")
        out.append(j)
    return out


def _reshape_shape(ctx, shape):
    """A reshape target: the first extent that is a product of symbols as -1, any other as an
    extent expression ("B*S")."""
    out = _json_shape(ctx, shape, f"reshape to ({', '.join(map(str, shape))})")
    compound = [k for k, e in enumerate(shape) if not e.is_name]
    if compound:
        out[compound[0]] = -1
    return out


def _bound(ctx, e, extent):
    """A slice bound: an int (negatives from the end: `S-1` of an extent `S` is -1), a symbol,
    or an extent expression. A symbolic bound that is negative at every size (`-S`, MPT's
    `mask[-S:]`) counts from the end as in PyTorch: `extent - S`, clamped at 0 where that is a
    negative number; an expression fuserc may find negative is refused."""
    if e.is_constant:
        return e.constant
    if e.symbol is not None:
        return e.symbol
    d = e - extent
    if d.is_constant and d.constant < 0:
        return d.constant
    values = [e.evaluate(sv) for sv in ctx.conv.sizes]
    if all(v < 0 for v in values):
        if not provably_nonnegative(-e):
            ctx.fail(f"a slice bound {e.text()} that is negative at the traced sizes but may "
                     "not be at others")
        w = e + extent
        if w.is_constant:
            return max(0, w.constant)
        if not _nonnegative(ctx, w):
            ctx.fail(f"a slice bound {e.text()} from the end of an extent {extent.text()}, "
                     "which PyTorch clamps at 0 where it is longer, as a fuserc graph cannot")
        return _bound(ctx, w, extent)
    return e.json()


def _least(e, symbols):
    """The least value of `e`, a sum of symbols times integers, over the symbols' ranges
    (`symbols`: the graph's entries, min 1 by default); None where a symbol with a negative
    coefficient has no max or `e` is not such a sum."""
    v = e.const
    for m, c in e.terms:
        if len(m) != 1 or not isinstance(m[0], str):
            return None
        entry = symbols.get(m[0], {})
        bound = entry.get("min", 1) if c > 0 else entry.get("max")
        if bound is None:
            return None
        v += c * bound
    return v


def _nonnegative(ctx, e):
    """Whether extent expression e is at least 0 at every binding: provably, or at its least
    value over the symbols' ranges."""
    least = _least(e, ctx.conv.g.symbols)
    return provably_nonnegative(e) or (least is not None and least >= 0)


def _slice(ctx, x, dim, start, end, step=1):
    """x[start:end:step] along `dim` (Extents; None for the ends). Over a symbolic extent with
    a step, the end is written as the last element taken plus one, `start + step * (n - 1) +
    1` with n the PyTorch's `(end - start + step - 1) // step`, so that fuserc's extent of the
    slice (a ceiling division of end - start) is n itself, a floor division."""
    rank = x.rank
    dim = dim + rank if dim < 0 else dim
    starts = [0] * rank
    ends = _json_shape(ctx, x.shape, "a sliced tensor")
    steps = [1] * rank
    extent = x.shape[dim]
    if end is not None and end.is_constant and end.constant >= 2**62:
        end = None
    if step != 1 and not extent.is_constant and (start is None or start.is_constant) and \
            (end is None or end == extent):
        first = start.constant if start is not None else 0
        if first >= 0:
            n = ceildiv(extent - first, step)
            ctx.learn(n)
            start, end = Extent(first), first + step * (n - 1) + 1
    if start is not None:
        starts[dim] = _bound(ctx, start, extent)
    if end is not None:
        ends[dim] = _bound(ctx, end, extent)
        if not extent.is_constant and isinstance(ends[dim], int) and ends[dim] > 0:
            # x[:, :4] of [B, N]: 4 wide where N >= 4, as in every trace; fuserc's extent is
            # min(N, 4) where N may be less, which no traced extent matches.
            ctx.conv.at_least(extent, ends[dim])
    steps[dim] = step
    return ctx.g.emit("slice", [x], ctx.base(), starts=starts, ends=ends, steps=steps)



def _random(ctx, op, shape, dtype):
    return ctx.g.emit(op, ctx.conv.rng_args(), ctx.base(), shape=_json_shape(ctx, shape,
                                                                               "a random tensor"),
                      dtype=dtype)


def _full(ctx, shape, value, dtype):
    if isinstance(value, Value):
        ctx.fail("a fill value that is a tensor")
    if dtype == torch.bool:
        value = bool(value)
    elif not dtype.is_floating_point:
        value = int(value)
    else:
        value = float(value)
    return ctx.g.emit("full", [], ctx.base(), shape=_json_shape(ctx, shape, "a new tensor"),
                      value=value, dtype=dtype)



def _wrap_negative(ctx, idx, extent):
    """x[idx] counts a negative index from the end (PyTorch's indexing; the contract's
    index_select needs [0, extent)): where(idx < 0, idx + extent, idx)."""
    n = extent.constant if extent.is_constant else ctx.conv.size_value(ctx, extent)
    neg = ctx.tmp("lt", [idx, 0], torch.bool, idx.shape)
    moved = ctx.tmp("add", [idx, n], idx.dtype, idx.shape)
    return ctx.tmp("where", [neg, moved, idx], idx.dtype, idx.shape)


def _row(ctx, x):
    """A 0-dim tensor as one element of rank 1 (PyTorch's index ops take 0-dim tensors as
    such); any other as it is."""
    if x.rank:
        return x
    return ctx.tmp("reshape", [x], x.dtype, [Extent(1)], shape=[1])


def _index_select(ctx, x, dim, idx, out_shape):
    if idx.rank == 1:
        return ctx.g.emit("index_select", [x, idx], ctx.base(), dim=dim)
    flat = ctx.tmp("reshape", [idx], idx.dtype, [Extent(0)], shape=[-1])
    sel = ctx.tmp("index_select", [x, flat], x.dtype, [], dim=dim)
    return ctx.g.emit("reshape", [sel], ctx.base(), shape=_reshape_shape(ctx, out_shape))



def _broadcast_shape(ctx, shapes):
    """The shape that `shapes` broadcast to, aligned on the right (NumPy's rule)."""
    rank = max(len(s) for s in shapes)
    out = [Extent(1)] * rank
    for s in shapes:
        for k, e in enumerate(s):
            o = rank - len(s) + k
            if out[o].constant == 1:
                out[o] = e
            elif e.constant != 1 and e != out[o]:
                ctx.fail(f"index tensors of shapes {', '.join(map(str, shapes))}, which do "
                         "not broadcast")
    return out


def _multi_index(ctx, x, idxs, dims):
    """x[i0, i1, ...] with integer index tensors on dims `dims`: one index_select of the
    indexed dims merged into one, at the position i0 * e1 * e2 + i1 * e2 + i2 (the indices
    broadcast together, negatives counted from the end). Indexed dims separated by a slice
    go first in the result, as PyTorch puts them (x is permuted so that they lead)."""
    if dims != list(range(dims[0], dims[0] + len(dims))):
        order = dims + [d for d in range(x.rank) if d not in dims]
        x = ctx.tmp("permute", [x], x.dtype, [x.shape[d] for d in order], dims=order)
        dims = list(range(len(dims)))
    d, k = dims[0], len(dims)
    shape = _broadcast_shape(ctx, [i.shape for i in idxs])
    lin = None
    for i, dim in zip(idxs, dims):
        i = _cast(ctx, _wrap_negative(ctx, i, x.shape[dim]), torch.int64)
        if lin is None:
            lin = i
            continue
        e = x.shape[dim]
        n = e.constant if e.is_constant else ctx.conv.size_value(ctx, e)
        scaled = ctx.tmp("mul", [lin, n], torch.int64, lin.shape)
        lin = ctx.tmp("add", [scaled, i], torch.int64,
                      _broadcast_shape(ctx, [lin.shape, i.shape]))
    if lin.shape != shape:
        lin = ctx.tmp("expand", [lin], torch.int64, shape,
                      shape=_json_shape(ctx, shape, "an index"))
    merged = product(x.shape[d:d + k])
    flat_shape = x.shape[:d] + [merged] + x.shape[d + k:]
    flat = ctx.tmp("reshape", [x], x.dtype, flat_shape, shape=_reshape_shape(ctx, flat_shape))
    return _index_select(ctx, flat, d, lin, ctx.out_shape())


def _view_groups(ins, outs):
    """The dims of a view as groups (input dims, output dims) whose element counts agree, as
    PyTorch's view pairs them (`ins`, `outs`: the sizes in one trace); None where sizes of 0
    or a rank mismatch leave them unpaired."""
    if 0 in ins or 0 in outs:
        return None
    groups, i, j = [], 0, 0
    while i < len(ins) or j < len(outs):
        gi, gj = [], []
        pin = pout = 1
        while True:
            if pin <= pout and i < len(ins) and (pin < pout or not gi):
                pin *= ins[i]
                gi.append(i)
                i += 1
            elif j < len(outs) and (pout < pin or not gj):
                pout *= outs[j]
                gj.append(j)
                j += 1
            else:
                break
            if pin == pout and gi and gj:
                break
        if pin != pout:
            return None
        groups.append((gi, gj))
    return groups


def _structural_view(ctx, x, raw):
    """The target extents of a view of x that follow from x's extents, per output dim (None
    where they do not): in a group of dims whose counts agree in every trace, the one output
    dim whose size changes with the symbols is the group's input extents' product over the
    other output dims' (constant) sizes. [B, H', W', C] viewed as [B, H'//4, 4, W'//4, 4, C]
    is then H'//4 and W'//4 by construction, where fitting each size to the traces' values
    alone may find another extent that agrees by chance (W'//4 = H'//4 + 1 at three sizes)."""
    sizes = ctx.conv.sizes
    ins = [[e.evaluate(sv) for e in x.shape] for sv in sizes]
    groups = _view_groups(ins[0], list(raw[0]))
    if groups is None:
        return [None] * len(raw[0])
    out = [None] * len(raw[0])
    for gi, gj in groups:
        for t in range(1, len(sizes)):
            a = b = 1
            for i in gi:
                a *= ins[t][i]
            for j in gj:
                b *= raw[t][j]
            if a != b:
                return [None] * len(raw[0])
        varying = [j for j in gj if any(r[j] != raw[0][j] for r in raw)]
        if len(varying) != 1:
            continue
        k = varying[0]
        rest = 1
        for j in gj:
            if j != k:
                rest *= raw[0][j]
        e = product(x.shape[i] for i in gi)
        if rest != 1:
            e = e // rest
        if all(e.evaluate(sv) == r[k] for sv, r in zip(sizes, raw)):
            out[k] = e
    return out


def _view_shape(ctx, x):
    """The target shape of a view or reshape of x. Each extent is resolved from the traces;
    the one the caller wrote as -1 (or the one no known extent fits) is the element count of x
    over the others' product, with common factors cancelled: [B, N] viewed as (B, -1, 2) is
    [B, N//2, 2]."""
    raw = [ctx.conv.metas[n][0][0] for n in ctx.nodes]
    if any(len(r) != len(raw[0]) for r in raw):
        ctx.fail("the rank of a result changes with the sizes of the inputs")
    rank = len(raw[0])
    target = ctx.node.args[1] if len(ctx.node.args) > 1 else None
    target = list(target) if isinstance(target, (list, tuple)) else []
    out = _structural_view(ctx, x, raw)
    for k in range(rank):
        if out[k] is not None:
            ctx.conv.learn(out[k])
            continue
        if k < len(target) and len(target) == rank and target[k] == -1:
            continue
        out[k] = ctx.conv.try_extent(ctx, [r[k] for r in raw], deep=False)
    missing = [k for k in range(rank) if out[k] is None]
    if len(missing) == 1:
        k = missing[0]
        q = quotient(product(x.shape), product(e for j, e in enumerate(out) if j != k))
        if q is not None and all(q.evaluate(sv) == r[k] for sv, r in zip(ctx.conv.sizes, raw)):
            out[k] = ctx.conv.learn(q)
    for k in range(rank):
        if out[k] is None:
            out[k] = ctx.conv.extent(ctx, [r[k] for r in raw])
    return out


def _fit_count(ctx, x, shape):
    """x, or x sliced along one dim to a multiple of m, so that its element count is provably
    (as fuserc's reshape needs) that of `shape`, the target of a view: [B, N] viewed as [B, N//2, 2] reads
    x[:, :2*(N//2)], which is all of x where N is even, the only sizes at which PyTorch's view
    works. The contract cannot say that N is even, so the package cannot check it: the graph's
    `requires` records it for the caller (a Package checks it on each call)."""
    have, want = product(x.shape), product(shape)
    if have == want:
        return x
    divisors = sorted({m for e in shape for m in e.denominators()})
    for d, e in enumerate(x.shape):
        if e.is_constant:
            continue
        for m in divisors:
            cut = m * (e // m)
            shape_cut = x.shape[:d] + [cut] + x.shape[d + 1:]
            if product(shape_cut) == want:
                ctx.conv.require(ctx, e, m, f"dimension {d} of a tensor viewed as "
                                 f"({', '.join(str(t.json()) for t in shape)})")
                return Value(_slice(ctx, x, d, Extent(0), cut), x.dtype, shape_cut)
    # Several dims split at once (Swin's [B, H, W, C] as [B, H//ws, ws, W//ws, ws, C]): each
    # dim E whose E // m the target has is cut to m * (E // m).
    cuts = {}
    for d, e in enumerate(x.shape):
        if e.is_constant:
            continue
        # A dim that is itself a quotient splits by what is left: windows of 7 over H // 4
        # are H // 28 in the target.
        own = sorted({m // k for m in divisors for k in e.denominators() if m % k == 0} - {1})
        for m in divisors + [m for m in own if m not in divisors]:
            if e // m in shape:
                cuts[d] = m
                break
    shape_cut = [cuts[d] * (e // cuts[d]) if d in cuts else e for d, e in enumerate(x.shape)]
    if len(cuts) > 1 and product(shape_cut) == want:
        for d, m in cuts.items():
            ctx.conv.require(ctx, x.shape[d], m, f"dimension {d} of a tensor viewed as "
                             f"({', '.join(str(t.json()) for t in shape)})")
            x = Value(_slice(ctx, x, d, Extent(0), shape_cut[d]), x.dtype,
                      x.shape[:d] + [shape_cut[d]] + x.shape[d + 1:])
        return x
    return x  # fuserc's reshape says whether it can show that the counts are equal


def convert(ctx, name, overload):  # noqa: C901 - one dispatch table
    g = ctx.g
    # ---- views and shape ops
    if name in ("view", "view_copy") and overload == "dtype":
        x = ctx.tensor(0)
        if ctx.out_dtype() != x.dtype:  # x.view(torch.int32): the same bits read as another type
            raise ctx.unsupported(f"a view of a {x.dtype} tensor as {ctx.out_dtype()} (its bits "
                                  "reinterpreted), which no op of a fuserc graph does")
        return Value(x.name, x.dtype, x.shape, view=True)
    if name in ("view", "_unsafe_view", "reshape", "view_copy", "_reshape_alias"):
        x = ctx.tensor(0)
        shape = _view_shape(ctx, x)
        if name == "view":  # a write into the view writes x (reshaped back)
            ctx.conv.places[ctx.node] = _reshaped_back
        if shape == x.shape:
            return Value(x.name, x.dtype, x.shape, view=True)
        x = _fit_count(ctx, x, shape)
        return Value(g.emit("reshape", [x], ctx.base(), shape=_reshape_shape(ctx, shape)),
                     x.dtype, shape, view=True)
    if name in ("expand", "expand_copy"):
        x = ctx.tensor(0)
        out = ctx.out_shape()
        lead = len(out) - x.rank
        if lead < 0:
            ctx.fail("expand to a lower rank")
        src = x
        for _ in range(lead):
            src = Value(g.emit("unsqueeze", [src], ctx.base(), dim=0), x.dtype,
                        [Extent(1)] + src.shape)
        if src.shape == out:
            return Value(src.name, x.dtype, out, view=True)
        target = []
        for k, e in enumerate(out):
            if src.shape[k] == e:
                target.append(-1)
            else:
                j = e.json()
                if j is None:
                    ctx.fail(f"expand to an extent {e} that a fuserc graph cannot name")
                target.append(j)
        return Value(g.emit("expand", [src], ctx.base(), shape=target), x.dtype, out, view=True)
    if name in ("permute", "permute_copy"):
        x = ctx.tensor(0)
        dims = [d + x.rank if d < 0 else d for d in ctx.const(1)]
        return Value(g.emit("permute", [x], ctx.base(), dims=dims), x.dtype, ctx.out_shape(),
                     view=True)
    if name in ("transpose", "t", "transpose_copy", "t_copy", "numpy_T"):
        x = ctx.tensor(0)
        if x.rank < 2:
            return Value(x.name, x.dtype, x.shape, view=True)
        d0, d1 = (0, 1) if name.startswith("t") and not name.startswith("transpose") \
            else (ctx.const(1), ctx.const(2))
        perm = list(range(x.rank))
        d0, d1 = d0 % x.rank, d1 % x.rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return Value(g.emit("permute", [x], ctx.base(), dims=perm), x.dtype, ctx.out_shape(),
                     view=True)
    if name in ("unsqueeze", "unsqueeze_copy"):
        x = ctx.tensor(0)
        d = ctx.const(1)
        d = d + x.rank + 1 if d < 0 else d
        return Value(g.emit("unsqueeze", [x], ctx.base(), dim=d), x.dtype, ctx.out_shape(),
                     view=True)
    if name in ("squeeze", "squeeze_copy"):
        x = ctx.tensor(0)
        if overload in ("dim", "dims"):
            dims = ctx.const(1)
            dims = [dims] if isinstance(dims, int) else list(dims)
        else:
            dims = list(range(x.rank))
        dims = sorted({d % x.rank for d in dims} if x.rank else set())
        dims = [d for d in dims if x.shape[d] == Extent(1)]
        if not dims:
            return Value(x.name, x.dtype, x.shape, view=True)
        return Value(g.emit("squeeze", [x], ctx.base(), dims=dims), x.dtype, ctx.out_shape(),
                     view=True)
    if name in ("slice", "slice_copy"):
        src = ctx.conv.lookup(ctx.node.args[0])
        if isinstance(src, Value) and src.uninitialized:
            return _slice_of_uninitialized(ctx, src)
        x = ctx.tensor(0)
        dim = ctx.const(1, "dim", 0)
        start = ctx.size(2, "start", None) if ctx.has(2, "start") and \
            ctx.node.args[2:3] != [None] else None
        end = ctx.size(3, "end", None) if ctx.has(3, "end") and \
            (ctx.node.args[3] if len(ctx.node.args) > 3 else ctx.node.kwargs.get("end")) \
            is not None else None
        step = ctx.const(4, "step", 1)
        if end is not None and end.is_constant and end.constant >= 2**62:
            end = None
        dim %= x.rank
        if (start is None or start == Extent(0)) and end is None and step == 1:
            _record_place(ctx, x, dim, Extent(0), x.shape[dim], False)
            return Value(x.name, x.dtype, x.shape, view=True)
        out = _slice(ctx, x, dim, start, end, step)
        if step == 1:
            _record_place(ctx, x, dim, start, end, False)
        return Value(out, x.dtype, ctx.out_shape(), view=True)
    if name in ("select", "select_copy"):
        x = ctx.tensor(0)
        dim = ctx.const(1) % x.rank
        idx = ctx.size(2)
        end = None if idx.constant == -1 else idx + 1
        if not idx.is_constant and not (idx.const < 0 and (idx - idx.const).symbol):
            ctx.fail("a select index that depends on the sizes")
        kshape = list(x.shape)
        kshape[dim] = Extent(1)
        s = Value(_slice(ctx, x, dim, idx, end), x.dtype, kshape)
        _record_place(ctx, x, dim, idx, end, True)
        return Value(g.emit("squeeze", [s], ctx.base(), dims=[dim]), x.dtype, ctx.out_shape(),
                     view=True)
    if name == "narrow":
        x = ctx.tensor(0)
        dim = ctx.const(1) % x.rank
        start, length = ctx.const(2), ctx.const(3)
        return Value(_slice(ctx, x, dim, Extent(start), Extent(start + length)), x.dtype,
                     ctx.out_shape(), view=True)
    if name in ("split", "split_with_sizes", "chunk", "unbind", "unsafe_split",
                "split_with_sizes_copy", "split_copy"):
        return _split(ctx, name)
    if name == "cat":
        dim = ctx.const(1, "dim", 0)
        # Empty parts add nothing: a legacy 1-D empty tensor, or one empty along `dim` (an
        # empty KV cache: torch.zeros(B, H, 0, D) before the first keys).
        tensors = [t for t in ctx.arg(0, "tensors") if not (
            (t.rank == 1 and t.shape[0] == Extent(0)) or
            (t.rank and t.shape[dim % t.rank] == Extent(0)))]
        dtype = ctx.out_dtype()
        tensors = [_cast(ctx, t, dtype) for t in tensors]
        if len(tensors) == 1:
            return tensors[0]
        dim = dim % tensors[0].rank
        ctx.learn(sum((t.shape[dim] for t in tensors), Extent(0)))  # fuserc's extent
        return ctx.emit("cat", tensors, dim=dim)
    if name == "stack":
        tensors = ctx.arg(0, "tensors")
        dim = ctx.const(1, "dim", 0)
        dim = dim % (tensors[0].rank + 1)
        parts = [Value(g.emit("unsqueeze", [t], ctx.base(), dim=dim), t.dtype,
                       t.shape[:dim] + [Extent(1)] + t.shape[dim:]) for t in tensors]
        parts = [_cast(ctx, p, ctx.out_dtype()) for p in parts]
        return ctx.emit("cat", parts, dim=dim) if len(parts) > 1 else parts[0]
    if name == "constant_pad_nd":
        x = ctx.tensor(0)
        raw = ctx._raw(1, "pad", None)
        if not isinstance(raw[0], (list, tuple)) or any(len(r) != len(raw[0]) for r in raw):
            ctx.fail("a pad list that changes length with the sizes of the inputs")
        value = ctx.const(2, "value", 0)
        pads = [[0, 0] for _ in range(x.rank)]
        others = [Extent(1, (s,)) for s in sorted(ctx.conv.sizes[0])] + \
            [e for e in ctx.conv.known if not e.is_constant]
        base = list(ctx.candidates)
        for k in range(len(raw[0]) // 2):
            d = x.rank - 1 - k
            e = x.shape[d]
            # The pads of a symbolic extent E: to a multiple of m, (-E) % m; to another
            # extent K, split in halves as UNet's skip connections do, K - E, (K - E) // 2
            # and the rest. Each dim's own, so that another symbol's parity that agrees in
            # the traces is not taken for it.
            guesses = []
            if not e.is_constant:
                guesses = [mod(-e, m) for m in range(2, MAX_MULTIPLE + 1)]
                for other in others:
                    diff = other - e
                    guesses += [diff, diff // 2, diff - diff // 2]
            ctx.candidates = base + [g for g in guesses if not g.is_constant]
            lo, hi = (ctx.conv.extent(ctx, [r[2 * k + j] for r in raw]) for j in (0, 1))
            ctx.candidates = base
            pads[d] = [lo.json(), hi.json()]
            ctx.learn(e + lo + hi)
        return ctx.emit("pad", [x], pads=pads, value=value if value != 0 else None)
    if name in ("index_select",):
        x, dim, idx = _row(ctx, ctx.tensor(0)), ctx.const(1), _row(ctx, ctx.tensor(2))
        out = ctx.out_shape()
        if not out:  # a 0-dim tensor, indexed as one element
            r = Value(_index_select(ctx, x, 0, idx, [Extent(1)]), x.dtype, [Extent(1)])
            return ctx.emit("reshape", [r], shape=[])
        return ctx.result(_index_select(ctx, x, dim % x.rank, idx, out))
    if name == "index" and overload == "Tensor":
        x, indices = ctx.tensor(0), ctx.arg(1)
        given = [k for k, t in enumerate(indices) if t is not None]
        if any(isinstance(indices[k], Value) and indices[k].dtype == torch.bool
               for k in given):
            ctx.fail(MASK_INDEXING)
        if any(not isinstance(indices[k], Value) or
               indices[k].dtype not in (torch.int32, torch.int64) for k in given):
            raise ctx.unsupported("indexing with an index that is not an integer tensor")
        if len(given) > 1:
            return ctx.result(_multi_index(ctx, x, [indices[k] for k in given], given))
        dim = given[0]
        idx = _wrap_negative(ctx, indices[dim], x.shape[dim])
        return ctx.result(_index_select(ctx, x, dim, idx, ctx.out_shape()))
    if name in ("diagonal", "diagonal_copy"):
        return _diagonal(ctx)
    if name == "flip":
        return ctx.result(_flip(ctx, ctx.tensor(0), ctx.const(1, "dims")).name)
    if name == "as_strided":
        return _layout_only_as_strided(ctx)
    if name == "unfold":
        return ctx.result(_sliding_windows(ctx, ctx.tensor(0), ctx.const(1, "dimension"),
                                           ctx.const(2, "size"), ctx.const(3, "step")).name)
    if name == "embedding":
        w, idx = ctx.tensor(0), ctx.tensor(1)
        return ctx.result(_index_select(ctx, w, 0, idx, ctx.out_shape()))
    if name in ("triu", "tril"):
        return _triangle(ctx, name)
    if name == "gather":
        x, dim, idx = ctx.tensor(0), ctx.const(1), ctx.tensor(2)
        if x.rank == 0 or idx.rank == 0:  # a 0-dim tensor, indexed as one element
            if x.rank > 1 or idx.rank > 1:
                ctx.fail(f"a gather from rank {x.rank} at an index of rank {idx.rank}")
            r = Value(ctx.g.emit("gather", [_row(ctx, x), _row(ctx, idx)], ctx.base(), dim=0),
                      x.dtype, [Extent(1)])
            return ctx.emit("reshape", [r], shape=_reshape_shape(ctx, ctx.out_shape()))
        dim = dim % max(x.rank, 1)
        # PyTorch lets the index be shorter than x in the other dims (reading x's first
        # elements there); the contract's gather takes x's extents: x sliced to the index's.
        for d in range(min(x.rank, idx.rank)):
            if d != dim and idx.shape[d] != x.shape[d]:
                shape = x.shape[:d] + [idx.shape[d]] + x.shape[d + 1:]
                x = Value(_slice(ctx, x, d, None, idx.shape[d]), x.dtype, shape)
        return ctx.emit("gather", [x, idx], dim=dim)
    # ---- creation
    if name in ("full", "zeros", "ones", "new_full", "new_zeros", "new_ones", "full_like",
                "zeros_like", "ones_like", "scalar_tensor", "fill", "zero"):
        shape, dtype = ctx.out_shape(), ctx.out_dtype()
        value = {"zeros": 0, "new_zeros": 0, "zeros_like": 0, "zero": 0, "ones": 1,
                 "new_ones": 1, "ones_like": 1}.get(name)
        if value is None:
            k = {"full": 1, "new_full": 2, "full_like": 1, "scalar_tensor": 0, "fill": 1}[name]
            value = ctx.arg(k, "fill_value" if name != "fill" else "value")
            if isinstance(value, Value):
                if name != "fill" or value.rank != 0:
                    ctx.fail("a fill value that is a tensor")
                x = ctx.target(0)
                return ctx.emit("expand", [_cast(ctx, value, dtype)],
                                shape=_json_shape(ctx, x.shape, "fill_"))
        return ctx.result(_full(ctx, shape, value, dtype))
    if name in ("empty", "empty_like", "new_empty", "empty_strided", "empty_permuted"):
        return Value(ctx.base(), ctx.out_dtype(), ctx.out_shape(), uninitialized=True)
    if name == "arange":
        shape, dtype = ctx.out_shape(), ctx.out_dtype()
        step = ctx.const(2, "step", 1) if overload not in ("default", "start") else 1
        start = _size_arg(ctx, 0, "start") if overload != "default" else 0
        length = _json_shape(ctx, shape, "arange")[0]
        if not isinstance(start, Value):
            return ctx.emit("iota", [], length=length, start=start, step=step, dtype=dtype)
        # A start that is a size (torch.arange(P, S + P) over a KV cache of P positions,
        # MPT's torch.arange(1 - S, 1)): an iota from 0 plus the size's value.
        i64 = torch.int64
        r = ctx.tmp("iota", [], i64, shape, length=length, start=0, step=step, dtype=i64)
        return _cast(ctx, ctx.tmp("add", [r, start], i64, shape), dtype)
    # ---- random
    if name in ("rand", "randn", "rand_like", "randn_like", "uniform", "normal", "bernoulli",
                "native_dropout", "dropout"):
        return _random_op(ctx, name, overload)
    if name == "copy":
        dst, src = ctx.target(0), ctx.arg(1)
        v = _cast(ctx, src, dst.dtype)
        if not isinstance(v, Value):
            return ctx.result(_full(ctx, dst.shape, v, dst.dtype))
        if v.shape != dst.shape:
            v = Value(g.emit("broadcast_in_dim", [v], ctx.base(),
                             shape=_json_shape(ctx, dst.shape, "copy_"),
                             broadcast_dims=list(range(dst.rank - v.rank, dst.rank))),
                      dst.dtype, dst.shape)
        return Value(v.name, v.dtype, v.shape)
    if name == "copy_":
        return convert(ctx, "copy", overload)
    return None


def _record_place(ctx, x, dim, start, end, squeezed):
    """Records how a write into this slice (start:end along dim, step 1; a select when
    `squeezed`) of x updates x: x's parts before and after it around the written values, one
    `cat` (see Converter.update). Bounds from the end count from x's extent; a bound that is
    not an integer or a symbolic extent past 0 records nothing (such a write stays refused)."""
    n = x.shape[dim]

    def at(b, default):
        if b is None or (b.is_constant and b.constant >= 2**62):
            return default
        if b.is_constant and b.constant < 0:
            b = n + b.constant
        if b.is_constant and n.is_constant:
            return Extent(max(0, min(b.constant, n.constant)))
        return b if _nonnegative(ctx, b) and _nonnegative(ctx, n - b) else None
    lo, hi = at(start, Extent(0)), at(end, n)
    if lo is None or hi is None:
        return

    def place(c, parent, value):
        v = _cast(c, value, parent.dtype)
        if squeezed:
            shape = v.shape[:dim] + [Extent(1)] + v.shape[dim:]
            v = c.tmp("unsqueeze", [v], v.dtype, shape, dim=dim)
        parts = []
        if lo != Extent(0):
            parts.append(Value(_slice(c, parent, dim, None, lo), parent.dtype,
                               parent.shape[:dim] + [lo] + parent.shape[dim + 1:]))
        parts.append(v)
        if hi != parent.shape[dim]:
            parts.append(Value(_slice(c, parent, dim, hi, None), parent.dtype,
                               parent.shape[:dim] + [parent.shape[dim] - hi] +
                               parent.shape[dim + 1:]))
        if len(parts) == 1:
            return Value(v.name, v.dtype, parent.shape)
        return c.tmp("cat", parts, parent.dtype, parent.shape, dim=dim)
    ctx.conv.places[ctx.node] = place


def _flip(ctx, x, dims):
    """x reversed along `dims`: an index_select per dim at n - 1 - i (an iota counting down
    from 0, plus the extent less one: a number, or the size's value where it is symbolic)."""
    dims = [dims] if isinstance(dims, int) else list(dims)
    for d in sorted({d % x.rank for d in dims}):
        n = x.shape[d]
        length = _json_shape(ctx, [n], "flip")[0]
        down = ctx.tmp("iota", [], torch.int64, [n], length=length, start=0, step=-1,
                       dtype=torch.int64)
        last = n.constant - 1 if n.is_constant else \
            ctx.tmp("sub", [ctx.conv.size_value(ctx, n), 1], torch.int64, [])
        idx = ctx.tmp("add", [down, last], torch.int64, [n])
        x = ctx.tmp("index_select", [x, idx], x.dtype, x.shape, dim=d)
    return x


def _diagonal(ctx):
    """x.diagonal(offset, dim1, dim2), read as a view: dim1 and dim2 moved last and flattened
    to one dim of N*M, then a slice from the diagonal's first element with a step of M + 1 (an
    extent expression where M is symbolic). The length is the traced result's (min(N, M -
    offset) where the traces tell which is less). No place is recorded, so a write into it
    stays refused."""
    x = ctx.tensor(0)
    offset = ctx.const(1, "offset", 0)
    d1, d2 = ctx.const(2, "dim1", 0) % x.rank, ctx.const(3, "dim2", 1) % x.rank
    n, m = x.shape[d1], x.shape[d2]
    # Its length is min(a, b); the traces give one of them, which must be the lesser at every
    # binding (a fitted N where M may be less would read past the matrix).
    a, b = (n, m - offset) if offset >= 0 else (n + offset, m)
    ctx.learn(a, b)
    try:
        out = ctx.out_shape()
        other = b if out[-1] == a else a if out[-1] == b else None
    except ExportError:  # the lesser changes between the traces
        other = None
    if other is None or not _nonnegative(ctx, other - out[-1]):
        ctx.fail(f"a diagonal of length min({a.text()}, {b.text()}), which a fuserc graph "
                 "cannot state where either may be the lesser (give both dims one symbol, or "
                 "ranges that order them)")
    ctx.conv.at_least(out[-1], 1)  # an empty diagonal (offset past the matrix) is refused
    rest = [d for d in range(x.rank) if d not in (d1, d2)]
    order = rest + [d1, d2]
    if order != list(range(x.rank)):
        x = ctx.tmp("permute", [x], x.dtype, [x.shape[d] for d in order], dims=order)
    flat_shape = x.shape[:len(rest)] + [n * m]
    flat = ctx.tmp("reshape", [x], x.dtype, flat_shape, shape=_reshape_shape(ctx, flat_shape))
    start = Extent(offset) if offset >= 0 else m * (-offset)
    step = m + 1
    end = start + step * (out[-1] - 1) + 1
    starts, ends, steps = [0] * len(flat_shape), _json_shape(ctx, flat_shape, "a diagonal"), \
        [1] * len(flat_shape)
    starts[-1], ends[-1] = _bound(ctx, start, flat_shape[-1]), _bound(ctx, end, flat_shape[-1])
    steps[-1] = _json_shape(ctx, [step], "a diagonal's step")[0]
    return Value(ctx.g.emit("slice", [flat], ctx.base(), starts=starts, ends=ends, steps=steps),
                 x.dtype, out, view=True)


def _reshaped_back(ctx, parent, value):
    """The tensor a view (aten.view) was taken of, after a write into the whole view: the
    written values in the tensor's own shape and dtype."""
    v = _cast(ctx, value, parent.dtype)
    if v.shape == parent.shape:
        return v
    return ctx.tmp("reshape", [v], v.dtype, parent.shape,
                   shape=_reshape_shape(ctx, parent.shape))


def _layout_only_as_strided(ctx):
    """as_strided (or as_strided_) that changes no value: the same sizes, and strides that are
    the row-major ones but on dims of extent 1, at offset 0. PyTorch 1.13's adaptive average
    pooling to 1 of a channels-last tensor restrides its [N, C, 1, 1] result so (torchvision's
    ConvNeXt and Swin heads); fuserc's tensors are row-major, so it is the tensor itself. Any
    other as_strided reads memory as the graph does not lay it out, and is refused."""
    x = ctx.tensor(0)
    sizes, strides = ctx._raw(1, "size", None), ctx._raw(2, "stride", None)
    offsets = ctx._raw(3, "storage_offset", None)
    for node, size, stride, offset in zip(ctx.nodes, sizes, strides, offsets):
        shape = list(ctx.conv.metas[node.args[0]][0][0])
        size, stride = [int(v) for v in size], [int(v) for v in stride]
        dense, running = [], 1
        for e in reversed(shape):
            dense.append(running)
            running *= e
        dense.reverse()
        if size != shape or offset not in (None, 0) or any(
                e != 1 and st != d for e, st, d in zip(size, stride, dense)):
            raise ctx.unsupported("as_strided other than a change of layout alone")
    return ctx.result(x.name)


def _sliding_windows(ctx, x, d, size, step):
    """Tensor.unfold(d, size, step): the n = (E - size) // step + 1 windows along dim d, each
    of `size` elements, in a new last dim. One index_select at i*step + k ([n, size] flattened),
    a reshape to [.., n, size, ..] and a permute moving the window's dim last."""
    d = d % x.rank if x.rank else 0
    if x.rank == 0:
        ctx.fail("unfold of a 0-d tensor")
    ctx.conv.at_least(x.shape[d], size)  # PyTorch fails where one window does not fit
    ctx.learn((x.shape[d] - size) // step + 1)
    out = ctx.out_shape()
    n, k = out[d], Extent(size)
    wins = _json_shape(ctx, [n], "unfold")[0]
    first = ctx.tmp("iota", [], torch.int64, [n], length=wins, start=0, step=step,
                    dtype=torch.int64)
    first = ctx.tmp("reshape", [first], torch.int64, [n, Extent(1)], shape=[wins, 1])
    offset = ctx.tmp("iota", [], torch.int64, [k], length=size, dtype=torch.int64)
    idx = ctx.tmp("add", [first, offset], torch.int64, [n, k])
    flat = n * size
    idx = ctx.tmp("reshape", [idx], torch.int64, [flat], shape=[-1])
    picked = ctx.tmp("index_select", [x, idx], x.dtype, x.shape[:d] + [flat] + x.shape[d + 1:],
                     dim=d)
    split = x.shape[:d] + [n, k] + x.shape[d + 1:]
    picked = ctx.tmp("reshape", [picked], x.dtype, split, shape=_reshape_shape(ctx, split))
    order = list(range(d + 1)) + list(range(d + 2, x.rank + 1)) + [d + 1]
    if order == list(range(x.rank + 1)):
        return picked
    return ctx.tmp("permute", [picked], x.dtype, [split[p] for p in order], dims=order)


def _slice_of_uninitialized(ctx, src):
    """A full slice (x[:, 0:]) of a torch.empty, which a copy_ writes next (BLOOM's causal
    mask: mask[:, 0:] = lt): that tensor itself, so the write fills it. The tensor and its
    make_fx detaches are one (their root). A partial slice would leave the rest unwritten."""
    n = ctx.node
    start = n.args[2] if len(n.args) > 2 else n.kwargs.get("start")
    end = n.args[3] if len(n.args) > 3 else n.kwargs.get("end")
    step = n.args[4] if len(n.args) > 4 else n.kwargs.get("step", 1)
    if start not in (None, 0) or step != 1 or \
            (end is not None and end < 2**62 and list(ctx.out_shape()) != list(src.shape)):
        ctx.fail("a part of an uninitialized tensor (torch.empty): only a write of the whole "
                 "tensor is expressed")
    base = n.args[0]
    while isinstance(base, torch.fx.Node) and _convert.aten_name(base.target) is not None and \
            _convert.aten_name(base.target)[0] in ("detach", "alias") and base.args:
        base = base.args[0]
    ctx.conv.root[n] = ctx.conv._root(base)
    for k in (n.args[0],):
        ctx.conv.root.setdefault(k, ctx.conv.root[n])
    return Value(ctx.base(), src.dtype, src.shape, uninitialized=True)


def _size_arg(ctx, i, kw, default=None):
    """An int argument that may change with the sizes (a size, or minus one: MPT's
    torch.arange(1 - S, 1)): the number, or a rank-0 i64 Value of the size at run time."""
    raw = ctx._raw(i, kw, default)
    if not all(isinstance(r, int) and not isinstance(r, bool) for r in raw) or \
            all(r == raw[0] for r in raw):
        return ctx.const(i, kw, default)
    if all(r < 0 for r in raw):
        return ctx.conv.size_value(ctx, -ctx.conv.extent(ctx, [-r for r in raw]))
    return ctx.conv.size_value(ctx, ctx.conv.extent(ctx, raw))


def _triangle(ctx, name):
    """triu / tril: x where column - row >= diagonal (triu) or <= diagonal (tril), else 0; the
    row and column numbers are `iota`s over the last two extents."""
    x = ctx.tensor(0)
    diagonal = _size_arg(ctx, 1, "diagonal", 0)  # a size (tril(diagonal=P)): its value
    if x.rank < 2:
        ctx.fail(f"{name} of a tensor of rank {x.rank}")
    if not isinstance(diagonal, (int, Value)) or isinstance(diagonal, bool):
        ctx.fail(f"{name} with a diagonal {diagonal!r} that is not an integer")
    rows, cols = x.shape[-2], x.shape[-1]
    r_len, c_len = _json_shape(ctx, [rows, cols], name)
    row = ctx.tmp("iota", [], torch.int64, [rows], length=r_len, dtype=torch.int64)
    row = ctx.tmp("unsqueeze", [row], torch.int64, [rows, Extent(1)], dim=1)
    col = ctx.tmp("iota", [], torch.int64, [cols], length=c_len, dtype=torch.int64)
    offset = ctx.tmp("sub", [col, row], torch.int64, [rows, cols])
    keep = ctx.tmp("ge" if name == "triu" else "le", [offset, diagonal], torch.bool,
                   [rows, cols])
    zero = False if x.dtype == torch.bool else 0
    return ctx.emit("where", [keep, x, zero])


def _split(ctx, name):
    x = ctx.tensor(0)
    g = ctx.g
    if name == "unbind":
        dim = ctx.const(1, "dim", 0) % x.rank
        n = x.shape[dim].constant
        if n is None:
            ctx.fail(f"unbind along a symbolic dimension ({x.shape[dim].json()}): the number "
                     "of results depends on the size")

        def item(k):
            def make(c):
                kshape = list(x.shape)
                kshape[dim] = Extent(1)
                s = Value(_slice(c, x, dim, Extent(k), Extent(k + 1)), x.dtype, kshape)
                return Value(g.emit("squeeze", [s], c.base(), dims=[dim]), x.dtype,
                             c.out_shape(), view=True)
            return make
        return _convert.Multi([item(k) for k in range(n)])
    dim = ctx.const(2, "dim", 0) % x.rank
    total = x.shape[dim]
    if name == "chunk" and not total.is_constant:
        return _chunk_symbolic(ctx, x, dim, ctx.const(1))
    if name in ("split", "unsafe_split", "split_copy") and not total.is_constant:
        raw = ctx._raw(1, "split_size", None)
        if all(isinstance(r, int) and r > 0 for r in raw) and len(set(raw)) > 1:
            # torch.chunk traces as a split in pieces of ceil(E / chunks), E the extent
            extents = [total.evaluate(sv) for sv in ctx.conv.sizes]
            counts = {-(-e // r) for e, r in zip(extents, raw)}
            count = next(iter(counts))
            if len(counts) == 1 and all(r == -(-e // count) for r, e in zip(raw, extents)):
                return _chunk_symbolic(ctx, x, dim, count)
    if name.startswith("split_with_sizes") and not total.is_constant:
        raw = ctx._raw(1, "split_sizes", None)
        extents = [total.evaluate(sv) for sv in ctx.conv.sizes]
        count = len(raw[0]) if isinstance(raw[0], (list, tuple)) else 0
        if count > 1 and any(r != raw[0] for r in raw) and all(
                isinstance(r, (list, tuple)) and len(r) == count and
                list(r) == [min(-(-e // count), e - k * -(-e // count)) for k in range(count)]
                for r, e in zip(raw, extents)):
            return _chunk_symbolic(ctx, x, dim, count)  # torch.chunk, decomposed (PyTorch 2)
    if name == "chunk":
        chunks = ctx.const(1)
        size = total.constant
        step = -(-size // chunks)
        sizes = [min(step, size - k) for k in range(0, size, step)]
    elif name.startswith("split_with_sizes"):
        sizes = ctx.const(1)
    else:
        split = ctx.const(1)
        if isinstance(split, (list, tuple)):
            sizes = list(split)
        else:
            size = total.constant
            if size is None:
                ctx.fail(f"split along a symbolic dimension ({total.json()}) in pieces of "
                         f"{split}: the number of pieces depends on the size (torch.chunk "
                         "into a fixed number of pieces is expressed)")
            sizes = [min(split, size - k) for k in range(0, size, split)]
    starts = [sum(sizes[:k]) for k in range(len(sizes))]

    def item(k):
        def make(c):
            return Value(_slice(c, x, dim, Extent(starts[k]), Extent(starts[k] + sizes[k])),
                         x.dtype, c.out_shape(), view=True)
        return make
    return _convert.Multi([item(k) for k in range(len(sizes))])


def _chunk_symbolic(ctx, x, dim, chunks):
    """torch.chunk of a symbolic extent E in `chunks` pieces: PyTorch's pieces of c = ceil(E /
    chunks) elements, the last one what is left, as many as there are in every trace.

    Where E is a multiple of `chunks` in every trace (the function traces only at such sizes),
    pieces of E//chunks, [j*(E//chunks), (j+1)*(E//chunks)), so that fuserc sees that the
    pieces have one extent (a * b of two halves); the graph's `requires` records that E is
    such a multiple. Two halves of any E are x[:(E+1)//2] and x[(E+1)//2:], of (E+1)//2 and
    E//2 elements, taken from x padded at the end by (E+1)//2 + E//2 (which is E, but fuserc
    cannot see that), where fuserc can show that both lie inside: sliced from x itself, their
    extents would be min(E, (E+1)//2) and max(E - (E+1)//2, 0) to fuserc, the second of
    which it cannot compile for 64-bit indexing today."""
    total = x.shape[dim]
    values = [total.evaluate(sv) for sv in ctx.conv.sizes]
    counts = {-(-v // -(-v // chunks)) for v in values}  # pieces of ceil(v / chunks)
    if len(counts) != 1:
        ctx.fail(f"chunk of a symbolic dimension ({total.json()}) in {chunks} pieces gives a "
                 "number of pieces that changes with the size")
    count = counts.pop()
    src = x
    if all(v % chunks == 0 for v in values) and count == chunks:
        piece = total // chunks
        if piece * chunks != total:
            ctx.conv.require(ctx, total, chunks, f"dimension {dim} chunked in {chunks} "
                             "pieces of one size")
        bounds = [(piece * j, piece * (j + 1)) for j in range(chunks)]
    elif chunks == 2 and count == 2:
        first, second = ceildiv(total, 2), total // 2
        bounds = [(Extent(0), first), (first, first + second)]
        pads = [[0, 0] for _ in range(x.rank)]
        pads[dim] = [0, (first + second).json()]
        shape = list(x.shape)
        shape[dim] = total + first + second
        src = ctx.tmp("pad", [x], x.dtype, shape, pads=pads)
    else:
        c = ceildiv(total, chunks)
        bounds = [(c * j, c * (j + 1) if j + 1 < count else total) for j in range(count)]
    for lo, hi in bounds:
        ctx.conv.learn(hi - lo)

    def item(k):
        def make(c):
            lo, hi = bounds[k]
            return Value(_slice(c, src, dim, lo, None if hi == src.shape[dim] else hi),
                         x.dtype, c.out_shape(), view=True)
        return make
    return _convert.Multi([item(k) for k in range(count)])


def _random_op(ctx, name, overload):
    g = ctx.g
    if name in ("native_dropout", "dropout"):
        x = ctx.tensor(0)
        p = ctx.const(1)
        train = ctx.const(2, "train", True)
        if not train or p == 0:
            ones = Value(g.emit("full", [], ctx.base(), shape=_json_shape(ctx, x.shape, "dropout"),
                                value=True, dtype=torch.bool), torch.bool, x.shape)
            return _convert.Multi([lambda c: Value(x.name, x.dtype, x.shape), lambda c: ones])
        r = Value(_random(ctx, "rand", x.shape, _F32), _F32, x.shape)
        keep = Value(g.emit("lt", [r, 1.0 - p], ctx.base()), torch.bool, x.shape)
        kept = Value(g.emit("where", [keep, x, 0], ctx.base()), x.dtype, x.shape)
        out = Value(g.emit("mul", [kept, 1.0 / (1.0 - p)], ctx.base()), x.dtype, x.shape)
        if name == "dropout":
            return out
        return _convert.Multi([lambda c: out, lambda c: keep])
    shape, dtype = ctx.out_shape(), ctx.out_dtype()
    if not dtype.is_floating_point and name != "bernoulli":
        raise ctx.unsupported("random integers")
    if name == "bernoulli":
        if overload not in ("p", "float"):
            p = ctx.arg(1, "p", None)
            if p is None:
                p = ctx.tensor(0)
        else:
            p = ctx.const(1, "p", 0.5)
        r = Value(_random(ctx, "rand", shape, _F32), _F32, shape)
        return ctx.emit("cast", [Value(g.emit("lt", [r, p], ctx.base()), torch.bool, shape)],
                        dtype=dtype)
    gen = "randn" if name.startswith("randn") or name == "normal" else "rand"
    rdt = dtype if dtype in (torch.float32, torch.float64) else _F32
    r = Value(_random(ctx, gen, shape, rdt), rdt, shape)
    if name == "uniform":
        lo, hi = ctx.const(1, "from", 0.0), ctx.const(2, "to", 1.0)
        if (lo, hi) != (0.0, 1.0):
            r = Value(g.emit("add", [Value(g.emit("mul", [r, hi - lo], ctx.base()), rdt, shape),
                                     lo], ctx.base()), rdt, shape)
    if name == "normal":
        mean, std = ctx.const(1, "mean", 0.0), ctx.const(2, "std", 1.0)
        if (mean, std) != (0.0, 1.0):
            r = Value(g.emit("add", [Value(g.emit("mul", [r, std], ctx.base()), rdt, shape),
                                     mean], ctx.base()), rdt, shape)
    return _cast(ctx, r, dtype)
