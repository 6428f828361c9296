"""Finding 20: on ``2 -> 2`` two heads meet the gauge slice in 12 points, the ordered pairs of a quartic's roots.

Each head of ``2 -> 2`` with ``a = 1`` (``V`` unfactored) adds ``f_j q_jᵀ`` with
``f_j(y) = (k_j·y) V_j y``: a pair of binary quadrics sharing the root of
``k_j·y``. (With ``a = 2``, ``b = 1`` the roles of rows and columns swap:
``o_j g_jᵀ`` with ``g_j(y) = (u_j·y) A_jᵀ y``.) So the two columns (rows) of ``F``
span a pencil of pairs of binary quadrics, and every decomposition into two
heads takes two members of the pencil that share a root: the zeros of the
resultant ``R(s, t) = Res(s F_0 + t F_1)``, a binary quartic. Four members give
``4 · 3 = 12`` ordered pairs, each one point of the gauge slice.

The test computes ``R`` exactly at the certified point, reads every one of the
certified fiber points off the deep-fiber certificate (its rational univariate
parametrization, modulo each irreducible factor), writes each head of that point
in the pencil and checks that it is a root of ``R``, the two heads at distinct
roots, and that the points fall on the ordered pairs of roots exactly as often
as the factorization of ``R`` says there are such pairs.
"""

from __future__ import annotations

import re

import pytest
from flint import fmpq, fmpq_poly

from attngeo import Architecture, check_certificate
from attngeo.geometry.fibers.deep import deep_fiber

NAME = re.compile(r"^([QKVUO])1h(\d)_(\d)_(\d)$")


class _Ring:
    """``Q[z] / f``: elements are ``fmpq_poly`` reduced mod ``f`` (constants when ``f`` is None)."""

    def __init__(self, f: fmpq_poly | None):
        self.f = f

    def __call__(self, p) -> fmpq_poly:
        p = p if isinstance(p, fmpq_poly) else fmpq_poly([p])
        return p % self.f if self.f is not None else p

    def zero(self, p) -> bool:
        return self(p) == 0


def _weights(arch: Architecture, point: list, ring: _Ring, values: dict | None = None) -> dict:
    """``(head, name) -> matrix`` of ring elements: ``point``, with the slice variables replaced by ``values``."""
    out = {}
    for b in arch.blocks():
        out[(b.head, b.name)] = [[ring(point[b.offset + r * b.cols + c]) for c in range(b.cols)] for r in range(b.rows)]
    for name, value in (values or {}).items():
        m = NAME.match(name)
        out[(int(m[2]), m[1])][int(m[3])][int(m[4])] = ring(value)
    return out


def _quadric(k, v, ring):
    """``(k·y)(v·y)`` as coefficients of ``y0^2, y0 y1, y1^2``."""
    return [ring(k[0] * v[0]), ring(k[0] * v[1] + k[1] * v[0]), ring(k[1] * v[1])]


def _heads(W: dict, ring: _Ring, factored: bool) -> list:
    """Per head ``(pair, w)``: ``F = Σ_j pair_j ⊗ w_j`` with ``pair_j`` two binary quadrics sharing a root."""
    out = []
    for j in (1, 2):
        if not factored:  # K = k^T, Q = q^T: F_j[o, p] = (V y)_o (k.y) q_p
            k, V = W[(j, "K")][0], W[(j, "V")]
            out.append(([_quadric(k, V[o], ring) for o in (0, 1)], W[(j, "Q")][0]))
        else:  # V = o u^T: F_j[o, p] = o_o (u.y) (A^T y)_p, A = K^T Q
            K, Q, u = W[(j, "K")], W[(j, "Q")], W[(j, "U")][0]
            A = [[ring(sum(K[m][r] * Q[m][c] for m in range(2))) for c in (0, 1)] for r in (0, 1)]
            out.append(([_quadric(u, [A[0][p], A[1][p]], ring) for p in (0, 1)], [W[(j, "O")][o][0] for o in (0, 1)]))
    return out


def _flat(pair) -> list:
    return pair[0] + pair[1]


def _resultant(a, b):
    """Res of two binary quadrics ``a, b`` (coefficients of ``y0^2, y0 y1, y1^2``)."""
    return (a[0] * b[2] - a[2] * b[0]) ** 2 - (a[0] * b[1] - a[1] * b[0]) * (a[1] * b[2] - a[2] * b[1])


@pytest.mark.msolve
@pytest.mark.parametrize("a,b", [(1, None), (2, 1)], ids=["a1", "a2_b1"])
def test_the_twelve_fiber_points_are_the_ordered_pairs_of_the_quartic_roots(a, b):
    arch = Architecture((2, 2), (a,), tokens=2, heads=2, value_ranks=b)
    fib = deep_fiber(arch, seed=1)
    assert fib.certified and fib.fiber_points == 12 and fib.permutations == 2
    assert check_certificate(fib.to_json()).claim  # the checker re-verifies the 12 points
    constants = _Ring(None)
    heads = _heads(_weights(arch, fib.point, constants), constants, b is not None)
    # the pencil: the two slices F_p = Σ_j w_j[p] pair_j of F, with rational coefficients
    F = [[sum((h[1][p] * x for h, x in zip(heads, column)), fmpq_poly())[0] for column in
          zip(*(_flat(h[0]) for h in heads))] for p in (0, 1)]
    u = fmpq_poly([0, 1])
    member = [F[0][i] * u + F[1][i] for i in range(6)]  # s = u, t = 1
    quartic = _resultant(member[:3], member[3:])
    assert quartic.degree() == 4 and quartic.gcd(quartic.derivative()).degree() == 0  # 4 distinct finite roots
    factors = [f for f, e in quartic.factor()[1]]
    # two coordinates in which F_0, F_1 are independent: (s, t) of a member by Cramer's rule
    i1, i2 = next((i, k) for i in range(6) for k in range(i + 1, 6) if F[0][i] * F[1][k] - F[0][k] * F[1][i] != 0)
    det = F[0][i1] * F[1][i2] - F[0][i2] * F[1][i1]
    counts: dict = {}
    names = fib.basis.variables
    for verdict in fib.factors:
        assert verdict["fiber"]
        f = fmpq_poly([fmpq(*map(int, c.split("/"))) if "/" in c else int(c) for c in verdict["factor"]])
        ring = _Ring(f)
        W = _weights(arch, fib.point, ring, {n: ring(x) for n, x in zip(names, fib.param.x)})
        roots = []
        for pair, _ in _heads(W, ring, b is not None):
            g = _flat(pair)
            s = ring((g[i1] * F[1][i2] - g[i2] * F[1][i1]) / det)
            t = ring((F[0][i1] * g[i2] - F[0][i2] * g[i1]) / det)
            assert all(ring.zero(g[i] - s * F[0][i] - t * F[1][i]) for i in range(6))  # the head is in the pencil
            homog = [ring(sum((phi[k] * s ** k * t ** (phi.degree() - k) for k in range(phi.degree() + 1)),
                              fmpq_poly())) for phi in factors]
            assert ring.zero(_resultant([ring(s * F[0][i] + t * F[1][i]) for i in range(3)],
                                        [ring(s * F[0][i] + t * F[1][i]) for i in range(3, 6)]))
            assert [ring.zero(x) for x in homog].count(True) == 1  # a root of exactly one factor of R
            roots.append((next(k for k, x in enumerate(homog) if ring.zero(x)), s, t))
        (k1, s1, t1), (k2, s2, t2) = roots
        assert not ring.zero(s1 * t2 - s2 * t1)  # two distinct members of the pencil
        counts[(k1, k2)] = counts.get((k1, k2), 0) + f.degree()
    degrees = [phi.degree() for phi in factors]
    pairs = {(i, k): degrees[i] * (degrees[k] - (i == k)) for i in range(len(factors)) for k in range(len(factors))}
    assert counts == {key: n for key, n in pairs.items() if n} and sum(counts.values()) == 4 * 3
