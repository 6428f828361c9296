import json
import subprocess
import sys
from pathlib import Path

import pytest

from attngeo.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_dim_json_has_the_documented_keys(capsys, tmp_path):
    cert = tmp_path / "c.json"
    assert main(["dim", "--widths", "3,3,3", "--ranks", "2,2", "--tokens", "3", "--json", "--certificate", str(cert), "--seed", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("parameters", "lower", "upper", "certified", "dimension", "formula"):
        assert key in out
    assert out["certified"] is True and out["dimension"] == out["lower"] == out["upper"]
    assert out["formula"] == out["dimension"]  # [HMK] deep formula, inside its hypotheses
    assert main(["check", str(cert)]) == 0


def test_dim_default_tokens_is_two_and_gap_is_not_rounded(capsys):
    assert main(["dim", "--widths", "3,3", "--ranks", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["architecture"]["tokens"] == 2
    assert main(["dim", "--widths", "3,3", "--ranks", "2", "--tokens", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] is False and out["dimension"] is None and out["formula"] is None


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["dim", "--widths", "3,x", "--ranks", "2"], "--widths"),
        (["dim", "--widths", "3,3", "--ranks", "2,2"], "ranks has 2 entries"),
        (["dim", "--widths", "3,3", "--ranks", "0"], "ranks[0]"),
        (["dim", "--widths", "3,3", "--ranks", "1", "--tokens", "0"], "tokens"),
        (["dim", "--ranks", "1"], "--widths"),
        (["check", "/no/such/file.json"], "cannot read"),
        (["certify", "--proofs", "/no/such/folder"], "no proof scripts"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(argv, fragment, capsys):
    with pytest.raises(SystemExit) as exc:
        sys.exit(main(argv))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert fragment in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_check_exit_codes(tmp_path, deep_certificate, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(deep_certificate))
    tampered = dict(deep_certificate, lower=deep_certificate["lower"] + 1)
    bad.write_text(json.dumps(tampered))
    assert main(["check", str(good)]) == 0
    assert main(["check", str(bad)]) == 1
    assert main(["check", str(tmp_path)]) == 1
    (tmp_path / "junk.json").write_text("nope")
    assert main(["check", str(tmp_path / "junk.json")]) == 2


def test_existing_certificate_survives_a_failed_run(tmp_path, capsys):
    cert = tmp_path / "keep.json"
    cert.write_text("precious")
    assert main(["dim", "--widths", "3,3", "--ranks", "9,9", "--certificate", str(cert)]) == 2
    assert cert.read_text() == "precious"


def test_console_script_runs_as_a_module():
    res = subprocess.run([sys.executable, "-m", "attngeo", "dim", "--widths", "2,2", "--ranks", "1", "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0 and json.loads(res.stdout)["certified"]


# -- fiber ---------------------------------------------------------------------------------


def test_fiber_json_has_the_documented_keys(capsys, tmp_path):
    cert = tmp_path / "f.json"
    assert main(["fiber", "--widths", "3,3", "--ranks", "2", "--special", "rank1-swap", "--json",
                 "--certificate", str(cert)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["certified"] is True and out["method"]
    assert [c["dimension"] for c in out["components"]] == [1, 1]
    assert all(c["description"] for c in out["components"])
    assert main(["check", str(cert)]) == 0


def test_fiber_latex_and_zero(capsys):
    assert main(["fiber", "--widths", "2,2", "--ranks", "1", "--special", "zero", "--latex"]) == 0
    out = capsys.readouterr().out
    assert r"\{A = 0\}" in out and out.count("{") == out.count("}")


def test_fiber_reads_exact_weights(tmp_path, capsys):
    w = tmp_path / "w.json"
    w.write_text('{"Q": [[1, "1/2", 0.5]], "K": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}')
    assert main(["fiber", "--widths", "3,2", "--ranks", "1", "--weights", str(w), "--json"]) == 0
    comp = json.loads(capsys.readouterr().out)["components"][0]
    assert "1/2" in json.dumps(comp["A"])  # 0.5 read as 1/2, never through a float


@pytest.mark.parametrize("content,message", [
    ('{"Q": [[1, 2, NaN]], "K": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}', "NaN"),
    ('{"Q": [[1, 2, Infinity]], "K": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}', "Infinity"),
    ('{"Q": [[1, 2]], "K": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}', "Q1 must be 1x3"),
    ('{"Q": [[1, 2, "x"]], "K": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}', "not an exact rational"),
    ('{"Q": [[1, 2, 3]], "V": [[1, 2, 3], [0, 1, 1]]}', "keys Q, K, V"),
    ("[1, 2", "not JSON"),
])
def test_bad_weight_files_exit_2_with_a_clear_message(tmp_path, capsys, content, message):
    w = tmp_path / "w.json"
    w.write_text(content)
    assert main(["fiber", "--widths", "3,2", "--ranks", "1", "--weights", str(w)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_fiber_refusals_exit_2(capsys, tmp_path):
    assert main(["fiber", "--widths", "2,2,2", "--ranks", "2,2", "--special", "zero"]) == 2
    assert "--random" in capsys.readouterr().err
    assert main(["fiber", "--widths", "2,2", "--ranks", "1", "--tokens", "1", "--random", "1"]) == 2
    assert "t >= 2" in capsys.readouterr().err
    assert main(["fiber", "--widths", "2,2", "--ranks", "1", "--weights", str(tmp_path / "missing.json")]) == 2


def test_singular_and_implicit_commands(capsys, tmp_path):
    from attngeo.engine import find_msolve
    from attngeo.latex import balanced

    cert = tmp_path / "strata.json"
    assert main(["singular", "--widths", "2,2", "--ranks", "2", "--json", "--certificate", str(cert)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"rank_A", "rank_V", "dimension", "singular", "certified"} <= set(out["strata"][0])
    assert out["equations"] and all(balanced(e) for e in out["equations"])
    assert main(["check", str(cert)]) == 0
    capsys.readouterr()
    assert main(["singular", "--widths", "2,2,2", "--ranks", "2,2"]) == 2
    assert "single-layer" in capsys.readouterr().err
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--tokens", "1"]) == 2
    assert "t >= 2" in capsys.readouterr().err
    if find_msolve() is not None:
        assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--json"]) == 0
        eq = json.loads(capsys.readouterr().out)
        assert len(eq["equations"]) == 1 and eq["degrees"] == [4] and balanced(eq["equations"][0])


def test_a_reader_closing_the_pipe_is_not_an_error(tmp_path):
    import subprocess
    import sys

    run = subprocess.run(f"{sys.executable} -m attngeo singular --widths 4,2 --ranks 3 --json | head -c 10",  # > 64 KB
                         shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr
