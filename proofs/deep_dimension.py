"""Certify the dimension of deep lightning networks; compare with [HMK] and the naive count.

Statement ([HMK] section 3): equal widths ``d``, equal ranks ``a <= d``, ``t >= 2``:
``dim M = l a (2d - a) + d^2 - l``. Grid: ``l <= 3``, ``d <= 6``, ``a <= d``,
``t in {2, 3}`` (one grid: ``--full`` runs the same). Then a set of unequal widths and ranks, where [HMK] give no
closed form: the table shows whether the naive count (parameters minus the
symmetry group's dimension) is the true dimension. Only equal-width cases are
inside the hypotheses; the script exits 1 if one of them fails or disagrees.
"""

from attngeo import Architecture
from attngeo.model.formulas import deep_equal_width_dimension
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, ONE_GRID, proof_arguments, run_dimension_proof

EQUAL = Claim("equal widths", r"equal widths and ranks: $\dim \mathcal M = l\,a(2d - a) + d^2 - l$", sizes="depth")
UNEQUAL_WIDTHS = Claim("unequal widths", r"unequal widths or ranks, where [HMK] give no closed form: "
                       r"the dimension (a certified value, or bounds)", INSTANCES)

UNEQUAL = [
    ((2, 3, 2), (1, 2)),
    ((3, 2, 3), (2, 2)),
    ((3, 2, 3), (2, 3)),
    ((4, 2, 4), (2, 2)),
    ((2, 4, 2), (2, 2)),
    ((2, 5, 2), (2, 1)),
    ((4, 3, 2), (2, 2)),
    ((2, 3, 4), (2, 2)),
    ((5, 4, 3, 3), (2, 3, 1)),
    ((3, 5, 3, 5), (2, 2, 2)),
    ((6, 3, 6), (3, 3)),
    ((3, 3, 3), (1, 3)),
]


def cases():
    for t in (2, 3):
        for depth in (1, 2, 3):
            for d in range(1, 7):
                for a in range(1, d + 1):
                    arch = Architecture((d,) * (depth + 1), (a,) * depth, t)
                    yield Case(arch, True, deep_equal_width_dimension(depth, d, a), claim=EQUAL.key)
    for t in (2, 3):
        for widths, ranks in UNEQUAL:
            yield Case(Architecture(widths, ranks, t), False, None, claim=UNEQUAL_WIDTHS.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/deep_dimension", full=ONE_GRID)
    return run_dimension_proof("[HMK] deep dimension, equal widths; naive count elsewhere", list(cases()), args,
                               claims=[EQUAL, UNEQUAL_WIDTHS])


if __name__ == "__main__":
    main_guard(main)
