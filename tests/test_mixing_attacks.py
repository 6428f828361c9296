"""Adversarial review of the multi-head mixing kernel families inside dimension certificates.

The families ``mixing``, ``rank-mixing``, ``symmetric-mixing``, ``symmetric-rank-mixing``,
``value-mixing`` and the heads' ``co-annihilator`` (docs/math.md §7.3, docs/multihead.md §3;
checker ``attngeo/check/dimension/mixing.py``) lower the symmetry upper bound of
``dimension`` certificates. A row that is not the value of a polynomial kernel field
would make ``upper`` too small, i.e. a false ``dim M``. Three independent tests:

* the certified dimension equals the rank mod p of a Jacobian computed here by a
  forward-mode network written from docs/multihead.md §1 (no attngeo code): the rank is
  a lower bound on ``dim M``, so a certified value below it would be a false claim;
* every row the checker builds is in the kernel of that Jacobian at its point;
* Lemma 7.3.4 replayed: the *polynomial* fields of Lemma 7.3.3 (Laplace null vectors,
  Cramer coefficients), built here from the lemma's formulas, span at the point exactly
  the rows the checker writes down from canonical null bases mod p.

Then the negative corpus (families, sizes, architecture swaps), and a resource attack
that succeeded until ``MAX_MIXING_MOVES``: a small hostile file with many ``rank-mixing``
heads kept the checker busy for an hour although its field matrix is below
``MAX_FIELD_ENTRIES`` (the subprocess version is behind ``slow``).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from flint import fmpq_mat, nmod_mat

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.check.dimension import kernelfields, mixing
from attngeo.exceptions import CertificateFormatError, CertificateRejected

REFUSED = (CertificateRejected, CertificateFormatError)
#: Below 2^25: a product of two residues is below 2^50, a sum of 64 of them below 2^56 (int64 is exact).
P_OWN = 33_554_393


# -- an independent network: all parameter directions at once, mod p ----------------------------------


def _layout(widths, ranks, heads):
    """``(layer, head, name, rows, cols, offset)`` in the flattening order of docs/multihead.md §1."""
    out, off = [], 0
    for i, a in enumerate(ranks):
        for j in range(heads[i]):
            for name, r, c in (("Q", a, widths[i]), ("K", a, widths[i]), ("V", widths[i + 1], widths[i])):
                out.append((i, j, name, r, c, off))
                off += r * c
    return out, off


def _mul(a, b, p=P_OWN):
    return np.matmul(a, b) % p


def own_jacobian(widths, ranks, heads, tokens, point, inputs, *, residual=False, causal=False, normalized=False,
                 p=P_OWN) -> np.ndarray:
    """Rows: every output entry of every input; columns: the parameters. ``normalized`` needs ``t = 1`` (score 1)."""
    layout, P = _layout(widths, ranks, heads)
    W, dW = {}, {}
    for i, j, name, r, c, off in layout:
        W[(i, j, name)] = np.array(point[off:off + r * c], dtype=np.int64).reshape(r, c) % p
        tangent = np.zeros((P, r * c), dtype=np.int64)
        tangent[off:off + r * c] = np.eye(r * c, dtype=np.int64)
        dW[(i, j, name)] = tangent.reshape(P, r, c)
    blocks = []
    for X in inputs:
        Y = np.array(X, dtype=np.int64) % p
        dY = np.zeros((P,) + Y.shape, dtype=np.int64)
        mask = np.triu(np.ones((tokens, tokens), dtype=np.int64)) if causal else 1
        for i in range(len(ranks)):
            out, dout = (Y, dY) if residual else (0, 0)
            for j in range(heads[i]):
                (Q, dQ), (K, dK), (V, dV) = ((W[(i, j, n)], dW[(i, j, n)]) for n in "QKV")
                VY, dVY = _mul(V, Y), (_mul(dV, Y) + _mul(V, dY)) % p
                if normalized:  # one token: the normalized 1 x 1 score is 1
                    out, dout = (out + VY) % p, (dout + dVY) % p
                    continue
                AY = _mul(_mul(K.T, Q), Y)
                dAY = (_mul(np.swapaxes(dK, 1, 2), _mul(Q, Y)) + _mul(K.T, _mul(dQ, Y)) + _mul(_mul(K.T, Q), dY)) % p
                S = _mul(Y.T, AY) * mask % p
                dS = (_mul(np.swapaxes(dY, 1, 2), AY) + _mul(Y.T, dAY)) * mask % p
                out, dout = (out + _mul(VY, S)) % p, (dout + _mul(dVY, S) + _mul(VY, dS)) % p
            Y, dY = out, dout
        blocks.append(dY.reshape(P, -1).T)
    return np.vstack(blocks)


def _rank(M: np.ndarray, p: int = P_OWN) -> int:
    return nmod_mat(M.shape[0], M.shape[1], [int(x) for x in M.ravel()], p).rank()


def own_rank(widths, ranks, heads, tokens, seed=1, **kw) -> int:
    """The Jacobian rank at a random point over enough random inputs: a lower bound on dim M (tight w.h.p.)."""
    rng = random.Random(seed)
    P = _layout(widths, ranks, heads)[1]
    point = [rng.randrange(P_OWN) for _ in range(P)]
    inputs = [[[rng.randrange(P_OWN) for _ in range(tokens)] for _ in range(widths[0])]
              for _ in range(P // (widths[-1] * tokens) + 4)]
    return _rank(own_jacobian(widths, ranks, heads, tokens, point, inputs, **kw))


# -- honest certificates: valid, and equal to the independent rank ---------------------------------------

HONEST = {
    # name: (widths, ranks, heads, tokens, keywords, the family the claim must name)
    "brief_two_tokens": ((3, 3), (2,), 3, 2, {}, "rank-mixing(1)"),
    "brief_one_token": ((3, 3), (2,), 2, 1, {}, "symmetric-mixing(1)"),
    "softmax_one_token": ((3, 3), (2,), 3, 1, {"normalization": "softmax"}, "value-mixing(1)"),
    "softmax_co_annihilator": ((3, 3, 2), (2, 2), 2, 1, {"normalization": "softmax"}, "co-annihilator(1)"),
    "symmetric_rank": ((5, 5), (2,), 3, 1, {}, "symmetric-rank-mixing(1)"),
    "deep_residual_causal": ((4, 4, 4), (3, 2), 3, 2, {"residual": True, "causal": True}, "rank-mixing(1)"),
    "square_mixing": ((2, 3), (2,), 2, 2, {}, "mixing(1)"),
}


@pytest.fixture(scope="module")
def honest():
    return {name: certify_dimension(Architecture(w, r, tokens=t, heads=h, **kw), seed=3).to_json()
            for name, (w, r, h, t, kw, _) in HONEST.items()}


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_mixing_certificates_verify_and_match_the_independent_rank(honest, name):
    widths, ranks, h, t, kw, family = HONEST[name]
    cert = honest[name]
    claim = check_certificate(cert).claim
    assert cert["certified"] and family in claim, claim
    own = own_rank(widths, ranks, [h] * len(ranks), t, residual=kw.get("residual", False),
                   causal=kw.get("causal", False), normalized="normalization" in kw)
    assert own == cert["dimension"], (claim, own)


def test_the_brief_sizes_have_the_dimensions_of_finding_19():
    """``min(d'd^2(d+1)/2, h(2ad + dd' - a^2 - 1) - h max(0, h - 1 - r^2))`` (docs/findings.md 19) at 3,3, a = 2:
    45 with three heads; and by the independent rank, not by the certificate."""
    d, a, h = 3, 2, 3
    formula = min(d * d * d * (d + 1) // 2, h * (2 * a * d + d * d - a * a - 1) - h * max(0, h - 1 - (d - a) ** 2))
    assert formula == own_rank((3, 3), (2,), [3], 2) == 45


# -- the rows: kernel vectors at their point, and the values of Lemma 7.3.3's polynomial fields --------------


def _det(M: fmpq_mat):
    return M.det() if M.nrows() else 1


def _laplace_null(R: fmpq_mat) -> list[fmpq_mat]:
    """Lemma 7.3.3's polynomial null vectors of an ``a x d`` matrix: ``n_S = sum_e ± det R[:, S - e] e_e``."""
    a, d = R.nrows(), R.ncols()
    T = next(T for T in itertools.combinations(range(d), a) if _det(fmpq_mat([[R[r, c] for c in T] for r in range(a)])))
    out = []
    for e in (c for c in range(d) if c not in T):
        S = sorted(T + (e,))
        n = fmpq_mat(d, 1)
        for idx, f in enumerate(S):
            n[f, 0] = (-1) ** idx * _det(fmpq_mat([[R[r, c] for c in S if c != f] for r in range(a)]))
        assert not any((R * n).entries())
        out.append(n)
    return out


def _adj(G: fmpq_mat) -> fmpq_mat:
    return G.inv() * G.det()


def _lemma_fields(heads: list, symmetric: bool) -> list[list]:
    """The fields of Lemma 7.3.3 (``symmetric``: their one-token form, Lemma 7.3.5) at an exact point.

    One field per head ``j`` and set ``S`` of ``#conditions + 1`` other heads; each is a list of
    ``(head, name, delta)``, written from the lemma's formulas (no code of the checker).
    """
    fields = []
    h = len(heads)
    for j, (Q, K, V) in enumerate(heads):
        d = Q.ncols()
        R = fmpq_mat(K.tolist() + Q.tolist()) if symmetric else K
        left = _laplace_null(R)
        right = left if symmetric else _laplace_null(Q)
        others = [k for k in range(h) if k != j]
        basis = [heads[k][1].transpose() * heads[k][0] for k in others]
        if symmetric:
            basis = [B + B.transpose() for B in basis]
        conds = [(s, t) for s in range(len(left)) for t in range(s if symmetric else 0, len(right))]
        L = fmpq_mat([[(left[s].transpose() * B * right[t])[0, 0] for B in basis] for s, t in conds])
        for S in itertools.combinations(range(len(others)), len(conds) + 1):
            c = [0] * len(others)
            for idx, k in enumerate(S):
                c[k] = (-1) ** idx * _det(fmpq_mat([[L[r, m] for m in S if m != k] for r in range(len(conds))]))
            X = sum((B * c[k] for k, B in enumerate(basis)), fmpq_mat(d, d))
            eye = fmpq_mat(d, d, [int(r == s) for r in range(d) for s in range(d)])
            G = R * R.transpose()
            cG, J = G.det(), _adj(G)
            if symmetric:
                move = J * R * X * (eye * (2 * cG) - R.transpose() * J * R)
                a = Q.nrows()
                dQ = fmpq_mat([[move[r, s] for s in range(d)] for r in range(a)])
                dK = fmpq_mat([[move[a + r, s] for s in range(d)] for r in range(a)])
                scale = 2 * cG * cG
            else:
                GQ = Q * Q.transpose()
                cQ, H = GQ.det(), _adj(GQ)
                dQ = J * K * X * cQ
                dK = H * Q * X.transpose() * (eye * cG - K.transpose() * J * K)
                scale = cG * cQ
            fields.append([(j, "Q", dQ), (j, "K", dK)] + [(k, "V", V * (-scale * c[m]))
                                                         for m, k in enumerate(others)])
    return fields


def _residue(x, p: int) -> int:
    """A rational (``fmpq``) or an integer mod p."""
    return int(x.p) * pow(int(x.q), -1, p) % p if hasattr(x, "q") else int(x) % p


def _vector(field, shapes: list, p: int) -> np.ndarray:
    """A field (moves of one layer's heads) as one vector mod p, heads in order, ``Q, K, V`` each row-major."""
    offsets, off = {}, 0
    for j, (a, d, dd) in enumerate(shapes):
        for name, size in (("Q", a * d), ("K", a * d), ("V", dd * d)):
            offsets[(j, name)] = off
            off += size
    vec = np.zeros(off, dtype=np.int64)
    for j, name, M in field:
        flat = M.entries() if isinstance(M, fmpq_mat) else np.asarray(M).ravel().tolist()
        vec[offsets[(j, name)]:offsets[(j, name)] + len(flat)] = [_residue(x, p) for x in flat]
    return vec


@pytest.mark.parametrize("d, a, h, kind", [(3, 2, 3, "rank-mixing"), (4, 3, 4, "rank-mixing"),
                                           (4, 2, 6, "rank-mixing"), (5, 2, 3, "symmetric-rank-mixing"),
                                           (6, 2, 5, "symmetric-rank-mixing")])
def test_the_checker_rows_are_the_values_of_the_lemma_polynomial_fields(d, a, h, kind):
    """Lemma 7.3.4: at a point where the rank conditions hold, span(checker rows) = span(polynomial fields)."""
    rng = random.Random(d * 100 + h)
    pick = lambda r, c: fmpq_mat([[rng.randint(-4, 4) for _ in range(c)] for _ in range(r)])  # noqa: E731
    heads = [(pick(a, d), pick(a, d), pick(d, d)) for _ in range(h)]
    p = P_OWN
    symmetric = kind == "symmetric-rank-mixing"
    poly = [_vector(f, [(a, d, d)] * h, p) for f in _lemma_fields(heads, symmetric)]
    as_np = [{n: np.array([[int(x) for x in row] for row in M.tolist()], dtype=np.int64) % p
              for n, M in zip("QKV", head)} for head in heads]
    rows = [_vector(f, [(a, d, d)] * h, p) for f in mixing.moves(kind, as_np, p)]
    rho = d - (2 * a if symmetric else a)
    conditions = rho * (rho + 1) // 2 if symmetric else rho * rho
    assert len(rows) == h * (h - 1 - conditions)
    assert _rank(np.array(rows)) == _rank(np.array(poly)) == _rank(np.array(rows + poly)) == len(rows)


@pytest.mark.parametrize("widths, ranks, h, t, kind", [((3, 3), (2,), 3, 2, "rank-mixing"),
                                                       ((4, 4), (3,), 3, 2, "rank-mixing"),
                                                       ((3, 3), (2,), 2, 1, "symmetric-mixing"),
                                                       ((5, 5), (2,), 3, 1, "symmetric-rank-mixing"),
                                                       ((2, 3), (2,), 3, 2, "mixing")])
def test_every_checker_row_is_in_the_kernel_of_the_independent_jacobian(widths, ranks, h, t, kind):
    rng = random.Random(11)
    layout, P = _layout(widths, ranks, [h])
    point = [rng.randrange(P_OWN) for _ in range(P)]
    inputs = [[[rng.randrange(P_OWN) for _ in range(t)] for _ in range(widths[0])] for _ in range(P // widths[-1] + 4)]
    J = own_jacobian(widths, ranks, [h], t, point, inputs)
    heads = [{name: np.array(point[off:off + r * c], dtype=np.int64).reshape(r, c)
              for _, jj, name, r, c, off in layout if jj == j} for j in range(h)]
    rows = [_vector(f, [(ranks[0], widths[0], widths[1])] * h, P_OWN) for f in mixing.moves(kind, heads, P_OWN)]
    assert rows and not np.any(_mul(J, np.array(rows).T))
    # and the test can fail: a move of one head's V alone is not a kernel vector
    assert np.any(_mul(J, np.eye(P, dtype=np.int64)[:, [2 * ranks[0] * widths[0]]]))


# -- the negative corpus ------------------------------------------------------------------------------------


def _families(cert):
    return cert["upper_witness"]["families"]


ATTACKS = {
    "drop the mixing family": lambda c: _families(c).pop(),
    "rank-mixing renamed mixing (the a >= d lift)": lambda c: _families(c)[-1].update(kind="mixing"),
    "rank-mixing renamed symmetric-mixing": lambda c: _families(c)[-1].update(kind="symmetric-mixing"),
    "a larger family": lambda c: _families(c)[-1].update(size=_families(c)[-1]["size"] + 1),
    "the family twice": lambda c: _families(c).append(dict(_families(c)[-1])),
    "the family at another layer": lambda c: _families(c)[-1].update(layer=2),
    "value-mixing added to a lightning layer": lambda c: _families(c).append(
        {"kind": "value-mixing", "layer": 1, "size": 18}),
    "one token claimed (symmetric families would apply)": lambda c: c["architecture"].update(tokens=1),
    "a fourth head": lambda c: c["architecture"].update(heads=[4]),
    "softmax claimed": lambda c: c["architecture"].update(normalization="softmax"),
    "value ranks claimed (no mixing family there)": lambda c: c["architecture"].update(value_ranks=[2]),
    "upper one lower": lambda c: c.update(upper=c["upper"] - 1, dimension=c["dimension"] - 1),
    "field rank one higher": lambda c: c["upper_witness"].update(field_rank=c["upper_witness"]["field_rank"] + 1),
    "a row repeated": lambda c: c["upper_witness"]["rows"].__setitem__(-1, c["upper_witness"]["rows"][0]),
    "a row past the field matrix": lambda c: c["upper_witness"]["rows"].__setitem__(-1, 10**6),
    "the upper point moved": lambda c: c["upper_witness"]["point"].__setitem__(0, c["upper_witness"]["point"][0] + 1),
    "a boolean size": lambda c: _families(c)[-1].update(size=True),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_tampered_mixing_certificates_are_refused(honest, attack):
    cert = copy.deepcopy(honest["brief_two_tokens"])
    ATTACKS[attack](cert)
    with pytest.raises(REFUSED):
        check_certificate(cert)


def test_the_symmetric_families_are_refused_on_two_tokens_and_rank_mixing_on_one(honest):
    """Swap in another architecture's data: each family only where its lemma holds."""
    two, one = copy.deepcopy(honest["brief_two_tokens"]), copy.deepcopy(honest["brief_one_token"])
    two["upper_witness"]["families"][-1] = {"kind": "symmetric-mixing", "layer": 1, "size": 6}
    one["upper_witness"]["families"][-1] = {"kind": "rank-mixing", "layer": 1, "size": 0}
    for cert in (two, one):
        with pytest.raises(REFUSED):
            check_certificate(cert)


def test_value_mixing_is_refused_for_softmax_with_two_tokens():
    """Lemma 7.3.6 needs the 1 x 1 score: with two tokens the normalized score depends on A_j."""
    cert = certify_dimension(Architecture((2, 2), (1,), tokens=2, heads=2, normalization="softmax"), seed=0).to_json()
    check_certificate(cert)
    cert["upper_witness"]["families"].append({"kind": "value-mixing", "layer": 1, "size": 4})
    with pytest.raises(REFUSED):
        check_certificate(cert)


# -- resource exhaustion: many rank-mixing heads below MAX_FIELD_ENTRIES ---------------------------------------


def many_heads_certificate(h: int) -> dict:
    """Widths 2,1, rank 1, ``h`` heads, t = 2: a trivial lower witness (rank 0) and the honest family list.

    ``rank-mixing`` has ``h (h - 2)`` fields, each moving every head's ``V``: the field matrix has
    ``h^2 x 6h`` entries (below ``MAX_FIELD_ENTRIES`` up to ``h = 405``), but building and checking the
    rows one by one costs ``O(h^3)`` numpy calls and ``O(h^3)`` small arrays before any of it is compared.
    """
    from attngeo.check.arch import Arch
    from attngeo.check.dimension.dense import _expected_families

    arch = Arch((2, 1), (1,), 2, heads=(h,))
    rng = random.Random(0)
    point = [rng.randrange(-2**15, 2**15) for _ in range(arch.parameters)]
    p = 33_554_393
    return {"format": "attngeo-certificate", "version": 2, "kind": "dimension",
            "architecture": {"widths": [2, 1], "ranks": [1], "tokens": 2, "normalization": "lightning",
                             "heads": [h]},
            "parameters": arch.parameters, "lower": 0, "upper": arch.parameters - 1, "certified": False,
            "dimension": None,
            "lower_witness": {"prime": p, "point": point, "inputs": [[[1, 2], [3, 4]]], "functionals": [[[[1, 1]]]],
                              "rank": 0, "rows": [], "columns": [], "determinant": 1},
            "upper_witness": {"prime": p, "point": point,
                              "families": _expected_families(arch) + kernelfields.expected(arch),
                              "field_rank": 1, "rows": [0], "columns": [0], "determinant": 1}}


def test_the_many_heads_certificate_is_well_formed_when_small():
    """The shape below is checked to the end when small (refused only for its forged field minor)."""
    with pytest.raises(CertificateRejected, match="field minor has determinant"):
        check_certificate(many_heads_certificate(12))


class _Expensive(Exception):
    """The checker started the per-field work this limit should have paid for first."""


def test_many_rank_mixing_heads_are_refused_before_their_rows_are_built(monkeypatch):
    def expensive(*args, **kwargs):
        raise _Expensive("kernel-field rows built for 300 rank-mixing heads")

    monkeypatch.setattr(kernelfields, "head_rows", expensive, raising=False)
    with pytest.raises(CertificateFormatError):
        check_certificate(many_heads_certificate(300))


_RUN = "import sys; from attngeo.ui.cli import main; sys.exit(main(['check', sys.argv[1]]))"


@pytest.mark.slow
def test_many_rank_mixing_heads_are_refused_within_a_minute(tmp_path):
    path = tmp_path / "heads.json"
    path.write_text(json.dumps(many_heads_certificate(200)))
    try:
        done = subprocess.run([sys.executable, "-c", _RUN, str(path)], capture_output=True, timeout=60,
                              env=dict(os.environ))
    except subprocess.TimeoutExpired:
        pytest.fail("the checker was still building kernel-field rows after 60 s")
    assert done.returncode in (1, 2) and b"Traceback" not in done.stderr
