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
scaling). Measured: ``d = d' = 768, a = 64`` (688,128 parameters) in about two
minutes (benchmarks/scale.py).
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


def coefficient_edges(d: int, dd: int, a: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ids (coefficient ``(k, p, {m, n})``) and column ids (``V``, ``K``, ``Q`` entries) of the nonzeros.

    Each ``V`` entry moves ``a`` coefficients and each of the ``2ad`` entries of
    ``K[:, :]`` and ``Q[:, :]`` moves ``d'``:

    >>> rows, cols = coefficient_edges(4, 3, 2)
    >>> len(rows) == 3 * 4 * 2 + 2 * (2 * 4 * 3)
    True
    """
    def coordinate(k, p, m, n):
        return ((k * d + p) * d + np.minimum(m, n)) * d + np.maximum(m, n)

    k, j, p = np.meshgrid(np.arange(dd), np.arange(d), np.arange(a), indexing="ij")  # δV_kj: y_p y_j, p < a
    rows = [coordinate(k, p, j, p).ravel()]
    cols = [(k * d + j).ravel()]
    for offset, transposed in ((dd * d, False), (dd * d + a * d, True)):
        # δK_pm (p < a) and δQ_mp (m < a) both give y_k y_m in F_kp, for every k < d'
        s, q, k = np.meshgrid(np.arange(a), np.arange(d), np.arange(dd), indexing="ij")
        p_, m_ = (q, s) if transposed else (s, q)
        rows.append(coordinate(k, p_, k, m_).ravel())
        cols.append((offset + s * d + q).ravel())
    return np.concatenate(rows), np.concatenate(cols).astype(np.int64)


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


def block_rank(rows: np.ndarray, cols: np.ndarray, ncols: int, p: int) -> tuple[int, int, int]:
    """``(rank mod p, number of blocks, largest block)`` of the 0/1 matrix with these nonzeros.

    The rank at the plain point is the generic ``2ad + dd' - a^2 - 1`` ([HMK]'s count):

    >>> rows, cols = coefficient_edges(6, 5, 3)
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
        M = np.zeros((len(ur), len(uc)), dtype=np.int64)
        np.add.at(M, (ri, ci), 1)  # entries 1 (a coefficient of one monomial), at most 2 after merging
        largest = max(largest, len(uc))
        total += nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), p).rank()
    return total, len(cuts) + 1, largest


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
    progress.phase("Jacobian", "the coefficient Jacobian's nonzeros at the plain point")
    rows, cols = coefficient_edges(d, dd, a)
    progress.phase("elimination", "connected blocks, ranks mod p")
    rank, blocks, largest = block_rank(rows, cols, arch.parameter_count, p)
    progress.phase("upper bound", "the explicit field minor")
    # intra E_uv moves K_vu by -1 (and Q_uv); scaling moves V_00 by -1: a diagonal minor of determinant (-1)^(a^2+1)
    columns = [a * d + v * d + u for u in range(a) for v in range(a)] + [2 * a * d]  # K_vu, then V_00 (flattening Q, K, V)
    lower = {"structured": "plain point", "prime": p, "rank": rank, "blocks": blocks, "largest_block": largest}
    upper = {"structured": "plain point", "prime": p, "families": [f.to_dict() for f in families(arch)],
             "field_rank": a * a + 1, "columns": columns, "determinant": (-1) ** (a * a + 1) % p}
    return DimensionCertificate(arch, rank, arch.parameter_count - a * a - 1, lower, upper, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1)
