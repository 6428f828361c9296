"""Is a single-layer function a singular point of the neuromanifold? (docs/singular.md)

``M`` is the image of ``psi: (Q, K, V) -> F`` (the Gram tensor of
:mod:`attngeo.model.layerfunction`). Two certified criteria, both exact over Q:

* **singular** — a morphism maps Zariski tangent spaces into tangent spaces, so
  the images of ``d psi`` at *any* preimages of ``f`` lie in ``T_f M``; if they
  span more than ``dim M`` dimensions, ``f`` is singular. Preimages: a
  representative of every component of the fiber (:func:`attngeo.geometry.fibers.layer.fiber`)
  and, where ``K^T Q = A`` has many solutions (``rank A < a``), several of them.
* **smooth** — ``F != 0``, the complex fiber in ``(A, V)`` is one line, the domain
  ``{rank A <= a}`` is smooth at ``A`` (``rank A = a``, or ``a >= d``), and ``d psi``
  has rank ``dim M`` at a preimage. Then, modulo the free scaling action, the
  map is an injective immersion of a smooth variety that is proper over a
  neighbourhood of ``f`` (``|sym(V (x) A)| >= c |V| |A|``), hence a closed
  embedding there: ``M`` is a manifold near ``f`` (docs/singular.md).

Otherwise the verdict is *undecided*, said so. Certificates embed the dimension
certificate (and, for *smooth*, the fiber certificate) they rest on.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from flint import fmpq, fmpq_mat

from ...model.architecture import Architecture
from ..certificate import Result, certificate_json
from ..dimension.dense import certify_dimension
from ..fibers.layer import Fiber, determinantal_dimension, fiber, rank_factorization, str_rows
from ...exceptions import InvalidInputError
from ...model.layerfunction import single_layer
from ...model.network import read_point


def _gram_coordinates(d: int, dd: int):
    """Indices ``(k, m, n, p)`` with ``m <= n``: independent coordinates of the Gram tensor."""
    return [(k, m, n, p) for k in range(dd) for m in range(d) for n in range(m, d) for p in range(d)]


def tangent_image(Q: fmpq_mat, K: fmpq_mat, V: fmpq_mat) -> fmpq_mat:
    """The Jacobian of ``(Q, K, V) -> 2 S = sym(V (x) K^T Q)`` at a point, exactly.

    Columns follow the flattening order (``Q``, ``K``, ``V`` row-major); rows the
    Gram coordinates ``(k, m <= n, p)``. ``2 S[k,m,n,p] = V_km A_np + V_kn A_mp``.

    Parameters
    ----------
    Q, K : fmpq_mat
        ``a x d``.
    V : fmpq_mat
        ``d' x d``.

    Returns
    -------
    fmpq_mat
        ``d' d (d + 1) / 2 * d`` rows, ``2 a d + d' d`` columns.

    Examples
    --------
    At a generic point of ``d = d' = 2``, ``a = 1`` the rank is ``dim M = 6``
    (8 parameters less the ``GL_1`` and the scaling).

    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.loci.singular import tangent_image
    >>> J = tangent_image(fmpq_mat([[1, 2]]), fmpq_mat([[3, 5]]), fmpq_mat([[1, 0], [2, 1]]))
    >>> J.nrows(), J.ncols(), J.rank()
    (12, 8, 6)
    """
    a, d = Q.nrows(), Q.ncols()
    dd = V.nrows()
    A = K.transpose() * Q
    coords = _gram_coordinates(d, dd)
    cols = []

    def column(dA: fmpq_mat | None, dV: fmpq_mat | None):
        out = []
        for k, m, n, p in coords:
            v = fmpq(0)
            if dA is not None:
                v += V[k, m] * dA[n, p] + V[k, n] * dA[m, p]
            if dV is not None:
                v += dV[k, m] * A[n, p] + dV[k, n] * A[m, p]
            out.append(v)
        return out

    for which in ("Q", "K"):
        for i in range(a):
            for j in range(d):
                E = fmpq_mat(a, d)
                E[i, j] = 1
                cols.append(column(K.transpose() * E if which == "Q" else E.transpose() * Q, None))
    for i in range(dd):
        for j in range(d):
            E = fmpq_mat(dd, d)
            E[i, j] = 1
            cols.append(column(None, E))
    return fmpq_mat(cols).transpose()


def _preimages(fib: Fiber, rng: random.Random, extra: int) -> list[tuple[fmpq_mat, fmpq_mat, fmpq_mat]]:
    """Representatives of every fiber component, plus ``extra`` random ``(Q, K)`` over rank-deficient ``A``."""
    d, dd = fib.arch.widths
    a = fib.arch.ranks[0]
    rand = lambda r, c: fmpq_mat([[rng.randint(-3, 3) for _ in range(c)] for _ in range(r)])  # noqa: E731
    out = []
    if fib.case == "zero":
        for _ in range(extra + 1):
            Q, K = _with_product(fmpq_mat(d, d), a, rng)
            out.append((Q, K, rand(dd, d)))  # on {A = 0}
            out.append((rand(a, d), rand(a, d), fmpq_mat(dd, d)))  # on {V = 0}
        return out
    for A, V in fib.lines:
        Q, K = _submersive(A, a)
        out.append((Q, K, V))
        if A.rank() < min(a, d):
            out.extend((*_with_product(A, a, rng), V) for _ in range(extra))
    return out


def _submersive(A: fmpq_mat, a: int) -> tuple[fmpq_mat, fmpq_mat]:
    """``(Q, K)`` with ``K^T Q = A`` at which ``(Q, K) -> K^T Q`` is a submersion onto ``{rank <= a}``.

    A full-rank factorization when ``rank A = a``; for ``a >= d`` the point
    ``Q = [I; 0]``, ``K = [A^T; 0]``, where ``d(K^T Q) = dK_top^T`` is every ``d x d`` matrix.
    """
    d = A.nrows()
    if a < d:
        return rank_factorization(A, a)
    Q = fmpq_mat([[1 if (i == j) else 0 for j in range(d)] for i in range(a)])
    K = fmpq_mat([[A[j, i] if i < d else 0 for j in range(d)] for i in range(a)])
    return Q, K


def _with_product(A: fmpq_mat, a: int, rng: random.Random) -> tuple[fmpq_mat, fmpq_mat]:
    """A random ``(Q, K)`` with ``K^T Q = A``: ``Q = [C; Y]``, ``K^T = [B, Z]`` with ``Z Y = 0``."""
    d = A.nrows()
    Q0, K0 = rank_factorization(A, a)
    r = A.rank()
    Q, K = fmpq_mat(Q0), fmpq_mat(K0)
    for i in range(r, a):  # free rows: either in Q (then K's row is 0) or in K (then Q's row is 0)
        target = Q if rng.random() < 0.5 else K
        for c in range(d):
            target[i, c] = rng.randint(-3, 3)
    return Q, K


@dataclass(repr=False)
class SingularityVerdict(Result):
    """``singular``, ``smooth`` or ``undecided``, with the evidence.

    ``span`` is the rank of the tangent images stacked over ``preimages``;
    ``dimension`` the certified ``dim M``; the embedded certificates are those
    the verdict rests on.

    Examples
    --------
    >>> from attngeo import Architecture, is_singular
    >>> v = is_singular(Architecture((2, 2), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]])
    >>> v.verdict, v.certified, v.span, v.dimension, len(v.preimages)
    ('singular', True, 7, 6, 2)
    """

    arch: Architecture
    point: list[str]
    verdict: str
    dimension: int
    span: int  # rank of the stacked tangent images
    preimages: list
    reason: str
    dimension_certificate: dict
    fiber_certificate: dict
    seconds: float = 0.0
    implicit_certificate: dict | None = None  # when the verdict comes from the implicit equations
    jacobian_rank: int | None = None
    graded_certificate: dict | None = None  # when smoothness comes from the equations of degree <= K

    kind = "singular-point"

    @property
    def certified(self) -> bool:
        """The verdict is ``singular`` or ``smooth`` (``undecided`` is not a claim)."""
        return self.verdict in ("singular", "smooth")

    def summary(self) -> dict:
        """The record ``--json`` prints: verdict, ``dim M``, span, number of preimages and reason.

        Examples
        --------
        >>> from attngeo import Architecture, is_singular
        >>> s = is_singular(Architecture((2, 2), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]]).summary()
        >>> s["verdict"], s["reason"]
        ('singular', 'tangent images at 2 preimages span 7 > dim M = 6')
        """
        return {"architecture": self.arch.to_dict(), "verdict": self.verdict, "certified": self.certified,
                "dimension": self.dimension, "span": self.span, "preimages": len(self.preimages),
                "reason": self.reason, "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        """The certificate: the point, the preimages and the dimension and fiber certificates it rests on.

        Examples
        --------
        The checker recomputes the tangent images at the recorded preimages.

        >>> from attngeo import Architecture, check_certificate, is_singular
        >>> cert = is_singular(Architecture((2, 2), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]]).to_json()
        >>> len(cert["preimage_weights"]), cert["fiber_certificate"]["case"]
        (2, 'rank1-swap')
        >>> check_certificate(cert).claim
        'singular point of M (widths 2,2, rank 1): tangent images span 7 > dim M = 6'
        """
        return certificate_json(self.kind, {"point": self.point, **self.summary(),
                "preimage_weights": [[str_rows(Q), str_rows(K), str_rows(V)] for Q, K, V in self.preimages],
                "dimension_certificate": self.dimension_certificate,
                "fiber_certificate": self.fiber_certificate,
                **({"implicit_certificate": self.implicit_certificate, "jacobian_rank": self.jacobian_rank}
                   if self.implicit_certificate else {}),
                **({"graded_certificate": self.graded_certificate, "jacobian_rank": self.jacobian_rank}
                   if self.graded_certificate else {})})

    def __str__(self) -> str:
        return f"{self.arch}: {self.verdict} ({self.reason})"

    def latex(self) -> str:
        """The verdict with the span of the tangent images and ``dim M``, in LaTeX.

        Examples
        --------
        >>> from attngeo import Architecture, is_singular
        >>> from attngeo.latex import balanced
        >>> tex = is_singular(Architecture((2, 2), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]]).latex()
        >>> "a singular point" in tex, tex.endswith("= 6"), balanced(tex)
        (True, True, True)
        """
        what = {"singular": r"\text{a singular point of } \mathcal M", "smooth": r"\text{a smooth point of } \mathcal M",
                "undecided": r"\text{undecided}"}[self.verdict]
        return (rf"\varphi_W \text{{ is }} {what}:\ \dim \textstyle\sum_w d\psi_w(T_w) = {self.span},\ "
                rf"\dim \mathcal M = {self.dimension}")


def is_singular(arch: Architecture, weights, seed: int | None = 0, extra: int = 3,
                equations=None) -> SingularityVerdict:
    """Decide, with a certificate, whether ``phi_W`` is a singular point of ``M`` (single layer, ``t >= 2``).

    ``equations`` (an :class:`attngeo.geometry.loci.implicit.ImplicitEquations` of the same
    architecture) decides points the two criteria leave open: Jacobian rank
    ``= codim M`` ⇒ smooth (needs only ``G ⊆ I(M)``); lower ⇒ singular (needs
    ``<G> = I(M)``, proved for hypersurfaces, else msolve's replayed elimination).
    The equations of degree ``<= K`` (:class:`attngeo.geometry.loci.graded.GradedEquations`)
    decide only *smooth*: a lower rank leaves the point undecided (docs/singular.md §8).

    Parameters
    ----------
    arch : Architecture
        A single lightning layer, ``t >= 2``.
    weights : list
        Rational weights ``[(Q, K, V)]`` or a flat list.
    seed : int or None
        Seeds the extra preimages and the dimension certificate.
    extra : int
        Extra random preimages over a rank-deficient ``A``.
    equations : ImplicitEquations, GradedEquations or None
        Decides what the tangent criteria leave open.

    Returns
    -------
    SingularityVerdict

    Raises
    ------
    InvalidInputError
        For a deep or normalized architecture, ``t = 1``, or equations of another architecture.

    Examples
    --------
    A rank-1 swap point: the two fiber lines have different tangent images,
    together 7 dimensions in a 6-dimensional ``M``.

    >>> from attngeo import Architecture, is_singular
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> is_singular(arch, [[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]]).verdict   # a rank-1 swap point
    'singular'
    >>> is_singular(arch, [[[[1, 2]], [[3, 5]], [[1, 0], [2, 1]]]]).verdict   # rank A = a, V invertible
    'smooth'

    With ``a = d' = 1`` every point has two fiber lines, so neither criterion
    applies; the implicit equations (``equations=``) decide such points.

    >>> is_singular(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[1, 1]]]]).verdict
    'undecided'
    """
    single_layer(arch, "is_singular")
    start = time.perf_counter()
    rng = random.Random(seed)
    point = read_point(arch, weights)
    fib = fiber(arch, point)
    dim_cert = certify_dimension(arch, seed=seed)
    dim = dim_cert.dimension  # single layers, t >= 2: always certified
    pre = _preimages(fib, rng, extra)
    images = [tangent_image(*w) for w in pre]
    stacked = fmpq_mat([[M[r, c] for M in images for c in range(M.ncols())] for r in range(images[0].nrows())])
    span = stacked.rank()
    d = arch.widths[0]
    a = arch.ranks[0]
    if span > dim:
        verdict, reason = "singular", f"tangent images at {len(pre)} preimages span {span} > dim M = {dim}"
    elif (fib.case != "zero" and len(fib.av) == 1 and (a >= d or fib.av[0].data["rank_A"] == a)
          and images[0].rank() == dim == determinantal_dimension(d, a) + arch.widths[1] * d - 1):
        verdict, reason = "smooth", "one fiber line, smooth domain at A (rank A = a or a >= d), d psi of rank dim M"
    else:
        verdict = "undecided"
        reason = f"span {span} = dim M at the preimages tried, and the smooth criterion does not apply"
    implicit, jrank, graded = None, None, None
    if verdict == "undecided" and equations is not None:
        from .implicit import coordinates_of

        if equations.arch != arch:
            raise InvalidInputError(f"the implicit equations are for {equations.arch}, not {arch}")
        jrank = equations.jacobian_rank(coordinates_of(arch, point))
        if equations.kind == "implicit-graded":  # only G ⊆ I(M) is known: rank codim M proves smooth, less proves nothing
            codim = len(equations.coordinates) - dim
            if jrank == codim:
                verdict, graded = "smooth", equations.to_json()
                reason = (f"Jacobian of the equations of degree <= {equations.max_degree} has rank codim M = {jrank}")
            else:
                reason += (f"; the equations of degree <= {equations.max_degree} have Jacobian rank {jrank} < codim M "
                           f"= {codim}, which equations of higher degree could raise")
                jrank = None
        elif jrank == equations.codimension:
            implicit = equations.to_json()
            verdict, reason = "smooth", f"Jacobian of the implicit equations has rank codim M = {jrank}"
        else:
            implicit = equations.to_json()
            how = "an irreducible hypersurface" if equations.generates == "proved" else "msolve's elimination, replayed"
            verdict = "singular"
            reason = f"Jacobian of the implicit equations has rank {jrank} < codim M = {equations.codimension} ({how})"
    return SingularityVerdict(arch, [str(x) for x in point], verdict, dim, span, pre, reason, dim_cert.to_json(),
                              fib.to_json(), time.perf_counter() - start, implicit, jrank, graded)
