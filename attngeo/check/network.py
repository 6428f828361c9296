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
    """The network on nested lists (``values`` in flattening order): per layer ``[Y +] sum_j V_j Y M o (Y^T K_j^T Q_j Y)``.

    ``V_j = O_j U_j`` when the architecture has value ranks, ``M`` the causal
    mask (score ``(s, j)`` kept iff ``s <= j``) or all ones, ``Y +`` when residual.

    >>> from flint import fmpq
    >>> from attngeo.check.arch import Arch
    >>> phi(Arch((2, 1), (1,), 2), [fmpq(1), 0, 0, fmpq(1), fmpq(1), 0], [[fmpq(1), 0], [0, fmpq(1)]])
    [[0, 0]]

    Two heads add; a causal mask hides the later token from the first:

    >>> one = [fmpq(1)] * 3
    >>> phi(Arch((1, 1), (1,), 2, heads=(2,)), one * 2, [[fmpq(1), fmpq(2)]])
    [[10, 20]]
    >>> phi(Arch((1, 1), (1,), 2, heads=(2,), causal=True), one * 2, [[fmpq(1), fmpq(2)]])
    [[2, 20]]
    """
    Y, W, t = X, arch.weights(values), arch.tokens
    for i in range(1, len(arch.ranks) + 1):
        out = None
        for w in arch.head_weights(W, i):
            V = w["V"] if "V" in w else _mm(w["O"], w["U"])
            G = _mm(_mm(_t(Y), _mm(_t(w["K"]), w["Q"])), Y)
            if arch.causal:
                G = [[G[s][c] if s <= c else 0 * G[s][c] for c in range(t)] for s in range(t)]
            term = _mm(_mm(V, Y), G)
            out = term if out is None else [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(out, term)]
        Y = [[a + b for a, b in zip(r1, r2)] for r1, r2 in zip(Y, out)] if arch.residual else out
    return Y
