"""Independent re-verification of implicit-equation certificates (kind ``implicit``).

The checker rebuilds the parametrization its own way — expanding
``F_kp(y) = (V y)_k (A^T y)_p`` as polynomials in the weights and ``y`` and
reading off the coefficient of ``y_m y_n`` — and then re-proves:

* every listed equation vanishes on it (``G ⊆ I(M)``);
* the dimension of ``V(G)`` read from its leading monomials is the certified
  ``dim M`` of the embedded dimension certificate. Reading it there needs ``G``
  to be a Gröbner basis (degrevlex): one polynomial (or none) is one; otherwise
  ``G`` is accepted only when msolve's replayed elimination returns exactly ``G``,
  its reduced Gröbner basis (msolve is trusted for that basis anyway, so a second
  Buchberger test in Python — python-flint's ``is_groebner``, 60-190 s of a
  3,1 ``a = 2`` check — proved nothing more; docs/trust.md);
* each Hilbert-function count: the staircase of ``G`` in degree ``k`` (read off the
  Hilbert series of the leading monomials) equals the rank, modulo a prime, of the
  degree-``k`` monomials at points of ``M`` the checker draws itself (any points
  give a lower bound, so its own are as good), summed over the dominant torus
  weights times their orbit sizes (the permutations of the indices preserve ``M``,
  which the degree-by-degree checker proves: docs/math.md §7.4);
* ``generates = "proved"``: one generator, irreducible over Q, codimension 1;
  ``generates = "elimination"``: the elimination is replayed with msolve — not on
  the prover's system (``A`` with its ``(a+1)``-minors) but on the checker's own
  chart ``A = [R; X R]`` with one weight set to 1, whose elimination ideal is also
  ``I(M)`` (docs/math.md Lemma 7.4.5), so msolve's reduced basis must be ``G``
  exactly (widths 3,1 ``a = 2``: 5 s of msolve instead of 28 s); no msolve here
  ⇒ "cannot verify", never "rejected";
* the minimal generators ``H``: each vanishes on ``M`` (so ``<H> ⊆ I(M) = <G>``)
  and is homogeneous for the torus weights; degree by degree and weight block
  by weight block, with ``J`` spanned by ``x^α h`` (``h ∈ H`` of lower degree),
  two exact ranks over Q and one modulo a prime show every member of ``G`` lies
  in ``J + span H_k`` (so ``<G> ⊆ <H>``) and ``H_k`` is independent modulo ``J``
  (so no member of ``H`` is redundant: ``J_k = (m I)_k``, graded Nakayama): the
  rank of ``J + H_k`` modulo p is a lower bound, ``rank J + |H_k|`` an upper one. The
  counts by degree follow, and are invariants of ``M``.
"""

from __future__ import annotations

import hashlib
import json
import math
import random

from flint import fmpq, fmpz_mat, nmod_mat

from ...exceptions import CertificateFormatError
from ..arch import single_layer
from ..limits import MAX_GRADED_BLOCK, MAX_GRADED_WORK, MAX_VARIABLES
from ..msolve import replay, same_basis
from ..poly import (count_monomials, cover_number, hilbert_numerator, parse, parse_all, projective_degree, ring,
                    standard_monomials)
from ..schema import ARCHITECTURE, CHECKED, FLAG, HEADER, NUMBER, Embedded, certified_dimension
from ..values import field, integer, reject, seq
from ..layer import coefficients, coordinates as _coordinates, parametrization as _parametrization
from .graded import _evaluation_rank, _invariant, _points, _prime, _Space

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "coordinates": CHECKED, "dimension": CHECKED, "codimension": CHECKED,
    "generators": CHECKED, "degrees": CHECKED, "terms": CHECKED, "generates": CHECKED,
    "complete_through_degree": CHECKED, "degree": CHECKED, "engine": CHECKED, "seconds": NUMBER, "parameters": CHECKED,
    "equations": CHECKED, "variety_dimension": CHECKED,
    "hilbert": [{"degree": CHECKED, "monomials": CHECKED, "staircase": CHECKED, "rank": CHECKED}],
    "irreducible": FLAG, "dimension_certificate": Embedded("dimension"),
    "minimal_generators_by_degree": CHECKED, "minimal_generators": CHECKED,
}



def _elimination(d: int, dd: int, a: int, coords: list[str]) -> tuple[list, tuple, int]:
    """``c = F(A, V)`` on a chart whose image is dense in ``M``, eliminating its weights (docs/math.md Lemma 7.4.5).

    ``A = [R; X R]`` (``R`` of ``a x d``, ``X`` of ``(d-a) x a``) when ``a < d``, else ``A`` free:
    dense in ``{rank A <= a}`` with no minors. ``F`` is bilinear in ``(A, V)``, so
    ``F(λV, A/λ) = F(V, A)`` lets one weight be 1: ``V_1_1`` when ``d' = 1``, else the
    corner of ``A`` (its first row is ``R``'s). Both are measured choices: widths 3,1
    ``a = 2`` eliminates in 5 s with ``V_1_1 = 1``, 19 s with ``R_1_1 = 1`` and 28 s with the
    ``d x d`` matrix ``A`` and its minors (the prover's system); widths 3,2 ``a = 1`` in 63 s
    with ``R_1_1 = 1``, 188 s with ``V_1_1 = 1``.
    """
    blocks = ([("A", d, d)] if a >= d else [("R", a, d), ("X", d - a, a)]) + [("V", dd, d)]
    names = [f"{b}_{i + 1}_{j + 1}" for b, r, c in blocks for i in range(r) for j in range(c)]
    one = "V_1_1" if dd == 1 else f"{blocks[0][0]}_1_1"
    free = [n for n in names if n != one]
    ctx = ring(tuple(free) + tuple(f"y{i}" for i in range(d)))
    g = dict(zip(free, ctx.gens()))
    g[one] = ctx.from_dict({(0,) * len(ctx.gens()): 1})
    y = ctx.gens()[len(free):]
    if a >= d:
        A = [[g[f"A_{n + 1}_{p + 1}"] for p in range(d)] for n in range(d)]
    else:
        R = [[g[f"R_{i + 1}_{p + 1}"] for p in range(d)] for i in range(a)]
        A = R + [[sum(g[f"X_{r + 1}_{i + 1}"] * R[i][p] for i in range(a)) for p in range(d)] for r in range(d - a)]
    V = [[g[f"V_{k + 1}_{m + 1}"] for m in range(d)] for k in range(dd)]
    full = ring(tuple(free) + tuple(coords))
    pad = (0,) * len(coords)
    eqs = [c - full.from_dict({e + pad: x for e, x in f.items()})
           for c, f in zip(full.gens()[len(free):], coefficients(A, V, y, len(free)))]
    return eqs, tuple(free) + tuple(coords), len(free)


def _rank_count(space, phi: list, pnames: int, k: int, rng: random.Random) -> int:
    """Rank modulo a prime of the degree-``k`` monomials at points of ``M``: dominant blocks times their orbits."""
    weights = space.dominants(k)
    points = _points(None, phi, pnames, max(space.count(0, w) for w in weights) + 4, rng)
    p = _prime(rng)
    return sum(space.orbit(w) * _evaluation_rank(points[:space.count(0, w) + 4], space.exponents(w), p)
               for w in weights)


def _graded(p, space, what: str) -> tuple:
    """``(degree, torus weight)`` shared by every term of ``p``; a mixed polynomial is refused."""
    keys = {(sum(e), space.weight_of(e)) for e in p.monoms()}
    if len(keys) != 1:
        reject(f"{what} is not homogeneous for the torus weights (I(M) is)")
    return keys.pop()


def _integer_terms(p) -> list[tuple]:
    """``(exponents, integer coefficient)`` of ``p`` times the lcm of its denominators."""
    items = p.to_dict().items()
    den = 1
    for _, c in items:
        den = math.lcm(den, int(fmpq(c).q))
    return [(e, int((fmpq(c) * den).p)) for e, c in items]


def _check_minimal(cert: dict, G: list, cctx, phi: list, pctx, space, numerator: list[int]) -> dict[str, int]:
    """Verify that ``minimal_generators`` generate ``<G>`` minimally; return the counts by degree.

    ``G`` is a Gröbner basis of ``I = I(M)`` (see :func:`check`), so ``dim I_k`` is read
    off its Hilbert numerator. Degree by degree, with ``J`` the products ``c^α h`` of the
    lower-degree members of ``H`` (docs/math.md §7.4, Lemmas 7.4.3 and 7.4.4):

    * ``(H)_k = I_k``: the ranks modulo a prime of ``J_u ∪ H_u`` over every weight ``u``
      of degree ``k`` add up to ``dim I_k`` (each is at most ``dim I_u``), so every
      member of ``G`` lies in ``(H)``; in a degree where ``H`` has no member only
      dominant blocks, times their orbit sizes, since ``span J_u = (𝔪 I)_u`` there
      (given every weight of the lower degrees) and ``σ`` maps ``(𝔪 I)_w`` onto ``(𝔪 I)_{σw}``;
    * no member of ``H`` is redundant: given the lower degrees, ``span J_u = (𝔪 I)_u``,
      whose dimension depends on the orbit of ``u`` only, so exact ranks over Q on
      the dominant blocks give ``dim (𝔪 I)_k``, and ``|H_k|`` must be ``dim I_k`` minus it.
    """
    texts = field(cert, "minimal_generators")
    if not isinstance(texts, list):
        reject("minimal_generators must be a list of polynomials written as strings")
    H = [parse(t, cctx, f"minimal_generators[{i}]") for i, t in enumerate(texts)]
    for i, h in enumerate(H):
        if h.compose(*phi, ctx=pctx) != 0:
            reject(f"minimal generator {i + 1} does not vanish on M")
    hk = [_graded(h, space, f"minimal generator {i + 1}") for i, h in enumerate(H)]
    gk = [_graded(g, space, f"equation {i + 1}") for i, g in enumerate(G)]
    Hd = [_integer_terms(h) for h in H]  # denominators cleared: the same span
    modulus = 2_147_483_629  # any prime: a modular rank is only ever a lower bound here

    def rows(k: int, w: tuple, exact: bool = False) -> int:
        """Rank of ``J_w`` (with ``H_w`` unless ``exact``): exact over Q, or modulo a prime; bounded before building."""
        parts = []
        for h, (j, wh) in zip(Hd, hk):
            diff = tuple(x - y for x, y in zip(w, wh))
            if (j < k or (j == k and not exact)) and min(diff) >= 0:
                parts.append((h, diff, space.count(0, diff)))
        N = space.count(0, w)
        if sum(c for _, _, c in parts) * N > MAX_GRADED_WORK:
            raise CertificateFormatError(f"the minimal-generator ranks in a block of degree {k} are above the "
                                         "checker's work limit")
        if not parts:
            return 0
        # exponents as integers in base k + 1: every entry of a degree-k monomial is <= k, so adding two
        # codes adds the exponent vectors without carries, and the inner loop does no tuple arithmetic
        powers = [(k + 1) ** i for i in range(space.n)]

        def code(e: tuple) -> int:
            return sum(x * b for x, b in zip(e, powers) if x)

        column = {code(e): i for i, e in enumerate(space.exponents(w))}
        # a zero matrix filled entry by entry: the rows are sparse (len h of N entries), and a dense
        # list took 1.3 s of a 3.6 s check at widths 2,3 a = 2 in python-flint's conversion alone
        total = sum(c for _, _, c in parts)
        matrix = fmpz_mat(total, N) if exact else nmod_mat(total, N, modulus)
        r = 0
        for h, diff, _ in parts:
            terms = [(code(e), c if exact else c % modulus) for e, c in h]
            for alpha in space.exponents(diff):
                a = code(alpha)
                for e, c in terms:
                    matrix[r, column[e + a]] = c
                r += 1
        return matrix.rank()

    degrees = [j for j, _ in hk + gk]
    for k in range(min(degrees, default=1), max(degrees, default=0) + 1):
        dim_k = math.comb(space.n + k - 1, k) - standard_monomials(numerator, space.n, k)
        dominant = space.dominants(k)
        if any(j == k for j, _ in hk):  # H_u differs from weight to weight: every block
            spanned = sum(rows(k, u) for w in dominant for u in space.orbit_of(w))
        else:  # no member of H of degree k: the products span (m I)_u, the same dimension along an orbit
            spanned = sum(space.orbit(w) * rows(k, w) for w in dominant)
        if spanned != dim_k:
            reject(f"an equation of degree {k} is not in the ideal of the minimal generators")
        new = sum(1 for j, _ in hk if j == k)
        if new and new != dim_k - sum(space.orbit(w) * rows(k, w, exact=True) for w in dominant):
            reject(f"minimal generators of degree {k} are not minimal: one lies in the ideal of the others")
    counts: dict[str, int] = {}
    for k, _ in sorted(hk, key=lambda kw: kw[0]):
        counts[str(k)] = counts.get(str(k), 0) + 1
    if json.dumps(field(cert, "minimal_generators_by_degree")) != json.dumps(counts):
        reject(f"minimal_generators_by_degree must be {json.dumps(counts)}, the degrees of the minimal generators")
    return counts


def check(cert: dict) -> str:
    """The claim of an implicit-equation certificate: equations of ``M``, their dimension, completeness and generation.

    Called by the kernel after the schema check and the embedded dimension
    certificate; use :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        An equation that does not vanish on ``M``, not a Gröbner basis, a
        dimension or Hilbert count that is not the recomputed one, or a replay
        with another basis.
    CannotVerify
        Generation by elimination, and msolve is not installed (exit 2).

    Examples
    --------
    One layer ``1 -> 1`` is ``F = (V A) y^2``: its image is the whole line, so
    no equation holds on it, and a forged one is refused before any replay:

    >>> from attngeo import Architecture, implicit_equations
    >>> from attngeo.check.loci.implicit import check
    >>> cert = implicit_equations(Architecture((1, 1), (1,), tokens=2), engine="flint").to_json()
    >>> cert["coordinates"], cert["parameters"], cert["dimension"]
    (['c_1_1_11'], ['A_1_1', 'V_1_1'], 1)
    >>> check({**cert, "equations": ["c_1_1_11"]})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: equation 1 does not vanish on M

    One layer ``2 -> 1`` of rank 1: ``F = (v . y)(A^T y)`` with ``A`` of rank 1,
    so ``F_00`` and ``F_01`` are proportional quadrics, and the equations are
    the 2 x 2 minors of their coefficient vectors. The prover and the replay
    need msolve (the rest is skipped where it is not installed):

    >>> import pytest
    >>> from attngeo.check.msolve import INSTALL, binary
    >>> if binary() is None:
    ...     pytest.skip(f"msolve is not installed; {INSTALL}")
    >>> cert = implicit_equations(Architecture((2, 1), (1,), tokens=2)).to_json()
    >>> cert["equations"]
    ['c_1_1_22*c_1_2_12 - c_1_1_12*c_1_2_22', 'c_1_1_22*c_1_2_11 - c_1_1_11*c_1_2_22', 'c_1_1_12*c_1_2_11 - c_1_1_11*c_1_2_12']
    >>> check(cert)
    "implicit equations of M (widths 2,1, rank 1): 3 generators, dim 4, all equations of degree <= 2 in <G>; generates I(M) by msolve's elimination (replayed; msolve trusted); minimal generators: 3 of degree 2"
    """
    arch, d, dd, a = single_layer(cert)
    if dd * d * d * (d + 1) // 2 > MAX_VARIABLES:
        raise CertificateFormatError(f"implicit equations of widths {d},{dd} have more coordinates than the "
                                     f"checker's limit of {MAX_VARIABLES} variables")
    coords = field(cert, "coordinates")
    expected = [f"c_{k + 1}_{p + 1}_{m + 1}{n + 1}" for k, p, m, n in _coordinates(d, dd)]
    if coords != expected:
        reject("coordinates must be the coefficients c_k_p_mn of the matrix of quadratic forms, in order")
    blocks = [("A", d, d)] if a >= d else [("Q", a, d), ("K", a, d)]
    names = [f"{b}_{i + 1}_{j + 1}" for b, r, c in blocks + [("V", dd, d)] for i in range(r) for j in range(c)]
    if field(cert, "parameters") != names:
        reject("parameters must be the weights of the parametrization, in order")
    pctx, phi = _parametrization(d, dd, a, names)
    cctx = ring(coords)
    texts = field(cert, "equations")
    G = parse_all(texts, cctx, "equations") if texts != [] else []  # no equation: M fills its space
    for i, g in enumerate(G):
        if g.compose(*phi, ctx=pctx) != 0:
            reject(f"equation {i + 1} does not vanish on M")
    if field(cert, "generators") != len(G) or field(cert, "degrees") != [g.total_degree() for g in G] \
            or field(cert, "terms") != [len(g) for g in G]:
        reject("generators, degrees and terms must describe the equations")
    supports = [frozenset(i for i, e in enumerate(g.monoms()[0]) if e) for g in G]
    var_dim = len(coords) - cover_number(supports, "the leading monomials")
    dim = certified_dimension(field(cert, "dimension_certificate"))
    if integer(field(cert, "dimension"), "dimension") != dim or var_dim != dim \
            or field(cert, "variety_dimension") != var_dim or field(cert, "codimension") != len(coords) - dim:
        reject(f"dim V(G) = {var_dim} must equal the certified dim M = {dim} (and codimension = {len(coords) - dim})")
    leads = [g.monoms()[0] for g in G]
    # the checker's own evaluation points, drawn reproducibly from the claim itself
    rng = random.Random(hashlib.sha256(json.dumps([cert["architecture"], texts]).encode()).digest())
    complete, stopped, work = 0, False, 0
    numerator = hilbert_numerator(leads, len(coords))  # once: every degree's staircase and the degree read it
    space = _Space(d, dd)
    _invariant(space, names, pctx, phi, a)  # the permutations preserve M: dominant blocks stand for their orbits
    for j, h in enumerate(seq(field(cert, "hilbert"), "hilbert")):
        k = integer(field(h, "degree", f"hilbert[{j}]."), f"hilbert[{j}].degree")
        if k != j + 1:
            reject("hilbert entries must be degrees 1, 2, ... in order")
        total = count_monomials(len(coords), k, f"hilbert[{j}]")
        stair = standard_monomials(numerator, len(coords), k)
        if field(h, "monomials", f"hilbert[{j}].") != total or field(h, "staircase", f"hilbert[{j}].") != stair:
            reject(f"degree {k}: {total} monomials, a staircase of {stair} standard monomials of G")
        recorded = integer(field(h, "rank", f"hilbert[{j}]."), f"hilbert[{j}].rank", 0, stair)
        if recorded == stair and not stopped:
            sizes = [space.count(0, w) for w in space.dominants(k)]
            work += sum(x * x for x in sizes)
            if max(sizes) > MAX_GRADED_BLOCK or work > MAX_GRADED_WORK:
                raise CertificateFormatError(f"the Hilbert counts through degree {k} need blocks of {max(sizes)} "
                                             f"monomials (sum of squares {work}), above the checker's limits")
            rank = _rank_count(space, phi, len(names), k, rng)
            if rank != stair:
                rank = _rank_count(space, phi, len(names), k, rng)  # one redraw: unlucky points lower a rank
            if rank != stair:
                reject(f"degree {k}: monomials at points of M have rank {rank}, below the staircase {stair}")
            complete = k
        else:
            stopped = True  # a rank below the staircase proves nothing; completeness stops here
    if field(cert, "complete_through_degree") != complete:
        reject(f"complete_through_degree is {complete}")
    minimal = _check_minimal(cert, G, cctx, phi, pctx, space, numerator)
    degree = projective_degree(leads, len(coords), len(coords) - dim, numerator)
    if cert.get("degree") != degree:
        reject(f"degree must be {degree}: the Hilbert series of the leading monomials gives it")
    if field(cert, "engine") not in ("msolve", "singular", "flint", "sympy"):
        reject("engine must name the engine that eliminated: msolve, singular, flint or sympy")
    generates = field(cert, "generates")
    irreducible = cert.get("irreducible")
    if irreducible is not None:
        factors = G[0].factor()[1] if len(G) == 1 else None
        if factors is None or irreducible is not (len(factors) == 1 and factors[0][1] == 1):
            reject("irreducible states whether the one generator is irreducible over Q")
    if generates == "proved" and not G and dim == len(coords):
        how = "M is dense in its coordinate space: I(M) = 0"
    elif generates == "proved":
        if len(G) != 1 or len(coords) - dim != 1 or irreducible is not True:
            reject("'proved' generation needs one irreducible generator of a hypersurface, or none and codimension 0")
        how = "an irreducible hypersurface: generates I(M)"
    elif generates == "elimination":
        eqs, variables, eliminated = _elimination(d, dd, a, coords)
        if not same_basis(G, replay(eqs, variables, eliminated)):
            reject("the replayed elimination gives a different basis")
        how = "generates I(M) by msolve's elimination (replayed; msolve trusted)"
    else:
        reject("generates must be 'proved' or 'elimination'")
    mingens = ", ".join(f"{n} of degree {k}" for k, n in minimal.items()) or "none"
    return (f"implicit equations of M (widths {d},{dd}, rank {a}): {len(G)} generator{'s' * (len(G) != 1)}, dim {dim}, "
            f"all equations of degree <= {complete} in <G>; {how}; minimal generators: {mingens}")
