#!/usr/bin/python3
"""Writes copies of corpus graphs whose symbol hints are other sizes, so that
../shared/tools/check_corpus.py (which runs each graph at its hints and at 1.5x
them) judges fuserc at those sizes too.

    scripts/resize_corpus.py OUT_DIR GRAPH.json SYMBOL=V1,V2,... [OTHER=V ...]

For each value V of the first symbol it writes OUT_DIR/<graph>_<symbol><V>.json
with that hint (and the other symbols' hints as given); a symbol's `max` is
raised when the new hint exceeds it. Example (row lengths of a softmax):

    scripts/resize_corpus.py /tmp/sizes corpus/softmax_f32.json C=1,31,1024,5000,70000 N=3
"""
import json
import os
import sys


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    out_dir, path, sweep = sys.argv[1], sys.argv[2], sys.argv[3]
    fixed = dict(a.split("=", 1) for a in sys.argv[4:])
    name, values = sweep.split("=", 1)
    doc = json.load(open(path))
    os.makedirs(out_dir, exist_ok=True)
    base = os.path.splitext(os.path.basename(path))[0]
    for v in values.split(","):
        d = json.loads(json.dumps(doc))
        syms = d.setdefault("symbols", {})
        for sym, value in [(name, v)] + list(fixed.items()):
            spec = syms.setdefault(sym, {})
            spec["hint"] = int(value)
            if "max" in spec and spec["max"] < int(value) * 3 // 2 + 1:
                spec["max"] = int(value) * 3 // 2 + 1
        d["name"] = f"{base}_{name}{v}"
        with open(os.path.join(out_dir, d["name"] + ".json"), "w") as f:
            json.dump(d, f, indent=1)


if __name__ == "__main__":
    main()
