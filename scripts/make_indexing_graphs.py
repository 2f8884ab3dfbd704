#!/usr/bin/python3
"""Writes the fusion graphs of tests/graphs/ that cover index_select and gather (issue 15):
every input dtype with i32 and i64 indices, negative dims, every dim of a rank-3 tensor, empty
index tensors (symbols with `min: 0`), indices at 0 and at extent - 1
(made by full and iota), index tensors produced by casts and views, an index produced by
another lookup, gathers feeding a reduction along the gathered dim, lookups of reduction
results and indices made by reductions, the lookup of a RoPE
kernel and cross-entropy in f32.

    /usr/bin/python3 scripts/make_indexing_graphs.py [--out tests/graphs]

Deterministic. The tests run every graph in tests/graphs through `eval` and the emulator
(tests/unit/test_emulated_graphs.cc, family "indexing_"); scripts/make_eval_goldens.py
--corpus tests/graphs --out tests/graphs/eval stores PyTorch's outputs for them.
"""
import argparse
import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i32", "i64"]
DTYPES = ["bool"] + INTS + FLOATS


def inp(name, dt, shape, **extra):
    d = {"name": name, "dtype": dt, "shape": shape}
    d.update(extra)
    return d


def op(kind, args, out, **attrs):
    d = {"op": kind}
    if args is not None:
        d["args"] = args
    d.update(attrs)
    d["out"] = out
    return d


def doc(name, symbols, inputs, ops, outputs):
    return {"fuserc": 1, "name": name, "symbols": symbols, "inputs": inputs, "ops": ops,
            "outputs": outputs}


def every_dtype(dt):
    """Both ops on a `dt` table, one with an i32 and one with an i64 index, and work after."""
    rng = {} if dt == "bool" else {"range": [-3, 3]}
    ops = [op("index_select", ["x", "rows"], "sel", dim=0),
           op("gather", ["x", "cols"], "gat", dim=-1)]
    outs = ["sel", "gat"]
    if dt == "bool":
        ops.append(op("logical_and", ["gat", "y"], "after"))
    else:
        ops.append(op("mul", ["gat", "y"], "after"))
    outs.append("after")
    return doc(f"indexing_dtype_{dt}",
               {"N": {"hint": 40, "max": 4096}, "M": {"hint": 23, "max": 4096},
                "K": {"hint": 9, "max": 64}},
               [inp("x", dt, ["N", 12], **rng), inp("rows", "i32", ["M"]),
                inp("cols", "i64", ["N", "K"]), inp("y", dt, ["N", "K"], **rng)],
               ops, outs)


def dims_rank3():
    """Every dim of a rank-3 tensor, positive and negative, with work on both sides."""
    return doc("indexing_dims_rank3",
               {"A": {"hint": 5, "max": 64}, "B": {"hint": 7, "max": 64},
                "C": {"hint": 33, "max": 1024}, "M": {"hint": 6, "max": 64}},
               [inp("x", "f32", ["A", "B", "C"], range=[-2, 2]), inp("i", "i64", ["M"]),
                inp("g", "i32", ["A", "B", 3]), inp("h", "i64", [2, "B", "C"])],
               [op("exp", ["x"], "e"),
                op("index_select", ["e", "i"], "s0", dim=0),
                op("index_select", ["e", "i"], "s1", dim=-2),
                op("index_select", ["x", "i"], "s2", dim=2),
                op("gather", ["e", "g"], "g2", dim=-1),
                op("gather", ["x", "h"], "g0", dim=-3),
                op("add", ["s1", 1.5], "s1p"),
                op("neg", ["g0"], "g0n")],
               ["s0", "s1p", "s2", "g2", "g0n"])


def empty_index():
    """Empty index tensors: a symbol that is always 0 and one that may be 0."""
    return doc("indexing_empty",
               {"N": {"hint": 10, "max": 256}, "M": {"hint": 4, "min": 0, "max": 256},
                "Z": {"hint": 0, "min": 0, "max": 0}},
               [inp("x", "bf16", ["N", 16], range=[-2, 2]), inp("none", "i64", ["Z"]),
                inp("some", "i32", ["M"]), inp("g", "i64", ["N", "Z"])],
               [op("index_select", ["x", "none"], "a", dim=0),
                op("index_select", ["x", "some"], "b", dim=0),
                op("gather", ["x", "g"], "c", dim=1),
                op("mul", ["b", 2], "b2")],
               ["a", "b2", "c"])


def edges():
    """Indices at 0 and at extent - 1, made by full and iota (the extents are constants)."""
    return doc("indexing_edges",
               {"N": {"hint": 6, "max": 256}},
               [inp("x", "f32", ["N", 50], range=[-2, 2]), inp("t", "f16", [37, 8], range=[-2, 2])],
               [op("full", None, "zero", shape=[4], value=0, dtype="i64"),
                op("full", None, "last", shape=[3], value=49, dtype="i32"),
                op("iota", None, "down", length=37, start=36, step=-1, dtype="i64"),
                op("cast", ["last"], "last64", dtype="i64"),
                op("cat", ["zero", "last64"], "ends", dim=0),
                op("index_select", ["x", "ends"], "cols", dim=1),
                op("index_select", ["t", "down"], "rev", dim=0),
                op("full", None, "gl", shape=["N", 2], value=49, dtype="i64"),
                op("gather", ["x", "gl"], "lastcol", dim=1)],
               ["cols", "rev", "lastcol"])


def casts_views():
    """Index tensors produced by casts and views: an embedding lookup of flattened ids, a
    gather whose index is an unsqueezed and expanded vector, an index cast from i64 to i32."""
    return doc("indexing_casts_views",
               {"B": {"hint": 3, "max": 64}, "S": {"hint": 5, "max": 64},
                "V": {"hint": 50, "max": 100000}, "N": {"hint": 11, "max": 1024}},
               [inp("ids", "i64", ["B", "S"]), inp("table", "bf16", ["V", 16], range=[-2, 2]),
                inp("x", "f32", ["N", 24], range=[-2, 2]), inp("t", "i32", ["N"])],
               [op("cast", ["ids"], "ids32", dtype="i32"),
                op("permute", ["ids32"], "idsT", dims=[1, 0]),
                op("reshape", ["idsT"], "flat", shape=[-1]),
                op("index_select", ["table", "flat"], "rows", dim=0),
                op("reshape", ["rows"], "emb", shape=["S", "B", 16]),
                op("cast", ["emb"], "embf", dtype="f32"),
                op("unsqueeze", ["t"], "t2", dim=1),
                op("expand", ["t2"], "t3", shape=["N", 4]),
                op("cast", ["t3"], "t64", dtype="i64"),
                op("gather", ["x", "t64"], "picked", dim=1),
                op("sum", ["picked"], "tot", dims=[1])],
               ["embf", "tot"])


def chained():
    """An index produced by another lookup (a permutation table declares its range)."""
    return doc("indexing_chained",
               {"N": {"hint": 13, "max": 1024}},
               [inp("perm", "i64", [20], range=[0, 29]), inp("i", "i32", ["N"]),
                inp("table", "f64", [30, 5], range=[-2, 2])],
               [op("index_select", ["perm", "i"], "j", dim=0),
                op("index_select", ["table", "j"], "rows", dim=0),
                op("relu", ["rows"], "y")],
               ["y"])


def gather_reduce():
    """Gathers along the reduced dim of a reduction and after it: the sum of K picked values
    per row, softmax statistics with the target's logit (cross-entropy in f32)."""
    return doc("indexing_gather_reduce",
               {"N": {"hint": 9, "max": 4096}, "V": {"hint": 300, "max": 65536},
                "K": {"hint": 5, "max": 64}},
               [inp("logits", "f32", ["N", "V"], range=[-4, 4]), inp("target", "i32", ["N"]),
                inp("pick", "i64", ["N", "K"])],
               [op("gather", ["logits", "pick"], "g", dim=1),
                op("sum", ["g"], "gsum", dims=[1]),
                op("amax", ["logits"], "m", dims=[1], keepdim=True),
                op("sub", ["logits", "m"], "xs"),
                op("exp", ["xs"], "e"),
                op("sum", ["e"], "s", dims=[1], keepdim=True),
                op("log", ["s"], "ls"),
                op("add", ["ls", "m"], "lse"),
                op("unsqueeze", ["target"], "t2", dim=1),
                op("gather", ["logits", "t2"], "picked", dim=-1),
                op("sub", ["lse", "picked"], "loss2"),
                op("squeeze", ["loss2"], "loss", dims=[1])],
               ["gsum", "loss"])


def rope():
    """cos/sin rows looked up by position id inside a RoPE-style kernel."""
    return doc("indexing_rope_bf16",
               {"B": {"hint": 2, "max": 64}, "S": {"hint": 7, "max": 4096},
                "P": {"hint": 64, "max": 8192}},
               [inp("x", "bf16", ["B", "S", 32], range=[-2, 2]), inp("pos", "i64", ["S"]),
                inp("cos", "bf16", ["P", 32], range=[-1, 1]),
                inp("sin", "bf16", ["P", 32], range=[-1, 1])],
               [op("index_select", ["cos", "pos"], "c", dim=0),
                op("index_select", ["sin", "pos"], "s", dim=0),
                op("slice", ["x"], "x1", starts=[0, 0, 0], ends=["B", "S", 16]),
                op("slice", ["x"], "x2", starts=[0, 0, 16], ends=["B", "S", 32]),
                op("neg", ["x2"], "nx2"),
                op("cat", ["nx2", "x1"], "rot", dim=2),
                op("mul", ["x", "c"], "xc"),
                op("mul", ["rot", "s"], "rs"),
                op("add", ["xc", "rs"], "y")],
               ["y"])


def embedding_small():
    """The public embedding_pos_layernorm_bf16 graph at a width of 64 and 256 positions (the
    public one's constant 2048 x 768 positions would make megabytes of goldens)."""
    ln = [op("cast", ["h"], "hf", dtype="f32"),
          op("var_mean", ["hf"], ["var", "mean"], dims=[-1], keepdim=True, correction=0),
          op("add", ["var", 1e-05], "ve"), op("rsqrt", ["ve"], "rstd"),
          op("sub", ["hf", "mean"], "hc"), op("mul", ["hc", "rstd"], "hn"),
          op("mul", ["hn", "w"], "hw"), op("add", ["hw", "b"], "yf"),
          op("cast", ["yf"], "y", dtype="bf16")]
    return doc("indexing_embedding_pos_layernorm_bf16",
               {"B": {"hint": 3, "max": 256}, "S": {"hint": 9, "max": 256},
                "V": {"hint": 40, "max": 1048576}},
               [inp("ids", "i32", ["B", "S"]), inp("table", "bf16", ["V", 64], range=[-2, 2]),
                inp("pos", "bf16", [256, 64], range=[-2, 2]),
                inp("w", "bf16", [64], range=[-2, 2]), inp("b", "bf16", [64], range=[-2, 2])],
               [op("reshape", ["ids"], "flat", shape=[-1]),
                op("index_select", ["table", "flat"], "rows", dim=0),
                op("reshape", ["rows"], "emb", shape=["B", "S", 64]),
                op("slice", ["pos"], "p", starts=[0, 0], ends=["S", 64], steps=[1, 1]),
                op("add", ["emb", "p"], "h")] + ln,
               ["y"])


def reductions_around():
    """Lookups of reduction results and of values computed after a reduction, an index made by
    a reduction, and a gather along the row of a normalization (its index varies along the row)."""
    return [
        doc("indexing_of_reduced",
            {"N": {"hint": 50, "max": 4096}, "M": {"hint": 7, "max": 4096}},
            [inp("x", "f32", ["N", 64], range=[-2, 2]), inp("i", "i64", ["M"]),
             inp("y", "f32", ["M", 64], range=[-2, 2])],
            [op("sum", ["x"], "s", dims=[1], keepdim=True), op("sub", ["x", "s"], "xc"),
             op("index_select", ["s", "i"], "si", dim=0),
             op("index_select", ["xc", "i"], "xi", dim=0),
             op("mul", ["xi", "si"], "z"), op("add", ["z", "y"], "w")],
            ["w", "xc"]),
        doc("indexing_index_from_reduction",
            {"N": {"hint": 50, "max": 4096}},
            [inp("a", "i32", ["N", 4], range=[0, 2]), inp("t", "f32", [9, 32], range=[-2, 2]),
             inp("x", "f32", ["N", 32], range=[-2, 2])],
            [op("sum", ["a"], "s", dims=[1]), op("index_select", ["t", "s"], "r", dim=0),
             op("add", ["r", "x"], "h"), op("amax", ["h"], "m", dims=[1], keepdim=True),
             op("sub", ["h", "m"], "y")],
            ["y"]),
        doc("indexing_softmax_of_gather_bf16",
            {"N": {"hint": 20, "max": 4096}, "V": {"hint": 600, "max": 65536}},
            [inp("x", "bf16", ["N", "V"], range=[-3, 3]), inp("p", "i32", ["N", "V"])],
            [op("gather", ["x", "p"], "g", dim=1), op("cast", ["g"], "gf", dtype="f32"),
             op("amax", ["gf"], "m", dims=[1], keepdim=True), op("sub", ["gf", "m"], "e"),
             op("exp", ["e"], "ee"), op("sum", ["ee"], "s", dims=[1], keepdim=True),
             op("div", ["ee", "s"], "y")],
            ["y"]),
        doc("indexing_gather_outer_f16",
            {"N": {"hint": 20, "max": 4096}, "K": {"hint": 3, "max": 64}},
            [inp("x", "f16", ["N", 48], range=[-2, 2]), inp("p", "i64", ["K", 48])],
            [op("gather", ["x", "p"], "g", dim=0), op("sum", ["g"], "s", dims=[0])],
            ["s"]),
    ]


def all_graphs():
    g = [every_dtype(dt) for dt in DTYPES]
    g += [dims_rank3(), empty_index(), edges(), casts_views(), chained(), gather_reduce(), rope(),
          embedding_small()]
    g += reductions_around()
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
