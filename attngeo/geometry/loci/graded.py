"""Implicit equations degree by degree, without elimination (docs/math.md §7.4).

``I(M) ⊂ Q[c]`` (coordinates ``c_{k,p,mn}`` of docs/math.md §1.1) is graded by
degree and by the torus weight ``(e_k, e_p, e_m + e_n)`` of ``c_{k,p,mn}``, and
stable under the permutations ``S_{d'} x S_d x S_d`` of the indices ``k``,
``p`` and ``m, n``. For every degree ``k <= K`` and every *dominant* weight
``w`` (each of the three parts non-increasing; every other block is the image
of one of these under a permutation) this module proves, exactly:

* an **upper bound** ``dim I(M)_w <= N_w - r_w``: ``r_w`` is the rank modulo a
  prime of the ``N_w`` monomials of the block evaluated at integer points of
  ``M`` (a rank mod p of an integer matrix is at most its rank over Q, which is
  at most the codimension of ``I(M)_w``);
* a **lower bound** from explicit equations: the products ``c^α h`` of the
  lower-degree generators (in ``I(M)`` because ``h`` is) and the new generators
  ``H_w``, each an integer polynomial **proved to vanish on M** by substituting
  the parametrization (a polynomial identity in the weights); a rank mod p of
  their coefficients is a lower bound for the dimension of their span;
* equal bounds: ``I(M)_w`` is spanned by them, so the generators of degree
  ``<= K`` generate ``I(M)`` in every degree ``<= K``;
* **minimality**: the exact rank over Q of the products (``(m I)_w``, since the
  lower degrees are complete) is ``dim I(M)_w - |H_w|``, so no generator is
  redundant, and ``|H_w|`` is ``dim (I / m I)_w``, an invariant of ``M``.

Nothing is said about degrees above ``K``: that ``I(M)`` has no minimal
generator of degree ``> K`` would need a degree bound this module does not prove.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from dataclasses import dataclass, field

from flint import fmpq, fmpq_mat, fmpz, fmpz_mat, nmod_mat

from ... import latex, progress
from ...check.limits import MAX_GRADED_WORK, MAX_VARIABLES
from ...exact.engine import ring
from ...exact.ideal import Ideal
from ...exceptions import InvalidInputError, NotCertifiedError
from ...model.architecture import Architecture
from ...model.layerfunction import single_layer
from ..certificate import Result, certificate_json
from .implicit import _coordinates, _multidegree, coordinate_names, parametrization

#: Largest block (monomials of one degree and one dominant weight) attempted: its evaluation
#: matrix is about N x N words mod p, and the Python lists that build it about 40 N^2 bytes.
MAX_BLOCK = 6_000
#: Largest degree attempted (the checker's limit too).
MAX_DEGREE = 8
#: Monomials the dominant blocks of the top degree may hold (a bound read off before anything is enumerated).
MAX_DOMINANT = 200_000


# -- the symmetries: torus weights and permutations --------------------------------------------


def _parts(weight: tuple, d: int, dd: int) -> tuple[tuple, tuple, tuple]:
    return weight[:dd], weight[dd:dd + d], weight[dd + d:]


def dominant(weight: tuple, d: int, dd: int) -> tuple:
    """The representative of a weight's orbit under ``S_{d'} x S_d x S_d``: each part sorted, largest first.

    Examples
    --------
    ``d = 2``, ``d' = 1``: the weight of ``c_{1,2,22}`` is ``(1 | 0, 1 | 0, 2)``.

    >>> from attngeo.geometry.loci.graded import dominant
    >>> dominant((1, 0, 1, 0, 2), 2, 1)
    (1, 1, 0, 2, 0)
    """
    a, b, c = _parts(weight, d, dd)
    return tuple(sorted(a, reverse=True)) + tuple(sorted(b, reverse=True)) + tuple(sorted(c, reverse=True))


def orbit_size(weight: tuple, d: int, dd: int) -> int:
    """How many weights the permutations make of ``weight`` (a product of multinomial coefficients).

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import orbit_size
    >>> orbit_size((1, 1, 0, 2, 0), 2, 1), orbit_size((1, 1, 1, 1, 1), 2, 1)
    (4, 1)
    """
    size = 1
    for part in _parts(weight, d, dd):
        size *= math.factorial(len(part))
        for v in set(part):
            size //= math.factorial(part.count(v))
    return size


def orbit(weight: tuple, d: int, dd: int) -> list[tuple]:
    """Every weight the permutations make of ``weight``, sorted.

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import orbit
    >>> orbit((1, 1, 0, 2, 0), 2, 1)
    [(1, 0, 1, 0, 2), (1, 0, 1, 2, 0), (1, 1, 0, 0, 2), (1, 1, 0, 2, 0)]
    """
    a, b, c = (set(itertools.permutations(x)) for x in _parts(weight, d, dd))
    return sorted(x + y + z for x in a for y in b for z in c)


def carrier(weight: tuple, d: int, dd: int) -> tuple:
    """Permutations ``(π_k, π_p, π_y)`` that map ``dominant(weight)`` to ``weight``.

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import carrier
    >>> carrier((1, 0, 1, 0, 2), 2, 1)      # swap p and swap y
    ((0,), (1, 0), (1, 0))
    """
    return tuple(tuple(sorted(range(len(x)), key=lambda i: (-x[i], i))) for x in _parts(weight, d, dd))


def _below(cap: tuple, total: int) -> list[tuple]:
    """Vectors ``0 <= x <= cap`` (entrywise) with entries summing to ``total``."""
    out: list[tuple] = []

    def rec(i: int, left: int, acc: list) -> None:
        if i == len(cap):
            if left == 0:
                out.append(tuple(acc))
            return
        for v in range(min(cap[i], left), -1, -1):
            acc.append(v)
            rec(i + 1, left - v, acc)
            acc.pop()

    rec(0, total, [])
    return out


class Blocks:
    """The monomials of ``Q[c]`` by degree and torus weight, and the permutations acting on them.

    A monomial is the sorted tuple of its coordinate indices (``c_0^2 c_3`` is
    ``(0, 0, 3)``); a block lists its monomials in degrevlex order, largest
    first, so a reduced row echelon form leads with the largest monomials.

    Parameters
    ----------
    d, dd : int
        The widths ``d`` and ``d'``.

    Examples
    --------
    ``d = 2``, ``d' = 1``: six coordinates; the quartic of ``M`` lies in the
    block of weight ``(4 | 2, 2 | 4, 4)``, with 8 monomials.

    >>> from attngeo.geometry.loci.graded import Blocks
    >>> B = Blocks(2, 1)
    >>> B.n, len(B.monomials((4, 2, 2, 4, 4)))
    (6, 8)
    >>> [len(B.dominant_weights(k)) for k in (1, 2, 3, 4)]
    [2, 6, 8, 15]
    """

    def __init__(self, d: int, dd: int):
        self.d, self.dd = d, dd
        self.coords = [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]
        self.index = {c: i for i, c in enumerate(self.coords)}
        self.n = len(self.coords)
        self.weights = _multidegree(d, dd)
        self._monomials: dict[tuple, list] = {}
        self._memo: dict[tuple, list] = {}
        self._sizes: dict[tuple, int] = {}
        self._acts: dict[tuple, list[int]] = {}

    def monomials(self, weight: tuple) -> list[tuple]:
        """The monomials of one weight, in degrevlex order (largest first)."""
        if weight not in self._monomials:
            found = self._completions(0, weight) if min(weight, default=0) >= 0 else []
            # degrevlex, largest first: compare exponents from the last variable, fewer is larger
            self._monomials[weight] = sorted(found, key=lambda m: [-m.count(i) for i in range(self.n - 1, -1, -1)],
                                             reverse=True)
        return self._monomials[weight]

    def _completions(self, start: int, left: tuple) -> list[tuple]:
        """Sorted index tuples ``>= start`` whose weights add up to ``left`` (memoized: blocks share their tails)."""
        key = (start, left)
        if key in self._memo:
            return self._memo[key]
        if not any(left):
            out = [()]
        else:
            out = []
            for i in range(start, self.n):
                wi = self.weights[i]
                if all(x >= y for x, y in zip(left, wi)):
                    rest = tuple(x - y for x, y in zip(left, wi))
                    out += [(i,) + tail for tail in self._completions(i, rest)]
        self._memo[key] = out
        return out

    def size(self, weight: tuple, start: int = 0) -> int:
        """How many monomials have ``weight`` (counted, not listed: sizes are known before any block is built)."""
        key = (start, weight)
        if key not in self._sizes:
            if not any(weight):
                count = 1
            else:
                count = 0
                for i in range(start, self.n):
                    wi = self.weights[i]
                    if all(x >= y for x, y in zip(weight, wi)):
                        count += self.size(tuple(x - y for x, y in zip(weight, wi)), i)
            self._sizes[key] = count
        return self._sizes[key]

    def dominant_weights(self, k: int) -> list[tuple]:
        """The dominant weights of degree ``k`` (their blocks are never empty, :func:`dominant_weights`)."""
        return dominant_weights(k, self.d, self.dd)

    def act(self, perm: tuple, i: int) -> int:
        """The index of the coordinate that the permutations ``perm`` make of coordinate ``i``."""
        table = self._acts.get(perm)
        if table is None:
            pk, pp, py = perm
            table = []
            for k, p, m, n in self.coords:
                a, b = sorted((py[m], py[n]))
                table.append(self.index[(pk[k], pp[p], a, b)])
            self._acts[perm] = table
        return table[i]

    def transport(self, poly: dict, weight: tuple) -> dict:
        """A polynomial of weight ``dominant(weight)`` carried to ``weight`` (monomial tuples to coefficients)."""
        perm = carrier(weight, self.d, self.dd)
        return {tuple(sorted(self.act(perm, i) for i in mono)): c for mono, c in poly.items()}

    def lower(self, weight: tuple, degree: int) -> list[tuple]:
        """Weights ``u <= weight`` (entrywise) of ``degree``: where a factor of a product can sit."""
        a, b, c = _parts(weight, self.d, self.dd)
        return [x + y + z for x in _below(a, degree) for y in _below(b, degree) for z in _below(c, 2 * degree)]


def _sorted_parts(total: int, length: int) -> list[tuple]:
    """Non-increasing vectors of ``length`` non-negative integers summing to ``total``."""
    out: list[tuple] = []

    def rec(left: int, cap: int, acc: list) -> None:
        if len(acc) == length:
            if left == 0:
                out.append(tuple(acc))
            return
        for v in range(min(left, cap), -1, -1):
            acc.append(v)
            rec(left - v, v, acc)
            acc.pop()

    rec(total, total, [])
    return out


# -- counting blocks without listing a coordinate ---------------------------------------------------------
#
# A monomial of degree k is a multiset of k coordinates. Burnside's lemma over S_k acting on sequences of k
# coordinates counts the multisets of one weight w = (alpha | beta | gamma): a permutation of cycle type lam
# fixes the sequences constant on its cycles, and a cycle of length j contributes j times the weight of one
# coordinate, whose generating function is p_j(x) p_j(y) h_2(z^j), h_2(z^j) = (p_j(z)^2 + p_2j(z)) / 2. So
#
#     N_w = sum over lam |- k of  (1 / z_lam) [x^alpha] prod p_lam_i(x) [y^beta] prod p_lam_i(y)
#                                  [z^gamma] prod (p_lam_i(z)^2 + p_2lam_i(z)) / 2,
#
# each coefficient a count of ways to place the parts of lam, whatever the widths: no coordinate is listed.


def dominant_weights(k: int, d: int, dd: int) -> list[tuple]:
    """The dominant weights of degree ``k``: every part sorted, of sums ``k``, ``k`` and ``2k``.

    None has an empty block: ``k`` indices ``k``, ``k`` indices ``p`` and ``2k`` indices ``m, n`` paired in any
    way make a monomial of that weight.

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import dominant_weights
    >>> dominant_weights(1, 2, 1)
    [(1, 1, 0, 2, 0), (1, 1, 0, 1, 1)]
    """
    return [a + b + c for a in _sorted_parts(k, dd) for b in _sorted_parts(k, d) for c in _sorted_parts(2 * k, d)]


def _placements(parts: tuple, target: tuple, paired: bool) -> int:
    """Ways to place each (labelled) part ``j`` on the positions so that each position's sum is ``target``: on one
    position, or (``paired``) as ``j`` on each of an ordered pair of positions, or ``2j`` on one."""
    memo: dict = {}

    def rec(i: int, left: tuple) -> int:
        if i == len(parts):
            return int(not any(left))
        key = (i, left)
        if key not in memo:
            j, total = parts[i], 0
            for m in range(len(left)):
                if not paired:
                    if left[m] >= j:
                        total += rec(i + 1, left[:m] + (left[m] - j,) + left[m + 1:])
                    continue
                if left[m] >= 2 * j:  # 2j on m: once as p_2j, once as the pair (m, m) of p_j^2
                    total += 2 * rec(i + 1, left[:m] + (left[m] - 2 * j,) + left[m + 1:])
                for n in range(len(left)):
                    if n != m and left[m] >= j and left[n] >= j:
                        rest = list(left)
                        rest[m] -= j
                        rest[n] -= j
                        total += rec(i + 1, tuple(rest))
            memo[key] = total
        return memo[key]

    return rec(0, tuple(x for x in target if x))  # an empty position takes no part


def block_size(weight: tuple, d: int, dd: int) -> int:
    """How many monomials have the torus weight ``weight``, by Burnside's lemma (counted, nothing listed).

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import Blocks, block_size
    >>> block_size((4, 2, 2, 4, 4), 2, 1) == len(Blocks(2, 1).monomials((4, 2, 2, 4, 4))) == 8
    True
    >>> block_size((1,) * 8 + (0,) * 56 + (1,) * 8 + (0,) * 56 + (2,) * 8 + (0,) * 56, 64, 64)  # no coordinate listed
    21974720947200
    """
    alpha, beta, gamma = _parts(weight, d, dd)
    k = sum(alpha)
    total = 0
    for lam in (tuple(x for x in v if x) for v in _sorted_parts(k, k)):
        a = _placements(lam, alpha, False)
        b = a and _placements(lam, beta, False)
        c = b and _placements(lam, gamma, True)
        if c:
            z = math.prod(j ** lam.count(j) * math.factorial(lam.count(j)) for j in set(lam))
            total += math.factorial(k) // z * a * b * c * 2 ** (k - len(lam))
    count, rest = divmod(total, math.factorial(k) * 2**k)
    assert rest == 0, "Burnside's count must be an integer"
    return count


# -- arithmetic --------------------------------------------------------------------------------


def _primes(rng: random.Random, count: int) -> list[int]:
    """``count`` random primes just below ``2^62`` (FLINT's word-size modular matrices)."""
    out: list[int] = []
    while len(out) < count:
        p = rng.randrange(1 << 61, 1 << 62) | 1
        if fmpz(p).is_prime() and p not in out:
            out.append(p)
    return out


def _reconstruct(a: int, m: int) -> fmpq | None:
    """The rational ``r/s`` with ``r = a s mod m``, ``|r|, s <= sqrt(m/2)`` (extended Euclid), or None."""
    bound = math.isqrt(m // 2)
    r0, r1, s0, s1 = m, a % m, 0, 1
    while r1 > bound:
        q = r0 // r1
        r0, r1, s0, s1 = r1, r0 - q * r1, s1, s0 - q * s1
    if s1 == 0 or abs(s1) > bound or math.gcd(r1, abs(s1)) != 1:
        return None
    return fmpq(r1, s1) if s1 > 0 else fmpq(-r1, -s1)


def _integer_row(row: list[fmpq]) -> list[int]:
    """A rational vector times the lcm of its denominators, divided by the gcd of the result (same span)."""
    den = 1
    for x in row:
        den = math.lcm(den, int(x.q))
    ints = [int((x * den).p) for x in row]
    g = 0
    for v in ints:
        g = math.gcd(g, v)
    return [v // g for v in ints] if g > 1 else ints


def _points(arch: Architecture, count: int, rng: random.Random) -> list[list[int]]:
    """Coordinates ``c = φ(W)`` at ``count`` random integer weights (exact integers)."""
    d, dd = arch.widths
    a = arch.ranks[0]
    out = []
    for _ in range(count):
        if a >= d:
            A = [[rng.randint(-10**6, 10**6) for _ in range(d)] for _ in range(d)]
        else:
            Q = [[rng.randint(-10**6, 10**6) for _ in range(d)] for _ in range(a)]
            K = [[rng.randint(-10**6, 10**6) for _ in range(d)] for _ in range(a)]
            A = [[sum(K[i][n] * Q[i][p] for i in range(a)) for p in range(d)] for n in range(d)]
        V = [[rng.randint(-10**6, 10**6) for _ in range(d)] for _ in range(dd)]
        out.append(_coordinates(A, V, d, dd))
    return out


def _evaluation(points: list[list[int]], monomials: list[tuple], p: int) -> nmod_mat:
    """The monomials (columns) at the points (rows), modulo ``p``."""
    entries = []
    for c in points:
        v = [x % p for x in c]
        for mono in monomials:
            e = 1
            for i in mono:
                e = e * v[i] % p
            entries.append(e)
    return nmod_mat(len(points), len(monomials), entries, p)


@dataclass
class _Block:
    monomials: int
    dimension: int  # dim I(M)_w, certified
    generators: list  # integer polynomials {monomial tuple: int}, the minimal generators of this block


class _Table:
    """Generators by dominant weight, carried to any weight, and the products ``c^α h`` that fill a block."""

    def __init__(self, blocks: Blocks, found: dict):
        self.blocks, self.found = blocks, found
        self._carried: dict[tuple, list] = {}

    def at(self, weight: tuple) -> list:
        """The generators of an arbitrary weight: those of its dominant weight, carried over."""
        if weight not in self._carried:
            b = self.blocks
            self._carried[weight] = [b.transport(h, weight) for h in self.found.get(dominant(weight, b.d, b.dd), [])]
        return self._carried[weight]

    def products(self, weight: tuple, k: int, column: dict) -> list[list[int]]:
        """Coefficient rows of ``c^α h`` (``h`` a generator of degree ``< k``) in the block ``weight``."""
        dd = self.blocks.dd
        degrees = sorted({sum(w[:dd]) for w, hs in self.found.items() if hs and sum(w[:dd]) < k})
        rows = []
        for j in degrees:
            for u in self.blocks.lower(weight, j):
                hs = self.at(u)
                if not hs:
                    continue
                for alpha in self.blocks.monomials(tuple(x - y for x, y in zip(weight, u))):
                    for h in hs:
                        row = [0] * len(column)
                        for mono, c in h.items():
                            row[column[tuple(sorted(mono + alpha))]] = c
                        rows.append(row)
        return rows


class _Prover:
    """One run: blocks of every degree, the generators found so far, the parametrization for the proofs."""

    def __init__(self, arch: Architecture, rng: random.Random):
        self.arch, self.rng = arch, rng
        d, dd = arch.widths
        self.blocks = Blocks(d, dd)
        self.names = coordinate_names(d, dd)
        self.cctx = ring(tuple(self.names))
        self.params, self.phi = parametrization(arch)
        self.pctx = ring(self.params)
        self.found: dict[tuple, list] = {}  # dominant weight -> generators (integer polynomials)
        self.table = _Table(self.blocks, self.found)

    def vanishes(self, h: dict) -> bool:
        """``h(φ(W)) = 0`` as a polynomial in the weights: the proof that ``h`` is an equation of ``M``."""
        exps = {}
        for mono, c in h.items():
            e = [0] * self.blocks.n
            for i in mono:
                e[i] += 1
            exps[tuple(e)] = c
        return self.cctx.from_dict(exps).compose(*self.phi, ctx=self.pctx) == 0

    def block(self, weight: tuple, k: int, attempts: int) -> _Block:
        """Certify one dominant block: dimension, products, new generators (retrying unlucky points and primes)."""
        monos = self.blocks.monomials(weight)
        N = len(monos)
        column = {m: j for j, m in enumerate(monos)}
        J = self.table.products(weight, k, column)
        exact = fmpz_mat(J).rank() if J else 0
        for _ in range(attempts):
            p, = _primes(self.rng, 1)
            E = _evaluation(_points(self.arch, N + 4, self.rng), monos, p)
            dim = N - E.rank()
            if dim == 0:
                return _Block(N, 0, [])
            new = self._new_generators(E, J, dim, exact, monos, p)
            if new is not None:
                return _Block(N, dim, new)
        raise NotCertifiedError(f"the block of weight {weight} (degree {k}, {N} monomials) was not certified in "
                                f"{attempts} attempts: unlucky points or primes; try another --seed")

    def _new_generators(self, E: nmod_mat, J: list, dim: int, exact: int, monos: list, p: int):
        """Kernel rows of ``E`` outside the products, lifted to Q and proved; None when this prime or point fails."""
        N = len(monos)
        X, nullity = E.nullspace()
        basis = nmod_mat([[X[i, j] for i in range(N)] for j in range(nullity)], p)  # rows span ker E
        basis = basis.rref()[0]
        rows = [[int(x) % p for x in r] for r in J] + [[int(basis[i, j]) for j in range(N)] for i in range(nullity)]
        # the pivot columns of the transpose name a greedy basis of the rows: products first
        T = nmod_mat(N, len(rows), [rows[i][j] for j in range(N) for i in range(len(rows))], p)
        R, rank = T.rref()
        pivots, j = [], 0
        for i in range(rank):
            while R[i, j] == 0:
                j += 1
            pivots.append(j)
        chosen = [rows[i] for i in pivots if i >= len(J)]
        if rank != dim or rank - len(chosen) != exact:  # a bad prime for the products, or too few points
            return None
        new = []
        for row in chosen:
            lifted = [_reconstruct(x, p) for x in row]
            if any(x is None for x in lifted):
                return None
            h = {monos[j]: c for j, c in enumerate(_integer_row(lifted)) if c}
            if not self.vanishes(h):  # the points were special (kernel too large) or the lift was wrong
                return None
            new.append(h)
        check = [list(r) for r in J] + [[h.get(m, 0) for m in monos] for h in new]
        if nmod_mat(check, p).rank() != dim:
            return None
        return new


# -- the result ------------------------------------------------------------------------------


@dataclass(repr=False)
class GradedEquations(Result):
    """``I(M)`` in degrees ``<= K``: certified dimensions and minimal generators, degree by degree.

    ``degrees`` lists, for ``k = 1..K``: the monomials, ``dim I(M)_k``, the
    number of minimal generators of degree ``k`` and the dominant blocks.
    ``representatives`` maps each dominant weight with generators to them
    (integer polynomials); :meth:`generators` carries them to every weight of
    their orbits.

    Examples
    --------
    ``d = 3``, ``d' = 1``, ``a = 2``: no equation below degree 3, then 30
    cubics and 90 quartics, each orbit proved by a representative.

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.graded import graded_equations
    >>> eq = graded_equations(Architecture((3, 1), (2,), tokens=2), 4)
    >>> [(r["degree"], r["dimension"], r["minimal_generators"]) for r in eq.degrees]
    [(1, 0, 0), (2, 0, 0), (3, 30, 30), (4, 585, 90)]
    >>> len(eq.generators()), sum(len(v) for v in eq.representatives.values())
    (120, 17)
    """

    arch: Architecture
    max_degree: int
    degrees: list[dict]
    representatives: dict  # dominant weight -> list of {monomial tuple: int}
    seconds: float
    dimensions: dict = field(default_factory=dict)  # dominant weight -> dim I(M)_w (every dominant block)
    _jacobian: list = field(default_factory=list, repr=False, compare=False)  # derivatives, built on first use

    kind = "implicit-graded"

    @property
    def coordinates(self) -> list[str]:
        return coordinate_names(*self.arch.widths)

    def _poly(self, terms: dict):
        ctx = ring(tuple(self.coordinates))
        n = len(self.coordinates)
        exps = {}
        for mono, c in terms.items():
            e = [0] * n
            for i in mono:
                e[i] += 1
            exps[tuple(e)] = c
        return ctx.from_dict(exps)

    def generators(self, degree: int | None = None) -> list:
        """Every minimal generator (of ``degree``, or all): each representative carried over its orbit.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> eq = graded_equations(Architecture((2, 1), (1,), tokens=2), 2)
        >>> [str(g) for g in eq.generators()]  # doctest: +NORMALIZE_WHITESPACE
        ['c_1_1_22*c_1_2_11 - c_1_1_11*c_1_2_22', 'c_1_1_22*c_1_2_12 - c_1_1_12*c_1_2_22',
         'c_1_1_12*c_1_2_11 - c_1_1_11*c_1_2_12']
        """
        d, dd = self.arch.widths
        blocks = Blocks(d, dd)
        out = []
        for w, hs in sorted(self.representatives.items(), key=lambda kv: (sum(kv[0][:dd]), kv[0])):
            if degree is None or sum(w[:dd]) == degree:
                out += [self._poly(blocks.transport(h, u)) for u in orbit(w, d, dd) for h in hs]
        return [g if g.leading_coefficient() > 0 else -g for g in out]

    def spans(self, poly) -> bool:
        """Whether a polynomial of degree ``<= K`` lies in the ideal of the generators (exact, block by block).

        In degrees ``<= K`` that ideal is ``I(M)``; so this is also membership in ``I(M)``.

        Raises
        ------
        InvalidInputError
            A term of degree above ``K``.

        Examples
        --------
        ``d = 2``, ``d' = 1``, ``a = 1``: ``c_{1,1,11}`` times a quadric is in the ideal, a coordinate is not.

        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> eq = graded_equations(Architecture((2, 1), (1,), tokens=2), 3)
        >>> c = eq.generators()[0].context().gens()
        >>> eq.spans(c[0] * eq.generators()[1]), eq.spans(c[0])
        (True, False)
        """
        d, dd = self.arch.widths
        blocks = Blocks(d, dd)
        table = _Table(blocks, self.representatives)
        parts: dict[tuple, dict] = {}
        for e, c in poly.to_dict().items():
            mono = tuple(i for i, x in enumerate(e) for _ in range(x))
            w = tuple(sum(col) for col in zip(*([blocks.weights[i] for i in mono] or [(0,) * (dd + 2 * d)])))
            parts.setdefault(w, {})[mono] = fmpq(c)
        for w, terms in parts.items():
            k = sum(w[:dd])
            if k > self.max_degree:
                raise InvalidInputError(f"a term of degree {k} is beyond the certified degrees <= {self.max_degree}")
            if k == 0:
                return False
            monos = blocks.monomials(w)
            column = {m: j for j, m in enumerate(monos)}
            rows = table.products(w, k, column) + [[h.get(m, 0) for m in monos] for h in table.at(w)]
            target = [terms.get(m, 0) for m in monos]
            if not rows or fmpq_mat(rows + [target]).rank() > fmpq_mat(rows).rank():
                return False
        return True

    def ideal(self) -> Ideal:
        """The ideal of the generators of degree ``<= K`` (equal to ``I(M)`` in those degrees), for export."""
        return Ideal(self.generators(), tuple(self.coordinates))

    @property
    def minimal_generators_by_degree(self) -> dict[str, int]:
        return {str(r["degree"]): r["minimal_generators"] for r in self.degrees if r["minimal_generators"]}

    def summary(self) -> dict:
        """The record ``--json`` prints: dimensions and minimal generators by degree, what is proved.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> s = graded_equations(Architecture((2, 1), (2,), tokens=2), 4).summary()
        >>> s["minimal_generators_by_degree"], s["generated_through"]
        ({'4': 1}, 4)
        """
        return {"architecture": self.arch.to_dict(), "max_degree": self.max_degree,
                "coordinates": self.coordinates, "degrees": self.degrees,
                "minimal_generators_by_degree": self.minimal_generators_by_degree,
                "generated_through": self.max_degree,
                "representatives": sum(len(hs) for hs in self.representatives.values()),
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        """The certificate: the counts by degree and one representative per orbit of generators.

        Examples
        --------
        >>> from attngeo import Architecture, check_certificate
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> cert = graded_equations(Architecture((2, 1), (2,), tokens=2), 4).to_json()
        >>> cert["generators"][0]["weight"], len(cert["generators"][0]["equations"])
        ([4, 2, 2, 4, 4], 1)
        >>> check_certificate(cert).claim  # doctest: +ELLIPSIS
        'I(M) of widths 2,1, rank 2 in degrees <= 4: dim I_k = 0, 0, 0, 1; minimal generators: 1 of degree 4 ...'
        """
        gens = [{"weight": list(w), "equations": [str(self._poly(h)) for h in hs]} for w, hs in self._by_weight()]
        body = {k: v for k, v in self.summary().items() if k not in ("representatives",)}
        return certificate_json(self.kind, {**body, "generators": gens})

    def latex_parts(self) -> list[str]:
        """One LaTeX string (math) per representative, one per orbit, with the orbit's size.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> from attngeo.latex import balanced
        >>> parts = graded_equations(Architecture((2, 1), (1,), tokens=2), 2).latex_parts()
        >>> len(parts), all("orbit of" in p and balanced(p) for p in parts)   # two orbits of weights
        (2, True)
        """
        d, dd = self.arch.widths
        return [latex.polynomial(self._poly(h)) + rf" \quad (\text{{orbit of }} {orbit_size(w, d, dd)})"
                for w, h in self.representative_list()]

    def _by_weight(self) -> list[tuple[tuple, list]]:
        """The representatives by weight, by total degree then weight: the order every output lists them in."""
        dd = self.arch.widths[1]
        return sorted(self.representatives.items(), key=lambda kv: (sum(kv[0][:dd]), kv[0]))

    def representative_list(self) -> list[tuple[tuple, dict]]:
        """``(weight, representative)`` pairs, one per orbit, in the order of :meth:`latex_parts`."""
        return [(w, h) for w, hs in self._by_weight() for h in hs]

    def latex(self) -> str:
        """The representatives as one LaTeX string (math: a ``gathered`` block), or the words for none.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> from attngeo.latex import balanced
        >>> tex = graded_equations(Architecture((2, 1), (1,), tokens=2), 2).latex()
        >>> tex.count("orbit"), tex.count("gathered"), balanced(tex)
        (2, 2, True)
        """
        parts = self.latex_parts()
        if not parts:
            return r"\text{no equation of degree} \le " + str(self.max_degree)
        return r"\begin{gathered}" + r" \\ ".join(parts) + r"\end{gathered}"

    def jacobian_rank(self, point) -> int:
        """Exact rank at a point (coordinate values, in coordinate order) of the Jacobian of every generator.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.graded import graded_equations
        >>> eq = graded_equations(Architecture((2, 1), (1,), tokens=2), 2)
        >>> eq.jacobian_rank([1, 2, 3, 2, 4, 6]), eq.jacobian_rank([0] * 6)
        (2, 0)
        """
        values = [fmpq(x) for x in point]
        if not self._jacobian:
            self._jacobian.extend([g.derivative(i) for i in range(len(self.coordinates))] for g in self.generators())
        if not self._jacobian:
            return 0
        return fmpq_mat([[dg(*values) for dg in row] for row in self._jacobian]).rank()

    def __str__(self) -> str:
        dims = ", ".join(str(r["dimension"]) for r in self.degrees)
        mins = ", ".join(f"{n} of degree {k}" for k, n in self.minimal_generators_by_degree.items()) or "none"
        reps = sum(len(hs) for hs in self.representatives.values())
        return (f"I(M) of {self.arch} in degrees <= {self.max_degree}: dim I_k = {dims}; minimal generators: "
                f"{mins} ({reps} orbit representative{'s' * (reps != 1)}, each proved to vanish on M); "
                f"they generate I(M) in degrees <= {self.max_degree}")


def coordinate_count(d: int, dd: int) -> int:
    """``d' d^2 (d + 1) / 2``, the coordinates ``c_{k,p,mn}`` of widths ``d, d'`` (counted before any is listed).

    Examples
    --------
    >>> from attngeo.geometry.loci.graded import coordinate_count
    >>> coordinate_count(2, 1), coordinate_count(64, 64)
    (6, 8519680)
    """
    return dd * d * d * (d + 1) // 2


def block_sizes(arch: Architecture, max_degree: int) -> list[int]:
    """The number of monomials of each dominant block, degree by degree (what the computation will face).

    Counted in closed form (:func:`block_size`), after two refusals that need no counting at all: more
    coordinates than the checker reads (widths 64,64 have 8.5 million), and a degree whose blocks average more
    monomials than :data:`MAX_BLOCK` (the largest is at least the average).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.graded import block_sizes
    >>> max(block_sizes(Architecture((4, 1), (2,), tokens=2), 4))
    282
    >>> block_sizes(Architecture((64, 64), (4,), tokens=2), 2)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: widths 64,64 have 8,519,680 coordinates c_k_p_mn, above the 400 ...
    """
    single_layer(arch, "graded_equations")
    if isinstance(max_degree, bool) or not isinstance(max_degree, int) or not 1 <= max_degree <= MAX_DEGREE:
        raise InvalidInputError(f"max_degree = {max_degree!r} must be an integer from 1 to {MAX_DEGREE} (the "
                                f"checker's limit); give --max-degree K")
    d, dd = arch.widths
    n = coordinate_count(d, dd)
    if n > MAX_VARIABLES:
        raise InvalidInputError(f"widths {d},{dd} have {n:,} coordinates c_k_p_mn, above the {MAX_VARIABLES} variables "
                                "the checker reads (docs/trust.md): choose smaller widths")
    total = math.comb(n + max_degree - 1, max_degree)
    weights = math.comb(max_degree + dd - 1, dd - 1) * math.comb(max_degree + d - 1, d - 1) \
        * math.comb(2 * max_degree + d - 1, d - 1)
    # the orbits cover every monomial and have at most |G| weights: the dominant blocks hold at least this many
    least = total // (math.factorial(dd) * math.factorial(d) ** 2)
    if least > MAX_DOMINANT or total > MAX_BLOCK * weights:
        raise InvalidInputError(f"degree {max_degree} at widths {d},{dd} has blocks of {-(-total // weights):,} "
                                f"monomials on average (the largest is larger), above the limit of {MAX_BLOCK}, or at "
                                f"least {least:,} monomials in its dominant blocks, above {MAX_DOMINANT:,}; lower "
                                "--max-degree")
    sizes: list[int] = []
    for k in range(1, max_degree + 1):  # degree by degree: a hopeless degree is refused before a larger is counted
        sizes += [block_size(w, d, dd) for w in dominant_weights(k, d, dd)]
        if max(sizes) > MAX_BLOCK or sum(x * x for x in sizes) > MAX_GRADED_WORK:
            raise InvalidInputError(f"degree {k} at widths {d},{dd} has a block of {max(sizes):,} monomials (sum of "
                                    f"squares {sum(x * x for x in sizes):,}), above the limits of {MAX_BLOCK:,} and "
                                    f"{MAX_GRADED_WORK:,} (the checker's); lower --max-degree")
    return sizes


def memory_estimate(arch: Architecture, max_degree: int) -> int:
    """Bytes :func:`graded_equations` needs at least: an interpreter floor plus its largest block's matrices.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.graded import memory_estimate
    >>> memory_estimate(Architecture((4, 1), (2,), tokens=2), 4) < 128 * 2**20
    True
    """
    largest = max(block_sizes(arch, max_degree), default=0)
    return 64 * 2**20 + 80 * largest * largest


def graded_equations(arch: Architecture, max_degree: int, seed: int | None = 0,
                     attempts: int = 4) -> GradedEquations:
    """``I(M)`` of a single lightning layer in degrees ``<= max_degree``, certified without elimination.

    Parameters
    ----------
    arch : Architecture
        A single lightning layer, ``t >= 2``.
    max_degree : int
        The largest degree ``K`` (at least 1).
    seed : int or None
        Seeds the evaluation points and the primes.
    attempts : int
        Fresh points and prime per block before giving up.

    Returns
    -------
    GradedEquations

    Raises
    ------
    InvalidInputError
        A deep or normalized architecture, ``t = 1``, ``max_degree`` outside ``1..MAX_DEGREE``, or
        a block above :data:`MAX_BLOCK` monomials.
    NotCertifiedError
        A block whose bounds did not meet in ``attempts`` tries.

    Examples
    --------
    ``d = 2``, ``d' = 1``, ``a = 1``: three quadrics, the 2 x 2 minors of the
    coefficient vectors of ``F_00`` and ``F_01``, generate ``I(M)`` in degrees ``<= 3``.

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.graded import graded_equations
    >>> eq = graded_equations(Architecture((2, 1), (1,), tokens=2), 3)
    >>> [(r["degree"], r["monomials"], r["dimension"]) for r in eq.degrees]
    [(1, 6, 0), (2, 21, 3), (3, 56, 16)]
    >>> eq.minimal_generators_by_degree
    {'2': 3}
    """
    sizes = block_sizes(arch, max_degree)
    if max(sizes, default=0) > MAX_BLOCK:
        raise InvalidInputError(f"degree {max_degree} at widths {','.join(map(str, arch.widths))} has a block of "
                                f"{max(sizes)} monomials, above the limit of {MAX_BLOCK}; lower --max-degree")
    start = time.perf_counter()
    prover = _Prover(arch, random.Random(seed))
    d, dd = arch.widths
    degrees, dimensions = [], {}
    for k in range(1, max_degree + 1):
        weights = prover.blocks.dominant_weights(k)
        dim = mins = total = 0
        for i, w in enumerate(weights):
            progress.phase(f"degree {k}", f"block {i + 1} of {len(weights)}")
            b = prover.block(w, k, attempts)
            dimensions[w] = b.dimension
            size = orbit_size(w, d, dd)
            dim += size * b.dimension
            mins += size * len(b.generators)
            total += size * b.monomials
            if b.generators:
                prover.found[w] = b.generators
        if total != math.comb(prover.blocks.n + k - 1, k):  # every monomial in exactly one block of an orbit
            raise AssertionError(f"degree {k}: the dominant blocks cover {total} monomials")
        degrees.append({"degree": k, "monomials": total, "dimension": dim, "minimal_generators": mins,
                        "blocks": len(weights)})
    return GradedEquations(arch, max_degree, degrees, dict(prover.found), time.perf_counter() - start,
                           dimensions=dimensions)
