"""Stratification of a single-layer neuromanifold by ``(rank A, rank V)`` (docs/singular.md §4).

The parameter space ``{rank A <= a} x C^{d' x d}`` splits into strata
``S_{r,s} = {rank A = r, rank V = s}``, ``1 <= r <= min(a, d)``,
``1 <= s <= min(d, d')``, plus the zero stratum ``{A = 0} ∪ {V = 0}`` (its
image is the zero function). ``S_{r',s'}`` lies in the closure of ``S_{r,s}``
when ``r' <= r`` and ``s' <= s``: that is the directed graph (edges point from
a stratum to the ones on its boundary).

For each stratum, certified exactly over Q:

* **image dimension**: the rank of the Jacobian of ``(B, C, D, E) -> psi(BC, DE)``
  at a point of the stratum is a lower bound; ``dim S_{r,s} - 1`` is an upper
  bound (every fiber of ``psi`` on the stratum contains the scaling line
  ``(λA, λ^{-1}V)``). Equal ⇒ the dimension.
* **label**: the certified singular-point verdict (:func:`attngeo.geometry.loci.singular.is_singular`)
  at that point. *singular* holds on the **whole** stratum: the tangent images
  used are taken at preimages that are rational functions of the stratum's
  parameters, so their span exceeds ``dim M`` on a dense open subset, and the
  singular locus is closed. *smooth* holds on a dense open subset of the
  stratum's image (smoothness is an open condition on the irreducible image).
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

import networkx as nx
from flint import fmpq_mat

from ... import latex, progress
from ...model.architecture import Architecture
from ..certificate import Result, certificate_json
from ...exact.engine import ring
from ..fibers.layer import str_rows
from ...exact.ideal import Ideal, matrix_names, rank_ideal
from ...model.layerfunction import single_layer
from .singular import is_singular, tangent_image


def stratum_dimension(d: int, dd: int, r: int, s: int) -> int:
    """``dim S_{r,s} = r(2d - r) + s(d + d' - s)`` (determinantal varieties).

    Examples
    --------
    ``d = d' = 2``: the open stratum is all 8 parameters, rank-1 ``A`` and ``V`` lose one each.

    >>> from attngeo.geometry.loci.strata import stratum_dimension
    >>> stratum_dimension(2, 2, 2, 2), stratum_dimension(2, 2, 1, 2), stratum_dimension(2, 2, 1, 1)
    (8, 7, 6)
    """
    return r * (2 * d - r) + s * (d + dd - s)


def _random_rank(rows: int, cols: int, r: int, rng: random.Random) -> tuple[fmpq_mat, fmpq_mat]:
    """Integer ``(B, C)`` with ``B C`` of rank exactly ``r`` (redrawn until it is)."""
    while True:
        B = fmpq_mat([[rng.randint(-3, 3) for _ in range(r)] for _ in range(rows)])
        C = fmpq_mat([[rng.randint(-3, 3) for _ in range(cols)] for _ in range(r)])
        if (B * C).rank() == r:
            return B, C


def rank_directions(D: fmpq_mat, E: fmpq_mat) -> list[fmpq_mat]:
    """Tangent directions ``dD E + D dE`` of ``{rank <= s}`` at ``D E`` (they span its tangent space).

    Examples
    --------
    At a rank-1 ``2 x 2`` matrix: 4 directions spanning the 3-dimensional
    tangent space of ``{det = 0}``.

    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.loci.strata import rank_directions
    >>> dirs = rank_directions(fmpq_mat([[1], [2]]), fmpq_mat([[1, 1]]))
    >>> len(dirs), fmpq_mat([list(M.entries()) for M in dirs]).rank()
    (4, 3)
    """
    rows, s, cols = D.nrows(), D.ncols(), E.ncols()
    out = []
    for i in range(rows):
        for j in range(s):
            dD = fmpq_mat(rows, s)
            dD[i, j] = 1
            out.append(dD * E)
    for i in range(s):
        for j in range(cols):
            dE = fmpq_mat(s, cols)
            dE[i, j] = 1
            out.append(D * dE)
    return out


def image_rank(B: fmpq_mat, C: fmpq_mat, D: fmpq_mat, E: fmpq_mat) -> int:
    """Exact rank of the Jacobian of ``(B, C, D, E) -> psi(B C, D E)`` at a point.

    A lower bound on the dimension of the stratum's image, which is at most
    ``dim S_{r,s} - 1`` (the scaling line lies in every fiber).

    Examples
    --------
    ``d = d' = 2``: at invertible ``A`` and ``V`` the bound ``8 - 1 = 7`` is reached;
    at ``rank A = rank V = 1`` it is ``6 - 1 = 5``.

    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.loci.strata import image_rank
    >>> I = fmpq_mat([[1, 0], [0, 1]])
    >>> image_rank(I, fmpq_mat([[1, 2], [3, 4]]), I, fmpq_mat([[1, 1], [0, 1]]))
    7
    >>> image_rank(fmpq_mat([[1], [0]]), fmpq_mat([[0, 1]]), fmpq_mat([[1], [2]]), fmpq_mat([[1, 1]]))
    5
    """
    J = tangent_image(C, B.transpose(), D * E)  # Q = C, K = B^T: A = K^T Q = B C
    qk = 2 * C.nrows() * C.ncols()
    rows = [[J[i, c] for c in range(J.ncols())] for i in range(J.nrows())]
    # the V columns of J are linear in dV: move along the rank-s variety by multiplying
    T = fmpq_mat([[dV[i, j] for i in range(dV.nrows()) for j in range(dV.ncols())]
                  for dV in rank_directions(D, E)]).transpose()
    along = fmpq_mat([row[qk:] for row in rows]) * T
    return fmpq_mat([row[:qk] + [along[i, c] for c in range(along.ncols())] for i, row in enumerate(rows)]).rank()


@dataclass
class Stratum:
    """One stratum ``S_{r,s} = {rank A = r, rank V = s}`` (or the zero stratum), certified at one point.

    ``lower`` and ``upper`` bound the dimension of its image; ``label`` is the
    singular-point verdict at the point, whose certificate is ``verdict``.

    Examples
    --------
    >>> from attngeo import Architecture, stratify
    >>> st = stratify(Architecture((2, 2), (2,), tokens=2))[(1, 1)]
    >>> st.name, st.parameter_dimension, st.dimension, st.label, st.certified
    ('(1,1)', 6, 5, 'singular', True)
    """

    rank_A: int
    rank_V: int
    parameter_dimension: int
    lower: int  # image dimension bounds
    upper: int
    label: str  # singular / smooth / undecided (the point verdict)
    factors: list = field(repr=False)  # (B, C, D, E) of the point, or [] for the zero stratum
    verdict: dict = field(repr=False)  # the embedded singular-point certificate

    @property
    def dimension(self) -> int | None:
        return self.lower if self.lower == self.upper else None

    @property
    def certified(self) -> bool:
        return self.dimension is not None and self.label in ("singular", "smooth")

    @property
    def name(self) -> str:
        return "zero" if self.rank_A == 0 else f"({self.rank_A},{self.rank_V})"

    def hmk_singular(self) -> bool:
        """[HMK]'s statement: singular iff rank A * rank V <= 1.

        Examples
        --------
        >>> from attngeo import Architecture, stratify
        >>> st = stratify(Architecture((2, 2), (2,), tokens=2))
        >>> st[(1, 1)].hmk_singular(), st[(1, 2)].hmk_singular()
        (True, False)
        """
        return self.rank_A * self.rank_V <= 1

    def row(self) -> dict:
        """The stratum as one JSON-ready row (ranks, dimensions, label, certified, [HMK]'s label).

        Examples
        --------
        >>> from attngeo import Architecture, stratify
        >>> row = stratify(Architecture((2, 2), (2,), tokens=2))[(2, 2)].row()
        >>> row["dimension"], row["singular"], row["hmk_singular"]
        (7, False, False)
        """
        return {"rank_A": self.rank_A, "rank_V": self.rank_V, "parameter_dimension": self.parameter_dimension,
                "dimension": self.dimension, "lower": self.lower, "upper": self.upper,
                "singular": {"singular": True, "smooth": False}.get(self.label), "label": self.label,
                "certified": self.certified, "hmk_singular": self.hmk_singular()}


class Stratification(Result):
    """The strata of one single-layer architecture, their closure graph and certificates.

    ``graph`` is a networkx DAG with an edge from each stratum to those on its
    boundary; ``st[(r, s)]`` is the stratum with ``rank A = r``, ``rank V = s``.

    Examples
    --------
    >>> from attngeo import Architecture, stratify
    >>> st = stratify(Architecture((2, 2), (2,), tokens=2))
    >>> print(st.table())
     stratum  dim S  dim image      label certified     [HMK]
        zero      4          0   singular       yes  singular
       (1,1)      6          5   singular       yes  singular
       (1,2)      7          6     smooth       yes    smooth
       (2,1)      7          6     smooth       yes    smooth
       (2,2)      8          7     smooth       yes    smooth
    >>> sorted(st.graph.successors("(2,2)"))
    ['(1,2)', '(2,1)']
    >>> st[(3, 3)]
    Traceback (most recent call last):
    ...
    KeyError: (3, 3)
    """

    kind = "strata"

    def __init__(self, arch: Architecture, strata: list[Stratum], seconds: float):
        self.arch, self.strata, self.seconds = arch, strata, seconds
        self.graph = nx.DiGraph()
        for st in strata:
            self.graph.add_node(st.name, **st.row())
        names = {(st.rank_A, st.rank_V): st.name for st in strata}
        for (r, s), name in names.items():
            for below in ((r - 1, s), (r, s - 1)):
                if below in names:
                    self.graph.add_edge(name, names[below])
        if (1, 1) in names and (0, 0) in names:
            self.graph.add_edge(names[(1, 1)], names[(0, 0)])

    def __getitem__(self, ranks: tuple[int, int]) -> Stratum:
        for st in self.strata:
            if (st.rank_A, st.rank_V) == tuple(ranks):
                return st
        raise KeyError(ranks)

    def closure_order(self) -> list[str]:
        """Strata from the largest to the ones in every closure (a topological order).

        Examples
        --------
        >>> from attngeo import Architecture, stratify
        >>> stratify(Architecture((2, 2), (2,), tokens=2)).closure_order()
        ['(2,2)', '(1,2)', '(2,1)', '(1,1)', 'zero']
        """
        return list(nx.topological_sort(self.graph))

    def disagreements(self) -> list[Stratum]:
        """Strata whose certified label contradicts [HMK]'s ``rank A * rank V <= 1``.

        Examples
        --------
        ``d = 3``, ``a = 2``: the stratum ``rank A = 1``, ``rank V = 2`` is certified
        singular, where [HMK]'s criterion says smooth.

        >>> from attngeo import Architecture, stratify
        >>> [(s.name, s.label) for s in stratify(Architecture((3, 2), (2,), tokens=2)).disagreements()]
        [('(1,2)', 'singular')]
        >>> stratify(Architecture((2, 2), (2,), tokens=2)).disagreements()
        []
        """
        return [st for st in self.strata if st.label in ("singular", "smooth")
                and (st.label == "singular") != st.hmk_singular()]

    def singular_parameter_ideal(self, engine: str = "auto") -> Ideal:
        """Ideal of the union of the closures of the strata certified singular, in ``(A, V)``.

        It is contained in the preimage of Sing(M) (every point of those strata maps to a
        singular point). Intersections go through the engine.

        Examples
        --------
        ``d = 2``, ``d' = a = 1``: only the zero stratum is certified singular, so
        the ideal is ``I_1(A) I_1(V)`` plus the domain's ``det A``.

        >>> from attngeo import Architecture, stratify
        >>> st = stratify(Architecture((2, 1), (1,), tokens=2))
        >>> [s.label for s in st.strata]
        ['singular', 'undecided']
        >>> ideal = st.singular_parameter_ideal("flint")
        >>> len(ideal.gens), str(ideal.gens[-1])
        (9, 'A_1_2*A_2_1 - A_1_1*A_2_2')
        """
        d, dd = self.arch.widths
        names = _av_names(d, dd)
        ideal = None
        for st in self.strata:
            if st.label != "singular":
                continue
            if st.rank_A == 0:  # {A = 0} ∪ {V = 0}
                part = rank_ideal("A", d, d, 0, names) * rank_ideal("V", dd, d, 0, names)
            else:
                part = rank_ideal("A", d, d, st.rank_A, names) + rank_ideal("V", dd, d, st.rank_V, names)
            ideal = part if ideal is None else ideal.intersect(part, engine)
        ideal = ideal if ideal is not None else Ideal([1], names)
        return (ideal + domain_ideal(self.arch)).reduced(engine)

    def table(self) -> str:
        """The strata as a plain-text table, with [HMK]'s label beside the certified one (see the class example)."""
        head = f"{'stratum':>8} {'dim S':>6} {'dim image':>10} {'label':>10} {'certified':>9} {'[HMK]':>9}"
        lines = [head]
        for st in self.strata:
            dim = str(st.dimension) if st.dimension is not None else f"{st.lower}..{st.upper}"
            hmk = "singular" if st.hmk_singular() else "smooth"
            lines.append(f"{st.name:>8} {st.parameter_dimension:>6} {dim:>10} {st.label:>10} "
                         f"{'yes' if st.certified else 'no':>9} {hmk:>9}")
        return "\n".join(lines)

    def latex(self) -> str:
        """The strata as one LaTeX string (math: an ``array``, so it sits in ``\\[...\\]`` or ``$$...$$``).

        Examples
        --------
        >>> from attngeo import Architecture, stratify
        >>> from attngeo.latex import balanced
        >>> tex = stratify(Architecture((2, 2), (2,), tokens=2)).latex()
        >>> tex.count("singular"), tex.count("smooth"), tex.count("array"), balanced(tex)
        (2, 3, 2, True)
        """
        rows = []
        for st in self.strata:
            dim = str(st.dimension) if st.dimension is not None else rf"{st.lower}\ldots{st.upper}"
            label = st.label + ("" if st.certified else " (not certified)")
            rows.append(rf"{latex.stratum(st.rank_A, st.rank_V)} & {st.parameter_dimension} & {dim} & "
                        rf"\text{{{label}}} \\")
        return "\n".join([r"\begin{array}{lrrl}", r"\text{stratum} & \dim S & \dim \psi(S) & \text{label} \\ \hline",
                          *rows, r"\end{array}"])

    def summary(self) -> dict:
        """The record ``--json`` prints: the rows of the strata and the closure edges.

        Examples
        --------
        >>> from attngeo import Architecture, stratify
        >>> stratify(Architecture((2, 2), (2,), tokens=2)).summary()["edges"]
        [['(1,1)', 'zero'], ['(1,2)', '(1,1)'], ['(2,1)', '(1,1)'], ['(2,2)', '(1,2)'], ['(2,2)', '(2,1)']]
        """
        return {"architecture": self.arch.to_dict(), "strata": [st.row() for st in self.strata],
                "edges": [list(e) for e in sorted(self.graph.edges())], "seconds": round(self.seconds, 3)}

    def _repr_html_(self) -> str:
        rows = "".join(f"<tr><td>{st.name}</td><td>{st.parameter_dimension}</td><td>{st.dimension}</td>"
                       f"<td>{st.label}</td><td>{st.certified}</td></tr>" for st in self.strata)
        return (f"<p>Strata of {self.arch}</p><table><tr><th>stratum</th><th>dim S</th><th>dim image</th>"
                f"<th>label</th><th>certified</th></tr>{rows}</table>")

    def to_json(self) -> dict:
        """The certificate: each stratum with its point's factors and embedded point certificate.

        Examples
        --------
        >>> from attngeo import Architecture, check_certificate, stratify
        >>> cert = stratify(Architecture((2, 2), (2,), tokens=2)).to_json()
        >>> cert["strata"][1]["point_certificate"]["verdict"]
        'singular'
        >>> check_certificate(cert).claim
        'strata of M (widths 2,2, rank 2): 5 strata, singular (0,0), (1,1)'
        """
        return certificate_json(self.kind, {
            "architecture": self.arch.to_dict(),
            "strata": [{**st.row(), "factors": [str_rows(M) for M in st.factors], "point_certificate": st.verdict}
                       for st in self.strata],
            "edges": [list(e) for e in sorted(self.graph.edges())], "seconds": round(self.seconds, 3)})

    def __str__(self) -> str:
        return f"strata of {self.arch}\n{self.table()}"


def _av_names(d: int, dd: int) -> tuple[str, ...]:
    return tuple(n for row in matrix_names("A", d, d) + matrix_names("V", dd, d) for n in row)


def domain_ideal(arch: Architecture) -> Ideal:
    """``I_{a+1}(A)`` (rank A <= a) in ``(A, V)`` coordinates; zero when ``a >= d``.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.strata import domain_ideal
    >>> [str(g) for g in domain_ideal(Architecture((2, 1), (1,), tokens=2)).gens]     # rank A <= 1: det A = 0
    ['-A_1_2*A_2_1 + A_1_1*A_2_2']
    >>> domain_ideal(Architecture((2, 1), (2,), tokens=2)).gens                     # a >= d: no condition
    []
    """
    d, dd = arch.widths
    a = arch.ranks[0]
    names = _av_names(d, dd)
    return rank_ideal("A", d, d, a, names)


def hmk_singular_ideal(arch: Architecture, coordinates: str = "AV", engine: str = "auto") -> Ideal:
    """The ideal of [HMK]'s singular locus ``{rank A * rank V <= 1}`` (within ``rank A <= a``).

    ``I_1(A) ∩ I_1(V) ∩ (I_2(A) + I_2(V))`` (+ ``I_{a+1}(A)``), in ``(A, V)``
    coordinates, or pulled back along ``A = K^T Q`` when ``coordinates = "QKV"``.
    It is radical: an intersection of primes (sums of determinantal ideals in
    disjoint variables are prime).

    Parameters
    ----------
    arch : Architecture
        A single layer, ``t >= 2``.
    coordinates : str
        ``"AV"`` or ``"QKV"``.
    engine : str
        The Gröbner engine of the intersection (msolve for ``d >= 2``: the
        intersection has ``d^2 + d' d + 1`` variables, beyond python-flint's 6).

    Returns
    -------
    Ideal

    Raises
    ------
    ValueError
        For other ``coordinates``.

    Examples
    --------
    With ``d = 1`` every rank is at most 1, so [HMK]'s locus is everything: the zero ideal.

    >>> from attngeo import Architecture, hmk_singular_ideal
    >>> arch = Architecture((1, 1), (1,), tokens=2)
    >>> hmk_singular_ideal(arch, engine="flint").gens
    []
    >>> hmk_singular_ideal(arch, "QKV", engine="flint").variables
    ('Q_1_1', 'K_1_1', 'V_1_1')
    >>> hmk_singular_ideal(arch, "XY")
    Traceback (most recent call last):
    ...
    ValueError: coordinates must be 'AV' or 'QKV', got 'XY'
    """
    single_layer(arch, "the singular-locus ideal")
    if coordinates not in ("AV", "QKV"):
        raise ValueError(f"coordinates must be 'AV' or 'QKV', got {coordinates!r}")
    d, dd = arch.widths
    a = arch.ranks[0]
    names = _av_names(d, dd)
    progress.phase("[HMK] ideal", coordinates)
    zero = rank_ideal("A", d, d, 0, names) * rank_ideal("V", dd, d, 0, names)
    rank_one = rank_ideal("A", d, d, 1, names) + rank_ideal("V", dd, d, 1, names)
    ideal = (zero.intersect(rank_one, engine) + domain_ideal(arch)).reduced(engine)
    if coordinates == "AV":
        return ideal
    qkv = tuple(n for row in matrix_names("Q", a, d) + matrix_names("K", a, d) + matrix_names("V", dd, d) for n in row)
    gens = dict(zip(qkv, ring(qkv).gens()))
    sub = {f"A_{n + 1}_{p + 1}": sum(gens[f"K_{i + 1}_{n + 1}"] * gens[f"Q_{i + 1}_{p + 1}"] for i in range(a))
           for n in range(d) for p in range(d)}
    sub.update({name: gens[name] for row in matrix_names("V", dd, d) for name in row})
    return ideal.pullback(sub, qkv)


def stratify(arch: Architecture, seed: int | None = 0, attempts: int = 8, equations=None) -> Stratification:
    """Every stratum of a single-layer architecture (t >= 2), with certified dimension and label.

    ``equations`` (:func:`attngeo.geometry.loci.implicit.implicit_equations` of the same
    architecture) lets the point test decide what the tangent criteria leave open.

    Parameters
    ----------
    arch : Architecture
        A single lightning layer, ``t >= 2``.
    seed : int or None
        Seeds the points of the strata and their verdicts.
    attempts : int
        Random points tried per stratum for the full image rank.
    equations : ImplicitEquations or None

    Returns
    -------
    Stratification

    Raises
    ------
    InvalidInputError
        For a deep or normalized architecture, or ``t = 1``.

    Examples
    --------
    >>> from attngeo import Architecture, stratify
    >>> st = stratify(Architecture((2, 2), (2,), tokens=2))
    >>> [(s.name, s.dimension, s.label) for s in st.strata]
    [('zero', 0, 'singular'), ('(1,1)', 5, 'singular'), ('(1,2)', 6, 'smooth'), ('(2,1)', 6, 'smooth'), ('(2,2)', 7, 'smooth')]
    """
    single_layer(arch, "stratify")
    start = time.perf_counter()
    rng = random.Random(seed)
    d, dd = arch.widths
    a = arch.ranks[0]
    zero = is_singular(arch, [[[[0] * d] * a, [[0] * d] * a, [[0] * d] * dd]], seed=seed)
    # {A = 0} (dim d'd) u {V = 0, rank A <= a}: its parameter dimension is the larger one;
    # its image is the single point 0 (image dimension 0)
    r0 = min(a, d)
    strata = [Stratum(0, 0, max(dd * d, r0 * (2 * d - r0)), 0, 0, zero.verdict, [], zero.to_json())]
    for r in range(1, min(a, d) + 1):
        for s in range(1, min(d, dd) + 1):
            dim_s = stratum_dimension(d, dd, r, s)
            best = None
            for _ in range(attempts):  # a special point only lowers the rank: keep the best
                B, C = _random_rank(d, d, r, rng)
                D, E = _random_rank(dd, d, s, rng)
                rank = image_rank(B, C, D, E)
                if best is None or rank > best[0]:
                    best = (rank, B, C, D, E)
                if rank == dim_s - 1:
                    break
            rank, B, C, D, E = best
            Q = [[str(C[i, j]) if i < r else "0" for j in range(d)] for i in range(a)]
            K = [[str(B[j, i]) if i < r else "0" for j in range(d)] for i in range(a)]
            weights = [[Q, K, str_rows(D * E)]]
            progress.phase("strata", f"rank A = {r}, rank V = {s}")
            verdict = is_singular(arch, weights, seed=rng.randrange(10**6), equations=equations)
            strata.append(Stratum(r, s, dim_s, rank, dim_s - 1, verdict.verdict,
                                  [B, C, D, E], verdict.to_json()))
    return Stratification(arch, strata, time.perf_counter() - start)
