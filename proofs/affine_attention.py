"""Certify what the biases of an attention layer add to its dimension (docs/math.md §8.1, Lemma B).

Statement: for one softmax layer, the key bias is invisible (softmax cancels a per-query constant) and
each value bias merges with the output bias (the weights of a query sum to 1), so
``dim M(biases) = dim M(no biases) + h a + d'`` (the query biases and the output constant); for one
lightning layer nothing cancels, and every bias parameter adds one dimension when ``h a <= d``:
``dim M(biases) = dim M(no biases) + h a + g (a + b) + d'`` (with ``h a > d`` they can add more: the
constant row breaks the mixing of heads, a finding the script reports). Both dimensions of each pair are certified
(Theorem C at the selector point where it applies, else a Jacobian minor and the explicit kernel at a
random point; the bias-free lightning layer by the usual witnesses), and their difference compared.
Grid: ``d, d' <= 3`` (``--full``: 5), ``a, b <= 2``, one or two heads (grouped-query included), ``t = 2``.
Exit 1 if a certified difference is not the stated one.
"""

from attngeo import Architecture, certify_dimension
from attngeo.theorems.proof import INSTANCES, CaseOutcome, Claim, Entry, main_guard, proof_arguments, run_cases

SOFTMAX = Claim("softmax", r"softmax: $\dim \mathcal M_{\text{biases}} = \dim \mathcal M + h a + d'$ "
                r"(key bias invisible, value bias merged into the output bias)")
LIGHTNING = Claim("lightning", r"lightning, $h a \le d$: $\dim \mathcal M_{\text{biases}} = \dim \mathcal M + h a + "
                  r"g(a + b) + d'$ (every bias seen)")
WIDE = Claim("wide", r"lightning, $h a > d$: the certified difference, which can exceed the number of bias "
             r"parameters (the constant row breaks the mixing of heads that $a \ge d$ allows, docs/math.md \S 7.3)",
             INSTANCES)


def shapes(full: bool):
    top = 5 if full else 3
    for d in range(2, top + 1):
        for dd in range(2, top + 1):
            for a in (1, 2):
                for h, g, b in ((1, 1, None), (1, 1, 1), (2, 2, 1), (2, 1, 1), (2, 2, 2), (2, 1, 2)):
                    if b is not None and b > min(d, dd) or a > d:
                        continue
                    yield d, dd, a, h, g, b


def outcomes(full: bool, seed: int):
    for d, dd, a, h, g, b in shapes(full):
        for norm, claim in (("softmax", SOFTMAX), ("lightning", LIGHTNING)):
            kw = dict(tokens=2, normalization=norm, heads=h, kv_heads=g, value_ranks=b)
            plain, affine = Architecture((d, dd), (a,), **kw), Architecture((d, dd), (a,), biases=True, **kw)
            base, full_cert = certify_dimension(plain, seed=seed), certify_dimension(affine, seed=seed)
            bb = dd if b is None else b
            added = h * a + dd if norm == "softmax" else h * a + g * (a + bb) + dd
            if norm == "lightning" and h * a > d:
                claim = WIDE
            sizes = {"d": d, "d'": dd, "a": a, "h": h, "g": g, "b": b, "t": 2}
            name = f"{norm}_d{d}_{dd}_a{a}_h{h}_g{g}_b{b}"
            if not (base.certified and full_cert.certified):
                status, failed = "bounds", False
                row = f"{name:<40} bounds: {base.lower}..{base.upper} / {full_cert.lower}..{full_cert.upper}"
            else:
                diff = full_cert.dimension - base.dimension
                status, failed = ("certified", False) if diff == added or claim is WIDE else ("refuted", True)
                stated = f"{added} bias parameters" if claim is WIDE else f"stated +{added}"
                row = f"{name:<40} {base.dimension:>5} -> {full_cert.dimension:>5}  (+{diff}, {stated})"
            entry = Entry(claim.key, sizes, status, "", f"difference {full_cert.lower - base.upper}",
                          f"difference {added}")
            for cert, suffix in ((base, "plain"), (full_cert, "biases")):
                finding = None
                if failed:
                    finding = f"{name}: the biases add {full_cert.lower - base.lower}, not {added}"
                elif claim is WIDE and full_cert.certified and base.certified and \
                        full_cert.dimension - base.dimension != added:
                    finding = (f"lightning, h a > d: the biases add {full_cert.dimension - base.dimension} dimensions "
                               f"with {added} parameters at d = {d}, a = {a}, h = {h} (the mixing of heads is broken)")
                yield CaseOutcome(f"{name}_{suffix}", cert, row if suffix == "biases" else f"{name} (no biases)",
                                  failed and suffix == "biases", finding if suffix == "biases" else None,
                                  [entry] if suffix == "biases" else [])


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/affine_attention", full="d, d' = 5 too")
    return run_cases("what biases add to one attention layer", f"{'layer':<40} dim M -> with biases",
                     outcomes(args.full, args.seed), args, claims=[SOFTMAX, LIGHTNING, WIDE])


if __name__ == "__main__":
    main_guard(main)
