"""Owns the correspondence between the contract's dtype names and torch dtypes."""
import torch

TORCH_OF = {
    "bool": torch.bool, "i32": torch.int32, "i64": torch.int64, "f16": torch.float16,
    "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
}
NAME_OF = {v: k for k, v in TORCH_OF.items()}
FLOATS = ("f16", "bf16", "f32", "f64")
HALF = (torch.float16, torch.bfloat16)  # computed in f32 by the converter's ops, rounded at the end
INTEGERS = ("i32", "i64")


def dtype_name(dtype, where):
    """The contract's name of a torch dtype, or a ValueError naming `where`."""
    name = NAME_OF.get(dtype)
    if name is None:
        raise ValueError(f"{where}: dtype {dtype} is not one fuserc supports "
                         f"({', '.join(str(d) for d in TORCH_OF.values())})")
    return name
