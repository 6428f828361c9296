"""Checking files in isolation: one worker process per file at a time, with a time and memory budget.

A hostile file may still find a way to make a checker slow or to abort the
interpreter (FLINT aborts on some inputs instead of raising). Each file is
therefore checked in a forked worker with an address-space limit; the parent
waits at most the time budget, kills a worker that overruns or dies, reports
that file as unusable, starts a fresh worker and goes on. One bad file never
stops a folder run, and never changes the verdict on another file.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import time
from multiprocessing.connection import wait

from ..exceptions import CannotVerify, CertificateFormatError, CertificateRejected
from .kernel import CheckResult, one_line, check_certificate
from .limits import DEFAULT_MEMORY_MB, DEFAULT_SECONDS

_OUTCOMES = {"rejected": CertificateRejected, "unusable": CertificateFormatError, "cannot": CannotVerify}


def _serve(conn, memory_mb: int) -> None:
    """Worker loop: check the paths it is sent, answer with (status, kind, message)."""
    os.setpgid(0, 0)  # its own process group: killing the worker also kills an msolve replay it started
    if memory_mb:
        limit = memory_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):  # a lower hard limit is already in force: keep it
            pass
    while True:
        try:
            path = conn.recv()
        except EOFError:
            return
        if path is None:
            return
        try:
            r = check_certificate(path)
            answer = ("valid", r.kind, r.claim)
        except CertificateRejected as exc:
            answer = ("rejected", "", str(exc))
        except CannotVerify as exc:
            answer = ("cannot", "", str(exc))
        except CertificateFormatError as exc:
            answer = ("unusable", "", str(exc))
        except MemoryError:
            answer = ("unusable", "", f"checking needs more than the memory budget of {memory_mb} MB")
        except RecursionError:
            answer = ("unusable", "", "the certificate nests too deeply to check")
        except Exception as exc:  # a checker bug must never pass as a verdict: refuse, and say so
            answer = ("rejected", "", f"the certificate does not verify (the checker met {type(exc).__name__} "
                                      "while reading it: a malformed field)")
        conn.send(answer)


class _Worker:
    def __init__(self, memory_mb: int):
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, memory_mb), daemon=True)
        self.proc.start()
        child.close()
        self.path, self.started = None, 0.0

    def submit(self, path: str) -> None:
        self.path, self.started = path, time.monotonic()
        self.conn.send(path)

    def stop(self, kill: bool = False) -> None:
        if kill:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.kill()
        else:
            try:
                self.conn.send(None)
            except OSError:
                pass
        self.proc.join(5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


def _outcome(path: str, answer) -> CheckResult | Exception:
    status, kind, message = answer
    if status == "valid":
        return CheckResult(path, kind, one_line(message))
    return _OUTCOMES[status](one_line(message))


def check_paths(paths: list[str], seconds: float = DEFAULT_SECONDS, memory_mb: int = DEFAULT_MEMORY_MB,
                workers: int = 1):
    """Yield ``(path, CheckResult or exception)`` for every path, each checked in isolation, in input order."""
    if seconds <= 0:
        raise ValueError("the time budget must be positive")
    pending = list(enumerate(paths))[::-1]
    results: dict[int, object] = {}
    pool = [_Worker(memory_mb) for _ in range(max(1, min(workers, len(paths))))]
    busy: dict[_Worker, int] = {}
    emitted = 0
    try:
        while pending or busy:
            for w in pool:
                if w not in busy and pending:
                    index, path = pending.pop()
                    w.submit(path)
                    busy[w] = index
            now = time.monotonic()
            timeout = max(0.0, min(w.started + seconds - now for w in busy))
            ready = wait([w.conn for w in busy], timeout)
            for w in list(busy):
                index = busy[w]
                if w.conn in ready:
                    try:
                        results[index] = _outcome(w.path, w.conn.recv())
                        del busy[w]
                        continue
                    except (EOFError, OSError):
                        code = w.proc.exitcode
                        w.proc.join(1)
                        code = w.proc.exitcode if code is None else code
                        results[index] = CertificateFormatError(
                            f"the checker's worker died on this file (exit {code}): unusable input")
                elif time.monotonic() - w.started >= seconds:
                    results[index] = CertificateFormatError(
                        f"not checked within the time budget of {seconds:g} s (raise it with --timeout)")
                else:
                    continue
                del busy[w]
                w.stop(kill=True)
                pool[pool.index(w)] = _Worker(memory_mb)
            while emitted in results:
                yield paths[emitted], results.pop(emitted)
                emitted += 1
    finally:
        for w in pool:
            w.stop(kill=bool(busy))


def check_file(path: str | os.PathLike, seconds: float = DEFAULT_SECONDS,
               memory_mb: int = DEFAULT_MEMORY_MB) -> CheckResult:
    """Check one certificate file in an isolated worker; raises like :func:`check_certificate`.

    Examples
    --------
    >>> import tempfile, os
    >>> from attngeo import Architecture, certify_dimension
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> _ = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).save(path)
    >>> check_file(path).claim
    'dim M = 6 for widths 2,2, ranks 1, t=2'
    """
    ((_, outcome),) = list(check_paths([os.fspath(path)], seconds, memory_mb))
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def certificate_files(folder: str | os.PathLike) -> list[str]:
    """Every ``*.json`` below ``folder`` (links to folders are not followed), sorted."""
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise CertificateFormatError(f"{root} is not a folder; give a folder of certificates or one file")
    found = []
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        found += [os.path.join(top, f) for f in files if f.endswith(".json")]
    return sorted(found)


def check_folder(folder: str | os.PathLike, seconds: float = DEFAULT_SECONDS, memory_mb: int = DEFAULT_MEMORY_MB,
                 workers: int | None = None) -> list[tuple[str, CheckResult | Exception]]:
    """Check every ``*.json`` below ``folder``, each in isolation; returns ``(path, result or error)`` pairs.

    Never aborts: a file that is rejected, unusable, too slow or fatal to its
    worker is reported as such and the run goes on.
    """
    files = certificate_files(folder)
    n = workers if workers is not None else min(2, os.cpu_count() or 1)
    return list(check_paths(files, seconds, memory_mb, n))
