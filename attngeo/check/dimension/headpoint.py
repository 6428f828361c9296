"""The checker's own replay of ``structured = "head point"`` witnesses (one multi-head lightning layer).

For ``t >= 2`` a lightning layer ``Y = [X +] Σ_j V_j X (M ∘ Xᵀ K_jᵀ Q_j X)`` is a
linear injective image of the coefficients of ``F(y) = Σ_j V_j y yᵀ A_j``
(``A_j = K_jᵀ Q_j``; docs/fibers.md Lemma 1 is linear in ``F``; the mask keeps
the pairs ``s < i``, the residual connection adds a constant), so the rank of
the Jacobian of ``W -> F`` at any point bounds ``dim M`` from below.

The checker's head point (``d' = d``, heads ``j = 0 .. h-1``): ``Q_j = K_j`` have a
one in row ``s`` at column ``c_j(s) = (j a + s) mod d``; ``V_j[k, (k + j) mod d] = 1``,
or ``U_j[r, u_j(r)] = 1`` with ``u_j(r) = (j b + r) mod d`` and ``O_j = U_jᵀ``. It
lists the nonzeros of ``dF`` column by column from the point's own nonzeros
(``δV y yᵀ A + V y yᵀ δA``, ``δA = δKᵀ Q + Kᵀ δQ``, ``δV = δO U + O δU``), reads each
column's grade (``k + p - m - n mod d`` of the coefficient of ``y_m y_n`` in
``F_kp``) from its first nonzero, and then, grade by grade, verifies that every
nonzero has its column's grade (so grades share no row and the ranks add),
strips rows and columns with a single nonzero (each adds one to the rank),
splits the rest into connected blocks and ranks each distinct block pattern by
flint mod p. The upper bound is the group fields at the same point by index
formulas; on the recorded columns, in the families' order, the minor must be
lower triangular with a nonzero diagonal.
"""

from __future__ import annotations

import numpy as np
from flint import nmod_mat

from ...exceptions import CertificateFormatError
from ..linalg import block_det
from . import groups
from .plainpoint import UPPER_KEYS, components, graded_lower
from ..values import index_list, reject

#: Work the checker accepts from one witness: Jacobian nonzeros in all (time: about 0.25 us each, so 2e8 buys
#: about 50 s, docs/trust.md) and in one grade (memory, about 150 bytes each), parameters (its column tables hold
#: about 40 bytes each), and entries of one dense block. GPT-2 small's layer: 1.5e8 nonzeros (2e5 a grade),
#: 2.4e6 parameters, checked in 33 s; with V unfactored 1.4e9 nonzeros (1.8e6 a grade, 8.3e6 parameters) would
#: take over ten minutes and is refused (a 500-byte file could otherwise buy them), and grade 0 keeps one
#: 49152 x 896 block (4.4e7 entries, about 1 GB while flint ranks it).
MAX_NONZEROS, MAX_GRADE_NONZEROS, MAX_PARAMETERS, MAX_BLOCK_ENTRIES = 200_000_000, 20_000_000, 20_000_000, 64_000_000

#: Columns whose grade is read in one pass.
_CHUNK = 1 << 20



class _Point:
    """The head point of one layer as index maps, and the flat column of each weight entry."""

    def __init__(self, arch):
        if len(arch.ranks) != 1 or arch.normalization != "lightning" or arch.tokens < 2:
            reject("a 'head point' witness is for one lightning layer with t >= 2")
        if arch.plain:
            reject("a 'head point' witness is for a layer beyond [HMK]'s model ([HMK]'s take the plain point)")
        self.d, dd = arch.widths
        self.a, self.h = arch.ranks[0], arch.head_count(1)
        self.b = arch.value_ranks[0] if arch.value_ranks is not None else None
        if dd != self.d or self.a > self.d or (self.b is not None and self.b > self.d):
            reject("the head point needs d' = d and ranks a, b <= d")
        d, a, h, b = self.d, self.a, self.h, self.b
        self.nonzeros = h * (3 * a * d * d if b is None else 4 * a * b * d)
        self.P = arch.parameters
        if self.nonzeros > MAX_NONZEROS or self.nonzeros // d > MAX_GRADE_NONZEROS or self.P > MAX_PARAMETERS:
            raise CertificateFormatError(f"a 'head point' witness of {self.nonzeros} nonzeros ({self.nonzeros // d} a "
                                         f"grade) and {self.P} parameters is above the checker's limits "
                                         f"({MAX_NONZEROS}, {MAX_GRADE_NONZEROS}, {MAX_PARAMETERS})")
        self.offset = {(j, name): off for (_, j, name), off in arch.offsets().items()}  # heads 1-based
        _, head, self.kind, self.row, self.col = arch.columns(np.int32)
        self.head = head - 1

    def c(self, j, s):
        return (j * self.a + s) % self.d

    def u(self, j, r):
        return (j * self.b + r) % self.d

    def values(self, j):
        """``(k, n)``: the nonzeros ``V_j[k, n] = 1`` (``V_j = O_j U_j`` when factored)."""
        if self.b is None:
            k = np.arange(self.d)
            return k, (k + j) % self.d
        return self.u(j, np.arange(self.b)), self.u(j, np.arange(self.b))


def _coefficient(pt: _Point, k, p, m, n):
    """Row number of the coefficient of ``y_m y_n`` in ``F_kp`` (a triangular monomial number)."""
    d = pt.d
    lo, hi = np.minimum(m, n), np.maximum(m, n)
    return (k * d + p) * (d * (d + 1) // 2) + lo * d - lo * (lo - 1) // 2 + (hi - lo)


def _grade(pt: _Point, k, p, m, n):
    return (k + p - m - n) % pt.d


def _nonzeros(pt: _Point, columns: np.ndarray, first: bool = False):
    """``(row, column, grade)`` of each nonzero of ``dF`` on ``columns`` (only each column's first when ``first``)."""
    out = []
    kind, head = pt.kind[columns], pt.head[columns].astype(np.int64)  # row numbers pass 2**31: int64 from here
    for name in range(5):
        sel = kind == name
        if not sel.any():
            continue
        cols, j = columns[sel], head[sel]
        r, c = pt.row[cols].astype(np.int64), pt.col[cols].astype(np.int64)
        if name in (2, 3, 4):  # δV = e_k e_m^T moves F_kp by y_m (A_j^T y)_p, A_j = sum_s e_c(s) e_c(s)^T
            if name == 2:
                k, m = r, c
            elif name == 3:  # δU[r, m]: δV = O_j[:, r] e_m^T = e_u(r) e_m^T
                k, m = pt.u(j, r), c
            else:  # δO[k, r]: δV = e_k U_j[r, :] = e_k e_u(r)^T
                k, m = r, pt.u(j, c)
            s = np.arange(1 if first else pt.a)
            K, M, P_ = k[:, None], m[:, None], pt.c(j[:, None], s[None, :])
            out.append((_coefficient(pt, K, P_, M, P_), np.repeat(cols, len(s)).reshape(-1, len(s)),
                        _grade(pt, K, P_, M, P_)))
            continue
        # δK[s, q]: δA = e_q e_c(s)^T, F_{k c(s)} += (V y)_k y_q;  δQ[s, q]: δA = e_c(s) e_q^T, F_kq += (V y)_k y_c(s)
        parts = []
        for jj in np.unique(j):
            at = j == jj
            vk, vn = pt.values(int(jj))
            if first:
                vk, vn = vk[:1], vn[:1]
            cs, q = pt.c(jj, r[at])[:, None], c[at][:, None]
            K, N = vk[None, :], vn[None, :]
            if name == 1:
                parts.append((_coefficient(pt, K, cs, N, q), cols[at][:, None] + 0 * K, _grade(pt, K, cs, N, q)))
            else:
                parts.append((_coefficient(pt, K, q, N, cs), cols[at][:, None] + 0 * K, _grade(pt, K, q, N, cs)))
        out += parts
    if not out:
        return (np.zeros(0, dtype=np.int64),) * 3
    return tuple(np.concatenate([np.asarray(x[i]).ravel() for x in out]) for i in range(3))


def _strip(r: np.ndarray, c: np.ndarray, count: np.ndarray) -> tuple[int, np.ndarray]:
    """Peel rank off rows and columns with one nonzero; ``(rank found, mask of the surviving entries)``.

    A column whose one nonzero is in row ``i`` clears row ``i`` from every other column (``+1`` per such row);
    a row whose one nonzero is in column ``j`` puts ``j`` outside the others' span (``+1`` per such column).
    Every entry is a positive count below ``p``, so nonzero mod p.
    """
    alive = count > 0
    nr, nc = int(r.max()) + 1, int(c.max()) + 1
    found = 0
    while True:
        col_degree = np.bincount(c[alive], minlength=nc)
        hit = alive & (col_degree[c] == 1)
        kill, on = (np.zeros(nr, dtype=bool), r) if hit.any() else (np.zeros(nc, dtype=bool), c)
        if not hit.any():
            row_degree = np.bincount(r[alive], minlength=nr)
            hit = alive & (row_degree[r] == 1)
            if not hit.any():
                return found, alive
        kill[on[hit]] = True
        found += int(kill.sum())
        alive &= ~kill[on]


def _grade_rank(rows: np.ndarray, cols: np.ndarray, p: int, cache: dict) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block's columns)``: rows and columns with one nonzero stripped, then the
    connected blocks of the rest, each distinct block pattern ranked once by flint."""
    _, r0 = np.unique(rows, return_inverse=True)
    _, c0 = np.unique(cols, return_inverse=True)
    stride0 = int(c0.max()) + 1
    position, count = np.unique(r0 * stride0 + c0, return_counts=True)  # an entry is its multiplicity
    r0, c0 = position // stride0, position % stride0
    rank, alive = _strip(r0, c0, count)
    if not alive.any():
        return rank, 0, 0
    _, r = np.unique(r0[alive], return_inverse=True)
    _, c = np.unique(c0[alive], return_inverse=True)
    value = count[alive]
    nc, nr = int(c.max()) + 1, int(r.max()) + 1
    label = components(c, nc + r, nc + nr)
    _, comp = np.unique(label, return_inverse=True)
    blocks = int(comp.max()) + 1
    width = np.bincount(comp[:nc], minlength=blocks)
    height = np.bincount(comp[nc:], minlength=blocks)

    def local(nodes_comp):  # a node's position among its block's nodes, in node order
        order = np.argsort(nodes_comp, kind="stable")
        first = np.searchsorted(nodes_comp[order], nodes_comp[order], side="left")
        pos = np.empty(len(nodes_comp), dtype=np.int64)
        pos[order] = np.arange(len(nodes_comp)) - first
        return pos

    col_pos, row_pos = local(comp[:nc]), local(comp[nc:])
    stride = int(width.max()) + 1
    edge_comp = comp[c]
    code = row_pos[r] * stride + col_pos[c]
    order = np.lexsort((code, edge_comp))
    edge_comp, code, value = edge_comp[order], code[order], value[order]
    ends = np.searchsorted(edge_comp, np.arange(blocks), side="right")
    starts = np.r_[0, ends[:-1]]
    for b in range(blocks):
        n, m = int(height[b]), int(width[b])
        if n * m > MAX_BLOCK_ENTRIES:
            raise CertificateFormatError(f"a block of {n} x {m} is above the checker's limit of {MAX_BLOCK_ENTRIES}")
        seg, val = code[starts[b]:ends[b]], value[starts[b]:ends[b]]
        key = (n, m, seg.tobytes(), val.tobytes())
        if key not in cache:
            M = np.zeros(n * m, dtype=np.int64)
            M[(seg // stride) * m + seg % stride] = val
            cache[key] = nmod_mat(n, m, M.tolist(), p).rank()
        rank += cache[key]
    return rank, blocks, int(width.max())


def head_rank(arch, p: int) -> tuple[int, int, int]:
    """``(rank mod p, blocks, largest block)`` of the coefficient Jacobian at the head point.

    Examples
    --------
    Two heads ``6 -> 6`` of rank 2: ``P`` minus the ``2 (a^2 + 1)`` group fields:

    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((6, 6), (2,), 2, heads=(2,))
    >>> head_rank(arch, 67108859)[0] == arch.parameters - 2 * 5
    True
    >>> head_rank(Arch((6, 6), (2,), 1, heads=(2,)), 67108859)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: a 'head point' witness is for one lightning layer with t >= 2
    """
    pt = _Point(arch)
    grade = np.full(pt.P, -1, dtype=np.int64)
    for start in range(0, pt.P, _CHUNK):
        _, cols, grades = _nonzeros(pt, np.arange(start, min(pt.P, start + _CHUNK), dtype=np.int64), first=True)
        grade[cols] = grades
    if (grade < 0).any():  # pragma: no cover - every weight entry moves some coefficient at this point
        reject("a column of the head point's Jacobian is zero")
    order = np.argsort(grade, kind="stable")
    bounds = np.searchsorted(grade[order], np.arange(pt.d + 1))
    rank, blocks, largest, cache = 0, 0, 0, {}
    for w in range(pt.d):
        columns = order[bounds[w]:bounds[w + 1]]
        if len(columns) == 0:
            continue
        rows, cols, g = _nonzeros(pt, columns)
        if (g != w).any():
            reject(f"a column of grade {w} moves a coefficient of another grade: the grades do not split the Jacobian")
        r, b, big = _grade_rank(rows, cols, p, cache)
        rank, blocks, largest = rank + r, blocks + b, max(largest, big)
    return rank, blocks, largest


def check_lower(cert: dict, lw: dict, arch) -> int:
    """The lower bound of a 'head point' witness, recomputed block by block.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.geometry.dimension.headpoint import certify_heads
    >>> cert = certify_heads(Architecture((6, 6), (2,), heads=2, causal=True), seed=0).to_json()
    >>> check_lower(cert, cert["lower_witness"], Arch((6, 6), (2,), 2, heads=(2,), causal=True))
    110
    """
    return graded_lower(cert, lw, "head point", lambda p: head_rank(arch, p))


def field_entries(arch) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``(row, column, value, rows)`` of the group fields at the head point: per head intra ``E_uv``, scaling, value ``E_uv``.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> r, c, v, s = field_entries(Arch((4, 4), (1,), 2, heads=(2,), value_ranks=(1,)))
    >>> s, sorted(set(v.tolist()))
    (6, [-1, 1])
    """
    pt = _Point(arch)
    d, a, h, b = pt.d, pt.a, pt.h, pt.b
    R, C, V = [], [], []
    row = 0

    def put(rows, j, name, r, c, value):
        R.append(np.broadcast_to(rows, np.shape(r)).ravel())
        cols = pt.offset[(j + 1, name)] + np.asarray(r) * ({"Q": d, "K": d, "V": d, "U": d, "O": b or 1}[name]) + c
        C.append(np.asarray(cols).ravel())
        V.append(np.full(np.size(r), value, dtype=np.int64))

    for j in range(h):
        s = np.arange(a)
        for u in range(a):  # δQ[u, :] = Q[v, :] = e_c(v); δK[v, :] = -K[u, :] = -e_c(u)
            put(row + u * a + s, j, "Q", np.full(a, u), pt.c(j, s), 1)
            put(row + u * a + s, j, "K", s, np.full(a, pt.c(j, u)), -1)
        row += a * a
        put(row, j, "Q", s, pt.c(j, s), 1)  # scaling: δQ = Q, δ(V or O) = -(V or O)
        if b is None:
            vk, vn = pt.values(j)
            put(row, j, "V", vk, vn, -1)
            row += 1
            continue
        t = np.arange(b)
        put(row, j, "O", pt.u(j, t), t, -1)
        row += 1
        for u in range(b):  # δU[u, :] = U[v, :] = e_u(v); δO[:, v] = -O[:, u] = -e_u(u)
            put(row + u * b + t, j, "U", np.full(b, u), pt.u(j, t), 1)
            put(row + u * b + t, j, "O", np.full(b, pt.u(j, u)), t, -1)
        row += b * b
    return np.concatenate(R), np.concatenate(C), np.concatenate(V), row


def check_upper(cert: dict, uw: dict, arch, expected: list) -> int:
    """The upper bound ``P - s``: the ``s`` group fields' minor on the recorded columns, lower triangular.

    ``expected`` is the checker's list of families for ``arch`` (groups, then kernel families).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.dense import _expected_families
    >>> from attngeo.geometry.dimension.headpoint import certify_heads
    >>> cert = certify_heads(Architecture((6, 6), (2,), heads=2, value_ranks=2), seed=0).to_json()
    >>> arch = Arch((6, 6), (2,), 2, heads=(2,), value_ranks=(2,))
    >>> check_upper(cert, cert["upper_witness"], arch, _expected_families(arch))
    78
    """
    _Point(arch)  # the size limits first: a layer the lower witness could not be checked at is refused at once
    r, c, v, s = field_entries(arch)
    p = groups.witness(uw, "head point", UPPER_KEYS, expected, s)
    P = arch.parameters
    columns = index_list(uw["columns"], s, P, "upper_witness.columns")
    at = np.full(P, -1, dtype=np.int64)
    at[columns] = np.arange(s)
    keep = at[c] >= 0
    return groups.bound(cert, uw, P, s, block_det(r[keep], at[c[keep]], v[keep], s, p), p, "head point")
