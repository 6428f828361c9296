"""The deep dimension for every depth and every rank (docs/math.md §7.7): the lemmas against exact computation,
the certificate's witnesses, and certificates that claim more than their pieces prove."""

import copy
import itertools

import numpy as np
import pytest
import sympy

from attngeo import Architecture, CertificateRejected, check_certificate
from attngeo.check.dimension import allsizes
from attngeo.exact.rank import rank_mod_p
from attngeo.exceptions import AttngeoError, InvalidInputError
from attngeo.model.jacobian import jacobian_mod_p
from attngeo.model.network import ExactOps, network, split_point
from attngeo.theorems.allsizes import piece_at, prove

P = 2**31 - 1


@pytest.fixture(scope="module")
def cert():
    return prove("deep-dimension")


def _formula(l, d, a):
    return l * a * (2 * d - a) + d * d - l


def _layers(cert, l, d, a):
    """``(Q_i, K_i)`` of every layer at the certificate's point (``V_i = I``), read from the piece as §7.7 says."""
    piece = cert["pieces"][piece_at(cert, {"l": l, "d": d, "a": a})]
    out = []
    for i in range(1, l + 1):
        Q, K = np.zeros((a, d), dtype=np.int64), np.zeros((a, d), dtype=np.int64)
        if piece["lemma"] == "peeling":  # Q = [I_a 0], K = [diag(C^T, I_{a-2}) 0]
            Q[:, :a] = np.eye(a, dtype=np.int64)
            K[:, :a] = np.eye(a, dtype=np.int64)
            K[:2, :2] = np.array(piece["core"]).T
        else:  # K_i = b_i^T, Q_i = c_i^T; b_j = base + j slope for j >= 2
            for M, name in ((K, "b"), (Q, "c")):
                v = piece["first"][name] if i == 1 else [x + i * y for x, y in zip(*piece["later"][name])]
                M[0, :len(v)] = v
        out.append((Q, K))
    return out


def _point(layers, d):
    flat = []
    for Q, K in layers:
        flat += Q.ravel().tolist() + K.ravel().tolist() + np.eye(d, dtype=np.int64).ravel().tolist()
    return np.array(flat, dtype=np.int64)


def _rank_at_point(cert, l, d, a, seed=0) -> int:
    """The rank mod p at the point on random inputs: at V_i = I one input's 2d rows carry little of the rank
    (every output row is its input row times one 2x2 matrix), so three times as many rows as parameters."""
    arch = Architecture((d,) * (l + 1), (a,) * l, tokens=2)
    inputs = np.random.default_rng(seed).integers(-50, 51, (3 * arch.parameter_count // d + 4, d, 2))
    return rank_mod_p(jacobian_mod_p(arch, _point(_layers(cert, l, d, a), d), inputs, P), P)


SIZES = [(4, 3, 2), (5, 2, 2), (4, 4, 4), (6, 2, 1), (4, 3, 1), (5, 1, 1), (1, 3, 3), (2, 2, 1), (5, 4, 3),
         (10, 3, 2), (8, 3, 1), (6, 7, 5)]


@pytest.mark.parametrize("sizes", SIZES)
def test_the_certificates_point_has_the_formulas_rank_beyond_the_old_range(cert, sizes):
    """Theorem 7.7's lower bound is the exact rank at the certificate's own point (Lemmas 7.7.2 / 7.7.4 and
    7.7.5), here the whole network's Jacobian mod p, at depths and ranks the pattern pieces never reached; a rank
    mod p is at most the rank over Q, which is at most dim M, which Lemma 7.7.1 bounds by the formula."""
    l, d, a = sizes
    assert _rank_at_point(cert, l, d, a) == _formula(l, d, a)


@pytest.mark.parametrize("sizes", [(3, 3, 2), (2, 4, 3), (4, 2, 2)])
def test_peeling_kernel_is_the_torus_on_the_whole_virtual_space(sizes):
    """Lemma 7.7.2 on all of (C^{dxd})^l x C^{dxd}, not only the rank-a tangent space: with Q_i = I_d, K_i = M_i^T
    and V_i = I, the columns of K_1..K_l and V_l are dPsi at (M, I), and its kernel is the l-torus."""
    l, d, a = sizes
    M = np.zeros((d, d), dtype=np.int64)
    M[:a, :a] = np.eye(a, dtype=np.int64)
    arch = Architecture((d,) * (l + 1), (d,) * l, tokens=2)
    layers = [(np.eye(d, dtype=np.int64), M.T.copy()) for _ in range(l)]
    offsets = {(b.name, b.layer): b.offset for b in arch.blocks()}
    cols = [offsets[("K", i)] + j for i in range(1, l + 1) for j in range(d * d)]
    cols += [offsets[("V", l)] + j for j in range(d * d)]
    inputs = np.random.default_rng(1).integers(-50, 51, (2 * len(cols) // (2 * d) + 4, d, 2))
    J = jacobian_mod_p(arch, _point(layers, d), inputs, P)[:, cols]
    assert rank_mod_p(J, P) == (l + 1) * d * d - l


def _dS(M, Y):
    """The Jacobian of ``S_M(Y) = Y (Y^T M Y)`` at ``Y`` over Q, columns along the unit matrices of ``Y``."""
    d = M.rows
    cols = []
    for r, j in itertools.product(range(d), range(2)):
        E = sympy.zeros(d, 2)
        E[r, j] = 1
        cols.append(list(E * (Y.T * M * Y) + Y * (E.T * M * Y + Y.T * M * E)))
    return sympy.Matrix(cols).T


@pytest.mark.parametrize("d", [2, 3, 5])
def test_dominance_from_the_two_by_two_block(d):
    """Lemma 7.7.3 for arbitrary M (not only the certificate's): det J = det(C)^(d-2) det(Lambda_C) at
    Y = [e_0, e_1], C the block of M there; and Lambda_C is the width-2 layer's Jacobian at I."""
    from attngeo.geometry.dimension.layerwitness import lam

    rng = np.random.default_rng(d)
    for _ in range(3):
        M = sympy.Matrix(rng.integers(-3, 4, (d, d)).tolist())
        C = M[:2, :2]
        Y = sympy.Matrix(d, 2, lambda r, j: int(r == j))
        assert _dS(M, Y).det() == C.det() ** (d - 2) * lam(C.tolist()).det()
        assert _dS(C, sympy.eye(2)) == lam(C.tolist())


def test_rank_one_layers_collapse_to_a_scalar_times_the_first(cert):
    """Lemma 7.7.4's identity at the certificate's rank-one point, exactly: Psi(X) = c(X) P w s^T with
    w = X X^T b_1, s = X^T c_1, c = prod_j [(w^T M_j w)(s^T s)]^(3^(l-j))."""
    l, d = 4, 3
    layers = _layers(cert, l, d, 1)
    arch = Architecture((d,) * (l + 1), (1,) * l, tokens=2)
    X = np.random.default_rng(2).integers(-3, 4, (d, 2))
    out = network(ExactOps(), split_point(arch, [int(v) for v in _point(layers, d)]), X.astype(object))
    (c1, b1), Xs = layers[0], sympy.Matrix(X.tolist())
    w, s = Xs * Xs.T * sympy.Matrix(b1[0]), Xs.T * sympy.Matrix(c1[0])
    c = 1
    for j, (cj, bj) in enumerate(layers[1:], start=2):
        c *= ((w.T * sympy.Matrix(bj[0]) * sympy.Matrix(cj[0]).T * w)[0] * (s.T * s)[0]) ** (3 ** (l - j))
    assert sympy.Matrix(out.tolist()) == c * w * s.T


# -- the certificate and its checker -----------------------------------------------------------------------


def test_every_depth_is_claimed(cert):
    """(The superseded certificate keeps its l <= 3, a <= 3: tests/test_allsizes.py.)"""
    claim = check_certificate(cert).claim
    assert claim.endswith("for all l >= 1, a >= 1, a <= d (3 pieces)") and "<= 3" not in claim


def _core(value):  # piece 0: a >= 2, the peeling lemma
    return lambda c: c["pieces"][0].__setitem__("core", value)


def _later(name, value):  # piece 1: a = 1, d >= 2, the rank-one lemma
    return lambda c: c["pieces"][1]["later"].__setitem__(name, value)


TAMPERS = {
    "singular core": (_core([[1, 1], [1, 1]]), "singular"),
    "skew core": (_core([[0, 1], [-1, 0]]), "skew"),
    "core of three columns": (_core([[1, 0, 0], [0, 1, 0]]), "2 entries"),
    "core of booleans": (_core([[True, False], [False, True]]), "integer"),
    "b_j = c_j": (_later("c", [[1, 0], [0, 1]]), "det"),
    "b_j all proportional": (_later("b", [[1, 0], [2, 0]]), "proportional"),
    "b_1 = 0": (lambda c: c["pieces"][1]["first"].__setitem__("b", [0, 0]), "nonzero"),
    "one coordinate at d >= 2": (lambda c: c["pieces"].__setitem__(1, {**copy.deepcopy(c["pieces"][2]),
                                                                         "equalities": ["a = 1"]}), "d = 1"),
    "three coordinates": (lambda c: c["pieces"][1]["first"].update(b=[1, 0, 0], c=[1, 0, 0]), "coordinates"),
    "a zero later vector at d = 1": (lambda c: c["pieces"][2]["later"].__setitem__("b", [[2], [-1]]), "zero"),
    "unknown lemma": (lambda c: c["pieces"][0].__setitem__("lemma", "induction"), "lemma must be"),
    "a pattern key": (lambda c: c["pieces"][0].__setitem__("cells", {}), "exactly"),
    "unknown key": (lambda c: c["pieces"][0].__setitem__("note", "trust me"), "unknown field"),
    "peeling at a = 1": (lambda c: c["cases"]["lt"].__setitem__("ge", {"piece": 0}), "needs a >= 2|every piece"),
    "one piece for all": (lambda c: c.update(cases={"piece": 0}), "needs a >= 2|every piece"),
    "rank one at a >= 2": (lambda c: c["cases"].__setitem__("ge", {"piece": 1}), "a = 1|every piece"),
    "no argument": (lambda c: c.pop("argument"), "statement"),
    "another argument": (lambda c: c.__setitem__("argument", "pattern points"), "argument must be"),
    "a wider hypothesis": (lambda c: c.__setitem__("hypotheses", ["l >= 1", "a >= 1"]), "statement"),
    "a formula off by l": (lambda c: c["formula"][0].__setitem__("value", "2*l*a*d - l*a^2 + d^2"), "statement"),
}


@pytest.mark.parametrize("name", list(TAMPERS))
def test_tampered_witnesses_and_wider_claims_are_refused(cert, name):
    tamper, message = TAMPERS[name]
    bad = copy.deepcopy(cert)
    tamper(bad)
    with pytest.raises(AttngeoError, match=message):
        check_certificate(bad)


@pytest.mark.parametrize("change,message", [
    ({"hypotheses": ["l >= 1", "a >= 1", "a <= d + 1"]}, "a <= d"),
    ({"hypotheses": ["l >= 0", "a >= 1", "a <= d"]}, "l >= 1"),
    ({"hypotheses": ["l >= 1", "a >= 0", "a <= d"]}, "a = 1|does not follow"),
    ({"formula": [{"when": [], "value": "2*l*a*d - l*a^2 + d^2 - l + 1"}]}, "the lemmas' count"),
], ids=["a<=d+1", "l>=0", "a>=0", "formula+1"])
def test_honest_witnesses_do_not_prove_a_wider_or_false_statement(cert, monkeypatch, change, message):
    """Were the checker's table of statements wrong (a later edit), the pieces must still not prove it: the
    lemmas' range (l >= 1, a <= d, the rank-one lemma's a = 1) and their count are the checker's own."""
    theorem = {**copy.deepcopy(allsizes.THEOREMS["deep-dimension"]), **change}
    monkeypatch.setitem(allsizes.THEOREMS, "deep-dimension", theorem)
    restated = {**copy.deepcopy(cert), **{k: copy.deepcopy(theorem[k]) for k in ("hypotheses", "formula")}}
    with pytest.raises(CertificateRejected, match=message):
        check_certificate(restated)


def test_another_core_is_a_proof_too(cert):
    """The checker is not tied to the prover's witness: any core with det C != 0 and C + C^T != 0 works (for a
    real core Lambda_C is then nonsingular), and the whole network has the formula's rank there."""
    other = copy.deepcopy(cert)
    other["pieces"][0]["core"] = [[2, 1], [-1, 1]]
    assert check_certificate(other).claim == check_certificate(cert).claim
    assert _rank_at_point(other, 3, 3, 2) == _formula(3, 3, 2)


def test_the_prover_refuses_a_core_that_fails_the_lemma():
    from attngeo.geometry.dimension.layerwitness import peeling_piece

    with pytest.raises(InvalidInputError, match="skew"):
        peeling_piece([[0, 1], [-1, 0]])
