"""Independent re-verification of boundary-point certificates (kind ``boundary-point``).

The checker reads the Gram tensor, re-derives the shape of Lemma B
(docs/singular.md §6) with its own linear algebra — are all nonzero quadrics
``S_kp`` multiples ``R_kp q`` of one ``q`` with ``rank R = 1``, the rank of ``q``, the
sign of a 2x2 principal minor — and confirms the verdict the lemma gives. A
*general* point must come with real weights ``(A, V)`` that reproduce it; a
*square* point with a transverse ``u`` for which ``q + c u u^T`` (``q = c s s^T``) is
definite, so the curve ``q + eps^2 c u u^T`` leaves ``M_R`` for every ``eps != 0``.
"""

from __future__ import annotations

from flint import fmpq, fmpq_mat

from ..arch import single_layer
from ..fibers.layer import gram_tensor
from ..layer import forms, gram
from ..poly import ring
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER
from ..values import boolean, field, integer, matrix, rational, reject, seq

SCHEMA = {**HEADER, "architecture": ARCHITECTURE, "verdict": CHECKED, "shape": CHECKED, "in_real_image": CHECKED,
          "certified": CHECKED, "seconds": NUMBER, "tensor": CHECKED, "denominator": CHECKED,
          "evidence": {"A": CHECKED, "V": CHECKED, "quadric": CHECKED, "R": CHECKED, "rank_q": CHECKED,
                       "direction": CHECKED, "minor": CHECKED}}
_EVIDENCE = {"zero": set(), "general": {"A", "V"}, "square": {"quadric", "R", "rank_q", "direction"},
             "definite": {"quadric", "R", "rank_q", "minor"}, "indefinite": {"quadric", "R", "rank_q", "minor"}}


def _definite_minor(q: fmpq_mat) -> fmpq | None:
    n = q.nrows()
    for i in range(n):
        for j in range(i + 1, n):
            det = q[i, i] * q[j, j] - q[i, j] ** 2
            if det != 0:
                return det
    return None


def _check_factored(S: dict, ev: dict, d: int, dd: int) -> None:
    """Evidence ``F = q(y) R``: the recorded quadric and matrix reproduce every quadric, with the recorded rank."""
    q = matrix(ev["quadric"], d, d, "evidence.quadric")
    R = matrix(ev["R"], dd, d, "evidence.R")
    for k in range(dd):
        for p in range(d):
            if q * R[k, p] != S.get((k, p), fmpq_mat(d, d)):
                reject("the evidence's quadric and R do not reproduce the point (F = q(y) R)")
    if integer(ev["rank_q"], "evidence.rank_q", 0) != q.rank():
        reject(f"evidence.rank_q must be {q.rank()}")
    if "minor" in ev:
        m = seq(ev["minor"], "evidence.minor", 3)
        i, j = integer(m[0], "evidence.minor[0]", 0, d - 1), integer(m[1], "evidence.minor[1]", 0, d - 1)
        if rational(m[2], "evidence.minor[2]") != q[i, i] * q[j, j] - q[i, j] ** 2 or i == j:
            reject("evidence.minor must be a 2x2 principal minor of the quadric with its value")


def _check_real_weights(S: dict, ev: dict, d: int, dd: int, a: int) -> None:
    """A general point comes with real weights (A, V), rank A <= a, that reproduce it."""
    A = matrix(field(ev, "A", "evidence."), d, d, "evidence A")
    V = matrix(field(ev, "V", "evidence."), dd, d, "evidence V")
    F = forms(A, V, ring(tuple(f"y{i}" for i in range(d))).gens())
    if any(gram(F[k][p], d) != S.get((k, p), fmpq_mat(d, d)) for k in range(dd) for p in range(d)):
        reject("the real weights in the evidence do not reproduce the point")
    if a < d and A.rank() > a:
        reject("the real weights in the evidence exceed rank a")


def check(cert: dict) -> str:
    """The claim of a boundary-point certificate: Lemma B's verdict, re-derived from the Gram tensor.

    Called by the kernel after the schema check; use
    :func:`attngeo.check_certificate` on a certificate.

    Returns
    -------
    str
        ``boundary``, ``interior`` or ``outside`` (of ``M_R``), with the shape that decides it.

    Raises
    ------
    CertificateRejected
        Evidence that does not reproduce the point, or a verdict Lemma B does not give.

    Examples
    --------
    ``V = K = (3, 5)``, ``Q = (1, 2)`` gives ``F = (3 y0 + 5 y1)^2 (1, 2)``, a
    square: a boundary point. With ``V = (1, 1)`` the quadric
    ``(y0 + y1)(3 y0 + 5 y1)`` is indefinite: an interior point.

    >>> from attngeo import Architecture, is_boundary_point
    >>> from attngeo.check.loci.boundary import check
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> cert = is_boundary_point(arch, [[[[1, 2]], [[3, 5]], [[3, 5]]]]).to_json()
    >>> check(cert)
    'boundary point of M_R (widths 2,1, rank 1): square'
    >>> check(is_boundary_point(arch, [[[[1, 2]], [[3, 5]], [[1, 1]]]]).to_json())
    'interior point of M_R (widths 2,1, rank 1): indefinite'
    >>> cert["verdict"] = "interior"
    >>> check(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: Lemma B gives boundary (square), which the certificate does not state
    """
    arch, d, dd, _ = single_layer(cert)
    S = gram_tensor(cert, d, dd)
    verdict, shape = field(cert, "verdict"), field(cert, "shape")
    if not isinstance(shape, str) or shape not in _EVIDENCE or verdict not in ("boundary", "interior", "outside"):
        reject("verdict must be boundary, interior or outside, and shape one of " + ", ".join(sorted(_EVIDENCE)))
    ev = field(cert, "evidence", "")
    if not isinstance(ev, dict) or set(ev) != _EVIDENCE[shape]:
        reject("evidence must hold exactly the data of its shape")
    if "quadric" in ev:
        _check_factored(S, ev, d, dd)
    if d < 2:
        expected = ("interior", "zero" if not S else "general")
    elif not S:
        expected = ("boundary", "zero")
    else:
        q = next(iter(S.values()))
        i, j = next((i, j) for i in range(d) for j in range(d) if q[i, j] != 0)
        R = fmpq_mat(dd, d)
        shaped = True
        for (k, p), M in S.items():
            R[k, p] = M[i, j] / q[i, j]
            shaped &= M == R[k, p] * q
        if shaped and R.rank() == 1 and q.rank() <= 2:
            if q.rank() == 1:
                expected = ("boundary", "square")
                u = [rational(x, "direction") for x in seq(field(ev, "direction", "evidence."), "evidence.direction", d)]
                c = next(q[m, m] for m in range(d) if q[m, m] != 0)  # q = c s s^T: the sign of c
                U = fmpq_mat([[u[m] * u[n] * c for n in range(d)] for m in range(d)])
                if len(u) != d or (q + U).rank() != 2 or not (_definite_minor(q + U) or 0) > 0:
                    reject("the curve q + eps^2 c u u^T must be definite of rank 2 (u transverse to s)")
            else:
                expected = ("outside", "definite") if _definite_minor(q) > 0 else ("interior", "indefinite")
        else:
            expected = ("interior", "general")
    if (verdict, shape) != expected:
        reject(f"Lemma B gives {expected[0]} ({expected[1]}), which the certificate does not state")
    if shape == "general":
        _check_real_weights(S, ev, d, dd, arch.ranks[0])
    if boolean(field(cert, "in_real_image"), "in_real_image") is not (verdict != "outside") \
            or boolean(field(cert, "certified"), "certified") is not True:
        reject("in_real_image and certified must follow the verdict")
    return f"{expected[0]} point of M_R (widths {d},{dd}, rank {arch.ranks[0]}): {expected[1]}"
