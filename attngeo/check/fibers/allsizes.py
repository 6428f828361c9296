"""All-sizes fiber certificates (kind ``fiber-all-sizes``): the generic fiber of deep networks at every size.

docs/math.md Theorem 7.8 (1): for ``l >= 2`` lightning layers with every hidden
width equal to the input width ``d >= 2``, output width ``dd``, earlier ranks
``2 <= a_i <= d`` and last rank ``a <= d`` with ``2a + dd >= d``, the generic
fiber is one orbit of the symmetry group when ``a + dd >= 3`` and two (a point
and its swap) when ``a = dd = 1``. The proof exhibits, at every size, a point
where Lemma P, Lemma A and Theorem V of §7.2 apply and whose hypotheses are
open; its finite content is a 2x2 *core* (the earlier layers, as for the deep
dimension of §7.7) and, per piece of a case split, the *shift* ``s`` of the last
layer (``A_l = sum_k e_(s+k) e_k^T``, ``V_l``'s rows the unit vectors from
``e_(s+a)`` on, cyclically). The checker verifies, cheapest first:

1. the statement is its own (:data:`THEOREMS`: parameters, hypotheses, the
   number of orbits case by case), the case tree covers the hypotheses
   (Fourier–Motzkin, :func:`attngeo.check.dimension.allsizes.case_split`);
2. on each piece, whatever the statement says: ``l >= 2``, ``d >= 2``,
   ``1 <= a <= d``, ``dd >= 1`` and ``2a + dd >= d`` hold on all of it;
3. the core meets Lemma 7.7.3's three conditions (the peeling witness of
   :mod:`attngeo.check.dimension.layerwitness`): Lemma P's (P1)-(P3) for every
   earlier layer, whatever its rank in ``[2, d]``;
4. the shift, a polynomial in the sizes with integer coefficients, has
   ``0 <= s <= a``, ``s + a <= d`` and ``s + a + dd >= d`` on the whole piece
   (the last layer's rows, columns and outputs span ``C^d``: Lemma A);
5. the piece's number of orbits is backed: one only where ``a >= 2`` or
   ``dd >= 2`` on the whole piece (one line, Lemma 7.8.3), two only where
   ``a = dd = 1`` (the swap).

The structure of the witness point (selector matrices, their ranks and spans)
is the derivation of docs/math.md §7.8, trusted as its lemmas are (docs/trust.md).
"""

from __future__ import annotations

from ..dimension.allsizes import _equalities, case_split, formula_on
from ..dimension.layerwitness import _core
from ..inequalities import implies
from ..schema import CHECKED, HEADER, NUMBER
from ..values import field, obj, reject

#: The statements this checker proves for all sizes; certificates must repeat the first four exactly.
THEOREMS = {
    "deep-fibers": {
        "argument": "virtual-peeling",
        "parameters": ["l", "d", "dd", "a"],
        "hypotheses": ["l >= 2", "d >= 2", "dd >= 1", "a >= 1", "a <= d", "2*a + dd >= d"],
        "formula": [{"when": ["a + dd >= 3"], "value": "1"}, {"when": ["a + dd <= 2"], "value": "2"}],
        "claim": "l lightning layers of widths d, ..., d, dd (every hidden width d), earlier ranks 2 <= a_i <= d "
                 "and last rank a, t >= 2",
    },
}
PIECE_KEYS = {"equalities", "core", "shift"}
SCHEMA = {**HEADER, "theorem": CHECKED, "argument": CHECKED, "scope": CHECKED, "parameters": CHECKED,
          "hypotheses": CHECKED, "formula": CHECKED, "cases": CHECKED, "seconds": NUMBER,
          "pieces": [{"equalities": CHECKED, "core": CHECKED, "shift": CHECKED}]}


def _piece(data: dict, where: str, constraints: list, theorem: dict, sizes) -> None:
    """Steps 2-5 on one piece (module docstring)."""
    if set(data) != PIECE_KEYS:
        reject(f"{where} must have exactly {sorted(PIECE_KEYS)}")
    l, d, dd, a = (sizes.poly(p, where) for p in ("l", "d", "dd", "a"))
    for g, what in ((l - 2, "l >= 2"), (d - 2, "d >= 2"), (a - 1, "a >= 1"), (d - a, "a <= d"), (dd - 1, "dd >= 1"),
                    (2 * a + dd - d, "2a + dd >= d")):
        if not implies(constraints, g):
            reject(f"{where}: Theorem 7.8 (1) needs {what} on the whole piece")
    equal = _equalities(field(data, "equalities"), constraints, sizes, f"{where}.equalities")
    orbits = formula_on(theorem, constraints, sizes, equal, where)
    _core(field(data, "core"), f"{where}.core")
    s = sizes.poly(field(data, "shift"), f"{where}.shift")
    for g, what in ((s, "s >= 0"), (a - s, "s <= a"), (d - s - a, "s + a <= d"), (s + a + dd - d, "s + a + dd >= d")):
        if not implies(constraints, g):
            reject(f"{where}.shift: {what} is not shown on the whole piece (the last layer's rows, columns and "
                   "outputs must be unit vectors spanning C^d)")
    if orbits == 1:
        if not (implies(constraints, a - 2) or implies(constraints, dd - 2)):
            reject(f"{where}: one orbit needs a >= 2 or dd >= 2 on the whole piece (else the last layer may be a swap)")
    elif orbits == 2:
        if not all(implies(constraints, g) for g in (a - 1, 1 - a, dd - 1, 1 - dd)):
            reject(f"{where}: two orbits (the swap) need a = dd = 1 on the whole piece")
    else:
        reject(f"{where}: the statement's value on the piece must be 1 or 2 orbits")


def check(cert: dict) -> str:
    """Verify an all-sizes fiber certificate (module docstring); the claim in the checker's words.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import prove
    >>> check(prove("deep-fibers"))    # doctest: +ELLIPSIS
    'for all sizes: the generic fiber is 1 orbit(s) of the symmetry group if a + dd >= 3; 2 if a + dd <= 2 ...'
    """
    name = field(cert, "theorem")
    if not isinstance(name, str) or name not in THEOREMS:
        reject(f"unknown theorem (this checker proves {sorted(THEOREMS)} for all sizes)")
    theorem = THEOREMS[name]
    if cert.get("argument") != theorem["argument"]:
        reject(f"argument must be {theorem['argument']!r} for {name}")
    sizes, pieces, leaves = case_split(cert, name, theorem)
    for k, constraints in leaves:
        _piece(obj(pieces[k], f"pieces[{k}]"), f"pieces[{k}]", constraints, theorem, sizes)
    cases = "; ".join(f"{c['value']}{' orbit(s) of the symmetry group' if k == 0 else ''} if {', '.join(c['when'])}"
                      for k, c in enumerate(theorem["formula"]))
    return (f"for all sizes: the generic fiber is {cases} (the point and its swap), each orbit of dimension dim G; "
            f"{theorem['claim']}, for all {', '.join(theorem['hypotheses'])} ({len(pieces)} pieces)")
