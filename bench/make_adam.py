#!/usr/bin/env python3
"""Writes an Adam step over many parameters of mixed shapes as one fuserc graph (issue 26's
horizontal-fusion case: `torch.optim.Adam(fused=True)` and Inductor's combo kernels launch a
handful of kernels for it). Each parameter p with its gradient g and moments m, v is updated in
place (aliases) from shared scalar hyperparameters, as the corpus's adam_step_inplace does for
one tensor. Shapes are drawn from a GPT-2-like set.

  bench/make_adam.py --out /tmp/adam200.json --params 200
  fuserc compile /tmp/adam200.json -o /tmp/adam200.fpkg   # prints the kernels per run
"""
import argparse
import json
import random

SHAPES = [[768, 768], [768], [3072, 768], [768, 3072], [3072], [50, 768], [16]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--params", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    inputs = [{"name": s, "dtype": "f32"} for s in ("lr", "beta1", "beta2", "eps", "bc1", "bc2")]
    ops, outputs, aliases = [], [], {}
    for i in range(a.params):
        shape = rng.choice(SHAPES)
        for t in "pgmv":
            inputs.append({"name": f"{t}{i}", "dtype": "f32", "shape": shape})

        def op(kind, args, out):
            ops.append({"op": kind, "args": args, "out": f"{out}{i}"})
        op("mul", [f"m{i}", "beta1"], "m0_")
        op("sub", [1.0, "beta1"], "ob1_")
        op("mul", [f"g{i}", f"ob1_{i}"], "m1_")
        op("add", [f"m0_{i}", f"m1_{i}"], "m_new")
        op("mul", [f"v{i}", "beta2"], "v0_")
        op("sub", [1.0, "beta2"], "ob2_")
        op("mul", [f"g{i}", f"g{i}"], "g2_")
        op("mul", [f"g2_{i}", f"ob2_{i}"], "v1_")
        op("add", [f"v0_{i}", f"v1_{i}"], "v_new")
        op("div", [f"m_new{i}", "bc1"], "mh")
        op("div", [f"v_new{i}", "bc2"], "vh")
        op("sqrt", [f"vh{i}"], "sv")
        op("add", [f"sv{i}", "eps"], "den")
        op("div", [f"mh{i}", f"den{i}"], "upd")
        op("mul", [f"upd{i}", "lr"], "step")
        op("sub", [f"p{i}", f"step{i}"], "p_new")
        outputs += [f"p_new{i}", f"m_new{i}", f"v_new{i}"]
        aliases.update({f"p_new{i}": f"p{i}", f"m_new{i}": f"m{i}", f"v_new{i}": f"v{i}"})
    graph = {"fuserc": 1, "name": f"adam{a.params}", "inputs": inputs, "ops": ops,
             "outputs": outputs, "aliases": aliases}
    with open(a.out, "w") as f:
        json.dump(graph, f)
    print(f"wrote {a.out}: {a.params} parameters, {len(ops)} ops, {len(outputs)} outputs")


if __name__ == "__main__":
    main()
