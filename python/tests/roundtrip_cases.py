"""The functions the round-trip tests export, compile and call (on CPU tensors in
test_roundtrip.py, on CUDA tensors in gpu_check.py): each with example inputs, its symbolic
extents, the sizes it is called at afterwards, and how its results are compared with PyTorch's
(to the dtype's tolerance; random ops by shape and statistics only)."""
import torch
import torch.nn.functional as F

BF16 = torch.bfloat16


def softmax(x):
    return torch.softmax(x, dim=-1)


def layer_norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps=1e-5)


def rms_norm(x, w, eps: float):
    xf = x.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return y.to(x.dtype) * w


def gelu_bias(x, b):
    return F.gelu(x + b, approximate="tanh")


def swiglu(x):
    a, b = x.chunk(2, dim=-1)
    return F.silu(a) * b


def rope(q, cos, sin):
    half = q.shape[-1] // 2
    x1, x2 = q[..., :half], q[..., half:]
    rotated = torch.cat((-x2, x1), dim=-1)
    return q * cos[None, :, None, :] + rotated * sin[None, :, None, :]


def residual_scale(x, residual, scale: float):
    h = x + residual
    return h * scale, h


def adam_step(p, g, m, v, lr: float, beta1: float, beta2: float, eps: float, bc1: float,
              bc2: float):
    m.mul_(beta1).add_(g * (1 - beta1))
    v.mul_(beta2).add_(g * g * (1 - beta2))
    denom = (v / bc2).sqrt().add_(eps)
    p.sub_(lr * (m / bc1) / denom)


def cross_entropy(logits, target):
    x = logits.float()
    picked = x.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    return torch.logsumexp(x, dim=-1) - picked


def dropout_noise(x):
    return F.dropout(x, p=0.25, training=True), torch.randn_like(x) * 2.0 + 1.0


def _close(got, want):
    torch.testing.assert_close(got, want)


def _close_loose(got, want):
    # bf16 results rounded once here but after every op in PyTorch's eager mode (and the fused
    # f32 computation differs from eager's order): a few bf16 ulps.
    torch.testing.assert_close(got.float(), want.float(), rtol=2e-2, atol=2e-2)


def _check_random(got, want, inputs):
    (y, noise), (y_ref, noise_ref) = got, want
    x = inputs[0]
    assert y.shape == y_ref.shape and y.dtype == y_ref.dtype
    assert noise.shape == noise_ref.shape and noise.dtype == noise_ref.dtype
    # The package draws fresh random numbers on every call, so bound each statistic by six
    # standard errors of its estimate at this sample size (a false failure ~1 in 10^8).
    n = x.numel()
    kept = y != 0
    frac = kept.float().mean().item()
    frac_tol = 6 * (0.75 * 0.25 / n) ** 0.5
    assert abs(frac - 0.75) < frac_tol, f"dropout kept {frac:.3f} of {n} elements, want 0.75"
    torch.testing.assert_close(y[kept], (x / 0.75)[kept])
    mean, std = noise.float().mean().item(), noise.float().std().item()
    mean_tol, std_tol = 6 * 2.0 / n ** 0.5, 6 * 2.0 / (2 * (n - 1)) ** 0.5
    assert abs(mean - 1.0) < mean_tol and abs(std - 2.0) < std_tol, \
        f"randn*2+1 over {n} elements: mean {mean}, std {std}"


def _inputs(device, seed=0):
    g = torch.Generator().manual_seed(seed)

    def r(*shape, dtype=torch.float32, positive=False):
        t = torch.rand(*shape, generator=g) if positive else torch.randn(*shape, generator=g)
        return t.to(dtype).to(device)
    return r


CASES = [
    dict(name="softmax", fn=softmax, dynamic={"x": {0: "N"}}, sizes=[{"N": 37}, {"N": 5}],
         inputs=lambda r, s: (r(s["N"], 300),), check=_close),
    dict(name="layer_norm", fn=layer_norm, dynamic={"x": {0: "N"}}, sizes=[{"N": 33}, {"N": 2}],
         inputs=lambda r, s: (r(s["N"], 256, dtype=BF16), r(256, dtype=BF16),
                              r(256, dtype=BF16)), check=_close_loose),
    dict(name="rms_norm", fn=rms_norm, dynamic={"x": {0: "N"}}, sizes=[{"N": 19}, {"N": 64}],
         inputs=lambda r, s: (r(s["N"], 512, dtype=BF16), r(512, dtype=BF16), 1e-6),
         check=_close_loose),
    dict(name="gelu_bias", fn=gelu_bias, dynamic={"x": {0: "N"}}, sizes=[{"N": 24}, {"N": 7}],
         inputs=lambda r, s: (r(s["N"], 128, dtype=BF16), r(128, dtype=BF16)),
         check=_close_loose),
    dict(name="swiglu", fn=swiglu, dynamic={"x": {0: "N"}}, sizes=[{"N": 10}, {"N": 3}],
         inputs=lambda r, s: (r(s["N"], 2 * 96),), check=_close),
    dict(name="rope", fn=rope, dynamic={"q": {0: "B", 1: "S"}, "cos": {0: "S"}, "sin": {0: "S"}},
         sizes=[{"B": 2, "S": 9}, {"B": 3, "S": 4}],
         inputs=lambda r, s: (r(s["B"], s["S"], 4, 64, dtype=BF16), r(s["S"], 64, dtype=BF16),
                              r(s["S"], 64, dtype=BF16)), check=_close_loose),
    dict(name="residual_scale", fn=residual_scale, dynamic={"x": {0: "N"}, "residual": {0: "N"}},
         sizes=[{"N": 21}, {"N": 1}],
         inputs=lambda r, s: (r(s["N"], 64), r(s["N"], 64), 0.5), check=_close),
    dict(name="adam_step", fn=adam_step, dynamic={n: {0: "N"} for n in "pgmv"},
         sizes=[{"N": 1000}, {"N": 77}], in_place=(0, 2, 3),
         inputs=lambda r, s: (r(s["N"]), r(s["N"]), r(s["N"]), r(s["N"], positive=True),
                              1e-3, 0.9, 0.999, 1e-8, 0.1, 0.001), check=_close),
    dict(name="cross_entropy", fn=cross_entropy, dynamic={"logits": {0: "N"}, "target": {0: "N"}},
         sizes=[{"N": 33}, {"N": 4}],
         inputs=lambda r, s: (r(s["N"], 1000, dtype=BF16),
                              (r(s["N"], positive=True) * 1000).long().clamp_(0, 999)),
         check=_close),
    dict(name="dropout_noise", fn=dropout_noise, dynamic={"x": {0: "N"}},
         sizes=[{"N": 64}, {"N": 50}], inputs=lambda r, s: (r(s["N"], 128),),
         check=_check_random, random=True),
]


def make_inputs(case, sizes, device, seed=0):
    return case["inputs"](_inputs(device, seed), sizes)


def clone_inputs(inputs):
    return tuple(t.clone() if isinstance(t, torch.Tensor) else t for t in inputs)


def run_case(fuserc, case, device, arch=None, tracer=None):
    """Exports and compiles the case, calls the package at each of its sizes on `device`, and
    checks the results against PyTorch's (raising AssertionError). Returns the package."""
    example = make_inputs(case, case["sizes"][0], "cpu")
    pkg = fuserc.compile(case["fn"], example, dynamic=case["dynamic"], arch=arch, tracer=tracer)
    for k, sizes in enumerate(case["sizes"]):
        inputs = make_inputs(case, sizes, device, seed=k + 1)
        ours, ref = clone_inputs(inputs), clone_inputs(inputs)
        got = pkg(*ours)
        want = case["fn"](*ref)
        if case.get("random"):
            case["check"](got, want, inputs)
            continue
        if want is None:
            assert got is None, f"{case['name']}: returned {type(got)}, want None"
        elif isinstance(want, tuple):
            assert isinstance(got, tuple) and len(got) == len(want)
            for g, w in zip(got, want):
                case["check"](g, w)
        else:
            case["check"](got, want)
        for i in case.get("in_place", ()):
            case["check"](ours[i], ref[i])
    return pkg
