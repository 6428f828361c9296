"""Certify the dimension of multi-head lightning layers with value bottlenecks ``V_j = O_j U_j`` beside a count.

Statement (attngeo, docs/math.md §7.3 Lemma 7.3.7, docs/findings.md 19): one lightning
layer ``d -> d'`` with ``h`` heads of rank ``a`` and value rank ``b <= min(d, d')``. The
upper bound is the groups (per head ``GL_a x GL_b x C*``), the ``factored-mixing``
kernel fields (heads re-split inside both determinantal varieties: ``h - 1`` coefficients
per head, ``(d - a)^2`` conditions for ``A_j`` and ``(d' - b)(d - b)`` for ``V_j``) and the
span of the layer's functions; the lower bound is the Jacobian rank. Each case is
compared with the *observed* count

    min(N, h (dim A + dim V - 1) - h max(0, min(h - 1, D) - r_A - (d' - b)(d - b)))

(``t >= 2``: ``dim A = 2ad - a^2``, ``r_A = (d - a)^2``, ``D = d^2``; one token:
``A`` is seen through ``S = A + Aᵀ`` of rank ``m = min(2a, d)``, ``dim A = m d - m(m - 1)/2``,
``r_A = ρ(ρ + 1)/2`` with ``ρ = d - 2a``, ``D = d(d + 1)/2``; ``dim V = b(d + d') - b^2``;
``N`` the smallest tensor bound of docs/multihead.md §4: the span, or ``r (m + n - r)`` for a
flattening of rank ``<= r``), a conjecture for ``d >= 2``: a disagreement is
reported as a finding, not a failure, and cases left with bounds are listed. At ``d = 1``
the count would be 0 for ``d' = 1``, ``h >= 2`` (its fields are dependent there), while
every layer is ``F = c y^2`` with ``c`` in ``C^{d'}``: :func:`count` gives ``d'`` there.

Default grid (seconds): ``d = d' <= 4``, every ``a, b <= d``, ``h = 2..5``, ``t = 2``.
``--full`` (minutes): ``d = d' <= 6`` with ``h <= 6`` and at most 1,500 parameters; ``d != d'``
up to 5 (at most 1,000 parameters); one token ``d <= 5``; ``t = 3``, residual and causal
variants on ``d <= 4``.
"""

from attngeo import Architecture
from attngeo.geometry.dimension.bounds import tensor_bound
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, proof_arguments, run_dimension_proof

COUNT = Claim("count", r"one lightning layer $d \to d'$, $d \ge 2$, $h$ heads of rank $a$, value rank $b$, $t \ge 2$: "
              r"$\dim \mathcal M = \min(N, h(\dim A + \dim V - 1) - h \max(0, \min(h - 1, d^2) - (d - a)^2 "
              r"- (d' - b)(d - b)))$, $N$ the tensor bound (observed)", INSTANCES)
ONE_TOKEN = Claim("one token", r"the same with one token: $A_j$ seen through $A_j + A_j^T$ of rank "
                  r"$\min(2a, d)$, $(d - 2a)(d - 2a + 1)/2$ conditions (observed)", INSTANCES)


def count(arch: Architecture) -> int:
    """The observed count for one layer with value ranks (the module docstring's formula)."""
    (d, d_out), a, b, h = arch.widths, arch.ranks[0], arch.value_ranks[0], arch.heads[0]
    if d == 1:
        # F = c y^2 (c y^3 with one token), c = sum_j O_j U_j K_j^T Q_j fills C^{d'}; the formula below
        # would subtract h fields that are dependent here (0 at d' = 1, h >= 2)
        return d_out
    if arch.tokens >= 2:
        m = min(a, d)
        dim_a, conditions, room = 2 * m * d - m * m, max(0, d - a) ** 2, d * d
    else:
        m, rho = min(2 * a, d), max(0, d - 2 * a)
        dim_a, conditions, room = m * d - m * (m - 1) // 2, rho * (rho + 1) // 2, d * (d + 1) // 2
    dim_v = b * (d + d_out) - b * b
    fields = h * max(0, min(h - 1, room) - conditions - (d_out - b) * (d - b))
    return min(tensor_bound(arch)[0], h * (dim_a + dim_v - 1) - fields)


def _layers(full: bool):
    """``(widths, a, b, h, keywords)`` of the grid."""
    top = 6 if full else 4
    for d in range(2, top + 1):
        for a in range(1, d + 1):
            for b in range(1, d + 1):
                for h in range(2, (6 if full else 5) + 1):
                    yield (d, d), a, b, h, {}
    if not full:
        return
    for d in range(2, 6):
        for d_out in range(2, 6):
            for a in range(1, d + 1):
                for b in range(1, min(d, d_out) + 1):
                    for h in range(2, 7):
                        if d != d_out:
                            yield (d, d_out), a, b, h, {"limit": 1000}
    for d in range(2, 6):
        for a in range(1, d + 1):
            for b in range(1, d + 1):
                for h in range(2, 7):
                    yield (d, d), a, b, h, {"tokens": 1, "limit": 1000}
    for d in range(2, 5):
        for a in range(1, d + 1):
            for b in range(1, d + 1):
                for h in range(2, 6):
                    for extra in ({"tokens": 3}, {"residual": True}, {"tokens": 3, "causal": True}):
                        yield (d, d), a, b, h, {**extra, "limit": 800}


def cases(full: bool):
    for widths, a, b, h, kw in _layers(full):
        limit = kw.pop("limit", 1500)
        arch = Architecture(widths, (a,), kw.pop("tokens", 2), heads=h, value_ranks=b, **kw)
        if arch.parameter_count <= limit:
            yield Case(arch, True, count(arch), conjecture=True, claim=(ONE_TOKEN if arch.tokens == 1 else COUNT).key)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/multihead_bottleneck",
                           full="d = d' <= 6, d != d', one token, t = 3, residual and causal (minutes)")
    return run_dimension_proof("Multi-head layers with value bottlenecks: certified dimension beside the observed "
                               "count", list(cases(args.full)), args, claims=[COUNT] + ([ONE_TOKEN] if args.full else []))


if __name__ == "__main__":
    main_guard(main)
