"""Local rank and regularity of one attention layer at a given point, certified (docs/math.md §7.5).

The *local rank* at ``W`` is the rank of the differential of ``W -> phi_W`` there;
``W`` is *regular* when it equals the generic rank, ``dim M``. For one lightning
layer with ``t >= 2`` the differential has the rank of ``W -> F``,
``F(y) = sum_j V_j y y^T A_j`` (docs/fibers.md Lemma 1 is linear in ``F``; a causal
mask or a residual connection changes nothing), and docs/math.md §7.5 proves:

* **Upper bound, every point.** ``dphi(T) = sum_j Psi_j(T_j)``, with ``T_j`` the image
  of the differential of ``(Q_j, K_j, U_j, O_j) -> (A_j, V_j)``, whose dimension the
  ranks of ``Q_j, K_j, U_j, O_j`` give, and ``Psi_j`` killing the scaling
  ``(A_j, -V_j)``. So ``local rank <= sum_j I_j`` (``I_j`` from exact ranks). The
  same count, without the scaling, bounds a softmax layer.
* **One head is exact.** ``dim Psi_j(T_j) = I_j`` unless ``rank A_j = rank V_j = 1``
  with ``row V_j = col A_j`` (unique factorization of ``F_j = l m^T``).
* **Separated heads are exact.** With value ranks ``b`` and ``h a <= d``,
  ``h b <= d'``: if ``[O_1 | ... | O_h]`` and ``[Q_1; ...; Q_h]`` have full rank,
  every ``U_j``, ``K_j`` full rank, and each pair of heads differs in its row
  space of ``K`` (``a >= 2``) or of ``U`` (``b >= 2``), then the local rank is
  ``P - h(a^2 + b^2 + 1)``: the point is regular. All of it is ranks of small
  matrices mod ``p`` — GPT-2 size in seconds.

Small layers (at most :data:`EXACT_PARAMETERS` weights) also get the rank of the
network's Jacobian at the point mod ``p`` (a minor the checker recomputes), so
their local rank is exact wherever that meets the upper bound.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import numpy as np
from flint import fmpq, fmpq_mat

from ... import latex, progress
from ...exact.modular import reduce_floats
from ...exact.rank import det_mod_p, independent_rows, kernel_over_q, maximal_minor_mod_p, random_prime, rank_mod_p
from ...exceptions import InvalidInputError
from ...model.architecture import Architecture
from ...model.jacobian import jacobian_mod_p
from ...model.network import read_point, to_fmpq
from ..certificate import Result, certificate_json
from ..dimension.bounds import functional_count, random_ints
from ..dimension.dense import certify_dimension, estimate
from ..fibers.layer import product_fiber_strata
from ..symmetry import vector_fields
from . import criterion
from ...model.scale import ONE, ScoreScale

#: Up to this many parameters the network Jacobian at the point is ranked mod p (the exact path).
EXACT_PARAMETERS = 4096
#: Up to this many parameters the flat directions are listed as exact vectors.
FLAT_PARAMETERS = 400
#: The generic dimension of a normalized layer is certified (ball arithmetic) up to this many parameters.
SOFTMAX_DIMENSION_PARAMETERS = 600
#: A normalized layer's local rank is bounded below by a ball minor at the point up to this many parameters.
SOFTMAX_LOCAL_PARAMETERS = 600


# -- the point ---------------------------------------------------------------------------------


class _Point:
    """The weights, exact: a float array (each entry the dyadic rational it holds) or rationals."""

    def __init__(self, arch: Architecture, weights):
        self.arch = arch
        if isinstance(weights, np.ndarray) and weights.dtype.kind == "f":
            if weights.shape != (arch.parameter_count,):
                raise InvalidInputError(f"the point has {weights.size} entries but {arch} has "
                                        f"{arch.parameter_count} parameters")
            bad = np.flatnonzero(~np.isfinite(weights))
            if len(bad):
                name = arch.variable_names()[int(bad[0])]
                raise InvalidInputError(f"{name} = {weights[bad[0]]!r} is not a finite number")
            self.floats, self._rationals = weights.astype(np.float64), None
        else:
            self.floats, self._rationals = None, read_point(arch, weights)
        self.where = {}
        n = arch.heads[0] // arch.kv_heads[0] if arch.depth == 1 else 1
        for b in arch.blocks():  # a group's shared block is every one of its heads' (grouped-query attention)
            for j in (range(b.head, b.head + n) if b.group else (b.head,)):
                self.where[(j, b.name)] = (b.offset, b.rows, b.cols)
        self._residues: dict[int, np.ndarray] = {}
        self._exact: dict = {}

    def residues(self, p: int) -> np.ndarray:
        if p not in self._residues:
            if self.floats is not None:
                self._residues[p] = reduce_floats(self.floats, p)
            else:
                self._residues[p] = np.array([int(x.p) % p * pow(int(x.q), -1, p) % p for x in self._rationals],
                                             dtype=np.int64)
        return self._residues[p]

    def block_mod_p(self, head: int, name: str, p: int) -> np.ndarray:
        off, r, c = self.where[(head, name)]
        return self.residues(p)[off: off + r * c].reshape(r, c)

    def exact(self, head: int, name: str) -> fmpq_mat:
        if (head, name) not in self._exact:
            off, r, c = self.where[(head, name)]
            vals = (self.rationals()[off: off + r * c] if self._rationals is not None else
                    [fmpq(*float(v).as_integer_ratio()) for v in self.floats[off: off + r * c]])
            self._exact[(head, name)] = fmpq_mat(r, c, vals)
        return self._exact[(head, name)]

    def rationals(self) -> list[fmpq]:
        if self._rationals is None:
            self._rationals = [to_fmpq(float(v), "w") for v in self.floats]
        return self._rationals

    def strings(self) -> list[str]:
        if self._rationals is not None:
            return [str(x) for x in self._rationals]
        # a trained layer repeats values (BF16 has 65,536): write each distinct one once
        unique, where = np.unique(self.floats, return_inverse=True)
        mantissa, exponent = np.frexp(unique)
        m = (mantissa * 2.0**53).astype(np.int64)
        e = exponent.astype(np.int64) - 53
        lowest = np.where(m == 0, 1, m & -m)  # the lowest set bit (1 for zero, which has no bits)
        low = np.log2(lowest.astype(np.float64)).astype(np.int64)  # trailing zero bits: exact for powers of two
        shift = np.where(e < 0, np.minimum(low, -e), 0)
        m, e = m >> shift, np.where(m == 0, 0, e + shift)
        text = [str(n << k) if k >= 0 else f"{n}/{1 << -k}" for n, k in zip(m.tolist(), e.tolist())]
        return [text[i] for i in where.ravel().tolist()]


# -- ranks of one head ------------------------------------------------------------------------


@dataclass(frozen=True)
class HeadRanks:
    """Exact ranks of one head's matrices: ``Q, K, A = K^T Q``, ``U, O`` (value ranks) and ``V``.

    ``parallel`` marks the rank-1 parallel case (``rank A = rank V = 1`` and ``row V = col A``), where
    one head's differential has a ``d``-dimensional kernel, not just the scaling.

    Examples
    --------
    >>> HeadRanks(1, 2, 2, 2, 3, None, None, False).to_dict()
    {'head': 1, 'rank_Q': 2, 'rank_K': 2, 'rank_A': 2, 'rank_V': 3}
    """

    head: int
    Q: int
    K: int
    A: int
    V: int
    U: int | None
    O: int | None
    parallel: bool

    def to_dict(self) -> dict:
        out = {"head": self.head, "rank_Q": self.Q, "rank_K": self.K, "rank_A": self.A}
        if self.U is not None:
            out.update(rank_U=self.U, rank_O=self.O)
        return {**out, "rank_V": self.V}



def _block_ranks(pt: _Point, names: tuple[str, ...], p: int) -> dict:
    """Exact ranks of every head's blocks: mod ``p`` where that is full (which proves it), over Q otherwise.

    One FLINT rank per stored block (a group's shared ``K`` and ``U`` once): at LLaMA-7B's size (80 blocks of
    128 x 4096) that is 11 s of CPU, where numpy's batched elimination took four minutes.
    """
    out, seen = {}, {}
    for name in names:
        for j in range(1, pt.arch.heads[0] + 1):
            where = pt.where[(j, name)]
            if where not in seen:
                M = pt.block_mod_p(j, name, p)
                r = rank_mod_p(M, p)
                seen[where] = r if r == min(M.shape) else pt.exact(j, name).rank()
            out[(j, name)] = seen[where]
    return out


def _product_rank(left, right, r_left: int, r_right: int, inner: int) -> int:
    """``rank(left() right())`` for factors with known ranks and inner size ``inner``: shortcuts, else exact."""
    if min(r_left, r_right) == 0:
        return 0
    if r_left == inner:  # left injective
        return r_right
    if r_right == inner:  # right surjective
        return r_left
    return (left() * right()).rank()


def _nonzero_row(M: fmpq_mat) -> list:
    for i in range(M.nrows()):
        row = [M[i, j] for j in range(M.ncols())]
        if any(row):
            return row
    return []


def head_ranks(arch: Architecture, weights, p: int | None = None) -> list[HeadRanks]:
    """The exact ranks of every head's matrices (ranks mod ``p`` where full, exact rational ranks otherwise).

    Parameters
    ----------
    arch : Architecture
        One layer.
    weights
        The point (anything :func:`attngeo.model.network.read_point` reads, or a float array).
    p : int, optional
        The prime for the fast path (default: a fixed 26-bit prime).

    Examples
    --------
    Two heads on ``4 -> 4``, value rank 1; head 2 has ``Q_2 = 0``, so ``A_2 = 0``:

    >>> from attngeo import Architecture
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=1)
    >>> w = list(range(1, 17)) + [1, 0, 0, 2, 1, 1, 1, 1] + [0] * 8 + list(range(8)) + [1, 2, 3, 4, 1, 0, 0, 1]
    >>> [r.to_dict() for r in head_ranks(arch, w)]   # doctest: +NORMALIZE_WHITESPACE
    [{'head': 1, 'rank_Q': 2, 'rank_K': 2, 'rank_A': 2, 'rank_U': 1, 'rank_O': 1, 'rank_V': 1},
     {'head': 2, 'rank_Q': 0, 'rank_K': 2, 'rank_A': 0, 'rank_U': 1, 'rank_O': 1, 'rank_V': 1}]
    """
    if arch.depth != 1:
        raise InvalidInputError(f"head ranks are for one layer; {arch} has {arch.depth}")
    pt = weights if isinstance(weights, _Point) else _Point(arch, weights)
    p = p or 67108859
    a, factored = arch.ranks[0], arch.value_ranks is not None
    rk = _block_ranks(pt, ("Q", "K", "U", "O") if factored else ("Q", "K", "V"), p)
    out = []
    for j in range(1, arch.heads[0] + 1):
        rq, rkk = rk[(j, "Q")], rk[(j, "K")]
        ra = _product_rank(lambda: pt.exact(j, "K").transpose(), lambda: pt.exact(j, "Q"), rkk, rq, a)
        if factored:
            ru, ro = rk[(j, "U")], rk[(j, "O")]
            rv = _product_rank(lambda: pt.exact(j, "O"), lambda: pt.exact(j, "U"), ro, ru, arch.value_ranks[0])
        else:
            ru = ro = None
            rv = rk[(j, "V")]
        parallel = False
        if ra == 1 and rv == 1:  # row V against col A: one row of V = O U, one column of A = K^T Q
            V = pt.exact(j, "V") if not factored else pt.exact(j, "O") * pt.exact(j, "U")
            A = pt.exact(j, "K").transpose() * pt.exact(j, "Q")
            parallel = fmpq_mat([_nonzero_row(V), _nonzero_row(A.transpose())]).rank() == 1
        out.append(HeadRanks(j, rq, rkk, ra, rv, ru, ro, parallel))
    return out


# -- the counts of docs/math.md §7.5 ------------------------------------------------------------


def tangent_dimensions(arch: Architecture, r: HeadRanks) -> tuple[int, int]:
    """``(dim T_A, dim T_V)``: the images of the differentials of ``(Q, K) -> K^T Q`` and ``(U, O) -> O U``.

    ``d (r_Q + r_K) - r_Q r_K`` (rows in ``row Q`` plus columns in ``row K``), and
    ``d' r_U + d r_O - r_O r_U`` (``d' d`` when ``V`` is unfactored).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> tangent_dimensions(Architecture((16, 16), (8,), heads=2, value_ranks=8), HeadRanks(1, 1, 8, 1, 8, 8, 8, False))
    (136, 192)
    """
    d, dd = arch.widths
    tq = d * (r.Q + r.K) - r.Q * r.K
    tv = dd * d if r.U is None else dd * r.U + d * r.O - r.O * r.U
    return tq, tv


def image_dimension(arch: Architecture, r: HeadRanks) -> int:
    """``I_j = dim Psi_j(T_j)``: the rank of ``d phi`` along one head's weights (docs/math.md §7.5, Lemma H).

    Lightning (exact, ``t >= 2``): ``T_A + T_V - 1`` (the scaling), ``T_A + T_V - d`` for a rank-1 parallel head,
    ``T_A`` when ``A = 0``, ``T_V`` when ``V = 0``, 0 when both are. Softmax (an upper bound): ``T_A + T_V``,
    ``T_V`` when ``V = 0``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((16, 16), (8,), heads=2, value_ranks=8)
    >>> image_dimension(arch, HeadRanks(1, 8, 8, 8, 8, 8, 8, False))   # 2ad - a^2 + 2bd - b^2 - 1
    383
    """
    tq, tv = tangent_dimensions(arch, r)
    if arch.normalization != "lightning":
        return tv if r.V == 0 else tq + tv
    if r.A == 0 and r.V == 0:
        return 0
    if r.A == 0:  # Psi(dA, dV) = V y y^T dA: injective in dA, blind to dV
        return tq
    if r.V == 0:
        return tv
    if r.parallel:  # ker Psi_j = {(-lambda q^T, r lambda^T)}: d dimensions, all inside T_j (docs/math.md §7.5)
        return tq + tv - arch.widths[0]
    return tq + tv - 1


def orbit_dimension(arch: Architecture, ranks: list[HeadRanks]) -> int:
    """The dimension of the symmetry group's orbit through the point, from the head ranks (docs/math.md §7.5).

    Per head ``a^2 + b^2 + 1`` (``GL_a``, ``GL_b``, the scaling; no scaling for softmax) less the stabilizer:
    ``(a - r_K)(a - r_Q) + (b - r_O)(b - r_U)``, and the scaling too when ``A = V = 0``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((16, 16), (8,), heads=2, value_ranks=8)
    >>> orbit_dimension(arch, [HeadRanks(1, 1, 8, 1, 8, 8, 8, False), HeadRanks(2, 8, 8, 8, 8, 8, 8, False)])
    258
    """
    a, b = arch.ranks[0], (arch.value_ranks[0] if arch.value_ranks is not None else None)
    scaling = arch.normalization == "lightning"
    total = 0
    for r in ranks:
        n = a * a - (a - r.K) * (a - r.Q)
        if b is not None:
            n += b * b - (b - r.O) * (b - r.U)
        if scaling and not (r.A == 0 and r.V == 0):
            n += 1
        total += n
    return total


def separated(arch: Architecture) -> bool:
    """Whether the separated-heads theorem can apply: one lightning layer, ``t >= 2``, value ranks, ``h a <= d``, ``h b <= d'``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> separated(Architecture((768, 768), (64,), heads=12, value_ranks=64, causal=True))
    True
    >>> separated(Architecture((4, 4), (4,), heads=2, value_ranks=2))   # h a = 8 > d
    False
    """
    if arch.depth != 1 or arch.normalization != "lightning" or arch.tokens < 2 or arch.value_ranks is None:
        return False
    (d, dd), a, h, b = arch.widths, arch.ranks[0], arch.heads[0], arch.value_ranks[0]
    return h * a <= d and h * b <= dd


def _stack_full(pt: _Point, heads: list[int], name: str, p: int, axis: int) -> bool:
    blocks = [pt.block_mod_p(j, name, p) for j in heads]
    M = np.concatenate(blocks, axis=axis)
    return rank_mod_p(M, p) == sum(b.shape[axis] for b in blocks)


def _pair_differs(pt: _Point, i: int, j: int, arch: Architecture, p: int) -> bool:
    """(S4) of docs/math.md §7.5 for heads ``i, j``: ``(row K_i, row U_i) != (row K_j, row U_j)`` (a stack of rank
    above one's), and with ``a = b = 1`` also ``!= (row U_j, row K_j)`` (swapped heads have ``u_i k_i = u_j k_j``)."""
    def differ(x: str, y: str) -> bool:
        stacked = np.concatenate([pt.block_mod_p(i, x, p), pt.block_mod_p(j, y, p)])
        return rank_mod_p(stacked, p) > pt.block_mod_p(i, x, p).shape[0]

    if max(arch.ranks[0], arch.value_ranks[0]) >= 2:
        return differ("K", "K") or differ("U", "U")
    return (differ("K", "K") or differ("U", "U")) and (differ("K", "U") or differ("U", "K"))


def separated_heads(arch: Architecture, pt: _Point, ranks: list[HeadRanks], p: int) -> list[int]:
    """The largest set of heads (greedy, in order) that satisfies the separated-heads conditions mod ``p``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    >>> w = [1, 0, 0, 0, 0, 1, 0, 0] * 2 + [1, 0, 0, 0, 0, 1, 0, 0] + [1, 0, 0, 1, 0, 0, 0, 0]
    >>> w += [0, 0, 1, 0, 0, 0, 0, 1] * 2 + [0, 0, 1, 0, 0, 0, 0, 1] + [0, 0, 0, 0, 1, 0, 0, 1]
    >>> pt = _Point(arch, w)
    >>> separated_heads(arch, pt, head_ranks(arch, pt), 101)
    [1, 2]
    """
    a, b = arch.ranks[0], arch.value_ranks[0]
    good = [r.head for r in ranks if r.Q == r.K == a and r.U == r.O == b and not r.parallel]
    if not good:
        return []

    def fits(S: list[int]) -> bool:
        return _stack_full(pt, S, "O", p, 1) and _stack_full(pt, S, "Q", p, 0)

    # full-rank stacked K separates every pair's row K, which is (S4) unless a = b = 1
    if fits(good) and (len(good) == 1 or max(a, b) >= 2 and _stack_full(pt, good, "K", p, 0)):
        return good
    chosen: list[int] = []
    for j in good:
        S = chosen + [j]
        if fits(S) and all(_pair_differs(pt, i, j, arch, p) for i in chosen):
            chosen = S
    return chosen


# -- the result --------------------------------------------------------------------------------


@dataclass(repr=False)
class LocalRank(Result):
    """The local rank of one attention layer at a point, bounded and certified, and what follows from it.

    ``lower <= local rank <= upper``; ``regular`` is True (local rank = ``dim M``), False (certified lower)
    or None (undecided). ``flat`` lists exact kernel directions beyond the symmetry group's orbit (small
    layers, when the local rank is exact).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.regularity import local_rank
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    >>> res = local_rank(arch, [(-1) ** k * (k % 7 + 1) for k in range(arch.parameter_count)], seed=0)
    >>> res.lower, res.upper, res.generic, res.regular
    (46, 46, (46, 46), True)
    """

    arch: Architecture
    point: _Point
    ranks: list[HeadRanks]
    lower: int
    upper: int
    lower_witness: dict
    prime: int
    dimension_certificate: dict | None
    generic: tuple[int, int]  # bounds on dim M: the point's own, met with the embedded certificate's
    orbit: int
    head: int
    fiber: dict
    seconds: float
    reasons: list[str] = field(default_factory=list)
    scale: ScoreScale = ONE
    binding: dict | None = None  # the checkpoint this point was read from (docs/certificates.md, local-rank)
    _flat: list | None = field(default=None, init=False)

    kind = "local-rank"

    @property
    def exact(self) -> bool:
        """The local rank is known: the bounds meet, or the lower one reaches ``dim M``'s upper bound.

        ``lower <= rho <= dim M <= generic[1]``, so ``lower >= generic[1]`` pins ``rho = lower`` however loose
        the head-count upper bound is.
        """
        return self.lower == self.upper or self.lower >= self.generic[1]

    @property
    def regular(self) -> bool | None:
        """True (local rank = ``dim M``), False (certified below it) or None (undecided).

        Examples
        --------
        >>> from attngeo import Architecture
        >>> local_rank(Architecture((2, 2), (1,)), [1, 2, 3, 5, 1, 0, 2, 1], dimension=False).regular
        True
        """
        lo, hi = self.generic
        if self.lower >= hi:
            return True
        if self.upper < lo:
            return False
        return None

    @property
    def flat(self) -> list | None:
        """Exact flat directions (a basis of the kernel modulo the orbit's tangent), computed on first use.

        Only for lightning layers of at most :data:`FLAT_PARAMETERS` weights whose local rank is exact and
        equal to the upper bound (then the structural vectors span the kernel); None otherwise.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> res = local_rank(Architecture((3, 3), (2,)), [1, 2, 0, 2, 4, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1])
        >>> len(res.flat) == res.flat_count == 1
        True
        """
        if self._flat is None and self.arch.normalization == "lightning" and self.exact \
                and self.arch.parameter_count <= FLAT_PARAMETERS \
                and self.upper == sum(image_dimension(self.arch, r) for r in self.ranks):
            self._flat = flat_directions(self.arch, self.point, self.ranks)
        return self._flat

    @property
    def flat_count(self) -> int | None:
        """Kernel directions beyond the group orbit: ``P - local rank - orbit dimension`` (when exact)."""
        return self.arch.parameter_count - self.lower - self.orbit if self.exact else None

    def summary(self) -> dict:
        """The record ``attngeo inspect --json`` prints (without the point).

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.loci.regularity import local_rank
        >>> s = local_rank(Architecture((2, 2), (1,)), [1, 2, 3, 5, 1, 0, 2, 1]).summary()
        >>> s["local_rank"], s["generic_dimension"], s["regular"], s["orbit_dimension"], s["flat_directions"]
        (6, 6, True, 2, 0)
        """
        gen = self.generic
        return {
            "architecture": self.arch.to_dict(full=True), "parameters": self.arch.parameter_count,
            "heads": [r.to_dict() for r in self.ranks],
            "generic_dimension": gen[0] if gen and gen[0] == gen[1] else None,
            "generic_dimension_bounds": list(gen) if gen else None,
            "local_rank": self.lower if self.exact else None, "local_rank_bounds": [self.lower, self.upper],
            "regular": self.regular, "orbit_dimension": self.orbit, "flat_directions": self.flat_count,
            "fiber": self.fiber, "reasons": self.reasons, "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        """The certificate (kind ``local-rank``): the point, the head ranks, the bounds and their witnesses.

        Examples
        --------
        >>> from attngeo import Architecture, check_certificate
        >>> from attngeo.geometry.loci.regularity import local_rank
        >>> cert = local_rank(Architecture((2, 2), (1,)), [1, 2, 3, 5, 1, 0, 2, 1]).to_json()
        >>> cert["kind"], cert["lower"], cert["upper"], cert["regular"]
        ('local-rank', 6, 6, True)
        >>> check_certificate(cert).claim
        'local rank 6 = dim M at this point of widths 2,2, ranks 1, t=2 (regular); orbit dimension 2'
        """
        body = {"architecture": self.arch.to_dict(), "prime": self.prime,
                "heads": [r.to_dict() for r in self.ranks], "parameters": self.arch.parameter_count,
                "lower": self.lower, "upper": self.upper, "lower_witness": self.lower_witness,
                "orbit_dimension": self.orbit, "generic": list(self.generic), "regular": self.regular,
                "fiber": {k: v for k, v in self.fiber.items() if k != "components"},
                "seconds": round(self.seconds, 3)}
        if self.dimension_certificate is not None:
            body["dimension_certificate"] = self.dimension_certificate
        if self.arch.normalization != "lightning" and not self.scale.is_one():
            body["scale"] = str(self.scale)
        out = certificate_json(self.kind, body)
        if self.binding is not None:  # the checker reads the point from the checkpoint itself (check --weights)
            out["checkpoint"] = self.binding
        if self.binding is None or "blocks" not in self.binding:  # a format the checker cannot read: embedded
            out["point"] = self.point.strings()  # millions of strings: no prose to strip from them, added last
        return out

    def __str__(self) -> str:
        lr = f"local rank {self.lower}" if self.exact else f"{self.lower} <= local rank <= {self.upper}"
        verdict = {True: "regular", False: "not regular", None: "regularity undecided"}[self.regular]
        gen = (f"dim M = {self.generic[0]}" if self.generic[0] == self.generic[1] else
               f"{self.generic[0]} <= dim M <= {self.generic[1]}")
        return f"{self.arch}: {lr}, {gen}: {verdict}"

    def latex(self) -> str:
        """The ranks, the bounds, the verdict and the fiber of one head, in LaTeX (an ``aligned`` block).

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.latex import balanced
        >>> from attngeo.geometry.loci.regularity import local_rank
        >>> tex = local_rank(Architecture((2, 2), (1,)), [1, 2, 3, 5, 1, 0, 2, 1]).latex()
        >>> r"\\operatorname{rank} d\\varphi_W = 6" in tex, balanced(tex)
        (True, True)
        """
        rows = []
        for r in self.ranks:
            extra = "" if r.U is None else rf",\ \operatorname{{rank}} U_{{{r.head}}} = {r.U},\ \operatorname{{rank}} O_{{{r.head}}} = {r.O}"
            rows.append(rf"&\text{{head }} {r.head}:\ \operatorname{{rank}} Q_{{{r.head}}} = {r.Q},\ "
                        rf"\operatorname{{rank}} K_{{{r.head}}} = {r.K},\ \operatorname{{rank}} A_{{{r.head}}} = {r.A}"
                        rf"{extra},\ \operatorname{{rank}} V_{{{r.head}}} = {r.V}")
        lr = (rf"\operatorname{{rank}} d\varphi_W = {self.lower}" if self.exact else
              rf"{self.lower} \le \operatorname{{rank}} d\varphi_W \le {self.upper}")
        gen = rf",\ {latex.dimension(*self.generic)}"
        verdict = {True: r"\text{regular}", False: r"\text{not regular}", None: r"\text{undecided}"}[self.regular]
        rows.append(rf"&{lr}{gen}:\ {verdict}")
        rows.append(rf"&\dim(\text{{orbit}}) = {self.orbit}" + (
            rf",\ \dim \ker d\varphi_W - \dim(\text{{orbit}}) = {self.flat_count}" if self.exact else ""))
        rows.append("&" + self.fiber["latex"])
        for k, direction in enumerate(self.flat or []):
            if self.arch.parameter_count > 100 or k >= 8:
                break
            parts = [rf"\delta {n}_{{{direction['head']}}} = {latex.matrix(M)}" for n, M in direction["blocks"]]
            rows.append(rf"&\text{{flat direction {k + 1}: }} " + r",\ ".join(parts))
        return r"\begin{aligned}" + r"\\ ".join(rows) + r"\end{aligned}"


# -- the fiber of one head -----------------------------------------------------------------------


def head_fiber(arch: Architecture, r: HeadRanks) -> dict:
    """The fiber of one head's map ``(Q, K, U, O) -> F_j`` through the point, from its ranks (docs/fibers.md).

    ``case``: ``generic`` (one line ``(lambda A, V / lambda)`` in ``(A, V)``), ``rank1-swap`` (two lines),
    ``rank1-parallel`` (one line), ``zero`` (``F_j = 0``: ``{A = 0} u {V = 0}``); ``undecided`` for a
    normalized layer (the theorem is about lightning heads) and for one token (the theorem needs ``t >= 2``:
    at ``t = 1`` a head is ``x -> V x (x^T A x)`` and sees only ``sym(A)``, so its fiber is larger). ``dimension`` is that of the
    fiber in the head's own parameters (Lemma 3 of docs/fibers.md for ``(Q, K)`` and, when ``d' = d``, for
    ``(U, O)``); None where Lemma 3 does not apply.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> f = head_fiber(Architecture((768, 768), (64,), heads=12, value_ranks=64), HeadRanks(1, 64, 64, 64, 64, 64, 64, False))
    >>> f["case"], f["lines"], f["dimension"]          # GL_64 x GL_64 x C^*: 64^2 + 64^2 + 1
    ('generic', 1, 8193)
    """
    (d, dd), a = arch.widths, arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None

    def qk(rank):
        return max(dim for _, _, dim in product_fiber_strata(a, d, rank))

    def uo(rank):
        if b is None:
            return 0  # V itself is a coordinate: fixed on the line, whose own dimension is counted once
        return max(dim for _, _, dim in product_fiber_strata(b, d, rank)) if dd == d else None

    j = r.head
    if arch.normalization != "lightning":  # docs/fibers.md is about F = l m^T: lightning heads
        return {"head": j, "case": "undecided", "lines": None, "dimension": None,
                "latex": rf"\text{{fiber of head {j}: not decided ({arch.normalization}: docs/fibers.md is for lightning)}}"}
    if arch.is_tied:  # docs/fibers.md is about heads with their own keys and values, without biases
        return {"head": j, "case": "undecided", "lines": None, "dimension": None,
                "latex": rf"\text{{fiber of head {j}: not decided (shared keys or biases: docs/fibers.md is for plain heads)}}"}
    if arch.tokens < 2:  # Theorem 1 of docs/fibers.md needs t >= 2: one token sees only sym(A_j), a larger fiber
        return {"head": j, "case": "undecided", "lines": None, "dimension": None,
                "latex": rf"\text{{fiber of head {j}: not decided (t = 1: docs/fibers.md Theorem 1 needs t \geq 2)}}"}
    if r.A == 0 or r.V == 0:
        parts = []
        if r.A == 0:
            v_dim = dd * d if b is None else b * (d + dd)
            parts.append(qk(0) + v_dim)
        if r.V == 0:
            w = uo(0) if b is not None else 0
            parts.append(None if w is None else 2 * a * d + w)
        dim = None if None in parts else max(parts)
        tex = rf"F_{{{j}}} = 0:\ \text{{fiber }} \{{A_{{{j}}} = 0\}} \cup \{{V_{{{j}}} = 0\}}"
        return {"head": j, "case": "zero", "lines": 0, "dimension": dim, "latex": tex}
    case, lines = ("rank1-parallel", 1) if r.parallel else (("rank1-swap", 2) if r.A == r.V == 1 else ("generic", 1))
    v = uo(r.V)
    dim = None if v is None else 1 + qk(r.A) + v
    orbit = (rf"GL_{{{a}}} \times GL_{{{b}}} \times \mathbb{{C}}^*" if b is not None else
             rf"GL_{{{a}}} \times \mathbb{{C}}^*")
    what = {"generic": rf"\text{{one line }} \{{(\lambda A_{{{j}}}, \lambda^{{-1}} V_{{{j}}})\}}",
            "rank1-swap": r"\text{two lines (the rank-1 swap)}",
            "rank1-parallel": r"\text{one line (rank-1 parallel)}"}[case]
    tex = rf"\text{{fiber of head {j} in }} (A, V):\ {what}"
    if dim is not None:
        tex += rf";\ \text{{in its weights: dimension }} {dim}"
        if case == "generic" and r.A == a and (b is None or r.V == b):
            tex += rf"\ (\text{{the orbit of }} {orbit})"
    return {"head": j, "case": case, "lines": lines, "dimension": dim, "latex": tex}


# -- flat directions (small layers) -----------------------------------------------------------


def _units(n: int) -> list[list[fmpq]]:
    return [[fmpq(int(i == k)) for i in range(n)] for k in range(n)]


def _differential(parts) -> fmpq_mat:
    """The matrix of a linear map given on unit matrices: ``parts`` lists ``(shape, image)`` per argument."""
    cols = []
    for (rows, width), image in parts:
        for s in range(rows):
            for c in range(width):
                E = fmpq_mat(rows, width)
                E[s, c] = 1
                M = image(E)
                cols.append([M[m, n] for m in range(M.nrows()) for n in range(M.ncols())])
    return fmpq_mat(cols).transpose()


def _structural_kernel(arch: Architecture, pt: _Point, ranks: list[HeadRanks]) -> list[list[fmpq]]:
    """Exact kernel vectors of ``d phi``: per head, the kernels of ``d(K^T Q)`` and ``d(O U)``, the scaling, and
    everything ``A_j = 0`` or ``V_j = 0`` makes invisible (docs/math.md §7.5)."""
    P = arch.parameter_count
    (d, dd), a = arch.widths, arch.ranks[0]
    out = []
    for r in ranks:
        j = r.head
        Q, K = pt.exact(j, "Q"), pt.exact(j, "K")
        oq, _, _ = pt.where[(j, "Q")]
        ok, _, _ = pt.where[(j, "K")]
        D = _differential([((a, d), lambda E: K.transpose() * E), ((a, d), lambda E: E.transpose() * Q)])
        for vec in kernel_over_q(D) if r.V != 0 else _units(2 * a * d):
            full = [fmpq(0)] * P
            full[oq: oq + a * d], full[ok: ok + a * d] = vec[: a * d], vec[a * d:]
            out.append(full)
        if r.U is not None:
            b = arch.value_ranks[0]
            U, O = pt.exact(j, "U"), pt.exact(j, "O")
            ou, _, _ = pt.where[(j, "U")]
            oo, _, _ = pt.where[(j, "O")]
            D = _differential([((b, d), lambda E: O * E), ((dd, b), lambda E: E * U)])
            for vec in kernel_over_q(D) if r.A != 0 else _units(b * (d + dd)):
                full = [fmpq(0)] * P
                full[ou: ou + b * d], full[oo: oo + dd * b] = vec[: b * d], vec[b * d:]
                out.append(full)
        elif r.A == 0:
            ov, _, _ = pt.where[(j, "V")]
            for k in range(dd * d):
                full = [fmpq(0)] * P
                full[ov + k] = fmpq(1)
                out.append(full)
        if arch.normalization == "lightning":  # the scaling: dQ = Q, dV = -V (or dO = -O)
            full = [fmpq(0)] * P
            full[oq: oq + a * d] = [Q[s, c] for s in range(a) for c in range(d)]
            name = "V" if r.U is None else "O"
            M = pt.exact(j, name)
            off, rows, cols_ = pt.where[(j, name)]
            full[off: off + rows * cols_] = [-M[s, c] for s in range(rows) for c in range(cols_)]
            out.append(full)
    return out


def flat_directions(arch: Architecture, pt: _Point, ranks: list[HeadRanks]) -> list[dict]:
    """Exact kernel directions of ``d phi`` beyond the tangent of the symmetry orbit (a basis of the quotient).

    Valid as the whole kernel modulo the orbit when the local rank equals the upper bound of docs/math.md §7.5
    (then the kernel is spanned by the structural vectors); each direction lists its nonzero blocks.

    Examples
    --------
    A rank-1 ``Q`` in a rank-2 head: ``(Q, K) -> K^T Q`` has a fiber larger than the ``GL_2`` orbit.

    >>> from attngeo import Architecture
    >>> arch = Architecture((3, 3), (2,))
    >>> pt = _Point(arch, [1, 2, 0, 2, 4, 0] + [1, 0, 0, 0, 1, 0] + [1, 0, 0, 0, 1, 0, 0, 0, 1])
    >>> flat = flat_directions(arch, pt, head_ranks(arch, pt))
    >>> len(flat), [name for name, _ in flat[0]["blocks"]]
    (1, ['K'])
    """
    fields = vector_fields(arch, pt.rationals())
    rows = [[fields[i, c] for c in range(fields.ncols())] for i in range(fields.nrows())]
    structural = _structural_kernel(arch, pt, ranks)
    # independent mod p implies independent over Q: the pivots of the stacked residues pick the directions
    p = 67108859
    residues = np.array([[int(x.p) % p * pow(int(x.q), -1, p) % p for x in v] for v in rows + structural],
                        dtype=np.int64).reshape(-1, arch.parameter_count)
    _, chosen = independent_rows(residues, p)
    out = []
    for k in chosen:
        if k < len(rows):
            continue
        vec = structural[k - len(rows)]
        blocks = [(b, fmpq_mat(b.rows, b.cols, vec[b.offset: b.offset + b.size])) for b in arch.blocks()
                  if any(vec[b.offset: b.offset + b.size])]
        out.append({"head": blocks[0][0].head, "blocks": [(b.name, M) for b, M in blocks]})
    return out


# -- the main entry ----------------------------------------------------------------------------


def _jacobian_lower(arch: Architecture, pt: _Point, p: int, target: int, rng: random.Random) -> tuple[int, dict]:
    """Rank mod ``p`` of the network Jacobian at the point (random integer inputs and functionals), with its minor."""
    point = pt.residues(p)
    c = functional_count(arch)
    n = max(1, -(-(target + 8) // c))
    best = (0, {})
    for _ in range(4):
        X = random_ints(rng, (n,) + arch.input_shape)
        w = random_ints(rng, (n, c) + arch.output_shape)
        progress.phase("Jacobian", f"{n} inputs x {c} functionals at the point, mod {p}")
        J = jacobian_mod_p(arch, point, X, p, w)
        rank, rows, cols = maximal_minor_mod_p(J, p)
        if rank > best[0]:
            best = (rank, {"prime": p, "inputs": X.tolist(), "functionals": w.tolist(), "rank": rank,
                           "rows": rows, "columns": cols, "determinant": det_mod_p(J[np.ix_(rows, cols)], p)})
        if rank >= target:
            break
        n *= 2
    return best


def _ball_local_lower(arch: Architecture, pt: _Point, target: int, rng: random.Random,
                      scale: ScoreScale) -> tuple[int, dict]:
    """A normalized layer: a Jacobian minor at the point (random rational inputs) whose ball excludes 0."""
    from ..dimension.ball import POINT_DENOMINATOR, _ball_lower

    c = functional_count(arch)
    n = max(1, -(-(target + 2) // c))
    q = POINT_DENOMINATOR
    best = (0, {})
    for _ in range(3):  # more inputs while the rank grows short of the target (a trained point may saturate)
        X = [[[fmpq(rng.randint(1 - q, q - 1), q) for _ in range(arch.tokens)] for _ in range(arch.widths[0])]
             for _ in range(n)]
        w = np.array([[[[rng.randint(-3, 3) for _ in range(arch.tokens)] for _ in range(arch.widths[1])]
                       for _ in range(c)] for _ in range(n)])
        found = _ball_lower(arch, pt.rationals(), X, w, target, None if scale.is_one() else scale.ball)
        if found[0] > best[0]:
            best = found
        if best[0] >= target:
            break
        n *= 2
    return best


def ball_rank(arch: Architecture, weights, *, scale: ScoreScale | None = None, target: int | None = None,
              seed: int = 0) -> tuple[int, dict]:
    """A certified lower bound on a normalized layer's local rank: a Jacobian minor at the point in balls.

    The direct computation Theorem C is compared with (``proofs/softmax_criterion.py``): the rank of
    ``d phi_W`` on random rational inputs, the minor chosen by floats and decided by a determinant ball
    that excludes 0 (docs/softmax.md). ``target``: stop adding inputs once the rank reaches it (default:
    the parameter count).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((2, 2), (1,), normalization="softmax", biases=True)
    >>> ball_rank(arch, [1, 2, -1, 1, 2, 0, 1, 3, 1, 1, 2, 1, 0, 0], target=14)[0]   # P - a - a - d' = 14 - 4
    10
    """
    pt = _Point(arch, weights)
    return _ball_local_lower(arch, pt, target or arch.parameter_count, random.Random(seed), scale or ONE)


def _criterion_bounds(arch: Architecture, pt: _Point, p: int, reasons: list) -> tuple[int, int, dict, bool]:
    """Theorem C (docs/math.md §8.3) or its bounds (§8.4): ``(lower, upper, witness, decided)``."""
    def block(j, name):
        return pt.block_mod_p(j, name, p)

    why = criterion.applies(arch)
    groups = criterion.group_heads(arch)
    S: list[int] = []
    if criterion.applies(arch, whole=False) is None:  # the greedy search keeps a sub-layer within h a <= d
        progress.phase("criterion", f"stacked O, Q, K ranks of {len(groups)} groups, mod {p}")
        S = criterion.separated_groups(arch, block, p)
    lower = criterion.lower_bound(arch, S) if (S or arch.biases) else 0
    decided = why is None and len(S) == len(groups) and not (arch.biases and arch.normalization == "lightning")
    if decided:
        reasons.append(f"Theorem C (docs/math.md §8.3): all {len(groups)} groups separated, so the local rank is "
                       "exact" + ("; the score scale changes no rank" if arch.normalization != "lightning" else ""))
        return lower, lower, {"criterion": {"groups": S}}, True
    if why is not None:
        reasons.append(f"Theorem C needs {why}")
    elif S:
        reasons.append(f"Theorem C on groups {S} only (the others fail (C1)-(C5) with them): a lower bound")
    else:
        reasons.append("no group satisfies (C3)/(C5) of Theorem C")
    upper = arch.parameter_count - criterion.kernel_dimension(arch, block, p)
    return lower, upper, {"criterion": {"groups": S}}, False


def local_rank(arch: Architecture, weights, *, seed: int | None = 0, head: int = 1,
               dimension: bool = True, scale: ScoreScale | None = None, binding: dict | None = None,
               jacobian: bool = True) -> LocalRank:
    """Certify bounds on the local rank of one attention layer at ``weights``, and decide regularity.

    Parameters
    ----------
    arch : Architecture
        One layer (heads, value ranks, a mask or a residual connection allowed).
    weights
        The point: a flat list (anything :func:`attngeo.model.network.read_point` reads) or a float array
        (every float its exact value), e.g. :attr:`attngeo.model.checkpoint.Checkpoint.point`.
    seed : int or None
        Seeds the prime, and the inputs of the exact path.
    head : int
        The head whose fiber is reported (1-based).
    dimension : bool or "always"
        Certify the generic dimension (:func:`attngeo.certify_dimension`, embedded in the certificate) when the
        point does not decide it itself (``local rank = P - dim orbit`` proves ``dim M``); ``"always"``: also then.
    scale : ScoreScale, optional
        The checkpoint's score scale ``s`` (scores ``s (K x + b_K)^T (Q x + b_Q)``; default 1). Ranks and
        Theorem C do not depend on it; a softmax ball witness computes with it (docs/math.md §8.1).
    jacobian : bool
        Small layers get a Jacobian minor at the point (mod ``p``, or a ball for softmax) where the structural
        bounds differ; False keeps the structural bounds alone (Theorem C's, to compare them with a Jacobian).
    binding : dict, optional
        The checkpoint the point was read from (its hash, tensors and slices: docs/certificates.md); the
        certificate then holds it instead of the point, and ``attngeo check --weights FILE`` reads the point
        from the file.

    Returns
    -------
    LocalRank

    Raises
    ------
    InvalidInputError
        For a deep architecture, weights that do not fit, or a head that does not exist.

    Examples
    --------
    torch MHA on ``d = 4`` with two heads of 2: regular at a generic point; a rank-1 ``Q`` is not.

    >>> from attngeo import Architecture
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    >>> w = [(-1) ** k * (k % 7 + 1) for k in range(arch.parameter_count)]
    >>> local_rank(arch, w).regular
    True
    >>> w[:8] = [1, 2, 3, 4, 2, 4, 6, 8]             # Q_1 of rank 1
    >>> res = local_rank(arch, w)
    >>> res.regular, res.lower, res.upper, res.generic
    (False, 44, 44, (46, 46))
    """
    if arch.depth != 1:
        raise InvalidInputError(f"the local rank is computed for one layer; {arch} has {arch.depth} "
                                "(inspect one layer of a checkpoint at a time)")
    if not 1 <= head <= arch.heads[0]:
        raise InvalidInputError(f"head = {head}: the layer has heads 1..{arch.heads[0]}")
    start = time.perf_counter()
    rng = random.Random(seed)
    p = random_prime(rng)
    pt = _Point(arch, weights)
    progress.phase("ranks", f"{arch.heads[0]} heads, mod {p}")
    ranks = head_ranks(arch, pt, p)
    lightning = arch.normalization == "lightning"
    scale = scale or ONE
    reasons = []
    tied = arch.is_tied or not lightning
    if tied:  # shared keys, biases or softmax: Theorem C (docs/math.md §8)
        lower, upper, witness, decided = _criterion_bounds(arch, pt, p, reasons)
        if not arch.is_tied:  # Lemma U of §7.5 bounds an untied softmax layer head by head too
            upper = min(upper, sum(image_dimension(arch, r) for r in ranks))
    else:
        upper = min(sum(image_dimension(arch, r) for r in ranks), arch.parameter_count)
        lower, witness, decided = 0, {"heads": []}, False
    if lightning and arch.tokens >= 2 and not tied:
        best = max(ranks, key=lambda r: image_dimension(arch, r))
        if image_dimension(arch, best):
            lower, witness = image_dimension(arch, best), {"heads": [best.head]}
        if separated(arch) and arch.heads[0] > 1:
            progress.phase("separation", "stacked O, Q, K ranks")
            S = separated_heads(arch, pt, ranks, p)
            total = sum(image_dimension(arch, r) for r in ranks if r.head in S)
            if len(S) > 1 and total > lower:
                lower, witness = total, {"heads": S}
        reasons.append(f"heads {witness['heads']}: " + ("separated heads (docs/math.md §7.5)"
                                                         if len(witness["heads"]) > 1 else "one head's image"))
    elif lightning:
        reasons.append("t = 1: the structural lower bounds need t >= 2")
    if lightning and jacobian and lower < upper and arch.parameter_count <= EXACT_PARAMETERS:
        rank, jw = _jacobian_lower(arch, pt, p, upper, rng)
        if rank > lower:
            lower, witness = rank, {"jacobian": jw}
            reasons.append("rank of the network's Jacobian at the point, mod p")
    if not lightning and jacobian and lower < upper:
        if arch.parameter_count <= SOFTMAX_LOCAL_PARAMETERS:
            progress.phase("ball Jacobian", f"{arch.normalization} at the point, ball arithmetic")
            rank, bw = _ball_local_lower(arch, pt, upper, rng, scale)
            if rank > lower:
                lower, witness = rank, {"ball": bw}
                reasons.append("a Jacobian minor at the point whose determinant ball excludes 0")
        else:
            reasons.append(f"{arch.normalization}: the lower bound is a ball determinant, computed up to "
                           f"{SOFTMAX_LOCAL_PARAMETERS} parameters")
    if lower < upper:
        reasons.append(f"bounds {lower} <= local rank <= {upper}: " + (
            "the upper bound counts each head alone; heads that share directions lower the rank, and no exact "
            "kernel vector beyond the heads' own was found" if arch.parameter_count <= EXACT_PARAMETERS else
            f"above {EXACT_PARAMETERS} parameters the Jacobian is not ranked; the structural lower bound does "
            "not reach the upper one"))
    if decided:  # Theorem C: the kernel is exactly the explicit one, so it is P - rho
        orbit = arch.parameter_count - lower
    elif tied:
        orbit = criterion.kernel_dimension(arch, lambda j, name: pt.block_mod_p(j, name, p), p)
    else:
        orbit = orbit_dimension(arch, ranks)
    generic = (lower, arch.parameter_count - orbit)  # rho(W) <= dim M <= P - dim(orbit at W): docs/math.md §7.5
    dim_cert = None
    if generic[0] == generic[1] and dimension != "always":
        reasons.append("dim M = local rank = P - the orbit's dimension at this point (docs/math.md §7.5, Lemma O)")
    elif dimension and arch.is_tied:
        reasons.append("dim M of shared keys or biases: bounded by this point only (attngeo dim certifies it at a "
                       "point where Theorem C applies)")
    elif dimension:
        path, need = estimate(arch)
        if lightning or arch.parameter_count <= SOFTMAX_DIMENSION_PARAMETERS:
            progress.phase("dimension", f"generic dimension ({path} path)")
            cert = certify_dimension(arch, seed=seed)
            dim_cert = cert.to_json()
            generic = (max(generic[0], cert.lower), min(generic[1], cert.upper))
        else:
            reasons.append(f"the generic dimension of a {arch.normalization} layer is certified up to "
                           f"{SOFTMAX_DIMENSION_PARAMETERS} parameters")
    fib = head_fiber(arch, ranks[head - 1])
    return LocalRank(arch, pt, ranks, lower, upper, witness, p, dim_cert, generic, orbit, head, fib,
                     time.perf_counter() - start, reasons, scale, binding)
