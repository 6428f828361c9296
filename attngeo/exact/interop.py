"""Interop: polynomials, matrices, ideals and results to SymPy, and ideals as Macaulay2 and Singular scripts.

The scripts rebuild the ring (ℚ, the variables in order, degrevlex / ``grevlex``)
and the ideal exactly. Singular takes attngeo's names as they are. In Macaulay2
``_`` is the subscript operator, so attngeo's ``A_1_2`` becomes the indexed
variable ``A_(1,2)`` and the coordinate ``c_k_p_mn`` of ``F_kp`` at ``y_m y_n``
(docs/math.md §1.1) becomes ``c_(k,p,m,n)``; a name with no such reading is
numbered ``x_1, x_2, ...``, and the script's first line lists every name.
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


def macaulay2_name(name: str) -> str | None:
    """attngeo's variable name as a Macaulay2 indexed variable, or None when it has no such reading.

    ``A_1_2`` is ``A_(1,2)``; a coordinate ``c_k_p_mn`` (a two-digit last index: the monomial ``y_m y_n``)
    is ``c_(k,p,m,n)``; a letters-and-digits name (``y0``, ``t``) stays as it is.

    Examples
    --------
    >>> macaulay2_name("A_1_2"), macaulay2_name("c_1_2_12"), macaulay2_name("y0"), macaulay2_name("Q1.2_0_1")
    ('A_(1,2)', 'c_(1,2,1,2)', 'y0', None)
    """
    import re

    if re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", name):
        return name
    m = re.fullmatch(r"([A-Za-z][A-Za-z0-9]*)((?:_\d+)+)", name)
    if not m:
        return None
    base, indices = m.group(1), m.group(2)[1:].split("_")
    if base == "c" and len(indices) == 3 and len(indices[2]) == 2:  # c_k_p_mn: F_kp's coefficient of y_m y_n
        indices = indices[:2] + list(indices[2])
    return f"{base}_({','.join(str(int(i)) for i in indices)})"


def macaulay2_script(ideal) -> str:
    r"""A Macaulay2 script that rebuilds ``ideal`` (ring ``R``, ideal ``I``) with indexed variables.

    Every name is read by :func:`macaulay2_name`; if any has no reading, or two
    would collide or clash with ``R``, ``I``, ``G``, all are numbered ``x_1..x_n``
    instead. The first line maps each Macaulay2 name to attngeo's.

    >>> from attngeo.exact.ideal import determinantal_ideal
    >>> print("\n".join(macaulay2_script(determinantal_ideal("A", 2, 2, 2)).splitlines()[:4]))
    -- attngeo ideal in 4 variables: A_(1,1) = A_1_1, A_(1,2) = A_1_2, A_(2,1) = A_2_1, A_(2,2) = A_2_2
    R = QQ[A_(1,1), A_(1,2), A_(2,1), A_(2,2), MonomialOrder => GRevLex];
    I = ideal(
      -1*A_(1,2)*A_(2,1)+1*A_(1,1)*A_(2,2));
    """
    names = ideal.variables
    m2 = [macaulay2_name(n) for n in names]
    bases = {(v or "").split("_(")[0] for v in m2}
    if None in m2 or len(set(m2)) != len(m2) or bases & {"R", "I", "G"}:
        m2 = [f"x_{k + 1}" for k in range(len(names))]
    gens = ",\n  ".join(_integer_line(g, m2) for g in ideal.gens) or "0"
    mapping = ", ".join(f"{v} = {n}" for v, n in zip(m2, names))
    return "\n".join([f"-- attngeo ideal in {len(names)} variables: {mapping}",
                      f"R = QQ[{', '.join(m2)}, MonomialOrder => GRevLex];",
                      f"I = ideal(\n  {gens});", "G = gens gb I;", "print toString G;", ""])
