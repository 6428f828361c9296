"""Implicit equations of small neuromanifolds; point verdicts from their Jacobian; boundary points."""

import random

import pytest
from flint import fmpq

from conftest import assert_rejected

from attngeo import Architecture, check_certificate
from attngeo.geometry.loci.boundary import is_boundary_point
from attngeo.exact.engine import find_singular
from attngeo.geometry.fibers.layer import special_point
from attngeo.exact.ideal import Ideal
from attngeo.geometry.loci.implicit import coordinates_of, implicit_equations
from attngeo.latex import balanced
from attngeo.model.layerfunction import LayerFunction
from attngeo.geometry.loci.singular import is_singular

pytestmark = pytest.mark.msolve  # elimination at these sizes


@pytest.fixture(scope="module")
def hypersurface():
    return implicit_equations(Architecture((2, 1), (2,), tokens=2))


@pytest.fixture(scope="module")
def rank_one():
    return implicit_equations(Architecture((2, 1), (1,), tokens=2))


def test_the_d2_hypersurface_vanishes_exactly_on_m(hypersurface):
    eq = hypersurface
    assert eq.codimension == 1 and eq.generates == "proved" and eq.irreducible
    arch = eq.arch
    rng = random.Random(3)
    for _ in range(5):
        assert eq.point_verdict(coordinates_of(arch, special_point(arch, "random", rng))) == "smooth"
    off = [fmpq(i * i + 1) for i in range(6)]
    assert eq.point_verdict(off) == "not on M"
    assert all(balanced(s) for s in eq.equations_latex()) and balanced(eq.latex())
    check_certificate(eq.to_json())


def test_hilbert_counts_meet_and_varieties_have_dimension_dim_m(rank_one):
    for h in rank_one.hilbert:
        assert h["rank"] == h["staircase"] <= h["monomials"]
    assert rank_one.variety_dimension == rank_one.dimension == 4


@pytest.mark.singular
def test_singular_eliminates_to_the_same_ideal(rank_one):
    again = implicit_equations(rank_one.arch, engine="singular")
    assert again.ideal == rank_one.ideal


def test_equations_decide_the_points_tangents_leave_open(rank_one, hypersurface):
    arch = rank_one.arch  # a = 1, d' = 1: every point is a rank-1 point
    w = special_point(arch, "rank1-swap", random.Random(0))
    assert is_singular(arch, w).verdict == "undecided"
    v = is_singular(arch, w, equations=rank_one)
    assert v.verdict == "smooth"
    check_certificate(v.to_json())
    assert_rejected(v.to_json(), lambda c: c.update(jacobian_rank=1), "rank")
    assert_rejected(v.to_json(), lambda c: c.update(verdict="singular"), "means a certified smooth")
    arch2 = hypersurface.arch  # the parallel point: one fiber line but singular
    p = is_singular(arch2, special_point(arch2, "rank1-parallel", random.Random(0)), equations=hypersurface)
    assert p.verdict == "singular" and p.jacobian_rank == 0
    check_certificate(p.to_json())


def test_tampered_implicit_certificates_are_rejected(hypersurface, rank_one):
    cert = hypersurface.to_json()
    assert_rejected(cert, lambda c: c["equations"].__setitem__(0, c["equations"][0] + " + c_1_1_11"), "vanish")
    assert_rejected(cert, lambda c: c.update(dimension=4), "dim")
    two = rank_one.to_json()
    assert_rejected(two, lambda c: c.update(generates="proved"), "hypersurface")
    assert_rejected(two, lambda c: c["equations"].pop(), "Groebner|dim|staircase|different|describe")
    assert_rejected(two, lambda c: c["hilbert"][1].update(staircase=17), "staircase")


def test_boundary_points_follow_lemma_b():
    arch = Architecture((2, 2), (2,), tokens=2)
    rng = random.Random(1)
    assert is_boundary_point(arch, special_point(arch, "random", rng)).verdict == "interior"
    assert is_boundary_point(arch, special_point(arch, "rank1-parallel", rng)).verdict == "boundary"
    assert is_boundary_point(arch, special_point(arch, "zero", rng)).verdict == "boundary"
    q = [[1, 0], [0, 1]]  # y1^2 + y2^2 times R = [[1, 2], [0, 0]]
    R = [[1, 2], [0, 0]]
    definite = LayerFunction.from_tensor(arch, [[[[q[m][n] * R[k][p] for p in range(2)] for n in range(2)]
                                                 for m in range(2)] for k in range(2)])
    out = is_boundary_point(arch, definite)
    assert out.verdict == "outside" and not out.in_real_image
    cert = out.to_json()
    check_certificate(cert)
    assert_rejected(cert, lambda c: c.update(verdict="interior"), "Lemma B")
    par = is_boundary_point(arch, special_point(arch, "rank1-parallel", rng)).to_json()
    assert_rejected(par, lambda c: c["evidence"].update(direction=["0", "0"]), "definite")
    gen = is_boundary_point(arch, special_point(arch, "random", rng)).to_json()
    assert_rejected(gen, lambda c: c["evidence"]["A"][0].__setitem__(0, "99"), "reproduce")


def test_jacobian_singular_locus_matches_the_strata(hypersurface, rank_one):
    """dim Sing M from the equations = the largest singular stratum (the (1,1) stratum, or only 0)."""
    assert hypersurface.singular_locus().dimension() == 4  # the rank-1/rank-1 stratum of widths 2,1, a = 2
    assert rank_one.singular_locus().dimension() == 0  # a = 1, d' = 1: only the zero function


def test_the_degree_of_m_is_read_off_the_hilbert_series_and_checked(hypersurface, rank_one):
    assert hypersurface.summary()["degree"] == hypersurface.equations[0].total_degree() == 4  # a quartic hypersurface
    cert = rank_one.to_json()
    assert cert["degree"] >= 1 and check_certificate(cert)
    assert_rejected(cert, lambda c: c.update(degree=c["degree"] + 1), "degree")


def test_the_d2_quartic_is_the_one_minimal_generator(hypersurface):
    (quartic,) = hypersurface.minimal_generators
    assert quartic.total_degree() == 4 and len(quartic) == 7
    assert hypersurface.minimal_generators_by_degree == {"4": 1}
    s = hypersurface.summary()
    assert s["minimal_generators"] == [str(quartic)] and s["codimension"] == 1 and s["degree"] == 4
    assert hypersurface.latex_parts()[0] in hypersurface.latex()


@pytest.mark.parametrize("widths,rank", [((2, 2), 1), ((2, 2), 2), ((3, 1), 1)])
def test_minimal_generators_generate_the_ideal_and_none_is_redundant(widths, rank):
    eq = implicit_equations(Architecture(widths, (rank,), tokens=2))
    variables, minimal = eq.ideal.variables, eq.minimal_generators
    assert len(minimal) <= len(eq.equations)  # 2,2 a = 2: 15 of the 39 (the others are redundant)
    generated = Ideal(minimal, variables)
    assert all(generated.contains(g) for g in eq.equations)  # every Gröbner-basis element reduces to 0
    assert all(eq.ideal.contains(h) for h in minimal)
    for i, h in enumerate(minimal):  # no minimal generator lies in the ideal of the others
        assert not Ideal(minimal[:i] + minimal[i + 1:], variables).contains(h)
    counts = eq.minimal_generators_by_degree
    assert sum(counts.values()) == len(minimal) and min(map(int, counts)) == min(eq.ideal.degrees())
    check_certificate(eq.to_json())


@pytest.mark.singular
def test_minimal_generator_counts_agree_with_singular_minbase():
    import subprocess
    from collections import Counter

    eq = implicit_equations(Architecture((2, 3), (2,), tokens=2))
    names = eq.ideal.variables
    script = [f"ring r = 0, ({','.join(names)}), dp;", "ideal G = " + ",".join(str(g) for g in eq.equations) + ";",
              "ideal m = minbase(G);", "for (int k = 1; k <= size(m); k++) { print(deg(m[k])); }", "quit;"]
    run = subprocess.run([find_singular(), "-q", "--no-rc"], input="\n".join(script), capture_output=True, text=True)
    theirs = Counter(line.strip() for line in run.stdout.splitlines() if line.strip())
    assert dict(sorted(theirs.items())) == eq.minimal_generators_by_degree


def test_tampered_minimal_generators_are_rejected(hypersurface, rank_one):
    cert = rank_one.to_json()
    first = cert["minimal_generators"][0]
    assert_rejected(cert, lambda c: c["minimal_generators"].pop(), "not in the ideal of the minimal generators")
    multiple = str(rank_one.ideal.ctx.gens()[0] * rank_one.minimal_generators[0])  # homogeneous, on M, redundant
    assert_rejected(cert, lambda c: c["minimal_generators"].append(multiple), "not minimal")
    assert_rejected(cert, lambda c: c["minimal_generators"].append(first), "not minimal")
    assert_rejected(cert, lambda c: c["minimal_generators"].__setitem__(0, first + " + c_1_1_11^2"), "vanish")
    mixed = str(rank_one.minimal_generators[0] + rank_one.minimal_generators[1])  # two torus weights
    assert_rejected(cert, lambda c: c["minimal_generators"].__setitem__(0, mixed), "homogeneous")
    assert_rejected(cert, lambda c: c.update(minimal_generators_by_degree={"2": 2}), "minimal_generators_by_degree")
    assert_rejected(cert, lambda c: c.update(minimal_generators_by_degree={"2": True}), "minimal_generators_by_degree")
    assert_rejected(cert, lambda c: c.update(minimal_generators="c_1_1_11"), "list")
    quartic = hypersurface.to_json()
    assert_rejected(quartic, lambda c: c.update(minimal_generators=[]), "not in the ideal")
    times = str(hypersurface.ideal.ctx.gens()[0] * hypersurface.equations[0])  # a multiple generates less
    assert_rejected(quartic, lambda c: c.update(minimal_generators=[times]), "not in the ideal")


def test_a_dense_image_has_no_equation_and_that_is_proved():
    eq = implicit_equations(Architecture((1, 1), (1,), tokens=2), engine="flint")
    assert eq.equations == [] and eq.minimal_generators == [] and eq.codimension == 0 and eq.generates == "proved"
    cert = eq.to_json()
    assert "I(M) = 0" in check_certificate(cert).claim
    assert_rejected(cert, lambda c: c.update(minimal_generators=["c_1_1_11"]), "vanish")


def test_minimal_generators_are_checked_in_every_degree_of_g():
    """2,2 a = 2: G has degrees 2..5, H degrees 2 and 4; degrees 3 and 5 are checked on dominant blocks only."""
    eq = implicit_equations(Architecture((2, 2), (2,), tokens=2))
    cert = eq.to_json()
    quartic = next(i for i, g in enumerate(eq.minimal_generators) if g.total_degree() == 4)
    # one quartic generator fewer: some equation of degree 4 (and so 5) is no longer in their ideal
    assert_rejected(cert, lambda c: (c["minimal_generators"].pop(quartic),
                                     c["minimal_generators_by_degree"].update({"4": 9})), "not in the ideal")
    # a member of G of degree 5 added: it lies in the ideal of the others
    quintic = next(str(g) for g in eq.equations if g.total_degree() == 5)
    assert_rejected(cert, lambda c: (c["minimal_generators"].append(quintic),
                                     c["minimal_generators_by_degree"].update({"5": 1})), "not minimal")
