"""The report of an ``attngeo certify`` run, in Markdown and in standalone LaTeX.

Each registered statement (:mod:`attngeo.theorems.registry`) is split by its proof script
into claims; the script's last line ``summary: {json}`` (:mod:`attngeo.theorems.proof`)
gives, per claim, the range of sizes it actually ran, how many cases it
certified, bounded or left undecided, and its counterexamples. The outcome
printed beside a claim is :func:`attngeo.theorems.registry.classify` of those counts —
certified on the range, instances certified, refuted, bounds only, undecided —
never text written ahead of the run.

The LaTeX report typesets every relation and size as math, puts the results in
tables, and draws the theorem graph and the strata closure graphs the strata
script reports: PNGs when matplotlib is installed (the optional extra ``plot``),
otherwise TikZ when ``tikz.sty`` is there at compile time, otherwise tables.
"""

from __future__ import annotations

import importlib.util
import json
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from ..geometry.certificate import write_text
from ..latex import scope as scope_latex, scope_summary, sizes as sizes_latex, tex_escape
from .allsizes import STATEMENTS as ALL_SIZES, AllSizes, tex
from .registry import OUTCOMES, PROVED, SINGULAR_REGIONS, STATEMENTS, Statement, classify, graph

#: Most severe first: the outcome a statement's node shows when its claims differ.
SEVERITY = ("failed", "refuted", "bounds", "undecided", "instances", "certified")
#: One word per outcome; a statement proved for all sizes is a theorem, whatever its script's range says.
SHORT = {"proved": "theorem", "certified": "certified", "instances": "instances", "refuted": "refuted",
         "bounds": "bounds only", "undecided": "undecided", "failed": "FAILED", "not run": "not run"}
#: Fill colours (TikZ, matplotlib) of graph nodes, by outcome or stratum label.
COLOURS = {"proved": ("green!50", "#74c476"), "certified": ("green!25", "#c7e9c0"),
           "instances": ("blue!15", "#dbe9f6"), "refuted": ("red!25", "#fcbba1"),
           "bounds": ("black!10", "#e5e5e5"), "undecided": ("black!10", "#e5e5e5"), "failed": ("red!60", "#fb6a4a"),
           "not run": ("white", "white"), "singular": ("red!25", "#fcbba1"), "smooth": ("green!25", "#c7e9c0")}
LEGEND = {
    "proved": "an all-sizes certificate (`attngeo prove`, docs/math.md §7.1) the checker verified: the formula holds "
              "for every size in the stated hypotheses",
    "certified": "every case of the stated range certified (the claim is proved on that range)",
    "instances": "finitely many instances certified; no proof of the claim beyond them",
    "refuted": "a certified counterexample; the counterexamples are listed",
    "bounds": "certified bounds that did not meet",
    "undecided": "nothing certified either way",
}

#: The works the report cites: key -> (authors, title, where). ``[KEY]`` in the text cites one;
#: tests/test_report.py fails when the text cites a key that is not here.
REFERENCES = {
    "HMK": ("Henry, Marchetti, Kohn", "Geometry of Lightning Self-Attention: Identifiability and Dimension",
            "ICLR 2025; arXiv:2408.17221"),
    "MHA": ("", "Generic Fibers and Functional Dimension of Multi-Head Attention",
            "ICML 2026 workshop on weight-space symmetries; OpenReview 7vPmnHdAPl"),
}


def reference(key: str, tex: bool = True) -> str:
    """A bibliography entry in LaTeX (or Markdown), or a line saying the entry is missing.

    Examples
    --------
    >>> reference("HMK", tex=False)
    'Henry, Marchetti, Kohn. *Geometry of Lightning Self-Attention: Identifiability and Dimension*. ICLR 2025; arXiv:2408.17221.'
    >>> reference("XYZ", tex=False)
    '(no entry: add it to REFERENCES in attngeo/theorems/report.py)'
    """
    if key not in REFERENCES:
        return "(no entry: add it to REFERENCES in attngeo/theorems/report.py)"
    authors, title, where = REFERENCES[key]
    if tex:
        return (f"{tex_escape(authors)}. " if authors else "") + rf"\emph{{{tex_escape(title)}}}. {tex_escape(where)}."
    return (f"{authors}. " if authors else "") + f"*{title}*. {where}."


#: The report's first section: the notation every table uses and what each outcome means.
NOTATION = r"""\section{Notation and vocabulary}

\paragraph{The model.} An input $X \in \mathbb R^{d \times t}$ has one column per token; $t$ is the number of
tokens. One lightning self-attention layer has weights $Q, K \in \mathbb R^{a \times d}$ and
$V \in \mathbb R^{d' \times d}$ and computes $X \mapsto V X (X^\top K^\top Q X)$: $d$ is its input width, $d'$ its
output width, $a$ its attention rank, and $A = K^\top Q$ its attention matrix ($\operatorname{rank} A \le
\min(a, d)$). A softmax layer computes $V X\, S(X^\top A X)$, where $S$ applies $\exp$ to every score and divides
each column by its sum. A network of $l$ layers has widths $d_0, \dots, d_l$ and ranks $a_1, \dots, a_l$ and
composes its layers; a size written as a tuple, such as $d = (2, 3, 2)$, gives one value per layer. Beyond the model
of [HMK], a layer may have $h$ heads (their outputs are added), a value map factored as $V = OU$ through a value rank
$b$ ($b = (0)$ in a list: $V$ not factored), a residual connection ($X \mapsto X + \text{layer}(X)$) or a causal mask
(token $s$ reaches token $j$ only when $s \le j$).

\paragraph{$\varphi$ and $\mathcal M$.} $\varphi$ maps the weights $W$ (all $Q_i, K_i, V_i$; $P$ numbers) to the
function $\varphi_W$ the network computes. The neuromanifold $\mathcal M$ is the image of $\varphi$; its dimension,
singular points and equations are those of its Zariski closure, and $\dim \mathcal M$ is the generic rank of the
Jacobian of $\varphi$. The fiber of $W$ is the set of weights computing the same function $\varphi_W$. The
symmetries ($GL_a$ acting on $(Q, K)$, the scaling $(\lambda A, \lambda^{-1} V)$ of a lightning layer, $GL_{d_i}$
between layers, $GL_b$ on $(U, O)$) form a group $G$; $P - \dim G$ is the naive count of the dimension.

\paragraph{Certificates.} Every case counted as certified wrote a certificate next to this report: a JSON file
from which the independent checker (\texttt{attngeo check}) re-verifies the claim by exact arithmetic (integers,
rationals, residues modulo a prime; ball arithmetic only where the ball excludes the alternative). A dimension is
certified when a lower bound (a nonsingular Jacobian minor) meets an upper bound ($P$ minus the rank of vector
fields in the Jacobian's kernel); a fiber, a singular point or a boundary point by an exact argument the checker
replays. The formulas of [HMK] and [MHA] are compared against, never used as evidence.

\paragraph{Outcomes.} Each statement is split into claims; each claim's outcome comes from its proof script's
counts, never from text written before the run:
"""


@dataclass
class Outcome:
    r"""One statement's run: its proof script's exit code, time and output, read for the report.

    Every number the report prints comes from the script's output (its
    ``summary: {json}`` line), never from the registry.

    Attributes
    ----------
    statement : Statement
        The statement the script tests.
    exit_code : int
        The script's exit code (0: nothing inside the hypotheses failed).
    seconds : float
        Wall time of the script.
    output : str
        Its stdout (and stderr).
    certificates : int
        Certificates it wrote.
    missing : bool
        The script was not found.
    proved : str
        For a statement with ``all_sizes``: the checker's claim for its all-sizes certificate, or ``""``.
    proof_failure : str
        Why ``attngeo prove`` failed for it, or ``""`` (a failure fails the statement).
    cpu : float or None
        CPU seconds of the script (user + system, its subprocesses included), when measured.

    Examples
    --------
    A script that certified the single-layer formula at ``d = 1, 2, 3``, ``d' = 2``, ``a = 1``:

    >>> import contextlib, io
    >>> from attngeo.theorems.proof import Claim, Entry, print_summary
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     print("3 cases in 0.1 s: 3 certified; certificates: out/")
    ...     print_summary([Claim("single", "dim formula")],
    ...                   [Entry("single", {"d": d, "d'": 2, "a": 1, "t": 2}, "certified") for d in (1, 2, 3)])
    >>> o = Outcome(get("single-layer-dimension"), 0, 1.0, out.getvalue(), certificates=3)
    >>> o.ok, o.verdict, o.headline
    (True, 'certified', 'single: certified on the range')

    The same lines from a script that then failed:

    >>> bad = Outcome(o.statement, 1, 1.0, o.output + "FAILED inside the hypotheses (1):\n  widths 4,2: bounds only\n")
    >>> bad.verdict, bad.headline, bad.failures
    ('failed', 'FAILED (exit 1); single: certified on the range', ['widths 4,2: bounds only'])
    """

    statement: Statement
    exit_code: int
    seconds: float
    output: str = ""
    certificates: int = 0
    missing: bool = False  # the script was not found
    proved: str = ""  # the checker's all-sizes claim (attngeo prove)
    proof_failure: str = ""
    cpu: float | None = None  # CPU seconds, children included (theorems/runner.py)

    @property
    def ok(self) -> bool:
        """The script exited with 0 (and the all-sizes proof, if any, verified)."""
        return self.exit_code == 0 and not self.proof_failure

    @property
    def summary(self) -> str:
        r"""The script's own summary line (cases, certified, bounds).

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> s = get("deep-dimension")
        >>> Outcome(s, 0, 1.0, "12 cases in 3.1 s: 12 certified, 0 bounds only; certificates: out/\n").summary
        '12 cases in 3.1 s: 12 certified, 0 bounds only'
        >>> Outcome(s, 2, 0.0, missing=True).summary
        'script not found'
        """
        lines = [ln.strip().split("; certificates")[0] for ln in self.output.splitlines()
                 if re.search(r"\bcases in\b", ln)]
        return lines[-1] if lines else ("script not found" if self.missing else "no summary printed")

    @property
    def result(self) -> dict:
        r"""The script's ``summary: {json}`` line (claims, notes, figures); empty when it printed none.

        The last such line counts; one that is not JSON counts as none.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> s = get("deep-dimension")
        >>> Outcome(s, 0, 1.0, 'summary: {"parts": [], "notes": ["n"]}\n').result
        {'parts': [], 'notes': ['n']}
        >>> Outcome(s, 0, 1.0, "summary: {cut off").result
        {}
        """
        for ln in reversed(self.output.splitlines()):
            if ln.startswith("summary: {"):
                try:
                    return json.loads(ln[len("summary: "):])
                except json.JSONDecodeError:
                    return {}
        return {}

    @property
    def parts(self) -> list[dict]:
        """The script's claims, each with its ``outcome`` (a key of :data:`attngeo.theorems.registry.OUTCOMES`).

        The outcome is :func:`attngeo.theorems.registry.classify` of the
        counts and the statement's kind: the same counts certify a theorem on
        its range but only instances of a conjecture.

        Examples
        --------
        >>> import contextlib, io
        >>> from attngeo.theorems.proof import Claim, Entry, print_summary
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> out = io.StringIO()
        >>> with contextlib.redirect_stdout(out):
        ...     print("3 cases in 0.1 s: 3 certified; certificates: out/")
        ...     print_summary([Claim("single", "dim formula")],
        ...                   [Entry("single", {"d": d, "d'": 2, "a": 1, "t": 2}, "certified") for d in (1, 2, 3)])
        >>> o = Outcome(get("single-layer-dimension"), 0, 1.0, out.getvalue(), certificates=3)
        >>> o.parts[0]["outcome"], Outcome(get("softmax-conjecture"), 0, 1.0, o.output).parts[0]["outcome"]
        ('certified', 'instances')
        """
        return [{**p, "outcome": classify(p, self.statement.kind)} for p in self.result.get("parts", [])]

    @property
    def grid(self) -> str:
        """``default grid`` or ``full grid`` (``--full``), as the script's summary line says; ``""`` if it says none."""
        return f"{self.result['grid']} grid" if self.result.get("grid") else ""

    @property
    def run(self) -> str:
        r"""Wall time, CPU time when measured, and the grid that ran: what the report prints per statement.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> s = get("deep-dimension")
        >>> Outcome(s, 0, 2.5, 'summary: {"parts": [], "grid": "default"}\n', cpu=4.25).run
        '2.5 s (CPU 4.2 s), default grid'
        >>> Outcome(s, 0, 2.5, "").run
        '2.5 s'
        """
        cpu = f" (CPU {self.cpu:.1f} s)" if self.cpu is not None else ""
        return f"{self.seconds:.1f} s{cpu}" + (f", {self.grid}" if self.grid else "")

    @property
    def notes(self) -> list[str]:
        """The notes of the script's summary line (LaTeX text)."""
        return self.result.get("notes", [])

    @property
    def verdict(self) -> str:
        """The most severe outcome among the claims (``failed`` when the script failed).

        Examples
        --------
        One claim certified and one refuted make the statement refuted:

        >>> import json
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> grid = {"count": 1, "factors": []}
        >>> parts = [{"mode": "range", "cases": 1, "certified": 1, "scope": grid},
        ...          {"mode": "range", "cases": 1, "refuted": 1, "counterexamples": [{}], "scope": grid}]
        >>> o = Outcome(get("singular-points"), 0, 1.0, "summary: " + json.dumps({"parts": parts}))
        >>> [p["outcome"] for p in o.parts], o.verdict
        (['certified', 'refuted'], 'refuted')
        """
        found = {p["outcome"] for p in self.parts} | ({"failed"} if not self.ok else set())
        return next((o for o in SEVERITY if o in found), "undecided")

    @property
    def label(self) -> str:
        """What the run established about the statement as a whole: ``proved`` when its all-sizes certificate
        verified (a theorem for every size in its hypotheses), else :attr:`verdict`, the outcome on its range.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> s = get("multihead-layer-dimension")
        >>> Outcome(s, 0, 1.0, "", proved="for all sizes: ...").label, Outcome(s, 0, 1.0, "").label
        ('proved', 'undecided')
        >>> Outcome(s, 1, 1.0, "", proved="for all sizes: ...").label   # its script failed
        'failed'
        """
        return "proved" if self.proved and self.verdict not in ("failed", "refuted") else self.verdict

    @property
    def theorem(self) -> AllSizes | None:
        """The all-sizes statement ``attngeo prove`` proves for this statement (None when it has none)."""
        return ALL_SIZES.get(self.statement.name) if self.statement.all_sizes else None

    @property
    def headline(self) -> str:
        """One line: each claim and its outcome, or why there is none.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> Outcome(get("deep-fibers"), 1, 1.0, "Traceback ...").headline
        'FAILED (exit 1); no summary printed'
        >>> Outcome(get("deep-fibers"), 2, 0.0, missing=True).headline
        'FAILED: script not found'
        """
        if self.missing:
            return "FAILED: script not found"
        claims = "; ".join(f"{p['key']}: {OUTCOMES[p['outcome']]}" for p in self.parts) or "no summary printed"
        return claims if self.ok else f"FAILED (exit {self.exit_code}); {claims}"

    @property
    def findings(self) -> list[str]:
        r"""The script's ``finding: ...`` lines, without the prefix.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> o = Outcome(get("singular-strata"), 0, 1.0, "row\nfinding: d=3, d'=2, a=2: stratum (1,2) is singular\n")
        >>> o.findings
        ["d=3, d'=2, a=2: stratum (1,2) is singular"]
        """
        return [ln.strip()[len("finding: "):] for ln in self.output.splitlines() if ln.strip().startswith("finding: ")]

    @property
    def failures(self) -> list[str]:
        r"""The indented lines after the script's ``FAILED`` line; the exit code when it printed none.

        Examples
        --------
        >>> from attngeo.theorems.registry import get
        >>> from attngeo.theorems.report import Outcome
        >>> Outcome(get("deep-dimension"), 1, 1.0, "FAILED (1):\n  widths 3,3,3: bounds only\n").failures
        ['widths 3,3,3: bounds only']
        >>> Outcome(get("deep-dimension"), -9, 1.0, "").failures
        ['exit code -9']
        """
        lines = self.output.splitlines()
        out, inside = [], False
        for ln in lines:
            if ln.startswith("FAILED"):
                inside = True
                continue
            if inside and ln.startswith("  "):
                out.append(ln.strip())
        return out or ([] if self.ok else [f"exit code {self.exit_code}"])


def _all_sizes(o: Outcome) -> str:
    r"""The all-sizes theorem the checker verified, as LaTeX text (math in dollars, so also Markdown): the formula
    case by case and each hypothesis by ``sympy.latex``, the architectures, and the checker's count of pieces.

    The statement is :mod:`attngeo.theorems.allsizes`'s, which the checker requires the certificate to repeat
    exactly; a statement it does not know keeps the checker's words, escaped.

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> o = Outcome(get("deep-dimension"), 0, 1.0, "", proved="for all sizes: dim M = ... (12 pieces)")
    >>> print(_all_sizes(o))     # doctest: +NORMALIZE_WHITESPACE
    $\dim \mathcal{M} = - a^{2} l + 2 a d l + d^{2} - l$ for all $l \geq 1$, $a \geq 1$, $a \leq d$: $l$ lightning
    layers of equal width $d$ and rank $a$, $t \ge 2$ (12 pieces, verified by the checker)
    """
    from ..latex import expression
    from .allsizes import STATEMENTS as THEOREMS

    theorem = THEOREMS.get(o.statement.name)
    if theorem is None:
        return tex_escape(o.proved.removeprefix("for all sizes: "))
    cases = "; ".join((rf"${theorem.quantity} = {expression(v)}$" if k == 0 else f"${expression(v)}$")
                      + (" if " + ", ".join(f"${expression(c)}$" for c in w) if w else "")
                      for k, (w, v) in enumerate(theorem.formula))
    hypotheses = ", ".join(f"${expression(h)}$" for h in theorem.hypotheses)
    pieces = re.search(r"\((\d+) pieces\)$", o.proved)
    counted = f" ({pieces.group(1)} pieces, verified by the checker)" if pieces else " (verified by the checker)"
    return f"{cases} for all {hypotheses}: {theorem.family}{counted}"


# -- the words and numbers of one claim ---------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 or word.endswith("s") else f"{n} {word}s"


SINGULAR = {"architectures": "architecture", "points": "point", "strata": "stratum"}


def counts(part: dict) -> str:
    """What was counted, in words: ``324 of 324 architectures certified; ...``.

    Examples
    --------
    >>> from attngeo.theorems.proof import Claim, Entry, summary
    >>> from attngeo.theorems.report import counts
    >>> entries = [Entry("x", {"d": d, "a": 1}, s) for d, s in ((2, "certified"), (2, "refuted"), (3, "bounds"))]
    >>> part, = summary([Claim("x", "claim", unit="points")], entries)["parts"]
    >>> counts(part)
    '1 of 3 points at 2 architectures certified; 1 counterexample; bounds only at 1'
    """
    n, unit = part["cases"], part["unit"]
    unit = SINGULAR.get(unit, unit) if n == 1 else unit
    archs = part["scope"]["count"]
    where = "" if unit.startswith("architecture") else f" at {archs} architecture{'s' if archs != 1 else ''}"
    of = f" of {n} {unit}{where}"
    bits = [f"{part['certified']}{of} certified"] if part.get("certified") else []
    if part.get("refuted"):
        bits.append(_plural(part["refuted"], "counterexample") + ("" if bits else of))
    for key, words in (("bounds", "bounds only at {}"), ("undecided", "{} undecided"), ("failed", "{} failed")):
        if part.get(key):
            bits.append(words.format(part[key]) + ("" if bits else of))
    return "; ".join(bits)


def counterexample_rows(part: dict) -> list[tuple[str, str, str, str]]:
    """(sizes as math, where, certified, claimed), one row per size and verdict pair.

    Examples
    --------
    Counterexamples at the same sizes with the same two verdicts share a row,
    their places joined:

    >>> from attngeo.theorems.proof import Claim, Entry, summary
    >>> from attngeo.theorems.report import counterexample_rows
    >>> entries = [Entry("x", {"d": 2}, "refuted", where, "smooth", "singular") for where in ("at $p$", "at $q$")]
    >>> part, = summary([Claim("x", "claim", unit="points")], entries)["parts"]
    >>> [row[1:] for row in counterexample_rows(part)]
    [('at $p$; at $q$', 'smooth', 'singular')]
    """
    groups: dict[tuple, list[str]] = {}
    for c in part.get("counterexamples", []):
        key = (json.dumps(c["sizes"]), c["certified"], c["claimed"])
        groups.setdefault(key, []).append(c["at"])
    def places(at):  # the same place twice (two random points) is said once, with the count
        seen = {a: at.count(a) for a in at if a}
        return "; ".join(a if n == 1 else f"{a} ({n} times)" for a, n in seen.items())

    return [(sizes_latex(json.loads(k[0])), places(at), k[1], k[2]) for k, at in groups.items()]


def _tally(outcomes: list[Outcome]) -> str:
    """The statements, the theorems among them, and the outcomes of the claims on ranges of sizes.

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome, _tally
    >>> _tally([Outcome(get("deep-dimension"), 0, 1.0, "", proved="for all sizes: ..."),
    ...         Outcome(get("deep-fibers"), 0, 1.0, "")])
    '2 statements: 1 theorem proved for all sizes (in its hypotheses); 0 claims on ranges of sizes'
    """
    found = [p["outcome"] for o in outcomes for p in o.parts]
    by = ", ".join(f"{found.count(k)} {OUTCOMES[k]}" for k in OUTCOMES if found.count(k))
    theorems = sum(o.label == "proved" for o in outcomes)
    if not theorems:
        return f"{len(outcomes)} statements, {_plural(len(found), 'claim')}" + (f": {by}" if by else "")
    return (f"{len(outcomes)} statements: {_plural(theorems, 'theorem')} proved for all sizes (in "
            f"{'its' if theorems == 1 else 'their'} hypotheses); {_plural(len(found), 'claim')} on ranges of sizes"
            + (f": {by}" if by else ""))


def _theorem_formula(t: AllSizes | None) -> str:
    """``dim M = ...`` (or what else the statement counts) of an all-sizes statement, each case with its condition,
    as math."""
    if t is None:
        return ""
    cases = [(f"{t.quantity} = " if k == 0 else "") + tex(value) for k, (_, value) in enumerate(t.formula)]
    return "; ".join(f"${case}$" + (" if " + ", ".join(f"${tex(w)}$" for w in when) if when else "")
                     for case, (when, _) in zip(cases, t.formula))


def _theorem_hypotheses(t: AllSizes | None) -> str:
    """Every hypothesis of an all-sizes statement, as math (``t >= 2`` included: every statement assumes it)."""
    return "" if t is None else ", ".join(f"${tex(h)}$" for h in (*t.hypotheses, "t >= 2"))


def _theorems(outcomes: list[Outcome]) -> list[Outcome]:
    """The statements of the run that ``attngeo prove`` proves for all sizes (proved or failed)."""
    return [o for o in outcomes if o.statement.all_sizes and (o.proved or o.proof_failure)]


THEOREMS_INTRO = ("Each holds for every size that satisfies its hypotheses: an all-sizes certificate "
                  "(`attngeo prove`, docs/math.md §7.1) that the checker verified. A hypothesis bounding a size by "
                  "a constant limits the theorem to those values. The claims on ranges of sizes follow "
                  "separately: what a range of instances certifies is no theorem beyond it.")


# -- Markdown ------------------------------------------------------------------------------------


def markdown(outcomes: list[Outcome], out: Path, seconds: float) -> str:
    r"""The Markdown report: a tally, the legend, one table row per claim, then a section per statement.

    Parameters
    ----------
    outcomes : list of Outcome
        The statements run, in order.
    out : Path
        The certificate folder (named in the text, not read).
    seconds : float
        Total run time.

    Examples
    --------
    >>> import contextlib, io
    >>> from attngeo.theorems.proof import Claim, Entry, print_summary
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     print("3 cases in 0.1 s: 3 certified; certificates: out/")
    ...     print_summary([Claim("single", "dim formula")],
    ...                   [Entry("single", {"d": d, "d'": 2, "a": 1, "t": 2}, "certified") for d in (1, 2, 3)])
    >>> o = Outcome(get("single-layer-dimension"), 0, 1.0, out.getvalue(), certificates=3)
    >>> from pathlib import Path
    >>> from attngeo.theorems.report import markdown
    >>> text = markdown([o], Path("certificates"), 2.0)
    >>> text.splitlines()[2].split(". ")[0]
    '1 statements, 1 claim: 1 certified on the range'
    >>> row = next(line for line in text.splitlines() if line.startswith("| Dimension of one lightning layer"))
    >>> row.split(" | ")[2:4]
    ["$1 \\le d \\le 3$, $d' = 2$, $a = 1$, $t = 2$", '**certified on the range**: 3 of 3 architectures certified']
    """
    failed = [o.statement.name for o in outcomes if not o.ok]
    listed = _listed(outcomes)
    lines = ["# attngeo certification report", "",
             f"{_tally(outcomes)}. " + (f"**FAILED: {', '.join(failed)}.** " if failed else "Every proof script ran "
                                        "to the end. ") + f"{seconds:.1f} s; certificates in `{out}/`, re-check with "
             f"`attngeo check {out}`.", "",
             *[f"- **{OUTCOMES[k]}**: {v}" for k, v in LEGEND.items()], ""]
    theorems = _theorems(outcomes)
    if theorems:
        lines += ["## Theorems (all sizes, with hypotheses)", "", THEOREMS_INTRO, "",
                  "| statement | formula | for every size with | proof |", "|---|---|---|---|"]
        for o in theorems:
            proof = (f"**{PROVED}** (`attngeo prove {o.statement.name}`, certificate `all-sizes.json`)"
                     if o.proved else f"**FAILED**: {o.proof_failure}")
            lines.append(f"| {o.statement.title} (`{o.statement.name}`) | {_theorem_formula(o.theorem)} | "
                         f"{_theorem_hypotheses(o.theorem)} | {proof} |")
        lines += ["", "## Instances (claims on ranges of sizes)", ""]
    lines += ["| statement | claim | sizes | outcome | time |", "|---|---|---|---|---|"]
    for o in outcomes:
        s = o.statement
        rows = o.parts or [{"latex": "", "scope": {}, "outcome": None}]
        for k, p in enumerate(rows):
            head = f"{s.title} ({s.kind}, `{s.name}`)" if k == 0 else ""
            result = f"**{OUTCOMES[p['outcome']]}**: {counts(p)}" if p["outcome"] else o.headline
            if k == 0 and not o.ok:
                result = f"**FAILED** (exit {o.exit_code}); " + result
            sizes = _sizes(o, p, listed) if p["outcome"] else ""
            lines.append(f"| {head} | {p['latex']} | {sizes} | {result} | "
                         f"{o.run if k == 0 else ''} |")
    for o in outcomes:
        s = o.statement
        lines += ["", f"## {s.title}", "", f"*{s.kind}, {s.source}; script `proofs/{s.script}.py`; "
                  f"uses {', '.join(s.depends) or 'nothing'}; {o.certificates} certificates, {o.run}.*", "",
                  s.latex, ""]
        for p in o.parts:
            lines.append(f"- {p['latex']} — **{OUTCOMES[p['outcome']]}** ({counts(p)}); "
                         f"sizes: {_sizes(o, p, listed)}")
            rows = counterexample_rows(p)
            if rows:
                lines += ["", "  | sizes | where | certified | the claim says |", "  |---|---|---|---|"]
                lines += [f"  | ${z}$ | {w} | {c} | {h} |" for z, w, c, h in rows]
                lines.append("")
        if o.proved:
            lines.append(f"- **{PROVED}** (`attngeo prove {s.name}`, certificate `all-sizes.json`): "
                         f"{_theorem_formula(o.theorem)} for every size with {_theorem_hypotheses(o.theorem)}; "
                         f"the checker: {_all_sizes(o)}")
        lines += [f"- note: {n}" for n in o.notes]
        lines += [f"- **failed**: {f}" for f in (o.failures if not o.ok else [])]
    if listed:
        lines += ["", "## Appendix A. The sizes of each listed claim"]
        for k, (o, p) in enumerate(listed, 1):
            lines += ["", f"### A.{k} {o.statement.title}", "", f"*{p['latex']}*", "", scope_latex(p["scope"])]
    keys = cited("\\begin{document}" + "\n".join(lines))
    if keys:
        lines += ["", "## References", ""] + [f"- **[{k}]** {reference(k, tex=False)}" for k in keys]
    return "\n".join(lines) + "\n"


# -- figures: the theorem graph and the strata closure graphs ---------------------------------


def theorem_figure(outcomes: list[Outcome]) -> dict:
    """Every registered statement, layered by dependency, filled by the outcome of its run.

    Arrows are the transitive reduction of the registry's graph (a use implied by a
    chain of uses is not drawn); each layer is ordered by the mean position of the
    statements it uses, which keeps arrows short.

    Returns
    -------
    dict
        ``nodes`` (id, lines, x, y, fill, emph), ``edges``, ``arrows``,
        ``scale`` and the fallback ``table``: the input of :func:`tikz`,
        :func:`table` and :func:`png`.

    Examples
    --------
    ``singular-points`` uses ``single-layer-dimension`` directly and through
    ``single-layer-fibers``; only the second is drawn:

    >>> from attngeo.theorems.registry import STATEMENTS, get, graph
    >>> from attngeo.theorems.report import Outcome, theorem_figure
    >>> fig = theorem_figure([Outcome(get("single-layer-dimension"), 0, 1.0, "")])
    >>> len(fig["nodes"]) == len(STATEMENTS), len(fig["edges"]) < graph().number_of_edges()
    (True, True)
    >>> use = ("single-layer-dimension", "singular-points")
    >>> use in graph().edges(), use in fig["edges"]
    (True, False)

    The statement that ran printed no claims (undecided); the others did not run:

    >>> fills = {n["id"]: n["fill"] for n in fig["nodes"]}
    >>> fills["single-layer-dimension"], fills["deep-dimension"]
    ('undecided', 'not run')
    """
    g, run = graph(), {o.statement.name: o for o in outcomes}
    drawn = nx.transitive_reduction(g)
    index = {s.name: k for k, s in enumerate(STATEMENTS)}
    nodes, x = [], {}
    for depth, layer in enumerate(nx.topological_generations(g)):
        def centre(name):
            above = [x[p] for p in drawn.predecessors(name)]
            return (sum(above) / len(above) if above else 0.0, index[name])
        layer = sorted(layer, key=centre)
        for i, name in enumerate(layer):
            x[name] = 4.0 * (i - (len(layer) - 1) / 2)
            o = run.get(name)
            verdict = o.label if o else "not run"
            ranges = [SHORT[p] for p in SEVERITY if o and p in {q["outcome"] for q in o.parts}]
            # a theorem for all sizes says so first; what its script's range certified follows
            shown = ([SHORT["proved"]] if verdict == "proved" else []) + ranges or [SHORT[verdict]]
            nodes.append({"id": name, "lines": [name, ", ".join(shown)], "x": x[name], "y": -1.5 * depth,
                          "fill": verdict, "emph": False})
    rows = [(tex_escape(n["id"]), tex_escape(", ".join(sorted(g.predecessors(n["id"]))) or "-"), n["lines"][1])
            for n in nodes]
    return {"nodes": nodes, "edges": sorted(drawn.edges()), "arrows": True, "scale": (1.0, 1.0),
            "table": (("statement", "uses", "outcome"), rows)}


def strata_figures(outcomes: list[Outcome]) -> list[tuple[str, dict]]:
    """(caption, figure) for each closure graph a script reported: strata at ``(rank V - rank A, rank A + rank V)``.

    A stratum whose certified label differs from [HMK]'s criterion
    ``rank A * rank V <= 1`` is emphasised (dashed).

    Examples
    --------
    One layer ``3 -> 2`` of rank 2: the stratum ``(1, 2)`` is certified
    singular although ``1 * 2 > 1`` (docs/findings.md):

    >>> import json
    >>> from attngeo import Architecture, stratify
    >>> from attngeo.theorems.registry import get, singular_region
    >>> from attngeo.theorems.report import Outcome, strata_figures
    >>> strata = stratify(Architecture((3, 2), (2,), tokens=2))
    >>> fig = {"sizes": {"d": 3, "d'": 2, "a": 2, "t": 2}, "region": singular_region(3, 2, 2),
    ...        "nodes": [{"name": st.name, "rank_A": st.rank_A, "rank_V": st.rank_V, "label": st.label,
    ...                   "hmk": "singular" if st.hmk_singular() else "smooth"} for st in strata.strata],
    ...        "edges": [list(e) for e in sorted(strata.graph.edges())]}
    >>> o = Outcome(get("singular-strata"), 0, 1.0, "summary: " + json.dumps({"parts": [], "figures": [fig]}))
    >>> (caption, drawn), = strata_figures([o])
    >>> [(n["id"], n["fill"]) for n in drawn["nodes"] if n["emph"]]
    [('(1,2)', 'singular')]
    >>> [(n["id"], int(n["x"]), int(n["y"])) for n in drawn["nodes"]][:3]
    [('zero', 0, 0), ('(1,1)', 0, 2), ('(1,2)', 1, 3)]
    """
    out = []
    for o in outcomes:
        for fig in o.result.get("figures", []):
            nodes, rows = [], []
            for n in fig["nodes"]:
                r, s = n["rank_A"], n["rank_V"]
                nodes.append({"id": n["name"], "lines": ["0" if r == 0 else f"({r},{s})"], "x": float(s - r),
                              "y": float(r + s), "fill": n["label"], "emph": n["label"] != n["hmk"]})
                rows.append(("0" if r == 0 else f"$({r},{s})$", n["label"], n["hmk"]))
            region = SINGULAR_REGIONS.get(fig["region"], tex_escape(fig["region"]))
            caption = f"${sizes_latex(fig['sizes'])}$ ({region})"
            out.append((caption, {"nodes": nodes, "edges": [tuple(e) for e in fig["edges"]], "arrows": False,
                                  "scale": (0.75, 0.6), "table": (("stratum", "label", "[HMK]"), rows)}))
    return out


def tikz(fig: dict) -> str:
    """A figure as a tikzpicture (nodes are boxes; emphasised ones dashed and thick).

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome, theorem_figure, tikz
    >>> fig = theorem_figure([Outcome(get("single-layer-dimension"), 0, 1.0, "")])
    >>> picture = tikz(fig)
    >>> picture.count("node[box") == len(fig["nodes"]), picture.count("draw[->]") == len(fig["edges"])
    (True, True)
    >>> picture.count("fill=white") == len(fig["nodes"]) - 1      # every statement but one not run
    True
    """
    sx, sy = fig["scale"]
    ids = {n["id"]: f"n{k}" for k, n in enumerate(fig["nodes"])}
    body = [rf"\begin{{tikzpicture}}[x={sx}cm, y={sy}cm, box/.style={{draw, rounded corners, align=center, "
            r"font=\footnotesize, inner sep=2pt}]"]
    for n in fig["nodes"]:
        style = f"box, fill={COLOURS[n['fill']][0]}" + (", very thick, dashed" if n["emph"] else "")
        label = r"\\".join(tex_escape(line) for line in n["lines"])
        body.append(rf"\node[{style}] ({ids[n['id']]}) at ({n['x']:.2f}, {n['y']:.2f}) {{{label}}};")
    arrow = "->" if fig["arrows"] else "-"
    body += [rf"\draw[{arrow}] ({ids[u]}) -- ({ids[v]});" for u, v in fig["edges"]]
    body.append(r"\end{tikzpicture}")
    return "\n".join(body)


def table(fig: dict) -> str:
    """A figure's fallback: its table (cells are LaTeX text).

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome, table, theorem_figure
    >>> fig = theorem_figure([Outcome(get("single-layer-dimension"), 0, 1.0, "")])
    >>> rows = table(fig).splitlines()
    >>> len(rows) == len(fig["nodes"]) + 3       # begin, header, one row per node, end
    True
    >>> cells = {row.split(" & ")[0]: row.split(" & ")[1] for row in rows[2:-1]}
    >>> cells["single-layer-dimension"], cells["deep-fibers"]
    ('-', 'deep-dimension, single-layer-fibers')
    """
    header, rows = fig["table"]
    return "\n".join([r"\begin{tabular}{" + "l" * len(header) + "}", " & ".join(header) + r" \\ \hline",
                      *[" & ".join(row) + r" \\" for row in rows], r"\end{tabular}"])


def png(fig: dict, path: Path) -> Path:
    r"""A figure drawn with matplotlib (requires the optional extra ``plot``).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome, png, theorem_figure
    >>> import pytest
    >>> _ = pytest.importorskip("matplotlib", reason="pip install 'attngeo[plot]'")
    >>> path = png(theorem_figure([Outcome(get("single-layer-dimension"), 0, 1.0, "")]),
    ...            Path(tempfile.mkdtemp()) / "theorems.png")
    >>> path.read_bytes()[:4]
    b'\x89PNG'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sx, sy = fig["scale"]
    pos = {n["id"]: (n["x"] * sx, n["y"] * sy) for n in fig["nodes"]}
    xs, ys = [p[0] for p in pos.values()], [p[1] for p in pos.values()]
    f, ax = plt.subplots(figsize=(0.8 * (max(xs) - min(xs) + 3), 0.8 * (max(ys) - min(ys) + 1.5)))
    text = {}
    for n in fig["nodes"]:
        box = {"boxstyle": "round", "fc": COLOURS[n["fill"]][1], "ec": "black",
               "ls": "--" if n["emph"] else "-", "lw": 2 if n["emph"] else 0.8}
        text[n["id"]] = ax.text(*pos[n["id"]], "\n".join(n["lines"]), ha="center", va="center", fontsize=8, bbox=box)
    for u, v in fig["edges"]:  # from the bottom of u's box to the top of v's (edges point down)
        ax.annotate("", xy=(0.5, 1), xycoords=text[v], xytext=(0.5, 0), textcoords=text[u],
                    arrowprops={"arrowstyle": "->" if fig["arrows"] else "-", "color": "0.35"})
    ax.set_xlim(min(xs) - 1.5, max(xs) + 1.5)
    ax.set_ylim(min(ys) - 0.75, max(ys) + 0.75)
    ax.set_axis_off()
    f.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(f)
    return path


def _drawn(fig: dict, out: Path, name: str, width: str) -> tuple[str, bool]:
    """The figure as a PNG when matplotlib is installed, else TikZ with its table as fallback; and whether a PNG."""
    if importlib.util.find_spec("matplotlib") is not None:
        return rf"\includegraphics[width={width}]{{{png(fig, out / name).name}}}", True
    return "\n".join([r"\iftikz", tikz(fig), r"\else", table(fig), r"\fi"]), False


def _caption(drawing: str, fallback: str, png_drawn: bool) -> str:
    """The caption of what the page shows: the drawing's, or (TikZ missing when compiled) the table's."""
    if png_drawn:
        return rf"\caption{{{drawing}}}"
    return rf"\iftikz\caption{{{drawing}}}\else\caption{{{fallback}}}\fi"


# -- LaTeX ---------------------------------------------------------------------------------------

PREAMBLE = r"""\documentclass[10pt]{article}
\usepackage[T1]{fontenc}
\IfFileExists{lmodern.sty}{\usepackage{lmodern}}{}
\usepackage[margin=2cm]{geometry}
\usepackage{amsmath,amssymb,array,longtable,graphicx}
\newif\iftikz
\IfFileExists{tikz.sty}{\tikztrue\usepackage{tikz}}{}
\newcolumntype{P}[1]{>{\raggedright\arraybackslash}p{#1}}
\setlength{\tabcolsep}{3pt}
\begin{document}
"""


def _listed(outcomes: list[Outcome]) -> list[tuple[Outcome, dict]]:
    """The claims whose sizes are a list rather than a grid: the appendix prints them, the tables refer to it."""
    return [(o, p) for o in outcomes for p in o.parts if "list" in p.get("scope", {})]


def _sizes(o: Outcome, p: dict, listed: list) -> str:
    """A claim's sizes for a table or a section: the grid, or a summary and where the list is."""
    k = next((k for k, (u, q) in enumerate(listed, 1) if u is o and q["key"] == p["key"]), None)
    return scope_latex(p["scope"]) if k is None else scope_summary(p["scope"]) + f"; listed in Appendix A.{k}"


def _results_table(outcomes: list[Outcome]) -> list[str]:
    listed = _listed(outcomes)
    body = [r"{\small", r"\begin{longtable}{P{0.16\linewidth}P{0.3\linewidth}P{0.2\linewidth}P{0.22\linewidth}r}",
            r"statement & claim & sizes & outcome & time \\ \hline \endhead"]
    for o in outcomes:
        s = o.statement
        rows = o.parts or [{"latex": "", "scope": {}, "outcome": None}]
        for k, p in enumerate(rows):
            # the grid goes beside the statement: the narrow time column holds the wall time only
            kind = tex_escape(s.kind) + (f"; {o.grid}" if o.grid else "")
            head = rf"\textbf{{{tex_escape(s.title)}}} ({kind})" if k == 0 else ""
            result = rf"\textbf{{{OUTCOMES[p['outcome']]}}}: {counts(p)}" if p["outcome"] else tex_escape(o.headline)
            if k == 0 and not o.ok:
                result = rf"\textbf{{FAILED}} (exit {o.exit_code}); " + result
            seconds = rf"{o.seconds:.1f}\,s" if k == 0 else ""
            sizes = _sizes(o, p, listed) if p["outcome"] else ""
            body.append(rf"{head} & {p['latex']} & {sizes} & {result} & {seconds} \\")
        body.append(r"\hline")
    body += [r"\end{longtable}", "}"]
    return body


def _theorems_section(outcomes: list[Outcome]) -> list[str]:
    """The theorems proved for all sizes, each with its formula and every hypothesis, apart from the ranges."""
    theorems = _theorems(outcomes)
    if not theorems:
        return []
    body = [r"\section{Theorems proved for all sizes}",
            r"Each holds for every size that satisfies its hypotheses: an all-sizes certificate "
            r"(\texttt{attngeo prove}, docs/math.md \S 7.1) that the checker verified. A hypothesis bounding a size "
            r"by a constant limits the theorem to those values. The claims on ranges of sizes follow in the next "
            r"section: what a range of instances certifies is no theorem beyond it.",
            r"{\small", r"\begin{longtable}{P{0.2\linewidth}P{0.3\linewidth}P{0.26\linewidth}P{0.18\linewidth}}",
            r"statement & formula & for every size with & proof \\ \hline \endhead"]
    for o in theorems:
        proof = (rf"\textbf{{{PROVED}}} (certificate \texttt{{all-sizes.json}})" if o.proved else
                 rf"\textbf{{FAILED}}: {tex_escape(o.proof_failure)}")
        body.append(rf"\textbf{{{tex_escape(o.statement.title)}}} (\texttt{{{tex_escape(o.statement.name)}}}) & "
                    rf"{_theorem_formula(o.theorem)} & {_theorem_hypotheses(o.theorem)} & {proof} \\ \hline")
    body += [r"\end{longtable}", "}"]
    return body


def _statement_section(o: Outcome, listed: list) -> list[str]:
    s = o.statement
    uses = ", ".join(tex_escape(d) for d in s.depends) or "nothing"
    run = o.run.replace(" s", r"\,s")
    body = [rf"\subsection*{{{tex_escape(s.title)}}}",
            rf"\emph{{{tex_escape(s.kind)}, {tex_escape(s.source)}; uses {uses}; {o.certificates} certificates, "
            rf"{run}.}}", "", rf"\emph{{Statement.}} {s.latex}.", ""]
    if o.parts:
        body.append(r"\begin{itemize}")
        for p in o.parts:
            body.append(rf"\item{{}} {p['latex']}: \textbf{{{OUTCOMES[p['outcome']]}}} ({counts(p)}); "
                        rf"sizes: {_sizes(o, p, listed)}.")
            rows = counterexample_rows(p)
            if rows:
                body += [r"\par\smallskip{\small\begin{longtable}{P{0.36\linewidth}P{0.26\linewidth}P{0.14\linewidth}"
                         r"P{0.14\linewidth}}", r"counterexample & where & certified & the claim says \\ \hline",
                         *[rf"${z}$ & {w} & {c} & {h} \\" for z, w, c, h in rows], r"\end{longtable}}"]
        body.append(r"\end{itemize}")
    if o.proved:
        body += [r"\begin{itemize}", rf"\item{{}} \textbf{{{PROVED}}} (\texttt{{attngeo prove "
                 rf"{tex_escape(s.name)}}}): {_theorem_formula(o.theorem)} for every size with "
                 rf"{_theorem_hypotheses(o.theorem)}.", r"\end{itemize}"]
    if o.notes:
        body += [r"\begin{itemize}", *[rf"\item[] \emph{{Note.}} {n}" for n in o.notes], r"\end{itemize}"]
    if not o.ok:
        body += [r"\begin{itemize}", *[rf"\item{{}} failed: {tex_escape(f)}" for f in o.failures], r"\end{itemize}"]
    return body


def latex(outcomes: list[Outcome], out: Path, seconds: float) -> str:
    r"""The standalone LaTeX report: tally, legend, results table, the theorem graph, strata graphs, sections.

    Figures are PNGs written into ``out`` when matplotlib is installed, else
    TikZ with a table fallback (chosen when the document is compiled).

    Examples
    --------
    >>> import contextlib, io
    >>> from attngeo.theorems.proof import Claim, Entry, print_summary
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     print("3 cases in 0.1 s: 3 certified; certificates: out/")
    ...     print_summary([Claim("single", "dim formula")],
    ...                   [Entry("single", {"d": d, "d'": 2, "a": 1, "t": 2}, "certified") for d in (1, 2, 3)])
    >>> o = Outcome(get("single-layer-dimension"), 0, 1.0, out.getvalue(), certificates=3)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from attngeo.theorems.report import latex
    >>> tex = latex([o], Path(tempfile.mkdtemp()), 2.0)
    >>> tex.startswith("\\documentclass"), tex.rstrip().endswith("\\end{document}")
    (True, True)
    >>> "certified on the range" in tex, tex.count("subsection*{Dimension of one lightning layer}")
    (True, 1)
    >>> tex.index("section{Notation and vocabulary}") < tex.index("section{Results}"), cited(tex)
    (True, ['HMK', 'MHA'])
    """
    failed = [o.statement.name for o in outcomes if not o.ok]
    listed = _listed(outcomes)
    body = [PREAMBLE + r"\begin{center}{\Large attngeo certification report}\end{center}",
            tex_escape(_tally(outcomes)) + ". " + (rf"\textbf{{FAILED: {tex_escape(', '.join(failed))}.}} " if failed
                                                    else "Every proof script ran to the end. ")
            + rf"Run time {seconds:.1f}\,s. The certificates lie next to this report; "
              r"\texttt{attngeo check} re-verifies them.", "",
            NOTATION, r"\begin{description}", *[rf"\item[{OUTCOMES[k]}] {v}." for k, v in LEGEND.items()],
            r"\item[failed] a proof script stopped, or a certificate it wrote was rejected.",
            r"\end{description}",
            *_theorems_section(outcomes),
            r"\section{Instances: claims on ranges of sizes}" if _theorems(outcomes) else r"\section{Results}",
            "Sizes that are not a full grid are summarized here and listed in Appendix A.",
            *_results_table(outcomes), *_theorem_figure(outcomes, out)]
    body += _strata_figure(outcomes, out)
    body.append(r"\section{The statements}")
    for o in outcomes:
        body += _statement_section(o, listed)
    if listed:
        body += [r"\appendix", r"\section*{Appendix A. The sizes of each listed claim}",
                 r"\addcontentsline{toc}{section}{Appendix A}"]
        for k, (o, p) in enumerate(listed, 1):
            body += [rf"\subsection*{{A.{k}\quad {tex_escape(o.statement.title)}}}", rf"\emph{{{p['latex']}}}", "",
                     rf"{{\footnotesize\raggedright {scope_latex(p['scope'])}.\par}}"]
    body += _bibliography("\n".join(body))
    body.append(r"\end{document}")
    return "\n".join(body) + "\n"


def cited(text: str) -> list[str]:
    """The keys ``[KEY]`` the text cites (after ``\\begin{document}``), in order of first citation.

    Examples
    --------
    >>> cited(r"\\usepackage[T1]{fontenc}\\begin{document} as [HMK] state; [MHA] and [HMK] again; $[0, 1]$")
    ['HMK', 'MHA']
    """
    body = text.split(r"\begin{document}", 1)[-1]
    return list(dict.fromkeys(re.findall(r"\[([A-Z][A-Za-z]+)\]", body)))


def _bibliography(text: str) -> list[str]:
    """The references section: an entry for every work the text cites (a key without an entry is printed as such)."""
    keys = cited(text)
    return [r"\section*{References}", r"\begin{description}",
            *[rf"\item[{{[{k}]}}] {reference(k)}" for k in keys], r"\end{description}"] if keys else []


def _theorem_figure(outcomes: list[Outcome], out: Path) -> list[str]:
    drawing, as_png = _drawn(theorem_figure(outcomes), out, "report-theorems.png", r"\linewidth")
    fills = (r"filled by outcome: dark green a theorem proved for all sizes, green certified on the range, blue "
             r"instances certified, red refuted, grey bounds only or undecided, white not run")
    return [r"\begin{figure}[htbp]\centering", drawing,
            _caption(r"The statements and what they build on (an arrow points to a statement that uses another; "
                     r"uses implied by a chain of arrows are not drawn), " + fills + ".",
                     r"The statements, the statements each uses directly, and the outcome of its run.", as_png),
            r"\end{figure}"]


def _strata_figure(outcomes: list[Outcome], out: Path) -> list[str]:
    strata = strata_figures(outcomes)
    if not strata:
        return []
    body, as_png = [r"\begin{figure}[htbp]\centering"], True
    for k, (caption, fig) in enumerate(strata):
        drawing, as_png = _drawn(fig, out, f"report-strata-{k + 1}.png", r"0.9\linewidth")
        body += [r"\begin{minipage}[b]{0.48\linewidth}\centering", drawing,
                 rf"\par\small {caption}\end{{minipage}}" + (r"\hfill" if k % 2 == 0 else r"\par\medskip")]
    hmk = r"[HMK]'s criterion $\operatorname{rank} A \cdot \operatorname{rank} V \le 1$"
    body += [_caption(r"Closure graphs of the strata $S_{r,s}$ ($\operatorname{rank} A = r$, "
                      r"$\operatorname{rank} V = s$; a line joins a stratum to one in its closure, drawn below it), "
                      r"filled by the certified label: red singular, green smooth, white undecided. Dashed: the label "
                      rf"differs from {hmk}.",
                      r"The strata $S_{r,s}$ ($\operatorname{rank} A = r$, $\operatorname{rank} V = s$) of each "
                      rf"architecture, with the certified label and the label {hmk} gives.", as_png),
             r"\end{figure}"]
    return body


def write_reports(outcomes: list[Outcome], out: Path, seconds: float) -> tuple[Path, Path]:
    """Write ``out/report.md`` and ``out/report.tex`` (atomically); return their paths.

    Examples
    --------
    >>> import contextlib, io
    >>> from attngeo.theorems.proof import Claim, Entry, print_summary
    >>> from attngeo.theorems.registry import get
    >>> from attngeo.theorems.report import Outcome
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     print("3 cases in 0.1 s: 3 certified; certificates: out/")
    ...     print_summary([Claim("single", "dim formula")],
    ...                   [Entry("single", {"d": d, "d'": 2, "a": 1, "t": 2}, "certified") for d in (1, 2, 3)])
    >>> o = Outcome(get("single-layer-dimension"), 0, 1.0, out.getvalue(), certificates=3)
    >>> import tempfile
    >>> from pathlib import Path
    >>> from attngeo.theorems.report import markdown, write_reports
    >>> folder = Path(tempfile.mkdtemp())
    >>> md, tex = write_reports([o], folder, 2.0)
    >>> md.name, tex.name, md.read_text() == markdown([o], folder, 2.0)
    ('report.md', 'report.tex', True)
    """
    return (write_text(out / "report.md", markdown(outcomes, out, seconds)),
            write_text(out / "report.tex", latex(outcomes, out, seconds)))
