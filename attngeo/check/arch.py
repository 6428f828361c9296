"""The architecture of a certificate, re-read by the checker (its own copy, not the prover's)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..exceptions import CannotVerify, CertificateFormatError
from .limits import MAX_LAYER_WIDTH, MAX_PARAMETERS, MAX_SIZE, MAX_WIDE_SIZE
from .values import field, integer, reject


#: The weight matrices of a layer, numbered as :meth:`Arch.columns` numbers them.
MATRICES = ("Q", "K", "V", "U", "O", "bQ", "bK", "bV", "bO")


@dataclass(frozen=True)
class Arch:
    """An architecture as the checker knows it: widths, ranks, tokens, normalization (verified integers only).

    The checker's own copy of the flattening order (``Q, K, V`` per layer, each
    row-major), written independently of :class:`attngeo.Architecture`.

    Examples
    --------
    One layer ``3 -> 3`` of rank 2 has ``2 a d + d' d = 12 + 9`` weights:

    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((3, 3), (2,), 2)
    >>> arch.parameters
    21
    >>> arch.describe()
    'widths 3,3, ranks 2, t=2'
    """

    widths: tuple
    ranks: tuple
    tokens: int
    normalization: str = "lightning"
    heads: tuple = ()  # h_i per layer; () means one head everywhere
    value_ranks: tuple | None = None  # b_i per layer when V = O U
    residual: bool = False
    causal: bool = False
    kv_heads: tuple = ()  # g_i key-value groups per layer; () means every head its own keys and values
    biases: bool = False  # affine attention: b_Q, b_K, b_V per head or group, b_O per layer

    @property
    def plain(self) -> bool:
        """[HMK]'s model: one head, V unfactored, no residual, no mask (every kind but dimension needs it)."""
        return set(self.heads) <= {1} and self.value_ranks is None and not self.residual and not self.causal \
            and not self.tied

    @property
    def tied(self) -> bool:
        """Heads share keys and values in groups, or the layer has biases (docs/math.md §8.1)."""
        return bool(self.kv_heads) or self.biases

    def head_count(self, i: int) -> int:
        """``h_i`` for the 1-based layer ``i``."""
        return self.heads[i - 1] if self.heads else 1

    def group_size(self, i: int) -> int:
        """Heads per key-value group in the 1-based layer ``i`` (1 without grouped-query attention)."""
        return self.head_count(i) // self.kv_heads[i - 1] if self.kv_heads else 1

    def blocks(self):
        """``(layer, head, name, rows, cols, offset)`` in flattening order: layer, head, ``Q K V`` or ``Q K U O``.

        A group's shared ``K``, ``U`` (and ``bK``, ``bV``) come after the ``Q`` of its first head and carry that
        head; biases follow each head's matrices, and ``bO`` (head 0) ends the layer.

        Examples
        --------
        >>> from attngeo.check.arch import Arch
        >>> [b[:3] for b in Arch((2, 1), (1,), 2, heads=(2,), value_ranks=(1,)).blocks()][:5]
        [(1, 1, 'Q'), (1, 1, 'K'), (1, 1, 'U'), (1, 1, 'O'), (1, 2, 'Q')]
        >>> [b[1:3] for b in Arch((2, 1), (1,), 2, heads=(2,), value_ranks=(1,), kv_heads=(1,), biases=True).blocks()]
        [(1, 'Q'), (1, 'K'), (1, 'U'), (1, 'O'), (1, 'bQ'), (1, 'bK'), (1, 'bV'), (2, 'Q'), (2, 'O'), (2, 'bQ'), (0, 'bO')]
        """
        out, offset = [], 0
        for i, a in enumerate(self.ranks, start=1):
            d_in, d_out = self.widths[i - 1], self.widths[i]
            b = self.value_ranks[i - 1] if self.value_ranks is not None else None
            n = self.group_size(i)
            for j in range(1, self.head_count(i) + 1):
                leads = (j - 1) % n == 0
                mats = [("Q", a, d_in)]
                if leads:
                    mats += [("K", a, d_in), ("V", d_out, d_in) if b is None else ("U", b, d_in)]
                if b is not None:
                    mats.append(("O", d_out, b))
                if self.biases:
                    mats.append(("bQ", a, 1))
                    if leads:
                        mats += [("bK", a, 1), ("bV", d_out if b is None else b, 1)]
                for name, rows, cols in mats:
                    out.append((i, j, name, rows, cols, offset))
                    offset += rows * cols
            if self.biases:
                out.append((i, 0, "bO", d_out, 1, offset))
                offset += d_out
        return out

    def shapes(self):
        """``(layer, name, rows, cols, offset)`` in flattening order.

        Examples
        --------
        >>> from attngeo.check.arch import Arch
        >>> Arch((3, 2, 2), (1, 2), 2).shapes()     # V_1 is 2 x 3, layer 2 reads width 2
        [(1, 'Q', 1, 3, 0), (1, 'K', 1, 3, 3), (1, 'V', 2, 3, 6), (2, 'Q', 2, 2, 12), (2, 'K', 2, 2, 16), (2, 'V', 2, 2, 20)]
        """
        if not self.plain:
            reject("this certificate kind is for one head per layer, V unfactored, no residual and no mask")
        return [(i, name, rows, cols, offset) for i, _, name, rows, cols, offset in self.blocks()]

    @property
    def parameters(self) -> int:
        return sum(r * c for _, _, _, r, c, _ in self.blocks())

    def offsets(self) -> dict:
        """``(layer, head, name) -> offset`` of each weight matrix in the flattening order."""
        return {(i, j, name): off for i, j, name, _, _, off in self.blocks()}

    def weights(self, values, make=None) -> dict:
        """``(layer, head, name) -> matrix`` of the flat ``values``: ``make(rows, cols, entries)``, else its rows.

        Examples
        --------
        >>> from attngeo.check.arch import Arch
        >>> W = Arch((2, 1), (1,), 2, heads=(2,)).weights(list(range(12)))
        >>> W[(1, 1, "Q")], W[(1, 2, "V")]
        ([[0, 1]], [[10, 11]])
        """
        make = make or (lambda r, c, x: [list(x[k * c:(k + 1) * c]) for k in range(r)])
        return {(i, j, name): make(r, c, values[off:off + r * c]) for i, j, name, r, c, off in self.blocks()}

    def head_weights(self, W: dict, i: int) -> list[dict]:
        """Layer ``i``'s heads (1-based layer) as ``name -> matrix`` dicts of :meth:`weights` (untied heads: a layer
        with shared keys or biases is replayed as its untied layer, check/untie.py)."""
        names = "QKV" if self.value_ranks is None else "QKUO"
        return [{n: W[(i, j, n)] for n in names} for j in range(1, self.head_count(i) + 1)]

    def columns(self, dtype=np.int64) -> tuple:
        """Per flat parameter, arrays: its layer, head (1-based; 0 for ``bO``), matrix (its index in ``MATRICES``),
        row and column.

        Examples
        --------
        >>> from attngeo.check.arch import Arch
        >>> [x.tolist() for x in Arch((2, 1), (1,), 2).columns()]
        [[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2], [0, 0, 0, 0, 0, 0], [0, 1, 0, 1, 0, 1]]
        """
        P = self.parameters
        layer, head, kind, row, col = (np.zeros(P, dtype=dtype) for _ in range(5))
        for i, j, name, r, c, off in self.blocks():
            at = slice(off, off + r * c)
            layer[at], head[at], kind[at] = i, j, MATRICES.index(name)
            row[at], col[at] = np.divmod(np.arange(r * c), c)
        return layer, head, kind, row, col

    def describe(self) -> str:
        """``widths 3,3, ranks 2, t=2`` (from verified integers only): the architecture in every claim.

        Examples
        --------
        >>> from attngeo.check.arch import Arch
        >>> Arch((2, 2, 2), (1, 1), 3, "softmax").describe()
        'widths 2,2,2, ranks 1,1, t=3, softmax'
        """
        norm = "" if self.normalization == "lightning" else f", {self.normalization}"
        extra = f", heads {','.join(map(str, self.heads))}" if set(self.heads) - {1} else ""
        extra += f", kv heads {','.join(map(str, self.kv_heads))}" if self.kv_heads else ""
        extra += f", value ranks {','.join(map(str, self.value_ranks))}" if self.value_ranks is not None else ""
        flags = "".join(f", {name}" for name in ("residual", "causal", "biases") if getattr(self, name))
        return (f"widths {','.join(map(str, self.widths))}, ranks {','.join(map(str, self.ranks))}{extra}, "
                f"t={self.tokens}{flags}{norm}")


_NORMALIZATION_NAME = set("abcdefghijklmnopqrstuvwxyz0123456789_-")
#: The normalizations whose networks the checker can evaluate (softmax's exp: check/dimension/ball.py). A claim
#: about another one (a normalizer registered with the prover) cannot be judged here, whatever its witness says.
NORMALIZATIONS = ("lightning", "softmax")


def architecture(cert: dict, wide: bool = False) -> Arch:
    """The ``architecture`` field of a certificate, read and bounded by the checker.

    Raises
    ------
    CertificateRejected
        Missing fields, a rank count that is not one per layer, a size outside
        ``1..MAX_SIZE`` (``1..MAX_WIDE_SIZE`` for widths and ranks with ``wide``: witnesses that only rank
        matrices with FLINT), more than 64 layers, or a normalization on a kind that
        is for lightning networks only.
    CannotVerify
        A normalization the checker cannot evaluate (not in ``NORMALIZATIONS``).

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.arch import architecture
    >>> cert = certify_dimension(Architecture((3, 2, 2), (1, 2), tokens=2), seed=0).to_json()
    >>> architecture(cert).parameters
    24
    >>> cert["architecture"]["ranks"] = [1]       # two layers, one rank
    >>> architecture(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: architecture needs widths d_0..d_l and one rank per layer
    """
    a = field(cert, "architecture")
    if not isinstance(a, dict):
        reject("architecture must be an object")
    widths, ranks = field(a, "widths", "architecture."), field(a, "ranks", "architecture.")
    if not isinstance(widths, list) or not isinstance(ranks, list) or len(widths) < 2 or len(ranks) != len(widths) - 1:
        reject("architecture needs widths d_0..d_l and one rank per layer")
    if len(ranks) > 64:
        reject(f"architecture has {len(ranks)} layers, above the checker's limit of 64")
    top = MAX_WIDE_SIZE if wide else MAX_SIZE  # wide: the witness only ranks matrices with FLINT (no int64 sums)
    for v in widths + ranks:
        integer(v, "a width or rank", 1, top)
    tokens = integer(field(a, "tokens", "architecture."), "architecture.tokens", 1, MAX_SIZE)
    normalization = field(a, "normalization", "architecture.")
    if not isinstance(normalization, str) or not 0 < len(normalization) <= 40 or set(normalization) - _NORMALIZATION_NAME:
        reject("architecture.normalization must be a short lower-case name")
    if normalization != "lightning" and cert.get("kind") not in ("dimension", "local-rank"):
        reject(f"{cert.get('kind')} certificates are for lightning networks")
    if normalization not in NORMALIZATIONS:
        raise CannotVerify(f"this checker knows the normalizations {list(NORMALIZATIONS)}, not {normalization!r}")
    heads = _per_layer(a, "heads", len(ranks), top) or ()
    value_ranks = _per_layer(a, "value_ranks", len(ranks), top)
    kv = _per_layer(a, "kv_heads", len(ranks), top) or ()
    if kv and kv == (heads or (1,) * len(ranks)):
        reject("architecture.kv_heads must be omitted when every head has its own keys (one spelling)")
    for i, g in enumerate(kv):
        h = heads[i] if heads else 1
        if h % g:
            reject("architecture.kv_heads must divide the heads of every layer")
        if g < h and value_ranks is None:
            reject("architecture.kv_heads below the heads needs value_ranks (a group shares U, each head has its O)")
    flags = {}
    for name in ("residual", "causal", "biases"):
        if name in a and a[name] is not True:  # absent means False: one spelling per architecture
            reject(f"architecture.{name} must be true when present (omit it for false)")
        flags[name] = name in a
    arch = Arch(tuple(widths), tuple(ranks), tokens, normalization, heads, value_ranks, kv_heads=kv, **flags)
    if arch.tied and (cert.get("kind") not in ("local-rank", "dimension") or len(ranks) != 1):
        reject(f"{cert.get('kind')} certificates are for layers without shared keys and biases (local-rank and "
               "dimension certificates of one layer have them)")
    if arch.residual and len(set(widths)) != 1:
        reject("architecture.residual needs equal widths (X + Y)")
    if not arch.plain and cert.get("kind") not in ("dimension", "deep-fiber", "local-rank"):
        reject(f"{cert.get('kind')} certificates are for one head per layer, V unfactored, no residual and no mask")
    if arch.parameters > MAX_PARAMETERS:
        reject(f"the architecture has {arch.parameters} parameters, above the checker's limit of {MAX_PARAMETERS}")
    return arch


def _per_layer(a: dict, key: str, layers: int, top: int = MAX_SIZE) -> tuple | None:
    """An optional per-layer list of positive integers; absent is None, and [HMK]'s defaults must be omitted."""
    if key not in a:
        return None
    values = a[key]
    if not isinstance(values, list) or len(values) != layers:
        reject(f"architecture.{key} must list one positive integer per layer")
    for v in values:
        integer(v, f"architecture.{key}", 1, top)
    if key == "heads" and set(values) == {1}:
        reject("architecture.heads must be omitted for one head per layer (one spelling per architecture)")
    return tuple(values)


def single_layer(cert: dict) -> tuple[Arch, int, int, int]:
    """The architecture of a single-layer certificate (``t >= 2``) and its ``d, d', a``.

    Raises
    ------
    CertificateRejected
        More than one layer, or one token.
    CertificateFormatError
        A width above ``MAX_LAYER_WIDTH``: the single-layer checkers' work grows like ``d^4``.

    Examples
    --------
    >>> from attngeo import Architecture, fiber
    >>> from attngeo.check.arch import single_layer
    >>> cert = fiber(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[1, 1]]]]).to_json()
    >>> arch, d, d_out, a = single_layer(cert)
    >>> (d, d_out, a), arch.parameters
    ((2, 1, 1), 6)
    >>> cert["architecture"]["tokens"] = 1
    >>> single_layer(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: fiber certificates are for single-layer networks with t >= 2 tokens
    """
    arch = architecture(cert)
    if len(arch.ranks) != 1 or arch.tokens < 2:
        reject(f"{cert.get('kind')} certificates are for single-layer networks with t >= 2 tokens")
    if max(arch.widths) > MAX_LAYER_WIDTH or arch.ranks[0] > MAX_LAYER_WIDTH + 1:
        raise CertificateFormatError(f"widths above {MAX_LAYER_WIDTH} are beyond the checker's limit for "
                                     f"{cert.get('kind')} certificates")
    return arch, arch.widths[0], arch.widths[1], arch.ranks[0]
