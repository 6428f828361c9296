"""One tied layer (shared keys and values, biases) as plain multi-head attention on a longer input.

A layer whose heads share keys and values in groups (grouped-query attention,
``kv_heads < heads``) or whose projections have biases is still one layer of
plain multi-head attention (docs/math.md §8.1):

* a bias is a weight on a constant input feature. With ``x~ = (x, 1)`` the scores
  ``(K x_s + b_K)^T (Q x_i + b_Q)`` are ``x~_s^T K~^T Q~ x~_i`` for
  ``Q~ = [Q | b_Q]``, ``K~ = [K | b_K]``, and the values ``U x_s + b_V`` are
  ``U~ x~_s`` for ``U~ = [U | b_V]``; the output bias ``b_O`` is added to every
  token;
* a shared key or value map is the same matrix written into every head of its
  group.

So ``phi_W(X) = phi'_{W'}(X~) + b_O 1^T (+ X when residual)``, where ``phi'`` is
the *untied* architecture (``h`` heads with their own ``Q, K, U, O``, input width
``d + 1`` when there are biases, no residual) and ``W' = T W`` copies every entry of
``W`` but ``b_O`` into one or more entries of ``W'``. The chain rule then gives
the Jacobian: column ``k`` of ``J_phi`` is the sum of the columns of ``J_phi'``
that copy parameter ``k``, and ``b_O``'s columns are the identity on each token.
Every domain (``F_p``, ``Q``, balls) and every prover that differentiates the
untied layer therefore handles the tied one, with no second copy of the layer
formula.

Residual connections and masks are parameter-free, so they do not change the
Jacobian; the untied architecture keeps the mask and leaves the residual to the
caller (its input width is ``d + 1``); :func:`attngeo.model.network.forward` evaluates a tied layer.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InvalidArchitectureError
from .architecture import Architecture


def untied(arch: Architecture) -> Architecture:
    """The plain multi-head layer that computes ``arch``'s layer on inputs with a constant extra row.

    Raises
    ------
    InvalidArchitectureError
        For a network of several layers (the constant row exists at the input only).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.untied import untied
    >>> arch = Architecture((4, 3), (2,), tokens=3, heads=4, kv_heads=2, value_ranks=1, biases=True,
    ...                     normalization="softmax", causal=True)
    >>> str(untied(arch))
    'widths 5,3, ranks 2, heads 4, value ranks 1, t=3, causal, softmax'
    """
    if arch.depth != 1:
        raise InvalidArchitectureError(f"shared keys and values or biases are handled for one layer; {arch} has "
                                       f"{arch.depth} (take one layer at a time)")
    return Architecture((arch.widths[0] + (1 if arch.biases else 0), arch.widths[1]), arch.ranks, arch.tokens,
                        arch.normalization, arch.heads, arch.value_ranks, False, arch.causal)


def copies(arch: Architecture) -> tuple[np.ndarray, np.ndarray]:
    """``(source, output_bias)``: entry ``i`` of ``W' = T W`` is ``W[source[i]]``; ``output_bias`` lists ``b_O``.

    Examples
    --------
    Two heads sharing one key and value map (``a = b = 1``, ``d = 2``): the untied
    layer's second head reads the first head's ``K`` and ``U`` again.

    >>> from attngeo import Architecture
    >>> from attngeo.model.untied import copies
    >>> arch = Architecture((2, 2), (1,), heads=2, kv_heads=1, value_ranks=1)
    >>> [b.name for b in arch.blocks()]
    ['Q', 'K', 'U', 'O', 'Q', 'O']
    >>> source, bias = copies(arch)
    >>> source.tolist(), bias.tolist()
    ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 2, 3, 4, 5, 10, 11], [])
    """
    plain = untied(arch)
    where: dict = {}
    for b in arch.blocks():
        key = (b.head if not b.group else ("g", b.group), b.name) if b.name != "bO" else ("layer", "bO")
        where[key] = b
    source: list[int] = []
    for j in range(1, arch.heads[0] + 1):
        g = ("g", arch.group(1, j)) if arch.kv_heads[0] != arch.heads[0] else j
        value = "U" if arch.value_ranks is not None else "V"
        for name, owner, bias in (("Q", j, "bQ"), ("K", g, "bK"), (value, g, "bV")) + (
                (("O", j, None),) if arch.value_ranks is not None else ()):
            blk = where[(owner, name)]
            for r in range(blk.rows):
                source.extend(range(blk.offset + r * blk.cols, blk.offset + (r + 1) * blk.cols))
                if arch.biases and bias is not None:
                    source.append(where[(owner, bias)].offset + r)
    assert len(source) == plain.parameter_count  # noqa: S101 (the two flattenings describe one layer)
    bias_block = where.get(("layer", "bO"))
    output_bias = (np.arange(bias_block.offset, bias_block.offset + bias_block.rows) if bias_block is not None
                   else np.zeros(0, dtype=np.int64))
    return np.array(source, dtype=np.int64), output_bias


def augment(arch: Architecture, inputs: np.ndarray, one=1) -> np.ndarray:
    """Inputs ``(..., d, t)`` with a row of ``one`` appended when ``arch`` has biases (else unchanged).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> augment(Architecture((2, 2), (1,), biases=True), np.array([[3, 4], [5, 6]])).tolist()
    [[3, 4], [5, 6], [1, 1]]
    """
    if not arch.biases:
        return inputs
    shape = inputs.shape[:-2] + (1, inputs.shape[-1])
    ones = np.empty(shape, dtype=inputs.dtype)
    ones[...] = one
    return np.concatenate([inputs, ones], axis=-2)


def fold(arch: Architecture, J_plain: np.ndarray, bias_rows: np.ndarray | None, add) -> np.ndarray:
    """The tied layer's Jacobian from the untied one's: copies summed, then the output bias's columns.

    Parameters
    ----------
    J_plain : array ``(rows, P')``
        Columns of the untied layer at ``T W``.
    bias_rows : array ``(rows, d')`` or None
        The derivative of each row along ``b_O``'s entries (see :func:`bias_columns`).
    add : callable
        The domain's sum of two arrays (residues stay reduced, rationals exact).

    Examples
    --------
    Two heads sharing ``K`` and ``U`` (``a = b = 1``, ``d = 2``): the untied layer's 16 columns fold into 12, the
    shared ones summed:

    >>> from attngeo import Architecture
    >>> arch = Architecture((2, 2), (1,), heads=2, kv_heads=1, value_ranks=1)
    >>> J = np.arange(16).reshape(1, 16)
    >>> fold(arch, J, None, lambda x, y: x + y).tolist()            # K: 2 + 10, 3 + 11; U: 4 + 12, 5 + 13
    [[0, 1, 12, 14, 16, 18, 6, 7, 8, 9, 14, 15]]
    """
    source, output_bias = copies(arch)
    out = np.zeros((J_plain.shape[0], arch.parameter_count), dtype=J_plain.dtype)
    if out.dtype == object:
        out[...] = 0 * J_plain.flat[0] if J_plain.size else 0
    seen = np.zeros(arch.parameter_count, dtype=bool)
    for i, k in enumerate(source):
        out[:, k] = add(out[:, k], J_plain[:, i]) if seen[k] else J_plain[:, i]
        seen[k] = True
    if len(output_bias):
        out[:, output_bias] = bias_rows
    return out


def bias_columns(arch: Architecture, n_inputs: int, functionals: np.ndarray | None, dtype=np.int64) -> np.ndarray:
    """``d <w, phi(X_n)> / d b_O[k]``: the functional summed over the tokens (unit rows without functionals).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((2, 2), (1,), tokens=2, biases=True)
    >>> bias_columns(arch, 1, np.array([[[[1, 2], [0, 5]]]])).tolist()   # row k of the functional, summed
    [[3, 5]]
    """
    dd, t = arch.widths[-1], arch.tokens
    if functionals is None:
        eye = np.zeros((dd * t, dd), dtype=dtype)
        for r in range(dd * t):
            eye[r, r // t] = 1
        return np.tile(eye, (n_inputs, 1))
    return functionals.sum(axis=-1).reshape(-1, dd)

