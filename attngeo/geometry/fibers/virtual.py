"""Deep fibers through virtual weights: peel one layer at a time (docs/fibers.md §5, docs/math.md §7.2).

A network is a function of its *virtual weights* ``M_i = P_{i-1}^T A_i P_{i-1}``,
``P = V_l ... V_1`` (docs/math.md §3.1): ``phi_W(X) = P S_{M_l}( ... S_{M_1}(X))``
with ``S_M(Y) = Y (Y^T M Y)``. Lemma P (docs/math.md §7.2) finds every virtual
point with the same function, one layer at a time:

* the part of output token 2 of degree 1 in the second token ``y`` is the matrix
  of polynomials ``rho(x) (M_1^T x)_j (P x)_k`` (``rho`` a product of the
  quadrics ``x^T M_i x``); unique factorization in ``C[x]`` with two independent
  columns of ``M_1`` pins ``M_1`` (skew part included) up to a scalar;
* ``S_{M_1}`` is dominant on two tokens (a nonzero Jacobian determinant), so the
  rest of the network is pinned on a dense set, hence everywhere: repeat;
* the last layer ``(A, V) = (M_l, P)`` is a single layer: docs/fibers.md, Theorem 1.

Lemma A turns the virtual fiber back into weights: with equal hidden widths and
``V_1 .. V_{l-1}`` invertible, the fiber is a union of orbits of the symmetry
group, one per line of the last layer's fiber. Every hypothesis is the
nonvanishing of a witnessed polynomial in ``W`` (a determinant, a minor, an
entry), so where the fiber is one orbit the same holds on a dense Zariski-open
set of weights: the *generic* fiber at that size, not only the fiber at ``W_0``.

No elimination, so sizes far beyond the Gröbner path (:mod:`attngeo.geometry.fibers.deep`)
take a fraction of a second; that path remains the fallback where a hypothesis
fails (``a_i = 1`` before the last layer, hidden widths other than ``d_0``).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field

from flint import fmpq, fmpq_mat

from ...check.fibers.virtual import is_generic, longest_number, price
from ...check.limits import MAX_DIGITS, MAX_LAYER_WIDTH, MAX_VIRTUAL_FIBER_WORK
from ...exceptions import InvalidInputError
from ... import latex
from ...model.architecture import Architecture
from ...model.network import read_point, split_heads
from ..certificate import Result, certificate_json
from ..symmetry import SymmetryGroup, orbit_dimension
from .deep import DEEP_FIBER_KEYS, deep_fiber, gauge_point, into_slice
from .layer import Fiber, fiber, rank_factorization, str_rows

#: Random inputs tried for a dominance witness before the point is declared special.
DOMINANCE_TRIES = 20
#: Entries of the symmetry-field matrix the prover ranks exactly, a check of Lemma 7.8.2 at every certificate (the
#: checker takes ``dim G`` from the lemma): widths 32,32,32 ranks 8,8 have 3.5e6 (about 20 s); widths 64,64,64 ranks
#: 32,32 would have 1e8 rational entries (tens of GB), and there the prover takes the lemma's value too.
MAX_RANKED_FIELDS = 5_000_000
#: How numbers are written in a certificate: an integer or a fraction.
_NUMBER = re.compile(r"-?[0-9]+(/[0-9]+)?")


class HypothesisFailed(InvalidInputError):
    """The virtual-weight path does not apply (to this architecture, or at this point); the message says which
    hypothesis fails. The Gröbner path (:func:`attngeo.deep_fiber`) is the fallback.

    Examples
    --------
    >>> from attngeo import Architecture, AttngeoError
    >>> from attngeo.geometry.fibers.virtual import HypothesisFailed, virtual_fiber
    >>> try:
    ...     virtual_fiber(Architecture((2, 2, 2), (1, 2), tokens=2), seed=0)
    ... except HypothesisFailed as exc:
    ...     print(isinstance(exc, AttngeoError), exc)    # doctest: +ELLIPSIS
    True the virtual-weight path needs a_1 >= 2: ...
    """


def unsupported(arch: Architecture) -> str | None:
    """Why the virtual-weight path cannot apply to ``arch`` (None when it may; the point decides the rest).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import unsupported
    >>> unsupported(Architecture((3, 3, 3), (2, 2), tokens=2)) is None
    True
    >>> unsupported(Architecture((3, 3, 1), (2, 1), tokens=2)) is None     # any last layer, any output width
    True
    >>> print(unsupported(Architecture((6, 6, 1), (2, 2), tokens=2)))    # doctest: +ELLIPSIS
    the virtual-weight path needs 2 a_l + d_l >= d_0 (5 < 6): ...
    >>> unsupported(Architecture((3, 2, 2), (2, 1), tokens=2))
    'the virtual-weight path needs every hidden width equal to d_0 = 3 (widths 3,2,2): V_1 .. V_{l-1} must be invertible'
    """
    l, d = arch.depth, arch.widths[0]
    if arch.normalization != "lightning" or not arch.is_plain:
        return "the virtual-weight path is for [HMK]'s lightning model (one head, V unfactored, no residual or mask)"
    if l < 2:
        return "the virtual-weight path is for two or more layers (one layer: docs/fibers.md §1)"
    if arch.tokens < 2:
        return "fibers need t >= 2 tokens (t = 1 sees only the symmetric part of each A_i)"
    if any(w != d for w in arch.widths[:-1]):
        return (f"the virtual-weight path needs every hidden width equal to d_0 = {d} "
                f"(widths {','.join(map(str, arch.widths))}): V_1 .. V_{{l-1}} must be invertible")
    for i, a in enumerate(arch.ranks, start=1):
        if a > d:
            return f"the virtual-weight path needs a_{i} = {a} <= d = {d} (else (Q, K) has stabilizers)"
        if a < 2 and i < l:
            return (f"the virtual-weight path needs a_{i} >= 2: with a_{i} = 1 layer {i}'s output has rank 1 and "
                    "S_M is not dominant (hidden symmetries, docs/findings.md 8 and 10; the Gröbner path decides)")
    a_l, d_l = arch.ranks[-1], arch.widths[-1]
    if 2 * a_l + d_l < d:
        return (f"the virtual-weight path needs 2 a_l + d_l >= d_0 ({2 * a_l + d_l} < {d}): the last layer's rows, "
                "columns and outputs then span a proper subspace, and weights with a singular V_{l-1} have the "
                "same function (the fiber is larger than the orbit, docs/findings.md 22)")
    if max(d, d_l) > MAX_LAYER_WIDTH:  # the embedded last-layer fiber is a single-layer certificate
        return f"the checker reads widths up to {MAX_LAYER_WIDTH} (widths {','.join(map(str, arch.widths))})"
    return None


def virtual_weights(arch: Architecture, point) -> tuple[list[fmpq_mat], fmpq_mat, list[fmpq_mat]]:
    """``(M_1, .., M_l)``, ``P = V_l .. V_1`` and the attention matrices ``A_i = K_i^T Q_i`` of a point.

    ``M_i = P_{i-1}^T A_i P_{i-1}`` with ``P_0 = I``: the network is
    ``P S_{M_l}(.. S_{M_1}(X))`` (docs/math.md §3.1).

    Examples
    --------
    Two layers ``1 -> 1 -> 1``: ``M_1 = k_1 q_1``, ``M_2 = v_1^2 k_2 q_2``, ``P = v_2 v_1``.

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import virtual_weights
    >>> M, P, A = virtual_weights(Architecture((1, 1, 1), (1, 1)), [2, 3, 5, 7, 11, 13])
    >>> [m[0, 0] for m in M], P[0, 0]
    ([6, 1925], 65)
    """
    layers = split_heads(arch, read_point(arch, point))
    d = arch.widths[0]
    P = fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)])
    Ms, As = [], []
    for (Q, K, V), in layers:
        A = _mat(K).transpose() * _mat(Q)
        As.append(A)
        Ms.append(P.transpose() * A * P)
        P = _mat(V) * P
    return Ms, P, As


def _mat(M) -> fmpq_mat:
    return fmpq_mat(M.tolist())


def peeling_exponents(depth: int, layer: int) -> list[list[int]]:
    """``rho_i = prod_j (x^T M_j x)^{e_j}``: ``[[j, e_j], ...]`` for peeling layer ``i`` of ``depth`` layers.

    ``e_i = 3^{l-i} - 1`` and ``e_j = 3^{l-j}`` for ``j > i`` (docs/math.md §7.2: the token-1
    output after ``j`` layers is ``r_j(x) x`` with ``r_j = r_{j-1}^3 q_j``).

    Examples
    --------
    >>> from attngeo.geometry.fibers.virtual import peeling_exponents
    >>> peeling_exponents(2, 1), peeling_exponents(3, 1), peeling_exponents(3, 2)
    ([[1, 2], [2, 1]], [[1, 8], [2, 3], [3, 1]], [[2, 2], [3, 1]])
    """
    return [[j, 3 ** (depth - j) - (j == layer)] for j in range(layer, depth + 1)]


def _two_by_two(M: fmpq_mat) -> list[list[int]] | None:
    """Rows and columns of a nonzero 2x2 minor (two independent columns: ``rank M >= 2``), None if there is none."""
    n = M.nrows()
    for c1 in range(n):
        for c2 in range(c1 + 1, n):
            for r1 in range(n):
                for r2 in range(r1 + 1, n):
                    if M[r1, c1] * M[r2, c2] != M[r1, c2] * M[r2, c1]:
                        return [[r1, r2], [c1, c2]]
    return None


def _symmetric_entry(M: fmpq_mat) -> list[int] | None:
    """``[r, c]`` (``r <= c``) with ``M_rc + M_cr != 0``: the quadric ``x^T M x`` is not zero."""
    n = M.nrows()
    return next(([r, c] for r in range(n) for c in range(r, n) if M[r, c] + M[c, r] != 0), None)


def jacobian(M: fmpq_mat, Y: fmpq_mat) -> fmpq_mat:
    """The Jacobian of ``S_M(Y) = Y (Y^T M Y)`` at a ``d x 2`` input: ``dS(E) = E G + Y (E^T M Y + Y^T M E)``.

    Columns and rows follow the row-major entries of ``Y`` and of ``S_M(Y)``.

    Examples
    --------
    ``M = I`` on ``C^{2 x 2}``: ``S(Y) = Y Y^T Y`` is dominant (determinant nonzero at a general input).

    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.fibers.virtual import jacobian
    >>> jacobian(fmpq_mat([[1, 0], [0, 1]]), fmpq_mat([[1, 2], [0, 1]])).det() != 0
    True
    """
    d, t = Y.nrows(), Y.ncols()
    G = Y.transpose() * M * Y
    cols = []
    for r in range(d):
        for j in range(t):
            E = fmpq_mat(d, t)
            E[r, j] = 1
            dS = E * G + Y * (E.transpose() * M * Y + Y.transpose() * M * E)
            cols.append(dS.entries())
    return fmpq_mat(cols).transpose()


def dominance_input(M: fmpq_mat, rng: random.Random, tries: int = DOMINANCE_TRIES) -> list[list[int]] | None:
    """A small integer ``d x 2`` input where ``S_M`` has a nonzero Jacobian determinant, or None.

    A polynomial map ``C^n -> C^n`` whose Jacobian determinant is nonzero at one
    point is dominant (its image is dense).

    Examples
    --------
    ``M`` of rank 1 (``a = 1``): every output token is a multiple of one vector, never dominant.

    >>> import random
    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.fibers.virtual import dominance_input
    >>> dominance_input(fmpq_mat([[1, 2, 0], [0, 1, 1], [1, 0, 1]]), random.Random(0)) is not None
    True
    >>> dominance_input(fmpq_mat([[1, 2, 0], [2, 4, 0], [0, 0, 0]]), random.Random(0), tries=5) is None
    True
    """
    d = M.nrows()
    for _ in range(tries):
        Y = [[rng.randint(-3, 3) for _ in range(2)] for _ in range(d)]
        if jacobian(M, fmpq_mat(Y)).det() != 0:
            return Y
    return None


@dataclass(repr=False)
class VirtualFiber(Result):
    """The fiber of a deep network at a point, found by peeling virtual weights (every fiber point, over C).

    ``orbits`` are weight points, one per orbit of the symmetry group, in the order
    of the last layer's lines (``W_0`` is the point on its own line); the fiber is their union. ``generic`` says that the witnessed
    hypotheses are open and the fiber is one orbit, so the same holds for every
    ``W`` in a dense Zariski-open set.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import virtual_fiber
    >>> fib = virtual_fiber(Architecture((3, 3, 3), (2, 2), tokens=2), seed=1)
    >>> fib.certified, len(fib.orbits), fib.generic, fib.dimensions
    (True, 1, True, [19])
    >>> fib.verdict
    'fiber = symmetry orbit G.W_0 (every weight with the same function, over C); generic: the same on a dense open set'
    """

    arch: Architecture
    point: list[fmpq]
    M: list[fmpq_mat]
    P: fmpq_mat
    layers: list[dict]  # per layer i < l: minor, symmetric entry, rho exponents, dominance input
    last_symmetric: list[int]
    last: Fiber  # the single-layer fiber of (A, V) = (M_l, P)
    orbits: list[list[fmpq]] = field(default_factory=list)
    dimensions: list[int] = field(default_factory=list)
    seconds: float = 0.0

    kind = "virtual-fiber"

    @property
    def certified(self) -> bool:
        """Always: a :class:`VirtualFiber` exists only when every hypothesis holds at the point."""
        return True

    @property
    def generic(self) -> bool:
        """The lines at the point are those of a dense open set: one line with ``rank M_l >= 2`` or
        ``rank P >= 2``, or the two of ``a_l = d_l = 1`` (docs/math.md Theorem 7.8)."""
        return is_generic(len(self.orbits), self.M[-1].rank(), self.P.rank(), self.arch.ranks[-1],
                          self.arch.widths[-1])

    @property
    def fiber_points(self) -> int:
        """Orbits in the fiber: the points a gauge slice meets (for comparison with :class:`DeepFiber`)."""
        return len(self.orbits)

    @property
    def verdict(self) -> str:
        """What the peeling proved, in words."""
        if len(self.orbits) == 1:
            tail = "; generic: the same on a dense open set" if self.generic else " (at this point only)"
            return "fiber = symmetry orbit G.W_0 (every weight with the same function, over C)" + tail
        tail = "; generic: the same on a dense open set" if self.generic else " (at this point only)"
        return (f"hidden discrete symmetry: the fiber is {len(self.orbits)} orbits of the symmetry group "
                f"(the last layer's fiber is {self.last.case}: {len(self.orbits)} lines)" + tail)

    def summary(self) -> dict:
        """The record ``--json`` prints.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.fibers.virtual import virtual_fiber
        >>> s = virtual_fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0).summary()
        >>> s["fiber_points"], s["solutions_in_slice"], s["generic"], s["certified"], s["engine"]
        (1, 1, True, True, None)
        >>> sorted(s) == sorted(DEEP_FIBER_KEYS)      # the same record as elimination's (DeepFiber.summary)
        True
        """
        return {
            "architecture": self.arch.to_dict(),
            "certified": True,
            "verdict": self.verdict,
            "components": [{"dimension": n, "description": f"the symmetry orbit of fiber point {c}"}
                           for c, n in enumerate(self.dimensions)],
            "fiber_points": self.fiber_points,
            "solutions_in_slice": self.fiber_points,  # no sampled system: every point found is a fiber point
            "generic": self.generic,
            "method": "virtual weights peeled layer by layer (factorization of the token-2 part linear in y, "
                      "dominance of S_M), the last layer by docs/fibers.md Theorem 1; no elimination",
            "engine": None,
            "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict:
        """The certificate: the point, its virtual weights, the witnesses per layer and the last layer's fiber.

        Examples
        --------
        >>> from attngeo import Architecture, check_certificate
        >>> from attngeo.geometry.fibers.virtual import virtual_fiber
        >>> cert = virtual_fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0).to_json()
        >>> cert["kind"], cert["layers"][0]["rho"], cert["last"]["fiber_certificate"]["case"]
        ('virtual-fiber', [[1, 2], [2, 1]], 'generic')
        >>> check_certificate(cert).claim     # doctest: +ELLIPSIS
        'fiber = 1 orbit(s) of the symmetry group for widths 2,2,2, ranks 2,2 and every t >= 2 ...'
        """
        return certificate_json(self.kind, {
            "architecture": self.arch.to_dict(),
            "point": [str(v) for v in self.point],
            "virtual": {"M": [str_rows(M) for M in self.M], "P": str_rows(self.P)},
            "layers": self.layers,
            "last": {"symmetric": self.last_symmetric, "fiber_certificate": self.last.to_json()},
            "orbits": [{"point": [str(v) for v in p], "dimension": n} for p, n in zip(self.orbits, self.dimensions)],
            "certified": True,
            "generic": self.generic,
            "seconds": round(self.seconds, 3),
        })

    def latex(self) -> str:
        """The fiber as a union of orbits of the symmetry group ``G``.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> from attngeo.geometry.fibers.virtual import virtual_fiber
        >>> from attngeo.latex import balanced
        >>> tex = virtual_fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0).latex()
        >>> tex.startswith(r"\\varphi^{-1}(\\varphi_{W_0}) = G \\cdot W_{0}"), balanced(tex)
        (True, True)
        """
        return r",\quad ".join(self.latex_parts())

    def latex_parts(self) -> list[str]:
        """The fiber as orbits, and the group ``G``: two LaTeX strings (math), the lines of ``fiber --latex``."""
        orbits = latex.orbits(len(self.orbits))
        return [rf"\varphi^{{-1}}(\varphi_{{W_0}}) = {orbits}", f"G = {SymmetryGroup(self.arch).latex()}"]

    def __str__(self) -> str:
        return f"{self.arch}: {self.verdict} [virtual weights, {self.seconds:.2f} s]"


def virtual_fiber(arch: Architecture, seed: int | None = None, point=None) -> VirtualFiber:
    """The complete fiber through a point of a deep network, by peeling its virtual weights.

    The point is the Gröbner path's for the same seed (a random point of its
    gauge slice, :func:`attngeo.geometry.fibers.deep.gauge_point`), or ``point``.

    Parameters
    ----------
    arch : Architecture
        [HMK]'s lightning model, ``l >= 2`` layers, every hidden width equal to
        ``d_0``, ``2 <= a_i <= d_0`` before the last layer, ``2 a_l + d_l >= d_0``, ``t >= 2``.
    seed : int or None
        Seeds the point and the dominance inputs.
    point : list, optional
        Rational weights instead of a random point.

    Returns
    -------
    VirtualFiber

    Raises
    ------
    HypothesisFailed
        When the architecture or the point does not meet a hypothesis (named).

    Examples
    --------
    Widths ``6,6,6``, ranks ``3,3`` (144 weights; the Gröbner path has 88 unknowns):

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import virtual_fiber
    >>> fib = virtual_fiber(Architecture((6, 6, 6), (3, 3), tokens=2), seed=0)
    >>> fib.verdict.startswith("fiber = symmetry orbit"), fib.dimensions
    (True, [56])

    The last layer may add lines: widths ``2,2,1``, ranks ``2,1`` compute
    ``(k . z)(p . z)`` times a fixed factor, symmetric in ``k_2`` and the output row.

    >>> swap = virtual_fiber(Architecture((2, 2, 1), (2, 1), tokens=2), seed=0)
    >>> len(swap.orbits), swap.last.case
    (2, 'rank1-swap')
    """
    start = time.perf_counter()
    reason = unsupported(arch)
    if reason:
        raise HypothesisFailed(reason)
    rng = random.Random(seed)
    W0 = gauge_point(arch, rng) if point is None else read_point(arch, point)
    l, d, dl = arch.depth, arch.widths[0], arch.widths[-1]
    Ms, P, As = virtual_weights(arch, W0)
    cost = price(l, d, dl, longest_number([str(v) for v in W0]), longest_number([str_rows(M) for M in Ms + [P]]))
    if cost > MAX_VIRTUAL_FIBER_WORK:  # the checker would refuse the certificate, and the last layer is as costly here
        raise HypothesisFailed(f"checking this point's certificate is priced at {cost:.1e} ns, above the checker's "
                               f"{MAX_VIRTUAL_FIBER_WORK:.0e}: smaller weights, fewer layers or narrower widths")
    for i, (A, a) in enumerate(zip(As, arch.ranks), start=1):
        if A.rank() != a:
            raise HypothesisFailed(f"rank A_{i} = {A.rank()} < a_{i} = {a} at this point (special: the (Q, K) fiber is "
                                   "larger than a GL orbit, docs/fibers.md Lemma 3)")
    layers_V = split_heads(arch, W0)
    P_prev = fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)])
    for i in range(1, l):
        V = _mat(layers_V[i - 1][0][2])
        if V.rank() < d:
            raise HypothesisFailed(f"V_{i} is singular at this point (Lemma A needs V_1 .. V_{l - 1} invertible)")
        P_prev = V * P_prev
    steps = []
    for i, M in enumerate(Ms[:-1], start=1):
        minor, sym = _two_by_two(M), _symmetric_entry(M)
        if minor is None or sym is None:
            raise HypothesisFailed(f"M_{i} has rank < 2 or is skew at this point")
        Y = dominance_input(M, rng)
        if Y is None:
            raise HypothesisFailed(f"no input where S_(M_{i}) has a nonzero Jacobian determinant "
                                   f"({DOMINANCE_TRIES} tried): dominance not witnessed")
        steps.append({"minor": minor, "symmetric": sym, "rho": peeling_exponents(l, i), "dominance": Y})
    last_sym = _symmetric_entry(Ms[-1])
    if last_sym is None or P.rank() == 0:
        raise HypothesisFailed("the last layer's quadric or P = V_l .. V_1 vanishes at this point")
    eye = [[int(r == c) for c in range(d)] for r in range(d)]
    last = fiber(Architecture((d, dl), (d,), tokens=2), [[str_rows(Ms[-1]), eye, str_rows(P)]])
    orbits = [_realize(arch, W0, Ms[-1], P, P_prev, A_c, V_c) for A_c, V_c in last.lines]
    result = VirtualFiber(arch, W0, Ms, P, steps, last_sym, last, orbits,
                          [_orbit_dimension(arch, p) for p in orbits], time.perf_counter() - start)
    if _longest(result.to_json()) > MAX_DIGITS:
        raise HypothesisFailed(f"the certificate at this point holds numbers above the checker's {MAX_DIGITS} "
                               "digits (the last layer's representatives): smaller weights")
    return result


def _orbit_dimension(arch: Architecture, point: list[fmpq]) -> int:
    """The orbit's dimension: the exact rank of the symmetry fields while their matrix is small, else ``dim G``
    (docs/math.md Lemma 7.8.2; its hypotheses, ``V_1 .. V_{l-1}`` invertible and ``rank A_i = a_i``, are verified
    before any orbit point is made).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> arch = Architecture((3, 3, 3), (2, 2))
    >>> _orbit_dimension(arch, gauge_point(arch, random.Random(0)))     # ranked: dim G = 2 (4 + 1) + 9
    19
    """
    group = SymmetryGroup(arch).dimension
    if group * arch.parameter_count > MAX_RANKED_FIELDS:
        return group
    return orbit_dimension(arch, point)


def _longest(value) -> int:
    """Digits of the longest numerator or denominator written in a certificate's JSON."""
    if isinstance(value, dict):
        return max(map(_longest, value.values()), default=0)
    if isinstance(value, list):
        return max(map(_longest, value), default=0)
    if isinstance(value, str) and _NUMBER.fullmatch(value):
        return max(len(part) for part in value.lstrip("-").split("/"))
    return 0


def _realize(arch: Architecture, W0: list[fmpq], M_l: fmpq_mat, P: fmpq_mat, P_prev: fmpq_mat,
             A_c: fmpq_mat, V_c: fmpq_mat) -> list[fmpq]:
    """Weights with virtual weights ``(M_1 .. M_{l-1}, A_c, V_c)``: ``W_0`` itself on its own line, else
    ``W_0``'s first layers and ``A_l = P_{l-1}^{-T} A_c P_{l-1}^{-1}``, ``V_l = V_c P_{l-1}^{-1}``."""
    d, a = arch.widths[0], arch.ranks[-1]
    if A_c.rank() != a:
        raise HypothesisFailed(f"a line of the last layer's fiber has rank A = {A_c.rank()} != a_{arch.depth} = {a} "
                               "(Lemma A needs rank a_l on every line)")
    if fmpq_mat(A_c.tolist() + A_c.transpose().tolist() + V_c.tolist()).rank() != d:
        raise HypothesisFailed("a line of the last layer's fiber does not span C^d with its rows and columns "
                               "(Lemma A needs rank [A; A^T; V] = d_0 to force V_1 .. V_{l-1} invertible)")
    k = next((r, c) for r in range(d) for c in range(d) if A_c[r, c] != 0)
    lam = M_l[k] / A_c[k]
    if lam != 0 and M_l == A_c * lam and P * lam == V_c:
        return list(W0)
    inv = P_prev.inv()
    Q, K = rank_factorization(inv.transpose() * A_c * inv, a)
    V = V_c * inv
    n_last = 2 * a * d + V.nrows() * d
    return list(W0[:-n_last]) + Q.entries() + K.entries() + V.entries()


def fiber_at_point(arch: Architecture, seed: int | None = None, point=None, method: str = "auto",
                   engine: str = "auto", timeout: float = 600.0):
    """The fiber of a deep network (or of several heads) at a point: the virtual-weight path where its hypotheses
    hold, else elimination.

    Parameters
    ----------
    arch : Architecture
    seed : int or None
        Seeds the random point (when ``point`` is None) and the inputs.
    point : list, optional
        Rational weights (e.g. a trained network's, read exactly) instead of a random point. The virtual-weight
        path takes them as they are; elimination takes them moved into its gauge slice by the symmetry group
        (:func:`attngeo.geometry.fibers.deep.into_slice`: the same function), and its certificate is at the
        moved point.
    method : str
        ``auto`` (virtual weights, falling back to elimination), ``virtual`` or ``groebner``.
    engine, timeout
        For the elimination (:func:`attngeo.deep_fiber`).

    Returns
    -------
    VirtualFiber or DeepFiber

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import fiber_at_point
    >>> type(fiber_at_point(Architecture((3, 3, 3), (2, 2), tokens=2), seed=0)).__name__
    'VirtualFiber'
    >>> type(fiber_at_point(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint")).__name__
    'DeepFiber'
    >>> import random
    >>> deep = Architecture((3, 3, 3), (2, 2), tokens=2)
    >>> rng = random.Random(1)
    >>> W = [rng.randint(-3, 3) for _ in range(deep.parameter_count)]   # a given point, e.g. trained weights
    >>> fiber_at_point(deep, seed=0, point=W).verdict      # doctest: +ELLIPSIS
    'fiber = symmetry orbit G.W_0 (every weight with the same function, over C); generic: ...'
    """
    if method not in ("auto", "virtual", "groebner"):
        raise InvalidInputError(f"method must be auto, virtual or groebner, not {method!r}")
    if method != "groebner":
        try:
            return virtual_fiber(arch, seed, point=point)
        except HypothesisFailed:
            if method == "virtual":
                raise
    return deep_fiber(arch, seed=seed, engine=engine, timeout=timeout,
                      point=None if point is None else into_slice(arch, point))
