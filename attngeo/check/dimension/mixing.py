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

KINDS = ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing", "value-mixing")


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
    """
    h, a, d = arch.head_count(i), arch.ranks[i - 1], arch.widths[i - 1]
    if h == 1 or arch.value_ranks is not None:
        return None
    if arch.normalization == "lightning":
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
      rule and, for rank-mixing, the null-vector condition finish the proof (docs/math.md §7.3).

    Examples
    --------
    >>> from attngeo.check.dimension.mixing import lemma_holds
    >>> [lemma_holds(k) for k in ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing",
    ...                           "value-mixing", "other")]
    [True, True, True, True, True, False]
    """
    if kind not in KINDS:
        return False
    sym = {"J", "H"}
    L = _letters("V_j V_k A_j A_k Y M E K Q X J H K_k Q_k", sym)
    neg = lambda p: _poly(*((-c, s, w) for (s, w), c in p.items()))  # noqa: E731
    if kind == "value-mixing":
        heads = _plus(_times(L["V_j"], L["Y"]), _times(L["V_k"], L["Y"]))
        return _derivative(heads, {"V_j": L["E"], "V_k": neg(L["E"])}, sym) == {}
    heads = _plus(*(_times(L[v], L["Y"], L["M"], L["Y'"], L[a], L["Y"]) for v, a in (("V_j", "A_j"), ("V_k", "A_k"))))
    if _derivative(heads, {"A_j": L["A_k"], "V_k": neg(L["V_j"])}, sym) != {}:
        return False
    A = _times(L["K'"], L["Q"])
    Ak = _times(L["K_k'"], L["Q_k"])
    if kind == "mixing":
        dA = _derivative(A, {"Q": neg(_times(L["K"], L["J"], Ak))}, sym)
        return _plus(dA, _times(L["K'"], L["K"], L["J"], Ak)) == {}
    if kind == "rank-mixing":
        rest_K = _plus(_scalar("c_K"), neg(_times(L["K'"], L["J"], L["K"])))
        rest_Q = _plus(_scalar("c_Q"), neg(_times(L["Q'"], L["H"], L["Q"])))
        dA = _derivative(A, {"Q": _times(_scalar("c_Q"), L["J"], L["K"], L["X"]),
                             "K": _times(L["H"], L["Q"], L["X'"], rest_K)}, sym)
        want = _plus(_times(_scalar("c_K"), _scalar("c_Q"), L["X"]), neg(_times(rest_K, L["X"], rest_Q)))
        return _plus(dA, neg(want)) == {}
    if kind == "symmetric-rank-mixing":  # R = [K; Q], adj(R R') = [J11 J12; J12' J22], X symmetric
        sym = {"J11", "J22", "X"}
        L = _letters("K Q X J11 J12 J22", sym)
        P = _plus(*(_times(L[u + "'"], L[j], L[v]) for u, j, v in
                    (("K", "J11", "K"), ("K", "J12", "Q"), ("Q", "J12'", "K"), ("Q", "J22", "Q"))))
        tail = _plus(_poly((2, ("c",), ())), neg(P))
        dA = _derivative(_times(L["K'"], L["Q"]), {
            "Q": _times(_plus(_times(L["J11"], L["K"]), _times(L["J12"], L["Q"])), L["X"], tail),
            "K": _times(_plus(_times(L["J12'"], L["K"]), _times(L["J22"], L["Q"])), L["X"], tail)}, sym)
        rest = _plus(_scalar("c"), neg(P))
        want = _plus(_poly((2, ("c", "c"), ["X"])), _times(_poly((-2, (), ())), rest, L["X"], rest))
        return _plus(dA, _transpose(dA, sym), neg(want)) == {}
    B = _plus(Ak, _transpose(Ak, sym))
    G = _plus(_times(L["K'"], L["K"]), _times(L["Q'"], L["Q"]))
    dA = _derivative(A, {"Q": neg(_times(L["K"], L["J"], B)), "K": neg(_times(L["Q"], L["J"], B))}, sym)
    return _plus(dA, _transpose(dA, sym), _times(G, L["J"], B), _times(B, L["J"], G)) == {}


# -- values at a point mod p ---------------------------------------------------------------------------


def _constrained_head(heads: list, j: int, p: int, symmetric: bool) -> list:
    """rank-mixing (``symmetric`` False) or symmetric-rank-mixing fields of head ``j`` (0-based)."""
    Q, K, V = heads[j]["Q"], heads[j]["K"], heads[j]["V"]
    a, d = Q.shape
    R = np.concatenate([K, Q]) if symmetric else K
    rho = d - R.shape[0]
    left = null_basis(R, p)
    right = left if symmetric else null_basis(Q, p)
    if len(left) != rho or len(right) != rho:
        return []
    others = [k for k in range(len(heads)) if k != j]
    basis = []
    for k in others:
        A = product(heads[k]["K"].T, heads[k]["Q"], p=p)
        basis.append(np.mod(A + A.T, p) if symmetric else A)
    conditions = [(s, t) for s in range(rho) for t in range(s if symmetric else 0, rho)]
    L = np.zeros((len(conditions), len(others)), dtype=np.int64)
    for row, (s, t) in enumerate(conditions):
        for col, B in enumerate(basis):
            L[row, col] = int(product(left[s][None, :], B, right[t][:, None], p=p)[0, 0])
    if nmod(L, p).rank() < len(conditions):
        return []
    G = product(R, R.T, p=p)
    c, J = det(G, p), adjugate(G, p)
    Pi = product(R.T, J, R, p=p)
    if symmetric:
        tail, scale = np.mod(2 * c * np.eye(d, dtype=np.int64) - Pi, p), 2 * c * c % p
    else:
        GQ = product(Q, Q.T, p=p)
        cQ, HQ = det(GQ, p), adjugate(GQ, p)
        rest, scale = np.mod(c * np.eye(d, dtype=np.int64) - Pi, p), c * cQ % p
    fields = []
    for coeffs in null_basis(L, p):
        X = np.mod(sum(np.mod(int(ck) * B, p) for ck, B in zip(coeffs, basis)), p)  # h terms < p: no overflow
        if symmetric:
            Y = product(J, R, X, tail, p=p)
            moves = [(j, "Q", Y[:a]), (j, "K", Y[a:])]
        else:
            moves = [(j, "Q", np.mod(cQ * product(J, K, X, p=p), p)), (j, "K", product(HQ, Q, X.T, rest, p=p))]
        moves += [(k, "V", np.mod(-(scale * int(ck) % p) * V, p)) for k, ck in zip(others, coeffs)]  # < 2**52
        fields.append(moves)
    return fields


def _pair_fields(kind: str, heads: list, p: int) -> list:
    """``mixing`` / ``symmetric-mixing``: one field per ordered pair of heads."""
    fields = []
    for j, hj in enumerate(heads):
        Q, K, V = hj["Q"], hj["K"], hj["V"]
        G = product(K.T, K, p=p) if kind == "mixing" else np.mod(product(K.T, K, p=p) + product(Q.T, Q, p=p), p)
        c, J = det(G, p), adjugate(G, p)
        for k, hk in enumerate(heads):
            if k == j:
                continue
            Ak = product(hk["K"].T, hk["Q"], p=p)
            if kind == "mixing":
                fields.append([(j, "Q", np.mod(-product(K, J, Ak, p=p), p)), (k, "V", np.mod(c * V, p))])
            else:
                JB = product(J, Ak + Ak.T, p=p)
                fields.append([(j, "Q", np.mod(-product(K, JB, p=p), p)), (j, "K", np.mod(-product(Q, JB, p=p), p)),
                               (k, "V", np.mod(2 * c * V, p))])
    return fields


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
        U += [delta.get((j, "V"), np.zeros_like(h["V"])).ravel(), h["V"].ravel()]
        W += [A.ravel(), dA.ravel()]
    R, rank = nmod(np.array(U).T, p).rref()
    rows = np.array([[int(R[r, c]) for c in range(len(U))] for r in range(rank)], dtype=np.int64)
    return not rank or not np.any(product(rows, np.array(W), p=p))


def moves(kind: str, heads: list, p: int) -> list:
    """The fields of one layer's mixing family at a point mod p, each a list of moves ``(head, name, delta)``.

    ``heads``: the layer's heads as ``name -> matrix`` dicts (entries in ``[0, p)``);
    ``head`` in a move is 0-based. Every field is checked to fix the layer at the point.

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
    else:
        fields = _pair_fields(kind, heads, p)
    for f in fields:
        if not _fixes_the_layer(kind, heads, f, p):
            reject(f"internal: a {kind} field does not fix the layer at the point")  # pragma: no cover
    return fields
