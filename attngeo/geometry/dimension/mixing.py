"""The mixing of heads: kernel fields that re-split a multi-head layer among its heads (docs/multihead.md §3).

A lightning layer is ``Σ_j V_j Y M∘(Yᵀ A_j Y)`` (``A_j = K_jᵀ Q_j``): linear in the
tensor ``T = Σ_j V_j ⊗ A_j``. Moving ``A_j`` by ``Σ_k c_k A_k`` and each ``V_k`` by
``-c_k V_j`` fixes ``T`` (``V_j ⊗ c_k A_k - c_k V_j ⊗ A_k = 0``), whatever the mask and
the residual connection; the move is a kernel direction as soon as ``δA_j`` lifts to
``(δQ_j, δK_j)``. Four families, one per way the lift exists (docs/math.md §7.3):

* ``mixing`` (``a >= d``): every ``A_j`` is reachable; ``G = K_jᵀ K_j``,
  ``δQ_j = -K_j adj(G) A_k``, ``δV_k = det(G) V_j``. One field per ordered pair.
* ``rank-mixing`` (``a < d``, ``h - 1 > (d - a)^2``): ``δA_j = X`` must be tangent to the
  rank-``a`` matrices at ``A_j``: ``nᵀ X m = 0`` for ``n`` in the null space of
  ``K_j`` and ``m`` in that of ``Q_j``, ``(d - a)^2`` linear conditions on the
  ``h - 1`` coefficients ``c``. Lift: ``δQ_j = c_Q adj(G_K) K_j X``,
  ``δK_j = adj(G_Q) Q_j Xᵀ (c_K I - Π_K)`` with ``G_K = K_j K_jᵀ``, ``c_K = det G_K``,
  ``Π_K = K_jᵀ adj(G_K) K_j`` (and the same for ``Q``), ``δV_k = -c_K c_Q c_k V_j``;
  ``h - 1 - (d - a)^2`` fields per head.
* ``symmetric-mixing`` (one token, ``a < d <= 2a``): with one token the layer sees
  only ``sym(A_j)``, and the symmetric parts are unconstrained when ``2a >= d``;
  ``G = K_jᵀ K_j + Q_jᵀ Q_j``, ``B = A_k + A_kᵀ``, ``δQ_j = -K_j adj(G) B``,
  ``δK_j = -Q_j adj(G) B``, ``δV_k = 2 det(G) V_j``. One field per ordered pair.
* ``symmetric-rank-mixing`` (one token, ``2a < d``, ``h - 1 > ρ(ρ + 1)/2``, ``ρ = d - 2a``):
  the symmetric parts ``S_j = A_j + A_jᵀ`` have rank ``<= 2a``; ``X = Σ_k c_k S_k`` must be
  tangent there (``nᵀ X n' = 0`` for ``n, n'`` in the null space of ``R = [K_j; Q_j]``).
  Lift: ``[δQ_j; δK_j] = adj(G) R X (2 c I - Π)`` with ``G = R Rᵀ``, ``c = det G``,
  ``Π = Rᵀ adj(G) R``; then ``δS_j = 2 c^2 X`` and ``δV_k = -2 c^2 c_k V_j``.
* ``value-mixing`` (normalized, one token): every score is ``1``, the layer is
  ``(Σ_j V_j) y``; ``δV_1 = E_uv``, ``δV_k = -E_uv`` (``k >= 2``): constant fields.

All need ``V`` unfactored (a value rank below ``min(d, d')`` leaves ``δV_k ∝ V_j``
outside the tangent space of the rank-``b`` matrices at ``V_k``). At a point mod
``p`` the values are computed from canonical null bases (:func:`attngeo.exact.rank.null_basis_mod_p`);
where a rank drops mod ``p`` a head contributes no rows, which only weakens the bound.
:func:`mixing_identities` proves the size-free part of each lemma symbolically.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...exact import modular
from ...exact.rank import adjugate_mod_p, det_mod_p, null_basis_mod_p, rank_mod_p
from ...model.architecture import Architecture

#: The mixing kinds in canonical order (at most one applies to a layer).
KINDS = ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing", "value-mixing", "factored-mixing",
         "symmetric-factored-mixing")


def mixing_family(arch: Architecture, i: int) -> tuple[str, int] | None:
    """``(kind, size)`` of the mixing family of layer ``i`` (1-based), or None.

    Parameters
    ----------
    arch : Architecture
    i : int

    Returns
    -------
    tuple of (str, int), or None

    Examples
    --------
    Three rank-2 heads on ``3 -> 3``: each ``A_j`` may move along the other two
    heads' ``A_k`` subject to one condition (``(d - a)^2 = 1``), so one field per head:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.mixing import mixing_family
    >>> mixing_family(Architecture((3, 3), (2,), heads=3), 1)
    ('rank-mixing', 3)
    >>> mixing_family(Architecture((3, 3), (2,), heads=2), 1) is None      # h - 1 = (d - a)^2: none
    True
    >>> mixing_family(Architecture((3, 3), (2,), tokens=1, heads=2), 1)    # one token: sym(A_j) re-split
    ('symmetric-mixing', 2)
    >>> mixing_family(Architecture((5, 5), (2,), tokens=1, heads=3), 1)    # one condition on rank(S_j) <= 4
    ('symmetric-rank-mixing', 3)
    >>> mixing_family(Architecture((3, 3), (2,), tokens=1, heads=2, normalization="softmax"), 1)
    ('value-mixing', 9)
    """
    h, a, d = arch.heads[i - 1], arch.ranks[i - 1], arch.widths[i - 1]
    if h < 2:
        return None
    if arch.value_ranks is not None:
        return _factored_family(arch, i)
    if arch.normalization != "lightning":
        return ("value-mixing", (h - 1) * arch.widths[i] * d) if arch.tokens == 1 else None
    if a >= d:
        return "mixing", h * (h - 1)
    if arch.tokens == 1 and 2 * a >= d:  # the symmetric parts are free: more fields than rank-mixing's
        return "symmetric-mixing", h * (h - 1)
    if arch.tokens == 1:  # rank(S_j) <= 2a: (d - 2a)(d - 2a + 1)/2 conditions, fewer than rank-mixing's
        kind, per_head = "symmetric-rank-mixing", h - 1 - (d - 2 * a) * (d - 2 * a + 1) // 2
    else:
        kind, per_head = "rank-mixing", h - 1 - (d - a) ** 2
    return (kind, h * per_head) if per_head > 0 else None


def _factored_family(arch: Architecture, i: int) -> tuple[str, int] | None:
    """``(kind, size)`` for value ranks: ``h (h - 1)`` unknowns less ``h`` times the tangent conditions of both sides."""
    h, a, d, d_out, b = arch.heads[i - 1], arch.ranks[i - 1], arch.widths[i - 1], arch.widths[i], arch.value_ranks[i - 1]
    if arch.normalization != "lightning" or b > min(d, d_out):
        return None
    if arch.tokens == 1:
        rho = max(0, d - 2 * a)
        kind, score = "symmetric-factored-mixing", rho * (rho + 1) // 2
    else:
        kind, score = "factored-mixing", max(0, d - a) ** 2
    per_head = h - 1 - score - (d_out - b) * (d - b)
    return (kind, h * per_head) if per_head > 0 else None


def _mm(*factors: np.ndarray, p: int) -> np.ndarray:
    out = factors[0]
    for f in factors[1:]:
        out = modular.matmul(out, f, p)
    return out


def _tangent_pairs(left: np.ndarray, right: np.ndarray, p: int, symmetric: bool) -> list | None:
    """The pairs ``(n, m)`` whose conditions ``nᵀ X m = 0`` cut out the tangent space at a product ``leftᵀ right``.

    ``n`` runs over the canonical null basis of ``left``, ``m`` over that of ``right`` (``symmetric``:
    ``left`` is ``R = [K; Q]``, ``m = n'`` with ``n <= n'``). None where a rank drops mod ``p``: the null
    vectors need not span the null spaces of the generic point there (docs/math.md Lemma 7.3.4).
    """
    N = null_basis_mod_p(left, p)
    M = N if symmetric else null_basis_mod_p(right, p)
    if len(N) != left.shape[1] - left.shape[0] or len(M) != right.shape[1] - right.shape[0]:
        return None
    return [(N[s], M[t]) for s in range(len(N)) for t in range(len(M)) if not symmetric or s <= t]


def _condition_rows(pairs: list, mats: list, p: int) -> np.ndarray:
    """``L[(n, m), k] = nᵀ M_k m`` mod ``p``."""
    return np.array([[_mm(n[None, :], M, m[:, None], p=p)[0, 0] for M in mats] for n, m in pairs],
                    dtype=np.int64).reshape(len(pairs), len(mats))


def _constrained(heads: list, j: int, p: int, symmetric: bool) -> list:
    """The rank-mixing (or, ``symmetric``, symmetric-rank-mixing) fields of head ``j`` (0-based).

    The coefficients ``c`` span the canonical null space of the conditions ``nᵀ X m = 0`` on
    ``X = Σ_k c_k A_k`` (``A_k + A_kᵀ`` when symmetric), ``n``, ``m`` from the canonical null bases.
    """
    Q, K, V = heads[j]
    pairs = _tangent_pairs(np.vstack([K, Q]) if symmetric else K, np.vstack([K, Q]) if symmetric else Q, p, symmetric)
    if pairs is None:
        return []  # a rank drops mod p: no rows
    others = [k for k in range(len(heads)) if k != j]
    A = [_score(heads[k][0], heads[k][1], symmetric, p) for k in others]
    L = _condition_rows(pairs, A, p)
    if rank_mod_p(L, p) < len(pairs):
        return []  # the conditions are dependent here: their minor vectors vanish, no rows
    lift = _score_lift(Q, K, p, "symmetric-rank" if symmetric else "rank")
    out = []
    for coeffs in null_basis_mod_p(L, p):
        moves, scale = lift(_combination(coeffs, A, p))
        out.append([(j, name, delta) for name, delta in moves]
                   + [(k, "V", -(scale * int(ck) % p) * V % p) for k, ck in zip(others, coeffs)])
    return out


def _score(Q: np.ndarray, K: np.ndarray, symmetric: bool, p: int) -> np.ndarray:
    """``A = Kᵀ Q``, or ``A + Aᵀ`` (what one token sees), mod ``p``."""
    A = _mm(K.T, Q, p=p)
    return (A + A.T) % p if symmetric else A


def _combination(coeffs, mats: list, p: int) -> np.ndarray:
    """``Σ_k c_k M_k`` mod ``p``."""
    out = np.zeros_like(mats[0])
    for ck, M in zip(coeffs, mats):
        out = (out + int(ck) * M) % p
    return out


def _product_lift(K: np.ndarray, Q: np.ndarray, p: int):
    """Lemma 7.3.2 for ``A = Kᵀ Q`` (``K`` of ``a x d``, ``Q`` of ``a x d'``): ``X ↦ ((δK, δQ), c_K c_Q)``.

    ``δQ = c_Q J K X``, ``δK = H Q Xᵀ (c_K I - Kᵀ J K)`` with ``J = adj(K Kᵀ)``, ``H = adj(Q Qᵀ)``:
    ``Kᵀ δQ + δKᵀ Q = c_K c_Q X`` whenever ``nᵀ X m = 0`` for the null vectors of ``K`` and ``Q``.
    """
    GK, GQ = _mm(K, K.T, p=p), _mm(Q, Q.T, p=p)
    cK, J, cQ, H = det_mod_p(GK, p), adjugate_mod_p(GK, p), det_mod_p(GQ, p), adjugate_mod_p(GQ, p)
    rest = (cK * np.eye(K.shape[1], dtype=np.int64) - _mm(K.T, J, K, p=p)) % p
    return lambda X: ((_mm(H, Q, X.T, rest, p=p), cQ * _mm(J, K, X, p=p) % p), cK * cQ % p)


def _score_lift(Q: np.ndarray, K: np.ndarray, p: int, how: str):
    """``X ↦ ([(name, delta)], σ)`` moving ``Q, K`` so that the score matrix moves by ``σ X`` (docs/math.md §7.3).

    The score matrix is ``A = Kᵀ Q`` (``how`` = ``"full"``, ``a >= d``; ``"rank"``, ``a < d``, under the
    tangent conditions) or, with one token, ``S = A + Aᵀ`` for symmetric ``X`` (``"symmetric-full"``,
    ``a >= d``; ``"symmetric"``, ``d <= 2a``; ``"symmetric-rank"``, ``2a < d``, under the conditions).
    """
    a, d = Q.shape
    twice = 2 if how.startswith("symmetric") else 1
    if how in ("full", "symmetric-full"):  # G = K'K: K' dQ = -det(G) X
        G = _mm(K.T, K, p=p)
        lift, c = _mm(K, adjugate_mod_p(G, p), p=p), det_mod_p(G, p)
        return lambda X: ([("Q", -_mm(lift, X, p=p) % p)], -twice * c % p)
    if how == "rank":
        product = _product_lift(K, Q, p)

        def rank_lift(X):
            (dK, dQ), scale = product(X)
            return [("Q", dQ), ("K", dK)], scale
        return rank_lift
    R = np.vstack([K, Q])  # R' [dQ; dK] = K' dQ + Q' dK = Z and dS = Z + Z'
    if how == "symmetric":  # G = R'R: [dQ; dK] = -R adj(G) X, Z = -det(G) X
        G = _mm(R.T, R, p=p)
        lift, c = _mm(R, adjugate_mod_p(G, p), p=p), det_mod_p(G, p)
        return lambda X: (_halves(-_mm(lift, X, p=p) % p, a), -2 * c % p)
    G = _mm(R, R.T, p=p)  # symmetric-rank: [dQ; dK] = adj(G) R X (2c I - P), dS = 2 c^2 X
    c, adj = det_mod_p(G, p), adjugate_mod_p(G, p)
    tail = (2 * c * np.eye(d, dtype=np.int64) - _mm(R.T, adj, R, p=p)) % p
    return lambda X: (_halves(_mm(adj, R, X, tail, p=p), a), 2 * c * c % p)


def _halves(Y: np.ndarray, a: int) -> list:
    """``[δQ; δK]`` as moves."""
    return [("Q", Y[:a]), ("K", Y[a:])]


def mixing_moves(kind: str, heads: list, p: int) -> list:
    """The fields of a mixing family of one layer at a point mod ``p``, as moves.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.
    heads : list
        The layer's heads ``(Q, K, V)`` mod ``p`` (from :func:`attngeo.model.network.split_heads`).
    p : int
        A prime below ``2^31``.

    Returns
    -------
    list
        One entry per field: a list of moves ``(head, name, delta)``, ``head`` 0-based.

    Examples
    --------
    Three rank-2 heads on ``3 -> 3`` at a random point: one field per head, and
    every one fixes ``T = Σ_j V_j ⊗ K_jᵀ Q_j`` to first order:

    >>> import numpy as np
    >>> from attngeo.geometry.dimension.mixing import mixing_moves
    >>> p, rng = 1000003, np.random.default_rng(1)
    >>> heads = [tuple(rng.integers(0, p, s) for s in ((2, 3), (2, 3), (3, 3))) for _ in range(3)]
    >>> fields = mixing_moves("rank-mixing", heads, p)
    >>> len(fields), [sorted({(j, n) for j, n, _ in f}) for f in fields][0]
    (3, [(0, 'K'), (0, 'Q'), (1, 'V'), (2, 'V')])
    >>> def dT(field):
    ...     d = {(j, n): m for j, n, m in field}
    ...     z = np.zeros((3, 3), dtype=object)
    ...     return sum(np.kron(d.get((j, "V"), z).astype(object), (K.T @ Q).astype(object))
    ...                + np.kron(V.astype(object), (d.get((j, "K"), np.zeros_like(K)).T @ Q
    ...                                            + K.T @ d.get((j, "Q"), np.zeros_like(Q))).astype(object))
    ...                for j, (Q, K, V) in enumerate(heads)) % p
    >>> [int(np.count_nonzero(dT(f))) for f in fields]
    [0, 0, 0]
    """
    h = len(heads)
    out = []
    if kind in ("rank-mixing", "symmetric-rank-mixing"):
        for j in range(h):
            out += _constrained(heads, j, p, kind == "symmetric-rank-mixing")
        return out
    if kind == "value-mixing":
        d_out, d_in = heads[0][2].shape
        for k in range(1, h):
            for u in range(d_out):
                for v in range(d_in):
                    E = np.zeros((d_out, d_in), dtype=np.int64)
                    E[u, v] = 1
                    out.append([(0, "V", E), (k, "V", (p - E) % p)])
        return out
    if kind in ("factored-mixing", "symmetric-factored-mixing"):
        return _factored(heads, p, kind == "symmetric-factored-mixing")
    symmetric = kind == "symmetric-mixing"  # mixing: K' dQ = -det(K'K) A_k; symmetric: R' [dQ; dK] = -det(R'R) S_k
    for j, (Q, K, V) in enumerate(heads):
        lift = _score_lift(Q, K, p, "symmetric" if symmetric else "full")
        for k, (Qk, Kk, _) in enumerate(heads):
            if k != j:
                moves, scale = lift(_score(Qk, Kk, symmetric, p))
                out.append([(j, name, delta) for name, delta in moves] + [(k, "V", -scale * V % p)])
    return out


def _lift_kind(a: int, d: int, one_token: bool) -> str:
    """Which lift of :func:`_score_lift` a head of rank ``a`` on width ``d`` uses."""
    if a >= d:
        return "symmetric-full" if one_token else "full"
    if one_token:
        return "symmetric" if 2 * a >= d else "symmetric-rank"
    return "rank"


def _factored(heads: list, p: int, one_token: bool = False) -> list:
    """The factored-mixing fields of one layer (``V_j = O_j U_j``), docs/math.md Lemma 7.3.7.

    The unknowns are ``c_jk`` (``j != k``, in lexicographic order): ``A_j`` moves by
    ``X_j = Σ_k c_jk A_k`` and ``V_k`` by ``Y_k = -Σ_j c_jk V_j``, which fixes ``Σ_j V_j ⊗ A_j``.
    The conditions: ``X_j`` tangent to the rank-``a`` matrices at ``A_j`` and ``Y_k`` tangent to
    the rank-``b`` matrices at ``V_k`` (null vectors of ``K_j, Q_j`` and of ``O_kᵀ, U_k``). Each
    canonical null vector ``c`` of the conditions gives one field: head ``j``'s lift of ``X_j``
    (``δA_j = σ_j X_j``) times ``Π_{i != j} σ_i Π_i τ_i`` and head ``k``'s lift of ``Y_k``
    (``δV_k = τ_k Y_k``) times ``Π_i σ_i Π_{i != k} τ_i``, so every head moves by the same
    ``S = Π σ_i τ_i``. No rows where a rank drops or the conditions are dependent mod ``p``.
    """
    h = len(heads)
    a, d = heads[0][0].shape
    how = _lift_kind(a, d, one_token)
    symmetric = one_token
    scores, values, lifts, value_lifts, rows = [], [], [], [], []
    pairs = [(j, k) for j in range(h) for k in range(h) if j != k]
    for Q, K, U, O in heads:
        constrained = how in ("rank", "symmetric-rank")
        score_pairs = _tangent_pairs(np.vstack([K, Q]) if symmetric else K, np.vstack([K, Q]) if symmetric else Q,
                                     p, symmetric) if constrained else []
        value_pairs = _tangent_pairs(O.T, U, p, False)
        if score_pairs is None or value_pairs is None:
            return []  # a rank drops mod p: no rows (a valid, weaker bound)
        scores.append(_score(Q, K, symmetric, p))
        values.append(_mm(O, U, p=p))
        lifts.append(_score_lift(Q, K, p, how))
        value_lifts.append(_product_lift(O.T, U, p))
        rows.append((score_pairs, value_pairs))
    L = []
    for j, (score_pairs, _) in enumerate(rows):  # X_j tangent at A_j: columns (j, k)
        block = _condition_rows(score_pairs, scores, p)
        L += [[row[k] if i == j else 0 for i, k in pairs] for row in block]
    for k, (_, value_pairs) in enumerate(rows):  # Y_k tangent at V_k: columns (j, k)
        block = _condition_rows(value_pairs, values, p)
        L += [[row[j] if i == k else 0 for j, i in pairs] for row in block]
    L = np.array(L, dtype=np.int64).reshape(len(L), len(pairs))
    if rank_mod_p(L, p) < len(L):
        return []  # the conditions are dependent here: their minor vectors vanish, no rows
    out = []
    for coeffs in null_basis_mod_p(L, p):
        c = dict(zip(pairs, coeffs))
        moved = [lifts[j](_combination([c[(j, k)] for k in range(h) if k != j],
                                       [scores[k] for k in range(h) if k != j], p)) for j in range(h)]
        shifted = [value_lifts[k](-_combination([c[(j, k)] for j in range(h) if j != k],
                                                [values[j] for j in range(h) if j != k], p) % p) for k in range(h)]
        sigma, tau = [m[1] for m in moved], [m[1] for m in shifted]
        field = []
        for j, (moves, _) in enumerate(moved):
            scale = _product_mod([s for i, s in enumerate(sigma) if i != j] + tau, p)
            field += [(j, name, scale * delta % p) for name, delta in moves]
        for k, ((dO_T, dU), _) in enumerate(shifted):
            scale = _product_mod(sigma + [t for i, t in enumerate(tau) if i != k], p)
            field += [(k, "U", scale * dU % p), (k, "O", scale * dO_T.T % p)]
        out.append(field)
    return out


def _product_mod(factors: list, p: int) -> int:
    out = 1
    for f in factors:
        out = out * int(f) % p
    return out


def mixing_identities(kind: str) -> tuple:
    """The size-free identities behind a mixing family (:class:`attngeo.geometry.symmetry.Identity`).

    * ``pair`` (every kind): for heads ``j, k`` the tangent ``δA_j = A_k``,
      ``δV_k = -V_j`` fixes ``value_j ⊗ M∘score_j + value_k ⊗ M∘score_k`` — in the
      free algebra, with ``value ⊗ M∘score`` written as the word ``value M score``
      (concatenation is bilinear, which is all the mask and the tensor need);
      for ``value-mixing`` the heads are ``V_j y`` and the tangent ``δV_1 = E``, ``δV_k = -E``.
    * ``lift``: the moves of ``Q_j, K_j`` change ``A_j = K_jᵀ Q_j`` as the lemma
      says, for matrices of any size: SymPy matrix symbols of symbolic shape,
      scalars commuting, ``adj`` of a symmetric matrix symmetric. The rest is
      Cramer's rule ``G adj(G) = det(G) I`` (``mixing``, ``symmetric-mixing``)
      and, for ``rank-mixing``, ``(c_K I - Π_K) X (c_Q I - Π_Q) = 0`` when ``nᵀ X m = 0``
      (docs/math.md §7.3), which the checker also verifies at its point.

    Parameters
    ----------
    kind : str
        One of :data:`KINDS`.

    Returns
    -------
    tuple of Identity

    Examples
    --------
    >>> from attngeo.geometry.dimension.mixing import mixing_identities
    >>> [(i.family, i.holds) for i in mixing_identities("rank-mixing")]
    [('rank-mixing', True), ('rank-mixing', True)]
    """
    from ...exact.freealgebra import NCPoly
    from ..symmetry import Identity

    Vj, Vk, Aj, Ak, Y, Msep, E = (NCPoly.symbol(s) for s in ("V_j", "V_k", "A_j", "A_k", "Y", "M", "E"))
    if kind == "value-mixing":
        pair = (Vj @ Y + Vk @ Y).derivative({"V_j": E, "V_k": -E})
        return (Identity(kind, "D(V_1 y + V_k y)[dV_1 = E, dV_k = -E] = 0", str(pair)),)
    heads = Vj @ Y @ Msep @ Y.T @ Aj @ Y + Vk @ Y @ Msep @ Y.T @ Ak @ Y
    pair = heads.derivative({"A_j": Ak, "V_k": -Vj})
    out = [Identity(kind, "D(V_j Y (x) M.(Y' A_j Y) + V_k Y (x) M.(Y' A_k Y))[dA_j = A_k, dV_k = -V_j] = 0",
                    str(pair))]
    return tuple(out) + tuple(Identity(kind, _LIFTS[lift], _lift_residual(lift)) for lift in _USES.get(kind, (kind,)))


#: the lifts a factored family may use (which one, head by head, depends on ``a``, ``d`` and ``t``), and ``V = O U``'s
_USES = {"factored-mixing": ("mixing", "rank-mixing", "value"),
         "symmetric-factored-mixing": ("mixing", "symmetric-mixing", "symmetric-rank-mixing", "value")}


_LIFTS = {
    "mixing": "K' dQ = -(K'K) adj(K'K) A_k for dQ = -K adj(K'K) A_k",
    "rank-mixing": "K' dQ + dK' Q = c_K c_Q X - (c_K I - K' J K) X (c_Q I - Q' H Q) for dQ = c_Q J K X, "
                   "dK = H Q X' (c_K I - K' J K), J = adj(K K'), H = adj(Q Q')",
    "symmetric-mixing": "dA + dA' = -(G J B + B J G) for dQ = -K J B, dK = -Q J B, G = K'K + Q'Q, J = adj G, "
                        "B = A_k + A_k'",
    "symmetric-rank-mixing": "dA + dA' = 2 c^2 X - 2 (c I - P) X (c I - P) for [dQ; dK] = J R X (2c I - P), "
                             "R = [K; Q], J = adj(R R') = [J11 J12; J12' J22], P = R' J R, X = X'",
    "value": "dO U + O dU = c_O c_U Y - (c_O I - O J O') Y (c_U I - U' H U) for dU = c_U J O' Y, "
             "dO = (c_O I - O J O') Y U' H, J = adj(O'O), H = adj(U U')",
}


@lru_cache(maxsize=None)  # SymPy takes about a second per process; the identity does not change
def _lift_residual(kind: str) -> str:
    """``lhs - rhs`` of the lift identity of ``kind``, expanded by SymPy (``"0"`` when it holds)."""
    from sympy import Identity as Eye, MatrixSymbol, symbols

    a, d = symbols("a d", integer=True, positive=True)
    cK, cQ = symbols("c_K c_Q")
    K, Q, X = MatrixSymbol("K", a, d), MatrixSymbol("Q", a, d), MatrixSymbol("X", d, d)
    Kk, Qk = MatrixSymbol("K_k", a, d), MatrixSymbol("Q_k", a, d)
    if kind == "value":  # V = O U with O of d' x b and U of b x d: the rank-mixing lift with K = O', Q = U
        b, e = symbols("b e", integer=True, positive=True)
        O, U, Y = MatrixSymbol("O", e, b), MatrixSymbol("U", b, d), MatrixSymbol("Y", e, d)
        J, H = MatrixSymbol("J", b, b), MatrixSymbol("H", b, b)  # adj(O'O), adj(U U'): symmetric
        cO, cU = symbols("c_O c_U")
        rest = cO * Eye(e) - O * J * O.T
        dU, dO = cU * J * O.T * Y, rest * Y * U.T * H
        diff = dO * U + O * dU - (cO * cU * Y - rest * Y * (cU * Eye(d) - U.T * H * U))
        symmetric = (J, H)
    elif kind == "rank-mixing":
        J, H = MatrixSymbol("J", a, a), MatrixSymbol("H", a, a)  # adj(K K'), adj(Q Q'): symmetric
        rest = cK * Eye(d) - K.T * J * K
        dQ, dK = cQ * J * K * X, H * Q * X.T * rest
        diff = K.T * dQ + dK.T * Q - (cK * cQ * X - rest * X * (cQ * Eye(d) - Q.T * H * Q))
        symmetric = (J, H)
    elif kind == "mixing":
        J = MatrixSymbol("J", d, d)  # adj(K'K)
        diff = K.T * (-K * J * Kk.T * Qk) + K.T * K * J * Kk.T * Qk
        symmetric = (J,)
    elif kind == "symmetric-rank-mixing":  # R = [K; Q], adj(R R') in blocks, X symmetric
        c = symbols("c")
        J11, J12, J22 = MatrixSymbol("J11", a, a), MatrixSymbol("J12", a, a), MatrixSymbol("J22", a, a)
        P = K.T * J11 * K + K.T * J12 * Q + Q.T * J12.T * K + Q.T * J22 * Q
        tail = 2 * c * Eye(d) - P
        dQ, dK = (J11 * K + J12 * Q) * X * tail, (J12.T * K + J22 * Q) * X * tail
        dA = K.T * dQ + dK.T * Q
        diff = dA + dA.T - 2 * c ** 2 * X + 2 * (c * Eye(d) - P) * X * (c * Eye(d) - P)
        symmetric = (J11, J22, X)
    else:
        J = MatrixSymbol("J", d, d)  # adj(K'K + Q'Q)
        B, G = Kk.T * Qk + Qk.T * Kk, K.T * K + Q.T * Q
        dA = K.T * (-K * J * B) + (-Q * J * B).T * Q
        diff = dA + dA.T + G * J * B + B * J * G
        symmetric = (J,)
    return str(diff.doit().xreplace({S.T: S for S in symmetric}).doit().expand())
