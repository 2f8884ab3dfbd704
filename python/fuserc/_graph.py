"""Owns building a fusion graph (the contract's JSON, /docs/FUSION_FORMAT.md) op by op: unique
names, literals, and the contract's type promotion, so that the converter can check each op's
result dtype against PyTorch's and cast where they would differ."""
import math
import re

import torch

from ._dtypes import NAME_OF

_CATEGORY = {torch.bool: 0, torch.int32: 1, torch.int64: 1, torch.float16: 2,
             torch.bfloat16: 2, torch.float32: 2, torch.float64: 2}
_WIDTH = {torch.bool: 0, torch.int32: 1, torch.int64: 2, torch.float16: 1, torch.bfloat16: 1,
          torch.float32: 2, torch.float64: 3}


class Value:
    """A tensor (or scalar input) of the graph being built: its name, dtype and shape (a list
    of _symbolic.Extent). `scalar`: a scalar input (rank 0, passed by value)."""
    __slots__ = ("name", "dtype", "shape", "scalar", "uninitialized", "view")

    def __init__(self, name, dtype, shape, scalar=False, uninitialized=False, view=False):
        self.name = name
        self.dtype = dtype
        self.shape = list(shape)
        self.scalar = scalar
        self.uninitialized = uninitialized
        self.view = view

    @property
    def rank(self):
        return len(self.shape)


class Size:
    """A size literal (`{"size": E}` in `args`): the value of extent expression `expr` (a
    string, e.g. "16*N-1") at run time; an integer literal in promotion."""
    __slots__ = ("expr",)

    def __init__(self, expr):
        self.expr = str(expr)


def _promote_pair(a, b):
    if a == b:
        return a
    ca, cb = _CATEGORY[a], _CATEGORY[b]
    if ca != cb:
        return a if ca > cb else b
    if {a, b} == {torch.float16, torch.bfloat16}:
        return torch.float32
    return a if _WIDTH[a] >= _WIDTH[b] else b


def result_type(operands):
    """The contract's result dtype of an elementwise op: `operands` are Values or Python
    numbers (literals)."""
    tensors = [v.dtype for v in operands if isinstance(v, Value) and v.rank >= 1]
    zero = [v.dtype for v in operands if isinstance(v, Value) and v.rank == 0]
    lits = [torch.bool if isinstance(v, bool) else torch.int64 if isinstance(v, (int, Size))
            else torch.float32 for v in operands if not isinstance(v, Value)]
    result = None
    for d in tensors:  # 1. dimensioned operands promote among themselves
        result = d if result is None else _promote_pair(result, d)
    for d in zero:  # 2. rank-0 operands: only a higher category counts
        if result is None:
            result = d
        elif not tensors or _CATEGORY[d] > _CATEGORY[result]:
            result = _promote_pair(result, d)
    for d in lits:  # 3. literals: only a higher category still
        if result is None or _CATEGORY[d] > _CATEGORY[result]:
            result = d
    return result


def _literal(v):
    if isinstance(v, Size):
        return {"size": v.expr}
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    v = float(v)
    if math.isnan(v):
        return {"value": "nan"}
    if math.isinf(v):
        return {"value": "inf" if v > 0 else "-inf"}
    return v


def _attr_number(v):
    """A number attribute (`value` of full and pad): the strings "inf", "-inf", "nan" for the
    floats JSON has no literal for (an argument writes them as {"value": ...}); a size
    literal stays {"size": E} (`full`'s value may be one)."""
    v = _literal(v)
    return v["value"] if isinstance(v, dict) and "value" in v else v


def constant_data(t):
    """A tensor's values as the contract's `data`: nested lists in row-major order, with
    "inf", "-inf" and "nan" for the floats JSON has no literal for. A rank-0 tensor's value is
    written as a list of one number (what fuserc reads)."""
    t = t.detach().to("cpu")
    if t.dim() == 0:
        t = t.reshape(1)
    if t.dtype.is_floating_point:
        values = t.double().tolist()
        if not bool(torch.isfinite(t).all()):
            def fix(v):
                if isinstance(v, list):
                    return [fix(x) for x in v]
                return v if math.isfinite(v) else \
                    "nan" if math.isnan(v) else "inf" if v > 0 else "-inf"
            values = fix(values)
        return values
    return t.tolist()


# A constant of more elements than this is kept out of the graph's JSON: its `data` names a
# tensor of the graph's weights file (see ExportedGraph.save), which fuserc maps, instead of
# nested lists that a frozen model's weights would make hundreds of megabytes of text.
INLINE_ELEMENTS = 4096


def weights_file(stem):
    """The weights file of a graph saved as <stem>.json, beside it."""
    return f"{stem}.safetensors"


class GraphBuilder:
    def __init__(self, name):
        self.name = name
        self.inputs = []
        self.ops = []
        self.symbols = {}
        self.weights = {}  # constant input name -> tensor, for those kept out of the JSON
        self._used = set()

    def fresh(self, base):
        base = re.sub(r"[^A-Za-z0-9_]", "_", base) or "v"
        if not re.match(r"[A-Za-z_]", base):
            base = "v_" + base
        name, k = base, 1
        while name in self._used:
            name = f"{base}_{k}"
            k += 1
        self._used.add(name)
        return name

    def reserve(self, name):
        if name in self._used:
            raise ValueError(f"name {name!r} is used twice")
        self._used.add(name)

    def add_input(self, name, dtype, shape=None, symbol=None):
        self.reserve(name)
        entry = {"name": name, "dtype": NAME_OF[dtype]}
        if shape is not None:
            entry["shape"] = shape
        if symbol is not None:  # a scalar whose value sets a size
            entry["symbol"] = symbol
        self.inputs.append(entry)

    def add_constant(self, name, dtype, shape, tensor):
        """A constant input (`data`) of `name` (already made by fresh): its values, or where it
        is large a tensor of the weights file."""
        if tensor.numel() > INLINE_ELEMENTS:
            self.weights[name] = tensor.detach().clone()  # the values now, as inline data is
            data = {"file": weights_file(self.name), "tensor": name}
        else:
            data = constant_data(tensor)
        self.inputs.append({"name": name, "dtype": NAME_OF[dtype], "shape": list(shape),
                            "data": data})

    def emit(self, op, args, base, outs=1, **attrs):
        """Appends an op; returns its result name (or names when outs > 1)."""
        names = [self.fresh(base if outs == 1 else f"{base}_{k}") for k in range(outs)]
        entry = {"op": op, "args": [a.name if isinstance(a, Value) else _literal(a)
                                    for a in args]}
        for k, v in attrs.items():
            if v is not None:
                entry[k] = NAME_OF[v] if isinstance(v, torch.dtype) else \
                    (_attr_number(v) if k == "value" else v)
        entry["out"] = names[0] if outs == 1 else names
        self.ops.append(entry)
        return names[0] if outs == 1 else names

    def rename(self, old, base):
        """Renames op result `old` to a fresh name from `base` everywhere; returns the name."""
        new = self.fresh(base)
        for op in self.ops:
            op["args"] = [new if a == old else a for a in op["args"]]
            out = op["out"]
            op["out"] = new if out == old else [new if o == old else o for o in out] \
                if isinstance(out, list) else out
        return new

    def prune(self, outputs):
        """Drops the ops no output needs (a transpose that a linear absorbed)."""
        needed = set(outputs)
        kept = []
        for op in reversed(self.ops):
            outs = op["out"] if isinstance(op["out"], list) else [op["out"]]
            if any(o in needed for o in outs):
                kept.append(op)
                needed.update(a for a in op["args"] if isinstance(a, str))
        self.ops = kept[::-1]

    def document(self, outputs, aliases):
        self.prune(list(outputs) + list(aliases))
        doc = {"fuserc": 1, "name": self.name}
        if self.symbols:
            doc["symbols"] = self.symbols
        doc["inputs"] = self.inputs
        doc["ops"] = self.ops
        doc["outputs"] = outputs
        if aliases:
            doc["aliases"] = aliases
        return doc
