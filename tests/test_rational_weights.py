"""Rational and decimal weights: every point-based API finds the point in M, and its fiber holds it.

The regression (issue 11, item 6): the forced candidates were rescaled to
integers one factor at a time, so whenever a column of ``A = K^T Q`` was not
integral the forced ``A`` and ``V`` no longer fitted together and valid weights
were reported outside the neuromanifold. Every assertion here is mathematics
checked independently of the prover: the forms ``F_kp = (V y)_k (A^T y)_p`` are
rebuilt as python-flint polynomials, lines are compared as ``A = lam A_c``,
``V_c = lam V`` for a rational ``lam``, and certificates go through the checker.

Non-members are asserted with the reason they are non-members, and the
``int64`` fast paths of the Gram tensor are compared with Python integers at
their limits.
"""

import json
import random
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx
from hypothesis import given, settings, strategies as st

from attngeo import Architecture, evaluate, is_singular
from attngeo.geometry.loci.boundary import is_boundary_point
from attngeo.exceptions import NotInNeuromanifoldError
from attngeo.geometry.fibers.layer import fiber, recover_weights
from attngeo.model.layerfunction import LayerFunction, weights_AV

try:
    from attngeo.check import check_certificate
except ImportError:  # before the checkers moved into attngeo.check
    from attngeo.check import check_certificate


# -- independent mathematics --------------------------------------------------------------


def _q(x) -> fmpq:
    f = Fraction(str(x))
    return fmpq(f.numerator, f.denominator)


def _forms(A: fmpq_mat, V: fmpq_mat) -> list[list]:
    """``F_kp = (V y)_k (A^T y)_p`` as polynomials: the function of the layer (docs/fibers.md, Lemma 1)."""
    d = A.nrows()
    ctx = fmpq_mpoly_ctx.get(("y", d), "degrevlex")
    y = ctx.gens()
    zero = ctx.from_dict({})
    ell = [sum((V[k, m] * y[m] for m in range(d)), zero) for k in range(V.nrows())]
    em = [sum((A[n, p] * y[n] for n in range(d)), zero) for p in range(d)]
    return [[lk * mp for mp in em] for lk in ell]


def _AV(Q, K, V) -> tuple[fmpq_mat, fmpq_mat]:
    return fmpq_mat(K).transpose() * fmpq_mat(Q), fmpq_mat(V)


def _scale_between(A, V, Ac, Vc) -> fmpq | None:
    """The rational ``lam != 0`` with ``A = lam A_c`` and ``V_c = lam V``, if there is one."""
    entry = next(((i, j) for i in range(Ac.nrows()) for j in range(Ac.ncols()) if Ac[i, j] != 0), None)
    if entry is None:
        return None
    lam = A[entry] / Ac[entry]
    return lam if lam != 0 and A == Ac * lam and Vc == V * lam else None


def _on_some_line(A, V, lines) -> bool:
    return any(_scale_between(A, V, Ac, Vc) is not None for Ac, Vc in lines)


def _lines_of_recovery(rec) -> list:
    return [_AV(Q, K, V) for Q, K, V in rec.weights]


def _point(Q, K, V) -> list:
    return [[Q, K, V]]


# -- weights as a user writes them --------------------------------------------------------


def _decimal(mantissa: int, exponent: int, style: int) -> str:
    """``mantissa * 10^-exponent`` written as "0.125" / "-3.7" or in scientific notation "1e-3"."""
    if style == 0 or exponent == 0:
        return str(Fraction(mantissa, 10 ** exponent)) if exponent == 0 else (
            ("-" if mantissa < 0 else "") + f"{abs(mantissa) // 10 ** exponent}.{abs(mantissa) % 10 ** exponent:0{exponent}d}")
    return f"{mantissa}e-{exponent}"


entries = st.one_of(
    st.integers(-4, 4),
    st.builds(lambda n, q: f"{n}/{q}", st.integers(-9, 9), st.integers(1, 12)),
    st.builds(_decimal, st.integers(-999, 999), st.integers(0, 3), st.integers(0, 1)),
)


@st.composite
def single_layer_points(draw):
    """Free rational weights, or the rank-1 points ``A = p q^T``, ``V = r s^T`` (swap; ``s = p``: parallel)."""
    d = draw(st.integers(1, 4))
    dd = draw(st.integers(1, 4))
    a = draw(st.integers(1, d + 1))
    mat = lambda r, c: [[draw(entries) for _ in range(c)] for _ in range(r)]  # noqa: E731
    kind = draw(st.sampled_from(["free", "swap", "parallel"]))
    if kind == "free":
        return Architecture((d, dd), (a,), tokens=2), _point(mat(a, d), mat(a, d), mat(dd, d))
    p, q, r = (mat(1, n)[0] for n in (d, d, dd))
    s = p if kind == "parallel" else mat(1, d)[0]
    pad = [[0] * d for _ in range(a - 1)]
    V = [[str(Fraction(ri) * Fraction(sj)) for sj in s] for ri in r]
    return Architecture((d, dd), (a,), tokens=2), _point([q] + pad, [p] + pad, V)


def _assert_found_in_M(arch, w, tmp_path, recover_from_box=True):
    """fiber, recover_weights (tensor and black box) and is_boundary_point all find ``w`` in M."""
    A, V = weights_AV(arch, w)
    F = _forms(A, V)
    fib = fiber(arch, w)
    assert fib.in_neuromanifold and fib.rational
    fib.save(tmp_path / "fiber.json")
    check_certificate(tmp_path / "fiber.json")  # raises CertificateRejected on a wrong claim
    if fib.case == "zero":
        assert A == 0 * A or V == 0 * V
    else:
        assert all(_forms(Ac, Vc) == F for Ac, Vc in fib.lines)  # every component is the function
        assert _on_some_line(A, V, fib.lines)  # and the original point is on one of them
    recoveries = [recover_weights(arch, LayerFunction.from_weights(arch, w))]
    if recover_from_box:
        recoveries.append(recover_weights(arch, lambda X: evaluate(arch, w, X)))
    for rec in recoveries:
        for Q, K, Vr in rec.weights:
            assert Q.nrows() == K.nrows() == arch.ranks[0]
            assert _forms(*_AV(Q, K, Vr)) == F
        if fib.case != "zero":
            assert _on_some_line(A, V, _lines_of_recovery(rec))
    verdict = is_boundary_point(arch, w)
    assert verdict.verdict in ("boundary", "interior")  # rational weights are real: never outside M_R
    return fib


# -- the reported example -----------------------------------------------------------------

README = Architecture((3, 2), (1,), tokens=2)


@pytest.mark.parametrize("w", [
    [[[[1, -1, 1]], [[1, 2, 0]], [[0, 1, 1], [0, 3, 3]]]],              # the README's integer point
    [[[["1/2", -1, 1]], [[1, 2, 0]], [[0, 1, 1], [0, 3, 3]]]],          # Q[0][0] = 1/2 (the report)
    [[[["0.5", "-1.25", 1]], [["1e-3", 2, 0]], [[0, "3.7", 1], [0, 3, 3]]]],
    [[[["-3.7", "0.125", "2/3"]], [["1/7", "1e-3", 0]], [["0.1", 0, 0], [0, "-0.25", 5]]]],
], ids=["integers", "half", "decimals", "mixed"])
def test_the_readme_example_with_rational_and_decimal_weights(w, tmp_path):
    fib = _assert_found_in_M(README, w, tmp_path)
    A, V = weights_AV(README, w)
    if V.rank() == 1:  # A = p q^T and V = r s^T: the rank-1 swap, two lines
        assert fib.case in ("rank1-swap", "rank1-parallel")
    else:
        assert fib.case == "generic" and len(fib.lines) == 1
    assert is_singular(README, w).verdict in ("singular", "smooth", "undecided")


def test_the_swap_point_with_a_half_has_both_lines_and_is_singular(tmp_path):
    w = [[[["1/2", -1, 1]], [[1, 2, 0]], [[0, 1, 1], [0, 3, 3]]]]
    fib = fiber(README, w)
    assert fib.case == "rank1-swap" and [c.dimension for c in fib.components] == [1, 1]
    # A = p q^T, V = r s^T with s = (0, 1, 1) not parallel to p = (1, 2, 0): the swapped line
    # (s q^T, r p^T) is the other component; rank A . rank V = 1 <= 1 and a = 1 < d: singular
    A, V = weights_AV(README, w)
    p, q, r, s = [1, 2, 0], [fmpq(1, 2), -1, 1], [1, 3], [0, 1, 1]
    swapped = (fmpq_mat([[si * qj for qj in q] for si in s]), fmpq_mat([[ri * pj for pj in p] for ri in r]))
    assert _on_some_line(*swapped, fib.lines) and _on_some_line(A, V, fib.lines)
    verdict = is_singular(README, w)
    assert verdict.verdict == "singular"
    verdict.save(tmp_path / "singular.json")
    check_certificate(tmp_path / "singular.json")


# -- random rational and decimal weights ----------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(point=single_layer_points())
def test_rational_points_are_found_and_their_fiber_holds_them(point, tmp_path_factory):
    arch, w = point
    _assert_found_in_M(arch, w, tmp_path_factory.mktemp("fib"), recover_from_box=arch.widths[0] <= 3)


@settings(max_examples=8, deadline=None)
@given(point=single_layer_points())
def test_rational_points_get_a_singularity_verdict(point, tmp_path_factory):
    arch, w = point
    verdict = is_singular(arch, w, extra=1)
    assert verdict.verdict in ("singular", "smooth", "undecided")
    path = tmp_path_factory.mktemp("sing") / "singular.json"
    verdict.save(path)
    check_certificate(path)


@pytest.mark.parametrize("shape", [(1, 1, 1), (1, 3, 2), (2, 2, 1), (3, 2, 3), (4, 4, 4), (4, 1, 5), (4, 3, 2)])
def test_large_denominators_and_tiny_decimals(shape, tmp_path):
    d, dd, a = shape
    rng = random.Random(hash(shape) % 997)
    arch = Architecture((d, dd), (a,), tokens=2)
    ent = lambda: rng.choice([f"{rng.randint(-99, 99)}/{rng.randint(1, 10**6)}",  # noqa: E731
                              f"{rng.randint(-9, 9)}e-{rng.randint(1, 9)}", f"-{rng.randint(0, 9)}.{rng.randint(0, 999):03d}"])
    w = _point([[ent() for _ in range(d)] for _ in range(a)], [[ent() for _ in range(d)] for _ in range(a)],
               [[ent() for _ in range(d)] for _ in range(dd)])
    _assert_found_in_M(arch, w, tmp_path, recover_from_box=d <= 2)


# -- genuine non-members: the verdict and its reason ---------------------------------------


def _function(arch, forms) -> LayerFunction:
    """A layer function from quadratic forms given as ``{(m, n): coefficient}`` with ``m <= n``."""
    d, dd = arch.widths
    S = np.zeros((dd, d, d, d), dtype=object)
    for k in range(dd):
        for p in range(d):
            for (m, n), c in forms[k][p].items():
                S[k, m, n, p] = S[k, n, m, p] = Fraction(c) if m == n else Fraction(c, 2)
    return LayerFunction.from_tensor(arch, S.tolist())


def _refused(arch, f):
    """recover_weights and is_boundary_point both refuse ``f``; the fiber says why."""
    with pytest.raises(NotInNeuromanifoldError) as info:
        recover_weights(arch, f)
    assert info.value.fiber.case == "outside"
    with pytest.raises(NotInNeuromanifoldError, match="not in the neuromanifold"):
        is_boundary_point(arch, f)
    fib = fiber(arch, f)
    assert fib.case == "outside" and not fib.in_neuromanifold and fib.components == []
    cert = fib.to_json()
    assert cert["components"] == [] and cert["in_neuromanifold"] is False and "tensor" in cert
    return fib


def test_a_quadric_of_rank_three_is_no_product_of_linear_forms():
    arch = Architecture((3, 1), (3,), tokens=2)
    fib = _refused(arch, _function(arch, [[{(0, 0): 1, (1, 1): 1, (2, 2): -5}, {}, {}]]))
    # every F_kp = (V y)_k (A^T y)_p has a Gram matrix (l m^T + m l^T) / 2 of rank <= 2
    minor = fib.argument["minor"]
    G = fmpq_mat([[1, 0, 0], [0, 1, 0], [0, 0, -5]])
    assert fmpq_mat([[G[i, j] for j in minor["cols"]] for i in minor["rows"]]).det() == _q(minor["value"]) != 0


def test_entries_whose_forced_lines_fail_are_outside():
    arch = Architecture((2, 1), (2,), tokens=2)
    # F = (y0 y1, y0^2 + y1^2): l_0 ~ y0 or y1, and neither divides y0^2 + y1^2
    fib = _refused(arch, _function(arch, [[{(0, 1): 1}, {(0, 0): 1, (1, 1): 1}]]))
    assert len(fib.argument["candidates"]) == 2 and not any(c["valid"] for c in fib.argument["candidates"])
    # F = (y0^2, y1^2): l_0 ~ y0 does not divide y1^2
    _refused(arch, _function(arch, [[{(0, 0): 1}, {(1, 1): 1}]]))


def test_an_irreducible_entry_decides_membership_without_rational_weights():
    arch = Architecture((2, 1), (2,), tokens=2)
    # q = y0^2 - 2 y1^2 = (y0 - sqrt2 y1)(y0 + sqrt2 y1): F = (q, 0) is V = (1, -sqrt2), A = (y0 + sqrt2 y1) e_1^T
    member = _function(arch, [[{(0, 0): 1, (1, 1): -2}, {}]])
    fib = fiber(arch, member)
    assert fib.case == "conjugate-swap" and fib.in_neuromanifold and not fib.rational
    assert [c.dimension for c in fib.components] == [1, 1] and fib.argument["discriminant"] == "2"
    with pytest.raises(NotInNeuromanifoldError, match="no rational weights.*though it is in the neuromanifold"):
        recover_weights(arch, member)
    assert is_boundary_point(arch, member).verdict == "interior"  # real weights over Q(sqrt 2)
    # q = y0^2 + y1^2: complex conjugate factors, in M_C but not M_R
    assert is_boundary_point(arch, _function(arch, [[{(0, 0): 1, (1, 1): 1}, {(0, 0): 3, (1, 1): 3}]])).verdict \
        == "outside"
    # F_01 = y0 y1 is not a multiple of the irreducible F_00: every point of M with F_00 irreducible
    # over Q is F_00 times a rank-1 matrix (the conjugate-factor lemma, attngeo.geometry.fibers.layer)
    fib = _refused(arch, _function(arch, [[{(0, 0): 1, (1, 1): -2}, {(0, 1): 1}]]))
    assert fib.argument["not_proportional"]["entry"] == [0, 1]
    # F = q I_2: all entries multiples of q, but the multiplier matrix has rank 2
    arch2 = Architecture((2, 2), (2,), tokens=2)
    q = {(0, 0): 1, (1, 1): -2}
    fib = _refused(arch2, _function(arch2, [[q, {}], [{}, q]]))
    assert fmpq_mat([[_q(x) for x in row] for row in fib.argument["R"]]).rank() == 2


def test_a_point_needing_rank_two_is_outside_a_rank_one_architecture():
    w = [[[[1, 0, "1/3"], ["0.5", 1, 0]], [[1, 1, 0], [0, "-2.5", 1]], [[1, 0, 0], [0, 1, "1e-2"]]]]
    big = Architecture((3, 2), (2,), tokens=2)
    f = LayerFunction.from_weights(big, w)
    A, _ = weights_AV(big, w)
    assert A.rank() == 2
    small = Architecture((3, 2), (1,), tokens=2)
    with pytest.raises(NotInNeuromanifoldError, match="rank 2 > a = 1") as info:
        recover_weights(small, f)
    assert info.value.fiber.case == "outside"


# -- int64 fast paths against Python integers ----------------------------------------------


def _exact_tensor(A, V):
    """``S[k,m,n,p] = (V_km A_np + V_kn A_mp) / 2`` in Fractions."""
    dd, d = len(V), len(A)
    return [[[[(V[k][m] * A[n][p] + V[k][n] * A[m][p]) / 2 for p in range(d)] for n in range(d)] for m in range(d)]
            for k in range(dd)]


@pytest.mark.parametrize("tops,fast", [(((1 << 31), (1 << 31) - 1), True), (((1 << 31), (1 << 31)), False),
                                       (((1 << 40), 3), True), (((1 << 62) - 1, 1), True), (((1 << 62), 1), False)])
def test_the_gram_tensor_is_exact_at_the_int64_threshold(tops, fast):
    """``2 max|A| max|V| < 2^63`` takes int64 (the largest entry is exactly that sum), else Python integers."""
    arch = Architecture((2, 2), (2,), tokens=2)
    tA, tV = tops
    A = [[Fraction(tA, 3), Fraction(-tA, 3)], [Fraction(-tA, 3), Fraction(tA - 2, 3)]]
    V = [[Fraction(tV, 5), Fraction(tV, 5)], [Fraction(-tV, 5), Fraction(tV, 5)]]
    f = LayerFunction.from_AV(arch, [[str(x) for x in r] for r in A], [[str(x) for x in r] for r in V])
    assert (f.numerators.dtype == np.int64) == fast  # both paths are exercised
    want = _exact_tensor(A, V)
    got = f.tensor()
    assert all(Fraction(int(x.p), int(x.q)) == want[k][m][n][p] for (k, m, n, p), x in np.ndenumerate(got))
    assert f == LayerFunction.from_tensor(arch, [[[[str(x) for x in c] for c in b] for b in a] for a in want])


def _sym(rng, d, dd, bits):
    N = np.zeros((dd, d, d, d), dtype=np.int64)
    for k in range(dd):
        for m in range(d):
            for n in range(m, d):
                for p in range(d):
                    N[k, m, n, p] = N[k, n, m, p] = rng.randrange(-(1 << bits), 1 << bits)
    return N


def test_equality_is_exact_where_int64_products_would_wrap():
    arch = Architecture((2, 1), (2,), tokens=2)
    rng = random.Random(11)

    def exact(f, g):
        return all(Fraction(int(x), f.denominator) == Fraction(int(y), g.denominator)
                   for x, y in zip(f.numerators.ravel().tolist(), g.numerators.ravel().tolist()))

    N, X = _sym(rng, 2, 1, 40), _sym(rng, 2, 1, 59)
    pairs = [
        # unequal, yet N 2^30 and (2N + 2^36) 2^29 agree modulo 2^64 (int64 products would wrap to equal)
        (LayerFunction(arch, N, 1 << 29), LayerFunction(arch, 2 * N + (1 << 36), 1 << 30)),
        # coprime denominators, numerators near 2^62: the cross products 35 X need about 2^65
        (LayerFunction(arch, 5 * X, 5), LayerFunction(arch, 7 * X, 7)),
        (LayerFunction(arch, 5 * X, 5), LayerFunction(arch, 7 * X + 1, 7)),
        (LayerFunction(arch, N, 7), LayerFunction(arch, N * 5, 35)),
        (LayerFunction(arch, N, 7), LayerFunction(arch, N * 5 + 1, 35)),
    ]
    for f, g in pairs:
        assert (f == g) == exact(f, g) == (g == f)
    assert [f == g for f, g in pairs] == [False, True, False, True, False]  # by construction above


# -- function certificates: the checker verifies each verdict and refuses each tampering -------------------


def _function_certificates():
    arch, arch2 = Architecture((2, 1), (2,), tokens=2), Architecture((2, 2), (2,), tokens=2)
    q = {(0, 0): 1, (1, 1): -2}
    return {
        "conjugate-swap": fiber(arch, _function(arch, [[q, {}]])).to_json(),
        "outside (candidates)": fiber(arch, _function(arch, [[{(0, 1): 1}, {(0, 0): 1, (1, 1): 1}]])).to_json(),
        "outside (gram rank 3)": fiber(Architecture((3, 1), (3,), tokens=2), _function(
            Architecture((3, 1), (3,), tokens=2), [[{(0, 0): 1, (1, 1): 1, (2, 2): -5}, {}, {}]])).to_json(),
        "outside (not proportional)": fiber(arch, _function(arch, [[q, {(0, 1): 1}]])).to_json(),
        "outside (rank R)": fiber(arch2, _function(arch2, [[q, {}], [{}, q]])).to_json(),
    }


FUNCTION_TAMPERINGS = {
    "membership flipped": lambda c: c.update(in_neuromanifold=not c["in_neuromanifold"]),
    "rational weights claimed": lambda c: c.update(rational_weights=True),
    "case renamed": lambda c: c.update(case="generic"),
    "tensor entry changed": lambda c: c["tensor"][0][0][0].__setitem__(0, str(int(c["tensor"][0][0][0][0]) + 1)),
    "point smuggled in": lambda c: c.update(point=["0"] * 6),
    "argument entry moved": lambda c: c["argument"]["entry"].__setitem__(1, 1 - c["argument"]["entry"][1]),
}


@pytest.mark.parametrize("tamper", sorted(FUNCTION_TAMPERINGS))
@pytest.mark.parametrize("name", sorted(_function_certificates()))
def test_function_certificates_verify_and_refuse_tampering(name, tamper):
    from attngeo.exceptions import CertificateRejected
    from attngeo.check import check_certificate

    cert = _function_certificates()[name]
    claim = check_certificate(cert).claim
    assert ("not in M" in claim) == name.startswith("outside")
    bad = json.loads(json.dumps(cert))
    FUNCTION_TAMPERINGS[tamper](bad)
    with pytest.raises(CertificateRejected):
        check_certificate(bad)
