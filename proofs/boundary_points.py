"""Certify boundary points of real single-layer neuromanifolds on a grid.

Statement (docs/singular.md section 6, Lemma B, t >= 2): a real point of M_C has
no real weights exactly when F = q(y) R with q a definite rank-2 quadric (a
complex-conjugate swap pair); the boundary of M_R in M_C ∩ R^N is {0} and the
rank-1 parallel points F = (s.y)^2 R; for d = 1 there is no boundary. [HMK]
characterize boundary points through rank-1 matrices (docs/math.md §2.5); this
script certifies the lemma's classification point by point. One grid
(``--full`` runs the same): d <= 4,
d' <= 3, a <= d; points: generic, rank-1 swap and parallel, zero, and real
tensors q(y) R with q definite and indefinite. The expected verdict is derived
from how each point is built, never from the code under test. Exit 1 when a
verdict differs from it or a certificate fails.
"""

import random

from flint import fmpq_mat

from attngeo import Architecture
from attngeo.geometry.loci.boundary import is_boundary_point
from attngeo.geometry.fibers.layer import special_point
from attngeo.model.layerfunction import LayerFunction, weights_AV
from attngeo.latex import point
from attngeo.theorems.proof import INSTANCES, Claim, Entry, CaseOutcome, main_guard, ONE_GRID, proof_arguments, run_cases, sizes_of

LEMMA_B = Claim("Lemma B", r"Lemma B at each point: $0$ and the rank-1 parallel points $(s \cdot y)^2 R$ are boundary "
                r"points, definite $q(y) R$ lie outside $\mathcal M_{\mathbb R}$, every other point is interior "
                r"($d \ge 2$); no boundary for $d = 1$", INSTANCES, "points")
DEFINITE = (r"Definite $q(y) R$ are real points of $\mathcal M_{\mathbb C}$ with only complex weights "
            r"(every $d \ge 2$ tested).")
POINTS = {"definite": r"definite $q(y) R$", "indefinite": r"indefinite $q(y) R$"}


def quadric_point(arch, sign, rng):
    """F = q(y) R with q = y_1^2 + sign * y_2^2 and a random integer rank-1 R."""
    d, dd = arch.widths
    r = [rng.choice([-2, -1, 1, 2]) for _ in range(dd)]
    c = [rng.choice([-2, -1, 1, 2]) for _ in range(d)]
    q = [[0] * d for _ in range(d)]
    q[0][0], q[1][1] = 1, sign
    tensor = [[[[q[m][n] * r[k] * c[p] for p in range(d)] for n in range(d)] for m in range(d)] for k in range(dd)]
    return LayerFunction.from_tensor(arch, tensor)


def parallel(arch, w):
    """A = p q^T, V = r s^T with s parallel to p (read from the weights)."""
    A, V = weights_AV(arch, w)
    p = next([A[i, j] for i in range(A.nrows())] for j in range(A.ncols()) if any(A[i, j] != 0 for i in range(A.nrows())))
    s = next([V[k, j] for j in range(V.ncols())] for k in range(V.nrows()) if any(V[k, j] != 0 for j in range(V.ncols())))
    return fmpq_mat([p, s]).rank() == 1


def expected(kind, d):
    if d < 2:
        return "interior"
    return {"random": "interior", "rank1-swap": "interior", "indefinite": "interior",
            "rank1-parallel": "boundary", "zero": "boundary", "definite": "outside"}[kind]


def outcomes(seed):
    rng = random.Random(seed)
    for d in range(1, 5):
        for dd in range(1, 4):
            for a in range(1, d + 1):
                arch = Architecture((d, dd), (a,), tokens=2)
                points = [(kind, special_point(arch, kind, rng)) for kind in
                          ("random", "rank1-swap", "rank1-parallel", "zero")]
                if d >= 2:
                    points += [("definite", quadric_point(arch, 1, rng)), ("indefinite", quadric_point(arch, -1, rng))]
                for kind, w in points:
                    v = is_boundary_point(arch, w)
                    want = expected(kind, d)
                    if kind == "rank1-swap" and d >= 2 and parallel(arch, w):
                        want = "boundary"  # the random swap vectors came out parallel
                    differs = v.verdict != want
                    row = f"{d:>2}{dd:>4}{a:>3}  {kind:<15}{v.verdict:<10}{v.shape:<12}expected {want}" + \
                        ("  DIFFERS" if differs else "")
                    finding = note = None
                    if v.verdict == "outside":
                        finding = "definite q(y) R points are real points of M_C with only complex weights (every d >= 2)"
                        note = DEFINITE
                    where = POINTS.get(kind) or point(kind)
                    entry = Entry(LEMMA_B.key, sizes_of(arch), "refuted", where, v.verdict, want) if differs \
                        else Entry(LEMMA_B.key, sizes_of(arch), "certified")
                    yield CaseOutcome(f"d{d}_dd{dd}_a{a}_{kind}", v, row, differs, finding, [entry], note)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/boundary_points", full=ONE_GRID)
    header = f"{'d':>2}{'dd':>4}{'a':>3}  {'point':<15}{'verdict':<10}{'shape':<12}lemma"
    return run_cases("Boundary points of real single-layer neuromanifolds (Lemma B)", header, outcomes(args.seed), args,
                     [LEMMA_B])


if __name__ == "__main__":
    main_guard(main)
