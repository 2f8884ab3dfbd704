#!/usr/bin/env python3
"""Writes a torchvision-style ResNet inference forward (ResNet-50 by default) as one fuserc
graph, its weights in a safetensors file beside it: the stem (7x7/2 conv, batch norm, ReLU,
3x3/2 max pooling written as a converter writes it: a -inf pad, nine strided slices and
maximums), bottleneck blocks (1x1, 3x3 with the stride, 1x1; a 1x1 strided projection where
the shape changes), each batch norm as inference writes it, (y - mean) * rsqrt(var + eps) *
gamma + beta over constants, the global average pool (a mean) and the classifier (`linear`).

Its weights are random (He-scaled, so activations keep their size through 50 layers); the
batch is the symbol N, the image 224x224 unless --size says otherwise. No PyTorch needed.

  bench/make_resnet.py --out /tmp/resnet50.json            # then:
  fuserc compile /tmp/resnet50.json -o /tmp/resnet50.fpkg --time-passes
  fuserc inputs /tmp/resnet50.json --bind N=1 -o /tmp/in.safetensors
  time fuserc run /tmp/resnet50.fpkg --emulate --inputs /tmp/in.safetensors --outputs /tmp/out.safetensors
"""
import argparse
import json
import math
import os
import random
import struct

try:  # numpy makes the 25 M random weights of a ResNet-50 a second's work instead of a minute's
    import numpy
except ImportError:
    numpy = None

DEPTHS = {18: ([2, 2, 2, 2], False), 34: ([3, 4, 6, 3], False), 50: ([3, 4, 6, 3], True),
          101: ([3, 4, 23, 3], True)}


class Writer:
    def __init__(self, dtype, weights_file, seed):
        self.dtype = dtype
        self.file = weights_file
        self.inputs, self.ops, self.tensors = [], [], {}
        self.rng = random.Random(seed)
        self.names = set()

    def fresh(self, stem):
        name, i = stem, 2
        while name in self.names:
            name, i = f"{stem}_{i}", i + 1
        self.names.add(name)
        return name

    def normal(self, n, mean, std):
        """n values drawn from N(mean, std), as an array when numpy is there."""
        if numpy is not None:
            return numpy.random.default_rng(self.rng.getrandbits(32)).normal(mean, std, n)
        return [self.rng.gauss(mean, std) for _ in range(n)]

    def constant(self, name, shape, values):
        name = self.fresh(name)
        self.tensors[name] = (shape, values)
        self.inputs.append({"name": name, "dtype": self.dtype, "shape": shape,
                            "data": {"file": os.path.basename(self.file), "tensor": name}})
        return name

    def op(self, kind, args, stem, **attrs):
        out = self.fresh(stem)
        self.ops.append({"op": kind, "args": args, "out": out, **attrs})
        return out

    def conv(self, x, cin, cout, k, stride, stem):
        fan_in = cin * k * k
        std = math.sqrt(2.0 / fan_in)
        n = cout * cin * k * k
        w = self.constant(stem + "_w", [cout, cin, k, k], self.normal(n, 0.0, std))
        return self.op("conv", [x, w], stem, stride=[stride, stride],
                       padding=[k // 2, k // 2])

    def batch_norm(self, x, c, stem, zero_gamma=False):
        r = self.rng
        mean = self.constant(stem + "_mean", [c, 1, 1], [r.gauss(0, 0.1) for _ in range(c)])
        var = self.constant(stem + "_var", [c, 1, 1], [r.uniform(0.5, 1.5) for _ in range(c)])
        gamma = self.constant(stem + "_gamma", [c, 1, 1],
                              [r.uniform(0.1, 0.3) if zero_gamma else r.uniform(0.8, 1.2)
                               for _ in range(c)])
        beta = self.constant(stem + "_beta", [c, 1, 1], [r.gauss(0, 0.1) for _ in range(c)])
        centered = self.op("sub", [x, mean], stem + "_centered")
        var_eps = self.op("add", [var, 1e-5], stem + "_var_eps")
        inv = self.op("rsqrt", [var_eps], stem + "_inv")
        normed = self.op("mul", [centered, inv], stem + "_normed")
        scaled = self.op("mul", [normed, gamma], stem + "_scaled")
        return self.op("add", [scaled, beta], stem)

    def max_pool(self, x, c, stem):
        padded = self.op("pad", [x], stem + "_pad", pads=[[0, 0], [0, 0], [1, 1], [1, 1]],
                         value="-inf")
        out_h = "((H-1)//2+1-1)//2+1"
        out_w = "((W-1)//2+1-1)//2+1"
        best = None
        for i in range(3):
            for j in range(3):
                s = self.op("slice", [padded], f"{stem}_{i}{j}", starts=[0, 0, i, j],
                            ends=["N", c, f"{i}+2*({out_h})-1", f"{j}+2*({out_w})-1"],
                            steps=[1, 1, 2, 2])
                best = s if best is None else self.op("maximum", [best, s], stem + "_max")
        return best


def safetensors_bytes(tensors, dtype):
    fmt, code, size = {"f32": ("f", "F32", 4), "f64": ("d", "F64", 8)}[dtype]
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        shape, values = tensors[name]
        if numpy is not None:
            blob = numpy.asarray(values, dtype="<" + fmt).tobytes()
        else:
            blob = struct.pack(f"<{len(values)}{fmt}", *values)
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        offset += len(blob)
        blobs.append(blob)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="the graph to write (.json)")
    ap.add_argument("--depth", type=int, default=50, choices=sorted(DEPTHS))
    ap.add_argument("--size", type=int, default=224, help="image height and width")
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    weights = os.path.splitext(a.out)[0] + ".weights.safetensors"
    g = Writer(a.dtype, weights, a.seed)
    layers, bottleneck = DEPTHS[a.depth]
    x = "x"
    g.names.add(x)
    h = g.conv(x, 3, 64, 7, 2, "stem")
    h = g.op("relu", [g.batch_norm(h, 64, "stem_bn")], "stem_relu")
    h = g.max_pool(h, 64, "pool")
    cin = 64
    for stage, blocks in enumerate(layers):
        width = 64 << stage
        cout = width * 4 if bottleneck else width
        for b in range(blocks):
            stride = 2 if stage > 0 and b == 0 else 1
            stem = f"layer{stage + 1}_{b}"
            if bottleneck:
                y = g.op("relu", [g.batch_norm(g.conv(h, cin, width, 1, 1, stem + "_conv1"),
                                               width, stem + "_bn1")], stem + "_relu1")
                y = g.op("relu", [g.batch_norm(g.conv(y, width, width, 3, stride,
                                                      stem + "_conv2"),
                                               width, stem + "_bn2")], stem + "_relu2")
                y = g.batch_norm(g.conv(y, width, cout, 1, 1, stem + "_conv3"), cout,
                                 stem + "_bn3", zero_gamma=True)
            else:
                y = g.op("relu", [g.batch_norm(g.conv(h, cin, width, 3, stride,
                                                      stem + "_conv1"),
                                               width, stem + "_bn1")], stem + "_relu1")
                y = g.batch_norm(g.conv(y, width, cout, 3, 1, stem + "_conv2"), cout,
                                 stem + "_bn2", zero_gamma=True)
            shortcut = h
            if stride != 1 or cin != cout:
                shortcut = g.batch_norm(g.conv(h, cin, cout, 1, stride, stem + "_down"), cout,
                                        stem + "_down_bn")
            h = g.op("relu", [g.op("add", [y, shortcut], stem + "_sum")], stem)
            cin = cout
    pooled = g.op("mean", [h], "pooled", dims=[2, 3])
    fc_w = g.constant("fc_w", [a.classes, cin],
                      g.normal(a.classes * cin, 0.0, math.sqrt(1.0 / cin)))
    fc_b = g.constant("fc_b", [a.classes], [g.rng.gauss(0, 0.01) for _ in range(a.classes)])
    logits = g.op("linear", [pooled, fc_w, fc_b], "logits")
    graph = {
        "fuserc": 1,
        "name": f"resnet{a.depth}",
        "symbols": {"N": {"hint": 1, "max": 256},
                    "H": {"hint": a.size, "min": 32, "max": 1024},
                    "W": {"hint": a.size, "min": 32, "max": 1024}},
        "inputs": [{"name": "x", "dtype": a.dtype, "shape": ["N", 3, "H", "W"]}] + g.inputs,
        "ops": g.ops,
        "outputs": [logits],
    }
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(weights, "wb") as f:
        f.write(safetensors_bytes(g.tensors, a.dtype))
    with open(a.out, "w") as f:
        json.dump(graph, f, indent=0)
    convs = sum(1 for o in g.ops if o["op"] == "conv")
    params = sum(len(v) for _, v in g.tensors.values())
    print(f"wrote {a.out}: {len(g.ops)} ops, {convs} convs, {params / 1e6:.1f} M constants "
          f"in {weights}")


if __name__ == "__main__":
    main()
