"""Owns exporting an `nn.Module`: its `forward` traced as a function whose arguments are
forward's own (named after its parameters) followed by the module's parameters (named after
their qualified names, made identifiers), so that the package can be fed the module's current
weights on every call. Buffers, and parameters with constants="all", are left in the module:
the tracer meets them as tensors of no input, and the converter writes them into the graph as
constants (`data`), named after their qualified names.

A buffer that forward updates in place (batch norm's running statistics in training mode) is
not a constant: the converter makes it an input written in place (an alias), which the package
passes itself, so that calling the package updates the module's buffer as forward does.

Refused with one line: forward hooks (the tracer would not see them the way PyTorch runs them).
"""
import re

import torch

from ._trace import ExportError, input_names

try:  # PyTorch >= 2.0
    from torch.func import functional_call as _functional_call
except ImportError:  # PyTorch 1.13
    from torch.nn.utils.stateless import functional_call as _functional_call


def identifier(qualname):
    """A graph name for a qualified name: `blocks.0.attn.c_attn.weight` ->
    `blocks_0_attn_c_attn_weight`."""
    name = re.sub(r"[^A-Za-z0-9_]", "_", qualname)
    return name if re.match(r"[A-Za-z_]", name) else "p_" + name


def _unique(base, used):
    name, k = base, 1
    while name in used:
        name = f"{base}_{k}"
        k += 1
    used.add(name)
    return name


def tensors_by_identity(module, kind):
    """[(tensor, [qualified names])] of the module's parameters (kind "parameters") or buffers,
    each tensor once with every name it has (tied weights have several), in module order."""
    seen = {}
    order = []
    for prefix, m in module.named_modules(remove_duplicate=False):
        table = m._parameters if kind == "parameters" else m._buffers
        for name, t in table.items():
            if t is None:
                continue
            q = f"{prefix}.{name}" if prefix else name
            key = id(t)
            if key not in seen:
                seen[key] = (t, [])
                order.append(key)
            if q not in seen[key][1]:
                seen[key][1].append(q)
    return [seen[k] for k in order]


def check_hooks(module):
    """One-line ExportError for forward hooks, which fuserc does not export."""
    mm = torch.nn.modules.module
    for attr, what in (("_global_forward_hooks", "a global forward hook"),
                       ("_global_forward_pre_hooks", "a global forward pre-hook")):
        if getattr(mm, attr, None):
            raise ExportError(f"fuserc.export: PyTorch has {what} registered "
                              "(torch.nn.modules.module.register_module_forward_hook), which "
                              "fuserc does not export: remove it before exporting")
    for prefix, m in module.named_modules():
        for attr, what in (("_forward_pre_hooks", "forward pre-hook"),
                           ("_forward_hooks", "forward hook")):
            if getattr(m, attr, None):
                where = f"module {prefix!r}" if prefix else "the module"
                raise ExportError(f"fuserc.export: {where} ({type(m).__name__}) has a {what}, "
                                  "which fuserc does not export: remove it (handle.remove()) "
                                  "or export a function that does what the hook does")


class ModuleExport:
    """What exporting `module` needs: `fn` (forward with the parameters as extra arguments),
    `names` (forward's inputs), `parameters` ([(graph input name, tensor, qualified names)]),
    `constant_names` (id of a tensor left in the module -> graph name), `constants` (graph
    name -> qualified name, for the graph's record) and `buffer_ids` (ids of the buffers among
    them, which forward may update in place)."""

    def __init__(self, module, n_inputs, constants=None):
        if constants not in (None, "buffers", "all"):
            raise ValueError("fuserc.export: constants must be None (buffers only) or 'all' "
                             f"(parameters too), not {constants!r}")
        check_hooks(module)
        self.module = module
        self.names = input_names(module.forward, n_inputs)
        used = set(self.names)
        params = tensors_by_identity(module, "parameters")
        self.parameters = []
        self.constant_names = {}
        self.constants = {}
        left = tensors_by_identity(module, "buffers")
        self.buffer_ids = {id(t) for t, _ in left}
        if constants == "all":
            left = params + left
            params = []
        for t, quals in params:
            self.parameters.append((_unique(identifier(quals[0]), used), t, quals))
        for t, quals in left:
            # Named when the converter meets them; a name a forward input has gets a suffix.
            name = identifier(quals[0])
            self.constant_names[id(t)] = name
            self.constants.setdefault(name, quals[0])
        n = n_inputs
        module_ = module
        plist = self.parameters

        def forward_with_parameters(*args):
            state = {}
            for p, (_, _, quals) in zip(args[n:], plist):
                for q in quals:
                    state[q] = p
            return _functional_call(module_, state, tuple(args[:n]))
        self.fn = forward_with_parameters
