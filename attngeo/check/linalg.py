"""The checker's linear algebra mod p: FLINT matrices, determinants, adjugates, canonical null bases, products.

Residues are below ``p < 2**26`` (``MAX_PRIME``), so a product of two is below
``2**52`` and a sum of at most ``MAX_SIZE = 2047`` of them stays below ``2**63``:
every product here reduces after each factor, and callers keep inner sizes to
widths, ranks or head counts the limits bound.
"""

from __future__ import annotations

import numpy as np
from flint import nmod_mat

from .values import reject


def nmod(M: np.ndarray, p: int) -> nmod_mat:
    """``M`` mod ``p`` as a FLINT matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import nmod
    >>> nmod(np.array([[-1, 9]]), 7)
    [6, 2]
    """
    return nmod_mat(M.shape[0], M.shape[1], np.mod(M, p).ravel().tolist(), p)


def rank(M: np.ndarray, p: int) -> int:
    """``rank M`` mod ``p`` (0 for an empty matrix); at most the rank over Q, equal where it is full.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import rank
    >>> rank(np.array([[1, 2], [2, 4]]), 7), rank(np.array([[1, 2], [3, 4]]), 2), rank(np.zeros((0, 3)), 7)
    (1, 1, 0)
    """
    return 0 if 0 in M.shape else nmod(M.astype(np.int64, copy=False), p).rank()


def det(M: np.ndarray, p: int) -> int:
    """``det M`` mod ``p`` (1 for the empty matrix).

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import det
    >>> det(np.array([[1, 2], [3, 4]]), 7), det(np.zeros((0, 0), dtype=np.int64), 7)
    (5, 1)
    """
    return int(nmod(M, p).det()) if M.shape[0] else 1


def adjugate(G: np.ndarray, p: int) -> np.ndarray:
    """``adj G`` mod ``p`` from cofactors, no inverse (``G adj G = det G · I`` also when ``G`` is singular).

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import adjugate
    >>> G = np.array([[2, 1], [4, 2]])
    >>> adjugate(G, 7).tolist(), adjugate(np.array([[5]]), 7).tolist()
    ([[2, 6], [3, 2]], [[1]])
    """
    n = G.shape[0]
    out = np.ones((1, 1), dtype=np.int64) if n == 1 else np.zeros((n, n), dtype=np.int64)
    for r in range(n if n > 1 else 0):
        for c in range(n):
            out[c, r] = (-1) ** (r + c) * det(np.delete(np.delete(G, r, 0), c, 1), p) % p
    return out


def null_basis(M: np.ndarray, p: int) -> list[np.ndarray]:
    """The canonical basis of ``{x : M x = 0}`` mod p: free variables of ``rref(M)`` set to unit vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import null_basis
    >>> [x.tolist() for x in null_basis(np.array([[1, 2, 3], [2, 4, 6]]), 7)]
    [[5, 1, 0], [4, 0, 1]]
    """
    R, rank = nmod(M, p).rref()
    pivots = [next(c for c in range(M.shape[1]) if int(R[r, c])) for r in range(rank)]
    basis = []
    for f in (c for c in range(M.shape[1]) if c not in pivots):
        x = np.zeros(M.shape[1], dtype=np.int64)
        x[f] = 1
        for r, c in enumerate(pivots):
            x[c] = (-int(R[r, f])) % p
        if np.any(np.mod(np.mod(M, p) @ x, p)):  # (entries < p, inner size <= 2047: no int64 overflow)
            reject("internal: a null vector does not solve M x = 0")  # pragma: no cover - rref is exact
        basis.append(x)
    return basis


def mm(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """``a b`` mod ``p`` for residues (batched on leading axes): exact int64 sums by the bounds above, and about 3x
    faster than ``einsum`` on the checker's shapes.

    >>> import numpy as np
    >>> mm(np.array([[3, 4]]), np.array([[5], [6]]), 7).tolist()
    [[4]]
    """
    return np.matmul(a, b) % p


def product(*factors: np.ndarray, p: int) -> np.ndarray:
    """``F_1 F_2 ⋯`` mod ``p``, reduced after each factor.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import product
    >>> product(np.array([[3]]), np.array([[5]]), np.array([[-1]]), p=7).tolist()
    [[6]]
    """
    out = np.mod(factors[0], p)
    for f in factors[1:]:
        out = np.mod(out @ np.mod(f, p), p)
    return out


def block_det(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, n: int, p: int, largest: int = 1) -> int | None:
    """Determinant mod ``p`` of the ``n x n`` matrix with entries ``(rows[e], cols[e]) += vals[e]`` if it is block
    lower triangular in that order with diagonal blocks of at most ``largest`` rows (the product of the blocks'
    determinants), None otherwise (``largest = 1``: lower triangular, the product of its diagonal).

    A block ends at ``q`` when no row up to ``q`` reaches beyond column ``q``; entries that vanish mod ``p`` reach
    nowhere. Every structured witness's minor is such a matrix, and so is a dense minor of the gauge choice.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.linalg import block_det
    >>> block_det(np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([2, 5, -3]), 2, 7)   # 2 (-3)
    1
    >>> block_det(np.array([0]), np.array([1]), np.array([1]), 2, 7) is None              # above the diagonal
    True
    >>> r, c = np.array([0, 1, 1, 2, 2]), np.array([0, 1, 2, 1, 2])                         # blocks [3], [[0, 5], [7, 1]]
    >>> block_det(r, c, np.array([3, 0, 5, 7, 1]), 3, 101, largest=2) == 3 * (0 - 35) % 101
    True
    """
    if n == 0:
        return 1
    keep = np.mod(vals, p) != 0
    rows, cols, vals = rows[keep], cols[keep], np.mod(vals[keep], p)
    reach = np.full(n, -1, dtype=np.int64)
    np.maximum.at(reach, rows, cols)
    ends = np.flatnonzero(np.maximum.accumulate(reach) <= np.arange(n)) + 1
    starts = np.r_[0, ends[:-1]].astype(np.int64)
    if int(np.max(ends - starts)) > largest:
        return None
    out = 1
    diag = np.zeros(n, dtype=np.int64)
    on = rows == cols
    np.add.at(diag, rows[on], vals[on])  # repeated entries add up
    for x in np.mod(diag[starts[ends - starts == 1]], p).tolist():
        out = out * x % p
    block = np.searchsorted(ends, rows, side="right")
    for b in np.flatnonzero(ends - starts > 1).tolist():
        lo, hi = int(starts[b]), int(ends[b])
        sel = (block == b) & (cols >= lo)
        M = np.zeros((hi - lo, hi - lo), dtype=np.int64)
        np.add.at(M, (rows[sel] - lo, cols[sel] - lo), vals[sel])
        out = out * det(M, p) % p
    return out
