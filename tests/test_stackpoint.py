"""Residual multi-head stacks at the stack point: the counted blocks are the rank of the real Jacobian, the
dimension is the dense path's, and tampered witnesses are refused."""

import copy
import random

import numpy as np
import pytest

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exact.rank import random_prime, rank_mod_p
from attngeo.geometry.dimension import dense as dense_module
from attngeo.geometry.dimension.stackpoint import TYPES, applies, certify_stack, field_rank, lower_bound
from attngeo.model.jacobian import jacobian_mod_p


def _stack(d, a, l, **kw):
    return Architecture((d,) * (l + 1), (a,) * l, heads=d // a, value_ranks=a, residual=True, **kw)


def _sets(d, a):
    """Every coordinate set of every type, as the coordinates its tiny stack's support rows stand for."""
    out = {t.name: [] for t in TYPES}
    for j in range(d // a):
        block = list(range(j * a, j * a + a))
        q0, q1, rest = block[0], block[1], block[2:]
        outside = [y for y in range(d) if y not in block]
        out["first"].append((q0,))
        out["first pair"] += [(q0, x) for x in block[1:]]
        out["pair"] += [(x, y) for i, x in enumerate(block[1:]) for y in block[2 + i:]]
        out["first cross"] += [(q0, q1, y) for y in outside]
        out["cross"] += [(q0, x, y) for x in rest for y in outside]
    return out


def _stack_point(arch):
    """The integer stack point of the whole stack: Q = K = U = S_j, O = S_j^T."""
    d, a = arch.widths[0], arch.ranks[0]
    point = np.zeros(arch.parameter_count, dtype=np.int64)
    for b in arch.blocks():
        M = np.zeros((b.rows, b.cols), dtype=np.int64)
        for s in range(a):
            c = (b.head - 1) * a + s
            if b.name == "O":
                M[c, s] = 1
            else:
                M[s, c] = 1
        point[b.offset:b.offset + b.size] = M.ravel()
    return point


@pytest.mark.parametrize("d,a,l,kw", [(6, 3, 2, {"causal": True}), (6, 2, 2, {"tokens": 3}), (8, 4, 1, {"causal": True}),
                                      (4, 2, 3, {"causal": True})])
def test_the_counted_blocks_are_the_rank_of_the_real_jacobian(d, a, l, kw):
    """Lemma S at small sizes: every set's inputs placed at its coordinates, the stack's own Jacobian (reverse
    mode, every parameter) has exactly the rank the witness counts, P - dim G."""
    arch = _stack(d, a, l, **kw)
    p = random_prime(random.Random(3))
    witness = lower_bound(arch, p, random.Random(3))
    X = []
    for name, coords in _sets(d, a).items():
        for values in witness["inputs"].get(name, []):
            for where in coords:
                x = np.zeros(arch.input_shape, dtype=np.int64)
                x[list(where)] = values
                X.append(x)
    J = jacobian_mod_p(arch, _stack_point(arch), np.array(X), p)
    assert witness["rank"] == arch.parameter_count - field_rank(arch) == rank_mod_p(J, p)


@pytest.mark.parametrize("arch", [
    _stack(4, 2, 2, causal=True), _stack(6, 3, 2, tokens=3), _stack(6, 2, 1), _stack(8, 8, 2, causal=True),
    _stack(4, 2, 1, causal=True, normalization="softmax"), _stack(4, 2, 1, tokens=3, normalization="softmax"),
], ids=str)
def test_the_stack_point_meets_the_dense_path(arch, monkeypatch):
    stack = certify_stack(arch, seed=1)
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 10**12)
    dense = certify_dimension(arch, seed=1)
    assert stack.certified and dense.certified and stack.dimension == dense.dimension
    assert check_certificate(stack.to_json()).claim == check_certificate(dense.to_json()).claim


def test_deep_multihead_stacks_take_the_stack_point_and_gpt2_sized_plans_are_small():
    arch = _stack(64, 16, 2, causal=True)  # killed at 24 GB on the dense path before
    cert = certify_dimension(arch, seed=0)
    assert cert.lower_witness["structured"] == "stack point" and cert.dimension == 32768 - 2 * 4 * (2 * 256 + 1)
    assert check_certificate(cert.to_json()).claim.startswith("dim M = 28664 ")
    gpt2 = _stack(768, 64, 12, causal=True)
    assert dense_module.plan(gpt2)[0][0] == "stack point" and dense_module.estimate(gpt2)[1] < 2**30


def test_the_path_applies_only_to_residual_stacks_whose_heads_tile_the_width():
    assert applies(_stack(8, 4, 2)) and applies(_stack(8, 2, 3, normalization="softmax"))
    for arch in (Architecture((8, 8, 8), (4, 4), heads=2, value_ranks=4),  # no residual: the inter-layer GL
                 Architecture((8, 8), (2,), heads=2, value_ranks=2, residual=True),  # h a < d
                 Architecture((8, 8), (4,), heads=2, residual=True),  # V unfactored
                 Architecture((8, 8), (4,), heads=2, value_ranks=2, residual=True),  # b != a
                 _stack(8, 1, 2), _stack(8, 4, 2, tokens=1)):  # a = 1; one token
        assert not applies(arch)


@pytest.fixture(scope="module")
def lightning():
    return certify_stack(_stack(6, 3, 2, causal=True), seed=0).to_json()


@pytest.fixture(scope="module")
def softmax():
    return certify_stack(_stack(4, 2, 1, causal=True, normalization="softmax"), seed=0).to_json()


def _bump(rows):
    rows[0] = rows[1]


def _refused(cert, tamper):
    """The honest certificate checks; the tampered copy is rejected."""
    assert check_certificate(cert).claim.startswith("dim M = ")
    bad = copy.deepcopy(cert)
    tamper(bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)


@pytest.mark.parametrize("tamper", [
    lambda c: c.update(lower=c["lower"] + 1, dimension=c["lower"] + 1),
    lambda c: c["lower_witness"].update(rank=c["lower_witness"]["rank"] - 1),
    lambda c: c["lower_witness"]["inputs"].pop("cross"),  # a type's block left out
    lambda c: c["lower_witness"]["inputs"].update(extra=[[[1, 2]]]),  # an invented type
    lambda c: c["lower_witness"]["inputs"].update(pair=[[[0, 0], [0, 0]]] * 9),  # a block of rank 0
    lambda c: c["lower_witness"]["inputs"].update(cross=c["lower_witness"]["inputs"]["cross"][:1]),  # too few rows
    lambda c: c["lower_witness"]["inputs"]["first"][0].append([1, 1]),  # a ragged input
    lambda c: c["lower_witness"].update(prime=c["lower_witness"]["prime"] + 1),  # composite
    lambda c: c["lower_witness"].update(structured="head point"),
    lambda c: c["lower_witness"].update(point=[0]),  # an extra key
    lambda c: c["upper_witness"].update(field_rank=c["upper_witness"]["field_rank"] - 1),
    lambda c: c["upper_witness"].update(determinant=(c["upper_witness"]["determinant"] + 1) % c["upper_witness"]["prime"]),
    lambda c: c["upper_witness"]["families"].pop(),
    lambda c: c["architecture"].pop("residual"),  # the inter-layer GL would be back
    lambda c: c["architecture"].update(heads=[3, 3], ranks=[2, 2], value_ranks=[2, 2]),  # relabelled heads
    lambda c: c["architecture"].update(value_ranks=[2, 2], parameters=c["parameters"]),  # b != a
    lambda c: c["architecture"].update(tokens=1),
], ids=range(17))
def test_tampered_stack_witnesses_are_rejected(lightning, tamper):
    _refused(lightning, tamper)


@pytest.mark.parametrize("tamper", [
    lambda c: c["lower_witness"]["determinants"].update(first="[1.0 +/- 1e-30]"),  # not the checker's ball
    lambda c: c["lower_witness"]["determinants"].update(first="[-3.0e+40 +/- 1]"),  # far from the checker's
    lambda c: _bump(c["lower_witness"]["rows"]["first pair"]),  # a repeated row
    lambda c: c["lower_witness"]["rows"]["first"].pop(),  # a short minor
    lambda c: c["lower_witness"].update(precision=10),  # below the checker's least precision
    lambda c: c["lower_witness"].update(normalization="lightning"),
    lambda c: c["architecture"].update(normalization="lightning"),  # the witness is a ball one
], ids=range(7))
def test_tampered_softmax_stack_witnesses_are_rejected(softmax, tamper):
    _refused(softmax, tamper)


def test_a_relabelled_mask_is_accepted_and_rightly(lightning, monkeypatch):
    """The mask changes the tiny stacks the checker recomputes: the witness then proves the maskless stack's
    dimension (its blocks have full rank there too), which the dense path confirms."""
    maskless = copy.deepcopy(lightning)
    maskless["architecture"].pop("causal")
    claim = check_certificate(maskless).claim
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 10**12)
    assert claim == check_certificate(certify_dimension(_stack(6, 3, 2), seed=0).to_json()).claim
