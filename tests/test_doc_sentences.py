"""Sentences of docs/math.md and docs/findings.md that a referee found false or loose (issue 34), against the
mathematics they state.

Each fact is computed here apart from the code it describes — the rank of ``W -> F`` from the coefficients of
``F(y) = sum_j O_j U_j y y^T K_j^T Q_j`` (docs/math.md §1.1), differentiated by hand — or certified and checked;
the text is checked too, so that the corrected sentence stays and the false one does not come back.
"""

from __future__ import annotations

import importlib.util
import random
import re
from pathlib import Path

import numpy as np
import pytest
from flint import fmpq, fmpq_mat, fmpz_mat

from attngeo import Architecture, certify_dimension, check_certificate

ROOT = Path(__file__).resolve().parent.parent


def _text(name: str) -> str:
    """A document with its line breaks and indentation folded, so that a sentence is found across lines."""
    return " ".join((ROOT / name).read_text(encoding="utf-8").split())


MATH, FINDINGS = _text("docs/math.md"), _text("docs/findings.md")


def _finding(k: int) -> str:
    return re.search(rf"(?<= ){k}\. \*\*.*?(?= {k + 1}\. \*\*| ## )", FINDINGS).group(0)


# -- the rank of W -> F at a point, by hand -------------------------------------------------------


def _coefficients(V: np.ndarray, A: np.ndarray) -> list[int]:
    """``c[k, p, {m, n}]`` of ``F = V y y^T A``: ``V_km A_np + V_kn A_mp`` (``m < n``), ``V_km A_mp`` (``m = n``)."""
    d_out, d = V.shape
    return [int(V[k, m] * A[n, p] + (V[k, n] * A[m, p] if m < n else 0))
            for k in range(d_out) for p in range(d) for m in range(d) for n in range(m, d)]


def _rank(heads) -> int:
    """The rank of ``(Q_j, K_j, U_j, O_j)_j -> F`` at a point: ``F`` is bilinear in ``(V_j, A_j)``, so the column of a
    weight is ``c(dV, A) + c(V, dA)`` with ``dA = K^T E`` or ``E^T Q``, ``dV = O E`` or ``E U``."""
    columns = []
    for Q, K, U, O in heads:
        A, V = K.T @ Q, O @ U
        for name, M in (("Q", Q), ("K", K), ("U", U), ("O", O)):
            for r, c in np.ndindex(*M.shape):
                E = np.zeros_like(M)
                E[r, c] = 1
                dA = K.T @ E if name == "Q" else E.T @ Q if name == "K" else 0 * A
                dV = O @ E if name == "U" else E @ U if name == "O" else 0 * V
                columns.append([x + y for x, y in zip(_coefficients(dV, A), _coefficients(V, dA))])
    return fmpz_mat(columns).rank()


def _corollary_point(d: int, d_out: int, h: int, a: int, b: int, ones: bool = False) -> list[tuple]:
    """docs/math.md §7.5, the corollary: ``Q_j = K_j`` select the block ``ja ..``, ``U_j`` the inputs ``jb ..`` mod
    ``d``, ``O_j`` the unit vectors ``e_{jb} ..`` of ``C^{d'}``; ``ones``: every ``K_j`` the all-ones row."""
    heads = []
    for j in range(h):
        Q, U, O = (np.zeros(shape, dtype=np.int64) for shape in ((a, d), (b, d), (d_out, b)))
        for s in range(a):
            Q[s, j * a + s] = 1
        for r in range(b):
            U[r, (j * b + r) % d] = 1
            O[j * b + r, r] = 1
        heads.append((Q, np.ones((a, d), dtype=np.int64) if ones else Q.copy(), U, O))
    return heads


def _flat(arch: Architecture, heads) -> list[int]:
    """The point in attngeo's order of weights."""
    w = [0] * arch.parameter_count
    for blk in arch.blocks():
        M = heads[blk.head - 1]["QKUO".index(blk.name)]
        w[blk.offset: blk.offset + M.size] = M.ravel().tolist()
    return w


def test_selectors_with_a_equal_b_equal_1_are_parallel_points_below_dim_m():
    """The corollary said selectors satisfy (S1)-(S5) "(or h = 1)": at a = b = 1, U_j = K_j makes the head rank-1
    parallel, and one head on d = d' = 3 has local rank 7 (Lemma H: T_A + T_V - d = 5 + 5 - 3), not dim M = 9."""
    from attngeo.geometry.loci.regularity import local_rank

    arch = Architecture((3, 3), (1,), 2, heads=1, value_ranks=1)
    selectors, ones = _corollary_point(3, 3, 1, 1, 1), _corollary_point(3, 3, 1, 1, 1, ones=True)
    assert _rank(selectors) == 7 and _rank(ones) == 9 == arch.parameter_count - 3
    cert = certify_dimension(arch, seed=1)
    assert cert.lower == cert.upper == 9 and check_certificate(cert.to_json()).claim
    at = local_rank(arch, _flat(arch, selectors))
    assert (at.lower, at.upper, at.regular) == (7, 7, False)
    assert "(or `h = 1`)" not in MATH and "O_j = U_jᵀ` on disjoint" not in MATH
    assert "When `a = b = 1` they do not, whatever `h`" in MATH and "one head on `d = d' = 3` has local rank 7" in MATH


@pytest.mark.parametrize("d, d_out, h, a, b, ones", [
    (3, 5, 2, 1, 2, False), (4, 3, 2, 2, 1, False), (5, 3, 1, 2, 3, False), (4, 6, 2, 2, 3, False),
    (2, 4, 2, 1, 1, True), (3, 3, 3, 1, 1, True), (2, 2, 2, 1, 1, True)])
def test_the_corollary_point_has_rank_p_minus_the_group_for_d_out_unequal_d(d, d_out, h, a, b, ones):
    """The corrected corollary, with d' != d (where "O_j = U_j^T" had no meaning): at its point the rank of W -> F
    is P - h(a^2 + b^2 + 1), the group's bound, so that is dim M and the point is regular."""
    P = h * (2 * a * d + b * (d + d_out))
    assert _rank(_corollary_point(d, d_out, h, a, b, ones)) == P - h * (a * a + b * b + 1)
    assert "the `d' × b` matrix whose columns are the unit vectors `e_{jb}, …, e_{jb+b−1}` of `ℂ^{d'}`" in MATH


# -- the observed multi-head formulas need d >= 2 ---------------------------------------------------


def _observed(d: int, d_out: int, h: int, a: int, b: int) -> int:
    """docs/findings.md 19 with value ranks, t >= 2, as the documents state it (N: the span, for these sizes)."""
    span = d_out * d * d * (d + 1) // 2
    dim_a, dim_v = 2 * a * d - a * a, b * (d + d_out) - b * b
    return min(span, h * (dim_a + dim_v - 1) - h * max(0, min(h - 1, d * d) - (d - a) ** 2 - (d_out - b) * (d - b)))


def _bottleneck_count():
    spec = importlib.util.spec_from_file_location("multihead_bottleneck", ROOT / "proofs" / "multihead_bottleneck.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.count


@pytest.mark.parametrize("h", [2, 3])
def test_the_observed_multihead_formulas_give_0_at_d_equal_1_where_dim_m_is_1(h):
    arch = Architecture((1, 1), (1,), 2, heads=h, value_ranks=1)
    cert = certify_dimension(arch, seed=2)
    assert cert.lower == cert.upper == 1 and _observed(1, 1, h, 1, 1) == 0
    # finding 23's bound, d -> d: P - h(a^2 + 1 + b^2) - h max(0, min(h - 1, d^2) - (d - a)^2 - (d - b)^2)
    assert min(arch.parameter_count - 3 * h - h * min(h - 1, 1), 1) == 0
    assert "and only for `d ≥ 2`, where every grid starts" in MATH  # §7.3
    assert "The statement needs `d ≥ 2`: at `d = 1` every layer is `F = c y²`" in MATH  # §7.1
    assert "Both formulas are for `d ≥ 2`" in _finding(19) and "The statement needs `d ≥ 2`" in _finding(23)


def test_the_proof_scripts_count_is_the_certified_dimension_at_d_equal_1():
    """proofs/multihead_bottleneck.py's count returned the formula's 0 at d = d' = 1, h >= 2: it gives d' there."""
    count = _bottleneck_count()
    for d_out, h, t in [(1, 1, 2), (1, 2, 2), (1, 3, 1), (2, 2, 2), (2, 3, 1)]:
        arch = Architecture((1, d_out), (1,), t, heads=h, value_ranks=1)
        cert = certify_dimension(arch, seed=2)
        assert cert.lower == cert.upper == count(arch) == d_out
    wide = Architecture((2, 2), (1,), 2, heads=7, value_ranks=1)  # d >= 2: the formula as stated
    assert count(wide) == _observed(2, 2, 7, 1, 1) == 12


def test_min_h_minus_1_d_squared_is_written_where_it_is_meant():
    """§7.1 and finding 23 wrote h - 1 for min(h - 1, d^2): at d = 2, h = 7, a = b = 1 the h - 1 bound is 7, the
    certified dimension 12 (the span)."""
    arch = Architecture((2, 2), (1,), 2, heads=7, value_ranks=1)
    P, span = arch.parameter_count, 2 * 2 * 2 * 3 // 2
    cert = certify_dimension(arch, seed=4)
    assert cert.lower == cert.upper == 12 == min(P - 21 - 7 * max(0, min(6, 4) - 2), span)
    assert min(P - 21 - 7 * max(0, 6 - 2), span) == 7
    for text in (MATH, _finding(23), _text("README.md")):
        assert "`h − 1 ≤ (d − a)² + (d − b)²`" not in text and "max(0, h − 1 − (d − a)² − (d − b)²), span)" not in text
    assert MATH.count("min(h − 1, d²) ≤ (d − a)² + (d − b)²") == 1
    assert "`min(h − 1, d²) ≤ (d − a)² + (d − b)²`" in _finding(23)


# -- Lemma 7.1.3 and §7.2 ---------------------------------------------------------------------------


def test_lemma_7_1_3_a_shared_column_is_met_by_a_row_of_the_earlier_instance():
    """The proof said "a row of the later one": with two instances sharing a column, the later instance's rows may
    meet it ((ii) allows earlier types); a row of the earlier one meets it, and that is what (ii) forbids."""
    # instances (type, rows, columns): the first (type 0) and the second (type 1) share column 1
    instances = [(0, (0, 1), (0, 1)), (1, (2, 3), (1, 2))]
    block = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [0, 0, 1]])  # rows 0..3, columns 0..2; each block nonsingular
    for _, rows, cols in instances:
        assert fmpz_mat(block[np.ix_(rows, cols)].tolist()).det() != 0

    def violates(k: int, r: int) -> bool:  # (ii) for row r of instance k
        kind = instances[k][0]
        return any(block[r, c] and c in cols and kind2 >= kind and k2 != k
                   for k2, (kind2, _, cols) in enumerate(instances) for c in range(3))

    assert [r for r in (0, 1) if violates(0, r)] == [1] and not any(violates(1, r) for r in (2, 3))
    assert "is met by a row of the earlier one" in MATH and "a row of the later one and violate (ii)" not in MATH


def test_the_generic_fiber_list_needs_p_nonzero():
    """§7.2's list of witnessed polynomials omitted Lemma P's P != 0: with V_2 = 0 every other one is nonzero, yet
    the function is 0 and the fiber is not an orbit (another M_2 gives it too); the prover refuses the point."""
    from attngeo.geometry.fibers.deep import gauge_point, same_function
    from attngeo.geometry.fibers.virtual import HypothesisFailed, dominance_input, virtual_fiber, virtual_weights

    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    W = gauge_point(arch, random.Random(3))
    offsets = {(b.layer, b.name): (b.offset, b.rows * b.cols) for b in arch.blocks()}
    off, n = offsets[(2, "V")]
    W[off: off + n] = [fmpq(0)] * n
    (M1, M2), P, _ = virtual_weights(arch, W)
    assert P == fmpq_mat(3, 3) and fmpq_mat(3, 3, W[offsets[(1, "V")][0]: offsets[(1, "V")][0] + 9]).det() != 0
    assert M1.rank() >= 2 and M1 + M1.transpose() != fmpq_mat(3, 3) and M2.rank() >= 2
    assert fmpq_mat(M2.tolist() + M2.transpose().tolist() + P.tolist()).rank() == 3
    assert dominance_input(M1, random.Random(0)) is not None
    other = list(W)
    off, n = offsets[(2, "Q")]
    other[off: off + n] = [w + 1 for w in other[off: off + n]]  # another M_2, not a multiple of the first
    assert virtual_weights(arch, other)[0][1] != virtual_weights(arch, W)[0][1] and same_function(arch, W, other)
    with pytest.raises(HypothesisFailed, match="P = V_l .. V_1 vanishes"):
        virtual_fiber(arch, point=W)
    assert "an entry of `P` (Lemma P's `P ≠ 0`, which none of the others implies)" in MATH


# -- findings 7 and 16 --------------------------------------------------------------------------------


def test_finding_16_names_the_ranks_of_its_examples():
    """"3,5,3,5 = 3,3,3,5 = 39" holds at ranks 3,3,3; at ranks 2,2,2 both are 36 (docs/math.md §6.1)."""
    dims = {(w, r): certify_dimension(Architecture(w, r, 2), seed=1) for w in ((3, 5, 3, 5), (3, 3, 3, 5))
            for r in ((3, 3, 3), (2, 2, 2))}
    assert {k: (c.lower, c.upper) for k, c in dims.items()} == {
        ((3, 5, 3, 5), (3, 3, 3)): (39, 39), ((3, 3, 3, 5), (3, 3, 3)): (39, 39),
        ((3, 5, 3, 5), (2, 2, 2)): (36, 36), ((3, 3, 3, 5), (2, 2, 2)): (36, 36)}
    assert "ranks `3,3,3`: `3,5,3,5 = 3,3,3,5 = 39`" in _finding(16)


def test_finding_18_names_the_ranks_of_its_bottleneck_example():
    """"two heads of value rank 1 on 3,3,3: 24, naive 27" read, after "ranks 1,2" in the same finding, as ranks 1,2
    (26, naive 33): the example has attention ranks 1,1."""
    from attngeo import naive_count

    for ranks, dim, naive in (((1, 1), 24, 27), ((1, 2), 26, 33)):
        arch = Architecture((3, 3, 3), ranks, 2, heads=2, value_ranks=1)
        cert = certify_dimension(arch, seed=1)
        assert (cert.lower, cert.upper, naive_count(arch)) == (dim, dim, naive)
    assert "two heads of rank 1 and value rank 1 on `3,3,3`: 24, naive 27" in _finding(18)


def test_finding_7_says_the_checker_replays_on_its_own_chart():
    from attngeo.check.loci import implicit

    assert "A = [R; X R]" in implicit.__doc__  # the checker's chart (docs/math.md Lemma 7.4.5), not the minors
    assert "prover and checker both use it" not in _finding(7)
    assert "the checker replays the elimination on its own chart" in _finding(7)
