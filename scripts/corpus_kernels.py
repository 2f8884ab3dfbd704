#!/usr/bin/python3
"""Kernels and global-memory traffic of every graph of a corpus (the README's table).

    scripts/corpus_kernels.py [--fuserc build/cmd/fuserc] [--markdown] CORPUS_DIR

Each graph is compiled (`fuserc compile`), then `fuserc inspect --json --bind` gives, at the
hints and at a large binding (every symbol at 16 times its hint, within its bounds), the
kernels launched, global_bytes (each buffer once per kernel that reads or writes it) and
min_global_bytes (the inputs read once, the outputs written once). Graphs fuserc refuses are
listed with the first line of its error. Prints one row per graph and the mean ratio.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def inspect(fuserc, pkg, bind):
    out = subprocess.run([fuserc, "inspect", pkg, "--json", "--bind", bind], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)


def large_binding(symbols):
    return ",".join(f"{s['name']}={max(s['min'], min(s['max'], s['hint'] * 16))}"
                    for s in symbols)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--fuserc", default="build/cmd/fuserc")
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    rows, ratios = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(args.corpus)):
            if not name.endswith(".json"):
                continue
            graph = os.path.join(args.corpus, name)
            pkg = os.path.join(tmp, name[:-5] + ".fpkg")
            r = subprocess.run([args.fuserc, "compile", graph, "-o", pkg, "-q"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                rows.append((name[:-5], "-", "refused: " + r.stderr.strip().split("\n")[0][-70:],
                             "", ""))
                continue
            hints = inspect(args.fuserc, pkg, "hints")
            large = inspect(args.fuserc, pkg, large_binding(hints["symbols"]))
            scheduler = {k["name"]: k["scheduler"] for k in hints["kernels"]}
            schedulers = ", ".join(scheduler[l["kernel"]] for l in hints["bound"]["launches"])
            h, l = hints["bound"], large["bound"]
            ratios.append(h["traffic_ratio"])
            rows.append((name[:-5], str(len(h["launches"])), schedulers,
                         f"{h['traffic_ratio']:.3f}", f"{l['traffic_ratio']:.3f}"))
    head = ("graph", "kernels", "schedulers", "ratio at hints", "ratio at 16x hints")
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        for row in [head] + rows:
            print(f"{row[0]:32} {row[1]:>7}  {row[3]:>14} {row[4]:>18}  {row[2]}")
    if ratios:
        print(f"\nmean global_bytes / min_global_bytes at the hints over {len(ratios)} graphs: "
              f"{sum(ratios) / len(ratios):.3f}")


if __name__ == "__main__":
    sys.exit(main())
