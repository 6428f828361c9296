"""Progress phases of long runs on stderr: point, Jacobian, elimination, upper bound, writing.

Off by default, so library calls print nothing; the command line turns it on
(:func:`enable`) when stderr is a terminal or ``--progress`` is given. A phase
is one line ``attngeo: [elapsed] phase (detail)``; on a terminal each phase
overwrites the previous one and :func:`done` ends the line. No dependency.
"""

from __future__ import annotations

import sys
import time

_state: dict = {"stream": None, "start": 0.0, "tty": False, "shown": False, "context": ""}


def enable(stream=None) -> None:
    """Print phases to ``stream`` (default stderr) from now on; the clock starts here.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> enable(out); phase("Jacobian", "3 of 8 blocks"); done()
    >>> out.getvalue().startswith("attngeo: [0.0 s] Jacobian (3 of 8 blocks)")
    True
    """
    stream = sys.stderr if stream is None else stream
    _state.update(stream=stream, start=time.monotonic(), tty=bool(getattr(stream, "isatty", lambda: False)()),
                  shown=False)


def wanted(flag: bool, stream=None) -> bool:
    """Whether a command should show progress: ``--progress`` given, or ``stream`` (stderr) is a terminal.

    Examples
    --------
    >>> import io
    >>> wanted(False, io.StringIO()), wanted(True, io.StringIO())
    (False, True)
    """
    stream = sys.stderr if stream is None else stream
    return flag or bool(getattr(stream, "isatty", lambda: False)())


def phase(name: str, detail: str = "") -> None:
    """Announce a phase (nothing happens unless :func:`enable` was called).

    Examples
    --------
    >>> disable(); phase("point")      # off: silent
    """
    stream = _state["stream"]
    if stream is None:
        return
    line = (f"attngeo: [{time.monotonic() - _state['start']:.1f} s] {_state['context']}{name}"
            + (f" ({detail})" if detail else ""))
    if _state["tty"]:
        stream.write("\r\x1b[K" + line)
    else:
        stream.write(line + "\n")
    stream.flush()
    _state["shown"] = True


def bar(k: int, n: int, width: int = 20) -> str:
    """A text progress bar: ``k`` of ``n`` done.

    Examples
    --------
    >>> bar(3, 12)
    '[#####...............] 3/12'
    """
    filled = round(width * k / n) if n else width
    return "[" + "#" * filled + "." * (width - filled) + f"] {k}/{n}"


def context(text: str) -> None:
    """Put ``text`` before every phase from now on (``""`` to stop): one run of several, e.g. a bar of layers.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> enable(out); context("layer 2/3 "); phase("ranks"); context(""); done()
    >>> "] layer 2/3 ranks" in out.getvalue()
    True
    """
    _state["context"] = text


def done() -> None:
    """End the progress line (on a terminal) and turn progress off.

    Examples
    --------
    >>> done()      # harmless when nothing was shown
    """
    stream = _state["stream"]
    if stream is not None and _state["tty"] and _state["shown"]:
        stream.write("\n")
        stream.flush()
    disable()


def disable() -> None:
    """Turn progress off without ending a line (see :func:`done`).

    Examples
    --------
    >>> disable(); _state["stream"] is None
    True
    """
    _state.update(stream=None, shown=False, context="")


def size(n_bytes: int) -> str:
    """A memory size as a person reads it: GiB from 1 GiB up, MiB (rounded up) below.

    Examples
    --------
    >>> size(40 * 2**20), size(3 * 2**29), size(1)
    ('40 MiB', '1.5 GiB', '1 MiB')
    """
    return f"{n_bytes / 2**30:.1f} GiB" if n_bytes >= 2**30 else f"{-(-n_bytes // 2**20)} MiB"
