"""Independent re-verification of implicit-equation certificates (kind ``implicit``).

The checker rebuilds the parametrization its own way — expanding
``F_kp(y) = (V y)_k (A^T y)_p`` as polynomials in the weights and ``y`` and
reading off the coefficient of ``y_m y_n`` — and then re-proves:

* every listed equation vanishes on it (``G ⊆ I(M)``);
* ``G`` is a Gröbner basis (python-flint's ``is_groebner``, degrevlex) and the
  dimension of ``V(G)`` read from its leading monomials is the certified ``dim M``
  of the embedded dimension certificate;
* each Hilbert-function count: the staircase of ``G`` in degree ``k`` equals the
  rank, modulo a prime, of the degree-``k`` monomials at points of ``M`` the
  checker draws itself (any points give a lower bound, so its own are as good);
* ``generates = "proved"``: one generator, irreducible over Q, codimension 1;
  ``generates = "elimination"``: the elimination is replayed with msolve (no
  msolve here ⇒ "cannot verify", never "rejected");
* the minimal generators ``H``: each vanishes on ``M`` (so ``<H> ⊆ I(M) = <G>``)
  and is homogeneous for the torus weights; degree by degree and weight block
  by weight block, with ``J`` spanned by ``x^α h`` (``h ∈ H`` of lower degree),
  exact ranks over Q show every member of ``G`` lies in ``J + span H_k``
  (so ``<G> ⊆ <H>``) and ``H_k`` is independent modulo ``J`` (so no member of
  ``H`` is redundant: ``J_k = (m I)_k``, graded Nakayama). The counts by degree
  follow, and are invariants of ``M``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random

import numpy as np
from flint import fmpq, fmpz_mat, fmpz_mpoly_ctx, fmpz_mpoly_vec, nmod_mat

from ...exceptions import CertificateFormatError
from ..arch import single_layer
from ..limits import MAX_MONOMIAL_TESTS, MAX_MONOMIALS, MAX_VARIABLES
from ..dimension.dense import certified_dimension
from ..msolve import replay, same_basis
from ..poly import count_monomials, cover_number, divides, parse, parse_all, projective_degree, ring
from ..schema import ARCHITECTURE, CHECKED, FLAG, HEADER, NUMBER, Embedded
from ..values import field, integer, reject, seq

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "coordinates": CHECKED, "dimension": CHECKED, "codimension": CHECKED,
    "generators": CHECKED, "degrees": CHECKED, "terms": CHECKED, "generates": CHECKED,
    "complete_through_degree": CHECKED, "degree": CHECKED, "engine": CHECKED, "seconds": NUMBER, "parameters": CHECKED,
    "equations": CHECKED, "variety_dimension": CHECKED,
    "hilbert": [{"degree": CHECKED, "monomials": CHECKED, "staircase": CHECKED, "rank": CHECKED}],
    "irreducible": FLAG, "dimension_certificate": Embedded("dimension"),
    "minimal_generators_by_degree": CHECKED, "minimal_generators": CHECKED,
}

_PRIME = 2_147_483_587


def _coordinates(d: int, dd: int) -> list[tuple[int, int, int, int]]:
    return [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]


def _parametrization(d: int, dd: int, a: int, names: list[str]) -> tuple:
    ctx = ring(tuple(names) + tuple(f"y{i}" for i in range(d)))
    g = dict(zip(names, ctx.gens()))
    y = ctx.gens()[len(names):]
    if a >= d:
        A = [[g[f"A_{n + 1}_{p + 1}"] for p in range(d)] for n in range(d)]
    else:
        A = [[sum(g[f"K_{i + 1}_{n + 1}"] * g[f"Q_{i + 1}_{p + 1}"] for i in range(a)) for p in range(d)]
             for n in range(d)]
    ell = [sum(g[f"V_{k + 1}_{m + 1}"] * y[m] for m in range(d)) for k in range(dd)]
    em = [sum(A[n][p] * y[n] for n in range(d)) for p in range(d)]
    pctx = ring(names)
    out = []
    for k, p, m, n in _coordinates(d, dd):
        target = tuple(int(i == m) + int(i == n) for i in range(d))
        coeff = {e[:len(names)]: c for e, c in (ell[k] * em[p]).to_dict().items() if e[len(names):] == target}
        out.append(pctx.from_dict(coeff))
    return pctx, out


def _elimination(d: int, dd: int, a: int, coords: list[str]) -> tuple[list, tuple, int]:
    """``c = F(A, V)`` with, for ``a < d``, every ``(a+1)``-minor of ``A`` (its rank condition), eliminating ``(A, V)``.

    ``M`` is the image of ``{rank A <= a} x C^{d' x d}``; that set's ideal is prime, so eliminating
    ``(A, V)`` here gives ``I(M)`` exactly as the ``(Q, K, V)`` parametrization would, at a fraction of the cost.
    """
    names = [f"{b}_{i + 1}_{j + 1}" for b, r in (("A", d), ("V", dd)) for i in range(r) for j in range(d)]
    pctx, phi = _parametrization(d, dd, d, names)
    full = ring(tuple(names) + tuple(coords))
    lift = [full.from_dict({e + (0,) * len(coords): c for e, c in f.to_dict().items()}) for f in phi]
    eqs = [c - f for c, f in zip(full.gens()[len(names):], lift)]
    if a < d:
        A = [[full.gens()[n * d + p] for p in range(d)] for n in range(d)]
        for rows in itertools.combinations(range(d), a + 1):
            for cols in itertools.combinations(range(d), a + 1):
                eqs.append(_det([[A[r][c] for c in cols] for r in rows], full))
    return eqs, tuple(names) + tuple(coords), len(names)


def _det(M: list, ctx):
    """Determinant of a small square matrix of polynomials (Laplace along the first row)."""
    if len(M) == 1:
        return M[0][0]
    return sum(((-1) ** j * M[0][j] * _det([row[:j] + row[j + 1:] for row in M[1:]], ctx) for j in range(len(M))),
               ctx.from_dict({}))


def _rank_count(phi: list, pnames: int, weights: list[tuple], k: int, rng: random.Random) -> int:
    blocks: dict = {}
    for combo in itertools.combinations_with_replacement(range(len(phi)), k):
        blocks.setdefault(tuple(map(sum, zip(*(weights[i] for i in combo)))), []).append(combo)
    rows = max(len(b) for b in blocks.values()) + 8
    pts = [[rng.randint(-10**5, 10**5) for _ in range(pnames)] for _ in range(rows)]
    vals = [[int(f(*w)) % _PRIME for f in phi] for w in pts]
    total = 0
    for combos in blocks.values():
        M = [[int(np.prod([vals[r][i] for i in combo], dtype=object) % _PRIME) for combo in combos] for r in range(rows)]
        total += nmod_mat(M, _PRIME).rank()
    return total


def _graded(p, weights: list[tuple], what: str) -> tuple:
    """``(degree, torus weight)`` shared by every term of ``p``; a mixed polynomial is refused."""
    keys = set()
    for e in p.monoms():
        w = [0] * len(weights[0])
        for i, x in enumerate(e):
            for j, y in enumerate(weights[i]):
                w[j] += x * y
        keys.add((sum(e), tuple(w)))
    if len(keys) != 1:
        reject(f"{what} is not homogeneous for the torus weights (I(M) is)")
    return keys.pop()


def _rank(rows: list[dict], columns: dict) -> int:
    """Exact rank over Q of polynomials given as term dicts (denominators cleared row by row)."""
    if not rows:
        return 0
    matrix = []
    for r in rows:
        den = 1
        for c in r.values():
            den = math.lcm(den, int(fmpq(c).q))
        row = [0] * len(columns)
        for e, c in r.items():
            row[columns[e]] = int((fmpq(c) * den).p)
        matrix.append(row)
    return fmpz_mat(matrix).rank()


def _check_minimal(cert: dict, G: list, cctx, phi: list, pctx, weights: list[tuple]) -> dict[str, int]:
    """Verify that ``minimal_generators`` generate ``<G>`` minimally; return the counts by degree."""
    texts = field(cert, "minimal_generators")
    if not isinstance(texts, list):
        reject("minimal_generators must be a list of polynomials written as strings")
    H = [parse(t, cctx, f"minimal_generators[{i}]") for i, t in enumerate(texts)]
    for i, h in enumerate(H):
        if h.compose(*phi, ctx=pctx) != 0:
            reject(f"minimal generator {i + 1} does not vanish on M")
    hk = [_graded(h, weights, f"minimal generator {i + 1}") for i, h in enumerate(H)]
    gk = [_graded(g, weights, f"equation {i + 1}") for i, g in enumerate(G)]
    n = len(weights)
    monomials: dict[int, dict] = {}  # degree -> torus weight -> exponent tuples

    def by_weight(e: int, w: tuple) -> list:
        if e not in monomials:
            count_monomials(n, e, "minimal_generators")
            table: dict = {}
            for combo in itertools.combinations_with_replacement(range(n), e):
                exps = tuple(combo.count(i) for i in range(n))
                table.setdefault(_graded(cctx.from_dict({exps: 1}), weights, "a monomial")[1], []).append(exps)
            monomials[e] = table
        return monomials[e].get(w, [])

    terms_built = 0
    for key in sorted(set(hk) | set(gk)):
        k, w = key
        J = []
        for h, (j, wh) in zip(H, hk):
            if j < k:
                for alpha in by_weight(k - j, tuple(x - y for x, y in zip(w, wh))):
                    J.append({tuple(a + b for a, b in zip(e, alpha)): c for e, c in h.to_dict().items()})
                    terms_built += len(J[-1])
        if terms_built > MAX_MONOMIALS:
            raise CertificateFormatError(f"the minimal-generator ranks need more than {MAX_MONOMIALS} terms of "
                                         "products, above the checker's limit")
        new = [h.to_dict() for h, hkey in zip(H, hk) if hkey == key]
        old = [g.to_dict() for g, gkey in zip(G, gk) if gkey == key]
        columns = {e: i for i, e in enumerate({e for r in J + new + old for e in r})}
        base, with_new = _rank(J, columns), _rank(J + new, columns)
        if with_new - base != len(new):
            reject(f"minimal generators of degree {k} are not minimal: one lies in the ideal of the others")
        if _rank(J + new + old, columns) != with_new:
            reject(f"an equation of degree {k} is not in the ideal of the minimal generators")
    counts: dict[str, int] = {}
    for k, _ in sorted(hk, key=lambda kw: kw[0]):
        counts[str(k)] = counts.get(str(k), 0) + 1
    if json.dumps(field(cert, "minimal_generators_by_degree")) != json.dumps(counts):
        reject(f"minimal_generators_by_degree must be {json.dumps(counts)}, the degrees of the minimal generators")
    return counts


def _integer_coefficients(p, zctx):
    """``p`` times the lcm of its denominators, as an integer polynomial (same zeros)."""
    items = p.to_dict().items()
    den = 1
    for _, c in items:
        den = math.lcm(den, int(c.q))
    return zctx.from_dict({e: int(c.p) * (den // int(c.q)) for e, c in items})


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
    zctx = fmpz_mpoly_ctx.get(tuple(coords), "degrevlex")
    if not fmpz_mpoly_vec([_integer_coefficients(g, zctx) for g in G], zctx).is_groebner():
        reject("the equations are not a Groebner basis (degrevlex)")
    supports = [frozenset(i for i, e in enumerate(g.monoms()[0]) if e) for g in G]
    var_dim = len(coords) - cover_number(supports, "the leading monomials")
    dim = certified_dimension(field(cert, "dimension_certificate"))
    if integer(field(cert, "dimension"), "dimension") != dim or var_dim != dim \
            or field(cert, "variety_dimension") != var_dim or field(cert, "codimension") != len(coords) - dim:
        reject(f"dim V(G) = {var_dim} must equal the certified dim M = {dim} (and codimension = {len(coords) - dim})")
    weights = []
    for k, p, m, n in _coordinates(d, dd):
        w = [0] * (dd + 2 * d)
        w[k] += 1
        w[dd + p] += 1
        w[dd + d + m] += 1
        w[dd + d + n] += 1
        weights.append(tuple(w))
    leads = [g.monoms()[0] for g in G]
    # the checker's own evaluation points, drawn reproducibly from the claim itself
    rng = random.Random(hashlib.sha256(json.dumps([cert["architecture"], texts]).encode()).digest())
    complete, stopped, enumerated = 0, False, 0
    for j, h in enumerate(seq(field(cert, "hilbert"), "hilbert")):
        k = integer(field(h, "degree", f"hilbert[{j}]."), f"hilbert[{j}].degree")
        if k != j + 1:
            reject("hilbert entries must be degrees 1, 2, ... in order")
        total = count_monomials(len(coords), k, f"hilbert[{j}]")
        enumerated += total * max(1, len(leads))
        if enumerated > MAX_MONOMIAL_TESTS:
            raise CertificateFormatError(f"the Hilbert counts through degree {k} need more than {MAX_MONOMIAL_TESTS} "
                                         "monomial divisibility tests, above the checker's limit")
        stair = 0
        for combo in itertools.combinations_with_replacement(range(len(coords)), k):
            e = [combo.count(i) for i in range(len(coords))]
            stair += not any(divides(lead, e) for lead in leads)
        if field(h, "monomials", f"hilbert[{j}].") != total or field(h, "staircase", f"hilbert[{j}].") != stair:
            reject(f"degree {k}: {total} monomials, a staircase of {stair} standard monomials of G")
        recorded = integer(field(h, "rank", f"hilbert[{j}]."), f"hilbert[{j}].rank", 0, stair)
        if recorded == stair and not stopped:
            rank = _rank_count(phi, len(names), weights, k, rng)
            if rank != stair:
                rank = _rank_count(phi, len(names), weights, k, rng)  # one redraw: unlucky points lower a rank
            if rank != stair:
                reject(f"degree {k}: monomials at points of M have rank {rank}, below the staircase {stair}")
            complete = k
        else:
            stopped = True  # a rank below the staircase proves nothing; completeness stops here
    if field(cert, "complete_through_degree") != complete:
        reject(f"complete_through_degree is {complete}")
    minimal = _check_minimal(cert, G, cctx, phi, pctx, weights)
    degree = projective_degree(leads, len(coords), len(coords) - dim)
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
