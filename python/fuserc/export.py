"""Owns `fuserc.export` (a PyTorch function to a fusion graph) and `fuserc.compile` (that graph,
or one given, to a package, loaded and ready to call)."""
import copy
import json
import math
import os
import re
import subprocess
import tempfile

import torch

from . import _arguments, _capi, _module, _retrace, _weights
from ._aten import convert as convert_node
from ._convert import Converter
from ._graph import weights_file
from ._symbolic import symbol_over
from ._trace import ExportError, Input, default_tracer, input_names, trace
from .package import Package


class ExportedGraph(dict):
    """The fusion graph (a dict of the contract: `save` it) with what a package made from it
    needs besides: `parameters` (graph input name -> the module parameter's qualified name, for
    a module's parameters, which the caller need not pass), `buffers` (graph input name -> the
    qualified name of a module buffer that forward updates in place: an input written in place,
    which the package passes too) and `constants` (graph name of a tensor embedded as `data` ->
    its qualified name, for a module's other buffers, and its parameters with
    constants="all"). Also `requires`: sizes the graph assumes to be a multiple of a number,
    which the contract cannot state ([{"extent": "N", "multiple": 2, "what": ...}]: a view of
    [B, N] as (B, -1, 2) reads the first 2*(N//2) columns), checked by a Package made from it;
    and `extents`: the extents the exporter gave each traced op's result (graph name -> shape,
    what `fuserc check` infers for it). `weights`: graph input name -> tensor, the constants of
    more than _graph.INLINE_ELEMENTS elements, whose `data` names a tensor of the weights file
    that `save` writes beside the graph."""

    def __init__(self, doc, parameters=None, constants=None, buffers=None, requires=None,
                 extents=None, weights=None):
        super().__init__(doc)
        self.parameters = dict(parameters or {})
        self.constants = dict(constants or {})
        self.buffers = dict(buffers or {})
        self.requires = list(requires or [])
        self.extents = dict(extents or {})
        self.weights = dict(weights or {})
        # (argument names, structure) where arguments hold tensors in containers (_arguments)
        self.arguments = None

    def save(self, path):
        """Writes the graph to `path` (JSON, for `fuserc compile`) and its large constants to
        <stem>.safetensors beside it, which the graph's `data` entries name; each file is
        written to a temporary name and renamed (whole or absent)."""
        path = os.fspath(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        doc = dict(self)
        if self.weights:
            file = weights_file(stem)
            doc["inputs"] = [dict(i, data={"file": file, "tensor": i["name"]})
                             if i["name"] in self.weights else i for i in self["inputs"]]
            _weights.write(os.path.join(os.path.dirname(os.path.abspath(path)), file),
                           self.weights)
        _weights.write_whole(path, "w", lambda f: json.dump(doc, f, indent=1))


def _export(fn, example_inputs, dynamic=None, name=None, ranges=None, tracer=None,
            constants=None):
    if not callable(fn):
        raise TypeError("fuserc.export: fn must be callable (a function or an nn.Module)")
    if isinstance(example_inputs, (torch.Tensor, bool, int, float)):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    module = None
    if isinstance(fn, torch.nn.Module):
        module = _module.ModuleExport(fn, len(example_inputs), constants)
        names = module.names
        traced, what = module.fn, f"{type(fn).__name__}.forward"
        if name is None:
            name = type(fn).__name__
    else:
        if constants not in (None, "buffers", "all"):
            raise ValueError(f"fuserc.export: constants must be None or 'all', not {constants!r}")
        names = input_names(fn, len(example_inputs))
        traced, what = fn, "the function"
    # Tensors in tuples, lists and dicts: a graph input per leaf (see _arguments.py).
    flat_names, flat_values, structure = _arguments.flatten(names, example_inputs)
    if _arguments.nested(structure):
        traced = _arguments.regroup(traced, structure)
        dynamic = _arguments.expand_dynamic(dynamic, names, example_inputs)
    inputs = [Input(n, v) for n, v in zip(flat_names, flat_values)]
    if module is not None:
        taken = set(flat_names)
        for n, t, quals in module.parameters:
            if n in taken:
                raise ExportError(f"fuserc.export: parameter {quals[0]!r} and an argument's "
                                  f"leaf are both named {n!r}")
        inputs += [Input(n, t.detach(), parameter=quals[0])
                   for n, t, quals in module.parameters]
    if name is None:
        name = getattr(fn, "__name__", "graph")
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not re.match(r"[A-Za-z_]", name):
        name = "g_" + name
    tracer = tracer or default_tracer()
    if tracer not in ("export", "make_fx"):
        raise ValueError(f"fuserc.export: tracer must be 'export' or 'make_fx', not {tracer!r}")
    state = {}

    def traced_at(floors=None):
        state["traces"], sizes, state["hints"] = trace(traced, inputs, dynamic, tracer, what,
                                                       ranges, floors)
        return sizes

    def convert(sizes, ranges):
        conv = Converter(state["traces"], sizes, inputs, name, ranges, convert_node,
                         module.constant_names if module else None,
                         module.buffer_ids if module else None, state["hints"],
                         module.constants if module else None)
        return conv, conv.run()
    sizes, conv, (graph, returns) = _retrace.converted(traced_at, convert, state, ranges)
    # A symbol the function needs to be a multiple of m (a view into windows of m, traced only
    # at multiples) is m times a symbol of its own: the graph's extents are then exact (the
    # windows view back to [B, H, W, C]) and fuserc checks the multiple when it binds.
    multiples = {}
    for _ in range(3):
        more = {s: m for s, m in _symbol_multiples(conv.multiples_needed, multiples).items()
                if all(sv.get(s, 1) % m == 0 for sv in sizes)}
        if not more:
            break
        multiples.update(more)
        try:
            conv, (graph, returns) = convert(*_in_units(sizes, ranges, multiples))
        except ExportError:
            break  # the graph in the user's symbols (with `requires`) stands
    embedded = {i["name"] for i in graph["inputs"] if "data" in i}
    known = module.constants if module else {}
    graph = ExportedGraph(
        graph, {i.name: i.parameter for i in inputs if i.parameter is not None},
        {n: q for n, q in known.items() if n in embedded},
        {n: known[module.constant_names[t]] for n, t in conv.updated_buffers.items()},
        conv.requirements, conv.extents,
        {n: t for n, t in conv.g.weights.items() if n in embedded})
    if _arguments.nested(structure):
        graph.arguments = (list(names), structure)
    return graph, returns


def _unit_name(symbol, m):
    return f"{symbol}_over_{m}"


def _symbol_multiples(needed, multiples):
    """From `needed` (a Converter's multiples_needed: (extent, m) pairs), the user's symbols
    that must be multiples of a number, beyond `multiples` (symbol -> m, those already in
    units of m): symbol -> m."""
    back = {_unit_name(s, m): (s, m) for s, m in multiples.items()}
    more = {}
    for e, need in needed:
        # S, or S // a (Swin's windows of 7 over a patch grid of H // 4: H a multiple of 28).
        hit = symbol_over(e)
        if hit is None:
            continue
        s, unit = back.get(hit[0], (hit[0], 1))
        a = hit[1]
        m = math.lcm(multiples.get(s, 1), more.get(s, 1), unit * a * need)
        if m != multiples.get(s, 1):
            more[s] = m
    return more


def _in_units(sizes, ranges, multiples):
    """The traces' symbol values and the ranges with each symbol s of `multiples` replaced by
    its units, s // m (named _unit_name(s, m))."""
    new_sizes = []
    for sv in sizes:
        sv = dict(sv)
        for s, m in multiples.items():
            sv[_unit_name(s, m)] = sv.pop(s) // m
        new_sizes.append(sv)
    new_ranges = dict(ranges or {})
    for s, m in multiples.items():
        lo, hi = new_ranges.pop(s, (None, None))
        if lo is not None or hi is not None:
            new_ranges[_unit_name(s, m)] = (None if lo is None else max(1, -(-int(lo) // m)),
                                            None if hi is None else int(hi) // m)
    return new_sizes, new_ranges or ranges


def export(fn, example_inputs, dynamic=None, name=None, ranges=None, tracer=None,
           constants=None):
    """Traces `fn` on `example_inputs` (tensors and numbers; numbers become scalar inputs) and
    returns the fusion graph (an ExportedGraph, a dict of the contract: `graph.save(path)`
    writes it for `fuserc compile`, with its large constants in a safetensors file beside it). `dynamic` names symbolic extents per input: {"x": {0: "N"}}; every other extent
    is fixed; an int argument that sets a size gets a symbol of its own: {"n": "K"} (an i64
    scalar input with "symbol": "K"). `ranges` gives a symbol's [min, max]: {"N": (1, 65536)}. `tracer`: "export"
    (torch.export, the default where PyTorch has it) or "make_fx". Raises ExportError naming
    the first op that a fuserc graph cannot express and the line of `fn` it came from.

    `fn` may be an nn.Module: its forward is traced, the inputs are named after forward's
    parameters, and the module's parameters become graph inputs named after their qualified
    names (`blocks.0.attn.weight` -> `blocks_0_attn_weight`; the returned graph's `parameters`
    maps them back); buffers, and tensors a function closes over, become constants (`data`).
    `constants="all"` embeds the parameters as constants too (the package then ignores later
    changes to them)."""
    return _export(fn, example_inputs, dynamic, name, ranges, tracer, constants)[0]


def _data_files_from_cwd(graph):
    """`graph` with each constant's weights file made absolute: a dict has no folder of its own,
    so a relative `data.file` is relative to the current directory (the contract reads it
    relative to the graph file's folder, which is a temporary one here)."""
    def absolute(i):
        data = i.get("data") if isinstance(i, dict) else None
        if not (isinstance(data, dict) and isinstance(data.get("file"), str) and data["file"]
                and not os.path.isabs(data["file"])):
            return i
        return dict(i, data=dict(data, file=os.path.abspath(data["file"])))
    if not isinstance(graph.get("inputs"), list):
        return graph
    inputs = [absolute(i) for i in graph["inputs"]]
    if all(a is b for a, b in zip(inputs, graph["inputs"])):
        return graph
    out = copy.copy(graph)  # an ExportedGraph keeps its type and what it carries
    dict.__setitem__(out, "inputs", inputs)
    return out


def compile(fn_or_graph, example_inputs=None, dynamic=None, name=None, ranges=None, arch=None,
            output=None, tracer=None, jobs=None, constants=None):
    """Compiles a function (exported first, as by fuserc.export) or a graph (a dict, or the path
    of a JSON file) with the `fuserc` executable and loads the package. `arch`: architectures,
    e.g. ["sm_80", "sm_90"] (the compiler's default otherwise); a dict's constants that name a
    weights file by a relative path are read relative to the current directory; `output`: where the package is
    written (default: a temporary directory kept for the process). A package compiled from a
    function returns what the function returns (inputs it updates in place are updated). One
    compiled from an nn.Module passes the module's current parameters itself: `pkg(x)`."""
    returns = None
    module = None
    source = None  # a graph file compiled where it lies (its weights file beside it)
    if isinstance(fn_or_graph, dict):
        graph = _data_files_from_cwd(fn_or_graph)
    elif isinstance(fn_or_graph, (str, os.PathLike)):
        source = os.fspath(fn_or_graph)
        with open(source) as f:
            graph = json.load(f)
    else:
        if example_inputs is None:
            raise TypeError("fuserc.compile: a function needs example_inputs")
        graph, returns = _export(fn_or_graph, example_inputs, dynamic, name, ranges, tracer,
                                 constants)
        if isinstance(fn_or_graph, torch.nn.Module):
            module = fn_or_graph
    exe = _capi.find_executable(_capi.lib().path)
    work = tempfile.mkdtemp(prefix="fuserc_")
    graph_path = source or os.path.join(work, f"{graph.get('name', 'graph')}.json")
    if source is None:
        ExportedGraph(graph, weights=getattr(graph, "weights", None)).save(graph_path)
    output = str(output) if output else os.path.join(work, f"{graph.get('name', 'graph')}.fpkg")
    cmd = [exe, "compile", graph_path, "-o", output, "-q"]
    if arch:
        cmd += ["--arch", ",".join(arch) if not isinstance(arch, str) else arch]
    if jobs:
        cmd += ["-j", str(jobs)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        msg = (r.stderr or r.stdout).strip()
        raise ExportError(f"fuserc compile failed (exit {r.returncode}; the graph is "
                          f"{graph_path}):\n{msg}")
    return Package(output, returns=returns, module=module,
                   parameters=getattr(graph, "parameters", None),
                   buffers=getattr(graph, "buffers", None),
                   requires=getattr(graph, "requires", None),
                   arguments=getattr(graph, "arguments", None))
