"""Independent re-verification of virtual-weight fiber certificates (kind ``virtual-fiber``).

Shares nothing with the prover (geometry/fibers/virtual.py): the virtual
weights are recomputed from the point, the network is the checker's own
(the part linear in the second token layer by layer, ``_linear_part``, and
Jacobians by the product rule, each compared in the tests with ``check/network.phi``
run on dual numbers), and the last
layer is the embedded single-layer fiber certificate, verified by the kernel
(``check/fibers/layer.py``: polynomial division) before this module runs.
What it proves is docs/math.md §7.2 (Lemmas P and A), whose hypotheses it
checks at the point:

1. the architecture: [HMK]'s lightning model, ``l >= 2``, ``t >= 2``, every
   hidden width equal to ``d_0``; ``V_1 .. V_{l-1}`` invertible and
   ``rank A_i = a_i`` (exact determinants and ranks);
2. the recorded virtual weights ``M_i = P_{i-1}^T A_i P_{i-1}``, ``P = V_l .. V_1``
   are the point's (recomputed, compared first: cheap);
3. per layer ``i < l``: a nonzero 2x2 minor of ``M_i`` (two independent
   columns: the coprime linear forms the factorization argument divides by), a
   nonzero entry of ``M_i + M_i^T`` (the quadric ``q_i`` is not zero), and an
   input where ``S_{M_i}`` has a nonzero Jacobian determinant (dominance);
4. the factorization, multiplied back: the part of output token 2 linear in
   the second token ``y`` is ``rho_i(z) (z^T M_i y) P z`` with
   ``rho_i = prod_j q_j(z)^{e_j}`` as recorded (and as the lemma says), for the
   network itself (``i = 1``) and for each peeled virtual network (``i >= 2``);
5. the embedded single-layer fiber is that of ``(A, V) = (M_l, P)``; each of its
   lines has ``rank A_c = a_l`` and ``rank [A_c; A_c^T; V_c] = d_0`` (Lemma A);
6. one listed orbit point per line, on that line (virtual weights), with
   ``W_0``'s first layers; each orbit's dimension is the exact rank of the
   symmetry fields there.

The fiber is then the union of the listed orbits. ``generic`` is accepted
only when the fiber is one orbit and ``rank M_l >= 2`` or ``rank P >= 2``: every
hypothesis is then a witnessed nonvanishing polynomial in the weights, so the
conclusion holds on a dense Zariski-open set.
"""

from __future__ import annotations

import json
from math import comb, isqrt

from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from ...exceptions import CertificateFormatError
from ..arch import Arch, architecture
from ..dimension.groups import exact_field_rank
from ..limits import MAX_LAYER_WIDTH, MAX_MULTIPLY_BACK_WORK, MAX_PEELED_DIGITS, MAX_PEELED_MONOMIALS
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER, Embedded
from ..values import boolean, field, index_list, integer, matrix, rational, reject, seq

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "point": CHECKED,
    "virtual": {"M": CHECKED, "P": CHECKED},
    "layers": [{"minor": CHECKED, "symmetric": CHECKED, "rho": CHECKED, "dominance": CHECKED}],
    "last": {"symmetric": CHECKED, "fiber_certificate": Embedded("fiber", ())},  # bound to M_l and P below
    "orbits": [{"point": CHECKED, "dimension": CHECKED}],
    "certified": CHECKED, "generic": CHECKED, "seconds": NUMBER,
}
#: Largest entry of a dominance input (they are small by construction).
_INPUT_BOUND = 1 << 20


def _eye(d: int) -> fmpq_mat:
    return fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)])


def _flat(*mats: fmpq_mat) -> list:
    return [v for M in mats for v in M.entries()]


def _virtual_net(Ms: list, P: fmpq_mat) -> tuple[Arch, list]:
    """``P S_{M_l} .. S_{M_i}`` as a network of the checker's own kind: ``Q = M_j``, ``K = I``, ``V = I`` (``P`` last)."""
    d = P.ncols()
    n = len(Ms)
    arch = Arch((d,) * n + (P.nrows(),), (d,) * n, 2)
    values = []
    for j, M in enumerate(Ms):
        values += _flat(M, _eye(d), P if j == n - 1 else _eye(d))
    return arch, values


def _linear_part(arch: Arch, values: list, ctx, d: int) -> tuple[list, object]:
    """Output token 2's part of degree 1 in the second token, as ``(v, t)``: it is ``v t``, row by row.

    The inputs are ``x_1 = z`` and ``x_2 = eps y``. A lightning layer maps token ``j`` to
    ``sum_s V x_s (x_s^T K^T Q x_j)``, so with ``(x_1, x_2) = (u, eps w)`` it gives ``V u (u^T A u)`` and
    ``eps V u (u^T A w) + O(eps^3)`` (``A = K^T Q``): the first token is ``z``'s own orbit and the second stays
    linear in ``y``. Layer by layer that is two vectors of polynomials, not a 2-token network on dual numbers
    (tests/test_virtualfiber.py compares the two); the last layer's product ``(V u) (u^T A w)`` is left to the
    caller, which needs only one row of it expanded.
    """
    gens = ctx.gens()
    u, w = list(gens[:d]), list(gens[d:2 * d])
    zero = ctx.constant(0)

    def times(M, x):
        return [sum((M[r, c] * x[c] for c in range(M.ncols()) if M[r, c] != 0), zero) for r in range(M.nrows())]

    layers = _split(arch, values)
    for i, (Q, K, V) in enumerate(layers):
        A = K.transpose() * Q
        t = sum((x * y for x, y in zip(u, times(A, w))), zero)
        Vu = times(V, u)
        if i == len(layers) - 1:
            return Vu, t
        s = sum((x * y for x, y in zip(u, times(A, u))), zero)
        u, w = [x * s for x in Vu], [x * t for x in Vu]
    raise AssertionError("a network has at least one layer")


def _is_product(v: list, t, b, ell: list) -> bool:
    """Whether ``v_k t = b ell_k`` for every ``k``: as ``v = sigma ell`` and ``sigma t = b`` when ``ell != 0``.

    Sufficient (``v_k t = sigma ell_k t = b ell_k``), and what an honest network gives: its first token is
    ``P z`` times a scalar. Anything else is compared row by row, expanded.
    """
    k0 = next((k for k, e in enumerate(ell) if e != 0), None)
    if k0 is not None:
        sigma, rest = divmod(v[k0], ell[k0])
        if rest == 0 and all(sigma * e == x for x, e in zip(v, ell)):
            return sigma * t == b
    return all(x * t == b * e for x, e in zip(v, ell))


def _dominant(M: fmpq_mat, Y: list) -> bool:
    """``det J(S_M)(Y) != 0`` for ``S_M(Y) = Y (Y^T M Y)``: the column along ``E`` is ``E S + Y (E^T M Y + Y^T M E)``."""
    d = M.nrows()
    Yq = fmpq_mat(d, 2, [fmpq(v) for row in Y for v in row])
    S = Yq.transpose() * M * Yq
    cols = []
    for r0 in range(d):
        for j0 in range(2):
            E = fmpq_mat(d, 2, [int(r == r0 and j == j0) for r in range(d) for j in range(2)])
            cols.append((E * S + Yq * (E.transpose() * M * Yq + Yq.transpose() * M * E)).entries())
    return fmpq_mat(cols).det() != 0


def _exponents(depth: int, layer: int) -> list:
    """The lemma's ``rho_i``: ``q_i^{3^{l-i} - 1} prod_{j > i} q_j^{3^{l-j}}``."""
    return [[j, 3 ** (depth - j) - (j == layer)] for j in range(layer, depth + 1)]


def _split(arch: Arch, W: list) -> list[tuple[fmpq_mat, fmpq_mat, fmpq_mat]]:
    M = arch.weights(W, fmpq_mat)
    return [(M[(i, 1, "Q")], M[(i, 1, "K")], M[(i, 1, "V")]) for i in range(1, len(arch.ranks) + 1)]


def _point(value, n: int, name: str) -> list:
    return [rational(v, f"{name}[{k}]") for k, v in enumerate(seq(value, name, n))]


def _entry(value, d: int, M: fmpq_mat, name: str) -> None:
    r, c = seq(value, name, 2)
    integer(r, name, 0, d - 1)
    integer(c, name, 0, d - 1)
    if M[r, c] + M[c, r] == 0:
        reject(f"{name}: M_rc + M_cr = 0, not a witness that the quadric z^T M z is nonzero")


def check(cert: dict) -> str:
    """The claim of a virtual-fiber certificate: the whole fiber through the point, as a union of orbits.

    Steps 1-6 of the module docstring. Called by the kernel after the schema
    check and the embedded single-layer certificate; use
    :func:`attngeo.check_certificate` on a certificate.

    Raises
    ------
    CertificateRejected
        Any step that does not verify.
    CertificateFormatError
        Sizes whose multiplication back exceeds the checker's limit.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import virtual_fiber
    >>> from attngeo.check.fibers.virtual import check
    >>> cert = virtual_fiber(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0).to_json()
    >>> check(cert)     # doctest: +ELLIPSIS
    'fiber = 1 orbit(s) of the symmetry group for widths 2,2,2, ranks 2,2 and every t >= 2 (every weight with the same function as the certified point W_0, over C); generic: ...'

    A rank-1 witness for ``M_1`` (its rows and columns repeated) is refused:

    >>> check({**cert, "layers": [{**cert["layers"][0], "minor": [[0, 0], [0, 1]]}]})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: layers[0].minor rows repeats an index
    """
    arch = architecture(cert)
    if not arch.plain or arch.normalization != "lightning":
        reject("virtual-fiber certificates are for [HMK]'s lightning model")
    l, d, dl = len(arch.ranks), arch.widths[0], arch.widths[-1]
    if l < 2 or arch.tokens < 2 or any(w != d for w in arch.widths[:-1]):
        reject("virtual-fiber certificates need l >= 2 layers, t >= 2 and every hidden width equal to d_0")
    if d > MAX_LAYER_WIDTH or dl > MAX_LAYER_WIDTH or comb(3**l - 1 + d - 1, d - 1) > MAX_PEELED_MONOMIALS:
        raise CertificateFormatError(f"multiplying back {arch.describe()} expands polynomials of degree 3^{l} - 1 in "
                                     f"{d} variables, beyond the checker's limit of {MAX_PEELED_MONOMIALS} monomials")
    W0 = _point(field(cert, "point"), arch.parameters, "point")
    digits = max(max(len(str(v.p)), len(str(v.q))) for v in W0)
    if digits * 3**l > MAX_PEELED_DIGITS:
        raise CertificateFormatError(f"point entries of {digits} digits would make the coefficients multiplied back "
                                     f"about {digits * 3**l} digits long, beyond the checker's limit of {MAX_PEELED_DIGITS}")
    layers = _split(arch, W0)
    # the virtual weights, recomputed and compared before anything costly
    P = _eye(d)
    Ms, As, Vs = [], [], []
    for Q, K, V in layers:
        As.append(K.transpose() * Q)
        Ms.append(P.transpose() * As[-1] * P)
        Vs.append(V)
        P = V * P
    virtual = field(cert, "virtual")
    recorded = seq(field(virtual, "M", "virtual."), "virtual.M", l)
    if any(matrix(m, d, d, f"virtual.M[{i}]") != M for i, (m, M) in enumerate(zip(recorded, Ms))) \
            or matrix(field(virtual, "P", "virtual."), dl, d, "virtual.P") != P:
        reject("virtual.M / virtual.P are not the point's virtual weights M_i = P_(i-1)^T A_i P_(i-1), P = V_l .. V_1")
    work = multiply_back_work(Ms, P)
    if work > MAX_MULTIPLY_BACK_WORK:
        raise CertificateFormatError(f"multiplying back {arch.describe()} at this point costs about {work:.2e} units "
                                     f"(monomials^2 x coefficient digits^1.5), beyond the checker's limit of "
                                     f"{MAX_MULTIPLY_BACK_WORK:.0e}: choose a shallower network or smaller weights")
    for i in range(1, l):
        if Vs[i - 1].det() == 0:
            reject(f"V_{i} is singular at the point: Lemma A needs V_1 .. V_(l-1) invertible")
    for i, (A, a) in enumerate(zip(As, arch.ranks), start=1):
        if A.rank() != a:
            reject(f"rank A_{i} = {A.rank()} != a_{i} = {a}: Lemma A needs the full rank (else (Q, K) has a larger fiber)")
    steps = seq(field(cert, "layers"), "layers", l - 1)
    for i, (step, M) in enumerate(zip(steps, Ms), start=1):
        where = f"layers[{i - 1}]"
        rows, cols = seq(field(step, "minor", where + "."), where + ".minor", 2)
        rows = index_list(rows, 2, d, where + ".minor rows")
        cols = index_list(cols, 2, d, where + ".minor columns")
        if M[rows[0], cols[0]] * M[rows[1], cols[1]] == M[rows[0], cols[1]] * M[rows[1], cols[0]]:
            reject(f"{where}.minor is zero: no witness that columns {cols} of M_{i} are independent (rank >= 2)")
        _entry(field(step, "symmetric", where + "."), d, M, where + ".symmetric")
        if json.dumps(field(step, "rho", where + ".")) != json.dumps(_exponents(l, i)):  # as text: true is not 1
            reject(f"{where}.rho must be the lemma's exponents {_exponents(l, i)}")
        Y = [[integer(v, where + ".dominance entry", -_INPUT_BOUND, _INPUT_BOUND) for v in seq(r, where + ".dominance", 2)]
             for r in seq(field(step, "dominance", where + "."), where + ".dominance", d)]
        if not _dominant(M, Y):
            reject(f"{where}.dominance: the Jacobian of S_(M_{i}) is singular at the recorded input (no dominance witness)")
    last = field(cert, "last")
    _entry(field(last, "symmetric", "last."), d, Ms[-1], "last.symmetric")
    lines = _bind_last(field(last, "fiber_certificate", "last."), Ms[-1], P, d, dl)
    _multiply_back(arch, W0, Ms, P, steps)
    orbits = seq(field(cert, "orbits"), "orbits", len(lines))
    n_last = 2 * arch.ranks[-1] * d + dl * d
    P_prev = _eye(d)
    for V in Vs[:-1]:
        P_prev = V * P_prev
    seen = []
    for c, (orbit, (A_c, V_c)) in enumerate(zip(orbits, lines)):
        W = _point(field(orbit, "point", f"orbits[{c}]."), arch.parameters, f"orbits[{c}].point")
        if W[:-n_last] != W0[:-n_last]:
            reject(f"orbits[{c}].point must keep W_0's first {l - 1} layer(s)")
        Q, K, V = _split(arch, W)[-1]
        A = K.transpose() * Q
        if A.rank() != arch.ranks[-1] or A_c.rank() != arch.ranks[-1]:
            reject(f"orbit {c}: rank A_{l} must be a_{l} = {arch.ranks[-1]} on the line and at the point (Lemma A)")
        if fmpq_mat(A_c.tolist() + A_c.transpose().tolist() + V_c.tolist()).rank() != d:
            reject(f"orbit {c}: rank [A_c; A_c^T; V_c] < d_0, so Lemma A does not force V_1 .. V_(l-1) invertible")
        M_c, P_c = P_prev.transpose() * A * P_prev, V * P_prev
        r, s = next((r, s) for r in range(d) for s in range(d) if A_c[r, s] != 0)
        lam = M_c[r, s] / A_c[r, s]
        if lam == 0 or M_c != A_c * lam or P_c * lam != V_c:
            reject(f"orbits[{c}].point is not on line {c} of the last layer's fiber (its virtual weights)")
        dim = integer(field(orbit, "dimension", f"orbits[{c}]."), f"orbits[{c}].dimension", 0)
        if dim != exact_field_rank(arch, W):
            reject(f"orbits[{c}].dimension is not the exact rank of the symmetry fields at its point")
        seen.append(W)
    if W0 not in seen:
        reject("the orbits must include W_0's own")
    if boolean(field(cert, "certified"), "certified") is not True:
        reject("certified must be true: the certificate proves the fiber or is refused")
    generic = len(lines) == 1 and (Ms[-1].rank() >= 2 or P.rank() >= 2)
    if boolean(field(cert, "generic"), "generic") is not generic:
        reject(f"generic must be {str(generic).lower()} (one orbit and rank M_l >= 2 or rank P >= 2: open conditions)")
    # a special point (e.g. rank-1 parallel, where the generic fiber has two orbits) must not read as generic
    tail = ("; generic: the same holds on the dense Zariski-open set of weights where the witnessed determinants, "
            "minors and entries are nonzero" if generic else "; at W_0 only: not claimed for generic weights")
    # the lemma holds for every t >= 2, so the claim does not name the certificate's t (one claim per function)
    sizes = f"widths {','.join(map(str, arch.widths))}, ranks {','.join(map(str, arch.ranks))}"
    return (f"fiber = {len(lines)} orbit(s) of the symmetry group for {sizes} and every t >= 2 (every weight with "
            f"the same function as the certified point W_0, over C){tail}")


def multiply_back_work(Ms: list, P: fmpq_mat) -> int:
    """The price of step 4 at virtual weights ``Ms``, ``P`` (``MAX_MULTIPLY_BACK_WORK`` in check/limits.py).

    The polynomials multiplied back have ``N`` monomials (degree ``3^l - 1`` in ``d_0`` variables) and
    coefficients of about ``c = sum_j 3^(l-j) digits(M_j) + digits(P)`` digits (``rho`` is a product of powers
    of the ``q_j``); their products cost about ``N^2 c^(3/2)``. Neither a monomial count nor the point's digits
    alone see it: 100-digit weights at depth 4 cost minutes with few monomials.

    Examples
    --------
    >>> M = fmpq_mat([[1, 2], [3, 4]])
    >>> multiply_back_work([M, M], M)    # N = 9 monomials, c = 3 + 1 + 1 = 5 digits: 81 * isqrt(125)
    891
    """
    def digits(A: fmpq_mat) -> int:
        return max(max(len(str(abs(v.p))), len(str(v.q))) for v in A.entries())

    l, d = len(Ms), P.ncols()
    n = comb(3**l - 1 + d - 1, d - 1)
    c = sum(3 ** (l - j) * digits(M) for j, M in enumerate(Ms, start=1)) + digits(P)
    return n * n * isqrt(c**3)


def _bind_last(embedded: dict, M_l: fmpq_mat, P: fmpq_mat, d: int, dl: int) -> list:
    """The embedded (already verified) single-layer fiber must be that of ``(A, V) = (M_l, P)``; its lines."""
    arch = architecture(embedded)
    if (arch.widths, arch.ranks, arch.tokens) != ((d, dl), (d,), 2):
        reject(f"last.fiber_certificate must be for widths {d},{dl}, rank {d}, t=2 (the last virtual layer)")
    point = _point(field(embedded, "point", "last.fiber_certificate."), 2 * d * d + dl * d,
                   "last.fiber_certificate.point")
    Q, K = fmpq_mat(d, d, point[:d * d]), fmpq_mat(d, d, point[d * d:2 * d * d])
    if K.transpose() * Q != M_l or fmpq_mat(dl, d, point[2 * d * d:]) != P:
        reject("last.fiber_certificate is not about the last virtual layer (A, V) = (M_l, P)")
    lines = []
    for k, comp in enumerate(seq(field(embedded, "components", "last.fiber_certificate."), "components")):
        if not isinstance(comp, dict) or "A" not in comp or "V" not in comp:
            reject("the last layer's fiber must consist of lines (A_c, V_c)")
        lines.append((matrix(comp["A"], d, d, f"component {k} A"), matrix(comp["V"], dl, d, f"component {k} V")))
    return lines


def _multiply_back(arch: Arch, W0: list, Ms: list, P: fmpq_mat, steps: list) -> None:
    """Step 4: ``rho_i(z) (z^T M_i y) (P z)_k`` is the part of output token 2 linear in ``y``, row by row."""
    d, l = arch.widths[0], len(arch.ranks)
    ctx = fmpq_mpoly_ctx.get(tuple(f"z{r}" for r in range(d)) + tuple(f"y{r}" for r in range(d)), "degrevlex")
    z, y = ctx.gens()[:d], ctx.gens()[d:]

    def form(M, u, v):
        return sum((u[r] * M[r, c] * v[c] for r in range(M.nrows()) for c in range(M.ncols())), ctx.constant(0))

    q = [form(M, z, z) for M in Ms]
    Pz = [sum((P[k, c] * z[c] for c in range(d)), ctx.constant(0)) for k in range(P.nrows())]
    for i, step in enumerate(steps, start=1):
        net, values = (arch, W0) if i == 1 else _virtual_net(Ms[i - 1:], P)
        rho = ctx.constant(1)
        for j, e in step["rho"]:
            rho *= q[j - 1] ** e
        b = rho * form(Ms[i - 1], z, y)
        if not _is_product(*_linear_part(net, values, ctx, d), b, Pz):
            reject(f"layers[{i - 1}]: rho_{i}(z) (z^T M_{i} y) (P z) does not multiply back to the part of output "
                   f"token 2 linear in y ({'the network itself' if i == 1 else 'the peeled virtual network'})")
