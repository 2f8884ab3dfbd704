"""Owns the part of the ATen-to-contract table (see _aten.py) for the layers of convolutional
networks, written with the contract's elementwise ops, slices and reductions: batch norm with
running statistics (native_batch_norm with training=False, _native_batch_norm_legit_no_training)
as (x - mean) * rsqrt(var + eps) * weight + bias, and in training with the batch's statistics
(var_mean), its running statistics written in place (Context.update), max
pooling as a `pad` with -inf and one strided `slice` per kernel position combined by `maximum`
(its indices, where used, by PyTorch's loop over the same positions),
average pooling as the same windows summed and divided by their counts, and adaptive average
(max) pooling as a `mean` (`amax`) over windows of one size, or over PyTorch's windows of
differing lengths as a masked reduction. convert(ctx, name, overload) returns None for other
ops."""
import itertools

import torch

from . import _convert
from ._aten_resample import _number
from ._aten_scan import _position
from ._aten_shape import _broadcast_shape, _cast, _fit_count, _reshape_shape
from ._dtypes import HALF as _HALF
from ._graph import Size, Value
from ._symbolic import Extent, product, provably_nonnegative

_F32 = torch.float32
_F64 = torch.float64


def _per_channel(ctx, v, x, dtype):
    """A [C] statistic or affine parameter shaped [C, 1, ...] to broadcast against x [N, C,
    *spatial] (cast to the dtype of the computation)."""
    v = _cast(ctx, v, dtype)
    c = v.shape[0]
    extra = x.rank - 2
    if extra <= 0:
        return v
    shape = [c] + [Extent(1)] * extra
    return ctx.tmp("reshape", [v], dtype, shape, shape=[c.json()] + [1] * extra)


def _count(ctx, extents):
    """The product of `extents` (the elements a batch norm reduces per channel) and it minus
    one: ints, or size literals (`{"size": "4*N"}`) where a symbol is among them."""
    n = product(extents)
    if n.is_constant:
        return n.constant, n.constant - 1
    return Size(n.text()), Size((n - 1).text())


def _batch_norm(ctx, name, overload):
    """Batch norm: with the running statistics (inference), or with the batch's (training):
    mean and biased variance over every dim but the channels' (dim 1); then, where running
    statistics are given, they are updated in place as PyTorch does: running_mean = (1 -
    momentum) * running_mean + momentum * mean, and running_var likewise with the unbiased
    variance (the biased one times n / (n - 1), n the elements per channel, a size literal
    where the batch is symbolic)."""
    x = ctx.tensor(0)
    w = ctx.arg(1, "weight", None)
    b = ctx.arg(2, "bias", None)
    if name == "_native_batch_norm_legit" and overload == "no_stats":
        mean = var = None
        training, momentum, eps = ctx.const(3, "training"), ctx.const(4, "momentum"), \
            ctx.const(5, "eps")
    else:
        mean = ctx.arg(3, "running_mean", None)
        var = ctx.arg(4, "running_var", None)
        if name == "_native_batch_norm_legit_no_training":
            training, momentum, eps = False, ctx.const(5, "momentum"), ctx.const(6, "eps")
        else:
            training, momentum, eps = ctx.const(5, "training"), ctx.const(6, "momentum"), \
                ctx.const(7, "eps")
    if not training and (not isinstance(mean, Value) or not isinstance(var, Value)):
        ctx.fail("batch norm in inference without running statistics")
    if x.rank < 2 or not x.dtype.is_floating_point:
        ctx.fail(f"batch norm of a {x.dtype} tensor of rank {x.rank}")
    acc = _F32 if x.dtype in _HALF else x.dtype
    xf = _cast(ctx, x, acc)
    c = x.shape[1]
    kshape = [c] + [Extent(1)] * (x.rank - 2)
    if training:
        dims = [0] + list(range(2, x.rank))
        keep = [Extent(1), c] + [Extent(1)] * (x.rank - 2)
        bvar, bmean = ctx.g.emit("var_mean", [xf], ctx.base(), outs=2, dims=dims, correction=0,
                                 keepdim=True)
        bvar, bmean = Value(bvar, acc, keep), Value(bmean, acc, keep)
        rstd = ctx.tmp("rsqrt", [ctx.tmp("add", [bvar, float(eps)], acc, keep)], acc, keep)
        y = ctx.tmp("mul", [ctx.tmp("sub", [xf, bmean], acc, x.shape), rstd], acc, x.shape)

        def per_channel(v):  # [1, C, 1, ...] -> [C]
            return ctx.tmp("reshape", [v], acc, [c], shape=[c.json()])
        if isinstance(mean, Value) or isinstance(var, Value):
            mom = float(momentum)
        if isinstance(mean, Value):
            new = ctx.tmp("add", [ctx.tmp("mul", [_cast(ctx, mean, acc), 1.0 - mom], acc, [c]),
                                  ctx.tmp("mul", [per_channel(bmean), mom], acc, [c])], acc, [c])
            ctx.update(3, "running_mean", _cast(ctx, new, mean.dtype))
        if isinstance(var, Value):
            n, n1 = _count(ctx, [e for k, e in enumerate(x.shape) if k != 1])
            unbiased = ctx.tmp("div", [ctx.tmp("mul", [per_channel(bvar), n], acc, [c]), n1],
                               acc, [c])
            new = ctx.tmp("add", [ctx.tmp("mul", [_cast(ctx, var, acc), 1.0 - mom], acc, [c]),
                                  ctx.tmp("mul", [unbiased, mom], acc, [c])], acc, [c])
            ctx.update(4, "running_var", _cast(ctx, new, var.dtype))
        saved = [per_channel(bmean), per_channel(rstd)]
    else:
        mean = _per_channel(ctx, mean, x, acc)
        var = _per_channel(ctx, var, x, acc)
        rstd = ctx.tmp("rsqrt", [ctx.tmp("add", [var, float(eps)], acc, kshape)], acc, kshape)
        y = ctx.tmp("mul", [ctx.tmp("sub", [xf, mean], acc, x.shape), rstd], acc, x.shape)
        saved = None
    if isinstance(w, Value):
        y = ctx.tmp("mul", [y, _per_channel(ctx, w, x, acc)], acc, x.shape)
    if isinstance(b, Value):
        y = ctx.tmp("add", [y, _per_channel(ctx, b, x, acc)], acc, x.shape)
    out = _cast(ctx, y, x.dtype)

    def item(v):
        return lambda c: c.result(v.name) if v.dtype == c.out_dtype() and \
            [e for e in v.shape] == c.out_shape() else _cast(c, v, c.out_dtype())
    if saved is not None:  # the batch's mean and inverse std, [C] (what a backward reads)
        return _convert.Multi([item(out)] + [item(v) for v in saved])
    # In inference the saved statistics are empty tensors; nothing reads them.
    why = _convert.Unsupported(ctx.conv.describe(
        ctx.node, "cannot express the saved statistics of batch norm in a fuserc graph"))
    return _convert.Multi([item(out), why, why])


def _pool_params(ctx, n, values, what, default):
    v = list(values) if isinstance(values, (list, tuple)) else [values]
    if not v:
        v = list(default)
    if len(v) == 1:
        v = v * n
    if len(v) != n or not all(isinstance(k, int) and not isinstance(k, bool) for k in v):
        ctx.fail(f"a pooling {what} {values!r} for {n} spatial dims")
    return v


def _pooled_size(size, kernel, stride, padding, dilation, ceil_mode):
    """PyTorch's output extent of pooling (pooling_output_shape)."""
    span = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = span // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    return out


def _windows(ctx, x, n, kernel, stride, padding, dilation, ceil_mode, pad_value, what):
    """The kernel's windows over the last `n` dims of x, PyTorch's pooling windows: x padded
    by `padding` (filled with `pad_value`) and one strided `slice` per kernel position, in
    PyTorch's order (the last dim fastest). Returns (slices, out_shape, pads, padded_shape),
    `pads` the padding applied to x ([lo, hi] per dim; hi may crop or reach past it)."""
    spatial = list(range(x.rank - n, x.rank))
    out_shape = list(x.shape)
    padded_shape = list(x.shape)
    pads = [[0, 0] for _ in range(x.rank)]
    for k, d in enumerate(spatial):
        size = x.shape[d]
        if not size.is_constant:
            # Symbolic: PyTorch's (H + 2p - d(k-1) - 1) // s + 1 windows (as for a
            # convolution), inside the input padded by p on both sides. Where fuserc cannot
            # show that the last window ends inside (H a floor division itself, whose
            # division by s fuserc makes one division: ((H+1)//2)//2 is (H+1)//4), the end
            # is padded by s * out more, which it can.
            # With ceil_mode, PyTorch's windows are ceil((H + 2p - d(k-1) - 1) / s) + 1, less
            # one where the last would start past the input and its left padding, which no
            # size does where the kernel spans at least p + s (d(k-1) + 1 >= p + s); the last
            # window then reaches up to s - 1 past the padding, which is padded by s more.
            span = dilation[k] * (kernel[k] - 1) + 1
            if ceil_mode and span < padding[k] + stride[k]:
                ctx.fail(f"{what} with ceil_mode=True over a symbolic spatial extent "
                         f"({size.json()}) with a kernel spanning {span} < padding "
                         f"{padding[k]} + stride {stride[k]}: the count of windows depends on "
                         "the size")
            up = stride[k] - 1 if ceil_mode else 0
            ctx.conv.at_least(size, span - 2 * padding[k] - up)  # one window at least
            out = (size + 2 * padding[k] - span + up) // stride[k] + 1
            ctx.learn(out)
            out_shape[d] = out
            last_end = span + (out - 1) * stride[k]
            reach = stride[k] if ceil_mode else 0
            extra = reach if provably_nonnegative(size + 2 * padding[k] + reach - last_end) \
                else stride[k] * out + reach
            pads[d] = [padding[k], (padding[k] + extra)
                       if isinstance(extra, int) else (extra + padding[k]).json()]
            padded_shape[d] = size + 2 * padding[k] + extra
            continue
        size = size.constant
        out = _pooled_size(size, kernel[k], stride[k], padding[k], dilation[k], ceil_mode)
        if out < 1:
            ctx.fail(f"{what} of an extent {size} to nothing")
        out_shape[d] = Extent(out)
        # Every window lies inside the padded input: the left padding, the input, and on the
        # right the padding (or, with ceil_mode, what the last window needs; negative crops).
        span = (out - 1) * stride[k] + dilation[k] * (kernel[k] - 1) + 1
        pads[d] = [padding[k], span - size - padding[k]]
        padded_shape[d] = Extent(span)
    src = x
    if any(p != [0, 0] for p in pads):
        src = ctx.tmp("pad", [x], x.dtype, padded_shape, pads=pads, value=pad_value)
    slices = _slices(ctx, src, n, kernel, stride, dilation, out_shape)
    return slices, out_shape, pads, padded_shape


def _slices(ctx, src, n, kernel, stride, dilation, out_shape):
    """One strided `slice` of the padded `src` per kernel position (the last dim fastest),
    each of the pooled extents of `out_shape` over src's last `n` dims (src's other dims may
    be 1 where out_shape's are not: a mask that broadcasts)."""
    spatial = list(range(src.rank - n, src.rank))
    shape = list(src.shape)
    for d in spatial:
        shape[d] = out_shape[d]
    slices = []
    for offsets in itertools.product(*[range(k) for k in kernel]):
        starts = [0] * src.rank
        stops = [e.json() for e in src.shape]
        steps = [1] * src.rank
        for k, d in enumerate(spatial):
            starts[d] = offsets[k] * dilation[k]
            stops[d] = (starts[d] + (out_shape[d] - 1) * stride[k] + 1).json()
            steps[d] = stride[k]
        slices.append(ctx.tmp("slice", [src], src.dtype, shape, starts=starts, ends=stops,
                              steps=steps))
    return slices


def _pool_args(ctx, name, prefix, what):
    """x and the spatial dim count of a pooling op named prefix + "1d"/"2d"/"3d"."""
    x = ctx.tensor(0)
    n = int(name[len(prefix)])
    if x.rank not in (n + 1, n + 2):
        ctx.fail(f"{what} over {n} spatial dims of a tensor of rank {x.rank}")
    if not x.dtype.is_floating_point:
        raise ctx.unsupported(f"{what} of an integer tensor")
    return x, n


def _max_pool(ctx, name):
    x, n = _pool_args(ctx, name, "max_pool", "max pooling")
    ceil_mode = ctx.const(5, "ceil_mode", False)
    kernel = _pool_params(ctx, n, ctx.const(1, "kernel_size"), "kernel size", ())
    stride = _pool_params(ctx, n, ctx.const(2, "stride", []), "stride", kernel)
    padding = _pool_params(ctx, n, ctx.const(3, "padding", 0), "padding", (0,) * n)
    dilation = _pool_params(ctx, n, ctx.const(4, "dilation", 1), "dilation", (1,) * n)
    slices, out_shape, _, _ = _windows(ctx, x, n, kernel, stride, padding, dilation, ceil_mode,
                                       float("-inf"), "max pooling")
    best = slices[0]
    for window in slices[1:]:
        best = ctx.tmp("maximum", [best, window], x.dtype, out_shape)
    values = best
    if name.endswith("_with_indices"):
        def indices(c):
            return c.result(_pool_indices(ctx, x, n, kernel, stride, padding, dilation,
                                          slices, out_shape).name)
        return _convert.Multi([lambda c: c.result(values.name), indices])
    return ctx.result(values.name)


def _pool_indices(ctx, x, n, kernel, stride, padding, dilation, slices, out_shape):
    """max_pool*_with_indices' indices, as PyTorch's loop finds them: over the window's
    positions inside the input (the last dim fastest), the first, then each whose value is
    greater than the best so far or NaN; the index is flat over the spatial dims. A position's
    coordinate along a spatial dim is an iota over the pooled extent, times the stride, plus
    its offset in the kernel less the padding."""
    i64 = torch.int64
    spatial = list(range(x.rank - n, x.rank))
    inside, flat = [], []  # per spatial dim, per kernel offset
    for k, d in enumerate(spatial):
        size = x.shape[d]
        limit = size.constant if size.is_constant else ctx.conv.size_value(ctx, size)
        inner = Extent(1)
        for e in spatial[k + 1:]:
            inner = inner * x.shape[e]
        scale = inner.constant if inner.is_constant else ctx.conv.size_value(ctx, inner)
        pos = _position(ctx, out_shape[d], d, x.rank)
        shape = pos.shape
        ok, at = [], []
        for o in range(kernel[k]):
            c = ctx.tmp("mul", [pos, stride[k]], i64, shape)
            c = ctx.tmp("add", [c, o * dilation[k] - padding[k]], i64, shape)
            low = ctx.tmp("ge", [c, 0], torch.bool, shape)
            high = ctx.tmp("lt", [c, limit], torch.bool, shape)
            ok.append(ctx.tmp("logical_and", [low, high], torch.bool, shape))
            at.append(ctx.tmp("mul", [c, scale], i64, shape) if scale != 1 else c)
        inside.append(ok)
        flat.append(at)
    best = idx = found = None
    for t, offsets in enumerate(itertools.product(*[range(k) for k in kernel])):
        here, valid = flat[0][offsets[0]], inside[0][offsets[0]]
        for k in range(1, n):
            shape = _broadcast_shape(ctx, [here.shape, flat[k][offsets[k]].shape])
            here = ctx.tmp("add", [here, flat[k][offsets[k]]], i64, shape)
            valid = ctx.tmp("logical_and", [valid, inside[k][offsets[k]]], torch.bool, shape)
        v = slices[t]
        if best is None:
            best = ctx.tmp("where", [valid, v, float("-inf")], x.dtype, out_shape)
            idx = ctx.tmp("where", [valid, here, 0], i64, out_shape)
            found = valid
            continue
        nan = ctx.tmp("isnan", [v], torch.bool, out_shape)
        greater = ctx.tmp("gt", [v, best], torch.bool, out_shape)
        take = ctx.tmp("logical_and", [valid, ctx.tmp("logical_or", [greater, nan], torch.bool,
                                                      out_shape)], torch.bool, out_shape)
        first = ctx.tmp("logical_and", [valid, ctx.tmp("logical_not", [found], torch.bool,
                                                       found.shape)], torch.bool, out_shape)
        best = ctx.tmp("where", [take, v, best], x.dtype, out_shape)
        idx = ctx.tmp("where", [ctx.tmp("logical_or", [take, first], torch.bool, out_shape),
                                here, idx], i64, out_shape)
        found = ctx.tmp("logical_or", [found, valid], torch.bool, out_shape)
    return idx


def _avg_pool(ctx, name):
    """avg_pool1d/2d/3d as PyTorch computes it: the window's sum (in f32 for 16-bit floats)
    divided by the window's size, which counts the padding (count_include_pad) but not what
    ceil_mode's last window reaches past it, or only the input's elements; or by
    divisor_override. Where that size is not one number it is the same windows summed over a
    mask of ones where an element counts."""
    x, n = _pool_args(ctx, name, "avg_pool", "average pooling")
    kernel = _pool_params(ctx, n, ctx.const(1, "kernel_size"), "kernel size", ())
    stride = _pool_params(ctx, n, ctx.const(2, "stride", []), "stride", kernel)
    padding = _pool_params(ctx, n, ctx.const(3, "padding", 0), "padding", (0,) * n)
    ceil_mode = ctx.const(4, "ceil_mode", False)
    include_pad = ctx.const(5, "count_include_pad", True)
    override = ctx.const(6, "divisor_override", None) if n > 1 else None
    if any(2 * p > k for p, k in zip(padding, kernel)):
        ctx.fail(f"average pooling with padding {padding} over more than half the kernel "
                 f"{kernel}")
    acc = _F32 if x.dtype in _HALF else x.dtype
    xa = _cast(ctx, x, acc)
    ones = [1] * n
    slices, out_shape, pads, padded_shape = _windows(ctx, xa, n, kernel, stride, padding, ones,
                                                     ceil_mode, 0.0, "average pooling")
    total = slices[0]
    for window in slices[1:]:
        total = ctx.tmp("add", [total, window], acc, out_shape)
    spatial = list(range(x.rank - n, x.rank))
    # Where the last window reaches past the padding (ceil_mode), PyTorch does not count it.
    overhang = [padded_shape[d] - x.shape[d] - 2 * padding[k] for k, d in enumerate(spatial)]
    reaches_past = ceil_mode and any(not o.is_constant or o.constant > 0 for o in overhang)
    overhang = [o.constant if o.is_constant else o.json() for o in overhang]
    if override:
        divisor = float(override)
    elif (include_pad or not any(padding)) and not reaches_past:
        divisor = float(product([Extent(k) for k in kernel]).constant)
    else:
        # The divisor per window: the same windows summed over ones where an element counts
        # (the input, and with count_include_pad its padding) and zeros elsewhere.
        mask_rank = [Extent(1)] * (x.rank - n)
        if include_pad:
            region = [x.shape[d] + 2 * padding[k] for k, d in enumerate(spatial)]
            mask_pads = [[0, 0]] * (x.rank - n) + [[0, o] for o in overhang]
        else:
            region = [x.shape[d] for d in spatial]
            mask_pads = [[0, 0]] * (x.rank - n) + [pads[d] for d in spatial]
        shape = mask_rank + region
        mask = ctx.tmp("full", [], acc, shape, shape=[e.json() for e in shape], value=1.0,
                       dtype=acc)
        if any(p != [0, 0] for p in mask_pads):
            mask = ctx.tmp("pad", [mask], acc, mask_rank + [padded_shape[d] for d in spatial],
                           pads=mask_pads, value=0.0)
        counts = _slices(ctx, mask, n, kernel, stride, ones, out_shape)
        divisor = counts[0]
        count_shape = counts[0].shape
        for window in counts[1:]:
            divisor = ctx.tmp("add", [divisor, window], acc, count_shape)
    mean = ctx.tmp("div", [total, divisor], acc, out_shape)
    return ctx.emit("cast", [mean], dtype=x.dtype) if acc != x.dtype else \
        ctx.result(mean.name)


def _adaptive_pool(ctx, name):
    """Adaptive average (max) pooling: to 1 per dim, a mean (amax) over the spatial dims;
    where every output extent divides its input's (at every traced size), x viewed as [...,
    O, E/O] per spatial dim and the mean (amax) over the E/O dims; else PyTorch's windows
    (overlapping, of differing lengths) one dim at a time (_adaptive_windows). Max pooling's
    indices are refused where used."""
    x = ctx.tensor(0)
    size = ctx.const(1, "output_size")
    if "max" in name:  # values and indices: the values sized by the getitem that takes them
        return _convert.Multi([
            lambda c: _adaptive_pool_values(c, x, size, "amax", "max"),
            _convert.Unsupported(ctx.conv.describe(
                ctx.node, "cannot express the indices of adaptive max pooling in a fuserc "
                          "graph"))])
    return _adaptive_pool_values(ctx, x, size, "mean", "average")


def _adaptive_pool_values(ctx, x, size, reduce, kind):
    size = list(size) if isinstance(size, (list, tuple)) else [size]
    n = len(size)
    if not x.dtype.is_floating_point:
        ctx.fail(f"adaptive {kind} pooling of a {x.dtype} tensor")
    spatial = list(range(x.rank - n, x.rank))
    if all(s == 1 for s in size):
        return ctx.result(ctx.tmp(reduce, [x], x.dtype, ctx.out_shape(), dims=spatial,
                                  keepdim=True).name)
    if any(x.shape[d].evaluate(sv) % size[k] for k, d in enumerate(spatial)
           for sv in ctx.conv.sizes):
        for k, d in enumerate(spatial):
            x = _adaptive_windows(ctx, x, d, size[k], reduce)
        return ctx.result(x.name)
    shape, dims = list(x.shape[:x.rank - n]), []
    for k, d in enumerate(spatial):
        e, o = x.shape[d], size[k]
        shape += [Extent(o), ctx.conv.learn(e // o)]
        dims.append(len(shape) - 1)
    src = _fit_count(ctx, x, shape)
    grouped = ctx.tmp("reshape", [src], x.dtype, shape, shape=_reshape_shape(ctx, shape))
    return ctx.result(ctx.tmp(reduce, [grouped], x.dtype, ctx.out_shape(), dims=dims).name)


def _adaptive_windows(ctx, x, d, o, reduce):
    """x adaptively pooled to `o` along dim d (extent E), as PyTorch's kernels window it:
    output i covers [floor(i*E/o), ceil((i+1)*E/o)). Written as a [o, E] window mask beside x
    unsqueezed at d, reduced over the E dim: the mean (the masked sum over the window's
    length, in f32 for half dtypes) or the amax (-inf outside the window). The bounds are
    computed in f64, exact for extents below 2^40. Work is o*E per element of the other dims."""
    e = x.shape[d]
    rank = x.rank + 1
    tail = [Extent(1)] * (x.rank - 1 - d)
    length = _number(e)

    def along(pos_dim, extent):  # an iota over `extent` (f64), placed at dim pos_dim
        pos = _position(ctx, extent, pos_dim, rank)
        return ctx.tmp("cast", [pos], _F64, pos.shape, dtype=_F64)

    out, src = Extent(o), along(d + 1, e)  # h along the new dim d + 1
    i = along(d, out)  # [o, 1, 1...]
    pshape = [out, Extent(1)] + tail
    start = ctx.tmp("floor", [ctx.tmp("div", [ctx.tmp("mul", [i, length], _F64, pshape), o],
                                      _F64, pshape)], _F64, pshape)
    end = ctx.tmp("ceil", [ctx.tmp("div", [ctx.tmp("mul", [ctx.tmp("add", [i, 1], _F64,
                                                                    pshape), length],
                                                    _F64, pshape), o], _F64, pshape)],
                  _F64, pshape)
    mshape = [out, e] + tail
    inside = ctx.tmp("logical_and", [ctx.tmp("ge", [src, start], torch.bool, mshape),
                                     ctx.tmp("lt", [src, end], torch.bool, mshape)],
                     torch.bool, mshape)
    acc = _F32 if x.dtype in _HALF else x.dtype
    xa = _cast(ctx, x, acc)
    wide = x.shape[:d] + [out, e] + x.shape[d + 1:]
    xu = ctx.tmp("unsqueeze", [xa], acc, x.shape[:d] + [Extent(1)] + x.shape[d:], dim=d)
    oshape = x.shape[:d] + [out] + x.shape[d + 1:]
    if reduce == "amax":
        kept = ctx.tmp("where", [inside, xu, float("-inf")], acc, wide)
        r = ctx.tmp("amax", [kept], acc, oshape, dims=[d + 1])
    else:
        kept = ctx.tmp("where", [inside, xu, 0.0], acc, wide)
        total = ctx.tmp("sum", [kept], acc, oshape, dims=[d + 1])
        count = ctx.tmp("cast", [ctx.tmp("sub", [end, start], _F64, pshape)], acc,
                        pshape, dtype=acc)
        count = ctx.tmp("squeeze", [count], acc, [out] + tail, dims=[1])
        r = ctx.tmp("div", [total, count], acc, oshape)
    return _cast(ctx, r, x.dtype)


def convert(ctx, name, overload):
    if name in ("native_batch_norm", "_native_batch_norm_legit_no_training",
                "_native_batch_norm_legit"):
        return _batch_norm(ctx, name, overload)
    if name in ("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
                "max_pool2d_with_indices", "max_pool3d_with_indices"):
        return _max_pool(ctx, name)
    if name in ("avg_pool1d", "avg_pool2d", "avg_pool3d"):
        return _avg_pool(ctx, name)
    if name in ("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
                "_adaptive_avg_pool2d", "_adaptive_avg_pool3d", "adaptive_max_pool1d",
                "adaptive_max_pool2d", "adaptive_max_pool3d"):
        return _adaptive_pool(ctx, name)
    return None
