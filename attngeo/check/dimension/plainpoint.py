"""The checker's own replay of structured (plain-point) dimension witnesses of one lightning layer.

At ``Q = K = [I_a 0]``, ``V = [I_{d'} 0]`` the derivative of the coefficients of
``F_kp(y) = (V y)_k (Aᵀ y)_p`` is ``[p < a] y_p (δV y)_k + y_k ((δKᵀ Q + Kᵀ δQ)ᵀ y)_p``.
The torus ``(C*)^d`` fixes the point and grades that Jacobian: the coefficient of
``y_m y_n`` in ``F_kp`` has weight ``e_k + e_p - e_m - e_n``, ``V_xy``, ``Q_yx``, ``K_xy``
weight ``e_x - e_y`` (docs/math.md §7.6). Permutations of the coordinates keeping
``[0, a)`` and ``[0, d')`` fix the point as well, so the classes fall into at most
ten kinds with the same block. The checker lists each kind's representative's
nonzeros itself (coefficients indexed by a triangular monomial number, columns
in the flattening order ``Q, K, V``), verifies that each has its column's weight
(so classes share no row), splits the class into connected blocks, ranks them mod
p (a large tall block through its Gram matrix ``Mᵀ M``, a lower bound) and counts
each kind. The upper bound's minor is the group fields at the plain point,
evaluated on the recorded columns by the index formulas (intra ``δQ[u] = Q[v]``,
``δK[v] = -K[u]``; scaling ``δQ = Q``, ``δV = -V``).
"""

from __future__ import annotations

import numpy as np

from ...exceptions import CertificateFormatError
from ..linalg import block_det, nmod
from ..values import field, index_list, integer, prime, reject
from . import groups

#: Work the checker accepts from one structured witness: the nonzeros of the weight-0 class (3 a d'; 147,456 at
#: d = d' = 768, a = 64) and its columns d' + 2a (a Gram matrix of that size is ranked: 896 there, 0.4 s).
MAX_NONZEROS, MAX_GRAM = 50_000_000, 4096
#: Blocks with more entries than this (and more rows than columns) are ranked through their Gram matrix.
MAX_DENSE_BLOCK = 1_000_000

LOWER_KEYS = {"structured", "prime", "rank", "blocks", "largest_block"}
UPPER_KEYS = {"structured", "prime", "families", "field_rank", "columns", "determinant"}


def limits(arch) -> tuple[int, int, int]:
    """``(d, d', a)`` of a layer the plain point applies to, within the checker's limits (else a refusal).

    >>> from attngeo.check.arch import Arch
    >>> limits(Arch((2047, 2047), (2047,), 2))        # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: a structured witness whose weight-0 class has ... above the checker's limits ...
    """
    if len(arch.ranks) != 1 or arch.normalization != "lightning" or arch.tokens < 2:
        reject("a structured witness is for one lightning layer with t >= 2")
    d, dd, a = arch.widths[0], arch.widths[1], arch.ranks[0]
    if a > d or dd > d:
        reject("the plain point needs a <= d and d' <= d")
    if 3 * a * dd > MAX_NONZEROS or dd + 2 * a > MAX_GRAM:
        raise CertificateFormatError(f"a structured witness whose weight-0 class has {3 * a * dd} nonzeros in "
                                     f"{dd + 2 * a} columns is above the checker's limits ({MAX_NONZEROS} nonzeros, "
                                     f"{MAX_GRAM} columns)")
    return d, dd, a


def _nonzeros(d: int, dd: int, a: int, columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, column, weight)`` of the nonzeros in these columns; a row is the coefficient ``(k, p, {m, n})`` and its
    weight ``e_k + e_p - e_m - e_n`` is encoded as ``(x, y)`` for ``e_x - e_y`` (``(0, 0)`` for weight 0)."""
    def mono(m, n):  # number of y_m y_n (m <= n) among the d(d+1)/2 quadratic monomials
        lo, hi = np.minimum(m, n), np.maximum(m, n)
        return lo * d - lo * (lo - 1) // 2 + (hi - lo)

    half = d * (d + 1) // 2
    out_r, out_c, out_k, out_p, out_m, out_n = [], [], [], [], [], []

    def put(col, k, p, m, n):
        k, p, m, n = np.broadcast_arrays(k, p, m, n)
        out_r.append(((k * d + p) * half + mono(m, n)).ravel())
        out_c.append(np.broadcast_to(col, k.shape).ravel())
        for store, x in ((out_k, k), (out_p, p), (out_m, m), (out_n, n)):
            store.append(x.ravel())

    columns = np.asarray(columns, dtype=np.int64)
    v = columns[columns >= 2 * a * d]  # V_kj is column 2ad + k d + j: F_kp gains y_p y_j for p < a
    k, j = np.divmod(v - 2 * a * d, d)
    p = np.arange(a)[None, :]
    put(v[:, None], k[:, None], p, p, j[:, None])
    kk = columns[(columns >= a * d) & (columns < 2 * a * d)]  # K_pm (p < a) is column a d + p d + m: F_kp gains y_k y_m
    p_, m_ = np.divmod(kk - a * d, d)
    k = np.arange(dd)[None, :]
    put(kk[:, None], k, p_[:, None], k, m_[:, None])
    q = columns[columns < a * d]  # Q_mp (m < a) is column m d + p: F_kp gains y_k y_m
    m_, p_ = np.divmod(q, d)
    put(q[:, None], k, p_[:, None], k, m_[:, None])
    k, p, m, n = (np.concatenate(x) for x in (out_k, out_p, out_m, out_n))
    # the weight's positive and negative parts, cancelled: {k, p} minus {m, n} as multisets
    plus = np.sort(np.stack([k, p]), axis=0)
    minus = np.sort(np.stack([m, n]), axis=0)
    weight = np.full((len(k), 2), -1, dtype=np.int64)
    zero = (plus == minus).all(axis=0)
    weight[zero] = 0
    for i in (0, 1):
        for j in (0, 1):
            hit = ~zero & (weight[:, 0] < 0) & (plus[i] == minus[j])
            weight[hit, 0], weight[hit, 1] = plus[1 - i][hit], minus[1 - j][hit]
    return np.concatenate(out_r), np.concatenate(out_c), weight


def _classes(d: int, dd: int, a: int) -> list[tuple[tuple, np.ndarray, int]]:
    """``((x, y), columns, count)``: the plain point's weight classes, one representative per kind.

    The torus fixes the plain point and grades the Jacobian (``V_xy``, ``Q_yx``, ``K_xy`` have weight
    ``e_x - e_y``; the diagonal entries weight 0); permutations of the coordinates keeping ``[0, a)`` and ``[0, d')``
    fix it too, so classes whose ``x`` and ``y`` lie in the same pieces of ``[0, d)`` (cut at ``a`` and ``d'``)
    have the same block.
    """
    diagonal = np.concatenate([np.arange(a) * (d + 1), a * d + np.arange(a) * (d + 1), 2 * a * d + np.arange(dd) * (d + 1)])
    out = [((0, 0), diagonal, 1)]
    edges = sorted({0, a, dd, d})
    for xs, xe in zip(edges, edges[1:]):
        for ys, ye in zip(edges, edges[1:]):
            n = (xe - xs) * (ye - ys) - (xe - xs if xs == ys else 0)
            if xe <= xs or ye <= ys or n <= 0:
                continue
            x, y = xs, ys + (xs == ys)
            cols = [c for c, ok in ((y * d + x, y < a), (a * d + x * d + y, x < a), (2 * a * d + x * d + y, x < dd)) if ok]
            if cols:
                out.append(((x, y), np.array(cols, dtype=np.int64), n))
    return out


def _gram_rank(r: np.ndarray, c: np.ndarray, n: int, p: int) -> int:
    """``rank_p(Mᵀ M)`` (a lower bound on ``rank M``, free of the rows' order) of the matrix counting (r, c)."""
    G = np.zeros((n, n), dtype=np.int64)
    order = np.argsort(r, kind="stable")
    r, c = r[order], c[order]
    first = np.flatnonzero(np.r_[True, r[1:] != r[:-1]])
    size = np.diff(np.r_[first, len(r)])
    for i in range(int(size.max())):
        for j in range(int(size.max())):
            at = first[size > max(i, j)]
            np.add.at(G, (c[at + i], c[at + j]), 1)
    return nmod(G, p).rank()


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

    Class by class (:func:`_classes`): each representative's nonzeros are listed, every one must have the
    class's weight (so classes share no row and their ranks add), the class is split into connected blocks and
    each block ranked mod p (large tall ones through their Gram matrix, a lower bound), and counted.

    >>> from attngeo.check.arch import Arch
    >>> plain_rank(Arch((6, 5), (3,), 2), 67108859)[0] == 2 * 3 * 6 + 6 * 5 - 9 - 1
    True
    >>> plain_rank(Arch((2, 2, 2), (1, 1), 2), 67108859)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: a structured witness is for one lightning layer with t >= 2
    """
    d, dd, a = limits(arch)
    n_cols = arch.parameters
    rank, blocks, largest = 0, 0, 0
    for (x, y), columns, count in _classes(d, dd, a):
        rows, cols, weight = _nonzeros(d, dd, a, columns)
        if not ((weight[:, 0] == x) & (weight[:, 1] == y)).all():  # pragma: no cover - the checker's own formulas
            reject("a nonzero of the plain point's Jacobian lies outside its column's weight class")
        row_nodes, r = np.unique(rows, return_inverse=True)
        r, cols = r.astype(np.int32), cols.astype(np.int32)
        parent = components(cols, (n_cols + r).astype(np.int32), n_cols + len(row_nodes))
        comp = parent[cols]
        order = np.lexsort((cols, comp))
        comp, r, cols = comp[order], r[order], cols[order]
        cuts = np.flatnonzero(comp[1:] != comp[:-1]) + 1
        for s, e in zip(np.r_[0, cuts], np.r_[cuts, len(comp)]):
            ur, ri = np.unique(r[s:e], return_inverse=True)
            uc, ci = np.unique(cols[s:e], return_inverse=True)
            largest = max(largest, len(uc))
            if len(ur) * len(uc) > MAX_DENSE_BLOCK and len(ur) > len(uc):
                rank += count * _gram_rank(ri, ci, len(uc), p)
                continue
            block = np.zeros((len(ur), len(uc)), dtype=np.int64)
            np.add.at(block, (ri, ci), 1)
            rank += count * nmod(block, p).rank()
        blocks += count * (len(cuts) + 1)
    return rank, blocks, largest


#: The field minor's diagonal blocks on the recorded columns are expanded only up to this size.
MAX_DENSE_MINOR = 1024


def field_minor(arch, columns: list[int], p: int) -> int:
    """Determinant mod p of the group fields at the plain point on ``columns`` (rows: intra ``E_uv``, then scaling).

    The ``K_vu`` entries and ``V_00`` give ``-I``: determinant ``(-1)^(a^2 + 1)``; a column no field moves gives 0.
    A block lower triangular minor is the product of its blocks' determinants, each expanded only while small.

    >>> from attngeo.check.arch import Arch
    >>> arch, p = Arch((4, 3), (2,), 2), 67108859
    >>> good = [8 + v * 4 + u for u in range(2) for v in range(2)] + [16]
    >>> field_minor(arch, good, p) == (-1) ** 5 % p, field_minor(arch, good[:-1] + [15], p)
    (True, 0)
    """
    d, dd, a = limits(arch)
    n = len(columns)
    if n != a * a + 1:
        reject("the structured field minor has one column per field")
    u, v = np.divmod(np.arange(a * a), a)
    i, k = np.arange(a), np.arange(dd)
    # intra E_uv: δQ[u, :] = Q[v, :] = e_v, δK[v, :] = -K[u, :] = -e_u; scaling: δQ = Q, δV = -V
    rows = np.concatenate([u * a + v, u * a + v, np.full(a + dd, a * a)])
    cols = np.concatenate([u * d + v, a * d + v * d + u, i * d + i, 2 * a * d + k * d + k])
    vals = np.concatenate([np.ones(a * a), -np.ones(a * a), np.ones(a), -np.ones(dd)]).astype(np.int64)
    at = np.full(arch.parameters, -1, dtype=np.int64)
    at[np.asarray(columns, dtype=np.int64)] = np.arange(n)
    inside = at[cols] >= 0
    rows, cols, vals = rows[inside], at[cols[inside]], np.mod(vals[inside], p)
    det = block_det(rows, cols, vals, n, p, largest=MAX_DENSE_MINOR)
    if det is None:
        reject(f"the field minor on upper_witness.columns is not block lower triangular with blocks of at most "
               f"{MAX_DENSE_MINOR} columns")
    return det


def graded_lower(cert: dict, lw: dict, name: str, ranker) -> int:
    """The lower bound of a witness at a torus-fixed point (this module's plain point, or the head point):
    ``ranker(p)`` is the checker's ``(rank mod p, blocks, largest block)`` of the coefficient Jacobian there, and
    the witness and ``lower`` must record exactly that.

    One layer ``4 -> 4`` of rank 2 has ``dim M = 2ad + dd' - a^2 - 1 = 27``; a witness claiming 28 is refused:

    >>> from attngeo.check.arch import Arch
    >>> lw = {"structured": "plain point", "prime": 67108859, "rank": 28, "blocks": 17, "largest_block": 8}
    >>> graded_lower({"lower": 28}, lw, "plain point", lambda p: plain_rank(Arch((4, 4), (2,), 2), p))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the coefficient Jacobian at the plain point has rank 27 mod 67108859 in 17 blocks of at most 8 columns; lower and the witness must say so
    """
    if set(lw) != LOWER_KEYS or lw["structured"] != name:
        reject(f"a '{name}' lower witness holds exactly {', '.join(sorted(LOWER_KEYS))}")
    p = prime(lw["prime"], "lower_witness.prime")
    rank, blocks, largest = ranker(p)
    recorded = tuple(integer(lw[k], f"lower_witness.{k}", 0) for k in ("rank", "blocks", "largest_block"))
    if recorded != (rank, blocks, largest) or integer(field(cert, "lower"), "lower") != rank:
        reject(f"the coefficient Jacobian at the {name} has rank {rank} mod {p} in {blocks} blocks of at most "
               f"{largest} columns; lower and the witness must say so")
    return rank


def check_upper(cert: dict, uw: dict, arch, expected: list) -> int:
    """The upper bound ``P - (a^2 + 1)``: the intra fields and the scaling at the plain point, on the recorded columns.

    ``expected`` is the checker's list of families for ``arch`` (groups, then kernel families).

    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.dense import _expected_families
    >>> from attngeo.geometry.dimension.plainpoint import certify_structured
    >>> cert = certify_structured(Architecture((6, 5), (3,)), seed=0).to_json()
    >>> check_upper(cert, cert["upper_witness"], Arch((6, 5), (3,), 2), _expected_families(Arch((6, 5), (3,), 2)))
    56
    """
    limits(arch)  # a size the lower witness could not be checked at is refused before anything else
    fields = arch.ranks[0] ** 2 + 1
    p = groups.witness(uw, "plain point", UPPER_KEYS, expected, fields)
    columns = index_list(uw["columns"], fields, arch.parameters, "upper_witness.columns")
    return groups.bound(cert, uw, arch.parameters, fields, field_minor(arch, columns, p), p, "plain point")
