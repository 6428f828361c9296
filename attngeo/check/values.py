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
    """A claim that does not verify (exit 1)."""
    raise CertificateRejected(reason)


def field(data: dict, key: str, where: str = ""):
    """The value of a required field."""
    if not isinstance(data, dict):
        reject(f"{where or 'the certificate'} must be an object")
    if key not in data:
        reject(f"missing field {where}{key}")
    return data[key]


def obj(value, name: str) -> dict:
    if not isinstance(value, dict):
        reject(f"{name} must be an object")
    return value


def seq(value, name: str, length: int | None = None) -> list:
    if not isinstance(value, list):
        reject(f"{name} must be a list")
    if length is not None and len(value) != length:
        reject(f"{name} must have {length} entries, it has {len(value)}")
    return value


def integer(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        reject(f"{name} must be an integer, got {_show(value)}")
    if lo is not None and value < lo:
        reject(f"{name} = {value} is below {lo}")
    if hi is not None and value > hi:
        reject(f"{name} = {value} is above {hi}")
    return value


def boolean(value, name: str) -> bool:
    if not isinstance(value, bool):
        reject(f"{name} must be true or false, got {_show(value)}")
    return value


def rational(value, name: str) -> fmpq:
    if not isinstance(value, str) or not _RATIONAL.fullmatch(value):
        reject(f"{name} must be a rational written as a string like \"-3/4\" "
               f"(at most {MAX_DIGITS} digits each), got {_show(value)}")
    num, _, den = value.partition("/")
    if den and int(den) == 0:
        reject(f"{name} = {value!r} has denominator 0")
    return fmpq(int(num), int(den) if den else 1)


def matrix(value, rows: int, cols: int, name: str) -> fmpq_mat:
    """A ``rows x cols`` matrix of rationals written as strings."""
    if not isinstance(value, list) or len(value) != rows or any(not isinstance(r, list) or len(r) != cols for r in value):
        reject(f"{name} must be a {rows}x{cols} matrix")
    if rows == 0 or cols == 0:
        return fmpq_mat(rows, cols)
    return fmpq_mat([[rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(value)])


def int_array(value, shape: tuple, name: str, bits: int = 62) -> np.ndarray:
    """A rectangular array of integers of at most ``bits`` bits, as int64."""
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
    """``n`` distinct indices in ``range(bound)``."""
    if not isinstance(value, list) or len(value) != n:
        reject(f"{name} must list exactly {n} indices")
    for v in value:
        integer(v, f"entry of {name}", 0, bound - 1)
    if len(set(value)) != n:
        reject(f"{name} repeats an index")
    return value


def prime(value, name: str) -> int:
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
