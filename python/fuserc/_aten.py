"""Owns the table from ATen ops to the contract's ops (docs/FUSION_FORMAT.md): elementwise ops,
reductions, normalizations (softmax, layer norm) written with the contract's reductions, and
in-place variants; views, shape ops, creation and random ops are in _aten_shape.py, products,
convolution and nll_loss in _aten_products.py, batch norm and pooling in _aten_nn.py, scans, arg
reductions, topk and sort in _aten_scan.py, scatters and index assignments in _aten_scatter.py.
convert(ctx) returns the Value of one traced node (or a Multi / list for ops with several
results)."""
import operator

import torch

from . import (_aten_attention, _aten_nn, _aten_norm, _aten_products, _aten_resample,
               _aten_scan, _aten_scatter, _aten_shape, _convert)
from ._dtypes import HALF as _HALF
from ._aten_shape import _cast
from ._graph import Value, result_type
from ._symbolic import Extent

_UNARY = ("abs neg exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan sinh cosh "
          "tanh asinh acosh atanh sigmoid relu silu sqrt rsqrt reciprocal erf erfc erfinv lgamma "
          "floor ceil trunc frac sign isnan isinf isfinite signbit logical_not "
          "bitwise_not").split()
_UNARY_ALIASES = {"sgn": "sign", "fix": "trunc", "absolute": "abs", "negative": "neg",
                  "arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
                  "arccosh": "acosh", "arctanh": "atanh", "special_expit": "sigmoid",
                  "special_erfinv": "erfinv", "special_expm1": "expm1", "special_exp2": "exp2"}
_BINARY = ("add sub mul div pow fmod remainder maximum minimum atan2 eq ne lt le gt ge "
           "logical_and logical_or bitwise_and bitwise_or bitwise_xor").split()
_BINARY_ALIASES = {"true_divide": "div", "multiply": "mul", "subtract": "sub",
                   "divide": "div", "greater": "gt", "greater_equal": "ge", "less": "lt",
                   "less_equal": "le", "not_equal": "ne", "equal": "eq"}
_IDENTITY = {"clone", "alias", "detach", "lift_fresh_copy", "contiguous", "_to_copy", "to",
             "type_as", "_to_dim_order_copy", "alias_copy", "detach_copy", "positive",
             "lift_fresh", "dropout_eval"}
_VIEWS = {"alias", "detach", "view", "_unsafe_view", "reshape", "expand", "permute",
          "transpose", "t", "unsqueeze", "squeeze", "slice", "select", "narrow", "split",
          "split_with_sizes", "chunk", "unbind", "as_strided", "diagonal", "view_as",
          "expand_as", "alias_copy"}
# Ops whose results are bool (the in-place forms write them into the tensor's own dtype).
_BOOL_RESULTS = {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
                 "logical_not", "isnan", "isinf", "isfinite", "signbit"}
# Views whose in-place forms (squeeze_, t_) change the shape of the tensor they are called on.
_SHAPE_VIEWS = {"squeeze", "unsqueeze", "t", "transpose", "swapdims", "swapaxes", "as_strided"}
# Products the table does not express yet (the rest are in _aten_products.py).
_UNSUPPORTED_PRODUCTS = {"einsum", "slow_conv_transpose2d",
                         "slow_conv3d", "_nnpack_spatial_convolution", "cudnn_convolution",
                         "mkldnn_convolution", "tensordot", "kron", "chain_matmul",
                         "linalg_multi_dot", "outer", "ger", "addr", "nll_loss_nd",
                         "nll_loss2d"}
_F32 = torch.float32


def _fix_dtype(ctx, name, dtype):
    """This node's result from `name` of contract dtype `dtype`: cast if PyTorch's differs."""
    v = ctx.result(name)
    if dtype is not None and dtype != v.dtype:
        v = Value(ctx.g.emit("cast", [Value(name, dtype, v.shape)], ctx.base(),
                             dtype=v.dtype), v.dtype, v.shape)
    return v


def _elementwise(ctx, op, args, **attrs):
    name = ctx.g.emit(op, args, ctx.base(), **attrs)
    want = None
    if op in ("add", "sub", "mul", "maximum", "minimum", "fmod", "remainder", "pow",
              "bitwise_and", "bitwise_or", "bitwise_xor", "where", "clamp", "lerp"):
        operands = args[1:] if op == "where" else args
        want = result_type(operands)
        if op == "pow" and want is not None and not want.is_floating_point and \
                any(isinstance(a, float) for a in args):
            want = _F32
    return _fix_dtype(ctx, name, want)


def _dims(ctx, dims, rank):
    if dims is None or dims == []:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    out = []
    for d in dims:
        if not isinstance(d, int):
            ctx.fail(f"a reduction dimension {d!r} that is not a constant")
        out.append(d + rank if d < 0 else d)
    return out


def _reduce(ctx, op, x, dims, keepdim, dtype=None, **extra):
    if x.rank == 0:
        dims_list = []
    else:
        dims_list = _dims(ctx, dims, x.rank)
    if dtype is not None:
        extra["dtype"] = dtype
    name = ctx.g.emit(op, [x], ctx.base(), dims=dims_list, keepdim=bool(keepdim) or None,
                      **extra)
    return name


def _normalize_softmax(ctx, log):
    x = ctx.tensor(0)
    dim = ctx.const(1)
    xf = _cast(ctx, x, _F32) if x.dtype in _HALF else x
    shape = list(x.shape)
    kshape = list(shape)
    d = dim + x.rank if dim < 0 else dim
    if x.rank:
        kshape[d] = Extent(1)
    m = ctx.tmp("amax", [xf], xf.dtype, kshape, dims=[d] if x.rank else [], keepdim=True)
    z = ctx.tmp("sub", [xf, m], xf.dtype, shape)
    e = ctx.tmp("exp", [z], xf.dtype, shape)
    s = ctx.tmp("sum", [e], xf.dtype, kshape, dims=[d] if x.rank else [], keepdim=True)
    if log:
        y = ctx.tmp("sub", [z, ctx.tmp("log", [s], xf.dtype, kshape)], xf.dtype, shape)
    else:
        y = ctx.tmp("div", [e, s], xf.dtype, shape)
    return _cast(ctx, y, ctx.out_dtype())


def _layer_norm(ctx):
    x = ctx.tensor(0)
    normalized = ctx.const(1)
    y, mean, rstd = _aten_norm.layer_norm(ctx, x, len(normalized), ctx.arg(2, "weight", None),
                                          ctx.arg(3, "bias", None), ctx.arg(4, "eps"))

    def item(v):
        return lambda c: _cast(c, v, c.out_dtype())
    return _convert.Multi([item(y), item(mean), item(rstd)])


def _var(ctx, name, overload, with_mean):
    x = ctx.tensor(0)
    dims = ctx.const(1, "dim", None)
    if overload in ("correction", "correction_names"):
        correction = ctx.const(None, "correction", None)
        correction = 1 if correction is None else correction
    elif overload == "dim" or overload == "default" or overload == "names_dim":
        unbiased = ctx.const(None if overload == "default" else 2, "unbiased", True)
        if overload == "default" and ctx.has(1) and isinstance(ctx.node.args[1], bool):
            unbiased, dims = ctx.node.args[1], None
        correction = 1 if unbiased else 0
    else:
        raise ctx.unsupported()
    keepdim = ctx.const(None, "keepdim", False) if overload != "dim" or not ctx.has(3) else \
        ctx.const(3)
    if isinstance(correction, float):
        if correction != int(correction):
            raise ctx.unsupported("a fractional correction")
        correction = int(correction)
    dl = _dims(ctx, dims, x.rank)
    kshape = [Extent(1) if k in dl else e for k, e in enumerate(x.shape)]
    if not keepdim:
        kshape = [e for k, e in enumerate(x.shape) if k not in dl]
    if with_mean:
        v, m = ctx.g.emit("var_mean", [x], ctx.base(), outs=2, dims=dl, correction=correction,
                          keepdim=bool(keepdim) or None)
        v, m = Value(v, x.dtype, kshape), Value(m, x.dtype, kshape)
        if name.startswith("std"):
            v = ctx.tmp("sqrt", [v], x.dtype, kshape)
        return _convert.Multi([lambda c, v=v: v, lambda c, m=m: m])
    v = Value(ctx.g.emit("var", [x], ctx.base(), dims=dl, correction=correction,
                         keepdim=bool(keepdim) or None), x.dtype, kshape)
    if name.startswith("std"):
        v = ctx.tmp("sqrt", [v], x.dtype, kshape)
    return v


def _index_put(ctx):
    """x[mask] = value (index_put with one boolean index, after any number of full slices,
    and a one-element value) as where(mask, value, x); x[i, j] = v with integer index tensors
    as a scatter (_aten_scatter.py); other index_put forms are refused."""
    x = ctx.tensor(0)
    indices = ctx.arg(1, "indices")
    value = ctx.arg(2, "values")
    accumulate = ctx.const(3, "accumulate", False)
    given = [k for k, i in enumerate(indices) if i is not None]
    if given and all(isinstance(indices[k], Value) and
                     indices[k].dtype in (torch.int32, torch.int64) for k in given):
        r = _aten_scatter.index_put(ctx, x, indices, given, value, accumulate)
        return ctx.result(r.name)
    if accumulate:
        raise ctx.unsupported("accumulate=True")
    if len(given) != 1 or not isinstance(indices[given[0]], Value) or \
            indices[given[0]].dtype != torch.bool:
        raise ctx.unsupported("only x[mask] = value with one boolean mask is expressed")
    p, mask = given[0], indices[given[0]]
    if mask.shape != x.shape[p:p + mask.rank]:
        ctx.fail(f"a boolean mask of shape {mask.shape} for dims {p}.. of a tensor of shape "
                 f"{x.shape}")
    if not isinstance(value, Value) or any(e.constant != 1 for e in value.shape):
        raise ctx.unsupported("only a one-element value is expressed (x[mask] = number)")
    if value.rank:
        value = ctx.tmp("reshape", [value], value.dtype, [], shape=[])
    trailing = x.rank - p - mask.rank
    if trailing:
        shape = mask.shape + [Extent(1)] * trailing
        mask = ctx.tmp("reshape", [mask], torch.bool, shape,
                       shape=[e.json() for e in mask.shape] + [1] * trailing)
    return _fix_dtype(ctx, ctx.g.emit("where", [mask, value, x], ctx.base()),
                      result_type([value, x]))


def _masked_reduction(ctx, name, overload):
    """sum / mean of masked_select(x, mask) (a 1-D tensor of data-dependent extent): the sum
    of where(mask, x, 0) over the shape x and mask broadcast to, and for the mean that divided
    by the number of true elements (nan where there are none, as PyTorch's mean of nothing)."""
    sel = ctx.conv.lookup(ctx.node.args[0])
    x, mask = sel.x, sel.mask
    if overload != "default":
        dims = ctx.const(1, "dim", None)
        dims = [dims] if isinstance(dims, int) else list(dims or [])
        if any(d not in (0, -1) for d in dims):
            ctx.fail(f"a {name} over dims {dims} of a masked_select (which is 1-D)")
    dtype = ctx.const(None if overload != "default" else 1, "dtype", None)
    if dtype is not None:
        x = _cast(ctx, x, dtype)
    # The shape x and mask broadcast to (aligned on the right).
    rank = max(x.rank, mask.rank)
    xs = [Extent(1)] * (rank - x.rank) + list(x.shape)
    ms = [Extent(1)] * (rank - mask.rank) + list(mask.shape)
    full = []
    for a, b in zip(xs, ms):
        if a != b and a.constant != 1 and b.constant != 1:
            ctx.fail(f"a masked_select of a tensor of shape {x.shape} with a mask of shape "
                     f"{mask.shape}, which do not broadcast")
        full.append(b if a.constant == 1 else a)
    if mask.shape != full:
        mask = ctx.tmp("expand", [mask], torch.bool, full, shape=[e.json() for e in full])
    acc = result_type([x, 0])
    kept = ctx.tmp("where", [mask, x, 0], acc, full)
    every = list(range(rank))
    total = ctx.tmp("sum", [kept], acc if acc.is_floating_point else torch.int64, [],
                    dims=every)
    if name == "mean":
        count = ctx.tmp("sum", [mask], torch.int64, [], dims=every)
        total = ctx.tmp("div", [total, count], total.dtype, [])
    out = ctx.out_shape()
    if out:  # keepdim=True: [1]
        total = ctx.tmp("reshape", [total], total.dtype, out, shape=[1])
    return _cast(ctx, total, ctx.out_dtype())


def convert(ctx):  # noqa: C901 - one dispatch table
    node = ctx.node
    if node.op == "get_attr":
        return _constant(ctx)
    if node.target is operator.getitem:
        src = ctx.conv.values.get(node.args[0])
        i = node.args[1]
        if isinstance(src, _convert.Multi):
            r = src.items[i]
            return r(ctx) if callable(r) else r
        if isinstance(src, (list, tuple)):
            return src[i]
        if isinstance(src, _convert.Unsupported):
            raise _convert.ExportError(src.message)
        ctx.fail("getitem of a value that has one result")
    packet = _convert.aten_name(node.target)
    if packet is None:  # prims.where(c, a, b) is not aten.where(c): read none by its name
        raise ctx.unsupported("an op outside ATen, which the exporter does not read")
    name, overload = packet
    inplace = name.endswith("_") and not name.startswith("_") and name not in ("copy_",)
    base = name[:-1] if inplace else name
    r = _convert_functional(ctx, base, overload, name)
    if inplace and isinstance(r, Value) and base in _SHAPE_VIEWS:
        # squeeze_, t_, ...: the tensor takes the view's shape (F.linear of a vector squeezes
        # its product so). An input or a buffer would change shape for the caller.
        root = ctx.conv._root(node.args[0])
        if isinstance(root, torch.fx.Node) and root.op in ("placeholder", "get_attr") and \
                not _identity_view(ctx, base, r):
            ctx.fail(f"changes the shape of an input or a buffer in place ({name}), which a "
                     "fuserc graph cannot express (use the op that returns the view)")
        return Value(r.name, r.dtype, r.shape)
    if inplace and isinstance(r, Value):
        dst = ctx.target(0)
        if base in _BOOL_RESULTS:  # x.eq_(y) keeps x's dtype: the comparison's bools, cast
            r = Value(r.name, torch.bool, r.shape)
        r = _cast(ctx, r, dst.dtype)
        if [e for e in r.shape] != [e for e in dst.shape]:
            ctx.fail("an in-place update that broadcasts its target")
        r = Value(r.name, r.dtype, r.shape)
    return r


def _identity_view(ctx, base, r):
    """Whether an in-place shape view leaves its tensor as it was: t_ of at most one dim,
    transpose_ of a dim with itself, a squeeze_ of no unit dim, any as_strided_ the converter
    took (_aten_shape._layout_only_as_strided takes only those that change no value). (A
    transpose of two dims of one extent keeps the shape but not the layout, so the shapes alone
    do not tell.)"""
    rank = len(ctx.tensor(0).shape)
    args = ctx.node.args
    if base == "t":
        return rank <= 1
    if base in ("transpose", "swapdims", "swapaxes"):
        return rank == 0 or args[1] % rank == args[2] % rank
    if base == "squeeze":
        return list(r.shape) == list(ctx.tensor(0).shape)
    return base == "as_strided"


def _constant(ctx):
    """A tensor the trace holds as a constant: one the function closes over, a module's buffer
    (or parameter, with constants="all"), a torch.tensor(...) literal. A one-element tensor that
    is no named buffer is a `full`; any other is a constant input with its values (`data`)."""
    t = getattr(ctx.conv.traces[0].module, ctx.node.target)
    if not isinstance(t, torch.Tensor):
        ctx.fail(f"a constant of type {type(t).__name__}")
    if t.numel() == 1 and id(t) not in ctx.conv.constant_names:
        shape = [Extent(int(d)) for d in t.shape]
        return Value(ctx.g.emit("full", [], ctx.base(), shape=[int(d) for d in t.shape],
                                value=t.item() if t.dtype != torch.bool else bool(t.item()),
                                dtype=t.dtype), t.dtype, shape)
    return ctx.conv.constant(ctx, t, "const")


def _convert_functional(ctx, name, overload, full):  # noqa: C901
    g = ctx.g
    r = _aten_products.convert(ctx, name, overload)
    if r is None:
        r = _aten_nn.convert(ctx, name, overload)
    if r is None:
        r = _aten_resample.convert(ctx, name, overload)
    if r is None:
        r = _aten_attention.convert(ctx, name, overload)
    if r is None:
        r = _aten_scan.convert(ctx, name, overload)
    if r is None:
        r = _aten_scatter.convert(ctx, name, overload)
    if r is not None:
        return r
    if name in _UNSUPPORTED_PRODUCTS:
        raise ctx.unsupported("not supported yet: keep it outside the exported function")
    name = _UNARY_ALIASES.get(name, _BINARY_ALIASES.get(name, name))
    if name in _UNARY:
        return ctx.emit(name, [ctx.tensor(0)])
    if name == "round":
        decimals = ctx.const(None, "decimals", 0)
        x = ctx.tensor(0)
        if not decimals:
            return ctx.emit("round", [x])
        # PyTorch's: round(x * 10^d) / 10^d, or for d < 0 round(x / 10^-d) * 10^-d, the power
        # in x's dtype.
        if not x.dtype.is_floating_point:
            ctx.fail(f"round with decimals of a {x.dtype} tensor")
        acc = _F32 if x.dtype in _HALF else x.dtype
        xa = _cast(ctx, x, acc)
        scale = float(torch.tensor(10.0 ** abs(decimals), dtype=x.dtype).to(acc).item())
        there, back = ("mul", "div") if decimals > 0 else ("div", "mul")
        r = ctx.tmp("round", [ctx.tmp(there, [xa, scale], acc, x.shape)], acc, x.shape)
        return ctx.result(_cast(ctx, ctx.tmp(back, [r, scale], acc, x.shape), x.dtype).name)
    if name == "gelu":
        approx = ctx.const(1, "approximate", "none")
        return ctx.emit("gelu", [ctx.tensor(0)], approximate=approx if approx != "none" else None)
    if name in _BINARY or name in ("rsub", "logical_xor"):
        a, b = ctx.arg(0), ctx.arg(1)
        if name == "logical_xor":
            return ctx.emit("ne", [_cast(ctx, a, torch.bool) if isinstance(a, Value) else bool(a),
                                   _cast(ctx, b, torch.bool) if isinstance(b, Value) else bool(b)])
        alpha = ctx.const(2, "alpha", 1) if name in ("add", "sub", "rsub") else 1
        if alpha != 1:
            b = ctx.tmp("mul", [b, alpha], result_type([b, alpha]) if isinstance(b, Value)
                        else ctx.out_dtype(), b.shape if isinstance(b, Value) else [])
        if name == "rsub":
            a, b, name = b, a, "sub"
        if name == "div":
            mode = ctx.const(None, "rounding_mode", None)
            if mode is not None:
                return _aten_scan.rounded_division(ctx, a, b, mode)
            return ctx.emit("div", [a, b])
        if not isinstance(a, Value) and not isinstance(b, Value):
            ctx.fail("an op on two numbers")
        return _elementwise(ctx, name, [a, b])
    if name in ("max", "min") and overload in ("other",):
        return _elementwise(ctx, "maximum" if name == "max" else "minimum",
                            [ctx.arg(0), ctx.arg(1)])
    if name in ("clamp", "clamp_min", "clamp_max", "hardtanh"):
        x = ctx.tensor(0)
        lo = ctx.arg(1, "min", None) if name != "clamp_max" else None
        hi = ctx.arg(2 if name == "clamp" else 1, "max", None) if name != "clamp_min" else None
        if name == "hardtanh":
            lo, hi = ctx.arg(1, "min_val", -1.0), ctx.arg(2, "max_val", 1.0)
        if lo is not None and hi is not None:
            return _elementwise(ctx, "clamp", [x, lo, hi])
        if lo is not None:
            return _elementwise(ctx, "maximum", [x, lo])
        if hi is not None:
            return _elementwise(ctx, "minimum", [x, hi])
        return ctx.result(x.name)
    if name == "where":
        if overload == "default" or not ctx.has(1):
            raise ctx.unsupported("where with one argument (nonzero)")
        return _elementwise(ctx, "where", [ctx.arg(0), ctx.arg(1), ctx.arg(2)])
    if name == "masked_fill":
        x, mask, v = ctx.tensor(0), ctx.tensor(1), ctx.arg(2)
        return _fix_dtype(ctx, g.emit("where", [mask, v, x], ctx.base()),
                          result_type([v, x]))
    if name == "lerp":
        return _elementwise(ctx, "lerp", [ctx.arg(0), ctx.arg(1), ctx.arg(2)])
    if name == "leaky_relu":
        x = ctx.tensor(0)
        slope = ctx.arg(1, "negative_slope", 0.01)
        pos = ctx.tmp("gt", [x, 0], torch.bool, x.shape)
        return ctx.emit("where", [pos, x, ctx.tmp("mul", [x, slope], x.dtype, x.shape)])
    if name in _IDENTITY or (name == "dropout" and not ctx.const(2, "train", True)):
        src = ctx.conv.lookup(ctx.node.args[0]) if ctx.node.args else None
        if isinstance(src, Value) and src.uninitialized and name in ("detach", "alias"):
            # make_fx's detach of a torch.empty that a fill_ or copy_ writes next (CLIP's
            # and BLOOM's causal masks): still nothing to read.
            return Value(ctx.base(), src.dtype, src.shape, uninitialized=True)
        x = ctx.tensor(0)
        dtype = ctx.out_dtype()
        if dtype != x.dtype:
            return ctx.result(_cast(ctx, x, dtype).name)
        # A copy (clone, _to_copy) is a tensor of its own, whatever it copies: an in-place op
        # on the clone of a slice writes the clone alone.
        copy = name in ("clone", "_to_copy", "lift_fresh_copy")
        if name in ("detach", "alias"):
            # The same tensor: a write into it (g.detach().mul_(coef), as clip_grad_norm_
            # scales each gradient) writes the tensor it aliases.
            ctx.conv.places[ctx.node] = lambda c, parent, value: Value(
                _cast(c, value, parent.dtype).name, parent.dtype, parent.shape)
        return Value(x.name, x.dtype, x.shape, view=name in _VIEWS or (x.view and not copy))
    if name == "masked_select":
        x, mask = ctx.tensor(0), ctx.tensor(1)
        if mask.dtype != torch.bool:
            ctx.fail(f"masked_select with a {mask.dtype} mask")
        return _convert.MaskedSelect(ctx.conv.describe(
            ctx.node, "cannot express masked_select (its extent depends on the mask's values) "
                      "in a fuserc graph, except summed or averaged (.sum(), .mean())"), x, mask)
    if name == "index_put":
        return _index_put(ctx)
    # ---- reductions
    if name in ("sum", "mean") and isinstance(ctx.conv.lookup(ctx.node.args[0]),
                                               _convert.MaskedSelect):
        return _masked_reduction(ctx, name, overload)
    if name in ("sum", "mean", "prod", "amax", "amin", "max", "min", "nansum"):
        if name == "nansum":
            raise ctx.unsupported()
        x = ctx.tensor(0)
        if name in ("max", "min"):
            if overload == "dim":
                dim = ctx.const(1)
                keep = ctx.const(2, "keepdim", False)
                vals = _reduce(ctx, "amax" if name == "max" else "amin", x, [dim], keep)
                return _convert.Multi([
                    lambda c: c.result(vals),
                    lambda c: _aten_scan.arg_reduction(c, x, dim, keep, name == "max")])
            if overload == "default":
                return ctx.result(_reduce(ctx, "amax" if name == "max" else "amin", x, None,
                                          False))
            raise ctx.unsupported()
        if overload == "default" and name not in ("amax", "amin"):
            dims, keep = None, False
        else:
            dims, keep = ctx.const(1, "dim", None), ctx.const(2, "keepdim", False)
        dtype = ctx.const(None if overload != "default" else 1, "dtype", None) \
            if name in ("sum", "mean") else None
        if name == "prod" and overload == "default":
            dtype = ctx.const(1, "dtype", None)
        if name == "prod" and dtype is not None:
            x = _cast(ctx, x, dtype)
            dtype = None
        return _fix_dtype(ctx, _reduce(ctx, name, x, dims, keep, dtype), None)
    if name in ("var", "std", "var_mean", "std_mean"):
        return _var(ctx, name, overload, name.endswith("_mean"))
    if name in ("_softmax", "softmax", "_log_softmax", "log_softmax"):
        return _normalize_softmax(ctx, "log" in name)
    if name == "native_layer_norm":
        return _layer_norm(ctx)
    r = _aten_shape.convert(ctx, name, overload)
    if r is not None:
        return r
    if name in ("sym_size", "sym_numel", "sym_stride", "_local_scalar_dense", "item"):
        raise ctx.unsupported("reading a size or a value as a number")
    raise ctx.unsupported()
