"""[HMK]'s closed-form dimension formulas, for comparison only.

Nothing here is evidence: the toolkit prints these numbers *beside* what it
certified, together with whether the architecture is inside the hypotheses
under which [HMK] state them. Where it is not, the comparison says so and why.

References
----------
[HMK] N. W. Henry, G. L. Marchetti, K. Kohn, *Geometry of Lightning
Self-Attention: Identifiability and Dimension*, ICLR 2025, arXiv:2408.17221.
"""

from __future__ import annotations

from dataclasses import dataclass

from .architecture import Architecture


@dataclass(frozen=True)
class FormulaComparison:
    """A closed form, its value (or None), and whether it applies to the architecture.

    Parameters
    ----------
    name : str
        The formula as text, ``"none"`` when [HMK] give none.
    value : int or None
        The formula's value at the architecture (computed even outside its hypotheses).
    applies : bool
        Whether the architecture satisfies [HMK]'s hypotheses for it.
    reason : str
        Why it applies or not.

    Examples
    --------
    >>> from attngeo import Architecture, hmk_formula
    >>> hmk_formula(Architecture((3, 3), (2,), tokens=2)).to_dict()
    {'name': "2ad + dd' - a^2 - 1", 'value': 16, 'applies': True, 'reason': 'single layer, t >= 2'}
    >>> hmk_formula(Architecture((2, 4, 2), (2, 2))).value is None   # unequal widths: no closed form
    True
    """

    name: str
    value: int | None
    applies: bool
    reason: str

    def to_dict(self) -> dict:
        """The JSON form certificates and reports print beside the certified value.

        Examples
        --------
        >>> from attngeo import Architecture, hmk_formula
        >>> d = hmk_formula(Architecture((3, 3), (2,), tokens=1)).to_dict()
        >>> d["value"], d["applies"], d["reason"]
        (16, False, "t = 1 is outside [HMK]'s hypothesis t >= 2")
        """
        return {"name": self.name, "value": self.value, "applies": self.applies, "reason": self.reason}


def single_layer_dimension(d: int, d_out: int, a: int) -> int:
    """[HMK] single layer, lightning: ``2ad + dd' - a^2 - 1`` (a <= d), ``d^2 + dd' - 1`` (a > d).

    Parameters
    ----------
    d, d_out, a : int
        Input width ``d``, output width ``d'`` and attention rank ``a``.

    Returns
    -------
    int
        The dimension [HMK] state for ``t >= 2`` (not checked here).

    Examples
    --------
    The two branches agree at ``a = d``: beyond it ``A = K^T Q`` is already a
    generic ``d x d`` matrix, so the dimension stops growing.

    >>> from attngeo.model.formulas import single_layer_dimension
    >>> single_layer_dimension(3, 3, 2)
    16
    >>> single_layer_dimension(2, 3, 2) == single_layer_dimension(2, 3, 3) == 2 * 2 + 2 * 3 - 1
    True
    """
    if a <= d:
        return 2 * a * d + d * d_out - a * a - 1
    return d * d + d * d_out - 1


def deep_equal_width_dimension(depth: int, d: int, a: int) -> int:
    """[HMK] deep lightning, equal widths, ``a <= d``: ``l a (2d - a) + d^2 - l``.

    Parameters
    ----------
    depth, d, a : int
        Number of layers ``l``, the common width ``d`` and rank ``a``.

    Returns
    -------
    int

    Examples
    --------
    One layer is the single-layer formula with ``d' = d``, and for equal widths
    the value is the naive count (parameters minus symmetries):

    >>> from attngeo import Architecture, naive_count
    >>> from attngeo.model.formulas import deep_equal_width_dimension, single_layer_dimension
    >>> deep_equal_width_dimension(1, 4, 3) == single_layer_dimension(4, 4, 3)
    True
    >>> deep_equal_width_dimension(2, 3, 2), naive_count(Architecture((3, 3, 3), (2, 2)))
    (23, 23)
    """
    return depth * a * (2 * d - a) + d * d - depth


def naive_count(arch: Architecture) -> int:
    """Parameters minus the dimension of the symmetry group, ignoring stabilizers.

    ``sum_i (2 a_i d_{i-1} + d_i d_{i-1} - a_i^2 - 1) - sum_{0<i<l} d_i^2`` (no ``- 1`` per
    layer for normalized networks, which have no scaling symmetry). [HMK]
    note this can fail for unequal widths; the deep proof script reports where.
    Beyond [HMK]'s model each head carries ``GL_{a_i}``, the scaling and, with a
    value rank, ``GL_{b_i}``; residual connections drop the ``GL_{d_i}``
    (docs/multihead.md).

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    int

    Examples
    --------
    It is [HMK]'s value for ``a <= d``; for ``a > d`` the ``GL_a`` action has a
    stabilizer, so the naive count falls short of the dimension ``d^2 + dd' - 1``:

    >>> from attngeo import Architecture, naive_count
    >>> from attngeo.model.formulas import single_layer_dimension
    >>> naive_count(Architecture((3, 3), (2,))) == single_layer_dimension(3, 3, 2)
    True
    >>> naive_count(Architecture((2, 3), (3,))), single_layer_dimension(2, 3, 3)
    (8, 9)

    A normalizer removes the scaling symmetry, one per layer:

    >>> naive_count(Architecture((3, 3), (2,), normalization="softmax"))
    17
    """
    P = arch.parameter_count
    scaling = 1 if arch.normalization == "lightning" else 0  # a normalizer breaks the scaling symmetry
    group = 0
    for i, a in enumerate(arch.ranks):
        b = arch.value_ranks[i] if arch.value_ranks is not None else None
        h, g = arch.heads[i], arch.kv_heads[i]
        if arch.is_tied:  # per key-value group GL(a) x GL(b), lightning's mixing GL(h/g), softmax's bias moves
            n = h // g
            group += g * (a * a + (b * b + (n * n if scaling else 0) if b else 0))
            if scaling and not b:
                group += h  # unfactored values: the per-head scalings
            if arch.biases and not scaling:
                group += g * a + (g * b if b else h * arch.widths[i + 1])  # b_K, and b_V merged into b_O
            continue
        per_head = a * a + scaling + (b ** 2 if b is not None else 0)
        group += arch.heads[i] * per_head
    inter = 0 if arch.residual else sum(d * d for d in arch.widths[1:-1])  # X + Y pins the hidden basis
    return P - group - inter


def multihead_count(arch: Architecture) -> FormulaComparison:
    """:func:`naive_count` for an architecture beyond [HMK]'s model, as a comparison that does not apply.

    For softmax without residual connections it is the functional-dimension
    count published for multi-head attention (parameters minus per-head changes
    of basis in the query-key and value-output products and the changes of basis
    between layers). It is an *expected* dimension: it assumes the group acts
    with finite stabilizers and that its orbits are open in the generic fiber
    (the fiber's dimension is the group's), which the certificate, not this
    count, decides.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    FormulaComparison
        ``applies`` is False: [HMK] give no formula beyond one head per layer.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.formulas import multihead_count
    >>> f = multihead_count(Architecture((3, 3), (1,), heads=2, normalization="softmax"))
    >>> f.value, f.applies   # 30 parameters - 2 GL_1
    (28, False)
    """
    name = "parameters - dim G (per head GL(a) x GL(b) [x C*], GL(d_i) between layers unless residual)"
    return FormulaComparison(name, naive_count(arch), False,
                             "[HMK] give formulas for one head per layer, V unfactored, no residual, no mask; "
                             "this count of parameters minus the group is a comparison, not a theorem")


def published_multihead_formula(arch: Architecture) -> FormulaComparison:
    """The published functional dimension of one multi-head softmax attention layer, with its hypotheses.

    "Generic Fibers and Functional Dimension of Multi-Head Attention" (ICML 2026
    workshop on weight-space symmetries) proves that generic fibers are the
    orbits of per-head ``GL(d_k)`` on the query-key product and ``GL(d_v)`` on
    the value-output product (and head permutations), hence
    ``dim = h (2 a d + b (d + d')) - h (a^2 + b^2)``. Its hypotheses, as we read
    them: one softmax layer, the value map factored (``b``), ``a <= d``,
    ``b <= min(d, d')``, no mask and no residual connection. Outside them the
    value is still computed, and ``applies`` is False with the reason; either
    way it is a comparison for the certified dimension, never evidence.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    FormulaComparison

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.formulas import published_multihead_formula
    >>> f = published_multihead_formula(Architecture((4, 4), (2,), tokens=3, heads=3, value_ranks=2,
    ...                                              normalization="softmax"))
    >>> f.value, f.applies   # 3 (16 + 16) - 3 (4 + 4)
    (72, True)
    >>> published_multihead_formula(Architecture((4, 4), (2,), heads=3, value_ranks=2)).reason
    'the published formula is for softmax attention; this is lightning'
    """
    name = "h (2ad + b(d + d')) - h (a^2 + b^2) (published, multi-head softmax)"
    h, a = arch.heads[0], arch.ranks[0]
    d, dd = arch.widths[0], arch.widths[-1]
    b = arch.value_ranks[0] if arch.value_ranks is not None else min(d, dd)
    value = h * (2 * a * d + b * (d + dd)) - h * (a * a + b * b)
    problems = []
    if arch.normalization != "softmax":
        problems.append(f"the published formula is for softmax attention; this is {arch.normalization}")
    if arch.depth != 1:
        problems.append("it is for one layer")
    if arch.value_ranks is None:
        problems.append("it assumes a factored value map V = O U (give value ranks)")
    if a > d or b > min(d, dd):
        problems.append("it assumes a <= d and b <= min(d, d')")
    if arch.causal or arch.residual:
        problems.append("it has no causal mask and no residual connection")
    if arch.tokens < 2:
        problems.append("one token sees only the value map")
    if problems:
        return FormulaComparison(name, value, False, "; ".join(problems))
    return FormulaComparison(name, value, True, "one softmax layer, V = O U, a <= d, b <= min(d, d')")


def hmk_formula(arch: Architecture) -> FormulaComparison:
    """The [HMK] formula that speaks to ``arch``, with the reason it applies or not.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    FormulaComparison
        Single layer or equal widths and ranks: the formula and its value,
        ``applies`` False outside [HMK]'s hypotheses (``t = 1``, deep ``a > d``).
        Unequal widths or ranks: ``value`` None. Normalized networks: the
        lightning value plus one per layer (a theorem for one layer,
        Conjecture 3.10 for more).

    Examples
    --------
    >>> from attngeo import Architecture, hmk_formula
    >>> hmk_formula(Architecture((3, 3), (2,), tokens=2)).value
    16
    >>> hmk_formula(Architecture((3, 3), (2,), tokens=1)).applies
    False
    >>> c = hmk_formula(Architecture((2, 2, 2), (3, 3)))
    >>> c.value, c.applies, c.reason
    (8, False, "a > d is outside the deep formula's hypothesis a <= d")
    >>> hmk_formula(Architecture((3, 3), (2,), normalization="softmax")).value   # lightning + 1
    17
    """
    if not arch.is_plain:
        return multihead_count(arch)
    if arch.normalization != "lightning":
        return _normalized_formula(arch)
    t, l = arch.tokens, arch.depth
    if l == 1:
        d, d_out, a = arch.widths[0], arch.widths[1], arch.ranks[0]
        value = single_layer_dimension(d, d_out, a)
        name = "2ad + dd' - a^2 - 1" if a <= d else "d^2 + dd' - 1"
        if t < 2:
            return FormulaComparison(name, value, False, "t = 1 is outside [HMK]'s hypothesis t >= 2")
        return FormulaComparison(name, value, True, "single layer, t >= 2")
    widths, ranks = set(arch.widths), set(arch.ranks)
    if len(widths) == 1 and len(ranks) == 1:
        d, a = arch.widths[0], arch.ranks[0]
        value = deep_equal_width_dimension(l, d, a)
        name = "l a (2d - a) + d^2 - l"
        if a > d:
            return FormulaComparison(name, value, False, "a > d is outside the deep formula's hypothesis a <= d")
        if t < 2:
            return FormulaComparison(name, value, False, "t = 1 is outside [HMK]'s hypothesis t >= 2")
        return FormulaComparison(name, value, True, "equal widths and ranks, a <= d, t >= 2")
    return FormulaComparison(
        "none", None, False, "unequal widths or ranks: [HMK] give no closed form (compare naive_count)"
    )


def _normalized_formula(arch: Architecture) -> FormulaComparison:
    """Normalized networks: [HMK]'s single-layer theorem and Conjecture 3.10, both "lightning + l".

    >>> hmk_formula(Architecture((3, 3), (2,), tokens=2, normalization="softmax")).value
    17
    >>> hmk_formula(Architecture((3, 3, 3), (2, 2), tokens=3, normalization="softmax")).name
    'l a (2d - a) + d^2 (Conj. 3.10)'
    """
    from dataclasses import replace

    base = hmk_formula(replace(arch, normalization="lightning"))
    if base.value is None:
        return base
    l = arch.depth
    value = base.value + l
    if l == 1:
        name = "a(2d - a) + dd'" if arch.ranks[0] <= arch.widths[0] else "d^2 + dd'"
        reason = base.reason if not base.applies else "single normalized layer, t >= 2 ([HMK]: generically one-to-one)"
    else:
        name = "l a (2d - a) + d^2 (Conj. 3.10)"
        reason = base.reason if not base.applies else "equal widths and ranks, a <= d, t >= 2: a conjecture, not a theorem"
    if arch.tokens < 2:
        reason = "t = 1: every normalized score matrix is 1 x 1, so S = 1 and phi = V X (dim d d' for one layer)"
    return FormulaComparison(name, value, base.applies and arch.tokens >= 2, reason)
