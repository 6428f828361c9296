"""The checker's own Theorem C (docs/math.md §8.3–8.4): the conditions, the bound they prove, the kernel.

Theorem C gives the local rank of one layer with ``h`` heads in ``g`` key-value groups and
factored values from ranks of stacked weights: (C1) ``[O_1 | ... | O_h]`` of rank ``h b``, (C2)
``[Q_1; ...; Q_h]`` of rank ``h a``, (C3) every group's ``K`` of rank ``a`` and ``U`` of rank ``b``,
(C4) groups apart in ``(row K, row U)`` (swapped too when ``a = b = 1``), (C5) no group with
``a = b = 1`` and ``row U = row K``; hypotheses ``t >= 2``, ``h a <= d``, ``h b <= d'``, one layer,
factored values. Every condition is verified here as a rank mod the certificate's prime (full mod
``p`` is full over Q). Nothing is shared with the prover (:mod:`attngeo.geometry.loci.criterion`).
"""

from __future__ import annotations

import numpy as np

from ..limits import MAX_PAIR_ENTRIES, refuse_above
from ..linalg import rank
from ..values import reject




def hypotheses(arch, groups: int | None = None) -> str | None:
    """The first hypothesis of Theorem C the architecture (or its sub-layer of ``groups`` groups) fails, or None.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> hypotheses(Arch((4, 4), (2,), 2, "softmax", (2,), (2,))), hypotheses(Arch((4, 4), (3,), 2, "softmax", (2,), (2,)))
    (None, "h a <= d and h b <= d'")
    """
    if len(arch.ranks) != 1:
        return "one layer"
    if arch.normalization not in ("softmax", "lightning"):
        return "softmax (Lemma R uses exp) or lightning"
    if arch.tokens < 2:
        return "t >= 2"
    if arch.value_ranks is None:
        return "factored values (value ranks)"
    (d, dd), a, h, b = arch.widths, arch.ranks[0], arch.head_count(1), arch.value_ranks[0]
    if groups is not None:
        h = groups * arch.group_size(1)  # a sub-layer of whole groups (docs/math.md §8.4)
    if h * a > d or h * b > dd:
        return "h a <= d and h b <= d'"
    return None


def groups_of(arch) -> list[list[int]]:
    """Heads of each key-value group (consecutive runs of ``h / g``).

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> groups_of(Arch((8, 8), (1,), 2, heads=(4,), value_ranks=(1,), kv_heads=(2,)))
    [[1, 2], [3, 4]]
    """
    n, h = arch.group_size(1), arch.head_count(1)
    return [list(range(s, s + n)) for s in range(1, h + 1, n)]


def verify(arch, block, p: int, chosen: list[int], max_pairs: int) -> None:
    """Reject unless the groups ``chosen`` satisfy (C1)–(C5) among themselves mod ``p``.

    ``block(head, name)`` gives residues; a group's ``K`` and ``U`` are its first head's.

    Examples
    --------
    Two heads reading the same query columns break (C2):

    >>> import numpy as np
    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((4, 4), (2,), 2, "softmax", (2,), (2,))
    >>> E = np.eye(4, dtype=np.int64)
    >>> W = {"Q": E[:2], "K": E[:2], "U": E[:2], "O": E[:, :2]}
    >>> verify(arch, lambda j, n: W[n] if j == 1 else {"K": E[2:], "U": E[2:], "O": E[:, 2:]}.get(n, W[n]), 101,
    ...        [1, 2], 10)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: (C2): the stacked Q_j of the chosen groups do not have full row rank mod p
    """
    why = hypotheses(arch, len(chosen))
    if why is not None:
        reject(f"Theorem C needs {why}")
    a, b = arch.ranks[0], arch.value_ranks[0]
    groups = groups_of(arch)
    heads = [j for g in chosen for j in groups[g - 1]]
    lead = {g: groups[g - 1][0] for g in chosen}
    pairs = len(chosen) * (len(chosen) - 1) // 2
    for g in chosen:
        K, U = block(lead[g], "K"), block(lead[g], "U")
        if rank(K, p) != a or rank(U, p) != b:
            reject(f"group {g}: (C3) needs rank K = {a} and rank U = {b} mod p")
        if a == b == 1 and rank(np.concatenate([K, U]), p) < 2:
            reject(f"group {g}: (C5) row U = row K is not excluded (a = b = 1)")
    if rank(np.concatenate([block(j, "O") for j in heads], axis=1), p) != len(heads) * b:
        reject("(C1): the stacked O_j of the chosen groups do not have full column rank mod p")
    if rank(np.concatenate([block(j, "Q") for j in heads], axis=0), p) != len(heads) * a:
        reject("(C2): the stacked Q_j of the chosen groups do not have full row rank mod p")
    if len(chosen) < 2:
        return
    if max(a, b) >= 2 and rank(np.concatenate([block(lead[g], "K") for g in chosen]), p) == len(chosen) * a:
        return  # a full stack of K separates every pair's row K: (C4)
    # each pair's (C4) tests convert up to four stacks of 2 max(a, b) rows of d entries into FLINT matrices
    refuse_above(pairs * 4 * 2 * max(a, b) * arch.widths[0], MAX_PAIR_ENTRIES, "the pairwise (C4) tests")
    if pairs > max_pairs:
        reject(f"{len(chosen)} groups need more than {max_pairs} pairwise tests of (C4)")
    for x, g1 in enumerate(chosen):
        for g2 in chosen[x + 1:]:
            def apart(m: str, n: str) -> bool:
                top = block(lead[g1], m)
                return rank(np.concatenate([top, block(lead[g2], n)]), p) > rank(top, p)

            if not (apart("K", "K") or apart("U", "U")) or \
                    max(a, b) < 2 and not (apart("K", "U") or apart("U", "K")):
                reject(f"groups {g1} and {g2}: (C4) is not shown (same row K and row U"
                       + (")" if max(a, b) >= 2 else ", or swapped, with a = b = 1)"))


def bound(arch, chosen: list[int]) -> int:
    """The rank Theorem C gives the sub-layer of the groups ``chosen`` (docs/math.md §8.3–8.4).

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((4, 4), (2,), 2, "softmax", (2,), (2,))
    >>> arch.parameters, bound(arch, [1, 2]), bound(arch, [1])     # P - 2 (a^2 + b^2), one head's share
    (64, 48, 24)
    """
    (d, dd), a, b = arch.widths, arch.ranks[0], arch.value_ranks[0]
    n = arch.group_size(1)
    per_group = n * (a * d + dd * b) + a * d + b * d  # the heads' Q, O and the shared K, U
    out = dd if arch.biases else 0  # b_O: the identity on every token
    if arch.normalization != "lightning":
        if arch.biases:  # b_Q per head and b_K, b_V per group, of which softmax sees b_Q only
            return out + len(chosen) * (per_group + n * a - a * a - b * b)
        return out + len(chosen) * (per_group - a * a - b * b)
    return out + len(chosen) * (per_group - a * a - b * b - n * n)  # biases of lightning are not counted


def kernel(arch, block, p: int) -> int:
    """``dim k(W)`` of docs/math.md §8.4 from ranks mod ``p``: per group ``GL_a``, ``GL_b`` less the stabilizer,
    the bias translations (softmax with biases), the mixing ``gl_n`` (lightning, where it acts freely).

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.check.arch import Arch
    >>> E = np.eye(3, dtype=np.int64)
    >>> W = {"Q": E[:2], "K": E[1:], "U": E[:2], "O": E[:, :2]}
    >>> kernel(Arch((3, 3), (2,), 2, "softmax", (), (2,)), lambda j, n: W[n], 101)     # a^2 + b^2
    8
    """
    a = arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    total = 0
    for heads in groups_of(arch):
        lead = heads[0]
        Qs = [np.concatenate([block(j, "Q"), block(j, "bQ")], axis=1) if arch.biases else block(j, "Q") for j in heads]
        # lightning moves the key and value biases with K and U: its stabilizer sees [K | b_K], [U | b_V]
        tilde = arch.biases and arch.normalization == "lightning"
        r_k = rank(np.concatenate([block(lead, "K"), block(lead, "bK")], axis=1) if tilde else block(lead, "K"), p)
        total += a * a - (a - r_k) * (a - rank(np.concatenate(Qs, axis=1), p))
        r_u = None
        if b is not None:
            r_u = rank(np.concatenate([block(lead, "U"), block(lead, "bV")], axis=1) if tilde else block(lead, "U"), p)
            total += b * b - (b - rank(np.concatenate([block(j, "O") for j in heads], axis=0), p)) * (b - r_u)
        if arch.biases and arch.normalization != "lightning":
            total += a + (b if b is not None else arch.widths[1])
        elif arch.normalization == "lightning" and b is not None and r_k == a and r_u == b \
                and rank(np.concatenate(Qs, axis=0), p) == a * len(heads):
            total += len(heads) ** 2  # the group's mixing acts freely: K, U full, its queries independent
        elif arch.normalization == "lightning" and b is None and (
                (np.concatenate([block(lead, "V"), block(lead, "bV")], axis=1) if tilde else block(lead, "V")) % p).any():
            total += 1  # unfactored V~ != 0: the scaling (Q~, -V~), which GL_a never moves V~ by
    return total


def decides(arch, chosen: list[int]) -> bool:
    """Theorem C gives the exact local rank: every group chosen, and not lightning with biases.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((4, 4), (2,), 2, "lightning", (2,), (2,), biases=True)
    >>> decides(arch, [1, 2]), decides(Arch((4, 4), (2,), 2, "softmax", (2,), (2,)), [1, 2])
    (False, True)
    """
    return hypotheses(arch) is None and len(chosen) == len(groups_of(arch)) \
        and not (arch.biases and arch.normalization == "lightning")


def field_count(arch) -> int:
    """The number of rows :func:`fields` lists, counted before any is (its price is rows x parameters).

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> field_count(Arch((1, 1), (1,), 2, "lightning", (2047,), (1,), kv_heads=(1,)))   # 1 + 1 + 2047^2
    4190211
    """
    a = arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    total = 0
    for heads in groups_of(arch):
        n = len(heads)
        total += a * a + (b * b if b is not None else 0)
        if arch.normalization == "lightning":
            total += n * n if b is not None else n
        elif arch.biases:
            total += a + (b if b is not None else n * arch.widths[1])
    return total


def fields(arch, point: np.ndarray, p: int) -> np.ndarray:
    """The explicit kernel's directions at a point (docs/math.md §8.4), one row each, mod ``p``: the checker's own.

    Per group ``gl_a`` (``dQ~_j = E Q~_j``, ``dK~ = -E^T K~``; softmax leaves ``b_K`` to its translations),
    ``gl_b`` (``dU~ = E U~``, ``dO_j = -O_j E``); lightning: the group's mixing (``dO_j = -O_i``,
    ``dQ~_i = Q~_j`` for the unit ``E_ij``) or, unfactored, each head's scaling; softmax with biases: ``b_K``'s
    translations and ``b_V`` against ``b_O`` (``db_O = -sum_j O_j db_V``). ``~`` appends the bias column.

    Examples
    --------
    One softmax head with biases on ``2 -> 2``, ``V`` unfactored: ``GL_1``, ``b_K``, and ``b_V`` against ``b_O``:

    >>> import numpy as np
    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((2, 2), (1,), 2, "softmax", biases=True)
    >>> fields(arch, np.arange(1, arch.parameters + 1), 101).shape
    (4, 14)
    """
    P, a = arch.parameters, arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None
    soft = arch.normalization != "lightning"
    spot = {}
    for _, j, name, rows, cols, off in arch.blocks():
        spot[(j, name)] = (rows, cols, off)

    def mat(j, name):
        rows, cols, off = spot[(j, name)]
        return point[off: off + rows * cols].reshape(rows, cols) % p

    def wide(j, name, bias):
        return np.concatenate([mat(j, name), mat(j, bias)], axis=1) if arch.biases else mat(j, name)

    def add(row, j, name, bias, M):
        rows, cols, off = spot[(j, name)]
        row[off: off + rows * cols] += M[:, :cols].ravel()
        if arch.biases and bias is not None:
            boff = spot[(j, bias)][2]
            row[boff: boff + rows] += M[:, cols]

    out = []

    def unit(n, u, v):
        E = np.zeros((n, n), dtype=np.int64)
        E[u, v] = 1
        return E

    for heads in groups_of(arch):
        g = heads[0]  # the group's blocks are its first head's
        for u in range(a):
            for v in range(a):
                E, row = unit(a, u, v), np.zeros(P, dtype=np.int64)
                for j in heads:
                    add(row, j, "Q", "bQ", E @ wide(j, "Q", "bQ"))
                add(row, g, "K", None if soft else "bK", -(E.T @ wide(g, "K", "bK")))
                out.append(row % p)
        if b is not None:
            for u in range(b):
                for v in range(b):
                    E, row = unit(b, u, v), np.zeros(P, dtype=np.int64)
                    add(row, g, "U", "bV", E @ wide(g, "U", "bV"))
                    for j in heads:
                        add(row, j, "O", None, -(mat(j, "O") @ E))
                    out.append(row % p)
        if not soft:
            for i in heads:
                for j in (heads if b is not None else (i,)):
                    row = np.zeros(P, dtype=np.int64)
                    if b is not None:  # mixing E_ij: O_j moves by -O_i, Q~_i by Q~_j
                        add(row, j, "O", None, -mat(i, "O"))
                    else:  # unfactored: the scaling (Q~, -V~), the value bias with V
                        add(row, i, "V", "bV", -wide(i, "V", "bV"))
                    add(row, i, "Q", "bQ", wide(j, "Q", "bQ"))
                    out.append(row % p)
        elif arch.biases:
            for r in range(a):
                row = np.zeros(P, dtype=np.int64)
                row[spot[(g, "bK")][2] + r] = 1
                out.append(row)
            o_rows, _, o_off = spot[(0, "bO")]
            for j in (heads[:1] if b is not None else heads):
                for r in range(b if b is not None else arch.widths[1]):
                    row = np.zeros(P, dtype=np.int64)
                    row[spot[(j, "bV")][2] + r] = 1
                    drift = sum(mat(i, "O")[:, r] for i in heads) if b is not None else np.eye(o_rows, dtype=np.int64)[r]
                    row[o_off: o_off + o_rows] = -drift
                    out.append(row % p)
    return np.array(out, dtype=np.int64)
