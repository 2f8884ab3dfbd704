#!/usr/bin/env python3
"""Writes a vision transformer inference forward (timm's ViT-B/16 layout by default) as one
fuserc graph, its weights in a safetensors file beside it: the patch embedding (a conv whose
kernel tiles the image), the class token and learned positions, pre-norm blocks (layer norm as
var_mean and elementwise ops, the fused qkv `linear`, heads split by reshape and permute,
`scaled_dot_product_attention`, the projection, residuals, an erf-GELU MLP), the final norm, the
class token's row and the classifier. The batch is the symbol N; the image size is fixed (the
positions table is). No PyTorch needed (numpy makes the weights fast when it is there).

  bench/make_vit.py --out /tmp/vit.json [--depth 12 --dim 768 --heads 12 --size 224]
  fuserc compile /tmp/vit.json -o /tmp/vit.fpkg --time-passes
  fuserc bench /tmp/vit.json --runs 1 --nvrtc-runs 1 --emulate-runs 3 --bind N=1
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_resnet import Writer, safetensors_bytes  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the graph to write (.json)")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--dim", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--patch", type=int, default=16)
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    weights = os.path.splitext(a.out)[0] + ".weights.safetensors"
    g = Writer(a.dtype, weights, a.seed)
    d, h, p = a.dim, a.heads, a.patch
    grid = a.size // p
    s = grid * grid + 1  # patches and the class token
    hd = d // h

    def linear(x, n_in, n_out, stem):
        w = g.constant(stem + "_w", [n_out, n_in], g.normal(n_out * n_in, 0.0, 0.02))
        b = g.constant(stem + "_b", [n_out], g.normal(n_out, 0.0, 0.01))
        return g.op("linear", [x, w, b], stem)

    def layer_norm(x, stem):
        w = g.constant(stem + "_w", [d], g.normal(d, 1.0, 0.05))
        b = g.constant(stem + "_b", [d], g.normal(d, 0.0, 0.05))
        var = g.fresh(stem + "_var")
        mean = g.fresh(stem + "_mean")
        g.ops.append({"op": "var_mean", "args": [x], "out": [var, mean], "dims": [-1],
                      "keepdim": True, "correction": 0})
        inv = g.op("rsqrt", [g.op("add", [var, 1e-6], stem + "_var_eps")], stem + "_inv")
        normed = g.op("mul", [g.op("sub", [x, mean], stem + "_centered"), inv], stem + "_normed")
        return g.op("add", [g.op("mul", [normed, w], stem + "_scaled"), b], stem)

    x = "x"
    g.names.add(x)
    pw = g.constant("patch_w", [d, 3, p, p], g.normal(d * 3 * p * p, 0.0, 0.02))
    pb = g.constant("patch_b", [d], g.normal(d, 0.0, 0.01))
    t = g.op("conv", [x, pw, pb], "patch", stride=[p, p])  # [N, D, grid, grid]
    t = g.op("reshape", [t], "patch_flat", shape=["N", d, grid * grid])
    t = g.op("permute", [t], "tokens", dims=[0, 2, 1])  # [N, P, D]
    cls = g.constant("cls_token", [1, 1, d], g.normal(d, 0.0, 0.02))
    cls_n = g.op("expand", [cls], "cls_n", shape=["N", 1, d])
    t = g.op("cat", [cls_n, t], "with_cls", dim=1)
    pos = g.constant("pos_embed", [1, s, d], g.normal(s * d, 0.0, 0.02))
    t = g.op("add", [t, pos], "embedded")
    for i in range(a.depth):
        stem = f"block{i}"
        n1 = layer_norm(t, stem + "_norm1")
        qkv = linear(n1, d, 3 * d, stem + "_qkv")  # [N, S, 3D]
        qkv = g.op("reshape", [qkv], stem + "_qkv_heads", shape=["N", s, 3, h, hd])
        qkv = g.op("permute", [qkv], stem + "_qkv_t", dims=[2, 0, 3, 1, 4])  # [3, N, H, S, hd]
        parts = []
        for j, name in enumerate("qkv"):
            sl = g.op("slice", [qkv], f"{stem}_{name}_s", starts=[j, 0, 0, 0, 0],
                      ends=[j + 1, "N", h, s, hd], steps=[1, 1, 1, 1, 1])
            parts.append(g.op("squeeze", [sl], f"{stem}_{name}", dims=[0]))
        att = g.op("scaled_dot_product_attention", parts, stem + "_attn")  # [N, H, S, hd]
        att = g.op("permute", [att], stem + "_attn_t", dims=[0, 2, 1, 3])
        att = g.op("reshape", [att], stem + "_attn_m", shape=["N", s, d])
        t = g.op("add", [t, linear(att, d, d, stem + "_proj")], stem + "_res1")
        n2 = layer_norm(t, stem + "_norm2")
        m = g.op("gelu", [linear(n2, d, 4 * d, stem + "_fc1")], stem + "_gelu")
        t = g.op("add", [t, linear(m, 4 * d, d, stem + "_fc2")], stem + "_res2")
    t = layer_norm(t, "norm")
    c = g.op("slice", [t], "cls_row", starts=[0, 0, 0], ends=["N", 1, d], steps=[1, 1, 1])
    c = g.op("reshape", [c], "cls_out", shape=["N", d])
    logits = linear(c, d, a.classes, "head")
    graph = {
        "fuserc": 1,
        "name": f"vit_d{a.depth}_{d}",
        "symbols": {"N": {"hint": 1, "max": 256}},
        "inputs": [{"name": "x", "dtype": a.dtype, "shape": ["N", 3, a.size, a.size]}] + g.inputs,
        "ops": g.ops,
        "outputs": [logits],
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(weights, "wb") as f:
        f.write(safetensors_bytes(g.tensors, a.dtype))
    with open(a.out, "w") as f:
        json.dump(graph, f, indent=0)
    params = sum(len(v) for _, v in g.tensors.values())
    print(f"wrote {a.out}: {len(g.ops)} ops, {params / 1e6:.1f} M constants in {weights}")


if __name__ == "__main__":
    main()
