"""Independent replay of ball-arithmetic lower bounds (normalized networks).

The prover differentiates by a hand-written chain rule. Here each weight is
moved to ``w + eps`` and the network is evaluated on *dual numbers*, a matrix
``M0 + eps M1`` stored as the block matrix ``[[M0, M1], [0, M0]]`` so that
products of blocks are products of duals; only the entrywise normalizer
(``exp``, known here independently) and the column division are written per
entry. Every entry is an ``arb`` ball at the recorded precision, so the minor's
determinant ball encloses the true minor: excluding 0 proves ``rank >= r``.
"""

from __future__ import annotations

import re

import numpy as np
from flint import arb, arb_mat, ctx

from ..untie import copies, untied
from ..limits import MAX_BALL_WORK, MAX_PRECISION, MIN_PRECISION, refuse_above
from ..values import field, index_list, integer, rational, reject
from . import identitypoint

#: Measured costs in nanoseconds of one core: the fixed Python work of one dual-number head evaluation (matrices
#: built entry by entry), one product of balls at 64 bits (it grows about linearly with the precision in the
#: range used: 3 us at 21,000 bits), and one interpreted step of a Python loop over balls.
NS_PER_EVALUATION, NS_PER_PRODUCT, NS_PER_PYTHON_STEP = 50_000, 30, 300
#: The identity-point replay rebuilds its small networks' dual matrices for every move and converts each input's
#: rationals at the precision: measured up to 3.7 times the dense replay's count at 65,536 bits.
IDENTITY_OVERHEAD = 4


def _evaluation_ns(t: int, width: int, rank: int, prec: int) -> float:
    """Estimated nanoseconds of one head on dual numbers (every matrix twice the size, so a product of
    ``m x k`` by ``k x n`` costs ``8 m k n`` products of balls): the score ``Yᵀ Kᵀ Q Y``, the value ``V Y`` and
    the output ``V Y S``, with widths and rank at most ``width`` and ``rank``, and ``t^2`` exponentials of
    about 20 products each."""
    products = 8 * (2 * t * width * rank + t * t * width + width * width * t + width * t * t) + 20 * t * t
    return NS_PER_EVALUATION + products * NS_PER_PRODUCT * max(1, prec / 64)


def _determinant_ns(n: int, prec: int) -> float:
    """Estimated nanoseconds of an ``n x n`` ball determinant (about n^3 products)."""
    return n**3 * NS_PER_PRODUCT * max(1, prec / 64)


_BALL = re.compile(r"\[?-?[0-9.]{1,40}(e[-+]?[0-9]{1,6})?( \+/- [0-9.]{1,40}(e[-+]?[0-9]{1,6})?)?\]?")
#: The normalizer of each normalization in ``arch.NORMALIZATIONS`` but lightning, and its derivative.
_KNOWN = {"softmax": (lambda x: x.exp(), lambda x: x.exp())}


def _dual(M0: arb_mat, M1: arb_mat | None = None) -> arb_mat:
    r, c = M0.nrows(), M0.ncols()
    D = arb_mat(2 * r, 2 * c)
    for i in range(r):
        for j in range(c):
            D[i, j] = D[r + i, c + j] = M0[i, j]
            if M1 is not None:
                D[i, c + j] = M1[i, j]
    return D


def _parts(D: arb_mat) -> tuple[list, list]:
    r, c = D.nrows() // 2, D.ncols() // 2
    return ([[D[i, j] for j in range(c)] for i in range(r)], [[D[i, c + j] for j in range(c)] for i in range(r)])


def _transpose(D: arb_mat) -> arb_mat:
    v, e = _parts(D)
    r, c = len(v), len(v[0])
    return _dual(arb_mat([[v[i][j] for i in range(r)] for j in range(c)]),
                 arb_mat([[e[i][j] for i in range(r)] for j in range(c)]))


def _output(weights: list, X: arb_mat, f, fp, arch=None) -> arb_mat:
    """The network at dual weights (``weights``: per layer, per head the dual ``Q, K, V`` or ``Q, K, U, O``).

    Heads are summed, ``V = O U``, a causal mask leaves score ``(s, j)`` out of
    column ``j``'s normalization unless ``s <= j``, a residual layer adds its input.
    """
    causal, residual = (arch.causal, arch.residual) if arch is not None else (False, False)
    Y = _dual(X)
    for heads in weights:
        out = Y if residual else None
        for head in heads:
            Q, K = head[0], head[1]
            V = head[2] if len(head) == 3 else head[3] * head[2]
            M = _transpose(Y) * _transpose(K) * Q * Y
            m, dm = _parts(M)
            t = len(m)
            kept = [[not causal or i <= j for j in range(t)] for i in range(t)]
            F = [[f(m[i][j]) if kept[i][j] else arb(0) for j in range(t)] for i in range(t)]
            dF = [[fp(m[i][j]) * dm[i][j] if kept[i][j] else arb(0) for j in range(t)] for i in range(t)]
            s = [sum((F[i][j] for i in range(t)), arb(0)) for j in range(t)]
            ds = [sum((dF[i][j] for i in range(t)), arb(0)) for j in range(t)]
            S0 = arb_mat([[F[i][j] / s[j] for j in range(t)] for i in range(t)])
            S1 = arb_mat([[(dF[i][j] * s[j] - F[i][j] * ds[j]) / (s[j] * s[j]) for j in range(t)] for i in range(t)])
            term = V * Y * _dual(S0, S1)
            out = term if out is None else out + term
        Y = out
    return Y


def check_ball_lower(cert: dict, arch, scale=None) -> int:
    """The lower bound a normalized network's ball witness proves: a Jacobian minor whose determinant excludes 0.

    The Jacobian columns of the recorded minor are recomputed on dual numbers
    at the recorded precision, contracted with the recorded functionals; the
    determinant ball must exclude 0 (so the minor is nonzero: ``rank >= r``)
    and meet the recorded ball.

    Parameters
    ----------
    cert : dict
        A dimension certificate of a normalized network (its ``lower_witness``
        holds a rational point, inputs, integer functionals, rows, columns,
        precision and the determinant ball).
    arch : attngeo.check.arch.Arch
        Its architecture, as read by :func:`attngeo.check.arch.architecture` (one with shared keys or biases is
        replayed as the plain layer on ``(x, 1)``, its columns moving every copy of a weight: check/untie.py).
    scale : callable, optional
        ``scale(prec) -> arb``: the score scale of a checkpoint's layer (docs/math.md §8.1); ``Q`` and its
        tangent are multiplied by it.

    Returns
    -------
    int
        The certified lower bound, equal to the certificate's ``lower``.

    Raises
    ------
    CertificateRejected
        A malformed witness, a ball that contains 0, or one that does not meet the recorded ball.

    Examples
    --------
    One softmax layer ``2 -> 2`` of rank 1: the scaling of ``V`` against ``A``
    is gone, so the dimension is one more than the lightning layer's 6:

    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.arch import architecture
    >>> from attngeo.check.dimension.ball import check_ball_lower
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2, normalization="softmax"), seed=0).to_json()
    >>> check_ball_lower(cert, architecture(cert))
    7

    A recorded determinant of the wrong sign does not meet the recomputed ball:

    >>> mid = cert["lower_witness"]["determinant"]
    >>> cert["lower_witness"]["determinant"] = mid.replace("[-", "[") if "[-" in mid else mid.replace("[", "[-")
    >>> check_ball_lower(cert, architecture(cert))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the recorded determinant ball does not meet the checker's
    """
    lw = field(cert, "lower_witness", "")
    if not isinstance(lw, dict):
        reject("lower_witness must be an object")
    if lw.get("structured") == "identity values":  # deep networks at V = I on sparse inputs
        return _identity_lower(cert, lw, arch)
    if field(lw, "normalization", "lower_witness.") != arch.normalization:
        reject("lower_witness.normalization is not the architecture's")
    recorded = field(lw, "determinant", "lower_witness.")
    if not isinstance(recorded, str) or not _BALL.fullmatch(recorded):
        reject("lower_witness.determinant must be a ball written as \"[mid +/- rad]\"")
    f, fp = _KNOWN[arch.normalization]  # architecture() refused the normalizations it does not know
    prec = integer(field(lw, "precision", "lower_witness."), "lower_witness.precision", MIN_PRECISION, MAX_PRECISION)
    P = arch.parameters
    point = field(lw, "point", "lower_witness.")
    if not isinstance(point, list) or len(point) != P:
        reject(f"lower_witness.point must list {P} rationals")
    point = [rational(x, "lower_witness.point") for x in point]
    inputs = field(lw, "inputs", "lower_witness.")
    d0, t, dl = arch.widths[0], arch.tokens, arch.widths[-1]
    if not isinstance(inputs, list) or not inputs or any(
            not isinstance(X, list) or len(X) != d0 or any(not isinstance(r, list) or len(r) != t for r in X)
            for X in inputs):
        reject(f"lower_witness.inputs must be a nonempty list of {d0} x {t} matrices")
    w = field(lw, "functionals", "lower_witness.")
    if not isinstance(w, list) or len(w) != len(inputs) or any(not isinstance(wn, list) for wn in w) or not w[0]:
        reject("lower_witness.functionals must hold the same number of functionals for every input")
    c = len(w[0])
    for n in range(len(inputs)):
        if not isinstance(w[n], list) or len(w[n]) != c or any(
                not isinstance(wk, list) or len(wk) != dl or any(
                    not isinstance(r, list) or len(r) != t or any(isinstance(x, bool) or not isinstance(x, int)
                                                                  for x in r) for r in wk) for wk in w[n]):
            reject(f"functionals of input {n} must be {c} integer {dl} x {t} matrices")
    rank = integer(field(lw, "rank", "lower_witness."), "lower_witness.rank", 0)
    if rank != integer(field(cert, "lower", ""), "lower"):
        reject(f"lower = {cert['lower']} but the witness has rank {rank}")
    if rank == 0:
        return 0
    rows = index_list(field(lw, "rows", "lower_witness."), rank, len(inputs) * c, "lower_witness.rows")
    cols = index_list(field(lw, "columns", "lower_witness."), rank, P, "lower_witness.columns")
    # One network evaluation in duals per column and input (every head of every layer), the contraction of each
    # with the functionals in Python, then the minor's determinant (docs/trust.md: estimated nanoseconds)
    heads = sum(arch.head_count(i) for i in range(1, len(arch.ranks) + 1))
    work = (len(cols) * len({k // c for k in rows}) * heads * _evaluation_ns(t, max(arch.widths), max(arch.ranks), prec)
            + len(cols) ** 2 * dl * t * NS_PER_PYTHON_STEP + _determinant_ns(len(cols), prec))
    refuse_above(work, MAX_BALL_WORK, "replaying this ball witness")
    old = ctx.prec
    ctx.prec = prec
    try:
        # A tied layer (shared keys, biases) is the plain one on (x, 1): its column j moves every copy of weight j
        # (check/untie.py); b_O's column is e_k on every token.
        plain, source, bias = (untied(arch), *copies(arch)) if arch.tied else (arch, list(range(P)), [])
        copies_of: dict = {}
        for i, k in enumerate(source):
            copies_of.setdefault(k, []).append(i)
        gamma = scale(prec) if scale is not None else None
        blocks = plain.blocks()
        base = {}
        for i, h, name, r, cc, off in blocks:
            M = arb_mat(r, cc, [arb(point[source[k]]) for k in range(off, off + r * cc)])
            base[(i, h, name)] = M * gamma if gamma is not None and name == "Q" else M
        needed = sorted({k // c for k in rows})
        one = ["1"] * t
        Xs = {n: arb_mat([[arb(rational(x, "lower_witness.inputs")) for x in r]
                          for r in inputs[n] + ([one] if arch.biases else [])]) for n in needed}
        names = ("Q", "K", "V") if arch.value_ranks is None else ("Q", "K", "U", "O")
        columns = {}
        for j in cols:
            if j in bias:  # d phi / d b_O[k] = e_k on every token
                k = bias.index(j)
                columns[j] = {n: [[arb(1 if a == k else 0) for _ in range(t)] for a in range(dl)] for n in needed}
                continue
            moved: dict = {}
            for pos in copies_of[j]:
                i0, h0, name0, r0, c0, off0 = next(b for b in blocks if b[5] <= pos < b[5] + b[3] * b[4])
                moved.setdefault((i0, h0, name0), []).append(divmod(pos - off0, c0))
            weights = []
            for i in range(1, len(plain.ranks) + 1):
                layer = []
                for h in range(1, plain.head_count(i) + 1):
                    head = []
                    for name in names:
                        M = base[(i, h, name)]
                        E = None
                        if (i, h, name) in moved:
                            E = arb_mat(M.nrows(), M.ncols())
                            for r0, c0 in moved[(i, h, name)]:  # columns of phi at (s Q, ...), as recorded
                                E[r0, c0] = 1
                        head.append(_dual(M, E))
                    layer.append(head)
                weights.append(layer)
            columns[j] = {n: _parts(_output(weights, Xs[n], f, fp, plain))[1] for n in needed}
        minor = arb_mat([[sum((columns[j][k // c][a][b] * w[k // c][k % c][a][b]
                               for a in range(dl) for b in range(t) if w[k // c][k % c][a][b]), arb(0))
                          for j in cols] for k in rows])
        det = minor.det()
    finally:
        ctx.prec = old
    if det.contains(0):
        reject(f"the Jacobian minor's determinant ball {det.str(radius=True)} contains 0 at {prec} bits")
    if not det.overlaps(arb(recorded)):
        reject("the recorded determinant ball does not meet the checker's")
    return rank


_IDENTITY_KEYS = {"structured", "normalization", "precision", "point", "inputs", "rank", "rows", "columns", "blocks",
                  "determinant"}


def _identity_lower(cert: dict, lw: dict, arch) -> int:
    """A normalized network's block lower triangular minor at ``V = I`` (:mod:`attngeo.check.dimension.identitypoint`).

    The lemma holds for any column normalization of the scores, so the zero
    pattern is the lightning one; each block's entries are dual-number
    derivatives of the small networks (``Q_i[:, R]``, ``K_i[:, R]``, ``V = I``) or
    their outputs ``Z[m, j]`` (columns of ``V_l``), and every block's determinant
    ball must exclude 0; the recorded ball must meet their product.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import architecture
    >>> from attngeo.geometry.dimension.identitypoint import certify_deep
    >>> cert = certify_deep(Architecture((4, 4, 4), (2, 2), tokens=3, normalization="softmax"), seed=0).to_json()
    >>> _identity_lower(cert, cert["lower_witness"], architecture(cert))      # 4^2 + 2 (2 * 2 * 4 - 4)
    40
    """
    if set(lw) != _IDENTITY_KEYS or lw["normalization"] != arch.normalization:
        reject(f"an 'identity values' ball witness holds exactly {', '.join(sorted(_IDENTITY_KEYS))}")
    f, fp = _KNOWN[arch.normalization]  # architecture() refused the normalizations it does not know
    d = identitypoint._shape(arch)
    t, P, l = arch.tokens, arch.parameters, len(arch.ranks)
    prec = integer(lw["precision"], "lower_witness.precision", MIN_PRECISION, MAX_PRECISION)
    if not isinstance(lw["point"], list) or len(lw["point"]) != P:
        reject(f"lower_witness.point must list {P} rationals")
    W = identitypoint.weights(arch, [rational(x, "lower_witness.point") for x in lw["point"]], "lower_witness")
    X = lw["inputs"]
    if not isinstance(X, list) or not X or len(X) * d * t > identitypoint.MAX_INPUT_ENTRIES or any(
            not isinstance(x, list) or len(x) != d or any(not isinstance(r, list) or len(r) != t for r in x) for x in X):
        reject(f"lower_witness.inputs must be a nonempty list of {d} x {t} matrices")
    X = [[[rational(v, "lower_witness.inputs") for v in r] for r in x] for x in X]
    support = np.array([[any(v != 0 for v in r) for r in x] for x in X], dtype=bool)
    rank, columns, rows, sizes = identitypoint.minor(cert, lw, arch, support)
    kind, layer, wrow, wcol, _ = identitypoint._layout(arch)
    starts = np.cumsum([0] + sizes)
    # The work, from the witness's sizes alone: one dual-number network per (input, moved Q or K entry) a block
    # needs (at most its inputs times its Q, K columns) and one per input for the values, each l layers of a
    # head of width |R| at this precision (as for check_ball_lower); then each block's entries and determinant.
    block = np.repeat(np.arange(len(sizes)), sizes)
    inputs_in = np.bincount(np.unique(block * len(X) + rows[:, 0]) // len(X), minlength=len(sizes))
    qk_in = np.bincount(block[kind[columns] < 2], minlength=len(sizes))
    networks = len(X) + int((inputs_in * qk_in).sum())
    widest = int(support.sum(axis=1).max())
    refuse_above(IDENTITY_OVERHEAD * (networks * l * _evaluation_ns(t, widest, min(widest, max(arch.ranks)), prec)
                                      + sum(s * s * NS_PER_PYTHON_STEP + _determinant_ns(s, prec) for s in sizes)),
                 MAX_BALL_WORK, "replaying this 'identity values' ball witness")
    old = ctx.prec
    ctx.prec = prec
    try:
        small, outputs, tangents = {}, {}, {}

        def network(n, moved=None):
            """Values and derivative of input n's small network, moving the (layer, name, row, col) entry."""
            R = [x for x in range(d) if support[n, x]]
            if n not in small:
                small[n] = (R, [[arb_mat([[W[(i, nm)][s][c] for c in R] for s in range(arch.ranks[i - 1])])
                                 for nm in "QK"] for i in range(1, l + 1)],
                            arb_mat([[X[n][x][y] for y in range(t)] for x in R]))
            R, QK, Xs = small[n]
            weights = []
            for i in range(1, l + 1):
                head = []
                for q, nm in enumerate("QK"):
                    E = None
                    if moved is not None and moved[:2] == (i, nm):
                        E = arb_mat(QK[i - 1][q].nrows(), QK[i - 1][q].ncols())
                        E[moved[2], R.index(moved[3])] = 1
                    head.append(_dual(QK[i - 1][q], E))
                head.append(_dual(arb_mat([[arb(int(x == y)) for y in range(len(R))] for x in range(len(R))])))
                weights.append([head])
            return R, _parts(_output(weights, Xs, f, fp))

        det = arb(1)
        for b, size in enumerate(sizes):
            block_rows, block_cols = rows[starts[b] : starts[b + 1]].tolist(), columns[starts[b] : starts[b + 1]]
            M = arb_mat(size, size)
            for y, c in enumerate(block_cols.tolist()):
                for x, (n, k, j) in enumerate(block_rows):
                    if kind[c] == 2:  # V_l[k', m]: [k' = k] Z[m, j]
                        if wrow[c] == k and support[n, wcol[c]]:
                            if n not in outputs:
                                outputs[n] = network(n)
                            R, (Z, _) = outputs[n]
                            M[x, y] = Z[R.index(int(wcol[c]))][j]
                    elif support[n, k] and support[n, wcol[c]]:
                        moved = (n, int(layer[c]), "QKV"[kind[c]], int(wrow[c]), int(wcol[c]))
                        if moved not in tangents:  # one dual evaluation serves every row of that input
                            tangents[moved] = network(n, moved[1:])
                        R, (_, dY) = tangents[moved]
                        M[x, y] = dY[R.index(k)][j]
            block_det = M.det()
            if block_det.contains(0):
                reject(f"block {b} of the minor ({size} x {size}) has a determinant ball containing 0 at {prec} bits")
            det *= block_det
    finally:
        ctx.prec = old
    recorded = lw["determinant"]
    if not isinstance(recorded, str) or not _BALL.fullmatch(recorded) or not det.overlaps(arb(recorded)):
        reject("the recorded determinant ball does not meet the product of the checker's block determinants")
    return rank
