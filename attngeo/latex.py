"""LaTeX for the mathematics attngeo prints: rationals, matrices, polynomials.

Variable names follow one convention so that polynomials render the way a paper
writes them: ``A_1_2`` is :math:`A_{12}`, ``c_1_2_12`` is :math:`c_{1,2,12}`
(indices joined by commas when any has two digits), a name without underscores
renders as itself.
"""

from __future__ import annotations

import re

from flint import fmpq, fmpq_mat


def rational(x: fmpq) -> str:
    """An exact rational: an integer as itself, otherwise a signed ``\\tfrac``.

    Examples
    --------
    >>> print(rational(fmpq(-3, 4)), rational(fmpq(6, 3)))
    -\\tfrac{3}{4} 2
    """
    if x.q == 1:
        return str(x.p)
    sign = "-" if x.p < 0 else ""
    return rf"{sign}\tfrac{{{abs(x.p)}}}{{{x.q}}}"


def matrix(M: fmpq_mat) -> str:
    """A rational matrix as a ``pmatrix``.

    Examples
    --------
    >>> print(matrix(fmpq_mat([[1, fmpq(1, 2)], [0, -1]])))
    \\begin{pmatrix}1 & \\tfrac{1}{2} \\\\ 0 & -1\\end{pmatrix}
    """
    rows = [" & ".join(rational(M[r, c]) for c in range(M.ncols())) for r in range(M.nrows())]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


def variable(name: str) -> str:
    """``A_1_2`` -> ``A_{12}``; ``c_1_2_12`` -> ``c_{1,2,12}``.

    A name of letters then digits is subscripted too (``y0`` -> ``y_{0}``); any
    other name without underscores renders as itself.

    Examples
    --------
    >>> variable("A_1_2"), variable("c_1_2_12"), variable("y0"), variable("t")
    ('A_{12}', 'c_{1,2,12}', 'y_{0}', 't')
    """
    base, *indices = name.split("_")
    if not indices:
        plain = re.fullmatch(r"([A-Za-z]+)(\d+)", name)  # y0 -> y_{0}
        return f"{plain.group(1)}_{{{plain.group(2)}}}" if plain else base
    joiner = "," if any(len(i) > 1 for i in indices) else ""
    return f"{base}_{{{joiner.join(indices)}}}"


def _monomial(names: list[str], exps: tuple) -> str:
    parts = []
    for name, e in zip(names, exps):
        if e:
            parts.append(variable(name) + (f"^{{{e}}}" if e > 1 else ""))
    return " ".join(parts)


def polynomial(p) -> str:
    """A python-flint ``fmpq_mpoly`` / ``fmpz_mpoly`` in LaTeX, terms in the ring's order.

    Variable names follow :func:`variable`; coefficients follow :func:`rational`.

    Examples
    --------
    >>> from flint import fmpq_mpoly_ctx
    >>> ctx = fmpq_mpoly_ctx.get(("A_1_1", "V_1_2"), "degrevlex")
    >>> a, v = ctx.gens()
    >>> polynomial(a**2 - a * v / 2 + 3)
    'A_{11}^{2} - \\\\tfrac{1}{2} A_{11} V_{12} + 3'
    """
    names = list(p.context().names())
    if p == 0:
        return "0"
    out = []
    for i, (exps, c) in enumerate(zip(p.monoms(), p.coeffs())):
        c = fmpq(c)
        mono = _monomial(names, exps)
        sign = "-" if c < 0 else "+"
        mag = rational(abs(c)) if (abs(c) != 1 or not mono) else ""
        body = " ".join(x for x in (mag, mono) if x)
        out.append((("-" if sign == "-" else "") if i == 0 else f" {sign} ") + body)
    return "".join(out)


def balanced(text: str) -> bool:
    """True when every ``{`` is closed in order (a cheap validity test for generated LaTeX).

    Examples
    --------
    >>> balanced("c_{1,2}^{3}"), balanced("}{"), balanced("A_{1")
    (True, False, False)
    """
    depth = 0
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            return False
    return depth == 0


def architecture(arch) -> str:
    """An architecture as inline math (no dollars).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> print(architecture(Architecture((3, 3, 3), (2, 2), tokens=3)))
    \\text{lightning attention}\\; d = (3, 3, 3),\\; a = (2, 2),\\; t = 3
    """
    d = ", ".join(map(str, arch.widths))
    a = ", ".join(map(str, arch.ranks))
    return rf"\text{{{arch.normalization} attention}}\; d = ({d}),\; a = ({a}),\; t = {arch.tokens}"


def dimension(lower: int, upper: int) -> str:
    """``dim M = n (certified)`` or the two bounds.

    Examples
    --------
    >>> print(dimension(16, 16))
    \\dim \\mathcal{M} = 16\\ \\text{(certified)}
    >>> print(dimension(14, 16))
    14 \\le \\dim \\mathcal{M} \\le 16\\ \\text{(bounds only)}
    """
    if lower == upper:
        return rf"\dim \mathcal{{M}} = {lower}\ \text{{(certified)}}"
    return rf"{lower} \le \dim \mathcal{{M}} \le {upper}\ \text{{(bounds only)}}"


def forms(F: list[list]) -> str:
    """A matrix of polynomials (e.g. the quadratic forms ``F_kp(y)``) as a pmatrix.

    Examples
    --------
    >>> from flint import fmpq_mpoly_ctx
    >>> ctx = fmpq_mpoly_ctx.get(("y0", "y1"), "degrevlex")
    >>> y0, y1 = ctx.gens()
    >>> print(forms([[y0**2, y0 * y1], [ctx.from_dict({}), y1**2 / 2]]))
    \\begin{pmatrix}y_{0}^{2} & y_{0} y_{1} \\\\ 0 & \\tfrac{1}{2} y_{1}^{2}\\end{pmatrix}
    """
    rows = [" & ".join(polynomial(p) for p in row) for row in F]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


#: [HMK]'s closed forms (attngeo.model.formulas names) in LaTeX.
FORMULAS = {
    "2ad + dd' - a^2 - 1": r"2ad + dd' - a^2 - 1",
    "d^2 + dd' - 1": r"d^2 + dd' - 1",
    "l a (2d - a) + d^2 - l": r"l\,a(2d - a) + d^2 - l",
    "a(2d - a) + dd'": r"a(2d - a) + dd'",
    "d^2 + dd'": r"d^2 + dd'",
    "l a (2d - a) + d^2 (Conj. 3.10)": r"l\,a(2d - a) + d^2\ \text{(Conj. 3.10)}",
}


def formula(name: str) -> str:
    """A formula name of :mod:`attngeo.model.formulas` in LaTeX (``\\text{...}`` when unknown).

    Examples
    --------
    >>> print(formula("l a (2d - a) + d^2 - l"))
    l\\,a(2d - a) + d^2 - l
    >>> print(formula("no such formula"))
    \\text{no such formula}
    """
    return FORMULAS.get(name, rf"\text{{{name}}}")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    """Plain text for LaTeX (every special character escaped).

    Examples
    --------
    >>> tex_escape("a_1 & 50% {x}")
    'a\\\\_1 \\\\& 50\\\\% \\\\{x\\\\}'
    """
    return "".join(_TEX.get(ch, ch) for ch in text)


# -- sizes, ranges of sizes and the places a counterexample sits (the certification report) --

#: Size parameters as statements name them (``d'`` is the output width of one layer).
SIZE_ORDER = ("l", "d", "d'", "a", "t")


#: Yes/no sizes in words: a Python boolean never reaches a page.
FLAGS = {"residual": ("residual", "no residual"), "causal": ("causal mask", "no mask")}


def _value(v) -> str:
    return "(" + ", ".join(map(str, v)) + ")" if isinstance(v, (list, tuple)) else str(v)


def _flag(name: str, value: bool) -> str:
    yes, no = FLAGS.get(name, (name, f"no {name}"))
    return rf"\text{{{tex_escape(yes if value else no)}}}"


def _size(name: str, value) -> str:
    return _flag(name, value) if isinstance(value, bool) else f"{name} = {_value(value)}"


def sizes(params: dict) -> str:
    """One size as inline math (no dollars): ``{"d": 4, "d'": 3, "a": 3}`` -> ``d = 4,\\ d' = 3,\\ a = 3``.

    Sizes that are ``None`` are left out; yes/no sizes are words (:data:`FLAGS`).

    Examples
    --------
    >>> print(sizes({"d": [2, 3, 2], "a": [1, 2], "t": 2}))
    d = (2, 3, 2),\\ a = (1, 2),\\ t = 2
    >>> print(sizes({"d": 2, "residual": True, "causal": False}))
    d = 2,\\ \\text{residual},\\ \\text{no mask}
    """
    return r",\ ".join(_size(k, v) for k, v in params.items() if v is not None)


def _values(name: str, values: list) -> str:
    """``2 \\le d \\le 6``, ``t = 2`` or ``t \\in \\lbrace 2, 4\\rbrace``; yes/no in words."""
    if all(isinstance(v, bool) for v in values):
        return r"\text{ or }".join(_flag(name, v) for v in sorted(values, reverse=True))
    if len(values) == 1:
        return f"{name} = {_value(values[0])}"
    if len(values) > 2 and all(isinstance(v, int) for v in values) and values == list(range(values[0], values[-1] + 1)):
        return rf"{values[0]} \le {name} \le {values[-1]}"
    return rf"{name} \in \lbrace {', '.join(map(_value, values))} \rbrace"


def _offset(name: str, k: int) -> str:
    return name if k == 0 else f"{name} {'+' if k > 0 else '-'} {abs(k)}"


def scope(s: dict) -> str:
    """A range of sizes (:func:`attngeo.theorems.proof.scope`) as LaTeX text, each condition its own ``$...$``
    (so a long list breaks between conditions).

    Braces are ``\\lbrace``/``\\rbrace`` so the same string also renders as Markdown math.

    Examples
    --------
    >>> print(scope({"count": 9, "factors": [{"name": "d", "values": [1, 2, 3]}, {"name": "t", "values": [2]}],
    ...              "relation": {"name": "a", "of": "d", "min": 1, "offset": 1}}))
    $1 \\le d \\le 3$, $1 \\le a \\le d + 1$, $t = 2$
    """
    parts = {f["name"]: _values(f["name"], f["values"]) for f in s.get("factors", [])}
    rel = s.get("relation")
    if rel:
        bound = _offset(rel["of"], rel["offset"])
        name = rel["name"]
        parts[name] = rf"{name} = {bound}" if rel.get("equal") else rf"{rel['min']} \le {name} \le {bound}"
    order = {k: i for i, k in enumerate(SIZE_ORDER)}
    text = ", ".join(f"${parts[k]}$" for k in sorted(parts, key=lambda k: order.get(k, len(order))))
    listed = s.get("list")
    if listed:
        items = "; ".join(f"${sizes(dict(zip(listed['names'], row)))}$" for row in listed["rows"])
        text = items + (f"; each with {text}" if text else "")
    return text


def scope_summary(s: dict) -> str:
    """A range of sizes in one line: :func:`scope` when it is a grid; for a list, its count and each size's range.

    The list itself belongs in an appendix (the report puts it there); this is what a summary table shows.

    Examples
    --------
    >>> print(scope_summary({"count": 3, "factors": [{"name": "t", "values": [2]}],
    ...                      "list": {"names": ["a", "d", "residual"],
    ...                               "rows": [[[1], [2, 2], False], [[2], [3, 3], True], [[1], [4, 4], True]]}}))
    3 sizes: $2 \\le d \\le 4$, $a \\in \\lbrace 1, 2 \\rbrace$, $\\text{residual}\\text{ or }\\text{no residual}$; each with $t = 2$
    >>> print(scope_summary({"count": 2, "factors": [], "list": {"names": ["b", "d"], "rows": [[None, 2], [1, 3]]}}))
    2 sizes: $d \\in \\lbrace 2, 3 \\rbrace$, $b = 1$ (in 1 of 2)
    >>> print(scope_summary({"count": 2, "factors": [{"name": "d", "values": [1, 2]}]}))
    $d \\in \\lbrace 1, 2 \\rbrace$
    """
    listed = s.get("list")
    if not listed:
        return scope(s)
    parts = []
    rows = listed["rows"]
    for k, name in enumerate(listed["names"]):
        values = set()
        for row in rows:  # a per-layer size (d = (2, 3, 2)) counts each entry
            v = row[k]
            values |= set(v) if isinstance(v, (list, tuple)) else ({v} if v is not None else set())
        given = sum(row[k] is not None for row in rows)
        if values:
            text = f"${_values(name, sorted(values, key=lambda v: (not isinstance(v, bool), v)))}$"
            parts.append((name, text + (f" (in {given} of {len(rows)})" if given < len(rows) else "")))
    order = ("l", "d", "d'", "a", "h", "b", "t")
    parts = [text for name, text in sorted(parts, key=lambda p: order.index(p[0]) if p[0] in order else len(order))]
    rest = scope({k: v for k, v in s.items() if k != "list"})
    return f"{s['count']} sizes: " + ", ".join(parts) + (f"; each with {rest}" if rest else "")


def stratum(rank_A: int, rank_V: int) -> str:
    """The stratum ``S_{r,s}`` as inline math (no dollars); ``(0, 0)`` is the zero stratum.

    Examples
    --------
    >>> print(stratum(1, 2))
    \\operatorname{rank} A = 1,\\ \\operatorname{rank} V = 2
    >>> print(stratum(0, 0))
    A = 0 \\text{ or } V = 0
    """
    if rank_A == 0:
        return r"A = 0 \text{ or } V = 0"
    return rf"\operatorname{{rank}} A = {rank_A},\ \operatorname{{rank}} V = {rank_V}"


#: The special points of attngeo.geometry.fibers.layer.special_point, in words.
POINTS = {"random": "random point", "rank1-swap": "rank-1 swap point", "rank1-parallel": "rank-1 parallel point",
          "zero": "zero function"}


def point(kind: str) -> str:
    """A point kind as LaTeX text (math inside dollars): ``rank A = 1`` becomes ``$\\operatorname{rank} A = 1$``.

    Known kinds (:data:`POINTS`) are spelled out; anything else is escaped as plain text.

    Examples
    --------
    >>> print(point("rank1-swap"))
    rank-1 swap point
    >>> print(point("rank A = 2"))
    point with $\\operatorname{rank} A = 2$, $V$ generic
    >>> print(point("my_point"))
    my\\_point
    """
    if kind in POINTS:
        return POINTS[kind]
    m = re.fullmatch(r"rank A = (\d+)", kind)
    if m:
        return rf"point with $\operatorname{{rank}} A = {m.group(1)}$, $V$ generic"
    return tex_escape(kind)
