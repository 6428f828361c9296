"""The outputs of ``dim``, ``fiber``, ``singular``, ``implicit``, ``prove`` and ``check``, as text and as LaTeX.

Each long output is an :class:`attngeo.ui.output.Listing` (printed whole when it fits a terminal, else
summarized). ``--latex`` gives a fragment for the body of a document that loads ``amsmath`` and ``amssymb``:
sentences as text, math between delimiters, long equations broken between terms in ``align*``
(:mod:`attngeo.latex`), so that it compiles as it is pasted (tests/test_latex.py compiles every one).
"""

from __future__ import annotations

from collections import Counter

from .. import latex
from ..exceptions import AttngeoError
from .output import Listing

#: The two coordinate systems of [HMK]'s singular-locus ideal, as the listing names them.
SECTIONS = {"AV": "ideal in (A, V)", "QKV": "pulled back along A = K^T Q"}


def _paragraph(*sentences: str) -> str:
    """LaTeX text: the sentences escaped, ending its paragraph."""
    return latex.tex_escape(" ".join(sentences)) + "\n"


def _paragraphs(sentences: list[str]) -> str:
    """LaTeX text: one paragraph per sentence (each a line of the plain output)."""
    return "\n".join(_paragraph(s) for s in sentences)


def _note(text: str, as_latex: bool) -> str:
    """A line such as ``certificate  c.json``: as it is in text, a LaTeX comment in LaTeX (it names a file)."""
    return f"% {text}" if as_latex else text


# -- dim, fiber, prove: short, so printed whole ------------------------------------------------------


def dimension(cert) -> str:
    """``dim --latex``: the claim, the architecture and [HMK]'s formula, one per line of a display.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> print(dimension(certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0)))
    \\begin{gather*}
    \\dim \\mathcal{M} = 6\\ \\text{(certified)} \\\\
    \\text{lightning attention}\\; d = (2, 2),\\; a = (1),\\; t = 2 \\\\
    \\text{[HMK]: } 2ad + dd' - a^2 - 1 = 6\\ (\\text{applies})
    \\end{gather*}
    """
    return latex.display(*cert.latex_parts())


def fiber(result) -> str:
    """``fiber --latex``: a single layer's components, one per line (in ``(A, V)`` then in ``(Q, K, V)``); a deep
    fiber's orbits and its group.

    Examples
    --------
    >>> import random
    >>> from attngeo import Architecture, fiber as layer_fiber
    >>> from attngeo.geometry.fibers.layer import special_point
    >>> one = Architecture((2, 2), (1,), tokens=2)
    >>> tex = fiber(layer_fiber(one, special_point(one, "rank1-swap", random.Random(0))))
    >>> tex.splitlines()[0], tex.count("cup")     # two lines in (A, V), two components in (Q, K, V)
    ('The fiber through the point (rank1-swap): 2 component(s) in (A, V).', 2)
    """
    if not hasattr(result, "av"):
        return latex.display(*result.latex_parts())
    if not result.av:
        return latex.display(result.latex())
    rows = []
    for lhs, comps, where in ((r"\mu^{-1}(f)", result.av, "(A, V)"), (r"\mu^{-1}(f)", result.qkv, "(Q, K, V)")):
        pieces = [c.latex for c in comps]
        rows.append(rf"{lhs} &= {pieces[0]} \quad \text{{in }} {where}")
        rows += [rf"&\cup\; {p}" for p in pieces[1:]]
    head = _paragraph(f"The fiber through the point ({result.case}): {len(result.av)} component(s) in (A, V).")
    return head + "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


def theorem(statement, claim: str, summary: dict) -> str:
    """``prove --latex``: the statement proved for all sizes, its formula by ``sympy.latex`` and the checker's
    count of pieces.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import STATEMENTS, proved
    >>> proof = proved("single-layer-dimension")
    >>> tex = theorem(STATEMENTS["single-layer-dimension"], proof.claim, proof.summary())
    >>> "cases" in tex, "2*d*a" in tex      # the formula as LaTeX, never as the checker's ASCII
    (True, False)
    """
    verified = "the checker verified it" if claim.startswith("for all sizes") else f"the checker: {claim}"
    if "blocks" in summary:  # pattern points (docs/math.md §7.1)
        how = (f"A case split of the hypotheses, one pattern point each ({summary['pieces']} pieces, "
               f"{summary['blocks']['lower']} Jacobian and {summary['blocks']['upper']} field block types)")
    elif summary.get("lemmas"):  # an induction (docs/math.md §7.7): finite witnesses of its lemmas
        lemmas = ", ".join(sorted(set(summary["lemmas"])))
        how = (f"An argument by {summary.get('argument', 'lemmas')} with {summary['pieces']} finite pieces "
               f"(lemmas: {lemmas})")
    else:  # one witness point per piece (docs/math.md §7.8)
        how = (f"A case split of the hypotheses, one witness each ({summary['pieces']} pieces; "
               f"{latex.tex_escape(statement.method)})")
    return "\n".join([f"Proved for all sizes ({latex.tex_escape(statement.name)}): {statement.family}.",
                      latex.display(*statement.latex_parts()),
                      _paragraph(f"{how}; {verified}.")])


# -- singular ---------------------------------------------------------------------------------------


def singular(av, qkv, strata, args) -> Listing:
    """``singular``: [HMK]'s singular-locus ideal (and its pull-back), then the certified strata.

    Examples
    --------
    >>> import argparse
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.strata import hmk_singular_ideal, stratify
    >>> arch = Architecture((2, 2), (2,), tokens=2)
    >>> args = argparse.Namespace(latex=False, certificate=None)
    >>> out = singular(hmk_singular_ideal(arch), None, stratify(arch), args)
    >>> len(out.items), out.text().splitlines()[1]
    (8, '  g1 = A_1_2*A_2_1*V_2_2 - A_1_1*A_2_2*V_2_2')
    """
    items = [("AV", g) for g in av.gens] + ([("QKV", g) for g in qkv.gens] if qkv is not None else [])
    degrees = sorted(set(av.degrees()))
    counts = {"AV": len(av.gens), "QKV": len(qkv.gens) if qkv is not None else 0}
    head = (f"[HMK] singular locus {{rank A * rank V <= 1}}: ideal in (A, V), {len(av.gens)} generators of degrees "
            f"{degrees}")
    notes = [f"stratum {st.name}: certified {st.label}, but [HMK]'s rank A * rank V <= 1 says "
             f"{'singular' if st.hmk_singular() else 'smooth'}" for st in strata.disagreements()]
    certificate = [_note(f"certificate    {args.certificate}", args.latex)] if args.certificate else []
    if not args.latex:
        def render(chosen):
            lines, section = [], "AV"
            for k, (where, g) in enumerate(chosen):
                if where != section:
                    section = where
                    lines.append(f"{SECTIONS[where]}: {counts[where]} generators")
                lines.append(f"  g{_index(chosen, k)} = {g}")
            return "\n".join(lines)

        return Listing(head, items, render, "\n".join(["", strata.table(), *notes, *certificate]), "generators")

    def render_latex(chosen):
        out, section, rows = [], "AV", []
        for k, (where, g) in enumerate(chosen):
            if where != section:
                if rows:
                    out.append(latex.equations(rows))
                rows, section = [], where
                out.append(rf"Pulled back along $A = K^\top Q$: {counts[where]} generators." + "\n")
            rows.append((f"g_{{{_index(chosen, k)}}}", latex.terms(g)))
        if rows:
            out.append(latex.equations(rows))
        return "\n".join(out)

    tail = [latex.display(strata.latex()), *(_paragraph(n) for n in notes), *certificate]
    head = (r"[HMK]'s singular locus $\{\operatorname{rank} A \cdot \operatorname{rank} V \le 1\}$: its ideal in "
            rf"$(A, V)$ has {len(av.gens)} generators of degree{'s' * (len(degrees) > 1)} "
            + ", ".join(map(str, degrees)) + ".\n")
    return Listing(head, items, render_latex, "\n".join(tail), "generators", comment="% ")


def _index(chosen: list, k: int) -> int:
    """The generator's number within its own ideal (``g1``, ``g2``, ... restart for the pull-back)."""
    where = chosen[k][0]
    return sum(1 for w, _ in chosen[:k + 1] if w == where)


# -- implicit -------------------------------------------------------------------------------------


def implicit(eq, args) -> Listing:
    """``implicit``: the minimal generators of ``I(M)``, what is proved of them, the Jacobian's singular locus.

    Examples
    --------
    >>> import argparse
    >>> from attngeo import Architecture, implicit_equations
    >>> out = implicit(implicit_equations(Architecture((2, 1), (2,), tokens=2)),
    ...                argparse.Namespace(latex=True, certificate=None))
    >>> out.text().count("&=")          # one quartic, broken between its terms on lines of its own
    1
    """
    s = eq.summary()
    by_degree = ", ".join(f"{n} of degree {k}" for k, n in sorted(Counter(s["degrees"]).items()))
    tail = [f"(minimal generators shown) reduced Groebner basis G: {by_degree}; "
            f"terms {min(s['terms'])}..{max(s['terms'])}" if s["terms"] else
            "no equation: M fills its coordinate space",
            "proved: every generator vanishes on M; dim V(G) = dim M; every equation of M of degree <= "
            f"{s['complete_through_degree']} lies in <G>; the minimal generators generate <G> and none is redundant",
            "generates I(M): " + ("proved (irreducible hypersurface of codimension 1)" if s["generates"] == "proved"
                                  else f"by {s['engine']}'s elimination (replayed by 'attngeo check')")]
    try:
        sing = eq.singular_locus()
        tail.append(f"singular locus (Jacobian criterion): {len(sing.gens)} generators, dimension {sing.dimension()}")
    except AttngeoError as exc:
        tail.append(f"singular locus: not computed ({exc})")
    return _equations(str(eq), eq.minimal_generators, tail, args)


def graded(eq, args) -> Listing:
    """``implicit --max-degree K``: the degree table and one representative per orbit of generators.

    Examples
    --------
    >>> import argparse
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.graded import graded_equations
    >>> out = graded(graded_equations(Architecture((2, 1), (1,), tokens=2), 2),
    ...              argparse.Namespace(latex=False, certificate=None))
    >>> len(out.items), [orbit for _, orbit in out.items]      # two representatives and their orbits' sizes
    (2, [1, 2])
    """
    from ..geometry.loci.graded import orbit_size

    d, dd = eq.arch.widths
    table = [f"{'degree':>6} {'monomials':>10} {'dim I_k':>9} {'minimal generators':>19} {'dominant blocks':>16}"]
    table += [f"{r['degree']:>6} {r['monomials']:>10} {r['dimension']:>9} {r['minimal_generators']:>19} "
              f"{r['blocks']:>16}" for r in eq.degrees]
    what = f"representatives, one per orbit under S_{dd} x S_{d} x S_{d} (--export writes every generator)"
    reps = [(eq._poly(h), orbit_size(w, d, dd)) for w, h in eq.representative_list()]
    tail = [f"proved: each representative vanishes on M (composition with the parametrization); dim I_k by "
            f"evaluation ranks and explicit equations; the generators generate I(M) in degrees <= {eq.max_degree} "
            "and none is redundant",
            f"not proved: that I(M) has no minimal generator of degree > {eq.max_degree} (no degree bound)"]
    if not args.latex:
        head = "\n".join([str(eq), *table, what + ":"])
        return Listing(head, reps, lambda chosen: "\n".join(f"  {p}   (orbit of {n})" for p, n in chosen),
                       "\n".join(tail + _certificate(args)), "representatives")
    columns = ["degree", "monomials", r"$\dim I_k$", "minimal generators", "dominant blocks"]
    rows = [" & ".join(str(r[k]) for k in ("degree", "monomials", "dimension", "minimal_generators", "blocks"))
            + r" \\" for r in eq.degrees]
    tabular = "\n".join([r"\begin{tabular}{rrrrr}", " & ".join(columns) + r" \\ \hline", *rows, r"\end{tabular}"])
    head = "\n".join([_paragraph(str(eq)), tabular, "", _paragraph(what + ":")])

    def render(chosen):
        rows = []
        for k, (p, n) in enumerate(chosen, 1):
            *first, last = latex.terms(p)
            rows.append((f"h_{{{k}}}", first + [last + rf" \quad (\text{{orbit of }} {n})"]))
        return latex.equations(rows)

    return Listing(head, reps, render, "\n".join([_paragraphs(tail)] + _certificate(args)), "representatives",
                   comment="% ")


def whole(ideal, args) -> Listing:
    """``implicit --whole``: the whole ideal of Theorem 7.9, its counts and what is proved, then every generator.

    Examples
    --------
    >>> import argparse
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.rankone import rank_one_ideal
    >>> args = argparse.Namespace(latex=False, certificate=None)
    >>> out = whole(rank_one_ideal(Architecture((3, 1), (1,), tokens=2)), args)
    >>> len(out.items), out.head.splitlines()[1]
    (55, '  degree 2: 45 generators (the 2 x 2 minors of the 3 x 6 matrix [c_1_p_mn])')
    """
    d = ideal.arch.widths[0]
    N = d * (d + 1) // 2
    lines = [str(ideal)]
    if ideal.quadrics:
        lines.append(f"  degree 2: {len(ideal.quadrics):,} generators (the 2 x 2 minors of the {d} x {N} matrix "
                     "[c_1_p_mn])")
    if ideal.cubics:
        lines.append(f"  degree 3: {len(ideal.cubics):,} generators ({len(ideal.minors)} standard 3 x 3 minors of the "
                     f"symmetric matrix of s, each lifted to the {len(ideal.cubics) // len(ideal.minors)} multisets "
                     "of three rows)")
    from ..geometry.loci.rankone import hilbert

    lines.append("  dim I_k, k = 1..4: " + ", ".join(f"{hilbert(d, k):,}" for k in range(1, 5))
                 + " (derived: Corollary 7.9.5, not certified here)")
    tail = ["proved: each generator vanishes on M (composition with the parametrization); the standard minors are a "
            "basis of all 3 x 3 minors (exact ranks); that they generate I(M) minimally, with none of higher degree, "
            "is Theorem 7.9 (docs/math.md), for d' = 1, a = 1, t >= 2 and every d"]
    return _equations("\n".join(lines), ideal.generators(), tail, args)


def _certificate(args) -> list[str]:
    return [_note(f"certificate    {args.certificate}", args.latex)] if args.certificate else []


def _equations(head: str, gens: list, tail: list[str], args) -> Listing:
    """A list of generators ``g1 = ...`` under ``head`` (text or LaTeX), then ``tail``."""
    if not args.latex:
        return Listing(head, gens, lambda chosen: "\n".join(f"  g{k} = {g}" for k, g in enumerate(chosen, 1)),
                       "\n".join(tail + _certificate(args)), "generators")
    return Listing(_paragraph(head), gens,
                   lambda chosen: latex.equations([(f"g_{{{k}}}", latex.terms(g)) for k, g in enumerate(chosen, 1)]),
                   "\n".join([_paragraphs(tail)] + _certificate(args)), "generators", comment="% ")


def export(script: str, what: str, comment: str) -> Listing:
    """``implicit --export``: the script, or (too long for a terminal) a few lines of comment in its own syntax
    saying what it is and how to get it, so that a redirected summary is no broken script.

    Examples
    --------
    >>> out = export("R = QQ[x];\\nI = ideal(x^2);\\n", "a toy", "-- ")
    >>> out.text()
    'R = QQ[x];\\nI = ideal(x^2);'
    >>> print(out.summary())
    -- a toy
    -- (2 more lines of the script not shown; 26 bytes in all: --full prints them, --output FILE writes everything to FILE)
    """
    return Listing("", script.rstrip("\n").splitlines(), "\n".join, noun="lines of the script", comment=comment,
                   preview=False, brief=f"{comment}{what}")


# -- check ----------------------------------------------------------------------------------------


def check(files: list[dict], counts: dict, here: int) -> Listing:
    """``check``: one line per file, the rejected and unusable first (a summary keeps those), then the counts.

    Examples
    --------
    >>> files = [{"path": "a.json", "status": "valid", "claim": "dim M = 6"},
    ...          {"path": "b.json", "status": "rejected", "reason": "lower > rank"}]
    >>> print(check(files, {"valid": 1, "rejected": 1, "unusable": 0}, 0).text())
    REJECTED  b.json: lower > rank
    valid     a.json: dim M = 6
    1 valid, 1 rejected, 0 unusable
    """
    from ..check import one_line

    def line(f):
        label = "valid" if f["status"] == "valid" else f["status"].upper()
        # a file name is attacker-controlled too: a newline in it must not start a line of its own
        return f"{label:<9} {one_line(f['path'])}: {one_line(f.get('claim') or f.get('reason'))}"

    ordered = [f for f in files if f["status"] != "valid"] + [f for f in files if f["status"] == "valid"]
    total = ", ".join(f"{n} {status}" for status, n in counts.items())
    return Listing("", [line(f) for f in ordered], "\n".join,
                   total + (f" ({here} not verifiable here)" if here else ""), "files")
