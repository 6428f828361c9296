"""Positive entrywise normalizers of attention scores, as ball-arithmetic functions.

A normalized layer is ``V X S(X^T A X)`` where ``S`` applies a positive function
``f`` to every score and divides each column by its sum (docs/math.md §1).
Softmax is ``f = exp``. Each normalizer gives ``f`` and ``f'`` on python-flint
``arb`` balls; :func:`register` adds one (its name then becomes a valid
``Architecture(normalization=...)``).

>>> from flint import arb
>>> NORMALIZERS["softmax"].f(arb(0)) == 1
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..exceptions import InvalidInputError


@dataclass(frozen=True)
class Normalizer:
    name: str
    f: Callable  # arb -> arb, positive on the reals
    fprime: Callable  # arb -> arb
    description: str


NORMALIZERS: dict[str, Normalizer] = {
    "softmax": Normalizer("softmax", lambda x: x.exp(), lambda x: x.exp(), "column-wise softmax: f = exp"),
}


def register(name: str, f: Callable, fprime: Callable, description: str = "") -> Normalizer:
    """Add a positive normalizer ``f`` (with derivative ``fprime``), both on ``arb`` balls."""
    if not isinstance(name, str) or not name or name == "lightning" or name in NORMALIZERS:
        raise InvalidInputError(f"normalizer name {name!r} must be a new, nonempty name other than 'lightning'")
    NORMALIZERS[name] = Normalizer(name, f, fprime, description or name)
    return NORMALIZERS[name]
