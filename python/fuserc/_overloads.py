"""Owns turning (ATen op name, function, overload names) entries into a decomposition table,
{op overload: function}, leaving out what the running PyTorch does not have (1.13 and 2.x
differ). Imports nothing of fuserc."""
import torch


def overload_table(entries):
    """{op overload: function} for each (name, function, overload names) entry."""
    aten = torch.ops.aten
    out = {}
    for name, fn, overloads in entries:
        packet = getattr(aten, name, None)
        for overload in overloads:
            op = getattr(packet, overload, None) if packet is not None else None
            if op is not None:
                out[op] = fn
    return out
