"""The checker's own replay of structured (plain-point) dimension witnesses of one lightning layer.

At ``Q = K = [I_a 0]``, ``V = [I_{d'} 0]`` the derivative of the coefficients of
``F_kp(y) = (V y)_k (Aᵀ y)_p`` is ``[p < a] y_p (δV y)_k + y_k ((δKᵀ Q + Kᵀ δQ)ᵀ y)_p``.
The checker lists those nonzeros itself (coefficients indexed by a triangular
monomial number, columns in the flattening order ``Q, K, V``), splits the 0/1
matrix into connected blocks and adds the blocks' ranks mod p. The upper
bound's minor is the group fields at the plain point, evaluated on the recorded
columns by the index formulas (intra ``δQ[u] = Q[v]``, ``δK[v] = -K[u]``;
scaling ``δQ = Q``, ``δV = -V``).
"""

from __future__ import annotations

import numpy as np
from flint import nmod_mat

from ...exceptions import CertificateFormatError
from ..values import reject

#: Nonzeros the checker will list for one structured witness (d = d' = 768, a = 64 has 1.1e8), and blocks
#: (about d d', one Python step each: 2047 x 2047 took 103 s even at a = 1).
MAX_NONZEROS, MAX_BLOCK_SPACE = 150_000_000, 1_000_000


def _plain(arch) -> tuple[int, int, int]:
    if len(arch.ranks) != 1 or arch.normalization != "lightning" or arch.tokens < 2:
        reject("a structured witness is for one lightning layer with t >= 2")
    d, dd, a = arch.widths[0], arch.widths[1], arch.ranks[0]
    if a > d or dd > d:
        reject("the plain point needs a <= d and d' <= d")
    if 3 * a * d * dd > MAX_NONZEROS or d * dd > MAX_BLOCK_SPACE:
        raise CertificateFormatError(f"a structured witness of {3 * a * d * dd} nonzeros and widths {d},{dd} is above "
                                     f"the checker's limits ({MAX_NONZEROS} nonzeros, d d' <= {MAX_BLOCK_SPACE})")
    return d, dd, a


def _nonzeros(d: int, dd: int, a: int) -> tuple[np.ndarray, np.ndarray]:
    def mono(m, n):  # number of y_m y_n (m <= n) among the d(d+1)/2 quadratic monomials
        lo, hi = np.minimum(m, n), np.maximum(m, n)
        return lo * d - lo * (lo - 1) // 2 + (hi - lo)

    half = d * (d + 1) // 2
    out_r, out_c = [], []
    # δV_kj: F_kp gains y_p y_j for p < a; V_kj is column 2ad + k d + j
    k, p, j = np.meshgrid(np.arange(dd), np.arange(a), np.arange(d), indexing="ij")
    out_r.append(((k * d + p) * half + mono(p, j)).ravel())
    out_c.append((2 * a * d + k * d + j).ravel())
    # δK_pm (p < a): F_kp gains y_k y_m; K_pm is column a d + p d + m
    k, p, m = np.meshgrid(np.arange(dd), np.arange(a), np.arange(d), indexing="ij")
    out_r.append(((k * d + p) * half + mono(k, m)).ravel())
    out_c.append((a * d + p * d + m).ravel())
    # δQ_mp (m < a): F_kp gains y_k y_m; Q_mp is column m d + p
    k, m, p = np.meshgrid(np.arange(dd), np.arange(a), np.arange(d), indexing="ij")
    out_r.append(((k * d + p) * half + mono(k, m)).ravel())
    out_c.append((m * d + p).ravel())
    return np.concatenate(out_r), np.concatenate(out_c)


def components(left: np.ndarray, right: np.ndarray, nodes: int) -> np.ndarray:
    """The smallest node of each node's connected component, for the edges ``left[e] -- right[e]`` (int32 nodes).

    >>> components(np.array([0, 3]), np.array([2, 4]), 5).tolist()
    [0, 1, 0, 3, 3]
    """
    left, right = left.astype(np.int32, copy=False), right.astype(np.int32, copy=False)
    parent = np.arange(nodes, dtype=np.int32)
    while True:  # propagate minima along the edges, then compress paths
        low = np.minimum(parent[left], parent[right])
        nxt = parent.copy()
        np.minimum.at(nxt, left, low)
        np.minimum.at(nxt, right, low)
        nxt = nxt[nxt]
        if np.array_equal(nxt, parent):
            return parent
        parent = nxt


def plain_rank(arch, p: int) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block)`` of the coefficient Jacobian at the plain point.

    >>> from attngeo.check.arch import Arch
    >>> plain_rank(Arch((6, 5), (3,), 2), 67108859)[0] == 2 * 3 * 6 + 6 * 5 - 9 - 1
    True
    >>> plain_rank(Arch((2, 2, 2), (1, 1), 2), 67108859)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: a structured witness is for one lightning layer with t >= 2
    """
    d, dd, a = _plain(arch)
    rows, cols = _nonzeros(d, dd, a)
    row_nodes, r = np.unique(rows, return_inverse=True)
    del rows  # int32 from here: nodes and nonzeros stay below MAX_NONZEROS < 2**31
    n_cols = arch.parameters
    r, cols = r.astype(np.int32), cols.astype(np.int32)
    left, right = cols, (n_cols + r).astype(np.int32)
    parent = components(left, right, n_cols + len(row_nodes))
    del right
    comp = parent[left]
    del parent
    order = np.lexsort((cols, comp))
    comp, r, cols = comp[order], r[order], cols[order]
    cuts = np.flatnonzero(comp[1:] != comp[:-1]) + 1
    rank, largest = 0, 0
    for s, e in zip(np.r_[0, cuts], np.r_[cuts, len(comp)]):
        ur, ri = np.unique(r[s:e], return_inverse=True)
        uc, ci = np.unique(cols[s:e], return_inverse=True)
        block = np.zeros((len(ur), len(uc)), dtype=np.int64)
        np.add.at(block, (ri, ci), 1)
        largest = max(largest, len(uc))
        rank += nmod_mat(len(ur), len(uc), block.ravel().tolist(), p).rank()
    return rank, len(cuts) + 1, largest


def field_minor(arch, columns: list[int], p: int) -> int:
    """Determinant mod p of the group fields at the plain point on ``columns`` (rows: intra ``E_uv``, then scaling).

    The ``K_vu`` entries and ``V_00`` give ``-I``: determinant ``(-1)^(a^2 + 1)``; a column no field moves gives 0.

    >>> from attngeo.check.arch import Arch
    >>> arch, p = Arch((4, 3), (2,), 2), 67108859
    >>> good = [8 + v * 4 + u for u in range(2) for v in range(2)] + [16]
    >>> field_minor(arch, good, p) == (-1) ** 5 % p, field_minor(arch, good[:-1] + [15], p)
    (True, 0)
    """
    d, dd, a = _plain(arch)
    where = {c: k for k, c in enumerate(columns)}
    n = len(columns)
    M = np.zeros((a * a + 1, n), dtype=np.int64)

    def put(row, block_offset, width, r, c, value):
        col = block_offset + r * width + c
        if col in where:
            M[row, where[col]] = value % p

    for u in range(a):
        for v in range(a):  # δQ[u, :] = Q[v, :] = e_v; δK[v, :] = -K[u, :] = -e_u
            put(u * a + v, 0, d, u, v, 1)
            put(u * a + v, a * d, d, v, u, -1)
    for i in range(a):  # scaling: δQ = Q, δV = -V
        put(a * a, 0, d, i, i, 1)
    for k in range(dd):
        put(a * a, 2 * a * d, d, k, k, -1)
    if n != a * a + 1:
        reject("the structured field minor has one column per field")
    return int(nmod_mat(n, n, M.ravel().tolist(), p).det())
