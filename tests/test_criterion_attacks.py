"""Red-team attacks on the certificates that rest on Theorem C (docs/math.md §8).

Targets: ``local-rank`` certificates with a ``criterion`` lower witness and a ``scale``; ``dimension``
certificates with ``criterion point`` / ``explicit kernel`` witnesses; architectures with ``kv_heads`` and
``biases``. Attacks the checker refuses are plain tests; attacks that succeed are ``xfail(strict=True)``
with the reason (the checker is to be fixed, not this file).

Where a test needs the truth it computes it here, apart from attngeo: an exact evaluation of the layer
with Python integers or fractions (the x^2-normalized layer, the affine lightning layer), or a float
Jacobian by complex steps (a cross-check of accepted dimensions, with its singular-value gap asserted).
"""

from __future__ import annotations

import copy
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq_mat

from attngeo import Architecture, CertificateRejected, check_certificate
from attngeo.check.arch import Arch
from attngeo.check.dimension import criterionpoint
from attngeo.check.limits import MAX_FIELD_ENTRIES, MAX_PAIR_TESTS
from attngeo.check.loci import criterion
from attngeo.exact.engine import Deadline
from attngeo.exceptions import AttngeoError, CannotVerify, CertificateFormatError
from attngeo.geometry.dimension.criterionpoint import certify_criterion
from attngeo.geometry.loci.regularity import local_rank
from attngeo.model.scale import ScoreScale

P_MOD = 1000003


# -- independent helpers ------------------------------------------------------------------------------------


def _layout(d, dd, a, h, g, b, biases):
    """Blocks ``(head, name, rows, cols)`` in the order of docs/certificates.md (written from the doc)."""
    n, out = h // g, []
    for j in range(h):
        lead = j % n == 0
        out.append((j, "Q", a, d))
        if lead:
            out += [(j, "K", a, d), (j, "U", b, d) if b else (j, "V", dd, d)]
        if b:
            out.append((j, "O", dd, b))
        if biases:
            out.append((j, "bQ", a, 1))
            if lead:
                out += [(j, "bK", a, 1), (j, "bV", b if b else dd, 1)]
    if biases:
        out.append((-1, "bO", dd, 1))
    return out


def _unpack(w, lay):
    blocks, off = {}, 0
    for j, name, r, c in lay:
        blocks[(j, name)] = np.asarray(w[off: off + r * c], dtype=object).reshape(r, c)
        off += r * c
    assert off == len(w)
    return blocks


def _layer(w, X, d, dd, a, h, g, b, biases, norm):
    """The layer's output on one input ``X`` (``d x t``, entries exact), in exact arithmetic (object arrays).

    ``norm``: ``"lightning"`` (scores as they are) or ``"square"`` (``m^2`` normalized over the keys).
    """
    B = _unpack(w, _layout(d, dd, a, h, g, b, biases))
    X = np.asarray(X, dtype=object)
    t, n = X.shape[1], h // g
    Y = np.zeros((dd, t), dtype=object)
    if biases:
        Y = Y + B[(-1, "bO")]
    for j in range(h):
        lead = (j // n) * n
        keys = B[(lead, "K")].dot(X) + (B[(lead, "bK")] if biases else 0)
        queries = B[(j, "Q")].dot(X) + (B[(j, "bQ")] if biases else 0)
        value = (B[(lead, "U")].dot(X) if b else B[(lead, "V")].dot(X)) + (B[(lead, "bV")] if biases else 0)
        if b:
            value = B[(j, "O")].dot(value)
        S = keys.T.dot(queries)  # S[r, i]
        if norm == "square":
            S = S * S
            S = np.array([[Fraction(S[r, i]) / sum(S[:, i]) for i in range(t)] for r in range(t)], dtype=object)
        Y = Y + value.dot(S)
    return Y


def _signed(M, p):
    M = np.asarray(M, dtype=np.int64) % p
    return np.where(M > p // 2, M - p, M)


def _complex_step_rank(w, X, d, dd, a, h, g, b, biases, causal=False):
    """Numerical rank of the softmax layer's Jacobian (complex steps) and the gap at that rank: a cross-check."""
    lay = _layout(d, dd, a, h, g, b, biases)

    def f(wc):
        B = {k: v.astype(complex) for k, v in _unpack(wc, lay).items()}
        out, n = [], h // g
        for x in X:
            t = x.shape[1]
            Y = np.zeros((dd, t), dtype=complex) + (B[(-1, "bO")] if biases else 0)
            for j in range(h):
                lead = (j // n) * n
                keys = B[(lead, "K")] @ x + (B[(lead, "bK")] if biases else 0)
                qs = B[(j, "Q")] @ x + (B[(j, "bQ")] if biases else 0)
                S = np.exp(keys.T @ qs)
                if causal:
                    S = S * np.triu(np.ones((t, t)))
                S = S / S.sum(axis=0, keepdims=True)
                Y = Y + B[(j, "O")] @ (B[(lead, "U")] @ x + (B[(lead, "bV")] if biases else 0)) @ S
            out.append(Y.ravel())
        return np.concatenate(out)

    cols = []
    for k in range(len(w)):
        wc = np.asarray(w, dtype=complex)
        wc[k] += 1e-30j
        cols.append(f(wc).imag / 1e-30)
    sv = np.linalg.svd(np.array(cols).T, compute_uv=False)
    r = int((sv > 1e-8 * sv[0]).sum())
    return r, (sv[r - 1] / sv[r] if r < len(sv) else np.inf)


def _ends_in_time(cert, seconds):
    """Accepted, rejected or refused: any verdict, as long as it comes within ``seconds`` (attngeo's own
    ``Deadline`` raises EngineFailed, which no verdict below catches)."""
    with Deadline(seconds, "checking the certificate"):
        try:
            check_certificate(cert)
        except (CertificateRejected, CertificateFormatError, CannotVerify):
            pass


def _criterion_dimension(arch, lower_groups=None, prime=None):
    """A criterion-point dimension certificate claiming Theorem C's count for ``arch``, written by hand (no
    prover work, so huge sizes cost nothing to build)."""
    template = certify_criterion(Architecture((4, 4), (1,), tokens=2, normalization="softmax", heads=2,
                                              value_ranks=1), seed=0).to_json()
    a, b, h = arch.ranks[0], arch.value_ranks[0], arch.heads[0]
    g = arch.kv_heads[0]
    n = h // g
    group = a * a + b * b + (n * n if arch.normalization == "lightning" else (a + b if arch.biases else 0))
    P = arch.parameter_count
    cert = copy.deepcopy(template)
    cert.update(architecture=arch.to_dict(), parameters=P, lower=P - g * group, upper=P - g * group,
                dimension=P - g * group, certified=True)
    cert["lower_witness"].update(groups=lower_groups or list(range(1, g + 1)), rank=P - g * group)
    cert["upper_witness"].update(rank=g * group)
    if prime:
        cert["lower_witness"]["prime"] = cert["upper_witness"]["prime"] = prime
    return cert


def _softmax(d, dd, a, h, b, g=None, **kw):
    kv = {} if g in (None, h) else {"kv_heads": g}
    return Architecture((d, dd), (a,), tokens=kw.pop("tokens", 3), normalization=kw.pop("normalization", "softmax"),
                        heads=h, value_ranks=b, **kv, **kw)


def _forge_all_groups(arch, w):
    """The prover's certificate at ``w`` with the lower witness replaced by 'every group, Theorem C decides'."""
    cert = local_rank(arch, w, dimension=False, jacobian=False).to_json()
    a, b, g = arch.ranks[0], arch.value_ranks[0], arch.kv_heads[0]
    count = arch.parameter_count - g * (a * a + b * b + (a + b if arch.biases else 0))
    cert.update(lower_witness={"criterion": {"groups": list(range(1, g + 1))}}, lower=count, upper=count,
                regular=True, generic=[count, count], orbit_dimension=arch.parameter_count - count)
    return cert


def _point(arch, seed):
    return [int(x) for x in np.random.default_rng(seed).integers(-3, 4, arch.parameter_count)]


def _set(arch, w, head, name, M):
    blk = {(x.head, x.name): x for x in arch.blocks()}[(head, name)]
    w[blk.offset: blk.offset + blk.size] = [int(v) for v in np.asarray(M).ravel()]


# -- hypotheses of Theorem C: refused -----------------------------------------------------------------------


@pytest.mark.parametrize("arch, match", [
    (_softmax(4, 4, 2, 2, 2, tokens=1), "t >= 2"),
    (_softmax(4, 4, 3, 2, 2), "h a <= d"),                           # h a = 6 > d
    (_softmax(4, 3, 1, 2, 2), "h a <= d and h b <= d'"),             # h b = 4 > d' = 3
    (_softmax(2, 6, 1, 2, 3), r"\(C3\)"),                            # b = 3 > d: U cannot have rank b
    (_softmax(2, 2, 1, 2, 1, g=2), r"\(C4\)"),                       # a = b = 1, d = 2: groups swap K and U
    (_softmax(4, 4, 2, 2, 2, normalization="lightning", biases=True), "lightning layers with biases"),
], ids=["t=1", "ha>d", "hb>d'", "b>d", "swap-d2", "lightning-biases"])
def test_a_criterion_point_beyond_its_hypotheses_is_refused(arch, match):
    """Each size claims Theorem C's count at the selector point; the checker's own selector fails a hypothesis
    or a condition there. (At d = 2 the swapped selector really loses rank for lightning: 8 < 10 by the
    referee's Jacobian; for softmax it happens to keep 12, but the criterion cannot show it.)"""
    with pytest.raises(AttngeoError, match=match):
        check_certificate(_criterion_dimension(arch))


def test_a_criterion_point_for_unfactored_values_or_two_layers_is_refused():
    cert = _criterion_dimension(_softmax(4, 4, 2, 2, 2))
    cert["architecture"].pop("value_ranks")
    with pytest.raises(AttngeoError):
        check_certificate(cert)
    deep = _criterion_dimension(_softmax(4, 4, 2, 2, 2))
    deep["architecture"].update(widths=[4, 4, 4], ranks=[2, 2], heads=[2, 2], value_ranks=[2, 2])
    with pytest.raises(AttngeoError):
        check_certificate(deep)


@pytest.mark.parametrize("change, match", [
    (lambda a: a.update(kv_heads=[3]), "divide"),                      # 4 heads in 3 groups
    (lambda a: a.update(kv_heads=[4]), "omitted"),                     # g = h spelled out
    (lambda a: (a.update(kv_heads=[2]), a.pop("value_ranks")), "value_ranks"),
    (lambda a: a.update(kv_heads=[8]), "divide"),                      # more groups than heads
], ids=["3|4", "g=h", "no-U", "g>h"])
def test_kv_heads_that_do_not_describe_groups_are_refused(change, match):
    cert = _criterion_dimension(_softmax(8, 8, 1, 4, 1, g=2))
    change(cert["architecture"])
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(cert)


# -- false local ranks at degenerate points: refused -----------------------------------------------------------


def _swap(arch, w):  # a = b = 1: group 2's K and U are group 1's U and K, so u_1 k_1 = u_2 k_2
    _set(arch, w, 1, "K", [[1, 0, 0, 0]]); _set(arch, w, 1, "U", [[0, 1, 0, 0]])
    _set(arch, w, 2, "K", [[0, 1, 0, 0]]); _set(arch, w, 2, "U", [[1, 0, 0, 0]])


def _parallel(arch, w):  # a = b = 1 and row U = row K in group 1: (C5)
    _set(arch, w, 1, "K", [[1, 2, 0, 0]]); _set(arch, w, 1, "U", [[2, 4, 0, 0]])


def _same_rows(arch, w):  # a = 2: groups with the same row K and row U, stacked K singular: (C4)
    _set(arch, w, 1, "K", [[1, 0, 0, 0], [0, 1, 0, 0]]); _set(arch, w, 2, "K", [[1, 1, 0, 0], [1, -1, 0, 0]])
    _set(arch, w, 1, "U", [[1, 0, 1, 0], [0, 1, 0, 1]]); _set(arch, w, 2, "U", [[2, 1, 2, 1], [0, 1, 0, 1]])


def _u_rank(arch, w):  # U of rank 1 < b: (C3)
    _set(arch, w, 1, "U", [[1, 1, 1, 1], [2, 2, 2, 2]])


def _o_dependent(arch, w):  # O_2 = O_1: (C1)
    blk = {(x.head, x.name): x for x in arch.blocks()}
    o1, o2 = blk[(1, "O")], blk[(2, "O")]
    w[o2.offset: o2.offset + o2.size] = w[o1.offset: o1.offset + o1.size]


@pytest.mark.parametrize("arch, damage, match", [
    (_softmax(4, 4, 1, 2, 1), _swap, r"\(C4\)"),
    (_softmax(4, 4, 1, 2, 1, g=1, biases=True), _parallel, r"\(C5\)"),
    (_softmax(4, 4, 2, 2, 2), _same_rows, r"\(C4\)"),
    (_softmax(4, 4, 2, 2, 2, g=1, biases=True), _u_rank, r"\(C3\)"),
    (_softmax(4, 4, 2, 2, 2, g=1, causal=True), _o_dependent, r"\(C1\)"),
], ids=["swap", "U||K", "same-rows", "U-rank", "O-dependent"])
def test_theorem_c_is_not_accepted_where_a_condition_fails(arch, damage, match):
    w = _point(arch, 3)
    damage(arch, w)
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(_forge_all_groups(arch, w))


def test_lightning_with_shared_keys_and_biases_is_never_decided_by_the_criterion():
    """Theorem C does not cover lightning with biases: listing every group is a lower bound, never the rank."""
    arch = _softmax(6, 6, 1, 4, 1, g=2, normalization="lightning", biases=True)
    res = local_rank(arch, _point(arch, 4), dimension=False, jacobian=False)
    cert = res.to_json()
    assert cert["lower_witness"] == {"criterion": {"groups": [1, 2]}} and cert["lower"] < cert["upper"]
    check_certificate(cert)
    with pytest.raises(CertificateRejected, match="upper"):
        check_certificate(dict(cert, upper=cert["lower"], regular=True))


def test_more_group_pairs_than_the_limit_are_refused():
    """a = b = 1 with 201 groups needs 20,100 pairwise (C4) tests, above MAX_PAIR_TESTS: refused, not run."""
    h = 201
    assert h * (h - 1) // 2 > MAX_PAIR_TESTS
    with pytest.raises(CertificateRejected, match="pairwise"):
        check_certificate(_criterion_dimension(_softmax(h, h, 1, h, 1)))


# -- widths, scales, explicit kernels: refused -------------------------------------------------------------


def test_widths_beyond_the_wide_limit_or_wide_without_a_criterion_witness_are_refused():
    with pytest.raises(CertificateRejected, match="above 8192"):
        check_certificate(_criterion_dimension(_softmax(8193, 8193, 64, 4, 64)))
    mixed = _criterion_dimension(_softmax(4096, 4096, 64, 4, 64))
    mixed["upper_witness"] = {"structured": "explicit kernel", "prime": P_MOD, "point": [0], "rank": 0}
    with pytest.raises(CertificateRejected, match="above 2047"):  # the explicit kernel keeps the int64 limit
        check_certificate(mixed)


def test_a_scale_is_refused_on_lightning_and_its_removal_breaks_a_ball_replay():
    light = _softmax(4, 4, 2, 2, 2, g=1, normalization="lightning")
    cert = local_rank(light, _point(light, 5), dimension=False, jacobian=False).to_json()
    with pytest.raises(CertificateRejected, match="scale"):
        check_certificate(dict(cert, scale="1/sqrt(2)"))
    arch = _softmax(3, 3, 2, 1, 2, biases=True)
    w = _point(arch, 6)
    w[:6] = [1, 2, 3, 2, 4, 6]  # Q of rank 1: (C2) fails, the lower bound is a ball minor at the point
    scaled = local_rank(arch, w, dimension=False, scale=ScoreScale.inverse_sqrt(3)).to_json()
    assert "ball" in scaled["lower_witness"]
    unscaled = dict(scaled)
    unscaled.pop("scale")  # the same minor replayed at s = 1: its determinant moves off the recorded ball
    with pytest.raises(CertificateRejected, match="determinant"):
        check_certificate(unscaled)


def test_an_explicit_kernel_larger_than_its_rank_or_on_two_layers_is_refused():
    from attngeo import certify_dimension

    cert = certify_dimension(Architecture((3, 3), (1,), biases=True), seed=0).to_json()
    assert cert["upper_witness"]["structured"] == "explicit kernel"
    with pytest.raises(CertificateRejected, match="explicit kernel"):
        check_certificate(dict(cert, upper_witness=dict(cert["upper_witness"], rank=cert["upper_witness"]["rank"] + 1),
                               upper=cert["upper"] - 1, lower=cert["lower"] - 1, dimension=cert["dimension"] - 1))
    deep = certify_dimension(Architecture((2, 2, 2), (1, 1)), seed=0).to_json()
    P = deep["parameters"]
    deep["upper_witness"] = {"structured": "explicit kernel", "prime": P_MOD, "point": [1] * P, "rank": 2}
    with pytest.raises(CertificateRejected, match="one layer"):
        check_certificate(dict(deep, upper=P - 2, certified=False, dimension=None))


@pytest.mark.parametrize("arch", [
    _softmax(4, 4, 2, 2, 2, g=1, biases=True, tokens=2),
    _softmax(3, 3, 1, 3, 1, g=1, tokens=2),               # a = b = 1, one group of 3, t = 2 (beta_2 = 0)
    _softmax(4, 6, 2, 2, 3, g=1, biases=True, causal=True),
], ids=str)
def test_an_accepted_criterion_point_dimension_is_the_independent_rank_and_no_other(arch):
    """The accepted dim M equals the referee's float Jacobian rank at a random point (a cross-check with its gap),
    and the same certificate claiming one more or one less is refused."""
    from attngeo import certify_dimension

    cert = certify_dimension(arch, seed=0).to_json()
    assert check_certificate(cert).claim.startswith(f"dim M = {cert['dimension']}")
    d, dd, a, h, b, g = (*arch.widths, arch.ranks[0], arch.heads[0], arch.value_ranks[0], arch.kv_heads[0])
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((d, arch.tokens)) * 0.5 for _ in range(3 * arch.parameter_count // (dd * arch.tokens) + 8)]
    rank, gap = _complex_step_rank(rng.standard_normal(arch.parameter_count) * 0.7, X, d, dd, a, h, g, b, arch.biases,
                                   arch.causal)
    assert gap > 1e8 and rank == cert["dimension"]
    for shift in (-1, 1):
        forged = copy.deepcopy(cert)
        forged.update(lower=cert["lower"] + shift, upper=cert["upper"] + shift, dimension=cert["dimension"] + shift)
        forged["lower_witness"]["rank"] += shift
        forged["upper_witness"]["rank"] -= shift
        with pytest.raises(CertificateRejected):
            check_certificate(forged)


# -- attacks that succeeded in review (fixed; kept as regression tests) ------------------------------------------------------------------------


def _square_normalized_rank_bound():
    """An exact upper bound on dim M for the x^2-normalized layer widths 4,4, a = b = 2, two heads: 64 weights less
    18 independent kernel directions (gl_a, gl_b per head, and Q_j -> c Q_j, which fixes m^2 / sum m^2)."""
    d, dd, a, h, b = 4, 4, 2, 2, 2
    lay = _layout(d, dd, a, h, h, b, False)
    rng = np.random.default_rng(1)
    w = [int(x) for x in rng.integers(-3, 4, sum(r * c for *_, r, c in lay))]
    X = [[int(x) for x in row] for row in rng.integers(-3, 4, (d, 3))]
    doubled = list(w)
    off = 0
    for j, name, r, c in lay:
        if (j, name) == (0, "Q"):
            doubled[off: off + r * c] = [2 * x for x in w[off: off + r * c]]
        off += r * c
    assert (_layer(w, X, d, dd, a, h, h, b, False, "square") == _layer(doubled, X, d, dd, a, h, h, b, False,
                                                                       "square")).all()
    offsets, off = {}, 0
    for j, name, r, c in lay:
        offsets[(j, name)] = (off, r, c)
        off += r * c
    B = _unpack(w, lay)
    rows = []

    def put(row, key, M):
        o, r, c = offsets[key]
        row[o: o + r * c] = [int(x) for x in np.asarray(M).ravel()]

    for j in range(h):
        for u in range(a):
            for v in range(a):
                E = np.zeros((a, a), dtype=object); E[u, v] = 1
                row = [0] * len(w)
                put(row, (j, "Q"), E.dot(B[(j, "Q")])); put(row, (j, "K"), -E.T.dot(B[(j, "K")]))
                rows.append(row)
        for u in range(b):
            for v in range(b):
                E = np.zeros((b, b), dtype=object); E[u, v] = 1
                row = [0] * len(w)
                put(row, (j, "U"), E.dot(B[(j, "U")])); put(row, (j, "O"), -B[(j, "O")].dot(E))
                rows.append(row)
        row = [0] * len(w)
        put(row, (j, "Q"), B[(j, "Q")])
        rows.append(row)
    return len(w) - fmpq_mat(rows).rank()


@pytest.mark.parametrize("kind", ["criterion point", "local-rank criterion"])
def test_an_unknown_normalization_is_not_taken_for_softmax(kind):
    """Theorem C is about softmax: for m^2 / sum m^2 the per-head scaling of Q is a symmetry (dim M <= 46 < 48),
    so a certificate relabelled with a normalization the checker does not know is 'cannot verify'."""
    assert _square_normalized_rank_bound() <= 46
    arch = _softmax(4, 4, 2, 2, 2)
    if kind == "criterion point":
        cert = certify_criterion(arch, seed=0).to_json()
        assert cert["dimension"] == 48
    else:
        cert = local_rank(arch, _point(arch, 0), dimension=False, jacobian=False).to_json()
        assert cert["regular"] is True and cert["lower"] == 48
    cert["architecture"]["normalization"] = "sqnorm"
    with pytest.raises(AttngeoError):
        check_certificate(cert)


def test_pairwise_group_tests_are_priced_by_the_width():
    _ends_in_time(_criterion_dimension(_softmax(2047, 2047, 1, 200, 1)), 4)


def test_the_explicit_kernel_is_priced_before_it_is_listed(monkeypatch):
    arch = Arch((1, 1), (1,), 2, "lightning", (2047,), (1,), kv_heads=(1,))
    listed = criterion.fields

    def guarded(arch_, point, p):
        rows = sum(len(heads) ** 2 + 2 for heads in criterion.groups_of(arch_))
        assert rows * arch_.parameters <= MAX_FIELD_ENTRIES, f"listing {rows} x {arch_.parameters} field entries"
        return listed(arch_, point, p)

    monkeypatch.setattr(criterion, "fields", guarded)
    uw = {"structured": "explicit kernel", "prime": P_MOD, "point": [1] * arch.parameters, "rank": 5}
    with pytest.raises(CertificateFormatError):
        criterionpoint.check_upper({"upper": arch.parameters - 5}, uw, arch)


def test_the_rank_one_parallel_test_is_bounded():
    d, h = 2047, 4
    arch = _softmax(d, d, 1, h, 1)
    template = local_rank(_softmax(3, 3, 1, 2, 1), [1, 0, 0] * 8, dimension=False, jacobian=False).to_json()
    point = []
    for j in range(h):  # every block reads or writes only coordinate d - 1 - j: rank 1, A and V zero but one entry
        e = ["0"] * d
        e[d - 1 - j] = "1"
        point += e * 4
    cert = dict(template, architecture=arch.to_dict(), parameters=arch.parameter_count, point=point,
                heads=[dict(template["heads"][0], head=j + 1) for j in range(h)])
    _ends_in_time(cert, 4)


def _affine_lightning_derivative(w, direction, X, d, dd, a):
    """6 d/de of the affine lightning head (V unfactored) at ``w`` along ``direction``, exactly: the output is cubic
    in e, so four values give the derivative at 0."""
    def at(e):
        return _layer([x + e * y for x, y in zip(w, direction)], X, d, dd, a, 1, 1, None, True, "lightning")

    return -2 * at(-1) - 3 * at(0) + 6 * at(1) - at(2)


def test_every_explicit_kernel_direction_is_in_the_kernel_of_the_affine_lightning_layer():
    d, dd, a = 3, 3, 1
    arch = Arch((d, dd), (a,), 3, "lightning", (), None, biases=True)
    rng = np.random.default_rng(4)
    w = [int(x) for x in rng.integers(-3, 4, arch.parameters)]
    F = _signed(criterion.fields(arch, np.array(w), P_MOD), P_MOD)
    X = [[int(x) for x in row] for row in rng.integers(-2, 3, (d, 3))]
    moved = [k for k, f in enumerate(F)
             if (_affine_lightning_derivative(w, [int(x) for x in f], X, d, dd, a) != 0).any()]
    assert moved == []
