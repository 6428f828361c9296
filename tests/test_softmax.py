"""Normalized (softmax) attention: ball-arithmetic lower bounds, surviving symmetries, the checker."""

import json

import numpy as np
import pytest
from flint import fmpq

from conftest import assert_rejected

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.ui.cli import main
from attngeo.exceptions import CannotVerify, InvalidInputError
from attngeo.model.normalizer import NORMALIZERS, register
from attngeo.geometry.dimension.ball import ball_jacobian
from attngeo.geometry.symmetry import families, normalized_invariance_identities


@pytest.mark.parametrize("d,dd,a", [(2, 2, 1), (3, 2, 2), (3, 3, 3), (4, 2, 2)])
def test_one_softmax_layer_is_the_lightning_layer_plus_one(d, dd, a):
    """[HMK]: normalization removes exactly the scaling symmetry of one layer (t >= 2)."""
    soft = certify_dimension(Architecture((d, dd), (a,), 2, "softmax"), seed=d + a)
    light = certify_dimension(Architecture((d, dd), (a,), 2), seed=d + a)
    assert soft.certified and light.certified
    assert soft.dimension == light.dimension + 1
    check_certificate(soft.to_json())


def test_with_one_token_softmax_is_linear_and_certified_by_the_score_free_family():
    """t = 1: every score matrix is 1 x 1, S = 1, phi = V X: the Jacobian has rank d d' exactly."""
    arch = Architecture((3, 2), (2,), 1, "softmax")
    cert = certify_dimension(arch, seed=0)
    assert cert.certified and cert.dimension == 3 * 2 and "score-free(1)" in cert.families
    X = [[[fmpq(1, 2)], [fmpq(-1, 3)], [fmpq(2)]]]
    J = ball_jacobian(arch, [fmpq(k % 5 - 2, 4) for k in range(arch.parameter_count)], X,
                      np.ones((1, 1, 2, 1), dtype=int), 128)
    assert all(J[0, j].contains(0) for j in range(12))  # Q and K do not move phi at all
    assert J[0, 12].contains(fmpq(1, 2)) and J[0, 14].contains(2)  # d phi / d V_1j = x_j


def test_scaling_is_broken_and_the_rest_provably_survives():
    arch = Architecture((3, 3, 3), (2, 2), 3, "softmax")
    assert {f.kind for f in families(arch)} == {"intra", "inter"}
    assert all(i.holds for i in normalized_invariance_identities())
    cert = certify_dimension(arch, seed=3)
    assert cert.certified and cert.dimension == cert.formula["value"]
    assert all(f["kind"] != "scaling" for f in cert.upper_witness["families"])


def test_tampered_ball_certificates_are_rejected():
    cert = certify_dimension(Architecture((3, 3), (2,), 3, "softmax"), seed=1).to_json()
    check_certificate(cert)
    P = len(cert["lower_witness"]["point"])
    assert_rejected(cert, lambda c: c["lower_witness"].update(point=["0"] * P), "contains 0")
    assert_rejected(cert, lambda c: c.update(lower=c["lower"] + 1), "exceeds upper bound")  # before any ball
    assert_rejected(cert, lambda c: c.update(lower=c["lower"] - 1, certified=False, dimension=None), "rank")
    assert_rejected(cert, lambda c: c["lower_witness"].update(precision=10), "precision")
    assert_rejected(cert, lambda c: c["lower_witness"]["columns"].__setitem__(1, c["lower_witness"]["columns"][0]),
                    "columns")
    assert_rejected(cert, lambda c: c["lower_witness"]["functionals"][0].pop(), "functionals")
    assert_rejected(cert, lambda c: c["upper_witness"]["families"].append({"kind": "scaling", "layer": 1, "size": 1}),
                    "families")


def test_a_registered_normalizer_gets_bounds_and_the_checker_says_it_cannot_judge():
    name = "square-plus-one"
    if name not in NORMALIZERS:
        register(name, lambda x: x * x + 1, lambda x: 2 * x, "f(x) = x^2 + 1")
    with pytest.raises(InvalidInputError):
        register(name, lambda x: x, lambda x: 1)
    cert = certify_dimension(Architecture((2, 2), (1,), 2, name), seed=0)
    assert 0 < cert.lower <= cert.upper
    with pytest.raises(CannotVerify):
        check_certificate(cert.to_json())


def test_dim_softmax_on_the_command_line(capsys):
    assert main(["dim", "--widths", "3,3,3", "--ranks", "2,2", "--tokens", "3", "--softmax", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["architecture"]["normalization"] == "softmax"
    assert {"parameters", "lower", "upper", "certified", "dimension", "formula"} <= set(out)
    assert out["dimension"] == out["formula"] == 25
