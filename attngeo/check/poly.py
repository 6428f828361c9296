"""Polynomials as the checker reads them: its own bounded parser and monomial counting.

The grammar is what python-flint and msolve print — a sum of terms, a term a
product of a rational coefficient and powers ``x^e`` of named variables — and
nothing else (no parentheses, no nested powers, no evaluation). Every bound is
checked before the arithmetic it guards: exponents and total degree at most
``MAX_EXPONENT``, at most ``MAX_TERMS`` terms, ``MAX_DIGITS`` digits per number.
"""

from __future__ import annotations

import math
import operator
import re

from flint import fmpq, fmpq_mpoly_ctx

from ..exceptions import CertificateFormatError
from .limits import MAX_DIGITS, MAX_EXPONENT, MAX_MONOMIAL_TESTS, MAX_MONOMIALS, MAX_POLY_CHARS, MAX_SEARCH_NODES, MAX_TERMS, MAX_VARIABLES
from .values import reject

_NUMBER = re.compile(r"[0-9]{1,%d}(/[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))
_POWER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:\^([0-9]{1,4}))?")


def ring(names) -> fmpq_mpoly_ctx:
    """The polynomial ring over Q in ``names`` (degrevlex), refused above ``MAX_VARIABLES`` variables.

    Raises
    ------
    CertificateFormatError
        More than ``MAX_VARIABLES`` names (unusable input, exit 2).

    Examples
    --------
    >>> from attngeo.check.poly import ring
    >>> x, y = ring(("x", "y")).gens()
    >>> (x + y) ** 2
    x^2 + 2*x*y + y^2
    >>> ring([f"x{i}" for i in range(401)])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: a ring of 401 variables is above the checker's limit of 400
    """
    names = tuple(names)
    if len(names) > MAX_VARIABLES:
        raise CertificateFormatError(f"a ring of {len(names)} variables is above the checker's limit of {MAX_VARIABLES}")
    return fmpq_mpoly_ctx.get(names, "degrevlex")


def terms(source: str, names: tuple, where: str) -> dict:
    """``{exponents: coefficient}`` of the polynomial written in ``source`` (zero terms dropped).

    Parameters
    ----------
    source : str
        A sum of terms, each a product of rationals and powers ``x^e`` (or ``x**e``) of ``names``.
    names : tuple of str
        The variables, in the order of the exponent tuples.
    where : str
        The field, for messages.

    Raises
    ------
    CertificateRejected
        Not a string, empty, or outside the grammar (parentheses, unknown names, ``1/0``).
    CertificateFormatError
        Longer than ``MAX_POLY_CHARS``, or an exponent or degree above ``MAX_EXPONENT``.

    Examples
    --------
    Like terms are collected; nothing is evaluated:

    >>> from attngeo.check.poly import terms
    >>> terms("3*x^2 - 1/2*y + x*x", ("x", "y"), "g")
    {(2, 0): 4, (0, 1): -1/2}
    >>> terms("(x + y)^2", ("x", "y"), "g")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: g: '(x' is not a number or a power of one of the ring's variables
    >>> terms("x^65", ("x",), "g")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: g has an exponent above the checker's limit of 64
    """
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
    """The polynomial written in ``source`` in the ring ``ctx``; zero is refused unless allowed.

    Examples
    --------
    >>> from attngeo.check.poly import parse, ring
    >>> R = ring(("x", "y"))
    >>> x, y = R.gens()
    >>> parse("x^2 - y^2", R, "g") == (x - y) * (x + y)
    True
    >>> parse("x*y - y*x", R, "g")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: g is the zero polynomial
    """
    t = terms(source, tuple(ctx.names()), where)
    if nonzero and not t:
        reject(f"{where} is the zero polynomial")
    return ctx.from_dict(t)


def parse_all(sources, ctx: fmpq_mpoly_ctx, where: str) -> list:
    """A nonempty list of nonzero polynomials, each read by :func:`parse`.

    Examples
    --------
    >>> from attngeo.check.poly import parse_all, ring
    >>> R = ring(("x", "y"))
    >>> parse_all(["x - y", "y^2 - 1"], R, "basis")
    [x - y, y^2 - 1]
    >>> parse_all([], R, "basis")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: basis must be a nonempty list of polynomials written as strings
    """
    if not isinstance(sources, list) or not sources:
        reject(f"{where} must be a nonempty list of polynomials written as strings")
    return [parse(s, ctx, f"{where}[{k}]") for k, s in enumerate(sources)]


def monic(p):
    """``p`` divided by its leading coefficient (degrevlex): one representative per ideal generator.

    Examples
    --------
    >>> from attngeo.check.poly import monic, ring
    >>> x, y = ring(("x", "y")).gens()
    >>> monic(2 * x + 4 * y) == monic(-x - 2 * y) == x + 2 * y
    True
    """
    return p / p.leading_coefficient()


def divides(m: tuple, n: tuple) -> bool:
    """Monomial ``x^m`` divides ``x^n`` (exponent tuples).

    Examples
    --------
    >>> from attngeo.check.poly import divides
    >>> divides((1, 0), (2, 1)), divides((0, 2), (2, 1))
    (True, False)
    """
    return all(map(operator.le, m, n))


def count_monomials(n: int, k: int, where: str) -> int:
    """Monomials of degree ``k`` in ``n`` variables, refused above ``MAX_MONOMIALS`` before any is listed.

    Examples
    --------
    ``x^2, xy, xz, y^2, yz, z^2``:

    >>> from attngeo.check.poly import count_monomials
    >>> count_monomials(3, 2, "hilbert[1]")
    6
    >>> count_monomials(400, 4, "hilbert[3]")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: hilbert[3]: 1082740100 monomials of degree 4 in 400 variables, above the checker's limit of 2000000
    """
    count = math.comb(n + k - 1, k)
    if count > MAX_MONOMIALS:
        raise CertificateFormatError(f"{where}: {count} monomials of degree {k} in {n} variables, above the "
                                     f"checker's limit of {MAX_MONOMIALS}")
    return count


def staircase(leads: list[tuple], n: int, where: str) -> int | None:
    """Standard monomials of a monomial ideal (None when infinitely many); the box is bounded first.

    For the leading monomials of a Gröbner basis this is the number of
    solutions, with multiplicity: finite exactly when every variable has a pure
    power among them.

    Parameters
    ----------
    leads : list of tuple
        Exponent tuples of the leading monomials.
    n : int
        Number of variables.
    where : str
        The field, for messages.

    Raises
    ------
    CertificateFormatError
        The box of candidate monomials exceeds ``MAX_MONOMIALS``.

    Examples
    --------
    ``<x^2, y^2>`` leaves ``1, x, y, xy``; ``<x^2, xy, y^3>`` leaves
    ``1, x, y, y^2``; ``<x^2>`` leaves every power of ``y``:

    >>> from attngeo.check.poly import staircase
    >>> staircase([(2, 0), (0, 2)], 2, "basis"), staircase([(2, 0), (1, 1), (0, 3)], 2, "basis")
    (4, 4)
    >>> staircase([(2, 0)], 2, "basis") is None
    True
    """
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

    Raises
    ------
    CertificateFormatError
        The search needs more than ``MAX_SEARCH_NODES`` steps.

    Examples
    --------
    ``V(x0 x1, x1 x2)`` contains the plane ``x1 = 0`` (codimension 1);
    ``V(x0, x1)`` is a line in 3-space (codimension 2):

    >>> from attngeo.check.poly import cover_number
    >>> cover_number([frozenset({0, 1}), frozenset({1, 2})], "leads")
    1
    >>> cover_number([frozenset({0}), frozenset({1})], "leads")
    2
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


def hilbert_numerator(leads: list[tuple], n: int) -> list[int]:
    """``N(t)`` (coefficients, constant first) with ``HS(S/I) = N(t) / (1 - t)^n`` for a monomial ideal ``I``.

    Split on one variable ``x`` at a time — ``S/I`` against ``S/(I + <x>)`` and
    ``(S/(I : x))(-1)`` — down to pairwise coprime generators, a product of ``(1 - t^deg)``.

    Raises
    ------
    CertificateFormatError
        More than ``MAX_SEARCH_NODES`` splits.

    Examples
    --------
    ``<x^2, x y>``: ``1 - 2 t^2 + t^3``.

    >>> from attngeo.check.poly import hilbert_numerator
    >>> hilbert_numerator([(2, 0), (1, 1)], 2)
    [1, 0, -2, 1]
    """
    nodes = [0]
    seen: dict = {}

    def reduce(gens):
        kept = []
        for g in sorted(set(gens), key=sum):
            if not any(divides(h, g) for h in kept):
                kept.append(g)
        return tuple(sorted(kept))

    def series(gens):  # coefficients of N(t), constant first
        if gens in seen:
            return seen[gens]
        nodes[0] += 1
        if nodes[0] > MAX_SEARCH_NODES:
            raise CertificateFormatError("the Hilbert series needs more than the checker's search budget")
        used = [i for i in range(n) if any(g[i] for g in gens)]
        if not gens:
            out = [1]
        elif all(sum(1 for g in gens if g[i]) <= 1 for i in used):  # pairwise coprime: a product of (1 - t^deg)
            out = [1]
            for g in gens:
                factor = [1] + [0] * (sum(g) - 1) + [-1]
                out = [sum(out[k - j] * factor[j] for j in range(len(factor)) if 0 <= k - j < len(out))
                       for k in range(len(out) + len(factor) - 1)]
        else:
            x = max(used, key=lambda i: sum(1 for g in gens if g[i]))
            unit = tuple(int(i == x) for i in range(n))
            a = series(reduce([g for g in gens if not g[x]] + [unit]))
            b = series(reduce([tuple(e - 1 if i == x and e else e for i, e in enumerate(g)) for g in gens]))
            out = [0] * max(len(a), len(b) + 1)
            for k, v in enumerate(a):
                out[k] += v
            for k, v in enumerate(b):
                out[k + 1] += v
        seen[gens] = out
        return out

    return series(reduce([tuple(g) for g in leads]))


def standard_monomials(numerator: list[int], n: int, k: int) -> int:
    """Monomials of degree ``k`` outside a monomial ideal, read off its Hilbert numerator.

    ``HS = N(t) / (1 - t)^n``, and ``1 / (1 - t)^n`` has ``C(n - 1 + j, n - 1)`` in degree ``j``.

    Examples
    --------
    ``<x^2, x y>`` in two variables: only ``y^k`` survives in degree ``k >= 2``.

    >>> from attngeo.check.poly import hilbert_numerator, standard_monomials
    >>> N = hilbert_numerator([(2, 0), (1, 1)], 2)
    >>> [standard_monomials(N, 2, k) for k in range(5)]
    [1, 2, 1, 1, 1]
    """
    return sum(c * math.comb(n - 1 + k - i, n - 1) for i, c in enumerate(numerator) if i <= k)


def projective_degree(leads: list[tuple], n: int, codim: int, numerator: list[int] | None = None) -> int | None:
    """Degree of ``V(I)`` for a monomial ideal of codimension ``codim`` (None beyond the search budget).

    The Hilbert series' numerator (:func:`hilbert_numerator`, or ``numerator`` when
    already computed), then ``N(t) / (1 - t)^codim`` at ``t = 1``.

    >>> projective_degree([(1, 1, 0), (1, 0, 1), (0, 1, 1)], 3, 2)   # three coordinate points: degree 3
    3
    """
    N = list(numerator) if numerator is not None else hilbert_numerator(leads, n)
    for _ in range(codim):  # exact division by (1 - t): running sums
        total, quotient = 0, []
        for v in N[:-1]:
            total += v
            quotient.append(total)
        if total + N[-1] != 0:
            reject("the leading monomials do not have the codimension claimed")
        N = quotient or [0]
    return sum(N)
