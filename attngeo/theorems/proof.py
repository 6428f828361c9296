"""Shared machinery of the proof scripts in ``proofs/``.

A proof script lists cases (an architecture and whether it lies inside the
hypotheses of the statement being certified); :func:`run_dimension_proof`
certifies each, writes its certificate, re-verifies it with the independent
checker, prints a table and returns the exit code: non-zero exactly when a case
inside the hypotheses fails to certify or disagrees with the formula.

Each script also says what it established, claim by claim (:class:`Claim`):
every case adds an :class:`Entry` (certified, bounds, undecided, refuted with
the counterexample, failed) and the script ends with one line
``summary: {json}`` -- the claims, their counts, the range of sizes computed
from the cases themselves (:func:`scope`) and the counterexamples. ``attngeo
certify`` reads that line (:mod:`attngeo.theorems.report`), so every number the report
prints is one a script counted.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass, field

from ..model.architecture import Architecture
from ..geometry.certificate import make_folder
from ..check import check_certificate
from ..geometry.dimension import certify_dimension
from ..exceptions import AttngeoError
from ..model.formulas import naive_count


#: A claim's cases each settle it for their size (a dimension is a property of the
#: architecture): certifying every size of a range certifies the claim on that range.
RANGE = "range"
#: A claim's cases are samples (points, or the values a conjecture predicts): certified
#: instances, no proof of the claim beyond them.
INSTANCES = "instances"
STATUSES = ("certified", "bounds", "undecided", "refuted", "failed")


@dataclass(frozen=True)
class Claim:
    """One claim a proof script tests; the report prints one result per claim."""

    key: str  # short plain name, unique within the script
    latex: str  # the claim in LaTeX text (math inside $...$)
    mode: str = RANGE
    unit: str = "architectures"  # what one case is: architectures, points, strata
    sizes: str = "auto"  # how its cases' sizes are named: see sizes_of


@dataclass
class Entry:
    """One case's contribution to a claim."""

    claim: str  # Claim.key
    sizes: dict  # sizes_of(arch), or the sizes the case stands for
    status: str  # one of STATUSES
    at: str = ""  # LaTeX text: where in the case a counterexample sits (a point, a stratum)
    certified: str = ""  # LaTeX text: what is certified there
    claimed: str = ""  # LaTeX text: what the claim says there


def sizes_of(arch: Architecture, form: str = "auto") -> dict:
    """The sizes of an architecture as statements name them (one form for all the cases of a claim).

    ``auto``: ``d, d', a, t`` for one layer, ``l, d, a, t`` for equal widths and
    ranks, else the width and rank tuples; ``depth``: ``l, d, a, t`` even for one
    layer; ``tuples``: always the width and rank tuples.
    """
    w, a, t = arch.widths, arch.ranks, arch.tokens
    uniform = len(set(w)) == 1 and len(set(a)) == 1
    if form == "tuples" or (not uniform and (form == "depth" or arch.depth > 1)):
        return {"d": list(w), "a": list(a), "t": t}
    if arch.depth == 1 and form != "depth":
        return {"d": w[0], "d'": w[1], "a": a[0], "t": t}
    return {"l": arch.depth, "d": w[0], "a": a[0], "t": t}


def _key(v):
    return tuple(v) if isinstance(v, list) else v


def scope(sizes: list[dict]) -> dict:
    """The range of sizes a list of cases covers, exactly.

    Each parameter that varies independently of the others becomes a factor
    (its set of values); ``a`` against ``d`` becomes a relation when the pairs
    are exactly ``min <= a <= d + k`` or ``a = d + k``; whatever remains is
    listed. ``count`` is the number of distinct sizes.

    >>> s = scope([{"d": d, "a": a, "t": 2} for d in (1, 2, 3) for a in range(1, d + 2)])
    >>> s["factors"]
    [{'name': 'd', 'values': [1, 2, 3]}, {'name': 't', 'values': [2]}]
    >>> s["relation"]
    {'name': 'a', 'of': 'd', 'min': 1, 'offset': 1}
    """
    distinct = list({tuple((k, _key(v)) for k, v in p.items()): p for p in sizes}.values())
    out = {"count": len(distinct), "factors": []}
    if not distinct:
        return out
    names = list(distinct[0])
    position = {k: i for i, k in enumerate(names)}
    if any(list(p) != names for p in distinct):
        out["list"] = {"names": sorted({k for p in distinct for k in p}), "rows": []}
        out["list"]["rows"] = [[p.get(k) for k in out["list"]["names"]] for p in distinct]
        return out
    rows = {tuple(_key(p[k]) for k in names) for p in distinct}
    factors = {}
    for k in list(names):
        i = names.index(k)
        values = sorted({r[i] for r in rows})
        rest = {r[:i] + r[i + 1:] for r in rows}
        if len(values) * len(rest) == len(rows):  # rows = values x rest
            factors[k] = values
            names.pop(i)
            rows = rest
    if names == ["d", "a"] and all(isinstance(x, int) for r in rows for x in r):
        ds = sorted({d for d, _ in rows})
        diffs = {a - d for d, a in rows}
        if len(diffs) == 1 and len(rows) == len(ds):
            out["relation"] = {"name": "a", "of": "d", "offset": diffs.pop(), "equal": True}
        else:
            lo, k = min(a for _, a in rows), max(a - d for d, a in rows)
            if rows == {(d, a) for d in ds for a in range(lo, d + k + 1)}:
                out["relation"] = {"name": "a", "of": "d", "min": lo, "offset": k}
        if "relation" in out:
            factors["d"], names, rows = ds, [], set()
    out["factors"] = [{"name": k, "values": [list(v) if isinstance(v, tuple) else v for v in factors[k]]}
                      for k in sorted(factors, key=position.get)]
    if names:
        out["list"] = {"names": names,
                       "rows": [[list(x) if isinstance(x, tuple) else x for x in r] for r in sorted(rows)]}
    return out


def summary(claims, entries: list[Entry], notes=()) -> dict:
    """What the script established, claim by claim (claims without a case are left out)."""
    keys = {c.key for c in claims}
    stray = {e.claim for e in entries} - keys
    if stray:
        raise ValueError(f"entries for claims the script did not declare: {sorted(stray)}")
    parts = []
    for c in claims:
        mine = [e for e in entries if e.claim == c.key]
        if mine:
            parts.append({"key": c.key, "latex": c.latex, "mode": c.mode, "unit": c.unit, "cases": len(mine),
                          **{s: sum(e.status == s for e in mine) for s in STATUSES},
                          "scope": scope([e.sizes for e in mine]),
                          "counterexamples": [{"sizes": e.sizes, "at": e.at, "certified": e.certified,
                                               "claimed": e.claimed} for e in mine if e.status == "refuted"]})
    return {"parts": parts, "notes": list(dict.fromkeys(notes))}


def print_summary(claims, entries: list[Entry], notes=(), extra: dict | None = None) -> None:
    """One plain line per claim, then the ``summary: {json}`` line attngeo certify reads."""
    data = summary(claims, entries, notes)
    for p in data["parts"]:
        counts = ", ".join(f"{p[s]} {s}" for s in STATUSES if p[s])
        print(f"claim {p['key']}: {p['cases']} {p['unit']} ({counts})")
    print("summary: " + json.dumps({**data, **(extra or {})}, separators=(",", ":")))


@dataclass(frozen=True)
class Case:
    arch: Architecture
    in_hypotheses: bool
    formula: int | None  # the value the statement predicts, or None
    conjecture: bool = False  # the formula is a conjecture: a disagreement is a finding, not a failure
    claim: str = ""  # the Claim.key this case tests


def _name(arch: Architecture) -> str:
    w = "-".join(map(str, arch.widths))
    a = "-".join(map(str, arch.ranks))
    return f"w{w}_a{a}_t{arch.tokens}"


def proof_arguments(description: str, default_out: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=default_out, help=f"certificate folder (default {default_out})")
    parser.add_argument("--seed", type=int, default=2025, help="seed for points, inputs and primes")
    parser.add_argument("--no-check", action="store_true", help="skip re-verifying each certificate")
    return parser.parse_args()


def run_dimension_proof(title: str, cases: list[Case], args: argparse.Namespace, results: list | None = None,
                        claims=()) -> int:
    """Certify every case, print a table and the summary, return the exit code.

    ``results`` collects ``(case, cert)``; ``claims`` are the :class:`Claim` the
    cases name (a certified value off the case's formula refutes its claim).
    """
    out = make_folder(args.out)
    forms = {c.key: c.sizes for c in claims}
    print(title)
    header = f"{'widths':<14}{'ranks':<9}{'t':>2}{'P':>6}{'lower':>7}{'upper':>7}{'naive':>7}{'formula':>8}  status"
    print(header)
    print("-" * len(header))
    failures, entries = [], []
    stats = {"certified": 0, "bounds": 0, "agree": 0, "disagree": 0, "naive_fails": 0}
    start = time.perf_counter()
    for k, case in enumerate(cases):
        arch = case.arch
        sizes = sizes_of(arch, forms.get(case.claim, "auto"))
        try:
            cert = certify_dimension(arch, seed=args.seed + k)
            cert.save(out / f"{_name(arch)}.json")
            if not args.no_check:
                check_certificate(cert.to_json())
        except AttngeoError as exc:
            failures.append(f"{arch}: {exc}")
            entries.append(Entry(case.claim, sizes, "failed"))
            print(f"{arch}: ERROR {exc}")
            continue
        if results is not None:
            results.append((case, cert))
        naive = naive_count(arch)
        entry = Entry(case.claim, sizes, "certified" if cert.certified else "bounds")
        if cert.certified:
            stats["certified"] += 1
            status = "certified"
            if naive != cert.dimension:
                stats["naive_fails"] += 1
                status += f", naive count {naive} fails"
        else:
            stats["bounds"] += 1
            status = f"bounds only (gap {cert.gap})"
        if case.formula is not None and cert.certified:
            if case.formula == cert.dimension:
                stats["agree"] += 1
                status += ", = formula"
            else:
                stats["disagree"] += 1
                status += ", DISAGREES with formula"
                entry = Entry(case.claim, sizes, "refuted", "", rf"$\dim \mathcal M = {cert.dimension}$",
                              rf"$\dim \mathcal M = {case.formula}$")
        entries.append(entry)
        if case.conjecture:
            status += " [conjecture]"
        elif not case.in_hypotheses:
            status += " [outside hypotheses]"
        elif not cert.certified or (case.formula is not None and case.formula != cert.dimension):
            failures.append(f"{arch}: {status}")
        w, a = ",".join(map(str, arch.widths)), ",".join(map(str, arch.ranks))
        formula = "-" if case.formula is None else str(case.formula)
        print(f"{w:<14}{a:<9}{arch.tokens:>2}{arch.parameter_count:>6}{cert.lower:>7}{cert.upper:>7}{naive:>7}{formula:>8}  {status}")
    seconds = time.perf_counter() - start
    print("-" * len(header))
    print(
        f"{len(cases)} cases in {seconds:.1f} s: {stats['certified']} certified, {stats['bounds']} bounds only; "
        f"formula agrees {stats['agree']}, disagrees {stats['disagree']}; naive count fails {stats['naive_fails']}"
    )
    print(f"certificates: {out}/" + ("" if args.no_check else " (each re-verified by the independent checker)"))
    notes = []
    if stats["naive_fails"]:
        notes.append(f"The naive count (parameters minus the dimension of the symmetry group) differs from the "
                     f"certified dimension at {stats['naive_fails']} of the {stats['certified']} architectures "
                     "whose dimension is certified.")
    print_summary(claims, entries, notes)
    if failures:
        print(f"FAILED inside the hypotheses ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    return 0


def main_guard(run) -> None:
    """Run a proof script's body and exit with its code (2 on bad input)."""
    try:
        sys.exit(run())
    except AttngeoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


@dataclass
class CaseOutcome:
    """What one case of a proof script established: a certificate and a table row."""

    name: str
    certificate: object  # has save() and to_json(); None when the case is out of reach
    row: str
    failed: bool = False
    finding: str | None = None  # plain text, printed as "finding: ..."
    entries: list[Entry] = field(default_factory=list)  # what the case adds to each claim
    note: str | None = None  # LaTeX text for the report (math inside $...$)


def run_cases(title: str, header: str, outcomes, args: argparse.Namespace, claims=(), extra=None) -> int:
    """Save and re-check each outcome's certificate, print the table and the summary, return the exit code.

    ``outcomes`` yields :class:`CaseOutcome` (or raises :class:`AttngeoError` for a
    case, which then counts as a failure). A certificate the checker rejects
    turns the case's entries into failures. ``extra`` (called once the cases are
    done) returns more fields for the summary line.
    """
    out = make_folder(args.out)
    print(title)
    print(header)
    print("-" * len(header))
    failures, findings, count, entries, notes = [], [], 0, [], []
    start = time.perf_counter()
    it = iter(outcomes)
    while True:
        try:
            o = next(it)
        except StopIteration:
            break
        except AttngeoError as exc:
            failures.append(str(exc))
            print(f"ERROR {exc}")
            continue
        count += 1
        if o.certificate is not None:
            o.certificate.save(out / f"{o.name}.json")
            if not args.no_check:
                try:
                    check_certificate(o.certificate.to_json())
                except AttngeoError as exc:
                    o.failed, o.row = True, o.row + f"  CHECK FAILED: {exc}"
                    o.entries = [Entry(e.claim, e.sizes, "failed") for e in o.entries]
        print(o.row)
        entries += o.entries
        if o.failed:
            failures.append(o.row)
        if o.finding:
            findings.append(o.finding)
        if o.note:
            notes.append(o.note)
    print("-" * len(header))
    print(f"{count} cases in {time.perf_counter() - start:.1f} s; certificates: {out}/"
          + ("" if args.no_check else " (each re-verified by the independent checker)"))
    for f in sorted(set(findings)):
        print("finding: " + f)
    print_summary(claims, entries, notes, extra() if extra else None)
    if failures:
        print(f"FAILED ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    return 0
