#!/usr/bin/python3
"""Front-end time of fuserc on generated graphs of 100, 1,000 and 10,000 ops (figures, not a test).

    bench/frontend_scale.py [--fuserc build/cmd/fuserc] [--sizes 100,1000,10000] [--timeout 600]
                            [--shapes chain,wide,live,web,columns,norms]

Two shapes:
  chain  n elementwise ops, each reading the previous result (and every other one the second
         input): one long dependency chain;
  wide   n/10 independent branches of 10 elementwise ops over the same two inputs, one output
         each: many small kernels that read the same tensors;
  live   n/3 row sums of [B, N], each materialized (segment_set) and all concatenated at the
         end: n/3 intermediates alive at once, which the memory plan places side by side
         (its first fit was cubic in them before 2026-11-27: 355 ms at 40, 0.6 s for a topk of
         32);
  web    a random DAG (seeded) over [N, M]: elementwise ops reading two of the last 50 results,
         row sums subtracted back, a segment_set every tenth op, an output every thirtieth: one
         region cut into hundreds of convex pieces whose single ops merge bottom-up (the
         producer merges scanned every pair per merge before 2026-11-28: 5.5 min at 10,000);
  columns n/2 columns of x sliced out, scaled and concatenated: hundreds of results alive at
         once across kernels (the recomputation plan and the memory plan's proofs were
         quadratic and cubic in them before 2026-11-28: 25 s at 4,000 ops);
  norms  n/3 dependent row normalizations (s = sum(t, 1); t = tanh(t - s)): kernels of at most
         8 passes (one kernel of n/3 passes before 2026-11-28: over 5 minutes at 1,500 ops).
For each, `fuserc bench GRAPH --frontend-only` (parse to CUDA text, no NVRTC) runs a few times
and the script prints the median front-end time, the segmentation stage's time (of the last
run), the compiled kernels (every variant: 32- and 64-bit indexing count twice) and the share of
the biggest stage. A run past --timeout seconds is reported as such.
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile

UNARY = ["exp", "tanh", "neg", "sigmoid", "abs"]


def chain(n):
    ops, prev = [], "x"
    for i in range(n):
        out = f"t{i}"
        if i % 2 == 0:
            ops.append({"op": "add", "args": [prev, "y"], "out": out})
        else:
            ops.append({"op": "mul", "args": [prev, 0.5], "out": out})
        prev = out
    return {"fuserc": 1, "name": f"chain{n}", "symbols": {"N": {"hint": 1 << 20}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]},
                       {"name": "y", "dtype": "f32", "shape": ["N"]}],
            "ops": ops, "outputs": [prev]}


def wide(n):
    ops, outs = [], []
    for b in range(n // 10):
        prev = None
        for k in range(10):
            out = f"b{b}_{k}"
            if k == 0:
                ops.append({"op": "add", "args": ["x", "y"], "out": out})
            elif k % 3 == 1:
                ops.append({"op": "mul", "args": [prev, float(b + 1)], "out": out})
            elif k % 3 == 2:
                ops.append({"op": UNARY[(b + k) % len(UNARY)], "args": [prev], "out": out})
            else:
                ops.append({"op": "sub", "args": [prev, "x"], "out": out})
            prev = out
        outs.append(prev)
    return {"fuserc": 1, "name": f"wide{n}", "symbols": {"N": {"hint": 1 << 20}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["N"]},
                       {"name": "y", "dtype": "f32", "shape": ["N"]}],
            "ops": ops, "outputs": outs}


def live(n):
    ops, parts = [], []
    for i in range(n // 3):
        ops.append({"op": "mul", "args": ["x", i + 1], "out": f"m{i}"})
        ops.append({"op": "sum", "args": [f"m{i}"], "dims": [1], "keepdim": True, "out": f"r{i}"})
        ops.append({"op": "segment_set", "args": [f"r{i}"], "out": f"g{i}"})
        parts.append(f"g{i}")
    ops.append({"op": "cat", "args": parts, "dim": 1, "out": "y"})
    return {"fuserc": 1, "name": f"live{n}", "symbols": {"B": {"hint": 64}, "N": {"hint": 1024}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["B", "N"]}],
            "ops": ops, "outputs": ["y"]}


def web(n):
    rng = random.Random(1)
    ops, values, outs = [], ["x"], []
    for i in range(n):
        a, b = rng.choice(values[-50:]), rng.choice(values[-50:])
        r, out = rng.random(), f"t{i}"
        if r < 0.6:
            ops.append({"op": rng.choice(["add", "mul", "sub", "maximum"]), "args": [a, b],
                        "out": out})
        elif r < 0.8:
            ops.append({"op": rng.choice(UNARY), "args": [a], "out": out})
        elif r < 0.9:
            ops.append({"op": "sum", "args": [a], "dims": [1], "keepdim": True, "out": f"s{i}"})
            ops.append({"op": "sub", "args": [a, f"s{i}"], "out": out})
        else:
            ops.append({"op": "segment_set", "args": [a], "out": out})
        values.append(out)
        if rng.random() < 0.03:
            outs.append(out)
    return {"fuserc": 1, "name": f"web{n}", "symbols": {"N": {"hint": 1024}, "M": {"hint": 512}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "M"]}],
            "ops": ops, "outputs": outs + [values[-1]]}


def columns(n):
    k = max(1, n // 2)
    ops, parts = [], []
    for i in range(k):
        ops.append({"op": "slice", "args": ["x"], "starts": [0, i], "ends": ["N", i + 1],
                    "out": f"s{i}"})
        ops.append({"op": "mul", "args": [f"s{i}", i + 0.5], "out": f"t{i}"})
        parts.append(f"t{i}")
    ops.append({"op": "cat", "args": parts, "dim": 1, "out": "y"})
    return {"fuserc": 1, "name": f"columns{n}", "symbols": {"N": {"hint": 256}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", k]}],
            "ops": ops, "outputs": ["y"]}


def norms(n):
    ops, prev = [], "x"
    for i in range(max(1, n // 3)):
        ops.append({"op": "sum", "args": [prev], "dims": [1], "keepdim": True, "out": f"s{i}"})
        ops.append({"op": "sub", "args": [prev, f"s{i}"], "out": f"d{i}"})
        ops.append({"op": "tanh", "args": [f"d{i}"], "out": f"t{i}"})
        prev = f"t{i}"
    return {"fuserc": 1, "name": f"norms{n}", "symbols": {"N": {"hint": 256}, "M": {"hint": 1024}},
            "inputs": [{"name": "x", "dtype": "f32", "shape": ["N", "M"]}],
            "ops": ops, "outputs": [prev]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fuserc", default="build/cmd/fuserc")
    p.add_argument("--sizes", default="100,1000,10000")
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--shapes", default="chain,wide,live,web,columns,norms")
    a = p.parse_args()
    makers = {"chain": chain, "wide": wide, "live": live, "web": web, "columns": columns,
              "norms": norms}
    unknown = [s for s in a.shapes.split(",") if s not in makers]
    if unknown:
        p.error(f"unknown shape {unknown[0]} (the shapes: {', '.join(makers)})")
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"{'shape':6} {'ops':>7} {'front end':>12} {'segment':>12} {'kernels':>8}  biggest stage")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.shapes.split(","):
            make = makers[name]
            for n in sizes:
                path = os.path.join(tmp, f"{name}{n}.json")
                with open(path, "w") as f:
                    json.dump(make(n), f)
                runs = 5 if n <= 1000 else 1
                cmd = [a.fuserc, "bench", path, "--frontend-only", "--runs", str(runs), "--json"]
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout)
                except subprocess.TimeoutExpired:
                    print(f"{name:6} {n:7} {'> %.0f s' % a.timeout:>12}")
                    sys.stdout.flush()
                    continue
                if r.returncode != 0:
                    print(f"{name:6} {n:7} failed: {r.stderr.strip()[-200:]}")
                    sys.stdout.flush()
                    continue
                j = json.loads(r.stdout)
                stages = j["stages_us"]
                total = sum(stages.values()) or 1.0
                big = max(stages, key=stages.get)
                def shown(t):
                    return f"{t * 1000:.1f} ms" if t < 1 else f"{t:.2f} s"
                seg = shown(stages.get("segment", 0) / 1e6)
                print(f"{name:6} {n:7} {shown(j['frontend_us'] / 1e6):>12} {seg:>12} "
                      f"{j['kernels']:8}  "
                      f"{big} {100 * stages[big] / total:.0f}%")
                sys.stdout.flush()


if __name__ == "__main__":
    main()
