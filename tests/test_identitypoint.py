"""Deep lightning networks at V = I on sparse inputs: the lemma's zero pattern, the dimension, and the checker."""

import copy
import random

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exact.rank import random_prime
from attngeo.geometry.dimension import dense as dense_module, identitypoint
from attngeo.geometry.dimension.identitypoint import applies, certify_deep
from attngeo.model.jacobian import jacobian_mod_p


def formula(arch):
    d = arch.widths[0]
    return d * d + sum(2 * a * d - a * a - 1 for a in arch.ranks)


def test_the_lemma_zero_pattern_and_small_network_hold_on_the_dense_jacobian():
    arch, rng = Architecture((6, 6, 6, 6), (2, 3, 2), tokens=2), random.Random(4)
    p, point = random_prime(rng), identitypoint._point(arch, rng)
    col = identitypoint._Columns(arch)
    d, l = 6, 3
    for R in ([0, 1, 2], [0, 1, 2, 4], [1, 5]):
        X = np.zeros((3, d, 2), dtype=np.int64)
        X[:, R] = np.random.default_rng(1).integers(-9, 10, (3, len(R), 2))
        J = jacobian_mod_p(arch, point, X, p).reshape(3, d, 2, -1)
        allowed = np.zeros((d, arch.parameter_count), dtype=bool)
        for k in range(d):
            allowed[k, col("V", l, k, np.array(R))] = True
            if k in R:
                for i, a in enumerate(arch.ranks, start=1):
                    s, c = np.meshgrid(np.arange(a), R, indexing="ij")
                    allowed[k, col("Q", i, s, c)] = allowed[k, col("K", i, s, c)] = True
        earlier_values = np.zeros(arch.parameter_count, dtype=bool)
        for i in range(1, l):
            earlier_values[col("V", i, 0, 0) : col("V", i, 0, 0) + d * d] = True
        outside = (J != 0) & ~allowed[None, :, None, :] & ~earlier_values
        assert not outside.any()  # every derivative the lemma calls zero is zero
        small, small_point = identitypoint._restricted(arch, point, R)
        Js = jacobian_mod_p(small, small_point, X[:, R], p).reshape(3, len(R), 2, -1)
        full = identitypoint._restricted_columns(arch, R)
        last_values = full >= col("V", l, 0, 0)
        qk = np.array([not any(col("V", i, 0, 0) <= c < col("V", i, 0, 0) + d * d for i in range(1, l + 1))
                       for c in full])
        keep = qk | last_values
        assert np.array_equal(Js[..., keep], J[:, R][..., full[keep]])  # the small network's derivatives


ARCHS = [((5, 5, 5), (2, 2), 2), ((6, 6, 6, 6), (2, 3, 2), 2), ((7, 7, 7), (3, 3), 3), ((6,) * 5, (2,) * 4, 2)]


@pytest.mark.parametrize("widths,ranks,t", ARCHS)
def test_the_identity_point_certifies_the_dense_dimension(widths, ranks, t, monkeypatch):
    arch = Architecture(widths, ranks, tokens=t)
    deep = certify_deep(arch, seed=2)
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 10**12)
    dense = certify_dimension(arch, seed=2)
    assert deep.certified and dense.certified and deep.dimension == dense.dimension == formula(arch)
    assert check_certificate(deep.to_json()).claim == check_certificate(dense.to_json()).claim


def test_deep_networks_of_equal_widths_take_the_identity_path(monkeypatch):
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 1)
    cert = certify_dimension(Architecture((8, 8, 8), (3, 3), tokens=2), seed=0)
    assert cert.lower_witness["structured"] == "identity values" and cert.dimension == 64 + 2 * (48 - 9 - 1)
    assert dense_module.estimate(Architecture((64,) * 5, (4,) * 4))[0] == "structured"


def test_the_path_applies_only_where_the_lemma_and_the_groups_do():
    assert applies(Architecture((6, 6, 6), (2, 2))) and applies(Architecture((6, 6, 6), (2, 2), normalization="softmax"))
    for arch in (Architecture((6, 6), (2,)), Architecture((6, 5, 6), (2, 2)), Architecture((6, 6, 6), (6, 2)),
                 Architecture((6, 6, 6), (2, 2), tokens=1), Architecture((6, 6, 6), (1, 2)),
                 Architecture((6, 6, 6), (2, 2), heads=2), Architecture((6, 6, 6), (2, 2), residual=True),
                 Architecture((6, 6, 6), (2, 2), causal=True)):
        assert not applies(arch)


@pytest.fixture(scope="module")
def deep():
    return certify_deep(Architecture((6, 6, 6, 6), (2, 3, 2), tokens=2), seed=0).to_json()


def _reverse_blocks(w):
    starts = np.cumsum([0] + w["blocks"])
    order = list(range(len(w["blocks"])))[::-1]
    w["rows"] = [r for b in order for r in w["rows"][starts[b]:starts[b + 1]]]
    w["columns"] = [c for b in order for c in w["columns"][starts[b]:starts[b + 1]]]
    w["blocks"] = w["blocks"][::-1]


def _move_into(c, name, layer):
    arch = Architecture(c["architecture"]["widths"], c["architecture"]["ranks"])
    block = next(b for b in arch.blocks() if b.name == name and b.layer == layer)
    c["lower_witness"]["columns"][0] = next(x for x in range(block.offset, block.offset + block.size)
                                            if x not in c["lower_witness"]["columns"])


def _value_entry(point, layer, value):
    point[[b for b in Architecture((6, 6, 6, 6), (2, 3, 2)).blocks() if b.name == "V"][layer].offset] = value


@pytest.mark.parametrize("tamper", [
    lambda c: c.update(lower=c["lower"] + 1),
    lambda c: c["lower_witness"].update(determinant=(c["lower_witness"]["determinant"] + 1)),
    lambda c: c["lower_witness"].update(extra=1),
    lambda c: _reverse_blocks(c["lower_witness"]),  # no longer block lower triangular
    lambda c: _move_into(c, "V", 1),  # V_1: the lemma says nothing there
    lambda c: _move_into(c, "Q", 2),
    lambda c: c["lower_witness"].update(blocks=[1, c["lower_witness"]["blocks"][0] - 1] + c["lower_witness"]["blocks"][1:]),
    lambda c: c["lower_witness"]["rows"].__setitem__(1, c["lower_witness"]["rows"][0]),
    lambda c: c["lower_witness"]["inputs"][0][0].__setitem__(0, c["lower_witness"]["inputs"][0][0][0] + 1),
    lambda c: _value_entry(c["lower_witness"]["point"], 0, 2),  # V_1 is not the identity
    lambda c: _value_entry(c["upper_witness"]["point"], 2, 0),
    lambda c: c["upper_witness"].update(determinant=(c["upper_witness"]["determinant"] + 1)),
    lambda c: c["upper_witness"].update(field_rank=c["upper_witness"]["field_rank"] - 1),
    lambda c: c["upper_witness"]["families"].pop(),
    lambda c: c["upper_witness"]["columns"].__setitem__(0, c["lower_witness"]["columns"][0]),
    lambda c: c["upper_witness"]["rows"].__setitem__(slice(0, 2), c["upper_witness"]["rows"][1::-1]),  # -det
    lambda c: c.update(upper=c["upper"] - 1),
    lambda c: c["architecture"].update(widths=[6, 6, 6, 5]),
])
def test_tampered_identity_witnesses_are_rejected(deep, tamper):
    assert "dim M = " in check_certificate(deep).claim
    bad = copy.deepcopy(deep)
    tamper(bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)


def test_softmax_networks_at_the_identity_point_meet_the_dense_ball_dimension(monkeypatch):
    arch = Architecture((4, 4, 4), (2, 2), tokens=3, normalization="softmax")
    deep = certify_deep(arch, seed=1)
    dense = certify_dimension(arch, seed=1)  # 64 parameters: the dense ball path is estimated quick
    assert deep.certified and deep.dimension == dense.dimension == 16 + 2 * (2 * 2 * 4 - 4)  # Conj. 3.10
    assert check_certificate(deep.to_json()).claim == check_certificate(dense.to_json()).claim
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 1)
    assert certify_dimension(arch, seed=1).lower_witness["structured"] == "identity values"


def _flip(ball: str) -> str:
    return "[" + ball[2:] if ball.startswith("[-") else "[-" + ball[1:]


@pytest.fixture(scope="module")
def soft():
    return certify_deep(Architecture((5, 5, 5), (2, 2), tokens=3, normalization="softmax"), seed=0).to_json()


@pytest.mark.parametrize("tamper", [
    lambda c: c["lower_witness"].update(determinant=_flip(c["lower_witness"]["determinant"])),
    lambda c: c["lower_witness"].update(prime=101),
    lambda c: _reverse_blocks(c["lower_witness"]),
    lambda c: c["lower_witness"]["point"].__setitem__(
        next(b.offset for b in Architecture((5, 5, 5), (2, 2)).blocks() if b.name == "V"), "2"),
    lambda c: c["lower_witness"]["inputs"][0][0].__setitem__(0, "7/3"),
    lambda c: c["lower_witness"].update(normalization="lightning"),
    lambda c: c["upper_witness"]["families"].append({"kind": "scaling", "layer": 1, "size": 1}),
])
def test_tampered_softmax_identity_witnesses_are_rejected(soft, tamper):
    assert "dim M = 57" in check_certificate(soft).claim  # 5^2 + 2 * 2 (2 * 5 - 2)
    bad = copy.deepcopy(soft)
    tamper(bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)
