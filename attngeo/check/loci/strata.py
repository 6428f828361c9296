"""Independent re-verification of stratification certificates (kind ``strata``).

For each stratum ``(r, s)`` the checker reads the factors ``(B, C, D, E)`` of
its point, confirms ``rank BC = r`` and ``rank DE = s``, recomputes the
lower bound on the image dimension as the rank of the ε-coefficient tangents
of ``F`` (the singular-point checker's route, not the prover's Gram formula)
along curves inside the stratum (``B, C`` moved freely, ``V = (D + εE_ij) E``
and ``D (E + εE_ij)``), the upper bound ``dim S_{r,s} − 1`` from the
determinantal dimensions, and re-checks the embedded singular-point
certificate of the same point, whose verdict is the stratum's label.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..arch import single_layer
from ..limits import MAX_LOCUS_WORK, refuse_above
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER, Embedded
from .singular import NS_PER_POLY_STEP, _rank_ns, _tangent, work
from ..values import field, integer, matrix, rational, reject, seq

_STRATUM = {"rank_A": CHECKED, "rank_V": CHECKED, "parameter_dimension": CHECKED, "dimension": CHECKED,
            "lower": CHECKED, "upper": CHECKED, "singular": CHECKED, "label": CHECKED, "certified": CHECKED,
            "hmk_singular": CHECKED, "factors": CHECKED, "point_certificate": Embedded("singular-point")}
SCHEMA = {**HEADER, "architecture": ARCHITECTURE, "edges": CHECKED, "seconds": NUMBER, "strata": [_STRATUM]}


def budget(cert: dict) -> None:
    """Refuse, before any stratum's point certificate is verified, a strata certificate above the work limit.

    Every listed stratum costs its point certificate (:func:`attngeo.check.loci.singular.work`) and the curve
    tangents of its stratum: ``d' s + s d`` directions combined over ``d`` weights of ``d' d^2 (d + 1) / 2``
    coefficients, the point's tangent columns, and their rank.

    Examples
    --------
    >>> from attngeo import Architecture, stratify
    >>> budget(stratify(Architecture((2, 2), (1,), tokens=2)).to_json())
    >>> budget({"architecture": {"widths": [64, 64], "ranks": [64], "tokens": 2, "normalization": "lightning"},
    ...         "kind": "strata", "strata": [{}] * 4097})     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: replaying this strata certificate needs about ... units of work, ...
    """
    _, d, dd, a = single_layer(cert)
    strata = cert.get("strata")
    P, m = 2 * a * d + dd * d, dd * d * d * (d + 1) // 2
    total = 0
    for st in strata if isinstance(strata, list) else ():
        point = st.get("point_certificate") if isinstance(st, dict) else None
        r, s = min(a, d), min(d, dd)  # the largest stratum's sizes: a bound for every one
        directions = dd * s + s * d
        total += (work(point if isinstance(point, dict) else {}, d, dd, a) + directions * d * m * NS_PER_POLY_STEP
                  + P * (2 * dd * d**3 + a * d * d + P) * NS_PER_POLY_STEP + _rank_ns(2 * r * d + directions, m))
    refuse_above(total, MAX_LOCUS_WORK, "replaying this strata certificate")


def _dimension(d: int, dd: int, r: int, s: int) -> int:
    return r * (2 * d - r) + s * (d + dd - s)


def _curve_rank(B: fmpq_mat, C: fmpq_mat, D: fmpq_mat, E: fmpq_mat) -> int:
    r, d = C.nrows(), C.ncols()
    dd, s = D.nrows(), D.ncols()
    cols = _tangent(C, B.transpose(), D * E)  # columns for Q = C, K = B^T, then every entry of V
    qk, v_cols = cols[: 2 * r * d], cols[2 * r * d:]
    directions = []
    for i in range(dd):
        for j in range(s):
            directions.append([[E[j, c] if row == i else 0 for c in range(d)] for row in range(dd)])
    for i in range(s):
        for j in range(d):
            directions.append([[D[row, i] if c == j else 0 for c in range(d)] for row in range(dd)])
    combined = []
    for dV in directions:
        weights = [(k, dV[row][c]) for k, (row, c) in enumerate((row, c) for row in range(dd) for c in range(d))
                   if dV[row][c] != 0]
        combined.append([sum((v_cols[k][n] * w for k, w in weights), fmpq(0)) for n in range(len(v_cols[0]))])
    return fmpq_mat(qk + combined).rank()


def _point_of(B: fmpq_mat, C: fmpq_mat, D: fmpq_mat, E: fmpq_mat, a: int) -> list:
    r, d = C.nrows(), C.ncols()
    V = D * E
    Q = [C[i, j] if i < r else fmpq(0) for i in range(a) for j in range(d)]
    K = [B[j, i] if i < r else fmpq(0) for i in range(a) for j in range(d)]
    return Q + K + [V[i, j] for i in range(V.nrows()) for j in range(d)]


def check(cert: dict) -> str:
    """The claim of a strata certificate: every ``(rank A, rank V)`` stratum, its image dimension and its label.

    Called by the kernel after the schema check and the embedded
    singular-point certificates (one per stratum, whose verdict is the label);
    use :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        A missing or extra stratum, a point off its stratum, bounds other than
        the recomputed ones, a label other than its point's verdict, or edges
        other than the closure order.

    Examples
    --------
    One layer ``2 -> 2`` of rank 1 has the strata ``0``, ``(1, 1)`` and
    ``(1, 2)``; the first two are singular, the open one is smooth:

    >>> from attngeo import Architecture, stratify
    >>> from attngeo.check.loci.strata import check
    >>> cert = stratify(Architecture((2, 2), (1,), tokens=2)).to_json()
    >>> [(s["rank_A"], s["rank_V"], s["dimension"], s["label"]) for s in cert["strata"]]
    [(0, 0, 0, 'singular'), (1, 1, 5, 'singular'), (1, 2, 6, 'smooth')]
    >>> check(cert)
    'strata of M (widths 2,2, rank 1): 3 strata, singular (0,0), (1,1)'
    >>> cert["strata"][1]["upper"] = 6      # dim S_{1,1} - 1 = 5
    >>> check(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: stratum (1,1). image dimension bounds are 5..5
    """
    arch, d, dd, a = single_layer(cert)
    strata = seq(field(cert, "strata"), "strata")
    expected = [(0, 0)] + [(r, s) for r in range(1, min(a, d) + 1) for s in range(1, min(d, dd) + 1)]
    if [(st.get("rank_A"), st.get("rank_V")) if isinstance(st, dict) else None for st in strata] != expected \
            or any(isinstance(st.get(k), bool) for st in strata for k in ("rank_A", "rank_V")):
        reject(f"strata must list exactly {expected} (rank_A, rank_V), in that order")
    labels = {}
    for st in strata:
        r, s = st["rank_A"], st["rank_V"]
        where = f"stratum ({r},{s})."
        point_cert = field(st, "point_certificate", where)  # verified and bound to this architecture by the kernel
        label = point_cert["verdict"]
        if label == "singular" and "implicit_certificate" in point_cert:
            # a singular point of the equations is that point alone: only the tangent images, whose preimages move
            # with the point, and smoothness (an open condition) reach the stratum (docs/singular.md §4)
            reject(f"{where} label: a singular verdict from the implicit equations holds at its point only; a "
                   "stratum is labelled singular by its tangent images")
        if field(st, "label", where) != label:
            reject(f"{where} label must be the point's verdict")
        point = [rational(x, "point") for x in point_cert["point"]]
        if (r, s) == (0, 0):
            r0 = min(a, d)
            dim_s = max(dd * d, r0 * (2 * d - r0))  # {A = 0} u {V = 0, rank A <= a}
            if any(x != 0 for x in point):
                reject("the zero stratum's point is the zero function")
            if field(st, "factors", where) != []:
                reject("the zero stratum has no factors")
            lower = upper = 0  # its image is one point
        else:
            factors = seq(field(st, "factors", where), f"{where}factors", 4)
            B = matrix(factors[0], d, r, f"{where} B")
            C = matrix(factors[1], r, d, f"{where} C")
            D = matrix(factors[2], dd, s, f"{where} D")
            E = matrix(factors[3], s, d, f"{where} E")
            if (B * C).rank() != r or (D * E).rank() != s:
                reject(f"{where} the point does not have rank A = {r}, rank V = {s}")
            if point != _point_of(B, C, D, E, a):
                reject(f"{where} the point certificate is for another point")
            dim_s = _dimension(d, dd, r, s)
            lower, upper = _curve_rank(B, C, D, E), dim_s - 1
        if integer(field(st, "parameter_dimension", where), "parameter_dimension") != dim_s:
            reject(f"{where} dim S = {dim_s}")
        if field(st, "lower", where) != lower or field(st, "upper", where) != upper:
            reject(f"{where} image dimension bounds are {lower}..{upper}")
        dimension = lower if lower == upper else None
        if field(st, "dimension", where) != dimension or isinstance(st["dimension"], bool):
            reject(f"{where} dimension {dimension!r} follows from the bounds")
        certified = dimension is not None and label in ("singular", "smooth")
        if field(st, "certified", where) is not certified:
            reject(f"{where} certified must be {certified}")
        if field(st, "singular", where) is not {"singular": True, "smooth": False}.get(label):
            reject(f"{where} singular must follow the label")
        if field(st, "hmk_singular", where) is not (r * s <= 1):
            reject(f"{where} hmk_singular is [HMK]'s criterion rank A * rank V <= 1")
        labels[(r, s)] = label
    edges = sorted([[f"({r},{s})", f"({r2},{s2})"] for (r, s) in expected[1:] for (r2, s2) in ((r - 1, s), (r, s - 1))
                    if (r2, s2) in expected[1:]] + [["(1,1)", "zero"]])
    got = seq(field(cert, "edges"), "edges")
    if any(not isinstance(e, list) or len(e) != 2 or not all(isinstance(x, str) for x in e) for e in got) \
            or sorted(got) != edges or len(got) != len(edges):
        reject("edges must be the closure order: (r,s) -> (r-1,s), (r,s-1), and (1,1) -> zero")
    singular = sorted(k for k, v in labels.items() if v == "singular")
    return (f"strata of M (widths {d},{dd}, rank {a}): {len(strata)} strata, singular "
            f"{', '.join(f'({r},{s})' for r, s in singular) or 'none'}")
