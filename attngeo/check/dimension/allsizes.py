"""All-sizes dimension certificates (kind ``dimension-all-sizes``): a formula proved for every size at once.

The certificate names a theorem the checker knows (:data:`THEOREMS`: its size
parameters, hypotheses and piecewise formula, written here and compared field
by field), splits the hypotheses into **pieces** by a tree of polynomial
inequalities, and for each piece gives a pattern point (cells, sorts,
templates: :mod:`attngeo.check.dimension.patternpoint`) with two block lower
triangular minors — the coefficient Jacobian's (a lower bound on ``dim M``) and
the symmetry fields' (``P`` minus it, an upper bound). docs/math.md §7.1 proves
that these finite data bound ``dim M`` at *every* size of the piece.

What the checker verifies, cheapest first:

1. the theorem's parameters, hypotheses and formula are the checker's own;
2. the case tree covers the hypotheses: each split is a polynomial ``g``, one
   branch ``g >= 0``, the other ``g <= -1``; a leaf marked empty is infeasible,
   every piece is a leaf exactly once (Fourier–Motzkin over ℚ, relaxing
   monomials to variables: :mod:`attngeo.check.inequalities`);
3. on each piece: its equalities (``param = constant``) follow from the
   constraints, every cell has size ``>= 0`` there, one formula case applies,
   and each sort has the size of the architecture (``in`` has ``d`` indices, ...);
4. each block's count is the product of the falling factorials of its cells'
   sizes (the number of its instances), and ``Σ count x side`` of the lower
   blocks and ``P - Σ count x side`` of the field blocks both equal the formula;
5. the invariance identities of the field families hold (the free-algebra
   words of :mod:`attngeo.check.dimension.dense`);
6. both minors: every block's matrix, recomputed from the layer formula, is the
   claimed nonsingular one, and no row meets a column of a later block type or
   of another block of its own type.

``deep-dimension`` is proved for every depth by an induction on depth
(``argument: depth-induction``, docs/math.md §7.7): its pieces carry one layer's
witnesses instead of minors, and steps 3–6 become the lemma's hypotheses on the
piece (:mod:`attngeo.check.dimension.layerwitness`). Certificates of the earlier
statement (``l <= 3``, ``a <= 3``, pattern pieces, no ``argument``) still verify,
with that narrower claim (:data:`SUPERSEDED`).

``softmax-criterion`` (``argument: criterion-point``, docs/math.md §8.3,
Corollary C) is Theorem C at a selector point for every size: its pieces carry
the point's shift, and :mod:`attngeo.check.dimension.criterionsizes` verifies
the conditions the corollary's argument uses on each piece.
"""

from __future__ import annotations

from ...exceptions import CertificateFormatError
from ..inequalities import implies, infeasible
from ..limits import MAX_PIECES
from ..poly import parse, ring
from ..schema import CHECKED, HEADER, NUMBER
from ..values import field, obj, reject, seq
from . import groups
from . import criterionsizes, layerwitness
from .deeppattern import DeepPiece
from .patternpoint import Block, Piece, verify_minor

#: The theorems this checker proves for all sizes: parameters, hypotheses (each ``a >= b`` or ``a <= b``),
#: formula cases (conditions, value), the architecture family (factored values?), the size of each index
#: sort and the parameter count ``P``. Certificates must repeat the first three exactly.
THEOREMS = {
    "single-layer-dimension": {
        "parameters": ["d", "dd", "a"],
        "hypotheses": ["d >= 1", "dd >= 1", "a >= 1"],
        "formula": [{"when": ["a <= d"], "value": "2*d*a + d*dd - a^2 - 1"},
                    {"when": ["a >= d + 1"], "value": "d^2 + d*dd - 1"}],
        "factored": False,
        "sorts": {"head": "1", "in": "d", "out": "dd", "hid": "a"},
        "P": "2*a*d + dd*d",
        "claim": "one lightning layer d -> dd of rank a (one head), t >= 2",
    },
    "multihead-layer-dimension": {
        "parameters": ["d", "h", "a", "b"],
        "hypotheses": ["h >= 1", "a >= 1", "b >= 1", "h*a <= d", "h*b <= d"],
        "formula": [{"when": [], "value": "2*h*a*d + 2*h*b*d - h*a^2 - h*b^2 - h"}],
        "factored": True,
        "sorts": {"head": "h", "in": "d", "out": "d", "hid": "a", "val": "b"},
        "P": "2*h*a*d + 2*h*b*d",
        "claim": "one lightning layer d -> d with h heads of rank a and value rank b (V_j = O_j U_j), t >= 2",
    },
    "deep-dimension": {
        "argument": "depth-induction",
        "parameters": ["l", "d", "a"],
        "hypotheses": ["l >= 1", "a >= 1", "a <= d"],
        "formula": [{"when": [], "value": "2*l*a*d - l*a^2 + d^2 - l"}],
        "claim": "l lightning layers of equal width d and rank a, t >= 2",
    },
    "softmax-criterion": {
        "argument": "criterion-point",
        "parameters": ["d", "dd", "g", "n", "a", "b", "bias"],
        "hypotheses": ["d >= 2", "dd >= 1", "g >= 1", "n >= 1", "a >= 1", "b >= 1", "bias >= 0", "bias <= 1",
                       "g*n*a <= d", "g*n*b <= dd", "b <= d", "a + b + d >= 5"],
        "formula": [{"when": [], "value": "g*n*a*d + g*a*d + g*b*d + g*n*b*dd - g*a^2 - g*b^2 + bias*g*n*a + bias*dd"}],
        "claim": "one softmax layer d -> dd with h = g*n heads of rank a in g key-value groups of n heads, value "
                 "rank b (V_j = O_j U_g), with biases on every projection if bias = 1 (none if bias = 0), at every score scale, "
                 "causal or not, residual or not, t >= 2",
    },
}
#: Statements of earlier certificates (no ``argument``), still verified with their own, narrower, claim.
SUPERSEDED = {
    "deep-dimension": {
        "parameters": ["l", "d", "a"],
        "hypotheses": ["l >= 1", "l <= 3", "a >= 1", "a <= 3", "a <= d"],
        "formula": [{"when": [], "value": "2*l*a*d - l*a^2 + d^2 - l"}],
        "deep": True,
        "sorts": {"feat": "d", "hid": "a"},
        "P": "2*l*a*d + l*d^2",
        "claim": "l lightning layers of equal width d and rank a, t >= 2",
    },
}
#: The keys of one piece, by the kind of point it describes.
PIECE_KEYS = {False: {"equalities", "cells", "sorts", "point", "lower", "upper"},
              True: {"equalities", "cells", "sorts", "core", "layers", "inputs", "lower", "upper"}}

SCHEMA = {**HEADER, "theorem": CHECKED, "argument": CHECKED, "scope": CHECKED, "parameters": CHECKED,
          "hypotheses": CHECKED, "formula": CHECKED, "cases": CHECKED, "seconds": NUMBER,
          "pieces": [{"equalities": CHECKED, "cells": CHECKED, "sorts": CHECKED, "point": CHECKED,
                      "core": CHECKED, "layers": CHECKED, "inputs": CHECKED,
                      "lower": {"blocks": CHECKED, "rank": CHECKED},
                      "upper": {"blocks": CHECKED, "fields": CHECKED},
                      "lemma": CHECKED, "first": CHECKED, "later": CHECKED, "shift": CHECKED}]}


class _Sizes:
    """The theorem's ring of size parameters and readers of polynomials and inequalities in it."""

    def __init__(self, parameters: list):
        self.ctx = ring(parameters)
        self.names = tuple(parameters)

    def poly(self, text, where: str):
        if not isinstance(text, str) or len(text) > 400:
            reject(f"{where} must be a polynomial (text)")
        p = parse(text, self.ctx, where, nonzero=False)
        if any(c.denom() != 1 for c in p.coeffs()):
            reject(f"{where} must have integer coefficients")
        return p

    def inequality(self, text: str):
        """``g`` with ``text`` equivalent to ``g >= 0`` (the checker's own hypothesis strings)."""
        for op, sign in ((">=", 1), ("<=", -1)):
            if op in text:
                lhs, rhs = text.split(op)
                return sign * (self.poly(lhs, text) - self.poly(rhs, text))
        raise ValueError(text)


def _nodes(tree, depth: int = 0) -> int:
    """The number of nodes of the case tree, refused above the limits before any leaf is decided."""
    if depth > 24:
        raise CertificateFormatError("the case tree is deeper than 24")
    n = 1 + sum(_nodes(tree[k], depth + 1) for k in ("ge", "lt") if isinstance(tree, dict) and k in tree)
    if n > 4 * MAX_PIECES:
        raise CertificateFormatError(f"the case tree has more than {4 * MAX_PIECES} nodes")
    return n


def _leaves(tree, sizes: _Sizes, path: list, out: list) -> None:
    """Each leaf of the case tree with its constraints; empty leaves are proved infeasible here."""
    tree = obj(tree, "cases")
    keys = set(tree)
    if keys == {"split", "ge", "lt"}:
        g = sizes.poly(tree["split"], "cases.split")
        _leaves(tree["ge"], sizes, path + [g], out)
        _leaves(tree["lt"], sizes, path + [-g - 1], out)
    elif keys == {"empty"} and tree["empty"] is True:
        if not infeasible(path):
            reject("a leaf of the case tree marked empty holds sizes that satisfy it")
    elif keys == {"piece"}:
        k = tree["piece"]
        if isinstance(k, bool) or not isinstance(k, int):
            reject("cases: a piece reference must be an integer")
        out.append((k, path))
    else:
        reject("cases: each node is {split, ge, lt}, {piece} or {empty: true}")


def _substitute(p, equalities: dict, sizes: _Sizes):
    for name, value in equalities.items():
        p = p.subs({name: value})
    return p


def _equalities(raw, constraints: list, sizes: _Sizes, where: str) -> dict:
    """``{parameter: integer}`` of the piece, each implied by its constraints."""
    out = {}
    for k, text in enumerate(seq(raw, where)):
        if not isinstance(text, str) or "=" not in text or text.count("=") != 1:
            reject(f"{where}[{k}] must read 'parameter = integer'")
        lhs, rhs = (s.strip() for s in text.split("="))
        if lhs not in sizes.names or lhs in out or not rhs.lstrip("-").isdigit() or len(rhs) > 6:
            reject(f"{where}[{k}] must read 'parameter = integer'")
        g = sizes.poly(lhs, where) - int(rhs)
        if not (implies(constraints, g) and implies(constraints, -g)):
            reject(f"{where}[{k}] does not follow from the piece's constraints")
        out[lhs] = int(rhs)
    return out


def _falling(n, k: int):
    out = n ** 0
    for i in range(k):
        out *= n - i
    return out


def _count(block: Block, piece: Piece):
    per: dict = {}
    for c in block.vars.values():
        per[c] = per.get(c, 0) + 1
    out = None
    for c, k in sorted(per.items()):
        f = _falling(piece.size[c], k)
        out = f if out is None else out * f
    return out


def formula_on(theorem: dict, constraints: list, sizes: _Sizes, equal: dict, where: str):
    """The formula's value on a piece: the first case whose conditions hold on all of it, with its equalities.

    Examples
    --------
    >>> sizes = _Sizes(["d", "dd", "a"])
    >>> d, dd, a = sizes.ctx.gens()
    >>> theorem = THEOREMS["single-layer-dimension"]
    >>> formula_on(theorem, [d - 1, dd - 1, a - d - 1], sizes, {}, "piece")     # a > d
    d^2 + d*dd - 1
    >>> formula_on(theorem, [d - 1, dd - 1, a - 1], sizes, {}, "piece")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: piece: no case of the formula holds on the whole piece
    """
    cases = [c for c in theorem["formula"] if all(implies(constraints, sizes.inequality(w)) for w in c["when"])]
    if not cases:
        reject(f"{where}: no case of the formula holds on the whole piece")
    return _substitute(sizes.poly(cases[0]["value"], "formula"), equal, sizes)


def _piece(cert_piece: dict, k: int, constraints: list, theorem: dict, sizes: _Sizes, budget: dict) -> None:
    where = f"pieces[{k}]"
    equal = _equalities(field(cert_piece, "equalities"), constraints, sizes, f"{where}.equalities")
    formula = formula_on(theorem, constraints, sizes, equal, where)
    if theorem.get("argument") == "depth-induction":
        layerwitness.check_piece(cert_piece, where, constraints, {p: sizes.poly(p, where) for p in ("l", "d", "a")},
                                 formula, lambda p: _substitute(p, equal, sizes))
        return
    if theorem.get("argument") == "criterion-point":
        criterionsizes.check_piece(cert_piece, where, constraints, lambda p: sizes.poly(p, where), formula,
                                   lambda p: _substitute(p, equal, sizes))
        return
    deep = theorem.get("deep", False)
    if set(cert_piece) != PIECE_KEYS[deep]:
        reject(f"{where} must have exactly {sorted(PIECE_KEYS[deep])}")
    size_of = lambda text, w: sizes.poly(text, f"{where}.{w}")  # noqa: E731
    piece = DeepPiece(cert_piece, size_of, budget) if deep else Piece(cert_piece, theorem["factored"], size_of, budget)
    if deep and _substitute(sizes.poly("l", where) - piece.l, equal, sizes) != 0:
        reject(f"{where} has {piece.l} layers, which is not l on the piece")
    for c, n in piece.size.items():
        if not implies(constraints, n):
            reject(f"{where}: cell {c} may have negative size on the piece")
    for sort, expected in theorem["sorts"].items():
        total = sum((_prod(piece.size[c] for c in shape) for shape in piece.sorts[sort]), sizes.ctx.from_dict({}))
        if _substitute(total - sizes.poly(expected, "sorts"), equal, sizes) != 0:
            reject(f"{where}: sort {sort} does not have {expected} indices")
    minors = {}
    for side, key in (("lower", "rank"), ("upper", "fields")):
        part = obj(field(cert_piece, side), f"{where}.{side}")
        raw = seq(field(part, "blocks"), f"{where}.{side}.blocks")
        blocks = [Block(piece, b, side, f"{where}.{side}.blocks[{i}]", i) for i, b in enumerate(raw)]
        total = sizes.ctx.from_dict({})
        for i, block in enumerate(blocks):
            n = _count(block, piece)
            if _substitute(sizes.poly(block.count, f"{where}.{side}.blocks[{i}].count") - n, equal, sizes) != 0:
                reject(f"{where}.{side}.blocks[{i}]: the count is not the number of its instances")
            total += n * len(block.columns)
        if _substitute(sizes.poly(part[key], f"{where}.{side}.{key}") - total, equal, sizes) != 0:
            reject(f"{where}.{side}.{key} is not the sum of the blocks' counts times their sides")
        minors[side] = (blocks, total)
    P = sizes.poly(theorem["P"], "P")
    if _substitute(minors["lower"][1] - formula, equal, sizes) != 0:
        reject(f"{where}: the lower minor's rank is not the formula on this piece")
    if _substitute(P - minors["upper"][1] - formula, equal, sizes) != 0:
        reject(f"{where}: P minus the fields' rank is not the formula on this piece")
    for fam in {row[0].rstrip("0123456789") for b in minors["upper"][0] for row in b.rows}:
        holds = groups.identities_hold(fam) if deep else groups.head_identities_hold(fam, theorem["factored"])
        if not holds:
            reject(f"the invariance identity of the {fam} family does not hold")
    verify_minor(piece, minors["upper"][0])
    verify_minor(piece, minors["lower"][0])


def _prod(factors):
    out = None
    for f in factors:
        out = f if out is None else out * f
    return out if out is not None else 1


def _statement(name: str, argument) -> dict:
    """The checker's statement a certificate of ``name`` proves by ``argument`` (``None``: an earlier one)."""
    theorem = THEOREMS[name]
    if argument == theorem.get("argument"):
        return theorem
    if argument is None and name in SUPERSEDED:
        return SUPERSEDED[name]
    earlier = " (or none: the earlier statement)" if name in SUPERSEDED else ""
    reject(f"argument must be {theorem.get('argument')!r}{earlier} for {name}, not {str(argument)[:40]!r}")


def case_split(cert: dict, name: str, theorem: dict) -> tuple[_Sizes, list, list]:
    """Steps 1 and 2 for the checker's statement ``theorem``: the sizes' ring, the pieces, and each piece's index
    with its constraints (the hypotheses and its path in the case tree), in the pieces' order.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import prove
    >>> sizes, pieces, leaves = case_split(prove("deep-dimension"), "deep-dimension", THEOREMS["deep-dimension"])
    >>> sizes.names, len(pieces), [k for k, _ in leaves]
    (('l', 'd', 'a'), 3, [0, 1, 2])
    """
    if field(cert, "scope") != "all sizes":
        reject("scope must be \"all sizes\"")
    for key in ("parameters", "hypotheses", "formula"):
        if field(cert, key) != theorem[key]:
            reject(f"{key} is not the checker's statement of {name}")
    sizes = _Sizes(theorem["parameters"])
    hypotheses = [sizes.inequality(h) for h in theorem["hypotheses"]]
    pieces = seq(field(cert, "pieces"), "pieces")
    if not pieces or len(pieces) > MAX_PIECES:
        raise CertificateFormatError(f"a certificate has 1 to {MAX_PIECES} pieces")
    leaves: list = []
    _nodes(field(cert, "cases"))
    _leaves(field(cert, "cases"), sizes, hypotheses, leaves)
    if sorted(k for k, _ in leaves) != list(range(len(pieces))):
        reject("cases must name every piece exactly once")
    return sizes, pieces, sorted(leaves, key=lambda kv: kv[0])


def check(cert: dict) -> str:
    """Verify an all-sizes dimension certificate (module docstring); the claim in the checker's words.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import prove
    >>> check(prove("single-layer-dimension"))    # doctest: +ELLIPSIS
    'for all sizes: dim M = 2*d*a + d*dd - a^2 - 1 if a <= d; d^2 + d*dd - 1 if a >= d + 1; one lightning ...'
    """
    name = field(cert, "theorem")
    if not isinstance(name, str) or name not in THEOREMS:
        reject(f"unknown theorem (this checker proves {sorted(THEOREMS)})")
    theorem = _statement(name, cert.get("argument"))
    sizes, pieces, leaves = case_split(cert, name, theorem)
    budget = {"work": 0}
    for k, constraints in leaves:
        _piece(obj(pieces[k], f"pieces[{k}]"), k, constraints, theorem, sizes, budget)
    cases = "; ".join(f"{c['value']}" + (f" if {', '.join(c['when'])}" if c["when"] else "") for c in theorem["formula"])
    return (f"for all sizes: dim M = {cases}; {theorem['claim']}, for all "
            f"{', '.join(theorem['hypotheses'])} ({len(pieces)} pieces)")
