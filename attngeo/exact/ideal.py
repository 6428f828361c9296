"""Polynomial ideals over Q: determinantal ideals and the operations singular loci need.

An :class:`Ideal` is a list of generators in a named polynomial ring. Sums and
products are formed on generators; intersections, saturations and elimination go
through one Gröbner basis computation of :func:`attngeo.exact.engine.groebner` (msolve's
two-block elimination order; Singular, python-flint or sympy as the engine
argument says) using the textbook reductions:

* ``I ∩ J = (t I + (1 - t) J) ∩ Q[x]``;
* ``I : g^∞ = (I + (1 - s g)) ∩ Q[x]`` and ``I : J^∞ = ∩_g I : g^∞`` over generators;
* elimination = the basis of the first block in an elimination order.

Membership and equality are decided by normal forms against a reduced basis, so
two engines' answers can be compared exactly.
"""

from __future__ import annotations

import itertools
import math

from flint import fmpq, fmpz_mat

from .. import latex
from .engine import ENGINES, Basis, groebner, normal_form, ring
from ..exceptions import InvalidInputError, NotCertifiedError


def matrix_names(base: str, rows: int, cols: int) -> list[list[str]]:
    """Names ``base_i_j`` (1-based) of a symbolic ``rows x cols`` matrix.

    Examples
    --------
    >>> matrix_names("A", 2, 3)
    [['A_1_1', 'A_1_2', 'A_1_3'], ['A_2_1', 'A_2_2', 'A_2_3']]
    """
    return [[f"{base}_{i + 1}_{j + 1}" for j in range(cols)] for i in range(rows)]


def symbolic_matrix(ctx, base: str, rows: int, cols: int) -> list[list]:
    """The generators of ``ctx`` named ``base_i_j``, as a matrix (list of rows).

    Raises
    ------
    InvalidInputError
        When ``ctx`` lacks one of the names.

    Examples
    --------
    >>> R = ring(("A_1_1", "A_1_2", "A_2_1", "A_2_2"))
    >>> symbolic_matrix(R, "A", 2, 2)
    [[A_1_1, A_1_2], [A_2_1, A_2_2]]
    >>> symbolic_matrix(R, "V", 1, 2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the ring has no variable 'V_1_1' for matrix V
    """
    gens = dict(zip(ctx.names(), ctx.gens()))
    try:
        return [[gens[n] for n in row] for row in matrix_names(base, rows, cols)]
    except KeyError as exc:
        raise InvalidInputError(f"the ring has no variable {exc.args[0]!r} for matrix {base}") from None


def minors(M: list[list], r: int) -> list:
    """All ``r x r`` minors of a matrix of polynomials (Laplace expansion, memoized).

    Minors are listed by row subsets, then column subsets, each in
    lexicographic order: ``C(rows, r) * C(cols, r)`` of them.

    Raises
    ------
    InvalidInputError
        When ``r`` is not between 1 and ``min(rows, cols)``.

    Examples
    --------
    >>> R = ring([n for row in matrix_names("A", 2, 3) for n in row])
    >>> M = symbolic_matrix(R, "A", 2, 3)
    >>> [str(m) for m in minors(M, 2)]
    ['-A_1_2*A_2_1 + A_1_1*A_2_2', '-A_1_3*A_2_1 + A_1_1*A_2_3', '-A_1_3*A_2_2 + A_1_2*A_2_3']
    >>> minors(M, 3)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: minor size 3 must be between 1 and 2 for a 2x3 matrix
    """
    rows, cols = len(M), len(M[0]) if M else 0
    if not 1 <= r <= min(rows, cols):
        raise InvalidInputError(f"minor size {r} must be between 1 and {min(rows, cols)} for a {rows}x{cols} matrix")
    memo: dict = {}

    def det(rs: tuple, cs: tuple):
        if len(rs) == 1:
            return M[rs[0]][cs[0]]
        key = (rs, cs)
        if key not in memo:
            total = 0
            for j, c in enumerate(cs):
                entry = M[rs[0]][c]
                if entry != 0:
                    term = entry * det(rs[1:], cs[:j] + cs[j + 1:])
                    total = total + term if j % 2 == 0 else total - term
            memo[key] = total
        return memo[key]

    return [det(rs, cs) for rs in itertools.combinations(range(rows), r) for cs in itertools.combinations(range(cols), r)]


def lift(g, variables):
    """``g`` (a polynomial over fewer or reordered variables, or a rational) in ``ring(variables)``.

    Variables are matched by name.

    Raises
    ------
    InvalidInputError
        When ``g`` uses a variable outside ``variables``.

    Examples
    --------
    >>> x, y = ring(("x", "y")).gens()
    >>> g = lift(x * y**2, ("y", "z", "x"))
    >>> g.context().names(), g.degrees()               # degrees in y, z, x
    (('y', 'z', 'x'), (2, 0, 1))
    >>> lift(x, ("y",))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: a polynomial uses variables ('x', 'y') outside ('y',)
    """
    ctx = ring(variables)
    variables = tuple(variables)
    if not hasattr(g, "context"):  # a rational constant (e.g. a minor of constant entries)
        return ctx.constant(g)
    names = g.context().names()
    if names == variables:
        return g
    try:
        where = [variables.index(n) for n in names]
    except ValueError:
        raise InvalidInputError(f"a polynomial uses variables {names} outside {variables}") from None
    out = {}
    for exps, c in g.to_dict().items():
        full = [0] * len(variables)
        for i, e in zip(where, exps):
            full[i] = e
        out[tuple(full)] = c
    return ctx.from_dict(out)


class Ideal:
    """An ideal of ``Q[variables]`` given by generators.

    ``+`` and ``*`` are the sum and product of ideals (in the same ring);
    ``<=`` is inclusion (every generator a member) and ``==`` compares reduced
    bases, both with the default engine. Each Gröbner basis is computed once per engine and kept.

    Parameters
    ----------
    gens : list
        Polynomials (python-flint, over fewer or reordered variables is fine) or rational constants;
        zeros are dropped.
    variables : sequence of str
        The ring's variables, without repeats.

    Raises
    ------
    InvalidInputError
        Repeated variable names, or a generator using a variable outside ``variables``.

    Examples
    --------
    >>> I = determinantal_ideal("A", 2, 2, 2)          # det A
    >>> J = determinantal_ideal("A", 2, 2, 1)          # all entries
    >>> J.contains(I.gens[0], "flint") and not I.contains(J.gens[0], "flint")
    True
    >>> I.dimension("flint"), J.dimension("flint")   # {det A = 0} is a hypersurface, {A = 0} a point
    (3, 0)
    >>> x, y = ring(("x", "y")).gens()
    >>> Ideal([x, y], ("x", "x"))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: repeated variable names in ('x', 'x')
    """

    def __init__(self, gens, variables):
        self.variables = tuple(variables)
        if len(set(self.variables)) != len(self.variables):
            raise InvalidInputError(f"repeated variable names in {self.variables}")
        self.ctx = ring(self.variables)
        self.gens = [self._lift(g) for g in gens]
        self.gens = [g for g in self.gens if g != 0]
        self._bases: dict[str, Basis] = {}

    @classmethod
    def from_basis(cls, basis: Basis) -> "Ideal":
        """The ideal generated by a reduced Gröbner basis, which it keeps (no engine runs again).

        A reduced basis depends only on the ideal, so it serves every engine's requests.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> basis = groebner([x**2 - y, x * y], ("x", "y"), engine="flint")
        >>> I = Ideal.from_basis(basis)
        >>> I.gens == basis.polys, I.groebner("msolve") is basis, I.dimension()
        (True, True, 0)
        """
        ideal = cls(basis.polys, basis.variables)
        for engine in ENGINES:
            ideal._bases[engine] = basis
        return ideal

    def _lift(self, g):
        return lift(g, self.variables)

    def _same_ring(self, other: "Ideal") -> None:
        if other.variables != self.variables:
            raise InvalidInputError(f"ideals live in different rings: {self.variables} vs {other.variables}")

    # -- operations on generators ------------------------------------------------------------

    def __add__(self, other: "Ideal") -> "Ideal":
        self._same_ring(other)
        return Ideal(self.gens + other.gens, self.variables)

    def __mul__(self, other: "Ideal") -> "Ideal":
        self._same_ring(other)
        return Ideal([f * g for f in self.gens for g in other.gens], self.variables)

    def pullback(self, substitution: dict, variables) -> "Ideal":
        """The ideal generated by the generators with each variable replaced by a polynomial.

        ``substitution`` maps every variable name of this ring to a polynomial in
        ``ring(variables)`` (or a rational constant).

        Raises
        ------
        InvalidInputError
            When a variable of this ring has no value.

        Examples
        --------
        Along ``A = k^T q`` (``q, k`` of size ``1 x 2``) the determinant vanishes
        identically, and ``A = 0`` pulls back to ``{q = 0} ∪ {k = 0}``, of dimension 2:

        >>> R = ring(("q_1", "q_2", "k_1", "k_2"))
        >>> q1, q2, k1, k2 = R.gens()
        >>> A = {"A_1_1": k1 * q1, "A_1_2": k1 * q2, "A_2_1": k2 * q1, "A_2_2": k2 * q2}
        >>> determinantal_ideal("A", 2, 2, 2).pullback(A, R.names()).gens
        []
        >>> zero = determinantal_ideal("A", 2, 2, 1).pullback(A, R.names())
        >>> [str(g) for g in zero.gens], zero.dimension("flint")
        (['q_1*k_1', 'q_2*k_1', 'q_1*k_2', 'q_2*k_2'], 2)
        """
        target = ring(variables)
        missing = [n for n in self.variables if n not in substitution]
        if missing:
            raise InvalidInputError(f"pullback needs a value for every variable; missing {missing}")
        images = [target.from_dict(p.to_dict()) if hasattr(p, "to_dict") else target.constant(p)
                  for p in (substitution[n] for n in self.variables)]
        return Ideal([g.compose(*images, ctx=target) for g in self.gens], variables)

    # -- Gröbner-basis operations ------------------------------------------------------------

    def groebner(self, engine: str = "auto") -> Basis:
        """The reduced degrevlex Gröbner basis (:func:`attngeo.exact.engine.groebner`), computed once per engine.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> Ideal([x**2 - y, x * y], ("x", "y")).groebner("flint").strings()
        ['y^2', 'x*y', 'x^2 - y']
        """
        if engine not in self._bases:
            self._bases[engine] = groebner(self.gens, self.variables, engine) if self.gens \
                else Basis(self.variables, [], "none", 0.0)
        return self._bases[engine]

    def reduced(self, engine: str = "auto") -> "Ideal":
        """The same ideal, generated by its reduced Gröbner basis.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> I = Ideal([x**2 - y, x * y], ("x", "y"))
        >>> R = I.reduced("flint")
        >>> R.gens[0] == y**2, all(I.contains(g, "flint") for g in R.gens)   # y^2 = x (x y) - y (x^2 - y)
        (True, True)
        """
        return Ideal(self.groebner(engine).polys, self.variables)

    def contains(self, f, engine: str = "auto") -> bool:
        """Ideal membership of the polynomial ``f``: its normal form is zero.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> I = Ideal([x**2 + y**2 - 2, x - y], ("x", "y"))      # the points ±(1, 1)
        >>> I.contains(x * y - 1, "flint"), I.contains(x - 1, "flint")
        (True, False)
        """
        basis = self.groebner(engine).polys
        return normal_form(self._lift(f), basis) == 0 if basis else self._lift(f) == 0

    def __le__(self, other: "Ideal") -> bool:
        self._same_ring(other)
        return all(other.contains(g) for g in self.gens)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Ideal) or other.variables != self.variables:
            return NotImplemented
        return self.groebner().strings() == other.groebner().strings()

    __hash__ = None

    def is_unit(self, engine: str = "auto") -> bool:
        """True when ``1`` is in the ideal: its variety is empty, even over C.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> Ideal([x, x - 1], ("x", "y")).is_unit("flint"), Ideal([x, y], ("x", "y")).is_unit("flint")
        (True, False)
        """
        return self.groebner(engine).is_unit()

    def eliminate(self, names, engine: str = "auto") -> "Ideal":
        """``I ∩ Q[remaining variables]``: the closure of the projection forgetting ``names``.

        Raises
        ------
        InvalidInputError
            When a name is not a variable of this ring.

        Examples
        --------
        The twisted cubic ``t -> (t, t^2, t^3)``, implicitly:

        >>> t, x, y, z = ring(("t", "x", "y", "z")).gens()
        >>> curve = Ideal([x - t, y - t**2, z - t**3], ("t", "x", "y", "z")).eliminate(["t"], "flint")
        >>> curve.variables, [str(g) for g in curve.gens], curve.dimension("flint")
        (('x', 'y', 'z'), ['y^2 - x*z', 'x*y - z', 'x^2 - y'], 1)
        """
        names = list(names)
        unknown = [n for n in names if n not in self.variables]
        if unknown:
            raise InvalidInputError(f"cannot eliminate {unknown}: not variables of this ring {self.variables}")
        order = names + [v for v in self.variables if v not in names]
        basis = groebner(self.gens, order, engine, eliminate=len(names))
        return Ideal(basis.polys, basis.variables)

    def _with_fresh(self, name: str) -> tuple[tuple, object]:
        fresh = name
        while fresh in self.variables:
            fresh += "_"
        return (fresh,) + self.variables, ring((fresh,) + self.variables).gens()[0]

    def intersect(self, other: "Ideal", engine: str = "auto") -> "Ideal":
        """``I ∩ J`` (the union of the varieties), as ``(t I + (1 - t) J) ∩ Q[x]``.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> X, Y = Ideal([x], ("x", "y")), Ideal([y], ("x", "y"))
        >>> X.intersect(Y, "flint").gens == [x * y]     # the two axes
        True
        """
        self._same_ring(other)
        names, t = self._with_fresh("t")
        gens = [t * lift(f, names) for f in self.gens] + [(1 - t) * lift(g, names) for g in other.gens]
        return Ideal(gens, names).eliminate([names[0]], engine)

    def saturate(self, other: "Ideal", engine: str = "auto") -> "Ideal":
        """``I : J^∞`` (the closure of ``V(I)`` minus ``V(J)``).

        Examples
        --------
        Removing the line ``x = 0`` from ``x^2 y = 0`` leaves the line ``y = 0``:

        >>> x, y = ring(("x", "y")).gens()
        >>> Ideal([x**2 * y], ("x", "y")).saturate(Ideal([x], ("x", "y")), "flint").gens == [y]
        True
        """
        self._same_ring(other)
        if not other.gens:
            return self
        out = None
        names, s = self._with_fresh("s")
        for g in other.gens:
            part = Ideal([lift(f, names) for f in self.gens] + [1 - s * lift(g, names)], names)
            part = part.eliminate([names[0]], engine)
            out = part if out is None else out.intersect(part, engine)
        return out

    # -- invariants --------------------------------------------------------------------------

    def dimension(self, engine: str = "auto") -> int:
        """Krull dimension of ``Q[x]/I`` (-1 for the unit ideal), from the leading monomials.

        ``dim = n - (least number of variables meeting the support of every
        leading monomial)``, a small hitting-set search.

        Examples
        --------
        ``2 x 3`` matrices of rank at most 1 form a variety of dimension ``2 + 3 - 1``:

        >>> determinantal_ideal("A", 2, 3, 2).dimension("flint")
        4
        >>> x, y = ring(("x", "y")).gens()
        >>> Ideal([x, x - 1], ("x", "y")).dimension("flint")
        -1
        """
        basis = self.groebner(engine)
        if basis.is_unit():
            return -1
        supports = [frozenset(i for i, e in enumerate(p.monoms()[0]) if e) for p in basis.polys]
        return len(self.variables) - _hitting_set(supports)

    def degree(self, engine: str = "auto") -> int | None:
        """Degree of the projective variety of a homogeneous ideal, from the Hilbert series of its leading monomials.

        ``HS(S/I) = N(t) / (1 - t)^n`` with ``N`` from :func:`hilbert_numerator`; dividing out
        ``(1 - t)^codim`` leaves ``Q`` with ``Q(1)`` the degree. None when the count exceeds its budget.

        Examples
        --------
        The rank-one ``2 x 3`` matrices (the Segre ``P^1 x P^2``) have degree 3; ``det`` of a 2x2 matrix, 2:

        >>> determinantal_ideal("A", 2, 3, 2).degree("flint"), determinantal_ideal("A", 2, 2, 2).degree("flint")
        (3, 2)
        """
        basis = self.groebner(engine)
        if basis.is_unit():
            return 0
        N = hilbert_numerator([p.monoms()[0] for p in basis.polys], len(self.variables))
        if N is None:
            return None
        while sum(N) == 0:  # divide by (1 - t) while t = 1 is a root
            quotient, carry = [], 0
            for c in N[:-1]:
                carry += c
                quotient.append(carry)
            N = quotient
        return sum(N)

    def minimal_generators(self, weights=None, budget: int = 2_000_000) -> list:
        """A minimal generating set of a homogeneous ideal, chosen among the generators.

        For a graded ideal ``I`` every minimal generating set has the same number of
        elements in each degree (graded Nakayama): a generator of degree ``k`` is needed
        exactly when it is not in ``J_k + (the generators of degree k kept so far)``,
        with ``J`` the ideal generated in degrees below ``k``. Each test is exact
        linear algebra over Q in the space of degree-``k`` polynomials; a finer
        grading (``weights``, one tuple per variable, e.g. a torus action) splits that
        space into small blocks. No Gröbner basis is needed, but the generators must
        generate ``I`` (a Gröbner basis does).

        Parameters
        ----------
        weights : list of tuple of int, optional
            A grading under which every generator is homogeneous (default: total degree only).
        budget : int
            Largest number of monomials of one degree enumerated for the products ``x^α h``.

        Returns
        -------
        list of flint.fmpq_mpoly
            Ordered by degree, then as the generators are listed.

        Raises
        ------
        InvalidInputError
            A generator that is not homogeneous (in total degree or in ``weights``).
        NotCertifiedError
            When a degree has more than ``budget`` monomials to enumerate.

        Examples
        --------
        ``<x^2, x y, x^3 + x y^2, y^3>``: the cubic ``x^3 + x y^2 = x (x^2) + y (x y)`` is redundant.

        >>> x, y = ring(("x", "y")).gens()
        >>> I = Ideal([x**2, x * y, x**3 + x * y**2, y**3], ("x", "y"))
        >>> [str(g) for g in I.minimal_generators()]
        ['x^2', 'x*y', 'y^3']
        >>> Ideal([x**2 - y], ("x", "y")).minimal_generators()
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidInputError: minimal generators need a homogeneous ideal; generator 1 (x^2 - y) is not homogeneous
        """
        n = len(self.variables)
        weights = [tuple(w) for w in weights] if weights is not None else [()] * n
        if len(weights) != n:
            raise InvalidInputError(f"{len(weights)} weights for {n} variables; give one weight tuple per variable")
        graded = []
        for i, g in enumerate(self.gens):
            keys = {_weight(e, weights) for e in g.monoms()}
            if len(keys) != 1:
                raise InvalidInputError(f"minimal generators need a homogeneous ideal; generator {i + 1} ({g}) "
                                        "is not homogeneous")
            graded.append((keys.pop(), g))
        monomials = _MonomialsByWeight(n, weights, budget)
        kept: list[tuple[tuple, dict]] = []  # (weight key, terms) of the generators chosen so far
        out = []
        for key in sorted({k[0] for k, _ in graded}):
            candidates: dict[tuple, list] = {}
            for i, (wk, g) in enumerate(graded):
                if wk[0] == key:
                    candidates.setdefault(wk, []).append(i)
            needed = []
            for wk, block in candidates.items():
                rows = [_shift(terms, alpha) for hk, terms in kept
                        for alpha in monomials.get(key - hk[0], _difference(wk[1], hk[1]))]
                keep = _independent(rows, [graded[i][1].to_dict() for i in block])
                needed += [i for i, k in zip(block, keep) if k]
            out += [graded[i][1] for i in sorted(needed)]
            kept = [(_weight(g.monoms()[0], weights), g.to_dict()) for g in out]
        return out

    def degrees(self) -> list[int]:
        """The total degree of each generator.

        Examples
        --------
        >>> determinantal_ideal("A", 3, 3, 2).degrees() == [2] * 9     # the nine 2 x 2 minors
        True
        """
        return [int(g.total_degree()) for g in self.gens]

    # -- output ------------------------------------------------------------------------------

    def to_sympy(self) -> list:
        """The generators as SymPy expressions (exact rationals).

        >>> I = determinantal_ideal("A", 2, 2, 2)
        >>> I.to_sympy()
        [A_1_1*A_2_2 - A_1_2*A_2_1]
        """
        from .interop import poly_to_sympy

        return [poly_to_sympy(g, self.variables) for g in self.gens]

    def export(self, system: str) -> str:
        """A script for ``system`` (``"m2"`` or ``"singular"``) that rebuilds the ring and this ideal.

        The ring is ℚ in this ideal's variables, in order, with degrevlex; the
        generators are written with integer coefficients (denominators cleared).
        The script then computes and prints a Gröbner basis, so running it
        checks the ideal in another system. Singular keeps attngeo's names;
        Macaulay2 gets indexed variables (``A_(1,2)``, ``c_(k,p,m,n)``:
        :func:`attngeo.exact.interop.macaulay2_name`), its first line mapping
        each to attngeo's. ``attngeo implicit --export m2|singular`` prints this
        for the minimal generators of the implicit equations.

        Parameters
        ----------
        system : {"m2", "singular"}

        Returns
        -------
        str
            The script, ending in a newline.

        Raises
        ------
        InvalidInputError
            For any other system.

        Examples
        --------
        >>> print(determinantal_ideal("A", 2, 2, 2).export("singular").splitlines()[1])
        ring r = 0, (A_1_1,A_1_2,A_2_1,A_2_2), dp;
        >>> print(determinantal_ideal("A", 2, 2, 2).export("m2").splitlines()[1])
        R = QQ[A_(1,1), A_(1,2), A_(2,1), A_(2,2), MonomialOrder => GRevLex];
        """
        from .interop import macaulay2_script, singular_script

        if system not in ("m2", "singular"):
            raise InvalidInputError(f"export to 'm2' or 'singular', not {system!r}")
        return macaulay2_script(self) if system == "m2" else singular_script(self)

    def latex_parts(self) -> list[str]:
        """One LaTeX string (math) per generator.

        Examples
        --------
        >>> determinantal_ideal("A", 2, 2, 2).latex_parts()
        ['-A_{12} A_{21} + A_{11} A_{22}']
        """
        return [latex.polynomial(g) for g in self.gens]

    def latex(self) -> str:
        """The ideal as one LaTeX string (math): ``\\left\\langle g_1, ..., g_k \\right\\rangle``, every generator.

        Examples
        --------
        >>> print(determinantal_ideal("A", 2, 2, 2).latex())
        \\left\\langle -A_{12} A_{21} + A_{11} A_{22} \\right\\rangle
        """
        return r"\left\langle " + r",\ ".join(self.latex_parts()) + r" \right\rangle"

    #: Generators a notebook shows before it says how many more there are (a cell stays a few kB).
    SHOWN = 12

    def _repr_latex_(self) -> str:
        parts = self.latex_parts()[:self.SHOWN]
        more = rf",\ \dots\ ({len(self.gens)}\ \text{{generators}})" if len(self.gens) > self.SHOWN else ""
        return r"$\left\langle " + r",\ ".join(parts) + more + r" \right\rangle$"

    def __repr__(self) -> str:
        shown = ", ".join(str(g) for g in self.gens[:4])
        more = f", ... ({len(self.gens)} generators)" if len(self.gens) > 4 else ""
        return f"Ideal([{shown}{more}] in Q[{', '.join(self.variables)}])"


def _weight(exps: tuple, weights: list[tuple]) -> tuple:
    """``(total degree, weight)`` of a monomial."""
    w = [0] * (len(weights[0]) if weights else 0)
    for e, wt in zip(exps, weights):
        if e:
            for j, x in enumerate(wt):
                w[j] += e * x
    return sum(exps), tuple(w)


def _difference(a: tuple, b: tuple) -> tuple:
    return tuple(x - y for x, y in zip(a, b))


def _shift(terms: dict, alpha: tuple) -> dict:
    """``x^alpha`` times the polynomial ``terms``."""
    return {tuple(a + b for a, b in zip(e, alpha)): c for e, c in terms.items()}


class _MonomialsByWeight:
    """The monomials of each degree, grouped by weight, enumerated once (within a budget)."""

    def __init__(self, n: int, weights: list[tuple], budget: int):
        self.n, self.weights, self.budget = n, weights, budget
        self.by_degree: dict[int, dict[tuple, list]] = {}

    def get(self, degree: int, weight: tuple) -> list:
        if degree < 0:
            return []
        if degree not in self.by_degree:
            count = math.comb(self.n + degree - 1, degree)
            if count > self.budget:
                raise NotCertifiedError(f"minimal generators: {count} monomials of degree {degree} in {self.n} "
                                        f"variables, above the budget of {self.budget}")
            table: dict[tuple, list] = {}
            for combo in itertools.combinations_with_replacement(range(self.n), degree):
                e = [0] * self.n
                for i in combo:
                    e[i] += 1
                table.setdefault(_weight(tuple(e), self.weights)[1], []).append(tuple(e))
            self.by_degree[degree] = table
        return self.by_degree[degree].get(weight, [])


def _independent(rows: list[dict], candidates: list[dict]) -> list[bool]:
    """Which candidates are outside the span of ``rows`` and of the candidates kept before them (exact, over Q).

    Polynomials are term dicts; each rank is python-flint's exact ``fmpz_mat`` rank
    (denominators cleared row by row, which changes no span).
    """
    columns = {e: j for j, e in enumerate({e for r in rows + candidates for e in r})}

    def integer_row(terms: dict) -> list:
        den = 1
        for c in terms.values():
            den = math.lcm(den, int(fmpq(c).q))
        row = [0] * len(columns)
        for e, c in terms.items():
            c = fmpq(c) * den
            row[columns[e]] = int(c.p)
        return row

    matrix = [integer_row(r) for r in rows]
    rank = fmpz_mat(matrix).rank() if matrix else 0
    everything = fmpz_mat(matrix + [integer_row(c) for c in candidates]).rank()
    if everything - rank in (0, len(candidates)):  # all redundant or all needed: the usual cases, two ranks
        return [everything > rank] * len(candidates)
    out = []
    for terms in candidates:
        trial = matrix + [integer_row(terms)]
        grown = fmpz_mat(trial).rank()
        out.append(grown > rank)
        if grown > rank:
            matrix, rank = trial, grown
    return out


def _hitting_set(supports: list[frozenset]) -> int:
    """Size of a smallest set meeting every support (branch on an unmet support)."""
    best = [min(len({i for s in supports for i in s}), len(supports))]

    def search(chosen: frozenset, depth: int) -> None:
        if depth >= best[0]:
            return
        unmet = next((s for s in supports if not s & chosen), None)
        if unmet is None:
            best[0] = depth
            return
        for i in sorted(unmet):
            search(chosen | {i}, depth + 1)

    search(frozenset(), 0)
    return best[0]


def hilbert_numerator(leads: list[tuple], n: int, budget: int = 200_000) -> list[int] | None:
    """``N(t)`` (coefficients, constant first) with ``HS(S/I) = N(t) / (1 - t)^n`` for the monomial ideal ``I``.

    Pivot on a variable ``x``: ``N(I) = N(I + <x>) + t N(I : x)`` (both over the same ``n``
    variables), base case pairwise coprime generators ``prod (1 - t^deg)``. None beyond ``budget`` steps.

    >>> hilbert_numerator([(2, 0), (1, 1)], 2)   # <x^2, x y>: 1 - 2 t^2 + t^3
    [1, 0, -2, 1]
    """
    steps = [0]
    memo: dict = {}

    def minimal(gens):
        gens = sorted(set(gens), key=sum)
        out = []
        for g in gens:
            if not any(all(a <= b for a, b in zip(h, g)) for h in out):
                out.append(g)
        return tuple(sorted(out))

    def mul(a, b):
        out = [0] * (len(a) + len(b) - 1)
        for i, x in enumerate(a):
            if x:
                for j, y in enumerate(b):
                    out[i + j] += x * y
        return out

    def add(a, b):
        out = [0] * max(len(a), len(b))
        for i, x in enumerate(a):
            out[i] += x
        for i, x in enumerate(b):
            out[i] += x
        return out

    def go(gens):
        if gens in memo:
            return memo[gens]
        steps[0] += 1
        if steps[0] > budget:
            raise OverflowError
        supports = [frozenset(i for i, e in enumerate(g) if e) for g in gens]
        if all(not (s & t) for k, s in enumerate(supports) for t in supports[k + 1:]):
            result = [1]
            for g in gens:
                result = mul(result, [1] + [0] * (sum(g) - 1) + [-1])
        else:
            counts = [sum(1 for s in supports if i in s) for i in range(n)]
            x = max(range(n), key=lambda i: counts[i])
            unit = tuple(int(i == x) for i in range(n))
            plus = minimal([g for g in gens if g[x] == 0] + [unit])
            colon = minimal([tuple(e - (i == x and e > 0) for i, e in enumerate(g)) for g in gens])
            result = add(go(plus), [0] + go(colon))
        memo[gens] = result
        return result

    try:
        N = go(minimal([tuple(g) for g in leads]))
    except OverflowError:
        return None
    while len(N) > 1 and N[-1] == 0:
        N.pop()
    return N


def determinantal_ideal(base: str, rows: int, cols: int, r: int, variables=None) -> Ideal:
    """``I_r`` of a symbolic ``rows x cols`` matrix named ``base``: the ideal of ``rank < r``.

    Parameters
    ----------
    base : str
        The matrix name; its entries are the variables ``base_i_j``.
    rows, cols : int
        The shape.
    r : int
        The minor size, ``1 <= r <= min(rows, cols)``.
    variables : sequence of str, optional
        A larger ring holding the entries (default: just the entries, row by row).

    Returns
    -------
    Ideal

    Examples
    --------
    >>> I = determinantal_ideal("A", 2, 3, 2)
    >>> len(I.gens), I.variables[:3], I.dimension("flint")
    (3, ('A_1_1', 'A_1_2', 'A_1_3'), 4)
    >>> determinantal_ideal("A", 1, 2, 1, variables=("t", "A_1_1", "A_1_2")).dimension("flint")   # t is free
    1
    """
    names = [n for row in matrix_names(base, rows, cols) for n in row]
    variables = tuple(variables) if variables is not None else tuple(names)
    M = symbolic_matrix(ring(variables), base, rows, cols)
    return Ideal(minors(M, r), variables)


def rank_ideal(base: str, rows: int, cols: int, r: int, variables) -> Ideal:
    """The ideal of ``{rank <= r}``: ``I_{r+1}``, or the zero ideal when every matrix qualifies.

    Examples
    --------
    >>> names = [n for row in matrix_names("A", 2, 2) for n in row]
    >>> rank_ideal("A", 2, 2, 1, names).gens == determinantal_ideal("A", 2, 2, 2).gens
    True
    >>> rank_ideal("A", 2, 2, 2, names).gens, rank_ideal("A", 2, 2, 0, names).dimension("flint")
    ([], 0)
    """
    if r >= min(rows, cols):
        return Ideal([], variables)
    return determinantal_ideal(base, rows, cols, r + 1, variables)
