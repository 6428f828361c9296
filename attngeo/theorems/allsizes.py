"""Theorems for all sizes: ``attngeo prove NAME`` (docs/math.md §7.1).

Each statement is a formula for ``dim M`` on a range of sizes given by
hypotheses, and a **case tree**: polynomial splits (``g >= 0`` / ``g <= -1``)
whose leaves are empty or carry one pattern point
(:mod:`attngeo.geometry.dimension.patternpoint`), valid on the whole leaf. For
each leaf the prover finds the two triangular minors; the certificate holds the
tree, the points and the blocks, and the checker
(:mod:`attngeo.check.dimension.allsizes`) re-derives every block, count and
identity itself.

``deep-dimension`` is proved for every depth by an induction on depth instead
(docs/math.md §7.7, ``argument: depth-induction``): its three leaves carry one
layer's witnesses (:mod:`attngeo.geometry.dimension.layerwitness`). The earlier
certificate of it, pattern points at each depth ``l <= 3`` and rank ``a <= 3``,
is :data:`SUPERSEDED` (``prove(name, superseded=True)``), and the checker still
reads it with that scope.

``deep-fibers`` is not a dimension: the number of orbits of the symmetry group in
the generic fiber of a deep network, for every depth and width (docs/math.md
Theorem 7.8, kind ``fiber-all-sizes``); its leaves carry a witness point's core and
the last layer's shift.

Examples
--------
>>> from attngeo.check import check_certificate
>>> cert = prove("single-layer-dimension")
>>> cert["scope"], len(cert["pieces"])
('all sizes', 8)
>>> check_certificate(cert).claim.startswith("for all sizes: dim M = 2*d*a + d*dd - a^2 - 1 if a <= d")
True
>>> deep = prove("deep-dimension")
>>> deep["argument"], deep["hypotheses"], [p["lemma"] for p in deep["pieces"]]
('depth-induction', ['l >= 1', 'a >= 1', 'a <= d'], ['peeling', 'rank-one', 'rank-one'])
>>> fibers = prove("deep-fibers")
>>> fibers["kind"], [p["shift"] for p in fibers["pieces"]]
('fiber-all-sizes', ['a', 'a', 'a', 'd - a'])
"""

from __future__ import annotations

import re
import time

import sympy
from dataclasses import dataclass
from sympy.parsing.sympy_parser import parse_expr

from ..check import check_certificate
from ..exceptions import CertificateRejected, InvalidInputError
from ..geometry.certificate import certificate_json
from ..geometry.dimension.deeppattern import deep_piece
from ..geometry.dimension.layerwitness import CORE, peeling_piece, rank_one_piece
from ..geometry.dimension.patternpoint import Design, find_minors, head_design, ones_design, region_design, total


def _leaf(design: Design, *equalities: str) -> tuple:
    return ("piece", design, equalities)


def _split(g: str, ge, lt) -> tuple:
    return ("split", g, ge, lt)


EMPTY = ("empty",)


def _single_layer_tree() -> tuple:
    """Pieces by the order of ``a``, ``d``, ``dd``; witnesses (singletons) where a pivot needs one."""
    r = region_design
    return _split(
        "a - d - 1",
        _split("dd - d - 1",
               _leaf(r([("S", "in hid out", "d", 1), ("G", "hid", "a - d", 0), ("X", "out", "dd - d", 0)])),
               _leaf(r([("S", "in hid out", "dd", 1), ("E", "in hid", "d - dd", 0), ("G", "hid", "a - d", 0)]))),
        _split(
            "dd - d - 1",
            _leaf(r([("S", "in hid out", "a", 1), ("E", "in out", "d - a", 0), ("X", "out", "dd - d", 0)])),
            _split(
                "dd - a",
                _split(
                    "a - 2",
                    _leaf(r([("S", "in hid out", "a", 2), ("E", "in out", "dd - a", 0), ("R", "in", "d - dd", 0)])),
                    _split(
                        "dd - 2",
                        _leaf(r([("S", "in hid out", "a", 1), ("E", "in out", "dd - a", 1),
                                 ("R", "in", "d - dd", 0)])),
                        # a = dd = 1: the plain point is a rank-1 parallel point (docs/math.md §6.2); V takes
                        # another input than Q, K (a swap point) when there is one
                        _split("d - 2",
                               _leaf(r([("o", "in hid", None, 1), ("q", "in out", None, 1), ("R", "in", "d - 2", 0)]),
                                     "dd = 1", "a = 1"),
                               _leaf(r([("S", "in hid out", None, 1)]), "d = 1", "dd = 1", "a = 1")))),
                _leaf(r([("S", "in hid out", "dd", 1), ("E", "in hid", "a - dd", 1), ("R", "in", "d - a", 0)])))))


def _multihead_tree() -> tuple:
    """Heads on disjoint blocks of ``max(a, b)`` inputs (the block point), split by ``a`` against ``b``;
    ``a = b = 1`` at the ones point."""
    h = head_design
    return _split(
        "a + b - 3",
        _split("b - a",
               _split("a - 2", _leaf(h("a <= b", 2)), _leaf(h("a <= b", 1, 1))),
               _split("b - 2", _leaf(h("b < a", 2)), _leaf(h("b < a", 1, 1)))),
        _leaf(ones_design(), "a = 1", "b = 1"))


def _depth_tree() -> tuple:
    """Every depth: the peeling lemma for ``a >= 2``, the rank-one lemma for ``a = 1`` (its own witness at ``d = 1``)."""
    return _split("a - 2", ("witness", peeling_piece(), ()),
                  _split("d - 2", ("witness", rank_one_piece(), ("a = 1",)),
                         ("witness", rank_one_piece(width_one=True), ("a = 1", "d = 1"))))


def _fiber_tree() -> tuple:
    """Theorem 7.8 (1): the last layer's shift ``s = a`` where ``2a <= d`` (so ``s + a = 2a``), else ``d - a`` (``d``);
    one orbit where ``a >= 2`` or ``dd >= 2``, two (the swap) at ``a = dd = 1``; every piece with the core of §7.7."""
    core = peeling_piece(CORE)["core"]

    def leaf(shift: str, *equalities: str) -> tuple:
        return ("witness", {"core": core, "shift": shift}, equalities)

    return _split("d - 2*a",
                  _split("a - 2", leaf("a"), _split("dd - 2", leaf("a", "a = 1"), leaf("a", "a = 1", "dd = 1"))),
                  leaf("d - a"))


def _criterion_tree() -> tuple:
    """Corollary C's selector point: the value columns shifted by one only where ``a = b = 1`` (then ``d >= 3`` by the
    hypothesis ``a + b + d >= 5``), so that a group's key and value rows differ."""
    return _split("a - 2", ("witness", {"shift": "0"}, ()),
                  _split("b - 2", ("witness", {"shift": "0"}, ("a = 1",)), ("witness", {"shift": "1"}, ("a = 1", "b = 1"))))


#: Depths and ranks the superseded deep statement covers (every width): a pattern piece's blocks grow with them.
DEEP_DEPTHS, DEEP_RANKS = 3, 3


def _deep_tree() -> tuple:
    """One piece per depth ``l`` and rank ``a``, every width ``d >= a`` (``a = 1``: ``d = 1`` apart)."""
    def by(name: str, values: range, leaf):
        node = leaf(values[-1])
        for v in reversed(values[:-1]):
            node = _split(f"{name} - {v + 1}", node, leaf(v))
        return node

    def deep_leaf(l, a):
        if a > 1:
            return ("deep", (l, a, False), (f"l = {l}", f"a = {a}"))
        return _split("d - 2", ("deep", (l, 1, False), (f"l = {l}", "a = 1")),
                      ("deep", (l, 1, True), (f"l = {l}", "a = 1", "d = 1")))

    return by("l", range(1, DEEP_DEPTHS + 1), lambda l: by("a", range(1, DEEP_RANKS + 1), lambda a: deep_leaf(l, a)))


@dataclass(frozen=True)
class AllSizes:
    """A statement ``attngeo prove`` proves for every size in its hypotheses.

    Attributes
    ----------
    name : str
        The statement's name (shared with :mod:`attngeo.theorems.registry`).
    parameters, hypotheses, formula
        As the checker states them (:data:`attngeo.check.dimension.allsizes.THEOREMS`).
    tree : callable
        Builds the case tree with its pattern points.

    Examples
    --------
    >>> s = STATEMENTS["multihead-layer-dimension"]
    >>> s.to_json()["hypotheses"]
    ['h >= 1', 'a >= 1', 'b >= 1', 'h*a <= d', 'h*b <= d']
    """

    name: str
    parameters: tuple
    hypotheses: tuple
    formula: tuple
    tree: object
    #: The architectures, as LaTeX text (math in dollars): what the checker's claim says in words.
    family: str = ""
    argument: str | None = None
    #: The certificate's kind, what the formula's value counts (LaTeX and text) and how it is proved, in words.
    kind: str = "dimension-all-sizes"
    quantity: str = r"\dim \mathcal{M}"
    quantity_text: str = "dim M"
    method: str = ""
    #: The architectures in plain text, for the terminal (``prove``'s ``networks`` line).
    family_text: str = ""

    def to_json(self) -> dict:
        # "all sizes" names the kind of proof (the checker requires it); scope() says which sizes
        return {"theorem": self.name, **({"argument": self.argument} if self.argument else {}), "scope": "all sizes",
                "parameters": list(self.parameters), "hypotheses": list(self.hypotheses),
                "formula": [{"when": list(w), "value": v} for w, v in self.formula]}

    def scope(self) -> str:
        """The sizes the statement is proved for, in words (:func:`scope`)."""
        return scope(self.parameters, self.hypotheses)


    def latex(self) -> str:
        """The formula with its cases and hypotheses, one LaTeX string (math), by ``sympy.latex``.

        Examples
        --------
        >>> print(STATEMENTS["deep-dimension"].latex())
        \\dim \\mathcal{M} = - a^{2} l + 2 a d l + d^{2} - l \\quad \\text{for all } l \\geq 1,\\ a \\geq 1,\\ a \\leq d
        >>> print(STATEMENTS["single-layer-dimension"].latex().split(r"\\quad")[0].strip())
        \\dim \\mathcal{M} = \\begin{cases} - a^{2} + 2 a d + d d' - 1 & \\text{if } a \\leq d \\\\ d^{2} + d d' - 1 & \\text{if } a \\geq d + 1 \\end{cases}
        """
        return r" \quad ".join(self.latex_parts())

    def latex_parts(self) -> list[str]:
        """The formula and the hypotheses, two LaTeX strings (math): the lines of ``prove --latex``."""
        from ..latex import expression

        def when(conditions):
            return r"\text{if } " + r",\ ".join(map(expression, conditions)) if conditions else ""

        if len(self.formula) == 1 and not self.formula[0][0]:
            value = expression(self.formula[0][1])
        else:
            value = (r"\begin{cases} " + r" \\ ".join(f"{expression(v)} & {when(w)}" for w, v in self.formula)
                     + r" \end{cases}")
        return [rf"{self.quantity} = {value}", r"\text{for all } " + r",\ ".join(map(expression, self.hypotheses))]


_BOUND = re.compile(r"(\w+) <= (\d+)$")
_AT_LEAST_ONE = re.compile(r"\w+ >= 1$")


def scope(parameters, hypotheses) -> str:
    """The sizes a statement is proved for, in words: the parameters bounded by a constant, then the free ones.

    A parameter bounded by a constant (``l <= 3``) makes the theorem one for those values only, not for
    every size; sizes are at least 1 anyway, so ``x >= 1`` is not repeated; a parameter between 0 and 1 is a
    choice (with or without biases), both of which are proved.

    Examples
    --------
    >>> scope(["l", "d", "a"], ["l >= 1", "l <= 3", "a >= 1", "a <= 3", "a <= d"])
    'l <= 3 and a <= 3 only; every d, with a <= d'
    >>> scope(["d", "dd", "a"], ["d >= 1", "dd >= 1", "a >= 1"])
    'every d, dd, a'
    >>> scope(["d", "a", "bias"], ["d >= 1", "a >= 1", "a <= d", "bias >= 0", "bias <= 1"])   # bias: 0 or 1
    'every d, a, with a <= d, bias = 0 and bias = 1'
    """
    switches = [p for p in parameters if f"{p} >= 0" in hypotheses and f"{p} <= 1" in hypotheses]  # 0 or 1: a choice
    hypotheses = [h for h in hypotheses if h not in {f"{p} {op}" for p in switches for op in (">= 0", "<= 1")}]
    bounded = [h for h in hypotheses if _BOUND.match(h)]
    fixed = {_BOUND.match(h).group(1) for h in bounded} | set(switches)
    free = [p for p in parameters if p not in fixed]
    relations = [h for h in hypotheses if not _BOUND.match(h) and not _AT_LEAST_ONE.match(h)]
    text = f"every {', '.join(free)}" + (f", with {', '.join(relations)}" if relations else "")
    text += "".join(f", {p} = 0 and {p} = 1" for p in switches)
    return (f"{' and '.join(bounded)} only; " if bounded else "") + text


def tex(text: str) -> str:
    """A formula or hypothesis of a statement as LaTeX math, in the order written (``dd`` is the width ``d'``).

    Examples
    --------
    >>> print(tex("2*d*a + d*dd - a^2 - 1"), "|", tex("h*a <= d"))
    2 d a + d d' - a^{2} - 1 | h a \\leq d
    """
    names = {n: sympy.Symbol(n) for n in re.findall(r"[A-Za-z]\w*", text)}
    names["dd"] = sympy.Symbol("d'")
    names["bias"] = sympy.Symbol(r"\beta")
    return sympy.latex(parse_expr(text.replace("^", "**"), local_dict=names, evaluate=False), order="none")


STATEMENTS = {
    "single-layer-dimension": AllSizes(
        "single-layer-dimension", ("d", "dd", "a"), ("d >= 1", "dd >= 1", "a >= 1"),
        ((("a <= d",), "2*d*a + d*dd - a^2 - 1"), (("a >= d + 1",), "d^2 + d*dd - 1")), _single_layer_tree,
        r"one lightning layer $d \to d'$ of rank $a$ (one head), $t \ge 2$",
        family_text="one lightning layer d -> dd of rank a (one head)"),
    "deep-dimension": AllSizes(
        "deep-dimension", ("l", "d", "a"), ("l >= 1", "a >= 1", "a <= d"),
        (((), "2*l*a*d - l*a^2 + d^2 - l"),), _depth_tree,
        r"$l$ lightning layers of equal width $d$ and rank $a$, $t \ge 2$", argument="depth-induction",
        family_text="l lightning layers of equal width d and rank a",
        method="induction on depth (docs/math.md §7.7)"),
    "deep-fibers": AllSizes(
        "deep-fibers", ("l", "d", "dd", "a"), ("l >= 2", "d >= 2", "dd >= 1", "a >= 1", "a <= d", "2*a + dd >= d"),
        ((("a + dd >= 3",), "1"), (("a + dd <= 2",), "2")), _fiber_tree,
        r"$l$ lightning layers of widths $d, \dots, d, d'$ (every hidden width $d$), earlier ranks "
        r"$2 \le a_i \le d$ and last rank $a$, $t \ge 2$; each orbit of dimension $\dim G$",
        argument="virtual-peeling", kind="fiber-all-sizes", quantity=r"\#\, G\text{-orbits in the generic fiber}",
        quantity_text="G-orbits in the generic fiber",
        family_text="l lightning layers of widths d, ..., d, dd (every hidden width d), earlier ranks 2 <= a_i <= d, "
                    "last rank a",
        method="a witness point at every size, peeled by Lemmas P and A (docs/math.md §7.8)"),
    "softmax-criterion": AllSizes(
        "softmax-criterion", ("d", "dd", "g", "n", "a", "b", "bias"),
        ("d >= 2", "dd >= 1", "g >= 1", "n >= 1", "a >= 1", "b >= 1", "bias >= 0", "bias <= 1",
         "g*n*a <= d", "g*n*b <= dd", "b <= d", "a + b + d >= 5"),
        (((), "g*n*a*d + g*a*d + g*b*d + g*n*b*dd - g*a^2 - g*b^2 + bias*g*n*a + bias*dd"),), _criterion_tree,
        r"one softmax layer $d \to d'$ with $h = g n$ heads of rank $a$ in $g$ key-value groups of $n$ heads, value "
        r"rank $b$ ($V_j = O_j U_\gamma$), with biases on every projection when $\beta = 1$ (none when $\beta = 0$), at every "
        r"score scale, causal or not, residual or not, $t \ge 2$",
        family_text="one softmax layer d -> dd, h = g*n heads of rank a in g key-value groups of n heads, value "
                    "rank b (V_j = O_j U_g), biases on every projection if bias = 1, any score scale, causal or not, "
                    "residual or not",
        argument="criterion-point", method="Theorem C at a selector point of every size (docs/math.md §8.3, "
                                           "Corollary C)"),
    "multihead-layer-dimension": AllSizes(
        "multihead-layer-dimension", ("d", "h", "a", "b"),
        ("h >= 1", "a >= 1", "b >= 1", "h*a <= d", "h*b <= d"),
        (((), "2*h*a*d + 2*h*b*d - h*a^2 - h*b^2 - h"),), _multihead_tree,
        r"one lightning layer $d \to d$ with $h$ heads of rank $a$ and value rank $b$ ($V_j = O_j U_j$), $t \ge 2$",
        family_text="one lightning layer d -> d with h heads of rank a and value rank b (V_j = O_j U_j)"),
}


#: Earlier proofs of a statement, kept because the checker still reads their certificates (with their own scope)
#: and because they do not use the lemmas of the current proof: ``deep-dimension`` by pattern points (§7.1).
SUPERSEDED = {
    "deep-dimension": AllSizes(
        "deep-dimension", ("l", "d", "a"), ("l >= 1", f"l <= {DEEP_DEPTHS}", "a >= 1", f"a <= {DEEP_RANKS}", "a <= d"),
        (((), "2*l*a*d - l*a^2 + d^2 - l"),), _deep_tree,
        r"$l$ lightning layers of equal width $d$ and rank $a$, $t \ge 2$"),
}

#: Registered statements ``attngeo prove`` knows but cannot prove for all sizes, and why.
NOT_PROVED = {
    "softmax-single-layer": "its case a > d is not covered; for a <= d it is softmax-criterion with g = n = 1 and "
                            "b = min(d, d') (a value map of any rank factors through b), proved for all sizes with "
                            "a + b + d >= 5 (docs/math.md §8.3, Corollary C)",
}


def _known(name: str) -> AllSizes:
    if name in STATEMENTS:
        return STATEMENTS[name]
    if name in NOT_PROVED:
        raise InvalidInputError(f"prove {name}: not proved for all sizes: {NOT_PROVED[name]}; "
                                f"'attngeo certify --only {name}' certifies it on a range")
    raise InvalidInputError(f"prove {name}: not a statement proved for all sizes; choose one of "
                            f"{', '.join(STATEMENTS)}")


def _deep_total(blocks: list) -> str:
    """``Σ count x side`` of deep blocks (counts are polynomials in ``d``)."""
    d = sympy.Symbol("d")
    return str(sympy.expand(sum(sympy.sympify(b["count"], locals={"d": d}) * len(b["columns"]) for b in blocks)))


def prove(name: str, superseded: bool = False) -> dict:
    """The all-sizes certificate of a statement of :data:`STATEMENTS` (a dict, ready to write or check).

    ``superseded``: the earlier proof of :data:`SUPERSEDED` instead (its narrower scope).

    Raises
    ------
    InvalidInputError
        ``name`` is not one of them, or one the toolkit cannot prove for all sizes (the message says why).

    Examples
    --------
    >>> prove("softmax-single-layer")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: prove softmax-single-layer: not proved for all sizes: its case a > d ...
    """
    statement = _known(name)
    if superseded:
        if name not in SUPERSEDED:
            raise InvalidInputError(f"prove {name}: no earlier proof of it is kept")
        statement = SUPERSEDED[name]
    start = time.perf_counter()
    pieces: list = []

    def walk(node):
        if node[0] == "split":
            return {"split": node[1], "ge": walk(node[2]), "lt": walk(node[3])}
        if node[0] == "empty":
            return {"empty": True}
        if node[0] == "witness":
            pieces.append({"equalities": list(node[2]), **node[1]})
            return {"piece": len(pieces) - 1}
        if node[0] == "deep":
            _, (l, a, tiny), equalities = node
            piece = deep_piece(l, a, tiny)
            for side, key in (("lower", "rank"), ("upper", "fields")):
                piece[side][key] = _deep_total(piece[side]["blocks"])
            pieces.append({"equalities": list(equalities), **piece})
            return {"piece": len(pieces) - 1}
        _, design, equalities = node
        lower, upper = find_minors(design)
        data = design.to_json()
        pieces.append({"equalities": list(equalities), **data,
                       "lower": {"blocks": [b.to_json() for b in lower], "rank": total(lower, design)},
                       "upper": {"blocks": [b.to_json() for b in upper], "fields": total(upper, design)}})
        return {"piece": len(pieces) - 1}

    cases = walk(statement.tree())
    return certificate_json(statement.kind, {**statement.to_json(), "cases": cases, "pieces": pieces,
                                   "seconds": round(time.perf_counter() - start, 3)})


@dataclass(frozen=True)
class Proof:
    """A statement proved for all sizes: its certificate and the independent checker's claim.

    Attributes
    ----------
    certificate : dict
        The ``dimension-all-sizes`` certificate.
    claim : str
        What :func:`attngeo.check.check_certificate` verified, in the checker's words.
    check_seconds : float
        Time the checker took.

    Examples
    --------
    >>> proof = proved("single-layer-dimension")
    >>> proof.certificate["kind"], proof.claim.endswith("(8 pieces)")
    ('dimension-all-sizes', True)
    """

    certificate: dict
    claim: str
    check_seconds: float

    def summary(self) -> dict:
        """The JSON summary ``attngeo prove --json`` prints.

        Examples
        --------
        >>> s = proved("single-layer-dimension").summary()
        >>> s["scope"], s["hypotheses"], s["pieces"]
        ('every d, dd, a', ['d >= 1', 'dd >= 1', 'a >= 1'], 8)
        >>> deep = proved("deep-dimension").summary()
        >>> deep["scope"], deep["argument"], deep["lemmas"]
        ('every l, d, a, with a <= d', 'depth-induction', ['peeling', 'rank-one', 'rank-one'])
        """
        c = self.certificate
        out = {"theorem": c["theorem"], "scope": scope(c["parameters"], c["hypotheses"]),
               "parameters": c["parameters"],
               "hypotheses": c["hypotheses"], "formula": c["formula"], "pieces": len(c["pieces"])}
        if "argument" in c:  # pieces of one layer's (or one point's) witnesses (docs/math.md §7.7, §7.8), no minors
            out["argument"] = c["argument"]
            if all("lemma" in p for p in c["pieces"]):
                out["lemmas"] = [p["lemma"] for p in c["pieces"]]
            else:  # a witness point per piece: the last layer's shift (docs/math.md §7.8)
                out["shifts"] = [p["shift"] for p in c["pieces"]]
        else:
            out["blocks"] = {side: sum(len(p[side]["blocks"]) for p in c["pieces"]) for side in ("lower", "upper")}
        return {**out, "claim": self.claim, "seconds": c["seconds"], "check_seconds": round(self.check_seconds, 3)}


def proved(name: str) -> Proof:
    """Prove a statement for all sizes and have the independent checker verify the certificate.

    Raises
    ------
    InvalidInputError
        As :func:`prove`.
    CertificateRejected
        The checker refused the prover's certificate (a bug: nothing is claimed).

    Examples
    --------
    >>> proved("multihead-layer-dimension").claim.startswith("for all sizes: dim M = 2*h*a*d + 2*h*b*d")
    True
    """
    cert = prove(name)
    start = time.perf_counter()
    try:
        claim = check_certificate(cert).claim
    except CertificateRejected as exc:
        raise CertificateRejected(f"the checker refused the certificate of {name} ({exc}); nothing is proved") from None
    return Proof(cert, claim, time.perf_counter() - start)


def piece_at(cert: dict, sizes: dict) -> int:
    """The piece of an all-sizes certificate whose case contains the given sizes (walks the case tree).

    Raises
    ------
    InvalidInputError
        The sizes violate the hypotheses or fall on a leaf marked empty.

    Examples
    --------
    >>> cert = prove("single-layer-dimension")
    >>> cert["pieces"][piece_at(cert, {"d": 5, "dd": 3, "a": 2})]["cells"]
    {'S0': '1', 'S1': '1', 'S': 'a - 2', 'E': 'dd - a', 'R': 'd - dd'}
    """
    import sympy

    def value(text):
        return int(sympy.sympify(text, locals={p: sympy.Symbol(p) for p in sizes}).subs(sizes))

    for h in cert["hypotheses"]:
        op = ">=" if ">=" in h else "<="
        lhs, rhs = h.split(op)
        if (value(lhs) - value(rhs)) * (1 if op == ">=" else -1) < 0:
            raise InvalidInputError(f"sizes {sizes} violate the hypothesis {h}")
    node = cert["cases"]
    while "split" in node:
        node = node["ge"] if value(node["split"]) >= 0 else node["lt"]
    if "piece" not in node:
        raise InvalidInputError(f"sizes {sizes} fall on an empty case")
    return node["piece"]
