"""Architectures of self-attention networks: a small, frozen, validated value.

An :class:`Architecture` fixes widths ``d_0..d_l``, attention ranks ``a_1..a_l``,
the number of tokens ``t`` and the normalization, and optionally (issue [5/6],
docs/multihead.md) ``h_i`` heads per layer, a value rank ``b_i`` (``V = O U``),
residual connections and a causal mask. It knows the shapes of the weights and
the order in which they are flattened into one parameter vector: layer by
layer, head by head, ``Q`` then ``K`` then ``V`` (or ``U`` then ``O``), each
row-major. Certificates record points in exactly this order
(docs/certificates.md); [HMK]'s architectures (one head, no bottleneck, no
residual, no mask) flatten and serialize exactly as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

from ..exceptions import InvalidArchitectureError



def _positive_ints(name: str, values, fix: str) -> tuple[int, ...]:
    try:
        items = tuple(values)
    except TypeError:
        raise InvalidArchitectureError(f"{name} must be a sequence of positive integers, got {values!r}; {fix}") from None
    for k, v in enumerate(items):
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidArchitectureError(f"{name}[{k}] = {v!r} is not an integer; {fix}")
        if v < 1:
            raise InvalidArchitectureError(f"{name}[{k}] = {v} must be at least 1; {fix}")
    return items


def _per_layer(name: str, value, layers: int, fix: str) -> tuple[int, ...]:
    """One positive integer per layer; a single integer applies to every layer."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = (value,) * layers
    items = _positive_ints(name, value, fix)
    if len(items) != layers:
        raise InvalidArchitectureError(f"{name} has {len(items)} entries for {layers} layers; {fix} "
                                       "(or one value for every layer)")
    return items


@dataclass(frozen=True)
class WeightBlock:
    """One weight matrix of the network: its name, layer, shape and offset.

    Parameters
    ----------
    name : {"Q", "K", "V", "U", "O"}
    layer : int
        1-based layer index.
    rows, cols : int
        The shape: ``a_i x d_{i-1}`` for ``Q`` and ``K``, ``d_i x d_{i-1}`` for ``V``;
        with a value rank ``b_i``, ``U`` is ``b_i x d_{i-1}`` and ``O`` is ``d_i x b_i``.
    offset : int
        Position of entry ``(0, 0)`` in the flat parameter vector; the matrix
        occupies ``offset .. offset + size - 1``, row-major.
    head, heads : int
        The 1-based head and the number of heads of the layer (1 and 1 for [HMK]).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> Q, K, V = Architecture((3, 2), (1,)).blocks()
    >>> (V.name, V.rows, V.cols, V.offset, V.size)   # V is d_1 x d_0, after Q and K (1 x 3 each)
    ('V', 2, 3, 6, 6)
    """

    name: str  # "Q", "K", "V", or "U" and "O" for a factored value map; "bQ", "bK", "bV", "bO" for biases
    layer: int  # 1-based
    rows: int
    cols: int
    offset: int  # position of entry (0, 0) in the flat parameter vector
    head: int = 1  # 1-based head within the layer (0 for the layer's output bias bO)
    heads: int = 1  # heads in the layer: names carry the head only when there are several
    group: int = 0  # 1-based key-value group of a block shared by its heads (K, V/U, bK, bV under GQA), else 0

    @property
    def size(self) -> int:
        """Number of entries, ``rows * cols``."""
        return self.rows * self.cols

    def variable(self, r: int, c: int) -> str:
        """Predictable variable name, e.g. ``Q1_0_2`` (layer 1, row 0, column 2).

        Certificates, symbolic rings and LaTeX all name weights this way. In a
        layer with several heads the head follows the layer: ``Q2.1_0_3`` is
        layer 2, head 1, row 0, column 3.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Q, K, V = Architecture((3, 2), (1,)).blocks()
        >>> Q.variable(0, 2), V.variable(1, 0)
        ('Q1_0_2', 'V1_1_0')
        >>> blocks = list(Architecture((3, 2), (1,), heads=2, value_ranks=1).blocks())
        >>> [b.variable(0, 0) for b in blocks]
        ['Q1.1_0_0', 'K1.1_0_0', 'U1.1_0_0', 'O1.1_0_0', 'Q1.2_0_0', 'K1.2_0_0', 'U1.2_0_0', 'O1.2_0_0']

        Keys and values shared by a group of heads (grouped-query attention) carry the group; biases are
        ``b`` blocks of one column, the output bias once per layer:

        >>> gqa = Architecture((4, 4), (1,), heads=2, kv_heads=1, value_ranks=1, biases=True)
        >>> [b.variable(0, 0) for b in gqa.blocks()]
        ['Q1.1_0_0', 'K1.kv1_0_0', 'U1.kv1_0_0', 'O1.1_0_0', 'bQ1.1_0_0', 'bK1.kv1_0_0', 'bV1.kv1_0_0', 'Q1.2_0_0', 'O1.2_0_0', 'bQ1.2_0_0', 'bO1_0_0']
        """
        if self.group:
            head = f".kv{self.group}"
        else:
            head = f".{self.head}" if self.heads > 1 and self.head else ""
        return f"{self.name}{self.layer}{head}_{r}_{c}"


@dataclass(frozen=True)
class Architecture:
    """A self-attention network: widths, attention ranks, tokens, normalization.

    Parameters
    ----------
    widths : sequence of int
        ``d_0, ..., d_l`` (input width first); at least two entries.
    ranks : sequence of int
        ``a_1, ..., a_l``, one per layer.
    tokens : int
        ``t >= 1``, the number of tokens (columns of the input).
    normalization : {"lightning", "softmax"}
        Or any registered normalizer (:mod:`attngeo.model.normalizer`).
    heads : int or sequence of int, optional
        ``h_i`` heads per layer (one value applies to every layer); default 1.
    value_ranks : int or sequence of int, optional
        ``b_i``: each head's value map is factored as ``V = O U`` with ``U`` of
        size ``b_i x d_{i-1}`` and ``O`` of size ``d_i x b_i``; default None
        (``V`` unfactored).
    residual : bool, optional
        Each layer maps ``X`` to ``X + Y`` (needs ``d_i = d_{i-1}``).
    causal : bool, optional
        Token ``s`` reaches output token ``j`` only when ``s <= j``.
    kv_heads : int or sequence of int, optional
        ``g_i`` key-value groups per layer (grouped-query attention, docs/math.md §8): the ``h_i / g_i``
        consecutive heads of a group share ``K`` and ``U`` (each keeps its own ``Q`` and ``O``); ``g_i`` must
        divide ``h_i`` and, below ``h_i``, needs value ranks. Default: ``h_i`` (every head its own).
    biases : bool, optional
        Affine attention: scores ``(K x_s + b_K)^T (Q x_i + b_Q)``, values ``U x_s + b_V`` (``V x_s + b_V``
        unfactored) and an output bias ``b_O`` per layer, as trained checkpoints compute.

    Raises
    ------
    InvalidArchitectureError
        With a message naming the field and the fix.

    Examples
    --------
    Two layers of width 3 and rank 2: each has ``2 a d + d d' = 21`` weights.

    >>> from attngeo import Architecture
    >>> arch = Architecture((3, 3, 3), (2, 2), tokens=3)
    >>> arch.depth, arch.parameter_count, arch.input_shape, arch.output_shape
    (2, 42, (3, 3), (3, 3))
    >>> str(arch)
    'widths 3,3,3, ranks 2,2, t=3, lightning'

    A bad input is refused with the field and the fix:

    >>> Architecture((3,), (1,))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidArchitectureError: widths has 1 entry; give at least d_0 and d_1 (one layer), e.g. widths=(3, 3)
    >>> Architecture((3, 3), (1,), normalization="relu")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidArchitectureError: normalization = 'relu' is unknown; use one of lightning, softmax...

    Several heads, a value bottleneck, residual connections and a causal mask
    (docs/multihead.md); each head has ``2 a d + b (d + d')`` weights:

    >>> mh = Architecture((4, 4), (2,), tokens=3, heads=2, value_ranks=1, residual=True, causal=True)
    >>> mh.parameter_count == 2 * (2 * 2 * 4 + 1 * (4 + 4)), mh.is_plain
    (True, False)
    >>> str(mh)
    'widths 4,4, ranks 2, heads 2, value ranks 1, t=3, residual, causal, lightning'
    >>> Architecture((3, 4), (1,), residual=True)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidArchitectureError: residual = True needs d_i = d_(i-1) in every layer, but layer 1 maps width 3 to 4; drop residual or use equal widths
    """

    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    tokens: int = 2
    normalization: str = "lightning"
    heads: tuple[int, ...] | int = 1
    value_ranks: tuple[int, ...] | int | None = None
    residual: bool = False
    causal: bool = False
    kv_heads: tuple[int, ...] | int | None = None
    biases: bool = False

    def __post_init__(self) -> None:
        widths = _positive_ints("widths", self.widths, "give d_0,...,d_l as positive integers, e.g. widths=(3, 3)")
        if len(widths) < 2:
            raise InvalidArchitectureError(
                f"widths has {len(widths)} entr{'y' if len(widths) == 1 else 'ies'}; give at least d_0 and d_1 (one layer), e.g. widths=(3, 3)"
            )
        ranks = _positive_ints("ranks", self.ranks, "give one attention rank a_i >= 1 per layer")
        if len(ranks) != len(widths) - 1:
            raise InvalidArchitectureError(
                f"ranks has {len(ranks)} entr{'y' if len(ranks) == 1 else 'ies'} but widths describe "
                f"{len(widths) - 1} layer{'s' if len(widths) != 2 else ''}; give exactly one rank per layer"
            )
        t = self.tokens
        if isinstance(t, bool) or not isinstance(t, int):
            raise InvalidArchitectureError(f"tokens = {t!r} is not an integer; give the number of tokens t >= 1")
        if t < 1:
            raise InvalidArchitectureError(f"tokens = {t} must be at least 1")
        from .normalizer import NORMALIZERS  # registered normalizers are valid too

        known = ("lightning", *NORMALIZERS)
        if self.normalization not in known:
            raise InvalidArchitectureError(
                f"normalization = {self.normalization!r} is unknown; use one of {', '.join(known)}"
            )
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "ranks", ranks)
        layers = len(ranks)
        object.__setattr__(self, "heads", _per_layer("heads", self.heads, layers, "give h_i >= 1 heads per layer"))
        if self.value_ranks is not None:
            object.__setattr__(self, "value_ranks", _per_layer(
                "value_ranks", self.value_ranks, layers, "give a value rank b_i >= 1 per layer, or None for V unfactored"))
        kv = self.heads if self.kv_heads is None else _per_layer(
            "kv_heads", self.kv_heads, layers, "give g_i >= 1 key-value groups per layer, dividing h_i")
        for i, (g, h) in enumerate(zip(kv, self.heads), start=1):
            if h % g:
                raise InvalidArchitectureError(f"kv_heads = {g} in layer {i} does not divide its {h} heads; each "
                                               "key-value group serves h / g consecutive heads")
            if g < h and self.value_ranks is None:
                raise InvalidArchitectureError(f"kv_heads = {g} < {h} heads in layer {i} needs value ranks: heads of a "
                                               "group share U and keep their own O (give value_ranks=b)")
        object.__setattr__(self, "kv_heads", kv)
        for name in ("residual", "causal", "biases"):
            if not isinstance(getattr(self, name), bool):
                raise InvalidArchitectureError(f"{name} = {getattr(self, name)!r} must be True or False")
        if self.residual:
            for i, (d_in, d_out) in enumerate(zip(widths, widths[1:]), start=1):
                if d_in != d_out:
                    raise InvalidArchitectureError(
                        f"residual = True needs d_i = d_(i-1) in every layer, but layer {i} maps width {d_in} to "
                        f"{d_out}; drop residual or use equal widths")

    # -- shape -------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Number of layers ``l``."""
        return len(self.ranks)

    @property
    def input_shape(self) -> tuple[int, int]:
        """``(d_0, t)``: an input has one column per token."""
        return (self.widths[0], self.tokens)

    @property
    def output_shape(self) -> tuple[int, int]:
        """``(d_l, t)``."""
        return (self.widths[-1], self.tokens)

    def blocks(self) -> Iterator[WeightBlock]:
        """The weight matrices in flattening order (layer, head, then Q, K, V or Q, K, U, O).

        Yields
        ------
        WeightBlock
            Consecutive: each block starts where the previous one ends, and
            the last ends at :attr:`parameter_count`.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> arch = Architecture((2, 3, 1), (1, 2))
        >>> [(b.name, b.layer, b.offset) for b in arch.blocks()]
        [('Q', 1, 0), ('K', 1, 2), ('V', 1, 4), ('Q', 2, 10), ('K', 2, 16), ('V', 2, 22)]
        >>> last = list(arch.blocks())[-1]
        >>> last.offset + last.size == arch.parameter_count
        True
        """
        offset = 0
        for i in range(1, self.depth + 1):
            d_in, d_out, a, h = self.widths[i - 1], self.widths[i], self.ranks[i - 1], self.heads[i - 1]
            n = h // self.kv_heads[i - 1]  # heads per key-value group
            value = ("V", d_out, d_in) if self.value_ranks is None else ("U", self.value_ranks[i - 1], d_in)
            for j in range(1, h + 1):
                first = (j - 1) % n == 0  # a group's shared blocks follow the Q of its first head
                g = (j - 1) // n + 1 if n > 1 else 0
                shapes = [("Q", a, d_in, 0)] + ([("K", a, d_in, g), (*value, g)] if first else [])
                if self.value_ranks is not None:
                    shapes.append(("O", d_out, self.value_ranks[i - 1], 0))
                if self.biases:
                    shapes += [("bQ", a, 1, 0)] + ([("bK", a, 1, g), ("bV", value[1], 1, g)] if first else [])
                for name, rows, cols, group in shapes:
                    yield WeightBlock(name, i, rows, cols, offset, j, h, group)
                    offset += rows * cols
            if self.biases:
                yield WeightBlock("bO", i, d_out, 1, offset, 0, h)
                offset += d_out

    @property
    def parameter_count(self) -> int:
        """``sum_i h_i (2 a_i d_{i-1} + d_i d_{i-1})``, or ``h_i (2 a_i d_{i-1} + b_i (d_{i-1} + d_i))`` with value ranks.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> arch = Architecture((2, 3, 1), (1, 2))
        >>> arch.parameter_count == sum(b.size for b in arch.blocks()) == (2*1*2 + 3*2) + (2*2*3 + 1*3)
        True
        """
        # by formula, not by listing the blocks: a refusal of 10^8 heads must not first enumerate them
        total = 0
        for i, (a, d_in, d_out) in enumerate(zip(self.ranks, self.widths, self.widths[1:])):
            h, g = self.heads[i], self.kv_heads[i]
            b = d_out if self.value_ranks is None else self.value_ranks[i]
            shared = a * d_in + b * d_in + (a + b if self.biases else 0)  # K, V or U, and their biases
            own = a * d_in + (0 if self.value_ranks is None else d_out * b) + (a if self.biases else 0)  # Q, O, bQ
            total += g * shared + h * own + (d_out if self.biases else 0)
        return total

    @property
    def is_plain(self) -> bool:
        """[HMK]'s model: one head per layer, ``V`` unfactored, no residual, no mask.

        Fibers, singular points, implicit equations and the structured path are
        built for these; :meth:`require_plain` refuses the others by name.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Architecture((3, 3), (2,)).is_plain, Architecture((3, 3), (2,), heads=2).is_plain
        (True, False)
        """
        return set(self.heads) == {1} and self.value_ranks is None and not self.residual and not self.causal \
            and not self.biases

    @property
    def is_tied(self) -> bool:
        """Some heads share keys and values (``kv_heads < heads``), or the layers have biases.

        These are one layer of plain multi-head attention on inputs with a constant extra row
        (:mod:`attngeo.model.untied`); computations built for untied heads refuse them by name.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Architecture((4, 4), (1,), heads=2, kv_heads=1, value_ranks=1).is_tied
        True
        >>> Architecture((4, 4), (1,), heads=2, value_ranks=1).is_tied
        False
        """
        return self.biases or self.kv_heads != self.heads

    def group(self, layer: int, head: int) -> int:
        """The 1-based key-value group of a 1-based head (its own index when no heads share keys)."""
        return (head - 1) // (self.heads[layer - 1] // self.kv_heads[layer - 1]) + 1

    def require_plain(self, what: str) -> None:
        """Refuse an architecture beyond [HMK]'s model for a computation built for it.

        Raises
        ------
        InvalidArchitectureError
            Naming the computation and the feature it lacks.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Architecture((3, 3), (2,), causal=True).require_plain("fibers")
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidArchitectureError: fibers: implemented for one head per layer, V unfactored, no residual and no mask; widths 3,3, ranks 2, t=2, causal, lightning has a causal mask (the dimension is certified for it: attngeo dim)
        """
        if self.is_plain:
            return
        has = [f"{max(self.heads)} heads in a layer"] if max(self.heads) > 1 else []
        has += ["a value rank"] if self.value_ranks is not None else []
        has += ["residual connections"] if self.residual else []
        has += ["a causal mask"] if self.causal else []
        has += ["biases"] if self.biases else []
        raise InvalidArchitectureError(
            f"{what}: implemented for one head per layer, V unfactored, no residual and no mask; {self} has "
            f"{', '.join(has)} (the dimension is certified for it: attngeo dim)")

    def variable_names(self) -> list[str]:
        """Names of the parameters in flattening order (see :meth:`WeightBlock.variable`).

        Examples
        --------
        >>> from attngeo import Architecture
        >>> names = Architecture((2, 1), (1,)).variable_names()
        >>> names
        ['Q1_0_0', 'Q1_0_1', 'K1_0_0', 'K1_0_1', 'V1_0_0', 'V1_0_1']
        >>> len(set(names)) == Architecture((2, 1), (1,)).parameter_count
        True
        """
        return [b.variable(r, c) for b in self.blocks() for r in range(b.rows) for c in range(b.cols)]

    # -- presentation ------------------------------------------------------
    def to_dict(self, full: bool = False) -> dict:
        """The JSON form certificates embed; :meth:`from_dict` reads it back.

        ``full=True`` (what ``--json`` prints) always lists ``heads``,
        ``value_ranks``, ``residual`` and ``causal``; certificates omit them
        when they are [HMK]'s defaults, so [HMK]'s certificates do not change.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> arch = Architecture((3, 2), (1,), tokens=3)
        >>> arch.to_dict()
        {'widths': [3, 2], 'ranks': [1], 'tokens': 3, 'normalization': 'lightning'}
        >>> Architecture.from_dict(arch.to_dict()) == arch
        True
        """
        out = {
            "widths": list(self.widths),
            "ranks": list(self.ranks),
            "tokens": self.tokens,
            "normalization": self.normalization,
        }
        if full:
            return {**out, "heads": list(self.heads), "kv_heads": list(self.kv_heads),
                    "value_ranks": None if self.value_ranks is None else list(self.value_ranks),
                    "residual": self.residual, "causal": self.causal, "biases": self.biases}
        # Only what differs from [HMK]'s model: its certificates stay byte-identical.
        if set(self.heads) != {1}:
            out["heads"] = list(self.heads)
        if self.value_ranks is not None:
            out["value_ranks"] = list(self.value_ranks)
        if self.residual:
            out["residual"] = True
        if self.causal:
            out["causal"] = True
        if self.kv_heads != self.heads:
            out["kv_heads"] = list(self.kv_heads)
        if self.biases:
            out["biases"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict) -> "Architecture":
        """Read an architecture from its JSON form, validating every field.

        ``tokens`` defaults to 2 and ``normalization`` to ``"lightning"``.

        Raises
        ------
        InvalidArchitectureError
            When ``data`` is not an object, lacks ``widths`` or ``ranks``, or
            any field is invalid.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Architecture.from_dict({"widths": [3, 3], "ranks": [2]}) == Architecture((3, 3), (2,), tokens=2)
        True
        >>> Architecture.from_dict({"widths": [3, 3]})
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidArchitectureError: architecture is missing ranks
        """
        if not isinstance(data, dict):
            raise InvalidArchitectureError(f"an architecture must be an object with widths, ranks, tokens; got {data!r}")
        missing = [k for k in ("widths", "ranks") if k not in data]
        if missing:
            raise InvalidArchitectureError(f"architecture is missing {', '.join(missing)}")
        unknown = sorted(set(data) - {"widths", "ranks", "tokens", "normalization", "heads", "value_ranks",
                                      "residual", "causal", "kv_heads", "biases"})
        if unknown:
            raise InvalidArchitectureError(f"architecture has unknown field {unknown[0]!r}; the fields are widths, "
                                           "ranks, tokens, normalization, heads, value_ranks, residual, causal, "
                                           "kv_heads, biases")
        return cls(
            tuple(data["widths"]),
            tuple(data["ranks"]),
            data.get("tokens", 2),
            data.get("normalization", "lightning"),
            data.get("heads", 1),  # a list or an integer: __post_init__ makes the tuple
            data.get("value_ranks"),
            data.get("residual", False),
            data.get("causal", False),
            data.get("kv_heads"),
            data.get("biases", False),
        )

    def __str__(self) -> str:
        w = ",".join(map(str, self.widths))
        a = ",".join(map(str, self.ranks))
        extra = f", heads {','.join(map(str, self.heads))}" if set(self.heads) != {1} else ""
        if self.kv_heads != self.heads:
            extra += f", kv heads {','.join(map(str, self.kv_heads))}"
        if self.value_ranks is not None:
            extra += f", value ranks {','.join(map(str, self.value_ranks))}"
        flags = "".join(f", {name}" for name in ("residual", "causal", "biases") if getattr(self, name))
        return f"widths {w}, ranks {a}{extra}, t={self.tokens}{flags}, {self.normalization}"

    def _repr_latex_(self) -> str:
        from .. import latex

        return f"${latex.architecture(self)}$"
