"""Owns the patches of PyTorch's Python-level functions while tracing (`PythonOps`): ops that
are CompositeImplicitAutograd, which PyTorch decomposes in C++ before make_fx sees them (so an
entry of a decomposition table would not be used), into data-dependent ops or ones the contract
cannot hold: x.repeat_interleave(int), F.one_hot with num_classes, torch.cdist, F.pad in
circular mode (and circular convolutions), F.embedding_bag, F.gaussian_nll_loss and
F.cross_entropy with class weights and label smoothing. Each is written here in ops the
converter reads; any other call is PyTorch's. _trace.py enters PythonOps around make_fx.
Imports nothing of fuserc."""
import inspect
import math

import torch


def repeat_interleave(x, repeats, dim=None, *, output_size=None):
    """x.repeat_interleave(int, dim) (mistral's repeat_kv, GPT-J): each element `repeats`
    times along dim (the flattened x where dim is None), by unsqueeze, expand and reshape
    (PyTorch 1.13 computes it through the data-dependent repeat_interleave.Tensor)."""
    if dim is None:
        x, dim = x.reshape(-1), 0
    dim = dim % x.dim() if x.dim() else 0
    if x.dim() == 0:
        x = x.reshape(1)
    shape = list(x.shape)
    wide = shape[:dim + 1] + [repeats] + shape[dim + 1:]
    shape[dim] = shape[dim] * repeats
    return x.unsqueeze(dim + 1).expand(wide).reshape(shape)


def one_hot(t, num_classes=-1):
    """F.one_hot with a given number of classes: t compared with an arange (PyTorch 1.13 reads
    t's values to check their range, which a trace cannot)."""
    return (t.unsqueeze(-1) == torch.arange(num_classes, device=t.device)).long()


def cdist(x1, x2, p=2.0, compute_mode=None):
    """torch.cdist as differences of every pair of rows (PyTorch 1.13's fake tensors fail in
    its meta function): [..., P, M] and [..., R, M] to [..., P, R]."""
    d = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (d != 0).sum(-1).to(x1.dtype)
    if p == math.inf:
        return d.abs().amax(-1)
    if p == 1:
        return d.abs().sum(-1)
    if p == 2:
        return (d * d).sum(-1).sqrt()
    return d.abs().pow(p).sum(-1).pow(1.0 / p)


def circular_pad(x, pad):
    """F.pad(x, pad, mode="circular") (and a convolution's padding_mode="circular") as crops
    and a cat of wrapped slices per dim, as PyTorch computes it: negative pads crop first, then
    each side takes that many elements from the other end (PyTorch 1.13 writes slices of a
    torch.empty instead, which a graph cannot express). None where PyTorch would refuse or
    wrap more than once, so that PyTorch's own call says why."""
    pad = list(pad)
    if len(pad) % 2 or not pad or not all(isinstance(p, int) for p in pad) or \
            x.dim() != len(pad) // 2 + 2 or len(pad) > 6:
        return None  # (an unbatched input too: PyTorch 1.13 refuses it)
    for k in range(len(pad) // 2):
        d = x.dim() - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        n = x.shape[d]
        if left < 0:
            x, n = x.narrow(d, -left, n + left), n + left
        if right < 0:
            x, n = x.narrow(d, 0, n + right), n + right
        left, right = max(left, 0), max(right, 0)
        if n <= 0 or left > n or right > n:
            return None
        pieces = ([x.narrow(d, n - left, left)] if left else []) + [x] + \
            ([x.narrow(d, 0, right)] if right else [])
        if len(pieces) > 1:
            x = torch.cat(pieces, d)
    return x


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """F.embedding_bag (nn.EmbeddingBag) as an embedding and a reduction per bag: over the
    bag dim where the input is [B, L] (fixed bags), or for 1-d indices with `offsets`, a
    one-hot of each index's bag (bag b holds positions offsets[b] <= j < offsets[b + 1])
    times the rows, a product (sum, mean) or a masked amax (max). Entries at padding_idx are
    left out and not counted; an empty bag is 0. None where PyTorch would refuse, or with
    max_norm (which renormalizes the weight in place), so that PyTorch's own call decides."""
    if max_norm is not None or mode not in ("sum", "mean", "max") or weight.dim() != 2 or \
            (per_sample_weights is not None and mode != "sum"):
        return None
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if input.dim() == 2 and offsets is None:
        rows = torch.nn.functional.embedding(input, weight)  # [B, L, D]
        keep = None if padding_idx is None else input != padding_idx
        if per_sample_weights is not None:
            rows = rows * per_sample_weights.unsqueeze(-1).to(rows.dtype)
        zero = torch.zeros((), dtype=rows.dtype, device=rows.device)
        if mode == "max":
            filler = torch.full((), -math.inf, dtype=rows.dtype, device=rows.device)
            picked = rows if keep is None else torch.where(keep.unsqueeze(-1), rows, filler)
            out = picked.amax(1)
            return out if keep is None else torch.where(keep.any(1, keepdim=True), out, zero)
        total = (rows if keep is None else torch.where(keep.unsqueeze(-1), rows, zero)).sum(1)
        if mode == "sum":
            return total
        count = input.shape[1] if keep is None else keep.sum(1, keepdim=True).clamp(min=1)
        return total / count
    if input.dim() != 1 or offsets is None or offsets.dim() != 1:
        return None
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    starts = offsets[:bags] if include_last_offset else offsets
    at = torch.arange(input.shape[0], device=input.device)
    bag = (starts.unsqueeze(0) <= at.unsqueeze(1)).sum(1) - 1  # [n]
    member = bag.unsqueeze(0) == torch.arange(bags, device=input.device).unsqueeze(1)  # [B, n]
    if padding_idx is not None:
        member = member & (input != padding_idx).unsqueeze(0)
    rows = torch.nn.functional.embedding(input, weight)  # [n, D]
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(-1).to(rows.dtype)
    if mode == "max":
        filler = torch.full((), -math.inf, dtype=rows.dtype, device=rows.device)
        out = torch.where(member.unsqueeze(-1), rows.unsqueeze(0), filler).amax(1)
        return torch.where(member.any(1, keepdim=True), out,
                           torch.zeros((), dtype=rows.dtype, device=rows.device))
    total = torch.matmul(member.to(rows.dtype), rows)
    if mode == "sum":
        return total
    return total / member.sum(1, keepdim=True).clamp(min=1).to(rows.dtype)


def _instead(own):
    """A wrapper of PyTorch's function `original` that calls `own` (same parameters) first and
    PyTorch's where `own` gives None or cannot take the arguments."""
    def wrap(original):
        def call(*args, **kwargs):
            try:
                bound = inspect.signature(own).bind(*args, **kwargs)
            except TypeError:
                return original(*args, **kwargs)
            if not bound.args or not isinstance(bound.args[0], torch.Tensor):
                return original(*args, **kwargs)
            out = own(*bound.args, **bound.kwargs)
            return original(*args, **kwargs) if out is None else out
        return call
    return wrap


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """F.gaussian_nll_loss as PyTorch writes it, without its check that no variance is
    negative (a data-dependent branch a graph cannot hold): such a variance is clamped to
    eps like a small one, where PyTorch raises. None where PyTorch refuses the sizes."""
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            return None
    if reduction not in ("none", "mean", "sum"):
        return None
    var = var.clamp(min=eps)
    loss = 0.5 * (torch.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """F.cross_entropy with class weights, label smoothing and the mean, as PyTorch computes
    it, the weights of the targets summed by a gather with the ignored masked (PyTorch 1.13
    takes a masked_select for tensors that are not subclasses). None for other cases."""
    if weight is None or not label_smoothing > 0 or reduction != "mean" or \
            size_average is not None or reduce is not None or target.is_floating_point():
        return None
    f = torch.nn.functional
    class_dim = 1 if input.dim() >= 2 else 0
    logp = f.log_softmax(input, class_dim)
    nll = f.nll_loss(logp, target, weight, ignore_index=ignore_index, reduction="mean")
    ignore = target == ignore_index
    shape = [1] * input.dim()
    shape[class_dim] = weight.shape[0]
    smooth = (-(logp * weight.view(shape)).sum(class_dim)).masked_fill(ignore, 0.0)
    picked = weight.gather(0, target.masked_fill(ignore, 0).reshape(-1)).view(target.shape)
    ret = smooth.sum() / picked.masked_fill(ignore, 0.0).sum()
    return (1 - label_smoothing) * nll + ret * (label_smoothing / input.shape[class_dim])


def pad(input, pad, mode="constant", value=None):
    """F.pad in circular mode (`circular_pad`); None for the other modes, PyTorch's own."""
    return circular_pad(input, pad) if mode == "circular" else None


class PythonOps:
    """While tracing: torch.repeat_interleave and Tensor.repeat_interleave with an int count
    are `repeat_interleave` above; F.one_hot with num_classes given and torch.cdist are
    `one_hot` and `cdist` above; F.pad in circular mode is `circular_pad`; F.embedding_bag,
    F.gaussian_nll_loss and F.cross_entropy (weights with label smoothing) are the functions
    of those names above. (An entry of
    make_fx's decomposition table would not be used: the op is CompositeImplicitAutograd,
    which PyTorch 1.13 decomposes in C++ before the tracer sees it, into the data-dependent
    repeat_interleave.Tensor.) Any other call is
    PyTorch's."""

    def __enter__(self):
        self.saved = [(torch, "repeat_interleave", torch.repeat_interleave,
                       "repeat_interleave" in vars(torch)),
                      (torch.Tensor, "repeat_interleave", torch.Tensor.repeat_interleave,
                       "repeat_interleave" in vars(torch.Tensor))]
        for owner, name, original, _ in self.saved:
            setattr(owner, name, _int_repeats(original))
        functional = torch.nn.functional
        more = [(functional, "one_hot", functional.one_hot, "one_hot" in vars(functional)),
                (torch, "cdist", torch.cdist, "cdist" in vars(torch))]
        for owner, name, original, _ in more:
            setattr(owner, name, _replaced(name, original))
        for name, wrap in (("pad", _instead(pad)), ("embedding_bag", _instead(embedding_bag)),
                           ("gaussian_nll_loss", _instead(gaussian_nll_loss)),
                           ("cross_entropy", _instead(cross_entropy))):
            more.append((functional, name, getattr(functional, name), name in vars(functional)))
            setattr(functional, name, wrap(getattr(functional, name)))
        self.saved += more
        return self

    def __exit__(self, *exc):
        for owner, name, original, own in self.saved:
            if own:
                setattr(owner, name, original)
            else:
                delattr(owner, name)


def _replaced(name, original):
    def call(*args, **kwargs):
        if name == "one_hot":
            t = args[0] if args else kwargs.get("tensor", kwargs.get("input"))
            n = args[1] if len(args) > 1 else kwargs.get("num_classes", -1)
            if isinstance(t, torch.Tensor) and isinstance(n, int) and n > 0:
                return one_hot(t, n)
            return original(*args, **kwargs)
        try:
            return cdist(*args, **kwargs)
        except TypeError:
            return original(*args, **kwargs)
    return call


def _int_repeats(original):
    def call(*args, **kwargs):
        # torch.repeat_interleave(input, repeats, dim) or x.repeat_interleave(repeats, dim),
        # each argument positional or by name (`input` / `self`).
        rest = dict(kwargs)
        pos = list(args)
        x = pos.pop(0) if pos else rest.pop("input", rest.pop("self", None))
        repeats = pos.pop(0) if pos else rest.pop("repeats", None)
        dim = pos.pop(0) if pos else rest.pop("dim", None)
        if isinstance(x, torch.Tensor) and isinstance(repeats, int) and \
                not isinstance(repeats, bool) and not pos and set(rest) <= {"output_size"}:
            return repeat_interleave(x, repeats, dim)
        return original(*args, **kwargs)
    return call
