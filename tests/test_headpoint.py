"""Multi-head single layers at the head point: the graded block rank is the generic rank, and its certificate is checked."""

import copy

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.check.arch import Arch
from attngeo.check.dimension.headpoint import head_rank
from attngeo.exact.rank import rank_mod_p
from attngeo.geometry.dimension import dense as dense_module
from attngeo.geometry.dimension.headpoint import applies, block_rank, certify_heads, head_point, preferred
from attngeo.model.jacobian import jacobian_mod_p

P_ = 67108859

# (d, a, heads, value rank or None, flags): heads, value bottlenecks, masks and residual connections
SIZES = [(6, 2, 2, None, {}), (8, 2, 3, None, {"causal": True}), (6, 2, 2, 2, {"residual": True}),
         (8, 2, 4, 2, {}), (9, 3, 3, 3, {"causal": True}), (6, 1, 4, None, {}), (8, 4, 2, None, {}),
         (8, 2, 1, 3, {}), (5, 2, 1, None, {"residual": True}), (7, 3, 2, 2, {"causal": True, "residual": True})]


def _arch(d, a, h, b, flags, tokens=2):
    return Architecture((d, d), (a,), tokens=tokens, heads=h, value_ranks=b, **flags)


def _checker_arch(arch):
    return Arch(arch.widths, arch.ranks, arch.tokens, heads=arch.heads, value_ranks=arch.value_ranks,
                residual=arch.residual, causal=arch.causal)


@pytest.mark.parametrize("d,a,h,b,flags", SIZES)
def test_the_head_point_reaches_the_rank_of_a_random_point(d, a, h, b, flags):
    arch = _arch(d, a, h, b, flags)
    heads, dense = certify_heads(arch, seed=1), certify_dimension(arch, seed=1)  # small: the dense path
    assert heads.lower <= dense.upper and dense.lower <= heads.upper  # both are valid bounds on the same number
    assert heads.certified and dense.certified and heads.dimension == dense.dimension
    assert check_certificate(heads.to_json()).claim == check_certificate(dense.to_json()).claim


@pytest.mark.parametrize("d,a,h,b,flags", SIZES[:6] + [(6, 3, 3, 2, {}), (4, 4, 2, 2, {})])
def test_the_coefficient_rank_is_the_network_jacobian_rank_at_the_head_point(d, a, h, b, flags):
    """The sparse listing against the network itself: enough random inputs see every coefficient of F."""
    arch = _arch(d, a, h, b, flags, tokens=3)
    rng = np.random.default_rng(0)
    X = rng.integers(-5, 6, (arch.parameter_count // 6 + 10, d, 3))
    dense = rank_mod_p(jacobian_mod_p(arch, head_point(arch), X, P_), P_)
    assert block_rank(arch, P_)[0] == dense


@pytest.mark.parametrize("d,a,h,b,flags", SIZES + [(6, 3, 3, 2, {}), (4, 4, 2, 2, {}), (16, 4, 4, None, {})])
def test_prover_and_checker_rank_the_same_blocks(d, a, h, b, flags):
    arch = _arch(d, a, h, b, flags)
    assert block_rank(arch, P_) == head_rank(_checker_arch(arch), P_)


def test_where_the_head_point_is_degenerate_the_dense_path_decides(monkeypatch):
    arch = _arch(6, 3, 3, 2, {})  # 3 heads of rank 3 in width 6 overlap: the head point falls short
    heads = certify_heads(arch, seed=0)
    assert not heads.certified and heads.lower < heads.upper
    assert "<= dim M <=" in check_certificate(heads.to_json()).claim  # an honest bound, checked as such
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 1)
    cert = certify_dimension(arch, seed=0)
    assert cert.certified and cert.dimension == heads.upper and "structured" not in cert.lower_witness


def test_large_multihead_layers_take_the_head_path_and_check():
    arch = Architecture((32, 32), (8,), heads=4, causal=True, tokens=3)
    assert dense_module.plan(arch)[0][0] == "head point"  # the dense path is estimated slower
    cert = certify_dimension(arch, seed=0)
    assert cert.lower_witness["structured"] == "head point" and cert.certified
    assert cert.dimension == arch.parameter_count - 4 * (8 * 8 + 1)  # the groups explain the fiber here
    assert check_certificate(cert.to_json()).claim.startswith(f"dim M = {cert.dimension} ")
    assert dense_module.estimate(arch)[0] == "structured"


def test_the_path_applies_only_to_single_lightning_layers_beyond_hmk():
    assert applies(_arch(6, 2, 2, None, {})) and applies(_arch(6, 2, 1, None, {"causal": True}))
    for arch in (Architecture((6, 6), (2,), tokens=2),  # [HMK]'s model: the plain point
                 _arch(6, 2, 2, None, {}, tokens=1), Architecture((6, 5), (2,), heads=2),
                 Architecture((6, 6, 6), (2, 2), heads=2), Architecture((6, 6), (2,), heads=2, normalization="softmax"),
                 Architecture((4, 4), (2,), heads=2, value_ranks=5)):
        assert not applies(arch)
    assert not preferred(Architecture((8, 8), (8,), heads=2), 0)  # a >= d: the mixing kernel fields


@pytest.fixture(scope="module")
def heads():
    return certify_heads(Architecture((8, 8), (2,), heads=3, value_ranks=2, tokens=2), seed=0).to_json()


def _relabel(c, **changes):
    """Change the architecture and keep the parameter count consistent, so only the witness can refuse it."""
    a = c["architecture"]
    a.update(changes)
    d, h, r = a["widths"][0], a.get("heads", [1])[0], a["ranks"][0]
    b = a.get("value_ranks", [None])[0]
    c["parameters"] = h * (2 * r * d + (d * d if b is None else 2 * b * d))


@pytest.mark.parametrize("tamper", [
    lambda c: c.update(lower=c["lower"] + 1),
    lambda c: c["lower_witness"].update(rank=c["lower_witness"]["rank"] + 1),
    lambda c: c.update(lower=c["lower"] - 1, certified=False, dimension=None) or c["lower_witness"].update(
        rank=c["lower_witness"]["rank"] - 1),
    lambda c: c["lower_witness"].update(blocks=c["lower_witness"]["blocks"] + 1),
    lambda c: c["lower_witness"].update(largest_block=c["lower_witness"]["largest_block"] + 1),
    lambda c: c["lower_witness"].update(structured="plain point"),
    lambda c: c["lower_witness"].update(inputs=[]),
    lambda c: c["upper_witness"].update(determinant=(c["upper_witness"]["determinant"] + 2) % c["upper_witness"]["prime"]),
    lambda c: c["upper_witness"].update(field_rank=c["upper_witness"]["field_rank"] - 1),
    lambda c: c["upper_witness"]["families"].pop(),
    lambda c: c["upper_witness"]["families"].reverse(),
    lambda c: c["upper_witness"].update(columns=c["upper_witness"]["columns"][::-1]),  # not triangular
    lambda c: c["upper_witness"]["columns"].__setitem__(0, 1),  # Q_1[0, 1]: no intra field's K entry
    lambda c: c["upper_witness"].update(point=[0]),
    lambda c: c.update(upper=c["upper"] - 1),
    lambda c: _relabel(c, heads=[2]),
    lambda c: _relabel(c, heads=[4]),
    lambda c: _relabel(c, value_ranks=[1]),
    lambda c: _relabel(c, value_ranks=[3]),
    lambda c: (c["architecture"].pop("value_ranks"), _relabel(c)),
    lambda c: _relabel(c, ranks=[3]),
    lambda c: c["architecture"].update(tokens=1),
    lambda c: c["architecture"].update(normalization="softmax"),
])
def test_tampered_head_point_certificates_are_rejected(heads, tamper):
    bad = copy.deepcopy(heads)
    tamper(bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)


def test_a_head_point_witness_does_not_speak_for_hmk_layers():
    cert = certify_heads(Architecture((6, 6), (2,), heads=1, causal=True, tokens=2), seed=0).to_json()
    assert check_certificate(cert).claim.startswith("dim M = ")
    plain = copy.deepcopy(cert)
    plain["architecture"].pop("causal")  # one head, no mask: [HMK]'s layer, whose witness is the plain point
    with pytest.raises(CertificateRejected, match="plain point"):
        check_certificate(plain)


@pytest.mark.parametrize("flag", ["causal", "residual"])
def test_a_mask_or_residual_relabel_proves_the_relabelled_claim(heads, flag):
    """The mask and the residual connection do not change the coefficient map W -> F, so the same blocks and
    fields prove the same dimension for the relabelled layer; the checker recomputes it and names that layer."""
    cert = copy.deepcopy(heads)
    cert["architecture"][flag] = True
    claim = check_certificate(cert).claim
    assert claim.startswith(f"dim M = {heads['dimension']} ") and flag in claim
    dense = certify_dimension(Architecture((8, 8), (2,), heads=3, value_ranks=2, tokens=2, **{flag: True}), seed=0)
    assert dense.dimension == heads["dimension"]


def test_a_huge_head_point_claim_is_refused_at_once():
    import time

    from attngeo import CertificateFormatError

    d, h = 2047, 8  # 33.5 million parameters: within the reader's limit, above the head point's
    P = h * (2 * d + d * d)
    cert = {"format": "attngeo-certificate", "version": 2, "kind": "dimension",
            "architecture": {"widths": [d, d], "ranks": [1], "tokens": 2, "normalization": "lightning",
                             "heads": [h]},
            "parameters": P, "lower": 0, "upper": P, "certified": False, "dimension": None,
            "lower_witness": {"structured": "head point", "prime": P_, "rank": 0, "blocks": 0, "largest_block": 0},
            "upper_witness": {"structured": "head point", "prime": P_, "families": [], "field_rank": 0,
                              "columns": [], "determinant": 0}}
    start = time.monotonic()
    with pytest.raises(CertificateFormatError, match="limits"):
        check_certificate(cert)
    assert time.monotonic() - start < 5
