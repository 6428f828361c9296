"""Structure-aware certification of deep multi-head residual stacks at the stack point (GPT-2's attention stack).

The **stack point** (docs/math.md §7.6) of a residual stack of ``l`` layers, each
with ``h`` heads of rank ``a`` and value rank ``b = a`` tiling the width
(``h a = d``): head ``j`` of every layer owns the coordinate block
``B_j = {j a, ..., j a + a - 1}``, ``Q_j = β S_j``, ``K_j = U_j = S_j`` (``S_j`` selects
``B_j``) and ``O_j = γ S_jᵀ``. Every head then reads and writes its own block only,
so on an input whose nonzero rows lie in ``R`` the state stays there, and
(**Lemma S**) the derivative of output row ``k`` in a weight entry that involves
the coordinates ``S(w)`` (``{c_j(s), c}`` for ``Q_j[s, c]``, ``K_j[s, c]``, ``U_j[s, c]``,
``{k, c_j(s)}`` for ``O_j[k, s]``) vanishes unless ``S(w) ⊆ R ∪ {k}``, and is otherwise
that of the same stack on the coordinates ``R ∪ {k}`` alone.

So the Jacobian, on inputs supported on chosen sets of two, three or four
coordinates, has a block lower triangular minor whose columns are all
``P - dim G`` entries outside the group fields' minor, and whose diagonal blocks
are the Jacobians of a handful of tiny stacks (width at most 4, two heads): one
block per *type* of coordinate set (:data:`TYPES`), the same matrix for every set
of that type (the same tiny stack, the same inputs). Each type's block is ranked
once — mod ``p`` for lightning, as a ball determinant for softmax — and counted
as many times as the type occurs. The upper bound is the group fields at the
same point (per head ``GL_a``, the scaling for lightning, ``GL_b``), whose minor on
``K_j[v, c_j(u)]``, ``O_j[c_j(0), 0]`` and ``U_j[u, c_j(v)]`` is lower triangular.

GPT-2 small's attention stack (12 layers of 12 heads, ``d = 768``,
``a = b = 64``, residual, causal: 28,311,552 parameters) certifies in seconds;
see docs/engines.md for measurements.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

import numpy as np
from flint import arb, arb_mat, fmpq

from ... import progress
from ...exceptions import InvalidInputError
from ...check.limits import MAX_STACK_LAYER_ENTRIES
from ...exact.rank import random_prime, rank_mod_p
from ...model.architecture import Architecture
from ...model.formulas import hmk_formula
from ...model.jacobian import jacobian_mod_p
from ..certificate import DimensionCertificate
from ..symmetry import families
from . import headpoint
from .ball import PRECISIONS, _precision, ball_jacobian, wide_pivots
from .bounds import random_ints
from .identitypoint import triangular_determinant
from .kernelfields import kernel_families

#: Normalizations the path serves: lightning (ranks mod p) and softmax (ball determinants; the checker
#: knows ``exp`` only).
NORMALIZATIONS = ("lightning", "softmax")

#: Softmax point: ``Q = S / 4`` and ``O = Sᵀ / 4``. With ``β = γ = 1`` the state doubles at every layer and the
#: scores saturate the softmax (12 layers: determinants below 1e-600 that the float guide cannot find);
#: with 1/4 every block of GPT-2's depth is decided at 256 bits.
SOFTMAX_SCALE = fmpq(1, 4)

#: Input entries of normalized stacks are ``k / DENOMINATOR`` with ``|k| < DENOMINATOR``.
DENOMINATOR = 16

#: Spare inputs beyond the fewest that could fill a block's rows, and how often the inputs may be doubled.
SPARE, MAX_DOUBLINGS = 2, 4


@dataclass(frozen=True)
class Type:
    """One type of coordinate set: its tiny stack, the rows read, and the columns its block owns.

    The tiny stack has ``heads`` heads of rank ``rank`` on width ``heads * rank``; head ``e`` (1-based) owns
    coordinates ``(e - 1) rank ...``. Inputs are nonzero on ``support``; the block's rows are the output rows
    ``rows`` (every token); ``owned(head, name, row, col, lightning)`` says whether a weight entry of one layer
    is a column of the block.

    Examples
    --------
    A "first cross" set ``{q0, q1, y}``: ``Q, K, U`` of ``q0`` and ``q1`` on ``y`` and ``y``'s head writing ``q0``, ``q1``:

    >>> kind = TYPES[3]
    >>> kind.width, kind.owned(1, "K", 0, 2, True), kind.owned(2, "O", 1, 0, True), kind.owned(1, "Q", 0, 1, True)
    (4, True, True, False)
    """

    name: str
    rank: int
    heads: int
    support: tuple
    rows: tuple

    @property
    def width(self) -> int:
        return self.rank * self.heads

    def owned(self, head: int, name: str, r: int, c: int, lightning: bool) -> bool:
        """Whether entry ``(r, c)`` of ``name`` of head ``head`` (1-based) in one layer of the tiny stack is the block's.

        >>> TYPES[0].owned(1, "O", 0, 0, True), TYPES[0].owned(1, "O", 0, 0, False)   # lightning: a field column
        (False, True)
        """
        if self.name == "first":  # {q0}: Q[0, q0]; O[q0, 0] is the scaling's field column (lightning)
            return name == "Q" or (name == "O" and not lightning)
        if self.name == "first pair":  # {q0, x}: every Q and O entry but those of q0 alone
            return name in "QO" and (r, c) != (0, 0)
        if self.name == "pair":  # {x, y}, neither q0: the entries that mix x and y
            return name in "QO" and r != c
        if self.name == "first cross":  # {q0, q1, y}: Q, K, U of q0 and q1 on y; y's head writing q0, q1
            return (head == 1 and name in "QKU" and c == 2) or (head == 2 and name == "O" and c == 0 and r < 2)
        # "cross" {x, q0, y}: Q, K, U of x on y; y's head writing x
        return (head == 1 and name in "QKU" and (r, c) == (1, 2)) or (head == 2 and name == "O" and (r, c) == (1, 0))

    def per_layer(self, lightning: bool) -> int:
        """Columns a set of this type owns in one layer.

        >>> [t.per_layer(True) for t in TYPES]
        [1, 6, 4, 8, 4]
        """
        return {"first": 1 + (not lightning), "first pair": 6, "pair": 4, "first cross": 8, "cross": 4}[self.name]

    def count(self, d: int, a: int, h: int) -> int:
        """How many coordinate sets of this type a stack of ``h`` heads of rank ``a`` on width ``d`` has.

        With the columns they own, every entry outside the fields of one layer, ``4 a d h - h (2 a² + 1)``:

        >>> d, a, h = 12, 4, 3
        >>> sum(t.count(d, a, h) * t.per_layer(True) for t in TYPES) == 4 * a * d * h - h * (2 * a * a + 1)
        True
        """
        return {"first": h, "first pair": h * (a - 1), "pair": h * (a - 1) * (a - 2) // 2,
                "first cross": h * (d - a), "cross": h * (a - 2) * (d - a)}[self.name]


#: The types in the order of the block triangular minor (each block's rows reach only columns of its own
#: and earlier types, or field columns).
TYPES = (
    Type("first", 1, 1, (0,), (0,)),
    Type("first pair", 2, 1, (0, 1), (0, 1)),
    Type("pair", 2, 1, (0, 1), (0, 1)),
    Type("first cross", 2, 2, (0, 1, 2), (0, 1)),
    Type("cross", 2, 2, (0, 1, 2), (0, 1)),
)


def _shape(arch: Architecture) -> tuple[int, int, int, int]:
    """``(d, a, h, l)``."""
    return arch.widths[0], arch.ranks[0], arch.heads[0], arch.depth


def applies(arch: Architecture) -> bool:
    """A residual stack of equal layers whose heads tile the width: ``h a = d``, ``b = a >= 2``, ``t >= 2``.

    Lightning or softmax, causal or not, any depth.

    Examples
    --------
    >>> applies(Architecture((8, 8, 8), (4, 4), heads=2, value_ranks=4, residual=True, causal=True))
    True
    >>> applies(Architecture((8, 8, 8), (4, 4), heads=2, value_ranks=4, causal=True))      # no residual: GL_d
    False
    >>> applies(Architecture((8, 8), (2,), heads=2, value_ranks=2, residual=True))          # h a < d
    False
    """
    if not arch.residual or arch.value_ranks is None or arch.tokens < 2 or arch.normalization not in NORMALIZATIONS:
        return False
    d, a, h, _ = _shape(arch)
    uniform = set(arch.widths) == {d} and set(arch.ranks) == {a} and set(arch.heads) == {h} \
        and set(arch.value_ranks) == {a}
    # a witness the checker would refuse as too large (its owner table) is not written: other witnesses or bounds
    return uniform and a >= 2 and h * a == d and 4 * a * d <= MAX_STACK_LAYER_ENTRIES and not kernel_families(arch)


def field_rank(arch: Architecture) -> int:
    """``l h (2 a² + 1)`` (lightning) or ``l h 2 a²`` (softmax: no scaling): the group fields.

    Examples
    --------
    >>> field_rank(Architecture((768,) * 13, (64,) * 12, heads=12, value_ranks=64, residual=True, causal=True))
    1179792
    """
    d, a, h, l = _shape(arch)
    return l * h * (2 * a * a + (arch.normalization == "lightning"))


def tiny_stack(arch: Architecture, kind: Type) -> tuple[Architecture, list, np.ndarray]:
    """The type's tiny stack, its stack point (rationals) and the mask of the columns the block owns.

    Examples
    --------
    >>> arch = Architecture((8, 8, 8), (4, 4), heads=2, value_ranks=4, residual=True, causal=True)
    >>> small, point, owned = tiny_stack(arch, TYPES[3])
    >>> small.widths, int(owned.sum()) == TYPES[3].per_layer(True) * 2
    ((4, 4, 4), True)
    """
    lightning = arch.normalization == "lightning"
    beta = gamma = fmpq(1) if lightning else SOFTMAX_SCALE
    r = kind.rank
    small = Architecture((kind.width,) * (arch.depth + 1), (r,) * arch.depth, arch.tokens, arch.normalization,
                         kind.heads, r, residual=True, causal=arch.causal)
    point, owned = [], []
    for b in small.blocks():
        scale = beta if b.name == "Q" else gamma if b.name == "O" else fmpq(1)
        M = [[fmpq(0)] * b.cols for _ in range(b.rows)]
        for s in range(r):  # selectors of the head's own coordinates; O the transpose
            c = (b.head - 1) * r + s
            if b.name == "O":
                M[c][s] = scale
            else:
                M[s][c] = scale
        point += [x for row in M for x in row]
        owned += [kind.owned(b.head, b.name, i, c, lightning) for i in range(b.rows) for c in range(b.cols)]
    return small, point, np.array(owned)


def _block_mod_p(small: Architecture, point: list, owned: np.ndarray, kind: Type, p: int, rng: random.Random):
    """Inputs on which the block has full column rank mod ``p``, or None."""
    t, cols = small.tokens, int(owned.sum())
    n = -(-cols // (len(kind.rows) * t)) + SPARE
    ipoint = np.array([int(x) for x in point], dtype=np.int64)
    rank = -1
    for _ in range(MAX_DOUBLINGS + 1):
        values = random_ints(rng, (n, len(kind.support), t))
        X = np.zeros((n,) + small.input_shape, dtype=np.int64)
        X[:, list(kind.support)] = values
        J = jacobian_mod_p(small, ipoint, X, p).reshape(n, small.widths[-1], t, -1)[:, list(kind.rows)]
        rank = rank_mod_p(J.reshape(-1, small.parameter_count)[:, owned], p)
        if rank == cols:
            return values.tolist()
        n *= 2
    return None


def _block_ball(small: Architecture, point: list, owned: np.ndarray, kind: Type, rng: random.Random):
    """``(inputs, rows, precision, determinant)`` of a nonsingular ball minor of the block, or None."""
    t, cols = small.tokens, int(owned.sum())
    n = -(-cols // (len(kind.rows) * max(1, t - 1))) + SPARE  # a causal first token sees itself only
    selected = [(k, j) for k in kind.rows for j in range(t)]
    columns = np.flatnonzero(owned).tolist()
    for _ in range(MAX_DOUBLINGS + 1):
        values = np.random.default_rng(rng.getrandbits(64)).integers(1 - DENOMINATOR, DENOMINATOR,
                                                                     (n, len(kind.support), t))
        inputs = []
        for v in values:
            X = [[fmpq(0)] * t for _ in range(small.widths[0])]
            for e, row in enumerate(kind.support):
                X[row] = [fmpq(int(x), DENOMINATOR) for x in v[e]]
            inputs.append(X)
        w = np.zeros((n, len(selected), small.widths[-1], t), dtype=np.int64)
        for e, (k, j) in enumerate(selected):
            w[:, e, k, j] = 1
        rows = None
        for prec in PRECISIONS[1:]:
            J = ball_jacobian(small, point, inputs, w, prec, columns=columns)
            if rows is None:
                rows, _ = wide_pivots(J, digits=int(prec * 0.3) - 5)
                if len(rows) < cols:
                    break
                rows = sorted(rows)
            with _precision(prec):
                det = arb_mat([[J[i, j] for j in range(cols)] for i in rows]).det()
            if not det.contains(0):
                strings = [[[str(fmpq(int(x), DENOMINATOR)) for x in row] for row in v] for v in values]
                return strings, rows, prec, det
        n *= 2
    return None


def lower_bound(arch: Architecture, p: int, rng: random.Random) -> dict | None:
    """The block triangular minor of Lemma S as a witness: each type's inputs (and ball minor); None if a block
    is short.

    Examples
    --------
    >>> arch = Architecture((6, 6, 6), (3, 3), heads=2, value_ranks=3, residual=True, causal=True)
    >>> w = lower_bound(arch, 67108859, random.Random(0))
    >>> w["rank"] == arch.parameter_count - field_rank(arch), sorted(w["inputs"]) == sorted(t.name for t in TYPES)
    (True, True)
    """
    d, a, h, l = _shape(arch)
    lightning = arch.normalization == "lightning"
    inputs, rows, dets, precision, rank = {}, {}, {}, PRECISIONS[1], 0
    for kind in TYPES:
        count = kind.count(d, a, h)
        if count == 0:
            continue
        progress.phase("Jacobian and elimination", f"the '{kind.name}' block ({count} sets, "
                                                   f"{kind.per_layer(lightning) * l} columns each)")
        small, point, owned = tiny_stack(arch, kind)
        if lightning:
            found = _block_mod_p(small, point, owned, kind, p, rng)
            if found is None:
                return None
            inputs[kind.name] = found
        else:
            found = _block_ball(small, point, owned, kind, rng)
            if found is None:
                return None
            inputs[kind.name], rows[kind.name], prec, det = found
            dets[kind.name] = det.str(radius=True, more=False)
            precision = max(precision, prec)
        rank += count * int(owned.sum())
    if lightning:
        return {"structured": "stack point", "prime": p, "rank": rank, "inputs": inputs}
    return {"structured": "stack point", "normalization": arch.normalization, "precision": precision,
            "rank": rank, "inputs": inputs, "rows": rows, "determinants": dets}


def field_minor(arch: Architecture, p: int) -> int:
    """Determinant mod ``p`` of the group fields' minor at the (integer) stack point, layer by layer.

    Each layer's fields are those of the head point of one layer (:mod:`attngeo.geometry.dimension.headpoint`,
    whose factored point with ``h a = d`` is this one), without the scaling for softmax.

    Examples
    --------
    >>> arch = Architecture((4, 4, 4), (2, 2), heads=2, value_ranks=2, residual=True, causal=True)
    >>> field_minor(arch, 101) == (-1) ** (2 * 2 * (4 + 1)) % 101
    True
    """
    d, a, h, l = _shape(arch)
    layer = Architecture((d, d), (a,), arch.tokens, heads=h, value_ranks=a)
    r, c, v = headpoint.field_entries(layer)
    columns = np.array(headpoint.field_columns(layer), dtype=np.int64)
    if arch.normalization != "lightning":  # no scaling: drop its row (after each head's intra rows) and column
        per_head = 2 * a * a + 1
        scaling_rows = np.arange(h) * per_head + a * a
        keep = ~np.isin(r, scaling_rows)
        r, c, v = r[keep], c[keep], v[keep]
        r = r - np.searchsorted(scaling_rows, r, side="right")
        columns = np.delete(columns, scaling_rows)
    n, size = len(columns), layer.parameter_count
    rows, cols, vals = [], [], []
    where = np.full(size, -1, dtype=np.int64)
    where[columns] = np.arange(n)
    inside = where[c] >= 0
    for i in range(l):  # the fields of layer i move layer i's weights only
        rows.append(r[inside] + i * n)
        cols.append(where[c[inside]] + i * n)
        vals.append(v[inside])
    det, _ = triangular_determinant(np.concatenate(rows), np.concatenate(cols), np.concatenate(vals), l * n, p)
    return det


def estimate_bytes(arch: Architecture) -> int:
    """Estimated peak memory of :func:`certify_stack` (a guide for ``--max-memory``): the field minor's entries.

    Examples
    --------
    >>> estimate_bytes(Architecture((768,) * 13, (64,) * 12, heads=12, value_ranks=64, residual=True)) < 2**30
    True
    """
    d, a, h, l = _shape(arch)
    return 200 * l * h * (4 * a * a + 2 * a) + 200 * 2**20


def certify_stack(arch: Architecture, seed: int | None = None) -> DimensionCertificate:
    """Certify ``dim M`` of a residual multi-head stack at the stack point (module docstring).

    The bounds differ (lower bound 0) when a block is short; the caller then falls back to another path.

    Examples
    --------
    >>> from attngeo import certify_dimension
    >>> arch = Architecture((4, 4, 4), (2, 2), heads=2, value_ranks=2, residual=True, causal=True)
    >>> cert = certify_stack(arch, seed=0)
    >>> cert.certified, cert.dimension == arch.parameter_count - 2 * 2 * (2 * 4 + 1)
    (True, True)
    """
    if not applies(arch):
        raise InvalidInputError(f"the stack point needs a residual stack of equal layers, h heads of rank a = value "
                                f"rank b >= 2 with h a = d, t >= 2, lightning or softmax; {arch} is not one "
                                "(use certify_dimension)")
    start = time.perf_counter()
    rng = random.Random(seed)
    p = random_prime(rng)
    progress.phase("point", f"the stack point, {arch.depth} layers of {arch.heads[0]} heads, mod {p}")
    low = lower_bound(arch, p, rng)
    notes = []
    if low is None:
        low = {"structured": "stack point", "prime": p, "rank": 0, "inputs": {}}
        notes.append("a block of the stack point's minor was short")
    progress.phase("upper bound", "the group fields' triangular minor, layer by layer")
    det = field_minor(arch, p)
    s = field_rank(arch) if det else 0
    up = {"structured": "stack point", "prime": p, "families": [f.to_dict() for f in families(arch)],
          "field_rank": s, "determinant": det}
    return DimensionCertificate(arch, low["rank"], arch.parameter_count - s, low, up, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1, notes)
