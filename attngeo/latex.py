"""LaTeX for the mathematics attngeo prints: rationals, matrices, polynomials, and the layout of whole outputs.

Variable names follow one convention so that polynomials render the way a paper
writes them: ``A_1_2`` is :math:`A_{12}`, ``c_1_2_12`` is :math:`c_{1,2,12}`
(indices joined by commas when any has two digits), a name without underscores
renders as itself.

Two conventions hold for every result: ``latex()`` is one string of *math*
(paste it between ``$...$`` or ``\\[...\\]``), and ``latex_parts()``, where a
result has parts (generators, lines), gives them one by one. What ``--latex``
prints is a *fragment* for the body of a document that loads ``amsmath`` and
``amssymb``: text, and math inside delimiters (:func:`display`, :func:`equations`),
long sums broken between terms (:func:`wrap`), never ``breqn``.

Rationals, matrices and the all-sizes formulas are printed by ``sympy.latex``;
polynomials keep a printer of their own (docs/architecture.md, "LaTeX": sympy
is about 30 times slower on the implicit equations, reorders their terms and
renders ``c_1_2_12`` as ``c_{1 2 12}``).
"""

from __future__ import annotations

import re

import sympy
from flint import fmpq, fmpq_mat


def rational(x: fmpq) -> str:
    """An exact rational, by ``sympy.latex``: an integer as itself, otherwise a signed ``\\frac``.

    Examples
    --------
    >>> print(rational(fmpq(-3, 4)), rational(fmpq(6, 3)))
    - \\frac{3}{4} 2
    """
    x = fmpq(x)
    return str(x.p) if x.q == 1 else sympy.latex(sympy.Rational(int(x.p), int(x.q)))


def matrix(M: fmpq_mat) -> str:
    """A rational matrix as a ``pmatrix``, by ``sympy.latex``.

    Examples
    --------
    >>> print(matrix(fmpq_mat([[1, fmpq(1, 2)], [0, -1]])))
    \\begin{pmatrix}1 & \\frac{1}{2}\\\\0 & -1\\end{pmatrix}
    """
    rows = [[sympy.Rational(int(M[r, c].p), int(M[r, c].q)) for c in range(M.ncols())] for r in range(M.nrows())]
    return sympy.latex(sympy.Matrix(rows), mat_str="pmatrix", mat_delim="")


#: How the all-sizes statements spell a size that a page writes otherwise (``dd`` is the output width ``d'``,
#: ``bias`` the indicator of biases, 0 or 1).
SIZE_NAMES = {"dd": "d'", "bias": r"\beta"}


def expression(text: str) -> str:
    """A formula or relation of sizes (``2*d*a + d*dd - a^2 - 1``, ``h*a <= d``), by ``sympy.latex``.

    The strings are the all-sizes statements' own (:mod:`attngeo.theorems.allsizes`), never user input.

    Examples
    --------
    >>> print(expression("2*d*a + d*dd - a^2 - 1"))
    - a^{2} + 2 a d + d d' - 1
    >>> print(expression("h*a <= d"))
    a h \\leq d
    """
    names = {sympy.Symbol(k): v for k, v in SIZE_NAMES.items()}
    return sympy.latex(sympy.sympify(text), symbol_names=names)


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


def terms(p) -> list[str]:
    """The terms of a python-flint polynomial in LaTeX, in the ring's order, each with its sign but the first
    (``["A_{11}^{2}", "- 3 A_{11} V_{12}", "+ 3"]``): the places a long equation may break.

    Examples
    --------
    >>> from flint import fmpq_mpoly_ctx
    >>> ctx = fmpq_mpoly_ctx.get(("A_1_1", "V_1_2"), "degrevlex")
    >>> a, v = ctx.gens()
    >>> terms(-a**2 - a * v / 2 + 3)
    ['-A_{11}^{2}', '- \\\\frac{1}{2} A_{11} V_{12}', '+ 3']
    """
    names = list(p.context().names())
    if p == 0:
        return ["0"]
    out = []
    for i, (exps, c) in enumerate(zip(p.monoms(), p.coeffs())):
        c = fmpq(c)
        mono = _monomial(names, exps)
        mag = rational(abs(c)) if (abs(c) != 1 or not mono) else ""
        body = " ".join(x for x in (mag, mono) if x)
        out.append(("-" if c < 0 else "") + body if i == 0 else f"{'-' if c < 0 else '+'} {body}")
    return out


def polynomial(p) -> str:
    """A python-flint ``fmpq_mpoly`` / ``fmpz_mpoly`` in LaTeX, terms in the ring's order (:func:`terms`).

    Variable names follow :func:`variable`; coefficients follow :func:`rational`.

    Examples
    --------
    >>> from flint import fmpq_mpoly_ctx
    >>> ctx = fmpq_mpoly_ctx.get(("A_1_1", "V_1_2"), "degrevlex")
    >>> a, v = ctx.gens()
    >>> polynomial(a**2 - a * v / 2 + 3)
    'A_{11}^{2} - \\\\frac{1}{2} A_{11} V_{12} + 3'
    """
    return " ".join(terms(p))


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
    >>> print(architecture(Architecture((4, 4), (2,), heads=2, value_ranks=1, causal=True)))
    \\text{lightning attention}\\; d = (4, 4),\\; a = (2),\\; h = (2),\\; b = (1),\\; t = 2,\\; \\text{causal}
    """
    def tup(values):
        return "(" + ", ".join(map(str, values)) + ")"

    out = rf"\text{{{arch.normalization} attention}}\; d = {tup(arch.widths)},\; a = {tup(arch.ranks)}"
    if set(arch.heads) != {1}:
        out += rf",\; h = {tup(arch.heads)}"
    if arch.value_ranks is not None:
        out += rf",\; b = {tup(arch.value_ranks)}"
    out += rf",\; t = {arch.tokens}"
    return out + "".join(rf",\; \text{{{name}}}" for name in ("residual", "causal") if getattr(arch, name))


def orbits(n: int) -> str:
    """The union of ``n`` orbits ``G \\cdot W_i`` (written out up to three, else as one big union).

    Examples
    --------
    >>> print(orbits(2))
    G \\cdot W_{0} \\cup G \\cdot W_{1}
    >>> print(orbits(12))
    \\bigcup_{i=0}^{11} G \\cdot W_{i}
    """
    if n <= 3:
        return r" \cup ".join(rf"G \cdot W_{{{i}}}" for i in range(n))
    return rf"\bigcup_{{i=0}}^{{{n - 1}}} G \cdot W_{{i}}"


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
    \\begin{pmatrix}y_{0}^{2} & y_{0} y_{1} \\\\ 0 & \\frac{1}{2} y_{1}^{2}\\end{pmatrix}
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
    # beyond [HMK]'s model the comparison is the naive count (model/formulas.py says which group)
    "parameters - dim G (per head GL(a) x GL(b) [x C*], GL(d_i) between layers unless residual)": r"P - \dim G",
}


def formula(name: str) -> str:
    """A formula name of :mod:`attngeo.model.formulas` in LaTeX (``\\text{...}`` when unknown).

    Examples
    --------
    >>> print(formula("l a (2d - a) + d^2 - l"))
    l\\,a(2d - a) + d^2 - l
    >>> print(formula("no_such formula"))
    \\text{no\\_such formula}
    """
    return FORMULAS.get(name, rf"\text{{{tex_escape(name)}}}")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        # without T1 fonts (a document that does not load fontenc) "<" and ">" would print as "¡" and "¿"
        "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}


def tex_escape(text: str) -> str:
    r"""Plain text for LaTeX (every special character escaped, ``<`` and ``>`` right in any font encoding).

    Examples
    --------
    >>> print(tex_escape("a_1 & 50% {x} <= 3"))
    a\_1 \& 50\% \{x\} \textless{}= 3
    """
    return "".join(_TEX.get(ch, ch) for ch in text)


# -- the layout of a whole output: text, displays, long equations broken between terms -----------------

#: The printed width of one display line, in characters of math: a 10pt article line holds about 65, and a
#: broken equation's continuation lines are indented.
LINE = 48

#: Blocks of at most this many lines: align* never breaks across pages, so a long list is several blocks.
BLOCK = 20


def width(tex: str) -> float:
    r"""About how many characters of math ``tex`` prints: a command (``\lambda``) is one, braces, ``^`` and
    ``_`` are none, a character in a sub- or superscript two thirds.

    Examples
    --------
    >>> width("c_{1,1,22}^{2}"), width(r"\lambda + 1")
    (5.667, 3.0)
    """
    total, depth, scripts = 0, 0, []  # scripts: the brace depths at which a sub/superscript group opened
    i = 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.)", tex[i:])
            i += len(m.group(0))
            total += 1 if m.group(1) not in ("left", "right", "begin", "end", ",", ";", ":", "!") else 0
            continue
        if ch in "^_":
            if tex[i + 1:i + 2] == "{":
                scripts.append(depth + 1)
            i += 1
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            if scripts and scripts[-1] == depth:
                scripts.pop()
            depth -= 1
        elif ch != " ":
            total += 2 / 3 if scripts else 1
        i += 1
    return round(float(total), 3)


def wrap(pieces: list[str], line: float = LINE) -> list[str]:
    """Pieces of a long expression (the signed terms of a sum, :func:`terms`) joined into lines of at most
    ``line`` printed characters; a piece wider than a line has one of its own.

    Examples
    --------
    >>> wrap(["a", "+ b", "+ c", "- d"], line=5)
    ['a + b', '+ c - d']
    """
    out: list[list[str]] = []
    used = 0.0
    for piece in pieces:
        w = width(piece)
        if out and used + w <= line:
            out[-1].append(piece)
            used += w + 1
        else:
            out.append([piece])
            used = w
    return [" ".join(group) for group in out]


def display(*lines: str) -> str:
    """Math lines as a display: ``\\[ ... \\]`` for one line, else ``gather*`` blocks (:data:`BLOCK` lines each).

    Examples
    --------
    >>> print(display("x = 1"))
    \\[ x = 1 \\]
    >>> print(display("x = 1", "y = 2"))
    \\begin{gather*}
    x = 1 \\\\
    y = 2
    \\end{gather*}
    """
    if len(lines) == 1:
        return rf"\[ {lines[0]} \]"
    blocks = [lines[k:k + BLOCK] for k in range(0, len(lines), BLOCK)]
    return "\n".join("\\begin{gather*}\n" + " \\\\\n".join(block) + "\n\\end{gather*}" for block in blocks)


def equations(rows: list[tuple[str, list[str]]], relation: str = "=", line: float = LINE) -> str:
    """Named equations ``lhs = t_1 + t_2 + ...`` as ``align*`` blocks: each right side broken between its
    pieces (:func:`wrap`), continuation lines indented, at most :data:`BLOCK` lines per block.

    Examples
    --------
    >>> print(equations([("g_{1}", ["a", "+ b", "+ c"]), ("g_{2}", ["d"])], line=5))
    \\begin{align*}
    g_{1} &= a + b \\\\
    &\\quad + c \\\\
    g_{2} &= d
    \\end{align*}
    """
    out: list[str] = []
    for lhs, pieces in rows:
        first, *rest = wrap(pieces, line) or [""]
        out.append(f"{lhs} &{relation} {first}")
        out += [rf"&\quad {more}" for more in rest]
    blocks = [out[k:k + BLOCK] for k in range(0, len(out), BLOCK)]
    return "\n".join("\\begin{align*}\n" + " \\\\\n".join(block) + "\n\\end{align*}" for block in blocks)


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
