"""The checker's own kernel families (docs/invariance.md §5): which apply, and their values at a point mod p.

Written again from the lemmas, not imported from the prover:

* ``annihilator`` at layer ``i`` (``i >= 2``): with ``d_j = min(d_0, ..., d_{i-1})``
  (``j`` the last such index) below ``d_{i-1}``, layer ``i-1``'s output lies in the
  column space of ``B = V_{i-1} ... V_{j+1}``; for ``n`` in the left null space of ``B``
  the moves ``e_r nᵀ`` of ``Q_i``, ``K_i``, ``V_i`` change nothing. The polynomial
  annihilators span that null space where ``rank B = d_j``; the checker confirms
  the rank mod p, builds the canonical null basis itself and checks ``nᵀ B = 0``.
* ``symmetric-score`` at layer ``i`` (lightning, ``a_i >= 2``): inputs of rank
  ``<= 1`` (one token, or an earlier layer with ``a_j = 1``) see only ``sym(A_i)``;
  ``δQ = J K``, ``δK = J Q`` (``J = E_uv - E_vu``) move ``A_i`` by skew matrices.
* ``score-free`` at layer ``i`` (normalized, one token): the score is ``1``; every
  entry of ``Q_i`` and ``K_i`` is a kernel direction.
* ``symmetric-score`` / ``score-free`` beyond [HMK]'s model: with one token, per head, as
  above (the skew moves of each ``A_j``; every entry of each head's ``Q``, ``K``).
* ``annihilator`` beyond [HMK]'s model (no residual connection): layer ``i-1``'s output
  lies in the span of ``B = [V_1 | ... | V_h]`` (the ``O`` when factored); when ``B``
  has fewer columns than rows, each ``n`` with ``nᵀ B = 0`` moves every row of every
  head's ``Q``, ``K`` and ``V`` (or ``U``) of layer ``i`` by ``nᵀ`` without effect.
* the mixing of heads (``mixing``, ``rank-mixing``, ``symmetric-mixing``, ``value-mixing``):
  :mod:`attngeo.check.dimension.mixing`, with its own lemma replay and a check at the point.
* ``co-annihilator`` at layer ``i < l`` (normalized, one token): the network is
  ``V_l ... V_1 X``; with ``d_k = min(d_{i+1}, ..., d_l)`` (``k`` the first such index)
  below ``d_i``, moving ``V_i`` by ``u e_cᵀ`` with ``C u = 0``, ``C = V_k ... V_{i+1}``,
  changes nothing (where ``rank C = d_k``; canonical null basis of ``C``). With heads the network is
  ``S_l ... S_1 x`` (``S_i = Σ_j V_ij``, ``V`` unfactored, no residual) and head 1's ``V_i`` moves.
"""

from __future__ import annotations

import numpy as np

from ..arch import Arch
from ..linalg import nmod, null_basis
from . import mixing


def _score_moves(kind: str, Q: np.ndarray, K: np.ndarray):
    """``(name, delta)`` of ``score-free`` (every entry of ``Q``, ``K``) or ``symmetric-score`` (``J K``, ``J Q``) on one head."""
    if kind == "score-free":
        for name, M in (("Q", Q), ("K", K)):
            for k in range(M.size):
                delta = np.zeros(M.size, dtype=np.int64)
                delta[k] = 1
                yield name, delta.reshape(M.shape)
        return
    for u in range(Q.shape[0]):
        for v in range(u + 1, Q.shape[0]):  # J = E_uv - E_vu: A moves by skew matrices
            for name, source in (("Q", K), ("K", Q)):
                delta = np.zeros_like(Q)
                delta[u, :], delta[v, :] = source[v, :], -source[u, :]
                yield name, delta


def _value_width(arch: Arch, i: int) -> int:
    """Columns of ``[V_i1 | ... | V_ih]`` (the ``O`` when factored), whose span holds layer ``i``'s output."""
    return arch.head_count(i) * (arch.value_ranks[i - 1] if arch.value_ranks else arch.widths[i - 1])


#: Families whose rows :func:`head_rows` builds itself; every other kind is a mixing family (check/dimension/mixing.py).
_OWN_KINDS = ("annihilator", "symmetric-score", "score-free", "co-annihilator")


def mixing_work(arch: Arch, families: list) -> int:
    """Head moves the mixing families make :func:`head_rows` build and test at the point (``MAX_MIXING_MOVES``).

    A field of a mixing family moves up to every head of its layer and is tested against all of them, so a
    family of ``size`` fields costs about ``size * h`` small matrix operations: ``O(h^3)`` for ``rank-mixing``,
    which the final matrix's size (``MAX_FIELD_ENTRIES``) does not bound (300 heads of ``2 -> 1``: an hour).

    Examples
    --------
    >>> mixing_work(Arch((2, 1), (1,), 2, heads=(10,)), expected(Arch((2, 1), (1,), 2, heads=(10,))))   # 80 x 10
    800
    """
    return sum(f["size"] * arch.head_count(f["layer"]) for f in families if f["kind"] not in _OWN_KINDS)


def head_rows(arch: Arch, W: dict, put, p: int) -> list:
    """The annihilator and mixing moves of a multi-head architecture at ``W`` (``(layer, head, name) -> matrix`` mod p).

    ``put(layer, *(head, name, delta))`` makes one vector of the moves of one field.

    Examples
    --------
    Two heads on ``2 -> 2`` of rank 2 give two moves (``j, k = 1, 2`` and ``2, 1``):

    >>> import numpy as np
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.kernelfields import head_rows
    >>> arch, p = Arch((2, 2), (2,), 2, heads=(2,)), 101
    >>> rng = np.random.default_rng(0)
    >>> W = {(i, j, n): rng.integers(0, p, (r, c)) for i, j, n, r, c, _ in arch.blocks()}
    >>> head_rows(arch, W, lambda i, *moves: [(j, name) for j, name, _ in moves], p)
    [[(1, 'Q'), (2, 'V')], [(2, 'Q'), (1, 'V')]]
    """
    out = []
    for fam in expected(arch):
        i, h = fam["layer"], arch.head_count(fam["layer"])
        if fam["kind"] == "annihilator":
            last = "V" if arch.value_ranks is None else "O"
            B = np.hstack([W[(i - 1, j, last)] for j in range(1, arch.head_count(i - 1) + 1)])
            if nmod(B, p).rank() < B.shape[1]:
                continue
            for n in null_basis(B.T, p):
                for j in range(1, h + 1):
                    for name in ("Q", "K", "V" if arch.value_ranks is None else "U"):
                        for r in range(W[(i, j, name)].shape[0]):
                            delta = np.zeros_like(W[(i, j, name)])
                            delta[r, :] = n
                            out.append(put(i, (j, name, delta)))
            continue
        if fam["kind"] in ("symmetric-score", "score-free"):
            for j in range(1, h + 1):
                for name, delta in _score_moves(fam["kind"], W[(i, j, "Q")], W[(i, j, "K")]):
                    out.append(put(i, (j, name, delta)))
            continue
        if fam["kind"] == "co-annihilator":  # normalized, one token: (sum_j V_lj) ... (sum_j V_1j) x
            k = _first_narrowest_after(arch.widths, i)
            C = np.eye(arch.widths[i], dtype=np.int64)
            for m in range(i + 1, k + 1):
                S = np.mod(sum(W[(m, j, "V")] for j in range(1, arch.head_count(m) + 1)), p)
                C = np.mod(S @ C, p)  # inner size d_i <= 2047, entries < p: below 2**63
            if nmod(C, p).rank() < arch.widths[k]:
                continue
            for u in null_basis(C, p):
                for c in range(arch.widths[i - 1]):
                    delta = np.zeros((arch.widths[i], arch.widths[i - 1]), dtype=np.int64)
                    delta[:, c] = u
                    out.append(put(i, (1, "V", delta)))
            continue
        heads = [{name: W[(i, j, name)] for name in ("QKV" if arch.value_ranks is None else "QKUO")}
                 for j in range(1, h + 1)]
        for field in mixing.moves(fam["kind"], heads, p):
            out.append(put(i, *((j + 1, name, delta) for j, name, delta in field)))
    return out


def _narrowest(widths: tuple, i: int) -> int:
    m = min(widths[: i + 1])
    return max(j for j in range(i + 1) if widths[j] == m)


def _first_narrowest_after(widths: tuple, i: int) -> int:
    m = min(widths[i + 1:])
    return min(k for k in range(i + 1, len(widths)) if widths[k] == m)


def expected(arch: Arch) -> list[dict]:
    """The kernel families of ``arch`` in canonical order (by layer, then kind).

    Returns
    -------
    list of dict
        ``kind``, ``layer`` and ``size`` (the number of fields) of each family that applies.

    Examples
    --------
    Layer 1 widens ``2 -> 3``, so layer 2 reads a 3-vector with a left
    annihilator: ``(2 a_2 + d_2)(d_1 - d_0) = 6`` moves. With one token a
    layer sees only ``sym(A)``. Neither applies to one layer with two tokens:

    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.kernelfields import expected
    >>> expected(Arch((2, 3, 2), (2, 2), 2))
    [{'kind': 'annihilator', 'layer': 2, 'size': 6}]
    >>> expected(Arch((3, 3), (2,), 1)), expected(Arch((3, 3), (2,), 2))
    ([{'kind': 'symmetric-score', 'layer': 1, 'size': 2}], [])
    """
    if not arch.plain:  # heads: narrow value maps and the mixing of heads (docs/multihead.md §3)
        out = []
        for i in range(1, len(arch.ranks) + 1):
            h = arch.head_count(i)
            if i > 1 and not arch.residual and _value_width(arch, i - 1) < arch.widths[i - 1]:
                read = 2 * arch.ranks[i - 1] + (arch.value_ranks[i - 1] if arch.value_ranks else arch.widths[i])
                out.append({"kind": "annihilator", "layer": i,
                            "size": (arch.widths[i - 1] - _value_width(arch, i - 1)) * h * read})
            a, d_in = arch.ranks[i - 1], arch.widths[i - 1]
            if arch.tokens == 1 and arch.normalization == "lightning" and a >= 2:
                out.append({"kind": "symmetric-score", "layer": i, "size": h * a * (a - 1)})
            elif arch.tokens == 1 and arch.normalization != "lightning":
                out.append({"kind": "score-free", "layer": i, "size": h * 2 * a * d_in})
            mix = mixing.expected_family(arch, i)
            if mix:
                out.append(mix)
            if arch.tokens == 1 and arch.normalization != "lightning" and i < len(arch.ranks) \
                    and not arch.residual and arch.value_ranks is None:
                k = _first_narrowest_after(arch.widths, i)
                if arch.widths[k] < arch.widths[i]:
                    out.append({"kind": "co-annihilator", "layer": i, "size": d_in * (arch.widths[i] - arch.widths[k])})
        return out
    out = []
    for i, a in enumerate(arch.ranks, start=1):
        d_in = arch.widths[i - 1]
        if i > 1:
            j = _narrowest(arch.widths, i - 1)
            if arch.widths[j] < d_in:
                out.append({"kind": "annihilator", "layer": i, "size": (2 * a + arch.widths[i]) * (d_in - arch.widths[j])})
        rank_one = arch.tokens == 1 or (arch.normalization == "lightning" and 1 in arch.ranks[: i - 1])
        if arch.normalization != "lightning" and arch.tokens == 1:
            out.append({"kind": "score-free", "layer": i, "size": 2 * a * d_in})
            if i < len(arch.ranks):
                k = _first_narrowest_after(arch.widths, i)
                if arch.widths[k] < arch.widths[i]:
                    out.append({"kind": "co-annihilator", "layer": i, "size": d_in * (arch.widths[i] - arch.widths[k])})
        elif arch.normalization == "lightning" and rank_one and a >= 2:
            out.append({"kind": "symmetric-score", "layer": i, "size": a * (a - 1)})
    return out


def rows(arch: Arch, W: dict, put, p: int) -> list[np.ndarray]:
    """The kernel fields' values at the point ``W`` (``(layer, name) -> matrix`` mod p), one vector each.

    Parameters
    ----------
    arch : Arch
        The architecture.
    W : dict
        ``(layer, name) -> int64 matrix`` with entries in ``[0, p)``.
    put : callable
        ``put(layer, name, delta)``: the flat vector of a move ``delta`` of one weight matrix.
    p : int
        The prime.

    Examples
    --------
    For widths ``2, 3, 2`` the six annihilator moves put a vector ``n`` with
    ``n^T V_1 = 0`` into one row of ``Q_2``, ``K_2`` or ``V_2``:

    >>> import numpy as np
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.kernelfields import rows
    >>> arch, p = Arch((2, 3, 2), (2, 2), 2), 101
    >>> rng = np.random.default_rng(0)
    >>> W = {(i, name): rng.integers(0, p, (r, c)) for i, name, r, c, _ in arch.shapes()}
    >>> moves = rows(arch, W, lambda i, name, delta: (i, name, delta), p)
    >>> [(i, name) for i, name, _ in moves]
    [(2, 'Q'), (2, 'Q'), (2, 'K'), (2, 'K'), (2, 'V'), (2, 'V')]
    >>> n = moves[0][2][0]
    >>> np.mod(n @ W[(1, "V")], p).tolist()
    [0, 0]
    """
    out = []
    for fam in expected(arch):
        i = fam["layer"]
        Q, K, V = W[(i, "Q")], W[(i, "K")], W[(i, "V")]
        if fam["kind"] == "annihilator":
            j = _narrowest(arch.widths, i - 1)
            B = np.eye(arch.widths[j], dtype=np.int64)
            for k in range(j + 1, i):
                B = np.mod(W[(k, "V")] @ B, p)  # inner size d_j <= 2047 and entries < p: below 2**63
            if nmod(B, p).rank() < arch.widths[j]:
                continue
            for n in null_basis(B.T, p):
                for name, M in (("Q", Q), ("K", K), ("V", V)):
                    for r in range(M.shape[0]):
                        delta = np.zeros_like(M)
                        delta[r, :] = n
                        out.append(put(i, name, delta))
        elif fam["kind"] in ("symmetric-score", "score-free"):
            for name, delta in _score_moves(fam["kind"], Q, K):
                out.append(put(i, name, delta))
        elif fam["kind"] == "co-annihilator":
            k = _first_narrowest_after(arch.widths, i)
            C = np.eye(arch.widths[i], dtype=np.int64)
            for m in range(i + 1, k + 1):
                C = np.mod(W[(m, "V")] @ C, p)  # inner size d_i <= 2047, entries < p: below 2**63
            if nmod(C, p).rank() < arch.widths[k]:
                continue
            for u in null_basis(C, p):
                for c in range(V.shape[1]):
                    delta = np.zeros_like(V)
                    delta[:, c] = u
                    out.append(put(i, "V", delta))
    return out
