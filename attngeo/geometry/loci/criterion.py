"""Theorem C of docs/math.md §8.3: the local rank of one attention layer from ranks of stacked weights.

A layer with ``h`` heads in ``g`` key-value groups (``g = h`` without grouped-query
attention), factored values ``V_j = O_j U_g`` and possibly biases has, at a point where

* (C1) ``[O_1 | ... | O_h]`` has rank ``h b``, (C2) ``[Q_1; ...; Q_h]`` has rank ``h a``,
* (C3) every group's ``K`` has rank ``a`` and ``U`` rank ``b``,
* (C4) groups differ in ``(row K, row U)`` (swapped too when ``a = b = 1``), (C5) no group has
  ``a = b = 1`` and ``row U = row K``,

local rank ``P - g (a^2 + b^2)`` (softmax; ``- g (a + b)`` more with biases, which softmax partly
cancels) or ``P - g (a^2 + b^2 + n^2)`` (lightning, ``n = h / g``), and is a regular point. Every
condition is a rank modulo ``p``; a full rank mod ``p`` is a full rank over Q, so the conditions
are proved, and nothing needs the score scale (ranks do not change under ``Q -> s Q``).

Where a condition fails, the theorem applied to a sub-layer of whole groups gives a lower bound
(:func:`separated_groups`), and the directions every layer has in its kernel give an upper bound
(:func:`kernel_dimension`, docs/math.md §8.4), both from ranks mod ``p`` (a rank mod ``p`` is at most
the rank over Q, which only loosens the upper bound). Nothing here forms a Jacobian: at LLaMA-7B's
size (``d = 4096``) the work is two ``4096 x 4096`` ranks and one ``1024 x 4096``.
"""

from __future__ import annotations

import numpy as np

from ...exact.rank import rank_mod_p
from ...model.architecture import Architecture

__all__ = ["applies", "separated_groups", "lower_bound", "kernel_dimension", "group_heads"]


def applies(arch: Architecture, whole: bool = True) -> str | None:
    """Why Theorem C cannot apply to ``arch`` at any point, or None; ``whole=False``: to a sub-layer of whole groups
    (docs/math.md §8.4), for which ``h a <= d`` and ``h b <= d'`` count the sub-layer's heads only.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> applies(Architecture((768, 768), (64,), heads=12, value_ranks=64, normalization="softmax", biases=True))
    >>> applies(Architecture((4, 4), (4,), heads=2, value_ranks=2))
    'h a = 8 > d = 4 (hypothesis of docs/math.md §8.3)'
    """
    if arch.depth != 1:
        return f"one layer (the network has {arch.depth})"
    if arch.normalization not in ("softmax", "lightning"):
        return f"softmax or lightning (Lemma R uses exp; {arch.normalization} is neither)"
    if arch.tokens < 2:
        return "t >= 2 (one token sees only the symmetric part of A)"
    if arch.value_ranks is None:
        return "factored values V_j = O_j U_j (value ranks)"
    (d, dd), a, h, b = arch.widths, arch.ranks[0], arch.heads[0], arch.value_ranks[0]
    if not whole:
        return None
    if h * a > d:
        return f"h a = {h * a} > d = {d} (hypothesis of docs/math.md §8.3)"
    if h * b > dd:
        return f"h b = {h * b} > d' = {dd} (hypothesis of docs/math.md §8.3)"
    return None


def group_heads(arch: Architecture) -> list[list[int]]:
    """The 1-based heads of each key-value group, in order.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> group_heads(Architecture((8, 8), (1,), heads=4, kv_heads=2, value_ranks=1))
    [[1, 2], [3, 4]]
    """
    h, g = arch.heads[0], arch.kv_heads[0]
    n = h // g
    return [list(range(k * n + 1, (k + 1) * n + 1)) for k in range(g)]


def _full(M: np.ndarray, p: int, axis: int) -> bool:
    """Whether ``M`` has full rank along ``axis`` (0: its rows, 1: its columns) mod ``p``."""
    return rank_mod_p(M, p) == M.shape[axis]


def _differ(block, x: int, y: int, p: int, first: str, second: str) -> bool:
    """``row first_x != row second_y``: stacked, they have more rank than one of them."""
    top = block(x, first)
    return rank_mod_p(np.concatenate([top, block(y, second)]), p) > rank_mod_p(top, p)


def separated_groups(arch: Architecture, block, p: int) -> list[int]:
    """The largest set of groups (greedy, in order) that satisfies (C1)–(C5) among themselves, mod ``p``.

    Parameters
    ----------
    arch : Architecture
        One layer to which Theorem C applies (:func:`applies` is None).
    block : callable
        ``block(head, name)``: the residues mod ``p`` of head ``head``'s matrix ``name`` (``"Q"``, ``"K"``,
        ``"U"``, ``"O"``; ``K`` and ``U`` are the head's group's).
    p : int

    Returns
    -------
    list of int
        1-based groups.

    Examples
    --------
    Two heads of ``a = b = 2`` on ``4 -> 4`` at selector weights, then with equal queries:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=2, normalization="softmax")
    >>> E = np.eye(4, dtype=np.int64)
    >>> W = {(1, "Q"): E[:2], (2, "Q"): E[2:], (1, "K"): E[:2], (2, "K"): E[2:],
    ...      (1, "U"): E[:2], (2, "U"): E[2:], (1, "O"): E[:, :2], (2, "O"): E[:, 2:]}
    >>> separated_groups(arch, lambda j, n: W[(j, n)], 101)
    [1, 2]
    >>> W[(2, "Q")] = E[:2]
    >>> separated_groups(arch, lambda j, n: W[(j, n)], 101)
    [1]
    """
    a, b = arch.ranks[0], arch.value_ranks[0]
    groups = group_heads(arch)
    first = [hs[0] for hs in groups]

    def own(gamma: int) -> bool:  # (C3), (C5)
        j = first[gamma - 1]
        if not (_full(block(j, "K"), p, 0) and _full(block(j, "U"), p, 0)):
            return False
        return max(a, b) >= 2 or _differ(block, j, j, p, "K", "U")

    def joint(S: list[int]) -> bool:  # (C1), (C2)
        heads = [j for gamma in S for j in groups[gamma - 1]]
        return (_full(np.concatenate([block(j, "O") for j in heads], axis=1), p, 1)
                and _full(np.concatenate([block(j, "Q") for j in heads], axis=0), p, 0))

    def apart(x: int, y: int) -> bool:  # (C4) for one pair of groups
        i, j = first[x - 1], first[y - 1]
        same = not (_differ(block, i, j, p, "K", "K") or _differ(block, i, j, p, "U", "U"))
        if same:
            return False
        if max(a, b) >= 2:
            return True
        return _differ(block, i, j, p, "K", "U") or _differ(block, i, j, p, "U", "K")

    good = [gamma for gamma in range(1, len(groups) + 1) if own(gamma)]
    if not good:
        return []
    # a full-rank stack of the groups' K separates every pair's row K, which is (C4) unless a = b = 1
    if joint(good) and (len(good) == 1 or max(a, b) >= 2
                        and _full(np.concatenate([block(first[x - 1], "K") for x in good]), p, 0)):
        return good
    chosen: list[int] = []
    for gamma in good:
        S = chosen + [gamma]
        if joint(S) and all(apart(x, gamma) for x in chosen):
            chosen = S
    return chosen


def _group_parameters(arch: Architecture) -> int:
    """Weights of one group: its heads' ``Q, O`` (and ``b_Q``) and its shared ``K, U`` (and ``b_K, b_V``)."""
    (d, dd), a, b = arch.widths, arch.ranks[0], arch.value_ranks[0]
    n = arch.heads[0] // arch.kv_heads[0]
    own, shared = a * d + dd * b, a * d + b * d
    if arch.biases:
        own, shared = own + a, shared + a + b
    return n * own + shared


def lower_bound(arch: Architecture, groups: list[int]) -> int:
    """The rank Theorem C gives to the sub-layer of ``groups`` (docs/math.md §8.3–8.4).

    Softmax: ``P_S - |S| (a^2 + b^2)``, minus ``|S| (a + b)`` with biases (whose ``b_O`` joins every
    sub-layer). Lightning: ``P_S - |S| (a^2 + b^2 + n^2)``; with biases only the bias-free part of the
    sub-layer is counted, plus the ``d'`` of ``b_O`` (the cubic and the constant parts of the output).

    Examples
    --------
    BERT-base's attention (768, 12 heads of 64, biases): ``P - 12 (2 * 64^2 + 128)``:

    >>> from attngeo import Architecture
    >>> arch = Architecture((768, 768), (64,), heads=12, value_ranks=64, normalization="softmax", biases=True)
    >>> lower_bound(arch, list(range(1, 13))) == arch.parameter_count - 12 * (2 * 64**2 + 128)
    True
    >>> lower_bound(arch, [])   # the output bias alone: the identity on every token
    768
    """
    a, b, dd = arch.ranks[0], arch.value_ranks[0], arch.widths[1]
    n = arch.heads[0] // arch.kv_heads[0]
    s = len(groups)
    bias_out = dd if arch.biases else 0
    if arch.normalization != "lightning":
        group = a * a + b * b + (a + b if arch.biases else 0)
        return s * (_group_parameters(arch) - group) + bias_out
    plain = _group_parameters(arch) - ((n + 1) * a + b if arch.biases else 0)
    return s * (plain - (a * a + b * b + n * n)) + bias_out


def kernel_dimension(arch: Architecture, block, p: int) -> int:
    """``dim k(W)``: the directions in ``ker d phi_W`` at every point (docs/math.md §8.4), from ranks mod ``p``.

    Per group: ``GL_a`` and ``GL_b`` (acting on the biases too) less their stabilizer
    ``(a - r_K)(a - r_Q~) + (b - r_O)(b - r_U)``, with ``Q~`` the group's ``[Q_j | b_Q,j]`` side by side and
    ``O`` its ``O_j`` stacked; with biases and softmax also the key bias and the value bias (merged into
    ``b_O``), ``a + b``. Lightning adds the group's mixing ``gl_n`` (the scalings when ``n = 1``) where it
    provably acts freely (``K``, ``U`` of full rank, the group's queries independent); elsewhere it is left
    out, a valid, looser bound. A rank mod ``p`` is at most the rank over Q, so this is at most the true
    dimension, and ``P - kernel_dimension`` is an upper bound on the local rank.

    ``block(head, name)`` as for :func:`separated_groups`, and ``"bQ"`` (a column) when there are biases.

    Examples
    --------
    One softmax head of ``a = b = 2`` on ``3 -> 3``; zero ``K`` leaves the stabilizer ``(a - 0)(a - rank Q)``:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> arch = Architecture((3, 3), (2,), value_ranks=2, normalization="softmax")
    >>> I = np.eye(3, dtype=np.int64)
    >>> W = {"Q": I[:2], "K": I[1:], "U": I[:2], "O": I[:, :2]}
    >>> kernel_dimension(arch, lambda j, n: W[n], 101)             # a^2 + b^2
    8
    >>> W["K"] = 0 * I[:2]                                          # rank Q = 2: GL_2 still moves Q
    >>> kernel_dimension(arch, lambda j, n: W[n], 101)
    8
    >>> W["Q"] = np.array([[1, 0, 0], [2, 0, 0]])                   # rank Q = 1: a stabilizer (2 - 0)(2 - 1)
    >>> kernel_dimension(arch, lambda j, n: W[n], 101)
    6
    """
    a = arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    translations = arch.biases and arch.normalization != "lightning"
    total = 0
    for heads in group_heads(arch):
        j = heads[0]
        queries = [np.concatenate([block(i, "Q"), block(i, "bQ")], axis=1) if arch.biases else block(i, "Q")
                   for i in heads]
        r_q = rank_mod_p(np.concatenate(queries, axis=1), p)
        # lightning moves the key and value biases with K and U: its stabilizer sees [K | b_K] and [U | b_V]
        with_bias = arch.biases and arch.normalization == "lightning"
        value = "U" if b is not None else "V"
        K, U = ((np.concatenate([block(j, n), block(j, bias)], axis=1) if with_bias else block(j, n))
                for n, bias in (("K", "bK"), (value, "bV")))
        r_k = rank_mod_p(K, p)
        total += a * a - (a - r_k) * (a - r_q)
        if b is not None:
            r_o = rank_mod_p(np.concatenate([block(i, "O") for i in heads], axis=0), p)
            r_u = rank_mod_p(U, p)
            total += b * b - (b - r_o) * (b - r_u)
        if translations:  # b_K, and b_V against b_O (b_V lives in d' when V is unfactored)
            total += a + (b if b is not None else arch.widths[1])
        elif arch.normalization == "lightning" and b is not None and r_k == a and r_u == b \
                and rank_mod_p(np.concatenate(queries, axis=0), p) == a * len(heads):
            # K, U of full rank and the group's queries independent: the mixing gl_n (scalings when n = 1)
            # acts freely beside GL_a x GL_b (a stabilizer (C, D, E) has C = 0, D = 0, then E = 0)
            total += len(heads) ** 2
        elif arch.normalization == "lightning" and b is None and U.any():
            total += 1  # V unfactored: the scaling (Q~, -V~) moves V~ != 0, which GL_a never does
    return total


def explicit_fields(arch: Architecture, point: np.ndarray, p: int) -> np.ndarray:
    """The directions of ``k`` (docs/math.md §8.4) at an integer point, one row each, mod ``p``.

    Per group: ``gl_a`` on ``Q~_j = [Q_j | b_Q,j]`` and ``K~ = [K | b_K]``, ``gl_b`` on ``U~ = [U | b_V]`` and
    the ``O_j``; lightning adds the mixing ``gl_n`` of the group's ``(O_j, Q~_j)`` (the scaling of each head
    when ``V`` is unfactored), softmax with biases the translations of ``b_K`` and of ``b_V`` against ``b_O``.
    Their rank at the point is at most the generic one, so ``P - rank`` bounds ``dim M`` (the exact count
    where :func:`kernel_dimension`'s stabilizer formula would give up, e.g. mixing with ``n a > d + 1``).

    Examples
    --------
    Two lightning heads sharing ``K`` and ``U`` on ``2 -> 2`` with ``a = 2``: the stacked queries cannot be
    independent (``4 > 3``), yet ``GL_2 x GL_1 x gl_2`` acts freely: rank ``4 + 1 + 4``.

    >>> from attngeo import Architecture
    >>> from attngeo.exact.rank import rank_mod_p
    >>> arch = Architecture((2, 2), (2,), heads=2, kv_heads=1, value_ranks=1)
    >>> rank_mod_p(explicit_fields(arch, np.arange(1, arch.parameter_count + 1) ** 2, 101), 101)
    9
    """
    P = arch.parameter_count
    a = arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    n = arch.heads[0] // arch.kv_heads[0]
    at = {}
    for blk in arch.blocks():
        owner = ("g", blk.group) if blk.group else blk.head
        at[(owner, blk.name)] = blk
    point = np.mod(point, p)

    def get(key):
        blk = at[key]
        return point[blk.offset: blk.offset + blk.size].reshape(blk.rows, blk.cols)

    def tilde(key, bias):  # [M | b] with biases, else M
        return np.concatenate([get(key), get(bias)], axis=1) if arch.biases else get(key)

    def put(row, key, bias, M):  # M in the tilde shape of (key, bias)
        blk = at[key]
        cols = blk.cols
        row[blk.offset: blk.offset + blk.size] = (row[blk.offset: blk.offset + blk.size] + M[:, :cols].ravel()) % p
        if arch.biases and bias is not None:
            bb = at[bias]
            row[bb.offset: bb.offset + bb.size] = (row[bb.offset: bb.offset + bb.size] + M[:, cols]) % p

    rows = []
    softmax = arch.normalization != "lightning"
    for gamma, heads in enumerate(group_heads(arch), start=1):
        g = ("g", gamma) if n > 1 else heads[0]
        value = "U" if b is not None else "V"
        for u in range(a):
            for v in range(a):
                E = np.zeros((a, a), dtype=np.int64)
                E[u, v] = 1
                row = np.zeros(P, dtype=np.int64)
                for j in heads:
                    put(row, (j, "Q"), (j, "bQ"), E @ tilde((j, "Q"), (j, "bQ")))
                K = tilde((g, "K"), (g, "bK"))
                put(row, (g, "K"), None if softmax else (g, "bK"), (-(E.T @ K)) % p)  # softmax: b_K moves freely
                rows.append(row)
        if b is not None:
            for u in range(b):
                for v in range(b):
                    E = np.zeros((b, b), dtype=np.int64)
                    E[u, v] = 1
                    row = np.zeros(P, dtype=np.int64)
                    put(row, (g, "U"), (g, "bV"), E @ tilde((g, "U"), (g, "bV")))
                    for j in heads:
                        put(row, (j, "O"), None, (-(get((j, "O")) @ E)) % p)
                    rows.append(row)
        if not softmax and b is not None:  # the mixing of the group's heads
            for x, i in enumerate(heads):
                for y, j in enumerate(heads):
                    row = np.zeros(P, dtype=np.int64)
                    put(row, (j, "O"), None, (-get((i, "O"))) % p)  # d O_j = -O_i E_ij
                    put(row, (i, "Q"), (i, "bQ"), tilde((j, "Q"), (j, "bQ")))  # d Q~_i = E_ij Q~_j
                    rows.append(row)
        elif not softmax:  # unfactored values: each head's scaling, the value bias moving with V
            for j in heads:
                row = np.zeros(P, dtype=np.int64)
                put(row, (j, "Q"), (j, "bQ"), tilde((j, "Q"), (j, "bQ")))
                put(row, (j, value), (j, "bV"), (-tilde((j, value), (j, "bV"))) % p)
                rows.append(row)
        if softmax and arch.biases:
            for r in range(a):  # b_K: a per-query constant of the scores
                row = np.zeros(P, dtype=np.int64)
                row[at[(g, "bK")].offset + r] = 1
                rows.append(row)
            bias_out = at[(0, "bO")]
            for r in range(b if b is not None else arch.widths[1]):  # b_V against b_O
                for j in (heads if b is None else heads[:1]):
                    key = (j, "bV") if b is None else (g, "bV")
                    row = np.zeros(P, dtype=np.int64)
                    row[at[key].offset + r] = 1
                    drift = sum(get((i, "O"))[:, r] for i in heads) if b is not None else np.eye(arch.widths[1],
                                                                                                     dtype=np.int64)[r]
                    row[bias_out.offset: bias_out.offset + bias_out.size] = (-drift) % p
                    rows.append(row)
    return np.array(rows, dtype=np.int64)
