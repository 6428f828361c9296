"""The theorem registry, dependency-ordered certification and its reports."""

from pathlib import Path

import networkx as nx
import pytest

from attngeo.typesetting import RERUN, missing
from attngeo.ui.cli import main
from attngeo.latex import balanced
from attngeo.theorems.registry import OUTCOMES, SINGULAR_REGIONS, STATEMENTS, graph, order, singular_region

PROOFS = Path(__file__).resolve().parent.parent / "proofs"


def test_registry_is_a_dag_covering_every_proof_script():
    g = graph()
    assert nx.is_directed_acyclic_graph(g)
    assert {s.script for s in STATEMENTS} == {p.stem for p in PROOFS.glob("*.py")}
    position = {name: k for k, name in enumerate(order())}
    for u, v in g.edges():
        assert position[u] < position[v]
    assert all(balanced(s.latex) and s.latex.count("$") % 2 == 0 for s in STATEMENTS)
    # the registry says what is claimed; what came of it is the scripts' to report
    assert not any("certif" in (s.title + s.latex).lower() for s in STATEMENTS)


def test_singular_regions_split_the_single_layer_sizes_as_docs_findings_do():
    sizes = [(d, dd, a) for d in range(1, 6) for dd in range(1, 4) for a in range(1, d + 2)]
    region = {z: singular_region(*z) for z in sizes}
    assert set(region.values()) == set(SINGULAR_REGIONS)
    assert all(region[(d, dd, a)] == "1 < a < d" for d, dd, a in sizes if 1 < a < d)
    assert all(region[(d, 1, 1)] == "a = 1, d' = 1" for d in range(2, 6))
    assert all(region[(d, dd, a)] == "a >= d" for d, dd, a in sizes if a >= d and not (a == 1 and dd == 1 and d > 1))


def _report(out: Path) -> tuple[str, str]:
    return (out / "report.md").read_text(), (out / "report.tex").read_text()


def test_certify_one_statement_writes_both_reports(tmp_path, capsys):
    assert main(["certify", "--only", "boundary-points", "--out", str(tmp_path)]) == 0
    md, tex = _report(tmp_path)
    # Lemma B is tested at points: certified instances, never "certified on the range"; 174 points =
    # 4 special points at each of the 30 architectures d <= 4, d' <= 3, a <= d, plus 2 quadric points when d >= 2
    points = sum(4 + 2 * (d >= 2) for d in range(1, 5) for _ in range(1, 4) for _ in range(1, d + 1))
    lemma = next(ln for ln in md.splitlines() if ln.startswith("- Lemma B"))
    assert f"**{OUTCOMES['instances']}** ({points} of {points} points at 30 architectures certified)" in lemma
    assert tex.startswith(r"\documentclass") and tex.rstrip().endswith(r"\end{document}") and balanced(tex)
    assert list((tmp_path / "boundary_points").glob("*.json"))
    assert main(["check", str(tmp_path)]) == 0


def test_a_failing_proof_fails_the_run_and_the_report_says_so(tmp_path, capsys):
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "boundary_points.py").write_text("print('FAILED (1):')\nprint('  d=2: wrong')\nraise SystemExit(1)\n")
    out = tmp_path / "out"
    assert main(["certify", "--proofs", str(proofs), "--only", "boundary_points", "--out", str(out)]) == 1
    md, tex = _report(out)
    assert "FAILED" in md and "d=2: wrong" in md and "failed" in tex
    assert main(["certify", "--only", "no-such-statement", "--out", str(out)]) == 2


@pytest.mark.skipif(missing("pdflatex") is not None, reason=f"{missing('pdflatex')}: no PDF is typeset here")
def test_one_command_builds_the_pdf(tmp_path, capsys):
    assert main(["certify", "--only", "boundary-points", "--out", str(tmp_path), "--pdf"]) == 0
    assert (tmp_path / "report.pdf").read_bytes()[:5] == b"%PDF-"
    assert not RERUN.search((tmp_path / "report.log").read_text(errors="replace"))  # ran until nothing asked again
    assert "report.pdf" in capsys.readouterr().out


def test_the_pdf_is_refused_before_the_proofs_where_pdflatex_is_missing(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no pdflatex on this PATH
    assert main(["certify", "--only", "boundary-points", "--out", str(tmp_path / "out"), "--pdf"]) == 2
    err = capsys.readouterr().err
    assert "--pdf: pdflatex is not installed (apt-get install texlive-latex-base)" in err
    assert not (tmp_path / "out").exists()  # nothing ran
