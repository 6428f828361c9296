"""Polynomial inequalities in the size parameters, decided by Fourier–Motzkin elimination over ℚ.

A system ``g_1 >= 0, ..., g_m >= 0`` of polynomials in the sizes is *relaxed*:
every monomial of positive degree becomes an independent real variable. If the
relaxed linear system has no real solution, neither has the original one, so
"infeasible" is sound; the converse can fail (the relaxation forgets that
``h*a`` is the product of ``h`` and ``a``), and then the checker refuses. An
implication ``S => g >= 0`` between integer-valued polynomials holds when
``S`` together with ``-g - 1 >= 0`` is infeasible (an integer ``g < 0`` is
``<= -1``). Elimination is exact (``fmpq``) and bounded by
:data:`attngeo.check.limits.MAX_INEQUALITIES` constraints.
"""

from __future__ import annotations

from flint import fmpq

from ..exceptions import CertificateFormatError
from .limits import MAX_INEQUALITIES


def _linear(poly) -> dict:
    """``{monomial: coefficient}`` of an fmpq_mpoly; the constant under ``()``."""
    out = {}
    for exps, c in zip(poly.monoms(), poly.coeffs()):
        key = () if not any(exps) else tuple(exps)
        out[key] = out.get(key, fmpq(0)) + fmpq(c)
    return {k: v for k, v in out.items() if v != 0}


def _normalized(row: dict) -> tuple:
    """A canonical form (positive scaling) so repeated constraints are kept once."""
    scale = max(abs(v) for v in row.values())
    return tuple(sorted((k, v / scale) for k, v in row.items()))


def infeasible(system: list) -> bool:
    """True when ``{g >= 0 : g in system}`` (fmpq_mpoly) has no real solution with monomials as variables.

    Raises
    ------
    CertificateFormatError
        Elimination would keep more than ``MAX_INEQUALITIES`` constraints.

    Examples
    --------
    >>> from attngeo.check.poly import ring
    >>> d, a = ring(("d", "a")).gens()
    >>> infeasible([a - 1, d - a, -d])           # 1 <= a <= d <= 0
    True
    >>> infeasible([a - 1, d - a])
    False
    """
    rows = {_normalized(r): r for r in (_linear(g) for g in system) if r}
    rows = list(rows.values())
    while True:
        for r in rows:
            if list(r) == [()] and r[()] < 0:
                return True
        variables = {k for r in rows for k in r if k != ()}
        if not variables:
            return False

        def cost(v):
            pos = sum(1 for r in rows if r.get(v, 0) > 0)
            neg = sum(1 for r in rows if r.get(v, 0) < 0)
            return pos * neg - pos - neg

        v = min(sorted(variables), key=cost)
        pos = [r for r in rows if r.get(v, 0) > 0]
        neg = [r for r in rows if r.get(v, 0) < 0]
        keep = {_normalized(r): r for r in rows if r.get(v, 0) == 0}
        if len(keep) + len(pos) * len(neg) > MAX_INEQUALITIES:
            raise CertificateFormatError(f"deciding the case split needs more than {MAX_INEQUALITIES} inequalities "
                                         "(the checker's limit)")
        for p in pos:
            for n in neg:
                # p[v] > 0 > n[v]: (-n[v]) p + p[v] n eliminates v
                comb = {}
                for k in set(p) | set(n):
                    c = -n[v] * p.get(k, fmpq(0)) + p[v] * n.get(k, fmpq(0))
                    if c != 0 and k != v:
                        comb[k] = c
                if comb:
                    keep.setdefault(_normalized(comb), comb)
        rows = list(keep.values())


def implies(system: list, g) -> bool:
    """Whether the integer points of ``{s >= 0}`` satisfy ``g >= 0`` (proved through the relaxation).

    Examples
    --------
    >>> from attngeo.check.poly import ring
    >>> d, dd, a = ring(("d", "dd", "a")).gens()
    >>> implies([a - 1, dd - a, d - dd], d - a), implies([a - 1, d - 1], d - a)
    (True, False)
    >>> implies([d - a - 2], d - a), implies([d - a - 2], d - a - 3)   # a constraint plus a constant
    (True, False)
    """
    for s in system:  # most questions are a constraint itself, or one plus a constant: no elimination needed
        rest = g - s
        if rest == 0 or (rest.is_constant() and rest.coeffs()[0] > 0):
            return True
    return infeasible(list(system) + [-g - 1])
