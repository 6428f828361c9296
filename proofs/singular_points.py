"""Certify singular and smooth points of single-layer neuromanifolds on a grid.

Statement ([HMK] section 3, docs/math.md §2.4), t >= 2: phi_{A,V} is a singular
point of M exactly when rank(A) rank(V) <= 1. Grid: d <= 3 (``--full``: d <= 4), d' <= 3, a <= d,
at a generic point (expected smooth), a rank-1 swap and the zero function
(expected singular), a rank-1 parallel point, and -- for 1 < a < d, docs/math.md §2.4's
open point -- points with rank A < a and V generic. Verdicts come from
attngeo.geometry.loci.singular (docs/singular.md) with certificates the checker re-verifies; for the
smallest sizes the implicit equations decide what the tangent criteria leave open, and at
d = 4, a = d' = 1 the equations of degree <= 3 decide the smooth ones (docs/singular.md §8).
Every certified verdict is compared with the criterion, region by region
(attngeo.theorems.registry.SINGULAR_REGIONS), and a disagreement is a counterexample in the
summary. Two are known (docs/findings.md 3-4) and do not fail the script: rank A < a
for 1 < a < d (certified singular where the criterion says smooth), and a = 1,
d' = 1, where every point has rank A = rank V = 1 while Sing M is a proper subset.
"undecided" is reported, never rounded. Exit 1 when a certified verdict
contradicts the statement elsewhere or a certificate fails.
"""

import random

from attngeo import Architecture
from attngeo.geometry.fibers.layer import special_point
from attngeo.geometry.loci.graded import graded_equations
from attngeo.geometry.loci.implicit import implicit_equations_if_available
from attngeo.latex import POINTS, stratum
from attngeo.model.layerfunction import weights_AV
from attngeo.theorems.proof import INSTANCES, Claim, Entry, CaseOutcome, main_guard, proof_arguments, run_cases, sizes_of
from attngeo.geometry.loci.singular import is_singular
from attngeo.theorems.registry import HMK_SINGULAR, SINGULAR_REGIONS, singular_region

CLAIMS = [Claim(key, rf"{HMK_SINGULAR} for {region}, tested at points", INSTANCES, "points")
          for key, region in SINGULAR_REGIONS.items()]
EQUATIONS = (r"Where the tangent criteria are silent the verdict comes from the Jacobian of the implicit equations "
             r"of $\mathcal M$: smooth needs only that they vanish on $\mathcal M$ (proved); singular rests on "
             r"the elimination, replayed by the checker (past elimination, the equations of degree $\le K$ decide "
             r"smooth points only).")


#: (d, d', a) whose implicit equations are computed to decide what tangents leave open (seconds each).
WITH_EQUATIONS = {(2, 1, 1), (2, 1, 2), (2, 2, 1), (2, 2, 2), (3, 1, 1)}
#: (d, d', a) past elimination: the equations of degree <= K decide smooth points only (docs/singular.md §8).
WITH_DEGREES = {(4, 1, 1): 3}


def deficient_point(arch, r, rng):
    """rank A = r (< a), V with its generic rank."""
    d, dd = arch.widths
    a = arch.ranks[0]
    while True:
        Q = [[rng.randint(-3, 3) for _ in range(d)] if i < r else [0] * d for i in range(a)]
        K = [[rng.randint(-3, 3) for _ in range(d)] if i < r else [0] * d for i in range(a)]
        V = [[rng.randint(-3, 3) for _ in range(d)] for _ in range(dd)]
        w = [[Q, K, V]]
        A, Vm = weights_AV(arch, w)
        if A.rank() == r and Vm.rank() == min(d, dd):
            return w


def outcomes(seed, full: bool = False):
    rng = random.Random(seed)
    for d in range(2, 5 if full else 4):
        for dd in range(1, 4):
            for a in range(1, d + 1):
                arch = Architecture((d, dd), (a,), tokens=2)
                eq = implicit_equations_if_available(arch, seed) if (d, dd, a) in WITH_EQUATIONS else \
                    graded_equations(arch, WITH_DEGREES[(d, dd, a)], seed) if (d, dd, a) in WITH_DEGREES else None
                points = [(kind, special_point(arch, kind, rng)) for kind in
                          ("random", "rank1-swap", "rank1-parallel", "zero")]
                points += [(f"rank A = {r}", deficient_point(arch, r, rng)) for r in range(1, a) if a < d]
                for kind, w in points:
                    v = is_singular(arch, w, seed=seed, extra=6, equations=eq)
                    A, V = weights_AV(arch, w)
                    hmk = "singular" if A.rank() * V.rank() <= 1 else "smooth"  # the criterion, literally
                    # where the criterion is known to fail (docs/findings.md 3-4) a disagreement is a counterexample
                    known = (1 < a < d and A.rank() < a and hmk == "smooth") or (a == 1 and dd == 1)
                    disagrees = v.certified and v.verdict != hmk
                    contradicts = disagrees and not known
                    finding = None
                    if a == 1 and dd == 1 and v.certified and kind.startswith("rank1"):
                        finding = (f"a = 1, d' = 1, d = {d}: {kind} points are {v.verdict} "
                                   "(from the implicit equations; [HMK]'s rank condition holds at every point)")
                    if kind.startswith("rank A") and disagrees:
                        finding = ("1 < a < d: points with rank A < a and V generic are certified singular where "
                                   "[HMK]'s criterion says smooth (docs/math.md §2.4, §6.2)")
                    if contradicts:
                        finding = (f"d={d}, d'={dd}, a={a}, {kind}: certified {v.verdict}, [HMK]'s statement says {hmk}")
                    row = (f"{d:>2}{dd:>4}{a:>3}  {kind:<15}{v.verdict:<11}{v.span:>5}{v.dimension:>5}  "
                           f"[HMK]: {hmk}" + ("  DIFFERS" if contradicts else "  counterexample" if disagrees else ""))
                    name = f"d{d}_dd{dd}_a{a}_{kind.replace(' ', '').replace('=', '')}"
                    claim = singular_region(d, dd, a)
                    if disagrees:
                        at = rf"{POINTS.get(kind, 'point')}, ${stratum(A.rank(), V.rank())}$"
                        entry = Entry(claim, sizes_of(arch), "refuted", at, v.verdict, hmk)
                    else:
                        entry = Entry(claim, sizes_of(arch), "certified" if v.certified else "undecided")
                    note = EQUATIONS if v.certified and (v.implicit_certificate or v.graded_certificate) else None
                    yield CaseOutcome(name, v, row, contradicts, finding, [entry], note)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/singular_points", full="also d = 4")
    header = f"{'d':>2}{'dd':>4}{'a':>3}  {'point':<15}{'verdict':<11}{'span':>5}{'dim':>5}  statement"
    return run_cases("[HMK] singular points of one layer", header, outcomes(args.seed, args.full), args, CLAIMS)


if __name__ == "__main__":
    main_guard(main)
