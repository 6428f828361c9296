"""Rank-1 swap points beyond the strata grid (docs/math.md §6.2, Lemma S): singular for every size with ``a >= 2`` or
``d' >= 2`` (``d >= 2``), because the tangent images of the two fiber lines differ; at ``a = d' = 1`` they agree
(the swap points are smooth there, Corollary 7.9.6) and the tangent criterion leaves them open.

Each verdict is a ``singular-point`` certificate the independent checker re-verifies: the span of the tangent images
over both lines, an exact rank over Q, against the embedded dimension certificate.
"""

from __future__ import annotations

import random

import pytest

from attngeo import Architecture, check_certificate
from attngeo.geometry.loci.singular import is_singular


def _swap_point(d: int, dd: int, a: int, seed: int):
    """``A = p qᵀ`` (rank 1 however large ``a`` is) and ``V = r sᵀ`` with ``s ∦ p``: random small integers."""
    rng = random.Random(seed)
    q, p, r = ([rng.choice([-3, -2, -1, 1, 2, 3]) for _ in range(n)] for n in (d, d, dd))
    s = [x + (1 if k == 0 else 0) for k, x in enumerate(p)]  # s = p + e_0: never parallel to p
    Q = [[q[j] if i == 0 else 0 for j in range(d)] for i in range(a)]
    K = [[p[j] if i == 0 else 0 for j in range(d)] for i in range(a)]
    V = [[r[i] * s[j] for j in range(d)] for i in range(dd)]
    return [(Q, K, V)]


@pytest.mark.parametrize("d, dd, a", [(5, 2, 1), (6, 2, 1), (5, 3, 2), (5, 1, 5), (5, 2, 5), (6, 1, 6), (6, 1, 7)])
def test_swap_points_are_singular_beyond_the_grid(d, dd, a):
    arch = Architecture((d, dd), (a,), tokens=2)
    verdict = is_singular(arch, _swap_point(d, dd, a, seed=d * 100 + dd * 10 + a))
    assert verdict.verdict == "singular"
    assert check_certificate(verdict.to_json()).claim


@pytest.mark.parametrize("d", [3, 4, 5])
def test_at_a_and_dd_one_the_two_lines_have_one_tangent_image(d):
    """Lemma S's hypothesis is needed: at ``a = d' = 1`` the two images coincide (span = dim M = 3d - 2)."""
    verdict = is_singular(Architecture((d, 1), (1,), tokens=2), _swap_point(d, 1, 1, seed=d))
    assert verdict.verdict != "singular"
    assert verdict.to_json()["span"] == 3 * d - 2
