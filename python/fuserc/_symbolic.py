"""Owns the extents of an exported graph: integer expressions over the symbols (`Extent`), and
recovering them from concrete traces.

A function is traced three times: at the example inputs' sizes and at two assignments of small
distinct primes to the symbols of `dynamic` (at multiples of primes where the function traces
only at multiples of some size; see _trace.py). Every integer that describes a size (a
tensor's extent, a view's target shape, a slice bound) is then a known value per trace;
`resolve` finds an expression that gives those values in every trace: one the converter
already knows (an extent of an earlier result, or the formula of the op at hand, such as a
convolution's `(H+2p-d(k-1)-1)//s+1`), a monomial `c * S1 * S2 ...` or `S + d`, or (in
`resolve_product`) a product of known extents; or it reports that none does.

An Extent is kept in the canonical form of fuserc's own size expressions (core/expr/expr.cc): a
polynomial (like terms combined) whose factors are symbols and floor divisions or modulos of
canonical polynomials by integers above 1, where a floor division by c keeps apart the terms
divisible by c (`(2*H+3)//2` is `H+1+1//2`, i.e. `H+1`; `(H-1)//2` is `(H+1)//2-1`) and a
division of a division is one division (`(H//2)//3` is `H//6`). So the extent the exporter
computes for an op and the one fuserc infers from the same attributes are one expression, and
equal Extents print to strings that fuserc reads as equal expressions.
"""
from itertools import combinations_with_replacement

# Symbol values of the two extra traces (distinct from each other and small).
PRIMES_B = [11, 13, 17, 19, 23, 29, 31, 37, 41, 43]
PRIMES_C = [47, 53, 59, 61, 67, 71, 73, 79, 83, 89]
MAX_FACTORS = 3
MAX_DIVISOR = 16  # resolve_product tries divisions of an extent by numbers up to this
MAX_MULTIPLE = 64  # a pad to a multiple of m is tried for m up to this


def primes_below(n):
    """The primes below n, ascending."""
    sieve = [True] * max(n, 2)
    sieve[0] = sieve[1] = False
    for k in range(2, int(n ** 0.5) + 1):
        if sieve[k]:
            sieve[k * k::k] = [False] * len(sieve[k * k::k])
    return [k for k in range(n) if sieve[k]]


class _Div:
    """A factor `(num)//den` (op "//") or `(num)%den` (op "%"): num a canonical Extent that is
    not a constant, den an integer above 1."""
    __slots__ = ("op", "num", "den", "key")

    def __init__(self, op, num, den):
        self.op, self.num, self.den = op, num, den
        self.key = (1 if op == "//" else 2, num.key, den)

    def __eq__(self, other):
        return isinstance(other, _Div) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def evaluate(self, values):
        n = self.num.evaluate(values)
        return n // self.den if self.op == "//" else n % self.den

    def text(self):
        num = self.num.text()
        if len(self.num.terms) > 1 or self.num.const:
            num = f"({num})"
        return f"{num}{self.op}{self.den}"


def _factor_key(f):
    return (0, f) if isinstance(f, str) else f.key


def _monomial(factors):
    return tuple(sorted(factors, key=_factor_key))


def _lift(x):
    if isinstance(x, Extent):
        return x
    if isinstance(x, int) and not isinstance(x, bool):
        return Extent(x)
    return None


class Extent:
    """An integer expression over the symbols in canonical form (see the module's
    documentation): `const` plus `terms`, a tuple of (monomial, coefficient) with monomials
    tuples of factors (symbol names, or `_Div`s). `Extent(value, symbols, offset)` is
    `value * S1 * S2 ... + offset`; `Extent(7)` the constant 7. Arithmetic with `+ - *` (with
    ints too), `//` and `%` by a positive integer."""
    __slots__ = ("const", "terms", "key")

    def __init__(self, value=0, symbols=(), offset=0):
        value, offset = int(value), int(offset)
        if symbols:
            self._set(offset, {_monomial(symbols): value})
        else:
            self._set(value + offset, {})

    @classmethod
    def _make(cls, const, terms):
        e = cls.__new__(cls)
        e._set(const, terms)
        return e

    def _set(self, const, terms):
        items = sorted(((m, c) for m, c in terms.items() if c),
                       key=lambda mc: tuple(_factor_key(f) for f in mc[0]))
        self.const = int(const)
        self.terms = tuple(items)
        self.key = (self.const, tuple((tuple(_factor_key(f) for f in m), c) for m, c in items))

    # ---- what it is
    @property
    def is_constant(self):
        return not self.terms

    @property
    def constant(self):
        return self.const if not self.terms else None

    @property
    def symbol(self):
        """The symbol's name when this is exactly one symbol, else None."""
        if self.const == 0 and len(self.terms) == 1:
            m, c = self.terms[0]
            if c == 1 and len(m) == 1 and isinstance(m[0], str):
                return m[0]
        return None

    @property
    def is_name(self):
        """An int or a single symbol (no expression)."""
        return self.is_constant or self.symbol is not None

    def monomial(self):
        """(coefficient, symbols) when this is `c * S1 * S2 ...` over symbols only (no
        constant, no division), else None."""
        if self.const == 0 and len(self.terms) == 1 and \
                all(isinstance(f, str) for f in self.terms[0][0]):
            return self.terms[0][1], self.terms[0][0]
        return None

    @property
    def has_division(self):
        return any(not isinstance(f, str) for m, _ in self.terms for f in m)

    def denominators(self):
        """The divisors of the floor divisions and modulos in the expression (outermost)."""
        return sorted({f.den for m, _ in self.terms for f in m if not isinstance(f, str)})

    def symbols(self):
        """The symbols the expression reads, each once, sorted."""
        out, stack = set(), [self]
        while stack:
            e = stack.pop()
            for m, _ in e.terms:
                for f in m:
                    if isinstance(f, str):
                        out.add(f)
                    else:
                        stack.append(f.num)
        return sorted(out)

    def evaluate(self, values):
        """The value for `values` (symbol -> int)."""
        v = self.const
        for m, c in self.terms:
            p = c
            for f in m:
                p *= values[f] if isinstance(f, str) else f.evaluate(values)
            v += p
        return v

    # ---- arithmetic
    def __add__(self, other):
        o = _lift(other)
        if o is None:
            return NotImplemented
        terms = dict(self.terms)
        for m, c in o.terms:
            terms[m] = terms.get(m, 0) + c
        return Extent._make(self.const + o.const, terms)

    __radd__ = __add__

    def __neg__(self):
        return Extent._make(-self.const, {m: -c for m, c in self.terms})

    def __sub__(self, other):
        o = _lift(other)
        return NotImplemented if o is None else self + (-o)

    def __rsub__(self, other):
        o = _lift(other)
        return NotImplemented if o is None else o + (-self)

    def __mul__(self, other):
        o = _lift(other)
        if o is None:
            return NotImplemented
        terms = {}

        def add(m, c):
            terms[m] = terms.get(m, 0) + c
        for m, c in self.terms:
            if o.const:
                add(m, c * o.const)
            for m2, c2 in o.terms:
                add(_monomial(m + m2), c * c2)
        if self.const:
            for m2, c2 in o.terms:
                add(m2, self.const * c2)
        return Extent._make(self.const * o.const, terms)

    __rmul__ = __mul__

    def __floordiv__(self, divisor):
        return floordiv(self, divisor)

    def __mod__(self, divisor):
        return mod(self, divisor)

    # ---- comparison and printing
    def __eq__(self, other):
        return isinstance(other, Extent) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def text(self):
        """The extent expression: `B*S`, `4*S`, `S+1`, `(H+1)//2`, `N-(N+1)//2`."""
        if not self.terms:
            return str(self.const)
        out = []
        for m, c in self.terms:
            bare = c == 1 and len(m) == 1
            factors = [f if isinstance(f, str) else f.text() if bare else f"({f.text()})"
                       for f in m]
            body = "*".join(([str(abs(c))] if abs(c) != 1 else []) + factors)
            out.append(("-" if c < 0 else "+" if out else "") + body)
        if self.const:
            out.append(f"{self.const:+d}")
        return "".join(out)

    def json(self):
        """What a contract shape holds for this extent: an int, a symbol name, or an extent
        expression ("B*S", "4*B", "S+1", "(H+1)//2")."""
        if self.is_constant:
            return self.const
        return self.symbol or self.text()

    def __repr__(self):
        return self.text()


def _divisor(d):
    if isinstance(d, Extent):
        if not d.is_constant:
            raise ValueError(f"a division by the symbolic extent {d}")
        d = d.const
    d = int(d)
    if d <= 0:
        raise ValueError(f"a division by {d}")
    return d


def _split(a, c):
    """a == c * divisible + rest: the terms whose coefficients c divides (divided) and the
    rest, whose constant lies in [0, c) (fuserc's split_divisible)."""
    dconst, rconst = divmod(a.const, c)
    div = {m: k // c for m, k in a.terms if k % c == 0}
    rest = {m: k for m, k in a.terms if k % c != 0}
    return Extent._make(dconst, div), Extent._make(rconst, rest)


def _single_factor(a, op):
    """The _Div of operation `op` when `a` is exactly that one factor."""
    if a.const == 0 and len(a.terms) == 1:
        (m, c), = a.terms
        if c == 1 and len(m) == 1 and isinstance(m[0], _Div) and m[0].op == op:
            return m[0]
    return None


def floordiv(a, divisor):
    """floor(a / divisor) for a positive integer divisor, in canonical form."""
    a, c = _lift(a), _divisor(divisor)
    if c == 1:
        return a
    if a.is_constant:
        return Extent(a.const // c)
    div, rest = _split(a, c)
    if div.terms or div.const:
        return div + floordiv(rest, c)
    inner = _single_factor(a, "//")
    if inner is not None:
        return floordiv(inner.num, inner.den * c)
    return Extent._make(0, {(_Div("//", a, c),): 1})


def mod(a, divisor):
    """a mod divisor (floor modulo, in [0, divisor)) for a positive integer divisor."""
    a, c = _lift(a), _divisor(divisor)
    if c == 1:
        return Extent(0)
    if a.is_constant:
        return Extent(a.const % c)
    div, rest = _split(a, c)
    if div.terms or div.const:
        return mod(rest, c)
    inner = _single_factor(a, "%")
    if inner is not None and inner.den % c == 0:
        return mod(inner.num, c)
    return Extent._make(0, {(_Div("%", a, c),): 1})


def ceildiv(a, divisor):
    """ceil(a / divisor), written as a floor division (the contract has no ceiling)."""
    c = _divisor(divisor)
    return floordiv(_lift(a) + (c - 1), c)


def _nonnegative_terms(e):
    """Every term of e is >= 0 for symbols >= 0: positive coefficients, a constant >= 0, and
    divisions of such polynomials."""
    return e.const >= 0 and all(
        c > 0 and all(isinstance(f, str) or _nonnegative_terms(f.num) for f in m)
        for m, c in e.terms)


def provably_nonnegative(e):
    """True where fuserc's front end can show e >= 0 as this module sees it: its terms are
    all non-negative, or they are once each term m * (u // c) with c dividing m is replaced by
    the linear bound it is at least, (m/c) * u - (m/c) * (c-1) for m > 0 and (m/c) * u for m <
    0 (what fuserc's floordiv_linear_lower_bound does to prove that a slice ends inside its
    tensor). False: not shown (fuserc may still show it from the symbols' ranges)."""
    e = _lift(e)
    if _nonnegative_terms(e):
        return True
    bound = Extent(e.const)
    changed = False
    for m, c in e.terms:
        if len(m) == 1 and isinstance(m[0], _Div) and m[0].op == "//" and c % m[0].den == 0:
            q = c // m[0].den
            bound = bound + q * m[0].num - (q * (m[0].den - 1) if c > 0 else 0)
            changed = True
        else:
            bound = bound + Extent._make(0, {m: c})
    return changed and _nonnegative_terms(bound)


def symbol_over(e):
    """(S, a) where extent e is the symbol S (a = 1) or S // a; None for any other."""
    if e.symbol is not None:
        return e.symbol, 1
    if e.const == 0 and len(e.terms) == 1:
        m, c = e.terms[0]
        if c == 1 and len(m) == 1 and isinstance(m[0], _Div) and m[0].op == "//" and \
                m[0].num.symbol is not None:
            return m[0].num.symbol, m[0].den
    return None


def product(extents):
    out = Extent(1)
    for e in extents:
        out = out * e
    return out


def quotient(total, known):
    """total / known as an Extent when `known` is one term `c * M` (M a product of factors)
    that divides total's terms but for the coefficient: (total / M) // c, which is exact where
    total is a multiple of known (a view's -1). None otherwise."""
    total, known = _lift(total), _lift(known)
    if known.is_constant:
        return floordiv(total, known.const) if known.const > 0 else None
    if known.const != 0 or len(known.terms) != 1:
        return None
    (m, c), = known.terms
    if c <= 0 or total.const != 0:
        return None
    terms = {}
    const = 0
    for tm, tc in total.terms:
        rest = list(tm)
        for f in m:
            if f not in rest:
                return None
            rest.remove(f)
        if rest:
            terms[_monomial(rest)] = terms.get(_monomial(rest), 0) + tc
        else:
            const += tc
    return floordiv(Extent._make(const, terms), c)


def _value(monomial, values):
    v = 1
    for s in monomial:
        v *= values[s]
    return v


def resolve(observed, symbol_values, known=()):
    """The Extent whose values in the traces are `observed` (one int per trace), given
    `symbol_values` (per trace a dict symbol -> value): a constant; else the first of `known`
    ((Extent, values per trace) pairs, in order of preference) with those values; else a
    monomial `c * S1 * ...` (c an integer) or `S + d`. None when none fits."""
    if all(v == observed[0] for v in observed):
        return Extent(observed[0])
    observed = tuple(observed)
    for e, values in known:
        if values == observed:
            return e
    names = sorted(symbol_values[0])
    for k in range(1, MAX_FACTORS + 1):
        for mono in combinations_with_replacement(names, k):
            ms = [_value(mono, sv) for sv in symbol_values]
            if any(m == 0 for m in ms) or observed[0] % ms[0]:
                continue
            c = observed[0] // ms[0]
            if c != 0 and all(o == c * m for o, m in zip(observed, ms)):
                return Extent(c, mono)
    for name in names:
        d = observed[0] - symbol_values[0][name]
        if all(o - sv[name] == d for o, sv in zip(observed, symbol_values)):
            return Extent(1, (name,), d)
    # A sum of two symbols (and a constant): a KV cache of P positions and S new ones,
    # torch.ones(S, P + S).
    for k, a in enumerate(names):
        for b in names[k + 1:]:
            d = observed[0] - symbol_values[0][a] - symbol_values[0][b]
            if all(o - sv[a] - sv[b] == d for o, sv in zip(observed, symbol_values)):
                return Extent(1, (a,), d) + Extent(1, (b,))
    return None


def _units(symbol_values, known, max_units):
    """The symbols and the first `max_units` known extents that are neither constants nor
    symbols, each with its values in the traces: what resolve_product and resolve_multiple
    build sizes from."""
    units = [(Extent(1, (s,)), tuple(sv[s] for sv in symbol_values))
             for s in sorted(symbol_values[0])]
    return units + [(e, v) for e, v in known if not e.is_name][:max_units]


def resolve_product(observed, symbol_values, known, max_units=24):
    """Like resolve, for a value that is `c * U1 * U2 ...` (up to MAX_FACTORS units), `U + d`,
    or the one `(U + r) // m + c` (m up to MAX_DIVISOR) that fits, where the units are the symbols
    and the known extents that are neither constants nor symbols (the first `max_units` of
    them): the flattened extent of a result whose extents are floor divisions, or a size the
    function computes as `n // 2`. None when none fits."""
    observed = tuple(observed)
    units = _units(symbol_values, known, max_units)
    for k in range(1, MAX_FACTORS + 1):
        for combo in combinations_with_replacement(range(len(units)), k):
            ms = [1] * len(observed)
            for u in combo:
                ms = [m * v for m, v in zip(ms, units[u][1])]
            if any(m == 0 for m in ms) or observed[0] % ms[0]:
                continue
            c = observed[0] // ms[0]
            if c != 0 and all(o == c * m for o, m in zip(observed, ms)):
                return c * product(units[u][0] for u in combo)
    for e, values in units:
        d = observed[0] - values[0]
        if all(o - v == d for o, v in zip(observed, values)):
            return e + d
    # A unit divided by a small number plus a constant, (U + r) // m + c (r in [0, m): one
    # form per value), where exactly one such form fits: three traces leave several for many
    # sizes ((N+1)//4 and (N+2)//4 agree at 7, 11 and 47). N // 2 + 1 is a rotary or FFT
    # length.
    fits = set()
    for m in range(2, MAX_DIVISOR + 1):
        for e, values in units:
            for r in range(m):
                c = observed[0] - (values[0] + r) // m
                if all((v + r) // m + c == o for v, o in zip(values, observed)):
                    fits.add(floordiv(e + r, m) + c)
    return fits.pop() if len(fits) == 1 else None


def resolve_multiple(observed, symbol_values, known, max_units=24):
    """A unit U (a symbol, or a known extent that is neither a constant nor a symbol) and m
    (up to MAX_DIVISOR) with U a multiple of m in every trace and `observed` U / m: (U, m), the
    first such; None when none fits. For a size resolve_product leaves open because several
    (U + r) // m fit, as they all do where the function traces only at multiples (Swin's
    `x.view(B, H // ws, ws, ...)`): the caller takes U // m and records that U is a multiple
    of m, which the function needs anyway."""
    observed = tuple(observed)
    units = _units(symbol_values, known, max_units)
    for m in range(2, MAX_DIVISOR + 1):
        for e, values in units:
            if all(v % m == 0 and v // m == o for v, o in zip(values, observed)):
                return e, m
    return None

