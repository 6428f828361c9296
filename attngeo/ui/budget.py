"""Budgets that hold: one command's work in a forked child under an address-space limit and a clock.

An estimate decides before the work whether to start it; the limits decide while it runs. The child gets
``RLIMIT_AS`` = what the process already maps plus the budget (a numpy or Python allocation beyond it raises
``MemoryError``; a C library that aborts instead, like FLINT, ends the child), a CPU limit of its own and the
parent's wall clock (``--timeout``), and dies with the command. It names each phase it enters to the parent
(:func:`attngeo.progress.listen`), which prints them when progress is shown and turns every way of going over
into one line naming the budget, the phase and, where known, the size asked for: never a traceback, never the
kernel's OOM killer without a word. What the work prints reaches the command's output with its answer; FLINT's
own message (``Unable to allocate memory (N).``) goes to a file the parent reads instead.
"""

from __future__ import annotations

import faulthandler
import io
import os
import pickle
import re
import resource
import select
import signal
import struct
import sys
import tempfile
import time

from .. import progress
from ..check.lifetime import die_with_parent, limit_cpu
from ..exceptions import AttngeoError, InvalidInputError

#: Seconds the parent waits past ``--timeout`` for the child's own deadline (a Python exception with the
#: phase in it) before it kills the child itself (stuck inside a C library).
GRACE_SECONDS = 5.0


class MemoryBudgetError(InvalidInputError):
    """A computation went over its memory budget (``--max-memory``) and was stopped.

    Examples
    --------
    >>> raise MemoryBudgetError("attngeo dim went over --max-memory 100 MiB")
    Traceback (most recent call last):
    ...
    attngeo.ui.budget.MemoryBudgetError: attngeo dim went over --max-memory 100 MiB
    """


class TimeBudgetError(InvalidInputError):
    """A computation ran past its time budget (``--timeout``) and was stopped.

    Examples
    --------
    >>> raise TimeBudgetError("attngeo implicit did not finish within --timeout 1 s")
    Traceback (most recent call last):
    ...
    attngeo.ui.budget.TimeBudgetError: attngeo implicit did not finish within --timeout 1 s
    """


def mapped_bytes() -> int:
    """The address space this process maps now (``VmSize``), or 0 where ``/proc`` is absent.

    Examples
    --------
    >>> mapped_bytes() > 0
    True
    """
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # pragma: no cover - not Linux
        return 0


def _send(fd: int, message: tuple) -> None:
    """One framed message to the parent: its length, then the pickle (phases, then one answer)."""
    try:
        payload = pickle.dumps(message)
    except Exception as exc:  # pragma: no cover - an unpicklable answer
        payload = pickle.dumps(("crash", RuntimeError(f"unpicklable result: {exc}")))
    data = struct.pack("<Q", len(payload)) + payload
    while data:
        data = data[os.write(fd, data):]


def _child(write_fd: int, fn, limit: int, seconds: float | None, parent: int, capture: int) -> None:
    die_with_parent(parent)
    faulthandler.disable()  # a fatal signal here (FLINT's abort) is the parent's one line, not a dumped traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the command's: it kills this child and says so
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # a C library's last words (FLINT prints "Unable to allocate memory (N)." on stdout) go to the parent's file;
    # what the work prints goes to the parent with its answer (the parent's stdout may be any stream)
    err = os.dup(2)
    os.dup2(capture, 1)
    os.dup2(capture, 2)
    sys.stdout, sys.stderr = io.StringIO(), os.fdopen(err, "w", buffering=1)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)  # an inherited ulimit -v stays the ceiling
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - the limit could not be set: run unlimited
        pass
    if seconds is not None:
        limit_cpu(seconds + 2 * GRACE_SECONDS)  # its own clock, should the parent be stopped
    progress.disable()  # the parent shows the phases this child names
    progress.listen(lambda name, detail: _send(write_fd, ("phase", name, detail)))
    try:
        answer = ("done", fn())
    except MemoryError as exc:
        answer = ("memory", str(exc))
    except AttngeoError as exc:
        answer = ("error", exc)
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is ignored here; a raise of it by the work itself
        answer = ("interrupted", None)
    except Exception as exc:  # a bug: the parent re-raises it as it is
        answer = ("crash", exc)
    progress.listen(None)
    _send(write_fd, answer + (sys.stdout.getvalue(),))


def _in_process(fn, limit: int, over) -> object:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    last = ["", ""]
    try:
        resource.setrlimit(resource.RLIMIT_AS, (min(limit, hard) if hard != resource.RLIM_INFINITY else limit, hard))
    except (ValueError, OSError):  # pragma: no cover
        return fn()
    progress.listen(lambda name, detail: last.__setitem__(slice(None), [name, detail]))
    try:
        return fn()
    except MemoryError as exc:
        raise MemoryBudgetError(over(_phase(*last), _asked(str(exc)))) from None
    finally:
        progress.listen(None)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _phase(name: str, detail: str) -> str:
    return f"{name} ({detail})" if name and detail else name


_FLINT = re.compile(r"Unable to allocate memory \((\d+)\)")
_NUMPY = re.compile(r"Unable to allocate ([\d.]+ \w+) for an array")


def _asked(text: str) -> str:
    """What the allocation that failed asked for, from FLINT's or numpy's words (empty when they give none).

    Examples
    --------
    >>> _asked("    Unable to allocate memory (4829514240)."), _asked("Unable to allocate 466. GiB for an array")
    ('4.5 GiB', '466. GiB')
    >>> _asked("Unable to allocate memory (8)."), _asked("")
    ('', '')
    """
    found = [int(n) for n in _FLINT.findall(text) if int(n) >= 2**20]  # a few bytes: FLINT failing to report
    if found:
        return progress.size(found[-1])
    found = _NUMPY.findall(text)
    return found[-1] if found else ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:  # pragma: no cover - a real-time signal
        return f"signal {number}"


def run_within(fn, memory_mb: int, what: str, seconds: float | None = None):
    """``fn()`` run in a forked child whose address space may grow by ``memory_mb`` MiB; its result.

    ``seconds`` bounds the child's wall-clock time too (``--timeout``): past it, and :data:`GRACE_SECONDS`
    more for the child's own deadline to speak, the child is killed. Where ``stderr`` is not a file (captured
    in memory) the memory limit is set in this process for the call instead (``MemoryError`` only).

    Raises
    ------
    MemoryBudgetError
        The child ran out of its budget (``MemoryError``, or an allocation that aborts, like FLINT's) or was
        killed (the kernel's OOM killer): one line naming the budget, the phase and what was asked for.
    TimeBudgetError
        The child ran past ``seconds`` and was killed.
    AttngeoError
        Whatever ``fn`` raised of the project's own errors, unchanged.

    Examples
    --------
    >>> run_within(lambda: sum(range(10)), 512, "a sum")
    45
    >>> import numpy as np
    >>> run_within(lambda: np.ones(2**31).sum(), 256, "16 GiB of ones")
    Traceback (most recent call last):
    ...
    attngeo.ui.budget.MemoryBudgetError: 16 GiB of ones went over the memory budget of 256 MiB (--max-memory) and was stopped (an allocation of 16.0 GiB failed); raise --max-memory or choose a smaller architecture
    """
    limit = mapped_bytes() + memory_mb * 2**20

    def over(phase: str = "", asked: str = "", how: str = "") -> str:
        where = f" while in its phase '{phase}'" if phase else ""
        size = f" (an allocation of {asked} failed)" if asked else ""
        return (f"{what} went over the memory budget of {memory_mb} MiB (--max-memory){where} and was stopped"
                f"{size}{how}; raise --max-memory or choose a smaller architecture")

    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr captured in memory (a test): a child's output would be
        return _in_process(fn, limit, over)        # lost, so the limit holds here, for MemoryError only
    capture = tempfile.TemporaryFile()
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # none may reach the child before it ignores it
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
            os.close(read_fd)
            try:
                _child(write_fd, fn, limit, seconds, parent, capture.fileno())
            finally:
                os._exit(0)
    finally:
        if os.getpid() == parent:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
    os.close(write_fd)
    buffer, answer, phase = b"", None, ("", "")
    deadline = None if seconds is None else time.monotonic() + seconds + GRACE_SECONDS
    late = False
    try:
        with os.fdopen(read_fd, "rb") as fh:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and (left <= 0 or not select.select([fh], [], [], left)[0]):
                    late = True
                    break
                chunk = os.read(fh.fileno(), 1 << 20)
                if not chunk:
                    break
                buffer += chunk
                while len(buffer) >= 8 and len(buffer) >= 8 + struct.unpack("<Q", buffer[:8])[0]:
                    size = struct.unpack("<Q", buffer[:8])[0]
                    message, buffer = pickle.loads(buffer[8:8 + size]), buffer[8 + size:]
                    if message[0] == "phase":
                        phase = message[1:]
                        progress.phase(*phase)
                    else:
                        answer = message
        if late:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    except KeyboardInterrupt:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        raise
    if late:
        where = f" (it was in its phase '{_phase(*phase)}')" if phase[0] else ""
        raise TimeBudgetError(f"{what} did not finish within --timeout {seconds:g} s{where} and was stopped; raise "
                              "--timeout or choose a smaller architecture")
    if answer is None:  # ended without an answer: a signal (an allocation that aborts, or a kill)
        capture.seek(0, os.SEEK_END)
        capture.seek(max(0, capture.tell() - 4096))
        said = capture.read().decode(errors="replace")
        if os.WIFSIGNALED(status):
            name = _signal_name(os.WTERMSIG(status))
            if os.WTERMSIG(status) == signal.SIGXCPU:
                raise TimeBudgetError(f"{what} used up its CPU time ({seconds:g} s, --timeout) and was stopped; raise "
                                      "--timeout or choose a smaller architecture")
            how = {"SIGABRT": f" ({name}: the library allocating it aborted)",
                   "SIGKILL": f" ({name}: killed, by the kernel's out-of-memory killer or by hand)"}.get(name)
            if how is not None:  # the two ways an allocation ends a process
                raise MemoryBudgetError(over(_phase(*phase), _asked(said), how))
            ended = f"was ended by {name}"
        else:
            ended = f"ended with exit status {os.WEXITSTATUS(status)} and no answer"
        where = f" in its phase '{_phase(*phase)}'" if phase[0] else ""
        raise InvalidInputError(f"{what} {ended}{where}; run it again, or report it if it repeats")
    kind, value, printed = answer
    if printed:
        sys.stdout.write(printed)
        sys.stdout.flush()
    if kind == "done":
        return value
    if kind == "memory":
        raise MemoryBudgetError(over(_phase(*phase), _asked(value or "")))
    if kind == "interrupted":  # pragma: no cover
        raise KeyboardInterrupt
    raise value
