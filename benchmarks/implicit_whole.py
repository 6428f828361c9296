"""Benchmark: the whole ideal at widths d,1, rank 1 (docs/math.md §7.9, ``attngeo implicit --whole``).

For each ``d`` a fresh forked worker writes Theorem 7.9's generators (``geometry/loci/rankone.py``: each proved
to vanish on ``M`` by composition) and checks the certificate with the independent checker (after a JSON round
trip, as from a file); its peak resident memory is its own (``ru_maxrss``). Printed: the generators by degree,
prover and checker seconds, peak MiB, the certificate's size. Elimination did not finish at ``d = 4`` in 900 s
(issue 35); degree by degree reaches ``d = 4`` to degree 4 in about 3 s and says nothing above it.

Timings are wall-clock on a shared machine: run it alone for figures to quote.

    python benchmarks/implicit_whole.py [--widths 4 5 6 7]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import resource
import time


def measure(d: int) -> dict:
    """In the calling process: prove and check at widths ``d,1``, rank 1; seconds, counts, claim, bytes, peak."""
    from attngeo import Architecture, check_certificate
    from attngeo.geometry.loci.rankone import rank_one_ideal

    start = time.perf_counter()
    ideal = rank_one_ideal(Architecture((d, 1), (1,), tokens=2))
    text = json.dumps(ideal.to_json())
    prover = time.perf_counter() - start
    start = time.perf_counter()
    claim = check_certificate(json.loads(text)).claim
    checker = time.perf_counter() - start
    return {"d": d, "counts": ideal.generators_by_degree, "prover": prover, "checker": checker, "claim": claim,
            "bytes": len(text), "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024}


def _job(d: int, queue) -> None:
    queue.put(measure(d))


def fresh(d: int) -> dict:
    """:func:`measure` in a fresh forked process (its peak memory its own; a Process, not a Pool, so that the
    script runs when loaded by path as tests/test_benchmarks.py loads it)."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    proc = context.Process(target=_job, args=(d, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[4, 5, 6], help="the widths d (default 4 5 6)")
    args = parser.parse_args()
    print(f"{'widths':>7} {'quadrics':>9} {'cubics':>8} {'prover s':>9} {'checker s':>10} {'peak MiB':>9} "
          f"{'certificate':>12}")
    for d in args.widths:
        m = fresh(d)
        print(f"{d:>5},1 {m['counts'].get('2', 0):>9,} {m['counts'].get('3', 0):>8,} {m['prover']:>9.2f} "
              f"{m['checker']:>10.2f} {m['peak']:>9,} {m['bytes'] / 1e6:>10.2f} MB", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
