"""The benchmark scripts run at small sizes (their figures are printed by the scripts, never asserted here).

Each test runs the same functions a benchmark times, on a size that takes well under a second, and checks
what they compute (a dimension against Theorem C's count, the checker's verdict), so a benchmark cannot rot
unnoticed between the runs that measure it.
"""

import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_criterion_benchmark_proves_and_checks_in_a_fresh_process():
    bench = _load("criterion")
    kw = dict(widths=(16, 16), ranks=(4,), heads=4, kv_heads=2, value_ranks=4)
    dim, proved, checked, peak, claim = bench.fresh(kw)
    arch = bench._arch(kw)
    assert dim == arch.parameter_count - 2 * (4 * 4 + 4 * 4)  # Theorem C: P - g (a^2 + b^2)
    assert claim.startswith(f"dim M = {dim}") and proved >= 0 and checked >= 0 and peak > 0
