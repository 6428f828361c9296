"""Benchmark: single-layer weight recovery and deep fiber certificates.

(a) Recovery of a random single-layer function with d = d' = a = 50 from its
Gram tensor (target: under 1 s on 2 cores), beside two baselines run in the same
process: the independent checker re-deriving the same fiber by polynomial
division (exact, different algorithm), and a float64 least-squares fit of
(A, V) to the tensor by alternating least squares (what one would do without
exact algebra; it decides nothing here and its error is printed).
(b) Recovery from an exact black box for d = 4, 6, 8 (evaluations and time).
(c) Each deep fiber case of proofs/deep_fibers.py, timed per engine that can
take it: msolve, and python-flint / sympy where the system is small enough.
(d) The targets of issue 21 (deep fibers at real sizes): the virtual-weight path
(prove + independent check) beside the Gröbner path on the same point, the
elimination bounded as a whole in a forked child (``--groebner-timeout``,
default 120 s, and 4 GB of address space; "> 120 s" or "> 4 GB" when it does
not finish: at 6,6,6 building the 88-unknown equations exhausts the memory). Times are wall-clock on a shared machine: compare the ratios
printed in the same run, not the absolute figures.

    python benchmarks/fibers.py [--full] [--targets-only] [--groebner-timeout S]
"""

from __future__ import annotations

import argparse
import os
import pickle
import random
import resource
import select
import signal
import sys
import time
from pathlib import Path

import numpy as np

from attngeo import Architecture, check_certificate, evaluate
from attngeo.exact.engine import EngineFailed, EngineUnavailable, available
from attngeo.geometry.fibers.deep import deep_fiber
from attngeo.geometry.fibers.virtual import virtual_fiber
from attngeo.geometry.fibers.layer import fiber, recover_weights, special_point

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "proofs"))
from deep_fibers import LARGER_CASES, SMALL_CASES  # noqa: E402 - the proof script's own case lists
from attngeo.model.layerfunction import LayerFunction


def als_baseline(f: LayerFunction, iters: int = 30, seed: int = 0) -> tuple[float, float]:
    """Float64 alternating least squares for S = sym(V (x) A); returns (seconds, relative error)."""
    start = time.perf_counter()
    S = f.numerators.astype(float) / f.denominator
    dd, d = f.shape
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((d, d))
    for _ in range(iters):
        # fix A, solve for V: S[k,m,n,p] = (V_km A_np + V_kn A_mp)/2 is linear in V_k.
        M = 0.5 * (np.einsum("mi,np->mnpi", np.eye(d), A) + np.einsum("ni,mp->mnpi", np.eye(d), A)).reshape(-1, d)
        V = np.linalg.lstsq(M, S.reshape(dd, -1).T, rcond=None)[0].T
        N = 0.5 * (np.einsum("km,nj,pq->kmnpjq", V, np.eye(d), np.eye(d))
                   + np.einsum("kn,mj,pq->kmnpjq", V, np.eye(d), np.eye(d))).reshape(-1, d * d)
        A = np.linalg.lstsq(N, S.ravel(), rcond=None)[0].reshape(d, d)
    fit = 0.5 * (np.einsum("km,np->kmnp", V, A) + np.einsum("kn,mp->kmnp", V, A))
    return time.perf_counter() - start, float(np.linalg.norm(fit - S) / np.linalg.norm(S))


def recovery(d: int) -> None:
    arch = Architecture((d, d), (d,), tokens=2)
    w = special_point(arch, "random", random.Random(d))
    start = time.perf_counter()
    f = LayerFunction.from_weights(arch, w)
    build = time.perf_counter() - start
    start = time.perf_counter()
    rec = recover_weights(arch, f)
    seconds = time.perf_counter() - start
    assert LayerFunction.from_weights(arch, rec.as_lists()) == f
    start = time.perf_counter()
    check_certificate(fiber(arch, w).to_json())
    check = time.perf_counter() - start
    print(f"(a) d = d' = a = {d}: tensor {f.numerators.size:,} entries built in {build:.2f} s; "
          f"recovery {seconds:.3f} s (target < 1 s); independent checker (polynomial division) {check:.2f} s "
          f"= {check / seconds:.1f}x")
    if d <= 12:
        als, err = als_baseline(f)
        print(f"    float64 ALS baseline: {als:.2f} s, relative residual {err:.1e} (exact recovery: 0)")


def black_box(d: int) -> None:
    arch = Architecture((d, d), (2,), tokens=2)
    w = special_point(arch, "random", random.Random(d))
    calls = 0

    def f(X):
        nonlocal calls
        calls += 1
        return evaluate(arch, w, X)

    start = time.perf_counter()
    recover_weights(arch, f)
    print(f"(b) black box d = {d}: {calls} evaluations (probe + unisolvent check), {time.perf_counter() - start:.2f} s")


def deep(cases, timeout: float) -> None:
    print("(c) deep fibers, seconds per engine (- : beyond that engine)")
    engines = available()
    print(f"    {'widths':<8}{'ranks':<6}{'vars':>5}" + "".join(f"{e:>10}" for e in engines) + "  verdict (msolve)")
    for widths, ranks in cases:
        arch = Architecture(widths, ranks, tokens=2)
        times, verdict = [], ""
        for engine in engines:
            try:
                fib = deep_fiber(arch, seed=2025, engine=engine, timeout=timeout)
                times.append(f"{fib.seconds:>10.2f}")
                verdict = verdict or fib.verdict.split(":")[0]
                nvars = len(fib.basis.variables)
            except (EngineFailed, EngineUnavailable):
                times.append(f"{'-':>10}")
        print(f"    {','.join(map(str, widths)):<8}{','.join(map(str, ranks)):<6}{nvars if verdict else '?':>5}"
              + "".join(times) + f"  {verdict}")


#: Issue 21's targets: (widths, ranks, goal in seconds).
TARGETS = [((3, 3, 3), (2, 2), 10), ((4, 4, 4), (3, 3), 60), ((3, 3, 3, 3), (2, 2, 2), 60), ((6, 6, 6), (3, 3), 300)]
#: Smaller sizes where the Gröbner path finishes: the ratio between the two methods.
BOTH_REACH = [((2, 2, 2), (2, 2)), ((2, 2, 3), (2, 2)), ((2, 2, 1), (2, 1))]


def bounded(run, seconds: float, memory_mb: int = 4096):
    """``run()`` in a forked child, in its own process group, with a wall-clock and address-space budget.

    Returns ``(value, None)``, or ``(None, why)`` when it did not finish: ``"time"``, ``"memory"`` when
    the child died first (FLINT aborts on a failed allocation), or the name of the exception it raised. The whole group is killed afterwards, so
    an msolve the child started cannot outlive the budget.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read_fd)
        try:
            os.setpgid(0, 0)
            null = os.open(os.devnull, os.O_WRONLY)  # FLINT's abort message (on stdout) is the parent's to word
            os.dup2(null, 1)
            os.dup2(null, 2)
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
            answer = ("ok", run())
        except BaseException as exc:  # an engine failure, a MemoryError: said, not raised
            answer = ("error", type(exc).__name__)
        try:
            with os.fdopen(write_fd, "wb") as fh:
                pickle.dump(answer, fh)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + seconds
    with os.fdopen(read_fd, "rb") as fh:
        while (left := deadline - time.monotonic()) > 0 and select.select([fh], [], [], left)[0]:
            chunk = os.read(fh.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
    os.waitpid(pid, 0)
    try:
        status, value = pickle.loads(b"".join(chunks))
    except Exception:  # killed, or dead, before it answered
        return None, "time" if time.monotonic() >= deadline else "memory"
    return (value, None) if status == "ok" else (None, value)


def targets(groebner_timeout: float) -> None:
    print(f"(d) deep fibers at issue 21's targets (t = 2, seed 0): virtual weights vs elimination "
          f"(bounded at {groebner_timeout:.0f} s)")
    print(f"    {'widths':<10}{'ranks':<8}{'goal':>7}{'virtual':>9}{'check':>8}{'orbits':>7}{'Groebner':>16}  ratio")
    for widths, ranks, goal in [(w, r, None) for w, r in BOTH_REACH] + TARGETS:
        arch = Architecture(widths, ranks, tokens=2)
        start = time.perf_counter()
        fib = virtual_fiber(arch, seed=0)
        prove = time.perf_counter() - start
        start = time.perf_counter()
        check_certificate(fib.to_json())
        check = time.perf_counter() - start
        start = time.perf_counter()  # the whole run is bounded: building the equations is most of it at 6,6,6
        grob, why = bounded(lambda: (deep_fiber(arch, seed=0, timeout=groebner_timeout).solutions,),
                            groebner_timeout)
        took = time.perf_counter() - start
        if grob is not None:
            shown, ratio = f"{took:.2f} s", f"{took / (prove + check):.0f}x"
        elif why == "time":
            shown, ratio = f"> {groebner_timeout:.0f} s", f"> {groebner_timeout / (prove + check):.0f}x"
        elif why == "memory":
            shown, ratio = f"> 4 GB ({took:.0f} s)", "-"
        else:
            shown, ratio = f"{why} ({took:.0f} s)", "-"
        goal_s = "-" if goal is None else f"< {goal} s"
        print(f"    {','.join(map(str, widths)):<10}{','.join(map(str, ranks)):<8}{goal_s:>7}{prove:>8.2f}s"
              f"{check:>7.2f}s{len(fib.orbits):>7}{shown:>16}  {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="also the deep cases that take minutes")
    parser.add_argument("--targets-only", action="store_true", help="only (d), issue 21's targets")
    parser.add_argument("--groebner-timeout", type=float, default=120.0,
                        help="seconds the elimination may take per target (default 120)")
    args = parser.parse_args()
    if not args.targets_only:
        for d in (10, 50):
            recovery(d)
        for d in (4, 6, 8):
            black_box(d)
        deep(SMALL_CASES + (LARGER_CASES if args.full else []), timeout=600 if args.full else 60)
    targets(args.groebner_timeout)


if __name__ == "__main__":
    main()
