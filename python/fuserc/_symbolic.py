"""Owns recovering symbolic sizes from concrete traces.

A function is traced three times: at the example inputs' sizes and at two assignments of small
distinct primes to the symbols of `dynamic`. Every integer that describes a size (a tensor's
extent, a view's target shape, a slice bound) is then a known value per trace; `resolve` finds
the one expression of the form `c * S1 * S2 ...` (a monomial) or `S + d` that gives those values
in every trace, or reports that none does (the value depends on the sizes in a way the contract
cannot state, or on data).
"""
from fractions import Fraction
from itertools import combinations_with_replacement

# Symbol values of the two extra traces (distinct from each other and small).
PRIMES_B = [11, 13, 17, 19, 23, 29, 31, 37, 41, 43]
PRIMES_C = [47, 53, 59, 61, 67, 71, 73, 79, 83, 89]
MAX_FACTORS = 3


def primes_below(n):
    """The primes below n, ascending."""
    sieve = [True] * max(n, 2)
    sieve[0] = sieve[1] = False
    for k in range(2, int(n ** 0.5) + 1):
        if sieve[k]:
            sieve[k * k::k] = [False] * len(sieve[k * k::k])
    return [k for k in range(n) if sieve[k]]


class Extent:
    """`coeff * prod(symbols) + offset`, with `symbols` a sorted tuple of names (repeats for
    powers); offset is non-zero only for a single symbol with coefficient 1."""
    __slots__ = ("coeff", "symbols", "offset")

    def __init__(self, coeff, symbols=(), offset=0):
        self.coeff = Fraction(coeff)
        self.symbols = tuple(sorted(symbols))
        self.offset = offset

    @property
    def is_constant(self):
        return not self.symbols

    @property
    def constant(self):
        return int(self.coeff) if not self.symbols and self.coeff.denominator == 1 else None

    @property
    def symbol(self):
        """The symbol's name when this is exactly one symbol, else None."""
        if len(self.symbols) == 1 and self.coeff == 1 and self.offset == 0:
            return self.symbols[0]
        return None

    def json(self):
        """What a contract shape holds for this extent: an int, a symbol name, or an extent
        expression ("B*S", "4*B", "S+1"); None for a fraction (which no graph can name)."""
        if self.is_constant:
            return self.constant
        if self.coeff.denominator != 1 or self.coeff <= 0:
            return None
        if self.symbol is not None:
            return self.symbol
        text = "*".join(self.symbols)
        if self.coeff != 1:
            text = f"{int(self.coeff)}*{text}"
        if self.offset:
            text += f"{self.offset:+d}"
        return text

    @property
    def is_name(self):
        """An int or a single symbol (no expression)."""
        return self.is_constant or self.symbol is not None

    def __eq__(self, other):
        return (isinstance(other, Extent) and self.coeff == other.coeff and
                self.symbols == other.symbols and self.offset == other.offset)

    def __hash__(self):
        return hash((self.coeff, self.symbols, self.offset))

    def __repr__(self):
        if not self.symbols:
            return str(self.coeff)
        s = "*".join(self.symbols)
        if self.coeff != 1:
            s = f"{self.coeff}*{s}"
        if self.offset:
            s += f"{self.offset:+d}"
        return s


def _value(monomial, values):
    v = 1
    for s in monomial:
        v *= values[s]
    return v


def resolve(observed, symbol_values):
    """The Extent whose values in the traces are `observed` (one int per trace), given
    `symbol_values` (per trace a dict symbol -> value); None when no expression fits."""
    if all(v == observed[0] for v in observed):
        return Extent(observed[0])
    names = sorted(symbol_values[0])
    for k in range(1, MAX_FACTORS + 1):
        for mono in combinations_with_replacement(names, k):
            ms = [_value(mono, sv) for sv in symbol_values]
            if any(m == 0 for m in ms):
                continue
            c = Fraction(observed[0], ms[0])
            if c != 0 and all(Fraction(o, m) == c for o, m in zip(observed, ms)):
                return Extent(c, mono)
    for name in names:
        d = observed[0] - symbol_values[0][name]
        if all(o - sv[name] == d for o, sv in zip(observed, symbol_values)):
            return Extent(1, (name,), d)
    return None
