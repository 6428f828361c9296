"""The memory budget holds: estimates bound what is measured, and going over is one line, never a crash."""

import resource
import signal

import pytest

from attngeo import Architecture, AttngeoError
from attngeo.geometry.dimension import dense as dense_module
from attngeo.ui.budget import MemoryBudgetError, TimeBudgetError, run_within
from attngeo.ui.cli import main


def test_run_within_returns_reraises_and_stops_at_the_budget():
    assert run_within(lambda: [1, 2, 3], 256, "a list") == [1, 2, 3]
    with pytest.raises(AttngeoError, match="ranks"):
        run_within(lambda: Architecture((2, 2), (0,)), 256, "an architecture")
    with pytest.raises(MemoryBudgetError, match="over the memory budget of 64 MiB"):
        run_within(lambda: bytearray(2**30), 64, "a gigabyte")


def _peak_growth(arch):
    """Peak resident memory the dense path adds, measured in a child process."""
    def measure():
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        dense_module.certify_dimension(arch, seed=0)
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    return run_within(measure, 4096, "a measurement")


@pytest.mark.parametrize("arch", [Architecture((24, 24), (6,)), Architecture((12, 12, 12, 12), (3, 3, 3))], ids=str)
def test_the_dense_estimate_bounds_the_measured_peak(arch, monkeypatch):
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 10**12)
    path, estimate = dense_module.estimate(arch)
    assert path == "dense" and _peak_growth(arch) <= estimate


def test_dim_stops_over_max_memory_in_one_line(capsys, monkeypatch):
    """An estimate that lets the work start must not let it run away: the address-space limit stops it."""
    monkeypatch.setattr(dense_module, "STRUCTURED_FROM", 10**12)
    monkeypatch.setattr(dense_module, "DENSE_BYTES_PER_P2", 1)  # a forged low estimate passes the pre-check
    monkeypatch.setattr(dense_module, "BASE_BYTES", 0)
    assert main(["dim", "--widths", "32,32", "--ranks", "8", "--max-memory", "40"]) == 2
    err = capsys.readouterr().err
    assert "went over the memory budget of 40 MiB (--max-memory)" in err and err.count("\n") == 1


# -- every way a budgeted child can end is one line (issue 34) ------------------------------------------------


def _flint_allocation():
    """What a deep fiber's equations did at widths 8,8,8,8: FLINT asks for gigabytes and aborts when refused."""
    from flint import fmpz_mat

    from attngeo import progress

    progress.phase("fiber equations", "258 unknowns, 24 inputs")
    return fmpz_mat(60_000, 60_000)


def test_flint_aborting_in_the_child_is_one_line_naming_the_phase_and_the_budget():
    with pytest.raises(MemoryBudgetError) as info:
        run_within(_flint_allocation, 300, "attngeo fiber --widths 8,8,8,8")
    text = str(info.value)
    assert "over the memory budget of 300 MiB (--max-memory)" in text and "SIGABRT" in text
    assert "'fiber equations (258 unknowns, 24 inputs)'" in text and "\n" not in text


def _sleeps_in_a_phase():
    import time

    from attngeo import progress

    progress.phase("elimination", "30 variables")
    time.sleep(60)


def test_a_child_past_its_time_is_killed_and_named(monkeypatch):
    """The parent's clock holds even when the work sits where no Python signal handler runs (here: it ignores
    them), a grace period after --timeout."""
    import time

    from attngeo.ui import budget

    monkeypatch.setattr(budget, "GRACE_SECONDS", 0.5)
    start = time.monotonic()
    with pytest.raises(TimeBudgetError, match="did not finish within --timeout 1 s .*'elimination \\(30 variables\\)'"):
        run_within(_sleeps_in_a_phase, 256, "attngeo implicit", seconds=1)
    assert time.monotonic() - start < 10


def _dies(signum):
    import os

    os.kill(os.getpid(), signum)


@pytest.mark.parametrize("signum,expected", [(signal.SIGKILL, MemoryBudgetError), (signal.SIGTERM, AttngeoError)])
def test_a_child_ended_by_a_signal_is_one_line(signum, expected):
    with pytest.raises(expected) as info:
        run_within(lambda: _dies(signum), 256, "attngeo singular")
    assert signal.Signals(signum).name in str(info.value) and "\n" not in str(info.value)


def test_what_the_child_prints_reaches_the_parents_stdout(capsys):
    """stdout may be any stream (a test's, a pipe's): the child's text comes back with its answer."""
    def work():
        print("dimension 6")
        return 0

    assert run_within(work, 256, "attngeo fiber") == 0
    assert capsys.readouterr().out == "dimension 6\n"
