"""The memory budget holds: estimates bound what is measured, and going over is one line, never a crash."""

import resource

import pytest

from attngeo import Architecture, AttngeoError
from attngeo.geometry.dimension import dense as dense_module
from attngeo.ui.budget import MemoryBudgetError, run_within
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
