#!/usr/bin/python3
"""Writes the fusion graphs of tests/graphs/ that cover the contract additions of issue 14:
reductions and normalizations written in place (every reduction and dtype, inner and outer
rows, grid reductions, accumulation into the buffer, reads of the buffer before and after the
reduction), the hazards the plan must order or split, inputs written in place listed as
outputs, the literals inf/-inf/nan in args, `full` and `pad` for every float dtype (and with
integer and bool operands), every new unary op for every dtype on random values and on edge
values, and atan2 of integers and bools; and those of issue 22: extent expressions in every
place an extent stands, sizes bound by solving k*S+c and by scalar inputs, size literals, and
constant inputs (inline values, folded values, a constant output); and those of issue 23:
matrix products (an MLP scaled down from the corpus, GPT-2 style attention with its views read
in place, and every layout: transposed, batched with broadcast, rank 1 on either side).

    /usr/bin/python3 scripts/make_contract_graphs.py [--out tests/graphs]

Deterministic. The tests run every graph in tests/graphs through `eval` and the emulator
(tests/unit/test_emulated_graphs.cc); scripts/make_eval_goldens.py --corpus tests/graphs
--out tests/graphs/eval stores PyTorch's outputs for them (tests/graphs/eval/README.md).
"""
import argparse
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i32", "i64"]
DTYPES = ["bool"] + INTS + FLOATS
REDUCTIONS = ["sum", "prod", "max", "min", "amax", "amin", "mean", "var", "var_mean"]
NEW_UNARY = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10",
             "erfinv", "lgamma", "frac", "signbit"]


def reduced_dtype(kind, dt):
    return "i64" if kind in ("sum", "prod") and dt not in FLOATS else dt


def rng(dt, lo=-2, hi=2):
    return {} if dt == "bool" else {"range": [lo, hi]}


def inp(name, dt, shape=None, **extra):
    d = {"name": name, "dtype": dt}
    if shape is not None:
        d["shape"] = shape
    d.update(extra)
    return d


def op(kind, args, out, **attrs):
    d = {"op": kind}
    if args is not None:
        d["args"] = args
    d.update(attrs)
    d["out"] = out
    return d


def doc(name, symbols, inputs, ops, outputs, aliases=None):
    d = {"fuserc": 1, "name": name, "symbols": symbols, "inputs": inputs, "ops": ops,
         "outputs": outputs}
    if aliases:
        d["aliases"] = aliases
    return d


# ---------------------------------------------------------------- reductions written in place

def inplace_reduce(dt):
    """Every reduction `dt` accepts, each written in place into its own buffer (replacing its
    contents), over contiguous rows (into [R]) and strided rows with keepdim (into [1, R])."""
    inputs = [inp("x", dt, ["R", "N"], **rng(dt)), inp("xt", dt, ["N", "R"], **rng(dt))]
    ops, outputs, aliases, updated = [], [], {}, []
    for k in REDUCTIONS:
        if k in ("mean", "var", "var_mean") and dt not in FLOATS:
            continue
        rd = reduced_dtype(k, dt)
        for layout, src, dims, shape, keep in (("in", "x", [1], ["R"], False),
                                               ("out", "xt", [0], [1, "R"], True)):
            outs = [f"{k}_{layout}_v", f"{k}_{layout}_m"] if k == "var_mean" else [f"{k}_{layout}"]
            attrs = {"dims": dims}
            if keep:
                attrs["keepdim"] = True
            ops.append(op(k, [src], outs if k == "var_mean" else outs[0], **attrs))
            for o in outs:
                buf = "acc_" + o
                inputs.append(inp(buf, rd, shape, **rng(rd)))
                aliases[o] = buf
                outputs.append(o)
                updated.append(buf)
    # Every other buffer is listed too: its updated value.
    return doc(f"inplace_reduce_{dt}", {"R": {"hint": 6}, "N": {"hint": 300}}, inputs, ops,
               outputs + updated[::2], aliases)


def inplace_accumulate(dt):
    """Statistics accumulated into buffers: the buffer read after the reduction (acc + sum,
    maximum(acc, amax), a running mean), before it (sum(x * w) into w, w broadcast over the
    row), var_mean into two buffers with keepdim, and a strided-row sum accumulated."""
    rs = reduced_dtype("sum", dt)
    inputs = [inp("x", dt, ["R", "N"], **rng(dt)), inp("xt", dt, ["N", "R"], **rng(dt)),
              inp("s_acc", rs, ["R"], **rng(rs)), inp("m_acc", dt, ["R"], **rng(dt)),
              inp("w", rs, ["R"], **rng(rs, -1, 1)), inp("o_acc", rs, ["R"], **rng(rs))]
    ops = [op("sum", ["x"], "s", dims=[1]), op("add", ["s_acc", "s"], "s_new"),
           op("amax", ["x"], "mx", dims=[1]), op("maximum", ["m_acc", "mx"], "m_new"),
           op("broadcast_in_dim", ["w"], "wb", shape=["R", "N"], broadcast_dims=[0]),
           op("mul", ["x", "wb"], "xw"), op("sum", ["xw"], "w_new", dims=[1]),
           op("sum", ["xt"], "so", dims=[0]), op("add", ["o_acc", "so"], "o_new")]
    outputs = ["s_new", "m_new", "w_new", "o_new"]
    aliases = {"s_new": "s_acc", "m_new": "m_acc", "w_new": "w", "o_new": "o_acc"}
    if dt in FLOATS:
        inputs += [inp("rm", dt, ["R"], **rng(dt)), inp("v_acc", dt, ["R", 1], **rng(dt)),
                   inp("mu_acc", dt, ["R", 1], **rng(dt))]
        ops += [op("mean", ["x"], "mu", dims=[1]), op("mul", ["rm", 0.9], "rm9"),
                op("mul", ["mu", 0.1], "mu1"), op("add", ["rm9", "mu1"], "rm_new"),
                op("var_mean", ["x"], ["v", "m"], dims=[1], keepdim=True)]
        outputs += ["rm_new", "v", "m"]
        aliases.update({"rm_new": "rm", "v": "v_acc", "m": "mu_acc"})
    return doc(f"inplace_accumulate_{dt}", {"R": {"hint": 5}, "N": {"hint": 200}}, inputs, ops,
               outputs + ["s_acc", "w", "m_acc"], aliases)


def inplace_grid():
    """Few long rows: reductions split over several blocks (the last block writes the row's
    result), inner and outer, accumulating and reading the buffer before the reduction."""
    inputs = [inp("x", "f32", ["R", "L"]), inp("xt", "f16", ["L", "R"]),
              inp("acc", "f32", ["R"]), inp("mx_acc", "f32", ["R"]),
              inp("v_acc", "f32", ["R"]), inp("wo", "f32", ["R"], range=[-1, 1])]
    ops = [op("sum", ["x"], "s", dims=[1]), op("add", ["acc", "s"], "acc_new"),
           op("amax", ["x"], "mx", dims=[1]), op("var", ["x"], "v", dims=[1]),
           op("cast", ["xt"], "xtf", dtype="f32"), op("mul", ["xtf", "wo"], "xw"),
           op("sum", ["xw"], "wo_new", dims=[0])]
    return doc("inplace_grid", {"R": {"hint": 4}, "L": {"hint": 100000}}, inputs, ops,
               ["acc_new", "mx", "v", "wo_new", "acc", "wo"],
               {"acc_new": "acc", "mx": "mx_acc", "v": "v_acc", "wo_new": "wo"})


def inplace_norms():
    """Normalizations written in place: a softmax into its input; a layer norm into its input
    with its statistics into buffers; an RMS norm into its input accumulating its mean square."""
    sym = {"N": {"hint": 6}, "H": {"hint": 700}}
    softmax = doc("inplace_softmax_f16", sym, [inp("x", "f16", ["N", "H"])], [
        op("amax", ["x"], "m", dims=[1], keepdim=True), op("sub", ["x", "m"], "xs"),
        op("exp", ["xs"], "e"), op("sum", ["e"], "s", dims=[1], keepdim=True),
        op("div", ["e", "s"], "y")], ["y", "x"], {"y": "x"})
    layer = doc("inplace_layer_norm_bf16", sym, [
        inp("x", "bf16", ["N", "H"]), inp("w", "bf16", ["H"]), inp("b", "bf16", ["H"]),
        inp("mu_buf", "bf16", ["N", 1]), inp("rstd_buf", "bf16", ["N", 1])], [
        op("var_mean", ["x"], ["v", "mu"], dims=[1], keepdim=True, correction=0),
        op("add", ["v", 1e-5], "ve"), op("rsqrt", ["ve"], "rstd"), op("sub", ["x", "mu"], "xc"),
        op("mul", ["xc", "rstd"], "xn"), op("mul", ["xn", "w"], "xw"), op("add", ["xw", "b"], "y")],
        ["y", "mu", "rstd", "x", "mu_buf"], {"y": "x", "mu": "mu_buf", "rstd": "rstd_buf"})
    rms = doc("inplace_rms_norm_f32", sym, [inp("x", "f32", ["N", "H"]),
                                            inp("ms_acc", "f32", ["N"])], [
        op("mul", ["x", "x"], "sq"), op("mean", ["sq"], "ms", dims=[1]),
        op("add", ["ms_acc", "ms"], "ms_new"), op("add", ["ms", 1e-6], "mse"),
        op("rsqrt", ["mse"], "r"), op("broadcast_in_dim", ["r"], "rb", shape=["N", "H"],
                                      broadcast_dims=[0]),
        op("mul", ["x", "rb"], "y")], ["y", "ms_new", "ms_acc"], {"y": "x", "ms_new": "ms_acc"})
    return [softmax, layer, rms]


def inplace_hazards():
    """Graphs whose in-place writes one kernel cannot do safely: the plan splits or orders the
    kernels (the values must still match the reference)."""
    out = []
    # The buffer is read along the reduced axis (other rows): reduce, then write, in two kernels.
    out.append(doc("inplace_hazard_cross_row", {"S": {"hint": 40}}, [
        inp("x", "f32", ["S", "S"]), inp("acc", "f32", ["S"])], [
        op("mul", ["x", "acc"], "t"), op("sum", ["t"], "s", dims=[1])], ["s", "acc"],
        {"s": "acc"}))
    # A normalization that reads the buffer its statistic overwrites: the reads run first.
    out.append(doc("inplace_hazard_norm_reads_stat", {"N": {"hint": 6}, "H": {"hint": 300}}, [
        inp("x", "f32", ["N", "H"]), inp("mb", "f32", ["N", 1])], [
        op("mean", ["x"], "m", dims=[1], keepdim=True), op("sub", ["x", "mb"], "y")],
        ["y", "m", "mb"], {"m": "mb"}))
    # A transpose read of the input written in place (pointwise): two kernels.
    out.append(doc("inplace_hazard_transpose", {"S": {"hint": 33}}, [inp("x", "f32", ["S", "S"])], [
        op("neg", ["x"], "t"), op("permute", ["t"], "y", dims=[1, 0])], ["y", "x"], {"y": "x"}))
    # Another kernel reads the input written in place: it runs first.
    out.append(doc("inplace_hazard_reader_first", {"N": {"hint": 64}, "M": {"hint": 48}}, [
        inp("x", "bf16", ["N", "M"])], [
        op("exp", ["x"], "y"), op("sum", ["x"], "z", dims=[1]), op("amax", ["x"], "w", dims=[0])],
        ["y", "z", "w", "x"], {"y": "x"}))
    # A reader of the overwritten input needs a result computed from the kernel that overwrites
    # it (through a reduction of another domain): it reads a copy taken before.
    out.append(doc("inplace_hazard_copy_before_write", {"S": {"hint": 16}, "T": {"hint": 32}}, [
        inp("z", "f32", ["S", "T"]), inp("x", "f32", ["S"])], [
        op("sum", ["z"], "s", dims=[1]), op("amax", ["s"], "q", dims=[0]),
        op("add", ["x", "q"], "m")], ["s", "m", "x"], {"s": "x"}))
    return out


def updated_inputs():
    """An optimizer step whose updated parameters and moments are listed as outputs by the
    inputs' names (as PyTorch and nvFuser return them), besides the aliased results."""
    return doc("updated_inputs_adam", {"N": {"hint": 1000}}, [
        inp("p", "f32", ["N"]), inp("g", "f32", ["N"]), inp("m", "f32", ["N"]),
        inp("v", "f32", ["N"], range=[0, 1]), inp("lr", "f32")], [
        op("mul", ["m", 0.9], "m9"), op("mul", ["g", 0.1], "g1"), op("add", ["m9", "g1"], "m_new"),
        op("mul", ["v", 0.999], "v9"), op("mul", ["g", "g"], "gg"), op("mul", ["gg", 0.001], "g2"),
        op("add", ["v9", "g2"], "v_new"), op("sqrt", ["v_new"], "sv"), op("add", ["sv", 1e-8], "den"),
        op("div", ["m_new", "den"], "step"), op("mul", ["step", "lr"], "dp"),
        op("sub", ["p", "dp"], "p_new")],
        ["p", "m", "v", "p_new", "m_new", "v_new", "g"],
        {"p_new": "p", "m_new": "m", "v_new": "v"})


# ---------------------------------------------------------------- literals

def literals(dt):
    """inf, -inf and nan as {"value": V} arguments, `full` and `pad` values, in `dt`: masked
    fills, a masked softmax with a row masked out entirely (NaN), clamps, comparisons, and
    the same literals against integer and bool operands (float results)."""
    v = lambda s: {"value": s}
    sym = {"N": {"hint": 5}}
    inputs = [inp("x", dt, ["N", 37]), inp("c", "bool", ["N", 37]),
              inp("i", "i32", ["N", 37], range=[-5, 5])]
    ops = [
        op("where", ["c", "x", v("-inf")], "masked"),
        op("full", None, "neg_row", shape=[1, 37], value="-inf", dtype=dt),
        op("cat", ["masked", "neg_row"], "mr", dim=0),
        op("amax", ["mr"], "mx", dims=[1], keepdim=True), op("sub", ["mr", "mx"], "sh"),
        op("exp", ["sh"], "e"), op("sum", ["e"], "se", dims=[1], keepdim=True),
        op("div", ["e", "se"], "softmax"),
        op("pad", ["x"], "pad_ninf", pads=[[0, 0], [1, 2]], value="-inf"),
        op("amax", ["pad_ninf"], "pad_max", dims=[1]),
        op("pad", ["x"], "pad_nan", pads=[[1, 0], [0, 1]], value="nan"),
        op("full", None, "f_inf", shape=["N", 2], value="inf", dtype=dt),
        op("full", None, "f_nan", shape=["N", 2], value="nan", dtype=dt),
        op("add", ["x", v("inf")], "plus_inf"),
        op("mul", [v("nan"), "x"], "times_nan"),
        op("maximum", ["x", v("nan")], "max_nan"),
        op("minimum", ["x", v("inf")], "min_inf"),
        op("clamp", ["x", v("-inf"), v(0.5)], "clamped"),
        op("isinf", ["plus_inf"], "is_inf"),
        op("signbit", ["pad_ninf"], "sb"),
        op("add", ["i", v("-inf")], "int_ninf"),
        op("lt", ["i", v("inf")], "int_lt_inf"),
        op("where", ["c", "i", v("nan")], "int_or_nan"),
        op("pad", ["c"], "bool_pad_nan", pads=[[0, 0], [2, 0]], value="nan"),
        op("full", None, "bool_nan", shape=["N"], value="nan", dtype="bool"),
        op("add", ["x", v(2)], "plus_two"),
    ]
    outs = ["softmax", "pad_max", "pad_nan", "f_inf", "f_nan", "plus_inf", "times_nan", "max_nan",
            "min_inf", "clamped", "is_inf", "sb", "int_ninf", "int_lt_inf", "int_or_nan",
            "bool_pad_nan", "bool_nan", "plus_two"]
    return doc(f"literals_inf_nan_{dt}", sym, inputs, ops, outs)


# ---------------------------------------------------------------- unary ops

# Exactly representable in every float dtype, so that every side starts from the same values.
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.9375, -0.9375, 2.0, -2.0, -3.0, -2.5, 100.0,
               -100.5, 0.0009765625, "inf", "-inf", "nan"]
EDGE_INTS = [0, 1, -1, 2, -2, -3, 100, -100, 7]
EDGE_BOOLS = [True, False]


def unary_new(dt):
    """Every new unary op on random values of `dt` and on edge values (PyTorch's semantics:
    erfinv(+-1) = +-inf, lgamma at 0 and negative integers = inf, frac of negatives, signbit of
    -0.0 and infinities; integer and bool inputs give f32, signbit gives bool)."""
    edges = EDGE_FLOATS if dt in FLOATS else (EDGE_BOOLS if dt == "bool" else EDGE_INTS)
    r = {} if dt == "bool" else {"range": [-3, 3] if dt in FLOATS else [-20, 20]}
    ops, parts = [], []
    for j, val in enumerate(edges):
        ops.append(op("full", None, f"e{j}", shape=[1], value=val, dtype=dt))
        parts.append(f"e{j}")
    ops.append(op("cat", parts, "edge", dim=0))
    outs = []
    for k in NEW_UNARY:
        ops.append(op(k, ["x"], f"{k}_x"))
        ops.append(op(k, ["edge"], f"{k}_edge"))
        outs += [f"{k}_x", f"{k}_edge"]
    return doc(f"unary_new_{dt}", {"N": {"hint": 7}, "M": {"hint": 53}},
               [inp("x", dt, ["N", "M"], **r)], ops, outs)


def atan2_int_bool():
    """atan2 of integer and bool operands gives f32 (tensors, scalars and literals)."""
    return doc("atan2_int_bool", {"N": {"hint": 40}}, [
        inp("a", "i32", ["N"], range=[-5, 5]), inp("b", "i64", ["N"], range=[-5, 5]),
        inp("p", "bool", ["N"]), inp("q", "bool", ["N"]), inp("s", "i64")], [
        op("atan2", ["a", "b"], "ab"), op("atan2", ["p", "q"], "pq"), op("atan2", ["a", "p"], "ap"),
        op("atan2", ["b", 2], "b2"), op("atan2", ["s", "a"], "sa"), op("atan2", ["q", 0.5], "qh")],
        ["ab", "pq", "ap", "b2", "sa", "qh"])


def shapes_tokens():
    """reshape_tokens_f32 scaled down: rows B*197 (B solved from them), a 197-long middle dim."""
    return doc("shapes_tokens_f32", {"B": {"hint": 3, "max": 64}},
               [inp("x", "f32", ["B*197", 8])],
               [op("reshape", ["x"], "x3", shape=["B", 197, 8]),
                op("var_mean", ["x3"], ["v", "m"], dims=[-1], keepdim=True, correction=0),
                op("sub", ["x3", "m"], "d"), op("add", ["v", 1e-05], "ve"),
                op("rsqrt", ["ve"], "r"), op("mul", ["d", "r"], "n"),
                op("reshape", ["n"], "n2", shape=["B*197", 8]),
                op("mean", ["n"], "pooled", dims=[1])],
               ["n2", "pooled"])


def shapes_exprs():
    """An extent expression wherever an extent stands: input shapes and strides (channels
    last), reshape, slice bounds, pad amounts, iota's length, full's shape and size value,
    expand, broadcast_in_dim; size literals as operands."""
    return doc("shapes_exprs", {"B": {"hint": 3, "max": 64}, "T": {"hint": 5, "max": 64}},
               [inp("x", "f32", ["B*6", 8]), inp("p", "f32", ["T+1", 4]),
                inp("c", "f16", ["B", 2, "T", 3], strides=["2*T*3", 1, 6, 2]),
                inp("q", "bf16", ["2*T+2"])],
               [op("reshape", ["x"], "x3", shape=["B", 6, 8]),
                op("slice", ["x3"], "xs", starts=[0, "1", 0], ends=["B", "6-1", 8],
                   steps=[1, 2, 1]),
                op("pad", ["p"], "pp", pads=[["T//2", 1], [0, "T%3"]], value=2),
                op("iota", [], "io", length="T*2+1", dtype="f32"),
                op("mul", ["io", {"size": "B*T-1"}], "ios"),
                op("full", [], "fu", shape=["B", "T"], value={"size": "T*T"}, dtype="i32"),
                op("sum", ["c"], "cs", dims=[1, 3], dtype="f32"),
                op("div", ["cs", {"size": "2*3"}], "cm"),
                op("reshape", ["q"], "q2", shape=["T+1", 2]),
                op("expand", ["q2"], "qe", shape=["B", "T+1", 2]),
                op("broadcast_in_dim", ["io"], "iob", shape=["2*T+1", "B"],
                   broadcast_dims=[0])],
               ["xs", "pp", "ios", "fu", "cm", "qe", "iob"])


def shapes_symbol_scalar():
    """dynamic_full_i64's pattern: a size set by an i32 scalar's value, used by full, iota,
    a reshape and as an operand."""
    return doc("shapes_symbol_scalar", {"K": {"hint": 5, "max": 4096}},
               [inp("k", "i32", symbol="K"), inp("x", "f32", [4])],
               [op("full", [], "f", shape=["K", 4], value=1.5, dtype="f32"),
                op("iota", [], "i", length="K", dtype="f32"),
                op("broadcast_in_dim", ["i"], "ib", shape=["K", 4], broadcast_dims=[0]),
                op("mul", ["f", "ib"], "fi"), op("add", ["fi", "x"], "y"),
                op("reshape", ["y"], "r", shape=["K*2", 2]), op("mul", ["x", "k"], "xk")],
               ["y", "r", "xk"])


def shapes_batchnorm_train():
    """batchnorm_train_fwd_f32 with 4 channels: statistics over N*H*W, the unbiased running
    variance through size literals, running statistics updated in place."""
    c = 4
    return doc("shapes_batchnorm_train",
               {"N": {"hint": 2, "min": 2, "max": 64}, "H": {"hint": 3, "max": 64},
                "W": {"hint": 5, "max": 64}},
               [inp("x", "f32", ["N", c, "H", "W"]), inp("rm", "f32", [c]),
                inp("rv", "f32", [c], range=[0.5, 2.0])],
               [op("var_mean", ["x"], ["v", "m"], dims=[0, 2, 3], keepdim=True, correction=0),
                op("sub", ["x", "m"], "d"), op("add", ["v", 1e-05], "ve"),
                op("rsqrt", ["ve"], "r"), op("mul", ["d", "r"], "y"),
                op("reshape", ["m"], "ms", shape=[c]), op("reshape", ["v"], "vs", shape=[c]),
                op("mul", ["vs", {"size": "N*H*W"}], "vn"),
                op("div", ["vn", {"size": "N*H*W-1"}], "vu"),
                op("mul", ["rm", 0.9], "rm0"), op("mul", ["ms", 0.1], "rm1"),
                op("add", ["rm0", "rm1"], "rm_new"),
                op("mul", ["rv", 0.9], "rv0"), op("mul", ["vu", 0.1], "rv1"),
                op("add", ["rv0", "rv1"], "rv_new")],
               ["y", "rm_new", "rv_new"], aliases={"rm_new": "rm", "rv_new": "rv"})


def constants_inline():
    """Constant inputs of every dtype, inline (nested and flat; inf, -inf, nan), one listed as
    an output, and values computed from constants alone (folded at compile time)."""
    return doc("constants_inline", {"N": {"hint": 6, "max": 512}},
               [inp("x", "f32", ["N", 4]),
                inp("c", "f32", [4], data=[1, 2, "inf", -0.5]),
                inp("m", "bool", [2, 2], data=[[True, False], [0, 1]]),
                inp("h", "f16", [1, 4], data=[0.5, 0.25, 2, 3]),
                inp("b", "bf16", [4], data=[1.5, -2, 0.125, "-inf"]),
                inp("i", "i32", [4], data=[1, -2, 3, 2147483647]),
                inp("l", "i64", [2, 4], data=[[1, 0, 2, 5], [1, 1, -3, 0]]),
                inp("d", "f64", [4], data=[0.1, 0.2, 0.3, "nan"])],
               [op("add", ["x", "c"], "y"),
                op("reshape", ["m"], "m4", shape=[4]),
                op("where", ["m4", "y", 0.0], "z"),
                op("mul", ["z", "h"], "zh"),
                op("sum", ["l"], "ls", dims=[0]),
                op("mul", ["b", "ls"], "bl"),
                op("add", ["zh", "bl"], "o"),
                op("remainder", ["i", 7], "ir"),
                op("add", ["x", "ir"], "xi"),
                op("mul", ["x", "d"], "xd")],
               ["o", "xi", "xd", "c"])


# ---------------------------------------------------------------- matrix products (issue 23)

def matmul_mlp():
    """mlp_gelu_bf16 of the corpus, its weights scaled down: linear + bias + tanh gelu (the
    library's epilogue), linear + bias, the residual in a kernel."""
    return doc("matmul_mlp_bf16", {"N": {"hint": 20, "max": 4096}},
               [inp("x", "bf16", ["N", 24]), inp("w1", "bf16", [96, 24], range=[-0.3, 0.3]),
                inp("b1", "bf16", [96]), inp("w2", "bf16", [24, 96], range=[-0.3, 0.3]),
                inp("b2", "bf16", [24])],
               [op("linear", ["x", "w1", "b1"], "h"),
                op("gelu", ["h"], "g", approximate="tanh"),
                op("linear", ["g", "w2", "b2"], "o"),
                op("add", ["x", "o"], "y")],
               ["y"])


def matmul_attention():
    """GPT-2 style attention: Q, K, V sliced out of one projection, split into heads, K
    transposed, a causal softmax, the heads merged back, the output projection and the
    residual: every view is read in place by the products."""
    return doc("matmul_attention_f16", {"B": {"hint": 2, "max": 8}, "S": {"hint": 9, "max": 512}},
               [inp("x", "f16", ["B", "S", 32]),
                inp("w_qkv", "f16", [96, 32], range=[-0.3, 0.3]), inp("b_qkv", "f16", [96]),
                inp("w_o", "f16", [32, 32], range=[-0.3, 0.3])],
               [op("linear", ["x", "w_qkv", "b_qkv"], "qkv"),
                op("slice", ["qkv"], "q0", starts=[0, 0, 0], ends=["B", "S", 32]),
                op("slice", ["qkv"], "k0", starts=[0, 0, 32], ends=["B", "S", 64]),
                op("slice", ["qkv"], "v0", starts=[0, 0, 64], ends=["B", "S", 96]),
                op("reshape", ["q0"], "q1", shape=["B", "S", 4, 8]),
                op("permute", ["q1"], "q", dims=[0, 2, 1, 3]),
                op("reshape", ["k0"], "k1", shape=["B", "S", 4, 8]),
                op("permute", ["k1"], "kt", dims=[0, 2, 3, 1]),
                op("reshape", ["v0"], "v1", shape=["B", "S", 4, 8]),
                op("permute", ["v1"], "v", dims=[0, 2, 1, 3]),
                op("matmul", ["q", "kt"], "s0"),
                op("mul", ["s0", 0.35], "s1"),
                op("iota", [], "ii", length="S", dtype="i64"),
                op("broadcast_in_dim", ["ii"], "ri", shape=["S", "S"], broadcast_dims=[0]),
                op("broadcast_in_dim", ["ii"], "ci", shape=["S", "S"], broadcast_dims=[1]),
                op("ge", ["ri", "ci"], "causal"),
                op("where", ["causal", "s1", {"value": "-inf"}], "s2"),
                op("cast", ["s2"], "sf", dtype="f32"),
                op("amax", ["sf"], "mx", dims=[-1], keepdim=True),
                op("sub", ["sf", "mx"], "z"),
                op("exp", ["z"], "e"),
                op("sum", ["e"], "se", dims=[-1], keepdim=True),
                op("div", ["e", "se"], "pf"),
                op("cast", ["pf"], "p", dtype="f16"),
                op("matmul", ["p", "v"], "o"),
                op("permute", ["o"], "o1", dims=[0, 2, 1, 3]),
                op("reshape", ["o1"], "o2", shape=["B", "S", 32]),
                op("linear", ["o2", "w_o"], "proj"),
                op("add", ["x", "proj"], "y")],
               ["y"])


def matmul_layouts(dt):
    """Every layout of an operand: transposed (a permute read in place), K-major through a
    declared stride, batched with a broadcast batch dimension, a weight shared by the batch
    (folded into rows), rank 1 on either side, a matrix-vector product, relu in the epilogue and
    a cast after it."""
    return doc("matmul_layouts_" + dt, {"B": {"hint": 2, "max": 16}, "N": {"hint": 7, "max": 300}},
               [inp("a", dt, ["B", 3, "N", 8]), inp("b", dt, ["B", 1, 8, 6]),
                inp("at", dt, [8, "N"]), inp("w", dt, [8, 6]),
                inp("ac", dt, ["N", 8], strides=[1, "N"]),
                inp("u", dt, ["N"]), inp("v", dt, [8])],
               [op("matmul", ["a", "b"], "c"),
                op("permute", ["at"], "att", dims=[1, 0]),
                op("matmul", ["att", "w"], "d"),
                op("relu", ["d"], "dr"),
                op("cast", ["dr"], "dc", dtype="f32" if dt != "f32" else "f16"),
                op("matmul", ["ac", "w"], "e"),
                op("matmul", ["a", "w"], "f"),
                op("matmul", ["u", "att"], "g"),
                op("matmul", ["a", "v"], "h"),
                op("matmul", ["v", "v"], "dot")],
               ["c", "dc", "e", "f", "g", "h", "dot"])


def all_graphs():
    g = []
    for dt in DTYPES:
        g.append(inplace_reduce(dt))
    for dt in INTS + FLOATS:
        g.append(inplace_accumulate(dt))
    g.append(inplace_grid())
    g += inplace_norms()
    g += inplace_hazards()
    g.append(updated_inputs())
    for dt in FLOATS:
        g.append(literals(dt))
    for dt in DTYPES:
        g.append(unary_new(dt))
    g.append(atan2_int_bool())
    g += [shapes_tokens(), shapes_exprs(), shapes_symbol_scalar(), shapes_batchnorm_train(),
          constants_inline()]
    g += [matmul_mlp(), matmul_attention()] + [matmul_layouts(dt) for dt in FLOATS]
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "graphs"))
    a = ap.parse_args()
    for d in all_graphs():
        path = os.path.join(a.out, d["name"] + ".json")
        with open(path, "w") as f:
            json.dump(d, f, indent=1)
            f.write("\n")
        print(path)


if __name__ == "__main__":
    main()
