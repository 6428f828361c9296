"""Certify the dimension of one multi-head layer with heads on disjoint blocks on a grid.

Statement (attngeo, docs/math.md §7.1): one lightning layer ``d -> d`` with ``h``
heads of rank ``a`` and value rank ``b`` (``V_j = O_j U_j``), ``t >= 2`` and
``h max(a, b) <= d`` has ``dim M = P - h(a^2 + 1 + b^2) = h(2ad + 2bd - a^2 - b^2 - 1)``:
the per-head ``GL_a x C* x GL_b`` is the whole generic fiber. ``attngeo prove
multihead-layer-dimension`` proves it for every size; this script certifies the
instances ``d <= 7``, ``t = 2`` independently (dense or head-point witnesses;
one grid: ``--full`` runs the same).
Every case is inside the hypotheses, so any case that fails to certify or
disagrees with the formula makes the script exit 1.
"""

from attngeo import Architecture
from attngeo.theorems.proof import Case, Claim, main_guard, ONE_GRID, proof_arguments, run_dimension_proof

FORMULA = Claim("formula", r"$\dim \mathcal M = h(2ad + 2bd - a^2 - b^2 - 1)$ for $h \max(a, b) \le d$")


def cases():
    for d in range(1, 8):
        for h in range(1, d + 1):
            for a in range(1, d // h + 1):
                for b in range(1, d // h + 1):
                    yield Case(Architecture((d, d), (a,), 2, heads=h, value_ranks=b), True,
                               h * (2 * a * d + 2 * b * d - a * a - b * b - 1), claim=FORMULA.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/multihead_layer_dimension", full=ONE_GRID)
    return run_dimension_proof("attngeo multi-head layer dimension, heads on disjoint blocks", list(cases()), args,
                               claims=[FORMULA])


if __name__ == "__main__":
    main_guard(main)
