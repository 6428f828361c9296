"""Certify the dimension of deep softmax-attention networks against [HMK]'s Conjecture 3.10.

Conjecture ([HMK] Conj. 3.10, docs/math.md §4.2): deep normalized networks are
generically one-to-one in the virtual weights, so with equal widths d, ranks
a <= d and t >= 2, dim M = l a (2d - a) + d^2 (the lightning dimension + l).
[HMK] supported it with floating-point Jacobian ranks for l = 2, t = 3, a = 2,
d = delta = 3..10; here each of those cases gets a certificate (a Jacobian minor
whose determinant ball excludes 0, and the GL(a_i) x GL(d_i) orbit as upper
bound), and so do l = 3 networks with small widths (d = 2, 3; ``--full``: also
d = 4, which alone takes more CPU than the rest). A gap between the bounds is
reported as bounds; a certified value off the conjecture would be a finding (it
is a conjecture, so the script does not fail on it). The figure (certified and
conjectured dimension against delta, like [HMK]'s Figure 3) is written to
OUT/figure3.png when matplotlib is installed (pip install 'attngeo[plot]'),
and printed as a table otherwise.
"""

from pathlib import Path

from attngeo import Architecture
from attngeo.model.formulas import hmk_formula
from attngeo.theorems.proof import INSTANCES, Case, Claim, main_guard, proof_arguments, run_dimension_proof

CONJECTURE = r"$\dim \mathcal M = l\,a(2d - a) + d^2$"
PAPER = Claim("paper family", rf"{CONJECTURE} on [HMK]'s experiment family (their Figure 3)", INSTANCES, sizes="depth")
THREE_LAYERS = Claim("three layers", rf"{CONJECTURE} for three layers", INSTANCES, sizes="depth")

FAMILY = range(3, 11)


def cases(full: bool = False):
    for delta in FAMILY:  # the paper's experiment
        arch = Architecture((delta,) * 3, (2, 2), 3, "softmax")
        yield Case(arch, True, hmk_formula(arch).value, conjecture=True, claim=PAPER.key)
    for d in (2, 3, 4) if full else (2, 3):
        for a in range(1, min(d, 3) + 1):
            arch = Architecture((d,) * 4, (a,) * 3, 2, "softmax")
            yield Case(arch, True, hmk_formula(arch).value, conjecture=True, claim=THREE_LAYERS.key)


def figure(results, out: Path) -> None:
    rows = [(c.arch.widths[0], cert.lower, cert.upper, c.formula) for c, cert in results
            if c.arch.depth == 2 and c.arch.tokens == 3]
    print("\nFigure 3 (l = 2, t = 3, a = 2): delta, certified dimension (or bounds), Conj. 3.10")
    for delta, lo, up, conj in rows:
        print(f"  delta = {delta:>2}: {lo if lo == up else f'{lo}..{up}':>9}   conjecture {conj}")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib is not installed: table only; pip install 'attngeo[plot]' for the PNG)")
        return
    fig, ax = plt.subplots(figsize=(5, 3.5))
    ax.plot([r[0] for r in rows], [r[3] for r in rows], "k--", label="Conj. 3.10: 2a(2δ−a) + δ²")
    ax.plot([r[0] for r in rows], [r[1] for r in rows], "o", label="certified lower bound")
    ax.plot([r[0] for r in rows], [r[2] for r in rows], "x", label="certified upper bound")
    ax.set_xlabel("δ (all widths)")
    ax.set_ylabel("dim M")
    ax.set_title("softmax attention, l = 2, t = 3, a = 2")
    ax.legend()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figure3.png", dpi=120, bbox_inches="tight")
    print(f"figure: {out / 'figure3.png'}")


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/softmax_deep", full="three layers at d = 4 too")
    results = []
    code = run_dimension_proof("[HMK] Conjecture 3.10, softmax networks", list(cases(args.full)), args, results,
                               [PAPER, THREE_LAYERS])
    figure(results, Path(args.out))
    return code


if __name__ == "__main__":
    main_guard(main)
