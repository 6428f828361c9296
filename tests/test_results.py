"""Every result class follows one protocol: words, LaTeX, a JSON record, a certificate the checker accepts."""

import json
import random

import pytest

from attngeo import (Architecture, certify_dimension, check_certificate, deep_fiber, fiber, implicit_equations,
                     is_boundary_point, is_singular, special_point, stratify)
from attngeo.geometry.certificate import Result
from attngeo.latex import balanced

ONE = Architecture((2, 2), (1,), tokens=2)


def _point(kind):
    return special_point(ONE, kind, random.Random(3))


MAKERS = {
    "dimension": lambda: certify_dimension(Architecture((3, 3, 2), (2, 2), tokens=2), seed=1),
    "dimension (softmax)": lambda: certify_dimension(Architecture((2, 2), (1,), tokens=2, normalization="softmax")),
    "fiber": lambda: fiber(ONE, _point("rank1-swap")),
    "singular point": lambda: is_singular(ONE, _point("random")),
    "boundary point": lambda: is_boundary_point(ONE, _point("rank1-parallel")),
    "strata": lambda: stratify(ONE),
    "deep fiber": pytest.param(lambda: deep_fiber(Architecture((2, 2, 2), (2, 2)), seed=1), marks=pytest.mark.msolve),
    "implicit equations": pytest.param(lambda: implicit_equations(Architecture((2, 1), (2,), tokens=2)),
                                       marks=pytest.mark.msolve),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_every_result_follows_the_protocol(make, tmp_path):
    result = make()
    assert isinstance(result, Result)
    record = result.to_dict()
    assert json.loads(json.dumps(record)) == record  # the --json record is plain JSON
    tex = result.latex()
    assert isinstance(tex, str) and tex and balanced(tex) and "\n\n" not in tex
    assert balanced(result._repr_latex_()) and "<pre>" in result._repr_html_() or "<table>" in result._repr_html_()
    assert "\n" not in repr(result) and repr(result).startswith(f"<{type(result).__name__} ")
    path = result.save(tmp_path / "c.json")
    cert = json.loads(path.read_text())
    assert (cert["format"], cert["version"], cert["kind"]) == ("attngeo-certificate", 2, result.kind)
    assert check_certificate(path).kind == result.kind


def test_the_public_api_resolves_and_the_readme_uses_only_it():
    import re
    from pathlib import Path

    import attngeo

    assert all(getattr(attngeo, name) is not None for name in attngeo.__all__)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    api = readme[readme.index("## Python API"):readme.index("## Proof scripts")]
    imported = re.findall(r"from (attngeo[\w.]*) import ([\w, ]+)", api)
    assert imported and all(module == "attngeo" for module, _ in imported), imported
    for _, names in imported:
        for name in names.split(","):
            assert name.strip() in attngeo.__all__, name
