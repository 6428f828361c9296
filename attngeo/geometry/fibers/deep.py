"""Fibers of deep and multi-head networks at a point, by elimination in a gauge (docs/fibers.md, sections 3-4).

**Gauge.** For every head ``j`` of every layer ``i``: ``Q_ij[:, :a_i] = I``
(fixes ``GL_{a_i}``), ``U_ij[:, :b_i] = I`` when ``V = O U`` (fixes
``GL_{b_i}``), one entry ``K_ij[0, 0] = kappa_ij`` (fixes the scalings), and,
without residual connections, for every hidden width the first head's value
map ``V_i1[:, :d_i] = I`` (or ``O_i1[:, :d_i] = I``; fixes ``GL_{d_i}``).
After the matrix gauges the scalings act on the ``K_ij[0, 0]`` through a
triangular monomial change of the torus, a bijection. Needs ``a_i <= d_{i-1}``,
``b_i <= d_{i-1}`` and ``d_i`` at most the columns of the gauged value map.
Each orbit through the open set ``U`` where these blocks can be normalized (the
gauge minors are invertible) meets the slice ``G`` exactly once, so
``fiber(W_0) n U = orbit(W_0)`` exactly when ``fiber(W_0) n G = {W_0}``; with
several heads the permutations of the heads, each re-gauged into the slice
(:func:`head_permutations`), are always there, and ``fiber(W_0) n U`` is the
orbit of the group and the head permutations exactly when the fiber meets
``G`` in those points only.

**Elimination.** The unknowns are the free entries of ``G``; the equations
``phi_W(X_n) = phi_{W_0}(X_n)`` on integer inputs ``X_n``. Their solutions
contain ``fiber n G``, so a reduced Gröbner basis over Q with exactly ``D``
standard monomials bounds ``|fiber n G| <= D`` over C; ``D = 1`` (the basis is
linear) proves there is no hidden continuous or discrete symmetry in ``U``.
When ``D > 1`` the extra solutions are either artifacts of too few inputs
(more inputs remove them) or true fiber points; rational ones are verified
exactly (the networks agree as polynomials in ``X``), which proves a hidden
discrete symmetry.

**Trust.** The checker re-derives the equations, checks the basis is a
Gröbner basis, that every equation reduces to zero modulo it, the staircase
count and every listed solution; the one step it takes from the engine is the
inclusion ``<basis> c <equations>`` (a Gröbner computation; no engine in this
toolkit returns cofactors at these sizes), and it *replays* that step by
running the engine again on equations it rebuilt itself. Certificates say so.
"""

from __future__ import annotations

import math
import random
import time
from itertools import permutations, product
from dataclasses import dataclass, field

import numpy as np
from flint import fmpq, fmpq_mat, fmpq_poly

from ... import latex, progress
from ...check.arch import architecture as checker_architecture
from ...check.fibers.deep import rebuild_price
from ...check.limits import MAX_REBUILD_WORK, MAX_REPLAY_SECONDS, MAX_VARIABLES
from ...check.msolve import replay_bound
from ...model.architecture import Architecture
from ..certificate import Result, certificate_json
from ...exact.engine import Basis, groebner, normal_form, ring
from ...exceptions import InvalidInputError
from ..symmetry import SymmetryGroup, orbit_dimension
from ...exact.rank import kernel_over_q
from ...model.network import ExactOps, attention, object_array, read_point, split_heads, split_point, symbolic_context

MAX_RETRIES = 2

def gauge(arch: Architecture) -> dict[str, int | None]:
    """The gauge slice: variable name -> fixed value (``None``: the free ``K_ij[0,0]`` value).

    Raises
    ------
    InvalidInputError
        When the widths or ranks leave no such gauge (``a_i > d_{i-1}``,
        ``b_i > d_{i-1}``, an expanding hidden width) or the network is normalized.

    Examples
    --------
    One fixed entry per dimension of the symmetry group: ``GL_2`` for each
    ``Q_i``, ``GL_2`` for the hidden width, one scaling per layer.

    >>> from attngeo import Architecture, SymmetryGroup
    >>> from attngeo.geometry.fibers.deep import gauge
    >>> arch = Architecture((2, 2, 2), (2, 2), tokens=2)
    >>> len(gauge(arch)), SymmetryGroup(arch).dimension, arch.parameter_count
    (14, 14, 24)
    >>> gauge(Architecture((1, 1, 2), (1, 1), tokens=2))
    {'Q1_0_0': 1, 'K1_0_0': None, 'V1_0_0': 1, 'Q2_0_0': 1, 'K2_0_0': None}

    Two heads with ``V = O U``: per head ``GL_1`` on ``(Q, K)``, the scaling and
    ``GL_1`` on ``(U, O)``; still one fixed entry per group dimension.

    >>> mh = Architecture((2, 2), (1,), heads=2, value_ranks=1)
    >>> gauge(mh)
    {'Q1.1_0_0': 1, 'K1.1_0_0': None, 'U1.1_0_0': 1, 'Q1.2_0_0': 1, 'K1.2_0_0': None, 'U1.2_0_0': 1}
    >>> len(gauge(mh)) == SymmetryGroup(mh).dimension
    True
    >>> gauge(Architecture((2, 3, 2), (1, 1), tokens=2))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the gauge needs d_1 = 3 <= d_0 = 2 (an expanding hidden width has stabilizers: the fiber is not an orbit of the listed groups)
    """
    if arch.normalization != "lightning":
        raise InvalidInputError("deep fibers are computed for lightning networks only")
    fixed: dict[str, int | None] = {}

    def identity(b) -> None:
        fixed.update({b.variable(r, c): int(r == c) for r in range(b.rows) for c in range(b.rows)})

    for b in arch.blocks():
        d_in = arch.widths[b.layer - 1]
        if b.name == "Q":
            if b.rows > d_in:
                raise InvalidInputError(f"the gauge needs a_{b.layer} = {b.rows} <= d_{b.layer - 1} = {d_in}")
            identity(b)
        elif b.name == "K":
            fixed[b.variable(0, 0)] = None
        elif b.name == "U":
            if b.rows > d_in:
                raise InvalidInputError(f"the gauge needs b_{b.layer} = {b.rows} <= d_{b.layer - 1} = {d_in} "
                                        "(a wider U has stabilizers: the fiber is not an orbit of the listed groups)")
            identity(b)
        elif b.head == 1 and b.layer < arch.depth and not arch.residual:  # GL(d_i) on the first head's V or O
            if b.rows > b.cols:
                what = f"d_{b.layer - 1} = {d_in}" if b.name == "V" else f"b_{b.layer} = {b.cols}"
                raise InvalidInputError(
                    f"the gauge needs d_{b.layer} = {b.rows} <= {what} "
                    "(an expanding hidden width has stabilizers: the fiber is not an orbit of the listed groups)"
                )
            identity(b)
    return fixed


def ring_names(arch: Architecture) -> list[str]:
    """The parameters' names as ring variables: ``Q1.2_0_3`` is written ``Q1h2_0_3``.

    Engines and the checker's parser read names of letters, digits and
    underscores only; [HMK]'s names have no head and are unchanged.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import ring_names
    >>> ring_names(Architecture((1, 1), (1,), heads=2))
    ['Q1h1_0_0', 'K1h1_0_0', 'V1h1_0_0', 'Q1h2_0_0', 'K1h2_0_0', 'V1h2_0_0']
    >>> ring_names(Architecture((1, 1), (1,))) == Architecture((1, 1), (1,)).variable_names()
    True
    """
    return [n.replace(".", "h") for n in arch.variable_names()]


def gauge_point(arch: Architecture, rng: random.Random, bound: int = 5) -> list[fmpq]:
    """A random point of the slice with nonzero integer entries, redrawn until every
    head's ``A_ij = K_ij^T Q_ij`` and value map (``V_ij``, or ``U_ij`` and ``O_ij``)
    has its generic rank (a special point, e.g. a rank-deficient ``A_1``, has a
    larger fiber and says nothing about the generic one).

    Examples
    --------
    >>> import random
    >>> from flint import fmpq_mat
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import gauge, gauge_point
    >>> arch = Architecture((2, 2, 2), (2, 2), tokens=2)
    >>> point = gauge_point(arch, random.Random(1))
    >>> point[:4]                                         # Q_1 = I: the GL_2 gauge
    [1, 0, 0, 1]
    >>> fixed = gauge(arch)
    >>> all(v != 0 for n, v in zip(arch.variable_names(), point) if fixed.get(n) is None)
    True
    >>> K1, V1 = fmpq_mat(2, 2, point[4:8]), fmpq_mat(2, 2, point[8:12])
    >>> K1.rank(), V1.rank()                              # A_1 = K_1^T and V_1 of full rank
    (2, 2)
    """
    fixed = gauge(arch)
    values = [v for v in range(-bound, bound + 1) if v]
    while True:
        out = [fmpq(fixed[n]) if fixed.get(n) is not None else fmpq(rng.choice(values))
               for n in arch.variable_names()]
        if all(_generic(heads) for heads in split_heads(arch, out)):
            return out


def _generic(heads: list[tuple]) -> bool:
    """Per head ``A = K^T Q`` and every value factor of full rank; with several heads
    also the heads jointly (stacked ``Q``, ``K``, ``U``, side by side ``V`` or ``O``):
    two heads with parallel outputs ``o_1 || o_2`` re-split continuously."""
    for head in heads:
        Q, K = head[:2]
        if _rank(K.T @ Q) != min(Q.shape) or any(_rank(M) != min(M.shape) for M in head[2:]):
            return False
    if len(heads) == 1:
        return True
    stacked = [np.vstack([h[k] for h in heads]) for k in range(len(heads[0]) - 1)]  # Q, K (and U)
    return all(_rank(M) == min(M.shape) for M in stacked + [np.hstack([h[-1] for h in heads])])


def _rank(M: np.ndarray) -> int:
    return fmpq_mat(M.tolist()).rank()


def _inverse(M: np.ndarray) -> np.ndarray | None:
    """The inverse of a square object array of rationals, None when singular."""
    m = fmpq_mat(M.tolist())
    if m.rank() < m.nrows():
        return None
    inv = m.inv()
    return object_array(m.nrows(), m.nrows(), inv.entries())


def regauge(arch: Architecture, layers: list[list[tuple]], kappa: list[list[fmpq]]) -> list[fmpq] | None:
    """Move a point into the gauge slice by the symmetry group, layer by layer; None off the gauge domain.

    Per head: ``Q -> M^{-1} Q``, ``K -> M^T K`` with ``M = Q[:, :a]``; the
    scaling ``K -> c K``, ``V`` (or ``O``) ``-> V / c`` that sets ``K[0, 0] =
    kappa``; ``U -> N^{-1} U``, ``O -> O N`` with ``N = U[:, :b]``. Then, without
    residual connections, ``E = `` the first head's ``V[:, :d_i]`` (or ``O``):
    every head's value map ``-> E^{-1} (.)`` and the next layer's ``Q, K, V``
    (or ``U``) ``-> (.) E``. Each step fixes the function.

    Parameters
    ----------
    arch : Architecture
    layers : list of lists of head tuples
        As :func:`attngeo.model.network.split_heads` makes them (rational entries).
    kappa : list of lists of fmpq
        The target ``K_ij[0, 0]``, per layer and head.

    Returns
    -------
    list of fmpq or None
        The flat point, or None when a gauge block is singular (the orbit misses the slice).

    Examples
    --------
    Two heads in swapped order, brought back to the slice of the original point:

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import gauge_point, regauge, same_function
    >>> from attngeo.model.network import split_heads
    >>> arch = Architecture((2, 2), (1,), heads=2)
    >>> p = gauge_point(arch, random.Random(0))
    >>> (h1, h2), = split_heads(arch, p)
    >>> q = regauge(arch, [[h2, h1]], [[h1[1][0, 0], h2[1][0, 0]]])
    >>> q != p, same_function(arch, p, q), q[2] == p[2]      # K_1[0, 0] keeps its slice value
    (True, True, True)
    """
    out: list = []
    E = None
    for i, heads in enumerate(layers):
        new = []
        for (head, target) in zip(heads, kappa[i]):
            w = list(head)
            if E is not None:  # the previous layer's change of basis, absorbed on the input side
                w = [M @ E for M in w[:3]] + w[3:] if len(w) == 4 else [M @ E for M in w]
            Q, K = w[:2]
            a = Q.shape[0]
            Minv = _inverse(Q[:, :a])
            if Minv is None:
                return None
            Q, K = Minv @ Q, Q[:, :a].T @ K
            if K[0, 0] == 0:
                return None
            c = target / K[0, 0]
            w[:2] = [Q, K * c]
            w[-1] = w[-1] / c  # V, or O when V = O U
            if len(w) == 4:
                b = w[2].shape[0]
                Ninv = _inverse(w[2][:, :b])
                if Ninv is None:
                    return None
                w[2], w[3] = Ninv @ w[2], w[3] @ w[2][:, :b]
            new.append(w)
        if i + 1 < len(layers) and not arch.residual:
            d = new[0][-1].shape[0]
            Einv = _inverse(new[0][-1][:, :d])
            if Einv is None:
                return None
            E = new[0][-1][:, :d]
            for w in new:
                w[-1] = Einv @ w[-1]
        out.extend(v for w in new for M in w for v in M.ravel())
    return out


def head_permutations(arch: Architecture, point: list[fmpq]) -> list[list[fmpq]]:
    """The point's head permutations (every layer's heads reordered), each re-gauged into its slice.

    They compute the same function (the heads of a layer are summed), so they
    lie in ``fiber n slice``; ``point`` itself comes first, duplicates and
    permutations whose orbit misses the slice are dropped. ``prod h_i!`` points
    at a generic point.

    Examples
    --------
    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import gauge_point, head_permutations, same_function
    >>> arch = Architecture((2, 2), (1,), heads=3, value_ranks=1)
    >>> p = gauge_point(arch, random.Random(0))
    >>> perms = head_permutations(arch, p)
    >>> len(perms), perms[0] == p, all(same_function(arch, p, q) for q in perms)
    (6, True, True)
    """
    layers = split_heads(arch, point)
    kappa = [[head[1][0, 0] for head in heads] for heads in layers]
    out: list[list[fmpq]] = []
    for choice in product(*(permutations(range(len(heads))) for heads in layers)):
        q = regauge(arch, [[heads[k] for k in perm] for heads, perm in zip(layers, choice)], kappa)
        if q is not None and q not in out:
            out.append(q)
    return out


def fiber_equations(arch: Architecture, point: list[fmpq], inputs: list) -> tuple[tuple[str, ...], list]:
    """Unknowns of the slice and the equations ``phi_W(X_n) - phi_{W_0}(X_n)``.

    Parameters
    ----------
    arch : Architecture
    point : list of fmpq
        ``W_0``, a point of the gauge slice (flat, in ``arch.variable_names()`` order).
    inputs : list
        Integer inputs ``X_n``, each ``d_0 x t``.

    Returns
    -------
    (tuple of str, list)
        The free variables and the nonzero equations in them (``fmpq_mpoly``).

    Examples
    --------
    Widths ``1, 1, 2``: the gauge fixes everything but ``V_2``, and the
    equations are linear in it with ``W_0``'s ``V_2 = (-5, -1)`` as solution.

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import fiber_equations
    >>> arch = Architecture((1, 1, 2), (1, 1), tokens=2)
    >>> free, eqs = fiber_equations(arch, [1, 2, 1, 1, 2, -5, -1], [[[1, 2]], [[0, 3]]])
    >>> free
    ('V2_0_0', 'V2_1_0')
    >>> [str(e) for e in eqs[:3]]
    ['10000*V2_0_0 + 50000', '20000*V2_0_0 + 100000', '10000*V2_1_0 + 10000']
    >>> all(e(-5, -1) == 0 for e in eqs)
    True
    """
    fixed = gauge(arch)
    names = ring_names(arch)
    free = tuple(n for n, o in zip(names, arch.variable_names()) if o not in fixed)
    ctx = ring(free)
    gens = dict(zip(free, ctx.gens()))
    W = [gens[n] if n in gens else ctx.constant(v) for n, v in zip(names, point)]
    ops = ExactOps()
    d, t = arch.input_shape
    eqs = []
    for X in inputs:
        Xo = object_array(d, t, (fmpq(v) for row in X for v in row))
        Y = attention(ops, arch, split_heads(arch, W), Xo)
        Y0 = attention(ops, arch, split_heads(arch, point), Xo)
        eqs.extend(a - b for a, b in zip(Y.ravel(), Y0.ravel()))
    return free, [e for e in eqs if e != 0]


def outputs(arch: Architecture, point: list[fmpq], inputs: list) -> list:
    """``phi_{W_0}(X_n)`` for each input: the values the fiber equations set (recorded for other than [HMK]'s model).

    They tie a certificate to its function: the same point on an architecture
    without its mask (a single causal layer has the same fibers) is another claim.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import outputs
    >>> outputs(Architecture((1, 1), (1,), heads=2, causal=True), [1, 1, 1, 1, 1, 1], [[[1, 2]]])
    [[['2', '20']]]
    """
    d, t = arch.input_shape
    ops = ExactOps()
    out = []
    for X in inputs:
        Y = attention(ops, arch, split_heads(arch, [fmpq(v) for v in point]),
                      object_array(d, t, (fmpq(v) for row in X for v in row)))
        out.append([[str(v) for v in row] for row in Y.tolist()])
    return out


def standard_monomials(basis: Basis) -> list[tuple] | None:
    """The exponents not divisible by any leading monomial (a basis of the quotient), None if infinite.

    Examples
    --------
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import standard_monomials
    >>> x, y = ring(("x", "y")).gens()
    >>> standard_monomials(groebner([x**2 - 1, y - x], ("x", "y"), engine="flint"))   # 1 and y
    [(0, 0), (0, 1)]
    >>> standard_monomials(groebner([x * y], ("x", "y"), engine="flint")) is None     # a curve
    True
    """
    n = len(basis.variables)
    leads = [p.monoms()[0] for p in basis.polys]
    pure = [None] * n
    for m in leads:
        support = [i for i, e in enumerate(m) if e]
        if len(support) == 1:
            i = support[0]
            pure[i] = m[i] if pure[i] is None else min(pure[i], m[i])
    if any(e is None for e in pure):
        return None
    out = []
    stack = [()]
    while stack:  # enumerate the box prod [0, pure_i) and drop multiples of leading monomials
        prefix = stack.pop()
        if len(prefix) == n:
            if not any(all(a >= b for a, b in zip(prefix, m)) for m in leads):
                out.append(tuple(int(e) for e in prefix))
            continue
        stack.extend(prefix + (e,) for e in range(int(pure[len(prefix)])))
    return sorted(out)


def staircase(basis: Basis) -> int | None:
    """Number of standard monomials (solutions with multiplicity over C), None if infinite.

    Examples
    --------
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import staircase
    >>> x, y = ring(("x", "y")).gens()
    >>> staircase(groebner([x**2 - 1, y - x], ("x", "y"), engine="flint"))   # (1, 1) and (-1, -1)
    2
    >>> staircase(groebner([x**2, y], ("x", "y"), engine="flint"))           # the origin, twice
    2
    """
    monomials = standard_monomials(basis)
    return None if monomials is None else len(monomials)


@dataclass
class Parametrization:
    """The solutions of a zero-dimensional basis as ``x_i = p_i(z)``, ``g(z) = 0``, ``z = sum c_i x_i``.

    ``g`` is squarefree of degree ``D`` (the staircase count), so the ``D`` roots give ``D``
    distinct points, which are then all the solutions.

    Examples
    --------
    The two points ``(±1, ±1)`` on the diagonal: ``z = x`` separates them.

    >>> import random
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import parametrize
    >>> x, y = ring(("x", "y")).gens()
    >>> param = parametrize(groebner([x**2 - 1, y - x], ("x", "y"), engine="flint"), random.Random(0))
    >>> param.to_dict()
    {'form': ['1', '0'], 'g': ['-1', '0', '1'], 'x': [['0', '1'], ['0', '1']]}
    """

    form: list[fmpq]
    g: fmpq_poly
    x: list[fmpq_poly]

    def to_dict(self) -> dict:
        """``form``, ``g`` and each ``x_i`` as coefficient strings, constant term first (the certificate's record).

        Examples
        --------
        >>> from flint import fmpq_poly
        >>> from attngeo.geometry.fibers.deep import Parametrization
        >>> Parametrization([1, 0], fmpq_poly([-4, 0, 1]), [fmpq_poly([0, 1]), fmpq_poly([1])]).to_dict()
        {'form': ['1', '0'], 'g': ['-4', '0', '1'], 'x': [['0', '1'], ['1']]}

        A coordinate that is 0 at every solution is ``['0']``, never the empty list flint gives the zero
        polynomial (the checker wants a coefficient; a point given with a zero entry met it):

        >>> Parametrization([1], fmpq_poly([0, 1]), [fmpq_poly([])]).to_dict()["x"]
        [['0']]
        """
        coeffs = lambda p: [str(c) for c in p.coeffs()] or ["0"]  # noqa: E731
        return {"form": [str(c) for c in self.form], "g": coeffs(self.g), "x": [coeffs(p) for p in self.x]}


def parametrize(basis: Basis, rng: random.Random, tries: int = 6) -> Parametrization | None:
    """A rational univariate representation of the solutions, by linear algebra in the quotient.

    Tries ``z = x_j`` for each variable (shape position) and then random small
    linear forms; a form works when its multiplication matrix has a squarefree
    characteristic polynomial of degree ``D`` (it then separates the points).

    Returns
    -------
    Parametrization or None
        None when the solutions are infinitely many or no form tried separates them.

    Examples
    --------
    The four points ``(±1, ±1)``: neither ``x`` nor ``y`` separates them, a
    random form does, and ``g`` has four distinct roots.

    >>> import random
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import parametrize
    >>> x, y = ring(("x", "y")).gens()
    >>> param = parametrize(groebner([x**2 - 1, y**2 - 1], ("x", "y"), engine="flint"), random.Random(0))
    >>> param.g.degree(), all(c != 0 for c in param.form)
    (4, True)
    >>> [f.degree() for f, _ in param.g.factor()[1]]     # four rational points, one linear factor each
    [1, 1, 1, 1]
    """
    B = standard_monomials(basis)
    if B is None:
        return None
    D, n = len(B), len(basis.variables)
    index = {m: k for k, m in enumerate(B)}
    ctx = basis.ctx
    gens = ctx.gens()

    def vector(f) -> list[fmpq]:
        v = [fmpq(0)] * D
        for e, c in normal_form(f, basis.polys).to_dict().items():
            v[index[tuple(int(x) for x in e)]] = c
        return v

    monomial = [ctx.from_dict({m: 1}) for m in B]
    forms = [[fmpq(int(i == j)) for i in range(n)] for j in range(n)]
    forms += [[fmpq(rng.randint(-3, 3)) for _ in range(n)] for _ in range(tries)]
    for form in forms:
        u = sum((c * x for c, x in zip(form, gens)), ctx.from_dict({}))
        if u == 0:
            continue
        M = fmpq_mat([vector(u * b) for b in monomial]).transpose()  # column k: u * B[k]
        g = M.charpoly()
        if g.degree() != D or g.gcd(g.derivative()).degree() != 0:
            continue
        powers = [vector(ctx.constant(1))]
        for _ in range(D - 1):
            powers.append(list((M * fmpq_mat([[c] for c in powers[-1]])).entries()))
        P = fmpq_mat(powers).transpose()  # column k: u^k in the quotient
        if P.rank() != D:
            continue
        xs = [fmpq_poly(list(P.solve(fmpq_mat([[c] for c in vector(x)])).entries())) for x in gens]
        return Parametrization(form, g, xs)
    return None


def factor_verdicts(arch: Architecture, point: list[fmpq], basis: Basis, param: Parametrization) -> list[dict]:
    """Which solutions are fiber points, one irreducible factor of ``g`` at a time.

    Substitute ``x_i = p_i(z)`` and expand ``phi_{W(z)} - phi_{W_0}`` in ``Q[z, X]``
    (reduced modulo ``g(z)`` after every layer). The roots of an irreducible factor
    ``g_i`` are conjugate: all are fiber points iff the difference vanishes modulo
    ``g_i``. The fiber meets the slice in exactly ``sum(deg g_i)`` points over the
    factors that pass, irrational ones included.

    Examples
    --------
    A basis with a spurious solution: ``V_2 = (-5, -1)`` (the point itself) and
    ``V_2 = (0, 0)``. Only the factor ``z + 5`` of ``g = z (z + 5)`` is a fiber point.

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import factor_verdicts, parametrize
    >>> arch = Architecture((1, 1, 2), (1, 1), tokens=2)
    >>> point = [1, 2, 1, 1, 2, -5, -1]
    >>> names = ("V2_0_0", "V2_1_0")
    >>> u, v = ring(names).gens()
    >>> basis = groebner([u * (u + 5), 5 * v - u], names, engine="flint")
    >>> factor_verdicts(arch, point, basis, parametrize(basis, random.Random(0)))
    [{'factor': ['0', '1'], 'degree': 1, 'fiber': False}, {'factor': ['5', '1'], 'degree': 1, 'fiber': True}]
    """
    d, t = arch.input_shape
    ring_zx = ring(("z",) + tuple(f"X_{r}_{c}" for r in range(d) for c in range(t)))
    z = ring_zx.gens()[0]
    lift = lambda p: sum((c * z**k for k, c in enumerate(p.coeffs())), ring_zx.constant(0))  # noqa: E731
    g_z = lift(param.g)
    value = {name: lift(p) for name, p in zip(basis.variables, param.x)}
    W = [value.get(n, ring_zx.constant(v)) for n, v in zip(ring_names(arch), point)]
    reduce = np.vectorize(lambda e: divmod(e, g_z)[1], otypes=[object])
    Y = Y0 = object_array(d, t, ring_zx.gens()[1:])
    ops = ExactOps()
    for heads, heads0 in zip(split_heads(arch, W), split_heads(arch, [ring_zx.constant(v) for v in point])):
        Y = reduce(attention(ops, arch, [heads], Y))  # one layer at a time, reduced modulo g
        Y0 = attention(ops, arch, [heads0], Y0)
    diff = [a - b for a, b in zip(Y.ravel(), Y0.ravel())]
    out = []
    for f, _ in param.g.factor()[1]:
        f_z = lift(f)
        ok = all(divmod(e, f_z)[1] == 0 for e in diff)
        out.append({"factor": [str(c) for c in f.coeffs()], "degree": f.degree(), "fiber": ok})
    return out


def rational_solutions(param: Parametrization, keep: list[bool] | None = None) -> list[list[fmpq]]:
    """The solutions with rational coordinates: the roots of the linear factors of ``g``
    (only of the factors flagged in ``keep``, in :func:`factor_verdicts` order, when given).

    Examples
    --------
    >>> import random
    >>> from attngeo.exact.engine import groebner, ring
    >>> from attngeo.geometry.fibers.deep import parametrize, rational_solutions
    >>> x, y = ring(("x", "y")).gens()
    >>> param = parametrize(groebner([x**2 - 1, y**2 - 1], ("x", "y"), engine="flint"), random.Random(0))
    >>> sorted((int(a), int(b)) for a, b in rational_solutions(param))
    [(-1, -1), (-1, 1), (1, -1), (1, 1)]

    Irrational roots are not listed: ``x^2 = 2`` has none rational.

    >>> rational_solutions(parametrize(groebner([x**2 - 2, y - 1], ("x", "y"), engine="flint"), random.Random(0)))
    []
    """
    out = []
    factors = param.g.factor()[1]
    for (f, _), kept in zip(factors, keep if keep is not None else [True] * len(factors)):
        if f.degree() == 1 and kept:
            r = -f.coeffs()[0] / f.coeffs()[1]
            out.append([p(r) for p in param.x])
    return out


def same_function(arch: Architecture, p1: list[fmpq], p2: list[fmpq]) -> bool:
    """``phi_{W_1} = phi_{W_2}`` as polynomials in ``X`` (exact symbolic comparison).

    Examples
    --------
    The scaling ``(Q_1, V_1) -> (2 Q_1, V_1 / 2)`` keeps the function; moving
    one output weight does not.

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import gauge_point, same_function
    >>> arch = Architecture((2, 2, 2), (2, 2), tokens=2)
    >>> p = gauge_point(arch, random.Random(1))
    >>> scaled = [2 * w for w in p[:4]] + p[4:8] + [w / 2 for w in p[8:12]] + p[12:]
    >>> same_function(arch, p, scaled), same_function(arch, p, p[:-1] + [p[-1] + 1])
    (True, False)
    """
    ctx = symbolic_context(arch)
    d, t = arch.input_shape
    X = object_array(d, t, ctx.gens()[arch.parameter_count:])
    ops = ExactOps()
    to = lambda pt: [ctx.constant(v) for v in pt]  # noqa: E731
    Y1 = attention(ops, arch, split_heads(arch, to(p1)), X)
    Y2 = attention(ops, arch, split_heads(arch, to(p2)), X)
    return all(a == b for a, b in zip(Y1.ravel(), Y2.ravel()))


#: The record ``fiber --json`` prints for a deep network (or several heads), whatever the method (docs/fibers.md
#: §6): ``fiber_points`` is the number of symmetry orbits in the fiber (the points a gauge slice meets; a lower
#: bound when ``certified`` is false, null when the system has infinitely many solutions), ``solutions_in_slice``
#: the solutions of the equations solved (elimination: sampled inputs; virtual weights: the fiber points),
#: ``generic`` whether the verdict is proved on a dense open set (null: elimination speaks of its point only),
#: ``engine`` the Gröbner engine (null: none ran).
DEEP_FIBER_KEYS = ("architecture", "certified", "verdict", "components", "fiber_points", "solutions_in_slice",
                   "generic", "method", "engine", "seconds")


@dataclass(repr=False)
class DeepFiber(Result):
    """The fiber of a deep network at a gauge point, as far as elimination settles it.

    ``solutions`` counts the solutions of the sampled system in the slice
    (None: infinitely many); ``extra`` are the rational fiber points besides
    ``W_0``, ``line`` a verified line of the fiber, ``factors`` the verdict on
    each irreducible factor of the eliminant.

    Examples
    --------
    Widths ``1, 1, 2`` (solved by python-flint; larger networks need msolve):
    the fiber is the symmetry orbit, of dimension 5 = ``dim G``. With several
    heads, ``permutations`` counts the head permutations of ``W_0`` in the slice.

    >>> from attngeo import Architecture, deep_fiber
    >>> fib = deep_fiber(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint")
    >>> fib.solutions, fib.certified, fib.fiber_points, fib.extra, fib.line
    (1, True, 1, [], None)
    >>> fib.verdict
    'fiber = symmetry orbit (no hidden continuous or discrete symmetry in the gauge domain)'
    >>> [c["dimension"] for c in fib.components]
    [5]
    """

    arch: Architecture
    point: list[fmpq]
    inputs: list
    basis: Basis
    solutions: int | None  # standard monomials; None = positive-dimensional
    extra: list[list[fmpq]] = field(default_factory=list)  # verified fiber points besides W_0
    line: list[fmpq] | None = None  # a direction v in the slice with phi(W_0 + s v) = phi(W_0) for all s
    factors: list[dict] | None = None  # each irreducible factor of g and whether its roots are fiber points
    param: Parametrization | None = None
    permutations: int = 1  # distinct head permutations of W_0 in the slice (all listed among W_0 and extra)
    attempts: int = 1
    seconds: float = 0.0

    kind = "deep-fiber"

    @property
    def certified(self) -> bool:
        """The slice count is exact (one solution, or every solution verified), or a
        whole line of the fiber inside the slice is verified."""
        if self.solutions is None:
            return self.line is not None
        return self.factors is not None or self.solutions == 1 + len(self.extra)

    @property
    def fiber_points(self) -> int:
        """Points of ``fiber n slice``: exact when certified, else a lower bound."""
        if self.factors is not None:
            return sum(f["degree"] for f in self.factors if f["fiber"])
        return 1 + len(self.extra)

    @property
    def verdict(self) -> str:
        """What the elimination settled, in words: an orbit, a hidden symmetry, or bounds."""
        if self.solutions is None and self.line is not None:
            return "hidden continuous symmetry: a line through W_0 in the gauge slice lies in the fiber"
        if self.solutions is None:
            return "positive-dimensional: the sampled system has infinitely many solutions (not settled)"
        if not self.certified:
            return f"{self.fiber_points} <= |fiber n slice| <= {self.solutions} (extra solutions not all verified)"
        n, k = self.fiber_points, self.permutations
        spurious = f" ({self.solutions - n} other solutions of the sampled system are not fiber points)" if n < self.solutions else ""
        if n == 1:
            return "fiber = symmetry orbit (no hidden continuous or discrete symmetry in the gauge domain)" + spurious
        if n == k:
            return (f"fiber = orbit of the symmetry group and the head permutations (the fiber meets the gauge slice "
                    f"in the {k} re-gauged head permutations of W_0)" + spurious)
        heads = f" ({k} of them head permutations)" if k > 1 else ""
        return f"hidden discrete symmetry: the fiber meets the gauge slice in {n} points{heads}" + spurious

    @property
    def components(self) -> list[dict]:
        """One orbit per fiber point in the slice, each with its exact dimension (or a lower bound)."""
        orbit = orbit_dimension(self.arch, self.point)  # exact; the same along the whole orbit
        if self.solutions is None:
            # the orbits of a line in the slice are distinct (the slice meets each once)
            return [{"dimension": orbit + (self.line is not None), "dimension_is_lower_bound": True,
                     "description": "the component through W_0: the symmetry orbit"
                     + (" swept along a line of the fiber inside the gauge slice" if self.line else "")}]
        k = self.fiber_points
        return [{"dimension": orbit, "description": f"symmetry orbit of solution {i} in the gauge slice"}
                for i in range(k)]

    def summary(self) -> dict:
        """The record ``--json`` prints: verdict, counts, components, engine and method.

        Examples
        --------
        >>> from attngeo import Architecture, deep_fiber
        >>> s = deep_fiber(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint").summary()
        >>> s["solutions_in_slice"], s["fiber_points"], s["engine"], s["generic"]
        (1, 1, 'flint', None)
        >>> sorted(s) == sorted(DEEP_FIBER_KEYS)
        True
        """
        return {  # in the order the certificate keeps (to_json): its bytes do not change
            "architecture": self.arch.to_dict(),
            "components": self.components,
            "certified": self.certified,
            "verdict": self.verdict,
            "solutions_in_slice": self.solutions,
            "fiber_points": self.fiber_points if self.solutions is not None else None,
            "method": f"Gröbner basis over Q in a gauge slice ({self.basis.engine}); "
                      "the inclusion <basis> c <equations> is the engine's",
            "engine": self.basis.engine,
            "seconds": round(self.seconds, 3),
            "generic": None,  # the elimination settles the fiber at its point; genericity is not claimed
        }

    def to_json(self) -> dict:
        """The certificate: point, inputs, basis, parametrization, factor verdicts and the trusted step.

        Examples
        --------
        >>> from attngeo import Architecture, deep_fiber
        >>> cert = deep_fiber(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint").to_json()
        >>> cert["variables"], cert["basis"], cert["point"][-2:]
        (['V2_0_0', 'V2_1_0'], ['V2_1_0 + 1', 'V2_0_0 + 5'], ['-5', '-1'])
        >>> cert["trusted"]
        'the inclusion <basis> c <equations>: computed by flint, replayed by the checker'
        """
        return certificate_json(self.kind, {
            **self.summary(),
            "point": [str(v) for v in self.point],
            "inputs": [[[int(v) for v in row] for row in X] for X in self.inputs],
            "variables": list(self.basis.variables),
            "basis": self.basis.strings(),
            "extra_solutions": [[str(v) for v in s] for s in self.extra],
            "factors": self.factors,
            "parametrization": None if self.param is None else self.param.to_dict(),
            "line": None if self.line is None else {
                "direction": [str(v) for v in self.line],
                "checked_at": list(range(1, line_degree(self.arch) + 2)),
            },
            "trusted": f"the inclusion <basis> c <equations>: computed by {self.basis.engine}, replayed by the checker",
            # [HMK]'s certificates stay byte-identical; the others name their function (see outputs())
            **({} if self.arch.is_plain else {"outputs": outputs(self.arch, self.point, self.inputs)}),
        }, drop=("verdict", "generic"))

    def latex(self) -> str:
        """The fiber near ``W_0`` as a union of orbits of the symmetry group ``G``, in LaTeX.

        Examples
        --------
        >>> from attngeo import Architecture, deep_fiber
        >>> from attngeo.latex import balanced
        >>> tex = deep_fiber(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint").latex()
        >>> "cdot W_{0}" in tex, balanced(tex)
        (True, True)
        """
        return r",\quad ".join(self.latex_parts())

    def latex_parts(self) -> list[str]:
        """The fiber near ``W_0`` and the group ``G``: two LaTeX strings (math), the lines of ``fiber --latex``."""
        group = rf"G = {SymmetryGroup(self.arch).latex()}"
        lhs = r"\varphi^{-1}(\varphi_{W_0}) \cap U"
        if self.certified and self.solutions is not None and self.permutations > 1 \
                and self.fiber_points == self.permutations:
            perms = r" \times ".join(rf"S_{{{h}}}" for h in self.arch.heads if h > 1)
            return [rf"{lhs} = (G \rtimes ({perms})) \cdot W_0", group]
        if self.certified and self.solutions is not None:
            orbits = latex.orbits(self.fiber_points)
            return [rf"{lhs} = {orbits}", group]
        if self.certified:
            return [rf"{lhs} \supsetneq G \cdot W_0\ \text{{(a line of the fiber in the slice)}}", group]
        if self.solutions is None:
            return [rf"{lhs} \supseteq G \cdot W_0\ \text{{(not settled)}}", group]
        return [rf"{1 + len(self.extra)} \le \#({lhs}) / G \le {self.solutions}", group]

    def __str__(self) -> str:
        return f"{self.arch}: {self.verdict} [{self.basis.engine}, {self.seconds:.2f} s]"


def sample_size(arch: Architecture) -> int:
    """The sample inputs of a first attempt: about twice the unknowns of the slice over the outputs of one input.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import sample_size
    >>> sample_size(Architecture((2, 2, 2), (2, 2)))   # 10 unknowns, 4 outputs
    6
    """
    unknowns = arch.parameter_count - len(gauge(arch))
    return max(2, -(-2 * unknowns // (arch.widths[-1] * arch.tokens)) + 1)


def equations_price(arch: Architecture, inputs: int) -> tuple[int, int]:
    """What checking a certificate with these equations costs its polynomial evaluations, and their terms, at most.

    The checker's own price (:func:`attngeo.check.fibers.deep.rebuild_price`, the listed points counted as one
    per head permutation), computed before any polynomial is built: a fiber whose certificate the checker would
    refuse is refused here too, and the bound on the equations' terms sizes their memory.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import equations_price
    >>> equations_price(Architecture((2, 2, 2), (2, 2)), 6)
    (97488, 9600)
    >>> equations_price(Architecture((8, 8, 8, 8), (3, 3, 3)), 24)[0] > 10**30
    True
    """
    perms = 1
    for h in arch.heads:
        perms *= math.factorial(h)
    return rebuild_price(checker_architecture({"kind": "deep-fiber", "architecture": arch.to_dict()}), inputs,
                         points=perms)


def unreplayable(arch: Architecture, inputs: int, free: tuple = (), eqs: list | None = None) -> str:
    """Why the fiber equations of ``inputs`` sample inputs (or, once built, ``eqs`` in ``free``) are beyond what
    ``attngeo check`` rebuilds and replays, or ``''``: the checker's prices, before the work they price.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import unreplayable
    >>> unreplayable(Architecture((2, 2, 2), (2, 2)), 6)
    ''
    >>> unreplayable(Architecture((8, 8), (2,), heads=4), 47)      # doctest: +ELLIPSIS
    'eliminating 364 unknowns is priced at ... CPU seconds of msolve at least, above the 120 s attngeo check replays (docs/trust.md)'
    """
    if eqs is None:
        work, _ = equations_price(arch, inputs)
        unknowns = arch.parameter_count - len(gauge(arch))
        if replay_bound(unknowns, 0, 0) > MAX_REPLAY_SECONDS:  # the variables alone price it beyond the replay
            return (f"eliminating {unknowns} unknowns is priced at {replay_bound(unknowns, 0, 0):.2g} CPU seconds "
                    f"of msolve at least, above the {MAX_REPLAY_SECONDS} s attngeo check replays (docs/trust.md)")
        if work > MAX_REBUILD_WORK:
            return (f"building the fiber equations of {arch} on {inputs} inputs costs about {work:.1e} units, above "
                    f"the {MAX_REBUILD_WORK:.0e} that attngeo check rebuilds (docs/trust.md)")
        return ""
    bound = replay_bound(len(free), max((int(e.total_degree()) for e in eqs), default=0), sum(len(e) for e in eqs))
    if bound > MAX_REPLAY_SECONDS:
        return (f"eliminating {len(free)} unknowns from {len(eqs)} equations is priced at {bound:.2g} CPU seconds of "
                f"msolve, above the {MAX_REPLAY_SECONDS} s attngeo check replays (docs/trust.md)")
    return ""


def deep_fiber(arch: Architecture, seed: int | None = None, engine: str = "auto", inputs: int | None = None,
               timeout: float = 600.0, point=None) -> DeepFiber:
    """Settle the fiber through a random gauge point of ``arch`` by elimination.

    Extra solutions are re-tested with twice the inputs (up to :data:`MAX_RETRIES`
    times) before rational ones are verified exactly as fiber points.

    Parameters
    ----------
    arch : Architecture
        A lightning network with ``t >= 2`` that has a gauge (:func:`gauge`).
    seed : int or None
        Seeds the point, the inputs and the parametrization.
    engine : str
        ``auto`` (msolve when installed), ``msolve``, ``singular``, ``flint`` or ``sympy``.
    inputs : int or None
        Number of sample inputs; by default about twice the unknowns over the outputs.
    timeout : float
        Seconds the engine may take.
    point : list, optional
        Rational weights in the gauge slice instead of a random point (e.g. a special one).

    Returns
    -------
    DeepFiber

    Raises
    ------
    InvalidInputError
        When ``t < 2`` or the architecture has no gauge.
    EngineUnavailable
        When no installed engine reaches the system's size (msolve is then needed).

    Examples
    --------
    >>> from attngeo import Architecture, deep_fiber
    >>> deep_fiber(Architecture((1, 1, 2), (1, 1), tokens=2), seed=0, engine="flint").verdict
    'fiber = symmetry orbit (no hidden continuous or discrete symmetry in the gauge domain)'
    >>> deep_fiber(Architecture((2, 2, 2), (2, 2), tokens=1), seed=1)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: deep fibers need t >= 2 tokens (t = 1 has extra symmetries of A)
    """
    if arch.tokens < 2:
        raise InvalidInputError("deep fibers need t >= 2 tokens (t = 1 has extra symmetries of A)")
    if arch.parameter_count > MAX_VARIABLES:  # before the gauge: 10^8 heads must not be listed first
        raise InvalidInputError(f"{arch} has {arch.parameter_count:,} parameters; fibers by elimination are for at "
                                f"most {MAX_VARIABLES} (the checker's limit): choose a smaller architecture")
    rng = random.Random(seed)
    start = time.perf_counter()
    point = gauge_point(arch, rng) if point is None else _in_slice(arch, point)
    d, t = arch.input_shape
    unknowns = arch.parameter_count - len(gauge(arch))
    n = inputs or sample_size(arch)
    Xs = [[[rng.randint(-3, 3) for _ in range(t)] for _ in range(d)] for _ in range(n)]
    attempts, kept = 0, None
    while True:
        attempts += 1
        # priced before each step, as the checker prices the certificate: the first attempt refuses, a retry
        # that would cost more than the checker pays for keeps the previous (smaller) sample
        why = unreplayable(arch, len(Xs))
        if not why:
            progress.phase("fiber equations", f"{unknowns} unknowns, {len(Xs)} inputs")
            free, eqs = fiber_equations(arch, point, Xs)
            why = unreplayable(arch, len(Xs), free, eqs)
        if why and kept is None:
            raise InvalidInputError(f"{why}: choose a smaller architecture")
        if why:
            Xs, free, eqs, basis, count = kept
            break
        progress.phase("elimination", f"{len(free)} unknowns, {len(eqs)} equations")
        basis = groebner(eqs, free, engine=engine, timeout=timeout)
        count = staircase(basis)
        if count == 1 or attempts > MAX_RETRIES:
            break
        kept = Xs, free, eqs, basis, count
        Xs = Xs + [[[rng.randint(-3, 3) for _ in range(t)] for _ in range(d)] for _ in range(len(Xs))]
    perms = head_permutations(arch, point)
    extra, factors, param = perms[1:], None, None  # fiber points always, whatever the elimination says
    if count is not None:
        param = parametrize(basis, rng)
        if param is not None:
            factors = factor_verdicts(arch, point, basis, param)
            own = [v for nme, v in zip(ring_names(arch), point) if nme in free]
            # the factor verdicts already proved these are fiber points
            found = [_fill(arch, point, free, s)
                     for s in rational_solutions(param, [f["fiber"] for f in factors]) if s != own]
            extra += [p for p in found if p not in extra]
    line = fiber_line(arch, point, free, eqs) if count is None else None
    return DeepFiber(arch, point, Xs, basis, count, extra, line, factors, param, len(perms), attempts,
                     time.perf_counter() - start)


def _in_slice(arch: Architecture, point) -> list[fmpq]:
    """``point`` read exactly, refused unless it lies in the gauge slice (with ``K_ij[0, 0] != 0``)."""
    point = read_point(arch, point)
    fixed = gauge(arch)
    for name, v in zip(arch.variable_names(), point):
        if name in fixed and (v == 0 if fixed[name] is None else v != fixed[name]):
            raise InvalidInputError(f"the point is not in the gauge slice at {name} (docs/fibers.md §3): "
                                    "move it there with the symmetry group first")
    return point


def into_slice(arch: Architecture, point) -> list[fmpq]:
    """``point`` moved into the gauge slice by the symmetry group: a point of the same orbit, so of the same
    function and fiber (docs/fibers.md §3). [HMK]'s model; a point of several heads must lie in the slice already.

    Layer by layer, ``C = Q_i[:, :a_i]^{-1}`` (intra) makes that block ``I``, then ``G = V_i[:, :d_i]^{-1}``
    (inter, hidden widths) makes ``V_i``'s; the scaling needs no move (``K_i[0, 0]`` is free, nonzero).

    Raises
    ------
    InvalidInputError
        When a block is singular or a ``K_i[0, 0]`` is 0 after the move: the point lies outside the open set
        ``U`` the slice meets (named), and elimination does not describe its fiber.

    Examples
    --------
    >>> from attngeo import Architecture, evaluate
    >>> from attngeo.geometry.fibers.deep import gauge, into_slice
    >>> arch = Architecture((2, 2, 2), (1, 1), tokens=2)
    >>> W = [2, 1, 1, 3, 1, 1, 2, -1, 1, 1, 1, 2, 3, 1, 0, 2]
    >>> moved = into_slice(arch, W)
    >>> [moved[i] for i, n in enumerate(arch.variable_names()) if n in gauge(arch) and gauge(arch)[n] is not None]
    [1, 1, 0, 0, 1, 1]
    >>> X = [[1, 2], [3, -1]]
    >>> evaluate(arch, moved, X) == evaluate(arch, W, X)
    True
    """
    from ..symmetry import act

    if not arch.is_plain:
        return _in_slice(arch, point)
    w = read_point(arch, point)
    for i in range(1, arch.depth + 1):
        Q = split_point(arch, w)[i - 1][0]
        a = arch.ranks[i - 1]
        C = fmpq_mat(Q[:, :a].tolist())
        if C.det() == 0:
            raise InvalidInputError(f"Q{i}[:, :{a}] is singular at this point: it lies outside the set the gauge "
                                    "slice meets (docs/fibers.md §3); elimination needs a point where that block "
                                    "is invertible")
        w = act(arch, w, "intra", i, C.inv())
        if i < arch.depth:
            d = arch.widths[i]
            G = fmpq_mat(split_point(arch, w)[i - 1][2][:, :d].tolist())
            if G.det() == 0:
                raise InvalidInputError(f"V{i}[:, :{d}] is singular at this point: it lies outside the set the gauge "
                                        "slice meets (docs/fibers.md §3); elimination needs a point where that "
                                        "block is invertible")
            w = act(arch, w, "inter", i, G.inv())
    for i, (_, K, _) in enumerate(split_point(arch, w), 1):
        if K[0, 0] == 0:
            raise InvalidInputError(f"K{i}[0, 0] is 0 once the point is moved into the gauge slice: it lies outside "
                                    "the set the slice meets (docs/fibers.md §3), where elimination describes the fiber")
    return _in_slice(arch, w)


def line_degree(arch: Architecture) -> int:
    """Degree of ``phi_W`` in ``W``: ``3 deg(previous) + 3`` per layer (3, 12, 39, ...), ``+ 4`` when ``V = O U``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import line_degree
    >>> [line_degree(Architecture((2,) * (l + 1), (1,) * l)) for l in (1, 2, 3)]
    [3, 12, 39]
    """
    deg = 0
    for i in range(arch.depth):  # V Y (Y^T K^T Q Y), and V = O U is one degree more
        deg = 3 * deg + (3 if arch.value_ranks is None else 4)
    return deg


def fiber_line(arch: Architecture, point: list[fmpq], free: tuple, eqs: list) -> list[fmpq] | None:
    """A direction ``v`` (zero on the gauge) with ``phi(W_0 + s v) = phi(W_0)`` for every ``s``, or None.

    Candidates are the kernel vectors of the equations' Jacobian at ``W_0`` (a
    linear symmetry such as ``A_2 -> A_2 + s S`` is its own tangent). A line is
    accepted when the networks agree as polynomials in ``X`` at ``s = 1..D+1``,
    ``D`` = :func:`line_degree`: the difference is a polynomial of degree at most
    ``D`` in ``s``, so ``D + 1`` roots make it zero.

    Examples
    --------
    ``a_1 = 1`` makes the hidden output ``Y_1`` of rank 1, so ``Y_1^T S Y_1 = 0``
    for every skew ``S``: ``K_2 -> K_2 + s S`` is a hidden line of symmetries.

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.deep import fiber_equations, fiber_line, gauge_point
    >>> arch = Architecture((2, 2, 2), (1, 2), tokens=2)
    >>> rng = random.Random(2025)
    >>> point = gauge_point(arch, rng)
    >>> inputs = [[[rng.randint(-3, 3) for _ in range(2)] for _ in range(2)] for _ in range(4)]
    >>> free, eqs = fiber_equations(arch, point, inputs)
    >>> v = fiber_line(arch, point, free, eqs)
    >>> {n: int(x) for n, x in zip(arch.variable_names(), v) if x}
    {'K2_0_1': -1, 'K2_1_0': 1}

    Widths ``1, 1, 2`` have no such line: the equations fix ``V_2``.

    >>> small = Architecture((1, 1, 2), (1, 1), tokens=2)
    >>> p = [1, 2, 1, 1, 2, -5, -1]
    >>> fiber_line(small, p, *fiber_equations(small, p, [[[1, 2]], [[0, 3]]])) is None
    True
    """
    own = [v for n, v in zip(ring_names(arch), point) if n in free]
    rows = [[e.derivative(i)(*own) for i in range(len(free))] for e in eqs]
    if not rows:
        return None
    for v in kernel_over_q(fmpq_mat(rows)):
        if all(same_function(arch, _fill(arch, point, free, [a + s * b for a, b in zip(own, v)]), point)
               for s in range(1, line_degree(arch) + 2)):
            return _fill(arch, [fmpq(0)] * len(point), free, v)
    return None


def _fill(arch: Architecture, point: list[fmpq], free: tuple, values: list[fmpq]) -> list[fmpq]:
    sub = dict(zip(free, values))
    return [sub.get(n, v) for n, v in zip(ring_names(arch), point)]
