"""Fibers of multi-head lightning layers at random points: the orbit of the group and the head permutations, or more.

Statement (issue 15 item 4, docs/fibers.md §4): for one layer d -> d with h heads
of rank a, V unfactored or V = O U of rank b, t = 2, the symmetry group (per head
GL_a, the scaling, GL_b) and the h! head permutations act on every fiber; the
expectation is that a generic fiber is exactly one orbit of the group and the
permutations. Per architecture:

* the dimension is certified first (attngeo dim). When dim M < P - dim G the
  generic fiber is bigger than any orbit: every fiber component has dimension
  >= P - dim M (exactly P - dim M at generic points), so the fiber meets the
  gauge slice in a set of dimension >= P - dim M - dim G > 0 at every slice point
  (certified by the dimension certificate; the elimination is not run). Where the
  certificate's lower and upper witnesses share their point W_1, the Jacobian has
  rank dim M there and the fields span its kernel: the fiber through W_1 is smooth
  of dimension P - dim M at W_1, spanned by the group's and the kernel families'
  directions (docs/fibers.md §4);
* otherwise, at a few random points of the gauge slice, phi(W) = phi(W_0) is
  solved over Q (the deep-fiber certificate: Groebner basis, D standard
  monomials, factor verdicts, every listed point checked exactly). Exactly the
  h! re-gauged head permutations certifies "fiber = orbit x S_h" on the gauge
  domain; more verified points certify a hidden discrete symmetry.

Default grid (``FAST``, one random point per architecture); ``--full`` adds the
3-head eliminations on 3 -> 3 (``SLOW``, minutes each) and takes two points per
architecture (``--points`` overrides either).

The script exits 0 unless a certificate is rejected or a case fails to run;
hidden symmetries are findings, not failures.
"""

from math import factorial

from attngeo import Architecture, SymmetryGroup, certify_dimension
from attngeo.exact.engine import EngineFailed, EngineUnavailable
from attngeo.geometry.fibers.deep import deep_fiber, gauge
from attngeo.theorems.proof import INSTANCES, CaseOutcome, Claim, Entry, main_guard, proof_parser, run_cases, sizes_of

#: (d, a, heads, value rank, flags): the default grid settles each in seconds.
FAST = [(d, a, h, b, {}) for d in (2, 3) for a in range(1, d + 1) for h in (2, 3) for b in (None, 1)
        if (d, a, h, b) not in {(3, 1, 3, None), (3, 1, 3, 1)}]
FAST += [(2, 1, 2, 1, {"causal": True}), (3, 2, 2, 1, {"residual": True}), (3, 2, 2, 1, {"causal": True})]
#: Half a minute to minutes each (3-head eliminations on 3 -> 3). (d = 3, a = 2, h = 3 is positive-dimensional by
#: its certified dimension 45 < 48: rank-mixing, docs/math.md §7.3; no elimination.)
SLOW = [(3, 1, 3, None, {}), (3, 1, 3, 1, {})]

ORBIT = Claim("orbit", r"a generic fiber is one orbit of the group and the head permutations "
                       r"($h!$ points in the gauge slice)", INSTANCES, "points")
SPAN = Claim("span", r"$\dim \mathcal M < P - \dim G$: the generic fiber is positive-dimensional modulo $G$",
             INSTANCES, "architectures")

SWAP = ("a = b = 1: each head is o (u.y)(k.y) q^T, symmetric in u and k, so swapping U_j and K_j is a hidden "
        "symmetry per head: h! 2^h points in the slice")
QUARTIC = ("d = 2, two heads: each head is a pair of binary quadrics sharing a root times a vector "
           "(f_j(y) = (k_j.y) V_j y with q_j, or g_j(y) = (u_j.y) A_j^T y with o_j); the pencil spanned by F's "
           "columns (rows) has 4 members sharing a root (the resultant on the pencil is a quartic), and each "
           "ordered pair of distinct members is one point: 4 * 3 = 12 (tests/test_head_pencil.py matches them)")
PENCIL = ("d = 3, a = 2, V unfactored, h = 2: det(s A_1 + t A_2) is a cubic form vanishing at (1:0) and (0:1), so "
          "the pencil has a third rank-2 member A_1 - c A_2; V_1 (x) A_1 + V_2 (x) A_2 = V_1 (x) (A_1 - c A_2) + "
          "(V_2 + c V_1) (x) A_2 re-splits the heads: one point per ordered pair of the 3 members, 6 in all")


def _sizes(arch: Architecture) -> dict:
    """The case's sizes; ``b = [0]`` stands for V unfactored (the report sorts sizes, and None does not sort)."""
    return {**sizes_of(arch), "b": list(arch.value_ranks or [0])}


def _arch(d, a, h, b, flags) -> Architecture:
    return Architecture((d, d), (a,), tokens=2, heads=h, value_ranks=b, **flags)


def explain(arch: Architecture, points: int) -> str | None:
    """The known hidden symmetry that accounts for ``points``, or None."""
    h, a, b, d = arch.heads[0], arch.ranks[0], arch.value_ranks, arch.widths[0]
    if a == 1 and b == (1,) and points == factorial(h) * 2**h:
        return SWAP
    if (d, a, h, b) == (3, 2, 2, None) and points == 6:
        return PENCIL
    if (d, h) == (2, 2) and (a, b) in ((1, None), (2, (1,))) and points == 12:
        return QUARTIC
    return None


def outcomes(args):
    cases = FAST + (SLOW if args.full else [])
    for k, case in enumerate(cases):
        arch = _arch(*case)
        flags = "".join(f"-{f}" for f in sorted(case[4]))
        name = f"d{case[0]}_a{case[1]}_h{case[2]}_b{case[3] or 'V'}{flags}"
        label = f"{case[0]:<3}{case[1]:<3}{case[2]:<3}{str(case[3] or '-'):<3}{','.join(sorted(case[4])) or '-':<10}"
        unknowns = arch.parameter_count - len(gauge(arch))
        dim = certify_dimension(arch, seed=args.seed)
        if dim.dimension is not None and dim.dimension < unknowns:
            P = arch.parameter_count
            at_point = dim.lower_witness.get("point") is not None \
                and dim.lower_witness.get("point") == dim.upper_witness.get("point")
            row = (f"{label}{unknowns:>5}{'':>6}{'':>6}{'':>8}  positive-dimensional: dim(fiber n slice) >= "
                   f"{unknowns} - dim M = {unknowns - dim.dimension} (certified dim M = {dim.dimension}; generic "
                   f"fibers of dimension P - dim M = {P - dim.dimension}"
                   + ("; smooth of that dimension at the witness point, spanned by the fields" if at_point else "")
                   + "; no elimination)")
            yield CaseOutcome(f"{name}_dimension", dim, row, entries=[Entry(SPAN.key, _sizes(arch), "certified")])
            continue
        for p in range(args.points or (2 if args.full else 1)):
            seed = args.seed + 100 * k + p
            try:
                fib = deep_fiber(arch, seed=seed, engine=args.engine, timeout=args.timeout)
            except (EngineFailed, EngineUnavailable) as exc:
                row = f"{label}{unknowns:>5}  out of reach: {exc}"
                yield CaseOutcome(f"{name}_s{seed}", None, row, entries=[Entry(ORBIT.key, _sizes(arch), "undecided")])
                continue
            row = (f"{label}{unknowns:>5}{str(fib.solutions):>6}{fib.permutations:>6}{fib.seconds:>8.2f}  "
                   + fib.verdict)
            if not fib.certified or fib.solutions is None:
                yield CaseOutcome(f"{name}_s{seed}", fib, row, entries=[Entry(ORBIT.key, _sizes(arch), "undecided")])
                continue
            n = fib.fiber_points
            if n == fib.permutations == factorial(arch.heads[0]):
                yield CaseOutcome(f"{name}_s{seed}", fib, row, entries=[Entry(ORBIT.key, _sizes(arch), "certified")])
                continue
            why = explain(arch, n)
            finding = (f"{arch}: the fiber meets the gauge slice in {n} points, {fib.permutations} of them head "
                       f"permutations" + (f" ({why})" if why else " (not explained here)"))
            entry = Entry(ORBIT.key, _sizes(arch), "refuted", "a random point",
                          f"{n} points in the gauge slice", f"{fib.permutations} points")
            yield CaseOutcome(f"{name}_s{seed}", fib, row, finding=finding, entries=[entry])


def main() -> int:
    parser = proof_parser(__doc__.splitlines()[0], "certificates/multihead_fibers",
                          full="also the 3-head eliminations on 3 -> 3 (minutes each)")
    parser.add_argument("--points", type=int, default=None,
                        help="random points per architecture (default 1; 2 with --full)")
    parser.add_argument("--engine", default="auto", help="Groebner engine (default: msolve when installed)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per elimination (default 120)")
    args = parser.parse_args()
    header = f"{'d':<3}{'a':<3}{'h':<3}{'b':<3}{'flags':<10}{'vars':>5}{'sols':>6}{'perms':>6}{'seconds':>8}  verdict"
    code = run_cases("Multi-head fibers: the orbit of the group and the head permutations, or more", header,
                     outcomes(args), args, [ORBIT, SPAN])
    return code


if __name__ == "__main__":
    main_guard(main)
