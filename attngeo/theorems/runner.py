"""Running the proof scripts of ``attngeo certify``: independent processes, several at once.

Each statement's script is its own process (a crash in one cannot take the
others down, and each can be run by hand); at most ``jobs`` run at a time, and a
statement starts only when those it rests on (``registry.graph``) have ended.
The outcomes come back in the order asked for, whatever order they finish in.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..check.lifetime import subprocess_guard
from .registry import get as statement


def _default_jobs() -> int:
    import os

    return max(1, min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1))


#: Scripts run at once by default: the machine's cores, at most two (each script is one process; the scripts
#: measured at one or two cores of work each, docs/engines.md).
JOBS = _default_jobs()


def run_statements(names: list[str], folder: Path, out: Path, finished, jobs: int = JOBS) -> list[tuple]:
    """Run ``names``' scripts from ``folder`` into ``out/<script>``: ``(statement, exit code, seconds, log)`` each.

    ``finished(statement, code, seconds, log, started, done)`` is called as each ends (for progress lines);
    a missing script ends at once with exit code 2 and an empty log. The log is the script's standard output,
    then its standard error.

    Examples
    --------
    >>> import io, pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     proofs, out = pathlib.Path(tmp, "proofs"), pathlib.Path(tmp, "out")
    ...     proofs.mkdir()
    ...     _ = (proofs / "boundary_points.py").write_text("print('hello')")
    ...     [(s.name, code, log.strip()) for s, code, _, log in
    ...      run_statements(["boundary-points"], proofs, out, lambda *a: None)]
    [('boundary-points', 0, 'hello')]
    """
    wanted = set(names)
    waiting = list(names)
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
                    done[name] = (s, 2, 0.0, "")
                    finished(s, 2, 0.0, "", len(done), len(names))
                    continue
                stdout, stderr = Path(logs, f"{s.script}.out").open("w"), Path(logs, f"{s.script}.err").open("w")
                proc = subprocess.Popen([sys.executable, str(script), "--out", str(out / s.script)],
                                        stdout=stdout, stderr=stderr, text=True,
                                        preexec_fn=subprocess_guard())  # dies with certify
                running[name] = (s, proc, time.perf_counter(), stdout, stderr)
            for name, (s, proc, start, stdout, stderr) in list(running.items()):
                if proc.poll() is None:
                    continue
                seconds = time.perf_counter() - start
                stdout.close()
                stderr.close()
                text, err = Path(stdout.name).read_text(), Path(stderr.name).read_text()
                log = text + (("\n" + err) if err else "")
                del running[name]
                done[name] = (s, proc.returncode, seconds, log)
                finished(s, proc.returncode, seconds, log, len(done), len(names))
            if running:
                time.sleep(0.05)
    return [done[name] for name in names]
