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
    if x.q == 1:
        return str(x.p)
    sign = "-" if x.p < 0 else ""
    return rf"{sign}\tfrac{{{abs(x.p)}}}{{{x.q}}}"


def matrix(M: fmpq_mat) -> str:
    rows = [" & ".join(rational(M[r, c]) for c in range(M.ncols())) for r in range(M.nrows())]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


def variable(name: str) -> str:
    """``A_1_2`` -> ``A_{12}``; ``c_1_2_12`` -> ``c_{1,2,12}``."""
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
    """True when every ``{`` is closed in order (a cheap validity test for generated LaTeX)."""
    depth = 0
    for ch in text:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:
            return False
    return depth == 0


def architecture(arch) -> str:
    """An architecture as inline math (no dollars)."""
    d = ", ".join(map(str, arch.widths))
    a = ", ".join(map(str, arch.ranks))
    return rf"\text{{{arch.normalization} attention}}\; d = ({d}),\; a = ({a}),\; t = {arch.tokens}"


def dimension(lower: int, upper: int) -> str:
    """``dim M = n (certified)`` or the two bounds."""
    if lower == upper:
        return rf"\dim \mathcal{{M}} = {lower}\ \text{{(certified)}}"
    return rf"{lower} \le \dim \mathcal{{M}} \le {upper}\ \text{{(bounds only)}}"


def forms(F: list[list]) -> str:
    """A matrix of polynomials (e.g. the quadratic forms ``F_kp(y)``) as a pmatrix."""
    rows = [" & ".join(polynomial(p) for p in row) for row in F]
    return r"\begin{pmatrix}" + r" \\ ".join(rows) + r"\end{pmatrix}"


#: [HMK]'s closed forms (attngeo.formulas names) in LaTeX.
FORMULAS = {
    "2ad + dd' - a^2 - 1": r"2ad + dd' - a^2 - 1",
    "d^2 + dd' - 1": r"d^2 + dd' - 1",
    "l a (2d - a) + d^2 - l": r"l\,a(2d - a) + d^2 - l",
    "a(2d - a) + dd'": r"a(2d - a) + dd'",
    "d^2 + dd'": r"d^2 + dd'",
    "l a (2d - a) + d^2 (Conj. 3.10)": r"l\,a(2d - a) + d^2\ \text{(Conj. 3.10)}",
}


def formula(name: str) -> str:
    """A formula name of :mod:`attngeo.formulas` in LaTeX (``\\text{...}`` when unknown)."""
    return FORMULAS.get(name, rf"\text{{{name}}}")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    """Plain text for LaTeX (every special character escaped).

    >>> tex_escape("a_1 & 50% {x}")
    'a\\\\_1 \\\\& 50\\\\% \\\\{x\\\\}'
    """
    return "".join(_TEX.get(ch, ch) for ch in text)
