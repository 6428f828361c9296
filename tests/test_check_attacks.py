"""The checker holds against the named attack corpus of issue 11 (tests/attacks/make_corpus.py).

Every attack is built afresh from honest certificates the provers make now, so
none can pass only because the format drifted, and each honest base is checked
to verify first. Forgeries that could only mislead are checked in this process;
files that could hang, exhaust memory or abort the interpreter only ever in an
isolated worker (``check_file``/``check_folder``) or through the command line,
with a time budget. Special files (a FIFO, a link to ``/dev/zero``, a 1 GB
sparse file) are made in ``tmp_path``, never stored.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from attacks import make_corpus as corpus
from attngeo.check import CheckResult, check_certificate, check_file, check_folder
from attngeo.exceptions import CannotVerify, CertificateFormatError, CertificateRejected

REFUSED = (CertificateRejected, CertificateFormatError, CannotVerify)
#: seconds one file may take in isolation here; every attack is refused well within it
BUDGET = 10.0
MEMORY_MB = 2048
#: what the command line prints before a file's path
LABELS = ("valid", "REJECTED", "UNUSABLE")


def _param(attack: corpus.Attack):
    return pytest.param(attack.name, id=attack.name, marks=[pytest.mark.msolve] if attack.needs_msolve else [])


def _pool_param(name: str):
    return pytest.param(name, id=name, marks=[pytest.mark.msolve] if name in corpus.MSOLVE_KINDS else [])


FORGERIES = [_param(a) for a in corpus.ATTACKS if not a.hostile]
HOSTILE = [_param(a) for a in corpus.ATTACKS if a.hostile]
POOL_NAMES = ["dimension", "dimension-a2", "dimension-deep", "dimension-gap", "dimension-softmax", "strata",
              "fiber-random", "fiber-rank1-swap", "fiber-rank1-parallel", "fiber-zero", "fiber-random-a2",
              "singular-random", "singular-rank1-swap", "singular-rank1-parallel", "boundary-random",
               "boundary-rank1-parallel", "boundary-zero", "boundary-definite", "virtual-fiber-orbit",
               "virtual-fiber-swap", "implicit-graded-quartic", "implicit-graded-quadrics", "singular-by-degrees",
               "implicit-rank-one",
               *corpus.MSOLVE_KINDS]
#: small honest certificates that share a folder with the hostile files
NEIGHBOURS = ("dimension", "fiber-random", "boundary-random", "singular-rank1-swap")


@pytest.fixture(scope="session")
def pool() -> dict:
    return corpus.honest_pool()


def _build(name: str, pool: dict, folder: Path) -> Path:
    path = folder / f"{name}.json"
    path.write_bytes(corpus.BY_NAME[name].build(pool))
    return path


def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "attngeo", "check", "--timeout", f"{BUDGET:g}", *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def _within(seconds: float, call):
    """``call()`` in a watchdog thread: a blocking open (a FIFO) fails the test instead of hanging it."""
    box = {}

    def run():
        try:
            box["value"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds:g} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def _assert_refused_in_isolation(path: Path) -> None:
    start = time.monotonic()
    with pytest.raises(REFUSED):
        _within(BUDGET + 20, lambda: check_file(path, seconds=BUDGET, memory_mb=MEMORY_MB))
    assert time.monotonic() - start < BUDGET + 5


def _assert_cli_refuses_alone(path: Path) -> None:
    start = time.monotonic()
    run = _cli(str(path))
    out = run.stdout.splitlines()
    assert run.returncode in (1, 2), run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    assert len(out) == 2 and out[0].split()[0] in ("REJECTED", "UNUSABLE"), run.stdout  # the file, the counts
    assert time.monotonic() - start < BUDGET + 10


# -- the honest bases ---------------------------------------------------------------------


@pytest.mark.parametrize("name", [_pool_param(n) for n in POOL_NAMES])
def test_every_honest_base_verifies(pool, name):
    """Without this, a refused attack could be refused for a reason that has nothing to do with it."""
    assert isinstance(check_certificate(pool[name]), CheckResult)


# -- forgeries: they can only mislead, so they are checked in this process ------------------


@pytest.mark.parametrize("name", FORGERIES)
def test_forged_certificate_is_refused(pool, tmp_path, name):
    path = _build(name, pool, tmp_path)
    with pytest.raises(REFUSED):
        check_certificate(path)


def _fields(value, path=()) -> set:
    """Every key path of a certificate, list positions left out: its shape, not its values."""
    if isinstance(value, dict):
        return {path + (k,) for k in value} | {p for k, v in value.items() for p in _fields(v, path + (k,))}
    if isinstance(value, list):
        return {p for v in value for p in _fields(v, path)}
    return set()


@pytest.mark.parametrize("name", [_param(a) for a in corpus.ATTACKS if a.base])
def test_a_forgery_lies_only_in_values(pool, name):
    """Field for field an honest certificate's shape: refused for its lie, never for a field the format dropped."""
    attack = corpus.BY_NAME[name]
    assert _fields(json.loads(attack.build(pool))) == _fields(pool[attack.base])


def test_overflow_forgery_of_widths_1_64_is_refused():
    """dim M = 66 for widths 1,64, a = 1, t = 64 (true 64): 4096 products of size ~p^2 per sum wrap int64."""
    cert = corpus.overflow_certificate(64, 64, corpus._one_layer_dimension(), seed=1)
    assert cert["dimension"] == 66 and cert["lower_witness"]["prime"] == corpus.OVERFLOW_PRIME
    with pytest.raises(CertificateRejected):
        check_certificate(cert)


@pytest.mark.parametrize("dd,t", [(2, 2047), (64, 64)])
def test_honest_certificate_at_the_overflow_edge_verifies(dd, t):
    """The true dim M = d' with the determinant computed over the integers: exact arithmetic must agree.

    Q's column of the minor is a sum of ``d' t > 2048`` products of residues near
    ``p``, which an unreduced int64 sum wraps; V's columns are short sums, so this
    checks exactly the long contraction against Python integers.
    """
    cert = corpus.overflow_certificate(dd, t, corpus._one_layer_dimension(), seed=1, honest=True)
    assert check_certificate(cert).claim.startswith(f"dim M = {dd} for widths 1,{dd}")


def test_the_forged_smooth_point_is_singular_by_the_provers():
    """The forgery's claim is false: the provers find two fiber lines and a span above dim M."""
    from attngeo import Architecture
    from attngeo.geometry.loci.singular import is_singular

    forged = corpus.forge_smooth_swap_point()
    n = corpus._ints(forged["point"])
    weights = [[[n[0:3]], [n[3:6]], [n[6:9], n[9:12], n[12:15]]]]
    assert forged["verdict"] == "smooth"
    assert is_singular(Architecture((3, 3), (1,), tokens=2), weights).verdict == "singular"


# -- free text never reaches a verdict line ----------------------------------------------------


@pytest.mark.msolve
def test_a_forged_line_in_free_text_is_never_printed(pool, tmp_path):
    path = _build("trusted_newline", pool, tmp_path)
    try:
        claim = check_certificate(path).claim
    except REFUSED:
        claim = ""
    assert "\n" not in claim and "999" not in claim
    run = _cli(str(path))
    assert len(run.stdout.splitlines()) == 2 and "dim M = 999" not in run.stdout


def test_a_file_name_cannot_forge_a_line(pool, tmp_path):
    """File names are attacker-controlled too: a newline in one must not start a line of output."""
    evil = tmp_path / ("x\n" + corpus.FORGED_LINE.replace("/", "_") + ".json")
    evil.write_bytes(corpus._dump(pool["dimension"]))
    run = _cli(str(tmp_path))
    lines = run.stdout.splitlines()
    assert len(lines) == 2, run.stdout  # one file, the counts
    assert lines[0].startswith("valid") and not lines[1].startswith("valid")


# -- hostile files: only ever in isolation -------------------------------------------------------


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_is_refused_in_isolation(pool, tmp_path, name):
    _assert_refused_in_isolation(_build(name, pool, tmp_path))


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_file_is_refused_on_the_command_line(pool, tmp_path, name):
    _assert_cli_refuses_alone(_build(name, pool, tmp_path))


def _special(kind: str, folder: Path) -> Path:
    """A file that must be refused without being read: made here, never stored."""
    path = folder / f"{kind}.json"
    if kind == "fifo":
        os.mkfifo(path)  # opening it for reading would block until a writer comes
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")  # endless zeros
    elif kind == "sparse_1gb":
        with open(path, "wb") as fh:
            fh.truncate(1 << 30)  # 1 GB of zeros that occupy no disk
    elif kind == "nesting_100k":
        path.write_bytes(corpus.deep_nesting(100_000))
    return path


SPECIAL = ["fifo", "dev_zero", "sparse_1gb", "nesting_100k"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_special_file_is_refused_without_blocking(tmp_path, kind):
    path = _special(kind, tmp_path)
    _assert_refused_in_isolation(path)
    with pytest.raises(REFUSED):
        _within(BUDGET, lambda: check_certificate(path))  # the reader refuses it before reading
    _assert_cli_refuses_alone(path)


def _slow_within_limits(pool: dict, folder: Path) -> Path:
    """A monomial basis x_i^4 of a deep fiber: a staircase of 4^10 monomials, inside every limit, slow to walk."""
    cert = json.loads(json.dumps(pool["deep-fiber-orbit"]))
    cert["basis"] = [f"{v}^4" for v in cert["variables"]]
    cert["solutions_in_slice"] = 4 ** len(cert["variables"])
    cert["factors"] = cert["parametrization"] = None  # a parametrization of 4^10 points is refused by a limit at once
    path = folder / "slow_within_limits.json"
    path.write_bytes(corpus._dump(cert))
    return path


@pytest.mark.msolve
def test_the_time_budget_stops_a_slow_file(pool, tmp_path):
    """Limits bound the work a file can cause; the budget bounds what they still allow."""
    path = _slow_within_limits(pool, tmp_path)
    start = time.monotonic()
    with pytest.raises(CertificateFormatError, match="budget"):
        check_file(path, seconds=1.0, memory_mb=MEMORY_MB)
    assert time.monotonic() - start < 6


def _engines() -> dict[int, tuple[int, str]]:
    """Live msolve processes started by the checker: pid -> (parent pid, state)."""
    out = {}
    for entry in Path("/proc").iterdir():
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, ValueError, IndexError):
            continue
        if Path(args[0].decode(errors="replace")).name == "msolve" and b"attngeo-check-" in b" ".join(args):
            if stat[0] != "Z":
                out[int(entry.name)] = (int(stat[1]), stat[0])
    return out


@pytest.mark.msolve
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc, which this system has not (Linux only)")
def test_a_budget_overrun_leaves_no_engine_running(pool, tmp_path, monkeypatch):
    """A forged linear basis that only the replay can expose, in 25 variables: msolve would run for hours.

    The budget stops the worker; the msolve it started must stop with it, not
    run on orphaned (one per such file in a folder).
    """
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # the forked worker's msolve files land here
    path = tmp_path / "slow_replay.json"
    path.write_bytes(corpus._dump(corpus.slow_replay_certificate(pool)))
    before = set(_engines())
    with pytest.raises(CertificateFormatError, match="budget"):
        check_file(path, seconds=3, memory_mb=MEMORY_MB)
    time.sleep(1)
    orphans = [pid for pid, (parent, _) in _engines().items()
               if pid not in before and (parent == 1 or not Path(f"/proc/{parent}").exists())]
    for pid in orphans:  # ours: started by the worker this test ran, and left behind
        os.kill(pid, 9)
    assert not orphans, f"msolve processes {orphans} outlived the worker that started them"


# -- a folder: valid neighbours stay valid, every class is counted ---------------------------------


@pytest.fixture
def mixed_folder(pool, tmp_path) -> tuple[Path, list[str], list[str]]:
    """Honest certificates beside every hostile file and every special file."""
    valid = []
    for name in NEIGHBOURS:
        path = tmp_path / f"honest-{name}.json"
        path.write_bytes(corpus._dump(pool[name]))
        valid.append(str(path))
    hostile = [str(_build(a.name, pool, tmp_path)) for a in corpus.ATTACKS
               if a.hostile and (not a.needs_msolve or "deep-fiber-orbit" in pool)]
    hostile += [str(_special(kind, tmp_path)) for kind in SPECIAL]
    return tmp_path, valid, hostile


def test_a_folder_run_reports_every_file_and_never_aborts(pool, mixed_folder):
    folder, valid, hostile = mixed_folder
    results = _within(len(valid + hostile) * BUDGET, lambda: check_folder(folder, seconds=BUDGET,
                                                                          memory_mb=MEMORY_MB))
    assert sorted(path for path, _ in results) == sorted(valid + hostile)
    for path, outcome in results:
        if path in valid:
            name = Path(path).stem.removeprefix("honest-")
            assert isinstance(outcome, CheckResult), (path, outcome)
            assert outcome.claim == check_certificate(pool[name]).claim
        else:
            assert isinstance(outcome, REFUSED), (path, outcome)


def test_the_command_line_prints_one_line_per_file_and_counts_each_class(mixed_folder):
    folder, valid, hostile = mixed_folder
    run = _cli(str(folder))
    text = run.stdout + run.stderr
    assert "Traceback" not in text
    assert run.returncode in (1, 2)
    lines = run.stdout.splitlines()
    assert len(lines) == len(valid) + len(hostile) + 1, run.stdout
    by_path = {}
    for line in lines[:-1]:
        label, rest = line.split(None, 1)
        assert label in LABELS, line
        path = next(p for p in valid + hostile if rest.startswith(p + ":"))
        by_path[path] = label
    assert {p for p, label in by_path.items() if label == "valid"} == set(valid)
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", lines[-1])}
    assert counts.get("valid") == len(valid)
    assert counts.get("rejected", 0) == sum(label == "REJECTED" for label in by_path.values())
    assert counts.get("unusable", 0) == sum(label == "UNUSABLE" for label in by_path.values())


# -- the stored corpus -------------------------------------------------------------------------------


def test_the_stored_corpus_is_small_and_complete():
    stored = sorted(corpus.HERE.glob("*.json"))
    assert {p.stem for p in stored} == {a.name for a in corpus.ATTACKS if a.stored}, \
        "regenerate with python3 tests/attacks/make_corpus.py"
    assert sum(p.stat().st_size for p in stored) < 200_000


def test_the_stored_corpus_is_in_the_current_format(pool):
    """A frozen forgery in an old format version is refused for its version, not its lie: regenerate it."""
    for attack in corpus.ATTACKS:
        if attack.hostile or attack.name == "duplicate_key" or not attack.stored:
            continue
        stored = json.loads((corpus.HERE / f"{attack.name}.json").read_text())
        assert stored["version"] == pool["dimension"]["version"], \
            f"{attack.name}.json: regenerate with python3 tests/attacks/make_corpus.py"


def test_every_stored_attack_is_refused_on_the_command_line():
    """``attngeo check tests/attacks``: the frozen files, nothing valid, no traceback."""
    run = _cli(str(corpus.HERE))
    lines = run.stdout.splitlines()
    assert run.returncode in (1, 2) and "Traceback" not in run.stdout + run.stderr
    assert len(lines) == sum(a.stored for a in corpus.ATTACKS) + 1
    assert not [line for line in lines if line.startswith("valid")]
