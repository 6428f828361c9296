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

from flint import fmpq_mat, fmpq_mpoly_ctx

from .checker import _field, _int, _reject, _single_layer, check_certificate
from .engine import parse_poly
from .fibercheck import _forms, _matrix, _split, check_fiber


def _tangent(Q: fmpq_mat, K: fmpq_mat, V: fmpq_mat) -> list[list]:
    """Columns: d/d eps of every coefficient of F at (Q, K, V) + eps E_j, one per weight."""
    a, d, dd = Q.nrows(), Q.ncols(), V.nrows()
    ctx = fmpq_mpoly_ctx.get(("eps",) + tuple(f"y{i}" for i in range(d)), "degrevlex")
    eps, y = ctx.gens()[0], ctx.gens()[1:]
    monomials = [(m, n) for m in range(d) for n in range(m, d)]
    cols = []
    for which, rows in (("Q", a), ("K", a), ("V", dd)):
        for i in range(rows):
            for j in range(d):
                mats = {name: [[ctx.constant(M[r, c]) for c in range(d)] for r in range(M.nrows())]
                        for name, M in (("Q", Q), ("K", K), ("V", V))}
                mats[which][i][j] += eps
                A = [[sum((mats["K"][u][m] * mats["Q"][u][p] for u in range(a)), ctx.constant(0)) for p in range(d)]
                     for m in range(d)]
                ell = [sum((mats["V"][k][m] * y[m] for m in range(d)), ctx.constant(0)) for k in range(dd)]
                em = [sum((A[n][p] * y[n] for n in range(d)), ctx.constant(0)) for p in range(d)]
                col = []
                for k in range(dd):
                    for p in range(d):
                        terms = (ell[k] * em[p]).to_dict()
                        for m, n in monomials:
                            e = [0] * (d + 1)
                            e[0] = 1
                            e[1 + m] += 1
                            e[1 + n] += 1
                            col.append(terms.get(tuple(e), 0))
                cols.append(col)
    return cols


def _by_equations(cert: dict, F: list[list], ctx, d: int, dd: int, w: str, span: int, dim: int) -> str:
    """A verdict read off the Jacobian of the implicit equations at the point's coordinates."""
    eq = cert["implicit_certificate"]
    if not isinstance(eq, dict) or eq.get("kind") != "implicit" or eq.get("architecture") != cert.get("architecture"):
        _reject("the embedded implicit certificate must be for the same architecture")
    check_certificate(eq)
    if span > dim:
        _reject("the equations are consulted only where the tangent images do not already prove singularity")
    coords = []
    for k in range(dd):
        for p in range(d):
            terms = F[k][p].to_dict()
            for m in range(d):
                for n in range(m, d):
                    coords.append(terms.get(tuple(int(i == m) + int(i == n) for i in range(d)), 0))
    cctx = fmpq_mpoly_ctx.get(tuple(eq["coordinates"]), "degrevlex")
    G = [parse_poly(t, cctx) for t in eq["equations"]]
    if any(g(*coords) != 0 for g in G):
        _reject("the point's coordinates do not satisfy the implicit equations")
    rank = fmpq_mat([[g.derivative(i)(*coords) for i in range(len(coords))] for g in G]).rank()
    codim = len(coords) - eq["dimension"]
    if cert.get("jacobian_rank") != rank or cert.get("certified") is not True:
        _reject(f"the Jacobian of the implicit equations has rank {rank}")
    expected = "smooth" if rank == codim else "singular"
    if cert.get("verdict") != expected:
        _reject(f"Jacobian rank {rank} against codim M = {codim} means {expected}")
    return f"{expected} point of M ({w}): Jacobian of the implicit equations has rank {rank}, codim M = {codim}"


def check_singular_point(cert: dict) -> str:
    arch, d, dd, a = _single_layer(cert)
    point = _field(cert, "point", "")
    P = 2 * a * d + dd * d
    if not isinstance(point, list) or len(point) != P:
        _reject(f"point must list the {P} parameters")
    Q0, K0, V0 = _split(point, a, d, dd, "point")
    ctx = fmpq_mpoly_ctx.get(("y", d), "degrevlex")
    F = _forms(K0.transpose() * Q0, V0, ctx)
    pre = _field(cert, "preimage_weights", "")
    if not isinstance(pre, list) or not pre:
        _reject("preimage_weights must be a nonempty list")
    columns = []
    for k, triple in enumerate(pre):
        if not isinstance(triple, list) or len(triple) != 3:
            _reject(f"preimage {k} must be [Q, K, V]")
        Q = _matrix(triple[0], a, d, f"preimage {k} Q")
        K = _matrix(triple[1], a, d, f"preimage {k} K")
        V = _matrix(triple[2], dd, d, f"preimage {k} V")
        if _forms(K.transpose() * Q, V, ctx) != F:
            _reject(f"preimage {k} computes a different function")
        columns.append(_tangent(Q, K, V))
    first = fmpq_mat(columns[0]).rank()
    span = fmpq_mat([c for cols in columns for c in cols]).rank()
    if _int(_field(cert, "span", ""), "span") != span:
        _reject(f"span = {cert['span']} but the tangent images span {span}")
    dim_cert = _field(cert, "dimension_certificate", "")
    if not isinstance(dim_cert, dict) or dim_cert.get("architecture") != cert.get("architecture"):
        _reject("the embedded dimension certificate must be for the same architecture")
    check_certificate(dim_cert)
    dim = dim_cert.get("dimension")
    if dim_cert.get("certified") is not True or _field(cert, "dimension", "") != dim:
        _reject("the dimension must be the certified one of the embedded certificate")
    verdict = cert.get("verdict")
    w = f"widths {d},{dd}, rank {a}"
    if "implicit_certificate" in cert:
        return _by_equations(cert, F, ctx, d, dd, w, span, dim)
    if verdict == "singular":
        if span <= dim:
            _reject(f"singular needs a span above dim M = {dim}, got {span}")
        if cert.get("certified") is not True:
            _reject("a singular verdict is certified")
        return f"singular point of M ({w}): tangent images span {span} > dim M = {dim}"
    if verdict == "smooth":
        fib = _field(cert, "fiber_certificate", "")
        if not isinstance(fib, dict) or fib.get("point") != point:
            _reject("the embedded fiber certificate must be for the same point")
        check_fiber(fib)
        lines = fib.get("components", [])
        if fib.get("case") == "zero" or len(lines) != 1:
            _reject("smooth needs a fiber of exactly one line")
        A = _matrix(lines[0]["A"], d, d, "fiber line A")
        if a < d and A.rank() != a:
            _reject(f"smooth needs a smooth domain at A: rank A = a = {a} on the fiber line (or a >= d)")
        r = min(a, d)
        if dim != r * (2 * d - r) + dd * d - 1:
            _reject("smooth needs dim M = dim {rank A <= a} x C^{d' x d} - 1 (the scaling quotient)")
        if first != dim or span != dim:
            _reject(f"smooth needs d psi of rank dim M = {dim} at the preimage, got {first}")
        if cert.get("certified") is not True:
            _reject("a smooth verdict is certified")
        return f"smooth point of M ({w}): one fiber line, smooth domain at A, d psi of rank {dim}"
    if verdict == "undecided":
        if cert.get("certified") is not False or span > dim:
            _reject("an undecided verdict is not certified and has span <= dim M")
        return f"undecided point of M ({w}): span {span} <= dim M = {dim}"
    _reject(f"unknown verdict {verdict!r}")
