"""Certify [HMK]'s single-layer fiber theorem, case by case, on a grid.

Statement ([HMK] section 3, docs/math.md §2.1), t >= 2: the fiber of
(A, V) -> phi through a point is the scaling line {(lambda A, V / lambda)} when
rank A >= 2 or rank V >= 2; two lines (the swap A = p q^T, V = r s^T <->
A = s q^T, V = r p^T) when both have rank 1 and s, p are not parallel; one line
when they are; and {A = 0} u {V = 0, rank A <= a} for the zero function.
One grid (``--full`` runs the same): d, d' <= 5, a = 1..d+1, t = 2, at a random, a rank-1 swap, a rank-1
parallel and a zero point each. The expected case is computed here from the
ranks of A and V alone; the fiber certificate is written and re-checked.
Exit 1 when a fiber disagrees with the statement or a certificate fails.
"""

import random

from flint import fmpq_mat

from attngeo import Architecture
from attngeo.geometry.fibers.layer import determinantal_dimension, fiber, special_point
from attngeo.model.layerfunction import weights_AV
from attngeo.latex import point
from attngeo.theorems.proof import INSTANCES, Claim, Entry, CaseOutcome, main_guard, ONE_GRID, proof_arguments, run_cases, sizes_of

KINDS = ("random", "rank1-swap", "rank1-parallel", "zero")
BY_RANKS = Claim("by ranks", r"the fiber through the point is the one the ranks of $A$ and $V$ predict: the "
                 r"scaling line, two lines (rank-1 swap), one line (rank-1 parallel), or $\lbrace A = 0\rbrace \cup "
                 r"\lbrace V = 0\rbrace$ (zero)", INSTANCES, "points")
GENERIC = Claim("generic", r"[HMK]: at a generic point the fiber is the scaling line "
                r"$\lbrace (\lambda A, \lambda^{-1} V)\rbrace$ (tested at random points)", INSTANCES, "points")
WHY_A1 = (r"With $a = 1$ and $d' = 1$ every point has $\operatorname{rank} A = \operatorname{rank} V = 1$, so a "
          r"generic point is a rank-1 swap point and its fiber is two lines: [HMK]'s generic statement needs "
          r"$a \ge 2$ or $d' \ge 2$ (for $d = 1$ the two lines coincide).")
LINES = {1: "one line", 2: "two lines"}


def expected(arch, weights):
    """(case, number of (A, V) components) predicted by the statement from the ranks alone."""
    A, V = weights_AV(arch, weights)
    if A.rank() == 0 or V.rank() == 0:
        return "zero", 2
    if A.rank() == 1 and V.rank() == 1:
        both = fmpq_mat([[A[i, j] for j in range(A.ncols())] + [V[k, i] for k in range(V.nrows())] for i in range(A.nrows())])
        return ("rank1-parallel", 1) if both.rank() == 1 else ("rank1-swap", 2)
    return "generic", 1


def outcomes(seed: int):
    rng = random.Random(seed)
    for d in range(1, 6):
        for dd in range(1, 6):
            for a in range(1, d + 2):
                arch = Architecture((d, dd), (a,), tokens=2)
                for kind in KINDS:
                    w = special_point(arch, kind, rng)
                    case, count = expected(arch, w)
                    fib = fiber(arch, w)
                    dims = [c.dimension for c in fib.av]
                    ok = fib.case == case and len(fib.av) == count
                    if case == "zero":
                        ok = ok and sorted(dims) == sorted([dd * d, determinantal_dimension(d, a)])
                    else:
                        ok = ok and dims == [1] * count
                    finding = None
                    if kind == "random" and d >= 2 and a == 1 and dd == 1:
                        finding = (f"a = 1, d' = 1 (d = {d}): every point has rank A = rank V = 1, so the generic "
                                   f"fiber is the {fib.case} case ({len(fib.av)} lines), not one scaling line: "
                                   "[HMK]'s generic statement needs a >= 2 or d' >= 2")
                    row = f"{d:>2}{dd:>4}{a:>3}  {kind:<15}{fib.case:<15}{str(dims):<14}{len(fib.qkv):>4}  " + (
                        "certified" if ok else f"DISAGREES (expected {case}, {count} components)")
                    sizes = sizes_of(arch)
                    entries = [Entry(BY_RANKS.key, sizes, "certified") if ok else
                               Entry(BY_RANKS.key, sizes, "refuted", point(kind),
                                     f"case {fib.case}, {len(fib.av)} components", f"case {case}, {count} components")]
                    if kind == "random":
                        one = fib.case != "zero" and len(fib.av) == 1
                        entries.append(Entry(GENERIC.key, sizes, "certified") if one else
                                       Entry(GENERIC.key, sizes, "refuted", point(kind),
                                             LINES.get(len(fib.av), f"{len(fib.av)} components"), "one line"))
                    yield CaseOutcome(f"d{d}_dd{dd}_a{a}_{kind}", fib, row, not ok, finding, entries,
                                  WHY_A1 if kind == "random" and a == 1 and dd == 1 and d >= 2 else None)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/single_layer_fibers", full=ONE_GRID)
    header = f"{'d':>2}{'dd':>4}{'a':>3}  {'point':<15}{'case':<15}{'dims (A,V)':<14}{'QKV':>4}  status"
    return run_cases("[HMK] single-layer fibers", header, outcomes(args.seed), args, [BY_RANKS, GENERIC])


if __name__ == "__main__":
    main_guard(main)
