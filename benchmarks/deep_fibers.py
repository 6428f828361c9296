"""Benchmark: deep-fiber certificates past the old expansion cap, and the deep-fiber theorem for all sizes.

Targets (issue 35, 2 cores, 4 GB): ``virtual-fiber`` certificates at widths 16,16,16 (ranks 8,8) and 8,8,8,8
(ranks 3,3,3) proved and checked in 60 s each, 32,32,32 (ranks 8,8) in 10 minutes. The checker used to expand
Identity T into polynomials of degree ``3^l - 1`` in ``d_0`` variables (490,314, 4,272,048 and 61,523,748
monomials: refused above 20,000); it now follows it layer by layer in factored form (docs/math.md Lemma 7.8.1)
and takes each orbit's dimension from Lemma 7.8.2. The prover and the checker each run in a fresh process (the
certificate goes through a file, as ``attngeo fiber --certificate`` and ``attngeo check`` would pass it), with
wall time and the peak resident memory of that forked process (what it shares with the parent, the interpreter
and its libraries, counts only as far as it touches it: a fresh ``attngeo check`` adds about 40 MB). Last, ``attngeo prove deep-fibers`` (docs/math.md
Theorem 7.8, every depth and width) is proved and checked the same way.

    python benchmarks/deep_fibers.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import tempfile
import time
from math import comb
from queue import Empty as queue_empty
from pathlib import Path

from attngeo import Architecture, check_certificate

#: (widths, ranks, goal in seconds for prove + check)
TARGETS = [((16, 16, 16), (8, 8), 60), ((8, 8, 8, 8), (3, 3, 3), 60), ((32, 32, 32), (8, 8), 600)]
#: Beyond the targets: the widest the checker reads (64) and a deep stack.
FURTHER = [((64, 64, 64), (32, 32), None), ((16,) * 9, (8,) * 8, None)]


def _prove(widths, ranks, path, queue) -> None:
    from attngeo.geometry.fibers.virtual import virtual_fiber

    start = time.perf_counter()
    fib = virtual_fiber(Architecture(widths, ranks, tokens=2), seed=0)
    Path(path).write_text(json.dumps(fib.to_json()))
    queue.put((time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10,
               len(fib.orbits), fib.generic))


def _prove_theorem(path, queue) -> None:
    from attngeo.theorems.allsizes import prove

    start = time.perf_counter()
    Path(path).write_text(json.dumps(prove("deep-fibers")))
    queue.put((time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10))


def _check(path, queue) -> None:
    start = time.perf_counter()
    claim = check_certificate(path).claim
    queue.put((time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10, claim))


def fresh(target, *args) -> tuple:
    """``target(*args, queue)`` in a fresh (forked) process; what it put in the queue."""
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=target, args=(*args, queue))
    proc.start()
    while True:  # a child that dies (memory, a C library's abort) puts nothing: say so instead of waiting
        try:
            out = queue.get(timeout=1)
            break
        except queue_empty:
            if not proc.is_alive():
                raise RuntimeError(f"{target.__name__}{args[:2]} ended with exit code {proc.exitcode}") from None
    proc.join()
    return out


def measure(widths, ranks, folder: str) -> dict:
    """Prove, then check, each in a fresh process: seconds and peak MiB of both, orbits, generic, claim."""
    path = str(Path(folder) / f"{'-'.join(map(str, widths))}.json")
    proved, proved_mib, orbits, generic = fresh(_prove, widths, ranks, path)
    checked, checked_mib, claim = fresh(_check, path)
    return {"prove": proved, "prove_mib": proved_mib, "check": checked, "check_mib": checked_mib, "orbits": orbits,
            "generic": generic, "claim": claim, "bytes": Path(path).stat().st_size}


def _short(sizes) -> str:
    """``16,16,16`` as it is; a long run of one size as ``16^9``."""
    return ",".join(map(str, sizes)) if len(sizes) <= 4 or len(set(sizes)) > 1 else f"{sizes[0]}^{len(sizes)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the three targets (not widths 64 and depth 8)")
    args = parser.parse_args()
    print(f"{'widths':<22}{'ranks':<16}{'old monomials':>14}{'prove':>9}{'peak':>9}{'check':>9}{'peak':>9}"
          f"{'file':>9}  orbits  goal")
    with tempfile.TemporaryDirectory() as folder:
        for widths, ranks, goal in TARGETS + ([] if args.quick else FURTHER):
            m = measure(widths, ranks, folder)
            d, l = widths[0], len(ranks)
            total = m["prove"] + m["check"]
            verdict = "" if goal is None else f"{total:.1f} s of {goal} s: {'met' if total <= goal else 'MISSED'}"
            old = comb(3**l - 1 + d - 1, d - 1)  # what the expanded Identity T would have had
            print(f"{_short(widths):<22}{_short(ranks):<16}" + (f"{old:>14,}" if old < 10**12 else f"{old:>14.1e}")
                  + f"{m['prove']:>8.2f}s{m['prove_mib']:>6.0f}MiB{m['check']:>8.2f}s{m['check_mib']:>6.0f}MiB"
                  f"{m['bytes'] / 2**10:>6.0f}KiB  {m['orbits']}{' generic' if m['generic'] else ''}  {verdict}")
        path = str(Path(folder) / "deep-fibers.json")
        proved, proved_mib = fresh(_prove_theorem, path)
        checked, checked_mib, claim = fresh(_check, path)
        print(f"\nattngeo prove deep-fibers (every depth and width): proved in {proved:.3f} s ({proved_mib:.0f} MiB), "
              f"checked in {checked:.3f} s ({checked_mib:.0f} MiB)\n  {claim}")


if __name__ == "__main__":
    main()
