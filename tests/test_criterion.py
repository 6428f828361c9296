"""Theorem C (docs/math.md §8.3): a softmax layer's local rank from ranks, against direct Jacobian ranks; its
certificates (``local-rank`` with a ``criterion`` witness, ``dimension`` at the criterion point) under attack.

The direct rank is a Jacobian minor at the point whose determinant ball excludes 0 (a certified lower bound,
computed by the ball path, never by Theorem C); the full comparison (200 random and 50 degenerate points) is
``proofs/softmax_criterion.py --full`` and the ``slow`` test below.
"""

import copy
import importlib.util
import random
from pathlib import Path

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exceptions import AttngeoError
from attngeo.geometry.loci.regularity import ball_rank, local_rank
from attngeo.model.scale import ScoreScale

SCRIPT = Path(__file__).resolve().parent.parent / "proofs" / "softmax_criterion.py"


def _script():
    spec = importlib.util.spec_from_file_location("softmax_criterion", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _arch(d=4, dd=4, a=2, h=2, g=2, b=2, **kw):
    return Architecture((d, dd), (a,), tokens=kw.pop("tokens", 2), normalization=kw.pop("normalization", "softmax"),
                        heads=h, kv_heads=g, value_ranks=b, **kw)


def _point(arch, seed=0):
    rng = np.random.default_rng(seed)
    return [int(x) for x in rng.integers(-3, 4, arch.parameter_count)]


@pytest.mark.parametrize("kw, scale", [
    (dict(), None), (dict(biases=True), ScoreScale.inverse_sqrt(2)), (dict(h=4, g=2, a=1, b=1, d=6, dd=6, tokens=3,
                                                                        causal=True), ScoreScale.inverse_sqrt(3)),
    (dict(h=2, g=1, a=1, b=1, biases=True, residual=True), None)], ids=["plain", "biases", "gqa-causal", "gqa-res"])
def test_theorem_c_equals_the_direct_ball_rank_at_a_random_point(kw, scale):
    arch = _arch(**kw)
    w = _point(arch, 5)
    res = local_rank(arch, w, dimension=False, scale=scale, jacobian=False)
    assert res.lower_witness == {"criterion": {"groups": list(range(1, arch.kv_heads[0] + 1))}}
    n = arch.heads[0] // arch.kv_heads[0]
    a, b, g = arch.ranks[0], arch.value_ranks[0], arch.kv_heads[0]
    assert res.lower == res.upper == arch.parameter_count - g * (a * a + b * b + (a + b if arch.biases else 0))
    assert ball_rank(arch, w, scale=scale, target=res.upper)[0] == res.lower
    assert check_certificate(res.to_json()).claim.startswith(f"local rank {res.lower} = dim M")
    assert n >= 1


def test_the_direct_rank_lies_in_the_bounds_at_degenerate_points():
    mod = _script()
    outs = list(mod.outcomes(False, 3))
    assert len(outs) == 10 and all(not o.failed for o in outs)


@pytest.mark.slow
def test_two_hundred_random_and_fifty_degenerate_points_agree():
    outs = list(_script().outcomes(True, 0))
    bad = [o.row for o in outs if o.failed]
    assert len(outs) == 250 and not bad, bad


def test_the_lightning_gqa_count_is_the_jacobian_rank():
    """Lightning with shared keys: ``P - g(a^2 + b^2 + n^2)`` (the mixing gl_n of each group), against the exact
    Jacobian rank mod p at the point (model/untied.py's folded Jacobian)."""
    arch = _arch(6, 6, 1, 4, 2, 1, normalization="lightning", tokens=3)
    w = _point(arch, 8)
    crit = local_rank(arch, w, dimension=False, jacobian=False)
    jac = local_rank(Architecture((6, 6), (1,), tokens=3, heads=4, kv_heads=2, value_ranks=1), w, dimension=False)
    assert crit.lower == crit.upper == arch.parameter_count - 2 * (1 + 1 + 4) == jac.lower


# -- attacks on the criterion witness ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def honest():
    arch = _arch(biases=True)
    rng = np.random.default_rng(1)
    w = [int(x) for x in rng.integers(-9, 10, arch.parameter_count)]
    res = local_rank(arch, w, dimension=False, scale=ScoreScale.inverse_sqrt(2), jacobian=False)
    assert res.lower_witness == {"criterion": {"groups": [1, 2]}}
    return res.to_json()


def _rejected(cert, match=None):
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(cert)


def test_the_honest_certificate_is_valid(honest):
    claim = check_certificate(honest).claim
    assert "scores x 1/sqrt(2)" in claim and "(regular)" in claim


@pytest.mark.parametrize("change, match", [
    (lambda c: c.update(lower=c["lower"] - 1), "lower"),
    (lambda c: c.update(upper=c["upper"] + 1), "upper"),
    (lambda c: c["lower_witness"]["criterion"].update(groups=[2, 1]), "increasing"),
    (lambda c: c["lower_witness"]["criterion"].update(groups=[1, 3]), "among"),
    (lambda c: c["lower_witness"]["criterion"].update(groups=[True]), "among"),
    (lambda c: c.update(lower_witness={"heads": [1, 2]}), "Theorem S"),
    (lambda c: c["architecture"].update(tokens=1), "t >= 2"),
    (lambda c: c["architecture"].update(normalization="lightning"), None),
    (lambda c: c["architecture"].pop("biases"), "parameters"),
    (lambda c: c.update(scale="1/sqrt(4)"), "square-free"),
    (lambda c: c.update(scale="0"), "scale"),
    (lambda c: c.update(scale=0.125), "scale"),
    (lambda c: c.update(scale="1/8; rm -rf"), "scale"),
    (lambda c: c.update(orbit_dimension=c["orbit_dimension"] - 1), "orbit"),
    (lambda c: c.update(regular=None), "regular"),
], ids=lambda x: getattr(x, "__name__", str(x))[:30])
def test_tampered_criterion_certificates_are_rejected(honest, change, match):
    cert = copy.deepcopy(honest)
    change(cert)
    _rejected(cert, match)


def test_the_criterion_is_refused_where_a_condition_fails():
    """Equal queries break (C2): a witness claiming both heads is rejected, naming the condition."""
    arch = _arch()
    w = [int(x) for x in np.random.default_rng(2).integers(-9, 10, arch.parameter_count)]
    blocks = {(b.head, b.name): b for b in arch.blocks()}
    q1, q2 = blocks[(1, "Q")], blocks[(2, "Q")]
    w[q2.offset:q2.offset + q2.size] = w[q1.offset:q1.offset + q1.size]
    res = local_rank(arch, w, dimension=False)
    cert = res.to_json()
    assert res.lower < arch.parameter_count - 16 or "ball" in res.lower_witness
    forged = dict(cert, lower_witness={"criterion": {"groups": [1, 2]}}, lower=48, upper=48, regular=True,
                  generic=[48, 48], orbit_dimension=16)
    _rejected(forged, r"\(C2\)")


def test_theorem_c_is_refused_beyond_its_hypotheses_and_for_lightning_biases():
    wide = _arch(4, 4, 3, 2, 2, 2)  # h a = 6 > d
    cert = local_rank(wide, _point(wide), dimension=False, jacobian=False).to_json()
    _rejected(dict(cert, lower_witness={"criterion": {"groups": [1, 2]}}), "h a <= d")  # a sub-layer of one fits
    light = _arch(normalization="lightning", biases=True)
    res = local_rank(light, _point(light, 4), dimension=False, jacobian=False)
    assert res.lower < res.upper  # Theorem C does not decide lightning with biases
    forged = dict(res.to_json(), upper=res.lower, regular=True)
    _rejected(forged, "upper")


def test_a_ball_witness_is_replayed_with_the_recorded_scale():
    """The scale enters the ball replay: the same certificate with another scale does not verify."""
    arch = _arch(3, 3, 2, 1, 1, 2, biases=True)
    w = _point(arch, 6)
    w[:6] = [1, 2, 3, 2, 4, 6]  # Q of rank 1: (C2) fails, a ball minor bounds the local rank
    res = local_rank(arch, w, dimension=False, scale=ScoreScale.inverse_sqrt(3))
    assert "ball" in res.lower_witness and res.lower > arch.widths[1]
    cert = res.to_json()
    check_certificate(cert)
    _rejected(dict(cert, scale="1/sqrt(2)"))


# -- the criterion point: dim M at full width -------------------------------------------------------------


@pytest.mark.parametrize("arch", [
    Architecture((64, 64), (8,), heads=8, value_ranks=8, normalization="softmax"),
    Architecture((48, 48), (8,), heads=6, kv_heads=2, value_ranks=8, normalization="softmax", biases=True),
    Architecture((12, 12), (1,), heads=4, kv_heads=2, value_ranks=1),  # lightning GQA: P - g(a^2 + b^2 + n^2)
    Architecture((3, 3), (1,), heads=3, value_ranks=1, normalization="softmax")], ids=str)
def test_the_criterion_point_certifies_dim_and_meets_a_random_point(arch):
    cert = certify_dimension(arch, seed=0)
    n = arch.heads[0] // arch.kv_heads[0]
    a, b, g = arch.ranks[0], arch.value_ranks[0], arch.kv_heads[0]
    group = a * a + b * b + (n * n if arch.normalization == "lightning" else (a + b if arch.biases else 0))
    assert cert.certified and cert.dimension == arch.parameter_count - g * group
    assert cert.lower_witness.get("structured") == "criterion point" or arch.parameter_count < 100
    check_certificate(cert.to_json())
    # an independent witness: the local rank at a random point cannot exceed dim M
    assert local_rank(arch, _point(arch, 9), dimension=False, jacobian=False).lower <= cert.dimension


@pytest.mark.parametrize("change, match", [
    (lambda c: c["lower_witness"].update(groups=[1]), "proves"),
    (lambda c: c["lower_witness"].update(rank=c["lower_witness"]["rank"] + 1), "proves"),
    (lambda c: c.update(upper=c["upper"] + 1, certified=False, dimension=None), "upper"),
    (lambda c: c["upper_witness"].update(rank=0), "explicit kernel"),
    (lambda c: c["lower_witness"].update(extra=1), None),
    (lambda c: c["architecture"].update(tokens=1), "t >= 2"),
    (lambda c: c["architecture"].update(heads=[5], kv_heads=[1]), None),
], ids=range(7))
def test_tampered_criterion_point_certificates_are_rejected(change, match):
    cert = certify_dimension(Architecture((16, 16), (4,), heads=4, kv_heads=2, value_ranks=4,
                                          normalization="softmax"), seed=1).to_json()
    change(cert)
    with pytest.raises(AttngeoError, match=match):
        check_certificate(cert)


def test_a_tied_layer_cannot_borrow_an_untied_upper_witness():
    tied = certify_dimension(Architecture((3, 3), (1,), biases=True), seed=0).to_json()
    plain = certify_dimension(Architecture((3, 3), (1,)), seed=0).to_json()
    _rejected(dict(tied, upper_witness=plain["upper_witness"]), "explicit-kernel")
    assert random.Random(0)  # the witnesses above are seeded: the attack is reproducible


def test_only_witnesses_that_rank_with_flint_take_widths_beyond_the_int64_limit():
    """Widths above 2047 would overflow the dense checker's int64 sums; Theorem C's ranks are FLINT's, so its
    witnesses may be as wide as LLaMA-7B's 4096 (and no wider than MAX_WIDE_SIZE)."""
    from attngeo.check.arch import architecture
    from attngeo.check.limits import MAX_SIZE, MAX_WIDE_SIZE

    cert = {"kind": "dimension", "architecture": {"widths": [4096, 4096], "ranks": [128], "tokens": 2,
                                                  "normalization": "softmax", "heads": [32], "value_ranks": [128]}}
    with pytest.raises(CertificateRejected, match=f"above {MAX_SIZE}"):
        architecture(cert)
    assert architecture(cert, wide=True).parameters == 32 * (2 * 128 * 4096 + 128 * 8192)
    cert["architecture"]["widths"] = [MAX_WIDE_SIZE + 1, 4096]
    with pytest.raises(CertificateRejected, match=f"above {MAX_WIDE_SIZE}"):
        architecture(cert, wide=True)
    dense = certify_dimension(Architecture((3, 3), (2,), normalization="softmax"), seed=0).to_json()
    dense["architecture"]["widths"] = [3000, 3000]  # a dense (ball) witness keeps the int64 limit
    _rejected(dense, f"above {MAX_SIZE}")
