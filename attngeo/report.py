"""The report of an ``attngeo certify`` run, in Markdown and in standalone LaTeX.

One row per registered statement (:mod:`attngeo.theorems`): what it says, over
which sizes, the proof script's outcome (its own summary line: cases,
certified, bounds), its findings, how long it took, and what failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .certificate import write_text
from .latex import tex_escape
from .theorems import Statement


@dataclass
class Outcome:
    statement: Statement
    exit_code: int
    seconds: float
    output: str = ""
    certificates: int = 0
    missing: bool = False  # the script was not found

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def summary(self) -> str:
        """The script's own summary line (cases, certified, bounds)."""
        lines = [ln.strip().split("; certificates")[0] for ln in self.output.splitlines()
                 if re.search(r"\bcases in\b", ln)]
        return lines[-1] if lines else ("script not found" if self.missing else "no summary printed")

    @property
    def findings(self) -> list[str]:
        return [ln.strip()[len("finding: "):] for ln in self.output.splitlines() if ln.strip().startswith("finding: ")]

    @property
    def failures(self) -> list[str]:
        lines = self.output.splitlines()
        out, inside = [], False
        for ln in lines:
            if ln.startswith("FAILED"):
                inside = True
                continue
            if inside and ln.startswith("  "):
                out.append(ln.strip())
        return out or ([] if self.ok else [f"exit code {self.exit_code}"])


def markdown(outcomes: list[Outcome], out: Path, seconds: float) -> str:
    ok = sum(o.ok for o in outcomes)
    lines = ["# attngeo certification report", "",
             f"{ok} of {len(outcomes)} statements certified in {seconds:.1f} s; certificates in `{out}/`, "
             f"re-check with `attngeo check {out}`.", "",
             "| statement | kind | source | sizes | result | time |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        s = o.statement
        result = ("certified" if o.ok else "**FAILED**") + f": {o.summary}"
        lines.append(f"| {s.title} (`{s.name}`) | {s.kind} | {s.source} | {s.sizes} | {result} | {o.seconds:.1f} s |")
    for o in outcomes:
        s = o.statement
        lines += ["", f"## {s.title}", "", f"*{s.kind}, {s.source}; script `proofs/{s.script}.py`; "
                  f"depends on {', '.join(s.depends) or 'nothing'}.*", "", s.latex, "",
                  f"- sizes: {s.sizes}", f"- outcome: {o.summary} ({o.certificates} certificates, {o.seconds:.1f} s)"]
        lines += [f"- finding: {f}" for f in o.findings]
        lines += [f"- **failed**: {f}" for f in (o.failures if not o.ok else [])]
    return "\n".join(lines) + "\n"


def latex(outcomes: list[Outcome], out: Path, seconds: float) -> str:
    ok = sum(o.ok for o in outcomes)
    body = [r"\documentclass[10pt]{article}", r"\usepackage[margin=2cm]{geometry}", r"\usepackage{amsmath,amssymb}",
            r"\begin{document}", r"\section*{attngeo certification report}",
            tex_escape(f"{ok} of {len(outcomes)} statements certified in {seconds:.1f} s; "
                       f"certificates in {out}/, re-checked with: attngeo check {out}."),
            r"\begin{itemize}"]
    for o in outcomes:
        s = o.statement
        status = r"\textbf{certified}" if o.ok else r"\textbf{FAILED}"
        body.append(rf"\item \textbf{{{tex_escape(s.title)}}} ({tex_escape(s.kind)}, {tex_escape(s.source)}): {s.latex}.\\")
        body.append(rf"{status}: {tex_escape(o.summary)} --- {o.seconds:.1f}\,s, {o.certificates} certificates.\\")
        body.append(rf"\emph{{Sizes:}} {tex_escape(s.sizes)}.")
        if o.findings:
            body.append(r"\begin{itemize}" + "".join(rf"\item {tex_escape(f)}" for f in o.findings) + r"\end{itemize}")
        if not o.ok:
            body.append(r"\begin{itemize}" + "".join(rf"\item failed: {tex_escape(f)}" for f in o.failures)
                        + r"\end{itemize}")
    body += [r"\end{itemize}", r"\end{document}"]
    return "\n".join(body) + "\n"


def write_reports(outcomes: list[Outcome], out: Path, seconds: float) -> tuple[Path, Path]:
    return (write_text(out / "report.md", markdown(outcomes, out, seconds)),
            write_text(out / "report.tex", latex(outcomes, out, seconds)))
