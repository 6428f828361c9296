"""The registry of statements attngeo certifies, as a networkx dependency graph.

Each :class:`Statement` is one claim — a theorem, corollary or conjecture of
[HMK], or one of the toolkit's own findings — with the proof script in
``proofs/`` that certifies it, the sizes that script covers, and the statements
it builds on (an edge ``A -> B`` means B uses A). ``attngeo certify`` runs the
scripts in a topological order of this graph and writes a report
(:mod:`attngeo.report`).

>>> g = graph()
>>> import networkx as nx
>>> nx.is_directed_acyclic_graph(g) and order()[0] == "single-layer-dimension"
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from .exceptions import InvalidInputError


@dataclass(frozen=True)
class Statement:
    name: str
    kind: str  # theorem / corollary / conjecture / finding
    source: str  # where it is stated
    title: str
    latex: str  # the statement in LaTeX (math mode pieces inside $...$)
    script: str  # proofs/<script>.py
    sizes: str  # the range of sizes the script covers
    depends: tuple[str, ...] = field(default_factory=tuple)


STATEMENTS: tuple[Statement, ...] = (
    Statement(
        "single-layer-dimension", "theorem", "[HMK] Thm. (single layer)",
        "Dimension of one lightning layer",
        r"$\dim \mathcal M_{d,d',a} = 2ad + dd' - a^2 - 1$ for $a \le d$, and $d^2 + dd' - 1$ for $a > d$ ($t \ge 2$)",
        "single_layer_dimension", "d, d' <= 6, 1 <= a <= d + 1, t in {2, 3} (324 cases)"),
    Statement(
        "deep-dimension", "theorem", "[HMK] Thm. (deep, equal widths)",
        "Dimension of deep lightning networks",
        r"$\dim \mathcal M = l\,a(2d - a) + d^2 - l$ for equal widths $d$ and ranks $a \le d$, $t \ge 2$",
        "deep_dimension", "l <= 3, d <= 6, a <= d, t in {2, 3}; 12 unequal-width shapes (bounds or values)",
        ("single-layer-dimension",)),
    Statement(
        "single-layer-fibers", "theorem", "[HMK] Thm. (identifiability)",
        "Fibers of one lightning layer",
        r"generic fiber $\{(\lambda A, \lambda^{-1} V)\}$; two lines at rank-1 swap points; "
        r"$\{A = 0\} \cup \{V = 0\}$ over $0$",
        "single_layer_fibers", "d, d' <= 5, a <= d + 1; random, swap, parallel and zero points (400 cases)",
        ("single-layer-dimension",)),
    Statement(
        "deep-fibers", "finding", "attngeo (docs/findings.md 8-11)",
        "Fibers of two-layer networks and their hidden symmetries",
        r"fiber $=$ symmetry orbit for ranks $\ge 2$; hidden $A_2 \mapsto A_2^T$, $A_2 \mapsto A_2 + sS$ and $S_3$ "
        r"when $a_1 = 1$",
        "deep_fibers", "two layers, widths <= 3, t = 2 (9 cases; --full adds 5)",
        ("single-layer-fibers", "deep-dimension")),
    Statement(
        "singular-points", "theorem", "[HMK] Thm. (singular points)",
        "Singular points of one layer",
        r"$\varphi_{A,V}$ is singular iff $\operatorname{rank}(A)\operatorname{rank}(V) \le 1$",
        "singular_points", "d <= 4, d' <= 3, a <= d; 120 points (verdicts singular / smooth / undecided)",
        ("single-layer-dimension", "single-layer-fibers")),
    Statement(
        "singular-strata", "finding", "attngeo (docs/findings.md 3-5, 7)",
        "Strata, implicit equations and the corrected singular locus",
        r"for $1 < a < d$ every stratum with $\operatorname{rank} A < a$ is singular; "
        r"for $a = 1$, $d' = 1$ the rank-1 swap points are smooth ($d = 2, 3$)",
        "singular_strata", "d <= 4, d' <= 3, a <= d (33 architectures); implicit equations at d = 2, d' <= 2 and 3,1 a = 1",
        ("singular-points",)),
    Statement(
        "boundary-points", "corollary", "[HMK] (boundary points); attngeo Lemma B",
        "Boundary points of the real neuromanifold",
        r"the boundary of $\mathcal M_{\mathbb R}$ is $\{0\} \cup \{(s \cdot y)^2 R\}$; "
        r"definite $q(y) R$ need complex weights",
        "boundary_points", "d <= 4, d' <= 3, a <= d (174 points)",
        ("single-layer-fibers",)),
    Statement(
        "softmax-single-layer", "theorem", "[HMK] Thm. (normalized, one layer)",
        "Dimension of one softmax layer",
        r"$\dim \mathcal M = a(2d - a) + dd'$ for $a \le d$ ($t \ge 2$)",
        "softmax_single_layer", "d <= 5, d' <= 3, a <= d + 1, t in {2, 3} (120 cases)",
        ("single-layer-dimension",)),
    Statement(
        "softmax-conjecture", "conjecture", "[HMK] Conj. 3.10",
        "Dimension of deep softmax networks",
        r"$\dim \mathcal M = l\,a(2d - a) + d^2$ (lightning $+\, l$)",
        "softmax_deep", "l = 2, t = 3, a = 2, delta = 3..10; l = 3, t = 2, d <= 4, a <= 3",
        ("deep-dimension", "softmax-single-layer")),
)


def graph() -> nx.DiGraph:
    """Statements as nodes (attribute ``statement``), edges from a statement to those using it."""
    g = nx.DiGraph()
    for s in STATEMENTS:
        g.add_node(s.name, statement=s)
    for s in STATEMENTS:
        for dep in s.depends:
            g.add_edge(dep, s.name)
    return g


def order() -> list[str]:
    """Statement names in dependency order (ties broken by the registry's order)."""
    index = {s.name: k for k, s in enumerate(STATEMENTS)}
    return list(nx.lexicographical_topological_sort(graph(), key=index.get))


def get(name: str) -> Statement:
    for s in STATEMENTS:
        if s.name == name or s.script == name:
            return s
    names = ", ".join(s.name for s in STATEMENTS)
    raise InvalidInputError(f"--only {name}: not a registered statement; choose one of {names}")
