"""Owns the part of the ATen-to-contract table (see _aten.py) for products and the ops built on
them: mm, bmm, matmul, dot, mv and linear as the contract's `matmul` / `linear` (a product with
a transposed 2-D weight, `x @ w.t()`, is a `linear`), addmm, addmv, baddbmm and addbmm as one
of those with the scales and the add, `convolution` as `conv` (transposed too), and nll_loss (cross_entropy's
second half) as a `gather` and reductions. convert(ctx, name, overload) returns None for other
ops."""
import torch

from . import _convert
from ._aten_shape import _cast, _index_select
from ._dtypes import HALF as _HALF
from ._graph import Value
from ._symbolic import Extent

_F32 = torch.float32


def _packet(node):
    """The ATen name of node's op ('' for another namespace's)."""
    packet = _convert.aten_name(node.target)
    return packet[0] if packet is not None else ""


def _tf32(dtype):
    """`allow_tf32` of a product: PyTorch's own switch for f32 matrix products."""
    if dtype == torch.float32 and torch.backends.cuda.matmul.allow_tf32:
        return True
    return None


def _operands(ctx, *values):
    dtypes = {v.dtype for v in values}
    if len(dtypes) != 1 or not next(iter(dtypes)).is_floating_point:
        raise ctx.unsupported("a product of " + " and ".join(str(v.dtype) for v in values) +
                              " operands (fuserc's products take floating operands of one dtype)")


def _transposed_weight(ctx, arg):
    """The 2-D tensor w when `arg` (an fx argument) is w.t() or a transpose of w, else None."""
    if not isinstance(arg, torch.fx.Node) or arg.op != "call_function" or not arg.args:
        return None
    name = _packet(arg)
    if name in ("t", "t_copy", "numpy_T"):
        pass
    elif name in ("transpose", "transpose_copy"):
        if len(arg.args) < 3 or {d % 2 for d in arg.args[1:3] if isinstance(d, int)} != {0, 1}:
            return None
    elif name in ("permute", "permute_copy"):
        if len(arg.args) < 2 or [d % 2 for d in arg.args[1]] != [1, 0]:
            return None
    else:
        return None
    w = ctx.conv.lookup(arg.args[0])
    if not isinstance(w, Value) or w.rank != 2 or w.uninitialized:
        return None
    return w


def _product(ctx, a, b, b_arg, shape):
    """a @ b as a Value of `shape`: a `linear` when b is a transposed 2-D weight."""
    _operands(ctx, a, b)
    w = _transposed_weight(ctx, b_arg) if b.rank == 2 and a.rank >= 1 else None
    if w is not None and a.rank >= 2:
        return ctx.tmp("linear", [a, w], a.dtype, shape, allow_tf32=_tf32(a.dtype))
    return ctx.tmp("matmul", [a, b], a.dtype, shape, allow_tf32=_tf32(a.dtype))


def _scale_add(ctx, p, alpha, c, beta):
    """beta * c + alpha * p as this node's result (c ignored where beta is 0, as in PyTorch)."""
    if alpha != 1:
        p = ctx.tmp("mul", [p, alpha], p.dtype, p.shape)
    if beta == 0:
        return ctx.result(p.name)
    if isinstance(c, Value) and beta != 1:
        c = ctx.tmp("mul", [c, beta], c.dtype, c.shape)
    return ctx.emit("add", [p, c])


def _conv(ctx):
    x, w = ctx.tensor(0), ctx.tensor(1)
    b = ctx.arg(2, "bias", None)
    _operands(ctx, *([x, w] + ([b] if isinstance(b, Value) else [])))
    n = w.rank - 2

    def per_dim(v, what):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        if len(v) == 1 and n > 1:
            v = v * n
        if len(v) != n or not all(isinstance(k, int) for k in v):
            ctx.fail(f"a convolution {what} {v!r} for {n} spatial dims")
        return v
    stride = per_dim(ctx.const(3, "stride"), "stride")
    padding = per_dim(ctx.const(4, "padding"), "padding")
    dilation = per_dim(ctx.const(5, "dilation"), "dilation")
    transposed = bool(ctx.const(6, "transposed"))
    output_padding = per_dim(ctx.const(7, "output_padding"), "output_padding")
    if any(output_padding) and not transposed:
        ctx.fail("output_padding of a convolution that is not transposed")
    groups = ctx.const(8, "groups")
    # The output's spatial extents, as fuserc's front end computes them from the attributes:
    # (H + 2p - d(k-1) - 1) // s + 1, transposed (H - 1) s - 2p + d(k-1) + output_padding + 1.
    for i in range(n):
        h, k = x.shape[x.rank - n + i], w.shape[2 + i].constant
        if h.is_constant or k is None:
            continue
        if transposed:
            ctx.learn((h - 1) * stride[i] - 2 * padding[i] + dilation[i] * (k - 1) +
                      output_padding[i] + 1)
        else:
            # PyTorch refuses sizes below one window (a kernel of 4 over H < 4): the graph
            # is for the sizes it runs.
            ctx.conv.at_least(h, dilation[i] * (k - 1) + 1 - 2 * padding[i])
            ctx.learn((h + 2 * padding[i] - dilation[i] * (k - 1) - 1) // stride[i] + 1)
    args = [x, w] + ([b] if isinstance(b, Value) else [])
    return ctx.emit("conv", args, stride=stride, padding=padding, dilation=dilation,
                    groups=groups if groups != 1 else None,
                    transposed=True if transposed else None,
                    output_padding=output_padding if transposed and any(output_padding) else None)


def _nll_loss(ctx):
    """nll_loss_forward / nll_loss2d_forward: (loss, total_weight). The target's class is
    gathered along the class dim (a target equal to ignore_index reads class 0 and counts 0)."""
    x, t = ctx.tensor(0), ctx.tensor(1)
    w = ctx.arg(2, "weight", None)
    reduction = ctx.const(3, "reduction", 1)
    ignore = ctx.const(4, "ignore_index", -100)
    if not x.dtype.is_floating_point:
        ctx.fail("nll_loss of a non-float input")
    cdim = 0 if x.rank == 1 else 1
    acc = _F32 if x.dtype in _HALF else x.dtype
    valid = ctx.tmp("ne", [t, ignore], torch.bool, t.shape)
    safe = ctx.tmp("where", [valid, t, 0], t.dtype, t.shape)
    ishape = t.shape[:cdim] + [Extent(1)] + t.shape[cdim:]
    idx = ctx.tmp("unsqueeze", [safe], t.dtype, ishape, dim=cdim)
    picked = ctx.tmp("gather", [x, idx], x.dtype, ishape, dim=cdim)
    picked = _cast(ctx, ctx.tmp("squeeze", [picked], x.dtype, t.shape, dims=[cdim]), acc)
    zero = ctx.tmp("full", [], acc, [], shape=[], value=0.0, dtype=acc)
    if isinstance(w, Value):
        wt = Value(_index_select(ctx, w, 0, safe, t.shape), w.dtype, t.shape)
        wt = ctx.tmp("where", [valid, _cast(ctx, wt, acc), zero], acc, t.shape)
        loss = ctx.tmp("neg", [ctx.tmp("mul", [picked, wt], acc, t.shape)], acc, t.shape)
    else:
        wt = _cast(ctx, valid, acc)
        loss = ctx.tmp("where", [valid, ctx.tmp("neg", [picked], acc, t.shape), zero], acc,
                       t.shape)
    dims = list(range(t.rank))
    if reduction == 0:
        out, total = loss, zero
    elif reduction in (1, 2):
        total = ctx.tmp("sum", [wt], acc, [], dims=dims)
        out = ctx.tmp("sum", [loss], acc, [], dims=dims)
        if reduction == 1:
            out = ctx.tmp("div", [out, total], acc, [])
    else:
        ctx.fail(f"nll_loss reduction {reduction!r}")
    return _convert.Multi([lambda c, v=out: _cast(c, v, c.out_dtype()),
                           lambda c, v=total: _cast(c, v, c.out_dtype())])


def convert(ctx, name, overload):  # noqa: C901 - one dispatch table
    node = ctx.node
    if name in ("mm", "bmm", "matmul", "dot", "mv", "inner") and \
            not (name == "inner" and ctx.tensor(0).rank != 1):
        a, b = ctx.tensor(0), ctx.tensor(1)
        return ctx.result(_product(ctx, a, b, node.args[1], ctx.out_shape()).name)
    if name == "linear":
        x, w = ctx.tensor(0), ctx.tensor(1)
        b = ctx.arg(2, "bias", None)
        args = [x, w] + ([b] if isinstance(b, Value) else [])
        _operands(ctx, *args)
        return ctx.emit("linear", args, allow_tf32=_tf32(x.dtype))
    if name in ("addmm", "addmv", "baddbmm", "addbmm"):
        c, a, b = ctx.arg(0), ctx.tensor(1), ctx.tensor(2)
        beta, alpha = ctx.const(3, "beta", 1), ctx.const(4, "alpha", 1)
        w = _transposed_weight(ctx, node.args[2]) if name == "addmm" else None
        if w is not None and alpha == 1 and beta == 1 and isinstance(c, Value) and \
                c.rank == 1 and c.shape == [w.shape[0]] and c.dtype == a.dtype:
            _operands(ctx, a, w, c)
            return ctx.emit("linear", [a, w, c], allow_tf32=_tf32(a.dtype))
        if name == "addbmm":
            _operands(ctx, a, b)
            shape = [a.shape[1], b.shape[2]]
            if _convert.aten_name(node.target)[0] == "addbmm_" and \
                    (not isinstance(c, Value) or list(c.shape) != shape):
                ctx.fail("resizes its tensor in place (PyTorch 1.13 gives it the product's "
                         "shape), which a fuserc graph cannot express")
            p = ctx.tmp("matmul", [a, b], a.dtype, [a.shape[0]] + shape,
                        allow_tf32=_tf32(a.dtype))
            p = ctx.tmp("sum", [p], a.dtype, shape, dims=[0])
        else:
            p = _product(ctx, a, b, node.args[2], ctx.out_shape())
        return _scale_add(ctx, p, alpha, c, beta)
    if name in ("convolution", "_convolution"):
        return _conv(ctx)
    if name in ("nll_loss_forward", "nll_loss2d_forward"):
        return _nll_loss(ctx)
    return None
