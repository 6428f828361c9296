"""The registry of statements attngeo certifies, as a networkx dependency graph.

Each :class:`Statement` is one claim — a theorem, corollary or conjecture of
[HMK], or one of the toolkit's own findings — with the proof script in
``proofs/`` that tests it and the statements it builds on (an edge ``A -> B``
means B uses A). ``attngeo certify`` runs the scripts in a topological order of
this graph and writes a report (:mod:`attngeo.theorems.report`).

The registry says what is claimed, never what came of it: each script splits
its statement into claims over regions of sizes and reports, per claim, how many
cases it certified, bounded, left undecided or found to contradict the claim
(:mod:`attngeo.theorems.proof`), and :func:`classify` turns those counts into one of
:data:`OUTCOMES`.

>>> g = graph()
>>> import networkx as nx
>>> nx.is_directed_acyclic_graph(g) and order()[0] == "single-layer-dimension"
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from ..exceptions import InvalidInputError


@dataclass(frozen=True)
class Statement:
    """One certified statement: what it claims, where it is stated, the script that tests it, what it uses.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"singular-points"``.
    kind : str
        ``theorem``, ``corollary``, ``conjecture`` or ``finding`` (a conjecture
        is never "certified on the range", see :func:`classify`).
    source : str
        Where it is stated.
    title : str
        A short title for the report.
    latex : str
        The statement, math inside ``$...$``.
    script : str
        ``proofs/<script>.py``, which tests it and reports what it covered.
    depends : tuple of str
        Names of the statements it builds on.
    all_sizes : bool
        ``attngeo prove <name>`` proves it for every size in its hypotheses (docs/math.md §7.1); the script
        still certifies a range, and ``attngeo certify`` runs both.

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> s = get("singular-points")
    >>> s.kind, s.script, s.depends
    ('theorem', 'singular_points', ('single-layer-dimension', 'single-layer-fibers'))
    """

    name: str
    kind: str  # theorem / corollary / conjecture / finding
    source: str  # where it is stated
    title: str
    latex: str  # the statement in LaTeX (math mode pieces inside $...$)
    script: str  # proofs/<script>.py; the sizes it covers are what it reports
    depends: tuple[str, ...] = field(default_factory=tuple)
    all_sizes: bool = False


STATEMENTS: tuple[Statement, ...] = (
    Statement(
        "single-layer-dimension", "theorem", "[HMK] Thm. (single layer)",
        "Dimension of one lightning layer",
        r"$\dim \mathcal M_{d,d',a} = 2ad + dd' - a^2 - 1$ for $a \le d$, and $d^2 + dd' - 1$ for $a > d$ ($t \ge 2$)",
        "single_layer_dimension", all_sizes=True),
    Statement(
        "deep-dimension", "theorem", "[HMK] Thm. (deep, equal widths)",
        "Dimension of deep lightning networks",
        r"$\dim \mathcal M = l\,a(2d - a) + d^2 - l$ for equal widths $d$ and ranks $a \le d$, $t \ge 2$",
        "deep_dimension",
        ("single-layer-dimension",), all_sizes=True),
    Statement(
        "single-layer-fibers", "theorem", "[HMK] Thm. (identifiability)",
        "Fibers of one lightning layer",
        r"the fiber of $(A, V) \mapsto \varphi_{A,V}$ is the scaling line $\lbrace (\lambda A, \lambda^{-1} V)\rbrace$ "
        r"when $\operatorname{rank} A \ge 2$ or $\operatorname{rank} V \ge 2$, so at a generic point; two lines at "
        r"rank-1 swap points, one at rank-1 parallel points; $\lbrace A = 0\rbrace \cup \lbrace V = 0\rbrace$ over $0$",
        "single_layer_fibers",
        ("single-layer-dimension",)),
    Statement(
        "deep-fibers", "theorem", "attngeo (docs/math.md §7.8; docs/findings.md 8-11, 21, 22)",
        "Fibers of deep networks and their hidden symmetries",
        r"with every hidden width $d_0$, the generic fiber is one symmetry orbit exactly when $a_i \ge 2$ before the "
        r"last layer, $2 a_l + d_l \ge d_0$ and $a_l + d_l \ge 3$ (docs/math.md \S 7.8); two orbits, a swap, when "
        r"instead $a_l = d_l = 1$ ($a_i \ge 2$ before it, $d_0 \le 3$); hidden $A_j \mapsto A_j^T$ after a layer of "
        r"rank 1 ($A_2 \mapsto A_2 + sS$ and $S_3$ at small sizes); weights with a singular $V_{l-1}$, limits of the "
        r"orbit, when $2 a_l + d_l < d_0$",
        "deep_fibers",
        ("single-layer-fibers", "deep-dimension"), all_sizes=True),
    Statement(
        "singular-points", "theorem", "[HMK] Thm. (singular points)",
        "Singular points of one layer",
        r"$\varphi_{A,V}$ is a singular point of $\mathcal M$ iff "
        r"$\operatorname{rank} A \cdot \operatorname{rank} V \le 1$",
        "singular_points",
        ("single-layer-dimension", "single-layer-fibers")),
    Statement(
        "singular-strata", "finding", "attngeo (docs/findings.md 3-5, 7)",
        "The singular locus stratum by stratum",
        r"each stratum $S_{r,s} = \lbrace \operatorname{rank} A = r,\ \operatorname{rank} V = s\rbrace$ is singular on "
        r"all of $S_{r,s}$ or smooth at its generic point; for $1 < a < d$ every stratum with "
        r"$\operatorname{rank} A < a$ is singular; the implicit equations of $\mathcal M$ agree with the tangent "
        r"criteria",
        "singular_strata",
        ("singular-points",)),
    Statement(
        "boundary-points", "corollary", "[HMK] (boundary points); attngeo Lemma B",
        "Boundary points of the real neuromanifold",
        r"the boundary of $\mathcal M_{\mathbb R}$ in $\mathcal M_{\mathbb C} \cap \mathbb R^N$ is "
        r"$\lbrace 0\rbrace \cup \lbrace (s \cdot y)^2 R\rbrace$; definite $q(y) R$ need complex weights",
        "boundary_points",
        ("single-layer-fibers",)),
    Statement(
        "softmax-single-layer", "theorem", "[HMK] Thm. (normalized, one layer)",
        "Dimension of one softmax layer",
        r"$\dim \mathcal M = a(2d - a) + dd'$ for $a \le d$ and $d^2 + dd'$ for $a > d$ ($t \ge 2$)",
        "softmax_single_layer",
        ("single-layer-dimension",)),
    Statement(
        "softmax-conjecture", "conjecture", "[HMK] Conj. 3.10",
        "Dimension of deep softmax networks",
        r"$\dim \mathcal M = l\,a(2d - a) + d^2$ for equal widths $d$ and ranks $a \le d$, $t \ge 2$ "
        r"(the lightning dimension $+\, l$)",
        "softmax_deep",
        ("deep-dimension", "softmax-single-layer")),
    Statement(
        "every-architecture", "finding", "attngeo (docs/invariance.md §5, docs/findings.md 15)",
        "Dimension of every architecture, with kernel fields beyond the groups",
        r"the symmetry groups and the kernel fields (annihilator, symmetric score, score-free, co-annihilator) "
        r"span the kernel of $d\varphi$ for every architecture (the bounds meet); and the dimension equals that of "
        r"the network with hidden widths clipped to $\min(d_0, \dots, d_i)$",
        "every_architecture",
        ("deep-dimension", "softmax-single-layer")),
    Statement(
        "multihead-dimension", "finding", "attngeo (docs/multihead.md, docs/findings.md 17-19)",
        "Dimension of multi-head attention with value bottlenecks, residual connections and causal masks",
        r"per-head $GL_a$ (and $\mathbb{C}^*$ for lightning), $GL_b$ on $V = OU$, $GL_{d_i}$ between layers "
        r"unless residual, the mixing of heads (free for $a \ge d$, inside the rank-$a$ matrices for $a < d$, on "
        r"the symmetric parts for one token, inside both determinantal varieties with value bottlenecks), the annihilators of narrow value maps and, for one "
        r"lightning layer, the span $d' d^2 (d+1)/2$ bound $\dim \mathcal M$; the dimension is compared "
        r"with parameters $-\dim G$ and, for one softmax layer, with the published [MHA] "
        r"$h(2ad + b(d + d')) - h(a^2 + b^2)$",
        "multihead_dimension",
        ("every-architecture", "softmax-single-layer")),
    Statement(
        "multihead-layer-dimension", "theorem", "attngeo (docs/math.md §7.1)",
        "Dimension of one multi-head layer with heads on disjoint blocks",
        r"$\dim \mathcal M = h(2ad + 2bd - a^2 - b^2 - 1) = P - h(a^2 + 1 + b^2)$ for one lightning layer "
        r"$d \to d$ with $h$ heads of rank $a$ and value rank $b$ ($V_j = O_j U_j$), $h \max(a, b) \le d$, "
        r"$t \ge 2$",
        "multihead_layer_dimension",
        ("single-layer-dimension",), all_sizes=True),
    Statement(
        "multihead-bottleneck", "conjecture", "attngeo (docs/math.md §7.3, docs/findings.md 19)",
        "Dimension of one multi-head layer with value bottlenecks",
        r"one lightning layer $d \to d'$, $d \ge 2$, $h$ heads of rank $a$, value rank $b$: heads re-split inside both "
        r"determinantal varieties (factored mixing), and $\dim \mathcal M = \min(N, h(\dim A + \dim V - 1) "
        r"- h \max(0, \min(h - 1, d^2) - (d - a)^2 - (d' - b)(d - b)))$ with $N$ the span bound",
        "multihead_bottleneck",
        ("multihead-dimension",)),
    Statement(
        "multihead-fibers", "finding", "attngeo (docs/fibers.md §4, docs/findings.md 20)",
        "Fibers of multi-head attention layers",
        r"a generic fiber of one lightning layer with $h$ heads is one orbit of the group and the $h!$ head "
        r"permutations, except where $\dim \mathcal M < P - \dim G$ (positive-dimensional fibers: heads re-split) "
        r"and where hidden discrete symmetries appear",
        "multihead_fibers",
        ("multihead-dimension", "deep-fibers")),
    Statement(
        "softmax-criterion", "theorem", "attngeo (docs/math.md §8.3, Theorem C)",
        "The local rank of a softmax layer from ranks of stacked weights",
        r"under (C1)--(C5) a softmax layer with $h$ heads in $g$ key-value groups has local rank "
        r"$P - g(a^2 + b^2)$, and $P - g(a^2 + b^2 + a + b)$ with biases, at every score scale, causal or not, "
        r"residual or not ($t \ge 2$, $h a \le d$, $h b \le d'$); hence, at a selector point, "
        r"$\dim \mathcal M$ for every such size with $b \le d$ and $a + b + d \ge 5$ (Corollary C); compared "
        r"with direct ball-arithmetic Jacobian ranks at random and degenerate points",
        "softmax_criterion",
        ("softmax-single-layer", "multihead-dimension"), all_sizes=True),
    Statement(
        "affine-dimension", "finding", "attngeo (docs/math.md §8.1, Lemma B)",
        "What biases add to the dimension of one attention layer",
        r"softmax: $\dim \mathcal M_{\text{biases}} = \dim \mathcal M + h a + d'$ (the key bias is invisible, "
        r"the value bias merges with the output bias); lightning with $h a \le d$: every bias parameter adds one "
        r"dimension",
        "affine_attention",
        ("softmax-criterion",)),
    Statement(
        "rank-one-ideal", "theorem", "attngeo (docs/math.md §7.9, Theorem 7.9)",
        "The whole ideal of one layer of output width 1 and rank 1",
        r"for $d' = 1$, $a = 1$, $t \ge 2$ and every $d$: $I(\mathcal M)$ is minimally generated by the $2 \times 2$ "
        r"minors of $[c_{1,p,mn}]$ and the lifts of the $3 \times 3$ minors of the symmetric matrix of "
        r"$(v \cdot y)(k \cdot y)$, in degrees 2 and 3 only ($\mathcal M$ is a Segre product of $\mathbb P^{d-1}$ "
        r"with the quadratic forms of rank $\le 2$)",
        "whole_ideal",
        ("single-layer-dimension",)),
)


#: What ``attngeo prove`` establishes, as the report words it (beside the outcome of the script's range).
PROVED = "proved for all sizes"

#: What a run can establish about one claim, as the report words it.
OUTCOMES = {
    "proved": PROVED,  # attngeo prove: an all-sizes certificate (never the outcome of a script's counts)
    "certified": "certified on the range",  # every case of the stated range certified
    "instances": "instances certified",  # finitely many instances certified; no proof of the claim beyond them
    "refuted": "refuted",  # a certified counterexample
    "bounds": "bounds only",  # the bounds did not meet
    "undecided": "undecided",  # nothing certified either way
    "failed": "failed",  # a certificate was rejected or a case raised
}


def classify(part: dict, kind: str = "theorem") -> str:
    """The outcome (a key of :data:`OUTCOMES`) of one claim from a proof script's counts.

    A certified counterexample refutes, whatever else happened. "Certified on the
    range" needs every case certified, cases that each settle the claim for their
    size (mode ``range``), a range that is a full grid, and a statement that is
    not a conjecture: a conjecture checked on any finite family is instances.

    Parameters
    ----------
    part : dict
        One claim of a script's ``summary: {json}`` line: ``mode``, ``cases``,
        the count of each status, ``scope`` and ``counterexamples``.
    kind : str
        The statement's kind.

    Returns
    -------
    str
        ``certified``, ``instances``, ``refuted``, ``failed``, ``bounds`` or ``undecided``.

    Examples
    --------
    >>> from attngeo.theorems.registry import classify
    >>> part = {"mode": "range", "cases": 3, "certified": 3, "scope": {"count": 3, "factors": []}}
    >>> classify(part), classify(part, "conjecture"), classify({**part, "counterexamples": [{}]})
    ('certified', 'instances', 'refuted')

    One case short of the range, or sampled points rather than sizes, is instances:

    >>> classify({**part, "certified": 2, "bounds": 1}), classify({**part, "mode": "instances"})
    ('instances', 'instances')
    >>> classify({"mode": "range", "cases": 2, "certified": 0, "bounds": 2})
    'bounds'
    """
    if part.get("counterexamples") or part.get("refuted"):
        return "refuted"
    if part.get("failed"):
        return "failed"
    if not part.get("certified"):
        return "bounds" if part.get("bounds") else "undecided"
    complete = (part.get("mode") == "range" and kind != "conjecture" and part["certified"] == part["cases"]
                and "list" not in part.get("scope", {}))
    return "certified" if complete else "instances"


#: [HMK]'s singular-point criterion, and the regions of sizes where it is tested separately
#: (docs/findings.md 3-4): a key for the scripts, the region in LaTeX for the report.
HMK_SINGULAR = r"$\varphi_{A,V}$ singular iff $\operatorname{rank} A \cdot \operatorname{rank} V \le 1$"
SINGULAR_REGIONS = {
    "a >= d": r"$a \ge d$",
    "a = 1, d' >= 2": r"$a = 1$, $d' \ge 2$",
    "1 < a < d": r"$1 < a < d$",
    "a = 1, d' = 1": r"$a = 1$, $d' = 1$, where every point has $\operatorname{rank} A = \operatorname{rank} V = 1$, "
                     r"so the criterion calls all of $\mathcal M$ singular",
}


def singular_region(d: int, d_out: int, a: int) -> str:
    """The key of :data:`SINGULAR_REGIONS` the single-layer sizes ``d, d', a`` fall in.

    Examples
    --------
    >>> from attngeo.theorems.registry import singular_region
    >>> [singular_region(3, 3, a) for a in (1, 2, 3)]
    ["a = 1, d' >= 2", '1 < a < d', 'a >= d']
    >>> singular_region(2, 1, 1)      # every point has rank A = rank V = 1
    "a = 1, d' = 1"
    """
    if a == 1 and d_out == 1 and d >= 2:
        return "a = 1, d' = 1"
    if a >= d:
        return "a >= d"
    return "a = 1, d' >= 2" if a == 1 else "1 < a < d"


def graph() -> nx.DiGraph:
    """Statements as nodes (attribute ``statement``), edges from a statement to those using it.

    Examples
    --------
    The deep softmax conjecture rests on both dimension theorems and the
    single-layer softmax one:

    >>> import networkx as nx
    >>> from attngeo.theorems.registry import graph
    >>> g = graph()
    >>> nx.is_directed_acyclic_graph(g), sorted(nx.ancestors(g, "softmax-conjecture"))
    (True, ['deep-dimension', 'single-layer-dimension', 'softmax-single-layer'])
    >>> g.nodes["every-architecture"]["statement"].kind, g.nodes["deep-fibers"]["statement"].kind
    ('finding', 'theorem')
    """
    g = nx.DiGraph()
    for s in STATEMENTS:
        g.add_node(s.name, statement=s)
    for s in STATEMENTS:
        for dep in s.depends:
            g.add_edge(dep, s.name)
    return g


def order() -> list[str]:
    """Statement names in dependency order (ties broken by the registry's order).

    Examples
    --------
    >>> from attngeo.theorems.registry import STATEMENTS, graph, order
    >>> names = order()
    >>> names[0], sorted(names) == sorted(s.name for s in STATEMENTS)
    ('single-layer-dimension', True)
    >>> all(names.index(u) < names.index(v) for u, v in graph().edges())
    True
    """
    index = {s.name: k for k, s in enumerate(STATEMENTS)}
    return list(nx.lexicographical_topological_sort(graph(), key=index.get))


def get(name: str) -> Statement:
    """The statement with registry name or script name ``name``.

    Raises
    ------
    InvalidInputError
        No such statement; the message lists them (it is the ``--only`` option of ``attngeo certify``).

    Examples
    --------
    >>> from attngeo.theorems.registry import get
    >>> get("boundary_points").name
    'boundary-points'
    >>> get("fibres")     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: --only fibres: not a registered statement; choose one of single-layer-dimension, ...
    """
    for s in STATEMENTS:
        if s.name == name or s.script == name:
            return s
    names = ", ".join(s.name for s in STATEMENTS)
    raise InvalidInputError(f"--only {name}: not a registered statement; choose one of {names}")
