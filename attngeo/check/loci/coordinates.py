"""The single-layer coordinates and parametrization as the checker builds them (docs/math.md §1.1).

``c_{k,p,mn}`` is the coefficient of ``y_m y_n`` (``m <= n``) in
``F_kp(y) = (V y)_k (A^T y)_p``. The checker expands that product in ``y`` and
reads the coefficients off, instead of writing ``V_km A_np + V_kn A_mp`` as the
prover does; the implicit-equation checkers compose equations with it.
"""

from __future__ import annotations

from ..poly import ring


def coordinates(d: int, dd: int) -> list[tuple[int, int, int, int]]:
    """The labels ``(k, p, m, n)``, ``m <= n``, of the coordinates, in their order.

    Examples
    --------
    >>> from attngeo.check.loci.coordinates import coordinates
    >>> coordinates(2, 1)
    [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 0, 0), (0, 1, 0, 1), (0, 1, 1, 1)]
    """
    return [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]


def parametrization(d: int, dd: int, a: int, names: list[str]) -> tuple:
    """The ring of the weights ``names`` and ``c = φ(W)``, one polynomial per coordinate.

    ``names`` are ``A_n_p`` and ``V_k_m`` when ``a >= d``, else ``Q_i_p``, ``K_i_n``
    and ``V_k_m`` with ``A = K^T Q``.

    Examples
    --------
    ``c_{1,1,12}``, the coefficient of ``y_1 y_2`` in ``(V y)_1 (A^T y)_1``:

    >>> from attngeo.check.loci.coordinates import parametrization
    >>> names = ["A_1_1", "A_1_2", "A_2_1", "A_2_2", "V_1_1", "V_1_2"]
    >>> ctx, phi = parametrization(2, 1, 2, names)
    >>> phi[1]
    A_2_1*V_1_1 + A_1_1*V_1_2
    """
    ctx = ring(tuple(names) + tuple(f"y{i}" for i in range(d)))
    g = dict(zip(names, ctx.gens()))
    y = ctx.gens()[len(names):]
    if a >= d:
        A = [[g[f"A_{n + 1}_{p + 1}"] for p in range(d)] for n in range(d)]
    else:
        A = [[sum(g[f"K_{i + 1}_{n + 1}"] * g[f"Q_{i + 1}_{p + 1}"] for i in range(a)) for p in range(d)]
             for n in range(d)]
    V = [[g[f"V_{k + 1}_{m + 1}"] for m in range(d)] for k in range(dd)]
    pctx = ring(names)
    return pctx, [pctx.from_dict(c) for c in coefficients(A, V, y, len(names))]


def coefficients(A: list, V: list, y: tuple, cut: int) -> list[dict]:
    """``c = φ`` for any polynomial matrices ``A`` (``d x d``) and ``V`` (``d' x d``): one ``{exponents: coefficient}`` each.

    ``A`` and ``V`` live in a ring whose last variables are ``y``; each coefficient
    of ``y_m y_n`` in ``(V y)_k (A^T y)_p`` is returned on the first ``cut`` variables.

    Examples
    --------
    ``d = d' = 1``: the one coordinate of ``(V y)(A y) = V A y^2``:

    >>> from attngeo.check.loci.coordinates import coefficients
    >>> from attngeo.check.poly import ring
    >>> a, v, y = ring(("a", "v", "y")).gens()
    >>> coefficients([[a]], [[v]], (y,), 2)
    [{(1, 1): 1}]
    """
    d = len(y)
    ell = [sum(row[m] * y[m] for m in range(d)) for row in V]
    em = [sum(A[n][p] * y[n] for n in range(d)) for p in range(d)]
    out = []
    for k, p, m, n in coordinates(d, len(V)):
        target = tuple(int(i == m) + int(i == n) for i in range(d))
        out.append({e[:cut]: c for e, c in (ell[k] * em[p]).to_dict().items() if e[cut:] == target})
    return out
