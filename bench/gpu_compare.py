#!/usr/bin/env python3
"""Times whole graphs (kernels and library steps) on a GPU: fuserc's plan beside eager PyTorch
and torch.compile, in one run, and checks fuserc's outputs at the timed sizes.

The independent launcher in ../shared/tools/gpu launches kernels only; a package with library
steps (matmul, linear) needs fuserc's own runtime, so this script times it with
`fuserc bench --gpu --json` and runs it with `fuserc run`, and times PyTorch on the same graph
with that launcher's eager evaluator (the graph in its own dtypes, as a user would write it).

    bench/gpu_compare.py --fuserc build/cmd/fuserc --tools ../shared/tools [--out DIR] \
        GRAPH.json:N=4096 GRAPH2.json:B=8,S=1024 ...

Prints one line per graph (microseconds, medians) and writes DIR/gpu_compare.json.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback


def sh(cmd, timeout=300):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[-600:]}")
    return p.stdout


def parse_bind(text):
    out = {}
    for kv in filter(None, text.split(",")):
        k, v = kv.split("=")
        out[k] = int(v)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fuserc", required=True)
    ap.add_argument("--tools", required=True, help="the folder holding oracle.py and gpu/")
    ap.add_argument("--out", default="gpu_compare_out")
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--dry", action="store_true",
                    help="no GPU: PyTorch on the CPU, fuserc's GPU steps skipped (tests this script)")
    ap.add_argument("graphs", nargs="+", help="GRAPH.json[:SYMBOL=VALUE,...]")
    a = ap.parse_args()
    sys.path.insert(0, a.tools)
    sys.path.insert(0, os.path.join(a.tools, "gpu"))
    import torch
    import oracle
    import gpu_run

    class Torch(gpu_run.Native):
        """The launcher's eager evaluator with products in the operands' dtype (its oracle
        computes them in float64): torch.matmul and F.linear, as a user calls them."""

        def apply_native(self, op, env):
            if op["op"] == "scaled_dot_product_attention" and hasattr(
                    torch.nn.functional, "scaled_dot_product_attention"):  # fused attention
                args = [self.arg(env, x)[1] for x in op["args"]]
                y = torch.nn.functional.scaled_dot_product_attention(
                    args[0], args[1], args[2], attn_mask=args[3] if len(args) > 3 else None,
                    is_causal=op.get("is_causal", False), scale=op.get("scale"),
                    enable_gqa=op.get("enable_gqa", False))
                return (self.arg(env, op["args"][0])[0], y)
            if op["op"] == "conv":  # cuDNN through PyTorch, in the operands' dtype
                a = [self.arg(env, x)[1] for x in op["args"]]
                fn = [torch.nn.functional.conv1d, torch.nn.functional.conv2d,
                      torch.nn.functional.conv3d][a[1].dim() - 3]
                y = fn(a[0], a[1], a[2] if len(a) > 2 else None, stride=op.get("stride", 1),
                       padding=op.get("padding", 0), dilation=op.get("dilation", 1),
                       groups=op.get("groups", 1))
                return (self.arg(env, op["args"][0])[0], y)
            if op["op"] not in ("matmul", "linear"):
                return super().apply_native(op, env)
            args = [self.arg(env, x) for x in op["args"]]
            if op["op"] == "matmul":
                return (args[0][0], torch.matmul(args[0][1], args[1][1]))
            bias = args[2][1] if len(args) > 2 else None
            return (args[0][0], torch.nn.functional.linear(args[0][1], args[1][1], bias))

    def sync():
        if not a.dry:
            torch.cuda.synchronize()

    def time_us(fn, reps):
        if not a.dry:
            return gpu_run.time_gpu(fn, reps=reps)
        t0 = time.perf_counter()
        for _ in range(3):
            fn()
        return (time.perf_counter() - t0) / 3 * 1e6

    os.makedirs(a.out, exist_ok=True)
    records = []
    for spec in a.graphs:
        path, _, bind = spec.partition(":")
        name = os.path.splitext(os.path.basename(path))[0]
        rec = {"graph": name, "bind": bind}
        records.append(rec)
        try:
            doc = oracle.load_graph(path)
            syms = parse_bind(bind)
            pkg = os.path.join(a.out, name + ".fpkg")
            sh([a.fuserc, "compile", path, "-o", pkg])
            # fuserc: the plan (kernels and library steps) on fixed-pattern inputs
            bench = {"plan_us": 0, "graph_us": 0, "kernels": [], "device": "none"} if a.dry else json.loads(sh([a.fuserc, "bench", "--gpu", pkg, "--bind", bind, "--json",
                                   "--runs", str(a.runs)]))
            rec["fuserc_us"] = bench["plan_us"]
            rec["fuserc_graph_us"] = bench["graph_us"]
            rec["steps"] = [(k["name"], round(k["us"], 2)) for k in bench["kernels"]]
            rec["device"] = bench["device"]
            # correctness at the timed sizes: fuserc run against the float64 reference
            feeds = oracle.make_inputs(doc, seed=0, overrides=syms)
            inp = os.path.join(a.out, name + ".in.safetensors")
            outp = os.path.join(a.out, name + ".out.safetensors")
            oracle.write_safetensors(inp, feeds)
            sh([a.fuserc, "run", pkg, "--inputs", inp, "--outputs", outp] + (["--emulate"] if a.dry else []))
            got = oracle.read_safetensors(outp)
            ok, bad = gpu_run.judge(doc, feeds, got)
            rec["run_ok"], rec["run_problems"] = ok, bad[:4]
            os.remove(inp)
            os.remove(outp)
            # PyTorch: eager in the graph's dtypes, then torch.compile of the same function
            # constants are inputs of the hand-written function (weights it holds)
            native = dict(feeds)
            for i in doc["inputs"]:
                if "data" in i:
                    native[i["name"]] = (i["dtype"], oracle.constant_value(doc, i))
            cuda = native if a.dry else gpu_run.to_cuda(native)
            g = Torch(doc)
            g.bind(cuda)
            ok_e, bad_e = gpu_run.judge(doc, feeds, g.evaluate_native(cuda))
            rec["eager_ok"] = ok_e  # the baseline computes what the graph says
            if not ok_e:
                rec["eager_problems"] = bad_e[:3]
            rec["eager_us"] = time_us(lambda: g.evaluate_native(cuda), reps=a.runs)
            if not a.no_compile:
                if not a.dry:
                    torch._dynamo.reset()
                names = [i["name"] for i in doc["inputs"]]
                dts = {n: cuda[n][0] for n in names}

                def fn(*ts):
                    r = g.evaluate_native({n: (dts[n], t) for n, t in zip(names, ts)})
                    return tuple(r[n][1] for n in doc["outputs"])
                args = [cuda[n][1] for n in names]
                # traced to ATen ops first (the evaluator's Python dispatch would break
                # Dynamo's graph at every op), then compiled whole by Inductor
                from torch.fx.experimental.proxy_tensor import make_fx
                traced = make_fx(fn)(*args)
                cf = traced if a.dry else torch.compile(traced, dynamic=False)
                t0 = time.time()
                cf(*args)
                sync()
                rec["compile_s"] = round(time.time() - t0, 1)
                rec["compiled_us"] = time_us(lambda: cf(*args), reps=a.runs)
            del cuda, g
            if torch.cuda.is_available():
                torch.cuda.empty_cache()
        except Exception as e:
            rec["error"] = f"{type(e).__name__}: {str(e)[:800]}"
            traceback.print_exc()
        line = f"{name} [{bind}]: "
        if "fuserc_us" in rec:
            line += f"fuserc {rec['fuserc_us']:.1f} us (graph {rec['fuserc_graph_us']:.1f})"
        for key, label in (("eager_us", "eager"), ("compiled_us", "torch.compile")):
            if key in rec:
                line += f", {label} {rec[key]:.1f} us"
        if "compiled_us" in rec and "fuserc_us" in rec:
            line += f", fuserc/compile {rec['fuserc_us'] / rec['compiled_us']:.2f}x"
        if "run_ok" in rec:
            line += ", outputs " + ("ok" if rec["run_ok"] else "WRONG " + "; ".join(rec["run_problems"]))
        if rec.get("eager_ok") is False:
            line += ", eager baseline WRONG " + "; ".join(rec["eager_problems"])
        if "error" in rec:
            line += " ERROR " + rec["error"]
        print(line, flush=True)
        if "steps" in rec:
            print("    " + ", ".join(f"{n} {u}" for n, u in rec["steps"]), flush=True)
    with open(os.path.join(a.out, "gpu_compare.json"), "w") as f:
        json.dump(records, f, indent=1)
    bad = sum(1 for r in records if "error" in r or not r.get("run_ok", False))
    print(f"{len(records) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
