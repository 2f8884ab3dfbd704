#!/usr/bin/python3
"""Compares the unary ops added by issue 14 with PyTorch at edge values and over dense sweeps,
through `fuserc eval` and `fuserc run --emulate`, via ../shared/tools/check_corpus.py.

    /usr/bin/python3 scripts/compare_unary_edges.py [--fuserc build/cmd/fuserc] [--keep DIR]

For every op and dtype it writes a graph (in a temporary folder) whose operand is a constant
vector: edge values (+-0, +-1, +-0.5, +-0.9375, 2, -2.5, -3, 100, -100.5, 2^-10, +-inf, nan
for floats; small and negative integers; true/false) and a dense sweep (iota over [-3, 3],
and over (-1, 1) for erfinv/atanh/asin/acos), so that check_corpus judges exactly these values;
then it reads back the outputs check_corpus kept and prints, per op, dtype and mode, the
largest error in units in the last place of the output dtype and the oracle's relative L2
error, with the oracle's verdict. Needs Debian's python3-torch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOLS = os.path.join(REPO, "..", "shared", "tools")
sys.path.insert(0, TOOLS)
import oracle  # noqa: E402
import torch  # noqa: E402

OPS = ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "log10", "erfinv",
       "lgamma", "frac", "signbit"]
DTYPES = ["f16", "bf16", "f32", "f64", "i32", "i64", "bool"]
EDGE_F = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.9375, -0.9375, 2.0, -2.0, -3.0, -2.5, 100.0,
          -100.5, 0.0009765625, "inf", "-inf", "nan"]
EDGE_I = [0, 1, -1, 2, -2, -3, 100, -100, 7]
SWEEP = 4001


def graph(op, dt):
    ops, parts = [], []
    edges = EDGE_F if dt in oracle.FLOATS else ([True, False] if dt == "bool" else EDGE_I)
    for j, v in enumerate(edges):
        ops.append({"op": "full", "shape": [1], "value": v, "dtype": dt, "out": f"e{j}"})
        parts.append(f"e{j}")
    ops.append({"op": "cat", "args": parts, "dim": 0, "out": "edge"})
    ops.append({"op": op, "args": ["edge"], "out": "y_edge"})
    outs = ["y_edge"]
    if dt in oracle.FLOATS:
        lo, hi = (-1.0, 1.0) if op in ("erfinv", "atanh", "asin", "acos") else (-3.0, 3.0)
        step = (hi - lo) / (SWEEP + 1)
        ops.append({"op": "iota", "length": SWEEP, "start": lo + step, "step": step,
                    "dtype": "f64", "out": "s64"})
        ops.append({"op": "cast", "args": ["s64"], "dtype": dt, "out": "sweep"})
        ops.append({"op": op, "args": ["sweep"], "out": "y_sweep"})
        outs.append("y_sweep")
    return {"fuserc": 1, "name": f"edge_{op}_{dt}", "inputs": [
        {"name": "unused", "dtype": "f32", "shape": [1]}], "ops": ops, "outputs": outs}


def ulp_error(got, ref, dt):
    """The largest |got - ref| in ulps of `dt` at ref, over elements finite in both."""
    if dt not in oracle.FLOATS:
        return int((got.to(torch.int64) != ref.to(torch.int64)).sum())
    r = ref.to(oracle.DT[dt])
    g = got.to(torch.float64)
    fin = torch.isfinite(r) & torch.isfinite(g)
    if not bool(fin.any()):
        return 0.0
    bits, emin = {"f16": (10, -14), "bf16": (7, -126), "f32": (23, -126), "f64": (52, -1022)}[dt]
    _, e = torch.frexp(r[fin].to(torch.float64))  # |r| = m * 2^e, m in [0.5, 1)
    ulp = torch.pow(2.0, (torch.clamp(e - 1, min=emin) - bits).to(torch.float64))
    return float(((g[fin] - ref.to(torch.float64)[fin]).abs() / ulp).max())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fuserc", default=os.path.join(REPO, "build", "cmd", "fuserc"))
    ap.add_argument("--keep")
    a = ap.parse_args()
    work = a.keep or tempfile.mkdtemp(prefix="fuserc-edges-")
    gdir, kdir = os.path.join(work, "graphs"), os.path.join(work, "kept")
    os.makedirs(gdir, exist_ok=True)
    os.makedirs(kdir, exist_ok=True)
    for op in OPS:
        for dt in DTYPES:
            with open(os.path.join(gdir, f"edge_{op}_{dt}.json"), "w") as f:
                json.dump(graph(op, dt), f)
    check = subprocess.run([sys.executable, os.path.join(TOOLS, "check_corpus.py"), "--fuserc",
                            a.fuserc, "--modes", "eval,emulate", "--keep", kdir, gdir],
                           capture_output=True, text=True)
    verdict = {}
    for line in check.stdout.splitlines():
        if line.startswith(("ok", "FAIL")):
            verdict[line.split()[1].rsplit(".", 1)[0]] = line.split()[0]
    print(check.stdout.splitlines()[-1])
    print(f"{'op':8} {'dtype':5} {'check':5} {'eval: ulps (edge, sweep)':>26} "
          f"{'emulate: ulps (edge, sweep)':>29}   oracle relative L2 (eval / emulate)")
    for op in OPS:
        for dt in DTYPES:
            name = f"edge_{op}_{dt}"
            doc = json.load(open(os.path.join(gdir, name + ".json")))
            feeds = oracle.read_safetensors(os.path.join(kdir, f"{name}.0.in.safetensors"))
            g = oracle.Graph(doc)
            g.bind(feeds)
            env, _ = g.evaluate(feeds)
            cols, rels = [], []
            for mode in ("eval", "emulate"):
                path = os.path.join(kdir, f"{name}.0.{mode}.safetensors")
                if not os.path.exists(path):
                    cols.append("missing")
                    continue
                got = oracle.read_safetensors(path)
                errs = []
                for out in doc["outputs"]:
                    rdt, ref = env[out]
                    errs.append(ulp_error(got[out][1], ref, rdt))
                cols.append(", ".join(f"{e:g}" for e in errs))
                rels.append("; ".join(m for _, _, m in oracle.compare(doc, feeds, got)))
            print(f"{op:8} {dt:5} {verdict.get(name, '?'):5} {cols[0]:>26} {cols[1]:>29}   "
                  f"{rels[0] if rels else ''}")
    return check.returncode


if __name__ == "__main__":
    sys.exit(main())
