"""The checker's own untying of a layer with shared keys and values or biases (docs/math.md §8.1).

Such a layer is ``h`` plain heads ``([Q_j | b_Q,j], [K_g | b_K,g], [U_g | b_V,g], O_j)`` on the input
with a constant row of ones appended, plus ``b_O`` on every token; residual connections and masks
have no weights. So the Jacobian of the tied layer is that of the plain one with the columns of
every copy of a weight summed, and ``b_O``'s columns are the identity on each token.

Written apart from :mod:`attngeo.model.untied` (the prover's): it reads only the checker's
:class:`~attngeo.check.arch.Arch`.
"""

from __future__ import annotations

import numpy as np

from .arch import Arch


def untied(arch: Arch) -> Arch:
    """The plain one-layer architecture: width ``d + 1`` with biases, ``h`` heads, no sharing, no residual.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> untied(Arch((3, 2), (1,), 2, "softmax", (4,), (1,), kv_heads=(2,), biases=True)).describe()
    'widths 4,2, ranks 1, heads 4, value ranks 1, t=2, softmax'
    """
    return Arch((arch.widths[0] + (1 if arch.biases else 0), arch.widths[1]), arch.ranks, arch.tokens,
                arch.normalization, arch.heads, arch.value_ranks, False, arch.causal)


def copies(arch: Arch) -> tuple[list[int], list[int]]:
    """``(source, bias)``: entry ``i`` of the untied point is entry ``source[i]`` of the tied one; ``bias`` lists
    the offsets of ``b_O``'s entries (empty without biases).

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> copies(Arch((2, 2), (1,), 2, heads=(2,), value_ranks=(1,), kv_heads=(1,)))
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 10, 11], [])
    """
    at = {}
    for _, j, name, rows, cols, off in arch.blocks():
        at[(j, name)] = (rows, cols, off)
    n = arch.group_size(1)
    value = "V" if arch.value_ranks is None else "U"
    source: list[int] = []
    for j in range(1, arch.head_count(1) + 1):
        lead = j - (j - 1) % n  # the group's first head holds its shared blocks
        parts = [("Q", j, "bQ"), ("K", lead, "bK"), (value, lead, "bV")]
        if arch.value_ranks is not None:
            parts.append(("O", j, None))
        for name, owner, bias in parts:
            rows, cols, off = at[(owner, name)]
            for r in range(rows):
                source.extend(range(off + r * cols, off + (r + 1) * cols))
                if arch.biases and bias is not None:
                    source.append(at[(owner, bias)][2] + r)
    bias = list(range(at[(0, "bO")][2], at[(0, "bO")][2] + arch.widths[1])) if arch.biases else []
    return source, bias


def augmented(arch: Arch, X: np.ndarray) -> np.ndarray:
    """Inputs ``(N, d, t)`` with a row of ones below when the layer has biases.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> augmented(Arch((2, 2), (1,), 2, biases=True), np.zeros((1, 2, 2), dtype=np.int64)).tolist()
    [[[0, 0], [0, 0], [1, 1]]]
    """
    if not arch.biases:
        return X
    return np.concatenate([X, np.ones(X.shape[:-2] + (1, X.shape[-1]), dtype=X.dtype)], axis=-2)
