"""Certify the (rank A, rank V) stratification of single-layer neuromanifolds, and cross-check it.

Statement ([HMK] section 3, docs/math.md §2.4), t >= 2: the singular points are
those with rank(A) rank(V) <= 1. Grid: d <= 3 (``--full``: d <= 4), d' <= 3, a <= d. For every
stratum: its image dimension (exact Jacobian rank = dim S - 1) and its label
(singular on the whole stratum / smooth on a dense open part), certified by
attngeo.geometry.loci.strata (docs/singular.md section 4). For d = 2, d' <= 2 (and 3,1, a = 1) the implicit equations
of M are computed too (attngeo.geometry.loci.implicit) and decide what the tangent criteria
leave open; their Jacobian at every stratum point must agree with each
certified label, and where the Jacobian criterion is small enough (codimension
1, or few minors) the dimension of Sing M it gives must equal that of the
largest singular stratum. Disagreements with [HMK]'s statement are printed as findings
and, in the summary, as counterexamples of the criterion region by region
(attngeo.theorems.registry.SINGULAR_REGIONS); the summary also carries, for each region, the
closure graph of one architecture's strata with their labels (the largest one whose
strata are all decided). Exit 1 only when a certificate fails or the two routes disagree.
"""

from attngeo import Architecture
from attngeo.exceptions import AttngeoError
from attngeo.geometry.loci.implicit import coordinates_of, implicit_equations_if_available
from attngeo.latex import stratum, tex_escape
from attngeo.theorems.proof import RANGE, Claim, Entry, CaseOutcome, main_guard, proof_arguments, run_cases, sizes_of
from attngeo.geometry.loci.strata import stratify
from attngeo.theorems.registry import HMK_SINGULAR, SINGULAR_REGIONS, singular_region

CRITERION = {key: Claim(f"strata, {key}", rf"{HMK_SINGULAR} for {region}, tested on every stratum (certified label: "
                        r"singular on the whole stratum, smooth at its generic point)", RANGE, "strata")
             for key, region in SINGULAR_REGIONS.items()}
BELOW_A = Claim("rank A < a", r"for $1 < a < d$, every stratum with $0 < \operatorname{rank} A < a$ is singular",
                RANGE, "strata")
ROUTES = Claim("routes agree", r"the implicit equations of $\mathcal M$ and the tangent criteria give the same label "
               r"at every stratum point, and the same $\dim \operatorname{Sing} \mathcal M$ where both compute it",
               RANGE)
DECIDED = ("singular", "smooth")


def stratum_entries(arch, strata) -> list[Entry]:
    """Each stratum's label against [HMK]'s criterion, and against "rank A < a is singular" for 1 < a < d."""
    d, dd = arch.widths
    a = arch.ranks[0]
    sizes, out = sizes_of(arch), []
    for st in strata.strata:
        hmk = "singular" if st.hmk_singular() else "smooth"
        claim = CRITERION[singular_region(d, dd, a)].key
        at = f"${stratum(st.rank_A, st.rank_V)}$"
        if st.label not in DECIDED:
            out.append(Entry(claim, sizes, "undecided"))
        else:
            out.append(Entry(claim, sizes, "certified") if st.label == hmk else
                       Entry(claim, sizes, "refuted", at, st.label, hmk))
        if 1 < a < d and 0 < st.rank_A < a:
            status = "certified" if st.label == "singular" else "refuted" if st.label == "smooth" else "undecided"
            out.append(Entry(BELOW_A.key, sizes, status, *((at, st.label, "singular") if status == "refuted" else ())))
    return out


def closure_graph(arch, strata) -> dict:
    """The strata, their labels and cover relations (edges towards the boundary), for the report's figure."""
    return {"sizes": sizes_of(arch), "region": singular_region(*arch.widths, arch.ranks[0]),
            "nodes": [{"name": st.name, "rank_A": st.rank_A, "rank_V": st.rank_V, "label": st.label,
                       "hmk": "singular" if st.hmk_singular() else "smooth"} for st in strata.strata],
            "edges": [list(e) for e in sorted(strata.graph.edges())]}


def _point(st):
    return [[st.verdict["preimage_weights"][0][i] for i in range(3)]] if st.verdict else None


def outcomes(seed, figures: dict, full: bool = False):
    for d in range(2, 5 if full else 4):
        for dd in range(1, 4):
            for a in range(1, d + 1):
                arch = Architecture((d, dd), (a,), tokens=2)
                eq = implicit_equations_if_available(arch, seed) if (d == 2 and dd <= 2) or (d, dd, a) == (3, 1, 1) else None
                if eq is not None:
                    yield CaseOutcome(f"d{d}_dd{dd}_a{a}_implicit", eq,
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
                entries = stratum_entries(arch, strata)
                if eq is not None:
                    entries.append(Entry(ROUTES.key, sizes_of(arch), "refuted", tex_escape("; ".join(differs)),
                                         "they differ", "the same") if differs
                                   else Entry(ROUTES.key, sizes_of(arch), "certified"))
                region = singular_region(d, dd, a)
                rank = (all(st.label in DECIDED for st in strata.strata), len(strata.strata))
                if region not in figures or rank >= figures[region][0]:
                    figures[region] = (rank, closure_graph(arch, strata))
                yield CaseOutcome(f"d{d}_dd{dd}_a{a}_strata", strata, row, bool(differs),
                              "; ".join(findings) if findings else None, entries)


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/singular_strata", full="also d = 4")
    header = f"{'d':>2}{'dd':>4}{'a':>3}  strata (rank A, rank V): label (? = not certified)"
    figures = {}
    return run_cases("[HMK] singular locus by strata, with implicit equations at d = 2", header,
                     outcomes(args.seed, figures, args.full), args, [*CRITERION.values(), BELOW_A, ROUTES],
                     lambda: {"figures": [figures[k][1] for k in SINGULAR_REGIONS if k in figures]})


if __name__ == "__main__":
    main_guard(main)
