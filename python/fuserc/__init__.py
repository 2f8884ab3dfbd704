"""fuserc for PyTorch: export a function to a fusion graph, compile it ahead of time, and call
the package on tensors (CUDA tensors on the current stream; CPU tensors in fuserc's emulator).

    import fuserc
    pkg = fuserc.compile(fn, (x, w), dynamic={"x": {0: "N"}})
    y = pkg(x, w)

    pkg = fuserc.compile(model, (x,), dynamic={"x": {0: "B", 1: "S"}})
    y = pkg(x)  # an nn.Module: the package passes the module's current parameters itself
"""
from ._capi import FusercError, find_executable, find_library
from ._trace import ExportError
from .export import compile, export
from .package import Package, TensorSpec, load

__all__ = ["load", "export", "compile", "Package", "TensorSpec", "ExportError", "FusercError",
           "version", "find_library", "find_executable"]


def version():
    """The runtime library's version ("0.1.0")."""
    from ._capi import lib
    return lib().fuserc_version().decode()
