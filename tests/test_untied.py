"""Layers with shared keys and values (grouped-query attention) or biases, as untied plain layers (docs/math.md §8.1).

The untied form is checked against the layer as checkpoints define it, written out here by hand, and the
folded Jacobian against derivatives of the exact evaluation; the checker's untying (check/untie.py) is an
independent implementation and must agree with the prover's.
"""

import itertools

import numpy as np
import pytest
from flint import fmpq

from attngeo import Architecture, evaluate
from attngeo.check.arch import Arch
from attngeo.check.dimension.dense import _jacobian_rows
from attngeo.check.untie import copies as checker_copies
from attngeo.model.jacobian import jacobian, jacobian_mod_p
from attngeo.model.network import ExactOps
from attngeo.model.untied import copies

P_MOD = 1000003
SHAPES = [dict(heads=2, kv_heads=1, value_ranks=1), dict(heads=4, kv_heads=2, value_ranks=2),
          dict(heads=2, value_ranks=2, biases=True), dict(heads=3, kv_heads=1, value_ranks=1, biases=True),
          dict(heads=1, biases=True)]


def _by_hand(arch: Architecture, w: list, X: np.ndarray) -> list:
    """``b_O + sum_j O_j sum_s (U_g x_s + b_V)(K_g x_s + b_K)^T (Q_j x_i + b_Q)`` (lightning), from the blocks."""
    blocks = {}
    for b in arch.blocks():
        owner = ("g", b.group) if b.group else b.head
        blocks[(owner, b.name)] = np.array(w[b.offset:b.offset + b.size], dtype=object).reshape(b.rows, b.cols)
    d, t = X.shape
    h, n = arch.heads[0], arch.heads[0] // arch.kv_heads[0]
    out = np.zeros((arch.widths[1], t), dtype=object)
    for j in range(1, h + 1):
        g = ("g", (j - 1) // n + 1) if n > 1 else j
        value = "U" if arch.value_ranks is not None else "V"
        zero = lambda r: np.zeros((r, 1), dtype=object)  # noqa: E731
        bq = blocks.get((j, "bQ"), zero(arch.ranks[0]))
        bk = blocks.get((g, "bK"), zero(arch.ranks[0]))
        bv = blocks.get((g, "bV"), zero(blocks[(g, value)].shape[0]))
        q = blocks[(j, "Q")].dot(X) + bq
        k = blocks[(g, "K")].dot(X) + bk
        v = blocks[(g, value)].dot(X) + bv
        if arch.value_ranks is not None:
            v = blocks[(j, "O")].dot(v)
        out = out + v.dot(k.T.dot(q))
    if arch.biases:
        out = out + blocks[(0, "bO")]
    return out.tolist()


@pytest.mark.parametrize("kw", SHAPES, ids=str)
def test_the_tied_layer_is_the_layer_checkpoints_compute(kw):
    arch = Architecture((3, 2), (2,), tokens=3, **kw)
    rng = np.random.default_rng(len(str(kw)))
    w = [int(x) for x in rng.integers(-4, 5, arch.parameter_count)]
    X = rng.integers(-3, 4, (3, 3))
    got = evaluate(arch, w, X.tolist())
    assert [[got[i, j] for j in range(3)] for i in range(2)] == _by_hand(arch, w, X.astype(object))


@pytest.mark.parametrize("kw", SHAPES, ids=str)
def test_the_folded_jacobian_is_the_derivative_of_the_evaluation(kw):
    """Each column against the exact five-point stencil of the evaluation (exact for polynomials of degree <= 4)."""
    arch = Architecture((3, 2), (2,), tokens=2, residual=False, **kw)
    rng = np.random.default_rng(7)
    w = np.array([fmpq(int(x)) for x in rng.integers(-4, 5, arch.parameter_count)], dtype=object)
    X = np.array([[fmpq(int(x)) for x in row] for row in rng.integers(-3, 4, (3, 2))], dtype=object)
    J = jacobian(ExactOps(), arch, w, X[None])
    for k in range(arch.parameter_count):
        def f(eps):
            v = w.copy()
            v[k] = v[k] + eps
            return np.array(evaluate(arch, v.tolist(), X.tolist()).tolist(), dtype=object).ravel()
        stencil = (8 * (f(1) - f(-1)) - (f(2) - f(-2))) / 12
        assert list(J[:, k]) == list(stencil), k


@pytest.mark.parametrize("kw", SHAPES, ids=str)
def test_the_checker_unties_as_the_prover_does_and_its_jacobian_agrees(kw):
    arch = Architecture((3, 3), (2,), tokens=2, causal=True, **kw)
    carch = Arch((3, 3), (2,), 2, "lightning", (arch.heads[0],) if arch.heads[0] > 1 else (),
                 (arch.value_ranks[0],) if arch.value_ranks else None, False, True,
                 kv_heads=(arch.kv_heads[0],) if arch.kv_heads != arch.heads else (), biases=arch.biases)
    assert carch.parameters == arch.parameter_count
    source, bias = copies(arch)
    assert (source.tolist(), bias.tolist()) == checker_copies(carch)
    rng = np.random.default_rng(3)
    point = rng.integers(0, P_MOD, arch.parameter_count)
    X = rng.integers(0, P_MOD, (4, 3, 2))
    w = rng.integers(-3, 4, (4, 2, 3, 2))
    J = jacobian_mod_p(arch, point, X, P_MOD, w)
    rows = list(range(8))
    cols = list(range(arch.parameter_count))
    assert np.array_equal(J, _jacobian_rows(carch, point, X, w % P_MOD, rows, cols, P_MOD))


def test_kv_heads_must_divide_the_heads_and_need_value_ranks():
    from attngeo.exceptions import InvalidArchitectureError

    with pytest.raises(InvalidArchitectureError, match="does not divide"):
        Architecture((4, 4), (1,), heads=4, kv_heads=3, value_ranks=1)
    with pytest.raises(InvalidArchitectureError, match="needs value ranks"):
        Architecture((4, 4), (1,), heads=4, kv_heads=2)
    assert not Architecture((4, 4), (1,), heads=2, kv_heads=2, value_ranks=1).is_tied


@pytest.mark.parametrize("h, g, b, bias", list(itertools.product([2, 4], [1, 2], [1, 2], [False, True])))
def test_parameter_counts_add_up(h, g, b, bias):
    arch = Architecture((5, 3), (2,), heads=h, kv_heads=g, value_ranks=b, biases=bias)
    assert arch.parameter_count == sum(blk.size for blk in arch.blocks())
    assert arch.parameter_count == h * (2 * 5 + 3 * b) + g * (2 * 5 + b * 5) + (h * 2 + g * (2 + b) + 3 if bias else 0)
