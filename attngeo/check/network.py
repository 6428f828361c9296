"""The checker's own network on nested lists of exact values or polynomials (deep fibers, discovered fields).

``phi(arch, weights, X)`` applies ``Y <- V Y (Y^T K^T Q Y)`` layer by layer with
plain list arithmetic, so the same code runs on rationals and on python-flint
polynomials; it shares nothing with the prover's network.

>>> from flint import fmpq
>>> from attngeo.check.arch import Arch
>>> phi(Arch((1, 1), (1,), 1), [fmpq(2), fmpq(3), fmpq(5)], [[fmpq(1)]])   # V x (x K Q x) = 5 * 6
[[30]]
"""

from __future__ import annotations


def _mm(a: list, b: list) -> list:
    return [[sum((a[i][k] * b[k][j] for k in range(len(b))), 0 * a[0][0]) for j in range(len(b[0]))]
            for i in range(len(a))]


def _t(a: list) -> list:
    return [list(r) for r in zip(*a)]


def phi(arch, values: list, X: list) -> list:
    """The network on nested lists: ``Y <- V Y (Y^T K^T Q Y)`` per layer (``values`` in flattening order).

    >>> from flint import fmpq
    >>> from attngeo.check.arch import Arch
    >>> phi(Arch((2, 1), (1,), 2), [fmpq(1), 0, 0, fmpq(1), fmpq(1), 0], [[fmpq(1), 0], [0, fmpq(1)]])
    [[0, 0]]
    """
    Y = X
    for i, name, rows, cols, off in arch.shapes():
        M = [values[off + r * cols:off + (r + 1) * cols] for r in range(rows)]
        if name == "Q":
            Q = M
        elif name == "K":
            K = M
        else:
            Y = _mm(_mm(M, Y), _mm(_mm(_t(Y), _mm(_t(K), Q)), Y))
    return Y
