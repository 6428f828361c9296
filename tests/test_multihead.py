"""Multi-head attention, value bottlenecks, residual connections and causal masks (issue [5/6]).

Every assertion is an invariant that needs no stored answer: the network is the
sum of its heads, a causal output ignores later tokens, the Jacobian is the
derivative of the evaluation, every field is killed by the Jacobian, a head
permutation fixes the function, the bounds enclose the rank, and the checker
refuses certificates whose architecture was changed after the fact.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq

from attngeo import Architecture, certify_dimension, check_certificate, evaluate
from attngeo.check.dimension.dense import check
from attngeo.exact.modular import matmul
from attngeo.exact.rank import rank_mod_p
from attngeo.exceptions import CertificateRejected, InvalidArchitectureError, InvalidInputError
from attngeo.geometry.dimension.bounds import span_bound
from attngeo.geometry.dimension.kernelfields import kernel_rows
from attngeo.geometry.dimension.ball import evaluate_ball
from attngeo.geometry.symmetry import families, field_matrix, head_invariance_identities
from attngeo.model.jacobian import jacobian_mod_p
from attngeo.model.network import evaluate_mod_p

P_TEST = 1_000_003

VARIANTS = [
    dict(heads=2), dict(heads=3), dict(heads=2, value_ranks=1), dict(value_ranks=2), dict(causal=True),
    dict(residual=True), dict(heads=2, value_ranks=2, residual=True, causal=True),
]


def _arch(widths, ranks, **kw):
    return Architecture(widths, ranks, tokens=3, **kw)


def _random(arch, rng, n_inputs):
    point = rng.integers(-9, 10, arch.parameter_count)
    return point, rng.integers(-9, 10, (n_inputs,) + arch.input_shape)


def _derivative_at_zero(values: list, p: int) -> np.ndarray:
    """d/ds at s = 0 of the polynomial through (s, values[s]), s = 0..n-1, mod p (Lagrange)."""
    n = len(values)
    total = np.zeros_like(values[0], dtype=object)
    for k in range(n):
        num = Fraction(0)
        for m in range(n):
            if m != k:
                term = Fraction(1)
                for j in range(n):
                    if j not in (k, m):
                        term *= -j
                num += term
        den = 1
        for j in range(n):
            if j != k:
                den *= k - j
        c = num / den
        total = total + (c.numerator * pow(c.denominator, -1, p)) % p * values[k].astype(object)
    return np.array([int(x) % p for x in total.ravel()], dtype=object)


@pytest.mark.parametrize("kw", VARIANTS)
def test_jacobian_is_the_derivative_of_the_evaluation(kw):
    """J v = d/ds phi(W + s v) at s = 0, exactly mod p; the network has degree <= 9 in s for one layer."""
    arch = _arch((3, 3), (1,), **kw)
    rng = np.random.default_rng(1)
    point, X = _random(arch, rng, 4)
    v = rng.integers(-9, 10, arch.parameter_count)
    J = jacobian_mod_p(arch, point, X, P_TEST)
    values = [evaluate_mod_p(arch, point + s * v, X, P_TEST).reshape(-1) for s in range(10)]
    assert np.array_equal(_derivative_at_zero(values, P_TEST), (J.astype(object) @ v.astype(object)) % P_TEST)


def test_heads_add_and_a_head_permutation_fixes_the_function():
    arch = _arch((2, 2), (1,), heads=3)
    rng = np.random.default_rng(2)
    point = [fmpq(int(x)) for x in rng.integers(-5, 6, arch.parameter_count)]
    X = rng.integers(-3, 4, (2, 3)).tolist()
    per_head = arch.parameter_count // 3
    heads = [point[k * per_head:(k + 1) * per_head] for k in range(3)]
    one = Architecture((2, 2), (1,), tokens=3)
    total = evaluate(one, heads[0], X) + evaluate(one, heads[1], X) + evaluate(one, heads[2], X)
    assert evaluate(arch, point, X) == total
    permuted = heads[2] + heads[0] + heads[1]
    assert evaluate(arch, permuted, X) == evaluate(arch, point, X)


@pytest.mark.parametrize("normalization", ["lightning", "softmax"])
def test_causal_output_ignores_later_tokens(normalization):
    arch = Architecture((2, 2, 2), (1, 2), tokens=3, heads=2, causal=True, normalization=normalization)
    rng = np.random.default_rng(3)
    point = rng.integers(-3, 4, arch.parameter_count).tolist()
    X = rng.integers(-3, 4, (2, 3)).tolist()
    X2 = [[row[0], row[1] + 5, row[2] - 7] for row in X]  # change tokens 1 and 2 only
    if normalization == "lightning":
        Y, Y2 = evaluate(arch, point, X), evaluate(arch, point, X2)
        assert [Y[r, 0] for r in range(2)] == [Y2[r, 0] for r in range(2)]
        assert any(Y[r, 2] != Y2[r, 2] for r in range(2))
    else:
        Y, Y2 = evaluate_ball(arch, point, X), evaluate_ball(arch, point, X2)
        assert all((Y[r, 0] - Y2[r, 0]).contains(0) for r in range(2))


def test_residual_adds_the_input_and_needs_equal_widths():
    plain, res = Architecture((2, 2), (1,), tokens=2), Architecture((2, 2), (1,), tokens=2, residual=True)
    point, X = [1, 2, -1, 1, 2, 0, 1, 3], [[1, 2], [3, -1]]
    Y, Yr = evaluate(plain, point, X), evaluate(res, point, X)
    assert all(Yr[r, c] == Y[r, c] + X[r][c] for r in range(2) for c in range(2))
    with pytest.raises(InvalidArchitectureError, match="residual"):
        Architecture((2, 3), (1,), residual=True)


def test_one_head_unfactored_is_hmk_exactly():
    """Explicit defaults change nothing: same flattening, names, certificate bytes."""
    a, b = Architecture((3, 3), (2,)), Architecture((3, 3), (2,), heads=(1,), value_ranks=None)
    assert a == b and a.variable_names() == b.variable_names() and "heads" not in a.to_dict()
    assert json.dumps(certify_dimension(a, seed=5).to_json()["lower_witness"]) == \
        json.dumps(certify_dimension(b, seed=5).to_json()["lower_witness"])


@pytest.mark.parametrize("kw", VARIANTS)
@pytest.mark.parametrize("widths, ranks", [((3, 3), (1,)), ((2, 2, 2), (2, 2)), ((3, 3, 3), (1, 2))])
def test_every_field_is_in_the_kernel_and_the_bounds_enclose_the_rank(widths, ranks, kw):
    arch = _arch(widths, ranks, **kw)
    rng = np.random.default_rng(4)
    point, X = _random(arch, rng, arch.parameter_count // 3 + 4)
    J = jacobian_mod_p(arch, point, X, P_TEST)
    F = np.vstack([field_matrix(arch, point, P_TEST), kernel_rows(arch, point, P_TEST)])
    assert not np.any(matmul(J, F.T, P_TEST))
    assert rank_mod_p(J, P_TEST) <= arch.parameter_count - rank_mod_p(F, P_TEST)
    cert = certify_dimension(arch, seed=0)
    assert cert.lower <= cert.upper
    check(json.loads(json.dumps(cert.to_json())))


def test_head_identities_hold_for_all_sizes():
    for factored in (False, True):
        for normalized in (False, True):
            assert all(i.holds for i in head_invariance_identities(factored, normalized))


def test_residual_connections_drop_the_inter_family():
    arch = _arch((3, 3, 3), (1, 2), heads=2)
    assert any(f.kind == "inter" for f in families(arch))
    assert not any(f.kind == "inter" for f in families(_arch((3, 3, 3), (1, 2), heads=2, residual=True)))


def test_heads_re_split_and_the_span_bound_is_met():
    """Three rank-2 heads on 2 -> 2: the mixing fields and the span bound d' d^2 (d+1)/2 = 12 close the gap."""
    arch = _arch((2, 2), (2,), heads=3)
    cert = certify_dimension(arch, seed=0)
    assert cert.certified and cert.dimension == span_bound(arch) == 12
    assert check_certificate(cert.to_json()).claim.startswith("dim M = 12")


# -- the checker refuses changed architectures ------------------------------------------------


@pytest.fixture(scope="module")
def causal_cert():
    return json.loads(json.dumps(certify_dimension(_arch((3, 3, 3), (1, 2), heads=2, causal=True), seed=0).to_json()))


@pytest.fixture(scope="module")
def residual_cert():
    return json.loads(json.dumps(certify_dimension(_arch((3, 3, 3), (1, 2), heads=2, residual=True), seed=0).to_json()))


def _reject(cert):
    with pytest.raises(CertificateRejected):
        check(cert)


def test_the_honest_multihead_certificates_verify(causal_cert, residual_cert):
    assert "heads 2,2" in check(causal_cert) and "causal" in check(causal_cert)
    assert "residual" in check(residual_cert)


def test_a_wrong_head_count_is_rejected(causal_cert):
    for heads in ([1, 2], [2, 3], [2], [1, 1], [0, 2], [True, 2], "2"):
        forged = copy.deepcopy(causal_cert)
        forged["architecture"]["heads"] = heads
        _reject(forged)
    forged = copy.deepcopy(causal_cert)
    del forged["architecture"]["heads"]
    _reject(forged)


def test_a_dropped_or_added_mask_is_rejected(causal_cert, residual_cert):
    forged = copy.deepcopy(causal_cert)
    del forged["architecture"]["causal"]
    _reject(forged)
    forged = copy.deepcopy(residual_cert)
    forged["architecture"]["causal"] = True
    _reject(forged)
    for spelling in (False, 1, "true"):
        forged = copy.deepcopy(causal_cert)
        forged["architecture"]["causal"] = spelling
        _reject(forged)


def test_a_family_that_residual_connections_break_is_rejected(causal_cert, residual_cert):
    # the residual certificate with the inter family of GL(d_1) put back
    forged = copy.deepcopy(residual_cert)
    inter = {"kind": "inter", "layer": 1, "size": 9}
    fams = forged["upper_witness"]["families"]
    forged["upper_witness"]["families"] = fams[:4] + [inter] + fams[4:]
    _reject(forged)
    # a causal (non-residual) certificate relabelled residual keeps its inter family: refused
    forged = copy.deepcopy(causal_cert)
    forged["architecture"]["residual"] = True
    _reject(forged)


def test_tampered_heads_families_and_bounds_are_rejected(causal_cert):
    forged = copy.deepcopy(causal_cert)
    forged["upper_witness"]["families"][0]["head"] = 2
    _reject(forged)
    forged = copy.deepcopy(causal_cert)
    forged["architecture"]["value_ranks"] = [3, 3]
    _reject(forged)
    forged = copy.deepcopy(causal_cert)
    forged["upper"] -= 1
    _reject(forged)


def test_tampered_mixing_and_span_witnesses_are_rejected():
    cert = json.loads(json.dumps(certify_dimension(_arch((2, 2), (2,), heads=3), seed=0).to_json()))
    assert cert["upper_witness"] == {"ambient": "symmetric tensor", "coefficients": 12}
    for uw in ({"ambient": "symmetric tensor", "coefficients": 11}, {"ambient": "tensor", "coefficients": 12},
               {"ambient": "symmetric tensor", "coefficients": 12, "prime": 101}):
        _reject(dict(cert, upper_witness=uw))
    _reject(dict(cert, upper=11, lower=11, dimension=11))  # lower must still be the witness's rank
    deep = json.loads(json.dumps(certify_dimension(_arch((2, 2, 2), (2, 2), heads=2), seed=0).to_json()))
    fams = deep["upper_witness"]["families"]
    assert [f["kind"] for f in fams].count("mixing") == 2
    forged = copy.deepcopy(deep)
    next(f for f in forged["upper_witness"]["families"] if f["kind"] == "mixing")["size"] = 3
    _reject(forged)
    _reject(dict(deep, upper_witness={"ambient": "symmetric tensor", "coefficients": 12}, upper=12))


def test_other_kinds_refuse_multihead_architectures():
    from attngeo import fiber

    with pytest.raises(InvalidArchitectureError, match="one head per layer"):
        fiber(Architecture((2, 1), (1,), heads=2), [1] * 12)
    with pytest.raises(InvalidInputError, match="flat list"):
        evaluate(Architecture((2, 1), (1,), heads=2), [[[[1, 2]], [[1, 1]], [[1, 0]]]], [[1, 2], [3, 4]])


def test_a_narrow_value_map_gives_annihilator_moves_the_checker_rebuilds():
    """Two heads of value rank 1 on width 3: layer 1's output lies in a plane, so layer 2 reads a plane."""
    arch = _arch((3, 3, 3), (1, 1), heads=2, value_ranks=1)
    rng = np.random.default_rng(6)
    point, X = _random(arch, rng, 20)
    R = kernel_rows(arch, point, P_TEST)
    assert R.shape[0] == 6 and not np.any(matmul(jacobian_mod_p(arch, point, X, P_TEST), R.T, P_TEST))
    cert = json.loads(json.dumps(certify_dimension(arch, seed=0).to_json()))
    assert cert["certified"] and "annihilator(2)" in check(cert)
    forged = copy.deepcopy(cert)
    forged["upper_witness"]["families"] = [f for f in forged["upper_witness"]["families"] if f["kind"] != "annihilator"]
    _reject(forged)
    residual = copy.deepcopy(cert)
    residual["architecture"]["residual"] = True  # X + Y leaves the plane: no annihilator, no inter family
    _reject(residual)


def test_one_token_heads_see_only_symmetric_scores():
    """t = 1: each head's score x^T A_j x sees sym(A_j); the skew moves of every A_j are kernel fields, and
    with 2a >= d the symmetric parts re-split between the heads (symmetric-mixing, one field per ordered pair)."""
    arch = Architecture((3, 3, 3), (2, 2), tokens=1, heads=2, causal=True)
    rng = np.random.default_rng(7)
    point, X = rng.integers(-9, 10, arch.parameter_count), rng.integers(-9, 10, (40, 3, 1))
    R = kernel_rows(arch, point, P_TEST)
    assert R.shape[0] == 2 * (2 * 2 + 2) and not np.any(matmul(jacobian_mod_p(arch, point, X, P_TEST), R.T, P_TEST))
    cert = json.loads(json.dumps(certify_dimension(arch, seed=0).to_json()))
    assert "symmetric-score(1), symmetric-mixing(1), symmetric-score(2), symmetric-mixing(2)" in check(cert)
    forged = copy.deepcopy(cert)
    forged["upper_witness"]["families"] = [f for f in forged["upper_witness"]["families"]
                                           if f["kind"] != "symmetric-score"]
    _reject(forged)
