"""Kernel fields beyond [HMK]'s groups: each field is in the Jacobian's kernel, and the bounds they give meet."""

import copy

import numpy as np
import pytest
from flint import fmpq_mat

from attngeo import Architecture, CertificateRejected, certify_dimension, check_certificate
from attngeo.exact.rank import random_prime
from attngeo.geometry.dimension.kernelfields import kernel_families, kernel_rows
from attngeo.model.jacobian import jacobian_mod_p, jacobian_over_q

# expanding widths, a_1 = 1, one token (lightning and softmax): bounds only before these families
LOOSE = [
    ((2, 3, 2), (2, 2), 2, "lightning"), ((2, 4, 2), (2, 2), 2, "lightning"), ((2, 3, 4), (2, 2), 2, "lightning"),
    ((3, 5, 3, 5), (3, 3, 3), 2, "lightning"), ((3, 3, 3), (1, 3), 2, "lightning"), ((2, 2, 2), (1, 2), 2, "lightning"),
    ((3, 3), (2,), 1, "lightning"), ((3, 2), (2,), 1, "lightning"), ((3, 3, 3), (2, 2), 1, "lightning"),
    ((3, 3), (2,), 1, "softmax"), ((3, 3, 3), (2, 2), 1, "softmax"), ((2, 3, 2), (2, 2), 2, "softmax"),
]


def _arch(w, r, t, n):
    return Architecture(w, r, tokens=t, normalization=n)


@pytest.mark.parametrize("w,r,t,n", [c for c in LOOSE if c[3] == "lightning"])
def test_every_kernel_field_is_in_the_kernel_of_the_jacobian(w, r, t, n):
    arch = _arch(w, r, t, n)
    rng = np.random.default_rng(sum(w) + t)
    p = random_prime(__import__("random").Random(1))
    point = rng.integers(-50, 51, arch.parameter_count)
    X = rng.integers(-50, 51, (6,) + arch.input_shape)
    J = jacobian_mod_p(arch, point, X, p)
    K = kernel_rows(arch, point, p)
    assert len(K) > 0
    assert not np.any((J.astype(object) @ K.T.astype(object)) % p)  # J v = 0 for every field v, exactly mod p


def test_the_lemmas_hold_over_q():
    """Exactly over Q: e_r n^T moves (n^T V_1 = 0) and J K, J Q moves (J skew) are in the Jacobian's kernel."""
    arch = _arch((2, 3, 2), (1, 2), 2, "lightning")  # both families at once: annihilator and symmetric-score
    assert {f.kind for f in kernel_families(arch)} == {"annihilator", "symmetric-score"}
    rng = np.random.default_rng(5)
    point = [int(x) for x in rng.integers(-9, 10, arch.parameter_count)]
    J = fmpq_mat(jacobian_over_q(arch, point, rng.integers(-9, 10, (3,) + arch.input_shape)).tolist())
    blocks = {(b.layer, b.name): b for b in arch.blocks()}
    V1 = fmpq_mat([point[blocks[(1, "V")].offset + 2 * r: blocks[(1, "V")].offset + 2 * r + 2] for r in range(3)])
    a, b = [V1[i, 0] for i in range(3)], [V1[i, 1] for i in range(3)]
    n = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]  # the annihilator w_S
    assert all(sum(n[i] * V1[i, j] for i in range(3)) == 0 for j in range(2))
    Q2 = np.array(point[blocks[(2, "Q")].offset: blocks[(2, "Q")].offset + 6]).reshape(2, 3)
    K2 = np.array(point[blocks[(2, "K")].offset: blocks[(2, "K")].offset + 6]).reshape(2, 3)
    fields = []
    for name in "QKV":
        b = blocks[(2, name)]
        for r in range(b.rows):
            v = [0] * arch.parameter_count
            for c in range(3):
                v[b.offset + r * 3 + c] = n[c]
            fields.append(v)
    for name, source in (("Q", K2), ("K", Q2)):  # J = E_01 - E_10
        v = [0] * arch.parameter_count
        b = blocks[(2, name)]
        for c in range(3):
            v[b.offset + c], v[b.offset + 3 + c] = int(source[1, c]), -int(source[0, c])
        fields.append(v)
    product = J * fmpq_mat(fields).transpose()
    assert all(product[i, j] == 0 for i in range(product.nrows()) for j in range(product.ncols()))
    assert fmpq_mat(fields).rank() == len(fields)  # and they are independent


@pytest.mark.parametrize("w,r,t,n", LOOSE)
def test_the_bounds_meet_where_the_groups_alone_left_a_gap(w, r, t, n):
    cert = certify_dimension(_arch(w, r, t, n), seed=0)
    assert cert.lower <= cert.upper
    assert cert.certified, (cert.lower, cert.upper)
    assert any(f.split("(")[0] in ("annihilator", "symmetric-score", "score-free") for f in cert.families)
    assert "kernel fields beyond the groups" in check_certificate(cert.to_json()).claim


def test_hmk_architectures_use_no_kernel_family():
    for arch in (_arch((3, 3, 3), (2, 2), 2, "lightning"), _arch((4, 3), (2,), 2, "lightning"),
                 _arch((3, 3, 3), (2, 2), 3, "softmax")):
        assert kernel_families(arch) == []


@pytest.fixture(scope="module")
def expanding():
    return certify_dimension(_arch((2, 3, 2), (2, 2), 2, "lightning"), seed=0).to_json()


@pytest.mark.parametrize("tamper", [
    lambda c: c["upper_witness"]["families"].pop(),  # drops the annihilator family
    lambda c: c["upper_witness"]["families"].append({"kind": "annihilator", "layer": 1, "size": 4}),  # outside its predicate
    lambda c: c["upper_witness"]["families"].append({"kind": "symmetric-score", "layer": 2, "size": 2}),  # needs rank-1 inputs
    lambda c: c["upper_witness"]["families"][-1].update(size=99),
    lambda c: c["upper_witness"]["families"].append({"kind": "magic", "layer": 2, "size": 1}),  # invented
])
def test_the_checker_refuses_invented_or_misapplied_families(expanding, tamper):
    bad = copy.deepcopy(expanding)
    tamper(bad)
    with pytest.raises(CertificateRejected, match="families"):
        check_certificate(bad)


def test_a_family_outside_its_predicate_cannot_lower_an_hmk_bound():
    cert = certify_dimension(_arch((3, 3, 3), (2, 2), 2, "lightning"), seed=0).to_json()
    bad = copy.deepcopy(cert)
    bad["upper_witness"]["families"].append({"kind": "annihilator", "layer": 2, "size": 7})
    with pytest.raises(CertificateRejected, match="families"):
        check_certificate(bad)
