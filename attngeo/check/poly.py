"""Polynomials as the checker reads them: its own bounded parser and monomial counting.

The grammar is what python-flint and msolve print — a sum of terms, a term a
product of a rational coefficient and powers ``x^e`` of named variables — and
nothing else (no parentheses, no nested powers, no evaluation). Every bound is
checked before the arithmetic it guards: exponents and total degree at most
``MAX_EXPONENT``, at most ``MAX_TERMS`` terms, ``MAX_DIGITS`` digits per number.
"""

from __future__ import annotations

import math
import re

from flint import fmpq, fmpq_mpoly_ctx

from ..exceptions import CertificateFormatError
from .limits import MAX_DIGITS, MAX_EXPONENT, MAX_MONOMIAL_TESTS, MAX_MONOMIALS, MAX_POLY_CHARS, MAX_SEARCH_NODES, MAX_TERMS, MAX_VARIABLES
from .values import reject

_NUMBER = re.compile(r"[0-9]{1,%d}(/[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))
_POWER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\^([0-9]{1,4}))?")


def ring(names) -> fmpq_mpoly_ctx:
    names = tuple(names)
    if len(names) > MAX_VARIABLES:
        raise CertificateFormatError(f"a ring of {len(names)} variables is above the checker's limit of {MAX_VARIABLES}")
    return fmpq_mpoly_ctx.get(names, "degrevlex")


def terms(source: str, names: tuple, where: str) -> dict:
    """``{exponents: coefficient}`` of the polynomial written in ``source`` (zero terms dropped)."""
    if not isinstance(source, str):
        reject(f"{where} must be a polynomial written as a string")
    if len(source) > MAX_POLY_CHARS:
        raise CertificateFormatError(f"{where} has {len(source)} characters, above the checker's limit of {MAX_POLY_CHARS}")
    s = re.sub(r"\s+", "", source).replace("**", "^")
    if not s:
        reject(f"{where} is empty")
    index = {n: i for i, n in enumerate(names)}
    parts = re.split(r"([+-])", s)
    if parts[0] == "":
        parts = parts[1:]
    else:
        parts = ["+"] + parts
    if len(parts) % 2 or len(parts) // 2 > MAX_TERMS:
        reject(f"{where} is not a sum of at most {MAX_TERMS} terms")
    out: dict = {}
    for k in range(0, len(parts), 2):
        sign, chunk = parts[k], parts[k + 1]
        if sign not in "+-" or not chunk:
            reject(f"{where} is not a polynomial (a sign without a term)")
        coeff, exps = fmpq(-1 if sign == "-" else 1), [0] * len(names)
        for factor in chunk.split("*"):
            if _NUMBER.fullmatch(factor):
                num, _, den = factor.partition("/")
                if den and int(den) == 0:
                    reject(f"{where} divides by zero")
                coeff *= fmpq(int(num), int(den) if den else 1)
                continue
            m = _POWER.fullmatch(factor)
            if m is None or m.group(1) not in index:
                reject(f"{where}: {factor[:40]!r} is not a number or a power of one of the ring's variables")
            i = index[m.group(1)]
            exps[i] += int(m.group(2)) if m.group(2) else 1
            if exps[i] > MAX_EXPONENT:
                raise CertificateFormatError(f"{where} has an exponent above the checker's limit of {MAX_EXPONENT}")
        if sum(exps) > MAX_EXPONENT:
            raise CertificateFormatError(f"{where} has a term of degree above the checker's limit of {MAX_EXPONENT}")
        key = tuple(exps)
        out[key] = out.get(key, fmpq(0)) + coeff
    return {e: c for e, c in out.items() if c != 0}


def parse(source: str, ctx: fmpq_mpoly_ctx, where: str, nonzero: bool = True):
    """The polynomial written in ``source`` in the ring ``ctx``; zero is refused unless allowed."""
    t = terms(source, tuple(ctx.names()), where)
    if nonzero and not t:
        reject(f"{where} is the zero polynomial")
    return ctx.from_dict(t)


def parse_all(sources, ctx: fmpq_mpoly_ctx, where: str) -> list:
    if not isinstance(sources, list) or not sources:
        reject(f"{where} must be a nonempty list of polynomials written as strings")
    return [parse(s, ctx, f"{where}[{k}]") for k, s in enumerate(sources)]


def monic(p):
    return p / p.leading_coefficient()


def divides(m: tuple, n: tuple) -> bool:
    """Monomial ``x^m`` divides ``x^n``."""
    return all(a <= b for a, b in zip(m, n))


def count_monomials(n: int, k: int, where: str) -> int:
    """Monomials of degree ``k`` in ``n`` variables, refused above ``MAX_MONOMIALS`` before any is listed."""
    count = math.comb(n + k - 1, k)
    if count > MAX_MONOMIALS:
        raise CertificateFormatError(f"{where}: {count} monomials of degree {k} in {n} variables, above the "
                                     f"checker's limit of {MAX_MONOMIALS}")
    return count


def staircase(leads: list[tuple], n: int, where: str) -> int | None:
    """Standard monomials of a monomial ideal (None when infinitely many); the box is bounded first."""
    pure = [min((m[i] for m in leads if sum(m) == m[i] and m[i] > 0), default=None) for i in range(n)]
    if any(e is None for e in pure):
        return None
    if math.prod(pure) * max(1, len(leads)) > MAX_MONOMIAL_TESTS:
        raise CertificateFormatError(f"{where}: a staircase box of {math.prod(pure)} monomials against {len(leads)} "
                                     f"leading monomials is above the checker's limit of {MAX_MONOMIAL_TESTS} tests")
    count, stack = 0, [()]
    while stack:
        prefix = stack.pop()
        if len(prefix) == n:
            count += not any(divides(lm, prefix) for lm in leads)
        else:
            stack.extend(prefix + (e,) for e in range(pure[len(prefix)]))
    return count


def cover_number(supports: list[frozenset], where: str) -> int:
    """Size of a smallest set of variables meeting every support (branch and bound, with a node budget).

    For leading monomials ``m_i`` this is the codimension of the monomial ideal:
    ``V(x^{m_i})`` is the union of coordinate subspaces ``x_S = 0`` for hitting sets ``S``.
    """
    best = [min(len({i for s in supports for i in s}), len(supports))]
    nodes = [0]

    def search(chosen: frozenset, depth: int) -> None:
        nodes[0] += 1
        if nodes[0] > MAX_SEARCH_NODES:
            raise CertificateFormatError(f"{where}: the dimension search needs more than {MAX_SEARCH_NODES} steps, "
                                         "above the checker's limit")
        if depth >= best[0]:
            return
        unmet = next((s for s in supports if not s & chosen), None)
        if unmet is None:
            best[0] = depth
            return
        for i in sorted(unmet):
            search(chosen | {i}, depth + 1)

    search(frozenset(), 0)
    return best[0]
