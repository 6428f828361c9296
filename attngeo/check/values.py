"""Typed, bounded reading of certificate fields.

Every accessor either returns a value of the promised type within its bounds
or rejects the certificate with a message naming the field. Rationals are
read by a strict grammar (``-12``, ``3/4``) with bounded digits, never through
``Fraction`` or ``float`` (``Fraction("1e999999999")`` would build a billion-digit
integer).
"""

from __future__ import annotations

import re
import reprlib

import numpy as np
from flint import fmpq, fmpq_mat, fmpz

from ..exceptions import CertificateRejected
from .limits import MAX_DIGITS, MAX_PRIME

_RATIONAL = re.compile(r"-?[0-9]{1,%d}(/[0-9]{1,%d})?" % (MAX_DIGITS, MAX_DIGITS))


def reject(reason: str):
    """Refuse the certificate: a claim that does not verify (exit 1).

    Parameters
    ----------
    reason : str
        What failed, naming the field; it becomes the one-line message.

    Raises
    ------
    CertificateRejected
        Always.

    Examples
    --------
    >>> from attngeo.check.values import reject
    >>> reject("lower = 7 but the witness has rank 6")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower = 7 but the witness has rank 6
    """
    raise CertificateRejected(reason)


def field(data: dict, key: str, where: str = ""):
    """The value of a required field of an object.

    Parameters
    ----------
    data : dict
        The object (anything else is refused).
    key : str
        The field.
    where : str
        Prefix naming the object in a message, e.g. ``"argument."``.

    Raises
    ------
    CertificateRejected
        ``data`` is not an object, or it lacks ``key``.

    Examples
    --------
    >>> from attngeo.check.values import field
    >>> field({"rank": 3}, "rank")
    3
    >>> field({"rank": 3}, "rows", "lower_witness.")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: missing field lower_witness.rows
    """
    if not isinstance(data, dict):
        reject(f"{where or 'the certificate'} must be an object")
    if key not in data:
        reject(f"missing field {where}{key}")
    return data[key]


def obj(value, name: str) -> dict:
    """``value`` if it is a JSON object, else the certificate is refused.

    Examples
    --------
    >>> from attngeo.check.values import obj
    >>> obj({"A": []}, "evidence")
    {'A': []}
    >>> obj([1, 2], "evidence")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: evidence must be an object
    """
    if not isinstance(value, dict):
        reject(f"{name} must be an object")
    return value


def seq(value, name: str, length: int | None = None) -> list:
    """``value`` if it is a list (of exactly ``length`` entries when given), else the certificate is refused.

    Examples
    --------
    >>> from attngeo.check.values import seq
    >>> seq([0, 1], "argument.entry", 2)
    [0, 1]
    >>> seq([0, 1, 2], "argument.entry", 2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: argument.entry must have 2 entries, it has 3
    """
    if not isinstance(value, list):
        reject(f"{name} must be a list")
    if length is not None and len(value) != length:
        reject(f"{name} must have {length} entries, it has {len(value)}")
    return value


def integer(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    """``value`` if it is an integer in ``[lo, hi]`` (JSON ``true`` is not an integer), else a refusal.

    Examples
    --------
    >>> from attngeo.check.values import integer
    >>> integer(5, "rank", 0, 6)
    5
    >>> integer(True, "rank")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: rank must be an integer, got True
    >>> integer(7, "rank", 0, 6)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: rank = 7 is above 6
    """
    if isinstance(value, bool) or not isinstance(value, int):
        reject(f"{name} must be an integer, got {_show(value)}")
    if lo is not None and value < lo:
        reject(f"{name} = {value} is below {lo}")
    if hi is not None and value > hi:
        reject(f"{name} = {value} is above {hi}")
    return value


def boolean(value, name: str) -> bool:
    """``value`` if it is ``true`` or ``false`` (not 0 or 1), else a refusal.

    Examples
    --------
    >>> from attngeo.check.values import boolean
    >>> boolean(False, "certified")
    False
    >>> boolean(1, "certified")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: certified must be true or false, got 1
    """
    if not isinstance(value, bool):
        reject(f"{name} must be true or false, got {_show(value)}")
    return value


def rational(value, name: str) -> fmpq:
    """An exact rational from a string ``"-12"`` or ``"3/4"``, by a strict grammar with bounded digits.

    Exponents, decimals and JSON numbers are refused: ``"1e999999999"`` would
    build a billion-digit integer through ``Fraction``.

    Raises
    ------
    CertificateRejected
        Not such a string, more than ``MAX_DIGITS`` digits, or a zero denominator.

    Examples
    --------
    >>> from attngeo.check.values import rational
    >>> rational("-6/8", "point[0]")    # reduced, exact
    -3/4
    >>> rational("1e9", "point[0]")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: point[0] must be a rational written as a string like "-3/4" (at most 2000 digits each), got '1e9'
    >>> rational("1/0", "point[0]")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: point[0] = '1/0' has denominator 0
    """
    if not isinstance(value, str) or not _RATIONAL.fullmatch(value):
        reject(f"{name} must be a rational written as a string like \"-3/4\" "
               f"(at most {MAX_DIGITS} digits each), got {_show(value)}")
    num, _, den = value.partition("/")
    if den and int(den) == 0:
        reject(f"{name} = {value!r} has denominator 0")
    return fmpq(int(num), int(den) if den else 1)


def matrix(value, rows: int, cols: int, name: str) -> fmpq_mat:
    """A ``rows x cols`` matrix of rationals written as strings (an exact ``fmpq_mat``).

    Raises
    ------
    CertificateRejected
        The wrong shape, or an entry :func:`rational` refuses.

    Examples
    --------
    >>> from attngeo.check.values import matrix
    >>> matrix([["1", "2"], ["3", "1/2"]], 2, 2, "evidence.A").det()
    -11/2
    >>> matrix([["1", "2"]], 2, 2, "evidence.A")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: evidence.A must be a 2x2 matrix
    """
    if not isinstance(value, list) or len(value) != rows or any(not isinstance(r, list) or len(r) != cols for r in value):
        reject(f"{name} must be a {rows}x{cols} matrix")
    if rows == 0 or cols == 0:
        return fmpq_mat(rows, cols)
    return fmpq_mat([[rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(value)])


def int_array(value, shape: tuple, name: str, bits: int = 62) -> np.ndarray:
    """A rectangular array of integers of at most ``bits`` bits, as int64.

    The bound is checked on the Python integers, before numpy sees them, so a
    huge entry cannot wrap around.

    Raises
    ------
    CertificateRejected
        The wrong shape, a non-integer, or an entry of ``bits`` bits or more.

    Examples
    --------
    >>> from attngeo.check.values import int_array
    >>> X = int_array([[1, -2], [3, 4]], (2, 2), "inputs[0]")
    >>> X.dtype.name, X.shape, X.tolist()
    ('int64', (2, 2), [[1, -2], [3, 4]])
    >>> int_array([[1, 2], [3, 2**62]], (2, 2), "inputs[0]")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: inputs[0] contains 4611686018427387904, not an integer of at most 62 bits
    """
    def walk(v, depth):
        if depth == len(shape):
            if isinstance(v, bool) or not isinstance(v, int) or abs(v) >= 1 << bits:
                reject(f"{name} contains {_show(v)}, not an integer of at most {bits} bits")
            return
        if not isinstance(v, list) or len(v) != shape[depth]:
            reject(f"{name} is not an array of shape {shape}")
        for item in v:
            walk(item, depth + 1)

    walk(value, 0)
    return np.array(value, dtype=np.int64).reshape(shape)


def index_list(value, n: int, bound: int, name: str) -> list[int]:
    """``n`` distinct indices in ``range(bound)`` (the rows or columns of a minor).

    Examples
    --------
    >>> from attngeo.check.values import index_list
    >>> index_list([4, 0, 2], 3, 5, "rows")
    [4, 0, 2]
    >>> index_list([0, 2, 2], 3, 5, "rows")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: rows repeats an index
    """
    if not isinstance(value, list) or len(value) != n:
        reject(f"{name} must list exactly {n} indices")
    for v in value:
        integer(v, f"entry of {name}", 0, bound - 1)
    if len(set(value)) != n:
        reject(f"{name} repeats an index")
    return value


def prime(value, name: str) -> int:
    """A prime modulus below ``MAX_PRIME`` (``2**26``), proved prime by FLINT.

    Examples
    --------
    >>> from attngeo.check.values import prime
    >>> prime(65537, "lower_witness.prime")
    65537
    >>> prime(65535, "lower_witness.prime")     # 3 * 5 * 17 * 257
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower_witness.prime = 65535 is not prime
    >>> prime(2**31 - 1, "lower_witness.prime")  # prime, but products of residues would overflow
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower_witness.prime = 2147483647 is above 67108863
    """
    p = integer(value, name, 2, MAX_PRIME - 1)
    if not fmpz(p).is_prime():
        reject(f"{name} = {p} is not prime")
    return p


_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = 40
_SHORT.maxlist = _SHORT.maxdict = 4
_SHORT.maxlevel = 2


def _show(value) -> str:
    """A short, single-line rendering of an untrusted value for an error message."""
    return _SHORT.repr(value)
