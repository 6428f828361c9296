"""The price of evaluating the network on polynomials, counted from an architecture's sizes before any is built.

A deep-fiber certificate makes the checker evaluate the network (:func:`attngeo.check.network.phi`) with
polynomial entries: the equations in the free weights of the gauge slice, once per recorded input; the
network as a polynomial in the input ``X`` at each listed point; and once more in ``(z, X)`` for the factors
of a parametrization. Its entries grow like ``3^l`` in degree and, at honest sizes, to a few hundred thousand
terms; widths 8,8,8,8 would need more than the machine's memory (a 3 KB file). :func:`phi_price` bounds the
term products of one evaluation, product by product as ``phi`` makes them: multiplying polynomials of ``u``
and ``v`` terms costs ``u v`` and gives at most ``u v`` terms, and never more than the monomials its degree
allows in the variables it can hold (the weights of each block up to their degree, gauge-fixed entries
being numbers). A product of terms costs more with more variables (python-flint packs a monomial's
exponents in words): the price counts words, ``1 + variables // 8`` per term product. Measured (loaded 2-core
machine): 0.2 to 3.7 ns a unit at the sizes where it matters (widths 4,3,3 ranks 2,2: 2.5e10 units in 5.2 s;
4,4,4: 3.6e9 in 2.7 s; widths 8,8 with four heads, 364 variables: 3e8 in 1.1 s); the bound is loose for deep
networks (their caps overcount), which is safe. The prover prices its own equations with the same function
before it builds them.

The network as a polynomial in its input ``X`` (weights numbers), at widths 2,2,2 and 8,8,8,8:

>>> from attngeo.check.arch import Arch
>>> phi_price(Arch((2, 2, 2), (2, 2), 2), {}, x_vars=4)
(58224, 715)
>>> phi_price(Arch((8, 8, 8, 8), (3, 3, 3), 2), {}, x_vars=16)[0] > 10**17
True
"""

from __future__ import annotations

from math import comb

def _cap(degree: dict, sizes: dict) -> int:
    """Monomials of at most ``degree[g]`` in each group ``g`` of ``sizes[g]`` variables: a bound on any entry's terms."""
    out = 1
    for g, k in degree.items():
        if k and sizes.get(g):
            out *= comb(sizes[g] + k, k)
    return out


def _add(*degrees: dict) -> dict:
    out: dict = {}
    for deg in degrees:
        for g, k in deg.items():
            out[g] = out.get(g, 0) + k
    return out


def _join(a: dict, b: dict) -> dict:
    return {g: max(a.get(g, 0), b.get(g, 0)) for g in set(a) | set(b)}


def phi_price(arch, free: dict, x_vars: int = 0, weight_terms: int = 1, weight_degree: int = 1) -> tuple[int, int]:
    """The work of one ``phi(arch, weights, X)`` on polynomials, and the terms of one output entry, at most.

    Parameters
    ----------
    arch : attngeo.check.arch.Arch
    free : dict
        ``(layer, head, name) -> count`` of the block's entries that are polynomials (the free weights); the
        other entries are numbers.
    x_vars : int
        Variables of the input ``X`` (0: ``X`` is numbers).
    weight_terms, weight_degree : int
        Terms of a free weight and its degree in a variable group of its own: 1 and 1 for the weights
        themselves, ``D`` and ``D - 1`` for polynomials of a parametrization in one variable ``z``.

    Returns
    -------
    (int, int)
        A bound on the products of terms ``phi`` makes, in words (``1 + variables // 8`` each), and on the
        terms of one entry of its output.

    Examples
    --------
    One layer ``2 -> 2`` of rank 1 with every weight free (8 variables: two words a term) at numeric inputs:
    an output entry is a sum of ``V_km K_p Q_n x_ms x_ps x_nj`` over ``m, n, p, s``, 16 terms at most.

    >>> from attngeo.check.arch import Arch
    >>> phi_price(Arch((2, 2), (1,), 2), {(1, 1, "Q"): 2, (1, 1, "K"): 2, (1, 1, "V"): 4})
    (200, 16)
    """
    one = weight_degree if weight_terms > 1 else 1
    sizes = {("X",): x_vars}
    if weight_terms > 1:  # a parametrization: every free weight is a polynomial in the one variable z
        sizes[("z",)] = 1
    else:
        sizes.update({key: n for key, n in free.items() if n})

    def weight(i: int, j: int, name: str) -> tuple[int, dict]:
        if not free.get((i, j, name)):
            return 1, {}
        return weight_terms, ({("z",): one} if weight_terms > 1 else {(i, j, name): 1})

    total = 0

    def made(count: int, work: int, degree: dict) -> int:
        """``count`` entries, each a sum of products costing ``work`` term products: its terms, at most."""
        nonlocal total
        total += count * work
        return min(work, _cap(degree, sizes))

    y, deg = 1, ({("X",): 1} if x_vars else {})
    t = arch.tokens
    for i, a in enumerate(arch.ranks, start=1):
        d_in, d_out = arch.widths[i - 1], arch.widths[i]
        out, out_deg = 0, {}
        for j in range(1, arch.head_count(i) + 1):
            (q, dq), (k, dk) = weight(i, j, "Q"), weight(i, j, "K")
            dA = _add(dq, dk)
            tA = made(d_in * d_in, a * q * k, dA)  # A = K^T Q
            dYA = _add(deg, dA)
            tYA = made(t * d_in, d_in * y * tA, dYA)  # Y^T A
            dG = _add(deg, dYA)
            tG = made(t * t, d_in * tYA * y, dG)  # (Y^T A) Y
            if arch.value_ranks is None:
                tV, dV = weight(i, j, "V")
            else:
                (o, do), (u, du) = weight(i, j, "O"), weight(i, j, "U")
                dV = _add(do, du)
                tV = made(d_out * d_in, arch.value_ranks[i - 1] * o * u, dV)  # V = O U
            dVY = _add(dV, deg)
            tVY = made(d_out * t, d_in * tV * y, dVY)  # V Y
            dT = _add(dVY, dG)
            tT = made(d_out * t, t * tVY * tG, dT)  # (V Y) G
            out, out_deg = out + tT, _join(out_deg, dT)
        if arch.residual:
            out, out_deg = out + y, _join(out_deg, deg)
        y, deg = min(out, _cap(out_deg, sizes)), out_deg
    return total * (1 + sum(sizes.values()) // 8), y
