"""Structure-aware certification of one lightning layer at a sparse point: real-model sizes (issue [4/6]).

A lower bound is valid at *any* point. At the plain point ``Q = K = [I_a 0]``,
``V = [I_{d'} 0]`` (``a <= d``, ``d' <= d``, ``t >= 2``) the Jacobian of the
coefficient map ``W -> F`` (``F_kp(y) = (V y)_k (Aᵀ y)_p``, whose coefficients
determine ``φ`` and are determined by it when ``t >= 2``, docs/fibers.md Lemma 1)
is a 0/1 matrix with a few nonzeros per column (``dF_kp = [p < a] y_p (δV y)_k
+ y_k ((δKᵀ Q + Kᵀ δQ)ᵀ y)_p``) that falls apart into many small blocks; its
rank is the sum of the blocks' ranks mod ``p``. The upper bound uses the
group's fields at the same point, whose ``a² + 1`` rows have an explicit
nonsingular minor (the entries ``K_vu`` of the intra fields and ``V_00`` of the
scaling). The torus ``(C*)^d`` fixes the point and grades the Jacobian by weight
``e_x - e_y`` (docs/math.md §7.6): the blocks are the weight classes, of at most ten
kinds, and one representative of each is ranked and counted (:func:`class_rank`).
Measured: ``d = d' = 768, a = 64`` (688,128 parameters) in under a second and
80 MB (benchmarks/scale.py; it took 253 s and 7.2 GB while every class was listed).
"""

from __future__ import annotations

import random
import time

import numpy as np
from flint import nmod_mat

from ... import progress
from ...exceptions import InvalidInputError
from ...model.architecture import Architecture
from ...model.formulas import hmk_formula
from ...exact.rank import random_prime
from ..certificate import DimensionCertificate
from ..symmetry import families


def applies(arch: Architecture) -> bool:
    """The plain point exists and the coefficient map describes ``φ``: one lightning layer, ``t >= 2``, ``a, d' <= d``.

    Examples
    --------
    >>> applies(Architecture((4, 3), (2,), tokens=2)), applies(Architecture((4, 3), (2,), tokens=1))
    (True, False)
    """
    if arch.depth != 1 or arch.normalization != "lightning" or arch.tokens < 2:
        return False
    d, dd = arch.widths
    return arch.ranks[0] <= d and dd <= d


def column_edges(d: int, dd: int, a: int, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row ids (coefficient ``(k, p, {m, n})``) and column ids of the nonzeros in these columns (``Q``, ``K``, ``V``).

    ``δV_kj`` moves ``y_p y_j`` in ``F_kp`` for ``p < a``; ``δK_pm`` (``p < a``) and ``δQ_mp`` (``m < a``) both move
    ``y_k y_m`` in ``F_kp`` for every ``k < d'``. So each ``V`` entry has ``a`` nonzeros, each ``Q``, ``K`` entry ``d'``:

    >>> rows, cols = column_edges(4, 3, 2, np.arange(2 * 2 * 4 + 3 * 4))
    >>> len(rows) == 3 * 4 * 2 + 2 * (2 * 4 * 3)
    True
    """
    def coordinate(k, p, m, n):
        return ((k * d + p) * d + np.minimum(m, n)) * d + np.maximum(m, n)

    columns = np.asarray(columns, dtype=np.int64)
    rows, cols = [], []
    v = columns[columns >= 2 * a * d]
    k, j = np.divmod(v - 2 * a * d, d)
    p = np.arange(a)
    rows.append(coordinate(k[:, None], p[None, :], j[:, None], p[None, :]).ravel())
    cols.append(np.repeat(v, a))
    for offset, transposed in ((a * d, False), (0, True)):  # K_pm, then Q_mp: the entry A_mp moves
        mine = columns[(columns >= offset) & (columns < offset + a * d)]
        s, q = np.divmod(mine - offset, d)
        p_, m_ = (q, s) if transposed else (s, q)
        k = np.arange(dd)
        rows.append(coordinate(k[None, :], p_[:, None], k[None, :], m_[:, None]).ravel())
        cols.append(np.repeat(mine, dd))
    return np.concatenate(rows), np.concatenate(cols)


def weight_classes(d: int, dd: int, a: int) -> list[tuple[np.ndarray, int]]:
    """The coefficient Jacobian's weight classes up to symmetry: ``(columns of a representative, how many)``.

    The torus ``(C*)^d`` fixes the plain point, and the coefficient of ``y_m y_n`` in ``F_kp`` has weight
    ``e_k + e_p - e_m - e_n``: ``V_xy`` has weight ``e_x - e_y``, and ``Q_yx``, ``K_xy`` (both moving ``A_yx``) too.
    So the Jacobian is block diagonal by weight: ``e_x - e_y`` for ``x != y`` (at most three columns), and ``0``
    (the diagonal entries). Permutations of the coordinates that keep ``[0, a)`` and ``[0, d')`` fix the point too,
    so two classes whose ``x`` and ``y`` lie in the same pieces of ``[0, d)`` cut at ``a`` and ``d'`` have the same
    block: one representative per pair of pieces, counted.

    >>> classes = weight_classes(6, 6, 3)
    >>> sum(n for _, n in classes) == 6 * 6 - 6 + 1     # every weight e_x - e_y (x != y), and weight 0
    True
    """
    diagonal = np.r_[np.arange(dd) * (d + 1) + 2 * a * d, np.arange(a) * (d + 1), a * d + np.arange(a) * (d + 1)]
    out = [(diagonal, 1)]
    cuts = sorted({0, min(a, dd), max(a, dd), d})
    pieces = [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]
    for i, (xs, xe) in enumerate(pieces):
        for j, (ys, ye) in enumerate(pieces):
            count = (xe - xs) * (ye - ys) - (xe - xs if i == j else 0)
            if count == 0:
                continue
            x, y = xs, ys + (1 if i == j else 0)
            cols = ([2 * a * d + x * d + y] if x < dd else []) + ([y * d + x] if y < a else []) \
                + ([a * d + x * d + y] if x < a else [])
            if cols:  # no entry has this weight
                out.append((np.array(cols, dtype=np.int64), count))
    return out


def components(u: np.ndarray, v: np.ndarray, nodes: int) -> np.ndarray:
    """The smallest node of each node's connected component in the graph with edges ``u[e] -- v[e]``.

    Min-label propagation with pointer jumping, all in numpy (int32 nodes).

    Examples
    --------
    >>> components(np.array([0, 3]), np.array([2, 4]), 5).tolist()   # {0, 2}, {1}, {3, 4}
    [0, 1, 0, 3, 3]
    """
    u, v = u.astype(np.int32, copy=False), v.astype(np.int32, copy=False)
    label = np.arange(nodes, dtype=np.int32)
    while True:
        m = np.minimum(label[u], label[v])
        new = label.copy()
        np.minimum.at(new, u, m)
        np.minimum.at(new, v, m)
        new = new[new]
        if np.array_equal(new, label):
            return label
        label = new


#: A block with more entries than this, and more rows than columns, is ranked through its Gram matrix.
GRAM_FROM = 1_000_000


def gram_rank(rows: np.ndarray, cols: np.ndarray, n: int, p: int) -> int:
    """``rank_p(Mᵀ M)`` of the ``? x n`` matrix whose entries count the listed positions (rows, cols from 0).

    ``rank_p(Mᵀ M) <= rank_p(M) <= rank_Q(M)``: a lower bound, equal to the rank unless ``p`` is unlucky, that
    does not depend on the order of the rows, and costs an ``n x n`` elimination instead of a tall one
    (the plain point's weight-0 block at ``d = 768``: 49,152 x 896, 0.4 s instead of 40 s).

    >>> gram_rank(np.array([0, 0, 1, 1, 2, 2]), np.array([0, 1, 1, 2, 0, 2]), 3, 101)     # a triangle's edges
    3
    """
    order = np.argsort(rows, kind="stable")
    rows, cols = rows[order], cols[order]
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    degree = np.diff(np.r_[starts, len(rows)])
    G = np.zeros((n, n), dtype=np.int64)
    for i in range(int(degree.max())):  # every pair of listed entries in a row adds 1: sum over rows of M_ij M_il
        for j in range(int(degree.max())):
            at = starts[degree > max(i, j)]
            np.add.at(G, (cols[at + i], cols[at + j]), 1)
    return nmod_mat(n, n, np.mod(G, p).ravel().tolist(), p).rank()


def block_rank(rows: np.ndarray, cols: np.ndarray, ncols: int, p: int) -> tuple[int, int, int]:
    """``(rank mod p, number of blocks, largest block)`` of the 0/1 matrix with these nonzeros.

    Large tall blocks are ranked through their Gram matrix (:func:`gram_rank`): a lower bound on their rank.

    The rank at the plain point is the generic ``2ad + dd' - a^2 - 1`` ([HMK]'s count):

    >>> rows, cols = column_edges(6, 5, 3, np.arange(2 * 3 * 6 + 5 * 6))
    >>> rank, blocks, largest = block_rank(rows, cols, 2 * 3 * 6 + 5 * 6, 67108859)
    >>> rank == 2 * 3 * 6 + 6 * 5 - 9 - 1, blocks > 1
    (True, True)
    """
    _, rinv = np.unique(rows, return_inverse=True)
    del rows  # int32 below: nodes number at most ncols + nonzeros < 2**31 at every size this path serves
    u, v = cols.astype(np.int32), (ncols + rinv).astype(np.int32)
    rinv = rinv.astype(np.int32)
    label = components(u, v, ncols + int(rinv.max()) + 1)
    del v
    comp = label[u]
    del label
    order = np.argsort(comp, kind="stable")
    comp, r_s, c_s = comp[order], rinv[order], u[order]
    del order, u, rinv
    cuts = np.flatnonzero(np.diff(comp)) + 1
    total, largest = 0, 0
    for s, e in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(comp)]])):
        ur, ri = np.unique(r_s[s:e], return_inverse=True)
        uc, ci = np.unique(c_s[s:e], return_inverse=True)
        largest = max(largest, len(uc))
        if len(ur) * len(uc) > GRAM_FROM and len(ur) > len(uc):
            total += gram_rank(ri, ci, len(uc), p)
            continue
        M = np.zeros((len(ur), len(uc)), dtype=np.int64)
        np.add.at(M, (ri, ci), 1)  # entries 1 (a coefficient of one monomial), at most 2 after merging
        total += nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), p).rank()
    return total, len(cuts) + 1, largest


def class_rank(d: int, dd: int, a: int, p: int) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block)`` of the coefficient Jacobian at the plain point, class by class.

    Each weight class's representative is ranked (:func:`block_rank`) and counted (:func:`weight_classes`); the
    blocks are the connected components, as if the whole matrix had been split:

    >>> rows, cols = column_edges(6, 5, 3, np.arange(2 * 3 * 6 + 5 * 6))
    >>> class_rank(6, 5, 3, 67108859) == block_rank(rows, cols, 2 * 3 * 6 + 5 * 6, 67108859)
    True
    """
    progress.phase("Jacobian", "the coefficient Jacobian's weight classes at the plain point, one of each kind")
    classes = [(column_edges(d, dd, a, columns), count) for columns, count in weight_classes(d, dd, a)]
    progress.phase("elimination", f"{len(classes)} kinds of class: connected blocks, ranks mod p")
    rank, blocks, largest = 0, 0, 0
    for edges, count in classes:
        r, b, big = block_rank(*edges, 2 * a * d + dd * d, p)
        rank, blocks, largest = rank + count * r, blocks + count * b, max(largest, big)
    return rank, blocks, largest


def estimate_bytes(arch: Architecture) -> int:
    """Estimated peak memory of :func:`certify_structured` (a guide for ``--max-memory``, with margin over the
    measured 77 MB at ``d = d' = 768, a = 64``): per-column tables, the weight-0 class and its Gram matrix.

    >>> estimate_bytes(Architecture((768, 768), (64,), tokens=2)) < 2**30
    True
    """
    d, dd = arch.widths
    a = arch.ranks[0]
    return 100 * arch.parameter_count + 200 * 3 * a * dd + 16 * (dd + 2 * a) ** 2 + 100 * 2**20


def certify_structured(arch: Architecture, seed: int | None = None) -> DimensionCertificate:
    """Certify ``dim M`` of one lightning layer at the plain point (see the module docstring).

    Raises InvalidInputError when the plain point does not apply (:func:`applies`).

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> arch = Architecture((6, 5), (3,), tokens=2)
    >>> structured = certify_structured(arch, seed=0)
    >>> structured.dimension == certify_dimension(arch, seed=0).dimension == 2 * 3 * 6 + 6 * 5 - 9 - 1
    True
    """
    if not applies(arch):
        raise InvalidInputError(f"the structured path needs one lightning layer with t >= 2 and a, d' <= d; "
                                f"{arch} is not one (use certify_dimension)")
    start = time.perf_counter()
    d, dd = arch.widths
    a = arch.ranks[0]
    p = random_prime(random.Random(seed))
    rank, blocks, largest = class_rank(d, dd, a, p)
    progress.phase("upper bound", "the explicit field minor")
    # intra E_uv moves K_vu by -1 (and Q_uv); scaling moves V_00 by -1: a diagonal minor of determinant (-1)^(a^2+1)
    columns = [a * d + v * d + u for u in range(a) for v in range(a)] + [2 * a * d]  # K_vu, then V_00 (flattening Q, K, V)
    lower = {"structured": "plain point", "prime": p, "rank": rank, "blocks": blocks, "largest_block": largest}
    upper = {"structured": "plain point", "prime": p, "families": [f.to_dict() for f in families(arch)],
             "field_rank": a * a + 1, "columns": columns, "determinant": (-1) ** (a * a + 1) % p}
    return DimensionCertificate(arch, rank, arch.parameter_count - a * a - 1, lower, upper, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1)
