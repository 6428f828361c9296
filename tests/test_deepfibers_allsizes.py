"""Deep fibers for all sizes (docs/math.md §7.8, kind ``fiber-all-sizes``): the witness point against exact
computation, the constructions of Theorem 7.8 (2), and the negative corpus of the checker."""

import copy
import json
import random
from fractions import Fraction

import pytest
from flint import fmpq, fmpq_mat

from attngeo import Architecture, CertificateRejected, check_certificate
from attngeo.check.fibers import allsizes as checker
from attngeo.geometry.fibers.deep import same_function
from attngeo.geometry.fibers.virtual import virtual_fiber, virtual_weights
from attngeo.theorems.allsizes import piece_at, prove, proved

from test_virtualfiber_attacks import own_phi


@pytest.fixture(scope="module")
def cert():
    return prove("deep-fibers")


def witness_point(widths, ranks, core, shift) -> list[int]:
    """docs/math.md §7.8's ``W_0``, written here from the text: ``V_i = I``, ``Q_i = [I 0]``,
    ``K_i = [diag(C^T, I) 0]`` before the last layer; ``Q_l = [I_a 0]``, ``K_l = [0_{a x s} I_a 0]`` and ``V_l``'s
    row ``r`` the unit vector ``e_((s + a + r) mod d)``."""
    d, dl, l = widths[0], widths[-1], len(ranks)
    C = [[core[c][r] for c in range(2)] for r in range(2)]  # C^T
    flat = []
    for i, a in enumerate(ranks, start=1):
        Q = [[int(r == c) for c in range(d)] for r in range(a)]
        if i < l:
            K = [[(C[r][c] if max(r, c) < 2 else int(r == c)) if c < a else 0 for c in range(d)] for r in range(a)]
            V = [[int(r == c) for c in range(d)] for r in range(d)]
        else:
            K = [[int(c == shift + r) for c in range(d)] for r in range(a)]
            V = [[int(c == (shift + a + r) % d) for c in range(d)] for r in range(dl)]
        flat += [v for M in (Q, K, V) for row in M for v in row]
    return flat


def _shift(cert, d, dd, a) -> int:
    piece = cert["pieces"][piece_at(cert, {"l": 2, "d": d, "dd": dd, "a": a})]
    return eval(piece["shift"], {"a": a, "d": d, "dd": dd})  # a polynomial in the sizes, as the checker reads it


def _sizes(seed: int, count: int):
    """Sizes inside Theorem 7.8 (1): hidden widths d, earlier ranks in [2, d], 2 a + dd >= d."""
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        l, d = rng.randint(2, 5), rng.randint(2, 7)
        a = rng.randint(1, d)
        dd = rng.randint(max(1, d - 2 * a), d + 1)
        out.append(((d,) * l + (dd,), tuple(rng.randint(2, d) for _ in range(l - 1)) + (a,)))
    return out + [((2, 2, 1), (2, 1)), ((3, 3, 3, 1), (2, 3, 1)), ((5, 5, 1), (4, 2)), ((6, 6, 6, 2), (3, 2, 2))]


def test_the_certificate_verifies_and_says_what_it_proves(cert):
    claim = check_certificate(cert).claim
    assert cert["kind"] == "fiber-all-sizes" and len(cert["pieces"]) == 4
    assert claim.startswith("for all sizes: the generic fiber is 1 orbit(s) of the symmetry group if a + dd >= 3; "
                            "2 if a + dd <= 2") and "2*a + dd >= d" in claim and "earlier ranks 2 <= a_i <= d" in claim


@pytest.mark.parametrize("widths, ranks", _sizes(0, 24))
def test_at_the_witness_point_the_virtual_fiber_has_the_theorems_orbits(cert, widths, ranks):
    """Theorem 7.8 (1) at each size from its witness point: the virtual-weight certificate there (Lemma P, Lemma A,
    Theorem V, every hypothesis checked at the point by its own checker) has the theorem's number of orbits, each
    of dimension dim G, and says generic."""
    d, dd, a = widths[0], widths[-1], ranks[-1]
    piece = cert["pieces"][piece_at(cert, {"l": len(ranks), "d": d, "dd": dd, "a": a})]
    W0 = witness_point(widths, ranks, piece["core"], _shift(cert, d, dd, a))
    arch = Architecture(widths, ranks, tokens=2)
    fib = virtual_fiber(arch, point=W0, seed=0)
    orbits = 1 if a + dd >= 3 else 2
    group = sum(r * r + 1 for r in ranks) + (len(ranks) - 1) * d * d
    assert len(fib.orbits) == orbits and fib.generic and fib.dimensions == [group] * orbits
    assert check_certificate(fib.to_json()).claim.startswith(f"fiber = {orbits} orbit(s)")


def test_the_witness_points_virtual_weights_are_the_texts(cert):
    """v(W_0) = (A_1, .., A_l, V_l) with A_i = diag(C, I, 0) and A_l = sum_k e_(s+k) e_k^T (docs/math.md §7.8)."""
    widths, ranks = (5, 5, 5, 3), (3, 2, 2)
    Ms, P, _ = virtual_weights(Architecture(widths, ranks), witness_point(widths, ranks, [[1, 0], [0, 1]], 1))
    assert Ms[0] == fmpq_mat([[int(r == c and r < 3) for c in range(5)] for r in range(5)])
    assert Ms[2] == fmpq_mat([[int(r == c + 1 and c < 2) for c in range(5)] for r in range(5)])
    assert P == fmpq_mat([[int(c == (3 + r) % 5) for c in range(5)] for r in range(3)])


@pytest.mark.parametrize("widths, ranks, first", [((2, 2, 2, 2), (1, 2, 2), 1), ((2, 2, 2, 2), (2, 1, 2), 2),
                                                  ((2, 2, 2, 1), (2, 1, 1), 2)])
def test_after_a_rank_one_layer_transposing_later_layers_keeps_the_function(widths, ranks, first):
    """Theorem 7.8 (2): exchanging Q_j and K_j for any set of layers j after the first rank-one layer gives the same
    function (exactly as polynomials at two tokens; at three tokens on random rational inputs) and, at a point of
    the dense open set (no later M_j symmetric or skew), 2^(l - i) points of distinct orbits (some later M_j of
    two of them not proportional)."""
    arch = Architecture(widths, ranks, tokens=2)
    rng = random.Random(2)
    while True:  # the dense open set of (2): no later M_j symmetric or skew (a random point may be outside it)
        W = [rng.randint(-3, 3) for _ in range(arch.parameter_count)]
        Ms = virtual_weights(arch, W)[0]
        if all(M != M.transpose() and M != -M.transpose() for M in Ms[first:]):
            break
    offsets, off = [], 0
    for i, a in enumerate(ranks):
        offsets.append(off)
        off += 2 * a * widths[i] + widths[i + 1] * widths[i]

    def exchanged(layers):
        out = list(W)
        for j in layers:
            o, n = offsets[j - 1], ranks[j - 1] * widths[j - 1]
            out[o:o + n], out[o + n:o + 2 * n] = W[o + n:o + 2 * n], W[o:o + n]
        return out

    later = range(first + 1, len(ranks) + 1)
    subsets = [[j for k, j in enumerate(later) if mask >> k & 1] for mask in range(2 ** len(later))]
    points = [exchanged(s) for s in subsets]
    lasts = []
    for p in points:
        assert same_function(arch, [fmpq(v) for v in W], [fmpq(v) for v in p])
        X = [[Fraction(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(3)] for _ in range(widths[0])]
        assert own_phi(widths, ranks, W, X) == own_phi(widths, ranks, p, X)
        Ms = virtual_weights(arch, p)[0]
        lasts.append([M.entries() for M in Ms])
    for x in range(len(points)):
        for y in range(x):  # distinct torus orbits: some later M_j is not proportional
            assert any(fmpq_mat([u, v]).rank() == 2 for u, v in zip(lasts[x], lasts[y]))


def test_a_narrow_last_layer_at_depth_three_puts_limits_of_the_orbit_in_the_fiber():
    """Theorem 7.8 (3) at widths 4,4,4,1, ranks 2,2,1 (2 a_l + d_l = 3 < 4): with n killed by M_3, M_3^T and P,
    u = P_2 n and w^T u = 1, replacing V_2 by (I - u w^T) V_2 keeps every virtual weight (so the function: also
    compared on random inputs at three tokens) and makes V_2 singular (outside the orbit); the inter-layer
    g_eps = I + (eps - 1) u w^T at hidden width 2 moves W along a line that reaches it at eps = 0."""
    from attngeo.exact.rank import kernel_over_q
    from attngeo.geometry.fibers.deep import gauge_point
    from attngeo.geometry.symmetry import act

    widths, ranks = (4, 4, 4, 1), (2, 2, 1)
    arch = Architecture(widths, ranks, tokens=2)
    W = gauge_point(arch, random.Random(5))
    Ms, P, _ = virtual_weights(arch, W)
    (n,) = kernel_over_q(fmpq_mat(Ms[2].tolist() + Ms[2].transpose().tolist() + P.tolist()))
    lo = 32 + 16  # V_2's offset: layer 1 (Q, K, V: 8 + 8 + 16 weights), then Q_2 and K_2
    V1, V2 = fmpq_mat(4, 4, W[16:32]), fmpq_mat(4, 4, W[lo:lo + 16])
    u = V2 * V1 * fmpq_mat([[x] for x in n])
    k = next(i for i in range(4) if u[i, 0] != 0)
    w = fmpq_mat([[1 / u[k, 0] if i == k else 0 for i in range(4)]])
    eye = fmpq_mat([[int(i == j) for j in range(4)] for i in range(4)])
    limit = W[:lo] + ((eye - u * w) * V2).entries() + W[lo + 16:]
    assert virtual_weights(arch, limit)[:2] == (Ms, P) and fmpq_mat(4, 4, limit[lo:lo + 16]).rank() == 3
    rng = random.Random(1)
    X = [[Fraction(rng.randint(-5, 5), rng.randint(1, 3)) for _ in range(3)] for _ in range(4)]
    as_fractions = lambda p: [Fraction(int(v.p), int(v.q)) for v in p]  # noqa: E731
    assert own_phi(widths, ranks, as_fractions(W), X) == own_phi(widths, ranks, as_fractions(limit), X)
    for eps in (fmpq(1, 2), fmpq(-3)):  # g_eps . W = W_* + eps (W - W_*)
        moved = act(arch, W, "inter", 2, (eye + (eps - 1) * (u * w)).tolist())
        assert moved == [x + eps * (y - x) for x, y in zip(limit, W)]


def test_prove_writes_and_check_reads_it(tmp_path, capsys):
    from attngeo.ui.cli import main

    path = tmp_path / "fibers.json"
    assert main(["prove", "deep-fibers", "--certificate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "G-orbits in the generic fiber = 1  if a + dd >= 3; 2  if a + dd <= 2" in out and "d - a" in out
    assert main(["check", str(path)]) == 0
    assert json.loads(path.read_text())["kind"] == "fiber-all-sizes"
    assert proved("deep-fibers").summary()["shifts"] == ["a", "a", "a", "d - a"]


# -- the negative corpus ------------------------------------------------------------------------------------------


def _rejected(cert, match, edit):
    forged = copy.deepcopy(cert)
    edit(forged)
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(forged)


def _piece(cert, **sizes) -> dict:
    return cert["pieces"][piece_at(cert, {"l": 2, **sizes})]


def test_a_wider_statement_is_rejected(cert):
    """Claims of more than Theorem 7.8 (1) proves: no 2a + dd >= d (finding 22's narrow last layer), one orbit at
    a = dd = 1 (finding 21's swap), depth 1, d = 1; and the earlier ranks are not the certificate's to choose."""
    def hypothesis(old, new):
        return lambda c: c["hypotheses"].__setitem__(c["hypotheses"].index(old), new)
    _rejected(cert, "hypotheses is not the checker's statement", lambda c: c["hypotheses"].remove("2*a + dd >= d"))
    _rejected(cert, "hypotheses is not the checker's statement", hypothesis("l >= 2", "l >= 1"))
    _rejected(cert, "hypotheses is not the checker's statement", hypothesis("d >= 2", "d >= 1"))
    _rejected(cert, "formula is not the checker's statement",
              lambda c: c.update(formula=[{"when": [], "value": "1"}]))
    _rejected(cert, "unknown field", lambda c: c["pieces"][0].update(earlier_ranks="a_i >= 1"))
    _rejected(cert, "argument must be", lambda c: c.update(argument="depth-induction"))
    _rejected(cert, "unknown theorem", lambda c: c.update(theorem="deep-dimension"))


@pytest.mark.parametrize("change, match", [
    ({"hypotheses": ["l >= 2", "d >= 2", "dd >= 1", "a >= 1", "a <= d"]}, "needs 2a \\+ dd >= d"),
    ({"hypotheses": ["l >= 1", "d >= 2", "dd >= 1", "a >= 1", "a <= d", "2*a + dd >= d"]}, "needs l >= 2"),
    ({"hypotheses": ["l >= 2", "d >= 1", "dd >= 1", "a >= 1", "a <= d", "2*a + dd >= d"]}, "needs d >= 2"),
    ({"formula": [{"when": [], "value": "1"}]}, "one orbit needs a >= 2 or dd >= 2"),
    ({"formula": [{"when": [], "value": "3"}]}, "must be 1 or 2 orbits"),
])
def test_a_wider_table_in_the_checker_is_still_refused_piece_by_piece(cert, monkeypatch, change, match):
    """Whatever the checker's own table says, each piece must lie in the lemmas' range and back its value."""
    theorem = {**copy.deepcopy(checker.THEOREMS["deep-fibers"]), **change}
    monkeypatch.setitem(checker.THEOREMS, "deep-fibers", theorem)
    forged = {**copy.deepcopy(cert), **{k: v for k, v in change.items()}}
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(forged)


def test_a_wrong_shift_or_core_is_rejected(cert):
    narrow = piece_at(cert, {"l": 2, "d": 3, "dd": 1, "a": 2})  # d < 2a: the shift must be d - a
    wide = piece_at(cert, {"l": 2, "d": 6, "dd": 4, "a": 2})
    _rejected(cert, "s \\+ a <= d", lambda c: c["pieces"][narrow].update(shift="a"))
    _rejected(cert, "s \\+ a \\+ dd >= d", lambda c: c["pieces"][wide].update(shift="0"))
    _rejected(cert, "s <= a", lambda c: c["pieces"][wide].update(shift="d - a"))
    _rejected(cert, "s >= 0", lambda c: c["pieces"][wide].update(shift="a - d"))
    _rejected(cert, "shift", lambda c: c["pieces"][wide].update(shift="a/2"))
    _rejected(cert, "singular", lambda c: c["pieces"][wide].update(core=[[1, 1], [1, 1]]))
    _rejected(cert, "skew", lambda c: c["pieces"][wide].update(core=[[0, 1], [-1, 0]]))


def test_a_case_tree_that_hides_the_swap_is_rejected(cert):
    """Merging the a = 1 pieces (one shift for dd >= 1) leaves a piece where neither value holds throughout; marking
    the two-orbit leaf empty is refused as it holds sizes; moving a size's equalities is refused."""
    def merge(c):
        node = c["cases"]["ge"]["lt"]  # a = 1 under d >= 2a: split on dd - 2
        node.clear()
        node.update({"piece": 1})
        del c["pieces"][2]
        c["cases"]["lt"] = {"piece": 2}
    _rejected(cert, "no case of the formula holds", merge)
    swap = piece_at(cert, {"l": 2, "d": 2, "dd": 1, "a": 1})

    def empty(c):
        c["cases"]["ge"]["lt"]["lt"] = {"empty": True}
        del c["pieces"][swap]
    _rejected(cert, "marked empty holds sizes", empty)
    _rejected(cert, "does not follow", lambda c: c["pieces"][swap].update(equalities=["a = 1", "dd = 2"]))
