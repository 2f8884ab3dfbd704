"""The Python package on a GPU: the round trips of roundtrip_cases.py on CUDA tensors, checks
that a call neither synchronises the host nor ignores the current stream, and the host cost of
one `pkg(...)` call against launching the same plan through the C API directly. Prints a table.

    PYTHONPATH=python python3 python/tests/gpu_check.py --fuserc build/cmd/fuserc \\
        --lib build/runtime/libfuserc.so [--arch sm_90] [--calls 2000] [--json out.json]

Needs PyTorch with CUDA. Exit status 1 if any check fails.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time
import traceback

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--fuserc", required=True, help="the fuserc executable")
parser.add_argument("--lib", required=True, help="libfuserc.so")
parser.add_argument("--arch", default=None, help="architectures, e.g. sm_80,sm_90")
parser.add_argument("--calls", type=int, default=2000, help="calls per timing")
parser.add_argument("--json", default=None, help="also write the results here")
parser.add_argument("--device", default="cuda", help="cpu: a dry run of this script's own code "
                    "in the emulator (the stream checks are skipped; timings mean nothing)")
args = parser.parse_args()
os.environ["FUSERC_EXECUTABLE"] = os.path.abspath(args.fuserc)
os.environ["FUSERC_LIBRARY"] = os.path.abspath(args.lib)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import fuserc  # noqa: E402
import roundtrip_cases  # noqa: E402
from fuserc import _capi  # noqa: E402
from test_package import MIX, reference, strided  # noqa: E402

ARCH = args.arch.split(",") if args.arch else None
DEV = args.device


def sync():
    if DEV == "cuda":
        torch.cuda.synchronize()
results = {"torch": torch.__version__, "device": None, "cases": {}, "overhead": []}
failures = []


def check(name, fn):
    try:
        fn()
        print(f"  ok    {name}")
        return True
    except Exception as e:  # noqa: BLE001 - every failure is reported, then the next check
        failures.append(name)
        print(f"  FAIL  {name}: {type(e).__name__}: {e}")
        traceback.print_exc(limit=3)
        return False


def round_trips():
    print("round trips on CUDA tensors (export -> compile -> call, against PyTorch):")
    tracers = ["export", "make_fx"] if hasattr(torch, "export") else ["make_fx"]
    for case in roundtrip_cases.CASES:
        for tracer in tracers:
            name = f"{case['name']} (tracer {tracer})"
            ok = check(name, lambda: roundtrip_cases.run_case(fuserc, case, DEV, arch=ARCH,
                                                              tracer=tracer))
            results["cases"][name] = ok


def streams_and_sync():
    print("streams and synchronisation:")
    pkg = fuserc.compile(MIX, arch=ARCH)

    def on_a_side_stream():
        x_true, p_true = strided(40, 33), torch.randn(40, 33)
        x = torch.zeros(33, 40, device="cuda").t()  # filled on the side stream, late
        p = torch.zeros(40, 33, device="cuda")
        torch.cuda.synchronize()
        s = torch.cuda.Stream()  # PyTorch's streams do not wait for the legacy stream
        with torch.cuda.stream(s):
            torch.cuda._sleep(100_000_000)  # ~50 ms: anything on another stream runs first
            x.copy_(x_true)
            p.copy_(p_true)
            y, total, *_ = pkg(x, p, 0.5, 3)
        s.synchronize()
        want_y, want_s, want_p = reference(x_true.cuda(), p_true.cuda(), 0.5, 3)
        torch.testing.assert_close(y, want_y)
        torch.testing.assert_close(total, want_s)
        torch.testing.assert_close(p, want_p)
    check("launches on the current stream (a busy side stream)", on_a_side_stream)

    def no_sync():
        x, p = strided(64, 64).cuda(), torch.randn(64, 64, device="cuda")
        pkg(x, p, 0.5, 3)  # bound once (binding may synchronise: it loads kernels)
        if not hasattr(torch.cuda, "set_sync_debug_mode"):
            raise RuntimeError("this PyTorch has no torch.cuda.set_sync_debug_mode")
        torch.cuda.set_sync_debug_mode("error")
        try:
            for _ in range(10):
                pkg(x, p, 0.5, 3)
        finally:
            torch.cuda.set_sync_debug_mode(0)
        torch.cuda.synchronize()
    check("a call does not synchronise the host (sync debug mode 'error')", no_sync)

    def strides_error():
        x, p = strided(8, 8).cuda().contiguous(), torch.randn(8, 8, device="cuda")
        try:
            pkg(x, p, 0.5, 3)
        except ValueError as e:
            assert "has strides (8, 1) but the package needs (1, 8)" in str(e), str(e)
            return
        raise AssertionError("no error for wrong strides")
    check("wrong strides are a clear error", strides_error)


def median_us(fn, calls):
    for _ in range(min(200, calls)):
        fn()
    sync()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    sync()
    return statistics.median(times) / 1000.0


def overhead():
    print(f"host cost of one call, median of {args.calls} (tiny tensors; no sync inside):")
    dev = torch.device(DEV, torch.cuda.current_device()) if DEV == "cuda" else torch.device(DEV)
    lib = _capi.lib()
    cases = {c["name"]: c for c in roundtrip_cases.CASES}
    setups = []
    for name in ("gelu_bias", "softmax", "adam_step"):
        case = cases[name]
        pkg = fuserc.compile(case["fn"], roundtrip_cases.make_inputs(case, case["sizes"][0], "cpu"),
                             dynamic=case["dynamic"], arch=ARCH)
        sizes = {k: 64 for k in case["sizes"][0]}
        setups.append((name, pkg, roundtrip_cases.make_inputs(case, sizes, DEV)))
    mix = fuserc.compile(MIX, arch=ARCH)
    setups.append(("mix (3 kernels)", mix, (strided(64, 64).to(DEV),
                                            torch.randn(64, 64, device=DEV), 0.5, 3)))
    rows = []
    for name, pkg, inputs in setups:
        pkg(*inputs)
        sync()
        handle = pkg._handle(dev)
        bound = next(iter(handle.plans.values()))
        launches = lib.fuserc_plan_num_kernel_launches(bound.plan)
        # The C API directly: the same plan, pointers and scalars prepared once.
        outs = [torch.empty(s, dtype=o.torch_dtype, device=DEV)
                for s, o in zip(bound.output_shapes, pkg.outputs)]
        in_ptrs = (ctypes.c_void_p * len(inputs))()
        keep = []
        for i, (v, spec) in enumerate(zip(inputs, pkg.inputs)):
            if spec.is_scalar:
                c = {"f32": ctypes.c_float, "i64": ctypes.c_int64}[spec.dtype](v)
                keep.append(c)
                in_ptrs[i] = ctypes.cast(ctypes.pointer(c), ctypes.c_void_p)
            else:
                in_ptrs[i] = v.data_ptr()
        out_ptrs = (ctypes.c_void_p * len(outs))()
        for j, (t, spec) in enumerate(zip(outs, pkg.outputs)):
            out_ptrs[j] = None if spec.in_place_of >= 0 or spec.source_input >= 0 else t.data_ptr()
        ws = torch.empty(max(bound.workspace_bytes, 1), dtype=torch.uint8, device=DEV)
        stream = torch.cuda.current_stream().cuda_stream if DEV == "cuda" else None
        ws_ptr = ws.data_ptr() if DEV == "cuda" else None
        ws_bytes = bound.workspace_bytes if DEV == "cuda" else 0

        def direct():
            _capi.check(lib.fuserc_launch(bound.plan, stream, in_ptrs, out_ptrs, ws_ptr,
                                          ws_bytes))

        def call():
            pkg(*inputs)
        out_arg = tuple(None if s.in_place_of >= 0 or s.source_input >= 0 else t
                        for t, s in zip(outs, pkg.outputs))

        def call_out():
            pkg(*inputs, out=out_arg)
        t_direct = median_us(direct, args.calls)
        t_call = median_us(call, args.calls)
        t_out = median_us(call_out, args.calls)
        rows.append(dict(package=name, launches=launches, pkg_call_us=t_call,
                         pkg_call_out_us=t_out, c_api_us=t_direct, python_us=t_call - t_direct))
    print("| package | kernels | pkg(...) | pkg(..., out=) | C API (ctypes, same plan) | "
          "Python's share |")
    print("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['package']} | {r['launches']} | {r['pkg_call_us']:.1f} us | "
              f"{r['pkg_call_out_us']:.1f} us | {r['c_api_us']:.1f} us | "
              f"{r['python_us']:.1f} us |")
    results["overhead"] = rows


def main():
    if DEV == "cuda" and not torch.cuda.is_available():
        print("gpu_check: no CUDA device visible to PyTorch")
        return 1
    results["device"] = torch.cuda.get_device_name() if DEV == "cuda" else "CPU (emulator)"
    print(f"gpu_check: {results['device']}, PyTorch {torch.__version__}, fuserc "
          f"{fuserc.version()} ({_capi.lib().path})")
    round_trips()
    if DEV == "cuda":
        streams_and_sync()
    try:
        overhead()
    except Exception:  # noqa: BLE001
        failures.append("overhead")
        traceback.print_exc()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print(f"gpu_check: {len(failures)} failed" + (": " + ", ".join(failures) if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
