#!/usr/bin/python3
"""Loading a package with 1 GiB of constants against the same package without them (figures,
not a test).

    bench/constants_load.py [--fuserc build/cmd/fuserc] [--gib 1] [--runs 200] [--keep DIR]

Writes a safetensors weights file holding one f32 table of --gib GiB (262144 x 1024 per GiB),
and two graphs that look rows of it up (index_select, times 2): `with_constants` reads the
table as a constant from the weights file, `without_constants` takes it as an ordinary input.
Compiles both (`fuserc compile`, timed: the constant is streamed from the mapped weights file
into the package's external data section), then runs `fuserc bench PACKAGE.fpkg --json` on
each, in alternating rounds (--rounds): loading to a ready Executable (median), the resident
memory one load adds, binding a new shape, and the first use of the constants (mapped and
hashed, on a fresh load). The claim it
checks: loading costs the same with and without the constants (nothing of them is read until a
bind needs them). Needs about 2 GiB of free disk per GiB of table; no GPU.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

ROWS_PER_GIB = 262144
COLS = 1024


def write_weights(path, rows):
    """A safetensors file with one f32 tensor `table` [rows, COLS], every row filled with its
    index (written in chunks, so the script itself stays small in memory)."""
    nbytes = rows * COLS * 4
    header = json.dumps({"table": {"dtype": "F32", "shape": [rows, COLS],
                                   "data_offsets": [0, nbytes]}}).encode()
    header += b" " * ((8 - len(header) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        chunk_rows = 4096
        for r0 in range(0, rows, chunk_rows):
            n = min(chunk_rows, rows - r0)
            f.write(b"".join(struct.pack("<f", float(r)) * COLS for r in range(r0, r0 + n)))


def graph(name, rows, constant):
    table = {"name": "table", "dtype": "f32", "shape": [rows, COLS]}
    if constant:
        table["data"] = {"file": "weights.safetensors", "tensor": "table"}
    return {"fuserc": 1, "name": name, "symbols": {"N": {"hint": 4096, "max": 1 << 20}},
            "inputs": [{"name": "ids", "dtype": "i64", "shape": ["N"]}, table],
            "ops": [{"op": "index_select", "args": ["table", "ids"], "dim": 0, "out": "rowsel"},
                    {"op": "mul", "args": ["rowsel", 2.0], "out": "y"}],
            "outputs": ["y"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fuserc", default="build/cmd/fuserc")
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    ap.add_argument("--keep", help="a folder to keep the files in (else a temporary one)")
    a = ap.parse_args()
    fuserc = os.path.abspath(a.fuserc)
    rows = int(ROWS_PER_GIB * a.gib)
    work = a.keep or tempfile.mkdtemp(prefix="fuserc-constants-")
    os.makedirs(work, exist_ok=True)
    t0 = time.time()
    write_weights(os.path.join(work, "weights.safetensors"), rows)
    print(f"weights file: {rows} x {COLS} f32 = {rows * COLS * 4} bytes "
          f"({time.time() - t0:.1f} s to write)")
    results, compile_s = {}, {}
    names = ("without_constants", "with_constants")
    for name in names:
        gpath = os.path.join(work, name + ".json")
        with open(gpath, "w") as f:
            json.dump(graph(name, rows, name == "with_constants"), f)
        t0 = time.time()
        subprocess.run([fuserc, "compile", gpath, "-o", os.path.join(work, name + ".fpkg"),
                        "--quiet"], check=True)
        compile_s[name] = time.time() - t0
    # Alternating rounds (the machine's load drifts): the median round of each.
    rounds = {n: [] for n in names}
    for _ in range(a.rounds):
        for name in names:
            out = subprocess.run([fuserc, "bench", os.path.join(work, name + ".fpkg"), "--json",
                                  "--runs", str(a.runs)],
                                 check=True, capture_output=True, text=True).stdout
            rounds[name].append(json.loads(out))
    for name in names:
        rs = sorted(rounds[name], key=lambda r: r["load_us"])
        results[name] = dict(rs[len(rs) // 2], compile_s=compile_s[name],
                             loads=[round(r["load_us"], 1) for r in rounds[name]])
    print(f"{'':22} {'package bytes':>15} {'compile':>9} {'load':>10} {'RSS added':>11} "
          f"{'bind':>8} {'constants 1st use':>18}")
    for name, r in results.items():
        print(f"{name:22} {r['package_bytes']:>15} {r['compile_s']:>8.1f}s "
              f"{r['load_us']:>8.1f}us {r['load_resident_bytes']:>11} {r['bind_us']:>6.2f}us "
              f"{r['constants_first_use_us'] / 1000:>15.1f}ms")
    w, c = results["without_constants"], results["with_constants"]
    ratio = c["load_us"] / w["load_us"]
    print(f"load with {c['constant_bytes']} bytes of constants / load without: {ratio:.2f} "
          f"(medians of {a.rounds} alternating rounds: {w['loads']} us without, "
          f"{c['loads']} us with)")
    if not a.keep:
        for f in os.listdir(work):
            os.remove(os.path.join(work, f))
        os.rmdir(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
