#!/usr/bin/python3
"""Writes random fusion graphs that follow the contract (../shared/spec/FUSION_FORMAT.md), for
differential testing: every graph goes through `fuserc compile`, `eval` and `run --emulate`
and is judged by the independent reference (check_corpus.py), so a crash, a refusal of a
valid graph or a wrong value anywhere in the front end, the segmenter or a scheduler shows up.

    /usr/bin/python3 scripts/random_graphs.py --out DIR [--count N] [--seed S]
    /usr/bin/python3 ../shared/tools/check_corpus.py --fuserc build/cmd/fuserc DIR

A graph mixes symbolic and literal extents, broadcasting, every dtype, casts, reductions
over random dims (with keepdim results broadcast back, as normalizations do, and wider
accumulation dtypes), views (permute, slice, pad, cat, reshape, squeeze/unsqueeze, expand),
indexing, `where`/`clamp`/`lerp`/`fma`, `full`/`iota`, random numbers, `segment_set`, every
transcendental op behind ops that keep it in its domain, in-place outputs, and outputs taken
from the middle of the graph. Values stay in ranges where the reference and fuserc agree up to rounding (no integer division by zero, no overflow).
Deterministic for a seed.
"""
import argparse
import json
import os
import random

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i32", "i64"]
DTYPES = ["bool"] + INTS + FLOATS
SAFE_UNARY = ["neg", "abs", "exp", "tanh", "sigmoid", "relu", "silu", "sin", "cos", "erf",
              "floor", "ceil", "round", "trunc", "sign", "gelu", "atan", "expm1", "log1p_abs",
              "sqrt_abs", "isnan", "isfinite", "logical_not", "bitwise_not", "frac", "signbit"]
BINARY = ["add", "sub", "mul", "maximum", "minimum", "div", "atan2", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor",
          "fmod", "remainder", "pow2"]
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "amax", "amin", "var", "var_mean"]


def rank_of(d):
    return 0 if d == "bool" else 1 if d in INTS else 2


def promote(a, b):
    if a == b:
        return a
    ra, rb = rank_of(a), rank_of(b)
    if ra != rb:
        return a if ra > rb else b
    if ra == 1:
        return "i64"
    if {a, b} == {"f16", "bf16"}:
        return "f32"
    order = {"f16": 0, "bf16": 0, "f32": 1, "f64": 2}
    return a if order[a] >= order[b] else b


def broadcast(s, t):
    out = []
    for i in range(1, max(len(s), len(t)) + 1):
        a = s[-i] if i <= len(s) else 1
        b = t[-i] if i <= len(t) else 1
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        else:
            return None
    return list(reversed(out))


class Gen:
    def __init__(self, rnd, index):
        self.r = rnd
        self.name = f"rand_{index:04d}"
        self.symbols = {}
        self.inputs = []
        self.ops = []
        self.values = []  # (name, dtype, shape, rank0)
        self.n = 0

    def fresh(self, p="t"):
        self.n += 1
        return f"{p}{self.n}"

    def extent(self):
        r = self.r
        if r.random() < 0.5:
            if not self.symbols or (len(self.symbols) < 3 and r.random() < 0.5):
                s = "S" + str(len(self.symbols))
                big = r.random() < 0.08  # long rows: grid-split reductions, multi-pass norms
                spec = {"hint": r.choice([5000, 9001, 20000, 70000] if big else
                                         [1, 2, 3, 5, 8, 17, 33, 64, 100, 129, 256, 300, 1000])}
                if r.random() < 0.3:
                    spec["max"] = max(spec["hint"] * 4, 4096)
                if r.random() < 0.1:
                    spec["min"] = 0
                self.symbols[s] = spec
                return s
            return r.choice(sorted(self.symbols))
        if r.random() < 0.05:
            return r.choice([4096, 5003, 32768, 65536])
        return r.choice([1, 2, 3, 4, 7, 8, 16, 31, 32, 64, 96, 128, 257, 768, 1024])

    def add_input(self, dtype, shape, rng=None, allow_strides=True):
        name = self.fresh("in")
        d = {"name": name, "dtype": dtype}
        if shape is not None:
            d["shape"] = shape
        if shape and allow_strides and self.r.random() < 0.15:
            if len(shape) == 2 and self.r.random() < 0.5:
                d["strides"] = [1, shape[0]]  # column-major
            elif isinstance(shape[-1], int) and all(isinstance(e, int) for e in shape):
                st, acc = [], 1  # row-major with padded rows and a step on the last dim
                for i, e in reversed(list(enumerate(shape))):
                    step = 2 if i == len(shape) - 1 else 1
                    st.append(acc * step)
                    acc *= e * step + (3 if i == len(shape) - 1 else 0)
                d["strides"] = list(reversed(st))
        if dtype != "bool":
            lo, hi = rng or ((-2, 2) if dtype in FLOATS else (-5, 5))
            d["range"] = [lo, hi]
        self.inputs.append(d)
        self.values.append((name, dtype, list(shape) if shape is not None else [], shape is None))
        return name

    def numel_ok(self, shape):
        n = 1
        for e in shape:
            n *= (self.symbols[e]["hint"] * 3 // 2 + 1) if isinstance(e, str) else e
        return n <= (1 << 20)

    def emit(self, op, args, out, **attrs):
        d = {"op": op}
        if args is not None:
            d["args"] = args
        d.update(attrs)
        d["out"] = out
        self.ops.append(d)

    def bound_symbols(self):
        """Symbols some input's shape binds (a symbol only an op names has no value)."""
        return sorted({e for i in self.inputs for e in i.get("shape", []) if isinstance(e, str)})

    def pick(self, pred=lambda v: True):
        cands = [v for v in self.values if pred(v)]
        return self.r.choice(cands) if cands else None

    # --- op makers; each returns True when it emitted something ---
    def unary(self):
        v = self.pick()
        name, dt, shape, r0 = v
        op = self.r.choice(SAFE_UNARY)
        out = self.fresh()
        if op in ("bitwise_not",) and dt in FLOATS:
            op = "neg"
        if dt == "bool" and op in ("floor", "ceil", "round", "trunc", "frac", "neg", "abs",
                                   "relu", "log1p_abs", "sqrt_abs"):
            op = "logical_not"  # PyTorch refuses these on bool tensors
        if op == "log1p_abs":
            a = self.fresh()
            self.emit("abs", [name], a)
            self.emit("log1p", [a], out)
            odt = dt if dt in FLOATS else "f32"
        elif op == "sqrt_abs":
            a = self.fresh()
            self.emit("abs", [name], a)
            self.emit("sqrt", [a], out)
            odt = dt if dt in FLOATS else "f32"
        elif op == "exp":
            t = self.fresh()
            self.emit("tanh", [name], t)
            self.emit("exp", [t], out)
            odt = dt if dt in FLOATS else "f32"
        elif op == "gelu":
            self.emit("gelu", [name], out, approximate=self.r.choice(["none", "tanh"]))
            odt = dt if dt in FLOATS else "f32"
        else:
            self.emit(op, [name], out)
            if op in ("isnan", "isfinite", "logical_not", "signbit"):
                odt = "bool"
            elif op in ("abs", "neg", "relu", "sign", "floor", "ceil", "round", "trunc",
                        "bitwise_not") or (op == "frac" and dt in FLOATS):
                odt = dt
            else:
                odt = dt if dt in FLOATS else "f32"
        self.values.append((out, odt, shape, r0))
        return True

    def unary_more(self):
        """The transcendental ops whose domain needs care, behind ops that keep them inside it:
        log/log2/log10/acosh/lgamma/rsqrt/reciprocal of 1 + |x|, asin/acos/tan/sinh/cosh/exp2
        of tanh(x), atanh/erfinv of tanh(x) / 2, and erfc/asinh/isinf of anything."""
        v = self.pick(lambda v: v[1] != "bool")
        if v is None:
            return False
        name, dt, shape, r0 = v
        odt = dt if dt in FLOATS else "f32"
        op = self.r.choice(["log", "log2", "log10", "acosh", "lgamma", "rsqrt", "reciprocal",
                            "asin", "acos", "tan", "sinh", "cosh", "exp2", "atanh", "erfinv",
                            "erfc", "asinh", "isinf"])
        x = name
        if op in ("log", "log2", "log10", "acosh", "lgamma", "rsqrt", "reciprocal"):
            a, b = self.fresh(), self.fresh()
            self.emit("abs", [name], a)
            self.emit("add", [a, 1], b)
            x = b
        elif op in ("asin", "acos", "tan", "sinh", "cosh", "exp2", "atanh", "erfinv"):
            a = self.fresh()
            self.emit("tanh", [name], a)
            x = a
            if op in ("atanh", "erfinv"):
                b = self.fresh()
                self.emit("mul", [a, 0.5], b)
                x = b
        out = self.fresh()
        self.emit(op, [x], out)
        if op == "isinf":
            odt = "bool"
        self.values.append((out, odt, shape, r0))
        return True

    def cast(self):
        v = self.pick()
        name, dt, shape, r0 = v
        to = self.r.choice([d for d in DTYPES if d != dt])
        if dt in FLOATS and to in INTS:
            # In range of every integer type and never NaN: round(100 * tanh(x)), x finite.
            # Rounded first: truncating 100 * tanh(x) flips where f32 and the f64 reference
            # straddle an integer (tanh saturates to 1.0 in f32 early: 100 against 99).
            a, b, c = self.fresh(), self.fresh(), self.fresh()
            self.emit("isfinite", [name], a)
            self.emit("where", [a, name, 0.0], b)
            self.emit("tanh", [b], c)
            d, e = self.fresh(), self.fresh()
            self.emit("mul", [c, 100.0], d)
            self.emit("round", [d], e)
            name = e
        out = self.fresh()
        self.emit("cast", [name], out, dtype=to)
        self.values.append((out, to, shape, r0))
        return True

    def ternary(self):
        kind = self.r.choice(["where", "where", "clamp", "lerp", "fma"])
        a = self.pick()
        name, dt, shape, r0 = a
        if kind == "where":
            c = self.pick(lambda v: v[1] == "bool" and broadcast(v[2], shape) is not None)
            if c is None:
                c0 = self.fresh()
                self.emit("gt", [name, 0], c0)
                c = (c0, "bool", shape, r0)
            b = self.pick(lambda v: broadcast(v[2], broadcast(c[2], shape) or [0] * 99) is not None
                          and v[1] == dt)
            if b is None or self.r.random() < 0.2:
                bn, bshape, br0 = (0 if dt in INTS + ["bool"] else {"value": "-inf"}
                                   if self.r.random() < 0.3 else 1.5), [], True
                if dt == "bool":
                    bn = False
            else:
                bn, bshape, br0 = b[0], b[2], b[3]
            oshape = broadcast(broadcast(c[2], shape), bshape)
            if oshape is None or not self.numel_ok(oshape):
                return False
            out = self.fresh()
            args = [c[0], name, bn] if self.r.random() < 0.5 else [c[0], bn, name]
            self.emit("where", args, out)
            self.values.append((out, dt, oshape, r0 and c[3] and br0))
            return True
        if dt == "bool":
            return False
        if kind == "clamp":
            lo, hi = sorted(self.r.sample([-3, -1, 0, 1, 2, 4], 2))
            if dt in FLOATS:
                lo, hi = lo / 2, hi / 2
            out = self.fresh()
            self.emit("clamp", [name, lo, hi], out)
            self.values.append((out, dt, shape, r0))
            return True
        if kind == "lerp":
            if dt not in FLOATS:
                return False
            b = self.pick(lambda v: v[1] == dt and broadcast(v[2], shape) is not None)
            if b is None:
                return False
            oshape = broadcast(b[2], shape)
            if not self.numel_ok(oshape):
                return False
            out = self.fresh()
            self.emit("lerp", [name, b[0], self.r.choice([0.25, 0.5, 0.9])], out)
            self.values.append((out, dt, oshape, r0 and b[3]))
            return True
        # fma(a, b, c): operands of a's dtype, broadcast.
        b = self.pick(lambda v: v[1] == dt and broadcast(v[2], shape) is not None)
        c = self.pick(lambda v: v[1] == dt and b is not None and
                      broadcast(v[2], broadcast(b[2], shape)) is not None)
        if b is None or c is None:
            return False
        oshape = broadcast(c[2], broadcast(b[2], shape))
        if not self.numel_ok(oshape):
            return False
        out = self.fresh()
        self.emit("fma", [name, b[0], c[0]], out)
        self.values.append((out, dt, oshape, r0 and b[3] and c[3]))
        return True

    def creation(self):
        r = self.r
        if r.random() < 0.5:
            v = self.pick(lambda v: all(not isinstance(e, str) or e in self.bound_symbols()
                                        for e in v[2]))
            if v is None:
                return False
            dt = r.choice(DTYPES)
            val = {"bool": True, "i32": -7, "i64": 3}.get(dt, r.choice([0.1, -2.5, 1e-3]))
            out = self.fresh()
            self.emit("full", None, out, shape=list(v[2]), value=val, dtype=dt)
            self.values.append((out, dt, list(v[2]), len(v[2]) == 0))
            return True
        syms = self.bound_symbols()
        length = r.choice(syms) if syms and r.random() < 0.6 else r.choice([1, 5, 64, 1000])
        dt = r.choice(["i32", "i64", "f32", "f64", "bf16"])
        start, step = (r.choice([0, -3, 10]), r.choice([1, 2, -1]))
        if dt in FLOATS:
            start, step = start / 4, step * 0.5
        out = self.fresh()
        self.emit("iota", None, out, length=length, start=start, step=step, dtype=dt)
        self.values.append((out, dt, [length], False))
        return True

    def binary(self):
        a = self.pick()
        b = self.pick(lambda v: broadcast(v[2], a[2]) is not None and v is not a)
        if b is None or self.r.random() < 0.15:
            lit = self.r.choice([0.5, 2, -1, 3, {"value": "inf"}, {"value": "-inf"}, 1.5])
            b = ("lit", "f32" if isinstance(lit, (float, dict)) else "i64", [], True, lit)
        shape = broadcast(a[2], b[2])
        if shape is None or not self.numel_ok(shape):
            return False
        op = self.r.choice(BINARY)
        an, bn = a[0], (b[4] if b[0] == "lit" else b[0])
        # Result dtype by the contract's promotion (rank-0 operands and literals count less).
        def cat_dt(x):
            return x[1]
        dts = [x for x in (a, b)]
        tens = [x for x in dts if not x[3]]
        zero = [x for x in dts if x[3]]
        if tens:
            base = tens[0][1]
            for x in tens[1:]:
                base = promote(base, x[1])
            for x in zero:
                if rank_of(x[1]) > rank_of(base):
                    base = promote(base, x[1]) if x[0] != "lit" else ("f32" if x[1] == "f32" else "i64")
        else:
            base = promote(a[1], b[1]) if b[0] != "lit" else (
                a[1] if rank_of(a[1]) >= rank_of(b[1]) else b[1])
        is_int = base in INTS or base == "bool"
        if op.startswith("bitwise") and not is_int:
            op = "maximum"
        if op.startswith("logical"):
            odt = "bool"
        elif op in ("eq", "ne", "lt", "le", "gt", "ge"):
            odt = "bool"
        elif op in ("div", "atan2"):
            odt = base if base in FLOATS else "f32"
        else:
            odt = base
        if isinstance(bn, dict) and op not in ("add", "sub", "maximum", "minimum", "mul", "eq",
                                               "lt", "gt"):
            bn = 0.5
        if isinstance(bn, dict) and odt not in FLOATS and op not in ("eq", "lt", "gt"):
            bn = 2
        if op in ("fmod", "remainder") and (is_int or a[1] == "bool"):
            # Integer remainders: the divisor is a fresh input that is never zero.
            d = self.add_input("i32", a[2] if not a[3] else [], rng=(1, 9))
            bn = d
            odt = promote(a[1], "i32")  # a rank-0 dividend has a rank-0 divisor: same level
            shape = list(a[2])
            if a[1] == "bool":
                return False
        if op == "pow2":
            # An integer literal exponent: the result keeps the base's dtype (pow(i64, 2) is i64).
            op, bn, odt = "pow", 2, a[1]
            if odt == "bool":
                return False
        if op in ("add", "sub") and odt == "bool":
            op = "logical_or"
        if op == "sub" and a[1] == "bool":
            op = "add"
        if odt == "bool" and op in ("mul", "div", "fmod", "remainder", "pow", "atan2"):
            return False
        out = self.fresh()
        self.emit(op, [an, bn], out)
        r0 = a[3] and (b[3] or b[0] == "lit")
        if not isinstance(bn, str):  # a literal replaced the second operand
            shape, r0 = list(a[2]), a[3]
        self.values.append((out, odt, shape, r0))
        return True

    def reduction(self):
        v = self.pick(lambda v: len(v[2]) >= 1)
        if v is None:
            return False
        name, dt, shape, _ = v
        kind = self.r.choice(REDUCTIONS)
        if kind in ("mean", "var", "var_mean") and dt not in FLOATS:
            kind = "sum"
        if kind == "prod":
            # Keep products small: of tanh'ed floats or of bools.
            if dt in FLOATS:
                t = self.fresh()
                self.emit("tanh", [name], t)
                name = t
            elif dt != "bool":
                kind = "sum"
        k = self.r.randint(1, len(shape))
        dims = sorted(self.r.sample(range(len(shape)), k))
        if self.r.random() < 0.3:
            dims = [d - len(shape) for d in dims]
        keep = self.r.random() < 0.5
        attrs = {"dims": dims}
        if keep:
            attrs["keepdim"] = True
        if kind in ("var", "var_mean") and self.r.random() < 0.5:
            attrs["correction"] = self.r.choice([0, 1])
        nd = [d % len(shape) for d in dims]
        if kind in ("max", "min", "amax", "amin") and any(
                isinstance(shape[d], str) and self.symbols[shape[d]].get("min", 1) == 0 for d in nd):
            kind = "sum"  # a maximum over a dim that may be empty is an error, as in PyTorch
        oshape = [1 if i in nd else e for i, e in enumerate(shape)] if keep else [
            e for i, e in enumerate(shape) if i not in nd]
        odt = "i64" if kind in ("sum", "prod") and dt not in FLOATS else dt
        if kind in ("sum", "mean") and dt in ("f16", "bf16") and self.r.random() < 0.3:
            attrs["dtype"] = odt = self.r.choice(["f32", "f64"])  # accumulate and return wider
        # var of fewer elements than the correction is NaN; fine for the reference as well.
        if kind == "var_mean":
            o1, o2 = self.fresh(), self.fresh()
            self.emit(kind, [name], [o1, o2], **attrs)
            # A reduction over every dim without keepdim is rank 0 (it promotes as one).
            self.values.append((o1, odt, oshape, len(oshape) == 0))
            self.values.append((o2, odt, oshape, len(oshape) == 0))
        else:
            out = self.fresh()
            self.emit(kind, [name], out, **attrs)
            self.values.append((out, odt, oshape, len(oshape) == 0))
        return True

    def view(self):
        v = self.pick(lambda v: len(v[2]) >= 1 and not v[3])
        if v is None:
            return False
        name, dt, shape, _ = v
        r = self.r
        kind = r.choice(["permute", "slice", "pad", "cat", "unsqueeze", "squeeze", "expand",
                         "reshape", "segment_set", "broadcast_in_dim"])
        out = self.fresh()
        n = len(shape)
        if kind == "permute":
            dims = list(range(n))
            r.shuffle(dims)
            self.emit("permute", [name], out, dims=dims)
            oshape = [shape[d] for d in dims]
        elif kind == "slice":
            starts, ends, steps, oshape = [], [], [], []
            for e in shape:
                if isinstance(e, int) and e >= 4 and r.random() < 0.7:
                    s, st = r.randint(0, e // 2), r.choice([1, 1, 2])
                    en = r.randint(s + 1, e)
                    starts.append(s), ends.append(en), steps.append(st)
                    oshape.append((en - s + st - 1) // st)
                else:
                    starts.append(0), ends.append(e), steps.append(1)
                    oshape.append(e)
            self.emit("slice", [name], out, starts=starts, ends=ends, steps=steps)
        elif kind == "pad":
            pads, oshape = [], []
            for e in shape:
                lo, hi = (r.randint(0, 2), r.randint(0, 2)) if r.random() < 0.6 else (0, 0)
                if isinstance(e, int) and e > 3 and r.random() < 0.3:
                    lo = -1
                pads.append([lo, hi])
                oshape.append(e + lo + hi if isinstance(e, int) else None)
            if None in oshape:
                # A symbolic extent padded: its size is a formula, keep only literal extents.
                pads = [[0, 0] if not isinstance(e, int) else p for e, p in zip(shape, pads)]
                oshape = [e + p[0] + p[1] if isinstance(e, int) else e for e, p in zip(shape, pads)]
            val = r.choice([0, 1.5, -1]) if dt != "bool" else r.choice([0, 1])
            if dt == "bool":
                val = bool(val)
            self.emit("pad", [name], out, pads=pads, value=val)
        elif kind == "cat":
            d = r.randrange(n)
            if not isinstance(shape[d], int):
                return self.view()
            same = lambda w: (not w[3] and w[1] == dt and len(w[2]) == n and w[0] != name and
                              isinstance(w[2][d], int) and
                              all(w[2][i] == shape[i] for i in range(n) if i != d))
            other = self.pick(same) if r.random() < 0.6 else None
            oshape = list(shape)
            if other is None:
                self.emit("cat", [name, name], out, dim=d)
                oshape[d] = 2 * shape[d]
            else:
                args = [name, other[0]] if r.random() < 0.5 else [other[0], name, name]
                self.emit("cat", args, out, dim=d if r.random() < 0.7 else d - n)
                oshape[d] = sum(shape[d] if a == name else other[2][d] for a in args)
            if not self.numel_ok(oshape):
                self.ops.pop()
                return False
        elif kind == "unsqueeze":
            d = r.randint(0, n)
            self.emit("unsqueeze", [name], out, dim=d)
            oshape = shape[:d] + [1] + shape[d:]
        elif kind == "squeeze":
            ones = [i for i, e in enumerate(shape) if e == 1]
            if not ones:
                return False
            self.emit("squeeze", [name], out, dims=ones)
            oshape = [e for e in shape if e != 1]
        elif kind == "expand":
            ones = [i for i, e in enumerate(shape) if e == 1]
            if not ones:
                return False
            oshape = list(shape)
            for i in ones:
                bound = self.bound_symbols()
                oshape[i] = r.choice([3, 8]) if r.random() < 0.5 or not bound else r.choice(bound)
            if not self.numel_ok(oshape):
                return False
            self.emit("expand", [name], out, shape=oshape)
        elif kind == "broadcast_in_dim":
            extra = r.choice([2, 5])
            pos = r.randint(0, n)
            oshape = shape[:pos] + [extra] + shape[pos:]
            if not self.numel_ok(oshape):
                return False
            bdims = [i if i < pos else i + 1 for i in range(n)]
            self.emit("broadcast_in_dim", [name], out, shape=oshape, broadcast_dims=bdims)
        elif kind == "reshape":
            if n >= 2 and all(isinstance(e, int) for e in shape[-2:]):
                oshape = shape[:-2] + [shape[-2] * shape[-1]]
            elif n >= 1 and isinstance(shape[-1], int) and shape[-1] % 2 == 0 and shape[-1] > 2:
                oshape = shape[:-1] + [2, shape[-1] // 2]
            else:
                oshape = shape + [1]
            spec = list(oshape)
            may_be_empty = any(s.get("min", 1) == 0 for s in self.symbols.values())
            if r.random() < 0.5 and any(isinstance(e, int) for e in spec) and not may_be_empty:
                i = max(i for i, e in enumerate(spec) if isinstance(e, int))
                spec[i] = -1
            self.emit("reshape", [name], out, shape=spec)
        else:
            self.emit("segment_set", [name], out)
            oshape = list(shape)
        self.values.append((out, dt, oshape, False))
        return True

    def indexing(self):
        v = self.pick(lambda v: len(v[2]) >= 1 and not v[3])
        if v is None:
            return False
        name, dt, shape, _ = v
        # Never index a dim that may be empty: no index is valid there.
        dims = [i for i, e in enumerate(shape)
                if not isinstance(e, str) or self.symbols[e].get("min", 1) != 0]
        if not dims:
            return False
        d = self.r.choice(dims)
        idt = self.r.choice(INTS)
        out = self.fresh()
        if self.r.random() < 0.5:
            m = self.extent()
            idx = self.add_input(idt, [m], rng=None)
            self.inputs[-1].pop("range", None)
            oshape = list(shape)
            oshape[d] = m
            if not self.numel_ok(oshape):
                return False
            self.emit("index_select", [name, idx], out, dim=d if self.r.random() < 0.7 else d - len(shape))
        else:
            ishape = list(shape)
            ishape[d] = self.r.choice([1, 2, 5])
            idx = self.add_input(idt, ishape)
            self.inputs[-1].pop("range", None)
            oshape = ishape
            self.emit("gather", [name, idx], out, dim=d)
        self.values.append((out, dt, oshape, False))
        return True

    def random(self):
        v = self.pick(lambda v: len(v[2]) >= 1 and all(
            not isinstance(e, str) or e in self.bound_symbols() for e in v[2]))
        if v is None:
            return False
        seed = self.add_input("i64", None, rng=(0, 1000))
        off = self.add_input("i64", None, rng=(0, 1 << 20))
        out = self.fresh()
        dt = self.r.choice(FLOATS)
        self.emit(self.r.choice(["rand", "randn"]), [seed, off], out, shape=list(v[2]), dtype=dt)
        self.values.append((out, dt, list(v[2]), False))
        return True

    def alias(self, outs):
        """Writes one output in place into an input of its shape and dtype, sometimes."""
        if self.r.random() > 0.25:
            return None
        for o in outs:
            v = next(v for v in self.values if v[0] == o)
            for i in self.inputs:
                if i.get("shape") == v[2] and i["dtype"] == v[1] and i["name"] not in outs:
                    return {o: i["name"]}
        return None

    def build(self):
        r = self.r
        rank = r.choice([1, 2, 2, 3, 3, 4])
        base = [self.extent() for _ in range(rank)]
        for _ in range(20):
            if self.numel_ok(base):
                break
            base[r.randrange(rank)] = r.choice([1, 2, 3, 8])
        for _ in range(r.randint(1, 3)):
            shape = list(base)
            if r.random() < 0.4:
                shape = [1 if r.random() < 0.3 else e for e in shape]
            if r.random() < 0.3 and len(shape) > 1:
                shape = shape[r.randint(1, len(shape) - 1):]
            self.add_input(r.choice(DTYPES), shape)
        if r.random() < 0.3:
            self.add_input(r.choice(["f32", "i64", "f64"]), None)
        makers = [(self.unary, 3), (self.binary, 4), (self.reduction, 2), (self.view, 2),
                  (self.indexing, 0.5), (self.random, 0.3), (self.unary_more, 1),
                  (self.cast, 1), (self.ternary, 1.5), (self.creation, 0.4)]
        total = sum(w for _, w in makers)
        steps = r.randint(3, 14)
        made = 0
        for _ in range(steps * 3):
            x = r.uniform(0, total)
            for f, w in makers:
                x -= w
                if x <= 0:
                    break
            if f():
                made += 1
            if made >= steps:
                break
        produced = [v for v in self.values if not any(v[0] == i["name"] for i in self.inputs)]
        if not produced:
            self.unary()
            produced = [self.values[-1]]
        outs = [produced[-1][0]]
        for v in r.sample(produced, min(len(produced), r.randint(0, 2))):
            if v[0] not in outs:
                outs.append(v[0])
        doc = {"fuserc": 1, "name": self.name}
        if self.symbols:
            doc["symbols"] = self.symbols
        doc.update({"inputs": self.inputs, "ops": self.ops, "outputs": outs})
        al = self.alias(outs)
        if al:
            doc["aliases"] = al
        return doc


def write_graphs(description, make_generator):
    """The command line both random graph scripts share: `--out DIR --count N --seed S`
    writes N graphs, graph i from make_generator(random.Random(idx), idx) with
    idx = seed * 100003 + i. Returns the parsed arguments and the generators in order."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    generators = []
    for i in range(a.count):
        idx = a.seed * 100003 + i
        gen = make_generator(random.Random(idx), idx)
        doc = gen.build()
        with open(os.path.join(a.out, doc["name"] + ".json"), "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        generators.append((gen, doc))
    return a, generators


def main():
    write_graphs(__doc__.splitlines()[0], Gen)


if __name__ == "__main__":
    main()
