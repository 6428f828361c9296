"""Single-layer fibers and weight recovery: every claim is checked against the function itself."""

import random

import pytest
from flint import fmpq, fmpq_mat
from hypothesis import given, settings, strategies as st

from attngeo import Architecture, InvalidInputError, evaluate
from attngeo.exceptions import NotInNeuromanifoldError
from attngeo.geometry.fibers.layer import fiber, product_fiber_strata, rank_factorization, recover_weights, special_point
from attngeo.model.layerfunction import LayerFunction, weights_AV
from attngeo.geometry.symmetry import act


def _lists(M):
    return [[M[r, c] for c in range(M.ncols())] for r in range(M.nrows())]


def _function_of_AV(arch, A, V):
    Q, K = rank_factorization(A, arch.ranks[0])
    return [[_lists(Q), _lists(K), _lists(V)]]


def _same_on_inputs(arch, w1, w2, rng, n=4):
    d, t = arch.input_shape
    for _ in range(n):
        X = [[rng.randint(-5, 5) for _ in range(t)] for _ in range(d)]
        if evaluate(arch, w1, X) != evaluate(arch, w2, X):
            return False
    return True


KINDS = ["random", "rank1-swap", "rank1-parallel", "zero"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(3, 2, 2), (3, 3, 1), (4, 2, 3), (2, 3, 3)])
def test_every_line_component_maps_to_the_same_function(kind, shape):
    d, dd, a = shape
    arch = Architecture((d, dd), (a,), tokens=3)
    rng = random.Random(hash((kind, shape)) % 1000)
    w = special_point(arch, kind, rng)
    fib = fiber(arch, w)
    target = LayerFunction.from_weights(arch, w)
    for comp in fib.av:
        if "A" not in comp.data:
            continue
        A = fmpq_mat([[fmpq(*map(int, (x + "/1").split("/")[:2])) for x in row] for row in comp.data["A"]])
        V = fmpq_mat([[fmpq(*map(int, (x + "/1").split("/")[:2])) for x in row] for row in comp.data["V"]])
        for lam in (fmpq(2), fmpq(-1, 3)):
            moved = _function_of_AV(arch, A * lam, V * (1 / lam))
            assert LayerFunction.from_weights(arch, moved) == target
            assert _same_on_inputs(arch, moved, w, rng)  # through the network, not the Gram tensor


def test_the_zero_fiber_has_the_theorem_s_two_components():
    arch = Architecture((3, 2), (2,), tokens=2)
    fib = fiber(arch, special_point(arch, "zero", random.Random(1)))
    assert fib.case == "zero"
    assert sorted(c.dimension for c in fib.av) == [6, 8]  # {A = 0}: d'd; {V = 0, rank A <= 2}: a(2d - a)
    assert [c.dimension for c in fib.qkv if c.data.get("locus") == "V=0"] == [12]


def test_the_swap_partner_is_found_and_is_a_different_line():
    arch = Architecture((3, 2), (2,), tokens=2)
    p, q, r, s = [1, 2, 0], [1, -1, 1], [1, 3], [0, 1, 1]
    pad = [0, 0, 0]
    w = [[[q, pad], [p, pad], [[ri * si for si in s] for ri in r]]]
    swapped = [[[q, pad], [s, pad], [[ri * pi for pi in p] for ri in r]]]
    assert _same_on_inputs(arch, w, swapped, random.Random(0))
    fib = fiber(arch, w)
    assert fib.case == "rank1-swap" and len(fib.av) == 2
    A2, _ = weights_AV(arch, swapped)
    hits = [c for c in fib.av if fmpq_mat([[fmpq(*map(int, (x + "/1").split("/")[:2])) for x in row]
                                           for row in c.data["A"]]).rank() == 1]
    assert len(hits) == 2
    # exactly one of the two lines contains the swapped A (up to scale)
    def on_line(c):
        A = fmpq_mat([[fmpq(*map(int, (x + "/1").split("/")[:2])) for x in row] for row in c.data["A"]])
        ratio = next(A2[i, j] / A[i, j] for i in range(3) for j in range(3) if A[i, j] != 0)
        return all(A2[i, j] == ratio * A[i, j] for i in range(3) for j in range(3))
    assert sum(on_line(c) for c in fib.av) == 1


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.sampled_from(["intra", "scaling"]))
def test_a_group_moved_point_lies_on_the_computed_fiber(seed, kind):
    rng = random.Random(seed)
    arch = Architecture((3, 3), (2,), tokens=2)
    w = special_point(arch, "random", rng)
    g = rng.choice([2, -3, fmpq(1, 2)]) if kind == "scaling" else [[1, rng.randint(-2, 2)], [0, rng.choice([1, -2])]]
    moved = act(arch, w, kind, 1, g)
    A, V = weights_AV(arch, moved)
    (comp,) = fiber(arch, w).av
    A0 = fmpq_mat([[fmpq(*map(int, (x + "/1").split("/")[:2])) for x in row] for row in comp.data["A"]])
    ratio = next(A[i, j] / A0[i, j] for i in range(3) for j in range(3) if A0[i, j] != 0)
    assert all(A[i, j] == ratio * A0[i, j] for i in range(3) for j in range(3))


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 4), st.integers(1, 4), st.integers(1, 5), st.sampled_from(KINDS))
def test_recovery_round_trips(seed, d, dd, a, kind):
    arch = Architecture((d, dd), (a,), tokens=2)
    w = special_point(arch, kind, random.Random(seed))
    f = LayerFunction.from_weights(arch, w)
    rec = recover_weights(arch, f)
    for i in range(len(rec.weights)):
        assert LayerFunction.from_weights(arch, rec.as_lists(i)) == f
        Q, K, V = rec.weights[i]
        assert Q.nrows() == K.nrows() == a  # weights of the architecture asked for
    assert rec.unique == (len(fiber(arch, w).av) == 1)


def test_recovery_from_a_black_box_and_from_the_tensor_agree():
    arch = Architecture((3, 2), (2,), tokens=3)
    w = special_point(arch, "random", random.Random(4))
    from_box = recover_weights(arch, lambda X: evaluate(arch, w, X))
    from_tensor = recover_weights(arch, LayerFunction.from_weights(arch, w).tensor().tolist())
    f = LayerFunction.from_weights(arch, w)
    assert LayerFunction.from_weights(arch, from_box.as_lists()) == f
    assert LayerFunction.from_weights(arch, from_tensor.as_lists()) == f
    assert "unisolvent" in from_box.verified


def test_recovery_of_the_rank1_swap_returns_both_components():
    arch = Architecture((3, 2), (1,), tokens=2)
    w = special_point(arch, "rank1-swap", random.Random(2))
    rec = recover_weights(arch, LayerFunction.from_weights(arch, w))
    assert len(rec.weights) == 2 and not rec.unique


def test_functions_outside_the_neuromanifold_are_refused():
    arch = Architecture((2, 1), (2,), tokens=2)
    # F = y0^2 - 2 y1^2 is irreducible over Q: no rational weights
    with pytest.raises(NotInNeuromanifoldError, match="irreducible"):
        recover_weights(arch, [[[[1, 0], [0, 0]], [[0, 0], [-2, 0]]]])
    # a rank-2 attention matrix cannot come from a = 1
    arch3 = Architecture((3, 2), (1,), tokens=2)
    w = special_point(Architecture((3, 2), (2,), tokens=2), "random", random.Random(3))
    f = LayerFunction.from_weights(Architecture((3, 2), (2,), tokens=2), w)
    with pytest.raises(NotInNeuromanifoldError, match="rank"):
        recover_weights(arch3, LayerFunction(arch3, f.numerators, f.denominator))
    # a generic symmetric tensor is not a matrix of products of linear forms
    rng = random.Random(0)
    S = [[[[0] * 3 for _ in range(3)] for _ in range(3)] for _ in range(2)]
    for k in range(2):
        for m in range(3):
            for n in range(m, 3):
                for p in range(3):
                    S[k][m][n][p] = S[k][n][m][p] = rng.randint(-5, 5)
    with pytest.raises(NotInNeuromanifoldError):
        recover_weights(Architecture((3, 2), (3,), tokens=2), S)


def test_a_black_box_that_is_not_a_layer_is_refused():
    arch = Architecture((2, 1), (2,), tokens=2)
    w = special_point(arch, "random", random.Random(5))

    def almost(X):
        Y = evaluate(arch, w, X)
        return [[Y[0, 0] + X[0][0] ** 3, Y[0, 1]]]  # a cubic term no layer has in that place

    with pytest.raises(NotInNeuromanifoldError):
        recover_weights(arch, almost)


def test_clear_errors_for_inputs_outside_the_theory():
    with pytest.raises(InvalidInputError, match="t >= 2"):
        fiber(Architecture((2, 2), (1,), tokens=1), [[[[1, 0]], [[0, 1]], [[1, 1], [0, 1]]]])
    with pytest.raises(InvalidInputError, match="single-layer"):
        fiber(Architecture((2, 2, 2), (1, 1)), [0] * 16)
    with pytest.raises(InvalidInputError, match="shape"):
        recover_weights(Architecture((2, 1), (1,)), [[1, 2], [3, 4]])
    with pytest.raises(InvalidInputError, match="symmetric"):
        recover_weights(Architecture((2, 1), (1,)), [[[[0, 0], [1, 0]], [[0, 0], [0, 0]]]])


def _tangent_fiber_dimension(a, d, u, w, r, rng):
    """2ad - rank of d(K^T Q) at a random point of the stratum (rank Q = u, rank K = w, rank K^T Q = r)."""
    killed = set(range(r, a - w + r))  # K^T kills e_{r+1}..e_{a-w+r}: dim(ker K^T n im Q) = u - r
    while True:  # redraw the (rare) small-integer accidents of lower rank
        Q = [[rng.randint(-4, 4) if i < u else 0 for _ in range(d)] for i in range(a)]
        K = [[0] * d if i in killed else [rng.randint(-4, 4) for _ in range(d)] for i in range(a)]
        Qm, Km = fmpq_mat(Q), fmpq_mat(K)
        if Qm.rank() == u and Km.rank() == w and (Km.transpose() * Qm).rank() == r:
            break
    cols = []
    for which in ("Q", "K"):
        for i in range(a):
            for j in range(d):
                E = fmpq_mat(a, d)
                E[i, j] = 1
                D = Km.transpose() * E if which == "Q" else E.transpose() * Qm
                cols.append([D[x, y] for x in range(d) for y in range(d)])
    return 2 * a * d - fmpq_mat(cols).rank()


@pytest.mark.parametrize("a,d", [(1, 2), (2, 2), (2, 3), (3, 2), (3, 3), (4, 2), (3, 4)])
def test_product_fiber_strata_dimensions_match_the_tangent_space(a, d):
    rng = random.Random(a * 10 + d)
    for r in range(0, min(a, d) + 1):
        for u, w, dim in product_fiber_strata(a, d, r):
            # a tangent space is never smaller than the variety; at a generic point of a
            # reduced component it has exactly its dimension
            assert min(_tangent_fiber_dimension(a, d, u, w, r, rng) for _ in range(3)) == dim


def test_the_qkv_representatives_compute_the_function():
    arch = Architecture((3, 2), (2,), tokens=2)
    for kind in ("random", "rank1-swap"):
        w = special_point(arch, kind, random.Random(9))
        f = LayerFunction.from_weights(arch, w)
        for comp in fiber(arch, w).qkv:
            rep = [[comp.data["Q"], comp.data["K"], comp.data["V"]]]
            assert LayerFunction.from_weights(arch, rep) == f


@pytest.mark.parametrize("kind", KINDS)
def test_the_fiber_of_a_function_is_the_fiber_of_its_weights(kind):
    arch = Architecture((3, 2), (2,), tokens=2)
    w = special_point(arch, kind, random.Random(8))
    from_weights, from_function = fiber(arch, w), fiber(arch, LayerFunction.from_weights(arch, w))
    assert from_function.case == from_weights.case and from_function.in_neuromanifold
    assert [c.dimension for c in from_function.av] == [c.dimension for c in from_weights.av]
    for (A, V), (B, W) in zip(from_function.lines, from_weights.lines):  # the same lines: B = lam A, W = V / lam
        i, j = next((i, j) for i in range(3) for j in range(3) if A[i, j] != 0)
        lam = B[i, j] / A[i, j]
        assert lam != 0 and B == A * lam and W * lam == V
    cert = from_function.to_json()
    assert "point" not in cert and cert["denominator"] == str(from_function.function.denominator)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_line_through_the_given_weights_shows_those_weights(seed):
    """float32-like dyadic weights: the component holding the point is written with the user's own (A, V)."""
    from attngeo import check_certificate

    rng = random.Random(seed)
    arch = Architecture((3, 2), (1,), tokens=2)
    w = [[[[fmpq(rng.randint(-2**24, 2**24), 2**23) for _ in range(3)]] for _ in range(2)]
         + [[[fmpq(rng.randint(-2**24, 2**24), 2**23) for _ in range(3)] for _ in range(2)]]]
    A, V = weights_AV(arch, w)
    fib = fiber(arch, w)
    shown = [c for c in fib.components if c.data["A"] == [[str(x) for x in row] for row in A.tolist()]]
    assert len(shown) == 1 and shown[0].data["V"] == [[str(x) for x in row] for row in V.tolist()]
    assert "the given weights" in shown[0].description
    check_certificate(fib.to_json())  # still one of the candidate lines, as the checker requires
    swap = fiber(arch, special_point(arch, "rank1-swap", rng))  # the partner line says where its point comes from
    assert sum("the given weights" in c.description for c in swap.components) == 1
    assert sum("forced by the linear factor" in c.description for c in swap.components) == 1
