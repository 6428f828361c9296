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

from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from ..arch import single_layer
from ..layer import forms, gram, split
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER
from ..values import boolean, field, integer, matrix, rational, reject, seq

_COMPONENT = {"coordinates": CHECKED, "dimension": CHECKED, "locus": CHECKED,
              "A": CHECKED, "V": CHECKED, "rank_A": CHECKED, "quadric": CHECKED, "R": CHECKED,
              "discriminant": CHECKED, "conjugate": CHECKED}
_QKV = {"coordinates": CHECKED, "dimension": CHECKED, "locus": CHECKED,
        "rank_Q": CHECKED, "rank_K": CHECKED, "over": CHECKED, "Q": CHECKED, "K": CHECKED, "V": CHECKED}
SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "point": CHECKED, "tensor": CHECKED, "denominator": CHECKED,
    "case": CHECKED, "certified": CHECKED, "in_neuromanifold": CHECKED, "rational_weights": CHECKED,
    "components": [_COMPONENT], "qkv_components": [_QKV], "seconds": NUMBER,
    "argument": {"zero": CHECKED, "entry": CHECKED, "factors": CHECKED,
                 "candidates": [{"factor": CHECKED, "valid": CHECKED}],
                 "irreducible_over_Q": CHECKED, "gram_rank": CHECKED, "minor": CHECKED, "discriminant": CHECKED,
                 "not_proportional": CHECKED, "R": CHECKED, "R_minor": CHECKED},
}


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


def product_strata(a: int, d: int, r: int) -> list[tuple[int, int, int]]:
    """Components ``(rank Q, rank K, dim)`` of ``{(Q, K) : K^T Q = B}``, ``rank B = r`` (docs/fibers.md, Lemma 3).

    The checker's own transcription of the lemma: maximal pairs ``(u, w)`` with
    ``r <= u, w <= min(a, d)`` and ``u + w <= a + r``.

    Examples
    --------
    With ``a = 1`` the fiber over a rank-1 ``B`` is the scaling line
    ``(cQ, K/c)``; over ``B = 0`` with ``a = d = 2`` it has three components:
    ``Q = 0`` or ``K = 0`` (dimension 4 each), and ``Q, K`` of rank 1 with
    orthogonal column spaces (``3 + 3 - 1 = 5``):

    >>> from attngeo.check.fibers.layer import product_strata
    >>> product_strata(1, 2, 1)
    [(1, 1, 1)]
    >>> product_strata(2, 2, 0)
    [(0, 2, 4), (1, 1, 5), (2, 0, 4)]
    """
    top = min(a, d)
    pairs = [(u, w) for u in range(r, top + 1) for w in range(r, top + 1) if u + w <= a + r]
    out = []
    for u, w in pairs:
        if any((x, y) != (u, w) and x >= u and y >= w for x, y in pairs):
            continue
        k, n = u - r, a - w
        total = u * (a - u) + u * d + w * d + k * (u - k) + (n - k) * (a - n)
        out.append((u, w, total - r * (2 * d - r)))
    return sorted(out)


def _keys(item: dict, allowed: set, where: str) -> None:
    extra = set(item) - allowed
    if extra:
        reject(f"{where} has fields {sorted(extra)[:3]} that this kind of component does not have")


def _check_qkv(cert: dict, expected: list[dict], where: str = "qkv_components") -> None:
    """The (Q, K, V) components: Lemma 3's list for each (A, V) component, with representatives that map to it."""
    got = seq(field(cert, "qkv_components"), where)
    if len(got) != len(expected):
        reject(f"{where} must list {len(expected)} components (Lemma 3), it lists {len(got)}")
    for k, (item, want) in enumerate(zip(got, expected)):
        if not isinstance(item, dict):
            reject(f"{where}[{k}] must be an object")
        rep = want.pop("_rep", None)
        _keys(item, set(want) | ({"Q", "K", "V"} if rep else set()), f"{where}[{k}]")
        for key, value in want.items():
            if item.get(key) != value or isinstance(item.get(key), bool):
                reject(f"{where}[{k}].{key} must be {value!r} (Lemma 3)")
        if rep:
            A, V, a = rep
            d, dd = A.nrows(), V.nrows()
            Q = matrix(field(item, "Q", f"{where}[{k}]."), a, d, f"{where}[{k}].Q")
            K = matrix(field(item, "K", f"{where}[{k}]."), a, d, f"{where}[{k}].K")
            if K.transpose() * Q != A or matrix(field(item, "V", f"{where}[{k}]."), dd, d, f"{where}[{k}].V") != V:
                reject(f"{where}[{k}]: the representative (Q, K, V) does not map to its (A, V) line")


def gram_tensor(cert: dict, d: int, dd: int) -> dict:
    """The nonzero Gram matrices ``S_kp`` of a function recorded as ``tensor[k][m][n][p] / denominator``.

    Returns
    -------
    dict
        ``{(k, p): S_kp}`` with ``F_kp(y) = y^T S_kp y``, zero entries left out.

    Raises
    ------
    CertificateRejected
        The wrong shape, a zero denominator, or an ``S_kp`` that is not symmetric.

    Examples
    --------
    The point ``V = K = (3, 5)``, ``Q = (1, 2)`` is ``F = (3 y0 + 5 y1)^2 (1, 2)``:

    >>> from attngeo import Architecture, is_boundary_point
    >>> from attngeo.check.fibers.layer import gram_tensor
    >>> cert = is_boundary_point(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[3, 5]]]]).to_json()
    >>> S = gram_tensor(cert, 2, 1)
    >>> S[(0, 0)].tolist(), S[(0, 1)] == 2 * S[(0, 0)]
    ([[9, 15], [15, 25]], True)
    >>> cert["tensor"][0][0][1][0] = "16"
    >>> gram_tensor(cert, 2, 1)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the Gram tensor must be symmetric in its middle indices
    """
    tensor, den = field(cert, "tensor"), rational(field(cert, "denominator"), "denominator")
    if den == 0 or not isinstance(tensor, list) or len(tensor) != dd \
            or any(not isinstance(t, list) or len(t) != d or any(not isinstance(u, list) or len(u) != d
                   or any(not isinstance(v, list) or len(v) != d for v in u) for u in t) for t in tensor):
        reject("tensor must be d' x d x d x d with a nonzero denominator")
    out = {}
    for k in range(dd):
        for p in range(d):
            S = matrix([[tensor[k][m][n][p] for n in range(d)] for m in range(d)], d, d, f"tensor[{k}][.][.][{p}]")
            S = S * (1 / den)
            if S != S.transpose():
                reject("the Gram tensor must be symmetric in its middle indices")
            if any(S[i, j] != 0 for i in range(d) for j in range(d)):
                out[(k, p)] = S
    return out


def _function(cert: dict, a: int, d: int, dd: int, ctx) -> tuple[list, bool]:
    """``F`` as polynomials, from the weights of a point or from a recorded Gram tensor; and whether it was a point."""
    if "point" in cert:
        if "tensor" in cert or "denominator" in cert or "in_neuromanifold" in cert or "rational_weights" in cert:
            reject("a fiber through a point records the point only (its weights put it in M with rational weights)")
        Q, K, V = split(seq(field(cert, "point"), "point", 2 * a * d + dd * d), a, d, dd, "point")
        return forms(K.transpose() * Q, V, ctx.gens()), True
    y = ctx.gens()
    S = gram_tensor(cert, d, dd)
    zero = ctx.from_dict({})
    F = [[sum((S[(k, p)][m, n] * y[m] * y[n] for m in range(d) for n in range(d)), zero) if (k, p) in S else zero
          for p in range(d)] for k in range(dd)]
    return F, False


def check(cert: dict) -> str:
    """The claim of a fiber certificate: its components are the whole fiber (docs/fibers.md, Theorem 1).

    Called by the kernel after the schema check; use
    :func:`attngeo.check_certificate` on a certificate.

    Returns
    -------
    str
        The claim: the fiber's components, or that no complex weights give the function.

    Raises
    ------
    CertificateRejected
        Any part of the argument that does not verify.

    Examples
    --------
    ``Q = (1, 2)``, ``K = (3, 5)``, ``V = (1, 1)``: ``F_00 = (y0 + y1)(3 y0 + 5 y1)``
    has two factors and each forces a line, so the fiber is two lines (a rank-1 swap):

    >>> from attngeo import Architecture, fiber
    >>> from attngeo.check.fibers.layer import check
    >>> cert = fiber(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[1, 1]]]]).to_json()
    >>> check(cert)
    'fiber of a rank1-swap point of widths 2,1, rank 1: 2 line(s)'
    >>> cert["components"] = cert["components"][:1]      # hide one line
    >>> check(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the factor argument gives 2 line component(s), the certificate lists 1
    """
    arch, d, dd, a = single_layer(cert)
    ctx = fmpq_mpoly_ctx.get(("y", d), "degrevlex")
    F, is_point = _function(cert, a, d, dd, ctx)
    comps = seq(field(cert, "components"), "components")
    if any(not isinstance(c, dict) for c in comps):
        reject("each component must be an object")
    if boolean(field(cert, "certified"), "certified") is not True:
        reject("a fiber certificate must claim certified = true")
    argument = field(cert, "argument")
    if not isinstance(argument, dict):
        reject("argument must be an object")
    if all(g == 0 for row in F for g in row):
        claim = _check_zero(cert, comps, argument, d, dd, a)
    elif "factors" in argument:
        claim = _check_lines(cert, comps, argument, F, ctx, d, dd, a)
    else:
        claim = _check_irreducible(cert, comps, argument, F, d, dd, a)
    if not is_point:
        case = cert["case"]
        if boolean(field(cert, "in_neuromanifold"), "in_neuromanifold") is not (case != "outside") \
                or boolean(field(cert, "rational_weights"), "rational_weights") is not (case not in ("outside",
                                                                                                   "conjugate-swap")):
            reject("in_neuromanifold and rational_weights must follow the case")
    return claim


def _check_irreducible(cert: dict, comps: list, arg: dict, F: list, d: int, dd: int, a: int) -> str:
    """An entry irreducible over Q: Gram rank, proportionality and the conjugate-factor lemma (docs/fibers.md)."""
    entry = seq(field(arg, "entry", "argument."), "argument.entry", 2)
    k, p = integer(entry[0], "argument.entry[0]", 0, dd - 1), integer(entry[1], "argument.entry[1]", 0, d - 1)
    Fkp = F[k][p]
    if Fkp == 0 or field(arg, "irreducible_over_Q", "argument.") is not True:
        reject("argument must name a nonzero entry irreducible over Q")
    _, factors = Fkp.factor()
    if len(factors) != 1 or factors[0][1] != 1 or factors[0][0].total_degree() != 2:
        reject(f"F_{k}{p} is not irreducible over Q")
    q = gram(Fkp, d)
    rank = q.rank()
    if integer(field(arg, "gram_rank", "argument."), "argument.gram_rank") != rank:
        reject(f"argument.gram_rank must be {rank}")
    _minor(arg, "minor", q, min(rank, 3))
    w = f"widths {d},{dd}, rank {a}"
    if rank >= 3:  # u w has Gram matrix (u w^T + w u^T) / 2, of rank <= 2, over every field
        return _outside(cert, comps, arg, w, f"F_{k}{p} has Gram rank {rank} >= 3: no product of two linear forms")
    i, j = seq(arg["minor"].get("rows"), "argument.minor.rows", 2)
    delta = -(q[i, i] * q[j, j] - q[i, j] ** 2)
    if i == j or rational(field(arg, "discriminant", "argument."), "argument.discriminant") != delta:
        reject(f"argument.discriminant must be minus the principal minor at {[i, j]}")
    # every F_jq must be R_jq F_kp (conjugate-factor lemma)
    R = fmpq_mat(dd, d)
    m, n = next((m, n) for m in range(d) for n in range(d) if q[m, n] != 0)
    for jj in range(dd):
        for qq in range(d):
            G = gram(F[jj][qq], d)
            R[jj, qq] = G[m, n] / q[m, n]
            if G != q * R[jj, qq]:
                _not_proportional(arg, q, G, jj, qq, d)
                return _outside(cert, comps, arg, w, f"F_{jj}{qq} is not a rational multiple of F_{k}{p}, "
                                f"irreducible over Q (conjugate-factor lemma)")
    if "not_proportional" in arg or matrix(field(arg, "R", "argument."), dd, d, "argument.R") != R:
        reject("argument.R must be the matrix of ratios F_jq / F_kp")
    if R.rank() >= 2:
        _minor(arg, "R_minor", R, 2)
        return _outside(cert, comps, arg, w, f"F = F_{k}{p} R with rank R = {R.rank()} >= 2 (conjugate-factor lemma)")
    if "R_minor" in arg or field(cert, "case") != "conjugate-swap":
        reject("F = q(y) R with q irreducible of rank 2 and rank R = 1 is the case 'conjugate-swap'")
    if len(comps) != 2:
        reject("a conjugate-swap fiber has two lines over Q(sqrt(delta))")
    for c_i, c in enumerate(comps, start=1):
        _keys(c, {"coordinates", "dimension", "quadric", "R", "discriminant", "rank_A", "conjugate"},
              f"components[{c_i - 1}]")
        if (c.get("coordinates"), c.get("dimension"), c.get("rank_A"), c.get("conjugate")) != ("AV", 1, 1, c_i) \
                or matrix(c.get("quadric"), d, d, "quadric") != q or matrix(c.get("R"), dd, d, "R") != R \
                or rational(c.get("discriminant"), "discriminant") != delta:
            reject(f"components[{c_i - 1}] must be conjugate line {c_i} of F = q(y) R")
    _check_qkv(cert, [{"coordinates": "QKV", "dimension": dim + 1, "rank_Q": u, "rank_K": w_, "over": i_}
                      for i_ in (1, 2) for u, w_, dim in product_strata(a, d, 1)])
    return (f"in M, no rational weights ({w}): F = q(y) R, q irreducible over Q of rank 2, rank R = 1; "
            f"the fiber is two lines over Q(sqrt({delta}))")


def _not_proportional(arg: dict, q: fmpq_mat, G: fmpq_mat, jj: int, qq: int, d: int) -> None:
    """``argument.not_proportional``: the entry, and two positions where ``G`` and ``q`` are not proportional."""
    np_ = field(arg, "not_proportional", "argument.")
    if not isinstance(np_, dict) or set(np_) != {"entry", "positions"} or np_["entry"] != [jj, qq]:
        reject(f"argument.not_proportional must name entry {[jj, qq]}, the first not proportional, and two positions")
    (m, n), (m2, n2) = [[integer(x, "a position", 0, d - 1) for x in seq(pos, "a position", 2)]
                        for pos in seq(np_["positions"], "argument.not_proportional.positions", 2)]
    if q[m, n] * G[m2, n2] - q[m2, n2] * G[m, n] == 0:
        reject("argument.not_proportional.positions must show the two quadrics are not proportional")


def _minor(arg: dict, key: str, M: fmpq_mat, size: int) -> None:
    """``arg[key]``: rows, columns and the value of a nonzero ``size x size`` minor of ``M``."""
    mi = field(arg, key, "argument.")
    if not isinstance(mi, dict) or set(mi) != {"rows", "cols", "value"}:
        reject(f"argument.{key} must give rows, cols and value")
    rows = [integer(r, f"argument.{key}.rows", 0, M.nrows() - 1) for r in seq(mi["rows"], "rows", size)]
    cols = [integer(c, f"argument.{key}.cols", 0, M.ncols() - 1) for c in seq(mi["cols"], "cols", size)]
    value = fmpq_mat([[M[r, c] for c in cols] for r in rows]).det()
    if value == 0 or rational(mi["value"], f"argument.{key}.value") != value:
        reject(f"argument.{key} must be a nonzero minor with its value")


def _outside(cert: dict, comps: list, arg: dict, w: str, why: str) -> str:
    if field(cert, "case") != "outside" or comps or field(cert, "qkv_components") != []:
        reject("this argument puts the function outside M: case 'outside' with no components")
    return f"not in M ({w}): no complex weights give this function ({why})"


def _check_zero(cert: dict, comps: list, argument: dict, d: int, dd: int, a: int) -> str:
    if field(cert, "case") != "zero":
        reject("the point gives the zero function but the case is not 'zero'")
    if argument != {"zero": True}:
        reject("the argument of a zero fiber is {\"zero\": true}")
    r = min(a, d)
    want = [("A=0", dd * d), ("V=0", r * (2 * d - r))]
    if len(comps) != 2:
        reject(f"the zero fiber is {{A = 0}} u {{V = 0, rank A <= {a}}}: two components, the certificate lists {len(comps)}")
    for k, (c, (locus, dim)) in enumerate(zip(comps, want)):
        _keys(c, {"coordinates", "dimension", "locus"}, f"components[{k}]")
        if c.get("coordinates") != "AV" or c.get("locus") != locus \
                or integer(c.get("dimension"), f"components[{k}].dimension", 0) != dim:
            reject(f"components[{k}] must be the (A, V) component {locus} of dimension {dim}")
    expected = [{"coordinates": "QKV", "dimension": dim + dd * d, "rank_Q": u, "rank_K": w, "locus": "A=0"}
                for u, w, dim in product_strata(a, d, 0)]
    expected.append({"coordinates": "QKV", "dimension": 2 * a * d, "locus": "V=0"})
    _check_qkv(cert, expected)
    return f"fiber of the zero function of widths {d},{dd}, rank {a}: {{A=0}} (dim {want[0][1]}) u {{V=0}} (dim {want[1][1]})"


def _check_lines(cert: dict, comps: list, arg: dict, F: list, ctx, d: int, dd: int, a: int) -> str:
    if set(arg) != {"entry", "factors", "candidates"}:
        reject("the factor argument holds entry, factors and candidates")
    entry = seq(field(arg, "entry", "argument."), "argument.entry", 2)
    k, p = integer(entry[0], "argument.entry[0]", 0, dd - 1), integer(entry[1], "argument.entry[1]", 0, d - 1)
    Fkp = F[k][p]
    if Fkp == 0:
        reject(f"F_{k}{p} is zero, the argument needs a nonzero entry")
    factors = seq(field(arg, "factors", "argument."), "argument.factors")
    if len(factors) not in (1, 2):
        reject("argument.factors must list one or two linear forms")
    y = ctx.gens()
    polys = []
    for i, f in enumerate(factors):
        seq(f, f"argument.factors[{i}]", d)
        polys.append(sum((rational(c, "factor coefficient") * y[m] for m, c in enumerate(f)), ctx.from_dict({})))
    if any(g == 0 for g in polys):
        reject("a recorded factor is zero")
    # F_kp must be a constant times the product of the factors (squared if only one)
    prod = polys[0] * (polys[1] if len(polys) == 2 else polys[0])
    quotient, rem = divmod(Fkp, prod)
    if rem != 0 or quotient.total_degree() != 0:
        reject(f"the recorded factors do not multiply to F_{k}{p} up to a constant")
    if len(polys) == 2 and divmod(polys[0], polys[1])[1] == 0:
        reject("the two recorded factors are proportional: they are one factor")
    valid, works = [], []
    for u in polys:
        m_p, rem = divmod(Fkp, u)
        V_rows = _divide_all([F[j][p] for j in range(dd)], m_p, d)
        A_cols = _divide_all([F[k][q] for q in range(d)], u, d)
        ok = False
        if V_rows is not None and A_cols is not None:
            V = fmpq_mat(V_rows)
            A = fmpq_mat(A_cols).transpose()
            ok = forms(A, V, ctx.gens()) == F and A.rank() <= a
            if ok:
                valid.append((A, V))
        works.append(ok)
    cands = seq(field(arg, "candidates", "argument."), "argument.candidates", len(polys))
    for i, (c, ok) in enumerate(zip(cands, works)):
        if not isinstance(c, dict) or set(c) != {"factor", "valid"} or c.get("factor") != factors[i] \
                or c.get("valid") is not ok:
            reject(f"argument.candidates[{i}] must be factor {i} with valid = {str(ok).lower()}")
    if len(comps) != len(valid):
        reject(f"the factor argument gives {len(valid)} line component(s), the certificate lists {len(comps)}")
    matched, expected_qkv = set(), []
    for i, c in enumerate(comps):
        _keys(c, {"coordinates", "dimension", "A", "V", "rank_A"}, f"components[{i}]")
        if c.get("coordinates") != "AV" or integer(c.get("dimension"), "component dimension", 0) != 1:
            reject(f"components[{i}] is a line in (A, V) coordinates (dimension 1)")
        A = matrix(field(c, "A", f"components[{i}]."), d, d, f"components[{i}].A")
        V = matrix(field(c, "V", f"components[{i}]."), dd, d, f"components[{i}].V")
        if forms(A, V, ctx.gens()) != F:
            reject(f"component {i} does not map to the function of the point")
        hits = [j for j, (Aj, Vj) in enumerate(valid) if _proportional(A, Aj) and _proportional(V, Vj)]
        if not hits or hits[0] in matched:
            reject(f"component {i} is not one of the candidate lines (or repeats one)")
        matched.add(hits[0])
        r = A.rank()
        if integer(field(c, "rank_A", f"components[{i}]."), f"components[{i}].rank_A", 0) != r:
            reject(f"components[{i}].rank_A must be {r}")
        expected_qkv += [{"coordinates": "QKV", "dimension": dim + 1, "rank_Q": u, "rank_K": w, "over": i + 1,
                          "_rep": (A, V, a)} for u, w, dim in product_strata(a, d, r)]
    _check_qkv(cert, expected_qkv)
    case = field(cert, "case")
    if not valid:
        want = "outside"
    else:
        rank1 = all(Aj.rank() == 1 and Vj.rank() == 1 for Aj, Vj in valid)
        want = "generic" if not rank1 else ("rank1-swap" if len(valid) == 2 else "rank1-parallel")
    if case != want:
        reject(f"the components make the case {want!r}")
    if not valid:
        return (f"not in M (widths {d},{dd}, rank {a}): no complex weights give this function "
                f"(every candidate forced by the linear factors of F_{k}{p} fails)")
    return f"fiber of a {want} point of widths {d},{dd}, rank {a}: {len(valid)} line(s)"
