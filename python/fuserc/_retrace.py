"""Owns when an export traces the function again. The converter matches each size to an
extent by its values in three traces (_trace.trace: the example sizes and two sets of primes),
so traces that cannot tell extents apart make wrong graphs: at sizes below what the function
takes (a stride-32 conv traced at H = 13, where PyTorch's meta functions give an empty map
instead of failing), H // 32 and W // 32 agree in every trace, and a view to [B, H//32, W//32,
C] was written [B, W//32, H//32, C]. Each rule below traces again at m*p + 1 for primes p
(valid sizes whose quotients by m differ between the symbols, and which are no multiples of m,
as the primes are not) and converts again; where that fails, the first graph stands (or its
refusal). Imports nothing of fuserc but the tracer's names."""
import math

from ._trace import MULTIPLES_OF, ExportError


def converted(traced_at, convert, state, ranges):
    """(sizes, converter, (graph, returns)) after the retraces: `traced_at(floors)` traces
    (floors: symbol -> m, or None for the primes) into `state` and returns the sizes;
    `convert(sizes, ranges)` converts the traces in `state`."""
    sizes = traced_at()
    try:
        conv, result = convert(sizes, ranges)
    except ExportError as e:
        # Other ops at the primes because they were below what the function takes: the
        # example's factors. Other ops at valid sizes are the function's own control flow.
        floors = {s: m for s, m in ((s, math.gcd(v, MULTIPLES_OF))
                                    for s, v in state["hints"].items()) if m > 1}
        if not getattr(e, "ops_differ", False) or not floors or \
                not empty_below_the_example(state["traces"]):
            raise
        try:
            sizes = traced_at(floors)
            conv, result = convert(sizes, ranges)
        except ExportError:
            raise e from None
    for rule in (floors_above_traces, lambda c, _: tied_multiples(c.known)):
        floors = rule(conv, sizes)
        if not floors:
            continue
        first = dict(state), sizes
        try:
            retraced = traced_at(floors)
            conv, result = convert(retraced, ranges)
            sizes = retraced
        except ExportError:  # no such sizes within the ranges: the first graph stands
            state.update(first[0])
            sizes = first[1]
    return sizes, conv, result


def floors_above_traces(conv, sizes):
    """{symbol: its least valid size} where a trace at other sizes was below it."""
    return {s: int(e["min"]) for s, e in conv.g.symbols.items()
            if int(e.get("min", 1)) > 1 and any(sv.get(s, e["min"]) < e["min"]
                                                for sv in sizes[1:])}


def empty_below_the_example(traces):
    """Whether a trace at other sizes has a result with an extent of 0 where the example's
    trace has none: sizes below what the function takes (PyTorch's eager ops would fail)."""
    def empties(t):
        n = 0
        for node in t.nodes:
            val = node.meta.get("val")
            for v in val if isinstance(val, (list, tuple)) else [val]:
                shape = getattr(v, "shape", None)
                try:
                    n += shape is not None and any(int(d) == 0 for d in shape)
                except (TypeError, ValueError):
                    pass
        return n
    return empties(traces[0]) == 0 and any(empties(t) for t in traces[1:])


def tied_multiples(known):
    """{symbol: m} for extents of different symbols whose values agree in every trace (`known`:
    extent -> its values), m the least common multiple of the divisors in them (so that at
    m times distinct primes the quotients differ); {} where there are none."""
    by_values = {}
    for e, values in known.items():
        by_values.setdefault(values, []).append(e)
    out = {}
    for group in by_values.values():
        if len({frozenset(e.symbols()) for e in group}) < 2:
            continue
        for e in group:
            m = 1
            for d in e.denominators():
                m = math.lcm(m, d)
            for s in e.symbols():
                out[s] = math.lcm(out.get(s, 1), m)
    return {s: m for s, m in out.items() if m > 1}
