import numpy as np
import pytest
from flint import fmpq, fmpq_mat
from hypothesis import given, settings
from hypothesis import strategies as st

from attngeo import Architecture, evaluate
from attngeo.exact.freealgebra import NCPoly
from attngeo.model.jacobian import jacobian_mod_p
from attngeo.geometry.symmetry import FAMILIES, families, field_matrix, gauge_minor, invariance_identities
from attngeo.exact.rank import det_mod_p, rank_mod_p
from conftest import random_instance

P = 67108859


def test_every_invariance_identity_holds():
    ids = invariance_identities()
    assert {i.family for i in ids} == set(FAMILIES)
    assert all(i.holds for i in ids)


def test_free_algebra_detects_a_false_identity():
    # a wrong tangent (K moved by +E^T K instead of -E^T K) must leave a residual
    E, Q, K, V, Y = (NCPoly.symbol(s) for s in "EQKVY")
    phi = V @ Y @ Y.T @ K.T @ Q @ Y
    assert not phi.derivative({"Q": E @ Q, "K": E.T @ K}).is_zero()
    assert phi.derivative({"Q": E @ Q, "K": -(E.T @ K)}).is_zero()


@pytest.mark.parametrize("widths, ranks, t", [((3, 2, 3), (2, 3), 2), ((4, 4, 4), (2, 2), 3), ((2, 3, 2, 2), (1, 2, 2), 2)])
def test_fields_lie_in_the_kernel_of_the_jacobian(widths, ranks, t):
    arch = Architecture(widths, ranks, t)
    point, X = random_instance(arch, seed=4, bound=50, n_inputs=6)
    F = field_matrix(arch, point, P)
    J = jacobian_mod_p(arch, point, X, P)
    assert F.shape[0] == sum(f.size for f in families(arch))
    assert not np.any((J @ F.T) % P)


def _mat(rows):
    return fmpq_mat([[fmpq(v) if not isinstance(v, fmpq) else v for v in r] for r in rows])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_function_unchanged_under_random_rational_group_elements(seed):
    """phi is exactly invariant under C in GL_a, scaling and G in GL_d (finite, not infinitesimal)."""
    rng = np.random.default_rng(seed)
    arch = Architecture((2, 3, 2), (2, 1), 2)
    rand = lambda r, c: _mat(rng.integers(-3, 4, (r, c)).tolist())  # noqa: E731

    def invertible(n):
        while True:
            M = _mat([[fmpq(int(v), int(rng.integers(1, 4))) for v in row] for row in rng.integers(-3, 4, (n, n))])
            if M.det() != 0:
                return M

    Q1, K1, V1 = rand(2, 2), rand(2, 2), rand(3, 2)
    Q2, K2, V2 = rand(1, 3), rand(1, 3), rand(2, 3)
    C, G, lam = invertible(2), invertible(3), fmpq(int(rng.integers(1, 5)), int(rng.integers(1, 5)))
    Gi = G.inv()
    X = rng.integers(-3, 4, (2, 2)).tolist()

    def f(*mats):
        return evaluate(arch, [tuple(m.tolist() for m in mats[:3]), tuple(m.tolist() for m in mats[3:])], X)

    base = f(Q1, K1, V1, Q2, K2, V2)
    assert f(C * Q1, C.inv().transpose() * K1, V1, Q2, K2, V2) == base  # intra-layer GL_a
    assert f(Q1 * lam, K1, V1 * (1 / lam), Q2, K2, V2) == base  # scaling
    assert f(Q1, K1, G * V1, Q2 * Gi, K2 * Gi, V2 * Gi) == base  # inter-layer GL_d


@pytest.mark.parametrize("widths, ranks", [((4, 4, 4), (2, 3)), ((5, 4, 3, 3), (2, 3, 1)), ((6, 6), (6,))])
def test_gauge_minor_is_a_nonsingular_maximal_minor(widths, ranks):
    arch = Architecture(widths, ranks, 2)
    point = np.random.default_rng(5).integers(-99, 100, arch.parameter_count)
    F = field_matrix(arch, point, P)
    cols, det = gauge_minor(arch, point, F, P)
    assert len(cols) == F.shape[0]
    assert rank_mod_p(F[:, cols], P) == F.shape[0] == rank_mod_p(F, P)
    assert det == det_mod_p(F[:, cols], P) != 0


def test_gauge_minor_declines_when_stabilizers_exist():
    arch = Architecture((3, 2, 3), (2, 3), 2)  # a_2 = 3 > d_1 = 2: GL_3 has a stabilizer
    point = np.random.default_rng(6).integers(-9, 10, arch.parameter_count)
    F = field_matrix(arch, point, P)
    assert gauge_minor(arch, point, F, P) is None
    assert rank_mod_p(F, P) < F.shape[0]


# -- the groups acting exactly ------------------------------------------------------


@pytest.mark.parametrize("kind,layer,g", [
    ("intra", 1, [[2, 1], [1, 1]]),
    ("intra", 2, [[1, -1], [0, 3]]),
    ("scaling", 1, "-2/3"),
    ("scaling", 2, 5),
    ("inter", 1, [[1, 2, 0], [0, 1, 0], [1, 0, 1]]),
])
def test_every_group_element_leaves_the_function_unchanged(kind, layer, g):
    from attngeo import evaluate
    from attngeo.geometry.symmetry import act

    arch = Architecture((3, 3, 2), (2, 2), tokens=2)
    rng = np.random.default_rng(3)
    point = [int(v) for v in rng.integers(-3, 4, arch.parameter_count)]
    moved = act(arch, point, kind, layer, g)
    assert moved != [v for v in point]
    for _ in range(3):
        X = rng.integers(-4, 5, arch.input_shape).tolist()
        assert evaluate(arch, moved, X) == evaluate(arch, point, X)


def test_group_elements_are_validated():
    from attngeo import InvalidInputError
    from attngeo.geometry.symmetry import act

    arch = Architecture((3, 3), (2,), tokens=2)
    with pytest.raises(InvalidInputError, match="invertible"):
        act(arch, [1] * arch.parameter_count, "intra", 1, [[1, 2], [2, 4]])
    with pytest.raises(InvalidInputError, match="no inter"):
        act(arch, [1] * arch.parameter_count, "inter", 1, [[1]])
    with pytest.raises(InvalidInputError, match="nonzero"):
        act(arch, [1] * arch.parameter_count, "scaling", 1, 0)
    soft = Architecture((3, 3), (2,), tokens=2, normalization="softmax")
    with pytest.raises(InvalidInputError, match="softmax"):
        act(soft, [1] * soft.parameter_count, "scaling", 1, 2)


@pytest.mark.parametrize("widths,ranks", [((3, 3), (2,)), ((3, 3, 3), (2, 2)), ((4, 3, 2), (2, 1))])
def test_orbit_dimension_over_q_equals_the_field_rank_mod_p(widths, ranks):
    from attngeo.exact.rank import rank_mod_p
    from attngeo.geometry.symmetry import orbit_dimension

    arch = Architecture(widths, ranks)
    point = np.random.default_rng(0).integers(-3, 4, arch.parameter_count)
    exact = orbit_dimension(arch, [int(v) for v in point])
    assert exact == rank_mod_p(field_matrix(arch, point, P), P)
    # generic points: the groups act with finite stabilizers on the [HMK] shapes
    assert exact == sum(f.size for f in families(arch))


def test_the_group_object_knows_what_softmax_breaks():
    from attngeo import SymmetryGroup

    light = SymmetryGroup(Architecture((3, 3, 3), (2, 2)))
    soft = SymmetryGroup(Architecture((3, 3, 3), (2, 2), normalization="softmax"))
    assert light.dimension - soft.dimension == 2  # one scaling per layer
    assert soft.dropped() == ["scaling"] and light.dropped() == []
    assert light.latex().count("{") == light.latex().count("}")


def test_exact_vector_fields_are_tangent_to_the_fibers():
    """d/ds phi(W + s xi(W)) at s = 0 is zero: the Jacobian (exact, over Q) kills every field."""
    from conftest import random_instance

    from attngeo import SymmetryGroup
    from attngeo.model.jacobian import jacobian_over_q

    arch = Architecture((3, 2, 2), (2, 1), tokens=2)
    point, inputs = random_instance(arch, 4, 3, 3)
    fields = SymmetryGroup(arch).vector_fields([int(v) for v in point])
    J = jacobian_over_q(arch, point, inputs)
    product = fmpq_mat(J.tolist()) * fields.transpose()
    assert all(product[i, j] == 0 for i in range(product.nrows()) for j in range(product.ncols()))
