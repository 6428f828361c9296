"""The symmetries of [HMK] as Lie-algebra vector fields, and proofs of invariance.

Three families act on the weights (docs/math.md §3.2):

``intra`` (layer ``i``, ``GL_{a_i}``)
    ``(Q_i, K_i) -> (C Q_i, C^{-T} K_i)``; tangent ``dQ = E Q``, ``dK = -E^T K``.
``scaling`` (layer ``i``)
    ``(A_i, V_i) -> (lambda A_i, V_i / lambda)``, realised on ``Q_i``;
    tangent ``dQ = Q``, ``dV = -V``.
``inter`` (hidden width ``d_i``, ``GL_{d_i}``, ``1 <= i < l``)
    ``V_i -> G V_i`` and ``(Q, K, V)_{i+1} -> (.) G^{-1}``; tangent ``dV_i = E V_i``
    and ``d(Q, K, V)_{i+1} = -(Q, K, V)_{i+1} E``.

Each tangent formula is written once (:data:`FAMILIES`) and used twice: on
numpy matrices to build the vector fields at a point, and on free-algebra
symbols (:mod:`attngeo.exact.freealgebra`) to prove, for all sizes at once, that the
layer formula is annihilated by it. docs/invariance.md explains why these
layer-level identities make every field tangent to the fibers of a network of
any depth.
"""

from __future__ import annotations

import math

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from flint import fmpq, fmpq_mat

from ..exact import modular
from ..model.architecture import Architecture
from ..exact.freealgebra import NCPoly, WordOps
from ..exceptions import InvalidInputError
from ..model.network import layer, read_point, split_heads, split_point, to_fmpq
from ..exact.rank import det_mod_p


@dataclass(frozen=True)
class FamilySpec:
    """How one kind of symmetry moves a layer (and, for ``inter``, the next one).

    Attributes
    ----------
    kind : str
        ``"intra"``, ``"scaling"`` or ``"inter"``.
    group : str
        The group's name for tables (no LaTeX).
    tangent : callable
        ``(E, Q, K, V) -> {name: tangent}`` on the layer that owns the family,
        ``E`` a Lie-algebra element. Written with ``@``, ``.T`` and ``-`` only, so
        the same formula runs on numpy matrices and on free-algebra symbols.
    incoming : callable or None
        For ``inter``: the tangent of the following layer's weights.
    survives_softmax : bool
        Whether the family fixes every score ``Y^T K^T Q Y``, hence every
        normalized layer.

    Examples
    --------
    On numbers, the intra tangent ``dQ = E Q``, ``dK = -E^T K`` leaves
    ``A = K^T Q`` fixed to first order:

    >>> import numpy as np
    >>> from attngeo.geometry.symmetry import FAMILIES
    >>> rng = np.random.default_rng(0)
    >>> E, Q, K, V = (rng.integers(-5, 6, shape) for shape in ((2, 2), (2, 3), (2, 3), (3, 3)))
    >>> d = FAMILIES["intra"].tangent(E, Q, K, V)
    >>> sorted(d), np.array_equal(d["K"].T @ Q + K.T @ d["Q"], np.zeros((3, 3)))
    (['K', 'Q'], True)

    On free-algebra symbols, the scaling tangent moves the score by the score
    itself, so no normalizer keeps it:

    >>> from attngeo.exact.freealgebra import NCPoly
    >>> E, Q, K, V, Y = (NCPoly.symbol(s) for s in "EQKVY")
    >>> str((Y.T @ K.T @ Q @ Y).derivative(FAMILIES["scaling"].tangent(E, Q, K, V)))
    "Y' K' Q Y"
    >>> [kind for kind, spec in FAMILIES.items() if spec.survives_softmax]
    ['intra', 'inter']
    """

    kind: str
    group: str  # LaTeX-free name of the group, for tables
    # tangent on the layer that owns the family: (E, Q, K, V) -> {symbol: tangent}
    tangent: Callable
    # for inter only: tangent of the following layer's weights, (E, Q, K, V) -> {...};
    # that layer's input moves by E Y, as the outgoing identity proves.
    incoming: Callable | None = None
    survives_softmax: bool = True


# Heads with a factored value map V = O U: the same families written on (Q, K, U, O),
# plus GL(b_i) on the bottleneck. A tangent that multiplies V on the left moves O, one
# on the right moves U (docs/multihead.md §2).
FACTORED_FAMILIES: dict[str, FamilySpec] = {
    "intra": FamilySpec("intra", "GL(a_i)", lambda E, Q, K, U, O: {"Q": E @ Q, "K": -(E.T @ K)}),
    "scaling": FamilySpec("scaling", "scaling", lambda E, Q, K, U, O: {"Q": Q, "O": -O}, survives_softmax=False),
    "value": FamilySpec("value", "GL(b_i)", lambda E, Q, K, U, O: {"U": E @ U, "O": -(O @ E)}),
    "inter": FamilySpec(
        "inter",
        "GL(d_i)",
        lambda E, Q, K, U, O: {"O": E @ O},
        incoming=lambda E, Q, K, U, O: {"Q": -(Q @ E), "K": -(K @ E), "U": -(U @ E)},
    ),
}

FAMILIES: dict[str, FamilySpec] = {
    "intra": FamilySpec("intra", "GL(a_i)", lambda E, Q, K, V: {"Q": E @ Q, "K": -(E.T @ K)}),
    "scaling": FamilySpec("scaling", "scaling", lambda E, Q, K, V: {"Q": Q, "V": -V}, survives_softmax=False),
    "inter": FamilySpec(
        "inter",
        "GL(d_i)",
        lambda E, Q, K, V: {"V": E @ V},
        incoming=lambda E, Q, K, V: {"Q": -(Q @ E), "K": -(K @ E), "V": -(V @ E)},
    ),
}


@dataclass(frozen=True)
class Family:
    """One family of vector fields on one architecture: ``kind`` at ``layer``.

    For ``inter``, ``layer = i`` names the hidden width ``d_i`` between layers
    ``i`` and ``i + 1``. ``size`` is the dimension of the Lie algebra.

    Examples
    --------
    One layer ``3 -> 3`` of rank 2 carries ``GL_2`` (dimension ``a^2 = 4``) and
    the scaling ``C^*``:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.symmetry import families
    >>> families(Architecture((3, 3), (2,)))
    [Family(kind='intra', layer=1, size=4, head=None), Family(kind='scaling', layer=1, size=1, head=None)]
    """

    kind: str
    layer: int
    size: int
    head: int | None = None  # the head of a per-head family in a layer with several heads

    def to_dict(self) -> dict:
        """The record an upper-bound witness lists (``kind``, ``layer``, ``size``).

        Examples
        --------
        The hidden width ``d_1 = 3`` of ``2 -> 3 -> 2`` carries ``GL_3``, of dimension 9:

        >>> from attngeo import Architecture
        >>> from attngeo.geometry.symmetry import families
        >>> [f.to_dict() for f in families(Architecture((2, 3, 2), (1, 1))) if f.kind == "inter"]
        [{'kind': 'inter', 'layer': 1, 'size': 9}]
        """
        out = {"kind": self.kind, "layer": self.layer, "size": self.size}
        if self.head is not None:
            out["head"] = self.head
        return out


def families(arch: Architecture) -> list[Family]:
    """The families acting on ``arch`` in canonical order: per layer intra, scaling, inter.

    This order makes the gauge minor of :func:`gauge_minor` block upper triangular.

    Parameters
    ----------
    arch : Architecture
        Lightning or normalized; a normalizer drops the families that do not
        survive it (the scalings).

    Returns
    -------
    list of Family

    Examples
    --------
    Two layers ``3 -> 3 -> 3`` of rank 2: ``GL_2 x C^* x GL_3 x GL_2 x C^*``,
    of dimension ``4 + 1 + 9 + 4 + 1 = 19``; softmax keeps all but the two scalings:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.symmetry import families
    >>> fams = families(Architecture((3, 3, 3), (2, 2)))
    >>> [(f.kind, f.layer) for f in fams], sum(f.size for f in fams)
    ([('intra', 1), ('scaling', 1), ('inter', 1), ('intra', 2), ('scaling', 2)], 19)
    >>> sum(f.size for f in families(Architecture((3, 3, 3), (2, 2), normalization="softmax")))
    17

    Per head: ``GL_{a_i}``, the scaling and, with a value rank, ``GL_{b_i}``;
    residual connections drop the inter-layer ``GL_{d_i}`` (docs/multihead.md):

    >>> mh = Architecture((3, 3, 3), (2, 2), heads=2, value_ranks=1, residual=True)
    >>> [(f.kind, f.layer, f.head) for f in families(mh)][:3], sum(f.size for f in families(mh))
    ([('intra', 1, 1), ('scaling', 1, 1), ('value', 1, 1)], 24)
    """
    out = []
    for i, a in enumerate(arch.ranks, start=1):
        h = arch.heads[i - 1]
        for j in range(1, h + 1):
            head = j if h > 1 else None
            out.append(Family("intra", i, a * a, head))
            out.append(Family("scaling", i, 1, head))
            if arch.value_ranks is not None:
                out.append(Family("value", i, arch.value_ranks[i - 1] ** 2, head))
        if i < arch.depth and not arch.residual:  # the identity path X + Y fixes the hidden basis
            out.append(Family("inter", i, arch.widths[i] ** 2))
    table = FAMILIES if arch.value_ranks is None else FACTORED_FAMILIES
    return [f for f in out if arch.normalization == "lightning" or table[f.kind].survives_softmax]


# -- proofs of invariance (size-free) ------------------------------------------


@dataclass(frozen=True)
class Identity:
    """A free-algebra identity ``lhs = 0`` and whether it was verified.

    ``residual`` is the left-hand side computed in the free algebra with
    transpose (:mod:`attngeo.exact.freealgebra`), printed; ``"0"`` proves the
    identity for all sizes at once.

    Examples
    --------
    The three families give four identities for the lightning layer (``inter``
    has an outgoing and an incoming side), all proved:

    >>> from attngeo.geometry.symmetry import invariance_identities
    >>> [(i.family, i.residual) for i in invariance_identities()]
    [('intra', '0'), ('scaling', '0'), ('inter', '0'), ('inter', '0')]
    """

    family: str
    statement: str
    residual: str  # "0" when proved

    @property
    def holds(self) -> bool:
        """Whether the residual is the zero polynomial.

        Examples
        --------
        The scaling tangent does not fix the score ``Y^T K^T Q Y``: that
        identity fails, with the score itself as residual:

        >>> from attngeo.exact.freealgebra import NCPoly
        >>> from attngeo.geometry.symmetry import FAMILIES, Identity
        >>> E, Q, K, V, Y = (NCPoly.symbol(s) for s in "EQKVY")
        >>> residual = (Y.T @ K.T @ Q @ Y).derivative(FAMILIES["scaling"].tangent(E, Q, K, V))
        >>> identity = Identity("scaling", "D(score)[scaling] = 0", str(residual))
        >>> identity.holds, identity.residual
        (False, "Y' K' Q Y")
        """
        return self.residual == "0"


def _symbols(*names: str) -> list[NCPoly]:
    return [NCPoly.symbol(n) for n in names]


@lru_cache(maxsize=None)
def invariance_identities() -> tuple[Identity, ...]:
    """Prove, in the free algebra with transpose, that every family fixes the layer formula.

    Returns
    -------
    tuple of Identity
        One per family, two for ``inter`` (its outgoing and incoming sides).

    Examples
    --------
    >>> from attngeo.geometry.symmetry import invariance_identities
    >>> all(identity.holds for identity in invariance_identities())
    True
    """
    E, Q, K, V, Y = _symbols("E", "Q", "K", "V", "Y")
    phi = layer(WordOps, Q, K, V, Y)
    out = []
    for spec in FAMILIES.values():
        d = phi.derivative(spec.tangent(E, Q, K, V))
        if spec.incoming is None:
            out.append(Identity(spec.kind, f"D(phi)[{spec.kind}] = 0 for phi = {phi}", str(d)))
        else:
            # Outgoing side: the layer's output moves by E phi, which is exactly
            # the input tangent the incoming side expects.
            out.append(Identity(spec.kind, f"D(phi)[{spec.kind}, out] = E phi", str(d - E @ phi)))
            d_in = phi.derivative({**spec.incoming(E, Q, K, V), "Y": E @ Y})
            out.append(Identity(spec.kind, f"D(phi)[{spec.kind}, in] = 0", str(d_in)))
    return tuple(out)


def normalized_invariance_identities() -> tuple[Identity, ...]:
    """Invariance for normalized layers ``V Y S(Y^T K^T Q Y)``, any entrywise normalizer ``S``.

    The layer depends on the weights only through the score ``Y^T K^T Q Y`` and
    the value ``V Y``; a family that fixes the score and fixes (intra) or moves
    the value by ``E`` (inter, outgoing) — and on the incoming side fixes both
    when ``Y`` moves by ``E Y`` — fixes the layer, whatever ``S`` is. The scaling
    family moves the score (``Q -> λQ``), so it is not among them.

    Returns
    -------
    tuple of Identity

    Examples
    --------
    Score and value identities for ``intra`` (2) and for both sides of
    ``inter`` (4), all proved; none for the scaling:

    >>> from attngeo.geometry.symmetry import normalized_invariance_identities
    >>> identities = normalized_invariance_identities()
    >>> all(identity.holds for identity in identities), [i.family for i in identities].count("inter")
    (True, 4)
    >>> sorted({i.family for i in identities})
    ['inter', 'intra']
    """
    E, Q, K, V, Y = _symbols("E", "Q", "K", "V", "Y")
    score, value = Y.T @ K.T @ Q @ Y, V @ Y
    out = []
    for spec in FAMILIES.values():
        if not spec.survives_softmax:
            continue
        tangent = spec.tangent(E, Q, K, V)
        if spec.incoming is None:
            out.append(Identity(spec.kind, f"D(score)[{spec.kind}] = 0 for score = {score}",
                                str(score.derivative(tangent))))
            out.append(Identity(spec.kind, f"D(value)[{spec.kind}] = 0 for value = {value}",
                                str(value.derivative(tangent))))
        else:
            out.append(Identity(spec.kind, f"D(score)[{spec.kind}, out] = 0", str(score.derivative(tangent))))
            out.append(Identity(spec.kind, f"D(value)[{spec.kind}, out] = E value",
                                str(value.derivative(tangent) - E @ value)))
            incoming = {**spec.incoming(E, Q, K, V), "Y": E @ Y}
            out.append(Identity(spec.kind, f"D(score)[{spec.kind}, in] = 0", str(score.derivative(incoming))))
            out.append(Identity(spec.kind, f"D(value)[{spec.kind}, in] = 0", str(value.derivative(incoming))))
    return tuple(out)


@lru_cache(maxsize=None)
def head_invariance_identities(factored: bool, normalized: bool) -> tuple[Identity, ...]:
    """Invariance for one head of a multi-head, masked or residual layer, for all sizes.

    A head contributes ``value · M∘S(score)`` with ``value = V Y`` (``O U Y`` when
    factored), ``score = Y^T K^T Q Y``, ``M`` a constant 0/1 mask and ``S`` the
    identity (lightning) or a normalizer. The contribution is linear in the value
    and, for lightning, in the masked score, so it is fixed by a family that fixes
    the score and the value (intra, value), and, for lightning, by one that
    scales the score by +1 and the value by -1 (scaling). The inter family must
    fix every score and move every value by ``E``; then the sum of heads moves by
    ``E`` (outgoing) or stays (incoming). Residual layers drop it (docs/multihead.md).

    Parameters
    ----------
    factored : bool
        The value map is ``O U`` (the families of :data:`FACTORED_FAMILIES`).
    normalized : bool
        Omit the scaling (a normalizer is not homogeneous).

    Returns
    -------
    tuple of Identity

    Examples
    --------
    >>> from attngeo.geometry.symmetry import head_invariance_identities
    >>> ids = head_invariance_identities(True, False)
    >>> all(i.holds for i in ids), sorted({i.family for i in ids})
    (True, ['inter', 'intra', 'scaling', 'value'])
    >>> sorted({i.family for i in head_invariance_identities(False, True)})
    ['inter', 'intra']
    """
    E, Q, K, V, U, O, Y = _symbols("E", "Q", "K", "V", "U", "O", "Y")
    table, weights = (FACTORED_FAMILIES, (Q, K, U, O)) if factored else (FAMILIES, (Q, K, V))
    score, value = Y.T @ K.T @ Q @ Y, (O @ U @ Y if factored else V @ Y)
    expect = {"scaling": (score, -value), "inter": (None, E @ value)}
    zero = score - score
    out = []
    for spec in table.values():
        if normalized and not spec.survives_softmax:
            continue
        d_score, d_value = expect.get(spec.kind, (None, None))
        tangent = spec.tangent(E, *weights)
        out.append(Identity(spec.kind, f"D(score)[{spec.kind}] = {d_score or 0}",
                            str(score.derivative(tangent) - (d_score or zero))))
        out.append(Identity(spec.kind, f"D(value)[{spec.kind}] = {d_value or 0}",
                            str(value.derivative(tangent) - (d_value if d_value is not None else zero))))
        if spec.incoming is not None:
            incoming = {**spec.incoming(E, *weights), "Y": E @ Y}
            out.append(Identity(spec.kind, f"D(score)[{spec.kind}, in] = 0", str(score.derivative(incoming))))
            out.append(Identity(spec.kind, f"D(value)[{spec.kind}, in] = 0", str(value.derivative(incoming))))
    return tuple(out)


def identities_for(arch: Architecture) -> tuple[Identity, ...]:
    """The identities that prove the families of ``arch`` fix its network (upper-bound witnesses list them).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.symmetry import identities_for
    >>> all(i.holds for i in identities_for(Architecture((3, 3), (2,), heads=2, causal=True)))
    True
    """
    if not arch.is_plain:
        return head_invariance_identities(arch.value_ranks is not None, arch.normalization != "lightning")
    return invariance_identities() if arch.normalization == "lightning" else normalized_invariance_identities()


# -- vector fields at a point -------------------------------------------------


def _basis(n: int):
    # Elementary E_uv: each entry of E Q, E^T K, E V, Q E, K E, V E is a sum with one
    # nonzero term, a single weight, so on residues mod p the int64 tangents stay
    # below p in absolute value whatever the widths; no product sum can overflow.
    for u in range(n):
        for v in range(n):
            E = np.zeros((n, n), dtype=np.int64)
            E[u, v] = 1
            yield E


def _field_vectors(arch: Architecture, layers: list, reduce, zero) -> list:
    """The vector fields of :func:`families` at ``layers`` (from ``split_heads``), one flat vector each."""
    blocks = {(b.layer, b.head, b.name): b for b in arch.blocks()}
    table = FAMILIES if arch.value_ranks is None else FACTORED_FAMILIES

    def place(vec, layer_index: int, head: int, tangent: dict) -> None:
        for name, mat in tangent.items():
            b = blocks[(layer_index, head, name)]
            vec[b.offset : b.offset + b.size] = reduce(mat).ravel()

    rows = []
    for fam in families(arch):  # every architecture has an intra family, so rows is never empty
        spec = table[fam.kind]
        # the Lie algebra is gl_n with n^2 = size (scaling: the 1 x 1 identity)
        bases = [np.ones((1, 1), dtype=np.int64)] if fam.kind == "scaling" else _basis(math.isqrt(fam.size))
        # a per-head family moves its head; inter moves every head of both layers
        own = [fam.head or 1] if fam.kind != "inter" else range(1, arch.heads[fam.layer - 1] + 1)
        for E in bases:
            vec = zero()
            for j in own:
                place(vec, fam.layer, j, spec.tangent(E, *layers[fam.layer - 1][j - 1]))
            if spec.incoming is not None:
                for j, weights in enumerate(layers[fam.layer], start=1):
                    place(vec, fam.layer + 1, j, spec.incoming(E, *weights))
            rows.append(vec)
    return rows


def field_matrix(arch: Architecture, point: np.ndarray, p: int) -> np.ndarray:
    """The vector fields of :func:`families` at an integer point, one row each, in ``F_p``.

    Rows follow :func:`families`; within a family the Lie-algebra basis ``E_uv``
    runs row-major. Columns follow the flattening order of the parameters.

    Parameters
    ----------
    arch : Architecture
    point : integer array
        ``arch.parameter_count`` integers (reduced mod ``p`` here).
    p : int
        A prime below ``2^31``.

    Returns
    -------
    numpy.ndarray
        ``int64`` of shape ``(sum of family sizes, parameter_count)``, entries in ``[0, p)``.

    Examples
    --------
    For ``3 -> 3 -> 3`` of rank 2 the 19 fields are independent at a random
    point and every one lies in the kernel of the Jacobian (``J F^T = 0``);
    the Jacobian's rank ``23 = 42 - 19`` meets the bound, so ``dim M = 23``:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.exact.modular import matmul
    >>> from attngeo.exact.rank import rank_mod_p
    >>> from attngeo.geometry.symmetry import field_matrix
    >>> from attngeo.model.jacobian import jacobian_mod_p
    >>> arch, p = Architecture((3, 3, 3), (2, 2)), 1000003
    >>> rng = np.random.default_rng(0)
    >>> point = rng.integers(-9, 10, arch.parameter_count)
    >>> F = field_matrix(arch, point, p)
    >>> F.shape, rank_mod_p(F, p)
    ((19, 42), 19)
    >>> J = jacobian_mod_p(arch, point, rng.integers(-9, 10, (6, 3, 2)), p)
    >>> bool(np.any(matmul(J, F.T, p))), rank_mod_p(J, p)
    (False, 23)
    """
    layers = split_heads(arch, modular.reduce(point, p))
    rows = _field_vectors(arch, layers, lambda m: np.mod(m, p), lambda: np.zeros(arch.parameter_count, dtype=np.int64))
    return np.array(rows)


def orbit_dimension(arch: Architecture, weights) -> int:
    """The dimension of the symmetry orbit through a rational point, exactly.

    It is the rank over Q of the Lie-algebra vector fields there (the orbit map
    of a connected algebraic group has constant rank along the orbit).

    Parameters
    ----------
    arch : Architecture
    weights : list
        Rational weights, as :func:`attngeo.model.network.read_point` reads them.

    Returns
    -------
    int

    Examples
    --------
    For one layer ``3 -> 3`` of rank 2 the group ``GL_2 x C^*`` has dimension 5;
    at a generic point the orbit has that dimension, at special points less:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.symmetry import orbit_dimension
    >>> arch = Architecture((3, 3), (2,))
    >>> orbit_dimension(arch, list(range(1, 22)))
    5
    >>> orbit_dimension(arch, [1] * 21)   # all ones: GL_2 moves only row/column sums
    4
    >>> orbit_dimension(arch, [0] * 21)   # the origin is fixed
    0
    """
    return vector_fields(arch, weights).rank()


def vector_fields(arch: Architecture, weights) -> fmpq_mat:
    """The Lie-algebra vector fields at a rational point, exactly: one row per basis element
    (rows in :func:`families` order, columns in the flattening order).

    Parameters
    ----------
    arch : Architecture
    weights : list
        Rational weights, as :func:`attngeo.model.network.read_point` reads them.

    Returns
    -------
    flint.fmpq_mat
        ``(sum of family sizes) x parameter_count``.

    Examples
    --------
    Every field is tangent to the fiber: the exact Jacobian over Q kills it.
    Here ``2 -> 2 -> 2`` of ranks 1, 1 (group ``GL_1 x C^* x GL_2 x GL_1 x C^*``,
    dimension 8):

    >>> import numpy as np
    >>> from flint import fmpq_mat
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.symmetry import vector_fields
    >>> from attngeo.model.jacobian import jacobian_over_q
    >>> from attngeo.model.network import read_point
    >>> arch = Architecture((2, 2, 2), (1, 1))
    >>> W = read_point(arch, ["1/2", -1, 2, 1, 0, 1, -2, 1, 1, 2, -1, 1, 0, 1, 3, -1])
    >>> F = vector_fields(arch, W)
    >>> F.nrows(), F.ncols(), F.rank()
    (8, 16, 8)
    >>> J = fmpq_mat(jacobian_over_q(arch, W, np.array([[[1, -2], [3, 1]], [[0, 1], [2, -1]]])).tolist())
    >>> J * F.transpose() == fmpq_mat(J.nrows(), F.nrows())
    True
    """
    layers = split_heads(arch, read_point(arch, weights))
    rows = _field_vectors(arch, layers, lambda m: m, lambda: np.array([fmpq(0)] * arch.parameter_count, dtype=object))
    return fmpq_mat([list(r) for r in rows])


# -- the groups themselves, acting exactly ------------------------------------


def act(arch: Architecture, weights, kind: str, layer: int, g) -> list[fmpq]:
    """Apply one group element exactly over Q; returns the new flat weights.

    ``kind = "intra"``: ``g = C in GL_{a_i}`` acts ``(Q_i, K_i) -> (C Q_i, C^{-T} K_i)``;
    ``"scaling"``: ``g = lambda != 0`` acts ``(Q_i, V_i) -> (lambda Q_i, V_i / lambda)``;
    ``"inter"``: ``g = G in GL_{d_i}`` acts ``V_i -> G V_i``, ``(Q, K, V)_{i+1} -> (.) G^{-1}``.

    Parameters
    ----------
    arch : Architecture
    weights : list
        Rational weights, as :func:`attngeo.model.network.read_point` reads them.
    kind : str
        ``"intra"``, ``"scaling"`` or ``"inter"``.
    layer : int
        The layer (``intra``, ``scaling``) or hidden width ``d_i`` (``inter``), 1-based.
    g : matrix or rational
        An invertible ``n x n`` matrix of rationals, or a nonzero rational for ``scaling``.

    Returns
    -------
    list of fmpq
        The moved weights in flattening order.

    Raises
    ------
    InvalidInputError
        An unknown kind, a family the architecture does not have (a scaling of
        a normalized network, an ``inter`` at the last layer), a singular or
        misshapen ``g``, or ``lambda = 0``.

    Examples
    --------
    Each family moves the weights but not the function (``2 -> 2 -> 2``, ranks 1, 1):

    >>> from attngeo import Architecture, evaluate
    >>> from attngeo.geometry.symmetry import act
    >>> arch = Architecture((2, 2, 2), (1, 1))
    >>> W, X = [1, -1, 2, 1, 0, 1, -2, 1, 1, 2, -1, 1, 0, 1, 3, -1], [[1, -2], [3, 1]]
    >>> for kind, layer, g in [("intra", 1, [[3]]), ("scaling", 2, "2/3"), ("inter", 1, [[1, 2], [0, 1]])]:
    ...     moved = act(arch, W, kind, layer, g)
    ...     print(kind, moved != W, evaluate(arch, moved, X) == evaluate(arch, W, X))
    intra True True
    scaling True True
    inter True True
    >>> act(arch, W, "inter", 1, [[1, 2], [2, 4]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the inter element at layer 1 must be an invertible 2x2 matrix
    >>> act(Architecture((2, 2, 2), (1, 1), normalization="softmax"), W, "scaling", 1, 2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: widths 2,2,2, ranks 1,1, t=2, softmax has no scaling symmetry at layer 1 (for softmax networks)
    """
    arch.require_plain("exact group actions")
    if kind not in FAMILIES:
        raise InvalidInputError(f"unknown symmetry kind {kind!r}; choose one of {', '.join(FAMILIES)}")
    present = {(f.kind, f.layer) for f in families(arch)}
    if (kind, layer) not in present:
        raise InvalidInputError(f"{arch} has no {kind} symmetry at layer {layer} (for {arch.normalization} networks)")
    mats = [[fmpq_mat(M.tolist()) for M in triple] for triple in split_point(arch, read_point(arch, weights))]
    if kind == "scaling":
        lam = to_fmpq(g, "lambda")
        if lam == 0:
            raise InvalidInputError("the scaling lambda must be nonzero")
        Q, K, V = mats[layer - 1]
        mats[layer - 1] = [Q * lam, K, V * (1 / lam)]
    else:
        n = arch.ranks[layer - 1] if kind == "intra" else arch.widths[layer]
        G = g if isinstance(g, fmpq_mat) else fmpq_mat([[to_fmpq(v, "group element") for v in row] for row in g])
        if (G.nrows(), G.ncols()) != (n, n) or G.det() == 0:
            raise InvalidInputError(f"the {kind} element at layer {layer} must be an invertible {n}x{n} matrix")
        Gi = G.inv()
        if kind == "intra":
            Q, K, V = mats[layer - 1]
            mats[layer - 1] = [G * Q, Gi.transpose() * K, V]
        else:
            Q, K, V = mats[layer - 1]
            mats[layer - 1] = [Q, K, G * V]
            Q2, K2, V2 = mats[layer]
            mats[layer] = [Q2 * Gi, K2 * Gi, V2 * Gi]
    return [M[r, c] for triple in mats for M in triple for r in range(M.nrows()) for c in range(M.ncols())]


# -- a gauge: columns on which the fields are triangular ------------------------


def gauge_minor(arch: Architecture, point: np.ndarray, F: np.ndarray, p: int) -> tuple[list[int], int] | None:
    """``(cols, det)``: ``F[:, cols]`` is square with determinant ``det != 0`` mod ``p``; or None.

    Each family gets columns it moves in an invertible way: ``intra_i`` the
    entries of ``K_i[:, :a_i]`` (``E -> -E^T K_i`` restricted there is invertible
    when that block is), ``scaling_i`` one nonzero entry of ``Q_i``, ``inter_i``
    the entries of ``V_i[:, :d_i]``. A family only touches the columns of
    families *after* it in :func:`families` order, so ``F[:, cols]`` is block
    upper triangular; this is *checked* (zeros below the diagonal blocks) rather
    than assumed, and the determinant is the product of the diagonal blocks'. Needs
    ``a_i <= d_{i-1}`` and ``d_i <= d_{i-1}``; otherwise (or on bad luck) None,
    and the caller falls back to a general elimination.

    The complement of ``cols`` is a gauge: when the fields span the kernel of
    the Jacobian, the Jacobian restricted to it is injective.

    Parameters
    ----------
    arch : Architecture
    point : integer array
        The point ``F`` was computed at.
    F : numpy.ndarray
        :func:`field_matrix` at ``point`` mod ``p``.
    p : int
        The prime.

    Returns
    -------
    tuple of (list of int, int), or None
        The columns and the determinant mod ``p`` of ``F[:, cols]``.

    Examples
    --------
    For ``3 -> 3 -> 3`` of rank 2 the 19 fields have a nonsingular 19 x 19
    minor, and its determinant (a product of five small blocks) is the full
    determinant:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.exact.rank import det_mod_p
    >>> from attngeo.geometry.symmetry import field_matrix, gauge_minor
    >>> arch, p = Architecture((3, 3, 3), (2, 2)), 1000003
    >>> point = np.random.default_rng(0).integers(-9, 10, arch.parameter_count)
    >>> F = field_matrix(arch, point, p)
    >>> cols, det = gauge_minor(arch, point, F, p)
    >>> len(cols), det != 0, det == det_mod_p(F[:, cols], p)
    (19, True, True)

    A widening layer ``2 -> 3`` has ``d_1 > d_0``: no such minor.

    >>> arch = Architecture((2, 3, 2), (2, 2))
    >>> point = np.random.default_rng(0).integers(-9, 10, arch.parameter_count)
    >>> gauge_minor(arch, point, field_matrix(arch, point, p), p) is None
    True
    """
    if not arch.is_plain:
        return None  # heads and bottlenecks: the general elimination finds the minor
    layers = split_point(arch, modular.reduce(point, p))
    blocks = {(b.layer, b.name): b for b in arch.blocks()}
    cols: list[int] = []
    sizes: list[int] = []
    for fam in families(arch):
        i = fam.layer
        d_in = arch.widths[i - 1]
        if fam.kind == "intra":
            b, n = blocks[(i, "K")], arch.ranks[i - 1]
        elif fam.kind == "inter":
            b, n = blocks[(i, "V")], arch.widths[i]
        else:
            b, n = blocks[(i, "Q")], None
        if n is None:
            Q = layers[i - 1][0]
            nonzero = np.flatnonzero(Q.ravel())
            if nonzero.size == 0:
                return None
            chosen = [b.offset + int(nonzero[0])]
        else:
            if n > d_in:
                return None
            chosen = [b.offset + r * b.cols + c for r in range(b.rows) for c in range(n)]
        cols.extend(chosen)
        sizes.append(len(chosen))
    if len(cols) != F.shape[0] or len(set(cols)) != len(cols):
        return None
    M = F[:, cols]
    start, det = 0, 1
    for size in sizes:
        end = start + size
        if np.any(M[end:, start:end]):
            return None  # not triangular at this point: use the general method
        det = det * det_mod_p(M[start:end, start:end], p) % p
        if det == 0:
            return None
        start = end
    return cols, det


class SymmetryGroup:
    """The symmetry group of [HMK] acting on one architecture's weights.

    The product of the families of :func:`families` (those that survive the
    architecture's normalization): ``GL_{a_i}`` per layer, the scalings
    (lightning only) and ``GL_{d_i}`` per hidden width.

    Parameters
    ----------
    arch : Architecture

    Examples
    --------
    >>> from attngeo import Architecture, SymmetryGroup
    >>> G = SymmetryGroup(Architecture((3, 3, 3), (2, 2)))
    >>> G.dimension, G.latex()
    (19, 'GL_{2} \\\\times \\\\mathbb{C}^{*} \\\\times GL_{3} \\\\times GL_{2} \\\\times \\\\mathbb{C}^{*}')
    """

    def __init__(self, arch: Architecture):
        self.arch = arch
        self.families = families(arch)

    @property
    def dimension(self) -> int:
        """The dimension of the group: ``sum_i a_i^2 + l + sum_{i<l} d_i^2``, less the ``l`` scalings if normalized.

        Examples
        --------
        >>> from attngeo import Architecture, SymmetryGroup
        >>> SymmetryGroup(Architecture((2, 3, 2), (1, 2))).dimension   # 1 + 1 + 9 + 4 + 1
        16
        >>> SymmetryGroup(Architecture((2, 3, 2), (1, 2), normalization="softmax")).dimension
        14
        """
        return sum(f.size for f in self.families)

    def act(self, weights, kind: str, layer: int, g) -> list[fmpq]:
        """Apply one element exactly (see :func:`act`).

        Examples
        --------
        ``C = diag(2, 1/2)`` in ``GL_2`` fixes ``A = K^T Q``, so the function:

        >>> from attngeo import Architecture, SymmetryGroup, evaluate
        >>> arch = Architecture((2, 2), (2,))
        >>> W, X = [1, 2, -1, 1, 0, 1, 3, -2, 1, 1, 2, -1], [[1, 2], [0, -1]]
        >>> moved = SymmetryGroup(arch).act(W, "intra", 1, [[2, 0], [0, "1/2"]])
        >>> [str(x) for x in moved[:4]], evaluate(arch, moved, X) == evaluate(arch, W, X)
        (['2', '4', '-1/2', '1/2'], True)
        """
        return act(self.arch, weights, kind, layer, g)

    def vector_fields(self, weights) -> fmpq_mat:
        """The Lie-algebra vector fields at a rational point (see :func:`vector_fields`).

        Examples
        --------
        One row per basis element of the Lie algebra, one column per weight:

        >>> from attngeo import Architecture, SymmetryGroup
        >>> G = SymmetryGroup(Architecture((3, 3), (2,)))
        >>> F = G.vector_fields(list(range(1, 22)))
        >>> (F.nrows(), F.ncols()) == (G.dimension, G.arch.parameter_count), F.rank()
        (True, 5)
        """
        return vector_fields(self.arch, weights)

    def orbit_dimension(self, weights) -> int:
        """Exact dimension of the orbit through a rational point (see :func:`orbit_dimension`).

        Examples
        --------
        Softmax keeps ``GL_2`` but not the scaling: the generic orbit of
        ``3 -> 3``, rank 2 drops from 5 to 4. Where ``Q = K = 0`` only the
        scaling still moves the weights (``V -> V / lambda``):

        >>> from attngeo import Architecture, SymmetryGroup
        >>> W = list(range(1, 22))
        >>> SymmetryGroup(Architecture((3, 3), (2,))).orbit_dimension(W)
        5
        >>> SymmetryGroup(Architecture((3, 3), (2,), normalization="softmax")).orbit_dimension(W)
        4
        >>> SymmetryGroup(Architecture((3, 3), (2,))).orbit_dimension([0] * 12 + W[12:])
        1
        """
        return orbit_dimension(self.arch, weights)

    def dropped(self) -> list[str]:
        """Families of the lightning group that this normalization breaks.

        Examples
        --------
        A normalizer is not homogeneous, so the scalings go; nothing is dropped
        for lightning networks:

        >>> from attngeo import Architecture, SymmetryGroup
        >>> SymmetryGroup(Architecture((3, 3), (2,), normalization="softmax")).dropped()
        ['scaling']
        >>> SymmetryGroup(Architecture((3, 3), (2,))).dropped()
        []
        """
        return sorted({k for k, spec in FAMILIES.items() if self.arch.normalization != "lightning"
                       and not spec.survives_softmax})

    def latex(self) -> str:
        r"""The group as a LaTeX product, one factor per family in :func:`families` order.

        Examples
        --------
        >>> from attngeo import Architecture, SymmetryGroup
        >>> print(SymmetryGroup(Architecture((2, 3, 2), (1, 2), normalization="softmax")).latex())
        GL_{1} \times GL_{3} \times GL_{2}
        """
        parts = [r"\mathbb{C}^{*}" if f.kind == "scaling" else rf"GL_{{{math.isqrt(f.size)}}}" for f in self.families]
        return r" \times ".join(parts)

    def _repr_latex_(self) -> str:
        return f"$G = {self.latex()}$"

    def __repr__(self) -> str:
        return f"SymmetryGroup({self.arch}, dimension={self.dimension})"
