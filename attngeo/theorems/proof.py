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
from ..geometry.dimension.dense import certify_dimension
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
    """One claim a proof script tests; the report prints one result per claim.

    Attributes
    ----------
    key : str
        Short plain name, unique within the script.
    latex : str
        The claim in LaTeX text (math inside ``$...$``).
    mode : str
        :data:`RANGE` (each case settles the claim for its size) or
        :data:`INSTANCES` (cases are samples).
    unit : str
        What one case is: ``architectures``, ``points``, ``strata``.
    sizes : str
        How the cases' sizes are named (:func:`sizes_of`).

    Examples
    --------
    >>> from attngeo.theorems.proof import INSTANCES, Claim
    >>> c = Claim("swap", r"two lines at rank-1 swap points", mode=INSTANCES, unit="points")
    >>> c.mode, c.sizes
    ('instances', 'auto')
    """

    key: str  # short plain name, unique within the script
    latex: str  # the claim in LaTeX text (math inside $...$)
    mode: str = RANGE
    unit: str = "architectures"  # what one case is: architectures, points, strata
    sizes: str = "auto"  # how its cases' sizes are named: see sizes_of


@dataclass
class Entry:
    """One case's contribution to a claim: its sizes and status (and, if refuted, where and why).

    Examples
    --------
    A certified dimension other than the claimed one is a refutation, with both values:

    >>> from attngeo.theorems.proof import Entry
    >>> e = Entry("single", {"d": 2, "d'": 2, "a": 1, "t": 2}, "refuted", "", "$M$ has dimension 6",
    ...           "$M$ has dimension 7")
    >>> e.status, e.certified, e.claimed
    ('refuted', '$M$ has dimension 6', '$M$ has dimension 7')
    """

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

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.theorems.proof import sizes_of
    >>> sizes_of(Architecture((3, 2), (1,), tokens=2))
    {'d': 3, "d'": 2, 'a': 1, 't': 2}
    >>> sizes_of(Architecture((3, 3, 3), (2, 2), tokens=2))
    {'l': 2, 'd': 3, 'a': 2, 't': 2}
    >>> sizes_of(Architecture((3, 3), (2,), tokens=2), "depth"), sizes_of(Architecture((3, 2, 2), (1, 2), tokens=2))
    ({'l': 1, 'd': 3, 'a': 2, 't': 2}, {'d': [3, 2, 2], 'a': [1, 2], 't': 2})
    """
    w, a, t = arch.widths, arch.ranks, arch.tokens
    if not arch.is_plain:  # heads, value ranks, residual, causal: every feature is a size
        b = None if arch.value_ranks is None else list(arch.value_ranks)
        return {"d": list(w), "a": list(a), "h": list(arch.heads), "b": b, "residual": arch.residual,
                "causal": arch.causal, "t": t}
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

    Parameters
    ----------
    sizes : list of dict
        One :func:`sizes_of` dict per case (repeats count once).

    Returns
    -------
    dict
        ``count``, ``factors`` (``name``, ``values``), and ``relation`` or
        ``list`` when the sizes are not a full grid.

    Examples
    --------
    Every ``d <= 3`` with every ``1 <= a <= d + 1``: ``d`` and ``t`` are
    factors, ``a`` a relation to ``d``:

    >>> from attngeo.theorems.proof import scope
    >>> s = scope([{"d": d, "a": a, "t": 2} for d in (1, 2, 3) for a in range(1, d + 2)])
    >>> s["factors"]
    [{'name': 'd', 'values': [1, 2, 3]}, {'name': 't', 'values': [2]}]
    >>> s["relation"]
    {'name': 'a', 'of': 'd', 'min': 1, 'offset': 1}

    Sizes that are no grid and no such relation are listed:

    >>> scope([{"d": 2, "a": 1}, {"d": 3, "a": 3}, {"d": 3, "a": 3}])["list"]
    {'names': ['d', 'a'], 'rows': [[2, 1], [3, 3]]}
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
        values = sorted({r[i] for r in rows}, key=lambda v: (v is not None, v))  # b is None or a list
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
                       "rows": [[list(x) if isinstance(x, tuple) else x for x in r]  # b may be None or a list
                                for r in sorted(rows, key=lambda r: tuple((x is not None, x) for x in r))]}
    return out


def summary(claims, entries: list[Entry], notes=()) -> dict:
    """What the script established, claim by claim (claims without a case are left out).

    Raises
    ------
    ValueError
        An entry names a claim the script did not declare (a script bug, not user input).

    Examples
    --------
    >>> from attngeo.theorems.proof import Claim, Entry, summary
    >>> claims = [Claim("single", "dim formula"), Claim("unused", "never tested")]
    >>> entries = [Entry("single", {"d": d, "a": 1, "t": 2}, s) for d, s in ((2, "certified"), (3, "bounds"))]
    >>> part, = summary(claims, entries)["parts"]
    >>> part["key"], part["cases"], part["certified"], part["bounds"], part["scope"]["factors"]
    ('single', 2, 1, 1, [{'name': 'd', 'values': [2, 3]}, {'name': 'a', 'values': [1]}, {'name': 't', 'values': [2]}])
    >>> summary(claims, [Entry("other", {}, "certified")])
    Traceback (most recent call last):
    ...
    ValueError: entries for claims the script did not declare: ['other']
    """
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
    """One plain line per claim, then the ``summary: {json}`` line attngeo certify reads.

    Examples
    --------
    >>> from attngeo.theorems.proof import Claim, Entry, print_summary
    >>> print_summary([Claim("single", "dim formula")],
    ...               [Entry("single", {"d": 2, "a": 1, "t": 2}, "certified")])  # doctest: +ELLIPSIS
    claim single: 1 architectures (1 certified)
    summary: {"parts":[{"key":"single","latex":"dim formula","mode":"range",...,"cases":1,"certified":1,...}
    """
    data = summary(claims, entries, notes)
    for p in data["parts"]:
        counts = ", ".join(f"{p[s]} {s}" for s in STATUSES if p[s])
        print(f"claim {p['key']}: {p['cases']} {p['unit']} ({counts})")
    print("summary: " + json.dumps({**data, **(extra or {})}, separators=(",", ":")))


@dataclass(frozen=True)
class Case:
    """One architecture a dimension proof certifies, with the value the statement predicts there.

    Attributes
    ----------
    arch : Architecture
        The architecture.
    in_hypotheses : bool
        Inside the statement's hypotheses: a failure or disagreement there fails the script.
    formula : int or None
        The predicted dimension, or None.
    conjecture : bool
        The formula is conjectured: a disagreement is a finding, not a failure.
    claim : str
        The :class:`Claim` key this case tests.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.theorems.proof import Case
    >>> d, a = 3, 2
    >>> case = Case(Architecture((d, d), (a,), tokens=2), True, 2 * a * d + d * d - a * a - 1, claim="single")
    >>> case.formula, case.conjecture
    (16, False)
    """

    arch: Architecture
    in_hypotheses: bool
    formula: int | None  # the value the statement predicts, or None
    conjecture: bool = False  # the formula is a conjecture: a disagreement is a finding, not a failure
    claim: str = ""  # the Claim.key this case tests


def _name(arch: Architecture) -> str:
    w = "-".join(map(str, arch.widths))
    a = "-".join(map(str, arch.ranks))
    if arch.is_plain:
        return f"w{w}_a{a}_t{arch.tokens}"
    return f"w{w}_a{a}_t{arch.tokens}_{variant(arch).replace(' ', '_').replace(',', '-')}_{arch.normalization}"


def variant(arch: Architecture) -> str:
    """Heads, value ranks, residual and mask in a few characters, e.g. ``h2,2 b1,1 res causal`` ('' for [HMK]'s model).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.theorems.proof import variant
    >>> variant(Architecture((3, 3, 3), (1, 2), heads=2, value_ranks=1, causal=True)), variant(Architecture((3, 3), (1,)))
    ('h2,2 b1,1 causal', '')
    """
    parts = [f"h{','.join(map(str, arch.heads))}"] if set(arch.heads) != {1} else []
    parts += [f"b{','.join(map(str, arch.value_ranks))}"] if arch.value_ranks is not None else []
    parts += [name for name in ("residual", "causal") if getattr(arch, name)]
    return " ".join(parts).replace("residual", "res")


#: ``full`` of a script with one grid: its default grid is its full grid, and the report says "full grid".
ONE_GRID = "the same grid (this script has one)"


def proof_parser(description: str, default_out: str, full: str = "") -> argparse.ArgumentParser:
    """A proof script's argument parser: ``--out``, ``--seed`` (2025), ``--no-check``, ``--full``.

    ``--full`` runs the script's full grid (``attngeo certify --full`` passes it to every script); by default
    each script runs its default grid, trimmed so that ``attngeo certify`` stays near a minute. ``full`` says
    what the full grid adds (its help text), :data:`ONE_GRID` for a script whose default grid is already its full
    grid. A script with more options adds them to this parser.

    Examples
    --------
    >>> from attngeo.theorems.proof import grid, proof_parser
    >>> parser = proof_parser("fibers", "certificates/fibers", full="also d = 3")
    >>> _ = parser.add_argument("--points", type=int, default=2)
    >>> args = parser.parse_args(["--full", "--points", "3"])
    >>> args.full, args.points, grid(args)
    (True, 3, 'full')
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", default=default_out, help=f"certificate folder (default {default_out})")
    parser.add_argument("--seed", type=int, default=2025, help="seed for points, inputs and primes")
    parser.add_argument("--no-check", action="store_true", help="skip re-verifying each certificate")
    parser.add_argument("--full", action="store_true",
                        help="accepted for attngeo certify --full; this script has one grid" if full == ONE_GRID else
                        "run the full grid" + (f": {full}" if full else "") + " (default: the trimmed grid)")
    parser.set_defaults(one_grid=full == ONE_GRID)
    return parser


def proof_arguments(description: str, default_out: str, full: str = "") -> argparse.Namespace:
    """A proof script's command line (from ``sys.argv``): :func:`proof_parser`'s options.

    Examples
    --------
    >>> import sys
    >>> from unittest import mock
    >>> from attngeo.theorems.proof import proof_arguments
    >>> with mock.patch.object(sys, "argv", ["single_layer_dimension.py", "--seed", "7"]):
    ...     args = proof_arguments("single-layer dimension", "certificates/single_layer_dimension")
    >>> args.out, args.seed, args.no_check, args.full
    ('certificates/single_layer_dimension', 7, False, False)
    """
    return proof_parser(description, default_out, full).parse_args()


def grid(args: argparse.Namespace) -> str:
    """``"full"`` when the script runs its full grid (``--full``, or it has one grid), else ``"default"``.

    The summary line says which, and the report prints it beside each statement.

    Examples
    --------
    >>> import argparse
    >>> from attngeo.theorems.proof import grid
    >>> grid(argparse.Namespace(full=True)), grid(argparse.Namespace()), grid(argparse.Namespace(one_grid=True))
    ('full', 'default', 'full')
    """
    return "full" if getattr(args, "full", False) or getattr(args, "one_grid", False) else "default"


def run_dimension_proof(title: str, cases: list[Case], args: argparse.Namespace, results: list | None = None,
                        claims=()) -> int:
    """Certify every case, print a table and the summary, return the exit code.

    ``results`` collects ``(case, cert)``; ``claims`` are the :class:`Claim` the
    cases name (a certified value off the case's formula refutes its claim).

    Parameters
    ----------
    title : str
        First line printed.
    cases : list of Case
        The architectures.
    args : argparse.Namespace
        ``out`` (certificate folder, made if missing), ``seed``, ``no_check``.
    results : list, optional
        Receives ``(case, cert)`` for every certificate made.
    claims : sequence of Claim
        The claims the cases name.

    Returns
    -------
    int
        1 when a case inside the hypotheses fails to certify or disagrees with its formula, else 0.

    Examples
    --------
    The single-layer formula ``2ad + dd' - a^2 - 1`` at three sizes, each
    certified and re-checked:

    >>> import argparse, contextlib, io, json, tempfile
    >>> from attngeo import Architecture
    >>> from attngeo.theorems.proof import Case, Claim, run_dimension_proof
    >>> args = argparse.Namespace(out=tempfile.mkdtemp(), seed=0, no_check=False)
    >>> claims = [Claim("single", "dim formula")]
    >>> cases = [Case(Architecture((d, d), (a,), tokens=2), True, 2 * a * d + d * d - a * a - 1, claim="single")
    ...          for d, a in ((1, 1), (2, 1), (2, 2))]
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run_dimension_proof("one layer", cases, args, claims=claims)
    >>> code
    0
    >>> for line in out.getvalue().splitlines()[1:6]:
    ...     print(line)
    widths        ranks     t     P  lower  upper  naive formula  status
    --------------------------------------------------------------------
    1,1           1         2     3      1      1      1       1  certified, = formula
    2,2           1         2     8      6      6      6       6  certified, = formula
    2,2           2         2    12      7      7      7       7  certified, = formula

    A wrong formula inside the hypotheses is refuted by the certified value, and the script fails:

    >>> wrong = [Case(Architecture((2, 2), (1,), tokens=2), True, 7, claim="single")]
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run_dimension_proof("one layer", wrong, args, claims=claims)
    >>> part, = json.loads(out.getvalue().split("summary: ")[1].splitlines()[0])["parts"]
    >>> code, part["refuted"], part["counterexamples"][0]["certified"].endswith("M = 6$")
    (1, 1, True)
    """
    out = make_folder(args.out)
    forms = {c.key: c.sizes for c in claims}
    print(f"{title} ({grid(args)} grid)")
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
        if not arch.is_plain:
            status = f"{variant(arch)}: {status}"
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
    print_summary(claims, entries, notes, {"grid": grid(args)})
    if failures:
        print(f"FAILED inside the hypotheses ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    return 0


def main_guard(run) -> None:
    """Run a proof script's body and exit with its code (2 on bad input, with one line on stderr).

    Examples
    --------
    >>> import contextlib, sys
    >>> from attngeo import Architecture
    >>> from attngeo.theorems.proof import main_guard
    >>> def exit_code(run):
    ...     try:
    ...         main_guard(run)
    ...     except SystemExit as exc:
    ...         return exc.code
    >>> exit_code(lambda: 0), exit_code(lambda: 1)
    (0, 1)
    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     exit_code(lambda: Architecture((2, 2), (0,)))
    error: ranks[0] = 0 must be at least 1; give one attention rank a_i >= 1 per layer
    2
    """
    try:
        sys.exit(run())
    except AttngeoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


@dataclass
class CaseOutcome:
    """What one case of a proof script established: a certificate and a table row.

    Attributes
    ----------
    name : str
        File name of its certificate (without ``.json``).
    certificate : object
        Has ``save()`` and ``to_json()``; None when the case is out of reach.
    row : str
        Its line of the table.
    failed : bool
        The case failed (also set when the checker rejects its certificate).
    finding : str or None
        Plain text, printed as ``finding: ...``.
    entries : list of Entry
        What the case adds to each claim.
    note : str or None
        LaTeX text for the report.

    Examples
    --------
    >>> from attngeo import Architecture, fiber
    >>> from attngeo.theorems.proof import CaseOutcome, Entry, sizes_of
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> fib = fiber(arch, [[[[1, 2]], [[3, 5]], [[1, 1]]]])
    >>> o = CaseOutcome("swap", fib, f"swap  {len(fib.components)} lines", entries=[Entry("lines", sizes_of(arch), "certified")])
    >>> o.row, o.failed
    ('swap  2 lines', False)
    """

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

    Returns
    -------
    int
        1 when a case failed (or its certificate was rejected), else 0.

    Examples
    --------
    A rank-1 swap point has two fiber lines; a certificate claiming the
    generic case there is rejected and its case fails:

    >>> import argparse, contextlib, io, tempfile
    >>> from attngeo import Architecture, fiber
    >>> from attngeo.theorems.proof import INSTANCES, CaseOutcome, Claim, Entry, run_cases, sizes_of
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> fib = fiber(arch, [[[[1, 2]], [[3, 5]], [[1, 1]]]])
    >>> class Forged:                    # the same certificate, with a false case
    ...     def to_json(self):
    ...         return {**fib.to_json(), "case": "generic"}
    ...     def save(self, path):
    ...         return path
    >>> def outcomes():
    ...     for name, cert in (("honest", fib), ("forged", Forged())):
    ...         yield CaseOutcome(name, cert, name, entries=[Entry("lines", sizes_of(arch), "certified")])
    >>> args = argparse.Namespace(out=tempfile.mkdtemp(), seed=0, no_check=False)
    >>> claims = [Claim("lines", "two lines at rank-1 swap points", mode=INSTANCES, unit="points")]
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = run_cases("fibers", "case", outcomes(), args, claims)
    >>> for line in out.getvalue().splitlines()[3:5]:
    ...     print(line)
    honest
    forged  CHECK FAILED: the components make the case 'rank1-swap'
    >>> code, out.getvalue().splitlines()[-4]
    (1, 'claim lines: 2 points (1 certified, 1 failed)')
    """
    out = make_folder(args.out)
    print(f"{title} ({grid(args)} grid)")
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
    print_summary(claims, entries, notes, {"grid": grid(args), **(extra() if extra else {})})
    if failures:
        print(f"FAILED ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    return 0
