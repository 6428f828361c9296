"""Certify [HMK]'s single-layer dimension theorem on a grid.

Statement ([HMK] section 3): for one lightning layer with ``t >= 2`` tokens,
``dim M = 2ad + dd' - a^2 - 1`` when ``a <= d`` and ``d^2 + dd' - 1`` when ``a > d``.
Grid: ``1 <= d, d' <= 6``, ``1 <= a <= d + 1``, ``t in {2, 3}`` (324 cases; one grid: ``--full`` runs the same).
Every case is inside the hypotheses, so any case that fails to certify or
disagrees with the formula makes the script exit 1.
"""

from attngeo import Architecture
from attngeo.model.formulas import single_layer_dimension
from attngeo.theorems.proof import Case, Claim, main_guard, ONE_GRID, proof_arguments, run_dimension_proof

FORMULA = Claim("formula", r"$\dim \mathcal M = 2ad + dd' - a^2 - 1$ for $a \le d$, $d^2 + dd' - 1$ for $a > d$")


def cases():
    for t in (2, 3):
        for d in range(1, 7):
            for d_out in range(1, 7):
                for a in range(1, d + 2):
                    yield Case(Architecture((d, d_out), (a,), t), True, single_layer_dimension(d, d_out, a),
                               claim=FORMULA.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/single_layer_dimension", full=ONE_GRID)
    return run_dimension_proof("[HMK] single-layer dimension, lightning", list(cases()), args,
                               claims=[FORMULA])


if __name__ == "__main__":
    main_guard(main)
