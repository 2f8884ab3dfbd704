#!/usr/bin/python3
"""Writes random fusion graphs around the contract's library ops (FUSION_FORMAT.md):
matmul (every rank combination, 1-D operands, batch broadcasting), linear (with/without bias),
conv (1-3 spatial dims, stride/padding/dilation/groups/depthwise, transposed with
output_padding, bias, channels-last strided inputs), scaled_dot_product_attention (causal, bool
and additive masks, scale, GQA, head broadcasting, L != S), with elementwise pre/post ops
(bias, gelu, residual add, casts), reductions, reshapes with extent expressions
([B*S, D] -> [B, S, D]), symbols with min 0, size literals, small constant tensors (`data`)
and scalar inputs that set a symbol.

    /usr/bin/python3 scripts/random_library_graphs.py --out DIR [--count N] [--seed S]
    /usr/bin/python3 ../shared/tools/check_corpus.py --fuserc build/cmd/fuserc DIR

The companion of scripts/random_graphs.py (elementwise ops, reductions, views, indexing) for
differential testing of library steps: its first campaign (2026-11-28, 780 graphs at 5-6
bindings each, edge sizes 0, 1, 7, 33, 65) found the products written in place into their own
operands or through an input's strides (core/passes/library_out_of_place.cc). Deterministic
for a seed. Beside the graphs it writes DIR/features.json.txt: graph -> features used.
"""
import json
import math
import os
import random

from random_graphs import write_graphs

LOWP = ["f16", "bf16", "f32"]


def par(e):
    """An extent as a sub-expression."""
    if isinstance(e, int):
        return str(e)
    return e if e.isidentifier() else f"({e})"


def mul_ext(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a * b
    if a == 1:
        return b
    if b == 1:
        return a
    return f"{par(a)}*{par(b)}"


def conv_out(h, k, s, p, d, transposed=False, op=0):
    def plus(c):
        return "" if c == 0 else (f"+{c}" if c > 0 else f"-{-c}")
    if transposed:
        if isinstance(h, int):
            return (h - 1) * s - 2 * p + d * (k - 1) + op + 1
        return f"({h}-1)*{s}{plus(d * (k - 1) + op + 1 - 2 * p)}"
    if isinstance(h, int):
        return (h + 2 * p - d * (k - 1) - 1) // s + 1
    return f"({h}{plus(2 * p - d * (k - 1) - 1)})//{s}+1"


class Gen:
    def __init__(self, rnd, index):
        self.r = rnd
        self.name = f"lib_{index:07d}"
        self.symbols = {}
        self.inputs = []
        self.ops = []
        self.n = 0
        self.features = set()
        self.consts = {}

    # ------------------------------------------------------------ basics
    def fresh(self, p="t"):
        self.n += 1
        return f"{p}{self.n}"

    def feat(self, f):
        self.features.add(f)

    def sym(self, hint=None, min0=False, lo=1, cap=None):
        s = "S" + str(len(self.symbols))
        r = self.r
        h = hint if hint is not None else r.choice([1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17])
        spec = {"hint": max(h, lo)}
        if min0:
            spec["min"] = 0
            self.feat("min0_symbol")
        elif lo > 1:
            spec["min"] = lo
        spec["max"] = cap if cap is not None else r.choice([64, 128, 4096])
        self.symbols[s] = spec
        return s

    def ext(self, ints=(1, 2, 3, 4, 5, 7, 8, 16), psym=0.4, min0=0.0, cap=None):
        r = self.r
        if r.random() < psym:
            if self.symbols and r.random() < 0.3:
                cands = [s for s, v in self.symbols.items() if v.get("min", 1) <= 1
                         and (min0 > 0 or v.get("min", 1) == 1)]
                if cands:
                    return r.choice(sorted(cands))
            return self.sym(min0=r.random() < min0, cap=cap)
        return r.choice(list(ints))

    def est(self, e, big=False):
        """A size estimate of an extent (hint*3//2+1, or 65 with big)."""
        if isinstance(e, int):
            return e
        env = {s: (65 if big else v["hint"] * 3 // 2 + 1) for s, v in self.symbols.items()}
        return max(0, int(eval(e.replace("//", "//"), {}, env)))

    def numel(self, shape, big=False):
        n = 1
        for e in shape:
            n *= self.est(e, big)
        return n

    def small(self, shape, lim=20000):
        return self.numel(shape) <= lim

    def emit(self, op, args, out, **attrs):
        d = {"op": op}
        if args is not None:
            d["args"] = args
        d.update(attrs)
        d["out"] = out
        self.ops.append(d)
        return out

    def add_input(self, dtype, shape, rng=None, strides=None, data=None, symbol=None):
        name = self.fresh("in")
        d = {"name": name, "dtype": dtype}
        if shape is not None:
            d["shape"] = shape
        if strides is not None:
            d["strides"] = strides
            self.feat("strided_input")
        if data is not None:
            d["data"] = data
            self.feat("constant_data")
        if symbol is not None:
            d["symbol"] = symbol
            self.feat("scalar_symbol")
        if rng is not None:
            d["range"] = list(rng)
        self.inputs.append(d)
        return name

    def const_data(self, dtype, shape, lo=-1.0, hi=1.0, special=None):
        r = self.r

        def mk(sh):
            if not sh:
                if dtype == "bool":
                    return r.random() < 0.7
                v = round(r.uniform(lo, hi), 3)
                return v
            return [mk(sh[1:]) for _ in range(sh[0])]
        return mk(list(shape))

    def tensor(self, dtype, shape, rng=None, allow_const=True):
        """A plain operand: an input, or (small literal shapes) a constant."""
        if allow_const and all(isinstance(e, int) for e in shape) and self.numel(shape) <= 48 \
                and self.r.random() < 0.25:
            return self.add_input(dtype, shape, data=self.const_data(dtype, shape))
        return self.add_input(dtype, shape, rng=rng)

    # ------------------------------------------------------------ pre ops
    def source(self, dtype, shape, allow_pre=True, rng=None):
        """A value of this dtype and shape, sometimes made by elementwise work or a view."""
        r = self.r
        k = r.random() if allow_pre else 1.0
        if k < 0.12:  # cast from another float dtype
            other = r.choice([d for d in LOWP + ["f64"] if d != dtype])
            x = self.add_input(other, shape, rng=rng)
            self.feat("pre_cast")
            return self.emit("cast", [x], self.fresh(), dtype=dtype)
        if k < 0.22 and shape:  # add a bias along the last dim
            x = self.add_input(dtype, shape, rng=rng)
            b = self.tensor(dtype, [shape[-1]], rng=(-0.5, 0.5))
            self.feat("pre_bias")
            return self.emit("add", [x, b], self.fresh())
        if k < 0.30:  # an activation first
            x = self.add_input(dtype, shape, rng=rng)
            self.feat("pre_act")
            return self.emit("gelu", [x], self.fresh(), approximate=r.choice(["none", "tanh"]))
        if k < 0.42 and len(shape) >= 2:  # [A*B, ...] -> [A, B, ...] with an extent expression
            a, b = shape[0], shape[1]
            x = self.add_input(dtype, [mul_ext(a, b)] + list(shape[2:]), rng=rng)
            self.feat("reshape_expr")
            spec = list(shape)
            if r.random() < 0.3 and isinstance(spec[-1], int) and not self.may_be_empty(shape):
                spec[-1] = -1
            return self.emit("reshape", [x], self.fresh(), shape=spec)
        if k < 0.50 and len(shape) >= 2:  # a permuted input, permuted back
            perm = list(range(len(shape)))
            while perm == list(range(len(shape))):
                r.shuffle(perm)
            inv = [perm.index(i) for i in range(len(shape))]
            x = self.add_input(dtype, [shape[p] for p in perm], rng=rng)
            self.feat("pre_permute")
            return self.emit("permute", [x], self.fresh(), dims=inv)
        if k < 0.56 and len(shape) >= 2 and all(isinstance(e, int) for e in shape):
            # a row-major input with padded rows (strides)
            st, acc = [], 1
            for i, e in reversed(list(enumerate(shape))):
                st.append(acc)
                acc *= e + (2 if i == len(shape) - 1 else 0)
            return self.add_input(dtype, shape, rng=rng, strides=list(reversed(st)))
        if k < 0.70 and len(shape) >= 3:  # memory laid out in a permuted order (a transposed view)
            perm = list(range(len(shape)))
            r.shuffle(perm)
            st = [None] * len(shape)
            acc = 1
            for d in reversed(perm):
                st[d] = acc
                acc = mul_ext(shape[d], acc)
            self.feat("permuted_strides")
            return self.add_input(dtype, shape, rng=rng, strides=st)
        if k < 0.62 and len(shape) == 2:  # column-major (symbolic strides)
            return self.add_input(dtype, shape, rng=rng, strides=[1, shape[0]])
        if allow_pre:
            return self.tensor(dtype, shape, rng=rng)
        return self.add_input(dtype, shape, rng=rng)

    def may_be_empty(self, shape):
        return any(isinstance(e, str) and any(self.symbols[s].get("min", 1) == 0 for s in self.syms_of(e))
                   for e in shape)

    def syms_of(self, e):
        if isinstance(e, int):
            return []
        import re
        return [s for s in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", e)]

    # ------------------------------------------------------------ post ops
    def post(self, v, dt, shape, n=None):
        r = self.r
        n = r.randint(0, 3) if n is None else n
        for _ in range(n):
            k = r.random()
            if k < 0.2 and shape:
                b = self.tensor(dt, [shape[-1]], rng=(-0.5, 0.5))
                v = self.emit("add", [v, b], self.fresh())
                self.feat("post_bias")
            elif k < 0.4:
                v = self.emit("gelu", [v], self.fresh(), approximate=r.choice(["none", "tanh"]))
                self.feat("post_gelu")
            elif k < 0.5:
                v = self.emit(r.choice(["relu", "silu", "tanh", "sigmoid"]), [v], self.fresh())
                self.feat("post_act")
            elif k < 0.65:
                res = self.add_input(dt, shape)
                v = self.emit("add", [v, res] if r.random() < 0.5 else [res, v], self.fresh())
                self.feat("post_residual")
            elif k < 0.75:
                s = self.add_input(r.choice(["f32", "f64", "f16"]), None, rng=(0.5, 1.5))
                v = self.emit("mul", [v, s], self.fresh())  # a float scalar keeps the tensor's dtype
                self.feat("post_scalar_mul")
            elif k < 0.85:
                to = r.choice([d for d in LOWP + ["f64"] if d != dt])
                v = self.emit("cast", [v], self.fresh(), dtype=to)
                dt = to
                self.feat("post_cast")
            else:
                v = self.emit("mul", [v, r.choice([0.5, 2, -1.25])], self.fresh())
                self.feat("post_literal")
        return v, dt, shape

    def reduce(self, v, dt, shape):
        r = self.r
        if not shape:
            return v, dt, shape
        kind = r.choice(["sum", "mean", "amax", "var", "sum_size"])
        nd = len(shape)
        dims = sorted(r.sample(range(nd), r.randint(1, min(2, nd))))
        if r.random() < 0.5:
            dims = [nd - 1]
        keep = r.random() < 0.4
        red = [shape[d] for d in dims]
        empty = self.may_be_empty(red)
        if kind == "amax" and empty:
            kind = "sum"
        if kind in ("mean", "var") and empty:
            kind = "sum"  # the mean of nothing is NaN; legal, but keep the signal clean
        oshape = [1 if i in dims else e for i, e in enumerate(shape)] if keep else \
            [e for i, e in enumerate(shape) if i not in dims]
        dimsa = [d - nd for d in dims] if r.random() < 0.3 else dims
        attrs = {"dims": dimsa}
        if keep:
            attrs["keepdim"] = True
        self.feat("reduction")
        if kind == "sum_size":
            s = self.emit("sum", [v], self.fresh(), **attrs)
            size = red[0]
            for e in red[1:]:
                size = mul_ext(size, e)
            expr = size if isinstance(size, str) else str(size)
            if r.random() < 0.5:
                expr = f"{par(size)}+1"
            self.feat("size_literal")
            o = self.emit("div", [s, {"size": expr}], self.fresh())
            return o, dt, oshape
        if kind == "var":
            attrs["correction"] = r.choice([0, 1])
            if attrs["correction"] == 1 and all(self.est(e) <= 1 for e in red):
                attrs["correction"] = 0
        if kind in ("sum", "mean") and dt in ("f16", "bf16") and r.random() < 0.3:
            attrs["dtype"] = "f32"
            dt = "f32"
        o = self.emit(kind, [v], self.fresh(), **attrs)
        return o, dt, oshape

    # ------------------------------------------------------------ library ops
    def matmul(self, dt):
        r = self.r
        self.feat("matmul")
        ra = r.choice([1, 2, 2, 3, 3, 4])
        rb = r.choice([1, 2, 2, 3, 3, 4])
        self.feat(f"matmul_r{ra}x{rb}")
        M = self.ext(ints=(1, 2, 3, 4, 5, 7, 8, 16, 65, 130), psym=0.4, min0=0.2)
        K = self.ext(ints=(1, 3, 8, 16, 17, 32, 64, 100), psym=0.35, min0=0.15)
        if isinstance(K, str) and r.random() < 0.25 and not self.may_be_empty([K]):
            K = f"2*{K}" if r.random() < 0.5 else f"{K}+1"  # solved bindings
            self.feat("solved_binding")
        N = self.ext(psym=0.4, min0=0.1)
        nb = max(ra, rb) - 2
        batch = [self.ext(ints=(2, 3, 4), psym=0.4, min0=0.15) for _ in range(max(nb, 0))]
        ba = list(batch[len(batch) - (ra - 2):]) if ra > 2 else []
        bb = list(batch[len(batch) - (rb - 2):]) if rb > 2 else []
        # broadcast: some batch extents of one operand are 1
        for lst in (ba, bb):
            for i in range(len(lst)):
                if r.random() < 0.25:
                    lst[i] = 1
                    self.feat("matmul_batch_broadcast")
        ash = [K] if ra == 1 else ba + [M, K]
        bsh = [K] if rb == 1 else bb + [K, N]
        if not self.small(ash) or not self.small(bsh):
            return None
        a = self.source(dt, ash)
        if ra == rb and ra >= 2 and ba == bb and r.random() < 0.15:  # a @ a^T
            nbd = len(bb)
            b = self.emit("permute", [a], self.fresh(), dims=list(range(nbd)) + [nbd + 1, nbd])
            N = M
            bb = list(ba)
            self.feat("matmul_self_transpose")
        elif rb >= 2 and r.random() < 0.25:  # b given as [.., N, K] and transposed
            bt = self.add_input(dt, bb + [N, K])
            nbd = len(bb)
            b = self.emit("permute", [bt], self.fresh(), dims=list(range(nbd)) + [nbd + 1, nbd])
            self.feat("matmul_transposed_operand")
        else:
            b = self.source(dt, bsh)
        if ra == 1 and rb == 1:
            osh = []
        elif ra == 1:
            osh = bb + [N]
        elif rb == 1:
            osh = ba + [M]
        else:
            la, lb = len(ba), len(bb)
            L = max(la, lb)
            pa = [1] * (L - la) + ba
            pb = [1] * (L - lb) + bb
            osh = [x if y == 1 else y for x, y in zip(pa, pb)] + [M, N]
        attrs = {}
        if dt == "f32" and r.random() < 0.2:
            attrs["allow_tf32"] = False
        o = self.emit("matmul", [a, b], self.fresh(), **attrs)
        return o, dt, osh

    def linear(self, dt, x=None, xshape=None):
        r = self.r
        self.feat("linear")
        IN = xshape[-1] if xshape else (r.choice([1, 3, 8, 16, 24, 33]) if r.random() < 0.85 else self.sym(min0=r.random() < 0.3))
        OUT = r.choice([1, 4, 8, 16, 20])
        if x is None:
            rank = r.choice([1, 2, 2, 3, 3, 4])
            lead = [self.ext(ints=(1, 2, 3, 5, 7), psym=0.5, min0=0.2) for _ in range(rank - 1)]
            xshape = lead + [IN]
            if not self.small(xshape):
                return None
            x = self.source(dt, xshape)
        self.feat(f"linear_r{len(xshape)}")
        wr = (-1.0 / math.sqrt(max(self.est(IN), 1)), 1.0 / math.sqrt(max(self.est(IN), 1)))
        kw = r.random()
        if kw < 0.15:
            wt = self.add_input(dt, [IN, OUT], rng=wr)
            w = self.emit("permute", [wt], self.fresh(), dims=[1, 0])
            self.feat("linear_weight_permuted")
        elif kw < 0.3:
            w = self.add_input(dt, [OUT, IN], rng=wr, strides=[1, OUT])
            self.feat("linear_weight_colmajor")
        else:
            w = self.tensor(dt, [OUT, IN], rng=wr)
        args = [x, w]
        if r.random() < 0.6:
            args.append(self.tensor(dt, [OUT], rng=(-0.5, 0.5)))
            self.feat("linear_bias")
        o = self.emit("linear", args, self.fresh())
        return o, dt, list(xshape[:-1]) + [OUT]

    def conv(self, dt, x=None, xshape=None):
        r = self.r
        self.feat("conv")
        nd = len(xshape) - 2 if xshape else r.choice([1, 2, 2, 3])
        self.feat(f"conv{nd}d")
        transposed = r.random() < 0.3
        if transposed:
            self.feat("conv_transposed")
        g = r.choice([1, 1, 2, "dw"])
        if xshape:
            C_in = xshape[1]
            if g == "dw":
                g = C_in
            elif C_in % g:
                g = 1
        else:
            cpg = r.choice([1, 2, 3])
            if g == "dw":
                C_in = r.choice([2, 3, 4, 8])
                g = C_in
            else:
                C_in = g * cpg
        if g > 1:
            self.feat("conv_groups" if g < C_in or C_in == 1 else "conv_depthwise")
        C_out = g * r.choice([1, 2]) if g > 1 else r.choice([1, 2, 4, 5, 8])
        ks, ss, ps, ds, ops = [], [], [], [], []
        for _ in range(nd):
            k = r.choice([1, 2, 3, 3, 5] if nd < 3 else [1, 2, 3])
            s = r.choice([1, 1, 2, 3])
            d = r.choice([1, 1, 2])
            if transposed:
                op = r.randrange(max(s, d))
                p = r.randint(0, max(0, (d * (k - 1) + op) // 2))
            else:
                op = 0
                p = r.randint(0, k)
            ks.append(k), ss.append(s), ps.append(p), ds.append(d), ops.append(op)
        new_x = x is None
        if new_x:
            N = self.ext(ints=(1, 2, 3), psym=0.5, min0=0.25)
            sp = []
            for i in range(nd):
                if transposed:
                    need = 1
                else:
                    need = max(1, ds[i] * (ks[i] - 1) + 1 - 2 * ps[i])
                if r.random() < 0.5:
                    cap = 20 if nd == 3 else (64 if nd == 2 else 200)
                    sp.append(self.sym(hint=r.choice([need, need + 1, 5, 9, 12]), lo=need, cap=max(cap, need + 8)))
                else:
                    sp.append(r.choice([need, need + 1, need + 4, 7, 10]) if nd < 3 else r.choice([need, need + 2, 5]))
                    sp[-1] = max(sp[-1], need)
            xshape = [N, C_in] + sp
            if not self.small(xshape, 12000):
                return None
            if r.random() < 0.35 and nd >= 1:  # channels-last
                strides = [None] * (nd + 2)
                strides[1] = 1
                acc = C_in
                for i in range(nd + 1, 1, -1):
                    strides[i] = acc
                    acc = mul_ext(sp[i - 2], acc)
                strides[0] = acc
                x = self.add_input(dt, xshape, strides=strides)
                self.feat("conv_channels_last")
            else:
                x = self.source(dt, xshape, rng=None)
            if r.random() < 0.2 and not transposed and not self.may_be_empty(xshape):
                # (not on a possibly empty batch: the oracle's F.pad fails on empty tensors)
                pads = [[0, 0], [0, 0]] + [[r.randint(0, 2), r.randint(0, 2)] for _ in range(nd)]
                x = self.emit("pad", [x], self.fresh(), pads=pads, value=0)
                xshape = xshape[:2] + [h + lo + hi if isinstance(h, int) else
                                       (h if lo + hi == 0 else f"{h}+{lo + hi}")
                                       for h, (lo, hi) in zip(xshape[2:], pads[2:])]
                self.feat("conv_asym_pad")
        else:
            # chained: only sizes that stay positive for every input size >= 1
            for i in range(nd):
                if transposed:
                    ps[i] = min(ps[i], (ds[i] * (ks[i] - 1) + ops[i]) // 2)
                else:
                    ps[i] = max(ps[i], (ds[i] * (ks[i] - 1) + 1) // 2)
        if transposed:
            wsh = [C_in, C_out // g] + ks
        else:
            wsh = [C_out, C_in // g] + ks
        w = self.add_input(dt, wsh) if r.random() < 0.8 or self.numel(wsh) > 48 else \
            self.add_input(dt, wsh, data=self.const_data(dt, wsh, -0.5, 0.5))
        args = [x, w]
        if r.random() < 0.5:
            args.append(self.tensor(dt, [C_out], rng=(-0.3, 0.3)))
            self.feat("conv_bias")
        attrs = {}
        if any(s != 1 for s in ss) or r.random() < 0.5:
            attrs["stride"] = ss
        if any(ps) or r.random() < 0.5:
            attrs["padding"] = ps
        if any(d != 1 for d in ds) or r.random() < 0.3:
            attrs["dilation"] = ds
            if any(d != 1 for d in ds):
                self.feat("conv_dilation")
        if g != 1 or r.random() < 0.2:
            attrs["groups"] = g
        if transposed:
            attrs["transposed"] = True
            if any(ops) or r.random() < 0.5:
                attrs["output_padding"] = ops
                if any(ops):
                    self.feat("conv_output_padding")
        if any(s != 1 for s in ss):
            self.feat("conv_stride")
        osp = [conv_out(h, k, s, p, d, transposed, op)
               for h, k, s, p, d, op in zip(xshape[2:], ks, ss, ps, ds, ops)]
        # a 'same' conv keeps the input's extents (resnet-style residual)
        same = (not transposed and all(s == 1 and 2 * p == d * (k - 1) for s, p, d, k in zip(ss, ps, ds, ks))
                and C_out == C_in)
        if same:
            osp = list(xshape[2:])
        osh = [xshape[0], C_out] + osp
        if not self.small(osh, 30000):
            return None
        o = self.emit("conv", args, self.fresh(), **attrs)
        if same and r.random() < 0.5:
            o = self.emit("add", [o, x], self.fresh())
            self.feat("conv_residual")
        if r.random() < 0.4:  # inference batch norm: per-channel scale and shift
            sc = self.tensor(dt, [C_out] + [1] * nd, rng=(0.5, 1.5))
            sh = self.tensor(dt, [C_out] + [1] * nd, rng=(-0.2, 0.2))
            o = self.emit("add", [self.emit("mul", [o, sc], self.fresh()), sh], self.fresh())
            self.feat("conv_bn")
        return o, dt, osh

    def sdpa(self, dt):
        r = self.r
        self.feat("sdpa")
        rank = r.choice([2, 3, 4, 4])
        gqa = rank >= 3 and r.random() < 0.35
        L = self.ext(ints=(1, 3, 4, 8, 16), psym=0.5, min0=0.2)
        S = self.ext(ints=(1, 3, 5, 8, 16, 65, 129), psym=0.5, min0=0.0)
        if isinstance(S, str) and self.symbols[S].get("min", 1) == 0:
            S = r.choice([3, 8])
        if r.random() < 0.3 and isinstance(L, int) and isinstance(S, str):
            L = S  # self attention
        E = r.choice([4, 8, 16, 32, 5, 12, 64, 80])
        symE = r.random() < 0.08  # a symbolic embedding dim (then "scale" must be given)
        if symE:
            E = self.sym(hint=r.choice([4, 8, 16]), cap=64)
            self.feat("sdpa_symbolic_E")
        Ev = E if r.random() < 0.7 else r.choice([4, 8, 6])
        B = self.ext(ints=(1, 2, 3), psym=0.5, min0=0.2)
        Hk = r.choice([1, 2, 3])
        Hq = Hk * r.choice([2, 3, 4]) if gqa else Hk
        qlead, klead = [], []
        if rank == 3:
            qlead, klead = [Hq], [Hk]
        elif rank == 4:
            qlead, klead = [B, Hq], [B, Hk]
        vlead = list(klead)
        hb = False
        if not gqa and rank >= 3 and r.random() < 0.2:  # heads broadcast as in matmul
            if r.random() < 0.5:
                qlead[-1] = 1
            else:
                klead[-1] = vlead[-1] = 1
            if qlead[-1] == 1 and klead[-1] == 1:
                klead[-1] = vlead[-1] = 2
            self.feat("sdpa_head_broadcast")
            hb = True
        if gqa:
            self.feat("sdpa_gqa")
        if L != S:
            self.feat("sdpa_L_ne_S")
        if not gqa and rank >= 3 and r.random() < 0.15:
            cut = r.randint(1, rank - 2)
            if r.random() < 0.5:
                klead, vlead = klead[cut:], vlead[cut:]
            else:
                qlead = qlead[cut:]
            self.feat("sdpa_rank_mismatch")
        # The result's leading dims: q's and k's broadcast together, aligned from the right (a
        # rank cut above leaves the longer one's outer dims as they are).
        if gqa:
            lead = list(qlead)
        else:
            short, long_ = sorted((qlead, klead), key=len)
            extra = len(long_) - len(short)
            q_tail, k_tail = qlead[len(qlead) - len(short):], klead[len(klead) - len(short):]
            lead = list(long_[:extra]) + [x if y == 1 else y for x, y in zip(q_tail, k_tail)]
        qsh, ksh, vsh = qlead + [L, E], klead + [S, E], vlead + [S, Ev]
        for s in (qsh, ksh, vsh):
            if not self.small(s, 12000):
                return None
        # q and k: no range, so the checker draws them well-conditioned
        q = self.source(dt, qsh, allow_pre=r.random() < 0.3)
        k = self.source(dt, ksh, allow_pre=False) if r.random() < 0.8 else self.add_input(dt, ksh)
        v = self.source(dt, vsh)
        args = [q, k, v]
        attrs = {}
        mk = r.random()
        if mk < 0.08:  # a computed mask: keep j <= i + c (c >= 0), from iotas
            c = r.choice([0, 1, 3])
            ii = self.emit("iota", None, self.fresh(), length=L, dtype="i64", start=c)
            jj = self.emit("iota", None, self.fresh(), length=S, dtype="i32")
            ib = self.emit("broadcast_in_dim", [ii], self.fresh(), shape=[L, S], broadcast_dims=[0])
            jb = self.emit("broadcast_in_dim", [jj], self.fresh(), shape=[L, S], broadcast_dims=[1])
            m = self.emit("le", [jb, ib], self.fresh())
            if r.random() < 0.5:  # as an additive float mask
                m = self.emit("where", [m, 0.0, {"value": "-inf"}], self.fresh())
                self.feat("sdpa_float_mask")
            args.append(m)
            self.feat("sdpa_iota_mask")
        elif mk < 0.3:
            attrs["is_causal"] = True
            self.feat("sdpa_causal")
        elif mk < 0.65:
            # mask shape: broadcastable to [..., L, S] without enlarging it
            full = lead + [L, S]
            msh = [e if r.random() < 0.6 else 1 for e in full[:-1]] + [S]
            drop = r.randint(0, len(msh) - 1) if r.random() < 0.4 else 0
            msh = msh[drop:]
            if r.random() < 0.12:
                msh[-1] = 1  # broadcast along the keys
                self.feat("sdpa_mask_key_broadcast")
            if r.random() < 0.5:
                self.feat("sdpa_bool_mask")
                if all(isinstance(e, int) for e in msh) and self.numel(msh) <= 64 and r.random() < 0.4:
                    data = self.const_data("bool", msh)
                    def fix(d):
                        if isinstance(d, list) and d and not isinstance(d[0], list):
                            d[0] = True
                        elif isinstance(d, list):
                            for x in d:
                                fix(x)
                    fix(data)
                    m = self.add_input("bool", msh, data=data)
                else:
                    m = self.add_input("bool", msh)
            else:
                mdt = r.choice(["f32", dt, "bf16", "f16", "f64"])
                self.feat("sdpa_float_mask")
                if all(isinstance(e, int) for e in msh) and self.numel(msh) <= 64 and r.random() < 0.4:
                    data = self.const_data(mdt, msh, -2.0, 0.5)
                    def fix(d):
                        if isinstance(d, list) and d and not isinstance(d[0], list):
                            for i in range(1, len(d)):
                                if r.random() < 0.3:
                                    d[i] = "-inf"
                        elif isinstance(d, list):
                            for x in d:
                                fix(x)
                    fix(data)
                    m = self.add_input(mdt, msh, data=data)
                else:
                    m = self.add_input(mdt, msh, rng=(-2.0, 1.0))
            args.append(m)
        if r.random() < 0.35 or symE:
            attrs["scale"] = r.choice([0.125, 0.3, 1.0, 0.05, -0.5])
            self.feat("sdpa_scale")
        if gqa or (rank >= 3 and not hb and r.random() < 0.1):
            attrs["enable_gqa"] = True
        o = self.emit("scaled_dot_product_attention", args, self.fresh(), **attrs)
        osh = lead + [L, Ev]
        return o, dt, osh

    def attention_block(self, dt):
        """x [B*T, D] -> reshape [B, T, D] -> linear q/k/v -> heads -> sdpa -> merge -> linear."""
        r = self.r
        self.feat("attention_block")
        B = self.ext(ints=(1, 2), psym=0.7, min0=0.3)
        T = self.ext(ints=(3, 5, 8), psym=0.7)
        if isinstance(T, str) and self.symbols[T].get("min", 1) == 0:
            T = 5
        H, E = r.choice([(1, 8), (2, 4), (2, 8), (4, 4)])
        D = H * E
        x2 = self.add_input(dt, [mul_ext(B, T), D])
        self.feat("reshape_expr")
        x = self.emit("reshape", [x2], self.fresh(), shape=[B, T, D])
        heads = []
        for j in range(3):
            w = self.add_input(dt, [D, D], rng=(-0.3, 0.3))
            p = self.emit("linear", [x, w], self.fresh())
            p4 = self.emit("reshape", [p], self.fresh(), shape=[B, T, H, E])
            heads.append(self.emit("permute", [p4], self.fresh(), dims=[0, 2, 1, 3]))
        attrs = {"is_causal": True} if r.random() < 0.5 else {}
        a = self.emit("scaled_dot_product_attention", heads, self.fresh(), **attrs)
        at = self.emit("permute", [a], self.fresh(), dims=[0, 2, 1, 3])
        flat = [mul_ext(B, T), D] if r.random() < 0.5 else [B, T, D]
        a2 = self.emit("reshape", [at], self.fresh(), shape=flat)
        self.feat("linear")
        self.feat("sdpa")
        return self.linear(dt, a2, flat)

    def inplace_product(self, dt):
        """A product written in place (`aliases`): into one of its own operands, or into another
        input that declares strides (column-major or padded rows)."""
        r = self.r
        self.feat("inplace_product")
        kind = r.choice(["matmul", "linear"])
        self.feat(kind)
        M = r.choice([3, 130, 200]) if r.random() < 0.7 else self.sym(hint=r.choice([5, 150]), min0=r.random() < 0.3, cap=300)
        K = r.choice([4, 16]) if self.est(M) > 100 else r.choice([16, 520])
        target = r.choice(["a", "b", "strided"]) if kind == "matmul" else r.choice(["a", "strided"])
        if target == "b":  # y = w @ x, x [K, N] with M == K: written into x
            K = M
            N = r.choice([1, 4])
            w = self.add_input(dt, [M, K], rng=(-0.3, 0.3))
            x = self.add_input(dt, [K, N])
            y = self.emit("matmul", [w, x], self.fresh())
            shape, into = [M, N], x
            self.feat("inplace_into_operand")
        else:
            x = self.add_input(dt, [M, K])
            w = self.add_input(dt, [K, K], rng=(-0.3, 0.3))
            if kind == "matmul":
                y = self.emit("matmul", [x, w], self.fresh())
            else:
                args = [x, w] + ([self.tensor(dt, [K], rng=(-0.3, 0.3))] if r.random() < 0.5 else [])
                y = self.emit("linear", args, self.fresh())
            shape = [M, K]
            if target == "a":
                into = x
                self.feat("inplace_into_operand")
            else:
                strides = [1, M] if r.random() < 0.5 else [K + 3, 1]
                into = self.add_input(dt, shape, strides=strides)
                self.feat("inplace_into_strided_input")
        if r.random() < 0.4:
            y = self.emit(r.choice(["relu", "gelu"]), [y], self.fresh(),
                          **({"approximate": "tanh"} if r.random() < 0.5 else {}))
            if self.ops[-1]["op"] == "relu":
                self.ops[-1].pop("approximate", None)
        self.pending_alias = {y: into}
        return y, dt, shape

    # ------------------------------------------------------------ graph
    def bind_missing(self):
        """Every symbol must be bound: alone in an input extent, by a k*S+c extent, or by a
        scalar input with `symbol` (added here when nothing else binds it)."""
        bound = set()
        for i in self.inputs:
            if "symbol" in i:
                bound.add(i["symbol"])
            if "data" in i:
                continue
            for e in i.get("shape", []):
                if isinstance(e, str) and e.isidentifier():
                    bound.add(e)
        changed = True
        while changed:
            changed = False
            for i in self.inputs:
                if "data" in i:
                    continue
                for e in i.get("shape", []):
                    free = set(self.syms_of(e)) - bound
                    if len(free) == 1 and "//" not in str(e) and "%" not in str(e):
                        s = free.pop()
                        # of the form k*S+c with the other symbols bound: the contract says integers
                        # k, c; only accept single-symbol forms
                        if len(self.syms_of(e)) == 1:
                            bound.add(s)
                            changed = True
        for s in sorted(self.symbols):
            if s not in bound and any(s in self.syms_of(e) for i in self.inputs for e in i.get("shape", []) + [x for x in i.get("strides", []) if isinstance(x, str)]):
                self.add_input(self.r.choice(["i32", "i64"]), None, symbol=s)
                bound.add(s)
        # symbols nobody uses are dropped
        used = set()
        for i in self.inputs:
            for e in i.get("shape", []) + [x for x in i.get("strides", []) if isinstance(x, str)]:
                used.update(self.syms_of(e))
            if "symbol" in i:
                used.add(i["symbol"])
        for op in self.ops:
            used.update(self.syms_of(json.dumps(op)))
        for s in list(self.symbols):
            if s not in used:
                del self.symbols[s]

    def scalar_symbol_extra(self, dt):
        """A scalar input sets K; a `full` of [K, n] and a size literal use it."""
        K = self.sym(min0=self.r.random() < 0.3)
        self.add_input(self.r.choice(["i32", "i64"]), None, symbol=K)
        n = self.r.choice([1, 3, 4])
        f = self.emit("full", None, self.fresh(), shape=[K, n], value={"size": f"{K}+1"}, dtype=dt)
        self.feat("size_literal")
        o = self.emit("mul", [f, {"size": f"2*{K}"}], self.fresh())
        return o, dt, [K, n]

    def build(self):
        r = self.r
        dt = r.choice(LOWP) if r.random() < 0.9 else "f64"
        self.pending_alias = None
        makers = [(self.matmul, 3), (self.linear, 2.5), (self.conv, 3), (self.sdpa, 3),
                  (self.attention_block, 0.6), (self.inplace_product, 0.8)]
        total = sum(w for _, w in makers)
        res = None
        for _ in range(20):
            x = r.uniform(0, total)
            for f, w in makers:
                x -= w
                if x <= 0:
                    break
            res = f(dt)
            if res is not None:
                break
            self.__init__(r, int(self.name[4:]))
        v, vdt, shape = res
        if self.pending_alias:
            outs = [v]
            self.bind_missing()
            doc = {"fuserc": 1, "name": self.name}
            if self.symbols:
                doc["symbols"] = self.symbols
            doc.update({"inputs": self.inputs, "ops": self.ops, "outputs": outs,
                        "aliases": self.pending_alias})
            return doc
        # chain a second library op sometimes
        if vdt == dt and r.random() < 0.3:
            if len(shape) >= 3 and f == self.conv and r.random() < 0.6:
                nxt = self.conv(dt, v, shape)
            elif len(shape) >= 1 and isinstance(shape[-1], int):
                nxt = self.linear(dt, v, shape)
            else:
                nxt = None
            if nxt is not None:
                v, vdt, shape = nxt
                self.feat("chained")
        v, vdt, shape = self.post(v, vdt, shape)
        outs = [v]
        if r.random() < 0.45:
            o, odt, osh = self.reduce(v, vdt, shape)
            if r.random() < 0.5:
                outs = [o]
            else:
                outs.append(o)
        if r.random() < 0.12:
            o, _, _ = self.scalar_symbol_extra(dt)
            outs.append(o)
        if len(shape) >= 2 and isinstance(shape[-1], int) and r.random() < 0.15:
            # flatten with an extent expression
            o = self.emit("reshape", [v], self.fresh(), shape=[mul_ext(shape[0], shape[1])] + list(shape[2:]))
            self.feat("reshape_expr")
            outs.append(o)
        aliases = None
        if v in outs and r.random() < 0.5:
            # write the result in place into an input of its shape and dtype (often one the
            # library op itself reads: a residual, the conv input of a 'same' conv)
            cands = [i for i in self.inputs if "data" not in i and i.get("shape") == shape
                     and i["dtype"] == vdt]
            if cands:
                aliases = {v: r.choice(cands)["name"]}
                self.feat("alias_inplace")
        self.bind_missing()
        doc = {"fuserc": 1, "name": self.name}
        if self.symbols:
            doc["symbols"] = self.symbols
        doc.update({"inputs": self.inputs, "ops": self.ops, "outputs": outs})
        if aliases:
            doc["aliases"] = aliases
        return doc


def main():
    args, generators = write_graphs(__doc__.splitlines()[0], Gen)
    feats = {doc["name"]: sorted(gen.features) for gen, doc in generators}
    with open(os.path.join(args.out, "features.json.txt"), "w") as f:
        json.dump(feats, f, indent=1)


if __name__ == "__main__":
    main()
