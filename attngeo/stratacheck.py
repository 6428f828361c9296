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

from .checker import _field, _int, _reject, _single_layer, check_certificate
from .fibercheck import _matrix
from .singularcheck import _tangent


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


def check_strata(cert: dict) -> str:
    arch, d, dd, a = _single_layer(cert)
    strata = _field(cert, "strata", "")
    expected = [(0, 0)] + [(r, s) for r in range(1, min(a, d) + 1) for s in range(1, min(d, dd) + 1)]
    if not isinstance(strata, list) or [(st.get("rank_A"), st.get("rank_V")) for st in strata
                                        if isinstance(st, dict)] != expected:
        _reject(f"strata must list exactly {expected} (rank_A, rank_V), in that order")
    labels = {}
    for st in strata:
        r, s = st["rank_A"], st["rank_V"]
        where = f"stratum ({r},{s})"
        point_cert = _field(st, "point_certificate", where)
        if not isinstance(point_cert, dict) or point_cert.get("kind") != "singular-point" \
                or point_cert.get("architecture") != cert.get("architecture"):
            _reject(f"{where}: the point certificate must be a singular-point certificate for this architecture")
        check_certificate(point_cert)
        if st.get("label") != point_cert.get("verdict"):
            _reject(f"{where}: label {st.get('label')!r} is not the point's verdict {point_cert.get('verdict')!r}")
        point = [fmpq(*map(int, x.split("/"))) if "/" in x else fmpq(int(x)) for x in point_cert["point"]]
        if (r, s) == (0, 0):
            if any(x != 0 for x in point) or _field(st, "dimension", where) != 0:
                _reject("the zero stratum's point is the zero function, of dimension 0")
            labels[(r, s)] = st["label"]
            continue
        factors = _field(st, "factors", where)
        if not isinstance(factors, list) or len(factors) != 4:
            _reject(f"{where}: factors must be [B, C, D, E]")
        B = _matrix(factors[0], d, r, f"{where} B")
        C = _matrix(factors[1], r, d, f"{where} C")
        D = _matrix(factors[2], dd, s, f"{where} D")
        E = _matrix(factors[3], s, d, f"{where} E")
        if (B * C).rank() != r or (D * E).rank() != s:
            _reject(f"{where}: the point does not have rank A = {r}, rank V = {s}")
        if point != _point_of(B, C, D, E, a):
            _reject(f"{where}: the point certificate is for another point")
        dim_s = _dimension(d, dd, r, s)
        lower = _curve_rank(B, C, D, E)
        if _int(_field(st, "parameter_dimension", where), "parameter_dimension") != dim_s:
            _reject(f"{where}: dim S = {dim_s}")
        if st.get("lower") != lower or st.get("upper") != dim_s - 1:
            _reject(f"{where}: image dimension bounds are {lower}..{dim_s - 1}, not {st.get('lower')}..{st.get('upper')}")
        if st.get("dimension") != (lower if lower == dim_s - 1 else None):
            _reject(f"{where}: dimension {st.get('dimension')!r} does not follow from the bounds")
        certified = lower == dim_s - 1 and st["label"] in ("singular", "smooth")
        if st.get("certified") is not certified:
            _reject(f"{where}: certified must be {certified}")
        labels[(r, s)] = st["label"]
    edges = sorted([[f"({r},{s})", f"({r2},{s2})"] for (r, s) in expected[1:] for (r2, s2) in ((r - 1, s), (r, s - 1))
                    if (r2, s2) in expected[1:]] + [["(1,1)", "zero"]])
    if sorted(map(list, _field(cert, "edges", ""))) != edges:
        _reject("edges must be the closure order: (r,s) -> (r-1,s), (r,s-1), and (1,1) -> zero")
    singular = sorted(k for k, v in labels.items() if v == "singular")
    return (f"strata of M (widths {d},{dd}, rank {a}): {len(strata)} strata, singular "
            f"{', '.join(f'({r},{s})' for r, s in singular) or 'none'}")
