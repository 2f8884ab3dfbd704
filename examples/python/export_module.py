"""Exports a small nn.Module (an RMSNorm, a Linear and a causal-mask buffer) to a fusion graph,
compiles it, and calls the package like the module: its parameters are graph inputs that the
package passes itself, read afresh on every call; the buffer is a constant of the package.

    PYTHONPATH=python FUSERC_LIBRARY=build/libfuserc.so python3 examples/python/export_module.py

On CPU tensors the package runs in fuserc's emulator; move the module and x to CUDA to run the
kernels on the GPU.
"""
import os
import tempfile

import torch

import fuserc


class Block(torch.nn.Module):
    def __init__(self, d=64, max_len=128):
        super().__init__()
        self.norm_weight = torch.nn.Parameter(torch.ones(d))
        self.proj = torch.nn.Linear(d, d)
        self.register_buffer("causal", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, x):
        s = x.shape[1]
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm_weight
        h = self.proj(h)
        scores = (h @ h.transpose(1, 2)).masked_fill(~self.causal[:s, :s], float("-inf"))
        return torch.softmax(scores, dim=-1) @ x


def main():
    torch.manual_seed(0)
    m = Block()
    x = torch.randn(2, 10, 64)
    dynamic, ranges = {"x": {0: "B", 1: "S"}}, {"S": (1, 128)}
    graph = fuserc.export(m, (x,), dynamic=dynamic, ranges=ranges)
    print("graph inputs:", [(i["name"], i["shape"], "data" in i) for i in graph["inputs"]])
    print("parameters:", graph.parameters)
    path = os.path.join(tempfile.mkdtemp(), "block.json")
    graph.save(path)  # `fuserc compile block.json -o block.fpkg` compiles it too
    print("graph written to", path)
    pkg = fuserc.compile(m, (x,), dynamic=dynamic, ranges=ranges)
    for b, s in ((2, 10), (3, 33)):
        x = torch.randn(b, s, 64)
        print(f"B={b} S={s}: max |pkg(x) - m(x)| =", (pkg(x) - m(x)).abs().max().item())
    with torch.no_grad():
        m.proj.weight.mul_(0.5)  # the package reads the module's weights at each call
    print("after a weight change:", (pkg(x) - m(x)).abs().max().item())


if __name__ == "__main__":
    main()
