"""Certify the dimension of single softmax-attention layers (ball arithmetic) against [HMK].

Statement ([HMK] section 3, docs/math.md §4.1): one softmax-normalized layer is
generically one-to-one in (A, V), so for t >= 2, dim M = a(2d - a) + d d' when
a <= d (and d^2 + d d' when a > d): the lightning dimension + 1, the scaling
symmetry being broken. Grid: d <= 4 (``--full``: d <= 5), d' <= 3, a <= d + 1, t in {2, 3}, plus
t = 1 (outside the statement: every score matrix is 1 x 1, phi = V X). Lower
bounds are Jacobian minors whose determinant balls exclude 0; upper bounds
come from the intra-layer GL(a) orbit. Exit 1 if a case inside the statement
is not certified or disagrees with it.
"""

from attngeo import Architecture
from attngeo.model.formulas import hmk_formula
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, proof_arguments, run_dimension_proof

FORMULA = Claim("formula", r"$\dim \mathcal M = a(2d - a) + dd'$ for $a \le d$, $d^2 + dd'$ for $a > d$")
ONE_TOKEN = Claim("t = 1", r"$t = 1$, outside the statement (every score matrix is $1 \times 1$): "
                  r"the dimension (a certified value, or bounds)", INSTANCES)


def cases(full: bool = False):
    for t in (2, 3):
        for d in range(1, 6 if full else 5):
            for dd in range(1, 4):
                for a in range(1, d + 2):
                    arch = Architecture((d, dd), (a,), t, "softmax")
                    yield Case(arch, True, hmk_formula(arch).value, claim=FORMULA.key)
    for d, dd, a in ((2, 2, 1), (3, 2, 2), (4, 3, 2)):
        yield Case(Architecture((d, dd), (a,), 1, "softmax"), False, None, claim=ONE_TOKEN.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/softmax_single_layer", full="d = 5 too")
    return run_dimension_proof("[HMK] softmax single layer: a(2d - a) + dd'", list(cases(args.full)), args,
                               claims=[FORMULA, ONE_TOKEN])


if __name__ == "__main__":
    main_guard(main)
