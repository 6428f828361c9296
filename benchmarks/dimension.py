"""Benchmark: certified dimension against the float64 SVD baseline of [HMK].

Cases: (a) the paper's experiment family l = 2, t = 3, a = 2, d_i = delta = 3..10;
(b) l = 4, d_i = 32, a = 4, t = 3 (5,120 parameters). Baseline, in the same
process: a float64 Jacobian (the same reverse-mode code on float arrays, at a
Gaussian point on 250 Gaussian inputs, as in [HMK]) and numpy's SVD numerical
rank. Prints times, ratios, peak memory, and every case where the float rank
differs from the certified dimension. Targets (2 cores): (a) under 2 s in total,
(b) under 60 s and 4 GB.

Floats here only measure the baseline; they decide nothing.

    python benchmarks/dimension.py [--skip-large] [--check]
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.model.jacobian import jacobian
from attngeo.model.network import ExactOps


def float_rank(arch: Architecture, n_inputs: int = 250, seed: int = 0) -> tuple[int, float]:
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    point = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((n_inputs,) + arch.input_shape)
    J = jacobian(ExactOps(), arch, point, X)
    rank = int(np.linalg.matrix_rank(J))
    return rank, time.perf_counter() - start


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def run(arch: Architecture, check: bool, baseline_inputs: int) -> dict:
    cert = certify_dimension(arch, seed=0)
    row = {"arch": arch, "cert": cert, "seconds": cert.seconds}
    if check:
        start = time.perf_counter()
        check_certificate(cert.to_json())
        row["check"] = time.perf_counter() - start
    row["float_rank"], row["float_seconds"] = float_rank(arch, baseline_inputs)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true", help="only the delta = 3..10 family")
    parser.add_argument("--check", action="store_true", help="also time the independent checker")
    args = parser.parse_args()
    family = [Architecture((d,) * 3, (2, 2), 3) for d in range(3, 11)]
    rows = [run(a, args.check, 250) for a in family]
    if not args.skip_large:
        # 250 inputs x 96 outputs x 5,120 parameters is a 24,000 x 5,120 float
        # matrix (1 GB); the baseline uses 40 inputs (3,840 rows), enough rows
        # for the 1,980 expected.
        rows.append(run(Architecture((32,) * 5, (4,) * 4, 3), args.check, 40))
    print(f"{'architecture':<42}{'P':>6}{'dim':>6}{'cert s':>9}{'float s':>9}{'ratio':>7}{'float rank':>11}")
    for r in rows:
        c = r["cert"]
        dim = c.dimension if c.certified else f"{c.lower}..{c.upper}"
        ratio = r["seconds"] / r["float_seconds"]
        flag = "" if r["float_rank"] == c.dimension else "  <- float rank wrong"
        print(f"{str(r['arch']):<42}{c.parameters:>6}{dim!s:>6}{r['seconds']:>9.3f}{r['float_seconds']:>9.3f}{ratio:>7.2f}{r['float_rank']:>11}{flag}")
        if "check" in r:
            print(f"{'':<42}checker: {r['check']:.2f} s")
    fam = rows[:8]
    print(f"(a) delta = 3..10: certified total {sum(r['seconds'] for r in fam):.2f} s (target < 2 s), "
          f"float total {sum(r['float_seconds'] for r in fam):.2f} s")
    if not args.skip_large:
        print(f"(b) l = 4, d = 32: certified {rows[-1]['seconds']:.1f} s (target < 60 s)")
    print(f"peak memory of this process: {peak_gb():.2f} GB (target < 4 GB)")
    wrong = [r for r in rows if r["float_rank"] != r["cert"].dimension]
    print(f"cases where the float rank differs from the certified dimension: {len(wrong)}")


if __name__ == "__main__":
    main()
