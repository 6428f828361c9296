"""Interop: polynomials, matrices, ideals and results to SymPy, and ideals as Macaulay2 and Singular scripts.

The scripts rebuild the ring (ℚ, the variables in order, degrevlex / ``grevlex``)
and the ideal exactly; Macaulay2 does not allow ``_`` in a variable name (it is
its subscript operator), so its script names the variables ``x1, x2, ...`` and
lists attngeo's names in a comment.
"""

from __future__ import annotations

import sympy
from flint import fmpq, fmpq_mat, fmpz

from ..exceptions import InvalidInputError


def _rational(c) -> sympy.Rational:
    c = fmpq(c)
    return sympy.Rational(int(c.p), int(c.q))


def poly_to_sympy(p, names) -> sympy.Expr:
    """A python-flint polynomial in the variables ``names`` as a SymPy expression, exactly.

    >>> from attngeo.exact.engine import ring
    >>> x, y = ring(("x", "y")).gens()
    >>> poly_to_sympy(x**2 / 3 - y, ("x", "y"))
    x**2/3 - y
    """
    syms = sympy.symbols(list(names))
    return sympy.Add(*(_rational(c) * sympy.Mul(*(s**k for s, k in zip(syms, e))) for e, c in p.to_dict().items()))


def to_sympy(obj, names=None):
    """SymPy form of an attngeo value: a rational, a matrix, a polynomial (give ``names``), an ideal or a result.

    >>> from flint import fmpq_mat
    >>> to_sympy(fmpq_mat([[1, 2], [3, 4]]) / 2).tolist()
    [[1/2, 1], [3/2, 2]]
    >>> to_sympy(fmpq(-3, 4))
    -3/4
    """
    if isinstance(obj, (fmpq, fmpz, int)):
        return _rational(obj)
    if isinstance(obj, fmpq_mat):
        return sympy.Matrix([[_rational(obj[i, j]) for j in range(obj.ncols())] for i in range(obj.nrows())])
    if hasattr(obj, "to_sympy"):
        return obj.to_sympy()
    if hasattr(obj, "to_dict") and names is not None:
        return poly_to_sympy(obj, names)
    raise InvalidInputError(f"no SymPy form for {type(obj).__name__} (a polynomial needs its variable names)")


def _integer_line(p, names) -> str:
    """``p`` with its denominators cleared, written with ``*`` and ``^`` (both systems read that)."""
    import math

    items = list(p.to_dict().items())
    den = 1
    for _, c in items:
        den = math.lcm(den, int(fmpq(c).q))
    terms = []
    for e, c in items:
        coeff = int(fmpq(c).p) * (den // int(fmpq(c).q))
        mono = "*".join(f"{n}^{k}" if k > 1 else n for n, k in zip(names, e) if k)
        terms.append(f"{coeff:+d}" + (f"*{mono}" if mono else ""))
    return "".join(terms).lstrip("+") or "0"


def singular_script(ideal) -> str:
    """A Singular script that rebuilds ``ideal`` (ring ``r``, ideal ``I``) and prints its reduced standard basis.

    >>> from attngeo.exact.ideal import determinantal_ideal
    >>> print(singular_script(determinantal_ideal("A", 2, 2, 2)).splitlines()[3])
      -1*A_1_2*A_2_1+1*A_1_1*A_2_2;
    """
    names = ideal.variables
    gens = ",\n  ".join(_integer_line(g, names) for g in ideal.gens) or "0"
    return "\n".join([f"// attngeo ideal in {len(names)} variables", f"ring r = 0, ({','.join(names)}), dp;",
                      f"ideal I =\n  {gens};", "option(redSB);", "short = 0;", "ideal G = std(I);",
                      "for (int k = 1; k <= size(G); k++) { print(string(G[k])); }", ""])


def macaulay2_script(ideal) -> str:
    r"""A Macaulay2 script that rebuilds ``ideal`` (ring ``R``, ideal ``I``) with variables ``x1..xn``.

    >>> from attngeo.exact.ideal import determinantal_ideal
    >>> print("\n".join(macaulay2_script(determinantal_ideal("A", 2, 2, 2)).splitlines()[:2]))
    -- attngeo ideal; variables: x1 = A_1_1, x2 = A_1_2, x3 = A_2_1, x4 = A_2_2
    R = QQ[x1, x2, x3, x4, MonomialOrder => GRevLex];
    """
    names = ideal.variables
    plain = [f"x{k + 1}" for k in range(len(names))]
    gens = ",\n  ".join(_integer_line(g, plain) for g in ideal.gens) or "0"
    mapping = ", ".join(f"x{k + 1} = {n}" for k, n in enumerate(names))
    return "\n".join([f"-- attngeo ideal; variables: {mapping}", f"R = QQ[{', '.join(plain)}, MonomialOrder => GRevLex];",
                      f"I = ideal(\n  {gens});", "G = gens gb I;", "print toString G;", ""])
