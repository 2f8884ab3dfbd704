"""Owns fuserc's decompositions of indexing ops that PyTorch 1.13 leaves as ATen ops of their
own: take (a flat index_select), narrow_copy (a slice), select_scatter, slice_scatter and
diagonal_scatter (a `where` between the tensor and the source placed by an iota comparison, so
symbolic extents stay symbols), isin (an equality with every test element, then `any`) and vdot
of real vectors (a product summed). `entries()` gives {op overload: function} for
_decomp.table() (`_overloads.py` builds it). Imports only that of fuserc."""
import torch

from ._overloads import overload_table

_HALF = (torch.float16, torch.bfloat16)


def _along(mask, dim, rank):
    """A 1-d mask over one dim, shaped to broadcast along `dim` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[dim] = -1
    return mask.reshape(shape)


def take(x, index):
    """x.flatten()[index], an index of any shape; negative indices count from the end."""
    flat = x.reshape(-1)
    idx = index.reshape(-1)
    idx = torch.where(idx < 0, idx + flat.shape[0], idx)
    return flat.index_select(0, idx).reshape(index.shape)


def narrow_copy(x, dim, start, length):
    return x.narrow(dim, start, length).clone()


def select_scatter(x, src, dim, index):
    """x with x.select(dim, index) replaced by src."""
    dim = dim % x.dim()
    n = x.shape[dim]
    if index < 0:
        index = index + n
    at = _along(torch.arange(n, device=x.device) == index, dim, x.dim())
    return torch.where(at, src.to(x.dtype).unsqueeze(dim), x)


def slice_scatter(x, src, dim=0, start=None, end=None, step=1):
    """x with x[start:end:step] along dim replaced by src: position i takes src[(i - start) /
    step] where it is one of the slice's."""
    dim = dim % x.dim()
    n = x.shape[dim]
    start = 0 if start is None else start
    end = n if end is None else end
    start = start + n if start < 0 else start
    end = end + n if end < 0 else end
    start, end = max(0, min(start, n)), max(0, min(end, n))
    i = torch.arange(n, device=x.device)
    offset = i - start
    inside = (i >= start) & (i < end) & (offset % step == 0)
    j = torch.where(inside, torch.div(offset, step, rounding_mode="floor"), torch.zeros_like(i))
    placed = src.to(x.dtype).index_select(dim, j)
    return torch.where(_along(inside, dim, x.dim()), placed, x)


def diagonal_scatter(x, src, offset=0, dim1=0, dim2=1):
    """x with its diagonal `offset` of dims dim1, dim2 replaced by src (whose last dim runs
    along the diagonal): the two dims moved last, src placed on the diagonal, moved back."""
    rank = x.dim()
    dim1, dim2 = dim1 % rank, dim2 % rank
    moved = x.movedim((dim1, dim2), (-2, -1))
    rows, cols = moved.shape[-2], moved.shape[-1]
    r = torch.arange(rows, device=x.device).unsqueeze(-1)
    c = torch.arange(cols, device=x.device)
    on = c - r == offset
    # Row r holds src[r] on a diagonal above the main one, column c holds src[c] below it.
    k = r if offset >= 0 else c
    k = torch.where(on, k, torch.zeros_like(k)).expand(on.shape).reshape(-1)
    lead = list(src.shape[:-1])
    placed = src.to(x.dtype).index_select(-1, k).reshape(lead + list(on.shape))
    out = torch.where(on, placed, moved)
    return out.movedim((-2, -1), (dim1, dim2))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element equals one of test_elements (NaN equals nothing)."""
    if not isinstance(elements, torch.Tensor):
        elements = torch.tensor(elements, device=test_elements.device)
    if not isinstance(test_elements, torch.Tensor):
        test_elements = torch.tensor(test_elements, device=elements.device)
    found = (elements.unsqueeze(-1) == test_elements.reshape(-1)).any(-1)
    return ~found if invert else found


def vdot(a, b):
    """The dot product of two real vectors (conjugation is a no-op), summed in f32 for 16-bit
    floats as PyTorch's kernel accumulates."""
    if a.is_complex() or b.is_complex():
        return NotImplemented
    if a.dtype in _HALF:
        return (a.to(torch.float32) * b.to(torch.float32)).sum().to(a.dtype)
    return (a * b).sum()


def entries():
    """{op overload: decomposition} for the ops above that the running PyTorch has."""
    return overload_table((
        ("take", take, ("default",)), ("narrow_copy", narrow_copy, ("default",)),
        ("select_scatter", select_scatter, ("default",)),
        ("slice_scatter", slice_scatter, ("default",)),
        ("diagonal_scatter", diagonal_scatter, ("default",)),
        ("isin", isin, ("Tensor_Tensor", "Tensor_Scalar", "Scalar_Tensor")),
        ("vdot", vdot, ("default",))))
