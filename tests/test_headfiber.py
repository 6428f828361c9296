"""Fibers of multi-head lightning layers: head permutations, hidden re-splittings, and the checker's refusals."""

import copy
import random
from math import factorial

import numpy as np
import pytest
from flint import fmpq, fmpq_mat

from attngeo import Architecture, CertificateRejected, InvalidInputError, SymmetryGroup, check_certificate, evaluate
from attngeo.exact.engine import INSTALL_HINT, find_msolve
from attngeo.geometry.fibers.deep import deep_fiber, gauge, gauge_point, head_permutations, regauge, same_function
from attngeo.model.network import split_heads, to_fmpq

needs_msolve = pytest.mark.msolve


def test_the_gauge_fixes_one_entry_per_symmetry_dimension_with_heads():
    for arch in (Architecture((3, 3), (2,), heads=3), Architecture((3, 3), (1,), heads=2, value_ranks=2),
                 Architecture((3, 3, 3), (2, 1), heads=(2, 3)), Architecture((3, 3, 3), (2, 1), heads=2, residual=True),
                 Architecture((2, 2), (1,), heads=2, causal=True)):
        assert len(gauge(arch)) == SymmetryGroup(arch).dimension, arch
    with pytest.raises(InvalidInputError, match="b_1"):
        gauge(Architecture((2, 2), (1,), heads=2, value_ranks=3))


def test_head_permutations_are_distinct_fiber_points_of_the_slice():
    rng = random.Random(5)
    for arch in (Architecture((3, 3), (2,), heads=3), Architecture((2, 2, 2), (1, 1), heads=(2, 2), value_ranks=2)):
        p = gauge_point(arch, rng)
        perms = head_permutations(arch, p)
        assert len(perms) == np.prod([factorial(h) for h in arch.heads])
        fixed = gauge(arch)
        for q in perms:
            assert same_function(arch, p, q)
            # in the slice: the gauge entries are I, and K[0, 0] keeps the value of its position
            assert all(v == (p[k] if fixed[n] is None else fixed[n])
                       for k, (n, v) in enumerate(zip(arch.variable_names(), q)) if n in fixed)


def _swap_u_and_k(arch, point, head):
    """a = b = 1: F_j(y) = o (u.y)(k.y) q^T is symmetric in u and k, so swapping them keeps the function."""
    (heads,) = split_heads(arch, point)
    swapped = [list(h) for h in heads]
    Q, K, U, O = swapped[head]
    swapped[head] = [Q, U.copy(), K.copy(), O]
    return regauge(arch, [[tuple(h) for h in swapped]], [[h[1][0, 0] for h in heads]])


@needs_msolve
def test_rank_one_heads_with_rank_one_values_have_a_u_k_swap_per_head():
    arch = Architecture((3, 3), (1,), heads=2, value_ranks=1)
    fib = deep_fiber(arch, seed=4)
    assert fib.certified and fib.fiber_points == 2**2 * factorial(2) == fib.solutions
    swaps = [_swap_u_and_k(arch, fib.point, 0), _swap_u_and_k(arch, fib.point, 1)]
    both = _swap_u_and_k(arch, swaps[0], 1)
    expected = {tuple(q) for p in [fib.point, *swaps, both] for q in head_permutations(arch, p)}
    assert all(same_function(arch, fib.point, list(q)) for q in expected)
    assert expected == {tuple(q) for q in [fib.point, *fib.extra]}


@needs_msolve
def test_value_rank_one_gives_the_orbit_of_the_group_and_the_head_permutations():
    arch = Architecture((3, 3), (2,), heads=2, value_ranks=1)
    fib = deep_fiber(arch, seed=2)
    assert fib.certified and fib.permutations == 2 and fib.fiber_points == 2
    (other,) = fib.extra
    X = [[1, -2], [3, 0], [2, 5]]
    assert evaluate(arch, other, X) == evaluate(arch, fib.point, X)
    claim = check_certificate(fib.to_json()).claim
    assert "the orbit of the symmetry group and the 2 head permutations" in claim


@needs_msolve
def test_full_value_maps_of_rank_two_heads_re_split_along_the_pencil():
    """d = 3, a = 2: det(s A_1 + t A_2) is a cubic form vanishing at (1, 0) and (0, 1), so the pencil has a
    third singular member M = A_1 - c A_2; each ordered pair of the three re-splits the heads: 3 * 2 points, all
    of them the fiber meets the slice in."""
    arch = Architecture((3, 3), (2,), heads=2)
    fib = deep_fiber(arch, seed=1)
    assert fib.certified and fib.fiber_points == 6 and fib.permutations == 2
    (h1, h2), = split_heads(arch, fib.point)
    (Q1, K1, V1), (Q2, K2, V2) = h1, h2
    A1, A2 = K1.T @ Q1, K2.T @ Q2
    det = lambda c: fmpq_mat((A1 - c * A2).tolist()).det()  # noqa: E731  det = c (alpha + beta c)
    alpha, beta = (det(fmpq(1)) - det(fmpq(-1))) / 2, (det(fmpq(1)) + det(fmpq(-1))) / 2
    c = -alpha / beta
    assert c != 0 and det(c) == 0
    M = A1 - c * A2  # V1 (x) A1 + V2 (x) A2 = V1 (x) M + (V2 + c V1) (x) A2 = (V1 + V2 / c) (x) A1 - V2 / c (x) M
    kappa = [[K1[0, 0], K2[0, 0]]]
    splits = [[(Q1, K1, V1), (Q2, K2, V2)], [(*_qk(M), V1), (Q2, K2, V2 + c * V1)],
              [(Q1, K1, V1 + V2 / c), (*_qk(M), -V2 / c)]]
    expected = {tuple(q) for heads in splits for q in head_permutations(arch, regauge(arch, [heads], kappa))}
    assert len(expected) == 6
    assert expected == {tuple(p) for p in [fib.point, *fib.extra]}


def _qk(A):
    """``(Q, K)`` with ``K^T Q = A``: ``Q`` the nonzero rows of rref(A), ``K^T`` the pivot columns of ``A``."""
    R, rank = fmpq_mat(A.tolist()).rref()
    rows = [[R[r, k] for k in range(R.ncols())] for r in range(rank)]
    pivots = [next(k for k, v in enumerate(row) if v != 0) for row in rows]
    Q = np.array(rows, dtype=object)
    K = np.array([[A[i, p] for i in range(A.shape[0])] for p in pivots], dtype=object)
    assert (K.T @ Q == A).all()
    return Q, K


@needs_msolve
def test_heads_beyond_the_span_leave_a_positive_dimensional_fiber():
    arch = Architecture((2, 2), (1,), heads=3, value_ranks=1)  # 15 unknowns, dim M = 12
    fib = deep_fiber(arch, seed=1)
    assert fib.solutions is None and fib.permutations == 6 and len(fib.extra) == 5
    assert fib.verdict.startswith("positive-dimensional") and not fib.certified


@pytest.fixture(scope="module")
def certificate():
    if find_msolve() is None:
        pytest.skip(f"msolve is not installed; {INSTALL_HINT}")
    return deep_fiber(Architecture((2, 2), (1,), heads=2, value_ranks=1, causal=True), seed=3).to_json()


def _rejected(cert, match):
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(cert)


@needs_msolve
def test_the_honest_certificate_checks(certificate):
    claim = check_certificate(certificate).claim
    assert "8 orbits" in claim and "2 of them head permutations" in claim and "causal" in claim


@needs_msolve
def test_a_wrong_head_count_is_rejected(certificate):
    for heads in ([3], [1]):
        forged = copy.deepcopy(certificate)
        forged["architecture"]["heads"] = heads
        with pytest.raises(CertificateRejected):
            check_certificate(forged)


@needs_msolve
def test_a_dropped_mask_is_rejected(certificate):
    forged = copy.deepcopy(certificate)
    del forged["architecture"]["causal"]
    _rejected(forged, "outputs")


@needs_msolve
def test_a_missing_head_permutation_is_rejected(certificate):
    point = [to_fmpq(v, "point") for v in certificate["point"]]
    perm = head_permutations(Architecture((2, 2), (1,), heads=2, value_ranks=1, causal=True), point)
    forged = copy.deepcopy(certificate)
    forged["extra_solutions"] = [s for s in forged["extra_solutions"] if s != [str(v) for v in perm[1]]]
    assert len(forged["extra_solutions"]) == len(certificate["extra_solutions"]) - 1
    _rejected(forged, "head permutation")


@needs_msolve
def test_an_extra_point_is_rejected(certificate):
    forged = copy.deepcopy(certificate)
    fake = list(forged["extra_solutions"][0])
    fake[1] = str(int(fake[1].split("/")[0]) + 1) if "/" not in fake[1] else "7"
    forged["extra_solutions"].append(fake)
    _rejected(forged, "basis does not vanish|different function")


@needs_msolve
def test_a_changed_solution_count_is_rejected(certificate):
    forged = dict(certificate, solutions_in_slice=certificate["solutions_in_slice"] + 1)
    _rejected(forged, "standard monomials")
