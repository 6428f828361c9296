"""Implicit equations of small single-layer neuromanifolds (docs/singular.md §5).

Coordinates (``t >= 2``): ``c_{k,p,mn}`` is the coefficient of ``y_m y_n``
(``m <= n``) in ``F_kp(y) = (V y)_k (A^T y)_p``, i.e. ``V_km A_np + V_kn A_mp``
(``V_km A_mp`` when ``m = n``) — the Gram coordinates of docs/math.md §1.1. The
equations are the elimination ideal ``<c - φ(w)> ∩ Q[c]`` (msolve's two-block
order), with ``w = (A, V)`` when ``a >= d`` and ``w = (Q, K, V)``, ``A = K^T Q``,
otherwise. That ideal is prime (the graph of a polynomial map has coordinate
ring ``Q[w]``), so it *is* ``I(M)``; what is proved about the basis ``G`` the
engine returned:

* ``G ⊆ I(M)``: every ``g(φ(w))`` is the zero polynomial (exact composition);
* ``dim V(G) = dim M`` (leading monomials of the Gröbner basis, and the embedded
  dimension certificate);
* degree by degree ``k <= max deg G``: ``dim Q[c]_k / <G>_k`` (counted from the
  leading monomials) equals the rank, modulo a prime, of the degree-``k``
  monomials evaluated at points of ``M``; as that rank is at most
  ``dim Q[c]_k / I(M)_k``, every equation of ``M`` of degree ``<= max deg G`` lies
  in ``<G>``;
* a hypersurface (one generator, irreducible over Q, codimension 1) generates
  ``I(M)`` outright; otherwise generation in higher degrees rests on the
  elimination, which the checker replays.

A point ``f`` is *smooth* when the Jacobian of ``G`` at ``f`` has rank ``codim M``
(``G ⊆ I(M)`` is all this needs: ``T_f M ⊆ ker J_G(f)``, of dimension ``dim M``).
It is *singular* when the rank is lower, given ``<G> = I(M)``.
"""

from __future__ import annotations

import itertools
import math
import random
import time
from dataclasses import dataclass

import numpy as np
from flint import fmpq, fmpq_mat, nmod_mat

from ... import progress
from ...model.architecture import Architecture
from ..certificate import Result, certificate_json
from ..dimension.dense import certify_dimension
from ...exact.engine import Basis, find_singular, groebner, ring
from ...exceptions import NotCertifiedError
from ...exact.ideal import Ideal, hilbert_numerator, lift, matrix_names, minors, symbolic_matrix
from ...model.layerfunction import single_layer

#: A prime below 2**31: products of two residues fit in int64.
PRIME = 2_147_483_629


def coordinate_names(d: int, dd: int) -> list[str]:
    """``c_k_p_mn`` (1-based), in the order ``k, p, (m <= n)``.

    Examples
    --------
    ``d = 2``, ``d' = 1``: the three coefficients of each of ``F_00`` and ``F_01``.

    >>> from attngeo.geometry.loci.implicit import coordinate_names
    >>> coordinate_names(2, 1)
    ['c_1_1_11', 'c_1_1_12', 'c_1_1_22', 'c_1_2_11', 'c_1_2_12', 'c_1_2_22']
    """
    return [f"c_{k + 1}_{p + 1}_{m + 1}{n + 1}" for k in range(dd) for p in range(d)
            for m in range(d) for n in range(m, d)]


def parameter_names(arch: Architecture) -> list[str]:
    """The parameters eliminated: ``(A, V)`` when ``a >= d``, else ``(Q, K, V)`` (``A = K^T Q``).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.implicit import parameter_names
    >>> parameter_names(Architecture((2, 1), (2,), tokens=2))
    ['A_1_1', 'A_1_2', 'A_2_1', 'A_2_2', 'V_1_1', 'V_1_2']
    >>> parameter_names(Architecture((2, 1), (1,), tokens=2))
    ['Q_1_1', 'Q_1_2', 'K_1_1', 'K_1_2', 'V_1_1', 'V_1_2']
    """
    d, dd = arch.widths
    a = arch.ranks[0]
    blocks = [("A", d, d)] if a >= d else [("Q", a, d), ("K", a, d)]
    return [n for base, r, c in blocks + [("V", dd, d)] for row in matrix_names(base, r, c) for n in row]


def parametrization(arch: Architecture) -> tuple[tuple[str, ...], list]:
    """The parameter names and ``φ(w)``, one polynomial per coordinate.

    Examples
    --------
    ``c_{1,1,12}``, the coefficient of ``y_1 y_2`` in ``F_00 = (V y)_1 (A^T y)_1``, is
    ``V_11 A_21 + V_12 A_11``:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.implicit import parametrization
    >>> names, phi = parametrization(Architecture((2, 1), (2,), tokens=2))
    >>> [str(f) for f in phi[:3]]
    ['A_1_1*V_1_1', 'A_2_1*V_1_1 + A_1_1*V_1_2', 'A_2_1*V_1_2']
    """
    d, dd = arch.widths
    a = arch.ranks[0]
    names = tuple(parameter_names(arch))
    gens = dict(zip(names, ring(names).gens()))
    if a >= d:
        A = [[gens[f"A_{n + 1}_{p + 1}"] for p in range(d)] for n in range(d)]
    else:
        A = [[sum(gens[f"K_{i + 1}_{n + 1}"] * gens[f"Q_{i + 1}_{p + 1}"] for i in range(a)) for p in range(d)]
             for n in range(d)]
    V = [[gens[f"V_{k + 1}_{m + 1}"] for m in range(d)] for k in range(dd)]
    return names, _coordinates(A, V, d, dd)


def _coordinates(A, V, d: int, dd: int) -> list:
    """``c_{k,p,mn} = V_km A_np + V_kn A_mp`` (``V_km A_mp`` when ``m = n``), for any entries (numbers or polynomials)."""
    out = []
    for k in range(dd):
        for p in range(d):
            for m in range(d):
                for n in range(m, d):
                    out.append(V[k][m] * A[n][p] + V[k][n] * A[m][p] if m != n else V[k][m] * A[m][p])
    return out


def staircase_count(leads: list[tuple], nvars: int, k: int, numerator: list[int] | None = None) -> int:
    """Number of degree-``k`` monomials divisible by no leading monomial.

    Read off the Hilbert series ``N(t) / (1 - t)^n`` of the monomial ideal
    (:func:`attngeo.exact.ideal.hilbert_numerator`, or ``numerator`` when already computed):
    ``sum_i N_i C(n - 1 + k - i, n - 1)``; monomials are enumerated only when the series is
    beyond its budget. (The
    enumeration took 4.8 s of the 3,1 ``a = 2`` run; the series takes milliseconds.)

    Examples
    --------
    >>> from attngeo.geometry.loci.implicit import staircase_count
    >>> staircase_count([(2, 0), (0, 2)], 2, 2)     # x^2, y^2 leading: only x y is left
    1
    >>> staircase_count([], 3, 2)                   # no leading monomials: all C(4, 2) = 6
    6
    """
    N = numerator if numerator is not None else hilbert_numerator(leads, nvars) if leads else [1]
    if N is not None:
        return sum(c * math.comb(nvars - 1 + k - i, nvars - 1) for i, c in enumerate(N) if i <= k)
    count = 0
    for combo in itertools.combinations_with_replacement(range(nvars), k):
        e = [0] * nvars
        for i in combo:
            e[i] += 1
        if not any(all(x >= y for x, y in zip(e, lead)) for lead in leads):
            count += 1
    return count


def _multidegree(d: int, dd: int) -> list[tuple]:
    """Torus weights of the coordinates: ``c_{k,p,mn}`` has weight ``(e_k, e_p, e_m + e_n)``."""
    out = []
    for k in range(dd):
        for p in range(d):
            for m in range(d):
                for n in range(m, d):
                    w = [0] * (dd + 2 * d)
                    w[k] += 1
                    w[dd + p] += 1
                    w[dd + d + m] += 1
                    w[dd + d + n] += 1
                    out.append(tuple(w))
    return out


def evaluation_rank(arch: Architecture, k: int, rng: random.Random, extra: int = 8) -> int:
    """Rank mod :data:`PRIME` of the degree-``k`` monomials in ``c`` at random integer points of ``M``.

    A lower bound for ``dim Q[c]_k / I(M)_k``: at integer points a rank mod p is at
    most the rank over Q, which is at most the dimension of the restrictions. The
    torus ``V -> R V D``, ``A -> D A S`` (diagonal ``R, D, S``) preserves ``M``, so
    ``I(M)`` is multigraded by the weights of :func:`_multidegree`: the count is a
    sum of ranks over the weight spaces, small blocks instead of one large matrix.

    Examples
    --------
    ``d = 2``, ``d' = 1``, ``a = 2``: the 6, 21, 56 monomials of degree 1 to 3 are
    independent on ``M``, and exactly one of the 126 quartics vanishes (the
    quartic equation of ``M``).

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.implicit import evaluation_rank
    >>> [evaluation_rank(Architecture((2, 1), (2,), tokens=2), k, random.Random(0)) for k in (1, 2, 3, 4)]
    [6, 21, 56, 125]
    """
    d, dd = arch.widths
    names, phi = parametrization(arch)
    weights = _multidegree(d, dd)
    blocks: dict[tuple, list] = {}
    for combo in itertools.combinations_with_replacement(range(len(phi)), k):
        w = tuple(map(sum, zip(*(weights[i] for i in combo))))
        blocks.setdefault(w, []).append(combo)
    rows = max(len(b) for b in blocks.values()) + extra
    points = [[rng.randint(-10**6, 10**6) for _ in names] for _ in range(rows)]
    values = np.array([[int(f(*w)) % PRIME if f != 0 else 0 for f in phi] for w in points], dtype=np.int64)
    total = 0
    for combos in blocks.values():
        cols = []
        for combo in combos:
            col = np.ones(rows, dtype=np.int64)
            for i in combo:
                col = (col * values[:, i]) % PRIME
            cols.append(col)
        total += nmod_mat(np.array(cols).T.tolist(), PRIME).rank()
    return total


@dataclass(repr=False)
class ImplicitEquations(Result):
    """The implicit equations of a single-layer neuromanifold, with what is proved about them.

    ``hilbert`` lists, degree by degree, the monomials, the staircase of
    ``<G>`` and the rank at points of ``M``; equal counts prove completeness in
    that degree. ``minimal`` is a minimal generating set of ``<G>``, chosen
    among the members of ``G`` (``I(M)`` is homogeneous, so its size in each
    degree is an invariant of ``M``).

    Examples
    --------
    ``d = 2``, ``d' = 1``, ``a = 2``: ``M`` is the hypersurface where the binary
    quadrics ``F_00``, ``F_01`` share a linear factor (``V y``): their
    resultant, a quartic with 7 terms, proved to generate ``I(M)``.

    >>> from attngeo import Architecture, implicit_equations
    >>> eq = implicit_equations(Architecture((2, 1), (2,), tokens=2))
    >>> eq.dimension, eq.codimension, eq.ideal.degrees(), len(eq.equations[0]), eq.irreducible
    (5, 1, [4], 7, True)
    >>> [(h["degree"], h["staircase"], h["rank"]) for h in eq.hilbert]
    [(1, 6, 6), (2, 21, 21), (3, 56, 56), (4, 125, 125)]
    >>> eq.generates, eq.complete_through
    ('proved', 4)
    >>> eq.minimal_generators_by_degree, len(eq.minimal_generators[0])
    ({'4': 1}, 7)
    """

    arch: Architecture
    ideal: Ideal  # generated by the reduced Gröbner basis G
    parameters: tuple[str, ...]
    dimension: int  # dim M, certified
    variety_dimension: int  # dim V(G), from leading monomials
    hilbert: list[dict]  # per degree: monomials, staircase (of <G>), rank at points of M
    irreducible: bool | None  # for one generator: irreducible over Q
    basis: Basis
    dimension_certificate: dict
    seconds: float
    minimal: list  # a minimal generating set of <G>, members of G, by degree

    kind = "implicit"

    @property
    def equations(self) -> list:
        return self.ideal.gens

    @property
    def minimal_generators(self) -> list:
        """A minimal generating set of ``<G>`` (members of ``G``, by degree): what Macaulay2's ``mingens`` counts.

        Examples
        --------
        ``a = 1``: the three quadrics are the 2 x 2 minors of the coefficient
        vectors of ``F_00`` and ``F_01``; none is redundant.

        >>> from attngeo import Architecture, implicit_equations
        >>> [str(g) for g in implicit_equations(Architecture((2, 1), (1,), tokens=2)).minimal_generators][0]
        'c_1_1_22*c_1_2_12 - c_1_1_12*c_1_2_22'
        """
        return self.minimal

    @property
    def minimal_generators_by_degree(self) -> dict[str, int]:
        """How many minimal generators each degree has (degree as a string key, as in JSON).

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> implicit_equations(Architecture((2, 1), (1,), tokens=2)).minimal_generators_by_degree
        {'2': 3}
        """
        counts: dict[str, int] = {}
        for g in self.minimal:
            counts[str(int(g.total_degree()))] = counts.get(str(int(g.total_degree())), 0) + 1
        return counts

    @property
    def codimension(self) -> int:
        """``codim M`` in the coordinates ``c``."""
        return len(self.ideal.variables) - self.dimension

    @property
    def generates(self) -> str:
        """``proved`` (a certified hypersurface, or ``M`` dense: no equation) or ``elimination`` (rests on the engine)."""
        dense = self.codimension == 0 and not self.equations  # dim M = number of coordinates: I(M) = 0
        return "proved" if (self.irreducible and self.codimension == 1) or dense else "elimination"

    @property
    def complete_through(self) -> int:
        """Every equation of M of degree at most this lies in ``<G>`` (proved by Hilbert-function counts)."""
        k = 0
        for h in self.hilbert:
            if h["staircase"] != h["rank"]:
                break
            k = h["degree"]
        return k

    def summary(self) -> dict:
        """The record ``--json`` prints: dimensions, degrees and terms of the generators, what is proved.

        Examples
        --------
        ``a = 1``: three quadrics cut out the codimension-2 ``M``; generation
        beyond degree 2 rests on the elimination.

        >>> from attngeo import Architecture, implicit_equations
        >>> s = implicit_equations(Architecture((2, 1), (1,), tokens=2)).summary()
        >>> s["codimension"], s["degrees"], s["generates"], s["complete_through_degree"]
        (2, [2, 2, 2], 'elimination', 2)
        >>> s["minimal_generators_by_degree"], s["degree"]      # a cone over the Segre P^1 x P^2, of degree 3
        ({'2': 3}, 3)
        """
        return {"architecture": self.arch.to_dict(), "coordinates": list(self.ideal.variables),
                "dimension": self.dimension, "codimension": self.codimension,
                "generators": len(self.equations), "degrees": self.ideal.degrees(),
                "terms": [len(g) for g in self.equations], "generates": self.generates,
                "complete_through_degree": self.complete_through, "degree": self.ideal.degree(),
                "minimal_generators_by_degree": self.minimal_generators_by_degree,
                "minimal_generators": [str(g) for g in self.minimal],
                "engine": self.basis.engine, "seconds": round(self.seconds, 3)}

    def to_sympy(self) -> list:
        """The equations as SymPy expressions in the coordinates ``c_k_p_mn``."""
        return self.ideal.to_sympy()

    def equations_latex(self) -> list[str]:
        """One LaTeX string (math) per generator of the reduced Gröbner basis ``G``.

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> tex, = implicit_equations(Architecture((2, 1), (2,), tokens=2)).equations_latex()
        >>> tex.startswith("c_{1,1,22}^{2} c_{1,2,11}^{2}")
        True
        """
        return self.ideal.latex_parts()

    def minimal_ideal(self) -> Ideal:
        """``I(M)`` generated by its minimal generators (the ideal ``--export`` writes: the same ideal as ``<G>``).

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> eq = implicit_equations(Architecture((2, 2), (2,), tokens=2))
        >>> len(eq.equations), len(eq.minimal_ideal().gens)
        (39, 15)
        """
        return Ideal(self.minimal, self.ideal.variables)

    def latex_parts(self) -> list[str]:
        """One LaTeX string (math) per minimal generator: the pieces of :meth:`latex`.

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> eq = implicit_equations(Architecture((2, 1), (2,), tokens=2))
        >>> eq.latex_parts() == eq.equations_latex()     # one quartic: G is minimal already
        True
        """
        return self.minimal_ideal().latex_parts()

    def latex(self) -> str:
        """``I(M)`` as one LaTeX string (math), by all its minimal generators.

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> from attngeo.latex import balanced
        >>> eq = implicit_equations(Architecture((2, 1), (1,), tokens=2))
        >>> tex = eq.latex()
        >>> "langle" in tex, all(g in tex for g in eq.latex_parts()), balanced(tex)
        (True, True, True)
        """
        return self.minimal_ideal().latex()

    def _repr_latex_(self) -> str:
        return self.minimal_ideal()._repr_latex_()  # at most Ideal.SHOWN generators: a notebook cell stays small

    def to_json(self) -> dict:
        """The certificate: the equations, the Hilbert counts and the embedded dimension certificate.

        Examples
        --------
        The checker composes the equations with its own parametrization and
        replays the elimination.

        >>> from attngeo import Architecture, check_certificate, implicit_equations
        >>> cert = implicit_equations(Architecture((2, 1), (2,), tokens=2)).to_json()
        >>> cert["parameters"], cert["irreducible"]
        (['A_1_1', 'A_1_2', 'A_2_1', 'A_2_2', 'V_1_1', 'V_1_2'], True)
        >>> check_certificate(cert).claim  # doctest: +ELLIPSIS
        'implicit equations of M (widths 2,1, rank 2): 1 generator, dim 5, ...: generates I(M); minimal generators: 1 of degree 4'
        """
        return certificate_json(self.kind, {
            **self.summary(), "parameters": list(self.parameters), "equations": [str(g) for g in self.equations],
            "variety_dimension": self.variety_dimension, "hilbert": self.hilbert, "irreducible": self.irreducible,
            "dimension_certificate": self.dimension_certificate})

    def jacobian_rank(self, point: dict | list) -> int:
        """Exact rank of the Jacobian of ``G`` at a point (coordinate values, in coordinate order).

        ``point`` is a list in coordinate order or a dict from coordinate name to value.

        Examples
        --------
        >>> from attngeo import Architecture, implicit_equations
        >>> from attngeo.geometry.loci.implicit import coordinates_of
        >>> arch = Architecture((2, 1), (2,), tokens=2)
        >>> eq = implicit_equations(arch)
        >>> eq.jacobian_rank(coordinates_of(arch, [[[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[1, 1]]]]))
        1
        >>> eq.jacobian_rank({name: 0 for name in eq.ideal.variables})     # a quartic: singular at 0
        0
        """
        values = [fmpq(point[n]) for n in self.ideal.variables] if isinstance(point, dict) else [fmpq(x) for x in point]
        J = [[g.derivative(i)(*values) for i in range(len(values))] for g in self.equations]
        return fmpq_mat(J).rank() if J else 0

    def singular_locus(self, max_minors: int = 5_000) -> Ideal:
        """``Sing M = V(I(M) + I_c(J_G))`` (Jacobian criterion, ``c = codim M``), as an ideal.

        Exact when ``<G> = I(M)`` (proved for hypersurfaces, else msolve's
        elimination). Refused when the ``c``-minors of the Jacobian are more than
        ``max_minors``.

        Raises
        ------
        NotCertifiedError
            When the Jacobian has more than ``max_minors`` minors of size ``codim M``.

        Examples
        --------
        The quartic hypersurface of ``d = 2``, ``d' = 1``, ``a = 2`` is singular
        along a 4-dimensional locus, which contains 0.

        >>> from attngeo import Architecture, implicit_equations
        >>> sing = implicit_equations(Architecture((2, 1), (2,), tokens=2)).singular_locus()
        >>> sing.dimension(), all(g(0, 0, 0, 0, 0, 0) == 0 for g in sing.gens)
        (4, True)
        """
        from ...exact.ideal import minors

        c, n = self.codimension, len(self.ideal.variables)
        count = math.comb(len(self.equations), c) * math.comb(n, c)
        if count > max_minors:
            raise NotCertifiedError(f"the Jacobian has {count} minors of size codim M = {c}; "
                                    f"beyond max_minors = {max_minors}")
        J = [[g.derivative(i) for i in range(n)] for g in self.equations]
        return (self.ideal + Ideal(minors(J, c), self.ideal.variables)).reduced()

    def point_verdict(self, coordinates) -> str:
        """``smooth`` (proved), ``singular`` (given ``<G> = I(M)``), or ``not on M``.

        Examples
        --------
        ``F = (y_0^2, y_1^2)``: the two quadrics share no factor, so it is not on ``M``.

        >>> from attngeo import Architecture, implicit_equations
        >>> from attngeo.geometry.loci.implicit import coordinates_of
        >>> arch = Architecture((2, 1), (2,), tokens=2)
        >>> eq = implicit_equations(arch)
        >>> eq.point_verdict([1, 0, 0, 0, 0, 1])
        'not on M'
        >>> eq.point_verdict(coordinates_of(arch, [[[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[1, 1]]]]))
        'smooth'
        >>> eq.point_verdict([0] * 6)
        'singular'
        """
        values = [fmpq(x) for x in coordinates]
        if any(g(*values) != 0 for g in self.equations):
            return "not on M"
        return "smooth" if self.jacobian_rank(values) == self.codimension else "singular"

    def __str__(self) -> str:
        s = self.summary()
        degrees = sorted(set(s["degrees"]))
        span = "" if not degrees else f" of degree {degrees[0]}" if len(degrees) == 1 \
            else f" of degree {degrees[0]}..{degrees[-1]}"
        plural = "s" * (s["generators"] != 1)
        minimal = ", ".join(f"{n} of degree {k}" for k, n in s["minimal_generators_by_degree"].items())
        return (f"implicit equations of {self.arch}: {s['generators']} generator{plural}{span} "
                f"in {len(self.ideal.variables)} coordinates (dim M = {self.dimension}, codim {self.codimension}, "
                f"degree {s['degree']}); minimal generators: {minimal or 'none'}")


def coordinates_of(arch: Architecture, weights) -> list[fmpq]:
    """The coordinates ``c`` of the function computed by single-layer weights.

    Examples
    --------
    ``Q = I``, ``K = (1 2; 3 4)``, so ``A = K^T Q = (1 3; 2 4)``, and ``V = (1 1)``:
    ``F_00 = (y_0 + y_1)(y_0 + 2 y_1)``, ``F_01 = (y_0 + y_1)(3 y_0 + 4 y_1)``.

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.implicit import coordinates_of
    >>> [int(c) for c in coordinates_of(Architecture((2, 1), (2,), tokens=2), [[[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[1, 1]]]])]
    [1, 3, 2, 3, 7, 4]
    """
    from ...model.layerfunction import mat_rows, weights_AV

    A, V = weights_AV(arch, weights)
    d, dd = arch.widths
    return _coordinates(mat_rows(A), mat_rows(V), d, dd)


def elimination_size(arch: Architecture) -> int:
    """Number of variables eliminated: the entries of ``A`` and ``V``.

    >>> elimination_size(Architecture((3, 1), (2,), tokens=2))   # 9 entries of A, 3 of V
    12
    """
    d, dd = arch.widths
    return d * d + dd * d


def elimination_system(arch: Architecture) -> tuple[list, tuple[str, ...]]:
    """``(equations, variables)`` whose elimination of ``(A, V)`` is ``I(M)``: ``c = F(A, V)`` and, when
    ``a < d``, the ``(a+1)``-minors of ``A``.

    ``M`` is the image of ``{rank A <= a} x C^{d' x d}``, whose ideal ``I_{a+1}(A)`` is prime,
    so this is the same elimination ideal as over ``(Q, K, V)`` with ``A = K^T Q`` — with
    ``d^2`` unknowns instead of ``2ad`` and, measured, far cheaper: widths 3,1, ``a = 2``
    eliminates in about 30 s and 1 GB here, where ``(Q, K, V)`` ran past 23 GB.

    >>> eqs, variables = elimination_system(Architecture((3, 1), (1,), tokens=2))
    >>> len(eqs), len(variables)   # 18 coordinates + the 2x2 minors of a 3x3 A
    (27, 30)
    """
    d, dd = arch.widths
    a = arch.ranks[0]
    names, phi = parametrization(Architecture((d, dd), (d,), tokens=arch.tokens))  # A, V
    variables = names + tuple(coordinate_names(d, dd))
    R = ring(variables)
    eqs = [c - lift(f, variables) for c, f in zip(R.gens()[len(names):], phi)]
    if a < d:
        eqs += minors(symbolic_matrix(R, "A", d, d), a + 1)
    return eqs, variables


def memory_estimate(arch: Architecture, max_monomials: int = 20_000) -> int:
    """Bytes :func:`implicit_equations` needs at least: an engine's floor plus attngeo's Hilbert-count tables.

    The elimination's own peak cannot be read off the system (3,1 ``a = 1`` and
    ``a = 2`` have the same 30 variables; msolve took 49 MiB and 1 GiB), so the
    engine runs under the memory budget and stops with a message when over it;
    this estimate refuses what cannot fit at all before anything starts.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.implicit import memory_estimate
    >>> 32 * 2**20 < memory_estimate(Architecture((2, 1), (2,), tokens=2)) < 64 * 2**20
    True
    """
    from ...exact.engine import ENGINE_FLOOR_MB

    single_layer(arch, "implicit_equations")  # the same refusal as the computation's, before any estimate
    d, dd = arch.widths
    n = dd * d * d * (d + 1) // 2
    tables, k = 0, 1
    while math.comb(n + k - 1, k) <= max_monomials and k <= 64:
        # one tuple per monomial (56 + 8 k bytes) and its int64 column of evaluations
        tables = max(tables, math.comb(n + k - 1, k) * (56 + 8 * k + 8 * 64))
        k += 1
    return ENGINE_FLOOR_MB * 2**20 + tables


def implicit_equations(arch: Architecture, engine: str = "auto", timeout: float = 600.0,
                       seed: int | None = 0, max_monomials: int = 20_000) -> ImplicitEquations:
    """The implicit equations of ``M`` for a single layer (``t >= 2``), by elimination.

    Parameters
    ----------
    arch : Architecture
        A single lightning layer, ``t >= 2``.
    engine : str
        ``auto`` (Singular when installed, else msolve: on these systems Singular
        eliminated 3,1 ``a = 2`` in 5 s and 42 MB, msolve in 10 s and 1 GB,
        docs/engines.md), ``msolve`` or ``singular``; python-flint reaches only
        ``d = d' = 1`` (at most 6 variables).
    timeout : float
        Seconds the engine may take.
    seed : int or None
        Seeds the evaluation points and the dimension certificate.
    max_monomials : int
        The Hilbert counts stop at the first degree with more monomials.

    Returns
    -------
    ImplicitEquations

    Raises
    ------
    EngineUnavailable
        When no installed engine reaches the system (install msolve).
    InvalidInputError
        For a deep or normalized architecture, or ``t = 1``.

    Examples
    --------
    >>> from attngeo import Architecture, implicit_equations
    >>> eq = implicit_equations(Architecture((2, 1), (2,), tokens=2))
    >>> eq.summary()["degrees"], eq.generates
    ([4], 'proved')
    """
    single_layer(arch, "implicit_equations")
    start = time.perf_counter()
    rng = random.Random(seed)
    d, dd = arch.widths
    coords = coordinate_names(d, dd)
    names, phi = parametrization(arch)
    if engine == "auto" and find_singular():
        engine = "singular"
    progress.phase("elimination", f"{engine}, {len(coords)} coordinates")
    basis = groebner(*elimination_system(arch), engine, timeout, eliminate=elimination_size(arch))
    ideal = Ideal.from_basis(basis)
    for g in ideal.gens:  # G ⊆ I(M), exactly
        if g.compose(*phi, ctx=ring(names)) != 0:
            raise AssertionError("an eliminated equation does not vanish on the parametrization")
    dim_cert = certify_dimension(arch, seed=seed)
    var_dim = ideal.dimension()
    leads = [g.monoms()[0] for g in ideal.gens]
    numerator = hilbert_numerator(leads, len(coords)) if leads else [1]  # once: every degree reads it
    hilbert = []
    progress.phase("Hilbert counts", f"{len(ideal.gens)} generators")
    for k in range(1, max(ideal.degrees(), default=0) + 1):
        monomials = math.comb(len(coords) + k - 1, k)
        if monomials > max_monomials:
            break  # the count is then reported as stopping below the top degree
        hilbert.append({"degree": k, "monomials": monomials,
                        "staircase": staircase_count(leads, len(coords), k, numerator),
                        "rank": evaluation_rank(arch, k, rng)})
    irreducible = None
    if len(ideal.gens) == 1:
        factors = ideal.gens[0].factor()[1]
        irreducible = len(factors) == 1 and factors[0][1] == 1
    # I(M) is homogeneous for the torus weights (c - φ(w) and the minors of A are), so G is too
    progress.phase("minimal generators")
    minimal = ideal.minimal_generators(_multidegree(d, dd))
    return ImplicitEquations(arch, ideal, names, dim_cert.dimension, var_dim, hilbert, irreducible, basis,
                             dim_cert.to_json(), time.perf_counter() - start, minimal)


def implicit_equations_if_available(arch: Architecture, seed: int | None = 0) -> ImplicitEquations | None:
    """:func:`implicit_equations`, or None when no installed engine can eliminate at this size.

    For proof scripts that use the equations only to decide more points: without
    msolve they still run, and those points stay undecided.

    Examples
    --------
    ``a = d' = 1``: the tangent criteria leave the point undecided; the
    equations prove it smooth.

    >>> from attngeo import Architecture, is_singular
    >>> from attngeo.geometry.loci.implicit import implicit_equations_if_available
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> eq = implicit_equations_if_available(arch)
    >>> W = [[[[1, 2]], [[3, 5]], [[1, 1]]]]
    >>> is_singular(arch, W).verdict, is_singular(arch, W, equations=eq).verdict
    ('undecided', 'smooth')
    """
    from ...exact.engine import EngineUnavailable

    try:
        return implicit_equations(arch, seed=seed)
    except EngineUnavailable:
        return None
