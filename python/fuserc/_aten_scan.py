"""Owns the ATen ops whose result at a position depends on its neighbours' positions, written with
the contract's reductions over an `iota` mask: cumulative sums, products and extremes (cumsum,
cumprod, cummax, cummin, logcumsumexp), index-valued reductions (argmax, argmin, the indices of
max.dim / min.dim), topk and sort of few elements, and integer division with a rounding mode
(floor_divide, div(rounding_mode=...) of integers). convert(ctx, name, overload) returns None
for other ops."""
import torch

from . import _convert
from ._graph import Value
from ._symbolic import Extent, product
from ._aten_shape import _cast, _json_shape

_I64 = torch.int64
_F64 = torch.float64
# Larger than any index: the candidates that are not the extreme (amin picks the first one that
# is).
_NO_INDEX = 2 ** 62


def _position(ctx, extent, dim, rank):
    """iota over `extent` (i64) shaped to broadcast along dim `dim` of a rank-`rank` tensor:
    [n] followed by rank - 1 - dim ones."""
    length = _json_shape(ctx, [extent], "an iota")[0]
    pos = ctx.tmp("iota", [], _I64, [extent], length=length, dtype=_I64)
    trailing = rank - 1 - dim
    if trailing:
        pos = ctx.tmp("reshape", [pos], _I64, [extent] + [Extent(1)] * trailing,
                      shape=[length] + [1] * trailing)
    return pos


def _prefix(ctx, x, d):
    """What a scan along dim d of x [.., n, rest] reduces over a new dim j: keep[i, j] = j <= i
    ([n, n] and the ones of the dims after d), x as [.., 1, n(j), rest] beside it, the shape
    they broadcast to [.., n, n, rest], and j (an iota at dim d + 1)."""
    n = x.shape[d]
    rank = x.rank + 1
    row = _position(ctx, n, d, rank)  # i along dim d
    col = _position(ctx, n, d + 1, rank)  # j along dim d + 1
    kshape = [n, n] + [Extent(1)] * (x.rank - 1 - d)
    keep = ctx.tmp("le", [col, row], torch.bool, kshape)
    xu = ctx.tmp("unsqueeze", [x], x.dtype, x.shape[:d] + [Extent(1)] + x.shape[d:], dim=d)
    return keep, xu, x.shape[:d] + [n, n] + x.shape[d + 1:], col


def cumulative(ctx, name):
    """cumsum / cumprod along dim d of x [.., n, rest]: y[.., i, rest] is the sum (product) of
    x[.., j, rest] over j <= i, a reduction over a new dim j of where(j <= i, x, identity) of
    shape [.., n, n, rest]. The work is quadratic in n (each of n results reads up to n
    values) and needs no memory beyond x: fine for positions over a sequence, slow for a scan
    over a million elements."""
    x = ctx.tensor(0)
    dtype = ctx.out_dtype()
    if x.rank == 0:
        return _cast(ctx, x, dtype) if x.dtype != dtype else ctx.result(x.name)
    d = ctx.const(1, "dim") % x.rank
    xc = _cast(ctx, x, dtype)
    keep, xu, wide, _ = _prefix(ctx, xc, d)
    identity = 0 if name == "cumsum" else 1
    if dtype == torch.bool:
        identity = bool(identity)
    kept = ctx.tmp("where", [keep, xu, identity], dtype, wide)
    return ctx.emit("sum" if name == "cumsum" else "prod", [kept], dims=[d + 1])


def _first_extreme(ctx, x, d, largest, taken=None, nan_first=True):
    """The least position along dim d of x whose value is the largest (smallest) of those not
    `taken` (a bool mask of x's shape, or None), as an i64 with extent 1 at d. `nan_first`: a
    NaN is the extreme (PyTorch's argmax, argmin, max, min); else NaN counts as +inf (sort
    and topk order NaN above every number)."""
    kshape = list(x.shape)
    kshape[d] = Extent(1)
    floating = x.dtype.is_floating_point
    cand = x
    if taken is not None:
        if floating:
            fill = float("-inf") if largest else float("inf")
        else:
            info = torch.iinfo(x.dtype)
            fill = info.min if largest else info.max
        cand = ctx.tmp("where", [taken, fill, x], x.dtype, x.shape)
    if floating and not nan_first:
        nan = ctx.tmp("isnan", [cand], torch.bool, x.shape)
        cand = ctx.tmp("where", [nan, float("inf"), cand], x.dtype, x.shape)
    extreme = ctx.tmp("amax" if largest else "amin", [cand], x.dtype, kshape, dims=[d],
                      keepdim=True)
    hit = ctx.tmp("eq", [cand, extreme], torch.bool, x.shape)
    if floating and nan_first:
        nan = ctx.tmp("isnan", [cand], torch.bool, x.shape)
        hit = ctx.tmp("logical_or", [hit, nan], torch.bool, x.shape)
    if taken is not None:
        free = ctx.tmp("logical_not", [taken], torch.bool, x.shape)
        hit = ctx.tmp("logical_and", [hit, free], torch.bool, x.shape)
    pos = _position(ctx, x.shape[d], d, x.rank)
    cand_pos = ctx.tmp("where", [hit, pos, _NO_INDEX], _I64, x.shape)
    return ctx.tmp("amin", [cand_pos], _I64, kshape, dims=[d], keepdim=True)


def running_extreme(ctx, name):
    """cummax / cummin (values and indices) and logcumsumexp along dim d, as cumsum is
    written: over a new dim j of where(j <= i, x, identity). The index is the last position
    that holds the running extreme (PyTorch's, which moves on ties), or the first NaN."""
    x = ctx.tensor(0)
    d = ctx.const(1, "dim") % max(x.rank, 1)
    if x.rank == 0:
        x = ctx.tmp("reshape", [x], x.dtype, [Extent(1)], shape=[1])
    n = x.shape[d]
    keep, xu, wide, col = _prefix(ctx, x, d)
    mshape = x.shape[:d] + [n, Extent(1)] + x.shape[d + 1:]
    floating = x.dtype.is_floating_point
    if name == "logcumsumexp":
        if not floating:
            ctx.fail("logcumsumexp of a tensor that is not floating")
        kept = ctx.tmp("where", [keep, xu, float("-inf")], x.dtype, wide)
        m = ctx.tmp("amax", [kept], x.dtype, mshape, dims=[d + 1], keepdim=True)
        finite = ctx.tmp("isfinite", [m], torch.bool, mshape)
        m = ctx.tmp("where", [finite, m, 0.0], x.dtype, mshape)
        e = ctx.tmp("exp", [ctx.tmp("sub", [kept, m], x.dtype, wide)], x.dtype, wide)
        s = ctx.tmp("sum", [e], x.dtype, mshape, dims=[d + 1], keepdim=True)
        r = ctx.tmp("add", [ctx.tmp("log", [s], x.dtype, mshape), m], x.dtype, mshape)
        out = ctx.out_shape()
        if not out:  # a 0-d tensor, scanned as [1]
            return ctx.emit("reshape", [r], shape=[])
        return ctx.emit("squeeze", [r], dims=[d + 1])
    largest = name == "cummax"
    if floating:
        fill = float("-inf") if largest else float("inf")
    elif x.dtype == torch.bool:
        fill = not largest
    else:
        info = torch.iinfo(x.dtype)
        fill = info.min if largest else info.max
    kept = ctx.tmp("where", [keep, xu, fill], x.dtype, wide)
    m = ctx.tmp("amax" if largest else "amin", [kept], x.dtype, mshape, dims=[d + 1],
                keepdim=True)
    hit = ctx.tmp("logical_and", [keep, ctx.tmp("eq", [kept, m], torch.bool, wide)],
                  torch.bool, wide)
    if floating:
        nan = ctx.tmp("logical_and", [keep, ctx.tmp("isnan", [kept], torch.bool, wide)],
                      torch.bool, wide)
        has_nan = ctx.tmp("isnan", [m], torch.bool, mshape)
        hit = ctx.tmp("where", [has_nan, nan, hit], torch.bool, wide)
    last = ctx.tmp("where", [hit, col, -1], _I64, wide)
    pick = "amin" if floating else "amax"
    if floating:  # the first NaN where there is one, else the last extreme
        first_nan = ctx.tmp("where", [hit, col, _NO_INDEX], _I64, wide)
        lo = ctx.tmp("amin", [first_nan], _I64, mshape, dims=[d + 1], keepdim=True)
        hi = ctx.tmp("amax", [last], _I64, mshape, dims=[d + 1], keepdim=True)
        idx = ctx.tmp("where", [has_nan, lo, hi], _I64, mshape)
    else:
        idx = ctx.tmp(pick, [last], _I64, mshape, dims=[d + 1], keepdim=True)
    vals = ctx.tmp("squeeze", [m], x.dtype, x.shape, dims=[d + 1])
    idx = ctx.tmp("squeeze", [idx], _I64, x.shape, dims=[d + 1])

    def item(v):
        def make(c):
            shape = c.out_shape()
            if [e for e in v.shape] != [e for e in shape]:  # rank 0
                return c.tmp("reshape", [v], v.dtype, shape, shape=[])
            return v
        return make
    return _convert.Multi([item(vals), item(idx)])


def arg_reduction(ctx, x, dim, keepdim, largest):
    """argmax (largest) / argmin of x along `dim` (None: over all elements, as one flat dim):
    the least position whose value equals the extreme, or is NaN (PyTorch takes a NaN as
    the extreme, and the first one where there are several), as an i64 of this node's
    shape."""
    out_shape = ctx.out_shape()
    if dim is None or x.rank == 0:
        numel = product(x.shape)
        if x.rank != 1:
            x = ctx.tmp("reshape", [x], x.dtype, [numel],
                        shape=_json_shape(ctx, [numel], "a flattened tensor"))
        d = 0
    else:
        d = dim % x.rank
    if x.dtype == torch.bool:
        x = _cast(ctx, x, torch.int32)
    idx = _first_extreme(ctx, x, d, largest)
    if [e for e in idx.shape] != [e for e in out_shape]:
        idx = ctx.tmp("reshape", [idx], _I64, out_shape,
                      shape=_json_shape(ctx, out_shape, "an argmax result"))
    return Value(idx.name, idx.dtype, idx.shape)


_MAX_RANKED = 64


def ranked(ctx, x, k, d, largest):
    """topk / sort: the k largest (smallest) values along dim d and their positions, in order,
    as k rounds of the first extreme among the positions not taken yet (ties in position
    order, as a stable sort). Work grows with k: refused above 64."""
    if not isinstance(k, int) or k > _MAX_RANKED:
        ctx.fail(f"{k} elements ranked: fuserc writes topk and sort as one reduction per "
                 f"element taken, at most {_MAX_RANKED}")
    n = x.shape[d]
    if k < 1 or (n.is_constant and k > n.constant):
        ctx.fail(f"the {k} largest or smallest of {n.json()} elements")
    ctx.conv.at_least(n, k)  # PyTorch fails where fewer than k are there
    if x.dtype == torch.bool:
        ctx.fail(f"{ctx.name} of a bool tensor")
    kshape = list(x.shape)
    kshape[d] = Extent(1)
    pos = _position(ctx, x.shape[d], d, x.rank)
    taken, vals, idxs = None, [], []
    for r in range(k):
        idx = _first_extreme(ctx, x, d, largest, taken, nan_first=largest)
        idxs.append(idx)
        vals.append(ctx.tmp("gather", [x, idx], x.dtype, kshape, dim=d))
        if r + 1 < k:
            now = ctx.tmp("eq", [pos, idx], torch.bool, x.shape)
            taken = now if taken is None else ctx.tmp("logical_or", [taken, now], torch.bool,
                                                      x.shape)
    oshape = list(x.shape)
    oshape[d] = Extent(k)
    if k == 1:
        return vals[0], idxs[0]
    return (ctx.tmp("cat", vals, x.dtype, oshape, dim=d),
            ctx.tmp("cat", idxs, _I64, oshape, dim=d))


def _ranked_op(ctx, name):
    x = ctx.tensor(0)
    if x.rank == 0:
        x = ctx.tmp("reshape", [x], x.dtype, [Extent(1)], shape=[1])
    if name == "topk":
        k = ctx.const(1, "k")
        d = ctx.const(2, "dim", -1) % x.rank
        largest = ctx.const(3, "largest", True)
    else:
        d = ctx.const(1, "dim", -1) % x.rank
        largest = ctx.const(2, "descending", False)
        k = x.shape[d].constant
        if k is None:
            ctx.fail(f"sort along a symbolic dim ({x.shape[d].json()}): fuserc sorts at most "
                     f"{_MAX_RANKED} elements, a number known when exporting")
    vals, idxs = ranked(ctx, x, k, d, largest)

    def item(v, dtype):
        def make(c):
            shape = c.out_shape()
            if [e for e in v.shape] != [e for e in shape]:  # rank 0
                return c.tmp("reshape", [v], dtype, shape, shape=[])
            return Value(v.name, dtype, v.shape)
        return make
    return _convert.Multi([item(vals, x.dtype), item(idxs, _I64)])


def rounded_division(ctx, a, b, mode):
    """a / b rounded toward zero ("trunc") or down ("floor") in PyTorch's result dtype: for
    floating dtypes the rounding of the true quotient; for integers the quotient of the
    operands in f64, exact while |a| < 2**52 (fuserc's contract has no integer division)."""
    dtype = ctx.out_dtype()
    shape = ctx.out_shape()
    if dtype.is_floating_point:
        q = ctx.tmp("div", [a, b], dtype, shape)
        return ctx.emit("trunc" if mode == "trunc" else "floor", [q])
    if dtype == torch.bool:
        raise ctx.unsupported("a rounded division of booleans")
    af = _cast(ctx, a, _F64) if isinstance(a, Value) else float(a)
    bf = _cast(ctx, b, _F64) if isinstance(b, Value) else float(b)
    q = ctx.tmp("div", [af, bf], _F64, shape)
    r = ctx.tmp("trunc" if mode == "trunc" else "floor", [q], _F64, shape)
    return ctx.emit("cast", [r], dtype=dtype)


def convert(ctx, name, overload):
    if name in ("cumsum", "cumprod"):
        return cumulative(ctx, name)
    if name in ("cummax", "cummin", "logcumsumexp"):
        return running_extreme(ctx, name)
    if name in ("argmax", "argmin"):
        x = ctx.tensor(0)
        return arg_reduction(ctx, x, ctx.const(1, "dim", None), ctx.const(2, "keepdim", False),
                             name == "argmax")
    if name == "topk" or (name == "sort" and overload in ("default", "stable")):
        return _ranked_op(ctx, name)
    if name == "floor_divide":
        return rounded_division(ctx, ctx.arg(0), ctx.arg(1), "floor")
    return None
