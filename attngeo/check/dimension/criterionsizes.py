"""The checker's side of the softmax dimension for every size: the selector point of Corollary C (docs/math.md §8.3).

An all-sizes certificate of ``softmax-criterion`` (``argument: criterion-point``)
proves ``dim M = P - g(a² + b²)`` for one softmax layer ``d -> dd`` with
``h = g n`` heads of rank ``a`` in ``g`` key-value groups of ``n`` heads, value
rank ``b`` (``V_j = O_j U_γ``), and ``+ h a + dd`` more with biases
(``bias = 1``), at every size with ``g n a <= d``, ``g n b <= dd``, ``b <= d``,
``d >= 2`` and ``a + b + d >= 5``. The proof is Theorem C at the *selector point*
(``Q_j``, ``K_γ`` read columns, ``U_γ`` reads ``b`` columns shifted by ``σ``,
``O_j`` writes rows): each piece of the case split carries ``σ`` and this module
verifies, on the whole piece, what Corollary C's argument uses:

* the selectors fit: ``g n a <= d`` (the stacked ``Q`` and ``K`` are distinct
  unit rows, (C2), (C3)), ``g n b <= dd`` (the stacked ``O``, (C1)), ``b <= d``
  (``U_γ``'s ``b`` columns are distinct modulo ``d``, (C3));
* ``σ = 0`` only where ``a >= 2`` or ``b >= 2`` holds on the whole piece (then
  the stacked keys have full rank, which gives (C4), and (C5) is void);
* ``σ = 1`` only where ``a = b = 1`` and ``d >= 3`` on the whole piece
  (``K_γ = e_j ≠ U_γ = e_(j+1)``: (C5); a swap between two groups needs
  ``2 ≡ 0 mod d``: (C4));
* the formula on the piece is ``P - dim 𝔨`` with the checker's own parameter
  count ``P`` and ``dim 𝔨 = g(a² + b²) + bias·g(a + b)`` (Theorem C's kernel).

The derivation from these conditions to (C1)–(C5) at the selector point, and
Theorem C itself, are docs/math.md §8.3, trusted as the lemmas of the other
all-sizes arguments are (docs/trust.md).
"""

from __future__ import annotations

from ..inequalities import implies
from ..values import field, reject

#: The keys of a piece.
PIECE_KEYS = {"equalities", "shift"}
#: The statement's parameter count and Theorem C's kernel dimension, the checker's own.
P = "g*n*a*d + g*a*d + g*b*d + g*n*b*dd + bias*g*n*a + bias*g*a + bias*g*b + bias*dd"
KERNEL = "g*a^2 + g*b^2 + bias*g*a + bias*g*b"


def check_piece(data: dict, where: str, constraints: list, size, formula, substitute) -> None:
    """Verify one piece (module docstring); ``size(text)`` reads a polynomial in the sizes, ``formula`` is the
    statement's value on the piece and ``substitute`` applies the piece's equalities.

    Examples
    --------
    >>> from attngeo.check.poly import ring
    >>> names = ("d", "dd", "g", "n", "a", "b", "bias")
    >>> ctx = ring(names)
    >>> d, dd, g, n, a, b, e = ctx.gens()
    >>> hyps = [d - 2, dd - 1, g - 1, n - 1, a - 1, b - 1, e, 1 - e, d - g*n*a, dd - g*n*b, d - b, a + b + d - 5]
    >>> size = lambda text: __import__("attngeo.check.poly", fromlist=["parse"]).parse(text, ctx, "t", nonzero=False)
    >>> value = size(P) - size(KERNEL)
    >>> check_piece({"equalities": [], "shift": "0"}, "p", hyps + [a - 2], size, value, lambda p: p)
    >>> check_piece({"equalities": [], "shift": "0"}, "p", hyps + [1 - a], size, value, lambda p: p)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: p.shift: 0 needs a >= 2 or b >= 2 on the whole piece (else the heads' keys and values may coincide: Corollary C's shift 1)
    """
    if set(data) != PIECE_KEYS:
        reject(f"{where} must have exactly {sorted(PIECE_KEYS)}")
    d, dd, g, n, a, b, bias = (size(p) for p in ("d", "dd", "g", "n", "a", "b", "bias"))
    for poly, what in ((d - 2, "d >= 2"), (dd - 1, "dd >= 1"), (g - 1, "g >= 1"), (n - 1, "n >= 1"),
                       (a - 1, "a >= 1"), (b - 1, "b >= 1"), (bias, "bias >= 0"), (1 - bias, "bias <= 1"),
                       (d - g * n * a, "g*n*a <= d"), (dd - g * n * b, "g*n*b <= dd"), (d - b, "b <= d")):
        if not implies(constraints, poly):
            reject(f"{where}: Corollary C needs {what} on the whole piece")
    shift = field(data, "shift")
    if shift == "0":
        if not (implies(constraints, a - 2) or implies(constraints, b - 2)):
            reject(f"{where}.shift: 0 needs a >= 2 or b >= 2 on the whole piece (else the heads' keys and values "
                   "may coincide: Corollary C's shift 1)")
    elif shift == "1":
        if not all(implies(constraints, p) for p in (a - 1, 1 - a, b - 1, 1 - b)):
            reject(f"{where}.shift: 1 is Corollary C's point for a = b = 1 only, which does not hold on the whole "
                   "piece")
        if not implies(constraints, d - 3):
            reject(f"{where}: with a = b = 1 Corollary C needs d >= 3 on the whole piece (two groups may swap "
                   "keys and values at d = 2)")
    else:
        reject(f"{where}.shift must be \"0\" or \"1\"")
    if substitute(size(P) - size(KERNEL) - formula) != 0:
        reject(f"{where}: the formula is not P - dim k (Theorem C's kernel) on the piece")
