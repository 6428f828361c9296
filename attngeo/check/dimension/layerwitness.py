"""The checker's side of the deep theorem for every depth: one layer's witnesses (docs/math.md §7.7).

An all-sizes certificate of ``deep-dimension`` with ``argument: depth-induction``
proves ``dim M = l a(2d - a) + d² - l`` for **every** depth ``l`` by an
induction on depth in the virtual weights (Lemmas 7.7.1–7.7.5, trusted as
Lemma P of §7.2 is). The induction asks for conditions on one layer that do not
depend on ``l``; each piece of the case tree carries their witness and this
module verifies it:

* ``peeling`` (``a >= 2`` on the whole piece): a 2x2 integer *core* ``C``; every
  layer is ``V_i = I``, ``Q_i = [I_a 0]``, ``K_i = [diag(Cᵀ, I_{a-2}) 0]``, so
  ``M_i = A_i = diag(C, I_{a-2}, 0)``. Lemma 7.7.3 turns (K1)–(K3) of the
  peeling lemma into ``det C != 0``, ``C + Cᵀ != 0`` and a nonsingular
  ``Λ_C: B -> BC + BᵀC + CB``, which is the Jacobian of the width-2 layer
  ``S_C`` at ``I`` (the dominance test of ``virtual-fiber`` certificates);
* ``rank-one`` (``a = 1`` on the piece): ``M_1 = b_1 c_1ᵀ`` and, for
  ``j >= 2``, ``M_j = b_j c_jᵀ`` with ``b_j = β + jβ'``, ``c_j = γ + jγ'`` on
  one or two coordinates (zero on the others; ``d`` at least that many on the
  piece). Lemma 7.7.4 needs ``b_1, c_1 != 0`` and, when ``d >= 2``, the later
  vectors pairwise independent for every ``2 <= j, j'``:
  ``det(b_j, b_j') = (j' - j) det(β, β')``, likewise for ``c``, and
  ``det(b_j, c_j')``, a polynomial in ``j, j'``, is shown ``>= 1`` or ``<= -1``
  on ``j, j' >= 2`` by Fourier–Motzkin; on one coordinate the piece must have
  ``d = 1`` and every ``b_j, c_j`` is shown nonzero the same way.
"""

from __future__ import annotations

from flint import fmpq_mat, fmpz_mat

from ..fibers.virtual import _dominant
from ..inequalities import implies
from ..poly import ring
from ..values import field, integer, obj, reject, seq

#: Largest entry of a witness (honest ones are 1 and -1).
MAX_ENTRY = 2**20
#: The keys of a piece, by its lemma.
LEMMAS = {"peeling": {"equalities", "lemma", "core"}, "rank-one": {"equalities", "lemma", "first", "later"}}


def check_piece(data: dict, where: str, constraints: list, sizes: dict, formula, on_piece) -> str:
    """Verify one piece's witness on the piece's constraints; return its lemma.

    ``constraints`` are the piece's inequalities ``g >= 0`` (the hypotheses and the case tree's path),
    ``sizes`` the polynomials ``l``, ``d``, ``a`` of the checker's ring, ``formula`` the statement's value on
    the piece and ``on_piece`` the substitution of the piece's equalities. Refuses a piece outside the
    lemmas' range (``l >= 1``, ``a <= d``: whatever the statement says), a formula other than the lemmas'
    count ``l(2ad - a²) + d² - l`` (Lemma 7.7.1), and a witness that fails the lemma's hypotheses.

    Examples
    --------
    >>> from attngeo.check.poly import ring
    >>> l, d, a = ring(("l", "d", "a")).gens()
    >>> sizes, value, same = {"l": l, "d": d, "a": a}, 2*l*a*d - l*a**2 + d**2 - l, lambda p: p
    >>> piece = {"equalities": [], "lemma": "peeling", "core": [[1, 0], [0, 1]]}
    >>> check_piece(piece, "p", [l - 1, a - 2, d - a], sizes, value, same)
    'peeling'
    >>> check_piece(piece, "p", [l - 1, a - 1, d - a], sizes, value, same)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: p: the peeling lemma needs a >= 2 on the whole piece (two independent columns of each M_i)
    >>> check_piece(piece, "p", [l - 1, a - 2, d - a + 1], sizes, value, same)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: p: the lemmas of docs/math.md §7.7 need a <= d on the whole piece
    """
    lemma = field(data, "lemma")
    if not isinstance(lemma, str) or lemma not in LEMMAS:
        reject(f"{where}.lemma must be one of {sorted(LEMMAS)}")
    if set(data) != LEMMAS[lemma]:
        reject(f"{where} must have exactly {sorted(LEMMAS[lemma])}")
    l, d, a = sizes["l"], sizes["d"], sizes["a"]
    for g, what in ((l - 1, "l >= 1"), (d - a, "a <= d")):
        if not implies(constraints, g):
            reject(f"{where}: the lemmas of docs/math.md §7.7 need {what} on the whole piece")
    if on_piece(l * (2 * a * d - a * a) + d * d - l - formula) != 0:
        reject(f"{where}: the formula is not the lemmas' count l(2ad - a^2) + d^2 - l on this piece")
    if lemma == "peeling":
        if not implies(constraints, a - 2):
            reject(f"{where}: the peeling lemma needs a >= 2 on the whole piece (two independent columns of each M_i)")
        _core(data["core"], f"{where}.core")
    else:
        if not (implies(constraints, a - 1) and implies(constraints, 1 - a)):
            reject(f"{where}: the rank-one lemma needs a = 1 on the whole piece")
        _rank_one(data, where, constraints, d)
    return lemma


def _vector(raw, n: int | None, where: str) -> list:
    raw = seq(raw, where, n)
    if not 1 <= len(raw) <= 2:
        reject(f"{where} must have one or two coordinates")
    return [integer(v, where, -MAX_ENTRY, MAX_ENTRY) for v in raw]


def _core(raw, where: str) -> None:
    C = [_vector(r, 2, where) for r in seq(raw, where, 2)]
    if fmpz_mat(C).det() == 0:
        reject(f"{where} is singular: M_i = diag(C, I, 0) would have rank below a and no two independent columns (K1)")
    if all(C[r][s] + C[s][r] == 0 for r in range(2) for s in range(2)):
        reject(f"{where} is skew: q_i(z) = zᵀ M_i z vanishes on the core (K2)")
    if not _dominant(fmpq_mat(C), [[1, 0], [0, 1]]):
        reject(f"{where}: Λ_C (B -> BC + BᵀC + CB) is singular, so S_(M_i) has no dominance witness at [e_0, e_1] (K3)")


def _sign_definite(g, system: list) -> bool:
    """``g`` (integer-valued) is ``>= 1`` on all of ``system`` or ``<= -1`` on all of it: never zero."""
    return implies(system, g - 1) or implies(system, -g - 1)


def _rank_one(data: dict, where: str, constraints: list, d) -> None:
    first = obj(data["first"], f"{where}.first")
    later = obj(data["later"], f"{where}.later")
    for part, raw in (("first", first), ("later", later)):
        if set(raw) != {"b", "c"}:
            reject(f"{where}.{part} must have exactly b and c")
    b1 = _vector(first["b"], None, f"{where}.first.b")
    n = len(b1)
    c1 = _vector(first["c"], n, f"{where}.first.c")
    if not implies(constraints, d - n):
        reject(f"{where}: vectors on {n} coordinates need d >= {n} on the whole piece")
    if not any(b1) or not any(c1):
        reject(f"{where}.first: b_1 and c_1 must be nonzero")
    lines = {}
    for name in ("b", "c"):
        base, slope = (_vector(v, n, f"{where}.later.{name}") for v in seq(later[name], f"{where}.later.{name}", 2))
        lines[name] = (base, slope)
    j, k = ring(("j", "k")).gens()  # two layer indices, both >= 2
    beyond = [j - 2, k - 2]
    b = [base + j * slope for base, slope in zip(*lines["b"])]
    c = [base + k * slope for base, slope in zip(*lines["c"])]
    if n == 1:
        if not implies(constraints, 1 - d):
            reject(f"{where}: on one coordinate the later layers' vectors are all proportional, which Lemma 7.7.4 "
                   "allows only when d = 1 on the whole piece")
        if not (_sign_definite(b[0], beyond) and _sign_definite(c[0], beyond)):
            reject(f"{where}.later: some b_j or c_j (j >= 2) is zero")
        return
    for name in ("b", "c"):
        base, slope = lines[name]
        if base[0] * slope[1] - base[1] * slope[0] == 0:
            reject(f"{where}.later.{name}: two layers' vectors are proportional (det(base, slope) = 0)")
    if not _sign_definite(b[0] * c[1] - b[1] * c[0], beyond):
        reject(f"{where}.later: det(b_j, c_j') is not shown nonzero for all j, j' >= 2")
