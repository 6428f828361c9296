"""LaTeX that pastes: ``latex()`` is one string of math for every result (pieces through ``latex_parts()``), and
every ``--latex`` output of the README and of the test suite compiles as it is inside a document that loads
amsmath and amssymb (pdflatex; skipped, naming what is missing, where LaTeX is not installed)."""

import ast
import contextlib
import io
import random
import re
import shlex
import subprocess
from pathlib import Path

import numpy as np
import pytest

from attngeo import Architecture, certify_dimension, fiber
from attngeo.geometry.dimension.discovery import DiscoveredField
from attngeo.geometry.fibers.layer import special_point
from attngeo.geometry.fibers.virtual import virtual_fiber
from attngeo.geometry.loci.boundary import is_boundary_point
from attngeo.geometry.loci.graded import graded_equations
from attngeo.geometry.loci.singular import is_singular
from attngeo.geometry.loci.strata import hmk_singular_ideal, stratify
from attngeo.geometry.symmetry import SymmetryGroup
from attngeo.latex import FORMULAS, balanced, equations, terms, width, wrap
from attngeo.model.formulas import hmk_formula
from attngeo.model.layerfunction import LayerFunction
from attngeo.theorems.allsizes import STATEMENTS as THEOREMS
from attngeo.typesetting import missing
from attngeo.ui.cli import main

ROOT = Path(__file__).resolve().parents[1]
#: What a reader's document needs for any --latex output (README, "Command line").
PREAMBLE = "\\documentclass{article}\n\\usepackage{amsmath,amssymb}\n\\begin{document}\n"


def _results() -> dict:
    """One of every public result that prints LaTeX, by name."""
    one = Architecture((2, 2), (1,), tokens=2)
    w = special_point(one, "rank1-swap", random.Random(0))
    soft = Architecture((3, 3, 3), (2, 2), 3, "softmax")
    return {"DimensionCertificate": certify_dimension(soft, seed=0), "SymmetryGroup": SymmetryGroup(soft),
            "Fiber": fiber(one, w), "LayerFunction": LayerFunction.from_weights(one, w),
            "SingularityVerdict": is_singular(one, w), "BoundaryVerdict": is_boundary_point(one, w),
            "VirtualFiber": virtual_fiber(Architecture((3, 3, 3), (2, 2), tokens=2), seed=0),
            "GradedEquations": graded_equations(Architecture((2, 1), (1,), tokens=2), 2),
            "Stratification": stratify(Architecture((2, 2), (2,), tokens=2)),
            "DiscoveredField": DiscoveredField(Architecture((1, 1), (1,), tokens=2), ((1, 0, 0), (0, 0, 0), (0, 0, -1))),
            "AllSizes": THEOREMS["single-layer-dimension"]}


def test_formula_names_all_have_latex():
    shapes = [((3, 3), (2,)), ((3, 3), (4,)), ((3, 3, 3), (2, 2))]
    for norm in ("lightning", "softmax"):
        for widths, ranks in shapes:
            assert hmk_formula(Architecture(widths, ranks, 2, norm)).name in FORMULAS


@pytest.mark.msolve  # [HMK]'s singular-locus ideal is an elimination
def test_latex_of_every_result_is_one_balanced_string_and_its_parts_a_list():
    results = {**_results(), "Ideal": hmk_singular_ideal(Architecture((2, 2), (1,), tokens=2), "QKV")}
    for name, result in results.items():
        tex = result.latex()
        assert isinstance(tex, str) and balanced(tex) and "$" not in tex, name  # math, without delimiters
        if hasattr(result, "latex_parts"):
            parts = result.latex_parts()
            assert isinstance(parts, list) and parts and all(isinstance(p, str) and balanced(p) for p in parts), name
            assert all(p in tex for p in parts), name  # latex() is made of its parts
    ideal = results["Ideal"]
    assert len(ideal.latex_parts()) == len(ideal.gens) and ideal.latex().startswith(r"\left\langle")


def test_long_sums_break_between_terms_and_short_ones_do_not():
    from flint import fmpq_mpoly_ctx

    ctx = fmpq_mpoly_ctx.get(tuple(f"c_1_{k}_{m}{n}" for k in (1, 2) for m in (1, 2) for n in (1, 2)), "degrevlex")
    g = ctx.gens()
    long = sum(g[i] * g[(i + 3) % 8] * g[(i + 5) % 8] for i in range(8))
    lines = wrap(terms(long))
    assert len(lines) > 1 and " ".join(lines) == " ".join(terms(long))  # every term kept, in order
    assert all(width(line) <= 48 for line in lines[:-1])
    assert wrap(terms(g[0] - g[1])) == [" ".join(terms(g[0] - g[1]))]
    tex = equations([("g_{1}", terms(long))])
    assert tex.startswith("\\begin{align*}") and tex.count(r"&\quad") == len(lines) - 1


# -- compiling: every --latex output of the README and of the test suite ---------------------------------

#: At least one command per subcommand that takes --latex, beyond what the README and the tests run.
COMMANDS = [
    "dim --widths 3,3 --ranks 2 --seed 0 --latex",
    "dim --widths 4,4,4 --ranks 2,2 --heads 2 --value-ranks 2 --residual --causal --tokens 3 --seed 0 --latex",
    "dim --widths 3,3,3 --ranks 2,2 --tokens 3 --softmax --seed 0 --latex",
    "fiber --widths 3,2 --ranks 1 --special rank1-parallel --latex",
    "fiber --widths 3,3 --ranks 3 --random 2 --latex",
    "fiber --widths 2,2,2 --ranks 1,2 --random 1 --latex",
    "fiber --widths 2,2 --ranks 1 --heads 2 --random 1 --latex",
    "singular --widths 3,3 --ranks 2 --qkv --latex",
    "singular --widths 4,1 --ranks 1 --max-degree 3 --latex",
    "implicit --widths 2,2 --ranks 2 --latex",
    "implicit --widths 4,1 --ranks 2 --max-degree 4 --latex",
    "implicit --widths 3,1 --ranks 2 --max-degree 3 --full --latex",
    "prove single-layer-dimension --latex",
    "prove multihead-layer-dimension --latex",
    "prove deep-dimension --latex",
    "inspect --weights {npz} --layout torch-mha --heads 2 --latex",
]


def _readme_commands() -> list[str]:
    """The README's command lines that print LaTeX (``[--latex]`` taken, other bracketed options left out)."""
    block = (ROOT / "README.md").read_text().split("## Command line", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    out = []
    for line in block.replace("\\\n", " ").splitlines():
        line = line.split("#")[0].split(">")[0].strip()
        if "--latex" in line:
            line = re.sub(r"\[--latex\]", "--latex", line)
            out.append(re.sub(r"\s*\[[^\]]*\]", "", line).removeprefix("attngeo "))
    return out


def _suite_commands() -> list[str]:
    """Every argument list written out in full in the test files that asks for --latex."""
    out = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.List) and node.elts and all(isinstance(e, ast.Constant) and isinstance(e.value, str)
                                                                 for e in node.elts):
                argv = [e.value for e in node.elts]
                if "--latex" in argv and argv[0] in ("dim", "fiber", "singular", "implicit", "prove", "inspect"):
                    out.append(shlex.join(argv))
    return out


def test_the_commands_cover_every_subcommand_with_latex_and_the_readme_and_suite_are_found():
    from attngeo.ui.cli import build_parser

    parser = build_parser()
    subcommands = parser._subparsers._group_actions[0].choices
    with_latex = {name for name, p in subcommands.items() if any("--latex" in a.option_strings for a in p._actions)}
    assert with_latex == {c.split()[0] for c in COMMANDS}
    readme = _readme_commands()
    assert any(c.startswith("fiber") for c in readme) and any(c.startswith("singular") for c in readme)
    assert any(c.startswith("fiber") for c in _suite_commands())


def _output(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0, argv
    return out.getvalue()


def _compile(folder: Path, chunks: dict[str, str]) -> tuple[int, str]:
    body = "\n".join(f"% {name}\n{tex}\n\\clearpage" for name, tex in chunks.items())
    (folder / "all.tex").write_text(PREAMBLE + body + "\n\\end{document}\n")
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "all.tex"], cwd=folder,
                         capture_output=True, text=True, timeout=300)
    return run.returncode, run.stdout


@pytest.mark.skipif(missing("pdflatex") is not None, reason=f"{missing('pdflatex')}: the --latex outputs are not "
                    "compiled here")
@pytest.mark.msolve  # singular, implicit and the deep elimination run msolve
def test_every_latex_output_compiles_as_it_is(tmp_path):
    rng = np.random.default_rng(0)
    npz = tmp_path / "mha.npz"
    np.savez(npz, in_proj_weight=rng.standard_normal((12, 4)).astype(np.float32),
             **{"out_proj.weight": np.eye(4, dtype=np.float32)})
    commands = dict.fromkeys(_readme_commands() + _suite_commands() + [c.format(npz=npz) for c in COMMANDS])
    chunks = {}
    for command in commands:
        tex = _output(shlex.split(command))
        assert balanced(tex), command
        chunks[command] = tex
    code, log = _compile(tmp_path, chunks)
    if code != 0:  # name the command whose output does not compile
        for name, tex in chunks.items():
            one = tmp_path / "one"
            one.mkdir(exist_ok=True)
            c, alone = _compile(one, {name: tex})
            assert c == 0, f"--latex output of 'attngeo {name}' does not compile:\n{tex[:2000]}\n{alone[-2000:]}"
        pytest.fail(log[-3000:])


@pytest.mark.skipif(missing("pdflatex") is not None, reason=f"{missing('pdflatex')}: nothing is compiled here")
@pytest.mark.msolve
def test_every_results_latex_compiles_between_delimiters(tmp_path):
    results = {**_results(), "Ideal": hmk_singular_ideal(Architecture((2, 2), (1,), tokens=2), "QKV")}
    chunks = {name: f"\\[ {r.latex()} \\]" for name, r in results.items()}
    chunks.update({f"{name} (notebook)": r._repr_latex_() for name, r in results.items() if hasattr(r, "_repr_latex_")})
    code, log = _compile(tmp_path, chunks)
    assert code == 0, log[-3000:]


def test_a_notebook_cell_of_a_long_result_stays_small():
    eq = graded_equations(Architecture((4, 1), (2,), tokens=2), 4)   # 85 representatives, 150 kB of LaTeX
    assert len(eq.latex()) > eq.NOTEBOOK_LATEX and eq._repr_latex_() is None  # Jupyter shows the text instead
    assert len(eq._repr_html_()) < 2_000
    small = graded_equations(Architecture((2, 1), (1,), tokens=2), 2)
    assert small._repr_latex_() == f"${small.latex()}$"
