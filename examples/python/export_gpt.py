"""Exports the GPT-2 style model of python/tests/models.py (nanoGPT's GPT, tiny) in one call,
forward(idx, targets) -> (logits, loss) with a symbolic batch and sequence, compiles it, and
calls the package like the model: its parameters (the tied embedding / lm_head once) are inputs
that the package passes itself; the causal-mask buffers are constants of the package.

    PYTHONPATH=python python3 examples/python/export_gpt.py

On CPU tensors the package runs in fuserc's emulator; move the model and the tensors to CUDA to
run the kernels on the GPU.
"""
import os
import sys

import torch

import fuserc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "python", "tests"))
from models import GPT, GPTConfig  # noqa: E402 - the model the tests export


def main():
    torch.manual_seed(0)
    config = GPTConfig()  # vocab 64, 16 positions, 2 layers, 4 heads, 32 wide
    model = GPT(config)
    idx = torch.randint(0, config.vocab_size, (2, 8))
    targets = torch.randint(0, config.vocab_size, (2, 8))
    dynamic = {"idx": {0: "B", 1: "S"}, "targets": {0: "B", 1: "S"}}
    pkg = fuserc.compile(model, (idx, targets), dynamic=dynamic,
                         ranges={"S": (1, config.block_size)})
    print("inputs:", [s.name for s in pkg.inputs[:2]], f"and {len(pkg.inputs) - 2} parameters;",
          "constants:", [c["name"] for c in pkg.constants])
    for b, s in ((2, 8), (3, 16)):
        idx = torch.randint(0, config.vocab_size, (b, s))
        targets = torch.randint(0, config.vocab_size, (b, s))
        targets[0, 0] = -1  # ignored by the loss
        logits, loss = pkg(idx, targets)
        with torch.no_grad():
            want_logits, want_loss = model(idx, targets)
        print(f"B={b} S={s}: logits {tuple(logits.shape)}, loss {loss.item():.6f} "
              f"(PyTorch {want_loss.item():.6f}), max |logits diff| "
              f"{(logits - want_logits).abs().max().item():.2e}")


if __name__ == "__main__":
    main()
