"""Adversarial review of the structured dimension witnesses: the stack point (docs/math.md §7.6), the plain point
by weight classes and the composition bound (Lemma 7.3.11). Every hostile file must be refused quickly with a
CertificateRejected or CertificateFormatError; honest ones are confirmed by an independent Jacobian."""

from __future__ import annotations

import copy
import json
import random
import time

import numpy as np
import pytest

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.dimension.stackpoint import certify_stack

REFUSED = (CertificateRejected, CertificateFormatError)


def _stack(d, a, l, **kw):
    return Architecture((d,) * (l + 1), (a,) * l, heads=d // a, value_ranks=a, residual=True, **kw)


def _json(cert):
    return json.loads(json.dumps(cert.to_json()))


@pytest.fixture(scope="module")
def certs():
    return {"light": _json(certify_stack(_stack(6, 3, 2, causal=True), seed=0)),
            "soft": _json(certify_stack(_stack(4, 2, 2, causal=True, normalization="softmax"), seed=0)),
            "plain": _json(certify_dimension(Architecture((96, 96), (8,)), seed=0)),
            "comp": _json(certify_dimension(Architecture((2, 3, 3), (1, 2), heads=3, tokens=2), seed=0))}


def _refused(cert, seconds=5.0):
    start = time.process_time()
    with pytest.raises(REFUSED) as caught:
        check_certificate(cert)
    assert time.process_time() - start < seconds
    return caught.value


def test_honest_certificates_pass(certs):
    for cert in certs.values():
        assert check_certificate(copy.deepcopy(cert)).claim.startswith("dim M = ")


def _deepen(cert, layers, inputs):
    """The stack of ``cert`` (d = 4, a = 2, two heads) made ``layers`` deep, with ``inputs`` random inputs per type:
    a consistent, small file whose replay is as long as the attacker likes."""
    c = copy.deepcopy(cert)
    soft = c["architecture"]["normalization"] == "softmax"
    c["architecture"].update(widths=[4] * (layers + 1), ranks=[2] * layers, heads=[2] * layers,
                             value_ranks=[2] * layers)
    c["parameters"] = 64 * layers
    lw = c["lower_witness"]
    lw["rank"] = c["lower"] = c["upper"] = c["dimension"] = (48 if soft else 46) * layers
    rng = random.Random(1)
    t = c["architecture"]["tokens"]
    for kind, old in lw["inputs"].items():
        lw["inputs"][kind] = [[[rng.randint(-9, 9) for _ in range(t)] for _ in old[0]] for _ in range(inputs)]
    fams = [{"kind": "intra", "size": 4}] + ([] if soft else [{"kind": "scaling", "size": 1}]) \
        + [{"kind": "value", "size": 4}]
    c["upper_witness"]["families"] = [{"kind": f["kind"], "layer": i, "size": f["size"], "head": j}
                                      for i in range(1, layers + 1) for j in (1, 2) for f in fams]
    c["upper_witness"]["field_rank"] = (16 if soft else 18) * layers
    return c


@pytest.fixture(scope="module")
def small():
    return {"light": _json(certify_stack(_stack(4, 2, 2, causal=True), seed=0)),
            "soft": _json(certify_stack(_stack(4, 2, 2, causal=True, normalization="softmax"), seed=0))}


def test_attack_many_inputs_at_64_layers_is_priced_before_the_forward_mode(small):
    """Attack (fixed): 400 inputs per tiny stack at l = 64, a 46 kB file, made the mod-p replay run 42 s (4,096:
    minutes) with no work limit; now the blocks' work is summed and refused before any is replayed."""
    cert = _deepen(small["light"], 64, 400)
    error = _refused(cert, seconds=2)
    assert isinstance(error, CertificateFormatError) and "units of work" in str(error)


def test_attack_softmax_blocks_each_under_the_limit_are_summed():
    """Attack (fixed): an honest softmax stack of 5 layers with its precision raised to 65,536 bits replayed the
    first blocks for 38 s before a later block's work was found above the limit; the sum is now priced first."""
    cert = _json(certify_stack(_stack(4, 2, 5, causal=True, normalization="softmax"), seed=0))
    cert["lower_witness"]["precision"] = 1 << 16
    error = _refused(cert, seconds=2)
    assert isinstance(error, CertificateFormatError) and "units of work" in str(error)


@pytest.mark.parametrize("path", [("dimension",), ("lower_witness", "rank"), ("lower_witness", "blocks"),
                                  ("lower_witness", "largest_block")], ids=str)
def test_attack_a_float_is_not_an_integer(certs, path):
    """Attack (fixed): 10687.0 for 10687 was accepted in the plain point's (and head point's) rank, blocks and
    largest block, and in the top-level dimension of every dimension certificate: the schema is closed."""
    cert = copy.deepcopy(certs["plain"])
    assert cert["lower_witness"]["structured"] == "plain point"
    where = cert
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = float(where[path[-1]])
    _refused(cert)


def test_attack_a_float_head_point_rank_is_refused():
    cert = _json(certify_dimension(Architecture((16, 16), (8,), heads=2, tokens=2), seed=0))
    if cert["lower_witness"].get("structured") != "head point":
        pytest.skip("the head point is not this size's witness on this machine's plan (dense.plan orders witnesses by estimated time)")
    cert["lower_witness"]["blocks"] = float(cert["lower_witness"]["blocks"])
    _refused(cert)


def _own_rank(d, a, l, t, causal, p, point, inputs):
    """The stack's Jacobian rank mod p, by this file's own dual numbers (value, tangent per parameter): layer
    ``X + sum_j O_j U_j X (mask * (X^T K_j^T Q_j X))``, the parameters ``(Q_j, K_j, U_j, O_j)`` per head and layer."""
    h = d // a
    shapes = [(a, d), (a, d), (a, d), (d, a)]
    n_par = l * h * 4 * a * d
    mask = np.triu(np.ones((t, t), dtype=np.int64)) if causal else np.ones((t, t), dtype=np.int64)
    rows = []
    for X0 in inputs:
        # value (1, d, t) and tangents (n_par, d, t) carried together as an array of n_par + 1 slices
        X = np.zeros((n_par + 1, d, t), dtype=np.int64)
        X[0] = X0 % p
        k = 0
        for _ in range(l):
            out = X.copy()
            for _ in range(h):
                mats = []
                for shape in shapes:
                    M = np.zeros((n_par + 1,) + shape, dtype=np.int64)
                    M[0] = point[k:k + shape[0] * shape[1]].reshape(shape) % p
                    for e in range(shape[0] * shape[1]):
                        M[1 + k + e].flat[e] = 1
                    k += shape[0] * shape[1]
                    mats.append(M)
                Q, K, U, O = mats

                def mul(A, B):  # dual product: value A0 B0, tangent dA B0 + A0 dB
                    out_ = np.empty((n_par + 1, A.shape[1], B.shape[2]), dtype=np.int64)
                    out_[0] = (A[0] @ B[0]) % p
                    out_[1:] = (np.einsum("nij,jk->nik", A[1:], B[0]) + np.einsum("ij,njk->nik", A[0], B[1:])) % p
                    return out_

                QX, KX = mul(Q, X), mul(K, X)
                G = mul(np.transpose(KX, (0, 2, 1)), QX) * mask % p
                out = (out + mul(O, mul(U, mul(X, G)))) % p
            X = out
        rows.append(X[1:].reshape(n_par, -1).T)
    from flint import nmod_mat
    J = np.concatenate(rows)
    return nmod_mat(J.shape[0], J.shape[1], J.ravel().tolist(), p).rank()


def _point_of(d, a, l):
    """The stack point in this file's parameter order: Q = K = U = S_j, O = S_j^T."""
    out = []
    for _ in range(l):
        for j in range(d // a):
            S = np.zeros((a, d), dtype=np.int64)
            S[np.arange(a), j * a + np.arange(a)] = 1
            out += [S.ravel()] * 3 + [S.T.ravel()]
    return np.concatenate(out)


@pytest.mark.parametrize("d,a,l,t,causal", [(4, 2, 2, 2, True), (4, 2, 2, 3, False), (6, 3, 2, 2, True)], ids=str)
def test_own_jacobian_at_the_stack_point_has_the_certified_rank(d, a, l, t, causal):
    """Independent confirmation of the honest claim, without Lemma S: at the stack point on dense random inputs the
    stack's own Jacobian (dual numbers written here) has rank P - l h (2 a^2 + 1), the certified dimension (the
    rank at a point is at most dim M, and the groups bound dim M above by the same number)."""
    arch = _stack(d, a, l, causal=causal, tokens=t)
    cert = certify_stack(arch, seed=2)
    p = 1000003
    rng = np.random.default_rng(0)
    P = arch.parameter_count
    inputs = rng.integers(-50, 50, size=(P // (d * t) + 3, d, t))
    assert _own_rank(d, a, l, t, causal, p, _point_of(d, a, l), inputs) == cert.dimension \
        == P - l * (d // a) * (2 * a * a + 1)


def _set(*path, value):
    def edit(cert):
        where = cert
        for key in path[:-1]:
            where = where[key]
        where[path[-1]] = value(where[path[-1]]) if callable(value) else value
    return edit


def _all_inputs(fill):
    def edit(cert):
        ins = cert["lower_witness"]["inputs"]
        for kind, values in ins.items():
            ins[kind] = [[[fill] * len(row) for row in x] for x in values]
    return edit


def _claim(delta):
    def edit(cert):
        for key in ("lower", "upper", "dimension"):
            cert[key] += delta
        cert["lower_witness"]["rank"] += delta
    return edit


REFUSED_EDITS = {
    # the stack point, lightning: relabelled architectures, forged counts, degenerate or hostile numbers
    "light": {
        "tokens 3": _set("architecture", "tokens", value=3),
        "softmax": _set("architecture", "normalization", value="softmax"),
        "no value ranks": lambda c: c["architecture"].pop("value_ranks"),
        "other heads": _set("architecture", "heads", value=[3, 3]),
        "unequal ranks": _set("architecture", "value_ranks", value=[3, 2]),
        "rank + 1": _claim(1),
        "rank - 1": _claim(-1),
        "zero inputs": _all_inputs(0),
        "one input per type": lambda c: [v.__setitem__(slice(1, None), []) for v in c["lower_witness"]["inputs"].values()],
        "a type dropped": lambda c: c["lower_witness"]["inputs"].pop("cross"),
        "a type invented": _set("lower_witness", "inputs", "second cross", value=[[[1, 2]]]),
        "huge input": lambda c: c["lower_witness"]["inputs"]["first"][0][0].__setitem__(0, 10 ** 300),
        "bool input": lambda c: c["lower_witness"]["inputs"]["first"][0][0].__setitem__(0, True),
        "composite prime": _set("lower_witness", "prime", value=4),
        "tiny prime": _set("lower_witness", "prime", value=2),
        "huge prime": _set("lower_witness", "prime", value=2 ** 89 - 1),
        "head point label": _set("lower_witness", "structured", value="head point"),
        "extra field": _set("lower_witness", "extra", value=1),
        "field rank - 1": _set("upper_witness", "field_rank", value=lambda v: v - 1),
        "field determinant": _set("upper_witness", "determinant", value=lambda v: v + 1),
        "a family dropped": lambda c: c["upper_witness"]["families"].pop(),
        "too many inputs": lambda c: c["lower_witness"]["inputs"].__setitem__("first", [[[1, 2]]] * 5000),
    },
    "soft": {
        "lightning": _set("architecture", "normalization", value="lightning"),
        "witness normalization": _set("lower_witness", "normalization", value="lightning"),
        "rank + 1": _claim(1),
        "determinant elsewhere": _set("lower_witness", "determinants", "first", value="[1.0 +/- 0.1]"),
        "determinant overflow": _set("lower_witness", "determinants", "first", value="[1e100000000 +/- 1e100000000]"),
        "repeated rows": lambda c: c["lower_witness"]["rows"].__setitem__(
            "first", [0] * len(c["lower_witness"]["rows"]["first"])),
        "row out of range": _set("lower_witness", "rows", "first", value=lambda v: v[:-1] + [10 ** 6]),
        "zero inputs": _all_inputs("0"),
        "2000-digit input": lambda c: c["lower_witness"]["inputs"]["first"][0][0].__setitem__(0, "1" + "0" * 1999),
        "precision above": _set("lower_witness", "precision", value=(1 << 16) + 1),
        "precision below": _set("lower_witness", "precision", value=52),
    },
    # the composition bound: forged layer bounds, hidden outputs that do not span
    "comp": {
        "causal": _set("architecture", "causal", value=True),
        "upper - 1": _set("upper", value=lambda v: v - 1),
        "a layer's bound - 1": lambda c: c["upper_witness"]["layers"][0].__setitem__(
            "upper", c["upper_witness"]["layers"][0]["upper"] - 1),
        "zero hidden inputs": lambda c: c["upper_witness"].__setitem__(
            "inputs", [[[0] * len(r) for r in m] for m in c["upper_witness"]["inputs"]]),
        "repeated hidden inputs": lambda c: c["upper_witness"].__setitem__(
            "inputs", [[m[0]] * len(m) for m in c["upper_witness"]["inputs"]]),
        "zero point": lambda c: c["upper_witness"].__setitem__("point", [0] * len(c["upper_witness"]["point"])),
        "no hidden inputs": _set("upper_witness", "inputs", value=[]),
        "nested composition": lambda c: c["upper_witness"]["layers"][0].__setitem__(
            "upper_witness", copy.deepcopy(c["upper_witness"])),
        "a layer missing": lambda c: c["upper_witness"]["layers"].pop(),
        "residual claimed": _set("architecture", "residual", value=True),
    },
}


@pytest.mark.parametrize("which,name", [(w, n) for w, edits in REFUSED_EDITS.items() for n in edits], ids=str)
def test_refused_attack(certs, which, name):
    cert = copy.deepcopy(certs[which])
    REFUSED_EDITS[which][name](cert)
    _refused(cert)


def test_swapped_inputs_that_still_have_full_rank_are_a_valid_proof(certs):
    """Not an attack: the inputs are the prover's free choice, and the 'first pair' inputs (the same shape) also
    give the 'pair' block full rank, so the checker rightly accepts them."""
    cert = copy.deepcopy(certs["light"])
    cert["lower_witness"]["inputs"]["pair"] = cert["lower_witness"]["inputs"]["first pair"]
    assert check_certificate(cert).claim.startswith("dim M = 212 ")


def test_attack_a_wide_rank_is_refused_before_the_owner_arrays(small):
    """Attack (fixed): width 2046 with two heads of rank 1023 and 5 layers, a 2 kB file, was within the old limit
    (4 d^2 <= 10^8) and spent 8 to 15 s and 1.3 GB giving one layer's 8.4e6 entries owners before the first block
    failed; the limit now counts the entries listed, 4 a d."""
    cert = copy.deepcopy(small["light"])
    d, a, layers = 2046, 1023, 5
    cert["architecture"].update(widths=[d] * (layers + 1), ranks=[a] * layers, heads=[2] * layers,
                                value_ranks=[a] * layers)
    cert["parameters"] = 4 * layers * 2 * a * d
    fields = layers * 2 * (2 * a * a + 1)
    cert["lower"] = cert["upper"] = cert["dimension"] = cert["lower_witness"]["rank"] = cert["parameters"] - fields
    cert["upper_witness"]["families"] = [{"kind": k, "layer": i, "size": size, "head": j}
                                         for i in range(1, layers + 1) for j in (1, 2)
                                         for k, size in (("intra", a * a), ("scaling", 1), ("value", a * a))]
    cert["upper_witness"]["field_rank"] = fields
    error = _refused(cert, seconds=2)
    assert isinstance(error, CertificateFormatError) and "4 a d" in str(error)
