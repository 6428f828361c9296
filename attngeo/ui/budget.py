"""A memory budget that holds: one computation in a forked child under an address-space limit.

An estimate decides before the work whether to start it; the limit decides while it runs. The child gets
``RLIMIT_AS`` = what the process already maps plus the budget (a numpy or Python allocation beyond it raises
``MemoryError``; a C library that aborts instead, like FLINT, ends the child), and the parent turns every way
of going over into one line naming the budget: never a traceback, never the kernel's OOM killer.
"""

from __future__ import annotations

import os
import pickle
import resource
import signal
import sys

from ..exceptions import AttngeoError, InvalidInputError


class MemoryBudgetError(InvalidInputError):
    """A computation went over its memory budget (``--max-memory``) and was stopped.

    Examples
    --------
    >>> raise MemoryBudgetError("attngeo dim went over --max-memory 100 MiB")
    Traceback (most recent call last):
    ...
    attngeo.ui.budget.MemoryBudgetError: attngeo dim went over --max-memory 100 MiB
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


def _child(write_fd: int, fn, limit: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)  # an inherited ulimit -v stays the ceiling
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):  # pragma: no cover - the limit could not be set: run unlimited
        pass
    try:
        answer = ("done", fn())
    except MemoryError:
        answer = ("memory", None)
    except AttngeoError as exc:
        answer = ("error", exc)
    except KeyboardInterrupt:
        answer = ("interrupted", None)
    except Exception as exc:  # a bug: the parent re-raises it as it is
        answer = ("crash", exc)
    try:
        payload = pickle.dumps(answer)
    except Exception as exc:  # pragma: no cover - an unpicklable answer
        payload = pickle.dumps(("crash", RuntimeError(f"unpicklable result: {exc}")))
    with os.fdopen(write_fd, "wb") as fh:
        fh.write(payload)


def _in_process(fn, limit: int, over: str):
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (min(limit, hard) if hard != resource.RLIM_INFINITY else limit, hard))
    except (ValueError, OSError):  # pragma: no cover
        return fn()
    try:
        return fn()
    except MemoryError:
        raise MemoryBudgetError(over) from None
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def run_within(fn, memory_mb: int, what: str):
    """``fn()`` run in a forked child whose address space may grow by ``memory_mb`` MiB; its result.

    Where ``stderr`` is not a file (captured in memory) the limit is set in this process for the call instead.

    Raises
    ------
    MemoryBudgetError
        The child ran out of its budget (``MemoryError``) or was ended by a signal (an allocation that aborts).
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
    attngeo.ui.budget.MemoryBudgetError: 16 GiB of ones went over the memory budget of 256 MiB (--max-memory) and was stopped; raise --max-memory or choose a smaller architecture
    """
    limit = mapped_bytes() + memory_mb * 2**20
    over = (f"{what} went over the memory budget of {memory_mb} MiB (--max-memory) and was stopped; "
            "raise --max-memory or choose a smaller architecture")
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # stderr captured in memory (a test): a child's output would be
        return _in_process(fn, limit, over)        # lost, so the limit holds here, for MemoryError only
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
        os.close(read_fd)
        try:
            _child(write_fd, fn, limit)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks = []
    try:
        with os.fdopen(read_fd, "rb") as fh:
            while chunk := fh.read(1 << 20):
                chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
    except KeyboardInterrupt:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        raise
    if not chunks:  # ended without an answer: a signal (an allocation that aborts, or a kill)
        how = f"signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status) else f"exit status {os.WEXITSTATUS(status)}"
        raise MemoryBudgetError(f"{over} ({how})")
    kind, value = pickle.loads(b"".join(chunks))
    if kind == "done":
        return value
    if kind == "memory":
        raise MemoryBudgetError(over)
    if kind == "interrupted":
        raise KeyboardInterrupt
    raise value
