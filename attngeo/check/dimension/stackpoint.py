"""The checker's replay of ``structured = "stack point"`` witnesses (deep multi-head residual stacks).

The stack point (docs/math.md §7.6): a residual stack of ``l`` equal layers whose
``h`` heads of rank ``a = b`` tile the width (``h a = d``); head ``j`` owns the block
``B_j = {j a, ..., j a + a - 1}`` with ``Q_j = β S_j``, ``K_j = U_j = S_j``, ``O_j = γ S_jᵀ``
(``S_j`` selects ``B_j``; ``β = γ = 1`` for lightning, ``1/4`` for softmax). A weight entry
*involves* the coordinates ``{j a + s, c}`` (``Q_j[s, c]``, ``K_j[s, c]``, ``U_j[s, c]``) or
``{k, j a + s}`` (``O_j[k, s]``). **Lemma S**: on an input whose nonzero rows lie in
``R``, the derivative of an output row ``k`` is zero in every entry that involves a
coordinate outside ``R ∪ {k}``, and otherwise that of the same stack on the
coordinates ``R ∪ {k}`` (each head restricted to its block's part there).

The checker trusts that lemma and nothing the prover says. It gives every weight
entry of one layer an *owner* (a set of two to three coordinates, by its own rule
below), verifies that the owners partition the entries outside the group fields'
minor, and, for a representative owner of every role pattern, that each entry
involving only the owner's coordinates is a field entry, owned by an earlier
type, or its own (so the minor is block lower triangular), and that its entries
are, coordinate by coordinate, those of one tiny stack per type. Each type's
block, the tiny stack's Jacobian on the certificate's inputs, is recomputed by
the checker's own forward mode (mod p, or dual numbers in balls) and must have
full column rank. The rank is then ``l`` times the entries of one layer outside
the fields: ``P - l h (2 a² + 1)`` (lightning) or ``P - l h 2 a²`` (softmax).

Owners (``q0``, ``q1``: the first two coordinates of a block): an entry within its
head's block involving ``{q0}`` belongs to ``{q0}`` ("first"); one involving ``{x}``
or ``{q0, x}`` to ``{q0, x}`` ("first pair"); ``{x, y}`` without ``q0`` to itself
("pair"). An entry of head ``j`` that reaches outside ``B_j``, with inner coordinate
``x`` (the one in the block whose rows it moves: ``j a + s`` for ``Q, K, U``, the row
``k`` for ``O``) and outer ``y``, belongs to ``{q0, q1, y}`` when ``x`` is ``q0`` or ``q1`` of
its block ("first cross") and to ``{x, q0, y}`` otherwise ("cross").
"""

from __future__ import annotations

import numpy as np
from flint import arb, arb_mat, ctx, fmpq

from ...exceptions import CertificateFormatError
from ..arch import Arch
from ..linalg import block_det, nmod
from ..limits import (MAX_BALL_WORK, MAX_PRECISION, MAX_STACK_ENTRIES, MAX_STACK_INPUTS, MAX_STACK_LAYER_ENTRIES,
                      MAX_STACK_WORK, MIN_PRECISION)
from ..values import field, int_array, integer, prime, rational, reject
from .ball import _BALL, _KNOWN
from . import groups

LOWER_KEYS = {"structured", "prime", "rank", "inputs"}
BALL_KEYS = {"structured", "normalization", "precision", "rank", "inputs", "rows", "determinants"}
UPPER_KEYS = {"structured", "prime", "families", "field_rank", "determinant"}

#: The owner types in the order of the minor.
TYPES = ("first", "first pair", "pair", "first cross", "cross")
_NAMES = "QKUO"

#: The softmax stack point's scale of Q and O (lightning: 1).
SOFTMAX_SCALE = fmpq(1, 4)


def _shape(arch) -> tuple[int, int, int, int]:
    """``(d, a, h, l)`` of a stack the witness can describe, or a refusal."""
    l = len(arch.ranks)
    if not arch.residual or arch.value_ranks is None or arch.tokens < 2 \
            or arch.normalization not in ("lightning", "softmax"):
        reject("a 'stack point' witness is for a residual stack with value ranks, t >= 2, lightning or softmax")
    d, a, h = arch.widths[0], arch.ranks[0], arch.head_count(1)
    if set(arch.widths) != {d} or set(arch.ranks) != {a} or {arch.head_count(i) for i in range(1, l + 1)} != {h} \
            or set(arch.value_ranks) != {a} or a < 2 or h * a != d:
        reject("a 'stack point' witness needs equal layers whose h heads of rank a = value rank b >= 2 tile the "
               "width: h a = d")
    # one layer's listed entries (3 a d of head 0, h a^2 of the O rows in block 0) cost about 1 us each in owner
    # arrays; the field minor's l h (4a^2 + 2a) are cheap (4e7 in 0.7 s)
    if 4 * a * d > MAX_STACK_LAYER_ENTRIES or l * h * (4 * a * a + 2 * a) > MAX_STACK_ENTRIES:
        raise CertificateFormatError(f"a 'stack point' witness of width {d}, rank {a} and {l} layers of {h} heads is "
                                     f"above the checker's limits of {MAX_STACK_LAYER_ENTRIES} entries of one layer "
                                     f"(4 a d) and {MAX_STACK_ENTRIES} of the field minor (docs/trust.md)")
    return d, a, h, l


class _Layer:
    """The weight entries of one layer that move rows of block 0: head 0's ``Q, K, U`` and every head's ``O`` rows
    in ``B_0``; for each its head, name, internal index, the two coordinates involved, and field or owner.

    The cyclic shift of the blocks (coordinates ``z -> z + a mod d``, heads ``j -> j + 1``) fixes the stack point
    and maps the owner rule to itself, so every block's entries are block 0's, shifted.
    """

    def __init__(self, d: int, a: int, h: int, lightning: bool):
        self.d, self.a, self.h = d, a, h
        r, c = np.divmod(np.arange(a * d, dtype=np.int64), d)  # Q_0, K_0, U_0: a x d
        j, k, s = (x.ravel() for x in np.meshgrid(np.arange(h), np.arange(a), np.arange(a), indexing="ij"))
        self.head = np.r_[np.zeros(3 * a * d, dtype=np.int64), j]  # O_j[k, s], k in B_0
        self.name = np.repeat(np.arange(4, dtype=np.int64), [a * d, a * d, a * d, h * a * a])
        self.s, self.other = np.r_[r, r, r, s], np.r_[c, c, c, k]
        self.x = self.head * a + self.s  # the coordinate of the internal index
        self.inner = np.where(self.name == 3, self.other, self.x)  # the coordinate whose row the entry moves
        same = self.other // a == self.head
        self.field = same & ((self.name == 1) | (self.name == 2))  # K_j, U_j on B_j: GL_a and GL_b
        if lightning:  # the scaling on O_j[c_j(0), 0]
            self.field |= (self.name == 3) & (self.s == 0) & (self.other == self.head * a)
        self.type, self.key = self._owners(same)

    def _owners(self, same: np.ndarray):
        a, D = self.a, self.d + 1
        lo, hi = np.minimum(self.x, self.other), np.maximum(self.x, self.other)
        q0 = self.head * a
        kind = np.full(len(self.x), -1, dtype=np.int64)
        k1, k2, k3 = (np.full(len(self.x), self.d, dtype=np.int64) for _ in range(3))
        first = same & (lo == q0) & (hi == q0)
        pair_q0 = same & ~first & ((lo == q0) | (lo == hi))  # {q0, x} or {x}: owner {q0, x}
        kind[first], k1[first] = 0, q0[first]
        kind[pair_q0], k1[pair_q0], k2[pair_q0] = 1, q0[pair_q0], hi[pair_q0]
        pair = same & ~first & ~pair_q0
        kind[pair], k1[pair], k2[pair] = 2, lo[pair], hi[pair]
        inner = self.inner
        outer = np.where(self.name == 3, self.x, self.other)
        base = (inner // a) * a
        cross = ~same
        lead = cross & (inner - base < 2)
        kind[lead], k1[lead], k2[lead], k3[lead] = 3, base[lead], base[lead] + 1, outer[lead]
        rest = cross & ~lead
        kind[rest], k1[rest], k2[rest], k3[rest] = 4, inner[rest], base[rest], outer[rest]
        kind[self.field] = -1
        return kind, ((kind * D + k1) * D + k2) * D + k3

    def reaching(self, coords, block: int) -> np.ndarray:
        """Entries that Lemma S lets reach the rows of ``block`` on inputs supported on ``coords``: involving only
        these coordinates, and moving a row of that block (every entry of its head, other heads' ``O`` rows in it)."""
        inside = np.zeros(self.d, dtype=bool)
        inside[list(coords)] = True
        return inside[self.x] & inside[self.other] & (self.inner // self.a == block)

    def owner(self, kind: int, k1: int, k2: int = None, k3: int = None) -> int:
        D = self.d + 1
        return ((kind * D + k1) * D + (self.d if k2 is None else k2)) * D + (self.d if k3 is None else k3)


def _representatives(a: int, h: int) -> dict:
    """Per type, owners ``(k1, k2, k3)`` with inner block 0 covering every pattern of roles (``q0``, ``q1`` or
    another coordinate of its block; the outer block after or before block 0): the rule is symmetric under
    shifting the blocks and permuting a block's coordinates other than ``q0``, ``q1``, so these stand for every
    owner."""
    q = [[j * a + r for r in range(min(a, 4))] for j in sorted({0, 1 % h, h - 1})]
    first, other = q[0][0], q[0][2:]
    out = {"first": [(first,)], "first pair": [(first, q[0][1])] + [(first, z) for z in other[:1]],
           "pair": [(q[0][1], z) for z in other[:1]] + ([tuple(other[:2])] if len(other) > 1 else [])}
    outer = [y for block in q[1:] for y in block[:3]]
    out["first cross"] = [(q[0][0], q[0][1], y) for y in outer]
    out["cross"] = [(x, q[0][0], y) for x in other[:1] for y in outer]
    return {k: v for k, v in out.items() if v}


def _tiny_coordinates(kind: str, owner: tuple, a: int) -> list[int]:
    """The big stack's coordinates of the tiny stack, in order: the owner's (inner ones sorted), then the device."""
    if kind in ("first cross", "cross"):
        inner, y = sorted(owner[:2]), owner[2]
        base = (y // a) * a
        return inner + [y, base + (1 if y == base else 0)]
    return sorted(owner)


class _Tiny:
    """The tiny stack of a type: its architecture, the map from the big layer's entries, and its owned columns."""

    def __init__(self, arch, kind: str, layer: _Layer, owner: tuple):
        a = layer.a
        self.coords = _tiny_coordinates(kind, owner, a)
        self.kind = kind
        blocks = sorted({c // a for c in self.coords}, key=[c // a for c in self.coords].index)
        self.heads, self.rank = len(blocks), len(self.coords) // len(blocks)
        self.width = len(self.coords)
        self.arch = Arch((self.width,) * (len(arch.ranks) + 1), (self.rank,) * len(arch.ranks), arch.tokens,
                         arch.normalization, (self.heads,) * len(arch.ranks), (self.rank,) * len(arch.ranks),
                         True, arch.causal)
        self.blocks = blocks
        self.support = [e for e, c in enumerate(self.coords) if c in owner]
        inner = self.coords[: self.rank] if kind in ("first cross", "cross") else self.coords
        self.rows = [e for e, c in enumerate(self.coords) if c in inner]

    def column(self, layer: _Layer, entries: np.ndarray) -> list[int]:
        """Tiny column (within one layer) of each big entry; a refusal if one involves a coordinate outside."""
        where = {c: e for e, c in enumerate(self.coords)}
        size = 4 * self.rank * self.width  # Q, K, U (rank x width) and O (width x rank) per head
        out = []
        for e in entries.tolist():
            j, code, x, y = int(layer.head[e]), int(layer.name[e]), int(layer.x[e]), int(layer.other[e])
            if j not in self.blocks or x not in where or y not in where:
                reject(f"a '{self.kind}' block owns an entry outside its coordinates")
            head = self.blocks.index(j)
            s = where[x] - head * self.rank
            if not 0 <= s < self.rank:
                reject(f"a '{self.kind}' block owns an entry whose head is not its coordinates' own")
            base = head * size + code * self.rank * self.width
            out.append(base + (s * self.width + where[y] if code < 3 else where[y] * self.rank + s))
        return out


def _partition(arch, layer: _Layer, lightning: bool) -> tuple[dict, int]:
    """Per type, the tiny stack and its owned columns (one layer), verified on every representative; and the
    number of entries of one layer outside the field minor."""
    a, h = layer.a, layer.h
    fields = int(layer.field.sum())
    if fields != 2 * a * a + lightning:
        reject("the field columns of the stack point are not K_j, U_j on their block and the scaling's O_j entry")
    owned = layer.type >= 0
    keys, counts = np.unique(layer.key[owned], return_counts=True)
    key_type = keys // (layer.d + 1) ** 3
    tiny = {}
    for t, kind in enumerate(TYPES):
        reps = _representatives(a, h).get(kind, [])
        for rep in reps:
            key = layer.owner(t, *rep)
            mine = np.flatnonzero(layer.key == key)
            if len(mine) == 0:
                reject(f"the '{kind}' owner {rep} owns no entry")
            stack = _Tiny(arch, kind, layer, rep)
            cols = sorted(stack.column(layer, mine))
            if kind not in tiny:
                tiny[kind] = (stack, cols)
            elif cols != tiny[kind][1]:
                reject(f"the '{kind}' owners do not own the same entries of their tiny stacks")
            touched = layer.reaching(rep, 0)  # Lemma S: what the block's rows (in block 0) see
            bad = touched & ~layer.field & ~((layer.type < t) & (layer.type >= 0)) & (layer.key != key)
            if bad.any():
                reject(f"a row of a '{kind}' block reaches an entry owned by a later block: not triangular")
        if kind in tiny:
            wanted = len(tiny[kind][1])
            if np.any(counts[key_type == t] != wanted):
                reject(f"'{kind}' owners own different numbers of entries")
    if set(layer.type[owned].tolist()) - {TYPES.index(k) for k in tiny}:  # pragma: no cover - own rule
        reject("an owner type has no representative")
    return tiny, h * (len(layer.key) - fields)  # every block's entries are block 0's, shifted


def _inputs(lw: dict, kind: str, stack: _Tiny, lightning: bool) -> list:
    values = field(field(lw, "inputs", "lower_witness."), kind, "lower_witness.inputs.")
    n = len(values) if isinstance(values, list) else 0
    if not 1 <= n <= MAX_STACK_INPUTS:
        reject(f"lower_witness.inputs.{kind} must list 1 to {MAX_STACK_INPUTS} inputs")
    t = stack.arch.tokens
    if lightning:
        return int_array(values, (n, len(stack.support), t), f"lower_witness.inputs.{kind}").tolist()
    if any(not isinstance(x, list) or len(x) != len(stack.support) or any(not isinstance(r, list) or len(r) != t
                                                                             for r in x) for x in values):
        reject(f"lower_witness.inputs.{kind} must be {len(stack.support)} x {t} matrices")
    return [[[rational(v, f"lower_witness.inputs.{kind}") for v in r] for r in x] for x in values]


def _point(stack: _Tiny, one, scale):
    """The tiny stack point: per layer, per head ``{name: rows}`` (selectors, ``Q`` and ``O`` scaled)."""
    r, w = stack.rank, stack.width
    heads = []
    for e in range(stack.heads):
        sel = [[one * 0] * w for _ in range(r)]
        for s in range(r):
            sel[s][e * r + s] = one
        heads.append({"Q": [[x * scale for x in row] for row in sel], "K": sel, "U": sel,
                      "O": [[sel[s][c] * scale for s in range(r)] for c in range(w)]})
    return heads


def _mod_p_work(stack: _Tiny, columns: int, inputs: int, t: int) -> int:
    """Multiply-adds of :func:`_rank_mod_p`: every layer carries ``columns`` tangents of every input through every
    head (``t w (w + t)`` each), then ranks a ``(inputs x rows x t) x columns`` matrix."""
    l, w = len(stack.arch.ranks), stack.width
    rows = inputs * len(stack.rows) * t
    return l * columns * inputs * stack.heads * t * w * (w + t) + rows * columns * min(rows, columns)


def _rank_mod_p(stack: _Tiny, cols: list, values: list, p: int, forward) -> int:
    """Rank mod p of the tiny stack's Jacobian block: forward mode, every column's tangent carried at once.

    ``forward`` is the dense checker's ``(layer, layer_tangent)``: one layer and its derivative mod p.
    """
    _layer, _layer_tangent = forward
    arch, l, t = stack.arch, len(stack.arch.ranks), stack.arch.tokens
    heads = [{name: np.array(m, dtype=np.int64) for name, m in hd.items()} for hd in _point(stack, 1, 1)]
    n = len(values)
    X = np.zeros((n, stack.width, t), dtype=np.int64)
    X[:, stack.support] = np.mod(np.array(values, dtype=np.int64), p)
    per_head = 4 * stack.rank * stack.width
    C = l * len(cols)
    Y, dY = X, None
    for i in range(l):
        tangents = [{} for _ in heads]
        for k, col in enumerate(cols):
            hd, rest = divmod(col, per_head)
            code, e = divmod(rest, stack.rank * stack.width)
            name = _NAMES[code]
            shape = heads[hd][name].shape
            if name not in tangents[hd]:
                tangents[hd][name] = np.zeros((C, 1) + shape, dtype=np.int64)
            tangents[hd][name][i * len(cols) + k, 0, e // shape[1], e % shape[1]] = 1
        dY = _layer_tangent(arch, heads, Y, dY, tangents, p)
        Y = _layer(arch, heads, Y, p)
    J = np.moveaxis(dY[:, :, stack.rows, :], 0, -1).reshape(-1, C)  # rows (input, row, token), columns
    return nmod(J, p).rank()


def _ball_layer(heads: list, Y: arb_mat, dY, moved: list, f, fp, causal: bool):
    """One residual layer on a value and its tangent (``None``: zero) in balls; ``moved[e]`` maps head ``e``'s moved
    names to their tangents. The product rule, and for each column ``j`` of a head's weights
    ``S = F / σ``, ``dS = (F' dG - S dσ) / σ`` with ``F = f(G)`` on the kept scores.
    """
    t = Y.ncols()
    out, dout = Y, dY
    Yt = Y.transpose()
    for w, mv in zip(heads, moved):
        A, V = w["K"].transpose() * w["Q"], w["O"] * w["U"]
        dA = None
        if "Q" in mv or "K" in mv:
            dA = mv["K"].transpose() * w["Q"] if "K" in mv else w["K"].transpose() * mv["Q"]
        dV = None
        if "O" in mv or "U" in mv:
            dV = mv["O"] * w["U"] if "O" in mv else w["O"] * mv["U"]
        G = Yt * A * Y
        dG = None
        if dY is not None:
            dG = dY.transpose() * A * Y + Yt * A * dY
        if dA is not None:
            dG = Yt * dA * Y if dG is None else dG + Yt * dA * Y
        kept = [[not causal or i <= j for j in range(t)] for i in range(t)]
        F = [[f(G[i, j]) if kept[i][j] else arb(0) for j in range(t)] for i in range(t)]
        sigma = [sum((F[i][j] for i in range(t)), arb(0)) for j in range(t)]
        S = arb_mat([[F[i][j] / sigma[j] for j in range(t)] for i in range(t)])
        VY = V * Y
        out = out + VY * S
        dterm = None
        if dG is not None:
            dF = [[fp(G[i, j]) * dG[i, j] if kept[i][j] else arb(0) for j in range(t)] for i in range(t)]
            dsig = [sum((dF[i][j] for i in range(t)), arb(0)) for j in range(t)]
            dS = arb_mat([[(dF[i][j] - S[i, j] * dsig[j]) / sigma[j] for j in range(t)] for i in range(t)])
            dterm = VY * dS
        if dV is not None or dY is not None:
            dVY = (dV * Y if dV is not None else None)
            if dY is not None:
                dVY = V * dY if dVY is None else dVY + V * dY
            dterm = dVY * S if dterm is None else dterm + dVY * S
        if dterm is not None:
            dout = dterm if dout is None else dout + dterm
    return out, dout


def _ball_minor(stack: _Tiny, cols: list, values: list, rows: list, prec: int, f, fp) -> arb:
    """Determinant ball of the tiny Jacobian's minor on ``rows`` (``(input, row, token)`` in order) and the columns.

    A column of layer ``i`` moves nothing before layer ``i``: its tangent starts from the layer's input.
    """
    arch, l, t = stack.arch, len(stack.arch.ranks), stack.arch.tokens
    R = len(stack.rows) * t
    needed = sorted({k // R for k in rows})
    heads = [{name: arb_mat(m) for name, m in hd.items()} for hd in _point(stack, fmpq(1), SOFTMAX_SCALE)]
    none = [{} for _ in heads]
    states = {}  # input -> the layer inputs Y_0 .. Y_(l-1)
    for n in needed:
        X = [[fmpq(0)] * t for _ in range(stack.width)]
        for e, row in enumerate(stack.support):
            X[row] = values[n][e]
        Y = arb_mat([[arb(x) for x in r] for r in X])
        states[n] = [Y]
        for _ in range(l - 1):
            Y, _ = _ball_layer(heads, Y, None, none, f, fp, arch.causal)
            states[n].append(Y)
    columns = []
    for i in range(l):
        for c in cols:
            hd, rest = divmod(c, 4 * stack.rank * stack.width)
            code, e = divmod(rest, stack.rank * stack.width)
            M = heads[hd][_NAMES[code]]
            E = arb_mat(M.nrows(), M.ncols())
            E[e // M.ncols(), e % M.ncols()] = 1
            moved = [{_NAMES[code]: E} if k == hd else {} for k in range(len(heads))]
            tangents = {}
            for n in needed:
                Y, dY = _ball_layer(heads, states[n][i], None, moved, f, fp, arch.causal)
                for m in range(i + 1, l):
                    Y, dY = _ball_layer(heads, Y, dY, none, f, fp, arch.causal)
                tangents[n] = dY
            columns.append(tangents)
    entries = []
    for k in rows:
        n, rest = divmod(k, R)
        row, j = divmod(rest, t)
        entries.append([column[n][stack.rows[row], j] for column in columns])
    return arb_mat(entries).det()


def check_lower(cert: dict, lw: dict, arch, forward) -> int:
    """The rank the stack point's block triangular minor proves (module docstring).

    ``forward`` is the dense checker's ``(layer, layer_tangent)`` (its forward mode mod p; passed in, as the
    dense checker imports this module).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.dense import _layer, _layer_tangent
    >>> from attngeo.geometry.dimension.stackpoint import certify_stack
    >>> cert = certify_stack(Architecture((4, 4, 4), (2, 2), heads=2, value_ranks=2, residual=True), seed=0).to_json()
    >>> arch = Arch((4, 4, 4), (2, 2), 2, heads=(2, 2), value_ranks=(2, 2), residual=True)
    >>> check_lower(cert, cert["lower_witness"], arch, (_layer, _layer_tangent))
    92
    """
    d, a, h, l = _shape(arch)
    lightning = arch.normalization == "lightning"
    keys = LOWER_KEYS if lightning else BALL_KEYS
    if set(lw) != keys or lw["structured"] != "stack point":
        reject(f"a 'stack point' lower witness of a {arch.normalization} stack holds exactly {', '.join(sorted(keys))}")
    layer = _Layer(d, a, h, lightning)
    tiny, outside = _partition(arch, layer, lightning)
    inputs = field(lw, "inputs", "lower_witness.")
    if not isinstance(inputs, dict) or set(inputs) != set(tiny):
        reject(f"lower_witness.inputs must hold exactly the types {', '.join(k for k in TYPES if k in tiny)}")
    rank = l * outside
    if integer(lw["rank"], "lower_witness.rank", 0) != rank or integer(field(cert, "lower"), "lower") != rank:
        reject(f"the stack point's minor has {rank} columns; lower and the witness must say so")
    if lightning:
        p = prime(lw["prime"], "lower_witness.prime")
        values = {kind: _inputs(lw, kind, stack, True) for kind, (stack, _) in tiny.items()}
        # priced for every type before any is replayed: a small file must not buy minutes of forward mode
        work = sum(_mod_p_work(stack, l * len(cols), len(values[kind]), arch.tokens)
                   for kind, (stack, cols) in tiny.items())
        if work > MAX_STACK_WORK:
            raise CertificateFormatError(f"replaying the stack point's tiny blocks would take about {work:.1e} units "
                                         f"of work, above the checker's limit of {MAX_STACK_WORK:.0e} (docs/trust.md)")
        for kind, (stack, cols) in tiny.items():
            if _rank_mod_p(stack, cols, values[kind], p, forward) != l * len(cols):
                reject(f"the '{kind}' block ({l * len(cols)} columns) does not have full column rank mod {p}")
        return rank
    if lw["normalization"] != arch.normalization:
        reject("lower_witness.normalization is not the architecture's")
    f, fp = _KNOWN[arch.normalization]
    prec = integer(lw["precision"], "lower_witness.precision", MIN_PRECISION, MAX_PRECISION)
    for name in ("rows", "determinants"):
        if not isinstance(lw[name], dict) or set(lw[name]) != set(tiny):
            reject(f"lower_witness.{name} must hold exactly the types of lower_witness.inputs")
    values = {kind: _inputs(lw, kind, stack, False) for kind, (stack, _) in tiny.items()}
    t = arch.tokens
    # the blocks' work summed before any is replayed (a per-block limit let five blocks each take the whole budget)
    work = sum(l * len(cols) * len(values[kind]) * l * stack.heads
               * (t * t * stack.width ** 2 * max(1, prec // 64) ** 2 + 300) for kind, (stack, cols) in tiny.items())
    if work > MAX_BALL_WORK:
        raise CertificateFormatError(f"replaying the stack point's tiny blocks would take about {work:.1e} units of "
                                     f"work, above the checker's limit of {MAX_BALL_WORK:.0e}")
    old = ctx.prec
    ctx.prec = prec
    try:
        for kind, (stack, cols) in tiny.items():
            size = l * len(cols)
            bound = len(values[kind]) * len(stack.rows) * t
            rows = lw["rows"][kind]
            if not isinstance(rows, list) or len(rows) != size or len(set(map(repr, rows))) != size:
                reject(f"lower_witness.rows.{kind} must list {size} distinct rows")
            rows = [integer(k, f"lower_witness.rows.{kind}", 0, bound - 1) for k in rows]
            recorded = lw["determinants"][kind]
            if not isinstance(recorded, str) or not _BALL.fullmatch(recorded):
                reject(f"lower_witness.determinants.{kind} must be a ball written as \"[mid +/- rad]\"")
            det = _ball_minor(stack, cols, values[kind], rows, prec, f, fp)
            if det.contains(0):
                reject(f"the '{kind}' block's determinant ball {det.str(radius=True)} contains 0 at {prec} bits")
            if not det.overlaps(arb(recorded)):
                reject(f"the recorded determinant ball of the '{kind}' block does not meet the checker's")
    finally:
        ctx.prec = old
    return rank


def field_entries(d: int, a: int, h: int, lightning: bool):
    """``(row, column, value)`` of one layer's group fields at the integer stack point, rows per head in the
    families' order (intra ``E_uv``, the scaling for lightning, value ``E_uv``), columns of that layer.

    Intra: ``δQ[u, :] = Q[v, :]``, ``δK[v, :] = -K[u, :]``; scaling: ``δQ = Q``, ``δO = -O``; value:
    ``δU[u, :] = U[v, :]``, ``δO[:, v] = -O[:, u]`` (every matrix a selector of the block). A layer's fields
    move that layer's weights only, and every layer sits at the same point: the other layers' are these, shifted.

    >>> r, c, v = field_entries(4, 2, 2, True)
    >>> int(r.max()) + 1, len(r)        # 2 heads of 4 + 1 + 4 fields with 2 entries each, the scaling 2 a
    (18, 40)
    """
    per_head = 2 * a * a + lightning
    size = 4 * a * d  # Q, K, U (a x d) and O (d x a)
    R, C, V = [], [], []
    u, v = np.divmod(np.arange(a * a), a)
    s = np.arange(a)
    for j in range(h):
        row, base, c = j * per_head, j * size, j * a
        R += [row + u * a + v] * 2
        C += [base + u * d + c + v, base + a * d + v * d + c + u]
        V += [np.ones(a * a, dtype=np.int64), -np.ones(a * a, dtype=np.int64)]
        row += a * a
        if lightning:
            R += [np.full(2 * a, row)]
            C += [base + s * d + c + s, base + 3 * a * d + (c + s) * a + s]
            V += [np.r_[np.ones(a, dtype=np.int64), -np.ones(a, dtype=np.int64)]]
            row += 1
        R += [row + u * a + v] * 2
        C += [base + 2 * a * d + u * d + c + v, base + 3 * a * d + (c + u) * a + v]
        V += [np.ones(a * a, dtype=np.int64), -np.ones(a * a, dtype=np.int64)]
    return np.concatenate(R), np.concatenate(C), np.concatenate(V)


def field_columns(d: int, a: int, h: int, lightning: bool) -> np.ndarray:
    """One layer's minor columns in row order: ``K_j[v, c_j(u)]`` (intra ``E_uv``), ``O_j[c_j(0), 0]`` (scaling),
    ``U_j[u, c_j(v)]`` (value ``E_uv``).

    >>> field_columns(4, 2, 1, True).tolist()[:5]      # K[0, 0], K[1, 0], K[0, 1], K[1, 1], O[0, 0]
    [8, 12, 9, 13, 24]
    """
    size = 4 * a * d
    u, v = np.divmod(np.arange(a * a), a)
    out = []
    for j in range(h):
        base, c = j * size, j * a
        out.append(base + a * d + v * d + c + u)
        if lightning:
            out.append([base + 3 * a * d + c * a])
        out.append(base + 2 * a * d + u * d + c + v)
    return np.concatenate(out)


def check_upper(cert: dict, uw: dict, arch, expected: list) -> int:
    """The upper bound ``P - s``: the ``s`` group fields' minor at the stack point, lower triangular.

    The minor is block diagonal by layer (a layer's fields move its own weights), every layer's block the same:
    its determinant is one layer's to the power ``l``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.dense import _expected_families
    >>> from attngeo.geometry.dimension.stackpoint import certify_stack
    >>> cert = certify_stack(Architecture((4, 4, 4), (2, 2), heads=2, value_ranks=2, residual=True), seed=0).to_json()
    >>> arch = Arch((4, 4, 4), (2, 2), 2, heads=(2, 2), value_ranks=(2, 2), residual=True)
    >>> check_upper(cert, cert["upper_witness"], arch, _expected_families(arch))
    92
    """
    d, a, h, l = _shape(arch)
    lightning = arch.normalization == "lightning"
    n = h * (2 * a * a + lightning)
    s = l * n
    p = groups.witness(uw, "stack point", UPPER_KEYS, expected, s)
    r, c, v = field_entries(d, a, h, lightning)
    at = np.full(4 * a * d * h, -1, dtype=np.int64)
    at[field_columns(d, a, h, lightning)] = np.arange(n)
    keep = at[c] >= 0
    det = block_det(r[keep], at[c[keep]], v[keep], n, p)
    if det is None:  # pragma: no cover - the checker's own formulas
        reject("the field minor at the stack point is not lower triangular in the families' order")
    return groups.bound(cert, uw, arch.parameters, s, pow(det, l, p), p, "stack point")
