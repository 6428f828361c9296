"""Certified dimension of normalized (softmax) attention networks, in ball arithmetic.

``exp`` is not polynomial, so the lightning machinery (ranks mod p) does not
apply. Instead (docs/math.md §5.3, docs/softmax.md):

* **Lower bound.** The Jacobian of ``W -> (<w_nr, phi_W(X_n)>)`` at a *rational*
  point and rational inputs, evaluated in python-flint ball arithmetic
  (``arb_mat``) by forward-mode differentiation written out by the chain rule.
  Floats (the balls' midpoints) only *choose* rows and columns; the decision is
  the determinant of the chosen ``r x r`` minor, a ball that must exclude 0 —
  then the true minor is nonzero and ``rank J >= r``, which is at most the
  generic rank. The precision is doubled until the ball excludes 0 (or a cap).
* **Upper bound.** The symmetries that survive normalization: intra-layer
  ``GL_{a_i}`` and inter-layer ``GL_{d_i}`` (the scaling does not: ``f`` is not
  homogeneous). Both leave every score matrix ``Y^T K^T Q Y`` and every value
  ``V Y`` invariant (or equivariant), proved as free-algebra identities
  (:func:`attngeo.geometry.symmetry.normalized_invariance_identities`), hence every
  normalized layer; the orbit rank is the field rank mod p at an integer point.

The certificate is a :class:`attngeo.geometry.certificate.DimensionCertificate` whose
``lower_witness`` records what a checker needs to replay the ball computation:
point, inputs, functionals, precision, rows, columns and the determinant ball.
"""

from __future__ import annotations

import random
import time
from contextlib import contextmanager

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from ...model.architecture import Architecture
from .bounds import functional_count, random_ints, upper_bound
from ..certificate import DimensionCertificate
from ...exceptions import InvalidInputError
from ...model.normalizer import NORMALIZERS

#: Precisions tried for the deciding determinant (bits).
PRECISIONS = (128, 256, 512, 1024, 2048)
#: Point and input entries are ``k / POINT_DENOMINATOR`` with ``|k| < POINT_DENOMINATOR``:
#: scores of order 1 keep softmax away from both saturation and uniformity, where the
#: Jacobian's singular values decay and the float guide loses pivots (measured: widths
#: 3,3,3,3, t = 2 reach the upper bound 33 with k/16, only 27 with k/4, |k| <= 3).
POINT_DENOMINATOR = 16


@contextmanager
def _precision(bits: int):
    """python-flint's working precision set to ``bits`` inside the block, restored after."""
    old = ctx.prec
    ctx.prec = bits
    try:
        yield
    finally:
        ctx.prec = old


def _layers(arch: Architecture, point: list[fmpq], scale=None) -> list[list[dict]]:
    """Per layer, per head: ``Q, K, V`` as balls (and ``U, O`` with ``V = O U`` when factored); ``Q`` times
    the score scale ``scale(prec)`` when one is given."""
    mats: dict = {}
    gamma = scale(ctx.prec) if scale is not None else None
    for b in arch.blocks():
        vals = point[b.offset: b.offset + b.rows * b.cols]
        M = arb_mat(b.rows, b.cols, [arb(v) for v in vals])
        mats.setdefault((b.layer, b.head), {})[b.name] = M * gamma if gamma is not None and b.name == "Q" else M
    out = []
    for i in range(1, arch.depth + 1):
        heads = [mats[(i, j)] for j in range(1, arch.heads[i - 1] + 1)]
        for w in heads:
            if "O" in w:
                w["V"] = w["O"] * w["U"]
        out.append(heads)
    return out


def _entrywise(M: arb_mat, fn) -> arb_mat:
    return arb_mat(M.nrows(), M.ncols(), [fn(M[i, j]) for i in range(M.nrows()) for j in range(M.ncols())])


def _forward(layers, X: arb_mat, norm, arch: Architecture | None = None) -> list[dict]:
    """Values of every layer and head at one input, kept for the tangent pass.

    A causal mask leaves score ``(s, j)`` out of column ``j``'s normalization
    unless ``s <= j`` (its weight is 0, so are ``f`` and ``f'`` there); a residual
    layer adds its input.
    """
    causal, residual = (arch.causal, arch.residual) if arch is not None else (False, False)
    records, Y = [], X
    for heads in layers:
        Yt = Y.transpose()
        t = Y.ncols()
        out, recs = (Y if residual else None), []
        for w in heads:
            Q, K, V = w["Q"], w["K"], w["V"]
            A = K.transpose() * Q
            M = Yt * A * Y
            F, Fp = _entrywise(M, norm.f), _entrywise(M, norm.fprime)
            if causal:
                for i in range(t):
                    for j in range(i):
                        F[i, j] = Fp[i, j] = 0
            sigma = [sum((F[i, j] for i in range(t)), arb(0)) for j in range(t)]
            S = arb_mat(t, t, [F[i, j] / sigma[j] for i in range(t) for j in range(t)])
            VY = V * Y
            recs.append({"Y": Y, "Yt": Yt, "A": A, "AY": A * Y, "YtA": Yt * A, "Fp": Fp, "sigma": sigma,
                         "S": S, "VY": VY, **w})
            out = VY * S if out is None else out + VY * S
        records.append({"heads": recs, "residual": residual})
        Y = out
    records.append({"Y": Y})
    return records


def _head_tangent(rec: dict, dY=None, dQ=None, dK=None, dV=None, dU=None, dO=None) -> arb_mat:
    """Directional derivative of one normalized head's output (the chain rule, written out)."""
    if dU is not None:
        dV = rec["O"] * dU
    if dO is not None:
        dV = dO * rec["U"]
    t = rec["S"].nrows()
    dM = None
    if dY is not None:
        dM = dY.transpose() * rec["AY"] + rec["YtA"] * dY
    if dQ is not None or dK is not None:
        dA = (dK.transpose() * rec["Q"]) if dK is not None else rec["K"].transpose() * dQ
        term = rec["Yt"] * dA * rec["Y"]
        dM = term if dM is None else dM + term
    out = None
    if dM is not None:  # masked entries have f' = 0, so they stay out of dF and of the sums
        S, Fp, sigma = rec["S"], rec["Fp"], rec["sigma"]
        dF = [[Fp[i, j] * dM[i, j] for j in range(t)] for i in range(t)]
        dsig = [sum((dF[i][j] for i in range(t)), arb(0)) for j in range(t)]
        dS = arb_mat(t, t, [(dF[i][j] - S[i, j] * dsig[j]) / sigma[j] for i in range(t) for j in range(t)])
        out = rec["VY"] * dS
    if dY is not None:
        term = rec["V"] * dY * rec["S"]
        out = term if out is None else out + term
    if dV is not None:
        term = dV * rec["Y"] * rec["S"]
        out = term if out is None else out + term
    return out


def _tangent(rec: dict, dY=None, head: int | None = None, **moves) -> arb_mat:
    """Directional derivative of one normalized layer: the heads' derivatives summed (``moves`` on ``head``)."""
    out = dY if rec["residual"] and dY is not None else None
    for j, h in enumerate(rec["heads"], start=1):
        if dY is None and j != head:
            continue
        term = _head_tangent(h, dY, **(moves if j == head else {}))
        out = term if out is None else out + term
    return out


def evaluate_ball(arch: Architecture, weights, X, prec: int = 128) -> arb_mat:
    """``phi_W(X)`` of a normalized network as a matrix of balls (rational weights and input).

    ``weights`` in any form :func:`attngeo.model.network.read_point` accepts; ``X`` a
    ``d_0 x t`` matrix of rationals. Every true entry lies in its ball.

    Parameters
    ----------
    arch : Architecture
        A normalized architecture.
    weights : list
    X : nested lists
        ``d_0 x t`` rationals.
    prec : int
        Working precision in bits.

    Returns
    -------
    flint.arb_mat
        ``d_l x t``.

    Raises
    ------
    InvalidInputError
        For a lightning architecture (use :func:`attngeo.evaluate`), or bad weights or input.

    Examples
    --------
    >>> from attngeo import Architecture, evaluate_ball
    >>> arch = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    >>> Y = evaluate_ball(arch, [[[[1, 0]], [[0, 1]], [[1, 0], [0, 1]]]], [[1, 1], [2, 2]])
    >>> Y[1, 0].contains(2)   # equal tokens: uniform attention, output V x
    True
    >>> evaluate_ball(Architecture((2, 2), (1,)), [0] * 8, [[1, 1], [2, 2]])   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: evaluate_ball is for normalized networks; ...
    """
    from ...model.network import read_input, read_point

    if arch.normalization not in NORMALIZERS:
        raise InvalidInputError(f"evaluate_ball is for normalized networks; {arch} is {arch.normalization}")
    point = list(read_point(arch, weights))
    Xq = read_input(arch, X)
    with _precision(prec):
        Xa = arb_mat(arch.widths[0], arch.tokens, [arb(fmpq(x)) for row in Xq for x in row])
        return _forward(_layers(arch, point), Xa, NORMALIZERS[arch.normalization], arch)[-1]["Y"]


def _unit(rows: int, cols: int, r: int, c: int) -> arb_mat:
    E = arb_mat(rows, cols)
    E[r, c] = 1
    return E


def ball_jacobian(arch: Architecture, point: list[fmpq], inputs: list, functionals: np.ndarray, prec: int,
                  columns: list[int] | None = None, scale=None) -> arb_mat:
    """Rows ``<w_nr, d phi(X_n)>``, one column per parameter, as balls at ``prec`` bits.

    Forward mode by the chain rule, every operation in ball arithmetic: each
    true entry of the Jacobian lies in its ball.

    Parameters
    ----------
    arch : Architecture
        A normalized architecture.
    point : list of fmpq
        ``arch.parameter_count`` rationals in flattening order.
    inputs : list
        ``N`` matrices ``d_0 x t`` of rationals (``fmpq`` or integers).
    functionals : numpy.ndarray
        Integers of shape ``(N, c, d_l, t)``: ``c`` functionals per input.
    prec : int
        Working precision in bits.
    columns : list of int, optional
        Only these parameter columns, in this order (default: all).
    scale : callable, optional
        ``scale(prec) -> arb``: the checkpoint's score scale ``gamma`` (``1/sqrt(a)`` is irrational, a ball
        here): scores ``gamma (K x_s + b_K)^T (Q x_i + b_Q)``. The columns are those of ``phi`` at
        ``(gamma Q, K, ..., gamma b_Q)``: the chain rule's factor ``gamma`` on ``Q``'s columns changes no rank
        (docs/math.md §8.1).

    Returns
    -------
    flint.arb_mat
        ``N c`` rows, ``arch.parameter_count`` columns (or ``len(columns)``).

    Examples
    --------
    Softmax ``2 -> 2``, rank 1, two tokens. The ``GL_1`` field ``(Q, -K, 0)``
    survives the normalizer: ``J v`` is a column of balls around 0. The
    scaling field ``(Q, 0, -V)`` of the lightning group does not: some ball of
    ``J v`` excludes 0, a proof that ``J v != 0``:

    >>> import numpy as np
    >>> from flint import arb_mat, fmpq
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.ball import ball_jacobian
    >>> from attngeo.geometry.symmetry import vector_fields
    >>> arch = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    >>> point = [fmpq(k, 4) for k in (1, -2, 3, 1, 2, 0, -1, 1)]
    >>> inputs = [[[1, -2], [0, 3]], [[2, 1], [-1, 2]], [[1, 1], [3, -1]], [[0, 2], [1, 1]]]
    >>> w = np.array([[[[1, 0], [0, 0]], [[0, 1], [1, -1]]]] * 4)     # two functionals per input
    >>> J = ball_jacobian(arch, point, inputs, w, 128)
    >>> J.nrows(), J.ncols()
    (8, 8)
    >>> intra, scaling = vector_fields(Architecture((2, 2), (1,), tokens=2), point).tolist()
    >>> [(J * arb_mat([[x] for x in v])).contains(arb_mat(8, 1)) for v in (intra, scaling)]
    [True, False]
    """
    if arch.normalization not in NORMALIZERS:
        raise InvalidInputError(f"ball_jacobian is for normalized networks; {arch} is {arch.normalization} "
                                "(use attngeo.model.jacobian.jacobian_mod_p, or normalization='softmax')")
    if arch.is_tied:  # shared keys and values, biases: the untied layer's columns, folded (model/untied.py)
        return _tied_ball_jacobian(arch, point, inputs, functionals, prec, columns, scale)
    norm = NORMALIZERS[arch.normalization]
    with _precision(prec):
        layers = _layers(arch, point, scale)
        entries = [(b, r, c) for b in arch.blocks() for r in range(b.rows) for c in range(b.cols)]
        if columns is not None:
            entries = [entries[k] for k in columns]
        rows = []
        for X, w in zip(inputs, functionals):
            recs = _forward(layers, arb_mat(len(X), len(X[0]), [arb(x) for r in X for x in r]), norm, arch)
            cols = []
            for b, r, c in entries:
                E = _unit(b.rows, b.cols, r, c)
                dY = _tangent(recs[b.layer - 1], head=b.head, **{"d" + b.name: E})
                for rec in recs[b.layer: arch.depth]:
                    dY = _tangent(rec, dY=dY)
                cols.append(dY)
            for wk in w:  # c functionals on the d_l x t output, summed as balls: no int64 sum to wrap
                rows.append([sum((dY[i, j] * int(wk[i][j]) for i in range(dY.nrows()) for j in range(dY.ncols())
                                  if wk[i][j]), arb(0)) for dY in cols])
        return arb_mat(rows)


def _tied_ball_jacobian(arch, point, inputs, functionals, prec, columns, scale) -> arb_mat:
    """:func:`ball_jacobian` of a tied layer: the untied layer on ``(x, 1)``, columns of shared copies summed."""
    from ...model.untied import augment, bias_columns, copies, fold, untied

    source, _ = copies(arch)
    plain_inputs = [augment(arch, np.array([[fmpq(x) for x in row] for row in X], dtype=object), fmpq(1)).tolist()
                    for X in inputs]
    J = ball_jacobian(untied(arch), [point[k] for k in source], plain_inputs, functionals, prec, scale=scale)
    with _precision(prec):
        rows = np.array([[J[i, j] for j in range(J.ncols())] for i in range(J.nrows())], dtype=object)
        bias = bias_columns(arch, len(inputs), np.asarray(functionals), object) if arch.biases else None
        folded = fold(arch, rows, None if bias is None else np.vectorize(arb, otypes=[object])(bias),
                      lambda x, y: x + y)
        if columns is not None:
            folded = folded[:, columns]
        return arb_mat(folded.tolist())


def float_pivots(J: np.ndarray, tol: float = 1e-11) -> tuple[list[int], list[int]]:
    """Rows and columns of a well-conditioned square minor (complete pivoting on floats: a guide only).

    Parameters
    ----------
    J : array_like
        A real matrix (the midpoints of a ball Jacobian).
    tol : float
        Pivots at most ``tol`` times the largest entry count as zero.

    Returns
    -------
    rows, cols : list of int
        In pivot order; their length is the numerical rank.

    Examples
    --------
    Row 1 is twice row 0, so the rank is 2; the largest entry, 6, is the first pivot:

    >>> import numpy as np
    >>> from attngeo.geometry.dimension.ball import float_pivots
    >>> float_pivots(np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]]))
    ([1, 2], [2, 1])
    >>> float_pivots(np.zeros((2, 3)))
    ([], [])

    On the softmax ``2 -> 2``, rank 1, ``t = 2`` Jacobian (8 parameters) the
    guide finds 7 pivots; the ball determinant of that minor excludes 0, so
    ``rank J >= 7 = 8 - dim GL_1`` and ``dim M = 7``:

    >>> from flint import arb_mat, fmpq
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.ball import ball_jacobian
    >>> arch = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    >>> point = [fmpq(k, 4) for k in (1, -2, 3, 1, 2, 0, -1, 1)]
    >>> inputs = [[[1, -2], [0, 3]], [[2, 1], [-1, 2]], [[1, 1], [3, -1]], [[0, 2], [1, 1]]]
    >>> J = ball_jacobian(arch, point, inputs, np.array([[[[1, 0], [0, 0]], [[0, 1], [1, -1]]]] * 4), 128)
    >>> rows, cols = float_pivots(np.array([[float(J[i, j].mid()) for j in range(8)] for i in range(8)]))
    >>> len(rows), arb_mat([[J[i, j] for j in cols] for i in rows]).det().contains(0)
    (7, False)
    """
    A = np.array(J, dtype=float)
    rows, cols = [], []
    scale = np.abs(A).max() if A.size else 0.0
    free_r, free_c = list(range(A.shape[0])), list(range(A.shape[1]))
    while free_r and free_c:
        sub = np.abs(A[np.ix_(free_r, free_c)])
        k = int(np.argmax(sub))
        i, j = free_r[k // len(free_c)], free_c[k % len(free_c)]
        if A[i, j] == 0 or abs(A[i, j]) <= tol * scale:
            break
        rows.append(i)
        cols.append(j)
        free_r.remove(i)
        free_c.remove(j)
        A[free_r, :] -= np.outer(A[free_r, j] / A[i, j], A[i, :])
    return rows, cols


def wide_pivots(J: arb_mat, digits: int = 60) -> tuple[list[int], list[int]]:
    """Like :func:`float_pivots`, on the midpoints with ``digits`` decimal digits (balls of radius 0).

    Deep normalized networks have Jacobians whose singular values decay over
    many orders of magnitude; float64 stops choosing pivots early. Still a guide.

    Parameters
    ----------
    J : flint.arb_mat
        Its midpoints are read with ``digits + 5`` digits.
    digits : int
        Working decimal digits; pivots below ``10^(12 - digits)`` times the
        largest entry count as zero.

    Returns
    -------
    rows, cols : list of int

    Examples
    --------
    >>> from flint import arb_mat
    >>> from attngeo.geometry.dimension.ball import wide_pivots
    >>> wide_pivots(arb_mat([[1, 2, 3], [2, 4, 6], [0, 1, 1]]))
    ([1, 2], [2, 1])

    The midpoints must carry the digits: the rank-7 softmax Jacobian of
    :func:`float_pivots` computed at 64 bits has rounding errors far above the
    tolerance, and the guide overestimates; at 256 bits (more than 60 digits)
    it finds the rank. Either way the ball determinant decides.

    >>> import numpy as np
    >>> from flint import fmpq
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.ball import ball_jacobian
    >>> arch = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    >>> point = [fmpq(k, 4) for k in (1, -2, 3, 1, 2, 0, -1, 1)]
    >>> inputs = [[[1, -2], [0, 3]], [[2, 1], [-1, 2]], [[1, 1], [3, -1]], [[0, 2], [1, 1]]]
    >>> w = np.array([[[[1, 0], [0, 0]], [[0, 1], [1, -1]]]] * 4)
    >>> [len(wide_pivots(ball_jacobian(arch, point, inputs, w, bits))[0]) for bits in (64, 256)]
    [8, 7]
    """
    # In arb at the digits' precision, the radii dropped after every step (a guide: the midpoints are the numbers):
    # six times faster than the same elimination in mpmath, which it replaced (docs/engines.md).
    with _precision(int(digits * 3.33) + 10):
        A = [[J[i, j].mid() for j in range(J.ncols())] for i in range(J.nrows())]
        scale = max((abs(x) for r in A for x in r), default=arb(0))
        tol = arb(10) ** (12 - digits) * scale
        rows, cols = [], []
        free_r, free_c = list(range(J.nrows())), list(range(J.ncols()))
        while free_r and free_c:
            best, i, j = arb(-1), None, None
            for r in free_r:
                row = A[r]
                for c in free_c:
                    v = abs(row[c])
                    if v > best:
                        best, i, j = v, r, c
            if not best > tol:
                break
            rows.append(i)
            cols.append(j)
            free_r.remove(i)
            free_c.remove(j)
            pivot, inverse = A[i], 1 / A[i][j]
            for k in free_r:
                factor = A[k][j] * inverse
                if factor != 0:
                    A[k] = [(x - factor * y).mid() for x, y in zip(A[k], pivot)]
    return rows, cols


def _mids(J: arb_mat) -> np.ndarray:
    return np.array([[float(J[i, j].mid()) for j in range(J.ncols())] for i in range(J.nrows())])


def _random_rationals(rng: random.Random, n: int) -> list[fmpq]:
    return [fmpq(rng.randint(1 - POINT_DENOMINATOR, POINT_DENOMINATOR - 1), POINT_DENOMINATOR) for _ in range(n)]


def _ball_lower(arch, point, inputs, w, target: int, scale=None) -> tuple[int, dict]:
    """The certified rank bound at one point and input set, with its witness (``scale``: see :func:`ball_jacobian`)."""
    jacobians: dict[int, arb_mat] = {}

    def J(prec: int) -> arb_mat:  # each precision is computed once, however many minors are tried
        if prec not in jacobians:
            jacobians[prec] = ball_jacobian(arch, point, inputs, w, prec, scale=scale)
        return jacobians[prec]

    witness = {"normalization": arch.normalization, "point": [str(x) for x in point],
               "inputs": [[[str(x) for x in r] for r in X] for X in inputs], "functionals": np.asarray(w).tolist()}
    rows, cols = float_pivots(_mids(J(64)))
    if len(rows) < target:  # float64 ran out of digits: guide again with wide midpoints
        rows, cols = wide_pivots(J(256))
    while rows:
        for prec in PRECISIONS:
            with _precision(prec):
                det = arb_mat([[J(prec)[i, j] for j in cols] for i in rows]).det()
            if not det.contains(0):
                return len(rows), {"method": "ball arithmetic: determinant of a Jacobian minor whose ball excludes 0",
                                   **witness, "precision": prec, "rank": len(rows), "rows": rows, "columns": cols,
                                   "determinant": det.str(radius=True, more=False)}
        rows, cols = rows[:-1], cols[:-1]  # the guide overestimated the rank: drop its weakest pivot
    return 0, {"method": "ball arithmetic: no minor was separated from 0 (the trivial bound)", **witness,
               "precision": PRECISIONS[-1], "rank": 0, "rows": [], "columns": [], "determinant": "1"}


def certify_normalized_dimension(arch: Architecture, *, seed: int | None = None, max_attempts: int = 3,
                                 inputs: int | None = None) -> DimensionCertificate:
    """Lower and upper bounds on ``dim M`` for a normalized network; equal bounds certify it.

    :func:`attngeo.certify_dimension` hands normalized networks here.

    Parameters
    ----------
    arch : Architecture
        Its normalization must be a registered normalizer (softmax or one of
        :data:`attngeo.model.normalizer.NORMALIZERS`).
    seed : int, optional
        Seed for the prime, the points, inputs and functionals.
    max_attempts : int
        Fresh points to try while the bounds differ.
    inputs : int, optional
        Inputs per point (default: enough functionals to match the upper bound,
        doubled at each attempt).

    Returns
    -------
    DimensionCertificate
        The lower witness is a ball determinant, the upper one a field minor mod ``p``.

    Raises
    ------
    InvalidInputError
        For a lightning architecture or an unregistered normalizer.

    Examples
    --------
    Softmax ``2 -> 2``, rank 1, two tokens: only ``GL_1`` survives, so
    ``dim M <= 8 - 1``, and a 7 x 7 ball determinant excludes 0 at 128 bits;
    the independent checker agrees:

    >>> from attngeo import Architecture, check_certificate
    >>> from attngeo.geometry.dimension.ball import certify_normalized_dimension
    >>> arch = Architecture((2, 2), (1,), tokens=2, normalization="softmax")
    >>> cert = certify_normalized_dimension(arch, seed=0)
    >>> cert.dimension, cert.families, cert.lower_witness["rank"], cert.lower_witness["precision"]
    (7, ['intra(1)'], 7, 128)
    >>> check_certificate(cert.to_json()).claim
    'dim M = 7 for widths 2,2, ranks 1, t=2, softmax'
    >>> certify_normalized_dimension(Architecture((2, 2), (1,), tokens=2))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: 'lightning' is not a registered normalizer
    """
    from ...model.formulas import hmk_formula
    from ...exact.rank import random_prime

    if arch.normalization not in NORMALIZERS:
        raise InvalidInputError(f"{arch.normalization!r} is not a registered normalizer")
    start = time.perf_counter()
    rng = random.Random(seed)
    best_lower, best_upper = (-1, None), (arch.parameter_count + 1, None)
    d_l, t = arch.output_shape
    c = functional_count(arch)
    attempt = 0
    for attempt in range(1, max_attempts + 1):
        p = random_prime(rng)
        upper, witness, _ = upper_bound(arch, random_ints(rng, (arch.parameter_count,)), p)
        if upper < best_upper[0]:
            best_upper = (upper, witness)
        n = inputs if inputs is not None else max(1, -(-(best_upper[0] + 2) // c)) * (2 ** (attempt - 1))
        point = _random_rationals(rng, arch.parameter_count)
        X = [[_random_rationals(rng, t) for _ in range(arch.widths[0])] for _ in range(n)]
        w = np.array([[[[rng.randint(-3, 3) for _ in range(t)] for _ in range(d_l)] for _ in range(c)]
                      for _ in range(n)])
        lower = _ball_lower(arch, point, X, w, best_upper[0])
        if lower[0] > best_lower[0]:
            best_lower = lower
        if best_lower[0] == best_upper[0]:
            break
    notes = []
    if best_lower[0] != best_upper[0]:
        notes.append(f"bounds differ after {attempt} attempts (ball arithmetic lower bound, symmetry upper bound)")
    return DimensionCertificate(architecture=arch, lower=best_lower[0], upper=best_upper[0],
                                lower_witness=best_lower[1], upper_witness=best_upper[1],
                                formula=hmk_formula(arch).to_dict(), seconds=time.perf_counter() - start,
                                attempts=attempt, notes=notes)
