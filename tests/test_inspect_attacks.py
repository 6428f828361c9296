"""Adversarial review of ``local-rank`` certificates and ``attngeo inspect`` (docs/math.md §7.5).

Every claim here is tested against a local rank computed from scratch in this file: the Jacobian of
``W -> F`` (the coefficients of ``y_m y_n`` in ``F_kp``, ``F = sum_j O_j U_j y y^T K_j^T Q_j``),
differentiated by hand and ranked mod a prime by FLINT — no code of the prover or the checker. Attacks
that currently succeed are ``xfail(strict=True)``: the fix flips them.
"""

import copy
import io
import json
import struct
import zipfile

import numpy as np
import pytest
from flint import nmod_mat

from attngeo import Architecture, CertificateRejected, check_certificate
from attngeo.exceptions import AttngeoError
from attngeo.geometry.loci.regularity import local_rank
from attngeo.model.weights import save_safetensors
from attngeo.ui.cli import main

PRIME = 1000003
NAMES = ("Q", "K", "U", "O")


# -- the local rank, from scratch ------------------------------------------------------------------------


def _heads_rank(d, dd, heads) -> int:
    """Rank mod p of ``W -> F`` at ``heads`` (dicts of integer matrices Q, K and U, O or V)."""
    cols = []
    for w in heads:
        A = (w["K"].T.dot(w["Q"])) % PRIME
        V = (w["O"].dot(w["U"]) if "U" in w else w["V"]) % PRIME
        for name in ("Q", "K", "U", "O") if "U" in w else ("Q", "K", "V"):
            for idx in np.ndindex(*w[name].shape):
                E = np.zeros(w[name].shape, dtype=np.int64)
                E[idx] = 1
                dA = {"Q": lambda: w["K"].T.dot(E), "K": lambda: E.T.dot(w["Q"])}.get(name, lambda: 0 * A)() % PRIME
                dV = {"V": lambda: E, "U": lambda: w["O"].dot(E), "O": lambda: E.dot(w["U"])}.get(name, lambda: 0 * V)()
                T = (np.einsum("km,np->kpmn", dV % PRIME, A) + np.einsum("km,np->kpmn", V, dA)) % PRIME
                iu = np.triu_indices(d, 1)
                cols.append(np.concatenate([(T + T.transpose(0, 1, 3, 2))[:, :, iu[0], iu[1]].ravel(),
                                            T[:, :, np.arange(d), np.arange(d)].ravel()]) % PRIME)
    M = np.array(cols, dtype=np.int64)
    return nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), PRIME).rank()


def _generic(d, dd, h, a, b, seed=0) -> int:
    """dim M from scratch: the rank at a random point with wide entries (the largest rank, generically)."""
    rng = np.random.default_rng(seed)
    return _heads_rank(d, dd, [_random_head(rng, d, dd, a, b) for _ in range(h)])


def _random_head(rng, d, dd, a, b):
    w = {"Q": rng.integers(-50, 51, (a, d)), "K": rng.integers(-50, 51, (a, d))}
    w.update({"V": rng.integers(-50, 51, (dd, d))} if b is None else
             {"U": rng.integers(-50, 51, (b, d)), "O": rng.integers(-50, 51, (dd, b))})
    return w


def _flat(heads) -> list:
    names = NAMES if "U" in heads[0] else ("Q", "K", "V")
    return [int(x) for w in heads for n in names for x in w[n].ravel()]


def _arch(d, dd, h, a, b, **kw):
    return Architecture((d, dd), (a,), heads=h, value_ranks=b, **kw)


# -- separated heads with a = b = 1: two heads that exchange U and K ------------------------------------


def _swapped(d, dd, h, seed=1):
    """``h`` heads of rank 1 (a = b = 1), head 2i + 1 with U and K exchanged against head 2i: each pair has the
    same quadratic form u_j k_j, so the blocks (R_i, C_j) of Theorem S's proof are not injective."""
    rng = np.random.default_rng(seed)
    heads = []
    for j in range(h):
        w = _random_head(rng, d, dd, 1, 1)
        if j % 2:
            w["U"], w["K"] = heads[-1]["K"].copy(), heads[-1]["U"].copy()
        heads.append(w)
    return heads


SWAPPED = [(2, 2, 2), (3, 3, 2), (3, 3, 3), (4, 5, 4)]


@pytest.mark.parametrize("d,dd,h", SWAPPED)
def test_swapped_rank_one_heads_lose_rank(d, dd, h):
    """The truth the next two tests rest on: each swapped pair loses 2 (one in each of the blocks (R_i, C_j) and
    (R_j, C_i)), below the generic rank P - 3h = dim M. The network's own Jacobian (a second method) agrees."""
    from attngeo.exact.rank import rank_mod_p
    from attngeo.model.jacobian import jacobian_mod_p

    heads = _swapped(d, dd, h)
    P = 2 * h * d + h * (d + dd)
    generic = _generic(d, dd, h, 1, 1)
    rho = _heads_rank(d, dd, heads)
    assert generic == P - 3 * h and rho == generic - 2 * (h // 2)
    arch = _arch(d, dd, h, 1, 1)
    p = 67108859
    X = np.random.default_rng(0).integers(-9, 10, (P + 8, d, 2))
    assert rank_mod_p(jacobian_mod_p(arch, np.array(_flat(heads), dtype=np.int64), X, p), p) == rho


@pytest.mark.parametrize("d,dd,h", SWAPPED)
def test_the_prover_does_not_certify_swapped_heads_regular(d, dd, h):
    heads = _swapped(d, dd, h)
    res = local_rank(_arch(d, dd, h, 1, 1), _flat(heads), seed=0, dimension=False)
    rho = _heads_rank(d, dd, heads)
    assert res.lower <= rho <= res.upper
    assert res.regular is not True


def _forged_swapped_certificate(d, dd, h):
    """The prover's certificate at the swapped point, with the separated-heads witness over all heads written
    in (whatever the prover now chooses): lower = upper = P - 3h, regular."""
    heads = _swapped(d, dd, h)
    arch = _arch(d, dd, h, 1, 1)
    cert = local_rank(arch, _flat(heads), seed=0, dimension=False).to_json()
    bound = arch.parameter_count - 3 * h
    cert.pop("dimension_certificate", None)
    cert.update(lower_witness={"heads": list(range(1, h + 1))}, lower=bound, upper=bound, generic=[bound, bound],
                regular=True)
    return cert, _heads_rank(d, dd, heads), bound


@pytest.mark.parametrize("d,dd,h", SWAPPED)
def test_the_checker_refuses_theorem_s_for_swapped_heads(d, dd, h):
    cert, rho, bound = _forged_swapped_certificate(d, dd, h)
    assert rho < bound  # the claim is false
    with pytest.raises(CertificateRejected):
        check_certificate(cert)


def test_theorem_s_stays_for_a_equal_one_when_b_is_two():
    """Not every a = 1 case is the hole: with b >= 2 a kernel vector of the block (R_i, C_j) needs
    row K_j in row K_i (docs/math.md §7.5's injectivity argument, roles exchanged), which full-rank stacked
    K excludes; here even U_1 = U_2. The checker's shortcut is then right, and the rank agrees."""
    rng = np.random.default_rng(4)
    heads = [_random_head(rng, 4, 4, 1, 2) for _ in range(2)]
    heads[1]["U"] = heads[0]["U"].copy()
    res = local_rank(_arch(4, 4, 2, 1, 2), _flat(heads), seed=0, dimension=False)
    assert res.lower == res.upper == _heads_rank(4, 4, heads) == _generic(4, 4, 2, 1, 2) and res.regular is True
    assert check_certificate(res.to_json()).claim.startswith(f"local rank {res.lower} = dim M")


@pytest.mark.parametrize("a,b,same", [(2, 1, "K"), (1, 2, "U"), (2, 2, "K")])
def test_theorem_s_needs_only_one_row_space_to_differ_when_a_or_b_is_two(a, b, same):
    """(S4) as proved in docs/math.md §7.5: with max(a, b) >= 2 a kernel vector of a block (R_i, C_j) forces
    row K_i = row K_j *and* row U_i = row U_j, so heads sharing one of them are still separated: the rank from
    scratch is dim M, and prover and checker say regular."""
    rng = np.random.default_rng(7)
    heads = [_random_head(rng, 4, 4, a, b) for _ in range(2)]
    heads[1][same] = heads[0][same].copy()
    res = local_rank(_arch(4, 4, 2, a, b), _flat(heads), seed=0, dimension=False)
    assert _heads_rank(4, 4, heads) == _generic(4, 4, 2, a, b) == res.lower == res.upper and res.regular is True
    assert check_certificate(res.to_json()).claim.startswith(f"local rank {res.lower} = dim M")


# -- honest claims at degenerate points, against the rank from scratch ------------------------------------


def _case(name, rng):
    d, dd, a, b, h = 4, 4, 2, 2, 2
    heads = [_random_head(rng, d, dd, a, b) for _ in range(h)]
    w0, w1 = heads
    if name == "equal heads":
        heads[1] = {k: v.copy() for k, v in w0.items()}
    elif name == "same K (a >= 2)":
        w1["K"] = w0["K"].copy()
    elif name == "same U (b >= 2)":
        w1["U"] = w0["U"].copy()
    elif name == "same U and K":
        w1["U"], w1["K"] = w0["U"].copy(), w0["K"].copy()
    elif name == "one shared row of K":
        w1["K"][0] = w0["K"][0]
    elif name == "same Q":
        w1["Q"] = w0["Q"].copy()
    elif name == "same O":
        w1["O"] = w0["O"].copy()
    elif name == "Q rank 1":
        w0["Q"][1] = 3 * w0["Q"][0]
    elif name == "U rank 1 and O rank 1":
        w0["U"][1] = -w0["U"][0]
        w0["O"][:, 1] = 2 * w0["O"][:, 0]
    elif name == "A = 0":
        w0["K"] = np.zeros_like(w0["K"])
    elif name == "V = 0, A = 0":
        w0["O"] = np.zeros_like(w0["O"])
        w0["Q"] = np.zeros_like(w0["Q"])
    elif name == "rank-1 parallel":
        q, k = rng.integers(-9, 10, (2, 4))
        w0["Q"] = np.array([q, 2 * q])
        w0["K"] = np.array([k, 0 * k])
        w0["U"] = np.array([k, 3 * k])
        w0["O"][:, 1] = 0
    elif name == "swapped U and K of rank 2":  # not a hole: a, b >= 2 and the row spaces differ
        w1["U"], w1["K"] = w0["K"].copy(), w0["U"].copy()
    return (d, dd, h, a, b), heads


CASES = ["equal heads", "same K (a >= 2)", "same U (b >= 2)", "same U and K", "one shared row of K", "same Q",
         "same O", "Q rank 1", "U rank 1 and O rank 1", "A = 0", "V = 0, A = 0", "rank-1 parallel",
         "swapped U and K of rank 2"]


@pytest.mark.parametrize("name", CASES)
def test_bounds_and_verdict_agree_with_the_rank_from_scratch(name):
    (d, dd, h, a, b), heads = _case(name, np.random.default_rng(len(name)))
    res = local_rank(_arch(d, dd, h, a, b), _flat(heads), seed=0, dimension=False)
    rho, dim = _heads_rank(d, dd, heads), _generic(d, dd, h, a, b)
    assert res.lower <= rho <= res.upper
    assert res.generic[0] <= dim <= res.generic[1]
    assert res.regular is None or res.regular == (rho == dim)
    check_certificate(res.to_json())


def test_random_degenerate_points_never_give_a_false_claim():
    """Property: at points built from random low-rank blocks (repeated and exchanged blocks included), every
    certified bound holds for the rank from scratch, and a verdict agrees with it (swapped U and K included)."""
    rng = np.random.default_rng(11)

    def low_rank(r, c, k):
        return rng.integers(-4, 5, (r, k)).dot(rng.integers(-4, 5, (k, c))) if k else np.zeros((r, c), dtype=np.int64)

    dims = {}
    for trial in range(30):
        d, dd, h, a = (int(x) for x in rng.integers((2, 1, 1, 1), (5, 5, 4, 4)))
        b = int(rng.integers(1, 4)) if trial % 4 else None
        heads = []
        for j in range(h):
            w = {"Q": low_rank(a, d, int(rng.integers(0, min(a, d) + 1))),
                 "K": low_rank(a, d, int(rng.integers(0, min(a, d) + 1)))}
            if b is None:
                w["V"] = low_rank(dd, d, int(rng.integers(0, min(dd, d) + 1)))
            else:
                w["U"] = low_rank(b, d, int(rng.integers(0, min(b, d) + 1)))
                w["O"] = low_rank(dd, b, int(rng.integers(0, min(b, dd) + 1)))
            if heads and rng.random() < 0.3:
                w["K"] = heads[-1]["K"].copy()
            elif heads and b == a and rng.random() < 0.3:
                w["U"], w["K"] = heads[-1]["K"].copy(), heads[-1]["U"].copy()
            heads.append(w)
        res = local_rank(_arch(d, dd, h, a, b), _flat(heads), seed=trial, dimension=False)
        rho = _heads_rank(d, dd, heads)
        key = (d, dd, h, a, b)
        dims.setdefault(key, _generic(*key))
        assert res.lower <= rho <= res.upper, (trial, key)
        assert res.generic[0] <= dims[key] <= res.generic[1], (trial, key)
        assert res.regular is None or res.regular == (rho == dims[key]), (trial, key)


@pytest.mark.parametrize("name", ["generic", "Q rank 1", "K = 0", "U rank 1", "O = 0", "parallel", "swap",
                                  "A = V = 0"])
def test_one_head_is_exact_lemma_h(name):
    """Lemma H: for one head the certified local rank is exact and is the rank from scratch."""
    rng = np.random.default_rng(len(name) + 7)
    d, dd, a, b = 4, 3, 2, 2
    w = _random_head(rng, d, dd, a, b)
    if name == "Q rank 1":
        w["Q"][1] = 2 * w["Q"][0]
    elif name == "K = 0":
        w["K"][:] = 0
    elif name == "U rank 1":
        w["U"][1] = w["U"][0]
    elif name == "O = 0":
        w["O"][:] = 0
    elif name in ("parallel", "swap"):  # A = k q^T, V = o u^T with u = k (parallel) or another s (swap)
        q, k, s = rng.integers(1, 9, (3, d))
        w["Q"], w["K"] = np.array([q, q]), np.array([k, 0 * k])
        w["U"] = np.array([k if name == "parallel" else s, 0 * k])
    elif name == "A = V = 0":
        w["Q"][:] = 0
        w["U"][:] = 0
    res = local_rank(_arch(d, dd, 1, a, b), _flat([w]), seed=0, dimension=False)
    assert res.lower == res.upper == _heads_rank(d, dd, [w])


# -- tampered and transplanted certificates -------------------------------------------------------------


@pytest.fixture(scope="module")
def honest():
    rng = np.random.default_rng(3)
    heads = [_random_head(rng, 4, 4, 2, 2) for _ in range(2)]
    return heads, local_rank(_arch(4, 4, 2, 2, 2), _flat(heads), seed=0, dimension=False).to_json()


def test_head_ranks_are_recomputed_whatever_prime_is_recorded():
    """A prime that divides the point's minors makes ranks mod p drop; the checker then ranks over Q, so a
    forger cannot choose p to lower a head's rank (here rank Q_1 = 2 over Q, 1 mod 3)."""
    arch = Architecture((3, 3), (2,))
    w = [1, 0, 0, 0, 3, 0] + [1, 0, 0, 0, 1, 0] + [1, 0, 0, 0, 1, 0, 0, 0, 1]
    cert = local_rank(arch, w, seed=0, dimension=False).to_json()
    assert cert["heads"][0]["rank_Q"] == 2 and cert["lower_witness"] == {"heads": [1]}
    cert["prime"] = 3
    assert check_certificate(cert).claim == check_certificate(dict(cert, prime=67108859)).claim
    forged = copy.deepcopy(cert)
    forged["heads"][0].update(rank_Q=1, rank_A=1)
    with pytest.raises(CertificateRejected, match="heads"):
        check_certificate(forged)


@pytest.mark.parametrize("prime", [9, 2, 1, 0, -7, 2**26 + 1, "7", 7.0, True])
def test_a_prime_that_is_not_an_odd_prime_below_the_limit_is_refused(honest, prime):
    cert = copy.deepcopy(honest[1])
    cert["prime"] = prime
    with pytest.raises(AttngeoError):
        check_certificate(cert)


def test_theorem_s_under_a_prime_dividing_the_stacked_minor_is_refused_not_misread(honest):
    """The stacked Q_j full over Q but singular mod the recorded prime: the witness is refused (mod p decides
    only when it is full), never accepted on a rank it did not see."""
    heads, _ = honest
    heads = copy.deepcopy(heads)
    p = 101
    heads[1]["Q"] = heads[0]["Q"] + p * np.random.default_rng(5).integers(-3, 4, (2, 4))  # Q_2 = Q_1 mod p
    cert = local_rank(_arch(4, 4, 2, 2, 2), _flat(heads), seed=0, dimension=False).to_json()
    assert cert["lower_witness"] == {"heads": [1, 2]}
    cert["prime"] = p
    with pytest.raises(CertificateRejected, match="stacked Q"):
        check_certificate(cert)


@pytest.mark.parametrize("path,value", [
    (("heads", 0, "rank_K"), 1), (("heads", 1, "rank_A"), 1), (("upper",), 45), (("lower",), 47),
    (("orbit_dimension",), 17), (("generic",), [46, 47]), (("regular",), None), (("regular",), False),
    (("lower_witness",), {"heads": [1, 1]}), (("lower_witness",), {"heads": [1, 2, 3]}),
    (("lower_witness",), {"heads": [True, 2]}), (("fiber", "lines"), 2), (("fiber", "case"), "rank1-swap"),
    (("parameters",), 47), (("architecture", "heads"), 1), (("architecture", "tokens"), 1),
    (("architecture", "normalization"), "softmax")])
def test_tampered_fields_are_refused(honest, path, value):
    cert = copy.deepcopy(honest[1])
    node = cert
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(AttngeoError):
        check_certificate(cert)


def test_another_points_weights_in_an_honest_certificate(honest):
    """The claim is about the point the certificate holds (it names no checkpoint): another generic layer's
    weights give a certificate that verifies about *them*; a degenerate layer's weights (equal heads) do not
    fit the recorded ranks, witness and verdict."""
    heads, cert = honest
    rng = np.random.default_rng(9)
    other = [_random_head(rng, 4, 4, 2, 2) for _ in range(2)]
    moved = dict(copy.deepcopy(cert), point=[str(x) for x in _flat(other)])
    assert check_certificate(moved).claim == check_certificate(cert).claim
    twin = [heads[0], {k: v.copy() for k, v in heads[0].items()}]
    with pytest.raises(CertificateRejected):
        check_certificate(dict(copy.deepcopy(cert), point=[str(x) for x in _flat(twin)]))


def test_an_embedded_dimension_certificate_of_another_architecture_is_refused():
    from attngeo import certify_dimension

    arch = _arch(3, 3, 1, 1, 1)
    w = [1, 2, 0, 0, 1, 1, 1, 0, 1, 2, 1, 0]
    cert = local_rank(arch, w, seed=0, dimension="always").to_json()
    assert "dimension_certificate" in cert
    other = certify_dimension(_arch(3, 3, 1, 2, 1), seed=0).to_json()
    with pytest.raises(CertificateRejected, match="another architecture"):
        check_certificate(dict(cert, dimension_certificate=other))


@pytest.mark.parametrize("change", ["softmax", "t = 1"])
def test_the_heads_witness_is_refused_where_lemma_h_does_not_apply(change):
    """Lemma H and Theorem S are about lightning heads with t >= 2 (F determines phi); a softmax layer or
    t = 1 with a heads witness is refused even when the count is right."""
    kw = {"normalization": "softmax"} if change == "softmax" else {"tokens": 1}
    arch = _arch(3, 3, 1, 2, 2, **kw)
    rng = np.random.default_rng(2)
    w = _random_head(rng, 3, 3, 2, 2)
    cert = local_rank(arch, _flat([w]), seed=0, dimension=False).to_json()
    cert.update(lower_witness={"heads": [1]}, lower=cert["upper"])
    with pytest.raises(CertificateRejected, match="for lightning layer"):
        check_certificate(cert)


def _one_token_head_rank(d, dd, w) -> int:
    """Rank mod p, from scratch, of one head's map at t = 1: ``x -> (x^T A x) V x``, a vector of cubics whose
    coefficient of ``x_m x_n x_p`` (m <= n <= p) in output k is the sum over the orderings of (m, n, p)."""
    import itertools
    V = w["O"].dot(w["U"]) if "U" in w else w["V"]
    monos = list(itertools.combinations_with_replacement(range(d), 3))
    cols = []
    for name in ("Q", "K", "U", "O") if "U" in w else ("Q", "K", "V"):
        for idx in np.ndindex(*w[name].shape):
            E = np.zeros(w[name].shape, dtype=np.int64)
            E[idx] = 1
            dA = {"Q": lambda: w["K"].T.dot(E), "K": lambda: E.T.dot(w["Q"])}.get(name, lambda: 0 * V[:1, :1])()
            dV = {"V": lambda: E, "U": lambda: w["O"].dot(E), "O": lambda: E.dot(w["U"])}.get(name, lambda: 0)()
            A = w["K"].T.dot(w["Q"])
            T = np.einsum("km,np->kmnp", np.broadcast_to(dV, V.shape), A) + np.einsum("km,np->kmnp", V, np.broadcast_to(dA, A.shape))
            col = [sum(int(T[k][i][j][l]) for i, j, l in set(itertools.permutations(m))) % PRIME
                   for k in range(dd) for m in monos]
            cols.append(col)
    M = np.array(cols, dtype=np.int64)
    return nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), PRIME).rank()


def test_one_token_fiber_is_not_the_line_of_theorem_1():
    """Red team 3's accepted forgery: at t = 1 a head sees only sym(A), so its map loses rank (here below the
    t >= 2 count I_j) and its fiber is more than one line. Neither the prover nor the checker may apply
    docs/fibers.md Theorem 1 there: the fiber is undecided, and the old honest claim (one line) is rejected."""
    rng = np.random.default_rng(5)
    d, dd, a, b = 4, 3, 2, 2
    w = _random_head(rng, d, dd, a, b)
    rank_t1, rank_t2 = _one_token_head_rank(d, dd, w), _heads_rank(d, dd, [w])
    assert rank_t1 < rank_t2  # the hypothesis t >= 2 matters at this very point
    res = local_rank(_arch(d, dd, 1, a, b, tokens=1), _flat([w]), seed=0, dimension=False)
    assert res.fiber["case"] == "undecided" and res.fiber["dimension"] is None
    cert = res.to_json()
    assert res.lower <= rank_t1 <= res.upper
    check_certificate(cert)
    forged = dict(cert, fiber={"head": 1, "case": "generic", "lines": 1, "dimension": 1 + a * a + b * b})
    with pytest.raises(CertificateRejected, match="fiber must be"):
        check_certificate(forged)


def test_a_regular_verdict_prints_the_pinned_local_rank_not_the_loose_upper_bound():
    """regular = true with lower < upper: lower >= dim M's upper bound pins rho = lower = dim M, so the claim says
    "local rank L = dim M", never "L <= local rank <= U = dim M" (U > dim M is not dim M)."""
    rng = np.random.default_rng(5)
    w = _random_head(rng, 4, 3, 2, 2)
    res = local_rank(_arch(4, 3, 1, 2, 2, tokens=1), _flat([w]), seed=0)  # dim M from its embedded certificate
    assert res.regular is True and res.lower < res.upper
    claim = check_certificate(res.to_json()).claim
    assert claim.startswith(f"local rank {res.lower} = dim M") and str(res.upper) not in claim.split(";")[0]
    assert f"local rank {res.lower}" in str(res) and "<=" not in str(res).split(",")[-2]


# -- hostile checkpoints through the command line --------------------------------------------------------


def _safetensors(path, header, data=b"", raw_header=None, length=None):
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)


def _entry(dtype, shape, start, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [start, end]}


def _ones(dtype, n):
    return np.full(n, 0x3F80 if dtype == "BF16" else 0x3C00, dtype="<u2")


def _with(dtype, bits):
    """in_proj_weight (12 x 4) and out_proj.weight (4 x 4) as 16-bit floats, ``bits`` placed in the first."""
    first = _ones(dtype, 48)
    for k, v in bits.items():
        first[k] = v
    return ({"in_proj_weight": _entry(dtype, [12, 4], 0, 96), "out_proj.weight": _entry(dtype, [4, 4], 96, 128)},
            first.tobytes() + _ones(dtype, 16).tobytes())


def _npz(path, declared_shape):
    """An .npz whose in_proj_weight declares ``declared_shape`` but holds 64 bytes."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": "<f8", "fortran_order": False, "shape": declared_shape})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("in_proj_weight.npy", buf.getvalue() + bytes(64))
        out = io.BytesIO()
        np.save(out, np.eye(4))
        z.writestr("out_proj.weight.npy", out.getvalue())


def _hostile(tmp_path, name):
    f = tmp_path / (name + (".npz" if name.startswith("npz") else ".safetensors"))
    rng = np.random.default_rng(0)
    blob = rng.standard_normal(64).astype("<f4").tobytes()
    if name == "F32 declared on F16 bytes":
        _safetensors(f, {"in_proj_weight": _entry("F32", [12, 4], 0, 96),
                         "out_proj.weight": _entry("F32", [4, 4], 96, 160)}, bytes(160))
    elif name == "header longer than the file":
        _safetensors(f, {"a": 1}, length=10**6)
    elif name == "header not UTF-8":
        _safetensors(f, None, raw_header=b"\xff\xfe{{{")
    elif name == "huge shape in a tiny file":
        _safetensors(f, {"in_proj_weight": _entry("F32", [3 * 10**9, 10**9], 0, 192),
                         "out_proj.weight": _entry("F32", [4, 4], 192, 256)}, bytes(256))
    elif name.startswith(("BF16", "F16")):
        dtype = name.split()[0]
        bits = {"BF16 NaN": {5: 0x7FC1}, "BF16 -inf": {0: 0xFF80}, "F16 signalling NaN": {7: 0x7C01},
                "F16 +inf": {3: 0x7C00}}[name]
        _safetensors(f, *_with(dtype, bits))
    elif name == "I64 above 2^53":
        _safetensors(f, {"in_proj_weight": _entry("I64", [12, 4], 0, 384),
                         "out_proj.weight": _entry("F32", [4, 4], 384, 448)},
                     np.full(48, 2**62, dtype="<i8").tobytes() + bytes(64))
    elif name == "negative offsets":
        _safetensors(f, {"in_proj_weight": _entry("F32", [0], -4, -4)}, bytes(8))
    elif name == "header is a list":
        _safetensors(f, [1, 2, 3])
    elif name == "three offsets":
        _safetensors(f, {"in_proj_weight": {"dtype": "F32", "shape": [12, 4], "data_offsets": [0, 96, 192]},
                         "out_proj.weight": _entry("F32", [4, 4], 192, 256)}, blob)
    elif name == "header nested 100000 deep":
        _safetensors(f, None, raw_header=b"[" * 100000 + b"]" * 100000)
    elif name == "empty tensor of a dimension above 2^63":
        _safetensors(f, {"in_proj_weight": _entry("F32", [0, 10**30], 0, 0),
                         "out_proj.weight": _entry("F32", [4, 4], 0, 64)}, bytes(64))
    elif name == "overlapping data offsets":
        _safetensors(f, {"in_proj_weight": _entry("F32", [12, 4], 0, 192),
                         "out_proj.weight": _entry("F32", [4, 4], 0, 64)}, blob[:192])
    elif name == "fractional data offsets":
        _safetensors(f, {"in_proj_weight": {"dtype": "F32", "shape": [12, 4], "data_offsets": [0.5, 192.7]},
                         "out_proj.weight": _entry("F32", [4, 4], 192, 256)}, blob)
    elif name == "npz declaring 10^14 values":
        _npz(f, (10**7, 10**7))
    else:
        raise KeyError(name)
    return f


REFUSED = ["F32 declared on F16 bytes", "header longer than the file", "header not UTF-8", "huge shape in a tiny file",
           "BF16 NaN", "BF16 -inf", "F16 signalling NaN", "F16 +inf", "I64 above 2^53", "negative offsets",
           "header is a list", "three offsets"]
# each was a hole (a traceback, or bytes read twice) until the reader refused it
HOLES = ["header nested 100000 deep", "empty tensor of a dimension above 2^63", "npz declaring 10^14 values",
         "overlapping data offsets", "fractional data offsets"]


@pytest.mark.parametrize("name", REFUSED + HOLES)
def test_hostile_checkpoints_are_one_line_exit_2_and_nothing_is_lost(tmp_path, capsys, name):
    f = _hostile(tmp_path, name)
    cert = tmp_path / "cert.json"
    kept = tmp_path / "kept.json"
    kept.write_text('{"kept": true}')
    base = ["inspect", "--weights", str(f), "--layout", "torch-mha", "--heads", "2", "--seed", "0"]
    assert main(base + ["--certificate", str(cert)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attngeo: error: ") and "Traceback" not in err
    assert not cert.exists()
    assert main(base + ["--certificate", str(kept)]) == 2  # an existing file is not overwritten on refusal
    capsys.readouterr()
    assert kept.read_text() == '{"kept": true}'


def test_inspect_of_a_swapped_head_checkpoint_is_not_called_regular(tmp_path, capsys):
    """torch MHA, d = 2, two heads of size 1: W_k is W_q's rows exchanged, W_v = W_q = I."""
    f = tmp_path / "swap.safetensors"
    save_safetensors(f, {"in_proj_weight": np.vstack([np.eye(2), np.eye(2)[::-1], np.eye(2)]),
                         "out_proj.weight": np.eye(2)}, "F32")
    heads = [{"Q": np.eye(2, dtype=np.int64)[[j]], "K": np.eye(2, dtype=np.int64)[[1 - j]],
              "U": np.eye(2, dtype=np.int64)[[j]], "O": np.eye(2, dtype=np.int64)[:, [j]]} for j in range(2)]
    assert _heads_rank(2, 2, heads) == 8 < _generic(2, 2, 2, 1, 1) == 10
    assert main(["inspect", "--weights", str(f), "--layout", "torch-mha", "--heads", "2", "--json", "--lightning"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["local_rank_bounds"][0] <= 8 and out["regular"] is not True
