"""Running the proof scripts of ``attngeo certify``: independent processes, several at once.

Each statement's script is its own process (a crash in one cannot take the
others down, and each can be run by hand); at most ``jobs`` run at a time, and a
statement starts only when those it rests on (``registry.graph``) have ended.
Among the statements ready to start, the one with the most statements resting on
it goes first (it heads the longest chains: replaying the scripts' measured CPU
times on two cores, ``attngeo certify`` then takes 50 s instead of 57 s in registry order).
The outcomes come back in the order asked for, whatever order they finish in.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..check.lifetime import subprocess_guard
from .registry import get as statement, graph


def _default_jobs() -> int:
    import os

    return max(1, min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


#: Scripts run at once by default: the machine's cores, at most two (each script is one process; the scripts
#: measured at one or two cores of work each, docs/engines.md).
JOBS = _default_jobs()


def start_order(names: list[str]) -> list[str]:
    """``names``, those with the most statements (among ``names``) resting on them first; ties keep their order.

    Examples
    --------
    >>> from attngeo.theorems.runner import start_order
    >>> start_order(["boundary-points", "single-layer-fibers", "single-layer-dimension"])
    ['single-layer-dimension', 'single-layer-fibers', 'boundary-points']
    """
    import networkx as nx

    g = graph().subgraph(names)
    return sorted(names, key=lambda n: -len(nx.descendants(g, n)))


def _reaped(proc: subprocess.Popen) -> float | None:
    """The CPU seconds (user + system, its own waited-for children included) of ``proc`` if it has ended, else None.

    ``os.wait4`` gives each child's own usage: with several scripts at once, a ``getrusage(RUSAGE_CHILDREN)``
    delta would mix them.
    """
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid == 0:
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def run_statements(names: list[str], folder: Path, out: Path, finished, jobs: int = JOBS,
                   options: tuple = ()) -> list[tuple]:
    """Run ``names``' scripts from ``folder`` into ``out/<script>``: ``(statement, exit code, seconds, log, cpu)`` each.

    ``finished(statement, code, seconds, log, started, done, cpu)`` is called as each ends (for progress lines);
    ``seconds`` is wall time, ``cpu`` the script's CPU seconds (user + system, its subprocesses included).
    A missing script ends at once with exit code 2 and an empty log. The log is the script's standard output,
    then its standard error. ``options`` are passed to every script after ``--out`` (e.g. ``--full``).

    Examples
    --------
    >>> import io, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     proofs, out = pathlib.Path(tmp, "proofs"), pathlib.Path(tmp, "out")
    ...     proofs.mkdir()
    ...     _ = (proofs / "boundary_points.py").write_text("import sys; print('hello', sys.argv[3:])")
    ...     [(s.name, code, log.strip(), cpu >= 0) for s, code, _, log, cpu in
    ...      run_statements(["boundary-points"], proofs, out, lambda *a: None, options=("--full",))]
    [('boundary-points', 0, "hello ['--full']", True)]
    """
    wanted = set(names)
    waiting = start_order(names)
    done: dict[str, tuple] = {}
    running: dict[str, tuple] = {}
    with tempfile.TemporaryDirectory() as logs:
        while waiting or running:
            for name in list(waiting):
                if len(running) >= max(1, jobs):
                    break
                s = statement(name)
                if any(dep in wanted and dep not in done for dep in s.depends):
                    continue  # what it rests on is still running (or waiting)
                waiting.remove(name)
                script = folder / f"{s.script}.py"
                if not script.exists():
                    done[name] = (s, 2, 0.0, "", 0.0)
                    finished(s, 2, 0.0, "", len(done), len(names), 0.0)
                    continue
                stdout, stderr = Path(logs, f"{s.script}.out").open("w"), Path(logs, f"{s.script}.err").open("w")
                proc = subprocess.Popen([sys.executable, str(script), "--out", str(out / s.script), *options],
                                        stdout=stdout, stderr=stderr, text=True,
                                        preexec_fn=subprocess_guard())  # dies with certify
                running[name] = (s, proc, time.perf_counter(), stdout, stderr)
            for name, (s, proc, start, stdout, stderr) in list(running.items()):
                cpu = _reaped(proc)
                if cpu is None:
                    continue
                seconds = time.perf_counter() - start
                stdout.close()
                stderr.close()
                text, err = Path(stdout.name).read_text(), Path(stderr.name).read_text()
                log = text + (("\n" + err) if err else "")
                del running[name]
                done[name] = (s, proc.returncode, seconds, log, cpu)
                finished(s, proc.returncode, seconds, log, len(done), len(names), cpu)
            if running:
                time.sleep(0.05)
    return [done[name] for name in names]
