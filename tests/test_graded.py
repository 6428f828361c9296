"""Implicit equations degree by degree (docs/math.md §7.4): the bounds, the generators, the checker's refusals."""

import copy
import math
import random
import time

import pytest
from flint import fmpz_mat

from conftest import assert_rejected

from attngeo import Architecture, check_certificate, is_singular, stratify
from attngeo.exact.engine import ring
from attngeo.geometry.fibers.layer import special_point
from attngeo.exact.ideal import Ideal
from attngeo.exceptions import CertificateFormatError, InvalidInputError
from attngeo.geometry.loci.graded import (Blocks, _points, block_size, block_sizes, coordinate_count, dominant,
                                         dominant_weights, graded_equations, memory_estimate, orbit, orbit_size)
from attngeo.geometry.loci.implicit import _multidegree, implicit_equations, parametrization, staircase_count


@pytest.fixture(scope="module")
def rank_one():  # d = 2, d' = 1, a = 1: three quadrics, then nothing new in degree 3
    return graded_equations(Architecture((2, 1), (1,), tokens=2), 3)


@pytest.fixture(scope="module")
def two_two():  # d = d' = 2, a = 2: quadrics and quartics
    return graded_equations(Architecture((2, 2), (2,), tokens=2), 4)


def _exact_rank_at_points(arch, monos, rng):
    """Rank over Q (no prime) of the monomials at random integer points: the honest codimension of I(M)_w."""
    pts = _points(arch, len(monos) + 6, rng)
    return fmpz_mat([[math.prod(c[i] for i in m) for m in monos] for c in pts]).rank()


def test_block_dimensions_are_invariant_under_the_permutations(two_two):
    """Every block of an orbit has the dimension of its dominant block: the symmetry the proofs use, re-measured."""
    arch = two_two.arch
    d, dd = arch.widths
    B = Blocks(d, dd)
    rng = random.Random(5)
    for k in (2, 3):
        for w in B.dominant_weights(k):
            dims = set()
            for u in orbit(w, d, dd):
                monos = B.monomials(u)
                dims.add(len(monos) - _exact_rank_at_points(arch, monos, rng))
            assert len(dims) == 1, (w, dims)


def test_the_orbits_of_the_dominant_blocks_cover_every_monomial_once():
    for d, dd, k in ((2, 2, 3), (3, 1, 4), (3, 2, 2)):
        B = Blocks(d, dd)
        seen = set()
        for w in B.dominant_weights(k):
            assert dominant(w, d, dd) == w and len(orbit(w, d, dd)) == orbit_size(w, d, dd)
            for u in orbit(w, d, dd):  # the carrier maps the dominant block onto each block of its orbit
                moved = {next(iter(B.transport({m: 1}, u))) for m in B.monomials(w)}
                assert moved == set(B.monomials(u)) and len(B.monomials(u)) == B.size(u)
                seen.update(B.monomials(u))
        assert len(seen) == math.comb(B.n + k - 1, k)


def test_dimensions_are_the_hilbert_function_of_m(two_two):
    """dim I(M)_k = monomials - rank of the evaluation over Q, block by block (no prime anywhere)."""
    arch = two_two.arch
    B = Blocks(*arch.widths)
    rng = random.Random(1)
    for row in two_two.degrees[:3]:
        k = row["degree"]
        total = sum(orbit_size(w, *arch.widths) * (len(ms) - _exact_rank_at_points(arch, ms, rng))
                    for w in B.dominant_weights(k) for ms in [B.monomials(w)])
        assert total == row["dimension"]


def test_every_generator_vanishes_and_none_is_redundant(rank_one, two_two):
    """Vanishing by composition; minimality by the elimination's own minimal-generator routine (another code path)."""
    for eq in (rank_one, two_two):
        names, phi = parametrization(eq.arch)
        ctx = ring(names)
        gens = eq.generators()
        assert len(gens) == sum(eq.minimal_generators_by_degree.values())
        assert all(g.compose(*phi, ctx=ctx) == 0 for g in gens)
        kept = Ideal(gens, tuple(eq.coordinates)).minimal_generators(_multidegree(*eq.arch.widths))
        assert len(kept) == len(gens)


@pytest.mark.msolve
@pytest.mark.parametrize("widths,rank,K", [((2, 1), 1, 3), ((2, 1), 2, 4), ((2, 2), 1, 3), ((2, 2), 2, 4),
                                            ((3, 1), 1, 3)])
def test_elimination_and_degree_by_degree_give_the_same_generators(widths, rank, K):
    arch = Architecture(widths, (rank,), tokens=2)
    graded = graded_equations(arch, K)
    elim = implicit_equations(arch)
    leads = [g.monoms()[0] for g in elim.equations]
    n = len(elim.ideal.variables)
    for row in graded.degrees:  # the Hilbert function of <G> (the Groebner basis of I(M)) in every degree <= K
        assert row["dimension"] == row["monomials"] - staircase_count(leads, n, row["degree"])
    low = {k: v for k, v in elim.minimal_generators_by_degree.items() if int(k) <= K}
    assert graded.minimal_generators_by_degree == low
    assert all(elim.ideal.contains(g) for g in graded.generators())
    assert all(graded.spans(g) for g in elim.minimal_generators if g.total_degree() <= K)


@pytest.mark.slow
@pytest.mark.msolve
def test_elimination_agrees_at_widths_3_1_rank_2():
    arch = Architecture((3, 1), (2,), tokens=2)
    graded = graded_equations(arch, 4)
    elim = implicit_equations(arch)
    assert graded.minimal_generators_by_degree == elim.minimal_generators_by_degree == {"3": 30, "4": 90}
    assert all(graded.spans(g) for g in elim.minimal_generators)


def test_membership_is_refused_beyond_the_certified_degrees(rank_one):
    c = rank_one.generators()[0].context().gens()
    assert rank_one.spans(c[0] * rank_one.generators()[0])
    with pytest.raises(InvalidInputError, match="beyond the certified degrees"):
        rank_one.spans(c[0] ** 4)


def test_the_checker_accepts_and_claims_the_counts(rank_one, two_two):
    claim = check_certificate(two_two.to_json()).claim
    assert "dim I_k = 0, 5, 60, 390" in claim and "5 of degree 2, 10 of degree 4" in claim
    assert check_certificate(rank_one.to_json()).claim.startswith("I(M) of widths 2,1, rank 1 in degrees <= 3")


def _first_equation(c):
    return c["generators"][0]["equations"]


def test_tampered_graded_certificates_are_rejected(rank_one, two_two):
    cert = two_two.to_json()
    # an equation that does not vanish on M
    assert_rejected(cert, lambda c: _first_equation(c).__setitem__(0, _first_equation(c)[0] + " + 1/7*"
                                                                   + _first_equation(c)[0].split(" ")[0].lstrip("-")
                                                                   .split("*", 1)[-1]), "vanish|homogeneous")
    # a representative dropped: the block's equations no longer reach the evaluation bound
    assert_rejected(cert, lambda c: c["generators"].pop(), "span|degrees|minimal")
    # a representative twice: redundant
    assert_rejected(cert, lambda c: _first_equation(c).append(_first_equation(c)[0]), "minimal")
    # a product of lower generators offered as a new one: redundant
    quartic = next(g for g in cert["generators"] if sum(g["weight"][:2]) == 4)

    def product(c):
        g = next(g for g in c["generators"] if g["weight"] == quartic["weight"])
        g["equations"].append(str(_product_in(two_two, quartic["weight"])))
    assert_rejected(cert, product, "minimal")
    # counts that are not the recomputed ones
    assert_rejected(cert, lambda c: c["degrees"][1].update(dimension=6), "degrees must be")
    assert_rejected(cert, lambda c: c["minimal_generators_by_degree"].update({"3": 1}), "minimal_generators_by")
    assert_rejected(cert, lambda c: c["degrees"][2].update(minimal_generators=1), "degrees must be")
    # claims about other degrees or coordinates
    assert_rejected(cert, lambda c: c.update(generated_through=5), "generated_through")
    assert_rejected(cert, lambda c: c["coordinates"].reverse(), "coordinates")
    # weights: not dominant, not the equations' weight, repeated
    assert_rejected(cert, lambda c: c["generators"][0].update(weight=c["generators"][0]["weight"][::-1]),
                    "dominant|homogeneous")
    assert_rejected(cert, lambda c: c["generators"].append(copy.deepcopy(c["generators"][0])), "new dominant")
    assert_rejected(cert, lambda c: c["generators"][0].update(equations=[]), "no equation")
    assert_rejected(cert, lambda c: c.update(extra=1), "unknown field")
    # another architecture: the equations of a = 2 are not those of a = 1
    assert_rejected(cert, lambda c: c["architecture"].update(ranks=[1]), "vanish|degrees|span|minimal|evaluation")
    # the rank-one quadrics claimed for degree 2 only: generators of degree 3? none; a degree above the claim
    assert_rejected(rank_one.to_json(), lambda c: c.update(max_degree=1, generated_through=1), "degree <= 1")


def _product_in(eq, weight):
    """``c_i g`` for a quadric ``g``: an honest equation of the block that is not minimal."""
    w = tuple(weight)
    d, dd = eq.arch.widths
    B = Blocks(d, dd)
    for g in eq.generators(2):
        gw = tuple(sum(x) for x in zip(*[B.weights[i] for i, e in enumerate(g.monoms()[0]) for _ in range(e)]))
        rest = tuple(x - y for x, y in zip(w, gw))
        monos = B.monomials(rest) if min(rest) >= 0 else []
        if monos:
            ctx = g.context()
            return ctx.from_dict({tuple(monos[0].count(i) for i in range(B.n)): 1}) * g
    raise AssertionError("no product in this block")


def test_limits_refuse_before_any_work(two_two):
    cert = two_two.to_json()
    with pytest.raises(CertificateFormatError, match="max_degree"):
        check_certificate({**cert, "max_degree": 9, "generated_through": 9})
    big = {**cert, "architecture": {**cert["architecture"], "widths": [9, 3]}, "max_degree": 6, "generated_through": 6}
    with pytest.raises(CertificateFormatError, match="coordinates|limits|variables"):
        check_certificate(big)


def test_bad_input_is_one_line_naming_the_fix():
    with pytest.raises(InvalidInputError, match="max-degree"):
        graded_equations(Architecture((2, 1), (1,), tokens=2), 0)
    with pytest.raises(InvalidInputError, match="from 1 to 8"):
        graded_equations(Architecture((2, 1), (1,), tokens=2), 9)
    with pytest.raises(InvalidInputError, match="lower --max-degree"):
        graded_equations(Architecture((6, 2), (2,), tokens=2), 8)
    with pytest.raises(InvalidInputError, match="t >= 2"):
        graded_equations(Architecture((2, 1), (1,), tokens=1), 2)
    assert max(block_sizes(Architecture((3, 2), (2,), tokens=2), 4)) == 272


def test_exports_and_latex(rank_one):
    # a = d' = 1, d = 2: F = (v y)(A^T y) with a rank-1 A, so I(M) in degree 2 is the 2 x 2 minors of the
    # 2 x 3 coefficient matrix (rows: the two output coordinates p)
    script = rank_one.ideal().export("singular")
    body = script.split("ideal I =")[1].split(";")[0]
    generators = {g.strip() for g in body.split(",")}
    minors = set()
    for i, j in [("11", "12"), ("11", "22"), ("12", "22")]:
        a, b = sorted([f"1*c_1_1_{j}*c_1_2_{i}", f"1*c_1_1_{i}*c_1_2_{j}"])
        minors |= {f"{a}-{b}", f"{b}-{a}"}
    assert len(generators) == 3 and generators <= minors
    assert "R = QQ[c_(1,1,1,1)" in rank_one.ideal().export("m2")
    assert "orbit" in rank_one.latex()
    assert rank_one.jacobian_rank([0] * 6) == 0


def test_equations_of_low_degree_decide_smooth_strata_and_only_smooth_ones():
    """a = d' = 1, d = 3: tangents leave the open stratum undecided; the cubics decide it, quadrics do not."""
    arch = Architecture((3, 1), (1,), tokens=2)
    st = stratify(arch, equations=graded_equations(arch, 3))
    assert [(s.name, s.label) for s in st.strata] == [("zero", "singular"), ("(1,1)", "smooth")]
    check_certificate(st.to_json())
    low = graded_equations(arch, 2)
    assert stratify(arch, equations=low)[(1, 1)].label == "undecided"
    # a parallel point: every equation of degree <= 3 has rank below codim M there, so no verdict from them
    eq = graded_equations(arch, 3)
    parallel = is_singular(arch, special_point(arch, "rank1-parallel", random.Random(0)), equations=eq)
    assert parallel.verdict == "undecided" and "could raise" in parallel.reason
    swap = is_singular(arch, special_point(arch, "rank1-swap", random.Random(0)), equations=eq)
    cert = swap.to_json()
    assert swap.verdict == "smooth" and "graded_certificate" in cert
    assert check_certificate(cert).claim.startswith("smooth point of M (widths 3,1, rank 1): Jacobian of the equations")
    assert_rejected(cert, lambda c: c.update(jacobian_rank=10), "rank")
    assert_rejected(cert, lambda c: c.update(verdict="singular"), "only smooth")
    assert_rejected(cert, lambda c: c.update(graded_certificate=low.to_json()), "only smooth|rank")
    assert_rejected(cert, lambda c: c["point"].__setitem__(0, "7"), "another point")


def test_the_command_line_certifies_exports_and_refuses(tmp_path):
    import contextlib
    import io
    import json

    from attngeo.ui.cli import main

    path = tmp_path / "g.json"
    with contextlib.redirect_stdout(out := io.StringIO()):
        code = main(["implicit", "--widths", "2,1", "--ranks", "1", "--max-degree", "2", "--certificate", str(path)])
    text = out.getvalue()
    assert code == 0 and "3 of degree 2" in text
    assert "not proved: that I(M) has no minimal generator of degree > 2" in text
    assert check_certificate(str(path)).claim.startswith("I(M) of widths 2,1, rank 1 in degrees <= 2")
    with contextlib.redirect_stdout(out := io.StringIO()):
        assert main(["implicit", "--widths", "2,1", "--ranks", "1", "--max-degree", "2", "--json"]) == 0
    record = json.loads(out.getvalue())
    assert record["minimal_generators_by_degree"] == {"2": 3} and len(record["representatives"]) == 2
    with contextlib.redirect_stdout(out := io.StringIO()):
        assert main(["implicit", "--widths", "2,1", "--ranks", "1", "--max-degree", "2", "--export", "singular"]) == 0
    assert out.getvalue().count("*c_1_2_") == 6  # the three quadrics, every one of them (two terms each)
    with contextlib.redirect_stderr(err := io.StringIO()):
        assert main(["implicit", "--widths", "2,1", "--ranks", "1", "--max-degree", "9"]) == 2
    assert err.getvalue().count("\n") == 1 and "from 1 to 8" in err.getvalue()


def test_blocks_are_counted_in_closed_form_without_listing_a_coordinate():
    """Burnside's count equals the listing where both run, covers every monomial once by orbits where listing would
    be slow, and refuses widths 64,64 from the count of coordinates alone (it once listed 8.5e6 of them: 6 GB)."""
    for d, dd, k in ((2, 2, 3), (3, 1, 4), (3, 2, 3), (2, 3, 3)):
        B = Blocks(d, dd)
        for w in B.dominant_weights(k):
            assert block_size(w, d, dd) == len(B.monomials(w)) == B.size(w)
    for d, dd, k in ((8, 1, 4), (4, 4, 3), (1, 300, 5)):
        n = coordinate_count(d, dd)
        assert sum(orbit_size(w, d, dd) * block_size(w, d, dd) for w in dominant_weights(k, d, dd)) \
            == math.comb(n + k - 1, k)
    start = time.monotonic()
    with pytest.raises(InvalidInputError, match="8,519,680 coordinates"):
        memory_estimate(Architecture((64, 64), (4,), tokens=2), 2)
    with pytest.raises(InvalidInputError, match="lower --max-degree"):
        block_sizes(Architecture((8, 1), (2,), tokens=2), 5)
    assert time.monotonic() - start < 5
