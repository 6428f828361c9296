"""Settle the fibers of two-layer lightning networks at random points, by elimination.

Statement ([HMK] section 3, docs/math.md §3.3): under bottleneck-type width
assumptions the generic fiber is exactly the orbit of the intra-layer GL_a,
scaling and inter-layer GL_d symmetries. For each architecture below (t = 2)
a random point of the gauge slice is taken and phi(W) = phi(W_0) is solved
over Q (docs/fibers.md): one solution certifies "fiber = orbit" on the gauge
domain; several verified solutions certify a hidden discrete symmetry; an
infinite solution set or an engine timeout leaves the case open, and says so.
Cases with equal widths and all ranks >= 2 are inside the statement: the
script exits 1 if one of them does not certify "fiber = orbit".
"""

import argparse

from attngeo import Architecture
from attngeo.geometry.fibers.deep import deep_fiber
from attngeo.exact.engine import EngineFailed, EngineUnavailable
from attngeo.theorems.proof import INSTANCES, Claim, Entry, CaseOutcome, main_guard, run_cases, sizes_of

#: Two-layer cases (widths, ranks) msolve settles in about a second each, at t = 2.
SMALL_CASES = [
    ((2, 2, 2), (2, 2)),
    ((2, 2, 2), (2, 1)),
    ((2, 2, 2), (1, 2)),
    ((2, 2, 2), (1, 1)),
    ((2, 2, 3), (2, 2)),
    ((2, 2, 3), (1, 1)),
    ((2, 2, 1), (2, 2)),
    ((2, 2, 1), (1, 1)),
    ((2, 1, 2), (1, 1)),
]
#: Larger two-layer cases: from tens of seconds to beyond ten minutes.
LARGER_CASES = [
    ((3, 3, 3), (1, 1)),
    ((3, 2, 2), (2, 1)),
    ((3, 2, 2), (1, 1)),
    ((3, 2, 2), (2, 2)),
    ((3, 3, 3), (2, 2)),
]


A1_NOTE = ("a_1 = 1: every layer-1 output has rank 1 (all tokens are multiples of V_1 X X^T k_1), so layer 2 sees only "
           "the symmetric part of A_2; A_2 -> A_2^T (a_2 = 1) and A_2 -> A_2 + skew (a_2 = d_1) are hidden symmetries")
A1_LATEX = (r"$a_1 = 1$: every layer-1 output has rank 1 (all tokens are multiples of $V_1 X X^T k_1$), so layer 2 "
            r"sees only the symmetric part of $A_2$; $A_2 \mapsto A_2^T$ ($a_2 = 1$) and $A_2 \mapsto A_2 + sS$, "
            r"$S$ skew ($a_2 = d_1$), are hidden symmetries.")
ORBIT = "fiber $=$ symmetry orbit on the gauge slice"
HMK = Claim("[HMK]", rf"[HMK], equal widths and all ranks $\ge 2$: {ORBIT}", INSTANCES, "points")
OTHER = Claim("a_1 >= 2", rf"$a_1 \ge 2$, other widths and ranks: {ORBIT}", INSTANCES, "points")
HIDDEN = Claim("a_1 = 1", r"$a_1 = 1$: the fiber is larger than the symmetry orbit (a hidden symmetry)",
               INSTANCES, "points")


def entry(arch, fib) -> Entry:
    """What the fiber at this point says about the claim its architecture falls under."""
    widths, ranks = arch.widths, arch.ranks
    claim = HIDDEN if ranks[0] == 1 else (HMK if len(set(widths)) == 1 and min(ranks) >= 2 else OTHER)
    if fib is None or not fib.certified:
        return Entry(claim.key, sizes_of(arch, "tuples"), "undecided")
    orbit = fib.solutions is not None and fib.fiber_points == 1  # spurious solutions of the sampled system aside
    if orbit == (claim is not HIDDEN):
        return Entry(claim.key, sizes_of(arch, "tuples"), "certified")
    found = "fiber $=$ orbit" if orbit else "a hidden symmetry"
    return Entry(claim.key, sizes_of(arch, "tuples"), "refuted", "a random point", found,
                 "a hidden symmetry" if claim is HIDDEN else "fiber $=$ orbit")


def outcomes(args):
    for k, (widths, ranks) in enumerate(SMALL_CASES + (LARGER_CASES if args.full else [])):
        arch = Architecture(widths, ranks, tokens=2)
        inside = len(set(widths)) == 1 and min(ranks) >= 2
        w, a = ",".join(map(str, widths)), ",".join(map(str, ranks))
        name = f"w{'-'.join(map(str, widths))}_a{'-'.join(map(str, ranks))}_t2"
        try:
            fib = deep_fiber(arch, seed=args.seed + k, engine=args.engine, timeout=args.timeout)
        except (EngineFailed, EngineUnavailable) as exc:
            row = f"{w:<10}{a:<7}  out of reach: {exc}" + ("  [inside the statement]" if inside else "")
            yield CaseOutcome(name, None, row, entries=[entry(arch, None)])
            continue
        failed = inside and not (fib.certified and fib.solutions == 1)
        hidden = ranks[0] == 1 and fib.solutions != 1
        row = (f"{w:<10}{a:<7}{len(fib.basis.variables):>5}{str(fib.solutions):>6}{len(fib.extra):>6}"
               f"{fib.seconds:>8.2f}  {fib.verdict}" + ("  [inside the statement]" if inside else ""))
        yield CaseOutcome(name, fib, row, failed, A1_NOTE if hidden else None, [entry(arch, fib)],
                      A1_LATEX if hidden else None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="certificates/deep_fibers", help="certificate folder")
    parser.add_argument("--seed", type=int, default=2025, help="seed for points and inputs")
    parser.add_argument("--no-check", action="store_true", help="skip re-verifying each certificate")
    parser.add_argument("--full", action="store_true", help="also the larger cases (minutes, some out of reach)")
    parser.add_argument("--engine", default="auto", help="Groebner engine (default: msolve when installed)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per elimination (default 120)")
    args = parser.parse_args()
    header = f"{'widths':<10}{'ranks':<7}{'vars':>5}{'sols':>6}{'extra':>6}{'seconds':>8}  verdict"
    return run_cases("[HMK] deep fibers: orbit or hidden symmetry", header, outcomes(args), args, [HMK, OTHER, HIDDEN])


if __name__ == "__main__":
    main_guard(main)
