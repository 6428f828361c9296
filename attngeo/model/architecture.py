"""Architectures of self-attention networks: a small, frozen, validated value.

An :class:`Architecture` fixes widths ``d_0..d_l``, attention ranks ``a_1..a_l``,
the number of tokens ``t`` and the normalization. It knows the shapes of the
weights and the order in which they are flattened into one parameter vector:
layer by layer, ``Q_i`` then ``K_i`` then ``V_i``, each row-major. Certificates
record points in exactly this order (docs/certificates.md).
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


@dataclass(frozen=True)
class WeightBlock:
    """One weight matrix of the network: its name, layer, shape and offset.

    Parameters
    ----------
    name : {"Q", "K", "V"}
    layer : int
        1-based layer index.
    rows, cols : int
        The shape: ``a_i x d_{i-1}`` for ``Q`` and ``K``, ``d_i x d_{i-1}`` for ``V``.
    offset : int
        Position of entry ``(0, 0)`` in the flat parameter vector; the matrix
        occupies ``offset .. offset + size - 1``, row-major.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> Q, K, V = Architecture((3, 2), (1,)).blocks()
    >>> (V.name, V.rows, V.cols, V.offset, V.size)   # V is d_1 x d_0, after Q and K (1 x 3 each)
    ('V', 2, 3, 6, 6)
    """

    name: str  # "Q", "K" or "V"
    layer: int  # 1-based
    rows: int
    cols: int
    offset: int  # position of entry (0, 0) in the flat parameter vector

    @property
    def size(self) -> int:
        """Number of entries, ``rows * cols``."""
        return self.rows * self.cols

    def variable(self, r: int, c: int) -> str:
        """Predictable variable name, e.g. ``Q1_0_2`` (layer 1, row 0, column 2).

        Certificates, symbolic rings and LaTeX all name weights this way.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> Q, K, V = Architecture((3, 2), (1,)).blocks()
        >>> Q.variable(0, 2), V.variable(1, 0)
        ('Q1_0_2', 'V1_1_0')
        """
        return f"{self.name}{self.layer}_{r}_{c}"


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
    """

    widths: tuple[int, ...]
    ranks: tuple[int, ...]
    tokens: int = 2
    normalization: str = "lightning"

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
        """The weight matrices in flattening order (layer, then Q, K, V).

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
            d_in, d_out, a = self.widths[i - 1], self.widths[i], self.ranks[i - 1]
            for name, rows in (("Q", a), ("K", a), ("V", d_out)):
                yield WeightBlock(name, i, rows, d_in, offset)
                offset += rows * d_in

    @property
    def parameter_count(self) -> int:
        """``sum_i 2 a_i d_{i-1} + d_i d_{i-1}`` [HMK].

        Examples
        --------
        >>> from attngeo import Architecture
        >>> arch = Architecture((2, 3, 1), (1, 2))
        >>> arch.parameter_count == sum(b.size for b in arch.blocks()) == (2*1*2 + 3*2) + (2*2*3 + 1*3)
        True
        """
        return sum(2 * a * d_in + d_out * d_in for a, d_in, d_out in zip(self.ranks, self.widths, self.widths[1:]))

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
    def to_dict(self) -> dict:
        """The JSON form certificates embed; :meth:`from_dict` reads it back.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> arch = Architecture((3, 2), (1,), tokens=3)
        >>> arch.to_dict()
        {'widths': [3, 2], 'ranks': [1], 'tokens': 3, 'normalization': 'lightning'}
        >>> Architecture.from_dict(arch.to_dict()) == arch
        True
        """
        return {
            "widths": list(self.widths),
            "ranks": list(self.ranks),
            "tokens": self.tokens,
            "normalization": self.normalization,
        }

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
        return cls(
            tuple(data["widths"]),
            tuple(data["ranks"]),
            data.get("tokens", 2),
            data.get("normalization", "lightning"),
        )

    def __str__(self) -> str:
        w = ",".join(map(str, self.widths))
        a = ",".join(map(str, self.ranks))
        return f"widths {w}, ranks {a}, t={self.tokens}, {self.normalization}"

    def _repr_latex_(self) -> str:
        from .. import latex

        return f"${latex.architecture(self)}$"
