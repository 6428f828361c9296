"""The prover's arithmetic in F_p cannot overflow int64, at the edge where it would.

Everything is compared with Python integers, which never overflow. Sizes sit just
above the longest sum ``int64`` holds: 2,048 products at the 26-bit prime
67108859, and 2 at ``2^31 - 1`` (so 3 x 3 matrices already exceed it). Weights,
functionals and inputs are integers with ``|x| <= 9``, of signs chosen so that the
factors of the long sums are negative: residues within 81 of ``p``, products close
to ``p^2`` — the worst case, where each such sum left unreduced wraps (checked by
removing the reduction: every case then fails except widths 1,64, whose longest
prover sum has 64 terms; it is here for its 2,112 outputs under one functional).
The Python side computes with the small integers and reduces once at the end.
"""

from __future__ import annotations

import numpy as np
import pytest

from attngeo import Architecture, InvalidInputError, certify_dimension
from attngeo.model.jacobian import jacobian_mod_p, jacobian_over_q
from attngeo.exact.modular import INT64_MAX, chunk_length, matmul, reduce
from attngeo.model.network import evaluate_mod_p
from attngeo.exact.rank import rank_mod_p, rank_over_q
from attngeo.geometry.symmetry import field_matrix, vector_fields

P26 = 67108859  # largest prime below 2^26: sums of 2,048 products
P31 = 2147483647  # 2^31 - 1: sums of 2 products


def _small(rng, shape, sign: int = -1) -> np.ndarray:
    """Python integers in [1, 9] times ``sign`` (object array); negative ones have residues within 9 of p."""
    return sign * np.array(rng.integers(1, 10, shape).tolist(), dtype=object)


def _weights(arch: Architecture, flat) -> list[tuple]:
    """``[(Q, K, V), ...]`` cut from a flat vector by the architecture's blocks."""
    mats = [np.asarray(flat[b.offset : b.offset + b.size], dtype=object).reshape(b.rows, b.cols) for b in arch.blocks()]
    return [tuple(mats[3 * i : 3 * i + 3]) for i in range(arch.depth)]


def _dual_network(arch: Architecture, point, direction, X):
    """``(phi_W(X), D phi_W(X)[direction])`` in Python integers, by dual numbers.

    Associated as ``(V X)((K X)^T (Q X))``, unlike the prover's ``K^T Q`` first.
    """

    def mm(a, b):
        return a[0] @ b[0], a[0] @ b[1] + a[1] @ b[0]

    Y = (X, np.zeros_like(X))
    for (Q, K, V), (dQ, dK, dV) in zip(_weights(arch, point), _weights(arch, direction)):
        QY, KY, VY = mm((Q, dQ), Y), mm((K, dK), Y), mm((V, dV), Y)
        Y = mm(VY, mm((KY[0].T, KY[1].T), QY))
    return Y


def test_run_length_is_the_largest_exact_sum():
    for p in (2, 3, 1000003, 33554467, P26, P31):
        K = chunk_length(p)
        assert K * (p - 1) ** 2 <= INT64_MAX < (K + 1) * (p - 1) ** 2
    with pytest.raises(InvalidInputError, match="below 2"):
        chunk_length(1 << 31)


def test_reduce_never_wraps_and_refuses_non_integers():
    from flint import fmpq

    assert reduce([2**70 + 3, -(2**65)], P26).tolist() == [(2**70 + 3) % P26, -(2**65) % P26]
    assert reduce(np.array([2**64 - 1], dtype=np.uint64), P26).tolist() == [(2**64 - 1) % P26]
    with pytest.raises(InvalidInputError, match="integers"):
        reduce(np.array([0.5]), P26)
    with pytest.raises(InvalidInputError, match="integers"):
        reduce(np.array([fmpq(1, 2)], dtype=object), P26)


@pytest.mark.parametrize("p, k", [(P26, 2049), (P26, 4097), (P31, 3), (P31, 5)])
def test_matmul_just_above_the_run_length(p, k):
    rng = np.random.default_rng(k)
    a, b = _small(rng, (2, 3, k)), _small(rng, (k, 2))
    ra, rb = reduce(a, p), reduce(b, p)
    expected = (a @ b) % p
    assert (matmul(ra, rb, p) == expected).all()
    # the edge is real: one unreduced int64 sum of the same products wraps
    with np.errstate(over="ignore"):
        assert ((ra @ rb) % p != expected).any()


EDGE = [  # (architecture, prime, sign of the inputs)
    (Architecture((2049, 1), (1,), tokens=2), P26, -1),  # d_0 = 2049: X^T A, (X^T A) X, V X, pull-backs
    (Architecture((1, 2049), (1,), tokens=2), P26, 1),  # d_l = 2049: the pull-back (V X)^T g
    (Architecture((1, 64), (1,), tokens=33), P26, -1),  # d_l t = 2112 outputs under one functional
    (Architecture((3, 3, 3), (2, 2), tokens=3), P31, -1),  # every inner dimension 3 > 2, two layers
]


@pytest.mark.parametrize("arch, p, sign", EDGE, ids=lambda v: str(v))
def test_layer_evaluation_matches_python_integers(arch, p, sign):
    rng = np.random.default_rng(1)
    point, X = _small(rng, arch.parameter_count), _small(rng, (2,) + arch.input_shape, sign)
    got = evaluate_mod_p(arch, point, X, p)
    for n in range(2):
        Y, _ = _dual_network(arch, point, np.zeros_like(point), X[n])
        assert (got[n] == Y % p).all()


@pytest.mark.parametrize("arch, p, sign", EDGE, ids=lambda v: str(v))
def test_jacobian_matches_python_integers(arch, p, sign):
    # Row (n, r) of J is the gradient of <w[n, r], phi(X_n)>, so J . delta must be
    # sum_{k, j} w[n, r, k, j] D phi(X_n)[delta]_{kj}: a sum of d_l t products in Python integers.
    rng = np.random.default_rng(2)
    N, c = 2, 3
    d_l, t = arch.output_shape
    point, X = _small(rng, arch.parameter_count), _small(rng, (N,) + arch.input_shape, sign)
    w = _small(rng, (N, c, d_l, t))
    J = jacobian_mod_p(arch, point, X, p, w).astype(object)
    full = jacobian_mod_p(arch, point, X, p).astype(object) if d_l * t <= 64 else None
    for _ in range(2):  # random directions: a wrong entry survives one with probability ~1/p
        delta = np.array([int(v) for v in rng.integers(1, p, arch.parameter_count)], dtype=object)
        rows = (J @ delta) % p
        for n in range(N):
            _, dY = _dual_network(arch, point, delta, X[n])
            assert [int(v) for v in rows[n * c : (n + 1) * c]] == [int((w[n, r] * dY).sum()) % p for r in range(c)]
            if full is not None:  # one row per output entry (k, j), row-major
                assert (((full @ delta) % p)[n * d_l * t : (n + 1) * d_l * t] == dY.ravel() % p).all()


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((4, 3, 2), (2, 3))])
def test_field_matrix_matches_exact_fields(widths, ranks):
    arch = Architecture(widths, ranks, tokens=2)
    point = _small(np.random.default_rng(3), arch.parameter_count)
    exact = vector_fields(arch, point.tolist())
    F = field_matrix(arch, point, P31)
    assert F.shape == (exact.nrows(), exact.ncols())
    assert all(exact[i, j].q == 1 and int(exact[i, j].p) % P31 == F[i, j]
               for i in range(F.shape[0]) for j in range(F.shape[1]))


def test_one_dimensional_input_rank_over_q_equals_rank_mod_p():
    # Widths 1, ..., 1, d_l: X = x^T, and a layer on a row y^T gives V y^T (k q y y^T)
    # = (k q y^T y) V y^T, so by induction phi_W(X) = (x^T x)^m u(W) x^T with u(W) the
    # last V (a column) times a product of the other weights. Every u in C^{d_l}
    # occurs (other weights 1) and u is read off phi at any x with x^T x != 0: M is
    # C^{d_l}, dim M = d_l. Checked over Q at small cases, against rank mod p.
    rng = np.random.default_rng(4)
    for arch in (Architecture((1, 4), (1,), tokens=4), Architecture((1, 1, 5), (1, 1), tokens=4)):
        point = rng.integers(1, 9, arch.parameter_count)
        X = rng.integers(-9, 10, (2,) + arch.input_shape)
        d_l = arch.widths[-1]
        rank_p = rank_mod_p(jacobian_mod_p(arch, point, X, P26), P26)
        assert rank_over_q(jacobian_over_q(arch, point, X)) == d_l == rank_p


@pytest.mark.parametrize(
    "widths, ranks, t, expected",
    [
        ((1, 64), (1,), 64, 64),  # widths 1, d_l: dim M = d_l (see the test above); d_l t = 4096
        ((1, 1, 64), (1, 1), 64, 64),  # the same argument through two layers
        ((2, 48), (2,), 48, 2 * 2 * 2 + 2 * 48 - 2 * 2 - 1),  # [HMK] one layer, a <= d, t >= 2: 2ad + dd' - a^2 - 1
    ],
)
def test_certified_dimension_with_many_outputs(widths, ranks, t, expected):
    cert = certify_dimension(Architecture(widths, ranks, tokens=t), seed=0)
    assert cert.lower <= cert.upper
    assert cert.certified and cert.dimension == expected
