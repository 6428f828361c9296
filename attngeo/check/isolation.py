"""Checking files in isolation: one worker process per file at a time, with a time and memory budget.

A hostile file may still find a way to make a checker slow or to abort the
interpreter (FLINT aborts on some inputs instead of raising). Each file is
therefore checked in a forked worker with an address-space limit; the parent
waits at most the time budget, kills a worker that overruns or dies, reports
that file as unusable, starts a fresh worker and goes on. One bad file never
stops a folder run, and never changes the verdict on another file.

A worker never outlives the command (:mod:`attngeo.check.lifetime`): the kernel
kills it when its parent exits, and its own CPU limit, renewed per file at the
time budget, stops it should the parent be stopped. It ignores Ctrl-C, which
is the command's to handle (one line, no traceback per worker).
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
from .lifetime import die_with_parent, limit_cpu
from .limits import DEFAULT_MEMORY_MB, DEFAULT_SECONDS

_OUTCOMES = {"rejected": CertificateRejected, "unusable": CertificateFormatError, "cannot": CannotVerify}


def _serve(conn, memory_mb: int, seconds: float, parent: int) -> None:
    """Worker loop: check the paths it is sent, answer with (status, kind, message).

    It dies with the command that started it (``parent``), and each file gets
    its own CPU budget: a stopped or killed parent cannot leave it running.
    """
    die_with_parent(parent)
    os.setpgid(0, 0)  # its own process group: killing the worker also kills an msolve replay it started
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's to handle, not a traceback here
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # blocked by the parent across the fork
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the command's handler, inherited by the fork
    if memory_mb:
        limit = memory_mb * 1024 * 1024
        try:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ValueError, OSError):  # a lower hard limit is already in force: keep it
            pass
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        path, weights = job
        limit_cpu(seconds + 1)  # past it the kernel stops this worker (SIGXCPU), as the parent's clock would
        try:
            r = check_certificate(path, weights)
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
    def __init__(self, memory_mb: int, seconds: float):
        ctx = multiprocessing.get_context("fork")
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, memory_mb, seconds, os.getpid()), daemon=True)
        # Ctrl-C is blocked across the fork: a worker must not meet it before it ignores it (under load that
        # window is long enough for a terminal's SIGINT to the group); the command's own is delivered after
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            self.proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        child.close()
        self.path, self.started = None, 0.0

    def submit(self, path: str, weights: str | None = None) -> None:
        self.path, self.started = path, time.monotonic()
        self.conn.send((path, weights))

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
                workers: int = 1, weights: str | os.PathLike | None = None):
    """Yield ``(path, CheckResult or exception)`` for every path, each checked in isolation, in input order.

    Parameters
    ----------
    paths : list of str
        Certificate files.
    seconds : float
        Time budget of one file; a worker that overruns is killed and the file is unusable.
    memory_mb : int
        Address-space limit of a worker (0: none).
    workers : int
        Worker processes run at once (at most one per path).
    weights : str or os.PathLike, optional
        The checkpoint every (local-rank) certificate is bound to (:func:`attngeo.check_certificate`).

    Yields
    ------
    tuple
        ``(path, CheckResult)`` for a valid file, else ``(path, exception)``
        with the exception as an object: ``CertificateRejected``,
        ``CertificateFormatError`` or ``CannotVerify``.

    Raises
    ------
    ValueError
        ``seconds`` is not positive.

    Examples
    --------
    >>> import json, os, tempfile
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check import check_paths
    >>> folder = tempfile.mkdtemp()
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0)
    >>> honest = str(cert.save(os.path.join(folder, "honest.json")))
    >>> forged = os.path.join(folder, "forged.json")
    >>> with open(forged, "w") as f:
    ...     json.dump({**cert.to_json(), "lower": 7}, f)
    >>> names = {honest: "honest", forged: "forged", folder: "a folder"}
    >>> for path, outcome in check_paths([honest, forged, folder]):
    ...     print(names[path], type(outcome).__name__)
    honest CheckResult
    forged CertificateRejected
    a folder CertificateFormatError
    """
    if seconds <= 0:
        raise ValueError("the time budget must be positive")
    pending = list(enumerate(paths))[::-1]
    results: dict[int, object] = {}
    pool = [_Worker(memory_mb, seconds) for _ in range(max(1, min(workers, len(paths))))]
    busy: dict[_Worker, int] = {}
    emitted = 0
    try:
        while pending or busy:
            for w in pool:
                if w not in busy and pending:
                    index, path = pending.pop()
                    w.submit(path, None if weights is None else os.fspath(weights))
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
                            f"not checked within the CPU budget of {seconds:g} s (raise it with --timeout)"
                            if code == -signal.SIGXCPU else
                            f"the checker's worker died on this file (exit {code}): unusable input")
                elif time.monotonic() - w.started >= seconds:
                    results[index] = CertificateFormatError(
                        f"not checked within the time budget of {seconds:g} s (raise it with --timeout)")
                else:
                    continue
                del busy[w]
                w.stop(kill=True)
                pool[pool.index(w)] = _Worker(memory_mb, seconds)
            while emitted in results:
                yield paths[emitted], results.pop(emitted)
                emitted += 1
    finally:
        for w in pool:
            w.stop(kill=bool(busy))


def check_file(path: str | os.PathLike, seconds: float = DEFAULT_SECONDS,
               memory_mb: int = DEFAULT_MEMORY_MB, weights: str | os.PathLike | None = None) -> CheckResult:
    """Check one certificate file in an isolated worker; raises like :func:`check_certificate`.

    Parameters
    ----------
    path : str or os.PathLike
        The certificate file.
    seconds : float
        Time budget (900 s by default); a slower check is unusable input.
    memory_mb : int
        Address-space limit of the worker (8 GB by default).
    weights : str or os.PathLike, optional
        The checkpoint a local-rank certificate is bound to; its point is read from it (only the tensors named).

    Returns
    -------
    CheckResult
        The verified claim.

    Raises
    ------
    CertificateRejected
        The claim does not verify (exit 1).
    CertificateFormatError
        Unusable input: unreadable, malformed, over the time or memory budget,
        or fatal to the worker (exit 2).
    CannotVerify
        This machine cannot judge it (exit 2).

    Examples
    --------
    >>> import tempfile, os
    >>> from attngeo import Architecture, certify_dimension
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> _ = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).save(path)
    >>> check_file(path).claim
    'dim M = 6 for widths 2,2, ranks 1, t=2'
    >>> check_file(os.path.dirname(path))     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: ... is not a regular file; give the path of a certificate file
    """
    ((_, outcome),) = list(check_paths([os.fspath(path)], seconds, memory_mb, weights=weights))
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


def certificate_files(folder: str | os.PathLike) -> list[str]:
    """Every ``*.json`` below ``folder`` (links to folders are not followed), sorted.

    Raises
    ------
    CertificateFormatError
        ``folder`` is not a folder.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.check.isolation import certificate_files
    >>> folder = tempfile.mkdtemp()
    >>> os.makedirs(os.path.join(folder, "deep"))
    >>> for name in ("b.json", "notes.txt", os.path.join("deep", "a.json")):
    ...     open(os.path.join(folder, name), "w").close()
    >>> [os.path.relpath(p, folder) for p in certificate_files(folder)]
    ['b.json', 'deep/a.json']
    >>> certificate_files(os.path.join(folder, "b.json"))     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: .../b.json is not a folder; give a folder of certificates or one file
    """
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise CertificateFormatError(f"{root} is not a folder; give a folder of certificates or one file")
    found = []
    for top, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        found += [os.path.join(top, f) for f in files if f.endswith(".json")]
    return sorted(found)


def check_folder(folder: str | os.PathLike, seconds: float = DEFAULT_SECONDS, memory_mb: int = DEFAULT_MEMORY_MB,
                 workers: int | None = None, weights: str | os.PathLike | None = None
                 ) -> list[tuple[str, CheckResult | Exception]]:
    """Check every ``*.json`` below ``folder``, each in isolation; returns ``(path, result or error)`` pairs.

    Never aborts: a file that is rejected, unusable, too slow or fatal to its
    worker is reported as such and the run goes on.

    Parameters
    ----------
    folder : str or os.PathLike
        Searched recursively (:func:`certificate_files`).
    seconds, memory_mb
        The budget of each file, as for :func:`check_file`.
    workers : int, optional
        Files checked at once (default: up to 2, the number of CPUs).
    weights : str or os.PathLike, optional
        The checkpoint the certificates are bound to (``attngeo inspect --layer all`` writes such a folder).

    Returns
    -------
    list of tuple
        ``(path, CheckResult or exception)`` in sorted path order.

    Examples
    --------
    A folder with an honest certificate, a forged one and a file that is not JSON:

    >>> import json, os, tempfile
    >>> from attngeo import Architecture, certify_dimension, check_folder
    >>> folder = tempfile.mkdtemp()
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0)
    >>> _ = cert.save(os.path.join(folder, "a-honest.json"))
    >>> with open(os.path.join(folder, "b-forged.json"), "w") as f:
    ...     json.dump({**cert.to_json(), "upper": 5, "dimension": None, "certified": False}, f)
    >>> with open(os.path.join(folder, "c-broken.json"), "w") as f:
    ...     _ = f.write("{not json")
    >>> for path, outcome in check_folder(folder, workers=1):
    ...     print(os.path.basename(path), type(outcome).__name__)
    a-honest.json CheckResult
    b-forged.json CertificateRejected
    c-broken.json CertificateFormatError
    """
    files = certificate_files(folder)
    n = workers if workers is not None else min(2, os.cpu_count() or 1)
    return list(check_paths(files, seconds, memory_mb, n, weights))
