"""The symmetry groups (docs/invariance.md): their families, identities and fields, and the bound they give.

The families of an architecture; their invariance identities, re-proved in the checker's own word algebra (for
the dense and all-sizes witnesses); their fields at a point by index formulas (the dense witness's field matrix
starts with them, and the exact field rank is the dimension of a point's orbit for the fiber kinds).

The plain, head, identity and stack points (plainpoint.py, headpoint.py, identitypoint.py, stackpoint.py) bound
``dim M`` from above by ``P`` minus the rank of the group fields (docs/invariance.md: they are tangent to the
fibers at every point, so their rank at one point is at most the generic one, docs/math.md §5.2). Each module
recomputes its minor of the fields on the recorded columns; what they share is read and compared here: the
witness's keys, its prime, its families (the architecture's, groups only: no kernel field is evaluated by
these witnesses), the field rank, the recorded determinant and the bound.
"""

from __future__ import annotations

import json

import numpy as np
from flint import fmpq, fmpq_mat

from ..values import field, integer, prime, reject

#: The symmetry groups' families (docs/invariance.md); every other family is a kernel family.
GROUPS = {"intra", "scaling", "value", "inter"}


def witness(uw: dict, name: str, keys: set, expected: list, fields: int) -> int:
    """The prime of a ``name`` upper witness holding exactly ``keys``, whose families are ``expected`` (the
    checker's list for the architecture) and are groups only, and whose field rank is ``fields``.

    >>> witness({"structured": "x", "prime": 7, "families": [], "field_rank": 0}, "x",
    ...         {"structured", "prime", "families", "field_rank"}, [], 0)
    7
    """
    if set(uw) != keys or uw["structured"] != name:
        reject(f"a '{name}' upper witness holds exactly {', '.join(sorted(keys))}")
    p = prime(uw["prime"], "upper_witness.prime")
    if json.dumps(uw["families"]) != json.dumps(expected) or {f["kind"] for f in expected} - GROUPS:
        reject("upper_witness.families must be exactly the symmetry groups of this architecture, in canonical order "
               f"(a '{name}' witness is for architectures without kernel families)")
    if integer(uw["field_rank"], "upper_witness.field_rank", 0) != fields:
        reject(f"upper_witness.field_rank must be the {fields} group fields")
    return p


def bound(cert: dict, uw: dict, parameters: int, fields: int, det: int | None, p: int, name: str) -> int:
    """``P - fields``, once the minor the checker recomputed (``det`` mod ``p``; None: not block lower triangular
    in the families' order) is nonsingular and the one recorded, and ``upper`` says so.

    >>> bound({"upper": 5}, {"determinant": 3}, 7, 2, 3, 11, "x")
    5
    >>> bound({"upper": 5}, {"determinant": 3}, 7, 2, 4, 11, "x")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the field minor at the x has determinant 4 mod 11, the certificate records 3
    """
    if det is None:
        reject(f"the field minor at the {name} on upper_witness.columns must be block lower triangular in the "
               "families' order")
    recorded = integer(uw["determinant"], "upper_witness.determinant", 0, p - 1)
    if det == 0 or det != recorded:
        reject(f"the field minor at the {name} has determinant {det} mod {p}, the certificate records {recorded}")
    if integer(field(cert, "upper"), "upper") != parameters - fields:
        reject(f"upper must be parameters - field rank = {parameters - fields}")
    return parameters - fields


# -- the groups' invariance identities, in the checker's own word algebra ---------------------------


def _word_derivative(word: tuple, tangent: dict) -> dict:
    """Derivative of a word of letters ``'S'`` / ``"S'"`` along ``tangent[S]`` (a dict word -> coeff)."""
    out: dict = {}
    for k, letter in enumerate(word):
        sym, transposed = letter.rstrip("'"), letter.endswith("'")
        for tword, coeff in tangent.get(sym, {}).items():
            if transposed:
                tword = tuple(x[:-1] if x.endswith("'") else x + "'" for x in reversed(tword))
            new = word[:k] + tword + word[k + 1 :]
            out[new] = out.get(new, 0) + coeff
    return {k: v for k, v in out.items() if v}


# The families' tangents as words (E = Lie algebra element), for heads with V unfactored
# (False) and with V = O U (True); [HMK]'s layer uses the first table.
_INTRA = {"Q": {("E", "Q"): 1}, "K": {("E'", "K"): -1}}
_INCOMING = {"Y": {("E", "Y"): 1}, "Q": {("Q", "E"): -1}, "K": {("K", "E"): -1}}
_HEAD_TANGENTS = {
    False: {
        "intra": (_INTRA,),
        "scaling": ({"Q": {("Q",): 1}, "V": {("V",): -1}},),
        "inter": ({"V": {("E", "V"): 1}}, {**_INCOMING, "V": {("V", "E"): -1}}),
    },
    True: {
        "intra": (_INTRA,),
        "scaling": ({"Q": {("Q",): 1}, "O": {("O",): -1}},),
        "value": ({"U": {("E", "U"): 1}, "O": {("O", "E"): -1}},),
        "inter": ({"O": {("E", "O"): 1}}, {**_INCOMING, "U": {("U", "E"): -1}}),
    },
}

# [HMK]'s layer V Y Y' K' Q Y: each family fixes it, except inter's outgoing side, which moves it by E.
_LAYER = ("V", "Y", "Y'", "K'", "Q", "Y")
_PLAIN = _HEAD_TANGENTS[False]
_IDENTITIES = {
    "intra": [(_PLAIN["intra"][0], {})],
    "scaling": [(_PLAIN["scaling"][0], {})],
    "inter": [(_PLAIN["inter"][0], {("E",) + _LAYER: 1}), (_PLAIN["inter"][1], {})],
}


# Normalized layers V Y S(Y' K' Q Y): the families must fix the score and the value
# (the inter family's outgoing side moves the value by E), for any normalizer S.
_SCORE, _VALUE = ("Y'", "K'", "Q", "Y"), ("V", "Y")


# One head of a multi-head, masked or residual layer adds value . M o S(score): the
# families must fix the score and the value, except the scaling (lightning only; the
# term is bilinear, so score +1 and value -1 cancel) and inter (every value moves by E,
# every score fixed; on the incoming side both are fixed). Factored heads: value O U Y.
_FACTORED_VALUE = ("O", "U", "Y")


def head_identities_hold(kind: str, factored: bool) -> bool:
    """A group of one head (``V`` or ``V = O U``) fixes its score and its value, but for the scaling's bilinear
    trade and the outgoing side of ``inter``: the identity checked in the word algebra, for every size at once.

    >>> [head_identities_hold(k, True) for k in ("intra", "scaling", "value", "inter", "mixing")]
    [True, True, True, True, False]
    """
    value = _FACTORED_VALUE if factored else _VALUE
    tangents = _HEAD_TANGENTS[factored].get(kind)
    if tangents is None:
        return False
    expected = {"scaling": ({_SCORE: 1}, {value: -1}), "inter": ({}, {("E",) + value: 1})}.get(kind, ({}, {}))
    if (_word_derivative(_SCORE, tangents[0]), _word_derivative(value, tangents[0])) != expected:
        return False
    return len(tangents) == 1 or (_word_derivative(_SCORE, tangents[1]), _word_derivative(value, tangents[1])) == ({}, {})


def identities_hold(kind: str, normalized: bool = False) -> bool:
    """[HMK]'s layer ``V Y Y' K' Q Y`` (or a normalized one, through its score and value) is fixed by the family's
    tangents, but for ``inter``'s outgoing side, which moves it by ``E``: checked in the word algebra.

    >>> identities_hold("intra"), identities_hold("inter", normalized=True), identities_hold("scaling", True)
    (True, True, False)
    """
    for tangent, expected in _IDENTITIES[kind]:
        if not normalized:
            if _word_derivative(_LAYER, tangent) != expected:
                return False
            continue
        moves_value = {("E",) + _VALUE: 1} if expected else {}
        if _word_derivative(_SCORE, tangent) != {} or _word_derivative(_VALUE, tangent) != moves_value:
            return False
    return True


# -- the groups' fields at a point --------------------------------------------------------------


def families(arch) -> list[dict]:
    """The symmetry groups' families of ``arch`` in canonical order (docs/invariance.md): per layer and head ``intra``
    (``GL_a``), ``scaling`` (lightning only: a normalizer is not homogeneous) and ``value`` (``GL_b``, ``V = O U``),
    then ``inter`` (``GL_{d_i}`` between layers, none with a residual connection).

    >>> from attngeo.check.arch import Arch
    >>> [f["kind"] for f in families(Arch((2, 2, 2), (1, 1), 2))]
    ['intra', 'scaling', 'inter', 'intra', 'scaling']
    """
    out = []
    for i, a in enumerate(arch.ranks, start=1):
        h = arch.head_count(i)
        for j in range(1, h + 1):
            head = {"head": j} if h > 1 else {}
            out.append({"kind": "intra", "layer": i, "size": a * a, **head})
            if arch.normalization == "lightning":  # a normalizer is not homogeneous: no scaling symmetry
                out.append({"kind": "scaling", "layer": i, "size": 1, **head})
            if arch.value_ranks is not None:
                out.append({"kind": "value", "layer": i, "size": arch.value_ranks[i - 1] ** 2, **head})
        if i < len(arch.ranks) and not arch.residual:  # X + Y pins the hidden basis
            out.append({"kind": "inter", "layer": i, "size": arch.widths[i] ** 2})
    return out


def field_rows(arch, point: np.ndarray, p: int | None, out: np.ndarray | None = None) -> np.ndarray:
    """Every group field vector at ``point``, by index formulas, one row each: intra ``E_uv`` (``δQ[u] = Q[v]``,
    ``δK[v] = -K[u]``), the scaling (``δQ = Q``, ``δV = -V`` or ``δO = -O``), value ``E_uv`` (``δU[u] = U[v]``,
    ``δO[:, v] = -O[:, u]``) and inter ``E_uv`` (``δ(V or O)_i[u] = (V or O)_i[v]``, layer ``i + 1``'s inputs
    ``δM[:, v] = -M[:, u]``).

    ``p`` a prime: int64 residues; ``p`` None: exact, ``point`` an object array of rationals. The rows are
    written in place into ``out`` (zeros, at least as many rows as the groups' sizes add up to; allocated here
    when None), so the matrix never exists twice (docs/trust.md: its size is the memory bound).

    >>> from attngeo.check.arch import Arch
    >>> field_rows(Arch((2, 1), (1,), 2), np.array([1, 2, 3, 4, 5, 6]), 7).tolist()     # intra E_00, the scaling
    [[1, 2, 4, 3, 0, 0], [1, 2, 0, 0, 2, 1]]
    """
    dtype = np.int64 if p is not None else object
    count = sum(f["size"] for f in families(arch))
    F = np.zeros((count, arch.parameters), dtype=dtype) if out is None else out
    filled = iter(range(count))
    W, offsets = arch.weights(point, lambda r, c, x: x.reshape(r, c)), arch.offsets()
    P, l = arch.parameters, len(arch.ranks)
    factored = arch.value_ranks is not None
    out_name, in_name = ("O", "U") if factored else ("V", "V")  # what E multiplies on the left / right

    def put(vec, key, mat):
        off = offsets[key]
        vec[off : off + mat.size] = mat.ravel() % p if p is not None else mat.ravel()

    def unit(n):
        return [(u, v) for u in range(n) for v in range(n)]

    for i in range(1, l + 1):
        a = arch.ranks[i - 1]
        for j in range(1, arch.head_count(i) + 1):
            Q, K = W[(i, j, "Q")], W[(i, j, "K")]
            for u, v in unit(a):  # E = e_u e_v^T: dQ = E Q, dK = -E^T K
                vec = F[next(filled)]
                dQ, dK = np.zeros_like(Q), np.zeros_like(K)
                dQ[u, :] = Q[v, :]
                dK[v, :] = -K[u, :]
                put(vec, (i, j, "Q"), dQ)
                put(vec, (i, j, "K"), dK)
            if arch.normalization == "lightning":  # dQ = Q, d(V or O) = -(V or O)
                vec = F[next(filled)]
                put(vec, (i, j, "Q"), Q)
                put(vec, (i, j, out_name), -W[(i, j, out_name)])
            if factored:  # dU = E U, dO = -O E
                U, O = W[(i, j, "U")], W[(i, j, "O")]
                for u, v in unit(arch.value_ranks[i - 1]):
                    vec = F[next(filled)]
                    dU, dO = np.zeros_like(U), np.zeros_like(O)
                    dU[u, :] = U[v, :]
                    dO[:, v] = -O[:, u]
                    put(vec, (i, j, "U"), dU)
                    put(vec, (i, j, "O"), dO)
        if i < l and not arch.residual:
            for u, v in unit(arch.widths[i]):  # d(V or O)_i = E (.); d(Q, K, V or U)_{i+1} = -(.) E
                vec = F[next(filled)]
                for j in range(1, arch.head_count(i) + 1):
                    M = W[(i, j, out_name)]
                    dM = np.zeros_like(M)
                    dM[u, :] = M[v, :]
                    put(vec, (i, j, out_name), dM)
                for j in range(1, arch.head_count(i + 1) + 1):
                    for name in ("Q", "K", in_name):
                        M = W[(i + 1, j, name)]
                        dM = np.zeros_like(M)
                        dM[:, v] = -M[:, u]
                        put(vec, (i + 1, j, name), dM)
    if next(filled, None) is not None:  # pragma: no cover - the families' sizes count these rows
        raise AssertionError("fewer group fields than the families' sizes")
    return F[:count]


def exact_field_rank(arch, point: list) -> int:
    """Rank over Q of the symmetry fields at a rational point: the dimension of its orbit.

    The checker's own index formulas (no kernel fields: those are mod ``p`` only).

    Parameters
    ----------
    arch : Arch
    point : list
        ``arch.parameters`` integers or ``fmpq`` in flattening order.

    Returns
    -------
    int

    Examples
    --------
    One layer ``3 -> 3`` of rank 2: ``GL_2 x C^*`` has dimension 5, reached at
    a generic point; all ones is special (``GL_2`` moves only row and column
    sums), the origin is fixed, and softmax keeps only ``GL_2``:

    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.groups import exact_field_rank
    >>> arch = Arch((3, 3), (2,), 2)
    >>> exact_field_rank(arch, list(range(1, 22))), exact_field_rank(arch, [1] * 21), exact_field_rank(arch, [0] * 21)
    (5, 4, 0)
    >>> exact_field_rank(Arch((3, 3), (2,), 2, "softmax"), list(range(1, 22)))
    4
    """
    values = np.empty(len(point), dtype=object)
    values[:] = point  # one rational per entry (numpy would otherwise try to unpack them)
    F = field_rows(arch, values, None)
    return fmpq_mat([[fmpq(x) if isinstance(x, int) else x for x in row] for row in F.tolist()]).rank() if len(F) else 0
