"""Benchmark: the elimination behind ``attngeo implicit``, engine against engine, in one run.

Cases: widths 2,1 and 3,1 with a = 1, 2 (``--large`` adds 3,1 a = 3 and 2,3 a = 2).
For each case and each installed engine (msolve, Singular) the same system —
``c = F(A, V)`` plus the ``(a+1)``-minors of ``A``, eliminating ``(A, V)`` — is
eliminated in a fresh forked worker, so each engine's peak memory is its own
(``RUSAGE_CHILDREN`` of that worker); the bases are compared exactly. Then the
steps attngeo adds on top: the minimal generators (exact linear algebra by
degree and torus weight) and the whole ``implicit_equations`` call with its
proofs, and the ``attngeo implicit --widths 3,1 --ranks 2`` target (under 30 s
and 2 GB, the whole process tree).

Interpolation (degree-by-degree kernels mod p of the evaluation matrices, then
lifting) has no column: it needs a degree bound for the generators, which only
the Gröbner basis supplies, and Singular already eliminates the target case in
seconds; the ``HF mod p`` column is the part of it attngeo does run — the
Hilbert function of ``M`` by evaluation ranks mod p through the top degree of
``G`` — for scale.

    python benchmarks/implicit_engines.py [--large] [--timeout 600]
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import subprocess
import sys
import time

from attngeo import Architecture
from attngeo.exact.engine import EngineFailed, find_msolve, find_singular, groebner
from attngeo.geometry.loci.implicit import (_multidegree, elimination_size, elimination_system, evaluation_rank,
                                      implicit_equations)


def _eliminate(args) -> tuple:
    """In a worker: one engine's elimination; (basis strings, seconds, peak MiB of the engine) or an error."""
    widths, rank, engine, timeout = args
    arch = Architecture(widths, (rank,), tokens=2)
    start = time.perf_counter()
    try:
        basis = groebner(*elimination_system(arch), engine, timeout, eliminate=elimination_size(arch))
    except EngineFailed as exc:
        return None, time.perf_counter() - start, None, str(exc)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
    return basis.strings(), time.perf_counter() - start, peak, None


def _isolated(widths, rank, engine, timeout):
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(1) as pool:
        return pool.apply(_eliminate, ((widths, rank, engine, timeout),))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also 3,1 a = 3 and 2,3 a = 2")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per engine run")
    args = parser.parse_args()
    engines = [e for e, found in (("msolve", find_msolve()), ("singular", find_singular())) if found]
    if not engines:
        print("neither msolve nor Singular is installed: nothing to compare")
        return 1
    cases = [((2, 1), 1), ((2, 1), 2), ((3, 1), 1), ((3, 1), 2)] + ([((3, 1), 3), ((2, 3), 2)] if args.large else [])
    head = f"{'case':<10}{'|G|':>5}" + "".join(f"{e + ' s':>12}{e + ' MiB':>14}" for e in engines)
    head += f"{'ratio':>8}{'mingens s':>11}{'min by degree':>22}{'HF mod p s':>12}{'implicit s':>12}"
    print(head)
    for widths, rank in cases:
        runs = {e: _isolated(widths, rank, e, args.timeout) for e in engines}
        bases = {tuple(r[0]) for r in runs.values() if r[0] is not None}
        if len(bases) > 1:
            print(f"{widths} a={rank}: the engines returned different bases")
            return 1
        arch = Architecture(widths, (rank,), tokens=2)
        start = time.perf_counter()
        eq = implicit_equations(arch)
        whole = time.perf_counter() - start
        start = time.perf_counter()
        eq.ideal.minimal_generators(_multidegree(*widths))
        mingens = time.perf_counter() - start
        start = time.perf_counter()
        rng = random.Random(0)
        for k in range(1, max(eq.ideal.degrees(), default=0) + 1):
            evaluation_rank(arch, k, rng)
        hf = time.perf_counter() - start
        row = f"{','.join(map(str, widths)) + f' a={rank}':<10}{len(eq.equations):>5}"
        for e in engines:
            _, seconds, peak, error = runs[e]
            row += f"{seconds:>12.2f}{peak if peak is not None else 'failed':>14}"
        times = [runs[e][1] for e in engines if runs[e][0] is not None]
        ratio = f"{runs['msolve'][1] / runs['singular'][1]:.1f}x" if len(times) == 2 else "-"
        mins = ", ".join(f"{n}@{k}" for k, n in eq.minimal_generators_by_degree.items())
        row += f"{ratio:>8}{mingens:>11.2f}{mins:>22}{hf:>12.2f}{whole:>12.2f}"
        print(row, flush=True)
    print("ratio = msolve time / Singular time; n@k = n minimal generators of degree k")
    start = time.perf_counter()
    run = subprocess.run(["/usr/bin/time", "-f", "%M", sys.executable, "-m", "attngeo", "implicit",
                          "--widths", "3,1", "--ranks", "2", "--json"], capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "?"
    peak_mib = int(peak) // 1024 if peak.isdigit() else peak
    verdict = "met" if run.returncode == 0 and seconds < 30 and isinstance(peak_mib, int) and peak_mib < 2048 else "MISSED"
    print(f"attngeo implicit --widths 3,1 --ranks 2: {seconds:.1f} s, peak {peak_mib} MiB "
          f"(largest process of the tree); target under 30 s and 2 GB: {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
