"""Owns layer normalization written with the contract's ops, for native_layer_norm (_aten.py)
and the encoder layer's fast path (_aten_attention.py): var_mean over the last dims (in f32 for
16-bit floats), (x - mean) * rsqrt(var + eps), then the weight and bias."""
import torch

from ._aten_shape import _cast
from ._dtypes import HALF as _HALF
from ._graph import Value
from ._symbolic import Extent



def layer_norm(ctx, x, n, w, b, eps):
    """Layer norm of x over its last `n` dims: (y, mean, rstd), y in the computing dtype (f32
    for 16-bit floats), mean and rstd with those dims kept as 1."""
    xf = _cast(ctx, x, torch.float32) if x.dtype in _HALF else x
    dims = list(range(x.rank - n, x.rank))
    kshape = [Extent(1) if k in dims else e for k, e in enumerate(x.shape)]
    var, mean = ctx.g.emit("var_mean", [xf], ctx.base(), outs=2, dims=dims, correction=0,
                           keepdim=True)
    var, mean = Value(var, xf.dtype, kshape), Value(mean, xf.dtype, kshape)
    rstd = ctx.tmp("rsqrt", [ctx.tmp("add", [var, eps], xf.dtype, kshape)], xf.dtype, kshape)
    y = ctx.tmp("mul", [ctx.tmp("sub", [xf, mean], xf.dtype, x.shape), rstd], xf.dtype, x.shape)
    if isinstance(w, Value):
        y = ctx.tmp("mul", [y, w], xf.dtype, x.shape)
    if isinstance(b, Value):
        y = ctx.tmp("add", [y, b], xf.dtype, x.shape)
    return y, mean, rstd
