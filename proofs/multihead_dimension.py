"""Certify the dimension of multi-head attention: heads, value bottlenecks, residual connections, causal masks.

Statement (attngeo, docs/multihead.md): for lightning and softmax networks with
``h_i`` heads per layer, optionally factored value maps ``V = O U`` (value rank
``b_i``), residual connections and a causal mask, the symmetry families (per head
``GL_a``, the scaling for lightning, ``GL_b`` when factored; ``GL_{d_i}`` between
layers unless residual), the mixing of heads (lightning: free for ``a_i >= d_{i-1}``,
inside the rank-``a_i`` matrices otherwise, docs/math.md §7.3) and, for one
lightning layer, the span of its functions bound the dimension from
above; the Jacobian rank bounds it from below. Each case prints the certified
dimension (or bounds) beside the count "parameters - dimension of the group"
(``naive``) and, for one softmax layer with a factored value map, beside the
published functional-dimension formula ``h (2ad + b(d + d')) - h (a^2 + b^2)``
(``formula``, inside its hypotheses only: no mask, no residual, ``a <= d``,
``b <= min(d, d')``).

Default grid (about 15 s): heads 1..3, single layers with widths 2..4 and ranks
``{1, 2, d}``, two layers of width 2 and 3, value ranks none or 1 (and 2 for
widths >= 3 in the sampled softmax grid), residual on/off, causal on/off, ``t = 2``,
lightning on the full product and softmax on a fixed sample of 50 (ball arithmetic
is slower). ``--full`` (about a minute): heads 1..4, widths 2..5, ``t in {2, 3}``,
a softmax sample of 90.
Cases left with bounds are listed (they are not failures); a certified value
that differs from the published formula inside its hypotheses refutes it and
fails the script.
"""

import itertools
import random

from attngeo import Architecture
from attngeo.model.formulas import published_multihead_formula
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, proof_arguments, run_dimension_proof

LIGHTNING = Claim("multi-head lightning", r"lightning networks with heads, value ranks, residual connections and causal "
                  r"masks: the dimension is certified (the groups, the mixing of heads and the span of one layer meet "
                  r"the Jacobian rank)", INSTANCES)
SOFTMAX = Claim("multi-head softmax", r"softmax networks with heads, value ranks, residual connections and causal "
                r"masks: the dimension is certified", INSTANCES)
PUBLISHED = Claim("published formula", r"one softmax layer, $V = OU$, $a \le d$, $b \le \min(d, d')$: "
                  r"$\dim \mathcal M = h(2ad + b(d + d')) - h(a^2 + b^2)$ (published)", INSTANCES)
#: Softmax architectures sampled: default grid, full grid.
SOFTMAX_SAMPLE = {False: 50, True: 90}


def _shapes(full: bool):
    for d in range(2, 6 if full else 5):
        for a in sorted({1, min(2, d), d}):
            yield (d, d), (a,)
    for d in (2, 3):
        for a in sorted({1, d}):
            yield (d, d, d), (a, a)


def _architectures(normalization: str, full: bool):
    for (widths, ranks), heads, value_rank, residual, causal, t in itertools.product(
            _shapes(full), (1, 2, 3, 4) if full else (1, 2, 3), (None, 1, 2), (False, True), (False, True),
            (2, 3) if full else (2,)):
        if value_rank == 2 and (normalization == "lightning" or widths[0] < 3):
            continue
        if len(widths) == 3 and heads > 2:
            continue
        yield Architecture(widths, ranks, t, normalization, heads,
                           None if value_rank is None else value_rank, residual, causal)


def cases(seed: int, full: bool = False):
    for arch in _architectures("lightning", full):
        yield Case(arch, False, None, claim=LIGHTNING.key)
    softmax = list(_architectures("softmax", full))
    for arch in random.Random(seed).sample(softmax, SOFTMAX_SAMPLE[full]):
        published = published_multihead_formula(arch)
        if published.applies:
            yield Case(arch, True, published.value, claim=PUBLISHED.key)
        else:
            yield Case(arch, False, None, claim=SOFTMAX.key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/multihead_dimension",
                           full="heads up to 4, widths up to 5, t = 3, 90 softmax architectures")
    return run_dimension_proof("Multi-head attention: certified dimension beside parameters - dim G and the "
                               "published formula", list(cases(args.seed, args.full)), args,
                               claims=[LIGHTNING, SOFTMAX, PUBLISHED])


if __name__ == "__main__":
    main_guard(main)
