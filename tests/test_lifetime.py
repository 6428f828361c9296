"""No process outlives ``attngeo check`` or ``attngeo sweep``: SIGTERM, SIGINT (Ctrl-C) or SIGKILL, every child goes.

The commands run in a fresh session with a check (or a task) that never ends,
patched in before ``main`` runs; forked children inherit the patch, so the
real worker, pool and task machinery is what is tested. Processes are found by
reading ``/proc`` (no psutil): every descendant is recorded while the command
runs, and after the signal each must be gone (or a zombie about to be reaped).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from attngeo.check.lifetime import limit_cpu

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc, which this system has not (Linux only)")

#: the command, with a check or a task that spins for ever (fork children inherit the patch)
SPINNING = r"""
import sys
from attngeo.check import isolation
from attngeo.ui import sweep

def spin(*args, **kwargs):
    while True:
        pass

isolation.check_certificate = spin
sweep._compute = spin
from attngeo.ui.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _table() -> dict[int, tuple[int, str]]:
    """pid -> (parent pid, state) of every process."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        out[int(entry.name)] = (int(fields[1]), fields[0])
    return out


def _descendants(pid: int) -> set[int]:
    table = _table()
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, (parent, _) in table.items() if parent in frontier} - found
        found |= frontier
    return found


def _alive(pids) -> set[int]:
    table = _table()
    return {p for p in pids if p in table and table[p][1] not in ("Z", "X")}


class _Command:
    """The spinning command in a fresh session; its output goes to files (an orphan holding a pipe open
    would otherwise keep the test waiting)."""

    def __init__(self, args: list[str], folder: Path):
        self.out, self.err = folder / "stdout", folder / "stderr"
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-c", SPINNING, *args], stdout=out, stderr=err,
                                         start_new_session=True, stdin=subprocess.DEVNULL)
        self.pid, self.seen = self.proc.pid, set()
        _STARTED.append(self)

    def finish(self, seconds: float = 30) -> tuple[int, str, str]:
        """Exit code, stdout and stderr once the command has ended."""
        code = self.proc.wait(timeout=seconds)
        return code, self.out.read_text(), self.err.read_text()


_STARTED: list[_Command] = []


@pytest.fixture(autouse=True)
def _no_spinning_leftovers():
    """Whatever a failing test leaves behind is killed here (a shared machine)."""
    yield
    while _STARTED:
        command = _STARTED.pop()
        for pid in _alive(command.seen | _descendants(command.pid) | {command.pid}):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        command.proc.wait()


def _start(args: list[str]) -> _Command:
    return _Command(args, Path(tempfile.mkdtemp()))


def _wait_for(proc: _Command, count: int, seconds: float = 60) -> set[int]:
    """The command's descendants, once there are at least ``count`` of them."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = _alive(_descendants(proc.pid))
        if len(found) >= count:
            time.sleep(0.5)  # let the children reach their spinning code
            proc.seen = _alive(_descendants(proc.pid))
            return proc.seen
        time.sleep(0.05)
    _assert_all_gone(_descendants(proc.pid) | {proc.pid}, 0)
    pytest.fail(f"the command did not start {count} children in {seconds:g} s")


def _assert_all_gone(pids: set[int], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while _alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _alive(pids)
    for pid in left:  # ours: do not leave them spinning on a shared machine
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes {sorted(left)} outlived the command that started them"


@pytest.fixture
def certificate(tmp_path) -> Path:
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"format": "attngeo-certificate"}))
    return path


def _sweep_args(tmp_path) -> list[str]:
    return ["sweep", "--widths", "2", "--out", str(tmp_path / "s"), "--workers", "2", "--timeout", "300"]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_check_worker_dies_with_its_command(certificate, how):
    proc = _start(["check", str(certificate), "--timeout", "300"])
    children = _wait_for(proc, 1)
    os.kill(proc.pid, getattr(signal, how))
    proc.finish()
    _assert_all_gone(children)


def test_ctrl_c_stops_check_in_one_line(certificate):
    proc = _start(["check", str(certificate), "--timeout", "300"])
    children = _wait_for(proc, 1)
    os.killpg(proc.pid, signal.SIGINT)  # a terminal sends it to the whole foreground group
    code, out, err = proc.finish()
    _assert_all_gone(children)
    assert code == 130 and err.strip() == "attngeo: interrupted", err


def test_sigterm_stops_check_in_one_line(certificate):
    proc = _start(["check", str(certificate), "--timeout", "300"])
    _wait_for(proc, 1)
    os.kill(proc.pid, signal.SIGTERM)
    code, out, err = proc.finish()
    assert code == 143 and err.strip() == "attngeo: terminated", err


def test_a_worker_whose_command_is_stopped_keeps_its_own_cpu_budget(certificate):
    """SIGSTOP the command: its wall clock no longer runs, the worker's CPU limit still does."""
    proc = _start(["check", str(certificate), "--timeout", "2"])
    children = _wait_for(proc, 1)
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        _assert_all_gone(children, seconds=20)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    code, out, err = proc.finish(60)
    assert code == 2 and "Traceback" not in err, err
    assert "budget" in out, out


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_sweep_workers_and_tasks_die_with_the_sweep(tmp_path, how):
    proc = _start(_sweep_args(tmp_path))
    children = _wait_for(proc, 3)  # two pool workers (one idle: a single task) and the task's process
    os.kill(proc.pid, getattr(signal, how))
    proc.finish()
    _assert_all_gone(children)


def test_ctrl_c_stops_a_sweep_in_one_line(tmp_path):
    proc = _start(_sweep_args(tmp_path))
    children = _wait_for(proc, 3)
    os.killpg(proc.pid, signal.SIGINT)
    code, out, err = proc.finish()
    _assert_all_gone(children)
    assert code == 130, (out, err)
    assert "Traceback" not in err and err.strip().splitlines()[-1] == "attngeo: interrupted", err
    assert len(err.strip().splitlines()) <= 2, err  # a progress line at most, then the one line


def test_limit_cpu_stops_a_spinning_process():
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        limit_cpu(0.5)
        while True:
            pass
    start = time.monotonic()
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
    assert time.monotonic() - start < 30


def _sleeping_engine(folder: Path) -> Path:
    """A stand-in for msolve that never answers (``ATTNGEO_MSOLVE`` points at it)."""
    path = folder / "msolve"
    path.write_text("#!/bin/sh\nexec sleep 300\n")
    path.chmod(0o755)
    return path


def _engine_children(proc: _Command, seconds: float = 60) -> set[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = {p for p in _alive(_descendants(proc.pid)) if _command_line(p).startswith(b"sleep")}
        if found:
            proc.seen |= found
            return found
        time.sleep(0.05)
    pytest.fail("the engine was never started")


def _command_line(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def test_an_engine_run_dies_with_its_command(tmp_path):
    """msolve started by a prover (``attngeo implicit --engine msolve``) goes when the command is killed."""
    engine = _sleeping_engine(tmp_path)
    with open(tmp_path / "out", "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "attngeo", "implicit", "--widths", "2,1", "--ranks", "1",
                                 "--engine", "msolve"], stdout=out, stderr=out, start_new_session=True,
                                env=dict(os.environ, ATTNGEO_MSOLVE=str(engine)), stdin=subprocess.DEVNULL)
    command = _Command.__new__(_Command)
    command.proc, command.pid, command.seen = proc, proc.pid, set()
    _STARTED.append(command)
    engines = _engine_children(command)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _assert_all_gone(engines)


@pytest.mark.msolve
def test_a_replay_dies_with_the_check_command(tmp_path):
    """The checker's msolve replay (in the worker's own process group) goes when ``attngeo check`` is killed."""
    from attngeo import Architecture
    from attngeo.geometry.loci.implicit import implicit_equations

    cert = implicit_equations(Architecture((2, 1), (1,), tokens=2))
    assert cert.to_json()["generates"] == "elimination"  # so the checker replays it
    path = cert.save(tmp_path / "implicit.json")
    engine = _sleeping_engine(tmp_path)
    with open(tmp_path / "out", "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "attngeo", "check", str(path), "--timeout", "300"],
                                stdout=out, stderr=out, start_new_session=True,
                                env=dict(os.environ, ATTNGEO_MSOLVE=str(engine)), stdin=subprocess.DEVNULL)
    command = _Command.__new__(_Command)
    command.proc, command.pid, command.seen = proc, proc.pid, set()
    _STARTED.append(command)
    engines = _engine_children(command)
    workers = _alive(_descendants(proc.pid))
    command.seen |= workers
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    _assert_all_gone(engines | workers)


def _spawn_and_spin(record: Path):
    """A task that starts a grandchild set to die with nobody (as a careless engine call would), then spins."""

    def task(*args, **kwargs):
        child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
        record.write_text(str(child.pid))
        while True:
            pass

    return task


def _recorded(record: Path, seconds: float = 60) -> int:
    deadline = time.monotonic() + seconds
    while True:
        if record.exists() and record.read_text():
            return int(record.read_text())
        if time.monotonic() >= deadline:
            pytest.fail("the task never started its grandchild")
        time.sleep(0.05)


def test_a_timed_out_task_takes_its_whole_process_group(tmp_path, monkeypatch):
    """run_task kills the task's group on its deadline: a grandchild it started (msolve, say) does not survive."""
    from attngeo import Architecture
    from attngeo.ui import sweep

    record = tmp_path / "grandchild"
    monkeypatch.setattr(sweep, "_compute", _spawn_and_spin(record))
    done = sweep.run_task(Architecture((2, 2), (1,)).to_dict(), "dimension", 0, 3, 2048)
    assert done["row"]["error"] == "over the time budget of 3 s"
    _assert_all_gone({_recorded(record, 0)})


SPAWNING = r"""
import subprocess, sys
from attngeo.ui import sweep

RECORD = sys.argv.pop(1)

def spawn(*args, **kwargs):
    child = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL)
    open(RECORD, "w").write(str(child.pid))
    while True:
        pass

sweep._compute = spawn
from attngeo.ui.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("how", ["SIGTERM", "SIGINT"])
def test_a_stopped_sweep_takes_its_tasks_process_groups(tmp_path, how):
    """SIGTERM or Ctrl-C to ``attngeo sweep``: the pool workers kill their tasks' groups, grandchildren included."""
    record = tmp_path / "grandchild"
    with open(tmp_path / "out", "w") as out:
        proc = subprocess.Popen([sys.executable, "-c", SPAWNING, str(record), *_sweep_args(tmp_path)],
                                stdout=out, stderr=out, start_new_session=True, stdin=subprocess.DEVNULL)
    command = _Command.__new__(_Command)
    command.proc, command.pid, command.seen = proc, proc.pid, set()
    _STARTED.append(command)
    grandchild = _recorded(record)
    children = _wait_for(command, 4) | {grandchild}  # two pool workers, the task, its grandchild
    if how == "SIGINT":
        os.killpg(proc.pid, signal.SIGINT)  # the terminal's foreground group: the command and its pool
    else:
        os.kill(proc.pid, signal.SIGTERM)
    code = proc.wait(timeout=30)
    _assert_all_gone(children)
    err = (tmp_path / "out").read_text()
    assert code == (130 if how == "SIGINT" else 143) and "Traceback" not in err, err
