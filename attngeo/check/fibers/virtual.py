"""Independent re-verification of virtual-weight fiber certificates (kind ``virtual-fiber``).

Shares nothing with the prover (geometry/fibers/virtual.py): the virtual
weights are recomputed from the point, the network is the checker's own
(two tokens followed layer by layer in factored form, ``_pencil``, and
Jacobians by the product rule, each compared in the tests with ``check/network.phi``
run on dual numbers), and the last
layer is the embedded single-layer fiber certificate, verified by the kernel
(``check/fibers/layer.py``: polynomial division) before this module runs.
What it proves is docs/math.md §7.2 (Lemmas P and A), whose hypotheses it
checks at the point:

0. the work: priced from the sizes and the digits of the point and of the
   recorded virtual weights before anything is verified (``budget``);
1. the architecture: [HMK]'s lightning model, ``l >= 2``, ``t >= 2``, every
   hidden width equal to ``d_0``; ``V_1 .. V_{l-1}`` invertible and
   ``rank A_i = a_i`` (exact determinants and ranks);
2. the recorded virtual weights ``M_i = P_{i-1}^T A_i P_{i-1}``, ``P = V_l .. V_1``
   are the point's (recomputed, compared first: cheap);
3. per layer ``i < l``: a nonzero 2x2 minor of ``M_i`` (two independent
   columns: the coprime linear forms the factorization argument divides by), a
   nonzero entry of ``M_i + M_i^T`` (the quadric ``q_i`` is not zero), and an
   input where ``S_{M_i}`` has a nonzero Jacobian determinant (dominance);
4. Identity T, followed layer by layer: the part of output token 2 linear in
   the second token ``y`` is ``rho_i(z) (z^T M_i y) P z`` with
   ``rho_i = prod_j q_j(z)^{e_j}`` as recorded (and as the lemma says), for the
   network itself (``i = 1``) and for each peeled virtual network (``i >= 2``).
   Each layer maps a factored state (a monomial in the quadrics times a matrix
   times ``z``) to another (docs/math.md Lemma 7.8.1): every quadric is named
   after an exact comparison of symmetric parts, and nothing of degree ``3^l``
   is expanded, so the work grows with ``l d^3``;
5. the embedded single-layer fiber is that of ``(A, V) = (M_l, P)``; each of its
   lines has ``rank A_c = a_l`` and ``rank [A_c; A_c^T; V_c] = d_0`` (Lemma A);
6. one listed orbit point per line, on that line (virtual weights), with
   ``W_0``'s first layers; each orbit's dimension is ``dim G``, as Lemma 7.8.2
   proves wherever the rank conditions of step 1 hold (no rank of the symmetry
   fields is computed).

The fiber is then the union of the listed orbits. ``generic`` is accepted
exactly when the lines at the point are those of a dense open set
(``is_generic``: one line with ``rank M_l >= 2`` or ``rank P >= 2``, or the
two lines of ``a_l = d_l = 1``): every hypothesis is then a witnessed
nonvanishing polynomial in the weights, so the conclusion holds on a dense
Zariski-open set.
"""

from __future__ import annotations

import json

from flint import fmpq, fmpq_mat

from ...exceptions import CertificateFormatError
from ..arch import Arch, architecture
from ..limits import MAX_LAYER_WIDTH, MAX_VIRTUAL_FIBER_WORK, refuse_above
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
#: Measured unit costs, in nanoseconds (loaded 2-core machine): a product of two ``n x n`` matrices of ``c``-digit
#: rationals costs about ``n^3 (1.3 + 0.03 c^1.6)`` (64 x 64: 1.3 ns at one digit, 31 at 100, 1,000 at 1,000,
#: 4,400 at 2,000), a determinant of size ``n`` about ``0.25 n^4 c`` (0.02 to 0.23 measured), and one coefficient
#: of the embedded single-layer fiber about 1,000 plus a product of its factors (64 x 64: 8.4e6 in 3 to 6 s).
NS_DET, NS_COEFFICIENT = 0.25, 1000


def _ns_product(c: int) -> float:
    """Nanoseconds per ``n^3`` of a matrix product with ``c``-digit entries (per product, for a scalar one)."""
    return 1.3 + 0.03 * c ** 1.6


def price(depth: int, d: int, dl: int, point_digits: int, virtual_digits: int) -> float:
    """Estimated nanoseconds of the check, from the sizes and the digits of the point and of the virtual weights.

    Layer ``j`` recomputes its virtual weights and follows Identity T (about eight ``d x d`` products whose
    entries have up to ``2 j`` times the point's digits: ``P_j`` is a product of ``j`` matrices), and, before the
    last, one ``2d x 2d`` dominance determinant of entries as long as the (compared) virtual weights; the
    embedded last layer has ``d_l d^2 (d + 1) / 2`` coefficients, products of two virtual weights.

    Examples
    --------
    >>> price(2, 32, 32, 1, 3) < 1e10 < price(64, 64, 64, 2000, 2000)
    True
    """
    total = dl * d * d * (d + 1) / 2 * (NS_COEFFICIENT + _ns_product(2 * virtual_digits))
    for j in range(1, depth + 1):
        total += 8 * d**3 * _ns_product(2 * j * (point_digits + 2))
        if j < depth:
            total += NS_DET * (2 * d) ** 4 * (virtual_digits + 14)
    return total


def longest_number(value) -> int:
    """The longest number written in ``value`` (texts and integers, in lists at any depth): before it is read.

    Examples
    --------
    >>> longest_number([["-12/7", "3"], [10**5]]), longest_number({"not": "a list"})
    (6, 0)
    """
    if isinstance(value, list):
        return max(map(longest_number, value), default=0)
    return len(str(value)) if isinstance(value, (str, int)) else 0


def budget(cert: dict) -> None:
    """Refuse, before anything is verified (the embedded last layer included), a certificate above the work limit.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.fibers.virtual import virtual_fiber
    >>> budget(virtual_fiber(Architecture((3, 3, 3), (2, 2), tokens=2), seed=0).to_json())
    >>> wide = {"architecture": {"widths": [64] * 30, "ranks": [32] * 29, "tokens": 2, "normalization": "lightning"},
    ...         "point": ["9" * 500]}
    >>> budget(wide)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: checking this virtual-fiber certificate needs about ... units of work, above the checker's limit of 6e+10 (docs/trust.md)
    """
    arch = architecture(cert)
    virtual = cert.get("virtual")
    numbers = [virtual.get(k) for k in ("M", "P")] if isinstance(virtual, dict) else []
    refuse_above(price(len(arch.ranks), arch.widths[0], arch.widths[-1], longest_number(cert.get("point")),
                       longest_number(numbers)), MAX_VIRTUAL_FIBER_WORK, "checking this virtual-fiber certificate")


def _eye(d: int) -> fmpq_mat:
    return fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)])


def _flat(*mats: fmpq_mat) -> list:
    return [v for M in mats for v in M.entries()]


def _pencil(layers: list, Ms: list, first: int) -> tuple[dict, dict, fmpq_mat, fmpq_mat | None]:
    """Two tokens ``[z, eps y]`` through ``layers``, kept factored (docs/math.md Lemma 7.8.1): ``(r, s, B, U)``.

    ``layers`` are pairs ``(A, V)`` of a lightning network (``A = K^T Q``; ``V = None`` for the identity), whose
    first layer is virtual layer ``first``. A layer maps the tokens ``(u, eps w)`` to ``((u^T A u) V u,
    eps (u^T A w) V u)`` modulo ``eps^2``, so after it token 1 is ``r(z) U z`` and token 2 is
    ``eps s(z) (z^T B y) U z``, with ``r`` and ``s`` monomials in the quadrics ``q_j(z) = z^T M_j z``, returned as
    exponent dicts ``{j: e}`` (``U = None``: the identity). Each quadric ``z^T (U^T A U) z`` a layer meets is named
    ``q_j`` only after ``U^T A U + (U^T A U)^T = M_j + M_j^T`` is checked (exactly); nothing is expanded, so the
    work is a few ``d x d`` products per layer, whatever the degree ``3^l``.
    """
    def quadric(U, A, j: int) -> None:
        G = A if U is None else U.transpose() * A * U
        if G + G.transpose() != Ms[j - 1] + Ms[j - 1].transpose():
            reject(f"Identity T does not hold: layer {j}'s score on token 1 is not z^T M_{j} z (the virtual weights)")

    def then(V, U):
        return U if V is None else (V if U is None else V * U)

    (A, V), rest = layers[0], layers[1:]
    quadric(None, A, first)
    r, s, B, U = {first: 1}, {}, A, then(V, None)
    for j, (A, V) in enumerate(rest, start=first + 1):
        quadric(U, A, j)
        s = {k: 2 * r.get(k, 0) + s.get(k, 0) + (k == j) for k in set(r) | set(s) | {j}}
        r = {k: 3 * e for k, e in r.items()} | {j: 1}
        U = then(V, U)
    return r, s, B, U


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
        Widths above the checker's limit (the work is priced by ``budget``, before this runs).

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
    if d > MAX_LAYER_WIDTH or dl > MAX_LAYER_WIDTH:
        raise CertificateFormatError(f"virtual-fiber certificates are read up to width {MAX_LAYER_WIDTH} (the last "
                                     f"layer's single-layer fiber), not {arch.describe()}")
    W0 = _point(field(cert, "point"), arch.parameters, "point")
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
    _identity_t(layers, Ms, P, steps)
    orbits = seq(field(cert, "orbits"), "orbits", len(lines))
    n_last = 2 * arch.ranks[-1] * d + dl * d
    P_prev = _eye(d)
    for V in Vs[:-1]:
        P_prev = V * P_prev
    group = sum(a * a + 1 for a in arch.ranks) + (l - 1) * d * d
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
        if dim != group:  # Lemma 7.8.2: V_1 .. V_(l-1) invertible and rank A_i = a_i, as checked above
            reject(f"orbits[{c}].dimension must be dim G = {group}: the symmetry group acts with a finite stabilizer "
                   "where Lemma A's rank conditions hold (docs/math.md Lemma 7.8.2)")
        seen.append(W)
    if W0 not in seen:
        reject("the orbits must include W_0's own")
    if boolean(field(cert, "certified"), "certified") is not True:
        reject("certified must be true: the certificate proves the fiber or is refused")
    generic = is_generic(len(lines), Ms[-1].rank(), P.rank(), arch.ranks[-1], dl)
    if boolean(field(cert, "generic"), "generic") is not generic:
        reject(f"generic must be {str(generic).lower()} (one orbit and rank M_l >= 2 or rank P >= 2, or the two "
               "orbits of a_l = d_l = 1: open conditions)")
    # a special point (e.g. rank-1 parallel, where the generic fiber has two orbits) must not read as generic
    tail = ("; generic: the same holds on the dense Zariski-open set of weights where the witnessed determinants, "
            "minors and entries are nonzero" if generic else "; at W_0 only: not claimed for generic weights")
    # the lemma holds for every t >= 2, so the claim does not name the certificate's t (one claim per function)
    sizes = f"widths {','.join(map(str, arch.widths))}, ranks {','.join(map(str, arch.ranks))}"
    return (f"fiber = {len(lines)} orbit(s) of the symmetry group for {sizes} and every t >= 2 (every weight with "
            f"the same function as the certified point W_0, over C){tail}")


def is_generic(lines: int, rank_m: int, rank_p: int, a_l: int, d_l: int) -> bool:
    """Whether the last layer's lines at the point are those at every point of a dense open set.

    One line is generic when ``rank M_l >= 2`` or ``rank P >= 2`` (a nonzero 2x2 minor: open). With
    ``a_l = d_l = 1`` every point has ``rank M_l = rank P = 1``, and two lines (a swap, ``k`` not parallel to
    ``p``: a nonzero 2x2 minor) is what a dense open set has (docs/math.md Theorem 7.8 (1)); one line there is
    the special parallel point.

    Examples
    --------
    >>> is_generic(1, 2, 1, 2, 1), is_generic(2, 1, 1, 1, 1), is_generic(1, 1, 1, 1, 1), is_generic(2, 1, 1, 2, 1)
    (True, True, False, False)
    """
    if lines == 1:
        return rank_m >= 2 or rank_p >= 2
    return lines == 2 and a_l == 1 and d_l == 1


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


def _identity_t(layers: list, Ms: list, P: fmpq_mat, steps: list) -> None:
    """Step 4: Identity T, ``rho_i(z) (z^T M_i y) P z``, for the network itself and each peeled virtual network."""
    for i, step in enumerate(steps, start=1):
        net = [(K.transpose() * Q, V) for Q, K, V in layers] if i == 1 else \
            [(M, None) for M in Ms[i - 1:-1]] + [(Ms[-1], P)]
        _, s, B, U = _pencil(net, Ms, i)
        rho = {j: e for j, e in step["rho"] if e}
        if B != Ms[i - 1] or U != P or s != rho:
            reject(f"layers[{i - 1}]: the part of output token 2 linear in y is not rho_{i}(z) (z^T M_{i} y) (P z) "
                   f"({'the network itself' if i == 1 else 'the peeled virtual network'}, followed layer by layer)")
