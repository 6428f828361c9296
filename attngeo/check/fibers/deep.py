"""Independent re-verification of deep fiber certificates (kind ``deep-fiber``).

Shares nothing with the computing path (network, deepfiber, engine): the
gauge pattern, the network (nested lists of python-flint polynomials), the
Gröbner-basis criterion and the staircase are written again here. What it
proves, given the one trusted step ``<basis> c <equations>`` (docs/fibers.md):

1. the basis is a reduced Gröbner basis (every S-polynomial reduces to 0);
2. its staircase has ``D`` monomials and the certificate lists ``D`` distinct
   points of the slice on which the basis vanishes, so ``<basis>`` is the ideal
   of exactly those points;
3. the equations, rebuilt from the point and the inputs, vanish there, so
   ``<equations> c <basis>``; with the trusted step, the solutions of the
   equations in the slice are exactly the listed points;
4. every listed point has the same network function as the first (the
   polynomials in ``X`` agree), so ``fiber n slice`` is exactly that set;
5. with several heads: every head permutation of the point, re-gauged into
   the slice by the checker's own normalization, is listed, so a fiber that
   meets the slice in exactly those points is the orbit of the group and the
   head permutations; and ``outputs`` are ``phi_{W_0}(X_n)`` for this
   architecture (a single causal layer has the fibers of the unmasked one: the
   outputs tie the certificate to its function).

The trusted step is *replayed*: the equations are rebuilt here and handed to
the engine again, and its basis must equal the recorded one. Without that, a
forged linear basis ``x_i - W0_i`` would pass 1-4 for any architecture. No
engine, no verdict: the checker then refuses with a message saying how to
install msolve.
"""

from __future__ import annotations

from itertools import combinations, permutations, product

from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx, fmpq_poly

from ...exceptions import CertificateFormatError
from ..arch import architecture
from ..network import phi
from ..dimension.groups import exact_field_rank
from .rebuild import phi_price
from ..limits import MAX_REBUILD_WORK, MAX_REPLAY_SECONDS, MAX_VARIABLES, refuse_above
from ..msolve import replay, replay_bound, same_basis
from ..poly import parse_all, ring, staircase
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER
from ..values import boolean, field, integer, rational, reject, seq

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE,
    "components": [{"dimension": CHECKED, "dimension_is_lower_bound": CHECKED}],
    "certified": CHECKED, "solutions_in_slice": CHECKED, "fiber_points": CHECKED,
    "engine": CHECKED, "seconds": NUMBER, "point": CHECKED, "inputs": CHECKED, "variables": CHECKED,
    "basis": CHECKED, "extra_solutions": CHECKED, "factors": CHECKED, "parametrization": CHECKED, "line": CHECKED,
    "trusted": CHECKED, "outputs": CHECKED,  # outputs: beyond [HMK]'s model only
}
_ENGINES = ("msolve", "flint", "sympy")


def _names(arch) -> list[str]:
    """Ring names in flattening order; head ``j`` of a layer with several is written ``Q1h2_0_0``."""
    return [f"{name}{i}{f'h{j}' if arch.head_count(i) > 1 else ''}_{r}_{c}"
            for i, j, name, rows, cols, _ in arch.blocks() for r in range(rows) for c in range(cols)]


def _slice(arch) -> dict[int, int | None]:
    """Flat index -> fixed value: ``Q[:, :a] = I``, ``U[:, :b] = I``, ``K[0, 0]`` (None: any nonzero value)
    per head, and the first head's ``V[:, :d_i] = I`` (or ``O``) of every hidden layer without residual."""
    fixed = {}
    depth = len(arch.ranks)
    for i, j, name, rows, cols, off in arch.blocks():
        if name in ("Q", "U") or (name in ("V", "O") and j == 1 and i < depth and not arch.residual):
            if rows > cols:
                reject(f"no gauge for {name}{i}: {rows} rows > {cols} columns")
            fixed.update({off + r * cols + c: int(r == c) for r in range(rows) for c in range(rows)})
        elif name == "K":
            fixed[off] = None
    return fixed


def _read_arch(cert: dict):
    """The architecture; deep fibers are settled beyond [HMK]'s model too (heads, V = O U, residual, causal)."""
    arch = architecture(cert)
    if arch.normalization != "lightning":
        reject("deep-fiber certificates are for lightning networks")
    return arch


def _inv(M: list):
    m = fmpq_mat(M)
    return None if m.rank() < m.nrows() else [list(m.inv().table()[r]) for r in range(m.nrows())]


def _mul(A: list, B: list) -> list:
    return [[sum((A[r][k] * B[k][c] for k in range(len(B))), fmpq(0)) for c in range(len(B[0]))]
            for r in range(len(A))]


def _permuted(arch, W0: list) -> list[list]:
    """Every head permutation of ``W0`` brought back into its slice (the checker's own normalization).

    Per head ``Q -> M^{-1} Q``, ``K -> M^T K`` (``M = Q[:, :a]``), ``K -> c K`` and the
    value map ``/ c`` so that ``K[0, 0]`` is the slice value of its position,
    ``U -> N^{-1} U``, ``O -> O N`` (``N = U[:, :b]``); without residual the first
    head's value block ``E`` moves every value map by ``E^{-1}`` and the next
    layer's inputs by ``E``. Orbits that miss the slice (a singular block) are left out.
    """
    W = arch.weights(W0)
    heads = [[list(h.items()) for h in arch.head_weights(W, i)] for i in range(1, len(arch.ranks) + 1)]
    kappa = [[dict(h)["K"][0][0] for h in hs] for hs in heads]
    out = []
    for choice in product(*(permutations(range(len(hs))) for hs in heads)):
        flat, E, ok = [], None, True
        for li, (hs, perm) in enumerate(zip(heads, choice)):
            new = []
            for pos, k in enumerate(perm):
                w = dict(hs[k])
                value = "O" if "O" in w else "V"
                if E is not None:
                    for n in ("Q", "K", "U" if "U" in w else "V"):
                        w[n] = _mul(w[n], E)
                a = len(w["Q"])
                M = [row[:a] for row in w["Q"]]
                Minv = _inv(M)
                if Minv is None:
                    ok = False
                    break
                w["Q"], w["K"] = _mul(Minv, w["Q"]), _mul([list(c) for c in zip(*M)], w["K"])
                if w["K"][0][0] == 0:
                    ok = False
                    break
                c = kappa[li][pos] / w["K"][0][0]
                w["K"] = [[c * v for v in row] for row in w["K"]]
                w[value] = [[v / c for v in row] for row in w[value]]
                if "U" in w:
                    b = len(w["U"])
                    N = [row[:b] for row in w["U"]]
                    Ninv = _inv(N)
                    if Ninv is None:
                        ok = False
                        break
                    w["U"], w["O"] = _mul(Ninv, w["U"]), _mul(w["O"], N)
                new.append(w)
            if not ok:
                break
            if li + 1 < len(heads) and not arch.residual:
                value = "O" if "O" in new[0] else "V"
                d = len(new[0][value])
                E = [row[:d] for row in new[0][value]]
                Einv = _inv(E)
                if Einv is None:
                    ok = False
                    break
                for w in new:
                    w[value] = _mul(Einv, w[value])
            names = [n for n, _ in hs[0]]
            flat.extend(v for w in new for n in names for row in w[n] for v in row)
        if ok and flat not in out:
            out.append(flat)
    return out


def rebuild_price(arch, inputs: int, points: int = 1, checked: int = 0, solutions: int = 0) -> tuple[int, int]:
    """The work of every polynomial evaluation a deep-fiber certificate asks for, and its equations' terms, at most.

    ``inputs`` evaluations in the free weights of the slice (the equations), ``points + checked`` in ``X``
    (the listed points and the checked points of a line), and, with a parametrization of ``solutions``
    points, two in ``(z, X)`` (:mod:`attngeo.check.fibers.rebuild`). The prover prices its equations with it
    before building them, so that it never makes a certificate this checker refuses to rebuild.

    Examples
    --------
    >>> from attngeo.check.arch import Arch
    >>> rebuild_price(Arch((2, 2, 2), (2, 2), 2), inputs=6)      # 3,100 terms in fact
    (97488, 9600)
    >>> rebuild_price(Arch((8, 8, 8, 8), (3, 3, 3), 2), inputs=24)[0] > 10**30 > MAX_REBUILD_WORK
    True
    """
    fixed = _slice(arch)
    free = {(i, j, name): sum(k not in fixed for k in range(off, off + rows * cols))
            for i, j, name, rows, cols, off in arch.blocks()}
    x = arch.widths[0] * arch.tokens
    work, terms = phi_price(arch, free)
    work = inputs * work + (points + checked) * phi_price(arch, {}, x)[0]
    if solutions > 1:
        work += 2 * phi_price(arch, free, x, solutions, solutions - 1)[0]
    return work, inputs * arch.widths[-1] * arch.tokens * terms


def _price(cert: dict, arch) -> None:
    """Refuse, from the recorded counts and before any polynomial is built, a certificate whose evaluations cost
    more than :data:`MAX_REBUILD_WORK` (widths 8,8,8,8 would fill the machine's memory)."""
    def count(value, most: int = 10**6) -> int:
        return min(len(value), most) if isinstance(value, list) else 0

    unknowns = sum(k not in _slice(arch) for k in range(arch.parameters))
    if replay_bound(unknowns, 0, 0) > MAX_REPLAY_SECONDS:  # the variables alone price the replay beyond its limit
        raise CertificateFormatError(f"replaying the elimination of {unknowns} unknowns is priced at "
                                     f"{replay_bound(unknowns, 0, 0):.3g} CPU seconds of msolve at least, above the "
                                     f"checker's limit of {MAX_REPLAY_SECONDS} (docs/trust.md)")
    line = cert.get("line")
    solutions = cert.get("solutions_in_slice")
    work, _ = rebuild_price(arch, count(cert.get("inputs")), 1 + count(cert.get("extra_solutions")),
                            count(line.get("checked_at"), 1000) if isinstance(line, dict) else 0,
                            solutions if type(solutions) is int and cert.get("factors") is not None else 0)
    refuse_above(work, MAX_REBUILD_WORK, "rebuilding this deep fiber's equations")


def _lead(p):
    return p.monoms()[0], p.leading_coefficient()


def _reduce(f, basis: list, leads: list, ctx):
    rem = ctx.from_dict({})
    while f != 0:
        m, c = _lead(f)
        for g, (lm, lc) in zip(basis, leads):
            if all(a >= b for a, b in zip(m, lm)):
                f -= ctx.from_dict({tuple(a - b for a, b in zip(m, lm)): c / lc}) * g
                break
        else:
            term = ctx.from_dict({m: c})
            rem += term
            f -= term
    return rem


def _degree_in_weights(arch) -> int:
    deg = 0
    for _ in arch.ranks:  # V Y (Y^T K^T Q Y): 1 + 2 + 3 deg(Y), with deg(X) = 0; O U Y one more
        deg = 3 * deg + (3 if arch.value_ranks is None else 4)
    return deg


def _check_line(line, names: list, fixed: dict, W0: list, arch, same) -> bool:
    """A line ``W_0 + s v`` in the slice whose every point computes the same function."""
    if line is None:
        return False
    if not isinstance(line, dict):
        reject("line must be an object")
    v = field(line, "direction", "line.")
    if not isinstance(v, list) or len(v) != len(names):
        reject("line.direction must list every parameter")
    v = [rational(x, "line.direction entry") for x in v]
    if all(x == 0 for x in v) or any(x != 0 for k, x in enumerate(v) if k in fixed):
        reject("line.direction must be nonzero and move only free entries of the slice")
    D = _degree_in_weights(arch)
    at = field(line, "checked_at", "line.")
    if not isinstance(at, list) or len(at) > 1000 \
            or len({integer(s, "line.checked_at entry", -(1 << 62), 1 << 62) for s in at}) < D + 1:
        reject(f"the line must be checked at {D + 1} distinct values (phi has degree {D} in the weights)")
    for s in at:
        if not same([a + s * b for a, b in zip(W0, v)]):
            reject(f"W_0 + {s} v computes a different function")
    return True


def _upoly(value, name: str) -> fmpq_poly:
    if not isinstance(value, list) or not value:
        reject(f"{name} must be a nonempty list of coefficients")
    return fmpq_poly([rational(c, f"{name} coefficient") for c in value])


def _check_factors(cert: dict, basis: list, free: list, D: int, names: list, W0: list, arch) -> int | None:
    """Replay the parametrization and the factor-by-factor test; the exact number of fiber points."""
    claimed, param = cert.get("factors"), cert.get("parametrization")
    if claimed is None and param is None:
        return None
    if not isinstance(claimed, list) or not isinstance(param, dict):
        reject("factors and parametrization come together")
    form = field(param, "form", "parametrization.")
    if not isinstance(form, list) or len(form) != len(free):
        reject("parametrization.form must have one coefficient per variable")
    form = [rational(c, "parametrization.form entry") for c in form]
    g = _upoly(field(param, "g", "parametrization."), "parametrization.g")
    xs = field(param, "x", "parametrization.")
    if not isinstance(xs, list) or len(xs) != len(free):
        reject("parametrization.x must give one polynomial per variable")
    xs = [_upoly(p, "parametrization.x") for p in xs]
    if g.degree() != D or g.gcd(g.derivative()).degree() != 0:
        reject(f"g must be squarefree of degree D = {D}")
    # z = sum c_i p_i(z) on the roots: the D roots give D distinct points ...
    if sum((c * p for c, p in zip(form, xs)), fmpq_poly([0])) % g != fmpq_poly([0, 1]) % g:
        reject("the linear form does not evaluate to z on the parametrization")
    # ... all in V(basis), which has at most D points: they are all of them
    zc = fmpq_mpoly_ctx.get(("z",), "degrevlex")
    (z1,) = zc.gens()
    lift1 = lambda p: sum((c * z1**k for k, c in enumerate(p.coeffs())), zc.constant(0))  # noqa: E731
    subs = [lift1(p) for p in xs]
    if any(divmod(b.compose(*subs, ctx=zc), lift1(g))[1] != 0 for b in basis):
        reject("the parametrized points do not satisfy the basis")
    mine = {tuple(str(c) for c in (f / f.coeffs()[-1]).coeffs()): f for f, _ in g.factor()[1]}
    recorded = {}
    for item in claimed:
        if not isinstance(item, dict):
            reject("each factor must be an object")
        f = _upoly(item.get("factor"), "factor")
        recorded[tuple(str(c) for c in (f / f.coeffs()[-1]).coeffs())] = item
    if set(recorded) != set(mine):
        reject("the recorded factors are not the irreducible factors of g")
    d, t = arch.widths[0], arch.tokens
    zx = fmpq_mpoly_ctx.get(("z",) + tuple(f"x{r}_{c}" for r in range(d) for c in range(t)), "degrevlex")
    z = zx.gens()[0]
    lift = lambda p: sum((c * z**k for k, c in enumerate(p.coeffs())), zx.constant(0))  # noqa: E731
    value = dict(zip(free, (lift(p) for p in xs)))
    W = [value.get(n, zx.constant(v)) for n, v in zip(names, W0)]
    Xs = [list(zx.gens()[1 + r * t:1 + (r + 1) * t]) for r in range(d)]
    diff = [a - b for ra, rb in zip(phi(arch, W, Xs), phi(arch, [zx.constant(v) for v in W0], Xs))
            for a, b in zip(ra, rb)]
    g_z = lift(g)
    diff = [divmod(e, g_z)[1] for e in diff]
    total = 0
    for key, f in mine.items():
        f_z = lift(f)
        ok = all(divmod(e, f_z)[1] == 0 for e in diff)
        if recorded[key].get("fiber") is not ok or recorded[key].get("degree") != f.degree():
            reject(f"factor {list(key)}: the checker finds fiber = {ok}, degree {f.degree()}")
        total += f.degree() if ok else 0
    return total


def check(cert: dict) -> str:
    """The claim of a deep-fiber certificate: the fiber through a point, inside the gauge slice.

    Steps 1-4 of the module docstring, then the replay of the elimination with
    msolve. Called by the kernel after the schema check; use
    :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        Any step that does not verify, or a replay with another basis.
    CannotVerify
        msolve is not installed (exit 2): the one trusted step cannot be replayed.

    Examples
    --------
    Two layers of width 1: the gauge slice leaves one free weight, and the
    basis ``V2_0_0 + 5`` has one solution, the point itself. A count of
    solutions other than the staircase of the basis is refused before any replay:

    >>> from attngeo import Architecture, deep_fiber
    >>> from attngeo.check.fibers.deep import check
    >>> cert = deep_fiber(Architecture((1, 1, 1), (1, 1), tokens=2), seed=0, engine="flint").to_json()
    >>> cert["variables"], cert["basis"], cert["solutions_in_slice"]
    (['V2_0_0'], ['V2_0_0 + 5'], 1)
    >>> check({**cert, "solutions_in_slice": 2})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: solutions_in_slice must be 1, the number of standard monomials of the basis

    The honest certificate verifies once msolve has replayed the elimination
    (the rest is skipped where msolve is not installed):

    >>> import pytest
    >>> from attngeo.check.msolve import INSTALL, binary
    >>> if binary() is None:
    ...     pytest.skip(f"msolve is not installed; {INSTALL}")
    >>> check(cert)
    "fiber n gauge domain = the symmetry orbit for widths 1,1,1, ranks 1,1, t=2 (0 spurious solutions of the sample; trusting msolve's basis of the rebuilt equations (flint computed it; replayed with msolve))"
    """
    arch = _read_arch(cert)
    names = _names(arch)
    if len(names) > MAX_VARIABLES:
        raise CertificateFormatError(f"a deep fiber of {len(names)} parameters is beyond the checker's limit of "
                                     f"{MAX_VARIABLES}")
    _price(cert, arch)
    fixed = _slice(arch)
    point = seq(field(cert, "point"), "point", len(names))
    W0 = [rational(v, f"point[{k}]") for k, v in enumerate(point)]
    for k, (n, v) in enumerate(zip(names, W0)):
        if k in fixed and (v == 0 if fixed[k] is None else v != fixed[k]):
            reject(f"the point is not in the gauge slice at {n}")
    free = [n for k, n in enumerate(names) if k not in fixed]
    if field(cert, "variables") != free:
        reject("variables are not the free entries of the gauge slice in flattening order")
    engine = field(cert, "engine")
    if engine not in _ENGINES:
        reject(f"engine must be one of {list(_ENGINES)}")
    if field(cert, "trusted") != f"the inclusion <basis> c <equations>: computed by {engine}, replayed by the checker":
        reject("trusted must state the one inclusion taken from the engine, in the checker's words")
    ctx = ring(free)
    basis = parse_all(field(cert, "basis"), ctx, "basis")
    leads = [_lead(g) for g in basis]
    for g, h in combinations(range(len(basis)), 2):
        (mg, cg), (mh, ch) = leads[g], leads[h]
        if all(a == 0 or b == 0 for a, b in zip(mg, mh)):
            continue  # coprime leading monomials: the S-polynomial reduces to 0 (Buchberger's first criterion)
        lcm = tuple(max(a, b) for a, b in zip(mg, mh))
        s = (ctx.from_dict({tuple(a - b for a, b in zip(lcm, mg)): 1 / cg}) * basis[g]
             - ctx.from_dict({tuple(a - b for a, b in zip(lcm, mh)): 1 / ch}) * basis[h])
        if _reduce(s, basis, leads, ctx) != 0:
            reject(f"the basis is not a Gröbner basis (S-polynomial of elements {g}, {h} does not reduce to 0)")
    D = staircase([m for m, _ in leads], len(free), "the basis")
    claimed = field(cert, "solutions_in_slice")
    if claimed != D or isinstance(claimed, bool):
        reject(f"solutions_in_slice must be {D}, the number of standard monomials of the basis")
    extra = seq(field(cert, "extra_solutions"), "extra_solutions")
    points = [W0] + [[rational(v, "extra solution entry") for v in seq(s, "an extra solution", len(names))]
                     for s in extra]
    own = [[v for k, v in enumerate(p) if k not in fixed] for p in points]
    for p, q in zip(points, own):
        if any(v != W0[k] for k, v in enumerate(p) if k in fixed):
            reject("an extra solution leaves the gauge slice")
        if any(g(*q) != 0 for g in basis):
            reject("the basis does not vanish at a listed solution")
    if len({tuple(q) for q in own}) != len(own):
        reject("the listed solutions repeat")
    inputs = seq(field(cert, "inputs"), "inputs")
    d, t = arch.widths[0], arch.tokens
    if not inputs:
        reject("inputs must be a nonempty list")
    gens = dict(zip(free, ctx.gens()))
    W = [gens[n] if n in gens else ctx.constant(v) for n, v in zip(names, W0)]
    equations = []
    recorded = None if arch.plain else seq(field(cert, "outputs"), "outputs", len(inputs))
    if arch.plain and "outputs" in cert:
        reject("outputs are recorded only beyond [HMK]'s model (omit them: one spelling per certificate)")
    for n_in, X in enumerate(inputs):
        if not isinstance(X, list) or len(X) != d or any(not isinstance(r, list) or len(r) != t for r in X):
            reject(f"each input must be a {d}x{t} matrix")
        Xq = [[ctx.constant(fmpq(integer(v, "input entry", -(1 << 62), 1 << 62))) for v in r] for r in X]
        target = phi(arch, [ctx.constant(v) for v in W0], Xq)
        if recorded is not None and recorded[n_in] != [[str(e) for e in row] for row in target]:
            reject(f"outputs[{n_in}] is not phi_(W_0)(X_{n_in}) for {arch.describe()} (another architecture's function)")
        for row_w, row_0 in zip(phi(arch, W, Xq), target):
            for e, e0 in zip(row_w, row_0):
                if any((e - e0)(*q) != 0 for q in own):
                    reject("an equation does not vanish at a listed solution")
                if e != e0:
                    equations.append(e - e0)
    xc = ring(tuple(f"x{r}_{c}" for r in range(d) for c in range(t)))
    Xs = [xc.gens()[r * t:(r + 1) * t] for r in range(d)]
    ref = phi(arch, [xc.constant(v) for v in W0], Xs)

    def same(p):
        return phi(arch, [xc.constant(v) for v in p], Xs) == ref

    if not all(same(p) for p in points[1:]):
        reject("a listed extra solution computes a different function")
    perms = _permuted(arch, W0) if set(arch.heads) - {1} else [W0]
    if any(p not in points for p in perms):
        reject(f"extra_solutions must list every head permutation of the point re-gauged into the slice "
               f"({len(perms)} distinct; at least one is missing)")
    line = _check_line(field(cert, "line"), names, fixed, W0, arch, same)
    if line and D is not None:
        reject("a line of solutions is claimed but the basis has finitely many solutions")
    if field(cert, "factors") is not None and D is None:
        reject("factors are claimed for a basis with infinitely many solutions")
    exact = _check_factors(cert, basis, free, D, names, W0, arch) if D is not None else None
    if not equations or not same_basis(basis, replay(equations, tuple(free), 0)):
        reject("replaying the elimination with msolve gives a different basis than the recorded one")
    certified = boolean(field(cert, "certified"), "certified")
    if certified is not ((D is not None and (exact is not None or D == len(points))) or line):
        reject(f"certified does not follow from the basis ({D} solutions) and the evidence")
    count = exact if exact is not None else len(points)
    if field(cert, "fiber_points") != (count if D is not None else None):
        reject(f"fiber_points must be {count if D is not None else None}")
    _check_components(cert, arch, W0, D, count, line)
    w = arch.describe()
    trusted = f"trusting msolve's basis of the rebuilt equations ({engine} computed it; replayed with msolve)"
    k = len(perms)

    def what(n: int) -> str:
        if n == 1:
            return "the symmetry orbit"
        if n == k:
            return f"the orbit of the symmetry group and the {k} head permutations"
        return f"{n} orbits (hidden discrete symmetry{f'; {k} of them head permutations' if k > 1 else ''})"

    if exact is not None:
        return f"fiber n gauge domain = {what(exact)} for {w} ({D - exact} spurious solutions of the sample; {trusted})"
    if line:
        return f"hidden continuous symmetry for {w}: a line of the fiber lies in the gauge slice ({trusted})"
    if D is None:
        return (f"not settled for {w}: the sampled system has infinitely many solutions in the gauge slice "
                f"({len(points)} fiber points listed and verified)")
    if not certified:
        return f"bounds only for {w}: {len(points)} <= |fiber n slice| <= {D}"
    return f"fiber n gauge domain = {what(D)} for {w} ({trusted})"


def _check_components(cert: dict, arch, W0: list, D, count: int, line: bool) -> None:
    """One component per fiber point, each of the orbit's dimension (exact field rank over Q at the point)."""
    comps = seq(field(cert, "components"), "components")
    orbit = exact_field_rank(arch, W0)
    if D is None:
        want = [{"dimension": orbit + bool(line), "dimension_is_lower_bound": True}]
    else:
        want = [{"dimension": orbit}] * count
    got = [c if isinstance(c, dict) else None for c in comps]
    if got != want or any(isinstance(c.get("dimension"), bool) for c in comps if isinstance(c, dict)):
        reject(f"components must be {len(want)} symmetry orbit(s) of dimension {orbit} (exact field rank at the point)")
