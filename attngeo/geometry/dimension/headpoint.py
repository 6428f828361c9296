"""Structure-aware certification of one multi-head lightning layer at the head point (GPT-2-sized layers).

For ``t >= 2`` one lightning layer with ``h`` heads (value ranks, a causal
mask and a residual connection included) is determined by, and determines, the
coefficients of ``F(y) = Σ_j V_j y yᵀ A_j`` (``A_j = K_jᵀ Q_j``, ``V_j = O_j U_j``
when factored): docs/fibers.md Lemma 1 is linear in ``F``, a mask keeps the
pairs ``s < i`` that already determine it, and a residual connection adds the
constant ``X``. So ``dim M`` is the generic rank of ``W -> F``, and the rank of
its Jacobian at any point is a lower bound.

The **head point** (``d' = d``, heads numbered ``j = 0 .. h-1``, ``c_j(s) = (j a + s) mod d``,
``u_j(r) = (j b + r) mod d``): ``Q_j = K_j`` select the coordinates ``c_j(0..a-1)``;
``V_j`` is the cyclic shift ``V_j[k, (k + j) mod d] = 1``, or ``U_j`` selects
``u_j(0..b-1)`` and ``O_j = U_jᵀ``. There the Jacobian is a 0/1 matrix with
``a`` or ``b`` (``V``: ``a``; ``Q, K``: ``d``) nonzeros per column, and it is
graded: the coefficient of ``y_m y_n`` in ``F_kp`` has weight ``k + p - m - n mod d``
and every column moves coefficients of one weight only. Each of the ``d`` grades
loses its rows and columns with one nonzero (each adds one to the rank), and
what remains is split into connected blocks whose ranks mod ``p`` add (batched
elimination by block shape, flint for large blocks), never listing a zero row. The upper bound is the group fields
at the same point (per head ``GL_a``, the scaling, ``GL_b``), whose minor on
``K_j[v, c_j(u)]``, the scaling's ``V_j[0, j]`` (or ``O_j[u_j(0), 0]``) and
``U_j[u, u_j(v)]`` is lower triangular with diagonal ``±1``.

Measured (benchmarks/multihead_scale.py): GPT-2 small's layer ``d = 768``, 12 heads,
``a = b = 64`` (2,359,296 parameters); see docs/engines.md.
"""

from __future__ import annotations

import random
import time

import numpy as np
from flint import nmod_mat

from ... import progress
from ...exceptions import InvalidInputError
from ...exact.rank import random_prime
from ...model.architecture import Architecture
from ...model.formulas import hmk_formula
from .bounds import span_bound
from ..certificate import DimensionCertificate
from .identitypoint import triangular_determinant
from .kernelfields import kernel_families
from .plainpoint import components
from ..symmetry import families

#: Blocks of at most this many entries are ranked in numpy stacks; larger ones one by one by flint (a stack
#: of one 8319 x 257 block took numpy 1 s, flint 0.1 s).
BATCHED_ENTRIES = 50_000

#: Peak bytes per Jacobian nonzero of one grade, with margin (the grades are ranked one at a time): factored
#: 200 (d = 768, 12 heads: 92 MB in all), unfactored 1000, where grade 0 keeps large blocks after peeling
#: (d = 256: 250 MB, d = 512: 740 MB for 786,432 nonzeros a grade).
BYTES_PER_GRADE_NONZERO = {"factored": 200, "unfactored": 1000}


def _shape(arch: Architecture) -> tuple[int, int, int, int | None]:
    """``(d, a, h, b)``; ``b`` None when ``V`` is unfactored."""
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    return arch.widths[0], arch.ranks[0], arch.heads[0], b


def applies(arch: Architecture) -> bool:
    """The head point exists and the coefficient map describes ``φ``: one lightning layer beyond [HMK]'s model.

    ``t >= 2``, ``d' = d``, ``a <= d`` and ``b <= d`` (heads, value ranks, a mask or a residual connection;
    [HMK]'s own single layers take the plain point of :mod:`attngeo.geometry.dimension.plainpoint`).

    Examples
    --------
    >>> applies(Architecture((6, 6), (2,), heads=3, tokens=2)), applies(Architecture((6, 6), (2,), tokens=2))
    (True, False)
    >>> applies(Architecture((6, 6), (2,), heads=3, tokens=1)), applies(Architecture((6, 5), (2,), heads=3))
    (False, False)
    """
    if arch.depth != 1 or arch.normalization != "lightning" or arch.tokens < 2 or arch.is_plain:
        return False
    d, a, _, b = _shape(arch)
    return arch.widths[1] == d and a <= d and (b is None or b <= d)


def preferred(arch: Architecture, from_parameters: int) -> bool:
    """Whether :func:`attngeo.certify_dimension` should try the head point first.

    It applies, has at least ``from_parameters`` parameters, and the group fields are the whole story
    the dense path would tell: no kernel families and a span bound not below ``P - (field rank)``.

    Examples
    --------
    >>> preferred(Architecture((64, 64), (16,), heads=4, value_ranks=16), 4000)
    True
    >>> preferred(Architecture((8, 8), (8,), heads=2), 0)      # a >= d: heads re-split (mixing fields)
    False
    """
    if not applies(arch) or arch.parameter_count < from_parameters or kernel_families(arch):
        return False
    span = span_bound(arch)
    return span is None or span >= arch.parameter_count - field_rank(arch)


def field_rank(arch: Architecture) -> int:
    """``h (a² + 1 + b²)``: the group fields, independent at the head point.

    Examples
    --------
    >>> field_rank(Architecture((6, 6), (2,), heads=3, value_ranks=1))
    18
    """
    _, a, h, b = _shape(arch)
    return h * (a * a + 1 + (b * b if b is not None else 0))


def head_point(arch: Architecture) -> np.ndarray:
    """The head point in flattening order (see the module docstring).

    Examples
    --------
    >>> head_point(Architecture((4, 4), (1,), heads=2, causal=True)).reshape(2, -1)[1].tolist()[:8]   # Q_2, K_2
    [0, 1, 0, 0, 0, 1, 0, 0]
    """
    d, a, h, b = _shape(arch)
    out = []
    for j in range(h):
        sel = np.zeros((a, d), dtype=np.int64)
        sel[np.arange(a), (j * a + np.arange(a)) % d] = 1
        out += [sel.ravel(), sel.ravel()]
        if b is None:
            out.append(np.roll(np.eye(d, dtype=np.int64), j, axis=1).ravel())
        else:
            U = np.zeros((b, d), dtype=np.int64)
            U[np.arange(b), (j * b + np.arange(b)) % d] = 1
            out += [U.ravel(), U.T.ravel()]
    return np.concatenate(out)


def grade_edges(arch: Architecture, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Nonzeros of the coefficient Jacobian in grade ``w``: row ids ``((k d + p) d + m) d + n`` (``m <= n``), columns.

    Columns of grade ``w`` are found by solving the weight for their free index,
    so each column is listed in exactly one grade, with all its nonzeros
    (``a`` for a value entry, ``d`` or ``b`` for a ``Q`` or ``K`` entry):

    >>> arch = Architecture((6, 6), (2,), heads=3)
    >>> sum(len(grade_edges(arch, w)[1]) for w in range(6)) == 3 * (6 * 6 * 2 + 2 * 2 * 6 * 6)
    True
    """
    d, a, h, b = _shape(arch)
    size = 2 * a * d + (d * d if b is None else 2 * b * d)  # parameters per head

    def row(k, p, m, n):
        return ((k * d + p) * d + np.minimum(m, n)) * d + np.maximum(m, n)

    rows, cols = [], []
    if b is None:
        j, k, s = np.meshgrid(np.arange(h), np.arange(d), np.arange(a), indexing="ij")
        p, m = (j * a + s) % d, (k - w) % d  # δV_j[k, m]: F_kp gains y_m y_p for p in c_j
        rows.append(row(k, p, m, p))
        cols.append(j * size + 2 * a * d + k * d + m)
        j, s, k = np.meshgrid(np.arange(h), np.arange(a), np.arange(d), indexing="ij")
        c, shifted = (j * a + s) % d, (k + j) % d  # (V_j y)_k = y_(k+j)
        q = (c - j - w) % d  # δK_j[s, q]: δA_j = e_q e_c^T, F_kc gains y_(k+j) y_q
        rows.append(row(k, c, shifted, q))
        cols.append(j * size + a * d + s * d + q)
        q = (c + j + w) % d  # δQ_j[s, q]: δA_j = e_c e_q^T, F_kq gains y_(k+j) y_c
        rows.append(row(k, q, shifted, c))
        cols.append(j * size + s * d + q)
    else:
        j, r, s = np.meshgrid(np.arange(h), np.arange(b), np.arange(a), indexing="ij")
        u, p = (j * b + r) % d, (j * a + s) % d
        m = (u - w) % d  # δU_j[r, m]: δV_j = e_u e_m^T, F_up gains y_m y_p
        rows.append(row(u, p, m, p))
        cols.append(j * size + 2 * a * d + r * d + m)
        k = (u + w) % d  # δO_j[k, r]: δV_j = e_k e_u^T, F_kp gains y_u y_p
        rows.append(row(k, p, u, p))
        cols.append(j * size + 2 * a * d + b * d + k * b + r)
        j, s, r = np.meshgrid(np.arange(h), np.arange(a), np.arange(b), indexing="ij")
        c, u = (j * a + s) % d, (j * b + r) % d  # (V_j y)_u = y_u on the selected coordinates
        q = (c - w) % d
        rows.append(row(u, c, u, q))
        cols.append(j * size + a * d + s * d + q)
        q = (c + w) % d
        rows.append(row(u, q, u, c))
        cols.append(j * size + s * d + q)
    return np.concatenate([x.ravel() for x in rows]), np.concatenate([x.ravel() for x in cols]).astype(np.int64)


def batched_rank(M: np.ndarray, p: int) -> np.ndarray:
    """Ranks mod ``p`` of a stack of equal-shaped integer matrices ``M[i]`` (fraction-free elimination, numpy).

    Examples
    --------
    >>> batched_rank(np.array([[[1, 2], [2, 4]], [[1, 2], [3, 4]], [[0, 0], [0, 0]]]), 7).tolist()
    [1, 2, 0]
    """
    M = np.mod(M, p).astype(np.int64)
    if M.shape[1] < M.shape[2]:
        M = np.ascontiguousarray(np.swapaxes(M, 1, 2))  # eliminate along the shorter side
    B, n, c = M.shape
    rank = np.zeros(B, dtype=np.int64)
    index = np.arange(n)
    for col in range(c):
        free = (M[:, :, col] != 0) & (index[None, :] >= rank[:, None])
        found = np.flatnonzero(free.any(axis=1))
        if len(found) == 0:
            continue
        pivot, target = np.argmax(free[found], axis=1), rank[found]
        sub = M[found]
        at = np.arange(len(found))
        sub[at, pivot], sub[at, target] = sub[at, target], sub[at, pivot].copy()
        top = sub[at, target]  # (found, c)
        lead = top[:, col]
        # entries < p < 2^26: each product < 2^52, exact in int64
        sub = (sub * lead[:, None, None] - sub[:, :, col][:, :, None] * top[:, None, :]) % p
        sub[at, target] = top
        M[found] = sub
        rank[found] += 1
    return rank


def _positions(block: np.ndarray, blocks: int) -> np.ndarray:
    """Each node's position among the nodes of its block, in node order."""
    order = np.argsort(block, kind="stable")
    starts = np.r_[0, np.cumsum(np.bincount(block, minlength=blocks))[:-1]]
    pos = np.empty(len(block), dtype=np.int64)
    pos[order] = np.arange(len(block)) - starts[block[order]]
    return pos


def peel(rows: np.ndarray, cols: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """``(r, rows', cols')`` with ``rank M = r + rank M'``: rows and columns with one nonzero peeled off, repeatedly.

    A row whose only nonzero lies in column ``c`` makes ``c`` independent of the other columns (``+1``, drop
    ``c``); a column whose only nonzero lies in row ``r`` is ``e_r`` up to a unit, which clears row ``r`` from
    the others (``+1``, drop ``r`` and that column). Each position appears once (at the head point a
    column's nonzeros lie in distinct rows, so every entry is 1). Deleting only lowers degrees, so what remains does not depend on the order. Ids are small nonnegative ints.

    Examples
    --------
    >>> r, rows, cols = peel(np.array([0, 0, 1, 1, 2, 2, 3]), np.array([0, 1, 0, 1, 1, 2, 3]))
    >>> r, rows.tolist(), cols.tolist()       # column 3 and row 2's partner peel off; [[1, 1], [1, 1]] stays
    (2, [0, 0, 1, 1], [0, 1, 0, 1])
    """
    rank = 0
    if len(rows) == 0:
        return 0, rows, cols
    nr, nc = int(rows.max()) + 1, int(cols.max()) + 1
    pair = np.sort(rows * nc + cols)  # sorting, then dropping repeats: numpy's hashed unique is 5x slower here
    pair = pair[np.r_[True, pair[1:] != pair[:-1]]]
    if len(pair) != len(rows):  # the blocks are built with entries 1 below
        raise ValueError("peel expects each position once (a column's nonzeros lie in distinct rows)")
    rows, cols = pair // nc, pair % nc
    while len(rows):
        lone = np.bincount(rows, minlength=nr)[rows] == 1
        if lone.any():
            gone = np.zeros(nc, dtype=bool)
            gone[cols[lone]] = True
            rank += int(gone.sum())
            keep = ~gone[cols]
        else:
            single = np.bincount(cols, minlength=nc)[cols] == 1
            if not single.any():
                break
            gone = np.zeros(nr, dtype=bool)
            gone[rows[single]] = True
            rank += int(gone.sum())
            keep = ~gone[rows]
        rows, cols = rows[keep], cols[keep]
    return rank, rows, cols


def grade_rank(rows: np.ndarray, cols: np.ndarray, p: int) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block's columns)`` of the 0/1 matrix with these nonzeros.

    Rows and columns with one nonzero are peeled off first (:func:`peel`); ``blocks`` are the connected
    blocks of what remains, ranked in stacks of equal shape.

    Examples
    --------
    >>> grade_rank(np.array([5, 5, 9, 7]), np.array([0, 1, 1, 2]), 101)    # everything peels: rank 3, no block
    (3, 0, 0)
    >>> grade_rank(np.array([0, 0, 1, 1, 5, 5, 7, 7]), np.array([0, 1, 0, 1, 2, 3, 2, 3]), 101)   # two 2 x 2 of ones
    (2, 2, 2)
    """
    _, ri = np.unique(rows, return_inverse=True)
    _, ci = np.unique(cols, return_inverse=True)
    rank, ri, ci = peel(ri, ci)
    if len(ri) == 0:
        return rank, 0, 0
    _, ri = np.unique(ri, return_inverse=True)
    _, ci = np.unique(ci, return_inverse=True)
    nc, nr = int(ci.max()) + 1, int(ri.max()) + 1
    _, block = np.unique(components(ci, nc + ri, nc + nr), return_inverse=True)
    blocks = int(block.max()) + 1
    col_block, row_block = block[:nc], block[nc:]
    widths = np.bincount(col_block, minlength=blocks)
    heights = np.bincount(row_block, minlength=blocks)
    col_pos, row_pos = _positions(col_block, blocks), _positions(row_block, blocks)
    edge_block = col_block[ci]
    shape = heights * (nc + 1) + widths
    for key in np.unique(shape):  # no block of one row or column survives the peeling
        chosen = np.flatnonzero(shape == key)
        n, c = int(heights[chosen[0]]), int(widths[chosen[0]])
        if n * c > BATCHED_ENTRIES:  # numpy's elimination is slow on large blocks: flint's, one at a time
            for b in chosen.tolist():
                e = edge_block == b
                M = np.zeros((n, c), dtype=np.int64)
                M[row_pos[ri[e]], col_pos[ci[e]]] = 1
                rank += nmod_mat(n, c, M.ravel().tolist(), p).rank()
            continue
        slot = np.full(blocks, -1, dtype=np.int64)
        slot[chosen] = np.arange(len(chosen))
        e = slot[edge_block] >= 0
        M = np.zeros((len(chosen), n, c), dtype=np.int64)
        M[slot[edge_block[e]], row_pos[ri[e]], col_pos[ci[e]]] = 1  # each position once (peel)
        rank += int(batched_rank(M, p).sum())
    return rank, blocks, int(widths.max())


def block_rank(arch: Architecture, p: int) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block)`` of the coefficient Jacobian at the head point, grade by grade.

    Examples
    --------
    Two heads on ``6 -> 6`` of rank 2 reach ``P`` minus the groups (the dense path's generic rank):

    >>> arch = Architecture((6, 6), (2,), heads=2, tokens=2)
    >>> block_rank(arch, 67108859)[0] == arch.parameter_count - 2 * (4 + 1)
    True
    """
    d = arch.widths[0]
    rank, blocks, largest = 0, 0, 0
    for w in range(d):
        if w % 64 == 0:
            progress.phase("elimination", f"grade {w} of {d}: rank {rank} so far, {blocks} blocks, mod {p}")
        r, b, big = grade_rank(*grade_edges(arch, w), p)
        rank, blocks, largest = rank + r, blocks + b, max(largest, big)
    return rank, blocks, largest


def field_entries(arch: Architecture) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, column, value)`` of the group fields at the head point (rows in :func:`families` order).

    Per head: intra ``E_uv`` (``δQ[u, :] = Q[v, :]``, ``δK[v, :] = -K[u, :]``), the scaling (``δQ = Q``,
    ``δV = -V`` or ``δO = -O``), value ``E_uv`` (``δU[u, :] = U[v, :]``, ``δO[:, v] = -O[:, u]``).

    Examples
    --------
    >>> r, c, v = field_entries(Architecture((4, 4), (1,), heads=2))
    >>> int(r.max()) + 1, len(r) == 2 * (2 + 1 + 4)        # 2 fields a head; intra 2 entries, scaling a + d
    (4, True)
    """
    d, a, h, b = _shape(arch)
    size = 2 * a * d + (d * d if b is None else 2 * b * d)
    per_head = a * a + 1 + (b * b if b is not None else 0)
    R, C, V = [], [], []
    for j in range(h):
        base, row = j * size, j * per_head
        c = (j * a + np.arange(a)) % d
        u, v = np.divmod(np.arange(a * a), a)
        R += [row + u * a + v] * 2
        C += [base + u * d + c[v], base + a * d + v * d + c[u]]
        V += [np.ones(a * a, dtype=np.int64), -np.ones(a * a, dtype=np.int64)]
        row += a * a
        R.append(np.full(a, row))
        C.append(base + np.arange(a) * d + c)
        V.append(np.ones(a, dtype=np.int64))
        if b is None:
            k = np.arange(d)
            R.append(np.full(d, row))
            C.append(base + 2 * a * d + k * d + (k + j) % d)
            V.append(-np.ones(d, dtype=np.int64))
            continue
        sel = (j * b + np.arange(b)) % d
        R.append(np.full(b, row))
        C.append(base + 2 * a * d + b * d + sel * b + np.arange(b))
        V.append(-np.ones(b, dtype=np.int64))
        row += 1
        u, v = np.divmod(np.arange(b * b), b)
        R += [row + u * b + v] * 2
        C += [base + 2 * a * d + u * d + sel[v], base + 2 * a * d + b * d + sel[u] * b + v]
        V += [np.ones(b * b, dtype=np.int64), -np.ones(b * b, dtype=np.int64)]
    return np.concatenate(R), np.concatenate(C), np.concatenate(V)


def field_columns(arch: Architecture) -> list[int]:
    """Columns on which the field minor is lower triangular in :func:`families` row order.

    Per head: ``K_j[v, c_j(u)]`` for intra ``E_uv``, the scaling's ``V_j[0, j]`` (or ``O_j[u_j(0), 0]``,
    which value ``E_00`` also moves, from below), ``U_j[u, u_j(v)]`` for value ``E_uv``.

    Examples
    --------
    >>> field_columns(Architecture((4, 4), (1,), heads=2))      # K_1[0, 0], V_1[0, 0]; K_2[0, 1], V_2[0, 1]
    [4, 8, 29, 33]
    """
    d, a, h, b = _shape(arch)
    size = 2 * a * d + (d * d if b is None else 2 * b * d)
    out = []
    for j in range(h):
        base = j * size
        c = (j * a + np.arange(a)) % d
        u, v = np.divmod(np.arange(a * a), a)
        out += (base + a * d + v * d + c[u]).tolist()
        if b is None:
            out.append(base + 2 * a * d + j % d)
            continue
        sel = (j * b + np.arange(b)) % d
        out.append(base + 2 * a * d + b * d + int(sel[0]) * b)
        u, v = np.divmod(np.arange(b * b), b)
        out += (base + 2 * a * d + u * d + sel[v]).tolist()
    return [int(x) for x in out]


def field_minor(arch: Architecture, p: int) -> tuple[list[int], int]:
    """``(columns, determinant mod p)`` of the group fields' minor at the head point.

    Examples
    --------
    >>> cols, det = field_minor(Architecture((6, 6), (2,), heads=3, value_ranks=2), 101)
    >>> len(cols), det == (-1) ** (3 * 5) % 101
    (27, True)
    """
    columns = field_columns(arch)
    where = np.full(arch.parameter_count, -1, dtype=np.int64)
    where[columns] = np.arange(len(columns))
    r, c, v = field_entries(arch)
    inside = where[c] >= 0
    det, _ = triangular_determinant(r[inside], where[c[inside]], v[inside], len(columns), p)
    return columns, det


def estimate_bytes(arch: Architecture) -> int:
    """Estimated peak memory of :func:`certify_heads`: one grade's nonzeros (a guide, not a proof).

    Examples
    --------
    >>> estimate_bytes(Architecture((768, 768), (64,), heads=12, value_ranks=64)) < 2**30
    True
    """
    d, a, h, b = _shape(arch)
    if b is None:
        return BYTES_PER_GRADE_NONZERO["unfactored"] * 3 * h * a * d + 16 * arch.parameter_count
    return BYTES_PER_GRADE_NONZERO["factored"] * 4 * h * a * b + 16 * arch.parameter_count


def certify_heads(arch: Architecture, seed: int | None = None) -> DimensionCertificate:
    """Certify ``dim M`` of one multi-head lightning layer at the head point (module docstring).

    The bounds may differ where the head point is degenerate (heads overlapping too much); the caller then
    falls back to the dense path.

    Examples
    --------
    >>> from attngeo import certify_dimension
    >>> arch = Architecture((8, 8), (2,), heads=3, value_ranks=2, causal=True)
    >>> cert = certify_heads(arch, seed=0)
    >>> cert.certified, cert.dimension == certify_dimension(arch, seed=0).dimension
    (True, True)
    """
    if not applies(arch):
        raise InvalidInputError(f"the head point needs one lightning layer beyond [HMK]'s model with t >= 2, "
                                f"d' = d and a, b <= d; {arch} is not one (use certify_dimension)")
    start = time.perf_counter()
    p = random_prime(random.Random(seed))
    progress.phase("Jacobian", f"the coefficient Jacobian at the head point, {arch.widths[0]} grades, mod {p}")
    rank, blocks, largest = block_rank(arch, p)
    progress.phase("upper bound", "the group fields' triangular minor")
    columns, det = field_minor(arch, p)
    s = len(columns) if det else 0
    lower = {"structured": "head point", "prime": p, "rank": rank, "blocks": blocks, "largest_block": largest}
    upper = {"structured": "head point", "prime": p, "families": [f.to_dict() for f in families(arch)],
             "field_rank": s, "columns": columns, "determinant": det}
    return DimensionCertificate(arch, rank, arch.parameter_count - s, lower, upper, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1)
