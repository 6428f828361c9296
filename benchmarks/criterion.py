"""Benchmark: ``dim M`` of softmax layers by Theorem C (the criterion point) against the dense ball path.

Targets (issue [1/4], 2 cores): ``attngeo dim --softmax`` at full width without residual connections,
``d = 768`` with 12 heads of 64 and ``d = 1024`` with 16, a LLaMA-shaped grouped-query layer (width 512,
8 heads of 64, 2 key-value groups) and LLaMA-7B's shape (width 4096, 32 heads of 128, 8 groups, biases
off and on), each proved and checked with its time and peak memory measured in a fresh process.
Baseline, in the same process: the dense ball-arithmetic path (docs/softmax.md) on the sizes it can do,
against the criterion point on the same sizes (both certify the same value); at full width the dense
path is out of reach, and the float64 Jacobian alone would need ``8 P^2`` bytes, printed beside.

    python benchmarks/criterion.py [--quick]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.geometry.dimension import criterionpoint, dense

FULL = [
    ("BERT/GPT-2 width, 12 x 64", dict(widths=(768, 768), ranks=(64,), heads=12, value_ranks=64)),
    ("BERT-large width, 16 x 64", dict(widths=(1024, 1024), ranks=(64,), heads=16, value_ranks=64)),
    ("BERT-base as it computes (biases)", dict(widths=(768, 768), ranks=(64,), heads=12, value_ranks=64, biases=True)),
    ("LLaMA-shaped GQA, 512, 8 x 64, 2 kv", dict(widths=(512, 512), ranks=(64,), heads=8, kv_heads=2, value_ranks=64)),
    ("LLaMA-7B shape, 4096, 32 x 128, 8 kv", dict(widths=(4096, 4096), ranks=(128,), heads=32, kv_heads=8,
                                                 value_ranks=128)),
]
SMALL = [dict(widths=(4, 4), ranks=(2,), heads=2, value_ranks=2), dict(widths=(6, 6), ranks=(2,), heads=2, value_ranks=2),
         dict(widths=(6, 6), ranks=(1,), heads=4, kv_heads=2, value_ranks=1)]


def _arch(kw) -> Architecture:
    kw = dict(kw)
    return Architecture(kw.pop("widths"), kw.pop("ranks"), normalization="softmax", **kw)


def _job(kw, queue) -> None:
    arch = _arch(kw)
    start = time.perf_counter()
    cert = certify_dimension(arch, seed=0)
    proved = time.perf_counter() - start
    start = time.perf_counter()
    claim = check_certificate(cert.to_json()).claim
    checked = time.perf_counter() - start
    queue.put((cert.dimension, proved, checked, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10, claim))


def fresh(kw) -> tuple:
    """Prove and check in a fresh process: (dimension, prove s, check s, peak MiB, claim)."""
    queue = mp.get_context("fork").Queue()
    proc = mp.get_context("fork").Process(target=_job, args=(kw, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip LLaMA-7B's shape (about a minute)")
    args = parser.parse_args()
    print("full width, Theorem C at the selector point (a fresh process each)")
    print(f"{'layer':<40} {'P':>10} {'dim M':>10} {'prove':>8} {'check':>8} {'peak':>9} {'float64 J':>10}")
    for name, kw in FULL[:-1] if args.quick else FULL:
        arch = _arch(kw)
        dim, proved, checked, peak, _ = fresh(kw)
        P = arch.parameter_count
        print(f"{name:<40} {P:>10,} {dim:>10,} {proved:>7.2f}s {checked:>7.2f}s {peak:>7.0f}MiB "
              f"{8 * P * P / 2**40:>8.1f}TiB")
    print()
    print("small sizes, the dense ball path against the criterion point (same process, same value)")
    print(f"{'layer':<52} {'dim M':>6} {'ball path':>10} {'criterion':>10} {'ratio':>7}")
    for kw in SMALL:
        arch = _arch(kw)
        start = time.perf_counter()
        # inputs= forces the dense ball path; a tied layer's dense path is the random point (untied form)
        ball = (criterionpoint.certify_random_point(arch, seed=0) if arch.is_tied
                else dense.certify_dimension(arch, seed=0, inputs=4))
        t_ball = time.perf_counter() - start
        start = time.perf_counter()
        crit = criterionpoint.certify_criterion(arch, seed=0)
        t_crit = time.perf_counter() - start
        assert ball.dimension == crit.dimension, (ball, crit)
        print(f"{str(arch):<52} {crit.dimension:>6} {t_ball:>9.3f}s {t_crit:>9.3f}s {t_ball / t_crit:>6.0f}x")


if __name__ == "__main__":
    main()
