"""Every checker checks the hypotheses of the theorem it applies, not only the numbers (issue 34).

docs/trust.md's table names, per certificate kind, the theorem, its hypotheses and the function that checks each.
Here every hypothesis class of the issue is attacked: an honest certificate relabelled so that the hypothesis fails
(one token; a causal mask or a residual connection toggled, in the outer certificate and the embedded ones alike;
``a > d``; ``h a > d``; lightning and softmax exchanged; a normalizer the checker cannot evaluate). A relabelled
certificate is refused by the hypothesis, as the message says, or else the checker recomputed its claim for the
architecture it names and the claim is true: an independent Jacobian here confirms it.
"""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest
from flint import nmod_mat

from attngeo import Architecture, CannotVerify, CertificateRejected, check_certificate
from attngeo.exceptions import CertificateFormatError
from test_multihead_attacks import _Dual, _arch_dict, _network, _parameter_count, generic_rank
from test_stack_attacks import _own_rank, _point_of

REFUSED = (CertificateRejected, CertificateFormatError)


def _json(cert) -> dict:
    return json.loads(json.dumps(cert.to_json()))


def _separated_point(arch, seed=1) -> list:
    """A random point (quarters) of a multi-head layer: its heads are separated (Theorem S) with probability 1."""
    return [f"{random.Random(seed * 1000 + k).randint(-9, 9)}/4" for k in range(arch.parameter_count)]


@pytest.fixture(scope="module")
def certs() -> dict:
    from attngeo import certify_dimension
    from attngeo.geometry.dimension.headpoint import certify_heads
    from attngeo.geometry.dimension.identitypoint import certify_deep
    from attngeo.geometry.dimension.plainpoint import certify_structured
    from attngeo.geometry.dimension.stackpoint import certify_stack
    from attngeo.geometry.fibers.layer import fiber, special_point
    from attngeo.geometry.fibers.virtual import virtual_fiber
    from attngeo.geometry.loci.boundary import is_boundary_point
    from attngeo.geometry.loci.graded import graded_equations
    from attngeo.geometry.loci.rankone import rank_one_ideal
    from attngeo.geometry.loci.regularity import local_rank
    from attngeo.geometry.loci.singular import is_singular
    from attngeo.geometry.loci.strata import stratify

    small, wide = Architecture((2, 2), (1,), tokens=2), Architecture((2, 2), (2,), tokens=2)
    heads = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    stack = dict(heads=2, value_ranks=2, residual=True, causal=True)
    out = {
        "fiber": fiber(small, special_point(small, "random", random.Random(1))),
        "singular-point": is_singular(small, special_point(small, "random", random.Random(1))),
        "boundary-point": is_boundary_point(wide, special_point(wide, "random", random.Random(1))),
        "strata": stratify(small, seed=0),
        "implicit-graded": graded_equations(Architecture((2, 1), (1,), tokens=2), 2),
        "implicit-rank-one": rank_one_ideal(Architecture((3, 1), (1,), tokens=2)),
        "virtual-fiber": virtual_fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=1),
        "dense": certify_dimension(Architecture((2, 2, 2), (1, 2), tokens=2, heads=2, value_ranks=1), seed=1),
        "dense-softmax": certify_dimension(Architecture((2, 2), (1,), 2, "softmax"), seed=1),
        "plain point": certify_structured(Architecture((6, 5), (3,), tokens=2), seed=1),
        "head point": certify_heads(Architecture((6, 6), (2,), heads=2, value_ranks=2), seed=0),
        "identity values": certify_deep(Architecture((5, 5, 5), (2, 2), tokens=2), seed=0),
        "stack point": certify_stack(Architecture((4, 4, 4), (2, 2), **stack), seed=0),
        "stack point softmax": certify_stack(Architecture((4, 4, 4), (2, 2), normalization="softmax", **stack),
                                             seed=0),
        "local-rank": local_rank(heads, _separated_point(heads), seed=1),
        "local-rank embedded": local_rank(heads, _separated_point(heads), seed=1, dimension="always"),
    }
    out = {name: _json(cert) for name, cert in out.items()}
    assert out["local-rank"]["lower_witness"] == {"heads": [1, 2]}
    assert "dimension_certificate" in out["local-rank embedded"]
    return out


def _relabelled(cert: dict, change) -> dict:
    """``cert`` with ``change`` applied to its architecture and to every embedded certificate's bound to it."""
    out = copy.deepcopy(cert)
    original = copy.deepcopy(cert["architecture"])

    def walk(node):
        if isinstance(node, dict):
            if node.get("architecture") == original:
                change(node["architecture"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


def _flag(name):
    def change(arch):
        if arch.pop(name, None) is None:
            arch[name] = True
    return change


def _set(key, value):
    def change(arch):
        arch[key] = value(arch) if callable(value) else value
    return change


def test_the_honest_bases_verify(certs):
    for cert in certs.values():
        check_certificate(copy.deepcopy(cert))


# -- t >= 2: docs/fibers.md Lemma 1 (F determines phi) under every single-layer theorem --------------------------

ONE_TOKEN = ["fiber", "singular-point", "boundary-point", "strata", "implicit-graded", "implicit-rank-one",
             "virtual-fiber", "plain point",
             "head point", "stack point", "stack point softmax", "local-rank"]


@pytest.mark.parametrize("name", ONE_TOKEN)
def test_one_token_is_refused_where_the_theorem_needs_two(certs, name):
    """At t = 1 a layer sees only sym(A) (docs/fibers.md §1): Theorem 1, Lemma B, the coordinates of M, the plain,
    head and stack points, Lemma H and Theorem S all need t >= 2, and each checker says so before any number."""
    with pytest.raises(CertificateRejected, match="t >= 2"):
        check_certificate(_relabelled(certs[name], _set("tokens", 1)))


# -- a <= d and h a <= d: the points and theorems that need them -------------------------------------------------

def _wider_rank(cert: dict) -> dict:
    """Every layer of rank ``d + 1`` (above its input width), the parameter count updated: the numbers add up."""
    from attngeo.check.arch import architecture

    out = _relabelled(cert, _set("ranks", lambda a: [a["widths"][0] + 1] * len(a["ranks"])))
    out["parameters"] = architecture(out).parameters
    return out


@pytest.mark.parametrize("name,match", [("plain point", "a <= d"), ("head point", "a, b <= d"),
                                        ("identity values", "ranks a_i <= d")])
def test_a_rank_above_the_width_is_refused_by_the_structured_points(certs, name, match):
    """The plain point [I_a 0], the head point's selectors and the identity point's lemma exist only for a <= d."""
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(_wider_rank(certs[name]))


def _separated_witness(cert: dict) -> dict:
    """``cert`` with the heads witness naming every head, its lower bound the sum of their I_j (full ranks)."""
    (d, dd), a = cert["architecture"]["widths"], cert["architecture"]["ranks"][0]
    b = cert["architecture"]["value_ranks"][0]
    each = (2 * d * a - a * a) + (dd * b + d * b - b * b) - 1
    h = len(cert["heads"])
    return dict(copy.deepcopy(cert), lower_witness={"heads": list(range(1, h + 1))}, lower=h * each)


@pytest.mark.parametrize("a,b", [(3, 2), (2, 3)], ids=["h a > d", "h b > d'"])
def test_separated_heads_beyond_h_max_a_b_le_d_are_refused(a, b):
    """Theorem S needs h a <= d and h b <= d' (the stacked Q_j and O_j cannot have full rank beyond): two heads of
    rank 3 on d = 4, full-rank heads at a random point, the lower bound the sum of their I_j."""
    from attngeo.geometry.loci.regularity import local_rank

    arch = Architecture((4, 4), (a,), heads=2, value_ranks=b)
    cert = _separated_witness(_json(local_rank(arch, _separated_point(arch, 2), seed=1, dimension=False)))
    assert all(h["rank_Q"] == h["rank_K"] == a and h["rank_U"] == h["rank_O"] == b for h in cert["heads"])
    with pytest.raises(CertificateRejected, match="h a <= d and h b <= d'"):
        check_certificate(cert)


# -- the mask and the residual connection ------------------------------------------------------------------------

def test_a_stack_point_without_its_mask_is_refused_or_a_true_claim(certs):
    """Lemma S and the Proposition of docs/math.md §7.6 hold with or without the causal mask; the lightning witness
    records its inputs and no determinant, so with ``causal`` removed the checker replays the five tiny stacks
    unmasked. Either a block loses rank there (refused) or the claim is a proof for the unmasked stack, and then it
    is the rank of that stack's own Jacobian, computed here without Lemma S. The softmax witness records each
    block's determinant ball, which the unmasked blocks do not meet: refused."""
    cert = _relabelled(certs["stack point"], _flag("causal"))
    assert "causal" not in cert["architecture"]
    try:
        claim = check_certificate(cert).claim
    except CertificateRejected as refused:
        assert "full column rank" in str(refused)
    else:
        d, a, l, t = 4, 2, 2, 2
        P = 4 * l * d * d  # h a = d: 4 h a d per layer
        inputs = np.random.default_rng(0).integers(-50, 50, size=(80, d, t))  # unmasked t = 2 needs more than P / d t
        rank = _own_rank(d, a, l, t, False, 1000003, _point_of(d, a, l), inputs)
        assert claim.startswith(f"dim M = {rank} ") and rank == P - l * (d // a) * (2 * a * a + 1)
    with pytest.raises(CertificateRejected, match="determinant ball"):
        check_certificate(_relabelled(certs["stack point softmax"], _flag("causal")))


def _rank_at(arch: dict, point: list, p: int = 2**61 - 1) -> int:
    """The rank mod p of the layer's Jacobian at ``point`` over random inputs (this file's own dual numbers)."""
    rng = np.random.default_rng(0)
    P = _parameter_count(arch)
    W = _Dual(np.array([x % p for x in point], dtype=object), np.eye(P, dtype=object))
    inputs = P // (arch["widths"][-1] * arch["tokens"]) + 6
    J = np.vstack([_network(arch, W, rng.integers(0, p, (arch["widths"][0], arch["tokens"])).astype(object), p).b
                   .reshape(P, -1).T % p for _ in range(inputs)])
    return nmod_mat(J.shape[0], J.shape[1], [int(x) for x in J.ravel()], p).rank()


@pytest.mark.parametrize("flag", ["causal", "residual"])
def test_separated_heads_under_a_mask_or_a_residual_connection_are_a_true_claim(certs, flag):
    """Theorem S holds for every t >= 2 with a mask or a residual connection (phi = L(F) [+ X], L injective): the
    relabelled heads witness proves the local rank of the relabelled layer, which its own Jacobian confirms."""
    cert = _relabelled(certs["local-rank"], _flag(flag))
    claim = check_certificate(cert).claim
    assert claim.startswith(f"local rank {cert['lower']} = dim M") and flag in claim
    from fractions import Fraction

    point = [4 * Fraction(x) for x in cert["point"]]  # the rank is that of the scaled integer point
    arch = _arch_dict((4, 4), (2,), 2, heads=2, value_ranks=2, **{flag: True})
    assert _rank_at(arch, [int(x) for x in point]) == cert["lower"]


@pytest.mark.parametrize("flag", ["causal", "residual"])
def test_an_embedded_certificate_relabelled_alone_is_refused_and_relabelled_with_its_host_is_rechecked(certs, flag):
    """The embedded dimension certificate is bound to the outer architecture: a mask or a residual connection toggled
    in one of them only is refused. Toggled in both, each is verified for the relabelled architecture: the mask
    changes the embedded Jacobian minor (refused by its determinant); the residual connection does not change a
    single layer's Jacobian, and the generic dimension then proved is the rank of that architecture's Jacobian at
    a random point."""
    cert = certs["local-rank embedded"]
    alone = copy.deepcopy(cert)
    _flag(flag)(alone["dimension_certificate"]["architecture"])
    with pytest.raises(CertificateRejected, match="another architecture"):
        check_certificate(alone)
    both = _relabelled(cert, _flag(flag))
    if flag == "causal":
        with pytest.raises(CertificateRejected, match="determinant"):
            check_certificate(both)
        return
    check_certificate(both)
    embedded = both["dimension_certificate"]
    assert embedded["certified"] and embedded["dimension"] == generic_rank(
        _arch_dict((4, 4), (2,), 2, heads=2, value_ranks=2, **{flag: True}))


@pytest.mark.parametrize("name", ["fiber", "singular-point", "boundary-point", "strata", "implicit-graded",
                                  "implicit-rank-one", "virtual-fiber", "plain point", "identity values"])
@pytest.mark.parametrize("flag", ["causal", "residual", "heads"])
def test_beyond_hmk_is_refused_by_the_kinds_of_hmk_model(certs, name, flag):
    """Theorem 1, Lemma B, the strata and coordinates of M, Lemmas P and A, the plain and identity points are
    [HMK]'s single-head model: a mask, a residual connection or several heads are refused by name."""
    change = _set("heads", lambda a: [2] * len(a["ranks"])) if flag == "heads" else _flag(flag)
    cert = _relabelled(certs[name], change)
    if "parameters" in cert:  # the numbers add up: two heads have twice the weights
        from attngeo.check.arch import Arch

        a = cert["architecture"]
        cert["parameters"] = Arch(tuple(a["widths"]), tuple(a["ranks"]), a["tokens"], heads=tuple(a.get("heads", ())),
                                  ).parameters
    with pytest.raises(CertificateRejected, match="one head per layer|HMK|equal widths"):
        check_certificate(cert)


# -- the normalization -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fiber", "singular-point", "boundary-point", "strata", "implicit-graded",
                                  "implicit-rank-one", "virtual-fiber", "dense", "dense-softmax", "plain point",
                                  "head point",
                                  "identity values", "stack point", "stack point softmax", "local-rank"])
def test_lightning_and_softmax_exchanged_are_refused(certs, name):
    """Every theorem is stated for one normalization: the polynomial lemmas for lightning (a Jacobian mod p), the
    ball witnesses for softmax; the other normalization's certificate is refused."""
    change = _set("normalization", lambda a: "softmax" if a["normalization"] == "lightning" else "lightning")
    with pytest.raises(REFUSED):
        check_certificate(_relabelled(certs[name], change))


@pytest.mark.parametrize("name", ["local-rank", "dense-softmax"])
def test_a_normalizer_the_checker_cannot_evaluate_is_cannot_verify(certs, name):
    """Attack (fixed): a local-rank certificate relabelled ``sparsemax`` with the empty heads witness (lower bound 0)
    was accepted with its upper bound and orbit dimension, about a network the checker cannot evaluate. Every kind
    now says it cannot judge a normalization outside arch.NORMALIZATIONS, before any witness."""
    cert = _relabelled(certs[name], _set("normalization", "sparsemax"))
    if name == "local-rank":
        cert.update(lower_witness={"heads": []}, lower=0, regular=None,
                    generic=[0, cert["parameters"] - cert["orbit_dimension"]])
    with pytest.raises(CannotVerify, match="sparsemax"):
        check_certificate(cert)


# -- a stratum's label: from a point that stands for the stratum ---------------------------------------------

@pytest.mark.msolve
def test_a_stratum_is_not_labelled_singular_by_one_special_point():
    """Attack (fixed): at widths 3,1, a = 1 the stratum (1,1) is smooth at its generic (swap) points and singular at
    its parallel points (docs/math.md §2.4). A strata certificate whose (1,1) point was a parallel point, with its
    singular-point certificate (singular by the implicit equations' Jacobian), and the curve bounds recomputed there,
    was accepted as "singular (0,0), (1,1)". A verdict of the equations is about its point alone: refused."""
    from flint import fmpq_mat

    from attngeo.check.loci.strata import _curve_rank
    from attngeo.geometry.fibers.layer import special_point
    from attngeo.geometry.loci.implicit import implicit_equations
    from attngeo.geometry.loci.singular import is_singular
    from attngeo.geometry.loci.strata import stratify

    arch = Architecture((3, 1), (1,), tokens=2)
    equations = implicit_equations(arch)
    honest = _json(stratify(arch, seed=0, equations=equations))
    assert honest["strata"][1]["label"] == "smooth"  # a generic point of (1,1), certified smooth
    assert check_certificate(copy.deepcopy(honest)).claim.endswith("singular (0,0)")
    [(Q, K, V)] = special_point(arch, "rank1-parallel", random.Random(3))
    point = _json(is_singular(arch, [(Q, K, V)], equations=equations))
    assert point["verdict"] == "singular" and "implicit_certificate" in point
    check_certificate(copy.deepcopy(point))  # the parallel point is singular indeed
    factors = [[[str(x)] for x in K[0]], [[str(x) for x in Q[0]]], [["1"]], [[str(x) for x in V[0]]]]  # A = K^T Q
    lower = _curve_rank(*(fmpq_mat([[int(x) for x in row] for row in f]) for f in factors))
    forged = copy.deepcopy(honest)
    stratum = forged["strata"][1]
    stratum.update(factors=factors, point_certificate=point, label="singular", singular=True, lower=lower,
                   dimension=None if lower < stratum["upper"] else lower, certified=lower == stratum["upper"])
    with pytest.raises(CertificateRejected, match="holds at its point only"):
        check_certificate(forged)
