import numpy as np
import pytest
from flint import fmpq
from hypothesis import given, settings
from hypothesis import strategies as st

from attngeo import Architecture, ExpansionTooLargeError, InvalidInputError, evaluate, expand
from attngeo.model.network import evaluate_mod_p, symbolic_context


def _rand_point(arch, rng, bound=5):
    return [int(v) for v in rng.integers(-bound, bound + 1, arch.parameter_count)]


def test_layer_matches_definition_by_hand():
    # phi(X)_{:, j} = sum_i (x_i^T A x_j) V x_i with A = K^T Q
    arch = Architecture((2, 1), (1,), tokens=2)
    Q, K, V = [[1, 2]], [[3, -1]], [[2, 1]]
    X = [[1, 0], [2, 1]]
    A = np.array(K).T @ np.array(Q)
    x = np.array(X)
    expected = [sum(int(x[:, i] @ A @ x[:, j]) * int((np.array(V) @ x[:, i])[0]) for i in range(2)) for j in range(2)]
    got = evaluate(arch, [(Q, K, V)], X)
    assert [int(got[0, j]) for j in range(2)] == expected


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_modular_evaluation_is_rational_evaluation_reduced(seed):
    rng = np.random.default_rng(seed)
    arch = Architecture((3, 2, 2), (2, 1), tokens=2)
    point = _rand_point(arch, rng)
    X = rng.integers(-4, 5, (3, 2))
    p = 1000003
    exact = evaluate(arch, point, X.tolist())
    modular = evaluate_mod_p(arch, np.array(point), X[None], p)[0]
    assert all(int(exact[k, j]) % p == modular[k, j] for k in range(2) for j in range(2))


def test_symbolic_expansion_agrees_with_evaluation():
    arch = Architecture((2, 2, 1), (1, 1), tokens=2)
    Y = expand(arch, max_terms=10**9)
    rng = np.random.default_rng(0)
    point = _rand_point(arch, rng)
    X = rng.integers(-3, 4, (2, 2))
    values = [fmpq(v) for v in point + X.ravel().tolist()]
    exact = evaluate(arch, point, X.tolist())
    assert all(Y[0, j](*values) == exact[0, j] for j in range(2))
    # degree 3^2 = 9 in X; layer 1's weights enter three times (9), layer 2's once (3)
    assert Y[0, 0].total_degree() == 9 + 9 + 3
    assert str(symbolic_context(arch).gens()[0]) == "Q1_0_0"


def test_expansion_refuses_with_an_estimate():
    with pytest.raises(ExpansionTooLargeError, match="monomials"):
        expand(Architecture((8, 8, 8), (4, 4), tokens=3))


def test_weights_read_exactly_and_floats_by_their_binary_value():
    arch = Architecture((1, 1), (1,), tokens=1)
    assert evaluate(arch, ["1/2", "0.5", 4], [[2]])[0, 0] == fmpq(1, 2) * fmpq(1, 2) * 4 * 8
    assert evaluate(arch, [0.5, 0.5, 4.0], [[2]])[0, 0] == fmpq(1, 2) * fmpq(1, 2) * 4 * 8  # 0.5 is exactly 1/2
    tenth = evaluate(arch, [0.1, 1, 1], [[1]])[0, 0]
    assert tenth != fmpq(1, 10) and tenth == fmpq(*(0.1).as_integer_ratio())  # the double, not the decimal
    with pytest.raises(InvalidInputError, match="finite"):
        evaluate(arch, [float("inf"), 1, 1], [[1]])
    with pytest.raises(InvalidInputError, match="3 parameters"):
        evaluate(arch, [1, 1], [[1]])
    with pytest.raises(InvalidInputError, match="1x1"):
        evaluate(arch, [1, 1, 1], [[1, 2]])
