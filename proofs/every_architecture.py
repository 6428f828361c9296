"""Certify the dimension of every architecture on a grid, with the kernel fields beyond [HMK]'s groups.

Statement (attngeo, docs/invariance.md §5, docs/findings.md): with the symmetry
groups and the kernel-field families (annihilator, symmetric-score, score-free,
co-annihilator) the upper bound meets the Jacobian lower bound for every
architecture. One grid (``--full`` runs the same): every single layer with widths
``<= 5`` and every rank, and
a fixed sample of two- and three-layer networks with widths ``<= 5``, every
rank allowed, ``t in {1, 2, 3}``, lightning and softmax. Architectures left
with bounds are listed with them (and counted); they are not failures.

Conjecture (issue [3/6] item 4): a lightning network has the dimension of the
network whose hidden widths are clipped to the narrowest width before them
(``d_i -> min(d_0, ..., d_i)``, ``t >= 2``); checked on every grid case where
clipping changes a width, with each exception listed.
"""

import random

from attngeo import Architecture, certify_dimension
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, ONE_GRID, proof_arguments, run_dimension_proof

GRID = Claim("every architecture", r"every architecture on the grid: the dimension is certified "
             r"(groups and kernel fields span the kernel of $d\varphi$)", INSTANCES)
CLIPPED = Claim("clipped widths", r"$\dim \mathcal M$ equals that of the network with hidden widths clipped to "
                r"$\min(d_0, \dots, d_i)$ ($t \ge 2$, lightning)", INSTANCES)
SAMPLES = {("lightning", 2): 120, ("lightning", 3): 80, ("softmax", 1): 60, ("softmax", 2): 40, ("softmax", 3): 12}
SOFTMAX_MAX_WIDTH = 3  # ball-arithmetic Jacobians: keep the default run near a minute


def _grid(rng: random.Random):
    for norm in ("lightning", "softmax"):
        top = 5 if norm == "lightning" else SOFTMAX_MAX_WIDTH
        singles = [((d, dd), (a,), t) for d in range(1, top + 1) for dd in range(1, top + 1)
                   for a in range(1, d + 1) for t in (1, 2, 3)]
        for widths, ranks, t in singles if norm == "lightning" else rng.sample(singles, min(len(singles), SAMPLES[(norm, 1)])):
            yield Architecture(widths, ranks, t, norm)
        for depth in (2, 3):
            n = SAMPLES.get((norm, depth), 0)
            for _ in range(n):
                widths = tuple(rng.randint(1, top) for _ in range(depth + 1))
                ranks = tuple(rng.randint(1, widths[i]) for i in range(depth))
                yield Architecture(widths, ranks, rng.choice((1, 2, 3)), norm)


def clipped(arch: Architecture) -> Architecture:
    widths = list(arch.widths)
    for i in range(1, len(widths) - 1):
        widths[i] = min(arch.widths[: i + 1])
    return Architecture(tuple(widths), arch.ranks, arch.tokens, arch.normalization)


def cases(seed: int):
    seen = set()
    for arch in _grid(random.Random(seed)):
        if arch in seen:
            continue
        seen.add(arch)
        yield Case(arch, False, None, claim=GRID.key)
        small = clipped(arch)
        if arch.normalization == "lightning" and arch.tokens >= 2 and small != arch:
            predicted = certify_dimension(small, seed=seed).dimension  # None unless certified
            if predicted is not None:
                yield Case(arch, False, predicted, conjecture=True, claim=CLIPPED.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/every_architecture", full=ONE_GRID)
    results = []
    code = run_dimension_proof("every architecture on the grid (groups + kernel fields)", list(cases(args.seed)),
                               args, results=results, claims=[GRID, CLIPPED])
    gaps = sorted({(str(c.arch), cert.lower, cert.upper) for c, cert in results if not cert.certified})
    print(f"architectures left with bounds: {len(gaps)}")
    for arch, lower, upper in gaps:
        print(f"  {arch}: {lower} <= dim M <= {upper}")
    return code


if __name__ == "__main__":
    main_guard(main)
