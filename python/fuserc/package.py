"""Owns calling a compiled package on torch tensors: `fuserc.load(path)` gives a Package, and
`pkg(*tensors, **scalars)` runs it.

On CUDA tensors the kernels are launched on the current stream (torch.cuda.current_stream) with
no host synchronisation; on CPU tensors they run in fuserc's CUDA emulator (the kernels' own
CUDA source compiled by the host compiler, cached in $FUSERC_CACHE_DIR). Outputs are allocated
with torch's allocator (or written into `out=`); an output written in place of an input updates
that input tensor, which is what is returned for it. One plan is bound per device and shape
signature (cached), so a call with shapes seen before costs a dictionary look-up, the checks
and the launch.
"""
import ctypes
import json

import torch

from . import _arguments, _capi
from ._capi import FUSERC_DEVICE_EMULATOR, check, lib
from ._dtypes import TORCH_OF

# Scalar inputs named so are the seed and offset of the random ops of an exported graph:
# filled from torch's default generator when the caller does not give them.
RNG_SEED, RNG_OFFSET = "rng_seed", "rng_offset"

_CTYPE_OF = {"bool": ctypes.c_bool, "i32": ctypes.c_int32, "i64": ctypes.c_int64,
             "f32": ctypes.c_float, "f64": ctypes.c_double}


class TensorSpec:
    """An input or output of a package: `name`, `dtype` (the contract's name), `torch_dtype`,
    `shape` (per dimension an int or a symbol name, or a formula), and for inputs `is_scalar`,
    `has_strides` and `sets_symbol` (the symbol a scalar input's value sets, or None), for
    outputs `in_place_of` and `source_input` (an input index or -1)."""

    def __init__(self, info, symbols, sets_symbol=-1):
        self.name = info.name.decode()
        self.dtype = _capi.DTYPE_NAMES[info.dtype]
        self.torch_dtype = TORCH_OF[self.dtype]
        self.rank = info.rank
        self.is_scalar = bool(info.is_scalar)
        self.has_strides = bool(info.has_strides)
        self.in_place_of = info.in_place_of
        self.source_input = info.source_input
        self.sets_symbol = symbols[sets_symbol]["name"] if sets_symbol >= 0 else None
        self.shape = []
        for d in range(info.rank):
            if info.dim_symbol[d] >= 0:
                self.shape.append(symbols[info.dim_symbol[d]]["name"])
            elif info.dim_value[d] >= 0:
                self.shape.append(int(info.dim_value[d]))
            else:
                self.shape.append(info.dim_formula[d].decode())

    def __repr__(self):
        if self.is_scalar:
            sets = f" (sets {self.sets_symbol})" if self.sets_symbol else ""
            return f"{self.name}: {self.dtype} scalar{sets}"
        return f"{self.name}: {self.dtype}[{', '.join(str(e) for e in self.shape)}]"


class _Bound:
    """One plan: a binding of one shape signature on one device."""
    __slots__ = ("plan", "lib", "output_shapes", "strides", "workspace_bytes")

    def __init__(self, plan, inputs, outputs):
        self.lib = lib()
        self.plan = plan
        l = self.lib
        self.workspace_bytes = l.fuserc_plan_workspace_bytes(plan)
        self.strides = []
        for i, spec in enumerate(inputs):
            strides = (ctypes.c_int64 * max(spec.rank, 1))()
            check(l.fuserc_plan_input_strides(plan, i, strides))
            self.strides.append(tuple(strides[k] for k in range(spec.rank)))
        self.output_shapes = []
        for j, spec in enumerate(outputs):
            shape = (ctypes.c_int64 * max(spec.rank, 1))()
            check(l.fuserc_plan_output_shape(plan, j, shape))
            self.output_shapes.append(tuple(shape[k] for k in range(spec.rank)))

    def __del__(self):
        if self.plan:
            self.lib.fuserc_plan_free(self.plan)
            self.plan = None


class _Handle:
    """The package loaded for one device (the CPU emulator, or one CUDA device)."""

    def __init__(self, path, device):
        self.lib = lib()
        self.plans = {}
        self.ptr = None
        options = _capi.LoadOptions(device, None)
        handle = ctypes.c_void_p()
        check(self.lib.fuserc_package_load(path.encode(), ctypes.byref(options),
                                           ctypes.byref(handle)))
        self.ptr = handle

    def __del__(self):
        self.plans.clear()
        if self.ptr:
            self.lib.fuserc_package_free(self.ptr)
            self.ptr = None


class Package:
    """A compiled package, callable on torch tensors (see the module's documentation)."""

    def __init__(self, path, returns=None, module=None, parameters=None, buffers=None,
                 requires=None, arguments=None):
        """`returns`: how the outputs map to what the traced function returned (set by
        fuserc.compile): None returns every output (one as a tensor, several as a tuple).
        `module`: an nn.Module whose parameters feed the inputs of `parameters` (graph input
        name -> qualified name; by default every input named as fuserc.export names a
        parameter of the module) on each call, read afresh, so that the caller passes only
        forward's arguments; likewise its buffers feed the inputs of `buffers` (the buffers
        forward updates, such as batch norm's running statistics in training mode: written
        in place, as forward writes them). `requires`: sizes the graph assumes to be multiples
        of a number, which the contract cannot state (an exported graph's `requires`: a view
        of [B, N] as (B, -1, 2) assumes an even N): checked when a call brings new shapes.
        `arguments`: (names, structure) of a function whose arguments hold tensors in tuples,
        lists or dicts (an exported graph's `arguments`, see _arguments.py): such an argument
        is passed as it is and given to the package as its leaves.
        """
        self.path = str(path)
        self._arguments = arguments
        self.requires = list(requires or [])
        self._returns = returns
        self.module = module
        self._handles = {}
        meta = self._handle(None)
        l = lib()
        self.name = l.fuserc_package_name(meta.ptr).decode()
        self.symbols = []
        for k in range(l.fuserc_package_num_symbols(meta.ptr)):
            s = _capi.SymbolInfo()
            check(l.fuserc_package_symbol(meta.ptr, k, ctypes.byref(s)))
            self.symbols.append({"name": s.name.decode(), "min": s.min, "max": s.max,
                                 "hint": s.hint})
        self.inputs, self.outputs = [], []
        for k in range(l.fuserc_package_num_inputs(meta.ptr)):
            info = _capi.TensorInfo()
            check(l.fuserc_package_input(meta.ptr, k, ctypes.byref(info)))
            self.inputs.append(TensorSpec(info, self.symbols,
                                          l.fuserc_package_input_symbol(meta.ptr, k)))
        # The package's own tensors (weights, masks): never passed by the caller.
        self.constants = []
        for k in range(l.fuserc_package_num_constants(meta.ptr)):
            c = _capi.ConstantInfo()
            check(l.fuserc_package_constant(meta.ptr, k, ctypes.byref(c)))
            self.constants.append({"name": c.name.decode(), "dtype": _capi.DTYPE_NAMES[c.dtype],
                                   "shape": tuple(c.shape[d] for d in range(c.rank)),
                                   "bytes": c.bytes, "hash": f"{c.hash:016x}"})
        for k in range(l.fuserc_package_num_outputs(meta.ptr)):
            info = _capi.TensorInfo()
            check(l.fuserc_package_output(meta.ptr, k, ctypes.byref(info)))
            self.outputs.append(TensorSpec(info, self.symbols))
        self._input_index = {s.name: i for i, s in enumerate(self.inputs)}
        # An output listed a second time is the same tensor as its first listing.
        first = {}
        self._same_as = []
        for j, s in enumerate(self.outputs):
            self._same_as.append(first.setdefault(s.name, j) if s.in_place_of < 0 and
                                 s.source_input < 0 else j)
        # The inputs the package writes in place (copied back where the caller's are laid out
        # otherwise: see __call__).
        self._written = {s.in_place_of for s in self.outputs if s.in_place_of >= 0}
        self._rng = [self._input_index.get(RNG_SEED), self._input_index.get(RNG_OFFSET)]
        if parameters is None and module is not None:
            from ._module import identifier, tensors_by_identity
            parameters = {}
            for _, quals in tensors_by_identity(module, "parameters"):
                if identifier(quals[0]) in self._input_index:
                    parameters[identifier(quals[0])] = quals[0]
        self.parameters = dict(parameters or {})
        if buffers is None and module is not None:
            from ._module import identifier, tensors_by_identity
            buffers = {}
            for _, quals in tensors_by_identity(module, "buffers"):
                if identifier(quals[0]) in self._input_index:
                    buffers[identifier(quals[0])] = quals[0]
        self.buffers = dict(buffers or {})
        unknown = [n for n in list(self.parameters) + list(self.buffers)
                   if n not in self._input_index]
        if unknown:
            raise ValueError(f"{self.name}: parameters name {unknown[0]!r}, which is no input "
                             f"(inputs: {', '.join(s.name for s in self.inputs)})")

    def __repr__(self):
        return (f"fuserc.Package({self.path!r}: ({', '.join(map(repr, self.inputs))}) -> "
                f"({', '.join(map(repr, self.outputs))}))")

    def _handle(self, device):
        """The package loaded for `device` (None or a CPU device: the emulator)."""
        key = None if device is None or device.type == "cpu" else device.index
        h = self._handles.get(key)
        if h is None:
            h = self._handles[key] = _Handle(self.path,
                                             FUSERC_DEVICE_EMULATOR if key is None else key)
        return h

    def inspect(self, **symbols):
        """What `fuserc inspect --json` prints, as a dict; with symbol values (N=4096, ...)
        also the sizes they give (under "bound")."""
        l = lib()
        h = self._handle(None)
        values = None
        if symbols:
            names = [s["name"] for s in self.symbols]
            unknown = set(symbols) - set(names)
            if unknown:
                raise ValueError(f"{self.name}: no symbol {sorted(unknown)[0]!r} "
                                 f"(symbols: {', '.join(names) or 'none'})")
            missing = [n for n in names if n not in symbols]
            if missing:
                raise ValueError(f"{self.name}: no value for symbol {missing[0]!r}")
            values = (ctypes.c_int64 * len(names))(*[int(symbols[n]) for n in names])
        n = len(self.symbols) if values is not None else 0
        length = ctypes.c_size_t()
        check(l.fuserc_package_inspect_json(h.ptr, values, n, None, 0, ctypes.byref(length)))
        buf = ctypes.create_string_buffer(length.value + 1)
        check(l.fuserc_package_inspect_json(h.ptr, values, n, buf, length.value + 1,
                                            ctypes.byref(length)))
        return json.loads(buf.value.decode())

    # ------------------------------------------------------------------ calling

    def _arrange(self, args, kwargs):
        """The value of each input, in graph order, from positional and keyword arguments."""
        inputs = self.inputs
        if len(args) > len(inputs):
            raise TypeError(f"{self.name}: {len(args)} positional arguments for "
                            f"{len(inputs)} inputs ({', '.join(s.name for s in inputs)})")
        values = list(args) + [None] * (len(inputs) - len(args))
        for name, v in kwargs.items():
            i = self._input_index.get(name)
            if i is None:
                if any(c["name"] == name for c in self.constants):
                    raise TypeError(f"{self.name}: {name!r} is a constant of the package (its "
                                    "values are in the package): it is never passed")
                raise TypeError(f"{self.name}: no input named {name!r} (inputs: "
                                f"{', '.join(s.name for s in inputs)})")
            if i < len(args):
                raise TypeError(f"{self.name}: input {name!r} given twice")
            values[i] = v
        for i, v in enumerate(values):
            if v is None and self.module is not None and inputs[i].name in self.parameters:
                values[i] = self._parameter(inputs[i].name)
            elif v is None and self.module is not None and inputs[i].name in self.buffers:
                values[i] = self._buffer(inputs[i].name)
            elif v is None:
                if i in self._rng:
                    values[i] = _draw_seed() if i == self._rng[0] else 0
                else:
                    raise TypeError(f"{self.name}: missing input {inputs[i].name!r}")
        return values

    def _parameter(self, name):
        """The module's parameter for input `name`, as it is now."""
        qual = self.parameters[name]
        try:
            t = self.module.get_parameter(qual)
        except AttributeError as e:
            raise TypeError(f"{self.name}: input {name!r} is the module's parameter {qual!r}, "
                            f"which it no longer has ({e})") from None
        return t.detach()

    def _buffer(self, name):
        """The module's buffer for input `name`, as it is now (the tensor itself: the package
        writes it in place)."""
        qual = self.buffers[name]
        try:
            return self.module.get_buffer(qual)
        except AttributeError as e:
            raise TypeError(f"{self.name}: input {name!r} is the module's buffer {qual!r}, "
                            f"which it no longer has ({e})") from None

    def __call__(self, *args, out=None, **kwargs):
        if self._arguments is not None:
            names, structure = self._arguments
            try:
                args, kwargs = _arguments.flatten_call(structure, names, args, kwargs)
            except TypeError as e:
                raise TypeError(f"{self.name}: {e}") from None
        values = self._arrange(args, kwargs)
        specs = self.inputs
        device = None
        for v, s in zip(values, specs):
            if not s.is_scalar and isinstance(v, torch.Tensor):
                device = v.device
                break
        if device is None:
            device = torch.device("cpu")
        cuda = device.type == "cuda"
        if device.type not in ("cpu", "cuda"):
            raise ValueError(f"{self.name}: tensors on {device} (fuserc runs on CUDA devices "
                             "and, emulated, on the CPU)")
        handle = self._handle(device)
        # An input in another layout than the row-major one its graph takes (a channels-last
        # image, a transposed view) is copied to that layout, as PyTorch takes any strides; one
        # the package writes in place is copied back after the launch (`laid_out`).
        laid_out = {}
        for i, (v, s) in enumerate(zip(values, specs)):
            if isinstance(v, torch.Tensor) and not s.is_scalar and not s.has_strides and \
                    not v.is_contiguous():
                values[i] = v.contiguous()
                if i in self._written:
                    laid_out[i] = v

        # Inputs: checked against the specs; shapes are the plan's key.
        n = len(specs)
        in_ptrs = (ctypes.c_void_p * max(n, 1))()
        keep = []  # host scalar values, alive until the launch
        key = []
        for i, (v, s) in enumerate(zip(values, specs)):
            if s.is_scalar:
                c = _scalar_value(v, s, self.name)
                keep.append(c)
                in_ptrs[i] = ctypes.cast(ctypes.pointer(c), ctypes.c_void_p) \
                    if not isinstance(c, torch.Tensor) else c.data_ptr()
                # A scalar that sets a symbol is part of the shape signature.
                key.append(("value", c.value) if s.sets_symbol else None)
                continue
            if not isinstance(v, torch.Tensor):
                raise TypeError(f"{self.name}: input {s.name!r} must be a tensor "
                                f"({s!r}), got {type(v).__name__}")
            if v.dtype != s.torch_dtype:
                raise TypeError(f"{self.name}: input {s.name!r} is {v.dtype}, the package "
                                f"needs {s.torch_dtype} ({s!r})")
            if v.device != device:
                raise ValueError(f"{self.name}: input {s.name!r} is on {v.device}, the first "
                                 f"tensor input on {device}")
            key.append(tuple(v.shape))
            in_ptrs[i] = v.data_ptr()
        key = tuple(key)
        bound = handle.plans.get(key)
        if bound is None:
            if self.requires:
                self._check_requires(key)
            bound = self._bind(handle, key, device, in_ptrs)
        for i, (v, s) in enumerate(zip(values, specs)):
            if s.is_scalar:
                continue
            want = bound.strides[i]
            shape = key[i]
            stride = v.stride()
            for d in range(len(shape)):
                if shape[d] > 1 and stride[d] != want[d]:
                    need = want
                    raise ValueError(
                        f"{self.name}: input {s.name!r} has strides {tuple(stride)} but the "
                        f"package needs {need} (" +
                        ("pass .contiguous()" if not s.has_strides else
                         "the layout its graph declares") + ")")

        # Outputs: the inputs written in place, or new tensors (or the caller's `out`).
        outs = self.outputs
        if out is not None:
            if isinstance(out, torch.Tensor):
                out = (out,)
            if len(out) != len(outs):
                raise ValueError(f"{self.name}: out= has {len(out)} tensors for "
                                 f"{len(outs)} outputs")
        out_ptrs = (ctypes.c_void_p * max(len(outs), 1))()
        results = []
        for j, s in enumerate(outs):
            if s.in_place_of >= 0 or s.source_input >= 0:
                k = s.source_input if s.source_input >= 0 else s.in_place_of
                t = laid_out.get(k, values[k])
                if out is not None and out[j] is not None and out[j] is not t:
                    raise ValueError(f"{self.name}: output {s.name!r} is input "
                                     f"{specs[s.in_place_of if s.in_place_of >= 0 else s.source_input].name!r} "
                                     "(written in place): give None for it in out=")
                results.append(t)
                continue
            if self._same_as[j] != j:
                results.append(results[self._same_as[j]])
                continue
            shape = bound.output_shapes[j]
            if out is not None and out[j] is not None:
                t = out[j]
                if (tuple(t.shape) != shape or t.dtype != s.torch_dtype or t.device != device
                        or not t.is_contiguous()):
                    raise ValueError(
                        f"{self.name}: out= tensor for output {s.name!r} must be contiguous "
                        f"{s.torch_dtype} of shape {shape} on {device}; got {t.dtype} "
                        f"{tuple(t.shape)} on {t.device}" +
                        ("" if t.is_contiguous() else ", not contiguous"))
            else:
                t = torch.empty(shape, dtype=s.torch_dtype, device=device)
            out_ptrs[j] = t.data_ptr()
            results.append(t)

        if cuda:
            stream = torch.cuda.current_stream(device).cuda_stream
            ws_bytes = bound.workspace_bytes
            ws = torch.empty(ws_bytes, dtype=torch.uint8, device=device) if ws_bytes else None
            status = bound.lib.fuserc_launch(bound.plan, stream, in_ptrs, out_ptrs,
                                             ws.data_ptr() if ws is not None else None, ws_bytes)
        else:
            status = bound.lib.fuserc_launch(bound.plan, None, in_ptrs, out_ptrs, None, 0)
        if status:
            check(status)
        for i, v in laid_out.items():  # on the same stream, after the launch
            v.copy_(values[i])
        return self._shape_results(results)

    def _check_requires(self, shapes):
        """ValueError where a size the graph assumes to be a multiple of m is not (see
        `requires`); `shapes`: per input its shape (None for scalars)."""
        values = {}
        for spec, shape in zip(self.inputs, shapes):
            if spec.is_scalar or shape is None:
                continue
            for d, e in enumerate(spec.shape):
                if isinstance(e, str) and e.isidentifier():
                    values.setdefault(e, shape[d])
        for r in self.requires:
            try:
                v = eval(r["extent"], {"__builtins__": {}}, dict(values))  # noqa: S307 - an
            except NameError:  # extent expression fuserc.export wrote (+ - * // %)
                continue
            if v % r["multiple"]:
                raise ValueError(f"{self.name}: {r['extent']} is {v}, not a multiple of "
                                 f"{r['multiple']} ({r['what']}): the function was exported "
                                 "for multiples only (a graph cannot check this; the package "
                                 "does)")

    def _bind(self, handle, key, device, in_ptrs):
        l = lib()
        n = len(key)
        shapes = (ctypes.POINTER(ctypes.c_int64) * max(n, 1))()
        ranks = (ctypes.c_int32 * max(n, 1))()
        # The host value of each scalar input (read for those that set a symbol).
        scalars = (ctypes.c_void_p * max(n, 1))()
        arrays = []
        for i, shape in enumerate(key):
            if shape is None or self.inputs[i].is_scalar:
                scalars[i] = in_ptrs[i] if self.inputs[i].is_scalar else None
                continue
            a = (ctypes.c_int64 * max(len(shape), 1))(*shape)
            arrays.append(a)
            shapes[i] = a
            ranks[i] = len(shape)
        plan = ctypes.c_void_p()
        if device.type == "cuda":
            with torch.cuda.device(device):  # the first bind takes the current context
                check(l.fuserc_bind_inputs(handle.ptr, shapes, ranks, scalars, n,
                                           ctypes.byref(plan)))
        else:
            check(l.fuserc_bind_inputs(handle.ptr, shapes, ranks, scalars, n, ctypes.byref(plan)))
        bound = _Bound(plan, self.inputs, self.outputs)
        if len(handle.plans) >= 64:
            handle.plans.pop(next(iter(handle.plans)))
        handle.plans[key] = bound
        return bound

    def _shape_results(self, results):
        r = self._returns
        if r is None:
            return results[0] if len(results) == 1 else tuple(results)
        return r.build(results)


def _draw_seed():
    return int(torch.randint(0, 2**62, (), dtype=torch.int64).item())


def _scalar_value(v, spec, package):
    """The host value of scalar input `spec` (a ctypes value, or a CPU tensor of its dtype)."""
    if isinstance(v, torch.Tensor):
        if v.numel() != 1:
            raise TypeError(f"{package}: scalar input {spec.name!r} got a tensor of shape "
                            f"{tuple(v.shape)}")
        if v.device.type != "cpu":
            raise TypeError(f"{package}: scalar input {spec.name!r} got a tensor on {v.device}: "
                            "pass a Python number or a CPU tensor (reading it would synchronise)")
        v = v.item()
    if not isinstance(v, (bool, int, float)):
        raise TypeError(f"{package}: scalar input {spec.name!r} ({spec.dtype}) must be a number, "
                        f"got {type(v).__name__}")
    c = _CTYPE_OF.get(spec.dtype)
    if c is not None:
        return c(v)
    return torch.tensor(v, dtype=spec.torch_dtype)  # f16 / bf16: rounded by torch


def load(path, returns=None, module=None, parameters=None, buffers=None, requires=None):
    """Loads a package written by `fuserc compile` (or fuserc.compile). With `module`, the
    package passes the module's parameters (and the buffers it updates) itself (see Package)."""
    return Package(path, returns=returns, module=module, parameters=parameters, buffers=buffers,
                   requires=requires)
