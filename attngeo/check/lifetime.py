"""Child processes that cannot outlive the command that started them, nor run past their own CPU budget.

A worker that checks a hostile file, a sweep task, an msolve or Singular run:
each is a child of an ``attngeo`` command. If that command is stopped by
``SIGTERM`` or ``SIGKILL`` it runs no clean-up code at all, so the children
must see to it themselves: the kernel sends them ``SIGKILL`` when their parent
dies (Linux ``PR_SET_PDEATHSIG``, set through ``prctl``), and each carries a
CPU limit (``RLIMIT_CPU``) of its own, so even a child whose parent is alive
but stopped cannot compute for ever. Core dumps are off in these children (the
kernel's answer to a CPU overrun would otherwise write one).

Used by :mod:`attngeo.check.isolation` (the checker's workers and their msolve
replays), :mod:`attngeo.exact.engine` (msolve and Singular) and
:mod:`attngeo.ui.sweep` (pool workers and task processes). On systems without
``prctl`` the parent-death signal is skipped; the CPU limit still holds.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import os
import resource
import signal
import sys

_PR_SET_PDEATHSIG = 1


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):  # pragma: no cover - no libc to load
        return None


def die_with_parent(parent: int | None = None) -> bool:
    """Ask the kernel to ``SIGKILL`` this process when its parent exits; exit now if it already has.

    Call it first thing in a forked child (or as a subprocess's ``preexec_fn``).
    ``parent`` is the pid the child was forked from (default: the current
    parent): if it differs from ``os.getppid()`` after the request, the parent
    died in between and the child exits at once.

    Returns
    -------
    bool
        Whether the kernel accepted the request (False where ``prctl`` is missing).

    Examples
    --------
    >>> import os, time
    >>> r, w = os.pipe()
    >>> pid = os.fork()
    >>> if pid == 0:                                   # the child forks a grandchild that asks to die with it
    ...     grand = os.fork()
    ...     if grand == 0:
    ...         die_with_parent(os.getppid())
    ...         time.sleep(60)
    ...         os._exit(0)
    ...     os.write(w, str(grand).encode())
    ...     os._exit(0)                                # the child exits: the grandchild must go too
    >>> os.close(w)
    >>> grand = int(os.read(r, 32))
    >>> _ = os.waitpid(pid, 0)
    >>> for _ in range(100):                           # reparented and killed: gone or a zombie
    ...     try:
    ...         state = open(f"/proc/{grand}/stat").read().rsplit(")", 1)[1].split()[0]
    ...     except OSError:
    ...         state = "gone"
    ...     if state in ("gone", "Z"):
    ...         break
    ...     time.sleep(0.05)
    >>> state in ("gone", "Z")
    True
    """
    expected = os.getppid() if parent is None else parent
    prctl = _prctl()
    ok = prctl is not None and prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    if os.getppid() != expected:  # the parent died before the request took effect
        os._exit(1)
    return ok


def cpu_seconds() -> float:
    """CPU time (user + system) this process has used so far.

    >>> cpu_seconds() >= 0
    True
    """
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def limit_cpu(seconds: float) -> None:
    """Allow this process about ``seconds`` more CPU time: the kernel stops it (``SIGXCPU``) after that.

    The soft limit is set from the time used so far, so a worker that serves
    many files can renew it before each one; the hard limit is left alone
    (lowering it could not be undone). Core dumps are switched off first.

    Examples
    --------
    >>> import os, resource
    >>> pid = os.fork()
    >>> if pid == 0:
    ...     limit_cpu(0.2)
    ...     while True:                                # spins until the kernel stops it
    ...         pass
    >>> _, status = os.waitpid(pid, 0)
    >>> os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
    True
    """
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):  # pragma: no cover - a platform without the limit
        pass
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(cpu_seconds() + seconds)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except (ValueError, OSError):  # pragma: no cover - refused by the platform: the parent's wall clock still holds
        pass


def subprocess_guard(memory_bytes: int | None = None, cpu: float | None = None):
    """A ``preexec_fn`` for an engine subprocess: it dies with its parent, and has the given memory and CPU caps.

    The memory cap never exceeds an inherited hard limit (``ulimit -v``): raising it is refused, and the
    engine would not start.

    Examples
    --------
    >>> import subprocess, sys
    >>> run = subprocess.run([sys.executable, "-c", "print('ok')"], preexec_fn=subprocess_guard(2**30, 30),
    ...                      capture_output=True, text=True)
    >>> run.stdout
    'ok\\n'
    """
    parent = os.getpid()

    def apply():
        die_with_parent(parent)
        if memory_bytes is not None:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = memory_bytes if hard == resource.RLIM_INFINITY else min(memory_bytes, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        if cpu is not None:
            limit_cpu(cpu)

    return apply
