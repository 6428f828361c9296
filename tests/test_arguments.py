"""Every numeric or list option of every subcommand refuses a bad value in one line naming it, exit code 2."""

import argparse
import sys

import pytest

from attngeo.ui.cli import build_parser, main


def _typed_options():
    """(subcommand, option) for every option whose value is parsed (a ``type=``) and not a fixed choice."""
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sorted(sub.choices.items()):
        for action in parser._actions:
            if action.option_strings and action.type is not None and action.choices is None:
                yield name, action.option_strings[-1]


TYPED = sorted(set(_typed_options()))


def _refused(argv, capsys, *fragments):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(argv))
    err = capsys.readouterr().err
    assert exc.value.code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in err, err
    return err


def test_the_audit_sees_every_numeric_option():
    seen = {flag for _, flag in TYPED}
    assert {"--widths", "--ranks", "--heads", "--value-ranks", "--tokens", "--seed", "--random", "--timeout",
            "--max-memory", "--workers", "--layers"} <= seen
    assert ("sweep", "--widths") in TYPED and ("dim", "--tokens") in TYPED  # sweep's grid axes are parsed too


@pytest.mark.parametrize("command, flag", TYPED)
@pytest.mark.parametrize("value", ["x", "-1", "-3,3", "1e400", "", "99999999999999999999"])
def test_every_numeric_option_refuses_a_bad_value_in_one_line(command, flag, value, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a value wrongly accepted must not leave a ./sweep folder behind
    _refused([command, f"{flag}={value}" if value.startswith("-") or not value else flag, *([] if value.startswith("-")
              or not value else [value])], capsys, f"argument {flag}")


# --seed, --random and --layer (GPT-2 numbers its layers from h.0) take 0.
@pytest.mark.parametrize("command, flag", [(c, f) for c, f in TYPED if f not in ("--seed", "--random", "--layer")])
def test_zero_is_refused_where_a_count_is_meant(command, flag, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _refused([command, flag, "0"], capsys, f"argument {flag}", "'0'")


DIM = ["dim", "--widths", "3,3", "--ranks", "2"]


@pytest.mark.parametrize("argv, fragments", [
    (DIM + ["--heads", "0"], ("--heads", "0")),                      # ran as one head before
    (DIM + ["--heads", "-1"], ("--heads", "-1")),
    (DIM + ["--value-ranks", "7"], ("--value-ranks", "b_1 = 7", "min(d_0, d_1) = 3")),  # a negative naive count before
    (["dim", "--widths", "-3,3", "--ranks", "1"], ("--widths", "-3")),                    # "expected one argument" before
    (["sweep", "--widths", "3", "--ranks", "5", "--out", "{tmp}/s"], ("--widths 3 --ranks 5",)),  # "0 tasks", exit 0
    (["sweep", "--widths", "-3..3", "--out", "{tmp}/s"], ("--widths", "-3..3")),
    (["fiber", "--widths", "3,3", "--ranks", "2", "--random", "1", "--value-ranks", "4"], ("--value-ranks",)),
])
def test_inputs_a_new_user_met_are_one_line_and_exit_2(argv, fragments, capsys, tmp_path):
    _refused([a.replace("{tmp}", str(tmp_path)) for a in argv], capsys, *fragments)
    assert not (tmp_path / "s").exists()  # refused before any folder is made


def test_value_ranks_up_to_the_smaller_width_are_accepted(capsys):
    # b = min(d_0, d_1) reaches every V: allowed, and its naive count is the certified dimension's neighbour, not < 0
    assert main(["dim", "--widths", "3,2", "--ranks", "1", "--value-ranks", "2", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["certified"] and out["dimension"] > 0


def test_a_toml_grid_takes_lists_numbers_and_ranges(tmp_path):
    """`layers = [1, 2]` failed before ("write a range low..high"); TOML lists and integers read as given."""
    from attngeo.ui.sweep import from_toml

    path = tmp_path / "grid.toml"
    path.write_text('widths = "2..3"\nlayers = [1, 2]\nranks = 1\ntokens = [2, 3]\nheads = "1"\n')
    archs, options = from_toml(path)
    assert sorted({(a.widths[0], a.depth, a.tokens) for a in archs}) == \
        [(d, l, t) for d in (2, 3) for l in (1, 2) for t in (2, 3)] and options == {"what": "dimension"}
    for bad in ('layers = [1, "x"]', "layers = [0, 1]", "layers = true", "layers = 1.5"):
        path.write_text(f'widths = "2"\n{bad}\n')
        with pytest.raises(Exception, match="layers") as exc:
            from_toml(path)
        assert type(exc.value).__name__ == "InvalidInputError"
