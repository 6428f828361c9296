"""The certification report: outcomes derived from the scripts' counts, exact ranges of sizes, a PDF that reads
right."""

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from attngeo.ui.cli import main
from attngeo.latex import balanced
from attngeo.theorems.proof import INSTANCES, RANGE, Claim, Entry, scope, summary
from attngeo.theorems.report import Outcome, latex, markdown
from attngeo.theorems.registry import OUTCOMES, classify, get
from attngeo.typesetting import has_package, missing, pdf

ONE_LAYER = [{"d": d, "d'": dd, "a": a, "t": t} for t in (2, 3) for d in range(1, 5) for dd in range(1, 4)
             for a in range(1, d + 2)]


def expand(s: dict) -> set:
    """Every size a scope describes, decoded independently of the renderer: the scope must be exact."""
    rows = [{}]
    for f in s["factors"]:
        rows = [{**r, f["name"]: v} for r in rows for v in f["values"]]
    rel = s.get("relation")
    if rel:
        def values(r):
            top = r[rel["of"]] + rel["offset"]
            return [top] if rel.get("equal") else range(rel["min"], top + 1)
        rows = [{**r, rel["name"]: a} for r in rows for a in values(r)]
    if "list" in s:
        rows = [{**r, **dict(zip(s["list"]["names"], row))} for r in rows for row in s["list"]["rows"]]
    return {tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in r.items())) for r in rows}


def _key(sizes: list[dict]) -> set:
    return {tuple(sorted(p.items())) for p in sizes}


def test_the_one_layer_grid_is_described_as_a_range():
    s = scope(ONE_LAYER)
    # sum over d of d' choices times (d + 1) ranks, for two token counts
    assert s["count"] == 2 * sum(3 * (d + 1) for d in range(1, 5)) and "list" not in s
    assert s["relation"] == {"name": "a", "of": "d", "min": 1, "offset": 1}
    assert expand(s) == _key(ONE_LAYER)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(0, len(ONE_LAYER) - 1), min_size=1))
def test_a_range_is_never_wider_than_the_cases(picked):
    cases = [ONE_LAYER[i] for i in sorted(picked)]
    assert expand(scope(cases)) == _key(cases)


def test_deep_sizes_in_tuples_and_mixed_forms_are_exact():
    cases = [{"d": [2, 2, 2], "a": [1, 2], "t": 2}, {"d": [2, 1, 2], "a": [1, 1], "t": 2},
             {"d": [2, 2, 2], "a": [1, 2], "t": 3}]
    assert expand(scope(cases)) == {tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in c.items()))
                                    for c in cases}


# -- outcomes from synthetic script summaries -----------------------------------------------------

GRID = [{"d": d, "d'": 1, "a": a, "t": 2} for d in (2, 3) for a in range(1, d + 1)]


def _outcome(name: str, claims, entries, exit_code: int = 0) -> Outcome:
    import json

    line = "summary: " + json.dumps(summary(claims, entries))
    return Outcome(get(name), exit_code, 1.0, f"4 cases in 1.0 s\n{line}\n", 4)


def _parts(o: Outcome) -> dict:
    return {p["key"]: p["outcome"] for p in o.parts}


def test_outcomes_are_derived_from_the_counts():
    claims = [Claim("range", "$x$"), Claim("sampled", "$y$", INSTANCES, "points"), Claim("wrong", "$z$", INSTANCES),
              Claim("gap", "$w$"), Claim("partial", "$v$"), Claim("broken", "$u$")]
    entries = [Entry("range", s, "certified") for s in GRID]
    entries += [Entry("sampled", s, "certified") for s in GRID]
    entries += [Entry("wrong", GRID[0], "certified"),
                Entry("wrong", GRID[1], "refuted", "a point", "smooth", "singular")]
    entries += [Entry("gap", s, "bounds") for s in GRID]
    entries += [Entry("partial", s, "certified") for s in GRID[1:]]  # a grid with a hole is not a range
    entries += [Entry("broken", GRID[0], "certified"), Entry("broken", GRID[1], "failed")]
    theorem = _outcome("single-layer-dimension", claims, entries)
    assert _parts(theorem) == {"range": "certified", "sampled": "instances", "wrong": "refuted", "gap": "bounds",
                               "partial": "instances", "broken": "failed"}
    conjecture = _outcome("softmax-conjecture", claims[:1], entries[:len(GRID)])
    assert _parts(conjecture) == {"range": "instances"}  # a conjecture checked on a range is still instances
    assert classify({"mode": RANGE, "cases": 1, "certified": 0, "scope": {}}) == "undecided"


def test_a_refuted_claim_prints_as_refuted_with_its_counterexamples(tmp_path):
    claims = [Claim("1 < a < d", "[HMK]'s criterion for $1 < a < d$", INSTANCES, "points"),
              Claim("a >= d", "[HMK]'s criterion for $a \\ge d$", INSTANCES, "points")]
    entries = [Entry("1 < a < d", {"d": 4, "d'": 3, "a": 3, "t": 2}, "refuted",
                     r"$\operatorname{rank} A = 2$", "singular", "smooth"),
               Entry("1 < a < d", {"d": 4, "d'": 3, "a": 3, "t": 2}, "certified"),
               Entry("a >= d", {"d": 4, "d'": 3, "a": 4, "t": 2}, "certified")]
    o = _outcome("singular-points", claims, entries)
    md, tex = markdown([o], tmp_path, 1.0), latex([o], tmp_path, 1.0)
    refuted = next(ln for ln in md.splitlines() if ln.startswith("- [HMK]'s criterion for $1 < a < d$"))
    assert f"**{OUTCOMES['refuted']}**" in refuted and "1 counterexample" in refuted
    assert "| $d = 4,\\ d' = 3,\\ a = 3,\\ t = 2$ | $\\operatorname{rank} A = 2$ | singular | smooth |" in md
    instances = next(ln for ln in md.splitlines() if ln.startswith("- [HMK]'s criterion for $a \\ge d$"))
    assert f"**{OUTCOMES['instances']}**" in instances and OUTCOMES["certified"] not in instances
    assert rf"\textbf{{{OUTCOMES['refuted']}}}" in tex and r"d = 4,\ d' = 3,\ a = 3,\ t = 2" in tex
    assert balanced(tex) and tex.count("$") % 2 == 0


def test_a_script_without_a_summary_or_that_failed_is_never_certified(tmp_path):
    o = Outcome(get("boundary-points"), 1, 1.0, "FAILED (1):\n  d=2: wrong\n", 0)
    assert o.verdict == "failed" and o.headline.startswith("FAILED") and o.parts == []
    md = markdown([o], tmp_path, 1.0)
    assert OUTCOMES["certified"] not in md.split("| statement |")[1]


# -- the PDF ---------------------------------------------------------------------------------------

needs_pdflatex = pytest.mark.skipif(missing("pdflatex", "pdftotext") is not None,
                                    reason=f"{missing('pdflatex', 'pdftotext')}: the PDF is not typeset here")


def _pdf_text(folder: Path, tex: str, figures: Path | None = None) -> str:
    (folder / "report.tex").write_text(tex)
    for png in (figures.glob("*.png") if figures else ()):  # the report's figures, when matplotlib drew them
        shutil.copy(png, folder / png.name)
    pdf(folder / "report.tex")  # as often as the log asks: longtable settles its columns on a later run
    return subprocess.run(["pdftotext", "report.pdf", "-"], cwd=folder, capture_output=True, text=True,
                          check=True).stdout


def _assert_typeset(text: str) -> None:
    # "<=" and ">=" in text mode come out as "¡=" and "¿="; an underscore outside math prints as itself
    for bad in ("¡", "¿", "_"):
        assert bad not in text, f"{bad!r} in the PDF text: " + text[max(0, text.find(bad) - 200):text.find(bad) + 200]


@pytest.fixture(scope="module")
def singular_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("certify")
    code = main(["certify", "--only", "singular-points", "--out", str(out)])
    return code, out


@pytest.mark.msolve  # proofs/singular_points.py eliminates beyond the python-flint fallback
def test_singular_points_report_says_refuted_where_hmk_fails(singular_run):
    code, out = singular_run
    assert code == 0
    md = (out / "report.md").read_text()
    by_region = {ln.split(" — ")[0]: ln for ln in md.splitlines() if ln.startswith("- $\\varphi")}
    # docs/findings.md 3: points with rank A < a are singular for 1 < a < d, where the criterion says smooth
    inside = next(v for k, v in by_region.items() if "$1 < a < d$" in k)
    assert f"**{OUTCOMES['refuted']}**" in inside
    # the largest such architecture of the default grid (d <= 3; --full: d <= 4) is a counterexample
    assert "$d = 3,\\ d' = 3,\\ a = 2,\\ t = 2$" in md and "default grid" in md
    # points are samples: where the criterion holds, the points are instances, never the whole range
    holds = next(v for k, v in by_region.items() if "$a \\ge d$" in k)
    assert f"**{OUTCOMES['instances']}**" in holds


@needs_pdflatex
@pytest.mark.msolve
def test_the_pdf_typesets_every_relation_as_math(singular_run, tmp_path):
    _, out = singular_run
    tex = (out / "report.tex").read_text()
    assert r"\usepackage[T1]{fontenc}" in tex
    text = _pdf_text(tmp_path, tex, out)
    _assert_typeset(text)
    assert OUTCOMES["refuted"] in text and "≤" in text


@needs_pdflatex
def test_the_pdf_of_every_outcome_and_without_tikz(tmp_path, monkeypatch):
    import types

    from attngeo.theorems import report as module

    # the TikZ and table fallbacks are what a machine without matplotlib gets: force that path here
    monkeypatch.setattr(module, "importlib", types.SimpleNamespace(util=types.SimpleNamespace(find_spec=lambda n: None)))
    claims = [Claim(k, f"claim ${k}$", mode) for k, mode in (("x", RANGE), ("y", INSTANCES), ("z", RANGE))]
    rng = random.Random(0)
    entries = [Entry("x", s, "certified") for s in ONE_LAYER]
    entries += [Entry("y", s, rng.choice(["certified", "bounds", "undecided"])) for s in ONE_LAYER]
    entries += [Entry("z", ONE_LAYER[0], "refuted", "a point", "$\\dim \\mathcal M = 7$", "$8$")]
    outcomes = [_outcome("single-layer-dimension", claims, entries),
                _outcome("softmax-conjecture", claims[:2], entries[:-1]),
                Outcome(get("boundary-points"), 1, 1.0, "FAILED (1):\n  d=2: wrong\n", 0)]
    tex = latex(outcomes, tmp_path, 3.0)
    # the document draws with TikZ where the machine has tikz.sty (texlive-latex-extra) and falls back to tables
    # where it has not (a plain texlive-latex-base): the first variant is what this machine does, the second
    # always the tables
    variants = (("this machine", tex, has_package("tikz.sty")),
                ("tables", tex.replace(r"\IfFileExists{tikz.sty}", r"\IfFileExists{none}"), False))
    for variant, source, drawn in variants:
        folder = tmp_path / variant.replace(" ", "-")
        folder.mkdir()
        text = _pdf_text(folder, source)
        _assert_typeset(text)
        for o in ("certified", "instances", "refuted", "bounds"):
            assert OUTCOMES[o] in text
        if drawn:  # the caption describes what is drawn: arrows with TikZ, a table without
            assert "an arrow points to a statement" in text and "the statements each uses directly" not in text
        else:
            assert "an arrow points to a statement" not in text and "the statements each uses directly" in text


def _multihead_outcome() -> Outcome:
    """A multi-head claim whose 120 sizes are a list (no grid), with yes/no sizes, as multihead_dimension reports."""
    from attngeo import Architecture
    from attngeo.theorems.proof import sizes_of

    archs = [Architecture((d, d), (a,), t, heads=h, value_ranks=b, residual=r, causal=c)
             for d in (2, 3) for a in (1, 2) for h in (1, 2) for b in (None, 1) for r in (False, True)
             for c in (False, True) for t in (2, 3) if (h, b, r, c) != (1, None, False, False)]
    claims = [Claim("heads", "multi-head dimension", INSTANCES)]
    return _outcome("multihead-dimension", claims, [Entry("heads", sizes_of(a), "certified") for a in archs])


def test_the_report_opens_with_its_notation_and_lists_sizes_in_an_appendix(tmp_path):
    o = _multihead_outcome()
    tex, md = latex([o], tmp_path, 1.0), markdown([o], tmp_path, 1.0)
    notation = tex.split(r"\section{Notation and vocabulary}")[1].split(r"\section{Results}")[0]
    for symbol in (r"\varphi", r"\mathcal M", "$d$", "$d'$", "$a$", "$t$", "$h$", "$b$", "$l$", "$P$"):
        assert symbol in notation, symbol  # every size the tables use is defined before the first table
    for outcome in (*OUTCOMES.values(), "certificate", "attngeo check"):
        assert outcome in notation
    for text in (tex, md):
        assert "True" not in text and "False" not in text  # yes/no sizes are words
    part = o.result["parts"][0]["scope"]  # b is None (V whole) or a list: the sizes are no grid
    assert part["count"] == 120 and "list" in part
    from attngeo.latex import scope as full_scope

    results = tex.split(r"\section{Results}")[1].split(r"\end{longtable}")[0]
    assert "120 sizes" in results and "Appendix A.1" in results and full_scope(part) not in results  # a summary
    appendix = tex.split("Appendix A. The sizes")[1]
    assert full_scope(part) in appendix and r"\text{causal mask}" in appendix  # the whole list lives here


def test_every_cited_work_has_a_bibliography_entry(tmp_path):
    from attngeo.theorems.registry import STATEMENTS
    from attngeo.theorems.report import REFERENCES, cited

    outcomes = [Outcome(s, 0, 1.0, "", 0) for s in STATEMENTS] + [_multihead_outcome()]
    tex = latex(outcomes, tmp_path, 1.0)
    keys = cited(tex)
    assert {"HMK", "MHA"} <= set(keys) and set(keys) <= set(REFERENCES)  # the statements cite both
    references = tex.split(r"\section*{References}")[1]
    for key in keys:
        assert f"[{key}]" in references and "no entry" not in references
    md = markdown(outcomes, tmp_path, 1.0)
    assert "## References" in md and all(f"**[{k}]**" in md.split("## References")[1] for k in keys)


@needs_pdflatex
def test_the_pdf_of_a_listed_claim_has_notation_summary_appendix_and_references(tmp_path):
    o = _multihead_outcome()
    text = _pdf_text(tmp_path, latex([o, Outcome(get("single-layer-dimension"), 0, 1.0, "", 0)], tmp_path, 1.0))
    _assert_typeset(text)
    for heading in ("Notation and vocabulary", "Results", "The statements", "Appendix A", "References"):
        assert heading in text
    assert "True" not in text and "False" not in text and "causal mask" in text and "[HMK]" in text
    pages = int(subprocess.run(["pdfinfo", "report.pdf"], cwd=tmp_path, capture_output=True, text=True,
                               check=True).stdout.split("Pages:")[1].split()[0])
    assert pages <= 6  # 120 listed sizes fit on a page or two of appendix, not pages of table


@needs_pdflatex
def test_the_pdf_puts_theorems_with_their_hypotheses_before_the_instances(tmp_path):
    """Issue 36 item 3: a theorem (all sizes, every hypothesis typeset) stands apart from a range of instances."""
    proved = Outcome(get("deep-dimension"), 0, 1.0, _multihead_outcome().output, proved="for all sizes: ...")
    text = _pdf_text(tmp_path, latex([proved, _multihead_outcome()], tmp_path, 1.0))
    _assert_typeset(text)
    theorems = text.split("Theorems proved for all sizes")[1]
    section, instances = theorems.split("Instances: claims on ranges of sizes")
    assert "l ≥ 1" in section and "a ≤ d" in section and "≤ 3" not in section and "proved for all sizes" in section
    assert "instances certified" not in section and "instances certified" in instances
