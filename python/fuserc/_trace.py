"""Owns tracing a PyTorch function to ATen ops, three times (see _symbolic.py): with
`torch.export` where the installed PyTorch has it, else `make_fx` (fake tensors, so nothing is
computed). Also finds, for an op, the line of the user's code it came from.

Python numbers among the example inputs become scalar inputs of the graph: during tracing they
are 0-dim tensors (a float as float32, an int as int64, a bool as bool), whose type promotion is
that of a Python number, so the traced ops are the ones the number would give.
"""
import inspect
import math
import os
import re
import traceback

import torch
import torch.utils._pytree as pytree

from . import _decomp, _patches, _symbolic
from ._dtypes import NAME_OF

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_FUSERC_DIR = os.path.dirname(os.path.abspath(__file__))
_WRAPPER = "_fuserc_call_user_function"
# fuserc functions that run inside the wrapper, between it and the user's code.
_INNER_FUSERC_FRAMES = ("forward_with_parameters", "_fuserc_arguments", "_fuserc_sizes")


# Why x[mask] (a boolean mask as an index) is refused.
MASK_INDEXING = ("boolean-mask indexing x[mask]: the output's size depends on the data (how "
                 "many elements the mask keeps), which a fuserc graph cannot express; keep the "
                 "shape with torch.where(mask, x, 0) or masked_fill")


class ExportError(ValueError):
    """A function fuserc cannot express as a fusion graph; the message names the first op that
    cannot be expressed and the line of the user's code it came from."""


class Input:
    """One argument of the traced function: `name`, `kind` ("tensor" or "scalar"), and the
    example value."""

    def __init__(self, name, value, parameter=None):
        self.name = name
        self.value = value
        self.parameter = parameter  # a module parameter's qualified name, or None
        self.symbol = None  # for an int that sets a size (dynamic={"n": "K"}): its symbol
        if isinstance(value, torch.Tensor):
            self.kind = "tensor"
            if value.dtype not in NAME_OF:
                what = f"parameter {parameter!r}" if parameter else f"argument {name!r}"
                raise ExportError(
                    f"fuserc.export: {what} is a {value.dtype} tensor, a dtype fuserc graphs do "
                    f"not have (they hold {', '.join(str(d) for d in NAME_OF)}): pass it "
                    "converted (x.to(torch.int32), x.float()) and convert back inside")
        elif isinstance(value, (bool, int, float)):
            self.kind = "scalar"
        else:
            raise ExportError(f"argument {name!r} is a {type(value).__name__}: fuserc graphs take "
                              "tensors and numbers (close over anything else, e.g. with "
                              "functools.partial)")

    @property
    def scalar_dtype(self):
        v = self.value
        return torch.bool if isinstance(v, bool) else torch.int64 if isinstance(v, int) \
            else torch.float32


class Trace:
    """One trace: the fx graph's nodes in order, its placeholders (one per input), the output
    values (flat) with the structure to rebuild them, and for torch.export the inputs whose
    updated value is an output (`mutations`: flat output index -> input index)."""

    def __init__(self, nodes, placeholders, outputs, out_spec, mutations, module):
        self.nodes = nodes
        self.placeholders = placeholders
        self.outputs = outputs
        self.out_spec = out_spec
        self.mutations = mutations
        self.module = module


def input_names(fn, n):
    """The names of fn's first n positional parameters (arg0, ... for *args)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
        elif p.kind == p.VAR_POSITIONAL:
            break
    names = names[:n]
    names += [f"arg{i}" for i in range(len(names), n)]
    return names


def _symbol_values(inputs, dynamic):
    """Per symbol its value in the example inputs; checks `dynamic`."""
    values = {}
    by_name = {i.name: i for i in inputs}
    for name, dims in (dynamic or {}).items():
        i = by_name.get(name)
        if i is None:
            raise ExportError(f"dynamic: no input named {name!r} (inputs: "
                              f"{', '.join(by_name)})")
        if i.kind != "tensor":
            if isinstance(i.value, bool) or not isinstance(i.value, int) or \
                    not isinstance(dims, str):
                raise ExportError(
                    f"dynamic: input {name!r} is a number: only an int can set a size, named "
                    f"by a symbol of its own (dynamic={{{name!r}: \"K\"}}), not a dict of dims")
            dims = {None: dims}
        elif not isinstance(dims, dict):
            raise ExportError(f"dynamic: input {name!r} is a tensor: give a dict from dims to "
                              f"symbols (dynamic={{{name!r}: {{0: \"B\"}}}})")
        for dim, sym in dims.items():
            if dim is None:  # an int argument that sets a size
                if not isinstance(sym, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", sym):
                    raise ExportError(f"dynamic: symbol {sym!r} of {name!r} is not an "
                                      "identifier")
                if i.value < 0:
                    raise ExportError(f"dynamic: {name!r} sets size {sym!r} but is "
                                      f"{i.value} in the example")
                i.symbol = sym
                if values.setdefault(sym, i.value) != i.value:
                    raise ExportError(f"dynamic: symbol {sym!r} is {values[sym]} in one input "
                                      f"and {i.value} in {name!r}")
                continue
            rank = i.value.dim()
            if not -rank <= dim < rank:
                raise ExportError(f"dynamic: input {name!r} has rank {rank}, no dimension {dim}")
            if not isinstance(sym, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", sym):
                raise ExportError(f"dynamic: symbol {sym!r} of {name!r} is not an identifier")
            size = int(i.value.shape[dim])
            if values.setdefault(sym, size) != size:
                raise ExportError(f"dynamic: symbol {sym!r} is {values[sym]} in one input and "
                                  f"{size} in {name!r}")
    named = {n for n, d in (dynamic or {}).items() if isinstance(d, str)}
    for i in inputs:  # ints made sizes by trace (not named in dynamic)
        if i.symbol is not None and i.name not in named:
            if values.setdefault(i.symbol, i.value) != i.value:
                raise ExportError(f"dynamic: symbol {i.symbol!r} is {values[i.symbol]} in one "
                                  f"input and {i.value} in {i.name!r}")
    if len(values) > len(_symbolic.PRIMES_B):
        raise ExportError(f"dynamic: at most {len(_symbolic.PRIMES_B)} symbols")
    return values


def _dim_order(t):
    """t's dims from the outermost in memory to the innermost (row-major: 0, 1, ...; a
    channels-last image: 0, 2, 3, 1); row-major where t is not dense in some order."""
    rank = t.dim()
    order = sorted(range(rank), key=lambda d: (-t.stride(d), d))
    expect = 1
    for d in reversed(order):
        if t.shape[d] != 1 and t.stride(d) != expect:
            return list(range(rank))
        expect *= t.shape[d]
    # Dims of extent 1 stay where row-major order puts them among the others' order.
    return order if any(t.shape[d] != 1 for d in order) else list(range(rank))


def _auto_size_inputs(inputs):
    """The int arguments that could be sizes (positive in the example) and are not yet."""
    return [i for i in inputs if i.kind == "scalar" and i.symbol is None and
            type(i.value) is int and i.value >= 1]


def _free_symbol(name, taken):
    """A symbol for the size an int argument `name` sets: its name in capitals where free."""
    for s in [name.upper(), name + "_size"] + [f"{name}_size{k}" for k in range(2, 99)]:
        if s not in taken:
            return s
    raise ExportError(f"fuserc.export: no free symbol name for argument {name!r}")


def _inputs_at(inputs, dynamic, sizes, k):
    """The traced arguments with the symbols at `sizes` (trace k > 0 also moves the numbers, so
    that a number read as a Python value shows up as a difference between traces; trace 0 keeps
    the example tensors where their sizes are the example's)."""
    out = []
    for i in inputs:
        if i.symbol is not None:  # an int that sets a size: a Python int in the trace
            out.append(int(sizes[i.symbol]))
            continue
        if i.kind == "scalar":
            v = i.value
            if k and not isinstance(v, bool):
                v = v + k if isinstance(v, int) else v * (1 + 0.25 * k) + 0.5 * k
            out.append(torch.tensor(v, dtype=i.scalar_dtype))
            continue
        t = i.value
        if i.parameter is not None:  # parameters keep their (fixed) shape
            out.append(t)
            continue
        shape = list(t.shape)
        for dim, sym in (dynamic or {}).get(i.name, {}).items():
            shape[dim] = sizes[sym]
        if k == 0 and shape == list(t.shape):
            out.append(t)
            continue
        # The tracers see only shapes and dtypes (fake tensors): no values are drawn, as the
        # sizes at multiples can be large (a 2632 x 4452 image traced in Swin's windows).
        # The example's dim order kept (a channels-last image: PyTorch runs other ops on one).
        order = _dim_order(t)
        laid = [shape[d] for d in order]
        # On the example's device: a module on a GPU has its parameters there.
        if t.dtype.is_floating_point:  # requires_grad kept: the function may take gradients
            u = torch.empty(laid, dtype=t.dtype, device=t.device)
        else:
            u = torch.zeros(laid, dtype=t.dtype, device=t.device)
        if order != list(range(len(order))):
            u = u.permute([order.index(d) for d in range(len(order))])
        out.append(u.requires_grad_(t.requires_grad) if t.dtype.is_floating_point else u)
    return out


def _trace_sizes(base, ranges, multiples=None, offset=0):
    """The symbol values of the three traces. Traces B and C: _symbolic's primes, or where
    `ranges` bounds a symbol, other primes (else other integers) inside its range; all
    distinct. Trace A: the example sizes, except that a symbol whose example size is 0 or 1
    (an example batch of 1) is traced at a third such size where its range has one: PyTorch
    decomposes some ops differently at a size of 1 (1.13's matmul of a permuted tensor), and
    the three traces must run the same ops (the example size stays the symbol's hint). With
    `multiples` (symbol -> m), m times those, plus `offset` (1: sizes that are no multiples,
    as the primes are not)."""
    names = sorted(base)
    used = set()
    a, b, c = dict(base), {}, {}
    for j, s in enumerate(names):
        lo, hi = (ranges or {}).get(s, (None, None))
        lo = 1 if lo is None else int(lo)
        m = (multiples or {}).get(s, 1)
        want = 3 if base[s] <= 1 else 2
        picked = []

        def take(v):
            v = v * m + (offset if m > 1 else 0)
            if (hi is None or v <= hi) and v >= max(lo, 2 if len(picked) >= 2 else lo) and \
                    v not in used and v != base[s] and v not in picked and len(picked) < want:
                picked.append(v)
        take(_symbolic.PRIMES_B[j])
        take(_symbolic.PRIMES_C[j])
        if len(picked) < want and hi is not None:
            top = (int(hi) - (offset if m > 1 else 0)) // m
            for v in _symbolic.primes_below(top + 1)[::-1] + list(range(top, 0, -1)):
                take(v)
        elif len(picked) < want:  # the example size is one of the primes, or is 0 or 1
            for v in _symbolic.primes_below(200)[4:]:
                take(v)
        if len(picked) < 2:
            raise ExportError(f"fuserc.export: the range of symbol {s!r} leaves too few sizes "
                              "to trace at (fuserc traces at two more sizes of each symbol)")
        used.update(picked)
        b[s], c[s] = picked[:2]
        if len(picked) == 3:  # else the range holds no other size: trace A stays at 0 or 1
            a[s] = picked[2]
    return [a, b, c]


# A symbol's example size keeps its factors from this number in the traces at multiples.
MULTIPLES_OF = 2 ** 4 * 3 ** 2 * 5 * 7


def trace(fn, inputs, dynamic, tracer, what="the function", ranges=None, floors=None):
    """Three Traces of fn, the symbol values of each (a list of dicts) and the example sizes
    (the symbols' hints, which trace A is not at where one is 0 or 1: see _trace_sizes).

    Where the function traces at the example sizes but not at the primes (a view that splits
    an extent in pairs needs an even one), it is traced again at multiples of primes: each
    symbol at its example size's largest divisor among 2^4 * 3^2 * 5 * 7 times a prime (an
    example size 32 traces at 16 * 11 and 16 * 47).

    `floors` (symbol -> m: its least valid size, which the converter found above a size traced
    before, a stride-32 conv traced at H = 13; or the divisor of extents of two symbols that
    agree in every trace) traces those symbols at m * p + 1 for primes p: sizes that are valid,
    whose quotients by m (H // 32 beside W // 32) differ between the symbols, and which are no
    multiples of m (as the primes are not: a UNet's pad of H - 2*(H//2) stays visible)."""
    base = _symbol_values(inputs, dynamic)
    sizes = _trace_sizes(base, ranges, floors, offset=1 if floors else 0)
    try:
        first = _trace_once(fn, inputs, dynamic, tracer, what, sizes[0], 0)
    except ExportError as e:
        if not getattr(e, "int_size", False):
            raise
        # Int arguments read as sizes: each a symbol of its own (as dynamic={"n": "N"} says).
        auto = _auto_size_inputs(inputs)
        taken = set(base) | {i.name for i in inputs}
        for i in auto:
            i.symbol = _free_symbol(i.name, taken)
            taken.add(i.symbol)
        try:
            return trace(fn, inputs, dynamic, tracer, what, ranges, floors)
        except ExportError:
            for i in auto:
                i.symbol = None
            raise e from None
    try:
        rest = [_trace_once(fn, inputs, dynamic, tracer, what, sizes[k], k) for k in (1, 2)]
    except ExportError as e:
        multiples = {s: math.gcd(v, MULTIPLES_OF) for s, v in base.items()}
        if not getattr(e, "retry", False) or all(m == 1 for m in multiples.values()):
            raise
        try:
            sizes = _trace_sizes(base, ranges, multiples)
            rest = [_trace_once(fn, inputs, dynamic, tracer, what, sizes[k], k) for k in (1, 2)]
        except ExportError:
            raise e from None
    return [first] + rest, sizes, base


# The namespaces whose ops the converter reads by name: ATen's, and the one the tests register
# stand-ins for PyTorch 2's ATen ops under on PyTorch 1.13 (same schema and semantics).
ATEN_NAMESPACES = ("aten", "fuserc_test")


def op_namespace(target):
    """The namespace of an op overload ("aten", "prims", ...), or None for a Python callable."""
    packet = getattr(target, "overloadpacket", None)
    if packet is None:
        return None
    qualified = getattr(packet, "_qualified_op_name", "") or ""
    if "::" in qualified:
        return qualified.split("::")[0]
    return getattr(target, "namespace", None) or "aten"


def _data_dependent_op(e):
    """The op (as aten.name.overload) whose result's size depends on the data, when `e` is
    the fake-tensor error for one (x[mask], nonzero, unique), else None."""
    if type(e).__name__ != "DynamicOutputShapeException":
        return None
    func = e.args[0] if e.args else None
    packet = getattr(func, "overloadpacket", None)
    if packet is None:
        return str(func) if func is not None else "an op"
    return f"{op_namespace(func)}.{packet.__name__}.{func._overloadname}"


def _cumulative_batch_norm(e):
    """The batch norm module whose forward failed, when it is one in training with
    momentum=None (a cumulative moving average), else None."""
    from torch.nn.modules.batchnorm import _BatchNorm
    for frame, _ in traceback.walk_tb(e.__traceback__):
        m = frame.f_locals.get("self")
        if isinstance(m, _BatchNorm) and m.momentum is None and m.training and \
                m.track_running_stats:
            return m
    return None


def _trace_once(fn, inputs, dynamic, tracer, what, sz, k):
    """Trace k of fn with the symbols at `sz`; an ExportError saying why where it fails (its
    `retry`: another size might trace)."""
    args = _inputs_at(inputs, dynamic, sz, k)
    # An int that sets a size is part of the function, not a traced input: the function is
    # traced over the other arguments, and the int's place among the placeholders is None.
    sized = {j: a for j, (i, a) in enumerate(zip(inputs, args)) if i.symbol is not None}
    if sized:
        fn = _with_sizes(fn, sized, len(args))
        args = [a for j, a in enumerate(args) if j not in sized]
    try:
        with _patches.PythonOps():
            t = _trace_export(fn, args) if tracer == "export" else _trace_make_fx(fn, args)
        if sized:
            kept = [j for j in range(len(inputs)) if j not in sized]
            t.mutations = {o: kept[i] for o, i in t.mutations.items()}
            for j in sorted(sized):
                t.placeholders.insert(j, None)
        return t
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001 - reported with the sizes that failed
        at = ", ".join(f"{s}={v}" for s, v in sz.items())
        text = str(e).splitlines()[0] if str(e) else ""
        where = _innermost_user_frame(traceback.extract_tb(e.__traceback__))
        from_ = f"\n  from {where}" if where else ""
        op = _data_dependent_op(e)
        if op is not None:
            why = MASK_INDEXING if op.startswith("aten.index.") else \
                "the output's size depends on the data, which a fuserc graph cannot express"
            raise ExportError(f"fuserc.export: {op}: {why}" + from_) from None
        bn = _cumulative_batch_norm(e)
        if bn is not None:
            raise ExportError(
                f"fuserc.export: {type(bn).__name__}({bn.num_features}, momentum=None) in "
                "training: its cumulative moving average reads num_batches_tracked as a Python "
                "number, which a fuserc graph cannot express; give the module a momentum "
                "(PyTorch's default is 0.1) or export it in eval()" + from_) from None
        retry = False
        # The function may take an int argument as a size (torch.arange(x.shape[0] * n)): the
        # trace is tried again with such arguments as symbols (see trace).
        int_size = bool(_auto_size_inputs(inputs)) and (
            "get value out of a tracing tensor" in text or "data-dependent" in text.lower() or
            re.search(r"must be (tuple of )?(Sym)?Ints?\b.*not (Fake)?Tensor", text))
        if "get value out of a tracing tensor" in text or "data-dependent" in text.lower():
            why = ("reads a tensor's value as a Python number (a scalar input is a tensor "
                   "while tracing; compute with tensor operations)")
        elif re.search(r"must be (tuple of )?(Sym)?Ints?\b.*not (Fake)?Tensor", text) and \
                any(i.kind == "scalar" and i.symbol is None for i in inputs):
            ints = [i.name for i in inputs if i.kind == "scalar" and i.symbol is None and
                    isinstance(i.value, int) and not isinstance(i.value, bool)]
            name = ints[0] if ints else "n"
            why = (f"{text}: a number argument is a scalar input, a 0-d tensor while tracing; "
                   f"an int that sets a size needs a symbol of its own (dynamic={{{name!r}: "
                   "\"K\"}), or fix it in the function (functools.partial)")
        elif "failed to many any schema" in text or "failed to match any schema" in text:
            why = ("an op was given a tensor where it takes a Python number: a number argument "
                   "of the function is a scalar input, a 0-d tensor while tracing (fix the "
                   "number in the function, e.g. functools.partial, or compute with tensor "
                   "operations)")
        else:
            why = f"{type(e).__name__}: {text}"
            if k:
                retry = True
                why += (" (fuserc traces at other sizes of the symbols to learn how sizes "
                        "depend on them; if only some sizes work, say which with ranges=)")
        err = ExportError(f"fuserc.export: tracing {what}{' at ' + at if k else ''} "
                          f"failed: {why}" + from_)
        err.retry = retry
        err.int_size = int_size
        raise err from e


def default_tracer():
    return "export" if hasattr(torch, "export") and hasattr(torch.export, "export") else "make_fx"


def _decompositions():
    from torch._decomp import get_decompositions
    aten = torch.ops.aten
    wanted = [getattr(aten, n) for n in (
        "elu", "softplus", "hardsigmoid", "hardswish", "mish", "leaky_relu", "hardtanh",
        "threshold", "logit", "addcmul", "addcdiv", "native_group_norm", "logsumexp",
        "xlogy", "glu", "silu_backward", "celu", "selu", "rms_norm", "repeat", "roll",
        "mse_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
        "log_sigmoid_forward", "soft_margin_loss", "upsample_bicubic2d", "im2col", "col2im")
        if hasattr(aten, n)]
    table = dict(get_decompositions(wanted))
    # Gradients (torch.autograd.grad inside the function: a training step as one graph):
    # PyTorch's decompositions of the backward ops.
    from torch._decomp import decomposition_table
    for op, fn in decomposition_table.items():
        if not hasattr(op, "overloadpacket"):
            continue  # a higher-order operator (PyTorch 2's out_dtype), not an ATen overload
        packet = op.overloadpacket.__name__
        if op._overloadname != "out" and (packet.endswith("_backward") or
                                          packet.endswith("_backward_data")):
            table.setdefault(op, fn)
    # Norms, nan_to_num, softshrink, hardshrink: fuserc's own, in ATen ops (PyTorch 1.13's give
    # prims ops); std and std_mean the converter reads itself (var_mean and sqrt).
    table.update(_decomp.table())
    # Their in-place forms (nn.Hardswish(inplace=True) in every torchvision MobileNetV3
    # block): the out-of-place decomposition copied into the tensor, where PyTorch has none.
    for op, fn in list(table.items()):
        if not hasattr(op, "overloadpacket"):
            continue
        packet = getattr(aten, op.overloadpacket.__name__ + "_", None)
        inplace = getattr(packet, op._overloadname, None) if packet is not None else None
        if inplace is not None and inplace not in table:
            table[inplace] = _in_place(fn)
    return table


def _in_place(fn):
    def decomposition(x, *args, **kwargs):
        return x.copy_(fn(x, *args, **kwargs))
    return decomposition


def _with_sizes(fn, sized, n):
    """fn over the arguments that are not in `sized` (position -> a Python int)."""
    def _fuserc_sizes(*rest):
        it = iter(rest)
        return fn(*[sized[j] if j in sized else next(it) for j in range(n)])
    return _fuserc_sizes


def _wrap(fn):
    def _fuserc_call_user_function(*args):
        return fn(*args)
    return _fuserc_call_user_function


class _FakeConstants:
    """While make_fx traces with fake tensors: a real tensor that no input carries (one the
    function closes over, a module's buffer) is made fake where an op meets it, instead of
    PyTorch 1.13's "Invoking operators with non-Fake Tensor inputs in FakeTensorMode is not yet
    supported"; the trace keeps it as a get_attr constant, which the converter writes into the
    graph (`data`). Newer PyTorch (torch.export) lifts such tensors itself.

    Also `masked_select`, whose result's extent depends on the mask's values (fake tensors
    refuse it): it is traced with a stand-in result, 1-D with as many elements as the operands
    broadcast to, so that a sum or mean of it (cross_entropy with label_smoothing takes one)
    traces on; the converter expresses only such a reduction of it (a `where` and sums) and
    refuses any other use, so the stand-in extent is never computed with."""

    def __enter__(self):
        self.cls = None
        try:
            from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
        except ImportError:
            return self
        original = FakeTensorMode.__dict__.get("__torch_dispatch__")
        if original is None or not hasattr(FakeTensorMode, "check_for_non_fake"):
            return self

        masked_select = torch.ops.aten.masked_select.default

        def dispatch(mode, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func is masked_select and not kwargs and len(args) == 2 and \
                    all(isinstance(a, FakeTensor) for a in args):
                shape = torch.broadcast_shapes(args[0].shape, args[1].shape)
                n = 1
                for d in shape:
                    n *= int(d)
                return original(mode, torch.ops.aten.empty.memory_format, types, ([n],),
                                {"dtype": args[0].dtype, "device": args[0].device})
            if func not in mode.lift_fns:
                def fake(t):
                    if isinstance(t, torch.Tensor) and not isinstance(t, FakeTensor) and \
                            t.device.type != "meta":
                        return mode.fake_tensor_converter(mode, t)
                    return t
                args, kwargs = pytree.tree_map(fake, (tuple(args), kwargs))
            return original(mode, func, types, args, kwargs)
        self.cls, self.original = FakeTensorMode, original
        FakeTensorMode.__torch_dispatch__ = dispatch
        return self

    def __exit__(self, *exc):
        if self.cls is not None:
            self.cls.__torch_dispatch__ = self.original


def _trace_make_fx(fn, args):
    from torch.fx.experimental.proxy_tensor import PythonKeyTracer, make_fx
    kwargs = {"decomposition_table": _decompositions(), "tracing_mode": "fake"}
    params = inspect.signature(make_fx).parameters
    if "record_stack_traces" in params:
        kwargs["record_stack_traces"] = True
    if "_allow_non_fake_inputs" in params:
        # PyTorch 2: tensors the function reads that are not its arguments (a module's
        # buffers, closed-over tables) are made fake as they are met, as _FakeConstants does
        # on 1.13 (whose FakeTensorMode refuses them).
        kwargs["_allow_non_fake_inputs"] = True
    old = PythonKeyTracer.__dict__.get("record_stack_traces")
    PythonKeyTracer.record_stack_traces = True
    try:
        with _FakeConstants():
            gm = make_fx(_wrap(fn), **kwargs)(*args)
    finally:
        if old is None:
            del PythonKeyTracer.record_stack_traces
        else:
            PythonKeyTracer.record_stack_traces = old
    nodes = [n for n in gm.graph.nodes if n.op in ("call_function", "get_attr")]
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    flat, spec = pytree.tree_flatten(out_node.args[0])
    return Trace(nodes, placeholders, flat, spec, {}, gm)


def _export_decompositions():
    """What torch.export's program is decomposed with: PyTorch's core ATen table (what
    run_decompositions() runs by default), fuserc's own table as make_fx has it (so that both
    tracers give the same graphs), and scaled_dot_product_attention kept whole (the contract
    has the op; decomposed, it becomes a device's fused kernel)."""
    try:
        from torch.export import default_decompositions  # PyTorch >= 2.6
        core = default_decompositions()
    except ImportError:
        from torch._decomp import core_aten_decompositions
        core = core_aten_decompositions()
    table = {op: core[op] for op in list(core)}
    table.update(_decompositions())
    sdpa = getattr(torch.ops.aten, "scaled_dot_product_attention", None)
    if sdpa is not None:
        table.pop(sdpa.default, None)
    return table


def _lifted_tensor(ep, name):
    """The tensor behind placeholder `name` that torch.export lifted out of the function (a
    tensor it closes over, a module's buffer or parameter), or None: found through the graph
    signature's input specs (PyTorch >= 2.2) or its older maps, in the program's constants or
    state dict."""
    sig = ep.graph_signature
    target = None
    for spec in getattr(sig, "input_specs", None) or []:
        if getattr(getattr(spec, "arg", None), "name", None) == name:
            target = spec.target
            break
    if target is None:
        for attr in ("inputs_to_lifted_tensor_constants", "inputs_to_buffers",
                     "inputs_to_parameters"):
            table = getattr(sig, attr, None) or {}
            if name in table:
                target = table[name]
                break
    for attr in ("constants", "tensor_constants", "state_dict"):
        table = getattr(ep, attr, None) or {}
        if target is not None and target in table:
            return table[target]
    return None


def _constants_as_attributes(ep, gm, lifted):
    """torch.export's lifted placeholders made what make_fx gives for the same tensors: get_attr
    nodes of the graph module (the converter writes them into the graph as constants)."""
    if not lifted:
        return
    first = next(n for n in gm.graph.nodes if n.op != "placeholder")
    for k, ph in enumerate(lifted):
        t = _lifted_tensor(ep, ph.name)
        if not isinstance(t, torch.Tensor):
            raise ExportError(f"the function uses {ph.name}, which torch.export lifted out of "
                              "it as something fuserc cannot read as a tensor")
        attr = f"_fuserc_lifted_{k}"
        gm.register_buffer(attr, t, persistent=False)
        with gm.graph.inserting_before(first):
            node = gm.graph.get_attr(attr)
        node.meta = dict(ph.meta)
        ph.replace_all_uses_with(node)
        gm.graph.erase_node(ph)


def _trace_export(fn, args):
    wrapped = _wrap(fn)

    class Function(torch.nn.Module):
        def forward(self, *a):
            return wrapped(*a)

    ep = torch.export.export(Function(), tuple(args))
    ep = ep.run_decompositions(_export_decompositions())
    gm = ep.graph_module
    sig = ep.graph_signature
    all_ph = [n for n in gm.graph.nodes if n.op == "placeholder"]
    user_inputs = list(sig.user_inputs)
    if len(user_inputs) != len(args):
        raise ExportError(f"torch.export gave {len(user_inputs)} user inputs for the function's "
                          f"{len(args)} arguments")
    _constants_as_attributes(ep, gm, [n for n in all_ph if n.name not in user_inputs])
    by_name = {n.name: n for n in all_ph}
    placeholders = [by_name[u] for u in user_inputs]
    nodes = [n for n in gm.graph.nodes if n.op in ("call_function", "get_attr")]
    out_node = next(n for n in gm.graph.nodes if n.op == "output")
    flat_all = list(pytree.tree_flatten(out_node.args[0])[0])
    # Which outputs are updated inputs: the signature's output specs (PyTorch >= 2.2), else
    # its user_inputs_to_mutate (the updated values come first).
    out_specs = getattr(sig, "output_specs", None)
    if out_specs and len(out_specs) == len(flat_all):
        user_idx, mut = [], []
        for k, spec in enumerate(out_specs):
            kind = getattr(spec.kind, "name", str(spec.kind))
            if kind == "USER_OUTPUT":
                user_idx.append(k)
            elif kind == "USER_INPUT_MUTATION":
                mut.append((k, user_inputs.index(spec.target)))
            else:
                raise ExportError(f"the function has an output of kind {kind} (it updates "
                                  "something that is not one of its inputs)")
    else:
        to_mutate = dict(getattr(sig, "user_inputs_to_mutate", {}) or {})
        n_mut = len(to_mutate)
        mut = [(k, user_inputs.index(to_mutate[getattr(v, "name", None)]))
               for k, v in enumerate(flat_all[:n_mut])]
        user_idx = list(range(n_mut, len(flat_all)))
    user_outputs = [flat_all[k] for k in user_idx]
    spec = None
    for get in (lambda: ep.call_spec.out_spec,
                lambda: ep.module_call_graph[0].signature.out_spec):
        try:
            spec = get()
            if spec is not None:
                break
        except Exception:  # noqa: BLE001 - the attribute moved between PyTorch versions
            spec = None
    if spec is None or spec.num_leaves != len(user_outputs):
        spec = pytree.tree_flatten(tuple(user_outputs))[1]
    outputs = user_outputs + [flat_all[k] for k, _ in mut]
    remap = {len(user_outputs) + j: i for j, (_, i) in enumerate(mut)}
    return Trace(nodes, placeholders, outputs, spec, remap, gm)


_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__))


def _is_user_file(path):
    if path.startswith("<"):  # <string>, <frozen ...>: code with no file
        return False
    path = os.path.abspath(path)
    return not any(path.startswith(d + os.sep) for d in (_TORCH_DIR, _FUSERC_DIR, _STDLIB_DIR))


def _innermost_user_frame(frames):
    """'file:line in function: code' of the innermost frame (the last of an outer-to-inner
    list) in the user's code, or ''."""
    user = [f for f in frames if _is_user_file(f.filename)]
    if not user:
        return ""
    f = user[-1]
    return f"{f.filename}:{f.lineno} in {f.name}" + (f": {f.line.strip()}" if f.line else "")


_FRAME = re.compile(r'File "([^"]+)", line (\d+), in ([^\n]+)\n(?:\s+([^\n]*)\n?)?')


def user_location(node):
    """Where in the user's code an fx node came from: 'file:line in function: code', or ''."""
    text = node.meta.get("stack_trace") or getattr(node, "stack_trace", None) or ""
    frames = [(m.group(1), int(m.group(2)), m.group(3).strip(), (m.group(4) or "").strip())
              for m in _FRAME.finditer(text)]
    if not frames:
        return ""
    wrapper = [k for k, f in enumerate(frames) if f[2] == _WRAPPER]

    def user(f):
        return _is_user_file(f[0])
    if wrapper:
        w = wrapper[0]
        # Which side of the wrapper is deeper: the side without the callers of fuserc.
        # (fuserc's own frames between the wrapper and the user's code, such as a module's
        # forward_with_parameters, do not count.)
        before = [f for f in frames[:w] if f[0].startswith(_FUSERC_DIR) and
                  f[2] not in _INNER_FUSERC_FRAMES]
        deeper = frames[w + 1:] if before else list(reversed(frames[:w]))
        candidates = [f for f in deeper if user(f)]
        pick = candidates[-1] if candidates else None
    else:
        candidates = [f for f in frames if user(f)]
        pick = candidates[-1] if candidates else None
    if pick is None:
        # No user code between (a torch.nn module exported by itself): the outermost frame of
        # torch.nn, the module's own forward.
        nn_code = (os.path.join(_TORCH_DIR, "nn", "modules") + os.sep,
                   os.path.join(_TORCH_DIR, "nn", "functional.py"))
        inner = (frames[wrapper[0] + 1:] if wrapper and before else
                 list(reversed(frames[:wrapper[0]])) if wrapper else frames)
        pick = next((f for f in inner if f[0].startswith(nn_code) and
                     os.path.basename(f[0]) != "module.py"), None)  # not Module.__call__
    if pick is None:
        return ""
    where = f"{pick[0]}:{pick[1]} in {pick[2]}"
    return where + (f": {pick[3]}" if pick[3] else "")
