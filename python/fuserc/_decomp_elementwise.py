"""Owns fuserc's decompositions of elementwise math that PyTorch 1.13 leaves as ATen ops of its
own (or gives as `prims.*`): logaddexp(2), hypot, heaviside, deg2rad and rad2deg, sinc,
copysign, isposinf and isneginf, angle of a real tensor, special.xlog1py and special.entr.
Each follows PyTorch's CPU kernel case by case (NaN, zeros, infinities, the sign of zero); ints
and bools promote to the default float as PyTorch's do; 16-bit floats are computed in f32 and
rounded once, as PyTorch's kernels compute them. `entries()` gives {op overload: function} for
_decomp.table() (`_overloads.py` builds it). Imports only that of fuserc."""
import math

import torch

from ._overloads import overload_table

_HALF = (torch.float16, torch.bfloat16)


def _to_float(x):
    """x as the float dtype an int-to-float op returns: its own if floating, else the default."""
    return x if x.is_floating_point() else x.to(torch.get_default_dtype())


def _opmath(x):
    """(x in the dtype to compute in, the dtype of the result): f32 for 16-bit floats."""
    x = _to_float(x)
    return (x.to(torch.float32), x.dtype) if x.dtype in _HALF else (x, x.dtype)


def logaddexp(a, b):
    """log(exp(a) + exp(b)) as PyTorch computes it: the larger plus log1p(exp(-|a - b|)), and
    a itself where both are the same infinity."""
    r = torch.maximum(a, b) + torch.log1p(torch.exp(-(a - b).abs()))
    return torch.where(torch.isinf(a) & (a == b), a, r)


def logaddexp2(a, b):
    r = torch.maximum(a, b) + torch.log1p(torch.exp2(-(a - b).abs())) * (1 / math.log(2))
    return torch.where(torch.isinf(a) & (a == b), a, r)


def hypot(a, b):
    """sqrt(a^2 + b^2) without overflow: in f64 for narrower floats (one rounding at the end),
    scaled by the larger magnitude for f64; +inf where either is infinite, NaN or not."""
    dtype = torch.result_type(a, b)
    if dtype != torch.float64:
        a, b = a.to(torch.float64), b.to(torch.float64)
        r = torch.sqrt(a * a + b * b)
        # An infinite side gives +inf even beside a NaN (C's hypot).
        return torch.where(torch.isinf(a) | torch.isinf(b), torch.full_like(r, math.inf),
                           r).to(dtype)
    a, b = a.abs(), b.abs()
    big, small = torch.maximum(a, b), torch.minimum(a, b)
    q = torch.where(big > 0, small / big, torch.zeros_like(big))
    r = big * torch.sqrt(1 + q * q)
    return torch.where(torch.isinf(a) | torch.isinf(b), torch.full_like(r, math.inf), r)


def heaviside(x, values):
    """0 where x < 0 (or NaN), `values` where x == 0, 1 where x > 0."""
    dtype = torch.result_type(x, values)
    return torch.where(x == 0, values.to(dtype), (x > 0).to(dtype))


def deg2rad(x):
    """x * pi/180 (PyTorch's constant, rounded to the dtype as its kernel's scalar is)."""
    return _to_float(x) * 0.017453292519943295


def rad2deg(x):
    return _to_float(x) * 57.295779513082320876798154814105


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (NaN stays NaN). For 16-bit floats each step is rounded to the
    dtype, pi too, as PyTorch's CPU kernel computes them in the dtype (near the integers, where
    sin(pi x) nearly cancels, computing in f32 would differ from it in every digit)."""
    x = _to_float(x)
    if x.dtype in _HALF:
        dtype, f32 = x.dtype, torch.float32
        pi = float(torch.tensor(math.pi, dtype=dtype))
        a = (x.to(f32) * pi).to(dtype).to(f32)
        s = torch.sin(a).to(dtype).to(f32)
        return torch.where(x == 0, torch.ones_like(a), s / a).to(dtype)
    a = x * math.pi
    return torch.where(x == 0, torch.ones_like(a), torch.sin(a) / a)


def copysign(a, b):
    """|a| with the sign bit of b (so -0.0 and a negative NaN count as negative)."""
    if not isinstance(b, torch.Tensor):
        mag = _to_float(a).abs()
        return -mag if math.copysign(1.0, float(b)) < 0 else mag
    dtype = torch.result_type(a, b)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    mag = a.to(dtype).abs()
    return torch.where(torch.signbit(b), -mag, mag)


def isposinf(x):
    if not x.is_floating_point():
        return torch.zeros_like(x, dtype=torch.bool)
    return x == math.inf


def isneginf(x):
    if not x.is_floating_point():
        return torch.zeros_like(x, dtype=torch.bool)
    return x == -math.inf


def angle(x):
    """The argument of a real number: pi for negatives, 0 otherwise (NaN stays NaN)."""
    if x.is_complex():
        return NotImplemented
    x = _to_float(x)
    r = torch.where(x < 0, torch.full_like(x, math.pi), torch.zeros_like(x))
    return torch.where(torch.isnan(x), x, r)


def xlog1py(x, y):
    """x * log1p(y); 0 where x == 0 unless y is NaN (NaN there), as PyTorch's kernel."""
    dtype = torch.result_type(x, y)
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    work = torch.float32 if dtype in _HALF else dtype
    x = x.to(work) if isinstance(x, torch.Tensor) else torch.tensor(x, dtype=work)
    y = y.to(work) if isinstance(y, torch.Tensor) else torch.tensor(y, dtype=work)
    r = torch.where(x == 0, torch.zeros_like(x * y), x * torch.log1p(y))
    return torch.where(torch.isnan(y), y.expand_as(r), r).to(dtype)


def entr(x):
    """-x log x for x > 0, 0 at 0, -inf below, NaN for NaN."""
    x, dtype = _opmath(x)
    r = torch.where(x > 0, -x * torch.log(x),
                    torch.where(x == 0, torch.zeros_like(x), torch.full_like(x, -math.inf)))
    return torch.where(torch.isnan(x), x, r).to(dtype)


def entries():
    """{op overload: decomposition} for the ops above that the running PyTorch has."""
    return overload_table((
        ("logaddexp", logaddexp, ("default",)), ("logaddexp2", logaddexp2, ("default",)),
        ("hypot", hypot, ("default",)), ("heaviside", heaviside, ("default",)),
        ("deg2rad", deg2rad, ("default",)), ("rad2deg", rad2deg, ("default",)),
        ("sinc", sinc, ("default",)), ("copysign", copysign, ("Tensor", "Scalar")),
        ("isposinf", isposinf, ("default",)), ("isneginf", isneginf, ("default",)),
        ("angle", angle, ("default",)), ("special_entr", entr, ("default",)),
        ("special_xlog1py", xlog1py, ("default", "self_scalar", "other_scalar"))))
