"""Owns `fuserc.export` (a PyTorch function to a fusion graph) and `fuserc.compile` (that graph,
or one given, to a package, loaded and ready to call)."""
import json
import os
import re
import subprocess
import tempfile

from . import _capi
from ._aten import convert as convert_node
from ._convert import Converter
from ._trace import ExportError, Input, default_tracer, input_names, trace
from .package import Package


def _export(fn, example_inputs, dynamic=None, name=None, ranges=None, tracer=None):
    if not callable(fn):
        raise TypeError("fuserc.export: fn must be callable")
    example_inputs = tuple(example_inputs)
    names = input_names(fn, len(example_inputs))
    inputs = [Input(n, v) for n, v in zip(names, example_inputs)]
    if name is None:
        name = getattr(fn, "__name__", "graph")
    name = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not re.match(r"[A-Za-z_]", name):
        name = "g_" + name
    tracer = tracer or default_tracer()
    if tracer not in ("export", "make_fx"):
        raise ValueError(f"fuserc.export: tracer must be 'export' or 'make_fx', not {tracer!r}")
    traces, sizes = trace(fn, inputs, dynamic, tracer)
    return Converter(traces, sizes, inputs, name, ranges, convert_node).run()


def export(fn, example_inputs, dynamic=None, name=None, ranges=None, tracer=None):
    """Traces `fn` on `example_inputs` (tensors and numbers; numbers become scalar inputs) and
    returns the fusion graph (a dict of the contract, json.dump it to a file for `fuserc
    compile`). `dynamic` names symbolic extents per input: {"x": {0: "N"}}; every other extent
    is fixed. `ranges` gives a symbol's [min, max]: {"N": (1, 65536)}. `tracer`: "export"
    (torch.export, the default where PyTorch has it) or "make_fx". Raises ExportError naming
    the first op that a fuserc graph cannot express and the line of `fn` it came from."""
    return _export(fn, example_inputs, dynamic, name, ranges, tracer)[0]


def compile(fn_or_graph, example_inputs=None, dynamic=None, name=None, ranges=None, arch=None,
            output=None, tracer=None, jobs=None):
    """Compiles a function (exported first, as by fuserc.export) or a graph (a dict, or the path
    of a JSON file) with the `fuserc` executable and loads the package. `arch`: architectures,
    e.g. ["sm_80", "sm_90"] (the compiler's default otherwise); `output`: where the package is
    written (default: a temporary directory kept for the process). A package compiled from a
    function returns what the function returns (inputs it updates in place are updated)."""
    returns = None
    if isinstance(fn_or_graph, dict):
        graph = fn_or_graph
    elif isinstance(fn_or_graph, (str, os.PathLike)):
        with open(fn_or_graph) as f:
            graph = json.load(f)
    else:
        if example_inputs is None:
            raise TypeError("fuserc.compile: a function needs example_inputs")
        graph, returns = _export(fn_or_graph, example_inputs, dynamic, name, ranges, tracer)
    exe = _capi.find_executable(_capi.lib().path)
    work = tempfile.mkdtemp(prefix="fuserc_")
    graph_path = os.path.join(work, f"{graph.get('name', 'graph')}.json")
    with open(graph_path, "w") as f:
        json.dump(graph, f, indent=1)
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
    return Package(output, returns=returns)
