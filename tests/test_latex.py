"""Every LaTeX string attngeo prints is balanced, and (when pdflatex is installed) compiles."""

import random
import shutil
import subprocess

import pytest

from attngeo import Architecture, certify_dimension, fiber
from attngeo.geometry.loci.boundary import is_boundary_point
from attngeo.geometry.fibers.layer import special_point
from attngeo.model.formulas import hmk_formula
from attngeo.latex import FORMULAS, balanced
from attngeo.model.layerfunction import LayerFunction
from attngeo.geometry.loci.singular import is_singular
from attngeo.geometry.loci.strata import hmk_singular_ideal, stratify
from attngeo.geometry.symmetry import SymmetryGroup


def _samples() -> list[str]:
    one = Architecture((2, 2), (1,), tokens=2)
    w = special_point(one, "rank1-swap", random.Random(0))
    soft = Architecture((3, 3, 3), (2, 2), 3, "softmax")
    out = [one._repr_latex_(), certify_dimension(soft, seed=0)._repr_latex_(), SymmetryGroup(soft)._repr_latex_(),
           fiber(one, w)._repr_latex_(), LayerFunction.from_weights(one, w)._repr_latex_(),
           is_singular(one, w)._repr_latex_(), is_boundary_point(one, w)._repr_latex_(),
           hmk_singular_ideal(one)._repr_latex_()]
    out += ["$" + s + "$" for s in hmk_singular_ideal(one, "QKV").latex()]
    out.append(stratify(Architecture((2, 2), (2,), tokens=2)).latex())
    return out


def test_formula_names_all_have_latex():
    shapes = [((3, 3), (2,)), ((3, 3), (4,)), ((3, 3, 3), (2, 2))]
    for norm in ("lightning", "softmax"):
        for widths, ranks in shapes:
            assert hmk_formula(Architecture(widths, ranks, 2, norm)).name in FORMULAS


@pytest.mark.msolve  # _samples includes [HMK]'s singular-locus ideal
def test_latex_is_balanced():
    for text in _samples():
        assert balanced(text) and text.count("$") % 2 == 0, text


@pytest.mark.msolve
@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_compiles(tmp_path):
    body = "\n\n".join(_samples())
    doc = "\\documentclass{article}\\usepackage{amsmath,amssymb}\\begin{document}\n" + body + "\n\\end{document}\n"
    (tmp_path / "all.tex").write_text(doc)
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "all.tex"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-3000:]
