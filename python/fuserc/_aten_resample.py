"""Owns the part of the ATen-to-contract table (see _aten.py) that resamples images: nearest,
nearest-exact and (bi)linear upsampling (upsample_nearest1d/2d/3d, _upsample_nearest_exact*,
upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d) as PyTorch's kernels compute them
(per spatial dim, the source index of each output position, and for linear its neighbour and
weight, in f32 from an `iota`, then `index_select`s, the last dim first), reflection and
replication padding (source indices reflected or clamped, then `index_select`), pixel_shuffle /
pixel_unshuffle as a reshape, a permute and a reshape, and prelu. convert(ctx, name, overload) returns
None for other ops."""
import torch

from ._aten_shape import _cast, _fit_count, _reshape_shape
from ._dtypes import HALF as _HALF
from ._graph import Size, Value
from ._symbolic import Extent

_F32 = torch.float32
_I64 = torch.int64

_NEAREST = {"upsample_nearest1d": 1, "upsample_nearest2d": 2, "upsample_nearest3d": 3,
            "_upsample_nearest_exact1d": 1, "_upsample_nearest_exact2d": 2,
            "_upsample_nearest_exact3d": 3}
_LINEAR = {"upsample_linear1d": 1, "upsample_bilinear2d": 2, "upsample_trilinear3d": 3}


def _f32(v):
    """v rounded to f32, as the kernels hold their scales."""
    return torch.tensor(v, dtype=_F32).item()


def _number(e):
    """An extent as an op argument: an int, or a size literal."""
    return e.constant if e.is_constant else Size(e.text())


def _tmp(ctx, op, args, value_shape, dtype=_F32, **attrs):
    """ctx.tmp with the dtype also the op's own attribute where it has one."""
    if op in ("cast", "full", "iota"):
        attrs["dtype"] = dtype
    return ctx.tmp(op, args, dtype, value_shape, **attrs)


class _Dim:
    """One spatial dim's source positions: `index(...)` makes [O] tensors of the graph."""

    def __init__(self, ctx, size, out, scale, align_corners, acc=_F32):
        self.ctx, self.size, self.out, self.acc = ctx, size, out, acc
        self.scale = self._scale(scale, align_corners)

    def _round(self, v):
        return _f32(v) if self.acc == _F32 else float(v)

    def _scale(self, scale, align_corners):
        """PyTorch's area_pixel_compute_scale: an f32 number or a [] f32 tensor of the graph."""
        i, o = self.size, self.out
        if align_corners:
            if i.is_constant and o.is_constant:
                return self._round((i.constant - 1) / (o.constant - 1)) if o.constant > 1 \
                    else 0.0
            # (I-1)/(O-1); with O = 1 the only position is 0, whatever the scale.
            num = self._size_f32(i - 1)
            den = self._tmp("maximum", [self._size_f32(o - 1), 1.0], [])
            return self._tmp("div", [num, den], [])
        if scale is not None and scale > 0:
            return self._round(1.0 / scale)
        if i.is_constant and o.is_constant:
            return self._round(self._round(i.constant) / self._round(o.constant))
        return self._tmp("div", [self._size_f32(i), self._size_f32(o)], [])

    def _tmp(self, op, args, value_shape, dtype=None, **attrs):
        return _tmp(self.ctx, op, args, value_shape, dtype or self.acc, **attrs)

    def _size_f32(self, e):
        if e.is_constant:
            return float(e.constant)
        return self._tmp("full", [], [], shape=[], value=Size(e.text()))

    def positions(self):
        """The output positions as [O] of the computing dtype."""
        o = self.out
        iota = self._tmp("iota", [], [o], dtype=_I64, length=o.json())
        return self._tmp("cast", [iota], [o])

    def last(self):
        return _number(self.size - 1)

    def nearest(self, exact):
        """min(floor(dst * scale), I-1) (nearest-exact: floor((dst + 0.5) * scale))."""
        o = self.out
        p = self.positions()
        if exact:
            p = self._tmp("add", [p, 0.5], [o])
        src = self._tmp("floor", [self._tmp("mul", [p, self.scale], [o])], [o])
        idx = self._tmp("cast", [src], [o], dtype=_I64)
        return self._tmp("minimum", [idx, self.last()], [o], dtype=_I64)

    def linear(self, align_corners):
        """PyTorch's compute_source_index_and_lambda: (i0, i1, l0, l1), i1 = min(i0 + 1, I-1)."""
        o = self.out
        p = self.positions()
        if align_corners:
            real = self._tmp("mul", [p, self.scale], [o])
        else:
            real = self._tmp("sub", [self._tmp("mul", [self._tmp("add", [p, 0.5], [o]),
                                                      self.scale], [o]), 0.5], [o])
            real = self._tmp("maximum", [real, 0.0], [o])
        i0 = self._tmp("cast", [real], [o], dtype=_I64)  # truncation: real >= 0
        i1 = self._tmp("minimum", [self._tmp("add", [i0, 1], [o], dtype=_I64), self.last()],
                       [o], dtype=_I64)
        i0 = self._tmp("minimum", [i0, self.last()], [o], dtype=_I64)  # as PyTorch's CPU kernel
        frac = self._tmp("sub", [real, self._tmp("cast", [i0], [o])], [o])
        l1 = self._tmp("clamp", [frac, 0.0, 1.0], [o])
        l0 = self._tmp("sub", [1.0, l1], [o])
        return i0, i1, l0, l1


def _scales(ctx, n, overload, first_scale_arg):
    """The scale factors (floats or None per spatial dim) of an upsample op: its `.vec`
    overload's list, or the default overload's scales_* arguments."""
    if overload == "vec":
        s = ctx.const(first_scale_arg, "scale_factors", None)
        if s is None:
            return [None] * n
        s = list(s) if isinstance(s, (list, tuple)) else [s]
        return s * n if len(s) == 1 else s
    names = {1: ["scales"], 2: ["scales_h", "scales_w"], 3: ["scales_d", "scales_h", "scales_w"]}
    return [ctx.const(first_scale_arg + k, names[n][k], None) for k in range(n)]


def _along(ctx, x, d, index, shape):
    """x.index_select(d, index) with x's extent d replaced by the index's."""
    out = list(x.shape)
    out[d] = shape
    return ctx.tmp("index_select", [x, index], x.dtype, out, dim=d)


def _weight(ctx, w, d, rank):
    """A [O] weight shaped to broadcast along dim d of a tensor of `rank` dims."""
    tail = rank - d - 1
    if tail == 0:
        return w
    shape = [w.shape[0]] + [Extent(1)] * tail
    return ctx.tmp("reshape", [w], w.dtype, shape, shape=[w.shape[0].json()] + [1] * tail)


def _upsample(ctx, name, overload):
    x = ctx.tensor(0)
    linear = name in _LINEAR
    n = _LINEAR[name] if linear else _NEAREST[name]
    if x.rank != n + 2:
        ctx.fail(f"{name} of a tensor of rank {x.rank}")
    align = bool(ctx.const(2, "align_corners", False)) if linear else False
    scales = _scales(ctx, n, overload, 3 if linear else 2)
    # The op's own extents first (PyTorch's floor(in * scale)): fitted to the traces alone, an
    # extent 2 * ((H + 1) // 2) traced at odd H only was H + 1. Not where every trace is at a
    # multiple of its divisions (a UNet traced at even sizes alone, as it runs only there):
    # there it is H, which its skip connection's extent must equal.
    for k, s in enumerate(scales):
        e = x.shape[2 + k]
        if s is None or e.is_constant:
            continue
        if float(s).is_integer() and s >= 1:
            cand = e * int(s)
        elif s > 0 and (1 / s).is_integer():
            cand = e // int(1 / s)
        else:
            continue
        dens = cand.denominators()
        if not dens or not all(sv.get(n, 1) % d == 0 for sv in ctx.conv.sizes
                               for n in cand.symbols() for d in dens):
            ctx.learn(cand)
    out_shape = ctx.out_shape()
    if not x.dtype.is_floating_point and linear:
        ctx.fail(f"linear upsampling of a {x.dtype} tensor")
    # Positions and weights in f32 (linear f64 in f64, as PyTorch's opmath); 16-bit floats are
    # interpolated in f32 and rounded once.
    acc = torch.float64 if linear and x.dtype == torch.float64 else _F32  # nearest: floorf
    cur = _cast(ctx, x, _F32) if linear and x.dtype in _HALF else x
    # The last dim first: PyTorch's kernels combine the outer dims' neighbours last.
    for k in reversed(range(n)):
        d = 2 + k
        size, out = x.shape[d], out_shape[d]
        # Linear kernels copy a dim whose size does not change, whatever the scale; nearest
        # ones compute the index from the scale (PyTorch 1.13's CPU kernel for one channel
        # alone takes shortcuts, at out == in and out == 2 * in, that its others do not).
        if size == out and (linear or scales[k] is None or scales[k] == 1.0):
            continue
        dim = _Dim(ctx, size, out, scales[k], align, acc)
        if not linear:
            cur = _along(ctx, cur, d, dim.nearest(name.startswith("_upsample_nearest_exact")), out)
            continue
        i0, i1, l0, l1 = dim.linear(align)
        a, b = _along(ctx, cur, d, i0, out), _along(ctx, cur, d, i1, out)
        wa, wb = _weight(ctx, l0, d, x.rank), _weight(ctx, l1, d, x.rank)
        cur = ctx.tmp("add", [ctx.tmp("mul", [a, wa], a.dtype, a.shape),
                              ctx.tmp("mul", [b, wb], b.dtype, b.shape)], a.dtype, a.shape)
    if cur.dtype != x.dtype:
        return ctx.emit("cast", [cur], dtype=x.dtype)
    if cur is x:
        return Value(x.name, x.dtype, x.shape)
    return ctx.result(cur.name)


def _index_pad(ctx, name):
    """reflection_pad / replication_pad over the last 1-3 dims: per padded dim, the source
    index of each position t - lo (t from an `iota`), reflected (E-1 - |E-1 - |t - lo||, PyTorch
    refuses pads of E or more) or clamped into [0, E), then `index_select`."""
    x = ctx.tensor(0)
    pads = list(ctx.const(1, "padding"))
    n = len(pads) // 2
    if len(pads) % 2 or not 1 <= n <= 3 or x.rank < n:
        ctx.fail(f"{name} with padding {pads} of a tensor of rank {x.rank}")
    reflect = name.startswith("reflection")
    out_shape = ctx.out_shape()
    cur = x
    for k in range(n):
        d = x.rank - 1 - k
        lo, hi = pads[2 * k], pads[2 * k + 1]
        if lo == 0 and hi == 0:
            continue
        if lo < 0 or hi < 0:
            ctx.fail(f"{name} with a negative padding {pads}")
        size, out = x.shape[d], out_shape[d]
        if reflect:
            ctx.conv.at_least(size, max(lo, hi) + 1)
        iota = _tmp(ctx, "iota", [], [out], _I64, length=out.json())
        t = _tmp(ctx, "sub", [iota, lo], [out], _I64)
        last = _number(size - 1)
        if reflect:
            a = _tmp(ctx, "abs", [t], [out], _I64)
            a = _tmp(ctx, "abs", [_tmp(ctx, "sub", [last, a], [out], _I64)], [out], _I64)
            idx = _tmp(ctx, "sub", [last, a], [out], _I64)
        else:
            idx = _tmp(ctx, "clamp", [t, 0, last], [out], _I64)
        cur = _along(ctx, cur, d, idx, out)
    if cur is x:
        return Value(x.name, x.dtype, x.shape)
    return ctx.result(cur.name)


def _pixel_shuffle(ctx, name):
    """pixel_shuffle: [*, C*r*r, H, W] -> [*, C, r, r, H, W] -> [*, C, H, r, W, r] ->
    [*, C, H*r, W*r]; pixel_unshuffle the reverse."""
    x = ctx.tensor(0)
    r = int(ctx.const(1))
    if x.rank < 3:
        ctx.fail(f"{name} of a tensor of rank {x.rank}")
    lead, (c, h, w) = list(x.shape[:-3]), x.shape[-3:]
    b = len(lead)
    if name == "pixel_shuffle":
        split = lead + [c // (r * r), Extent(r), Extent(r), h, w]
        perm = list(range(b)) + [b, b + 3, b + 1, b + 4, b + 2]
    else:
        split = lead + [c, h // r, Extent(r), w // r, Extent(r)]
        perm = list(range(b)) + [b, b + 2, b + 4, b + 1, b + 3]
    src = _fit_count(ctx, x, split)
    grouped = ctx.tmp("reshape", [src], x.dtype, split, shape=_reshape_shape(ctx, split))
    moved = ctx.tmp("permute", [grouped], x.dtype, [split[p] for p in perm], dims=perm)
    out = ctx.out_shape()
    return ctx.emit("reshape", [moved], shape=_reshape_shape(ctx, out))


def _prelu(ctx):
    """prelu: x where x > 0, else weight * x, the weight per channel (dim 1) or one number."""
    x, w = ctx.tensor(0), ctx.tensor(1)
    if w.rank == 0 or (w.rank == x.rank and w.rank != 1):
        pass  # one number, or PyTorch 2's _prelu_kernel: the weight shaped to broadcast
    elif w.rank != 1:
        ctx.fail(f"prelu with a weight of rank {w.rank} for an input of rank {x.rank}")
    elif w.shape[0] == Extent(1) or x.rank < 2:
        w = ctx.tmp("reshape", [w], w.dtype, [], shape=[])
    elif x.rank > 2:
        extra = x.rank - 2
        shape = [w.shape[0]] + [Extent(1)] * extra
        w = ctx.tmp("reshape", [w], w.dtype, shape, shape=[w.shape[0].json()] + [1] * extra)
    scaled = ctx.tmp("mul", [x, w], x.dtype, x.shape)
    positive = ctx.tmp("gt", [x, 0], torch.bool, x.shape)
    return ctx.emit("where", [positive, x, scaled])


def convert(ctx, name, overload):
    if name in _NEAREST or name in _LINEAR:
        return _upsample(ctx, name, overload)
    if name in ("reflection_pad1d", "reflection_pad2d", "reflection_pad3d", "replication_pad1d",
                "replication_pad2d", "replication_pad3d"):
        return _index_pad(ctx, name)
    if name in ("pixel_shuffle", "pixel_unshuffle"):
        return _pixel_shuffle(ctx, name)
    if name in ("prelu", "_prelu_kernel"):
        return _prelu(ctx)
    return None
