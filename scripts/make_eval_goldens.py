#!/usr/bin/python3
"""Regenerates tests/corpus/: the public corpus graphs with inputs and expected outputs made
by the independent PyTorch oracle, for tests/integration/corpus_eval_test.cc.

    /usr/bin/python3 scripts/make_eval_goldens.py [--oracle PATH] [--corpus DIR] [--out DIR]

For every graph in the corpus (default ../shared/corpus, relative to the repository root) it
copies the graph to tests/corpus/<name>.json and, for two bindings of its symbols, writes
<name>.<k>.in.safetensors (oracle.make_inputs with seed k) and <name>.<k>.expected.safetensors
(oracle's Graph.evaluate of the outputs, rounded to each output's dtype by
oracle.write_safetensors). The bindings are kept small so that the checked-in files stay
small: binding 0 scales the symbol hints down until every input tensor has at most
FIRST_LIMIT elements; binding 1 grows binding 0 by about 3/2 (as check_corpus.py does) and
avoids multiples of 4 where it can, with at most SECOND_LIMIT elements per input tensor.

Needs Debian's python3-torch (run with /usr/bin/python3). Deterministic: running it twice
gives the same bytes.
"""
import argparse
import importlib.util
import json
import os
import shutil
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRST_LIMIT = 4096
SECOND_LIMIT = 12288
# Graphs whose constant-shaped inputs would make megabytes of goldens (tests/graphs/public has
# a verbatim copy of the first two; tests/graphs a scaled twin of each: matmul_mlp_bf16 for the
# MLP, whose two 2 MiB weights have no symbol to scale).
TOO_LARGE = {"embedding_pos_layernorm_bf16", "reshape_tokens_f32", "mlp_gelu_bf16"}
# Ops fuserc does not take yet: graphs with them are left out (and said so) until it does.
NOT_YET = set()
# Graphs that break the contract, so fuserc refuses them (rightly): left out, the reason said.
REFUSED = {"gpt2_attention_bf16": "it defines 'ln' twice (ops 5 and 7)"}


def load_oracle(path):
    spec = importlib.util.spec_from_file_location("oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ORACLE = None  # set by main()


def symbol_specs(doc):
    """Every symbol of the graph (declared, used in a shape, strides or an extent expression
    there, or set by a scalar input) -> its spec."""
    syms = {}
    for i in doc["inputs"]:
        for e in i.get("shape", []) + i.get("strides", []):
            for n in ORACLE.extent_symbols(e):
                syms.setdefault(n, {})
        if "symbol" in i:
            syms.setdefault(i["symbol"], {})
    for name, spec in doc.get("symbols", {}).items():
        syms[name] = spec
    return syms


def numel(shape, binding):
    n = 1
    for e in shape:
        n *= ORACLE.extent(e, binding)
    return n


def passed(doc):
    """The input tensors the caller passes (constants are the graph's own)."""
    return [i for i in doc["inputs"] if "shape" in i and "data" not in i]


def clamp(v, spec):
    return max(spec.get("min", 1), min(v, spec.get("max", 1 << 40)))


def shrink(doc, specs, binding, limit):
    """Lowers symbol values until every input tensor has at most `limit` elements."""
    binding = dict(binding)
    while True:
        tensors = [i["shape"] for i in passed(doc)]
        big = [s for s in tensors if numel(s, binding) > limit]
        if not big:
            return binding
        shape = max(big, key=lambda s: numel(s, binding))
        names = sorted({n for e in shape for n in ORACLE.extent_symbols(e)
                        if binding[n] > specs[n].get("min", 1)})
        if not names:
            print(f"note: {doc['name']}: {shape} keeps {numel(shape, binding)} elements "
                  f"(over {limit}) at the smallest symbol values", file=sys.stderr)
            return binding
        k = max(names, key=lambda e: binding[e])
        binding[k] = clamp(binding[k] * 3 // 4, specs[k])


def fits(doc, binding, limit):
    return all(numel(i["shape"], binding) <= limit for i in passed(doc))


def bindings(doc):
    specs = symbol_specs(doc)
    first = shrink(doc, specs, {k: clamp(v.get("hint", 7), v) for k, v in specs.items()},
                   FIRST_LIMIT)
    second = {k: clamp(v * 3 // 2 + 1, specs[k]) for k, v in first.items()}
    second = shrink(doc, specs, second, SECOND_LIMIT)
    # Prefer values that are not multiples of 4 and differ from the first binding, as long as
    # the tensors stay within the limit.
    for k in sorted(second):
        for d in (0, 1, -1, 2, -2, 3, -3):
            x = second[k] + d
            if x % 4 == 0 or x == first[k] or clamp(x, specs[k]) != x:
                continue
            trial = dict(second)
            trial[k] = x
            if fits(doc, trial, SECOND_LIMIT):
                second = trial
                break
    out = [first]
    if second != first:
        out.append(second)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--oracle", default=os.path.join(REPO, "..", "shared", "tools", "oracle.py"))
    ap.add_argument("--corpus", default=os.path.join(REPO, "..", "shared", "corpus"))
    ap.add_argument("--out", default=os.path.join(REPO, "tests", "corpus"))
    a = ap.parse_args()
    global ORACLE
    oracle = ORACLE = load_oracle(os.path.abspath(a.oracle))
    os.makedirs(a.out, exist_ok=True)
    # Start from a clean set of generated files (README.md is hand-written and kept).
    for f in os.listdir(a.out):
        if f.endswith(".json") or f.endswith(".safetensors"):
            os.remove(os.path.join(a.out, f))
    graphs = []
    for f in sorted(os.listdir(a.corpus)):
        if not f.endswith(".json") or os.path.splitext(f)[0] in TOO_LARGE:
            continue
        if os.path.splitext(f)[0] in REFUSED:
            print(f"note: {f} left out: {REFUSED[os.path.splitext(f)[0]]}")
            continue
        ops = {op["op"] for op in json.load(open(os.path.join(a.corpus, f)))["ops"]}
        if ops & NOT_YET:
            print(f"note: {f} left out: it uses {', '.join(sorted(ops & NOT_YET))}")
            continue
        graphs.append(f)
    total = 0
    for g in graphs:
        name = os.path.splitext(g)[0]
        src = os.path.join(a.corpus, g)
        doc = oracle.load_graph(src)
        shutil.copyfile(src, os.path.join(a.out, g))
        # The weights files its constants are read from, beside it.
        for i in doc["inputs"]:
            data = i.get("data")
            if isinstance(data, dict):
                shutil.copyfile(os.path.join(a.corpus, data["file"]),
                                os.path.join(a.out, data["file"]))
        for k, syms in enumerate(bindings(doc)):
            feeds = oracle.make_inputs(doc, seed=k, overrides=syms)
            graph = oracle.Graph(doc)
            graph.bind(feeds)
            env, rand_dep = graph.evaluate(feeds)
            # An input written in place and listed as an output is its updated value.
            written = {v: k for k, v in doc.get("aliases", {}).items()}
            outs = {n: env[written.get(n, n)] for n in doc["outputs"]}
            for n, (dt, t) in outs.items():
                # The test compares against the stored (rounded) values; make sure storing
                # an integer output does not wrap, which would differ from oracle.compare.
                if dt in ("i32", "i64", "bool"):
                    i64 = oracle.torch.int64
                    back = t.to(oracle.DT[dt]).to(i64)
                    if not bool((back == t.to(i64)).all()):
                        sys.exit(f"{name}.{k}: output {n} does not fit in {dt}")
            inp = os.path.join(a.out, f"{name}.{k}.in.safetensors")
            exp = os.path.join(a.out, f"{name}.{k}.expected.safetensors")
            oracle.write_safetensors(inp, feeds)
            oracle.write_safetensors(exp, outs)
            size = os.path.getsize(inp) + os.path.getsize(exp)
            total += size
            rnd = f" (random: {sorted(n for n in outs if n in rand_dep)})" if any(
                n in rand_dep for n in outs) else ""
            print(f"{name}.{k}: {syms} {size} bytes{rnd}")
    total += sum(os.path.getsize(os.path.join(a.out, g)) for g in graphs)
    print(f"{len(graphs)} graphs, {total} bytes of graphs and tensors in {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
