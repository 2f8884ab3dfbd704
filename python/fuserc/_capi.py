"""Owns the ctypes binding of libfuserc.so (the C interface runtime/api/fuserc_runtime.h) and
finding the library and the `fuserc` executable.

Why ctypes: the C interface is the runtime's one stable ABI, so binding it needs nothing compiled
for Python (no extension to rebuild per Python or PyTorch version; the same package works with
Debian's torch here and any PyTorch on a GPU machine).

Where things are found (first hit wins):
  library:    $FUSERC_LIBRARY; libfuserc.so next to this package (an installed layout);
              $FUSERC_BUILD_DIR/runtime; the repository's build/runtime.
  executable: $FUSERC_EXECUTABLE; `fuserc` next to the library, or in ../cmd or ../bin from it;
              $FUSERC_BUILD_DIR/cmd; the repository's build/cmd; `fuserc` on PATH.
"""
import ctypes
import os
import shutil

FUSERC_DEVICE_EMULATOR = -1
ABI_VERSION = 1

# fuserc_dtype values, in the package format's order.
DTYPE_NAMES = ["bool", "i32", "i64", "f16", "bf16", "f32", "f64"]

STATUS_NAMES = {
    0: "FUSERC_OK", 1: "FUSERC_ERROR_INVALID_ARGUMENT", 2: "FUSERC_ERROR_PACKAGE",
    3: "FUSERC_ERROR_SHAPE", 4: "FUSERC_ERROR_NO_DRIVER", 5: "FUSERC_ERROR_NO_DEVICE",
    6: "FUSERC_ERROR_NO_COMPATIBLE_KERNEL", 7: "FUSERC_ERROR_CUDA",
    8: "FUSERC_ERROR_OUT_OF_MEMORY", 9: "FUSERC_ERROR_INTERNAL", 10: "FUSERC_ERROR_NO_LIBRARY",
}


class FusercError(RuntimeError):
    """A failed call into the fuserc runtime: `status` is the C status name, the message the
    runtime's one line."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = STATUS_NAMES.get(status, str(status))


class LoadOptions(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int32), ("context", ctypes.c_void_p)]


class SymbolInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("min", ctypes.c_int64), ("max", ctypes.c_int64),
                ("hint", ctypes.c_int64)]


class TensorInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("is_scalar", ctypes.c_int32), ("in_place_of", ctypes.c_int32),
                ("source_input", ctypes.c_int32), ("has_strides", ctypes.c_int32),
                ("dim_symbol", ctypes.POINTER(ctypes.c_int32)),
                ("dim_value", ctypes.POINTER(ctypes.c_int64)),
                ("dim_formula", ctypes.POINTER(ctypes.c_char_p))]


class ConstantInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("bytes", ctypes.c_uint64),
                ("hash", ctypes.c_uint64)]


def _repo_root():
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build_dirs():
    dirs = []
    if os.environ.get("FUSERC_BUILD_DIR"):
        dirs.append(os.environ["FUSERC_BUILD_DIR"])
    dirs.append(os.path.join(_repo_root(), "build"))
    return dirs


def find_library():
    """The path of libfuserc.so, or raises FileNotFoundError saying where it looked."""
    env = os.environ.get("FUSERC_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise FileNotFoundError(f"FUSERC_LIBRARY={env}: no such file")
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.path.join(here, "libfuserc.so")]
    candidates += [os.path.join(d, "runtime", "libfuserc.so") for d in _build_dirs()]
    for c in candidates:
        if os.path.isfile(c):
            return c
    raise FileNotFoundError(
        "libfuserc.so not found (looked in " + ", ".join(candidates) +
        "): build fuserc (scripts/setup.sh) or set FUSERC_LIBRARY to its path")


def find_executable(library_path=None):
    """The path of the `fuserc` compiler executable, or raises FileNotFoundError."""
    env = os.environ.get("FUSERC_EXECUTABLE")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"FUSERC_EXECUTABLE={env}: not an executable file")
        return env
    candidates = []
    if library_path:
        lib_dir = os.path.dirname(os.path.abspath(library_path))
        candidates += [os.path.join(lib_dir, "fuserc"),
                       os.path.join(lib_dir, os.pardir, "cmd", "fuserc"),
                       os.path.join(lib_dir, os.pardir, "bin", "fuserc")]
    candidates += [os.path.join(d, "cmd", "fuserc") for d in _build_dirs()]
    for c in candidates:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return os.path.normpath(c)
    on_path = shutil.which("fuserc")
    if on_path:
        return on_path
    raise FileNotFoundError(
        "the fuserc executable was not found (looked in " + ", ".join(candidates) +
        " and on PATH): build fuserc or set FUSERC_EXECUTABLE to its path")


_P = ctypes.c_void_p
_I32 = ctypes.c_int32
_I64P = ctypes.POINTER(ctypes.c_int64)
_SIGNATURES = {
    "fuserc_version": (ctypes.c_char_p, []),
    "fuserc_abi_version": (_I32, []),
    "fuserc_last_error": (ctypes.c_char_p, []),
    "fuserc_driver_check": (_I32, [_I32]),
    "fuserc_package_load": (_I32, [ctypes.c_char_p, ctypes.POINTER(LoadOptions),
                                   ctypes.POINTER(_P)]),
    "fuserc_package_load_bytes": (_I32, [ctypes.c_char_p, ctypes.c_size_t, _I32,
                                         ctypes.POINTER(LoadOptions), ctypes.POINTER(_P)]),
    "fuserc_package_free": (None, [_P]),
    "fuserc_package_name": (ctypes.c_char_p, [_P]),
    "fuserc_package_num_symbols": (_I32, [_P]),
    "fuserc_package_num_inputs": (_I32, [_P]),
    "fuserc_package_num_outputs": (_I32, [_P]),
    "fuserc_package_symbol": (_I32, [_P, _I32, ctypes.POINTER(SymbolInfo)]),
    "fuserc_package_input": (_I32, [_P, _I32, ctypes.POINTER(TensorInfo)]),
    "fuserc_package_output": (_I32, [_P, _I32, ctypes.POINTER(TensorInfo)]),
    "fuserc_package_is_emulated": (_I32, [_P]),
    "fuserc_package_input_symbol": (_I32, [_P, _I32]),
    "fuserc_package_num_constants": (_I32, [_P]),
    "fuserc_package_constant": (_I32, [_P, _I32, ctypes.POINTER(ConstantInfo)]),
    "fuserc_package_inspect_json": (_I32, [_P, _I64P, _I32, ctypes.c_char_p, ctypes.c_size_t,
                                           ctypes.POINTER(ctypes.c_size_t)]),
    "fuserc_bind": (_I32, [_P, _I64P, _I32, ctypes.POINTER(_P)]),
    "fuserc_bind_shapes": (_I32, [_P, ctypes.POINTER(_I64P), ctypes.POINTER(_I32), _I32,
                                  ctypes.POINTER(_P)]),
    "fuserc_bind_inputs": (_I32, [_P, ctypes.POINTER(_I64P), ctypes.POINTER(_I32),
                                  ctypes.POINTER(_P), _I32, ctypes.POINTER(_P)]),
    "fuserc_plan_free": (None, [_P]),
    "fuserc_plan_workspace_bytes": (ctypes.c_size_t, [_P]),
    "fuserc_plan_num_kernel_launches": (_I32, [_P]),
    "fuserc_plan_symbol_values": (_I32, [_P, _I64P]),
    "fuserc_plan_input_shape": (_I32, [_P, _I32, _I64P]),
    "fuserc_plan_input_strides": (_I32, [_P, _I32, _I64P]),
    "fuserc_plan_output_shape": (_I32, [_P, _I32, _I64P]),
    "fuserc_launch": (_I32, [_P, _P, ctypes.POINTER(_P), ctypes.POINTER(_P), _P,
                             ctypes.c_size_t]),
    "fuserc_stream_synchronize": (_I32, [_P]),
}

_lib = None


def lib():
    """The loaded library (loaded once), with every function's signature declared."""
    global _lib
    if _lib is None:
        path = find_library()
        handle = ctypes.CDLL(path)
        for name, (restype, argtypes) in _SIGNATURES.items():
            fn = getattr(handle, name)
            fn.restype = restype
            fn.argtypes = argtypes
        if handle.fuserc_abi_version() != ABI_VERSION:
            raise ImportError(f"{path} has C ABI version {handle.fuserc_abi_version()}, this "
                              f"Python package needs {ABI_VERSION}")
        handle.path = path
        _lib = handle
    return _lib


def check(status):
    """Raises FusercError with the runtime's message when `status` is not FUSERC_OK."""
    if status != 0:
        raise FusercError(status, lib().fuserc_last_error().decode("utf-8", "replace"))
