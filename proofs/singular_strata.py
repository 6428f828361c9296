"""Certify the (rank A, rank V) stratification of single-layer neuromanifolds, and cross-check it.

Statement ([HMK] section 3, docs/math.md §2.4), t >= 2: the singular points are
those with rank(A) rank(V) <= 1. Grid: d <= 4, d' <= 3, a <= d. For every
stratum: its image dimension (exact Jacobian rank = dim S - 1) and its label
(singular on the whole stratum / smooth on a dense open part), certified by
attngeo.strata (docs/singular.md section 4). For d = 2, d' <= 2 (and 3,1, a = 1) the implicit equations
of M are computed too (attngeo.implicit) and decide what the tangent criteria
leave open; their Jacobian at every stratum point must agree with each
certified label, and where the Jacobian criterion is small enough (codimension
1, or few minors) the dimension of Sing M it gives must equal that of the
largest singular stratum. Disagreements with [HMK]'s statement are printed as findings;
exit 1 only when a certificate fails or the two routes disagree.
"""

from attngeo import Architecture
from attngeo.exceptions import AttngeoError
from attngeo.implicit import coordinates_of, implicit_equations_if_available
from attngeo.proof import Outcome, main_guard, proof_arguments, run_cases
from attngeo.strata import stratify


def _point(st):
    return [[st.verdict["preimage_weights"][0][i] for i in range(3)]] if st.verdict else None


def outcomes(seed):
    for d in range(2, 5):
        for dd in range(1, 4):
            for a in range(1, d + 1):
                arch = Architecture((d, dd), (a,), tokens=2)
                eq = implicit_equations_if_available(arch, seed) if (d == 2 and dd <= 2) or (d, dd, a) == (3, 1, 1) else None
                if eq is not None:
                    yield Outcome(f"d{d}_dd{dd}_a{a}_implicit", eq,
                                  f"{d:>2}{dd:>4}{a:>3}  implicit: {len(eq.equations)} equations, degrees "
                                  f"{sorted(set(eq.summary()['degrees']))}, generates I(M): {eq.generates}, "
                                  f"complete through degree {eq.complete_through}")
                strata = stratify(arch, seed=seed, equations=eq)
                differs = []
                if eq is not None:  # the Jacobian of the equations at each stratum point
                    for st in strata.strata:
                        if st.label in ("singular", "smooth") and st.verdict.get("implicit_certificate") is None:
                            other = eq.point_verdict(coordinates_of(arch, _point(st)))
                            if other != st.label:
                                differs.append(f"{st.name}: tangents say {st.label}, equations say {other}")
                if eq is not None:  # Sing M from the Jacobian criterion, against the largest singular stratum
                    try:
                        sing = eq.singular_locus().dimension()
                    except AttngeoError:
                        sing = None
                    largest = max(st.dimension for st in strata.strata if st.label == "singular")
                    if sing is not None and sing != largest:
                        differs.append(f"dim Sing M = {sing} from the equations, {largest} from the strata")
                findings = [f"d={d}, d'={dd}, a={a}: stratum {st.name} is certified {st.label}, [HMK]'s "
                            f"rank A * rank V <= 1 says {'singular' if st.hmk_singular() else 'smooth'}"
                            for st in strata.disagreements()]
                labels = " ".join(f"{st.name}:{st.label[:4]}{'' if st.certified else '?'}" for st in strata.strata)
                row = f"{d:>2}{dd:>4}{a:>3}  {labels}" + (f"  ROUTES DIFFER: {differs}" if differs else "")
                yield Outcome(f"d{d}_dd{dd}_a{a}_strata", strata, row, bool(differs),
                              "; ".join(findings) if findings else None)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/singular_strata")
    header = f"{'d':>2}{'dd':>4}{'a':>3}  strata (rank A, rank V): label (? = not certified)"
    return run_cases("[HMK] singular locus by strata, with implicit equations at d = 2", header,
                     outcomes(args.seed), args)


if __name__ == "__main__":
    main_guard(main)
