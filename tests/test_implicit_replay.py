"""The implicit checker's elimination chart (docs/math.md Lemma 7.4.5) against the prover's system.

The checker replays the elimination on ``A = [R; X R]`` with one weight set to 1;
the prover eliminates the ``d x d`` matrix ``A`` with its ``(a+1)``-minors. Both
eliminations are ``I(M)``, so msolve must return the same reduced basis, and the
chart's map must have the Jacobian rank of the prover's parametrization (its image
is dense in ``M``).
"""

import itertools
import random

import pytest
from flint import fmpq_mat

from conftest import assert_rejected

from attngeo import Architecture, check_certificate, implicit_equations
from attngeo.exact.engine import INSTALL_HINT
from attngeo.check.loci.implicit import _elimination
from attngeo.check.msolve import binary, replay, same_basis
from attngeo.geometry.loci.implicit import (coordinate_names, elimination_size, elimination_system,
                                            parametrization)


def _rank_at(polys: list, nvars: int, rng: random.Random, extra: int = 0) -> int:
    """Rank over Q of the Jacobian of ``polys`` in their first ``nvars`` variables at one random integer point."""
    point = [rng.randint(-50, 50) for _ in range(nvars + extra)]
    return fmpq_mat([[p.derivative(i)(*point) for i in range(nvars)] for p in polys]).rank()


@pytest.mark.parametrize("widths, rank", [((2, 1), 1), ((2, 2), 1), ((2, 2), 2), ((3, 1), 1), ((3, 1), 2),
                                          ((3, 1), 3), ((3, 2), 1), ((3, 2), 3), ((2, 3), 1), ((4, 1), 2),
                                          ((4, 2), 3)])
def test_the_chart_has_the_jacobian_rank_of_the_parametrization(widths, rank):
    """The chart's image lies in ``M``; generic Jacobian rank ``dim M`` makes it dense (no engine needed)."""
    d, dd = widths
    rng = random.Random(d * 100 + dd * 10 + rank)
    eqs, variables, eliminated = _elimination(d, dd, rank, coordinate_names(d, dd))
    names, phi = parametrization(Architecture(widths, (rank,), tokens=2))
    full = _rank_at(phi, len(names), rng)
    # c - f(w): the derivatives in w are those of -f, and no c is left in them
    assert _rank_at(eqs, eliminated, rng, len(variables) - eliminated) == full
    assert eliminated < len(names) or rank >= d  # one weight fewer than (A, V): the scaling is gone


@pytest.mark.msolve
@pytest.mark.parametrize("widths, rank", [((2, 1), 1), ((2, 1), 2), ((2, 2), 1), ((2, 2), 2), ((2, 3), 1),
                                          ((3, 1), 1)])
def test_the_chart_and_the_minors_eliminate_to_the_same_basis(widths, rank):
    """``a < d`` and ``a = d``, ``d' = 1`` (``V_1_1 = 1``) and ``d' > 1`` (``R_1_1`` or ``A_1_1 = 1``)."""
    d, dd = widths
    arch = Architecture(widths, (rank,), tokens=2)
    minors = replay(*elimination_system(arch), elimination_size(arch))
    chart = replay(*_elimination(d, dd, rank, coordinate_names(d, dd)))
    assert minors and same_basis(minors, chart)


@pytest.mark.msolve
def test_a_basis_that_is_not_reduced_is_refused_by_the_replay():
    """``g_i + m g_j`` (same leading monomial, same torus weight, still in ``I(M)``) passes every count, not the replay."""
    if binary() is None:
        pytest.skip(f"msolve is not installed; {INSTALL_HINT}")
    eq = implicit_equations(Architecture((2, 2), (1,), tokens=2))
    G = eq.equations
    ctx = G[0].context()
    cert = eq.to_json()
    for (i, g), (j, h) in itertools.permutations(enumerate(G), 2):
        k = g.total_degree() - h.total_degree()
        for combo in itertools.combinations_with_replacement(range(ctx.nvars()), max(k, 0)):
            m = ctx.from_dict({tuple(combo.count(v) for v in range(ctx.nvars())): 1})
            bad = g + m * h
            if k >= 0 and bad.monoms()[0] == g.monoms()[0] and _same_weight(bad, eq):
                break
        else:
            continue
        break
    else:
        pytest.fail("no torus-homogeneous non-reduced variant found")

    def tamper(c):
        c["equations"][i] = str(bad)
        c["terms"][i] = len(bad)

    assert_rejected(cert, tamper, "different basis")


def _same_weight(p, eq) -> bool:
    """Every term of ``p`` has one torus weight (the checker refuses a mixed member of G before the replay)."""
    from attngeo.geometry.loci.implicit import _multidegree

    d, dd = eq.arch.widths
    weights = _multidegree(d, dd)
    return len({tuple(sum(e[v] * weights[v][x] for v in range(len(e))) for x in range(len(weights[0])))
                for e in p.monoms()}) == 1


@pytest.mark.msolve
def test_a_degree_without_minimal_generators_is_checked_on_dominant_blocks():
    """Widths 2,3 ``a = 2`` has 4 cubic minimal generators: without them, degree 3 (no member of H) must fail."""
    eq = implicit_equations(Architecture((2, 3), (2,), tokens=2))
    assert eq.minimal_generators_by_degree == {"2": 15, "3": 4, "4": 45}
    cert = eq.to_json()
    check_certificate(cert)

    def drop_cubics(c):
        c["minimal_generators"] = [h for h, g in zip(c["minimal_generators"], eq.minimal_generators)
                                   if g.total_degree() != 3]
        c["minimal_generators_by_degree"] = {"2": 15, "4": 45}

    assert_rejected(cert, drop_cubics, "degree 3 is not in the ideal")


@pytest.mark.msolve
def test_without_msolve_an_elimination_certificate_cannot_be_verified(monkeypatch):
    """The replay needs msolve: without it the verdict is "cannot verify", never a rejection."""
    from attngeo.exceptions import CannotVerify

    cert = implicit_equations(Architecture((2, 2), (1,), tokens=2)).to_json()
    monkeypatch.setenv("ATTNGEO_MSOLVE", "/nonexistent/msolve")
    with pytest.raises(CannotVerify, match="msolve"):
        check_certificate(cert)
