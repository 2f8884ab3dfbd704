"""Owns fuserc's own decompositions, in ATen ops the converter reads, of ops for which PyTorch's
decomposition table (torch._decomp, on 1.13 its torch._refs) gives `prims.*` ops or none:
vector norms (F.normalize, x.norm(), torch.linalg.vector_norm) and renorm, nan_to_num,
softshrink and hardshrink, smooth_l1_loss (1.13 has none) and huber_loss, F.affine_grid (1.13
has none) and grid_sample (PyTorch's, its reflection parity taken in int32 rather than int8),
any / all / nansum, aminmax, fmin / fmax, dist and linspace, trace, diag, diag_embed and rot90,
bucketize and searchsorted, count_nonzero, cross, kthvalue, median and nanmedian (from a sort),
histc, block_diag, the multi-class margin losses and max unpooling; and torch.full's dtype from
its fill value, which 1.13's fake tensors get wrong. table() adds the elementwise math of
_decomp_elementwise.py and the indexing ops of _decomp_indexing.py. _trace.py hands them to
make_fx with PyTorch's decompositions of other ops (the patches of Python-level functions,
which no decomposition table reaches, are _patches.py). Imports only those two of fuserc."""
import math

import torch

from . import _decomp_elementwise, _decomp_indexing
from ._overloads import overload_table

_HALF = (torch.float16, torch.bfloat16)


def _vector_norm(x, ord=2, dim=None, keepdim=False, dtype=None):
    """torch.linalg.vector_norm of a real tensor: sum(|x|^ord)^(1/ord) over `dim` (all dims
    where None or empty), max |x| for inf, min |x| for -inf, the count of non-zeros for 0;
    16-bit floats computed in f32 and rounded once (as PyTorch's reference)."""
    if x.is_complex():
        raise NotImplementedError("vector norm of a complex tensor")
    if dtype is not None:
        x = x.to(dtype)
    out_dtype = x.dtype
    if x.dtype in _HALF:
        x = x.to(torch.float32)
    dims = _reduced_dims(x, dim)
    ord = float(ord)
    if ord == 0:
        r = (x != 0).to(x.dtype).sum(dims, keepdim)
    elif ord == math.inf:
        r = x.abs().amax(dims, keepdim)
    elif ord == -math.inf:
        r = x.abs().amin(dims, keepdim)
    elif ord == 1:
        r = x.abs().sum(dims, keepdim)
    elif ord == 2:
        r = (x * x).sum(dims, keepdim).sqrt()
    else:
        r = x.abs().pow(ord).sum(dims, keepdim).pow(1.0 / ord)
    return r.to(out_dtype)


def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _vector_norm(x, ord, dim, keepdim, dtype)


def norm(x, p=2, dim=None, keepdim=False, *, dtype=None):
    """aten.norm's overloads (Scalar, ScalarOpt_dim, ScalarOpt_dtype, ScalarOpt_dim_dtype):
    p None is 2."""
    return _vector_norm(x, 2 if p is None else p, dim, keepdim, dtype)


def renorm(x, p, dim, maxnorm):
    """Each slice along `dim` whose p-norm exceeds maxnorm scaled to maxnorm / (norm + 1e-7),
    as PyTorch's kernel (in f32 for 16-bit floats)."""
    out_dtype = x.dtype
    w = x.to(torch.float32) if x.dtype in _HALF else x
    dim = dim % max(x.dim(), 1)
    dims = [d for d in range(x.dim()) if d != dim]
    norm = _vector_norm(w, p, dims, True) if dims else w.abs()
    factor = torch.where(norm > maxnorm, maxnorm / (norm + 1e-7), torch.ones_like(norm))
    return (w * factor).to(out_dtype)


def nan_to_num(x, nan=None, posinf=None, neginf=None):
    if not x.dtype.is_floating_point:
        return x.clone()
    info = torch.finfo(x.dtype)
    y = x.masked_fill(x.isnan(), 0.0 if nan is None else nan)
    y = y.masked_fill(x == math.inf, info.max if posinf is None else posinf)
    return y.masked_fill(x == -math.inf, info.min if neginf is None else neginf)


def softshrink(x, lambd=0.5):
    """x - lambd above lambd, x + lambd below -lambd, else 0 (nan too, as PyTorch's kernel)."""
    zero = torch.zeros_like(x)
    return torch.where(x > lambd, x - lambd, torch.where(x < -lambd, x + lambd, zero))


def hardshrink(x, lambd=0.5):
    """0 in [-lambd, lambd], else x."""
    return x.masked_fill((x >= -lambd) & (x <= lambd), 0)


def full(size, fill_value, *, dtype=None, layout=None, device=None, pin_memory=None):
    """torch.full with no dtype takes the fill value's (int64 for an int, bool for a bool), as
    in eager PyTorch 1.13, where its fake tensors give float32. (With a dtype: NotImplemented,
    which make_fx 1.13 takes as "trace the op itself".)"""
    if dtype is not None:
        return NotImplemented
    dtype = torch.bool if isinstance(fill_value, bool) else torch.int64 \
        if isinstance(fill_value, int) else torch.complex64 \
        if isinstance(fill_value, complex) else torch.get_default_dtype()
    return torch.ops.aten.full.default(size, fill_value, dtype=dtype, layout=layout,
                                       device=device, pin_memory=pin_memory)


def smooth_l1_loss(x, target, reduction=1, beta=1.0):
    """F.smooth_l1_loss: 0.5 d^2 / beta where d = |x - target| < beta, else d - beta / 2 (d
    where beta is 0); reduction 0 none, 1 mean, 2 sum."""
    d = (x - target).abs()
    loss = torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta) if beta > 0 else d
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def huber_loss(x, target, reduction=1, delta=1.0):
    """F.huber_loss: 0.5 d^2 where d = |x - target| < delta, else delta (d - delta / 2)
    (1.13's decomposition gives prims ops)."""
    d = (x - target).abs()
    loss = torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return loss if reduction == 0 else loss.mean() if reduction == 1 else loss.sum()


def _linspace_unit(n, align_corners, dtype):
    """PyTorch's affine_grid base coordinates: linspace(-1, 1, n), scaled by (n-1)/n without
    align_corners (0 for n = 1)."""
    if n <= 1:
        return torch.zeros(max(n, 0), dtype=dtype)
    r = linspace(-1.0, 1.0, n, dtype=dtype)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid_generator(theta, size, align_corners):
    """F.affine_grid: base coordinates [.., W, H, (D,) 1] (x first) times theta transposed,
    as PyTorch's AffineGridGenerator computes them: a batched product in theta's dtype."""
    n = size[0]
    spatial = list(size[2:])
    dt = theta.dtype
    axes = [_linspace_unit(s, align_corners, dt) for s in spatial]  # D, H, W order
    grids = torch.meshgrid(*axes, indexing="ij") if len(axes) > 1 else [axes[0]]
    base = torch.stack(list(reversed(grids)) + [torch.ones_like(grids[0])], dim=-1)
    flat = base.reshape(1, -1, len(spatial) + 1).expand(n, -1, -1)
    out = torch.bmm(flat, theta.transpose(1, 2))
    return out.reshape([n] + spatial + [len(spatial)])


def grid_sampler_2d(*args, **kwargs):
    """PyTorch's own decomposition of grid_sampler_2d, whose reflection padding takes the parity
    of the reflection count from a cast to int8 (a dtype fuserc graphs lack): the cast is made
    to int32 while it runs, which has the same parity for every count an f32 coordinate
    reaches within int32."""
    from torch._decomp import decomposition_table
    decomposition = decomposition_table[torch.ops.aten.grid_sampler_2d.default]
    original = torch.Tensor.to

    def to(self, *a, **k):
        a = tuple(torch.int32 if x is torch.int8 else x for x in a)
        if k.get("dtype") is torch.int8:
            k = dict(k, dtype=torch.int32)
        return original(self, *a, **k)
    torch.Tensor.to = to
    try:
        return decomposition(*args, **kwargs)
    finally:
        torch.Tensor.to = original


def _reduced_dims(x, dim):
    if dim is None:
        return list(range(x.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return dims or list(range(x.dim()))


def any_(x, dim=None, keepdim=False):
    """any (default, dim, dims): whether a count of non-zeros is above 0 (False where the
    reduced extent is 0, as PyTorch)."""
    return (x != 0).sum(_reduced_dims(x, dim), keepdim) > 0


def all_(x, dim=None, keepdim=False):
    """all: whether the count of zeros is 0 (True where the reduced extent is 0)."""
    return (x == 0).sum(_reduced_dims(x, dim), keepdim) == 0


def nansum(x, dim=None, keepdim=False, *, dtype=None):
    if x.dtype.is_floating_point:
        x = torch.where(torch.isnan(x), torch.zeros((), dtype=x.dtype), x)
    return x.sum(_reduced_dims(x, dim), keepdim, dtype=dtype)


def _nan_ignoring(pick):
    def f(a, b):
        r = pick(a, b)
        if not r.dtype.is_floating_point:
            return r
        a, b = a.to(r.dtype), b.to(r.dtype)
        return torch.where(torch.isnan(a), b, torch.where(torch.isnan(b), a, r))
    return f


fmax, fmin = _nan_ignoring(torch.maximum), _nan_ignoring(torch.minimum)


def aminmax(x, *, dim=None, keepdim=False):
    """torch.aminmax: (amin, amax) over `dim` (every dim where None)."""
    dims = list(range(x.dim())) if dim is None else [dim]
    return x.amin(dims, keepdim), x.amax(dims, keepdim)


def dist(a, b, p=2):
    """torch.dist: the p-norm of a - b over every element."""
    return _vector_norm(a - b, p)


def linspace(start, end, steps, *, dtype=None, layout=None, device=None, pin_memory=None):
    """torch.linspace as PyTorch's CPU kernel computes it: step = (end - start) / (steps - 1)
    in the result's dtype (double for integers), start + step * i for the first half, end -
    step * (steps - 1 - i) for the rest."""
    dtype = dtype or torch.get_default_dtype()
    compute = dtype if dtype.is_floating_point else torch.float64
    if steps == 1:
        return torch.full((1,), start, dtype=compute, device=device).to(dtype)
    lo = torch.tensor(start, dtype=compute).item()
    hi = torch.tensor(end, dtype=compute).item()
    step = torch.tensor((hi - lo) / (steps - 1), dtype=compute).item()
    i = torch.arange(steps, dtype=torch.int64, device=device)
    first = i.to(compute) * step + lo
    last = hi - (steps - 1 - i).to(compute) * step
    return torch.where(i < steps // 2, first, last).to(dtype)


def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over `dim` as PyTorch's kernel computes it: less the max, where an
    infinite max counts as 0 in both places (a row of -inf gives -inf, a row holding +inf gives
    +inf; PyTorch 1.13's own decomposition subtracts the unmasked max, giving nan)."""
    if not x.dtype.is_floating_point:
        x = x.to(torch.get_default_dtype())
    dims = _reduced_dims(x, dim)
    m = torch.amax(x, dims, True)
    m = torch.where(m.abs() == float("inf"), torch.zeros((), dtype=m.dtype), m)
    out = torch.log(torch.exp(x - m).sum(dims, keepdim))
    return out + (m if keepdim else m.squeeze(dims[0]) if len(dims) == 1 else m.reshape(out.shape))


def mish(x):
    """x * tanh(softplus(x)) in f32 for half types, rounded once (PyTorch's kernel; 1.13's
    decomposition casts through prims.convert_element_type, an op outside ATen)."""
    xf = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return (xf * torch.tanh(torch.log1p(torch.exp(xf)))).to(x.dtype)


def trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """aten._trilinear (nn.Bilinear's x1^T W x2): the three operands unsqueezed at their
    `expand` dims, multiplied, summed over `sumdim` (those dims removed)."""
    total = i1.dim() + len(expand1)

    def grown(t, expand):
        for d in sorted(e % total for e in expand):
            t = t.unsqueeze(d)
        return t
    product = grown(i1, expand1) * grown(i2, expand2) * grown(i3, expand3)
    return product.sum(sorted(d % total for d in sumdim)) if len(sumdim) else product


def channel_shuffle(x, groups):
    """[N, C, ...] with its channels in `groups` interleaved (ShuffleNet's shuffle)."""
    n, c = x.shape[0], x.shape[1]
    rest = list(x.shape[2:])
    return x.reshape([n, groups, c // groups] + rest).transpose(1, 2).reshape([n, c] + rest)


def addr(x, vec1, vec2, *, beta=1, alpha=1):
    """beta * x + alpha * outer(vec1, vec2) (x ignored where beta is 0, as PyTorch); for bools
    (beta and x) or (alpha and vec1 and vec2), as PyTorch computes them."""
    if x.dtype == torch.bool:
        outer = vec1.unsqueeze(1) & vec2.unsqueeze(0)
        if not alpha:
            outer = torch.zeros_like(outer)
        if not beta:
            return outer.expand(torch.broadcast_shapes(x.shape, outer.shape)).clone()
        return x | outer
    outer = vec1.unsqueeze(1) * vec2.unsqueeze(0)
    if alpha != 1:
        outer = outer * alpha
    if beta == 0:
        return outer.expand(torch.broadcast_shapes(x.shape, outer.shape)).clone()
    return (x if beta == 1 else x * beta) + outer


def rrelu_with_noise(x, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """RReLU in eval: a leaky ReLU of slope (lower + upper) / 2. In training it draws a random
    slope per element, which the exporter refuses."""
    if training:  # reported by the tracer with the user's line
        raise RuntimeError("nn.RReLU in training draws a random slope per element (export it "
                           "in eval(), where the slope is (lower + upper) / 2)")
    return torch.where(x >= 0, x, x * ((lower + upper) / 2))


def trace(x):
    """torch.trace: the sum of the main diagonal (the converter reads diagonal as a view)."""
    return x.diagonal().sum()


def _embedded(v, offset):
    """[..., n] to [..., n + |offset|, n + |offset|]: v on the diagonal `offset`, 0 elsewhere
    (an iota comparison, so a symbolic n stays one)."""
    k = abs(offset)
    if k:
        v = torch.nn.functional.pad(v, (0, k))
    m = v.shape[-1]
    rows = torch.arange(m, device=v.device).unsqueeze(-1)
    cols = torch.arange(m, device=v.device)
    on = cols - rows == offset
    # Row i holds v[i] above the main diagonal, column j holds v[j] below it.
    src = v.unsqueeze(-1) if offset >= 0 else v.unsqueeze(-2)
    return torch.where(on, src, torch.zeros((), dtype=v.dtype, device=v.device))


def diag(x, diagonal=0):
    """torch.diag: a vector to a matrix with it on a diagonal, a matrix to its diagonal."""
    if x.dim() == 1:
        return _embedded(x, diagonal)
    return x.diagonal(diagonal).clone()


def diag_embed(x, offset=0, dim1=-2, dim2=-1):
    """torch.diag_embed: each last-dim vector on a diagonal of a new matrix at dims dim1, dim2
    of the result."""
    out = _embedded(x, offset)
    rank = out.dim()
    d1, d2 = dim1 % rank, dim2 % rank
    if (d1, d2) == (rank - 2, rank - 1):
        return out
    return torch.movedim(out, (-2, -1), (d1, d2))


def rot90(x, k=1, dims=(0, 1)):
    """torch.rot90 as flips and a transpose, as PyTorch computes it."""
    d0, d1 = dims
    k %= 4
    if k == 1:
        return x.flip(d1).transpose(d0, d1).clone()
    if k == 2:
        return x.flip((d0, d1))
    if k == 3:
        return x.flip(d0).transpose(d0, d1).clone()
    return x.clone()


def _sorted_position(seq, values, right, out_int32):
    """The index of each value in sorted seq (last dim), as PyTorch's binary search gives it:
    the count of elements e with !(e >= v) (or !(e > v) to the right), so that a NaN value
    lands past the end. The same as the search wherever seq has no NaN."""
    if seq.dim() == 1:
        seq = seq.expand(values.shape + seq.shape)
    else:
        seq = seq.unsqueeze(-2)
    v = values.unsqueeze(-1)
    before = ~(seq > v) if right else ~(seq >= v)
    out = before.sum(-1)
    return out.to(torch.int32) if out_int32 else out


def bucketize(x, boundaries, *, out_int32=False, right=False):
    """torch.bucketize as a comparison with every boundary and a count (a reduction over the
    boundaries, fused)."""
    if not isinstance(x, torch.Tensor):
        x = boundaries.new_full((), x)
    return _sorted_position(boundaries, x, right, out_int32)


def searchsorted(seq, values, *, out_int32=False, right=False, side=None, sorter=None):
    """torch.searchsorted as bucketize above, per row of an N-d sorted sequence; a `sorter`
    permutation is refused (by PyTorch's own op)."""
    if sorter is not None:  # reported by the tracer with the user's line
        raise RuntimeError("torch.searchsorted with a sorter is not expressed (sort the "
                           "sequence first)")
    if not isinstance(values, torch.Tensor):
        values = seq.new_full((), values)
    return _sorted_position(seq, values, right or side == "right", out_int32)


def count_nonzero(x, dim=None):
    return (x != 0).sum(dim) if dim is not None else (x != 0).sum()


def linalg_cross(a, b, dim=-1):
    """The cross product along a dim of 3: a[i+1] b[i+2] - a[i+2] b[i+1], by rolls."""
    a, b = torch.broadcast_tensors(a, b)
    return a.roll(-1, dim) * b.roll(-2, dim) - a.roll(-2, dim) * b.roll(-1, dim)


def kthvalue(x, k, dim=-1, keepdim=False):
    """The k-th smallest along dim (NaN largest) and its index, from a sort."""
    if x.dim() == 0:
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    values, indices = torch.sort(x, dim)
    v, i = values.select(dim, k - 1), indices.select(dim, k - 1)
    return (v.unsqueeze(dim), i.unsqueeze(dim)) if keepdim else (v, i)


def _median(x, dim, keepdim, ignore_nan):
    """The lower median along dim from a sort (NaN sorted last): NaN where the row holds one
    (median), or the lower median of the other elements (nanmedian; NaN where all are)."""
    if x.dim() == 0:  # one element: itself, at index 0
        return x.clone(), torch.zeros((), dtype=torch.int64, device=x.device)
    values, indices = torch.sort(x, dim)
    nan = torch.isnan(values)
    n = x.shape[dim]
    if ignore_nan:
        count = n - nan.sum(dim, keepdim=True)
        at = torch.clamp((count - 1) // 2, min=0)
    else:
        at = torch.where(nan.any(dim, keepdim=True), n - nan.sum(dim, keepdim=True),
                         torch.full_like(nan.sum(dim, keepdim=True), (n - 1) // 2))
    v, i = values.gather(dim, at), indices.gather(dim, at)
    return (v, i) if keepdim else (v.squeeze(dim), i.squeeze(dim))


def median(x, dim=None, keepdim=False):
    if dim is None:
        return _median(x.reshape(-1), 0, False, False)[0]
    return _median(x, dim, keepdim, False)


def nanmedian(x, dim=None, keepdim=False):
    if dim is None:
        return _median(x.reshape(-1), 0, False, True)[0]
    return _median(x, dim, keepdim, True)


def histc(x, bins=100, min=0, max=0):
    """torch.histc: counts of x in `bins` equal bins over [min, max] (the data's range where
    min == max, widened by 1 each way where that is one value), as the data's dtype."""
    flat = x.reshape(-1)
    lo = torch.full((), float(min), dtype=x.dtype, device=x.device)
    hi = torch.full((), float(max), dtype=x.dtype, device=x.device)
    if min == max:
        lo, hi = flat.amin(), flat.amax()
        same = lo == hi
        lo, hi = torch.where(same, lo - 1, lo), torch.where(same, hi + 1, hi)
    inside = (flat >= lo) & (flat <= hi)
    pos = ((flat - lo) * bins / (hi - lo)).to(torch.int64)
    pos = torch.where(pos == bins, pos - 1, pos)
    hit = (pos.unsqueeze(-1) == torch.arange(bins, device=x.device)) & inside.unsqueeze(-1)
    return hit.sum(0).to(x.dtype)


def block_diag(tensors):
    """Each tensor (a matrix, a row for 0-d and 1-d) padded to the total width at its place,
    then stacked: the cat of the padded rows."""
    mats = [t.reshape(1, -1) if t.dim() < 2 else t for t in tensors]
    dtype = mats[0].dtype
    for t in mats[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    width = sum(t.shape[1] for t in mats)
    rows, at = [], 0
    for t in mats:
        rows.append(torch.nn.functional.pad(t.to(dtype), (at, width - at - t.shape[1])))
        at += t.shape[1]
    return torch.cat(rows, 0)


def _reduced(loss, reduction):
    return loss.mean() if reduction == 1 else loss.sum() if reduction == 2 else loss


def multi_margin_loss(x, target, p=1, margin=1, weight=None, reduction=1):
    """sum over j != y of max(0, margin - x[y] + x[j])^p (times weight[y]) / C per row."""
    rows = x if x.dim() == 2 else x.reshape(1, -1)
    t = target.reshape(-1, 1)
    picked = rows.gather(1, t)
    z = torch.clamp(margin - picked + rows, min=0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight[target.reshape(-1)].unsqueeze(1)
    others = torch.arange(rows.shape[1], device=x.device) != t
    loss = torch.where(others, z, torch.zeros_like(z)).sum(1) / rows.shape[1]
    loss = loss if x.dim() == 2 else loss.reshape(())
    return _reduced(loss, reduction)


def multilabel_margin_loss_forward(x, target, reduction=1):
    """The targets of a row are its entries before the first -1; the loss sums max(0, 1 -
    (x[j] - x[k])) over target j and non-target k, over C. Returns (loss, is_target)."""
    rows = x if x.dim() == 2 else x.reshape(1, -1)
    t = target.reshape(rows.shape)
    valid = torch.cumprod((t >= 0).to(torch.int64), 1) > 0
    safe = torch.where(valid, t, torch.zeros_like(t))
    classes = torch.arange(rows.shape[1], device=x.device)
    is_target = ((safe.unsqueeze(2) == classes) & valid.unsqueeze(2)).any(1)
    picked = rows.gather(1, safe)
    z = torch.clamp(1 - picked.unsqueeze(2) + rows.unsqueeze(1), min=0)
    keep = valid.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = torch.where(keep, z, torch.zeros_like(z)).sum((1, 2)) / rows.shape[1]
    loss = loss if x.dim() == 2 else loss.reshape(())
    return _reduced(loss, reduction), is_target.to(x.dtype).reshape(x.shape)


def max_unpool(x, indices, output_size, stride=None, padding=None):
    """max_unpool1d/2d/3d: zeros of output_size with x's values scattered to the flat spatial
    indices (the scatter is PyTorch's, which the converter writes without a scatter op)."""
    n = len(output_size)
    lead = list(x.shape[:x.dim() - n])
    total = 1
    for e in output_size:
        total *= e
    out = x.new_zeros(lead + [total])
    out = out.scatter(-1, indices.reshape(lead + [-1]), x.reshape(lead + [-1]))
    return out.reshape(lead + list(output_size))


def convert_element_type(x, dtype):
    """prims.convert_element_type, which PyTorch 1.13's own decompositions (torch._refs: leaky
    ReLU, hardtanh, softplus, ... of 16-bit floats, ints and bools) call: an ATen cast."""
    return x.to(dtype)


def table():
    """{op overload: decomposition} for the ops above."""
    norm_like = ("default", "Scalar", "ScalarOpt_dim", "ScalarOpt_dtype", "ScalarOpt_dim_dtype")
    boolean = ("default", "dim", "dims")
    by_dim = ("default", "dim", "dim_IntList")
    search = ("Tensor", "Scalar")
    one = ("default",)
    out = overload_table([
        ("linalg_vector_norm", linalg_vector_norm, norm_like), ("norm", norm, norm_like),
        ("nan_to_num", nan_to_num, norm_like), ("softshrink", softshrink, norm_like),
        ("hardshrink", hardshrink, norm_like),
        ("full", full, one), ("renorm", renorm, one), ("smooth_l1_loss", smooth_l1_loss, one),
        ("huber_loss", huber_loss, one), ("affine_grid_generator", affine_grid_generator, one),
        ("any", any_, boolean), ("all", all_, boolean), ("nansum", nansum, boolean),
        ("fmax", fmax, one), ("fmin", fmin, one), ("dist", dist, one),
        ("aminmax", aminmax, one), ("linspace", linspace, one),
        ("max_unpool2d", max_unpool, one), ("max_unpool3d", max_unpool, one),
        ("linalg_cross", linalg_cross, one), ("kthvalue", kthvalue, one),
        ("histc", histc, one), ("block_diag", block_diag, one),
        ("multi_margin_loss", multi_margin_loss, one),
        ("multilabel_margin_loss_forward", multilabel_margin_loss_forward, one),
        ("count_nonzero", count_nonzero, by_dim), ("median", median, by_dim),
        ("nanmedian", nanmedian, by_dim),
        ("bucketize", bucketize, search), ("searchsorted", searchsorted, search),
        ("logsumexp", logsumexp, one), ("mish", mish, one),
        ("_trilinear", trilinear, one), ("channel_shuffle", channel_shuffle, one),
        ("addr", addr, one), ("rrelu_with_noise", rrelu_with_noise, one),
        ("trace", trace, one), ("diag", diag, one), ("diag_embed", diag_embed, one),
        ("rot90", rot90, one),
    ])
    prims = getattr(torch.ops, "prims", None)
    if prims is not None and hasattr(prims, "convert_element_type"):
        out[prims.convert_element_type.default] = convert_element_type
    out.update(_decomp_elementwise.entries())
    out.update(_decomp_indexing.entries())
    from torch._decomp import decomposition_table
    if torch.ops.aten.grid_sampler_2d.default in decomposition_table:
        out[torch.ops.aten.grid_sampler_2d.default] = grid_sampler_2d
    return out
