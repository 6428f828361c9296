"""Structure-aware certification of deep lightning networks of equal widths (issue [4/6], deep rows).

A lower bound is valid at *any* point, on *any* inputs. Take every ``V_i = I_d``
(random ``Q_i``, ``K_i``) and inputs ``X`` whose nonzero rows lie in a small set
``R``. Then, for **every** ``Q, K``, ``Y_i = Y_{i-1} (Y_{i-1}ᵀ K_iᵀ Q_i Y_{i-1})``
stays of the form ``X M`` with ``M`` a ``t x t`` matrix, and ``K_i Y = K_i[:, R] Y[R]``:

**Lemma.** At ``V_1 = ... = V_l = I`` the network on an input supported on the
rows ``R`` is the width-``|R|`` network with weights ``Q_i[:, R]``, ``K_i[:, R]``,
``V_i = I``, padded by zero rows; its output is ``V_l Z`` with ``Z`` free of ``V_l``.
So the derivative of output entry ``(k, j)`` vanishes on every ``Q_i``, ``K_i``
column outside ``R`` and on all of them when ``k`` is not in ``R``, and on
``V_l[k', m]`` it is ``[k' = k] Z[m, j]`` (zero unless ``m`` is in ``R``).

With ``R = [a*]`` (the core, ``a* = max a_i``) and ``R = [a*] ∪ {m}`` for each
``m >= a*``, the Jacobian has a nonsingular minor that is block lower
triangular with small diagonal blocks, in this order:

1. ``V_l[k, :a*]`` for each ``k >= a*`` (rows ``(core input, k, j)``);
2. the core: ``Q_i[:, :a*]``, ``K_i[:, :a*]`` without ``K_i[:, :a_i]`` and ``Q_i[0, 0]``, and ``V_l[:a*, :a*]``;
3. for each ``m >= a*``: ``Q_i[:, m]``, ``K_i[:, m]``, ``V_l[:a*, m]``, ``V_l[m, m]``;
4. ``V_l[k, m]`` for ``k != m >= a*``: ``1 x 1`` blocks ``Z[m, j]``.

Their sizes add up to ``d^2 + Σ (2 a_i d - a_i^2 - 1)``, which is ``P`` minus the
rank of [HMK]'s group fields. The upper bound is that rank, at the same point
on the complementary columns (``V_1 .. V_{l-1}``, ``K_i[:, :a_i]``, ``Q_i[0, 0]``):
at ``V = I`` the field matrix there is sparse and, ordered by :func:`field_order`,
block lower triangular (blocks ``1 x 1`` and ``a_i^2 x a_i^2``).

The lemma holds for any column normalization of the scores, so softmax
networks take the same path with ball determinants per block (no scaling
family: the core keeps ``Q_i[0, 0]``). Measured (benchmarks/scale.py): ``l = 4,
a = 4`` at ``d = 64`` in 0.3 s, ``d = 768`` in about 10 s; softmax ``l = 2, t = 3,
a = 2, d = 32`` in 0.6 s. The checker (:mod:`attngeo.check.dimension.identitypoint`,
:mod:`attngeo.check.dimension.ball`) replays both from the lemma with its own
forward-mode derivatives.
"""

from __future__ import annotations

import random
import time

import numpy as np
from flint import arb, arb_mat, fmpq, nmod_mat

from ... import progress
from ...exceptions import InvalidInputError
from ...exact.rank import det_mod_p, independent_rows, random_prime
from ...model.architecture import Architecture
from ...model.formulas import hmk_formula
from ...model.jacobian import jacobian_mod_p
from ...model.network import ModularOps, network, split_point
from .bounds import random_ints
from ..certificate import DimensionCertificate
from .kernelfields import kernel_families
from .ball import PRECISIONS, _forward, _layers, _mids, _precision, ball_jacobian, float_pivots
from ..symmetry import families

#: Spare inputs beyond the fewest that could fill each block's rows (a short block would fall back to dense).
SPARE_CORE, SPARE_M = 2, 1

#: How often a group of inputs may be doubled while its block is still short (each input reveals about
#: t^2 numbers per attention matrix: l = 4, a = 4 needs twice the inputs its row count suggests).
MAX_DOUBLINGS = 3

#: Point and input entries of normalized networks are k / DENOMINATOR, |k| < DENOMINATOR (as in softmax.py).
DENOMINATOR = 16

#: Peak bytes per parameter, with margin over the measured (l = 4, a = 4: 99 MB at d = 128, 238 MB at d = 256,
#: 1.7 GB at d = 768 for 2,383,872 parameters); guides a refusal only.
BYTES_PER_PARAMETER = 1500


def applies(arch: Architecture) -> bool:
    """Equal widths ``d``, at least two layers of [HMK]'s kind, ``t >= 2``, ``max a_i < d``, no kernel fields.

    Lightning or normalized (softmax): the lemma holds for any column normalization of the scores.

    Examples
    --------
    >>> applies(Architecture((6, 6, 6), (2, 2))), applies(Architecture((6, 5, 6), (2, 2)))
    (True, False)
    >>> applies(Architecture((6, 6, 6), (1, 2)))     # a_1 = 1: the symmetric-score fields join the groups
    False
    >>> applies(Architecture((6, 6, 6), (2, 2), tokens=3, normalization="softmax"))
    True
    """
    if arch.depth < 2 or arch.tokens < 2 or not arch.is_plain:
        return False
    d = arch.widths[0]
    if any(w != d for w in arch.widths) or max(arch.ranks) >= d:
        return False
    return not kernel_families(arch)


def estimate_bytes(arch: Architecture) -> int:
    """Estimated peak memory of :func:`certify_deep` (a guide for ``--max-memory``, not a proof).

    Examples
    --------
    >>> estimate_bytes(Architecture((128,) * 5, (4,) * 4)) < 10**9
    True
    """
    return BYTES_PER_PARAMETER * arch.parameter_count


class _Columns:
    """Flat column numbers of ``Q_i``, ``K_i``, ``V_i`` entries (all widths ``d``)."""

    def __init__(self, arch: Architecture):
        self.d = arch.widths[0]
        self.offset = {(b.name, b.layer): b.offset for b in arch.blocks()}

    def __call__(self, name: str, layer: int, row, col):
        return self.offset[(name, layer)] + np.asarray(row) * self.d + np.asarray(col)


def _point(arch: Architecture, rng: random.Random) -> np.ndarray:
    """Random integer ``Q_i``, ``K_i`` and every ``V_i = I`` (numerators over :data:`DENOMINATOR` for normalized networks)."""
    point = np.zeros(arch.parameter_count, dtype=np.int64)
    for b in arch.blocks():
        if b.name == "V":
            point[b.offset : b.offset + b.size] = np.eye(b.rows, b.cols, dtype=np.int64).ravel()
        elif arch.normalization == "lightning":
            point[b.offset : b.offset + b.size] = random_ints(rng, b.size)
        else:
            point[b.offset : b.offset + b.size] = np.random.default_rng(rng.getrandbits(64)).integers(
                1 - DENOMINATOR, DENOMINATOR, b.size)
    return point


def _rational_point(arch: Architecture, point: np.ndarray) -> np.ndarray:
    """A normalized network's point: ``Q_i``, ``K_i`` entries over :data:`DENOMINATOR`, ``V_i = I`` (object array of fmpq)."""
    out = np.empty(len(point), dtype=object)
    for b in arch.blocks():
        scale = 1 if b.name == "V" else DENOMINATOR
        out[b.offset : b.offset + b.size] = [fmpq(int(v), scale) for v in point[b.offset : b.offset + b.size]]
    return out


def _restricted(arch: Architecture, point: np.ndarray, R: list[int]) -> tuple[Architecture, np.ndarray]:
    """The lemma's width-``|R|`` network: ``Q_i[:, R]``, ``K_i[:, R]``, ``V_i = I``."""
    small = Architecture((len(R),) * (arch.depth + 1), arch.ranks, arch.tokens, arch.normalization)
    parts = []
    for Q, K, _ in split_point(arch, point):
        parts += [Q[:, R].ravel(), K[:, R].ravel(), np.eye(len(R), dtype=np.int64).ravel()]
    return small, np.concatenate(parts)


def _restricted_columns(arch: Architecture, R: list[int]) -> np.ndarray:
    """Full column of each column of the restricted network (``V_i`` maps to ``V_i[R, R]``)."""
    col, out = _Columns(arch), []
    Rv = np.asarray(R)
    for i, a in enumerate(arch.ranks, start=1):
        s, c = np.meshgrid(np.arange(a), Rv, indexing="ij")
        out += [col("Q", i, s, c).ravel(), col("K", i, s, c).ravel()]
        k, m = np.meshgrid(Rv, Rv, indexing="ij")
        out.append(col("V", i, k, m).ravel())
    return np.concatenate(out)


class _Modular:
    """Blocks mod ``p``: the Jacobian of the small network by :func:`jacobian_mod_p`, minors by FLINT."""

    def __init__(self, p: int):
        self.p, self.one = p, 1

    def inputs(self, rng: random.Random, shape) -> np.ndarray:
        return random_ints(rng, shape)

    def minor(self, small, point, X, wanted) -> tuple[list[int], int] | None:
        """Rows of a nonsingular square minor on the ``wanted`` columns and its determinant, or None."""
        return self.pick(jacobian_mod_p(small, point, X, self.p)[:, wanted])

    def pick(self, M: np.ndarray):
        rank, rows = independent_rows(M, self.p)
        return (rows, det_mod_p(M[rows], self.p)) if rank == M.shape[1] else None

    def outputs(self, small, point, X) -> np.ndarray:
        return network(ModularOps(self.p), split_point(small, point), np.mod(X, self.p))

    def nonzero(self, z) -> bool:
        return int(z) != 0

    def times(self, a, b):
        return a * int(b) % self.p


class _Balls:
    """Blocks in ball arithmetic: the small network's Jacobian by :func:`ball_jacobian`, a float guide picks the
    rows, and the determinant ball must exclude 0 (precision raised while it does not)."""

    one = arb(1)

    def __init__(self, arch: Architecture):
        self.norm, self.precision = arch.normalization, PRECISIONS[0]

    def inputs(self, rng: random.Random, shape) -> np.ndarray:
        return np.random.default_rng(rng.getrandbits(64)).integers(1 - DENOMINATOR, DENOMINATOR, shape)

    @staticmethod
    def _q(values) -> list:
        return [fmpq(int(v), DENOMINATOR) for v in values]

    def minor(self, small, point, X, wanted):
        point = [fmpq(v) for v in point]  # V = I joins the rationals as integers
        r, t = X.shape[1], X.shape[2]
        onehot = np.eye(r * t, dtype=np.int64).reshape(r * t, r, t)
        w = np.broadcast_to(onehot, (len(X),) + onehot.shape)
        inputs = [[self._q(row) for row in x] for x in X]
        rows = None
        for prec in PRECISIONS:
            J = ball_jacobian(small, point, inputs, w, prec)
            if rows is None:
                rows, _ = float_pivots(_mids(J)[:, wanted])
                if len(rows) < len(wanted):
                    return None
                rows = sorted(rows)
            with _precision(prec):
                det = arb_mat([[J[i, j] for j in wanted] for i in rows]).det()
            if not det.contains(0):
                self.precision = max(self.precision, prec)
                return rows, det
        return None

    def outputs(self, small, point, X) -> np.ndarray:
        from ...model.normalizer import NORMALIZERS

        out = np.empty(X.shape, dtype=object)
        with _precision(PRECISIONS[0]):
            layers = _layers(small, [fmpq(v) for v in point])
            for n, x in enumerate(X):
                Y = _forward(layers, arb_mat([[arb(v) for v in self._q(row)] for row in x]), NORMALIZERS[self.norm])[-1]["Y"]
                out[n] = [[Y[i, j] for j in range(Y.ncols())] for i in range(Y.nrows())]
        return out

    def pick(self, M: np.ndarray):
        rows, cols = float_pivots(np.array([[float(x.mid()) for x in row] for row in M]))
        if len(rows) < M.shape[1]:
            return None
        rows = sorted(rows)
        with _precision(PRECISIONS[0]):
            det = arb_mat([[M[i, j] for j in range(M.shape[1])] for i in rows]).det()
        return None if det.contains(0) else (rows, det)

    def nonzero(self, z) -> bool:
        return not z.contains(0)

    def times(self, a, b):
        with _precision(PRECISIONS[0]):
            return a * b


def lower_bound(arch: Architecture, point: np.ndarray, p: int, rng: random.Random) -> dict | None:
    """The block-triangular minor of the lemma at ``point`` (``V = I``), as a witness; None if a block is singular.

    Mod ``p`` for lightning networks; in ball arithmetic (point and inputs over
    :data:`DENOMINATOR`, ``p`` unused) for normalized ones.

    Examples
    --------
    >>> arch = Architecture((5, 5, 5), (2, 2))
    >>> rng = random.Random(0)
    >>> w = lower_bound(arch, _point(arch, rng), random_prime(rng), rng)
    >>> w["rank"] == 5 ** 2 + 2 * (2 * 2 * 5 - 4 - 1), sum(w["blocks"]) == len(w["rows"]) == w["rank"]
    (True, True)
    >>> soft = Architecture((5, 5, 5), (2, 2), tokens=3, normalization="softmax")
    >>> lower_bound(soft, _point(soft, rng), 0, rng)["rank"] == 5 ** 2 + 2 * (2 * 2 * 5 - 4)   # no scaling
    True
    """
    lightning = arch.normalization == "lightning"
    engine = _Modular(p) if lightning else _Balls(arch)
    if not lightning:
        point = _rational_point(arch, point)
    d, l, t = arch.widths[0], arch.depth, arch.tokens
    ranks = arch.ranks
    a = max(ranks)
    col = _Columns(arch)
    U = list(range(a))
    core_size = sum(2 * ai * a - ai * ai - lightning for ai in ranks) + a * a
    m_size = 2 * sum(ranks) + a + 1
    ms = list(range(a, d))
    supports, values = [], []  # the inputs, kept sparse until the witness is written
    rows, cols, sizes, det = [], [], [], engine.one

    def block(block_rows, block_cols, block_det):
        nonlocal det
        rows.extend(block_rows)
        cols.extend(int(c) for c in block_cols)
        sizes.append(len(block_cols))
        det = engine.times(det, block_det)

    def group(R, count, wanted):
        """Inputs on the rows R, doubled while the wanted columns are not reached: (first, Z, pick)."""
        small, small_point = _restricted(arch, point, R)
        X = engine.inputs(rng, (count, len(R), t))
        for _ in range(MAX_DOUBLINGS + 1):
            picked = engine.minor(small, small_point, X, wanted)
            if picked is not None:
                break
            X = np.concatenate([X, engine.inputs(rng, X.shape)])
        first = len(supports)
        supports.extend([R] * len(X))
        values.extend(X)
        return first, engine.outputs(small, small_point, X), picked  # V_l = I: the output is Z

    # the core inputs, on the rows [a]
    full = _restricted_columns(arch, U)
    dropped = set()
    for i, ai in enumerate(ranks, start=1):
        dropped |= {int(c) for c in col("K", i, *np.meshgrid(np.arange(ai), np.arange(ai), indexing="ij")).ravel()}
        if lightning:  # the scaling's column; normalized networks have no scaling
            dropped.add(int(col("Q", i, 0, 0)))
    V_last = col("V", l, 0, 0)
    value = np.zeros(arch.parameter_count + 1, dtype=bool)
    for b in arch.blocks():
        value[b.offset : b.offset + b.size] = b.name == "V"
    keep = [j for j, c in enumerate(full) if c not in dropped and (c >= V_last or not value[c])]
    progress.phase("Jacobian and elimination", f"the core: {len(keep)} columns")
    _, Zc, core = group(U, -(-core_size // (a * t)) + SPARE_CORE, keep)
    if core is None:
        return None
    # 1. V_l[k, :a] for k >= a: rows (n, k, j) with value Z_n[:, j]
    picked = engine.pick(np.swapaxes(Zc, 1, 2).reshape(-1, a))
    if picked is None:
        return None
    chosen, vdet = picked
    for k in ms:
        block([[r // t, k, r % t] for r in chosen], col("V", l, k, np.arange(a)), vdet)
    # 2. the core
    chosen, cdet = core
    block([[r // (a * t), (r // t) % a, r % t] for r in chosen], full[keep], cdet)
    # 3. one block per m >= a, on the restricted network of R = [a] + [m] (m is its last coordinate)
    first_inputs = []
    per_m = -(-m_size // ((a + 1) * t)) + SPARE_M
    for q, m in enumerate(ms):
        if q % max(1, len(ms) // 10) == 0:
            progress.phase("Jacobian and elimination", f"block {q + 1} of {len(ms)}")
        R = U + [m]
        full = _restricted_columns(arch, R)
        k_, j_ = np.divmod(full - V_last, d)  # V_l[k, m] for k < a, and V_l[m, m]; Q_i[:, m], K_i[:, m]
        mine = np.flatnonzero(np.where(full >= V_last, (j_ == m) & ((k_ < a) | (k_ == m)), ~value[full] & (full % d == m)))
        first, Z, picked = group(R, per_m, mine)
        if picked is None:
            return None
        chosen, mdet = picked
        block([[first + r // ((a + 1) * t), R[(r // t) % (a + 1)], r % t] for r in chosen], full[mine], mdet)
        j = next((j for j in range(t) if engine.nonzero(Z[0, a, j])), None)
        if j is None:
            return None
        first_inputs.append((first, j, Z[0, a, j]))
    for k in ms:  # 4. V_l[k, m] for k != m >= a: row (first input of m, k, j), value Z[m, j]
        others = [q for q, m in enumerate(ms) if m != k]
        rows.extend([first_inputs[q][0], k, first_inputs[q][1]] for q in others)
        cols.extend(col("V", l, k, np.array(ms)[others]).tolist())
        sizes.extend([1] * len(others))
        for q in others:
            det = engine.times(det, first_inputs[q][2])
    inputs = np.zeros((len(supports), d, t), dtype=np.int64)
    for n, (R, X) in enumerate(zip(supports, values)):
        inputs[n, R] = X
    common = {"structured": "identity values", "rank": len(cols), "rows": rows, "columns": cols, "blocks": sizes}
    if lightning:
        return {**common, "prime": p, "point": point.tolist(), "inputs": inputs.tolist(), "determinant": det}
    return {**common, "normalization": arch.normalization, "precision": engine.precision,
            "point": [str(v) for v in point],
            "inputs": [[[str(fmpq(int(v), DENOMINATOR)) for v in row] for row in x] for x in inputs],
            "determinant": det.str(radius=True, more=False)}


def field_entries(arch: Architecture, point: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, column, value)`` of the group fields at a point with every ``V_i = I`` (rows in canonical order).

    Rows: per layer the intra fields ``E_uv`` (row-major), the scaling, then the
    inter fields ``E_uv``; tangents ``δQ = E Q``, ``δK = -Eᵀ K``; ``δQ = Q``,
    ``δV = -V``; ``δV_i = E V_i``, ``δ(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``.

    Examples
    --------
    The fields of ``GL_2 x C^* x GL_3 x GL_2 x C^*`` on widths 3,3,3 have rank 19, as the dense field matrix says:

    >>> from attngeo.exact.rank import rank_mod_p
    >>> from attngeo.geometry.symmetry import field_matrix
    >>> arch, p = Architecture((3, 3, 3), (2, 2)), 1000003
    >>> point = _point(arch, random.Random(1))
    >>> r, c, v = field_entries(arch, point)
    >>> F = np.zeros((19, arch.parameter_count), dtype=np.int64); np.add.at(F, (r, c), v)
    >>> rank_mod_p(F, p), np.array_equal(np.mod(F, p), field_matrix(arch, point, p))
    (19, True)
    """
    col = _Columns(arch)
    d, l = arch.widths[0], arch.depth
    layers = split_point(arch, point)
    R, C, W = [], [], []

    def put(rows, cols, vals):
        rows, cols, vals = np.broadcast_arrays(np.asarray(rows), np.asarray(cols), np.asarray(vals))
        R.append(rows.ravel()), C.append(cols.ravel()), W.append(vals.ravel())

    base = 0
    for i, a in enumerate(arch.ranks, start=1):
        Q, K, _ = layers[i - 1]
        u, v, c = np.meshgrid(np.arange(a), np.arange(a), np.arange(d), indexing="ij")
        row = base + u * a + v
        put(row, col("Q", i, u, c), Q[v, c])  # (E_uv Q)[u, c] = Q[v, c]
        put(row, col("K", i, v, c), -K[u, c])  # -(E_vu K)[v, c] = -K[u, c]
        base += a * a
        if arch.normalization == "lightning":  # a normalizer breaks the scaling (docs/softmax.md)
            s, c = np.meshgrid(np.arange(a), np.arange(d), indexing="ij")
            put(base, col("Q", i, s, c), Q)
            put(base, col("V", i, np.arange(d), np.arange(d)), -1)
            base += 1
        if i < l:
            Qn, Kn, _ = layers[i]
            an = arch.ranks[i]
            u, v = np.meshgrid(np.arange(d), np.arange(d), indexing="ij")
            row = base + u * d + v
            put(row, col("V", i, u, v), 1)  # E_uv V_i = E_uv
            put(row, col("V", i + 1, u, v), -1)  # -V_{i+1} E_uv = -E_uv
            u, v, s = np.meshgrid(np.arange(d), np.arange(d), np.arange(an), indexing="ij")
            row = base + u * d + v
            put(row, col("Q", i + 1, s, v), -Qn[s, u])  # -(Q E_uv)[s, v] = -Q[s, u]
            put(row, col("K", i + 1, s, v), -Kn[s, u])
            base += d * d
    return np.concatenate(R), np.concatenate(C), np.concatenate(W)


def triangular_determinant(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int, p: int) -> tuple[int, int]:
    """``(determinant mod p, largest block)`` of an ``n x n`` sparse matrix that is block lower triangular as ordered.

    Entries ``(rows[e], cols[e], vals[e])`` are positions in the chosen order.
    The finest diagonal blocks end where every earlier row stays left of the
    end (a running maximum of each row's last nonzero column); the determinant
    is the product of theirs. 0 when a block is singular.

    Examples
    --------
    >>> rows, cols, vals = np.array([0, 1, 1, 2, 2]), np.array([0, 0, 2, 1, 2]), np.array([3, 1, 5, 7, 1])
    >>> triangular_determinant(rows, cols, vals, 3, 101)      # blocks [3] and [[0, 5], [7, 1]]: 3 (0 - 35)
    (97, 2)
    """
    vals = np.mod(vals, p)
    nz = vals != 0
    rows, cols, vals = rows[nz], cols[nz], vals[nz]
    last = np.full(n, -1, dtype=np.int64)
    np.maximum.at(last, rows, cols)
    ends = np.flatnonzero(np.maximum.accumulate(last) == np.arange(n)) + 1
    starts = np.r_[0, ends[:-1]]
    if len(ends) == 0 or ends[-1] != n:
        return 0, n
    block = np.searchsorted(ends, rows, side="right")
    det, largest = 1, int(np.max(ends - starts))
    single = (ends - starts) == 1
    diag = np.zeros(n, dtype=np.int64)
    on = rows == cols
    np.add.at(diag, rows[on], vals[on])  # repeated entries add up
    diag %= p
    for v in diag[starts[single]].tolist():  # 1 x 1 blocks: their diagonal entry
        det = det * v % p
    for b in np.flatnonzero(~single):
        s, e = int(starts[b]), int(ends[b])
        sel = (block == b) & (cols >= s)  # the diagonal block only: entries left of it are below the diagonal
        M = np.zeros((e - s, e - s), dtype=np.int64)
        np.add.at(M, (rows[sel] - s, cols[sel] - s), vals[sel])
        det = det * int(nmod_mat(e - s, e - s, np.mod(M, p).ravel().tolist(), p).det()) % p
    return det, largest


def field_order(arch: Architecture) -> tuple[list[int], list[int]]:
    """Field rows and columns in an order that makes the field minor block lower triangular at ``V = I``.

    Layers from the last to the first: inter ``E_uv`` on ``V_i[u, v]`` (``1 x 1``
    blocks: the other entries of its row lie in layer ``i + 1``), the scaling on
    ``Q_i[0, 0]``, the intra fields on ``K_i[:a_i, :a_i]`` (one ``a_i^2`` block).

    Examples
    --------
    >>> rows, cols = field_order(Architecture((3, 3, 3), (2, 2)))
    >>> len(rows) == len(cols) == 2 * (4 + 1) + 9, rows[:2]
    (True, [18, 14])
    """
    col, d, l = _Columns(arch), arch.widths[0], arch.depth
    scaling = arch.normalization == "lightning"
    base, bases = 0, []
    for i, a in enumerate(arch.ranks, start=1):
        bases.append(base)
        base += a * a + scaling + (d * d if i < l else 0)
    rows, cols = [], []
    for i in range(l, 0, -1):
        a, b = arch.ranks[i - 1], bases[i - 1]
        if i < l:
            rows += range(b + a * a + scaling, b + a * a + scaling + d * d)
            cols += col("V", i, *np.divmod(np.arange(d * d), d)).tolist()
        if scaling:
            rows.append(b + a * a)
            cols.append(int(col("Q", i, 0, 0)))
        rows += range(b, b + a * a)
        cols += col("K", i, *np.divmod(np.arange(a * a), a)).tolist()
    return rows, cols


def upper_bound(arch: Architecture, point: np.ndarray, p: int, exclude: set[int]) -> dict:
    """The group fields' minor on the columns outside the lower bound's minor, as a witness (field rank, determinant).

    Examples
    --------
    >>> arch = Architecture((5, 5, 5), (2, 2))
    >>> rng = random.Random(0)
    >>> point, p = _point(arch, rng), random_prime(rng)
    >>> low = lower_bound(arch, point, p, rng)
    >>> up = upper_bound(arch, point, p, set(low["columns"]))
    >>> up["field_rank"] + low["rank"] == arch.parameter_count, up["determinant"] != 0
    (True, True)
    """
    rows, columns = field_order(arch)
    assert set(columns).isdisjoint(exclude) and len(columns) + len(exclude) == arch.parameter_count
    P = arch.parameter_count
    where_col, where_row = np.full(P, -1, dtype=np.int64), np.full(len(rows), -1, dtype=np.int64)
    where_col[columns], where_row[rows] = np.arange(len(columns)), np.arange(len(rows))
    r, c, v = field_entries(arch, point)
    inside = where_col[c] >= 0
    det, _ = triangular_determinant(where_row[r[inside]], where_col[c[inside]], v[inside], len(rows), p)
    return {"structured": "identity values", "prime": p, "point": point.tolist(),
            "families": [f.to_dict() for f in families(arch)], "field_rank": len(columns) if det else 0,
            "rows": rows, "columns": columns, "determinant": det}


def certify_deep(arch: Architecture, seed: int | None = None) -> DimensionCertificate:
    """Certify ``dim M`` of a deep lightning or normalized network of equal widths at ``V = I`` (module docstring).

    The bounds may differ (a singular block at an unlucky point); the caller then falls back to the dense path.

    Examples
    --------
    >>> from attngeo import certify_dimension
    >>> arch = Architecture((6, 6, 6, 6), (2, 3, 2))
    >>> cert = certify_deep(arch, seed=0)
    >>> cert.certified, cert.dimension == certify_dimension(arch, seed=0, inputs=40).dimension
    (True, True)
    """
    if not applies(arch):
        raise InvalidInputError(f"the deep structured path needs equal widths, depth >= 2, t >= 2, max a_i < d and "
                                f"no kernel fields; {arch} is not such (use certify_dimension)")
    start = time.perf_counter()
    rng = random.Random(seed)
    p = random_prime(rng)
    progress.phase("point", "V = I, random Q and K")
    point = _point(arch, rng)
    low = lower_bound(arch, point, p, rng)
    if low is None:
        low = {"structured": "identity values", "prime": p, "rank": 0}
        up = {"structured": "identity values", "prime": p, "field_rank": 0}
        return DimensionCertificate(arch, 0, arch.parameter_count, low, up, hmk_formula(arch).to_dict(),
                                    time.perf_counter() - start, 1, ["a block of the structured minor was singular"])
    progress.phase("upper bound", "the group fields' block triangular minor")
    up = upper_bound(arch, point, p, set(low["columns"]))
    upper = arch.parameter_count - up["field_rank"]
    return DimensionCertificate(arch, low["rank"], upper, low, up, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1)
