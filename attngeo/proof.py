"""Shared machinery of the proof scripts in ``proofs/``.

A proof script lists cases (an architecture and whether it lies inside the
hypotheses of the statement being certified); :func:`run_dimension_proof`
certifies each, writes its certificate, re-verifies it with the independent
checker, prints a table and returns the exit code: non-zero exactly when a case
inside the hypotheses fails to certify or disagrees with the formula.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from .architecture import Architecture
from .checker import check_certificate
from .dimension import certify_dimension
from .exceptions import AttngeoError
from .formulas import naive_count


@dataclass(frozen=True)
class Case:
    arch: Architecture
    in_hypotheses: bool
    formula: int | None  # the value the statement predicts, or None
    conjecture: bool = False  # the formula is a conjecture: a disagreement is a finding, not a failure


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


def run_dimension_proof(title: str, cases: list[Case], args: argparse.Namespace, results: list | None = None) -> int:
    """Certify every case, print a table, return the exit code (``results`` collects ``(case, cert)``)."""
    out = Path(args.out)
    print(title)
    header = f"{'widths':<14}{'ranks':<9}{'t':>2}{'P':>6}{'lower':>7}{'upper':>7}{'naive':>7}{'formula':>8}  status"
    print(header)
    print("-" * len(header))
    failures, stats = [], {"certified": 0, "bounds": 0, "agree": 0, "disagree": 0, "naive_fails": 0}
    start = time.perf_counter()
    for k, case in enumerate(cases):
        arch = case.arch
        try:
            cert = certify_dimension(arch, seed=args.seed + k)
            cert.save(out / f"{_name(arch)}.json")
            if not args.no_check:
                check_certificate(cert.to_json())
        except AttngeoError as exc:
            failures.append(f"{arch}: {exc}")
            print(f"{arch}: ERROR {exc}")
            continue
        if results is not None:
            results.append((case, cert))
        naive = naive_count(arch)
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
class Outcome:
    """What one case of a proof script established: a certificate and a table row."""

    name: str
    certificate: object  # has save() and to_json()
    row: str
    failed: bool = False
    finding: str | None = None


def run_cases(title: str, header: str, outcomes, args: argparse.Namespace) -> int:
    """Save and re-check each outcome's certificate, print the table, return the exit code.

    ``outcomes`` yields :class:`Outcome` (or raises :class:`AttngeoError` for a
    case, which then counts as a failure).
    """
    out = Path(args.out)
    print(title)
    print(header)
    print("-" * len(header))
    failures, findings, count = [], [], 0
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
        o.certificate.save(out / f"{o.name}.json")
        if not args.no_check:
            try:
                check_certificate(o.certificate.to_json())
            except AttngeoError as exc:
                o.failed, o.row = True, o.row + f"  CHECK FAILED: {exc}"
        print(o.row)
        if o.failed:
            failures.append(o.row)
        if o.finding:
            findings.append(o.finding)
    print("-" * len(header))
    print(f"{count} cases in {time.perf_counter() - start:.1f} s; certificates: {out}/"
          + ("" if args.no_check else " (each re-verified by the independent checker)"))
    for f in sorted(set(findings)):
        print("finding: " + f)
    if failures:
        print(f"FAILED ({len(failures)}):")
        for f in failures:
            print("  " + f)
        return 1
    return 0
