"""Independent re-verification of degree-by-degree implicit equations (kind ``implicit-graded``).

The certificate lists, for ``k <= K``, one representative per orbit of minimal
generators under the permutations ``S_{d'} x S_d x S_d`` of the indices of
``c_{k,p,mn}`` (docs/math.md §7.4), and the counts it claims. The checker:

1. rebuilds the parametrization its own way (``F_kp(y) = (V y)_k (A^T y)_p``
   expanded in ``y``) and proves it commutes with the permutations: for every
   adjacent transposition of ``k``, ``p`` or ``y``, permuting the coordinates
   equals permuting the weights (so ``M``, hence ``I(M)``, is invariant);
2. proves every representative vanishes on ``M`` (composition with the
   parametrization is the zero polynomial) and is homogeneous of its weight;
3. lists the dominant weights of each degree itself (and that their orbits
   cover every monomial exactly once: ``Σ |orbit| N_w = C(n + k - 1, k)``);
4. per dominant block ``w``: the rank ``r`` modulo its own prime of the block's
   monomials at its own integer points of ``M`` (``dim I(M)_w <= N_w - r``); the
   products ``c^α h`` of lower-degree generators carried to every weight of
   their orbits, with the block's representatives, of rank ``N_w - r`` modulo
   the prime (so they span ``I(M)_w``); the exact rank over Q of the products
   is ``N_w - r - |H_w|`` (no representative is redundant);
5. sums over orbits and compares every claimed count.

Work is bounded before it starts: the degree, the largest block and the sum of
squared block sizes (docs/trust.md, Limits).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random

import numpy as np
from flint import fmpq, fmpz, fmpz_mat, nmod_mat

from ...exceptions import CertificateFormatError
from ..arch import single_layer
from ..limits import MAX_GRADED_BLOCK, MAX_GRADED_DEGREE, MAX_GRADED_DIGITS, MAX_GRADED_STATES, MAX_GRADED_WORK, MAX_VARIABLES
from ..linalg import nmod
from ..poly import parse, ring
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER
from ..values import field, integer, reject, seq
from ..layer import coordinates as _coordinates, parametrization as _parametrization

_DEGREE = {"degree": CHECKED, "monomials": CHECKED, "dimension": CHECKED, "minimal_generators": CHECKED,
           "blocks": CHECKED}
SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "max_degree": CHECKED, "coordinates": CHECKED, "degrees": [_DEGREE],
    "minimal_generators_by_degree": CHECKED, "generated_through": CHECKED,
    "generators": [{"weight": CHECKED, "equations": CHECKED}], "seconds": NUMBER,
}


class _Space:
    """Coordinates, their weights and the monomials of each weight, as the checker enumerates them."""

    def __init__(self, d: int, dd: int):
        self.d, self.dd = d, dd
        self.labels = _coordinates(d, dd)  # (k, p, m, n), m <= n
        self.n = len(self.labels)
        self.position = {c: i for i, c in enumerate(self.labels)}
        self.weight = []
        for k, p, m, n in self.labels:
            w = [0] * (dd + 2 * d)
            w[k] += 1
            w[dd + p] += 1
            w[dd + d + m] += 1
            w[dd + d + n] += 1
            self.weight.append(tuple(w))
        self._count: dict = {}
        self._lists: dict = {}

    def weight_of(self, e: tuple) -> tuple:
        """The weight of the monomial with exponents ``e``."""
        acc = [0] * (self.dd + 2 * self.d)
        for i, x in enumerate(e):
            if x:
                for j, y in enumerate(self.weight[i]):
                    acc[j] += x * y
        return tuple(acc)

    def degree(self, w: tuple) -> int:
        return sum(w[:self.dd])

    def count(self, i: int, left: tuple) -> int:
        """Exponent vectors on coordinates ``i, i+1, ...`` of total weight ``left``, counted (no listing)."""
        key = (i, left)
        if key not in self._count:
            if not any(left):
                total = 1
            elif i == self.n:
                total = 0
            else:
                if len(self._count) >= MAX_GRADED_STATES:  # counting itself must not outrun the limits it serves
                    raise CertificateFormatError(f"counting the monomials of weight {list(left)} needs more than "
                                                 f"{MAX_GRADED_STATES} states, above the checker's limit")
                total, rest, wi = 0, left, self.weight[i]
                while min(rest) >= 0:
                    total += self.count(i + 1, rest)
                    rest = tuple(x - y for x, y in zip(rest, wi))
            self._count[key] = total
        return self._count[key]

    def exponents(self, w: tuple) -> list[tuple]:
        """Exponent vectors of weight ``w``, sorted (the checker's own order; ranks do not depend on it)."""
        if w not in self._lists:
            out: list[tuple] = []

            def rec(i: int, left: tuple, acc: list) -> None:
                if not any(left):
                    out.append(tuple(acc) + (0,) * (self.n - i))
                    return
                if i == self.n or self.count(i, left) == 0:
                    return
                e, rest, wi = 0, left, self.weight[i]
                while min(rest) >= 0:
                    rec(i + 1, rest, acc + [e])
                    e += 1
                    rest = tuple(x - y for x, y in zip(rest, wi))

            if min(w, default=0) >= 0:
                rec(0, w, [])
            self._lists[w] = sorted(out)
        return self._lists[w]

    def parts(self, w: tuple) -> tuple:
        d, dd = self.d, self.dd
        return w[:dd], w[dd:dd + d], w[dd + d:]

    def is_dominant(self, w: tuple) -> bool:
        return all(list(x) == sorted(x, reverse=True) for x in self.parts(w))

    def dominant(self, w: tuple) -> tuple:
        return tuple(v for x in self.parts(w) for v in sorted(x, reverse=True))

    def orbit_of(self, w: tuple) -> list[tuple]:
        """Every weight the index permutations make of ``w``."""
        a, b, c = (sorted(set(itertools.permutations(x))) for x in self.parts(w))
        return [x + y + z for x in a for y in b for z in c]

    def orbit(self, w: tuple) -> int:
        size = 1
        for x in self.parts(w):
            size *= math.factorial(len(x))
            for v in set(x):
                size //= math.factorial(x.count(v))
        return size

    def dominants(self, k: int) -> list[tuple]:
        """Dominant weights of degree ``k`` with at least one monomial."""
        def non_increasing(total: int, length: int, cap: int) -> list[tuple]:
            if length == 0:
                return [()] if total == 0 else []
            return [(v,) + rest for v in range(min(total, cap), -1, -1)
                    for rest in non_increasing(total - v, length - 1, v)]

        d, dd = self.d, self.dd
        return [a + b + c for a in non_increasing(k, dd, k) for b in non_increasing(k, d, k)
                for c in non_increasing(2 * k, d, 2 * k) if self.count(0, a + b + c)]

    def to(self, w: tuple) -> list[int]:
        """The coordinate permutation carrying ``dominant(w)`` to ``w``: position ``i`` goes to ``to[i]``."""
        perms = []
        for x in self.parts(w):
            # the j-th largest entry of x sits at index order[j]: index j of the dominant part goes to order[j]
            perms.append(sorted(range(len(x)), key=lambda i: (-x[i], i)))
        pk, pp, py = perms
        out = []
        for k, p, m, n in self.labels:
            a, b = sorted((py[m], py[n]))
            out.append(self.position[(pk[k], pp[p], a, b)])
        return out


def _invariant(space: _Space, names: list[str], pctx, phi: list, a: int) -> None:
    """Permuting coordinates by an adjacent transposition equals permuting the weights (exact, per polynomial)."""
    d, dd = space.d, space.dd
    gens = dict(zip(names, pctx.gens()))
    moves = [("k", i) for i in range(dd - 1)] + [("p", i) for i in range(d - 1)] + [("y", i) for i in range(d - 1)]
    for which, i in moves:
        swap = lambda x: i + 1 if x == i else i if x == i + 1 else x  # noqa: E731
        sub = []
        for name in names:
            base, r, c = name.split("_")
            r, c = int(r) - 1, int(c) - 1
            if base == "V":
                r, c = (swap(r), c) if which == "k" else (r, swap(c)) if which == "y" else (r, c)
            elif base == "A":  # A_{n p}: rows are y, columns p
                r, c = (swap(r), c) if which == "y" else (r, swap(c)) if which == "p" else (r, c)
            elif base == "K":  # A = K^T Q: K's columns are y
                c = swap(c) if which == "y" else c
            elif base == "Q":  # Q's columns are p
                c = swap(c) if which == "p" else c
            sub.append(gens[f"{base}_{r + 1}_{c + 1}"])
        for j, (k, p, m, n) in enumerate(space.labels):
            k2, p2 = (swap(k), p) if which == "k" else (k, swap(p)) if which == "p" else (k, p)
            m2, n2 = sorted((swap(m), swap(n))) if which == "y" else (m, n)
            if phi[j].compose(*sub, ctx=pctx) != phi[space.position[(k2, p2, m2, n2)]]:
                reject("the parametrization is not invariant under the index permutations (checker fault)")


def _integer_rows(polys: list, order: dict) -> list[list[int]]:
    """Coefficient rows over ``order`` (exponent -> column), denominators cleared row by row."""
    rows = []
    for terms in polys:
        den = 1
        for c in terms.values():
            den = math.lcm(den, int(c.q))
        row = [0] * len(order)
        for e, c in terms.items():
            row[order[e]] = int((c * den).p)
        rows.append(row)
    return rows


def _prime(rng: random.Random) -> int:
    """A random prime in ``[2^30, 2^31)``."""
    while True:
        p = rng.randrange(1 << 30, 1 << 31) | 1
        if fmpz(p).is_prime():
            return p


def check(cert: dict) -> str:
    """The claim of a degree-by-degree certificate: ``dim I(M)_k`` and minimal generators for ``k <= K``.

    Called by the kernel after the schema check; use :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        A representative that does not vanish on ``M`` or is not homogeneous of
        its weight, a block whose equations do not reach its evaluation bound, a
        redundant representative, or a count that is not the recomputed one.
    CertificateFormatError
        A degree, block or amount of work above the checker's limits.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.loci.graded import check
    >>> from attngeo.geometry.loci.graded import graded_equations
    >>> cert = graded_equations(Architecture((2, 1), (1,), tokens=2), 3).to_json()
    >>> check(cert)
    'I(M) of widths 2,1, rank 1 in degrees <= 3: dim I_k = 0, 3, 16; minimal generators: 3 of degree 2 (2 orbit representatives, each proved to vanish on M); they generate I(M) in degrees <= 3'

    A representative that is an equation but also a consequence of the others is refused:

    >>> forged = dict(cert, generators=[dict(g) for g in cert["generators"]])
    >>> forged["generators"][0]["equations"] = 2 * forged["generators"][0]["equations"]
    >>> check(forged)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: block (2, 1, 1, 2, 2) of degree 2: 2 representatives where 1 are minimal (the products have exact rank 0 in a block of dimension 1)
    """
    arch, d, dd, a = single_layer(cert)
    K = integer(field(cert, "max_degree"), "max_degree", 1)
    if K > MAX_GRADED_DEGREE:
        raise CertificateFormatError(f"max_degree {K} is above the checker's limit of {MAX_GRADED_DEGREE}")
    if dd * d * d * (d + 1) // 2 > MAX_VARIABLES:  # before any coordinate is listed: widths 64,64 would list 8.5e6
        raise CertificateFormatError(f"{dd * d * d * (d + 1) // 2} coordinates are above the checker's limit of "
                                     f"{MAX_VARIABLES}")
    space = _Space(d, dd)
    names = [f"c_{k + 1}_{p + 1}_{m + 1}{n + 1}" for k, p, m, n in space.labels]
    if field(cert, "coordinates") != names:
        reject("coordinates must be the coefficients c_k_p_mn of the matrix of quadratic forms, in order")
    if field(cert, "generated_through") != K:
        reject(f"generated_through must be max_degree = {K}: the claim is about degrees <= {K}")
    # the work, bounded before any of it: every block is counted, not listed
    # degree by degree, so that a hopeless degree is refused before a larger one is counted
    weights, sizes = {}, []
    for k in range(1, K + 1):
        weights[k] = space.dominants(k)
        sizes += [space.count(0, w) for w in weights[k]]
        if max(sizes) > MAX_GRADED_BLOCK or sum(s * s for s in sizes) > MAX_GRADED_WORK:
            raise CertificateFormatError(f"degrees <= {k} at widths {d},{dd} need blocks of up to {max(sizes)} "
                                         f"monomials (sum of squares {sum(s * s for s in sizes)}), above the checker's "
                                         f"limits of {MAX_GRADED_BLOCK} and {MAX_GRADED_WORK}")
    cctx = ring(names)
    reps: dict[tuple, list] = {}  # dominant weight -> term dicts {exponent tuple: fmpq}
    listed = seq(field(cert, "generators"), "generators")
    for j, entry in enumerate(listed):
        w = seq(field(entry, "weight", f"generators[{j}]."), f"generators[{j}].weight", dd + 2 * d)
        w = tuple(integer(x, f"generators[{j}].weight", 0, 2 * K) for x in w)
        if not space.is_dominant(w) or not 1 <= space.degree(w) <= K or w in reps or not space.count(0, w):
            reject(f"generators[{j}].weight must be a new dominant weight of a nonempty block of degree <= {K}")
        texts = seq(field(entry, "equations", f"generators[{j}]."), f"generators[{j}].equations")
        if not texts:
            reject(f"generators[{j}] lists no equation")
        if len(texts) > space.count(0, w):  # independent equations of one block: at most its monomials
            reject(f"generators[{j}] lists {len(texts)} equations in a block of {space.count(0, w)} monomials")
        polys = []
        for i, t in enumerate(texts):
            terms = parse(t, cctx, f"generators[{j}].equations[{i}]").to_dict()
            for e in terms:
                if space.weight_of(e) != w:
                    reject(f"generators[{j}].equations[{i}] is not homogeneous of weight {list(w)}")
            den = math.lcm(*(int(fmpq(c).q) for c in terms.values()))
            if max(abs(int((fmpq(c) * den).p)) for c in terms.values()) >= 10 ** MAX_GRADED_DIGITS:
                # exact ranks of the products cost with the digits: 2,000-digit multiples of honest equations took 80x
                raise CertificateFormatError(f"generators[{j}].equations[{i}] has coefficients (denominators cleared) "
                                             f"of more than {MAX_GRADED_DIGITS} digits, above the checker's limit")
            polys.append({e: fmpq(c) for e, c in terms.items()})
        reps[w] = polys
    # the proofs: invariance of the parametrization, then every representative vanishes on M
    blocks = [("A", d, d)] if a >= d else [("Q", a, d), ("K", a, d)]
    params = [f"{b}_{i + 1}_{j + 1}" for b, r, c in blocks + [("V", dd, d)] for i in range(r) for j in range(c)]
    pctx, phi = _parametrization(d, dd, a, params)
    _invariant(space, params, pctx, phi, a)
    for w, polys in reps.items():
        for i, terms in enumerate(polys):
            if cctx.from_dict(terms).compose(*phi, ctx=pctx) != 0:
                reject(f"the representative {i + 1} of weight {list(w)} does not vanish on M")
    # the checker's own points and primes, drawn reproducibly from the claim
    rng = random.Random(hashlib.sha256(json.dumps([cert["architecture"], K, listed]).encode()).digest())
    carried: dict[tuple, list] = {}

    def at(u: tuple) -> list:
        """The representatives of ``dominant(u)`` carried to ``u``."""
        if u not in carried:
            carried[u] = _carry(space, reps.get(space.dominant(u), []), u)
        return carried[u]

    records, by_degree, total_reps, pool = [], {}, 0, {}
    for k in range(1, K + 1):
        dim_k = mins_k = covered = 0
        for w in weights[k]:
            exps = space.exponents(w)
            N = len(exps)
            order = {e: i for i, e in enumerate(exps)}
            products = []
            for j in range(1, k):
                for u in _lower(space, w, j):
                    hs = at(u)
                    if not hs:
                        continue
                    for alpha in space.exponents(tuple(x - y for x, y in zip(w, u))):
                        products += [{tuple(x + y for x, y in zip(e, alpha)): c for e, c in h.items()} for h in hs]
            if len(products) * N > MAX_GRADED_WORK:
                raise CertificateFormatError(f"block {w}: {len(products)} products, above the checker's work limit")
            J = _integer_rows(products, order)
            H = _integer_rows(reps.get(w, []), order)
            for attempt in range(2):  # one redraw: unlucky points or prime only lower a rank
                p = _prime(rng)
                if attempt or k not in pool:
                    pool[k] = _points(pctx, phi, len(params), max(space.count(0, v) for v in weights[k]) + 4, rng)
                rank_E = _evaluation_rank(pool[k][:N + 4], exps, p)
                spanned = nmod_mat(J + H, p).rank() if J + H else 0
                if spanned == N - rank_E:
                    break
            else:
                reject(f"block {w} of degree {k}: the equations span {spanned} dimensions modulo p, but the "
                       f"evaluation leaves {N - rank_E}")
            dim = N - rank_E
            exact = fmpz_mat(J).rank() if J else 0
            if exact != dim - len(H):
                reject(f"block {w} of degree {k}: {len(H)} representatives where {dim - exact} are minimal (the "
                       f"products have exact rank {exact} in a block of dimension {dim})")
            size = space.orbit(w)
            dim_k += size * dim
            mins_k += size * len(H)
            covered += size * N
            total_reps += len(H)
        if covered != math.comb(space.n + k - 1, k):
            reject(f"degree {k}: the dominant blocks' orbits cover {covered} monomials (checker fault)")
        records.append({"degree": k, "monomials": covered, "dimension": dim_k, "minimal_generators": mins_k,
                        "blocks": len(weights[k])})
        if mins_k:
            by_degree[str(k)] = mins_k
    if field(cert, "degrees") != records:
        reject(f"degrees must be {json.dumps(records)}")
    if field(cert, "minimal_generators_by_degree") != by_degree:
        reject(f"minimal_generators_by_degree must be {json.dumps(by_degree)}")
    dims = ", ".join(str(r["dimension"]) for r in records)
    mins = ", ".join(f"{n} of degree {k}" for k, n in by_degree.items()) or "none"
    return (f"I(M) of widths {d},{dd}, rank {a} in degrees <= {K}: dim I_k = {dims}; minimal generators: {mins} "
            f"({total_reps} orbit representative{'s' * (total_reps != 1)}, each proved to vanish on M); they generate "
            f"I(M) in degrees <= {K}")


def _carry(space: _Space, polys: list, u: tuple) -> list:
    """Polynomials (exponent -> coefficient) of weight ``dominant(u)`` with their variables permuted onto ``u``."""
    if not polys:
        return []
    to = space.to(u)
    moved = []
    for terms in polys:
        out = {}
        for e, c in terms.items():
            f = [0] * space.n
            for i, x in enumerate(e):
                f[to[i]] += x
            out[tuple(f)] = c
        moved.append(out)
    return moved


def generators(cert: dict, ctx) -> list:
    """Every minimal generator of a verified ``implicit-graded`` certificate, in the ring ``ctx`` of its coordinates.

    Each representative is carried to every weight of its orbit (the permutations
    of each part of its weight). Call only on a certificate the kernel verified.

    Examples
    --------
    ``d = 2``, ``d' = 1``, ``a = 1``: two representatives, three quadrics.

    >>> from attngeo import Architecture
    >>> from attngeo.check.loci.graded import generators
    >>> from attngeo.check.poly import ring
    >>> from attngeo.geometry.loci.graded import graded_equations
    >>> cert = graded_equations(Architecture((2, 1), (1,), tokens=2), 2).to_json()
    >>> len(generators(cert, ring(cert["coordinates"])))
    3
    """
    d, dd = cert["architecture"]["widths"]
    space = _Space(d, dd)
    out = []
    for entry in cert["generators"]:
        w = tuple(entry["weight"])
        polys = [{e: fmpq(c) for e, c in parse(t, ctx, "equation").to_dict().items()} for t in entry["equations"]]
        for u in space.orbit_of(w):
            out += [ctx.from_dict(terms) for terms in _carry(space, polys, u)]
    return out


def _lower(space: _Space, w: tuple, j: int) -> list[tuple]:
    """Weights ``u <= w`` of degree ``j``."""
    def capped(cap: tuple, total: int) -> list[tuple]:
        if not cap:
            return [()] if total == 0 else []
        return [(v,) + rest for v in range(min(cap[0], total), -1, -1) for rest in capped(cap[1:], total - v)]

    a, b, c = space.parts(w)
    return [x + y + z for x in capped(a, j) for y in capped(b, j) for z in capped(c, 2 * j)]


def _points(pctx, phi: list, nparams: int, count: int, rng: random.Random) -> list[list[int]]:
    """The coordinates of ``M`` at ``count`` random integer weights (exact integers)."""
    out = []
    for _ in range(count):
        w = [rng.randint(-10**6, 10**6) for _ in range(nparams)]
        out.append([int(f(*w)) for f in phi])
    return out


def _evaluation_rank(points: list[list[int]], exps: list, p: int) -> int:
    """Rank modulo ``p < 2^31`` of the monomials ``exps`` (columns) at the points (rows).

    Residues below ``2^31`` keep every product of two below ``2^62``: exact in int64.
    """
    values = np.array([[x % p for x in c] for c in points], dtype=np.int64)
    M = np.empty((len(points), len(exps)), dtype=np.int64)
    for j, e in enumerate(exps):
        col = np.ones(len(points), dtype=np.int64)
        for i, x in enumerate(e):
            for _ in range(x):
                col = col * values[:, i] % p
        M[:, j] = col
    return nmod(M, p).rank()
