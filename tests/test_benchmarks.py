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


def test_the_trained_layer_benchmark_inspects_and_checks_bound_certificates_at_toy_sizes(tmp_path):
    bench = _load("trained_layer")
    every, gqa = (next(t for t in bench.SMALL if t[0].startswith(name)) for name in ("bert-small x3", "llama GQA"))
    (tmp_path / "all").mkdir()
    m = bench.measure(every, str(tmp_path / "all"), seed=0)
    # Theorem C (docs/math.md §8.3): P - g (a^2 + b^2 + a + b) with biases; 2 groups of a = b = 8 at width 16
    assert (m["P"], m["layers"], m["local_rank"], m["regular"]) == (1088, 3, 1088 - 2 * (64 + 64 + 16), True)
    assert "3 valid, 0 rejected" in m["check"]["out"] and m["arch"]["biases"] is True
    (tmp_path / "gqa").mkdir()
    m = bench.measure(gqa, str(tmp_path / "gqa"), seed=1)
    assert m["arch"]["kv_heads"] == [2] and m["local_rank"] == m["P"] - 2 * (16 + 16)  # no biases: P - g (a^2 + b^2)
    assert "1 valid" in m["check"]["out"]


def test_the_whole_ideal_benchmark_proves_and_checks_in_a_fresh_process():
    bench = _load("implicit_whole")
    m = bench.fresh(3)
    # Theorem 7.9 at d = 3: C(3,2) C(6,2) = 45 quadrics, C(5,3) = 10 lifts of the one 3 x 3 minor
    assert m["counts"] == {"2": 45, "3": 10} and "45 quadrics and 10 cubics" in m["claim"] and m["peak"] > 0


def test_the_deep_fiber_benchmark_proves_and_checks_in_fresh_processes(tmp_path):
    bench = _load("deep_fibers")
    m = bench.measure((4, 4, 4), (2, 2), str(tmp_path))
    assert m["orbits"] == 1 and m["generic"] and m["claim"].startswith("fiber = 1 orbit(s)")
    assert m["prove"] >= 0 and m["check"] >= 0 and m["prove_mib"] > 0 and m["check_mib"] > 0
