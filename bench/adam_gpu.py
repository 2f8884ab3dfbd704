#!/usr/bin/env python3
"""Times an Adam step over many parameters on a GPU: fuserc's package (combo kernels, one launch
per up to 63 parameters; and, for comparison, compiled with --no-combo-kernels) against
torch.optim.Adam with fused=True and with foreach=True, in one run (issue 26: the 200-parameter
step must beat the fused one).

    bench/adam_gpu.py --fuserc build/cmd/fuserc [--params 200] [--seed 1] [--arch sm_90]

fuserc's step is timed by `fuserc bench --gpu --json` (CUDA events, median of the whole plan,
and as a CUDA graph); PyTorch's with CUDA events around optimizer.step(), median of --runs.
The graph comes from bench/make_adam.py with the same seed, so both update the same shapes.
Prints one line per contender (microseconds) and the kernels fuserc launches.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def sh(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-800:]}")
    return p.stdout


def time_torch(shapes, runs, warmup, **kind):
    import torch
    params = [torch.randn(s, device="cuda", requires_grad=True) for s in shapes]
    for p in params:
        p.grad = torch.randn_like(p)
    opt = torch.optim.Adam(params, lr=1e-3, **kind)
    for _ in range(warmup):
        opt.step()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        opt.step()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1000.0)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fuserc", required=True)
    ap.add_argument("--params", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="adam_gpu_")
    graph, pkg = os.path.join(d, "adam.json"), os.path.join(d, "adam.fpkg")
    sh([sys.executable, os.path.join(HERE, "make_adam.py"), "--out", graph,
        "--params", str(a.params), "--seed", str(a.seed)])
    doc = json.load(open(graph))
    shapes = [i["shape"] for i in doc["inputs"] if i["name"].startswith("p")]
    elements = sum(math.prod(s) for s in shapes)
    print(f"adam step over {len(shapes)} parameters, {elements} elements (f32)")
    # The package with combo kernels, and the one launching each kernel alone.
    for label, extra in (("combo kernels", []), ("--no-combo-kernels", ["--no-combo-kernels"])):
        sh([a.fuserc, "compile", graph, "-o", pkg, "--arch", a.arch, "-q"] + extra)
        bench = json.loads(sh([a.fuserc, "bench", pkg, "--gpu", "--json", "--runs", str(a.runs),
                               "--warmup", str(a.warmup)]))
        print(f"fuserc ({label}), bench --gpu: {json.dumps(bench)[:2000]}")
    for name, kind in (("torch fused=True", {"fused": True}), ("torch foreach=True", {"foreach": True})):
        print(f"{name}: {time_torch(shapes, a.runs, a.warmup, **kind):.1f} us")


if __name__ == "__main__":
    main()
