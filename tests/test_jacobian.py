import numpy as np
import pytest
from flint import fmpq

from attngeo import Architecture, expand
from attngeo.model.jacobian import jacobian_mod_p, jacobian_over_q
from attngeo.exact.rank import rank_mod_p, rank_over_q
from conftest import random_instance

P_SMALL = 1000003


@pytest.mark.parametrize("widths, ranks, t", [((2, 2), (1,), 2), ((2, 1, 2), (1, 1), 2), ((2, 2, 1), (2, 1), 1)])
def test_jacobian_is_the_derivative_of_the_symbolic_expansion(widths, ranks, t):
    arch = Architecture(widths, ranks, t)
    Y = expand(arch, max_terms=10**9)
    rng = np.random.default_rng(1)
    point = rng.integers(-4, 5, arch.parameter_count)
    X = rng.integers(-4, 5, (2,) + arch.input_shape)
    J = jacobian_mod_p(arch, point, X, P_SMALL)
    d_l = arch.widths[-1]
    for n in range(2):
        values = [fmpq(int(v)) for v in list(point) + list(X[n].ravel())]
        for k in range(d_l):
            for j in range(t):
                for c in range(arch.parameter_count):
                    exact = Y[k, j].derivative(c)(*values)
                    assert int(exact) % P_SMALL == J[n * d_l * t + k * t + j, c]


@pytest.mark.parametrize("widths, ranks, t", [((3, 3), (2,), 2), ((3, 2, 3), (2, 1), 2), ((2, 3), (3,), 1)])
def test_rank_over_q_equals_rank_mod_a_good_prime(widths, ranks, t):
    arch = Architecture(widths, ranks, t)
    point, X = random_instance(arch, seed=2, bound=6, n_inputs=8)
    Jq = jacobian_over_q(arch, point, X)
    r_q = rank_over_q(Jq)
    r_p = rank_mod_p(jacobian_mod_p(arch, point, X, 67108859), 67108859)
    # rank mod p <= rank over Q always; equal at a good (large, random-ish) prime
    assert r_p == r_q
    assert rank_mod_p(jacobian_mod_p(arch, point, X, 3), 3) <= r_q


def test_functional_rows_are_combinations_of_output_rows():
    arch = Architecture((3, 2, 2), (2, 2), 2)
    rng = np.random.default_rng(3)
    point = rng.integers(-9, 10, arch.parameter_count)
    X = rng.integers(-9, 10, (4,) + arch.input_shape)
    w = rng.integers(-9, 10, (4, 3) + arch.output_shape)
    p = 67108859
    full = jacobian_mod_p(arch, point, X, p).reshape(4, 4, -1)
    proj = jacobian_mod_p(arch, point, X, p, w).reshape(4, 3, -1)
    expected = np.einsum("nrkj,nkjc->nrc", w, full.reshape(4, 2, 2, -1)) % p
    assert np.array_equal(proj, expected)
