"""Export a PyTorch function to a fusion graph, compile it ahead of time with fuserc, and call
the package on tensors: CUDA tensors run on the current stream, CPU tensors in fuserc's CPU
emulator (so this runs on any machine). `scripts/setup.sh --example` runs it.

    python3 examples/python/export_and_call.py [--out DIR]
"""
import argparse
import os
import tempfile

import torch
import torch.nn.functional as F

import fuserc


def rms_norm_gelu(x, w, eps: float):
    """RMS norm of each row, scaled by w, then GELU: one fused kernel."""
    xf = x.float()
    y = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w
    return F.gelu(y, approximate="tanh")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=tempfile.mkdtemp(prefix="fuserc_example_"))
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(64, 1024, dtype=torch.bfloat16)
    w = torch.randn(1024, dtype=torch.bfloat16)

    # 1. The graph: an ordinary fusion-graph file (`fuserc compile` takes it the same way).
    graph = fuserc.export(rms_norm_gelu, (x, w, 1e-6), dynamic={"x": {0: "N"}})
    graph.save(os.path.join(out, "rms_norm_gelu.json"))  # large constants: a .safetensors beside
    print(f"exported {len(graph['ops'])} ops; inputs:",
          ", ".join(f"{i['name']}: {i['dtype']}{i.get('shape', '')}" for i in graph["inputs"]))

    # 2. Compile (runs the fuserc executable) and load the package.
    pkg = fuserc.compile(graph, output=os.path.join(out, "rms_norm_gelu.fpkg"))
    info = pkg.inspect(N=4096)
    print(f"package {pkg.path}: {info['kernels_per_run']} kernel(s) per call, "
          f"schedulers {sorted({k['scheduler'] for k in info['kernels']})}")

    # 3. Call it at any N, on CUDA tensors or (emulated) on CPU tensors.
    for n in (64, 300):
        x = torch.randn(n, 1024, dtype=torch.bfloat16, device=device)
        y = pkg(x, w.to(device), 1e-6)
        want = rms_norm_gelu(x, w.to(device), 1e-6)
        err = (y.float() - want.float()).abs().max().item()
        print(f"N={n} on {device}: {tuple(y.shape)} {y.dtype}, max |fuserc - torch| = {err:.4f}")
        # bf16: PyTorch rounds after every op, the fused kernel once.
        torch.testing.assert_close(y.float(), want.float(), rtol=2e-2, atol=2e-2)


if __name__ == "__main__":
    main()
