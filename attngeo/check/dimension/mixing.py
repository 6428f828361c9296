"""The checker's own mixing of heads (docs/multihead.md §3, docs/math.md §7.3): which family, its values, its lemma.

Written again from the lemmas, not imported from the prover. A lightning layer
with heads ``j`` depends on its weights through ``T = Σ_j V_j ⊗ A_j``
(``A_j = K_jᵀ Q_j``); moving ``A_j`` by ``X = Σ_k c_k A_k`` and ``V_k`` by
``-c_k V_j`` fixes ``T``. The families differ in how ``δA_j = X`` is reached by
``(δQ_j, δK_j)``:

* ``mixing`` (``a >= d``): ``G = K_jᵀ K_j``, ``δQ_j = -K_j adj(G) A_k``, ``δV_k = det(G) V_j``.
* ``rank-mixing`` (``a < d``, ``h - 1 > (d - a)^2``, not one token with ``2a >= d``):
  ``c`` in the null space of ``L[(s, t), k] = n_sᵀ A_k m_t`` (``n_s``, ``m_t`` the
  canonical null bases of ``K_j``, ``Q_j``), ``δQ_j = c_Q adj(G_K) K_j X``,
  ``δK_j = adj(G_Q) Q_j Xᵀ (c_K I - K_jᵀ adj(G_K) K_j)``, ``δV_k = -c_K c_Q c_k V_j``
  (``G_K = K_j K_jᵀ``, ``c_K = det G_K``; the same for ``Q``). No rows for a head
  where ``K_j``, ``Q_j`` or ``L`` drop rank mod p.
* ``symmetric-mixing`` (one token, ``a < d <= 2a``): ``G = K_jᵀ K_j + Q_jᵀ Q_j``,
  ``B = A_k + A_kᵀ``, ``δQ_j = -K_j adj(G) B``, ``δK_j = -Q_j adj(G) B``, ``δV_k = 2 det(G) V_j``.
* ``symmetric-rank-mixing`` (one token, ``2a < d``, ``h - 1 > ρ(ρ + 1)/2``, ``ρ = d - 2a``): ``c`` in
  the null space of ``n_sᵀ (A_k + A_kᵀ) n_t`` (``s <= t``; ``n`` the canonical null basis of
  ``R = [K_j; Q_j]``), ``X = Σ_k c_k (A_k + A_kᵀ)``, ``G = R Rᵀ``, ``c = det G``,
  ``[δQ_j; δK_j] = adj(G) R X (2c I - Rᵀ adj(G) R)``, ``δV_k = -2 c^2 c_k V_j``.
* ``value-mixing`` (normalized, one token): ``δV_1 = E_uv``, ``δV_k = -E_uv``.

Before any row is used, the size-free part of each lemma is re-proved here with
this module's own word algebra (:func:`lemma_holds`), and every row is checked at
the point: it must fix ``T`` (or ``Σ_j V_j ⊗ sym(A_j)`` with one token) mod p.
"""

from __future__ import annotations

import numpy as np

from ..linalg import adjugate, det, nmod, null_basis, product
from ..values import reject

KINDS = ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing", "value-mixing", "factored-mixing",
         "symmetric-factored-mixing")


def expected_family(arch, i: int) -> dict | None:
    """The mixing family of layer ``i`` as the certificate must list it, or None.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.mixing import expected_family
    >>> expected_family(Arch((3, 3), (2,), 2, heads=(3,)), 1)
    {'kind': 'rank-mixing', 'layer': 1, 'size': 3}
    >>> expected_family(Arch((4, 4), (2,), 2, heads=(5,)), 1) is None     # 4 conditions on 4 coefficients
    True
    >>> expected_family(Arch((3, 3), (2,), 1, heads=(2,)), 1)
    {'kind': 'symmetric-mixing', 'layer': 1, 'size': 2}

    Value rank 3 on ``4 -> 4`` with four heads of rank 3: 12 unknowns ``c_jk``, one condition per head for
    ``A_j`` and one per head for ``V_k``:

    >>> expected_family(Arch((4, 4), (3,), 2, heads=(4,), value_ranks=(3,)), 1)
    {'kind': 'factored-mixing', 'layer': 1, 'size': 4}
    """
    h, a, d = arch.head_count(i), arch.ranks[i - 1], arch.widths[i - 1]
    if h == 1:
        return None
    if arch.value_ranks is not None:  # Lemma 7.3.7: conditions on both sides, one system for the layer
        d_out, b = arch.widths[i], arch.value_ranks[i - 1]
        if arch.normalization != "lightning" or b > min(d, d_out):
            return None
        rho = max(0, d - 2 * a)  # one token: S_j = A_j + A_j' of rank <= 2a; else A_j of rank <= a
        score = rho * (rho + 1) // 2 if arch.tokens == 1 else max(0, d - a) * max(0, d - a)
        kind = "symmetric-factored-mixing" if arch.tokens == 1 else "factored-mixing"
        size = h * max(0, h - 1 - score - (d_out - b) * (d - b))
    elif arch.normalization == "lightning":
        if a >= d:
            kind, size = "mixing", h * (h - 1)
        elif arch.tokens == 1 and d <= 2 * a:
            kind, size = "symmetric-mixing", h * (h - 1)
        elif arch.tokens == 1:
            rho = d - 2 * a
            kind, size = "symmetric-rank-mixing", h * max(0, h - 1 - rho * (rho + 1) // 2)
        else:
            kind, size = "rank-mixing", h * max(0, h - 1 - (d - a) * (d - a))
    elif arch.tokens == 1:
        kind, size = "value-mixing", (h - 1) * d * arch.widths[i]
    else:
        return None
    return {"kind": kind, "layer": i, "size": size} if size else None


# -- the lemma, in the checker's own word algebra -----------------------------------------------------
# An element is {(scalars, word): coefficient}: scalars a sorted tuple of commuting names, word a tuple
# of letters "S" or "S'" (transpose). Symbols in SYMMETRIC equal their transpose (adjugates of Gram matrices).


def _poly(*terms) -> dict:
    out: dict = {}
    for coeff, scalars, word in terms:
        key = (tuple(sorted(scalars)), tuple(word))
        out[key] = out.get(key, 0) + coeff
    return {k: v for k, v in out.items() if v}


def _plus(*polys) -> dict:
    return _poly(*((c, s, w) for p in polys for (s, w), c in p.items()))


def _times(*polys) -> dict:
    out = {((), ()): 1}
    for p in polys:
        out = _poly(*((c1 * c2, s1 + s2, w1 + w2) for (s1, w1), c1 in out.items() for (s2, w2), c2 in p.items()))
    return out


def _flip(letter: str, symmetric: set) -> str:
    base = letter.rstrip("'")
    return base if base in symmetric or letter.endswith("'") else base + "'"


def _transpose(p: dict, symmetric: set) -> dict:
    return _poly(*((c, s, [_flip(x, symmetric) for x in reversed(w)]) for (s, w), c in p.items()))


def _letters(names: str, symmetric: set) -> dict:
    """Symbols by name; ``"X'"`` is the transpose of ``X`` (a symmetric symbol's is itself)."""
    out = {}
    for name in names.split():
        out[name] = _poly((1, (), [name]))
        out[name + "'"] = _poly((1, (), [_flip(name, symmetric)]))
    return out


def _derivative(p: dict, tangent: dict, symmetric: set) -> dict:
    """Derivative along ``tangent[symbol]`` (a poly); a transposed letter moves by the transposed tangent."""
    parts = []
    for (s, w), c in p.items():
        for k, letter in enumerate(w):
            base = letter.rstrip("'")
            if base not in tangent:
                continue
            move = tangent[base] if not letter.endswith("'") else _transpose(tangent[base], symmetric)
            parts.append(_times(_poly((c, s, w[:k])), move, _poly((1, (), w[k + 1:]))))
    return _plus(*parts) if parts else {}


def _scalar(name: str) -> dict:
    return _poly((1, (name,), ()))


def lemma_holds(kind: str) -> bool:
    """The size-free identities of a mixing family hold in the free algebra (scalars central).

    * the heads cancel: ``δA_j = A_k``, ``δV_k = -V_j`` fixes ``V_j Y M Y' A_j Y + V_k Y M Y' A_k Y``
      (``M`` marks the bilinear pairing of value and masked score); for ``value-mixing``
      ``δV_1 = E``, ``δV_k = -E`` fixes ``V_1 y + V_k y``;
    * the lift reaches ``δA_j`` (``A_j = K' Q``): ``K' δQ = -(K'K) J A_k`` (mixing,
      ``J = adj K'K``); ``K' δQ + δK' Q = c_K c_Q X - (c_K - K'JK) X (c_Q - Q'HQ)``
      (rank-mixing, ``J = adj KK'``, ``H = adj QQ'``); ``δA + δA' = -(G J B + B J G)``
      (symmetric-mixing, ``G = K'K + Q'Q``, ``J = adj G``, ``B = A_k + A_k'``). Cramer's
      rule and, for rank-mixing, the null-vector condition finish the proof (docs/math.md §7.3);
    * the factored families use these lifts head by head and, for ``V = O U``,
      ``δO U + O δU = c_O c_U Y - (c_O - OJO') Y (c_U - U'HU)`` (``J = adj O'O``, ``H = adj UU'``).

    Examples
    --------
    >>> from attngeo.check.dimension.mixing import lemma_holds
    >>> [lemma_holds(k) for k in ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing",
    ...                           "value-mixing", "factored-mixing", "symmetric-factored-mixing", "other")]
    [True, True, True, True, True, True, True, False]
    """
    if kind not in KINDS:
        return False
    sym = {"J", "H"}
    L = _letters("V_j V_k A_j A_k Y M E", sym)
    if kind == "value-mixing":
        heads = _plus(_times(L["V_j"], L["Y"]), _times(L["V_k"], L["Y"]))
        return _derivative(heads, {"V_j": L["E"], "V_k": _neg(L["E"])}, sym) == {}
    heads = _plus(*(_times(L[v], L["Y"], L["M"], L["Y'"], L[a], L["Y"]) for v, a in (("V_j", "A_j"), ("V_k", "A_k"))))
    if _derivative(heads, {"A_j": L["A_k"], "V_k": _neg(L["V_j"])}, sym) != {}:
        return False
    lifts = {"factored-mixing": ("mixing", "rank-mixing", "value"),
             "symmetric-factored-mixing": ("mixing", "symmetric-mixing", "symmetric-rank-mixing", "value")}
    return all(_LIFT_HOLDS[lift]() for lift in lifts.get(kind, (kind,)))


def _neg(p: dict) -> dict:
    return _poly(*((-c, s, w) for (s, w), c in p.items()))


def _full_lift_holds() -> bool:
    L = _letters("K Q J K_k Q_k", {"J"})
    Ak = _times(L["K_k'"], L["Q_k"])
    dA = _derivative(_times(L["K'"], L["Q"]), {"Q": _neg(_times(L["K"], L["J"], Ak))}, {"J"})
    return _plus(dA, _times(L["K'"], L["K"], L["J"], Ak)) == {}


def _product_lift_holds(left: str, right: str) -> bool:
    """``F G`` moved by ``δG = c_G J F' X``, ``δF = (c_F - F J F') X G' H`` (``J = adj F'F``, ``H = adj G G'``).

    ``left`` may be a transposed letter (``"K'"``: the score ``K' Q``, where ``K`` moves by the transposed move).
    """
    sym, base = {"J", "H"}, left.rstrip("'")
    L = _letters(f"{base} {right} X J H", sym)
    F, G, Ft, Gt = L[left], L[right], L[base if left != base else base + "'"], L[right + "'"]
    rest_F = _plus(_scalar("c_F"), _neg(_times(F, L["J"], Ft)))
    rest_G = _plus(_scalar("c_G"), _neg(_times(Gt, L["H"], G)))
    move_F = _times(rest_F, L["X"], Gt, L["H"])
    dFG = _derivative(_times(F, G), {right: _times(_scalar("c_G"), L["J"], Ft, L["X"]),
                                     base: move_F if left == base else _transpose(move_F, sym)}, sym)
    want = _plus(_times(_scalar("c_F"), _scalar("c_G"), L["X"]), _neg(_times(rest_F, L["X"], rest_G)))
    return _plus(dFG, _neg(want)) == {}


def _symmetric_rank_lift_holds() -> bool:
    """``R = [K; Q]``, ``adj(R R') = [J11 J12; J12' J22]``, ``X`` symmetric."""
    sym = {"J11", "J22", "X"}
    L = _letters("K Q X J11 J12 J22", sym)
    P = _plus(*(_times(L[u + "'"], L[j], L[v]) for u, j, v in
                (("K", "J11", "K"), ("K", "J12", "Q"), ("Q", "J12'", "K"), ("Q", "J22", "Q"))))
    tail = _plus(_poly((2, ("c",), ())), _neg(P))
    dA = _derivative(_times(L["K'"], L["Q"]), {
        "Q": _times(_plus(_times(L["J11"], L["K"]), _times(L["J12"], L["Q"])), L["X"], tail),
        "K": _times(_plus(_times(L["J12'"], L["K"]), _times(L["J22"], L["Q"])), L["X"], tail)}, sym)
    rest = _plus(_scalar("c"), _neg(P))
    want = _plus(_poly((2, ("c", "c"), ["X"])), _times(_poly((-2, (), ())), rest, L["X"], rest))
    return _plus(dA, _transpose(dA, sym), _neg(want)) == {}


def _symmetric_lift_holds() -> bool:
    sym = {"J"}
    L = _letters("K Q J K_k Q_k", sym)
    Ak = _times(L["K_k'"], L["Q_k"])
    B = _plus(Ak, _transpose(Ak, sym))
    G = _plus(_times(L["K'"], L["K"]), _times(L["Q'"], L["Q"]))
    dA = _derivative(_times(L["K'"], L["Q"]), {"Q": _neg(_times(L["K"], L["J"], B)),
                                               "K": _neg(_times(L["Q"], L["J"], B))}, sym)
    return _plus(dA, _transpose(dA, sym), _times(G, L["J"], B), _times(B, L["J"], G)) == {}


_LIFT_HOLDS = {"mixing": _full_lift_holds, "rank-mixing": lambda: _product_lift_holds("K'", "Q"),
               "symmetric-mixing": _symmetric_lift_holds, "symmetric-rank-mixing": _symmetric_rank_lift_holds,
               "value": lambda: _product_lift_holds("O", "U")}


# -- values at a point mod p ---------------------------------------------------------------------------


def _product_move(F: np.ndarray, G: np.ndarray, p: int):
    """For ``F G`` (``F`` of ``m x r``, ``G`` of ``r x n``): ``X -> (δF, δG)`` and the scalar ``c_F c_G``.

    ``δG = c_G adj(FᵀF) Fᵀ X``, ``δF = (c_F I - F adj(FᵀF) Fᵀ) X Gᵀ adj(G Gᵀ)``, ``c_F = det FᵀF``,
    ``c_G = det G Gᵀ``: ``δ(F G) = c_F c_G X`` when ``X`` meets the null vectors of ``Fᵀ`` and ``G``.
    """
    FF, GG = product(F.T, F, p=p), product(G, G.T, p=p)
    c_F, J, c_G, H = det(FF, p), adjugate(FF, p), det(GG, p), adjugate(GG, p)
    rest = np.mod(c_F * np.eye(F.shape[0], dtype=np.int64) - product(F, J, F.T, p=p), p)
    return (lambda X: (product(rest, X, G.T, H, p=p), np.mod(c_G * product(J, F.T, X, p=p), p))), c_F * c_G % p


def _reach(how: str, Q: np.ndarray, K: np.ndarray, p: int):
    """``X -> {name: move}`` of ``Q, K`` and ``σ``: the score (``Kᵀ Q``, or ``Kᵀ Q + Qᵀ K`` for one token) moves by ``σ X``.

    ``full`` (``a >= d``): ``δQ = -K adj(KᵀK) X``; ``rank`` (``a < d``, conditions): the product move with
    ``F = Kᵀ``; ``symmetric`` (one token, ``d <= 2a``): ``[δQ; δK] = -R adj(RᵀR) X``; ``symmetric-rank``
    (``2a < d``, conditions): ``[δQ; δK] = adj(R Rᵀ) R X (2c I - Rᵀ adj(R Rᵀ) R)``, ``R = [K; Q]``.
    ``symmetric-full`` is ``full`` with ``X`` symmetric: the one-token score moves by ``-2 det(KᵀK) X``.
    """
    a, d = Q.shape
    if how in ("full", "symmetric-full"):
        G = product(K.T, K, p=p)
        c, J = det(G, p), adjugate(G, p)
        return (lambda X: {"Q": np.mod(-product(K, J, X, p=p), p)}), -(2 if how == "symmetric-full" else 1) * c % p
    if how == "rank":
        move, scale = _product_move(K.T, Q, p)

        def rank_move(X):
            dKt, dQ = move(X)
            return {"Q": dQ, "K": dKt.T}
        return rank_move, scale
    R = np.concatenate([K, Q])
    if how == "symmetric":
        G = product(R.T, R, p=p)
        c, J = det(G, p), adjugate(G, p)
        return (lambda X: _split(np.mod(-product(R, J, X, p=p), p), a)), -2 * c % p
    G = product(R, R.T, p=p)
    c, J = det(G, p), adjugate(G, p)
    tail = np.mod(2 * c * np.eye(d, dtype=np.int64) - product(R.T, J, R, p=p), p)
    return (lambda X: _split(product(J, R, X, tail, p=p), a)), 2 * c * c % p


def _split(Y: np.ndarray, a: int) -> dict:
    return {"Q": Y[:a], "K": Y[a:]}


def _score_of(head: dict, symmetric: bool, p: int) -> np.ndarray:
    A = product(head["K"].T, head["Q"], p=p)
    return np.mod(A + A.T, p) if symmetric else A


def _conditions(left: np.ndarray, right: np.ndarray, p: int, symmetric: bool):
    """The vector pairs ``(n, m)`` of the tangent conditions ``nᵀ X m = 0`` at ``leftᵀ right``; None on a rank drop."""
    N = null_basis(left, p)
    M = N if symmetric else null_basis(right, p)
    if len(N) != left.shape[1] - left.shape[0] or len(M) != right.shape[1] - right.shape[0]:
        return None
    return [(N[s], M[t]) for s in range(len(N)) for t in range(s if symmetric else 0, len(M))]


def _evaluate(conditions: list, mats: list, p: int) -> np.ndarray:
    """``E[c, k] = nᵀ M_k m`` for the conditions ``c = (n, m)``."""
    E = np.zeros((len(conditions), len(mats)), dtype=np.int64)
    for row, (n, m) in enumerate(conditions):
        for col, B in enumerate(mats):
            E[row, col] = int(product(n[None, :], B, m[:, None], p=p)[0, 0])
    return E


def _combine(coeffs, mats: list, p: int) -> np.ndarray:
    return np.mod(sum(np.mod(int(ck) * B, p) for ck, B in zip(coeffs, mats)), p)  # h terms < p: no overflow


def _constrained_head(heads: list, j: int, p: int, symmetric: bool) -> list:
    """rank-mixing (``symmetric`` False) or symmetric-rank-mixing fields of head ``j`` (0-based)."""
    Q, K, V = heads[j]["Q"], heads[j]["K"], heads[j]["V"]
    R = np.concatenate([K, Q]) if symmetric else K
    conditions = _conditions(R, R if symmetric else Q, p, symmetric)
    if conditions is None:
        return []
    others = [k for k in range(len(heads)) if k != j]
    basis = [_score_of(heads[k], symmetric, p) for k in others]
    L = _evaluate(conditions, basis, p)
    if nmod(L, p).rank() < len(conditions):
        return []
    move, scale = _reach("symmetric-rank" if symmetric else "rank", Q, K, p)
    fields = []
    for coeffs in null_basis(L, p):
        moves = [(j, name, delta) for name, delta in move(_combine(coeffs, basis, p)).items()]
        moves += [(k, "V", np.mod(-(scale * int(ck) % p) * V, p)) for k, ck in zip(others, coeffs)]  # < 2**52
        fields.append(moves)
    return fields


def _pair_fields(kind: str, heads: list, p: int) -> list:
    """``mixing`` / ``symmetric-mixing``: one field per ordered pair of heads, ``δV_k = -σ V_j``."""
    symmetric = kind == "symmetric-mixing"
    fields = []
    for j, hj in enumerate(heads):
        move, scale = _reach("symmetric" if symmetric else "full", hj["Q"], hj["K"], p)
        for k, hk in enumerate(heads):
            if k != j:
                fields.append([(j, name, delta) for name, delta in move(_score_of(hk, symmetric, p)).items()]
                              + [(k, "V", np.mod(-scale * hj["V"], p))])
    return fields


def _factored_fields(heads: list, p: int, one_token: bool) -> list:
    """``factored-mixing`` (one token: ``symmetric-factored-mixing``), docs/math.md Lemma 7.3.7.

    Unknowns ``c_jk`` (``j != k``, ``j`` major); ``A_j`` (``S_j`` for one token) moves by
    ``X_j = Σ_k c_jk A_k`` and ``V_k = O_k U_k`` by ``Y_k = -Σ_j c_jk V_j``. The system: every ``X_j``
    tangent at ``A_j`` (null vectors of ``K_j`` and ``Q_j``, or of ``[K_j; Q_j]``), every ``Y_k``
    tangent at ``V_k`` (null vectors of ``O_kᵀ`` and ``U_k``). Per canonical null vector: head ``j``'s
    score move of ``X_j`` times ``Π_{i≠j} σ_i Π_i τ_i``, head ``k``'s product move of ``Y_k`` times
    ``Π_i σ_i Π_{i≠k} τ_i`` (``δA_j = σ_j X_j``, ``δV_k = τ_k Y_k``). All-or-nothing: a rank drop or
    dependent conditions mod p give no rows.
    """
    h = len(heads)
    a, d = heads[0]["Q"].shape
    how = ("symmetric-full" if one_token else "full") if a >= d else \
        ("rank" if not one_token else "symmetric" if 2 * a >= d else "symmetric-rank")
    unknowns = [(j, k) for j in range(h) for k in range(h) if k != j]
    scores = [_score_of(hd, one_token, p) for hd in heads]
    values = [product(hd["O"], hd["U"], p=p) for hd in heads]
    blocks = []
    for j, hd in enumerate(heads):
        if how in ("rank", "symmetric-rank"):
            R = np.concatenate([hd["K"], hd["Q"]]) if one_token else hd["K"]
            score_conditions = _conditions(R, R if one_token else hd["Q"], p, one_token)
        else:
            score_conditions = []
        value_conditions = _conditions(hd["O"].T, hd["U"], p, False)
        if score_conditions is None or value_conditions is None:
            return []
        # X_j's conditions read the scores of the other heads at columns (j, k); Y_j's the values at (k, j)
        blocks.append((j, 0, _evaluate(score_conditions, scores, p)))
        blocks.append((j, 1, _evaluate(value_conditions, values, p)))
    L = np.zeros((sum(len(E) for _, _, E in blocks), len(unknowns)), dtype=np.int64)
    row = 0
    for j, side, E in blocks:
        for col, (u, v) in enumerate(unknowns):
            if (u, v)[side] == j:
                L[row: row + len(E), col] = E[:, (v, u)[side]]
        row += len(E)
    if nmod(L, p).rank() < len(L):
        return []
    reach = [_reach(how, hd["Q"], hd["K"], p) for hd in heads]
    shift = [_product_move(hd["O"], hd["U"], p) for hd in heads]
    sigma, tau = [s for _, s in reach], [t for _, t in shift]
    fields = []
    for coeffs in null_basis(L, p):
        c = dict(zip(unknowns, coeffs))
        field = []
        for j in range(h):
            X = _combine([c[(j, k)] for k in range(h) if k != j], [scores[k] for k in range(h) if k != j], p)
            lam = _prod(sigma[:j] + sigma[j + 1:] + tau, p)
            field += [(j, name, np.mod(lam * delta, p)) for name, delta in reach[j][0](X).items()]
        for k in range(h):
            Y = np.mod(-_combine([c[(j, k)] for j in range(h) if j != k], [values[j] for j in range(h) if j != k], p), p)
            lam = _prod(sigma + tau[:k] + tau[k + 1:], p)
            dO, dU = shift[k][0](Y)
            field += [(k, "U", np.mod(lam * dU, p)), (k, "O", np.mod(lam * dO, p))]
        fields.append(field)
    return fields


def _prod(factors: list, p: int) -> int:
    out = 1
    for f in factors:
        out = out * int(f) % p
    return out


def _fixes_the_layer(kind: str, heads: list, moves: list, p: int) -> bool:
    """``Σ_j δV_j ⊗ A_j + V_j ⊗ δA_j = 0`` mod p (``A + Aᵀ`` with one token; ``Σ_j δV_j = 0`` normalized).

    The tensor is ``U Wᵀ`` with columns ``vec δV_j, vec V_j`` and ``vec A_j, vec δA_j`` over the heads
    the field moves, so it vanishes iff the row space of ``U`` (its rref) is orthogonal to ``W``: a few
    ``d^2``-vectors instead of a ``d' d^3`` tensor.
    """
    delta = {(j, name): m for j, name, m in moves}
    if kind == "value-mixing":
        return not np.any(np.mod(sum(m for (_, name), m in delta.items() if name == "V"), p))
    U, W = [], []
    for j in sorted({j for j, _, _ in moves}):
        h = heads[j]
        zero_q = np.zeros_like(h["Q"])
        A = product(h["K"].T, h["Q"], p=p)
        dA = np.mod(product(delta.get((j, "K"), zero_q).T, h["Q"], p=p) + product(h["K"].T, delta.get((j, "Q"), zero_q), p=p), p)
        if kind.startswith("symmetric"):
            A, dA = np.mod(A + A.T, p), np.mod(dA + dA.T, p)
        if "O" in h:  # V = O U: δV = δO U + O δU
            V = product(h["O"], h["U"], p=p)
            dV = np.mod(product(delta.get((j, "O"), np.zeros_like(h["O"])), h["U"], p=p)
                        + product(h["O"], delta.get((j, "U"), np.zeros_like(h["U"])), p=p), p)
        else:
            V, dV = h["V"], delta.get((j, "V"), np.zeros_like(h["V"]))
        U += [dV.ravel(), V.ravel()]
        W += [A.ravel(), dA.ravel()]
    R, rank = nmod(np.array(U).T, p).rref()
    rows = np.array([[int(R[r, c]) for c in range(len(U))] for r in range(rank)], dtype=np.int64)
    return not rank or not np.any(product(rows, np.array(W), p=p))


def moves(kind: str, heads: list, p: int) -> list:
    """The fields of one layer's mixing family at a point mod p, each a list of moves ``(head, name, delta)``.

    ``heads``: the layer's heads as ``name -> matrix`` dicts (``Q, K, V``, or ``Q, K, U, O`` for the
    factored kinds; entries in ``[0, p)``); ``head`` in a move is 0-based. Every field is checked to fix
    the layer at the point.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.dimension.mixing import moves
    >>> p, rng = 101, np.random.default_rng(3)
    >>> heads = [{"Q": rng.integers(0, p, (2, 3)), "K": rng.integers(0, p, (2, 3)), "V": rng.integers(0, p, (3, 3))}
    ...          for _ in range(3)]
    >>> [sorted({(j, n) for j, n, _ in f}) for f in moves("rank-mixing", heads, p)][0]
    [(0, 'K'), (0, 'Q'), (1, 'V'), (2, 'V')]
    >>> len(moves("value-mixing", heads, p))                     # (h - 1) d' d
    18

    Four heads of rank 3 on ``4 -> 4`` with value rank 3: every field moves every head's ``Q, K, U, O``:

    >>> heads = [{"Q": rng.integers(0, p, (3, 4)), "K": rng.integers(0, p, (3, 4)), "U": rng.integers(0, p, (3, 4)),
    ...           "O": rng.integers(0, p, (4, 3))} for _ in range(4)]
    >>> fields = moves("factored-mixing", heads, p)
    >>> len(fields), sorted({n for j, n, _ in fields[0]})
    (4, ['K', 'O', 'Q', 'U'])
    """
    if not lemma_holds(kind):  # pragma: no cover - own definitions
        reject(f"the lemma of the {kind} family does not hold")
    if kind in ("rank-mixing", "symmetric-rank-mixing"):
        fields = [f for j in range(len(heads)) for f in _constrained_head(heads, j, p, kind != "rank-mixing")]
    elif kind == "value-mixing":
        d_out, d_in = heads[0]["V"].shape
        fields = []
        for k in range(1, len(heads)):
            for u in range(d_out):
                for v in range(d_in):
                    E = np.zeros((d_out, d_in), dtype=np.int64)
                    E[u, v] = 1
                    fields.append([(0, "V", E), (k, "V", np.mod(-E, p))])
    elif kind in ("factored-mixing", "symmetric-factored-mixing"):
        fields = _factored_fields(heads, p, kind == "symmetric-factored-mixing")
    else:
        fields = _pair_fields(kind, heads, p)
    for f in fields:
        if not _fixes_the_layer(kind, heads, f, p):
            reject(f"internal: a {kind} field does not fix the layer at the point")  # pragma: no cover
    return fields
