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
    """A positive entrywise function ``f`` and its derivative, both on ``arb`` balls.

    Parameters
    ----------
    name : str
        The value of ``Architecture(normalization=...)`` that selects it.
    f, fprime : callable
        ``arb -> arb``; ``f`` must be positive on the reals (each score column is
        divided by its sum) and ``fprime`` its derivative (the Jacobian's chain rule).
    description : str

    Examples
    --------
    Softmax: ``f = f' = exp``. Balls enclose the exact values, so identities hold
    as containment (``f(0) = 1`` is exact):

    >>> from flint import arb
    >>> from attngeo.model.normalizer import NORMALIZERS
    >>> softmax = NORMALIZERS["softmax"]
    >>> softmax.f(arb(0)) == 1, softmax.fprime(arb(0)) == 1
    (True, True)
    >>> (softmax.f(arb(3)) - softmax.f(arb(1)) * softmax.f(arb(2))).contains(0)   # e^3 = e^1 e^2
    True
    >>> softmax.f(arb(-50)) > 0
    True
    """

    name: str
    f: Callable  # arb -> arb, positive on the reals
    fprime: Callable  # arb -> arb
    description: str


NORMALIZERS: dict[str, Normalizer] = {
    "softmax": Normalizer("softmax", lambda x: x.exp(), lambda x: x.exp(), "column-wise softmax: f = exp"),
}


def register(name: str, f: Callable, fprime: Callable, description: str = "") -> Normalizer:
    """Add a positive normalizer ``f`` (with derivative ``fprime``), both on ``arb`` balls.

    Its name then becomes a valid ``Architecture(normalization=...)``.

    Parameters
    ----------
    name : str
        New and nonempty; not ``"lightning"`` nor an already registered name.
    f, fprime : callable
        ``arb -> arb``: the function (positive on the reals) and its derivative.
    description : str, optional
        Defaults to ``name``.

    Returns
    -------
    Normalizer

    Raises
    ------
    InvalidInputError
        When the name is empty, ``"lightning"`` or taken.

    Examples
    --------
    >>> from flint import arb
    >>> from attngeo import Architecture
    >>> from attngeo.model.normalizer import NORMALIZERS, register
    >>> square = register("example-square", lambda x: x * x + 1, lambda x: 2 * x, "f = y^2 + 1")
    >>> square.f(arb(2)) == 5, square.fprime(arb(3)) == 6
    (True, True)
    >>> str(Architecture((2, 2), (1,), normalization="example-square"))
    'widths 2,2, ranks 1, t=2, example-square'
    >>> register("example-square", lambda x: x.exp(), lambda x: x.exp())
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: normalizer name 'example-square' must be a new, nonempty name other than 'lightning'
    >>> del NORMALIZERS["example-square"]   # leave the registry as it was
    """
    if not isinstance(name, str) or not name or name == "lightning" or name in NORMALIZERS:
        raise InvalidInputError(f"normalizer name {name!r} must be a new, nonempty name other than 'lightning'")
    NORMALIZERS[name] = Normalizer(name, f, fprime, description or name)
    return NORMALIZERS[name]
