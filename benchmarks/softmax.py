"""Benchmark: certified softmax dimensions against a float64 Jacobian-rank baseline.

Cases: [HMK]'s experiment family for Conjecture 3.10: l = 2, t = 3, a = 2,
d_i = delta = 3..10, softmax attention, extended to delta = 32 (where the dense
ball path is estimated slower than a quarter second, the identity point of
attngeo/geometry/dimension/identitypoint.py takes over; --compare times both paths at the same sizes). Certified: attngeo.certify_dimension
(ball-arithmetic Jacobian minor + symmetry orbit), and optionally the checker's
replay. Baseline, in the same process, the way [HMK] checked the conjecture: a
float64 Jacobian at a Gaussian point on 250 Gaussian inputs (complex-step
derivatives of a numpy softmax network, accurate to rounding) and numpy's SVD
numerical rank. Prints times, ratios and every case where the float rank
differs from the certified dimension. Targets (2 cores): the paper's family
certified in under 60 s in total, and each case up to delta = 32 in under 60 s.

Floats here only measure the baseline; they decide nothing.

    python benchmarks/softmax.py [--check] [--max-delta 32] [--compare 12,16,20]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.geometry.dimension import dense


def _network(weights, X):
    """phi(X) for a batch X (n, d, t), complex-valued weights allowed (complex step)."""
    Y = X.astype(complex)
    for Q, K, V in weights:
        M = np.einsum("nit,ij,nju->ntu", Y, K.T @ Q, Y)  # Y^T K^T Q Y per input
        E = np.exp(M - M.real.max(axis=1, keepdims=True))  # shift by a real constant: same softmax
        S = E / E.sum(axis=1, keepdims=True)
        Y = np.einsum("ij,njt,ntu->niu", V, Y, S)
    return Y


def float_rank(arch: Architecture, n_inputs: int = 250, seed: int = 0, h: float = 1e-20) -> tuple[int, float]:
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    point = rng.standard_normal(arch.parameter_count)
    X = rng.standard_normal((n_inputs,) + arch.input_shape)
    blocks = list(arch.blocks())

    def weights(p):
        mats = {(b.layer, b.name): p[b.offset: b.offset + b.rows * b.cols].reshape(b.rows, b.cols) for b in blocks}
        return [(mats[(i, "Q")], mats[(i, "K")], mats[(i, "V")]) for i in range(1, arch.depth + 1)]

    cols = []
    for j in range(arch.parameter_count):
        p = point.astype(complex)
        p[j] += 1j * h
        cols.append((_network(weights(p), X).imag / h).ravel())
    J = np.array(cols).T
    return int(np.linalg.matrix_rank(J)), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="also time the checker's replay")
    parser.add_argument("--max-delta", type=int, default=32)
    parser.add_argument("--compare", default="12,16", help="deltas timed on both paths (dense ball, identity point)")
    args = parser.parse_args()
    print(f"{'delta':>5}{'P':>6}{'dim':>6}{'prec':>6}{'cert s':>9}{'check s':>9}{'float s':>9}{'ratio':>7}{'float rank':>11}")
    total, ftotal, wrong = 0.0, 0.0, []
    for delta in [*range(3, 11), *range(12, args.max_delta + 1, 4)]:
        if delta > args.max_delta:
            break
        arch = Architecture((delta,) * 3, (2, 2), 3, "softmax")
        start = time.perf_counter()
        cert = certify_dimension(arch, seed=delta)
        seconds = time.perf_counter() - start
        check = ""
        if args.check:
            start = time.perf_counter()
            check_certificate(cert.to_json())
            check = f"{time.perf_counter() - start:9.2f}"
        frank, fsec = float_rank(arch)
        total, ftotal = total + seconds, ftotal + fsec
        dim = cert.dimension if cert.certified else f"{cert.lower}..{cert.upper}"
        if frank != cert.lower or not cert.certified:
            wrong.append((delta, frank, dim))
        print(f"{delta:>5}{arch.parameter_count:>6}{dim!s:>6}{cert.lower_witness.get('precision', '-')!s:>6}"
              f"{seconds:>9.2f}{check or '        -':>9}{fsec:>9.2f}{seconds / fsec:>7.2f}{frank:>11}")
    print(f"all cases certified in {total:.1f} s; float baseline {ftotal:.1f} s; ratio {total / ftotal:.2f}")
    for delta in (int(x) for x in args.compare.split(",") if x):
        arch, times = Architecture((delta,) * 3, (2, 2), 3, "softmax"), {}
        for name, threshold in (("dense", 10**12), ("identity", 1)):
            dense.STRUCTURED_FROM = threshold
            start = time.perf_counter()
            dims = certify_dimension(arch, seed=delta).dimension
            times[name] = (time.perf_counter() - start, dims)
        dense.STRUCTURED_FROM = None
        print(f"delta = {delta}: dense ball path {times['dense'][0]:.2f} s, identity point {times['identity'][0]:.2f} s "
              f"(ratio {times['dense'][0] / times['identity'][0]:.0f}); same dimension: "
              f"{times['dense'][1] == times['identity'][1]}")
    print(f"cases where the float rank differs from the certified dimension: {len(wrong)}"
          + "".join(f"\n  delta = {d}: float {f}, certified {c}" for d, f, c in wrong))


if __name__ == "__main__":
    main()
