"""Owns the ATen ops that write values at positions an index tensor gives (scatter, scatter_add,
index_add, index_fill, index_copy, index_put with integer index tensors), written without a
scatter op: for every position p of the written dim, the index entries that name p are found by
comparing the index with an `iota` over a new dim, and the value written is gathered from the last
such entry (PyTorch leaves the winner among duplicates unspecified) or, for the accumulating
forms, the sum over all of them. The work is the index's extent times the written extent per
row: right for the vocabularies and sequences of sampling warpers and masks, slow for a scatter
of a million entries into a million positions. convert(ctx, name, overload) returns None for
other ops."""
import torch

from ._aten_shape import (_broadcast_shape, _cast, _full, _json_shape, _reshape_shape, _row,
                          _wrap_negative)
from ._aten_scan import _position
from ._graph import Value
from ._symbolic import Extent, product

_I64 = torch.int64


def _hits(ctx, index, d, n):
    """hit[..., k, p, ...] = index[..., k, ...] == p for p over [0, n) at a new dim d + 1."""
    shape = index.shape[:d + 1] + [Extent(1)] + index.shape[d + 1:]
    idx = ctx.tmp("unsqueeze", [_cast(ctx, index, _I64)], _I64, shape, dim=d + 1)
    pos = _position(ctx, n, d + 1, index.rank + 1)
    wide = index.shape[:d + 1] + [n] + index.shape[d + 1:]
    return ctx.tmp("eq", [idx, pos], torch.bool, wide), wide


def _last_writer(ctx, index, d, n):
    """For each position p of extent n along dim d: the last k with index[..., k, ...] == p, or
    -1 where none is (index's shape with extent n at d)."""
    hit, wide = _hits(ctx, index, d, n)
    k = _position(ctx, index.shape[d], d, index.rank + 1)
    who = ctx.tmp("where", [hit, k, -1], _I64, wide)
    shape = index.shape[:d] + [n] + index.shape[d + 1:]
    return ctx.tmp("amax", [who], _I64, shape, dims=[d])


def _write(ctx, x, d, index, src, reduce):
    """x with src[..., k, ...] written (reduce None) or added ("add") at index[..., k, ...]
    along dim d; index and src (a Value of index's shape, or a number) share x's extents but
    along d."""
    n = x.shape[d]
    for k, (a, b) in enumerate(zip(index.shape, x.shape)):
        if k != d and a != b:
            ctx.fail(f"an index of shape {index.shape} into a tensor of shape {x.shape}: "
                     "fuserc writes with an index of the tensor's extents but along the dim")
    if isinstance(src, Value) and src.shape != index.shape:
        ctx.fail(f"values of shape {src.shape} for an index of shape {index.shape}")
    if reduce == "add":
        hit, wide = _hits(ctx, index, d, n)
        s = src
        if isinstance(src, Value):
            shape = src.shape[:d + 1] + [Extent(1)] + src.shape[d + 1:]
            s = ctx.tmp("unsqueeze", [_cast(ctx, src, x.dtype)], x.dtype, shape, dim=d + 1)
        acc = ctx.tmp("where", [hit, s, 0], x.dtype, wide)
        total = ctx.tmp("sum", [acc], x.dtype if x.dtype.is_floating_point else _I64,
                        x.shape, dims=[d])
        return _cast(ctx, ctx.tmp("add", [x, total], total.dtype, x.shape), x.dtype)
    who = _last_writer(ctx, index, d, n)
    written = ctx.tmp("ge", [who, 0], torch.bool, x.shape)
    if isinstance(src, Value):
        safe = ctx.tmp("maximum", [who, 0], _I64, x.shape)
        src = ctx.tmp("gather", [_cast(ctx, src, x.dtype), safe], x.dtype, x.shape, dim=d)
    return ctx.tmp("where", [written, src, x], x.dtype, x.shape)


def _scatter(ctx, name, overload):
    x, d = ctx.tensor(0), ctx.const(1, "dim")
    d %= max(x.rank, 1)
    index = ctx.tensor(2, "index")
    src = ctx.arg(3, "src" if "src" in overload or overload == "default" else "value")
    reduce = "add" if name == "scatter_add" else ctx.const(4, "reduce", None)
    if reduce not in (None, "add"):
        raise ctx.unsupported(f"reduce={reduce!r}")
    return _write(ctx, x, d, index, src, reduce)


def _index_along(ctx, name):
    """index_add / index_copy / index_fill: a 1-D index into dim d, the source's slices (or
    one number) written there."""
    x, d = ctx.tensor(0), ctx.const(1, "dim")
    if x.rank == 0:  # a 0-dim tensor, written as one element
        r = _index_along_rows(ctx, name, _row(ctx, x), 0)
        return ctx.tmp("reshape", [r], r.dtype, [], shape=[])
    return _index_along_rows(ctx, name, x, d % x.rank)


def _index_along_rows(ctx, name, x, d):
    index = _cast(ctx, _wrap_negative(ctx, _row(ctx, ctx.tensor(2, "index")), x.shape[d]), _I64)
    src = ctx.arg(3, "source" if name != "index_fill" else "value")
    if name == "index_add":
        alpha = ctx.const(4, "alpha", 1)
        if alpha != 1:
            src = ctx.tmp("mul", [src, alpha], src.dtype, src.shape)
    k = index.shape[0]
    shape = [k if j == d else e for j, e in enumerate(x.shape)]
    after = x.rank - d - 1
    full = ctx.tmp("reshape", [index], _I64, [Extent(1)] * d + [k] + [Extent(1)] * after,
                   shape=[1] * d + _json_shape(ctx, [k], "an index") + [1] * after)
    full = ctx.tmp("expand", [full], _I64, shape, shape=_json_shape(ctx, shape, "an index"))
    if name == "index_fill" and isinstance(src, Value) and src.rank:
        ctx.fail("index_fill with a value that is not one number")
    if isinstance(src, Value) and src.rank and src.rank != x.rank:  # a 0-dim x's source
        src = ctx.tmp("reshape", [src], src.dtype, shape, shape=_json_shape(ctx, shape, "a source"))
    if isinstance(src, Value) and src.rank == 0:
        src = ctx.tmp("expand", [src], src.dtype, shape, shape=_json_shape(ctx, shape, "a value"))
    return _write(ctx, x, d, full, src, "add" if name == "index_add" else None)


def index_put(ctx, x, indices, given, value, accumulate):
    """x[i0, i1, ...] = value (+= with accumulate) for integer index tensors on consecutive
    dims: the indexed dims merged into one, written at i0 * E1 + i1, as a scatter along it."""
    if given != list(range(given[0], given[0] + len(given))):
        raise ctx.unsupported("an assignment through index tensors separated by a slice")
    d, n = given[0], len(given)
    lin = None
    for dim in given:
        i = _cast(ctx, _wrap_negative(ctx, indices[dim], x.shape[dim]), _I64)
        if lin is None:
            lin = i
            continue
        e = x.shape[dim]
        size = e.constant if e.is_constant else ctx.conv.size_value(ctx, e)
        scaled = ctx.tmp("mul", [lin, size], _I64, lin.shape)
        lin = ctx.tmp("add", [scaled, i], _I64, _broadcast_shape(ctx, [lin.shape, i.shape]))
    kshape = _broadcast_shape(ctx, [indices[k].shape for k in given])
    if lin.shape != kshape:
        lin = ctx.tmp("expand", [lin], _I64, kshape, shape=_json_shape(ctx, kshape, "an index"))
    k = product(kshape)
    flat_lin = ctx.tmp("reshape", [lin], _I64, [k], shape=_reshape_shape(ctx, [k]))
    merged = product(x.shape[d:d + n])
    pre, post = x.shape[:d], x.shape[d + n:]
    xf_shape = pre + [merged] + post
    xf = ctx.tmp("reshape", [x], x.dtype, xf_shape, shape=_reshape_shape(ctx, xf_shape))
    # The index and the values over [pre, k, post].
    vshape = pre + [k] + post
    idx = ctx.tmp("reshape", [flat_lin], _I64, [Extent(1)] * d + [k] + [Extent(1)] * len(post),
                  shape=[1] * d + _reshape_shape(ctx, [k]) + [1] * len(post))
    idx = ctx.tmp("expand", [idx], _I64, vshape, shape=_json_shape(ctx, vshape, "an index"))
    if isinstance(value, Value):
        target = pre + list(kshape) + post
        if value.shape != target:
            value = ctx.tmp("broadcast_in_dim", [value], value.dtype, target,
                            shape=_json_shape(ctx, target, "values"),
                            broadcast_dims=list(range(len(target) - value.rank, len(target))))
        value = ctx.tmp("reshape", [value], value.dtype, vshape,
                        shape=_reshape_shape(ctx, vshape))
    else:
        value = Value(_full(ctx, vshape, value, x.dtype), x.dtype, vshape)
    out = _write(ctx, xf, d, idx, value, "add" if accumulate else None)
    return ctx.tmp("reshape", [out], x.dtype, x.shape, shape=_reshape_shape(ctx, x.shape))


def convert(ctx, name, overload):
    if name in ("scatter", "scatter_add"):
        return _scatter(ctx, name, overload)
    if name in ("index_add", "index_copy", "index_fill"):
        return _index_along(ctx, name)
    return None
