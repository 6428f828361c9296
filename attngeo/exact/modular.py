"""Arithmetic in ``F_p`` on numpy ``int64`` arrays whose sums of products cannot overflow.

numpy's integer ``matmul`` and ``einsum`` accumulate in ``int64`` and wrap
silently past ``2^63 - 1``. Entries with ``|x| < p`` make every product at most
``(p - 1)^2`` in absolute value, so a sum of ``K`` products is at most
``K (p - 1)^2``: exact whenever ``K <= chunk_length(p)``. Longer sums are cut
into runs of that length, each reduced mod ``p`` before the runs are added.

For the 26-bit primes of :mod:`attngeo.exact.rank` the run length is 2,048 to 8,191;
for primes just below ``2^31`` it is 2, which is why tests use such primes to
reach the chunked path with tiny matrices.
"""

from __future__ import annotations

import operator

import numpy as np

from ..exceptions import InvalidInputError

INT64_MAX = (1 << 63) - 1

#: Moduli stay below this: ``(p - 1)^2 < 2^62`` leaves room for a run of at least two
#: products, and two residues add to less than ``2^32``.
MAX_MODULUS = 1 << 31


def chunk_length(p: int) -> int:
    """The longest ``K`` with ``K (p - 1)^2 <= 2^63 - 1``: a sum of ``K`` products of
    entries ``|x| < p`` is exact in ``int64``.

    Parameters
    ----------
    p : int
        The modulus, ``2 <= p < 2^31`` (:data:`MAX_MODULUS`).

    Returns
    -------
    int
        The run length, at least 2.

    Raises
    ------
    InvalidInputError
        When ``p`` is outside ``[2, 2^31)``.

    Examples
    --------
    >>> chunk_length(67108859), chunk_length(2147483647)
    (2048, 2)
    >>> K = chunk_length(67108859)              # K is the largest: one more product could wrap
    >>> K * (67108859 - 1) ** 2 <= INT64_MAX < (K + 1) * (67108859 - 1) ** 2
    True
    >>> chunk_length(2**31)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: modulus 2147483648 must be at least 2 and below 2**31 for int64 arithmetic
    """
    if not 2 <= p < MAX_MODULUS:
        raise InvalidInputError(f"modulus {p} must be at least 2 and below 2**31 for int64 arithmetic")
    return INT64_MAX // (p - 1) ** 2


def reduce(values, p: int) -> np.ndarray:
    """Integers of any size (``int64`` arrays, Python ints, nested lists) as ``int64`` residues in ``[0, p)``.

    Python integers beyond ``int64`` are reduced exactly before conversion, never
    wrapped; anything that is not an integer (floats, rationals) is refused.

    Parameters
    ----------
    values : array_like
        Integers: numpy integer or boolean arrays, Python ints of any size, nested lists.
    p : int
        The modulus.

    Returns
    -------
    numpy.ndarray
        ``int64`` residues in ``[0, p)``, of the shape of ``values``.

    Raises
    ------
    InvalidInputError
        When an entry is not an integer.

    Examples
    --------
    >>> reduce([2**70, -1], 7).tolist()   # 2^70 = 2 (8^23) = 2 mod 7
    [2, 6]
    >>> reduce(np.array([2**64 - 1], dtype=np.uint64), 7).tolist() == [(2**64 - 1) % 7]   # no wrap through int64
    True
    >>> reduce([0.5], 7)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: values reduced mod 7 must be integers, got float64 entries
    """
    a = np.asarray(values)
    if a.dtype == object:
        try:
            return np.vectorize(lambda v: operator.index(v) % p, otypes=[np.int64])(a)
        except TypeError:
            raise InvalidInputError(f"values reduced mod {p} must be integers (got a non-integer entry)") from None
    if a.dtype.kind == "u":  # uint64 above 2^63 would wrap when cast: reduce first
        return np.mod(a, np.uint64(p)).astype(np.int64)
    if a.dtype.kind not in "ib":
        raise InvalidInputError(f"values reduced mod {p} must be integers, got {a.dtype} entries")
    return np.mod(a.astype(np.int64, copy=False), p)


def reduce_floats(values: np.ndarray, p: int) -> np.ndarray:
    """Finite binary floats as the residues mod ``p`` of the dyadic rationals they are (``p`` odd).

    A float is ``m 2^e`` with an integer ``m`` of at most 53 bits, so its residue is
    ``(m mod p) (2^e mod p)``, with ``2^e`` inverted mod ``p`` when ``e < 0``: the
    rational's own residue, computed without building it (millions of trained
    weights in a few numpy passes).

    Parameters
    ----------
    values : numpy.ndarray
        A floating array (float16, float32 or float64; all finite).
    p : int
        An odd prime below ``2^31``.

    Returns
    -------
    numpy.ndarray
        ``int64`` residues in ``[0, p)``, of the shape of ``values``.

    Raises
    ------
    InvalidInputError
        When an entry is not finite, or ``p`` is even.

    Examples
    --------
    >>> p = 101
    >>> r = reduce_floats(np.array([0.75, -3.0, 2.0**-60]), p)
    >>> r.tolist() == [3 * pow(4, -1, p) % p, -3 % p, pow(2, -60, p)]
    True
    >>> reduce_floats(np.array([np.inf]), p)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: values reduced mod 101 must be finite
    """
    a = np.asarray(values, dtype=np.float64)  # widening float16/float32 is exact
    if p % 2 == 0 or not 2 < p < MAX_MODULUS:
        raise InvalidInputError(f"modulus {p} must be an odd prime below 2**31 to invert powers of two")
    if not np.isfinite(a).all():
        raise InvalidInputError(f"values reduced mod {p} must be finite")
    mantissa, exponent = np.frexp(a)  # a = mantissa 2^exponent, 1/2 <= |mantissa| < 1
    m = (mantissa * 2.0**53).astype(np.int64)  # exact: 53 significant bits
    e = exponent.astype(np.int64) - 53
    low = int(e.min()) if e.size else 0  # exponents span at most 2,100 values: a table, not a sort of them all
    table = np.array([pow(2, k, p) for k in range(low, int(e.max()) + 1 if e.size else 1)],
                     dtype=np.int64)  # Python inverts 2 mod p when k < 0
    return (np.mod(m, p) * table[e - low]) % p  # both factors below 2^31: exact in int64


def matmul(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """``a @ b mod p`` (batched like ``np.matmul``) for ``int64`` entries with ``|x| < p``; result in ``[0, p)``.

    Sums longer than :func:`chunk_length` are cut into runs, each reduced, so the
    result is exact whatever the inner dimension.

    Parameters
    ----------
    a, b : numpy.ndarray
        ``int64`` arrays with ``|x| < p`` (e.g. from :func:`reduce`) and matching inner dimension.
    p : int
        The modulus, below ``2^31``.

    Returns
    -------
    numpy.ndarray
        ``int64`` residues in ``[0, p)``.

    Examples
    --------
    >>> p = 2147483647                      # runs of 2 products: three terms are cut
    >>> a = np.full((1, 3), p - 1); b = np.full((3, 1), p - 1)
    >>> int(matmul(a, b, p)[0, 0]) == 3 * (p - 1) ** 2 % p
    True
    >>> int((a @ b)[0, 0]) == 3 * (p - 1) ** 2          # numpy alone wraps past 2^63 - 1
    False
    """
    k = a.shape[-1]
    run = chunk_length(p)
    if k <= run:  # k products, each at most (p - 1)^2: at most k (p - 1)^2 <= 2^63 - 1
        return np.matmul(a, b) % p
    out = None
    for s in range(0, k, run):
        part = np.matmul(a[..., s : s + run], b[..., s : s + run, :]) % p  # a run: exact as above
        out = part if out is None else (out + part) % p  # two residues: below 2p < 2^32
    return out
