"""One layer's witnesses for the deep dimension at every depth (docs/math.md §7.7).

``attngeo prove deep-dimension`` proves ``dim M = l a(2d - a) + d² - l`` for every
``l >= 1``, ``d >= a >= 1``, ``t >= 2`` by an induction on depth in the virtual
weights. The induction needs conditions on one layer, the same at every depth;
this module writes their witnesses:

* :func:`peeling_piece` (``a >= 2``): a 2x2 core ``C`` with ``det C != 0``,
  ``C + Cᵀ != 0`` and ``Λ_C: B -> BC + BᵀC + CB`` nonsingular; every layer is
  ``V_i = I``, ``Q_i = [I_a 0]``, ``K_i = [diag(Cᵀ, I_{a-2}) 0]``;
* :func:`rank_one_piece` (``a = 1``): ``M_1 = b_1 c_1ᵀ`` and
  ``M_j = b_j c_jᵀ``, ``b_j = e_0 + j e_1``, ``c_j = e_0 - j e_1`` (``j >= 2``),
  pairwise independent since ``det(b_j, b_j') = j' - j``,
  ``det(c_j, c_j') = j - j'`` and ``det(b_j, c_j') = -(j + j') <= -4``; at ``d = 1``
  every vector is ``1``.

Examples
--------
>>> peeling_piece()
{'lemma': 'peeling', 'core': [[1, 0], [0, 1]]}
>>> lam([[1, 0], [0, 1]]).det()      # 3 on the three symmetric directions, 1 on the skew one
27
"""

from __future__ import annotations

import itertools

import sympy

from ...exceptions import InvalidInputError

#: The core: the identity, so that every layer is the selector point ``Q_i = K_i = [I_a 0]``, ``V_i = I``.
CORE = [[1, 0], [0, 1]]


def lam(C) -> sympy.Matrix:
    """The 4x4 matrix of ``Λ_C(B) = BC + BᵀC + CB`` on 2x2 matrices ``B`` (row-major entries).

    It is the Jacobian at ``I`` of the width-2 layer ``S_C(Y) = Y YᵀC Y``; by Lemma 7.7.3 it decides, with
    ``det C``, whether ``S_M`` is dominant at ``[e_0, e_1]`` for a layer ``M`` whose block there is ``C``.

    ``det Λ_C = 3 det C (3 C_00² + 3 C_00 C_11 + 3 C_11² + C_01² + C_01 C_10 + C_10²)``, and the second factor is
    positive definite: for a real core, ``Λ_C`` is nonsingular exactly when ``C`` is.

    Examples
    --------
    >>> lam([[1, 0], [0, 0]]).det(), lam([[1, 2], [-2, 1]]).det()
    (0, 195)
    """
    C = sympy.Matrix(C)
    cols = []
    for r, s in itertools.product(range(2), repeat=2):
        B = sympy.zeros(2, 2)
        B[r, s] = 1
        cols.append(list(B * C + B.T * C + C * B))
    return sympy.Matrix(cols).T


def peeling_piece(core=CORE) -> dict:
    """The peeling lemma's witness ``core``, after testing (K1)–(K3) on it (Lemma 7.7.3).

    Raises
    ------
    InvalidInputError
        The core fails one of them (the message names it).

    Examples
    --------
    >>> peeling_piece()["core"]
    [[1, 0], [0, 1]]
    >>> peeling_piece([[1, 1], [1, 1]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: core [[1, 1], [1, 1]]: det C = 0 (K1)
    """
    C = sympy.Matrix(core)
    for fails, why in ((C.det() == 0, "det C = 0 (K1)"), (C + C.T == sympy.zeros(2, 2), "C is skew (K2)"),
                       (lam(core).det() == 0, "Λ_C is singular (K3)")):
        if fails:
            raise InvalidInputError(f"core {core}: {why}")
    return {"lemma": "peeling", "core": [list(map(int, row)) for row in core]}


def rank_one_piece(width_one: bool = False) -> dict:
    """The rank-one lemma's witness: first and later layers' vectors (``later``: ``[base, slope]`` in ``j``).

    Examples
    --------
    >>> rank_one_piece()["later"]
    {'b': [[1, 0], [0, 1]], 'c': [[1, 0], [0, -1]]}
    >>> rank_one_piece(width_one=True)["first"]
    {'b': [1], 'c': [1]}
    """
    if width_one:
        return {"lemma": "rank-one", "first": {"b": [1], "c": [1]}, "later": {"b": [[1], [0]], "c": [[1], [0]]}}
    return {"lemma": "rank-one", "first": {"b": [1, 0], "c": [1, 0]},
            "later": {"b": [[1, 0], [0, 1]], "c": [[1, 0], [0, -1]]}}
