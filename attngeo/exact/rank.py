"""Exact ranks and nonsingular maximal minors, modulo word-size primes and over Q.

Method: python-flint's ``nmod_mat`` (FLINT's blocked elimination) for everything
modulo ``p``. Building an ``nmod_mat`` from Python integers costs about as much
as its rank (0.5 us an entry, measured), so matrices are converted once.

A witness minor is found with two reduced row-echelon forms: the pivot columns
of ``J`` are independent, and the pivot columns of ``J[:, cols]^T`` name
independent rows of that submatrix.
"""

from __future__ import annotations

import random

import numpy as np
from flint import fmpq, fmpq_mat, fmpz, nmod_mat

from . import modular

#: Primes are drawn below this bound: 26-bit primes let ``int64`` sum at least 2,048
#: products before reducing (:mod:`attngeo.exact.modular`) and make a rank drop by bad
#: luck unlikely (about ``rank/p``).
PRIME_BITS = 26


def random_prime(rng: random.Random, bits: int = PRIME_BITS) -> int:
    """A random prime in ``[2^(bits-1), 2^bits)``.

    Parameters
    ----------
    rng : random.Random
        The source of randomness (seed it for a reproducible prime).
    bits : int
        Bit length of the prime (default :data:`PRIME_BITS`).

    Returns
    -------
    int

    Examples
    --------
    >>> from flint import fmpz
    >>> p = random_prime(random.Random(0))
    >>> p == random_prime(random.Random(0)), bool(fmpz(p).is_prime()), p.bit_length()
    (True, True, 26)
    >>> random_prime(random.Random(0), bits=8).bit_length()
    8
    """
    while True:
        n = rng.randrange(1 << (bits - 1), 1 << bits) | 1
        if fmpz(n).is_prime():
            return n


def to_nmod_mat(array: np.ndarray, p: int) -> nmod_mat:
    """A 2-d integer array as a FLINT ``nmod_mat`` modulo ``p`` (entries reduced exactly first).

    Examples
    --------
    >>> M = to_nmod_mat(np.array([[-1, 8], [2**40, 0]]), 7)   # 2^40 = 2 (8^13) = 2 mod 7
    >>> [[int(M[i, j]) for j in range(2)] for i in range(2)]
    [[6, 1], [2, 0]]
    """
    # No arithmetic but reduction here: every sum of products is FLINT's, in word-size nmod.
    rows, cols = array.shape
    if rows == 0 or cols == 0:
        return nmod_mat(rows, cols, p)
    return nmod_mat(rows, cols, modular.reduce(array, p).ravel().tolist(), p)


def _pivots(echelon: nmod_mat, rank: int) -> list[int]:
    pivots, j = [], 0
    for i in range(rank):
        while echelon[i, j] == 0:
            j += 1
        pivots.append(j)
        j += 1
    return pivots


def det_mod_p(array: np.ndarray, p: int) -> int:
    """Determinant of a square integer matrix modulo ``p`` (as an int in ``[0, p)``).

    The empty (``0 x 0``) matrix has determinant 1.

    Examples
    --------
    >>> det_mod_p(np.array([[1, 2], [3, 4]]), 7)        # det = -2
    5
    >>> det_mod_p(np.zeros((0, 0), dtype=np.int64), 7)
    1
    """
    if array.shape[0] == 0:
        return 1
    return int(to_nmod_mat(array, p).det())


def rank_mod_p(array: np.ndarray, p: int) -> int:
    """Rank of an integer matrix modulo the prime ``p``.

    It never exceeds the rank ``r`` over Q, and equals it unless ``p`` divides
    every ``r x r`` minor: so it is a proved lower bound on the rank over Q.

    Examples
    --------
    >>> M = np.array([[1, 2], [3, 4]])                  # det = -2
    >>> rank_mod_p(M, 7), rank_mod_p(M, 2), rank_over_q(M)
    (2, 1, 2)
    """
    if 0 in array.shape:
        return 0
    return to_nmod_mat(array, p).rank()


def independent_rows(array: np.ndarray, p: int) -> tuple[int, list[int]]:
    """``(rank, rows)``: a maximal set of rows of ``array`` independent mod ``p``.

    The rows are the first independent ones, in order (the pivots of the transpose).

    Examples
    --------
    >>> M = np.array([[1, 2, 3], [2, 4, 6], [0, 0, 1]])  # row 1 = 2 row 0
    >>> r, rows = independent_rows(M, 7)
    >>> r, rows, rank_mod_p(M[rows], 7)
    (2, [0, 2], 2)
    """
    if 0 in array.shape:
        return 0, []
    echelon, rank = to_nmod_mat(np.ascontiguousarray(array.T), p).rref()
    return rank, _pivots(echelon, rank)


def maximal_minor_mod_p(array: np.ndarray, p: int) -> tuple[int, list[int], list[int]]:
    """``(rank, rows, cols)`` such that ``array[rows][:, cols]`` is nonsingular mod ``p``.

    The minor is a witness of the rank: its nonzero determinant proves ``rank >= r``.

    Examples
    --------
    >>> M = np.array([[1, 2, 3], [2, 4, 6], [0, 0, 1]])
    >>> r, rows, cols = maximal_minor_mod_p(M, 7)
    >>> r, rows, cols
    (2, [0, 2], [0, 2])
    >>> det_mod_p(M[rows][:, cols], 7) != 0
    True
    """
    if 0 in array.shape:
        return 0, [], []
    echelon, rank = to_nmod_mat(array, p).rref()
    cols = _pivots(echelon, rank)
    rank_rows, rows = independent_rows(array[:, cols], p)
    assert rank_rows == rank  # the pivot columns are independent by construction
    return rank, rows, cols


def rank_over_q(array: np.ndarray) -> int:
    """Exact rank over Q of a matrix of integers or ``fmpq`` (small matrices only).

    Examples
    --------
    >>> rank_over_q(np.array([[fmpq(1, 2), 1], [1, 2]], dtype=object))   # row 1 = 2 row 0
    1
    >>> rank_over_q(np.array([[1, 2], [3, 4]]))
    2
    """
    if 0 in array.shape:
        return 0
    return fmpq_mat(array.tolist()).rank()


def kernel_over_q(M: fmpq_mat) -> list[list[fmpq]]:
    """A basis of ``{v : M v = 0}`` over Q, from the reduced row echelon form.

    One vector per non-pivot column, with a 1 there: the basis has
    ``ncols - rank`` vectors.

    Examples
    --------
    >>> [[str(x) for x in v] for v in kernel_over_q(fmpq_mat([[1, 2], [2, 4]]))]
    [['-2', '1']]
    >>> M = fmpq_mat([[1, 1, 1, 1], [0, 1, 2, 3]])
    >>> basis = kernel_over_q(M)
    >>> len(basis) == M.ncols() - M.rank(), all(M * fmpq_mat([[x] for x in v]) == fmpq_mat(2, 1) for v in basis)
    (True, True)
    """
    R, r = M.rref()
    n = M.ncols()
    pivots = [next(c for c in range(n) if R[i, c] != 0) for i in range(r)]
    basis = []
    for f in (c for c in range(n) if c not in pivots):
        v = [fmpq(0)] * n
        v[f] = fmpq(1)
        for i, p in enumerate(pivots):
            v[p] = -R[i, f]
        basis.append(v)
    return basis


def null_basis_mod_p(array: np.ndarray, p: int) -> list[np.ndarray]:
    """The canonical basis of ``{x : M x = 0}`` mod ``p``: free variables of the reduced echelon form set to unit vectors.

    Canonical (it depends on the space only, not on how it was computed), so a
    prover and a checker that build rows from it agree entry by entry.

    Examples
    --------
    >>> M = np.array([[1, 2, 3], [2, 4, 6]])                # rank 1: x_1, x_2 free
    >>> [x.tolist() for x in null_basis_mod_p(M, 7)]         # -2 = 5, -3 = 4 mod 7
    [[5, 1, 0], [4, 0, 1]]
    >>> all(not np.any(M @ x % 7) for x in null_basis_mod_p(M, 7))
    True
    """
    rows, cols = array.shape
    echelon, rank = to_nmod_mat(array, p).rref() if rows else (None, 0)
    pivots = _pivots(echelon, rank) if rank else []
    basis = []
    for free in (c for c in range(cols) if c not in pivots):
        x = np.zeros(cols, dtype=np.int64)
        x[free] = 1
        for r, c in enumerate(pivots):
            x[c] = (-int(echelon[r, free])) % p
        basis.append(x)
    return basis


def adjugate_mod_p(array: np.ndarray, p: int) -> np.ndarray:
    """``adj(G)`` mod ``p`` by cofactors: ``G adj(G) = det(G) I`` also where ``G`` is singular (no inverse is used).

    The adjugate of a ``1 x 1`` matrix is ``[[1]]``.

    Examples
    --------
    >>> G = np.array([[2, 1], [4, 2]])                      # singular: adj G = [[2, -1], [-4, 2]]
    >>> adjugate_mod_p(G, 7).tolist(), (G @ adjugate_mod_p(G, 7) % 7).tolist()
    ([[2, 6], [3, 2]], [[0, 0], [0, 0]])
    """
    n = array.shape[0]
    if n == 1:
        return np.ones((1, 1), dtype=np.int64)
    adj = np.zeros((n, n), dtype=np.int64)
    for r in range(n):
        for c in range(n):
            minor = np.delete(np.delete(array, r, axis=0), c, axis=1)
            adj[c, r] = (-1) ** (r + c) * det_mod_p(minor, p) % p
    return adj
