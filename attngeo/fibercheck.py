"""Independent re-verification of single-layer fiber certificates (kind ``fiber``).

Shares nothing with the computing path (layerfunction, fiber): the function is
rebuilt here as products of linear forms ``F_kp = (V y)_k (A^T y)_p`` in
python-flint polynomials (the prover uses a Gram tensor), and the forced
candidates are rebuilt by exact *polynomial division* (the prover uses linear
algebra on Gram matrices). The argument replayed is docs/fibers.md, Theorem 1:

* ``F = 0``: the fiber is ``{A = 0} u {V = 0, rank A <= a}``;
* otherwise every point of the fiber has ``l'_k`` proportional to a linear
  factor of ``F_kp``; each factor forces one candidate line; the components are
  exactly the candidates that reproduce ``F`` with ``rank A <= a``.
"""

from __future__ import annotations

from fractions import Fraction

from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from .checker import _field, _int, _reject, _single_layer


def _rational(value, name: str) -> fmpq:
    if not isinstance(value, str):
        _reject(f"{name} must be a rational written as a string, got {value!r}")
    try:
        f = Fraction(value)
    except (ValueError, ZeroDivisionError):
        _reject(f"{name} = {value!r} is not a rational")
    return fmpq(f.numerator, f.denominator)


def _matrix(value, rows: int, cols: int, name: str) -> fmpq_mat:
    if not isinstance(value, list) or len(value) != rows or any(not isinstance(r, list) or len(r) != cols for r in value):
        _reject(f"{name} must be a {rows}x{cols} matrix")
    return fmpq_mat([[_rational(v, f"{name}[{i}][{j}]") for j, v in enumerate(r)] for i, r in enumerate(value)])


def _split(point: list, a: int, d: int, dd: int, where: str) -> tuple[fmpq_mat, fmpq_mat, fmpq_mat]:
    """``(Q, K, V)`` of a flat single-layer point."""
    return (_matrix([point[i * d:(i + 1) * d] for i in range(a)], a, d, f"{where} Q"),
            _matrix([point[(a + i) * d:(a + i + 1) * d] for i in range(a)], a, d, f"{where} K"),
            _matrix([point[(2 * a + i) * d:(2 * a + i + 1) * d] for i in range(dd)], dd, d, f"{where} V"))


def _forms(A: fmpq_mat, V: fmpq_mat, ctx) -> list[list]:
    """``F[k][p] = (V y)_k (A^T y)_p`` as polynomials."""
    y = ctx.gens()
    d = A.nrows()
    ell = [sum((V[k, m] * y[m] for m in range(d)), ctx.from_dict({})) for k in range(V.nrows())]
    em = [sum((A[n, p] * y[n] for n in range(d)), ctx.from_dict({})) for p in range(d)]
    return [[lk * mp for mp in em] for lk in ell]


def _linear(poly, d: int) -> list[fmpq] | None:
    if poly == 0:
        return [fmpq(0)] * d
    if poly.total_degree() != 1 or any(sum(e) != 1 for e in poly.to_dict()):
        return None
    out = [fmpq(0)] * d
    for e, c in poly.to_dict().items():
        out[e.index(1)] = c
    return out


def _divide_all(polys: list, divisor, d: int) -> list[list[fmpq]] | None:
    out = []
    for g in polys:
        q, r = divmod(g, divisor)
        coeffs = _linear(q, d) if r == 0 else None
        if coeffs is None:
            return None
        out.append(coeffs)
    return out


def _proportional(M: fmpq_mat, N: fmpq_mat) -> bool:
    """``M = c N`` for a nonzero constant ``c``."""
    entries = [(M[i, j], N[i, j]) for i in range(M.nrows()) for j in range(M.ncols())]
    ratio = next((m / n for m, n in entries if n != 0), None)
    return ratio is not None and ratio != 0 and all(m == ratio * n for m, n in entries)


def check_fiber(cert: dict) -> str:
    arch, d, dd, _ = _single_layer(cert)
    a = arch.ranks[0]
    point = _field(cert, "point", "")
    if not isinstance(point, list) or len(point) != 2 * a * d + dd * d:
        _reject(f"point must list the {2 * a * d + dd * d} parameters")
    Q, K, V = _split(point, a, d, dd, "point")
    A = K.transpose() * Q
    ctx = fmpq_mpoly_ctx.get(("y", d), "degrevlex")
    F = _forms(A, V, ctx)
    comps = _field(cert, "components", "")
    if not isinstance(comps, list):
        _reject("components must be a list")
    if cert.get("certified") is not True:
        _reject("a fiber certificate must claim certified = true")
    if all(g == 0 for row in F for g in row):
        return _check_zero(cert, comps, d, dd, a)
    return _check_lines(cert, comps, F, ctx, d, dd, a)


def _check_zero(cert: dict, comps: list, d: int, dd: int, a: int) -> str:
    if cert.get("case") != "zero":
        _reject(f"the point gives the zero function but the case is {cert.get('case')!r}")
    r = min(a, d)
    want = {"A=0": dd * d, "V=0": r * (2 * d - r)}
    got = {}
    for c in comps:
        if not isinstance(c, dict):
            _reject("each component must be an object")
        got[c.get("locus")] = _int(c.get("dimension"), "component dimension", 0)
    if got != want:
        _reject(f"the zero fiber is {{A = 0}} (dim {want['A=0']}) and {{V = 0, rank A <= {a}}} (dim {want['V=0']}), "
                f"the certificate lists {got}")
    return f"fiber of the zero function of widths {d},{dd}, rank {a}: {{A=0}} u {{V=0}}"


def _check_lines(cert: dict, comps: list, F: list, ctx, d: int, dd: int, a: int) -> str:
    arg = _field(cert, "argument", "")
    if not isinstance(arg, dict):
        _reject("argument must be an object")
    entry = _field(arg, "entry", "argument.")
    if not isinstance(entry, list) or len(entry) != 2:
        _reject("argument.entry must be [k, p]")
    k, p = _int(entry[0], "argument.entry[0]", 0, dd - 1), _int(entry[1], "argument.entry[1]", 0, d - 1)
    Fkp = F[k][p]
    if Fkp == 0:
        _reject(f"F_{k}{p} is zero, the argument needs a nonzero entry")
    factors = _field(arg, "factors", "argument.")
    if not isinstance(factors, list) or len(factors) not in (1, 2):
        _reject("argument.factors must list one or two linear forms")
    y = ctx.gens()
    polys = []
    for i, f in enumerate(factors):
        if not isinstance(f, list) or len(f) != d:
            _reject(f"argument.factors[{i}] must have {d} coefficients")
        polys.append(sum((_rational(c, "factor coefficient") * y[m] for m, c in enumerate(f)), ctx.from_dict({})))
    # F_kp must be a constant times the product of the factors (squared if only one)
    prod = polys[0] * (polys[1] if len(polys) == 2 else polys[0])
    if any(g == 0 for g in polys):
        _reject("a recorded factor is zero")
    quotient, rem = divmod(Fkp, prod)
    if rem != 0 or quotient.total_degree() != 0:
        _reject(f"the recorded factors do not multiply to F_{k}{p} up to a constant")
    if len(polys) == 2 and divmod(polys[0], polys[1])[1] == 0:
        _reject("the two recorded factors are proportional: they are one factor")
    valid = []
    for u in polys:
        m_p, rem = divmod(Fkp, u)
        V_rows = _divide_all([F[j][p] for j in range(dd)], m_p, d)
        A_cols = _divide_all([F[k][q] for q in range(d)], u, d)
        if V_rows is None or A_cols is None:
            continue
        V = fmpq_mat(V_rows)
        A = fmpq_mat(A_cols).transpose()
        if _forms(A, V, ctx) == F and A.rank() <= a:
            valid.append((A, V))
    lines = [c for c in comps if isinstance(c, dict) and "A" in c]
    if len(lines) != len(comps) or len(lines) != len(valid):
        _reject(f"the factor argument gives {len(valid)} line component(s), the certificate lists {len(comps)}")
    matched = set()
    for i, c in enumerate(lines):
        if _int(c.get("dimension"), "component dimension", 0) != 1:
            _reject(f"component {i} is a line (dimension 1)")
        A = _matrix(c["A"], d, d, f"components[{i}].A")
        V = _matrix(_field(c, "V", f"components[{i}]."), dd, d, f"components[{i}].V")
        if _forms(A, V, ctx) != F:
            _reject(f"component {i} does not map to the function of the point")
        hits = [j for j, (Aj, Vj) in enumerate(valid) if _proportional(A, Aj) and _proportional(V, Vj)]
        if not hits or hits[0] in matched:
            _reject(f"component {i} is not one of the candidate lines (or repeats one)")
        matched.add(hits[0])
    case = cert.get("case")
    rank1 = all(Aj.rank() == 1 and Vj.rank() == 1 for Aj, Vj in valid)
    want = "generic" if not rank1 else ("rank1-swap" if len(valid) == 2 else "rank1-parallel")
    if case != want:
        _reject(f"case is {case!r} but the components make it {want!r}")
    return f"fiber of a {want} point of widths {d},{dd}, rank {a}: {len(valid)} line(s)"
