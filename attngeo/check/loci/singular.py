"""Independent re-verification of singular-point certificates (kind ``singular-point``).

The tangent images are recomputed by a different route than the prover's
(which differentiates the Gram tensor by hand): here each weight is moved to
``w + eps`` and the coefficient of ``eps`` is read off the polynomial matrix
``F(y) = (V y)(A^T y)^T`` (python-flint polynomials in ``eps, y``). Rows are the
coefficients of the monomials of every ``F_kp``, a rescaling of the prover's
Gram coordinates, which leaves every rank unchanged. The embedded dimension and
fiber certificates are re-checked by their own checkers.
"""

from __future__ import annotations

from flint import fmpq_mat

from ..arch import single_layer
from ..limits import MAX_LOCUS_WORK, refuse_above
from ..layer import coefficients, forms, split
from ..poly import parse, ring
from .graded import generators as graded_generators
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER, Embedded, certified_dimension
from ..values import boolean, field, integer, matrix, reject, seq

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "point": CHECKED, "verdict": CHECKED, "certified": CHECKED,
    "dimension": CHECKED, "span": CHECKED, "preimages": CHECKED, "seconds": NUMBER,
    "preimage_weights": CHECKED,
    "dimension_certificate": Embedded("dimension"),
    "fiber_certificate": Embedded("fiber", ("architecture", "point")),
    "implicit_certificate": Embedded("implicit"),
    "graded_certificate": Embedded("implicit-graded"),
    "jacobian_rank": CHECKED,
}


#: Measured costs in nanoseconds of one core: one interpreted step of a tangent column (a polynomial product or a
#: coefficient looked up), one step of an exact rank (k^2 m for k x m rationals, k <= m), the embedded
#: certificates of a point of widths d, d' (a fiber: about d^4 steps; a dimension: about P^3, P its parameters),
#: and the fixed cost of a point certificate (its embedded certificates' reading and small checks).
NS_PER_POLY_STEP, NS_PER_RANK_STEP, NS_PER_FIBER_STEP, NS_PER_DIMENSION_STEP = 1000, 5, 300, 1
NS_PER_POINT = 50_000_000


def _rank_ns(k: int, m: int) -> int:
    return min(k, m) ** 2 * max(k, m) * NS_PER_RANK_STEP


def work(cert: dict, d: int, dd: int, a: int) -> int:
    """Estimated nanoseconds of a singular-point certificate of widths ``d, d'`` and rank ``a``, from its sizes:
    the tangent images at each listed preimage (``P`` columns of ``d' d^2 (d + 1) / 2`` coefficients, each
    ``2 d' d^3 + a d^2 + P`` interpreted steps), their ranks, and its embedded fiber and dimension certificates.

    Examples
    --------
    >>> work({"preimage_weights": [[], []]}, 4, 4, 2) < 10**9 < work({"preimage_weights": [[]] * 8}, 64, 64, 64)
    True
    """
    pre = cert.get("preimage_weights") if isinstance(cert, dict) else None
    n = len(pre) if isinstance(pre, list) else 1
    P, m = 2 * a * d + dd * d, dd * d * d * (d + 1) // 2
    return (n * P * (2 * dd * d**3 + a * d * d + P) * NS_PER_POLY_STEP + _rank_ns(n * P, m) + _rank_ns(P, m)
            + d**4 * NS_PER_FIBER_STEP + P**3 * NS_PER_DIMENSION_STEP + NS_PER_POINT)


def budget(cert: dict) -> None:
    """Refuse, before anything is verified (embedded certificates included), a certificate above the work limit.

    Examples
    --------
    >>> from attngeo import Architecture, is_singular
    >>> budget(is_singular(Architecture((2, 2), (1,), tokens=2), [[[[3, 0]], [[3, 0]], [[-3, -1], [1, 0]]]]).to_json())
    >>> budget({"architecture": {"widths": [64, 64], "ranks": [64], "tokens": 2, "normalization": "lightning"},
    ...         "kind": "singular-point", "preimage_weights": [[]] * 8})     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: replaying this singular-point certificate needs about ... units of work, ...
    """
    _, d, dd, a = single_layer(cert)
    refuse_above(work(cert, d, dd, a), MAX_LOCUS_WORK, "replaying this singular-point certificate")


def _tangent(Q: fmpq_mat, K: fmpq_mat, V: fmpq_mat) -> list[list]:
    """Columns: d/d eps of every coefficient of F at (Q, K, V) + eps E_j, one per weight."""
    a, d, dd = Q.nrows(), Q.ncols(), V.nrows()
    ctx = ring(("eps",) + tuple(f"y{i}" for i in range(d)))
    eps, y = ctx.gens()[0], ctx.gens()[1:]
    cols = []
    for which, rows in (("Q", a), ("K", a), ("V", dd)):
        for i in range(rows):
            for j in range(d):
                mats = {name: [[ctx.constant(x) for x in row] for row in M.tolist()]
                        for name, M in (("Q", Q), ("K", K), ("V", V))}
                mats[which][i][j] += eps
                A = [[sum((mats["K"][u][m] * mats["Q"][u][p] for u in range(a)), ctx.constant(0)) for p in range(d)]
                     for m in range(d)]
                cols.append([c.get((1,), 0) for c in coefficients(A, mats["V"], y, 1)])
    return cols


def _by_equations(cert: dict, coords: list, w: str, span: int, dim: int) -> str:
    """A verdict read off the Jacobian of the implicit equations (the embedded certificate, verified) at the point."""
    eq = cert["implicit_certificate"]
    if span > dim:
        reject("the equations are consulted only where the tangent images do not already prove singularity")
    cctx = ring(eq["coordinates"])
    G = [parse(t, cctx, f"implicit_certificate.equations[{k}]") for k, t in enumerate(eq["equations"])]
    if any(g(*coords) != 0 for g in G):
        reject("the point's coordinates do not satisfy the implicit equations")
    rank = fmpq_mat([[g.derivative(i)(*coords) for i in range(len(coords))] for g in G]).rank()
    codim = len(coords) - dim
    if integer(field(cert, "jacobian_rank"), "jacobian_rank", 0) != rank:
        reject(f"the Jacobian of the implicit equations has rank {rank}")
    expected = "smooth" if rank == codim else "singular"
    if cert.get("verdict") != expected or cert.get("certified") is not True:
        reject(f"Jacobian rank {rank} against codim M = {codim} means a certified {expected} point")
    return f"{expected} point of M ({w}): Jacobian of the implicit equations has rank {rank}, codim M = {codim}"


def _coordinates(A: fmpq_mat, V: fmpq_mat, y: tuple) -> list:
    """The coordinates ``c_{k,p,mn}`` of the point (the coefficients of ``y_m y_n`` in ``F_kp``)."""
    return [c.get((), 0) for c in coefficients(A, V, y, 0)]


def _by_graded(cert: dict, coords: list, w: str, span: int, dim: int) -> str:
    """Smooth from the equations of degree <= K (the embedded certificate, verified): Jacobian rank codim M.

    Those equations lie in I(M), so the Zariski tangent space is inside their
    Jacobian's kernel; rank ``codim M`` leaves room for ``dim M`` only. A lower
    rank proves nothing (higher degrees might add rank), so only ``smooth`` is claimed.
    """
    eq = cert["graded_certificate"]
    if span > dim:
        reject("the equations are consulted only where the tangent images do not already prove singularity")
    ctx = ring(eq["coordinates"])
    G = graded_generators(eq, ctx)
    if any(g(*coords) != 0 for g in G):
        reject("the point's coordinates do not satisfy the equations of degree <= K")
    rank = fmpq_mat([[g.derivative(i)(*coords) for i in range(len(coords))] for g in G]).rank() if G else 0
    codim = len(coords) - dim
    if integer(field(cert, "jacobian_rank"), "jacobian_rank", 0) != rank:
        reject(f"the Jacobian of the equations of degree <= K has rank {rank}")
    if rank != codim or cert.get("verdict") != "smooth" or cert.get("certified") is not True:
        reject(f"equations of degree <= K prove only smooth points, by Jacobian rank codim M = {codim} (here {rank})")
    return (f"smooth point of M ({w}): Jacobian of the equations of degree <= {eq['max_degree']} has rank "
            f"codim M = {codim}")


def check(cert: dict) -> str:
    """The claim of a singular-point certificate: singular, smooth, or undecided, from the tangent images.

    Singular: the tangent images at all the preimages span more than
    ``dim M``. Smooth: one fiber line, a smooth domain at ``A`` and a
    differential of rank ``dim M``. Or the Jacobian of the (embedded, verified)
    implicit equations at the point. ``dim M`` comes from the embedded
    dimension certificate, the preimages from the embedded fiber certificate.
    Called by the kernel after the schema check and the embedded certificates;
    use :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        A preimage computing another function, a wrong span, or a verdict the ranks do not give.

    Examples
    --------
    At ``V = 0`` (the zero function) the tangent images at the preimages span
    all 12 coordinates of ``F``, more than ``dim M = 6``; at a generic point
    one fiber line and a differential of rank ``dim M`` make it smooth:

    >>> from attngeo import Architecture, is_singular
    >>> from attngeo.check.loci.singular import check
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> check(is_singular(arch, [[[[3, 0]], [[3, 0]], [[0, 0], [0, 0]]]]).to_json())
    'singular point of M (widths 2,2, rank 1): tangent images span 12 > dim M = 6'
    >>> cert = is_singular(arch, [[[[3, 0]], [[3, 0]], [[-3, -1], [1, 0]]]]).to_json()
    >>> check(cert)
    'smooth point of M (widths 2,2, rank 1): one fiber line, smooth domain at A, d psi of rank 6'
    >>> cert["verdict"] = "singular"
    >>> check(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: a certified singular verdict needs a span above dim M = 6, got 6
    """
    arch, d, dd, a = single_layer(cert)
    P = 2 * a * d + dd * d
    point = seq(field(cert, "point"), "point", P)
    Q0, K0, V0 = split(point, a, d, dd, "point")
    y = ring(tuple(f"y{i}" for i in range(d))).gens()
    F = forms(K0.transpose() * Q0, V0, y)
    pre = seq(field(cert, "preimage_weights"), "preimage_weights")
    if not pre:
        reject("preimage_weights must be a nonempty list")
    if integer(field(cert, "preimages"), "preimages", 1) != len(pre):
        reject(f"preimages must count the {len(pre)} preimage weights")
    columns = []
    for k, triple in enumerate(pre):
        seq(triple, f"preimage {k}", 3)
        Q = matrix(triple[0], a, d, f"preimage {k} Q")
        K = matrix(triple[1], a, d, f"preimage {k} K")
        V = matrix(triple[2], dd, d, f"preimage {k} V")
        if forms(K.transpose() * Q, V, y) != F:
            reject(f"preimage {k} computes a different function")
        columns.append(_tangent(Q, K, V))
    first = fmpq_mat(columns[0]).rank()
    span = fmpq_mat([c for cols in columns for c in cols]).rank()
    if integer(field(cert, "span"), "span") != span:
        reject(f"span must be {span}, the rank of the tangent images")
    dim = certified_dimension(field(cert, "dimension_certificate"))
    if integer(field(cert, "dimension"), "dimension") != dim:
        reject("the dimension must be the certified one of the embedded certificate")
    verdict = field(cert, "verdict")
    certified = boolean(field(cert, "certified"), "certified")
    w = f"widths {d},{dd}, rank {a}"
    fib = field(cert, "fiber_certificate")  # verified and bound to this point by the kernel
    if "implicit_certificate" in cert and "graded_certificate" in cert:
        reject("a verdict rests on the implicit equations or on those of degree <= K, not both")
    if "implicit_certificate" in cert:
        return _by_equations(cert, _coordinates(K0.transpose() * Q0, V0, y), w, span, dim)
    if "graded_certificate" in cert:
        return _by_graded(cert, _coordinates(K0.transpose() * Q0, V0, y), w, span, dim)
    if "jacobian_rank" in cert:
        reject("jacobian_rank belongs to a verdict from the implicit equations")
    if verdict == "singular":
        if span <= dim or not certified:
            reject(f"a certified singular verdict needs a span above dim M = {dim}, got {span}")
        return f"singular point of M ({w}): tangent images span {span} > dim M = {dim}"
    if verdict == "smooth":
        lines = fib["components"]
        if fib["case"] in ("zero", "outside") or len(lines) != 1:
            reject("smooth needs a fiber of exactly one line")
        A = matrix(lines[0]["A"], d, d, "fiber line A")
        if a < d and A.rank() != a:
            reject(f"smooth needs a smooth domain at A: rank A = a = {a} on the fiber line (or a >= d)")
        r = min(a, d)
        if dim != r * (2 * d - r) + dd * d - 1:
            reject("smooth needs dim M = dim {rank A <= a} x C^{d' x d} - 1 (the scaling quotient)")
        if first != dim or span != dim:
            reject(f"smooth needs d psi of rank dim M = {dim} at the preimage, got {first}")
        if not certified:
            reject("a smooth verdict is certified")
        return f"smooth point of M ({w}): one fiber line, smooth domain at A, d psi of rank {dim}"
    if verdict == "undecided":
        if certified or span > dim:
            reject("an undecided verdict is not certified and has span <= dim M")
        return f"undecided point of M ({w}): span {span} <= dim M = {dim} (no verdict)"
    reject("verdict must be singular, smooth or undecided")
