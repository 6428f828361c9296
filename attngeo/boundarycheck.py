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

from .checker import _field, _reject, _single_layer
from .fibercheck import _matrix, _rational


def _quadrics(cert: dict, d: int, dd: int) -> dict:
    tensor, den = _field(cert, "tensor", ""), _rational(_field(cert, "denominator", ""), "denominator")
    if den == 0 or not isinstance(tensor, list) or len(tensor) != dd:
        _reject("tensor must be d' x d x d x d with a nonzero denominator")
    out = {}
    for k in range(dd):
        for p in range(d):
            rows = [[tensor[k][m][n][p] for n in range(d)] for m in range(d)]
            S = _matrix(rows, d, d, f"tensor[{k}][.][.][{p}]") * (1 / den)
            if S != S.transpose():
                _reject("the Gram tensor must be symmetric in its middle indices")
            if any(S[i, j] != 0 for i in range(d) for j in range(d)):
                out[(k, p)] = S
    return out


def _definite_minor(q: fmpq_mat) -> fmpq | None:
    n = q.nrows()
    for i in range(n):
        for j in range(i + 1, n):
            det = q[i, i] * q[j, j] - q[i, j] ** 2
            if det != 0:
                return det
    return None


def check_boundary_point(cert: dict) -> str:
    arch, d, dd, _ = _single_layer(cert)
    S = _quadrics(cert, d, dd)
    verdict, shape = cert.get("verdict"), cert.get("shape")
    ev = _field(cert, "evidence", "")
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
                u = [_rational(x, "direction") for x in _field(ev, "direction", "evidence.")]
                c = next(q[m, m] for m in range(d) if q[m, m] != 0)  # q = c s s^T: the sign of c
                U = fmpq_mat([[u[m] * u[n] * c for n in range(d)] for m in range(d)])
                if len(u) != d or (q + U).rank() != 2 or not (_definite_minor(q + U) or 0) > 0:
                    _reject("the curve q + eps^2 c u u^T must be definite of rank 2 (u transverse to s)")
            else:
                expected = ("outside", "definite") if _definite_minor(q) > 0 else ("interior", "indefinite")
        else:
            expected = ("interior", "general")
            A = _matrix(_field(ev, "A", "evidence."), d, d, "evidence A")
            V = _matrix(_field(ev, "V", "evidence."), dd, d, "evidence V")
            for (k, p) in ((k, p) for k in range(dd) for p in range(d)):
                G = fmpq_mat([[(V[k, m] * A[n, p] + V[k, n] * A[m, p]) / 2 for n in range(d)] for m in range(d)])
                if G != S.get((k, p), fmpq_mat(d, d)):
                    _reject("the real weights in the evidence do not reproduce the point")
            if arch.ranks[0] < d and A.rank() > arch.ranks[0]:
                _reject("the real weights in the evidence exceed rank a")
    if (verdict, shape) != expected:
        _reject(f"Lemma B gives {expected[0]} ({expected[1]}), not {verdict} ({shape})")
    if cert.get("in_real_image") is not (verdict != "outside") or cert.get("certified") is not True:
        _reject("in_real_image and certified must follow the verdict")
    return f"{verdict} point of M_R (widths {d},{dd}, rank {arch.ranks[0]}): {shape}"
