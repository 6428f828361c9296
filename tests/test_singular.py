"""Singular and smooth points of single-layer neuromanifolds: verdicts and their certificates."""

import random

import pytest
from flint import fmpq_mat

from conftest import assert_rejected

from attngeo import Architecture, check_certificate
from attngeo.geometry.fibers.layer import special_point
from attngeo.geometry.loci.singular import is_singular, tangent_image


@pytest.mark.parametrize("shape", [(2, 2, 2), (3, 2, 2), (3, 3, 1), (4, 2, 3)])
def test_verdicts_follow_the_theorem_where_the_criteria_reach(shape):
    d, dd, a = shape
    arch = Architecture((d, dd), (a,), tokens=2)
    rng = random.Random(sum(shape))
    assert is_singular(arch, special_point(arch, "random", rng)).verdict == "smooth"
    assert is_singular(arch, special_point(arch, "rank1-swap", rng)).verdict == "singular"
    assert is_singular(arch, special_point(arch, "zero", rng)).verdict == "singular"


def test_the_tangent_image_at_a_generic_point_has_rank_dim_m():
    arch = Architecture((3, 2), (2,), tokens=2)
    v = is_singular(arch, special_point(arch, "random", random.Random(0)))
    Q, K, V = v.preimages[0]
    assert tangent_image(Q, K, V).rank() == v.dimension == v.span


@pytest.mark.parametrize("d,dd,a,r", [(3, 2, 2, 1), (3, 3, 2, 1), (4, 2, 2, 1), (4, 2, 3, 1), (4, 2, 3, 2),
                                       (4, 3, 3, 1), (4, 3, 3, 2)])
def test_rank_deficient_attention_is_singular_for_1_lt_a_lt_d(d, dd, a, r):
    """docs/math.md §2.4 (once an open point): A of rank r < a < d, V generic — certified singular here."""
    rng = random.Random(d * 100 + a * 10 + r)
    Q = [[rng.randint(-3, 3) for _ in range(d)] if i < r else [0] * d for i in range(a)]
    K = [[rng.randint(-3, 3) for _ in range(d)] if i < r else [0] * d for i in range(a)]
    V = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(dd)]
    arch = Architecture((d, dd), (a,), tokens=2)
    assert (fmpq_mat(K).transpose() * fmpq_mat(Q)).rank() == r
    v = is_singular(arch, [[Q, K, V]], extra=6)
    assert v.verdict == "singular" and v.span > v.dimension
    assert "singular point" in check_certificate(v.to_json()).claim


def test_a1_dd1_swap_points_are_not_called_singular():
    """With a = 1, d' = 1 the swap is the generic fiber: its two branches map onto one smooth sheet."""
    arch = Architecture((2, 1), (1,), tokens=2)
    v = is_singular(arch, special_point(arch, "random", random.Random(2)))
    assert v.span == v.dimension and v.verdict != "singular"


@pytest.fixture(scope="module")
def certificates():
    arch = Architecture((3, 2), (2,), tokens=2)
    rng = random.Random(5)
    return {kind: is_singular(arch, special_point(arch, kind, rng)).to_json()
            for kind in ("random", "rank1-swap", "rank1-parallel")}


def test_honest_singular_point_certificates_verify(certificates):
    assert "smooth" in check_certificate(certificates["random"]).claim
    assert "singular" in check_certificate(certificates["rank1-swap"]).claim
    assert "undecided" in check_certificate(certificates["rank1-parallel"]).claim


def _bump_preimage(c):
    c["preimage_weights"][0][2][0][0] = str(int(c["preimage_weights"][0][2][0][0].split("/")[0]) + 1)


TAMPERINGS = {
    ("rank1-swap", "inflated span"): lambda c: c.update(span=c["span"] + 1),
    ("rank1-swap", "dropped preimage"): lambda c: c.update(preimage_weights=c["preimage_weights"][:1], span=c["span"]),
    ("rank1-swap", "altered preimage"): _bump_preimage,
    ("rank1-swap", "smaller dimension"): lambda c: c.update(dimension=c["dimension"] - 1),
    ("rank1-swap", "tampered dimension certificate"): lambda c: c["dimension_certificate"].update(upper=1),
    ("random", "smooth called singular"): lambda c: c.update(verdict="singular"),
    ("random", "fiber of another point"): lambda c: c["fiber_certificate"].update(
        point=c["fiber_certificate"]["point"][::-1]),
    ("rank1-parallel", "undecided called smooth"): lambda c: c.update(verdict="smooth", certified=True),
    ("rank1-parallel", "undecided claimed certified"): lambda c: c.update(certified=True),
}


@pytest.mark.parametrize("key", sorted(TAMPERINGS))
def test_tampered_singular_point_certificates_are_rejected(certificates, key):
    kind, _ = key
    assert_rejected(certificates[kind], TAMPERINGS[key])


def test_smooth_needs_the_quotient_dimension(certificates):
    """A smooth claim over a dimension certificate of another value must fail."""
    def shrink(c):
        c["dimension"] = c["dimension"] - 1
    assert_rejected(certificates["random"], shrink)
