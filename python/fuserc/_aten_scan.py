"""Owns the ATen ops whose result at a position depends on its neighbours' positions, written with
the contract's reductions over an `iota` mask: cumulative sums and products (cumsum, cumprod),
index-valued reductions (argmax, argmin, the indices of max.dim / min.dim), and integer division
with a rounding mode (floor_divide, div(rounding_mode=...) of integers). convert(ctx, name,
overload) returns None for other ops."""
import torch

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
    n = x.shape[d]
    # keep[i, j] = j <= i over [n, n] (then the ones of the dims after d).
    rank = x.rank + 1
    row = _position(ctx, n, d, rank)  # i along dim d
    col = _position(ctx, n, d + 1, rank)  # j along dim d + 1
    kshape = [n, n] + [Extent(1)] * (x.rank - 1 - d)
    keep = ctx.tmp("le", [col, row], torch.bool, kshape)
    # x[.., 1, n(j), rest] beside keep[n(i), n(j), 1..]
    xu_shape = x.shape[:d] + [Extent(1)] + x.shape[d:]
    xu = ctx.tmp("unsqueeze", [xc], dtype, xu_shape, dim=d)
    wide = x.shape[:d] + [n, n] + x.shape[d + 1:]
    identity = 0 if name == "cumsum" else 1
    if dtype == torch.bool:
        identity = bool(identity)
    kept = ctx.tmp("where", [keep, xu, identity], dtype, wide)
    return ctx.emit("sum" if name == "cumsum" else "prod", [kept], dims=[d + 1])


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
        d, keepdim = 0, False
    else:
        d = dim % x.rank
    if x.dtype == torch.bool:
        x = _cast(ctx, x, torch.int32)
    kshape = list(x.shape)
    kshape[d] = Extent(1)
    extreme = ctx.tmp("amax" if largest else "amin", [x], x.dtype, kshape, dims=[d],
                      keepdim=True)
    hit = ctx.tmp("eq", [x, extreme], torch.bool, x.shape)
    if x.dtype.is_floating_point:
        nan = ctx.tmp("isnan", [x], torch.bool, x.shape)
        hit = ctx.tmp("logical_or", [hit, nan], torch.bool, x.shape)
    pos = _position(ctx, x.shape[d], d, x.rank)
    cand = ctx.tmp("where", [hit, pos, _NO_INDEX], _I64, x.shape)
    rshape = kshape if keepdim else x.shape[:d] + x.shape[d + 1:]
    idx = ctx.tmp("amin", [cand], _I64, rshape, dims=[d], keepdim=bool(keepdim) or None)
    if [e for e in rshape] != [e for e in out_shape]:
        idx = ctx.tmp("reshape", [idx], _I64, out_shape,
                      shape=_json_shape(ctx, out_shape, "an argmax result"))
    return Value(idx.name, idx.dtype, idx.shape)


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
    if name in ("argmax", "argmin"):
        x = ctx.tensor(0)
        return arg_reduction(ctx, x, ctx.const(1, "dim", None), ctx.const(2, "keepdim", False),
                             name == "argmax")
    if name == "floor_divide":
        return rounded_division(ctx, ctx.arg(0), ctx.arg(1), "floor")
    return None
