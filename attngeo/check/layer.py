"""One lightning layer as the checker writes it: the matrix of quadratic forms ``F(y) = V y yᵀ A`` (docs/math.md §1.1).

For ``t >= 2`` the layer's function determines and is determined by ``F``,
``F_kp(y) = (V y)_k (Aᵀ y)_p`` (docs/fibers.md Lemma 1), so every single-layer
kind works on ``F``: the fibers (as products of linear forms), the tangent
images and points of the singular-point and strata kinds, the Gram matrices of
the boundary kind, and the coordinates ``c_{k,p,mn}`` (the coefficient of
``y_m y_n``, ``m <= n``, in ``F_kp``) of the implicit-equation kinds. The checker
expands the product in ``y`` and reads coefficients off, instead of writing
``V_km A_np + V_kn A_mp`` as the prover does; this module is that expansion, once.
"""

from __future__ import annotations

from flint import fmpq_mat

from .poly import ring
from .values import matrix


def split(point: list, a: int, d: int, dd: int, where: str) -> tuple[fmpq_mat, fmpq_mat, fmpq_mat]:
    """``(Q, K, V)`` of a flat single-layer point (rationals as strings, flattening order ``Q, K, V``).

    Parameters
    ----------
    point : list of str
        ``2 a d + d' d`` rationals.
    a, d, dd : int
        Rank, input width ``d``, output width ``d'``.
    where : str
        The field, for messages.

    Returns
    -------
    tuple of fmpq_mat
        ``Q`` (``a x d``), ``K`` (``a x d``), ``V`` (``d' x d``).

    Examples
    --------
    >>> from attngeo.check.layer import split
    >>> Q, K, V = split(["1", "2", "3", "5", "1", "-1/2"], 1, 2, 1, "point")
    >>> Q.tolist(), K.tolist(), V.tolist()
    ([[1, 2]], [[3, 5]], [[1, -1/2]])
    """
    return (matrix([point[i * d:(i + 1) * d] for i in range(a)], a, d, f"{where} Q"),
            matrix([point[(a + i) * d:(a + i + 1) * d] for i in range(a)], a, d, f"{where} K"),
            matrix([point[(2 * a + i) * d:(2 * a + i + 1) * d] for i in range(dd)], dd, d, f"{where} V"))


def forms(A, V, y) -> list[list]:
    """``F[k][p] = (V y)_k (Aᵀ y)_p``: the layer as a matrix of quadratic forms in the polynomials ``y``.

    ``A`` (``d x d``) and ``V`` (``d' x d``) are rational matrices or nested lists of polynomials (in the ring
    of ``y``, which may hold more variables: ``ε`` for a tangent, the weights for a parametrization).

    Examples
    --------
    ``Q = (1, 2)``, ``K = (3, 5)``, ``V = (1, 1)``: ``A = Kᵀ Q`` has columns
    ``(3, 5)`` and ``(6, 10)``, so ``F = (y0 + y1)(3 y0 + 5 y1) (1, 2)``:

    >>> from flint import fmpq_mat
    >>> from attngeo.check.layer import forms
    >>> from attngeo.check.poly import ring
    >>> y0, y1 = ring(("y0", "y1")).gens()
    >>> A = fmpq_mat([[3, 5]]).transpose() * fmpq_mat([[1, 2]])
    >>> F = forms(A, fmpq_mat([[1, 1]]), (y0, y1))
    >>> F[0][0] == (y0 + y1) * (3 * y0 + 5 * y1), F[0][1] == 2 * F[0][0]
    (True, True)
    """
    A, V = (M.tolist() if isinstance(M, fmpq_mat) else M for M in (A, V))
    zero = 0 * y[0]
    d = len(y)
    ell = [sum((row[m] * y[m] for m in range(d)), zero) for row in V]
    em = [sum((A[n][p] * y[n] for n in range(d)), zero) for p in range(d)]
    return [[lk * mp for mp in em] for lk in ell]


def gram(form, d: int) -> fmpq_mat:
    """The symmetric Gram matrix of a quadratic form in ``d`` variables (zero for the zero form).

    >>> from attngeo.check.poly import ring
    >>> y0, y1 = ring(("y0", "y1")).gens()
    >>> gram(3 * y0 * y0 + 4 * y0 * y1, 2).tolist()
    [[3, 2], [2, 0]]
    """
    G = fmpq_mat(d, d)
    for e, c in form.to_dict().items():
        i, j = [i for i, k in enumerate(e) for _ in range(k)]
        if i == j:
            G[i, i] = c
        else:
            G[i, j] = G[j, i] = c / 2
    return G


def coordinates(d: int, dd: int) -> list[tuple[int, int, int, int]]:
    """The labels ``(k, p, m, n)``, ``m <= n``, of the coordinates, in their order.

    Examples
    --------
    >>> from attngeo.check.layer import coordinates
    >>> coordinates(2, 1)
    [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 1), (0, 1, 0, 0), (0, 1, 0, 1), (0, 1, 1, 1)]
    """
    return [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]


def coefficients(A, V, y: tuple, cut: int) -> list[dict]:
    """``c = φ``: each coordinate's coefficient, as ``{exponents: coefficient}`` on the ring's first ``cut`` variables.

    ``A``, ``V`` as for :func:`forms`, in a ring whose last variables are ``y``: the coefficient of ``y_m y_n``
    in ``F_kp`` is a polynomial in the others (the weights of a parametrization, ``ε`` of a tangent, or none).

    Examples
    --------
    ``d = d' = 1``: the one coordinate of ``(V y)(A y) = V A y^2``:

    >>> from attngeo.check.layer import coefficients
    >>> from attngeo.check.poly import ring
    >>> a, v, y = ring(("a", "v", "y")).gens()
    >>> coefficients([[a]], [[v]], (y,), 2)
    [{(1, 1): 1}]
    """
    d = len(y)
    F = forms(A, V, y)
    out = []
    for k, p, m, n in coordinates(d, len(F)):
        target = tuple(int(i == m) + int(i == n) for i in range(d))
        out.append({e[:cut]: c for e, c in F[k][p].to_dict().items() if e[cut:] == target})
    return out


def parametrization(d: int, dd: int, a: int, names: list[str]) -> tuple:
    """The ring of the weights ``names`` and ``c = φ(W)``, one polynomial per coordinate.

    ``names`` are ``A_n_p`` and ``V_k_m`` when ``a >= d``, else ``Q_i_p``, ``K_i_n``
    and ``V_k_m`` with ``A = Kᵀ Q``.

    Examples
    --------
    ``c_{1,1,12}``, the coefficient of ``y_1 y_2`` in ``(V y)_1 (Aᵀ y)_1``:

    >>> from attngeo.check.layer import parametrization
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
