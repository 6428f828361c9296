"""Dimension certificates (kind ``dimension``): the lower and upper bounds re-verified.

Shares no code with the computing path (network, jacobian, symmetry, rank,
freealgebra, dimension). Where the prover traces the layer formula and pulls
cotangents back generically, this checker pulls each row's functional back by
adjoint formulas written out by hand for one head (``_layer_adjoint``), and has a
forward mode of its own for the structured witnesses (``_layer_tangent``), so
an error in either is unlikely to be repeated in the other. Its own
definitions are the mathematics itself:

* the layer ``phi(Y) = V Y (Y^T K^T Q Y)`` (word ``V Y Y' K' Q Y``);
* the symmetry families of [HMK] with their tangent formulas, written here as
  index formulas rather than matrix products.

Arithmetic mod p never overflows: residues are below ``p < 2**26``, so a
product is below ``2**52``; every matrix product sums at most ``MAX_SIZE = 2047``
products (an inner size is a width, a rank or the token count), below
``2047 * 2**52 < 2**63``. A functional is the seed cotangent of its row, never a
sum over the ``d_l * t`` outputs (which once wrapped: widths 1,64 with ``t = 64``).
"""

from __future__ import annotations

import json

import numpy as np

from ...exceptions import CertificateFormatError
from ..arch import Arch, architecture
from ..untie import augmented, copies, untied
from . import criterionpoint, identitypoint, discovery, headpoint, kernelfields, plainpoint, stackpoint
from .ball import check_ball_lower
from ..limits import (MAX_DENSE_MINOR, MAX_DENSE_WORK, MAX_FIELD_ENTRIES, MAX_JACOBIAN_WORK, MAX_MIXING_MOVES,
                      MINOR_CUBES_PER_NS, NS_PER_FIELD_ENTRY, NS_PER_JACOBIAN_UNIT, refuse_above)
from ..linalg import block_det, det, mm as _mm, product
from .groups import families as _expected_families, field_rows as _field_rows, head_identities_hold, identities_hold
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER
from ..values import field, index_list, int_array, integer, prime, reject


_WITNESS = {"prime": CHECKED, "point": CHECKED}
SCHEMA = {
    **HEADER,
    "architecture": ARCHITECTURE,
    "parameters": CHECKED, "lower": CHECKED, "upper": CHECKED, "certified": CHECKED, "dimension": CHECKED,
    "lower_witness": {**_WITNESS, "inputs": CHECKED, "functionals": CHECKED, "rank": CHECKED, "rows": CHECKED,
                      "columns": CHECKED, "determinant": CHECKED, "normalization": CHECKED, "precision": CHECKED,
                      "structured": CHECKED, "blocks": CHECKED, "largest_block": CHECKED, "determinants": CHECKED,
                      "groups": CHECKED},
    "upper_witness": {**_WITNESS, "families": CHECKED, "field_rank": CHECKED, "rows": CHECKED, "columns": CHECKED,
                      "determinant": CHECKED, "structured": CHECKED, "ambient": CHECKED, "coefficients": CHECKED,
                      "flattening": CHECKED, "rank": CHECKED, "inputs": CHECKED, "layers": CHECKED},
    "seconds": NUMBER, "attempts": NUMBER,
}


def _weights(point: np.ndarray, arch: Arch) -> dict:
    """``(layer, head, name) -> matrix`` (names ``Q K V`` or ``Q K U O``) of a point's residues."""
    return arch.weights(point, lambda r, c, x: x.reshape(r, c))


def _keep(arch: Arch) -> np.ndarray | None:
    """The causal mask: score ``(s, j)`` counts iff source token ``s <= j`` (the checker's own definition)."""
    if not arch.causal:
        return None
    t = arch.tokens
    return np.array([[1 if s <= j else 0 for j in range(t)] for s in range(t)], dtype=np.int64)


def _block_det(M: np.ndarray, p: int) -> int:
    """Determinant mod p of a square matrix of residues: the product of its diagonal blocks when it is block upper
    or lower triangular as given (the field minors of the gauge choice are), else one elimination.

    >>> _block_det(np.array([[2, 5, 1], [0, 3, 4], [0, 1, 1]]), 101)     # 2 (3 - 4)
    99
    >>> _block_det(np.array([[0, 1], [1, 0]]), 101)                      # not triangular: eliminated
    100
    """
    for T in (M, M.T):  # lower triangular blocks of M or of its transpose, at least two
        r, c = np.nonzero(T)
        blocks = block_det(r, c, T[r, c], M.shape[0], p, largest=M.shape[0] - 1)
        if blocks is not None:
            return blocks
    return det(M, p)


def _minor_size(n: int, what: str) -> None:
    """A dense minor's determinant costs ``n^3``: refused before its matrix is built when above the limit."""
    if n > MAX_DENSE_MINOR:
        raise CertificateFormatError(f"the {what} minor is {n} x {n}, above the checker's limit of {MAX_DENSE_MINOR} "
                                     "rows for a dense determinant (docs/trust.md)")


def _check_minor(matrix: np.ndarray, p: int, recorded, what: str) -> None:
    """The minor must be nonsingular and its determinant the one recorded.

    Matching the recorded determinant binds the witness to its data: a changed
    prime, point or input would usually still give *some* nonsingular minor,
    but not this determinant.
    """
    recorded = integer(recorded, f"{what} determinant", 0, p - 1)
    n = matrix.shape[0]
    det = _block_det(np.mod(matrix, p), p)
    if det == 0:
        reject(f"the {what} minor ({n} x {n}) is singular mod {p}: its rank is not proved")
    if det != recorded:
        reject(f"the {what} minor has determinant {det} mod {p}, the certificate records {recorded}")


# -- lower bound: forward-mode Jacobian on the witness columns -------------------------


def _tr(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _head_tangent(Q, K, V, Y, dY, dQ, dK, dV, p, keep):
    """Forward derivative of one head ``V Y (M o (Y^T K^T Q Y))``; ``None`` tangents are zero, ``keep`` the mask M.

    The score is taken as ``(K Y)^T (Q Y)``, never through the ``d x d`` matrix ``K^T Q``: per column that
    matrix (and its tangent) cost ``d^2`` in products numpy walks against the grain, hundreds of times slower
    than the ``a d t`` of the factored form for a wide layer (docs/trust.md)."""
    KY, QY = _mm(K, Y, p), _mm(Q, Y, p)
    G = _mm(_tr(KY), QY, p)
    if keep is not None:
        G = G * keep
    VY = _mm(V, Y, p)
    terms = []
    dG = None
    if dQ is not None:  # Y^T K^T dQ Y
        dG = _mm(_tr(KY), _mm(dQ, Y, p), p)
    if dK is not None:  # Y^T dK^T Q Y
        part = _mm(_tr(_mm(dK, Y, p)), QY, p)
        dG = part if dG is None else (dG + part) % p
    if dY is not None:  # dY^T K^T Q Y + Y^T K^T Q dY
        part = (_mm(_tr(_mm(K, dY, p)), QY, p) + _mm(_tr(KY), _mm(Q, dY, p), p)) % p
        dG = part if dG is None else (dG + part) % p
        terms.append(_mm(_mm(V, dY, p), G, p))
    if dG is not None:
        if keep is not None:
            dG = dG * keep
        terms.append(_mm(VY, dG, p))
    if dV is not None:
        terms.append(_mm(_mm(dV, Y, p), G, p))
    out = terms[0]
    for t in terms[1:]:
        out = (out + t) % p
    return out


def _value(w: dict, p: int) -> np.ndarray:
    return w["V"] if "V" in w else _mm(w["O"], w["U"], p)


def _layer(arch: Arch, heads: list, Y: np.ndarray, p: int) -> np.ndarray:
    """One layer's output: the heads summed (masked), plus ``Y`` when residual."""
    keep = _keep(arch)
    out = Y % p if arch.residual else 0
    for w in heads:
        G = _mm(_tr(_mm(w["K"], Y, p)), _mm(w["Q"], Y, p), p)  # (K Y)^T (Q Y): see _head_tangent
        if keep is not None:
            G = G * keep
        out = (out + _mm(_mm(_value(w, p), Y, p), G, p)) % p
    return out


def _layer_tangent(arch: Arch, heads: list, Y, dY, tangents: list, p: int):
    """Forward derivative of a layer; ``tangents[j]`` maps head ``j``'s names to tangents (absent: zero)."""
    keep = _keep(arch)
    out = dY if (arch.residual and dY is not None) else None
    for w, t in zip(heads, tangents):
        if dY is None and not t:
            continue
        dV = t.get("V")
        if "U" in t or "O" in t:  # d(O U) = dO U + O dU
            parts = ([_mm(t["O"], w["U"], p)] if "O" in t else []) + ([_mm(w["O"], t["U"], p)] if "U" in t else [])
            dV = parts[0] if len(parts) == 1 else (parts[0] + parts[1]) % p
        term = _head_tangent(w["Q"], w["K"], _value(w, p), Y, dY, t.get("Q"), t.get("K"), dV, p, keep)
        out = term if out is None else (out + term) % p
    return out


def _layer_adjoint(arch: Arch, heads: list, Y: np.ndarray, Z: np.ndarray, p: int) -> tuple[np.ndarray, list[dict]]:
    """Pull a cotangent ``Z`` of a layer's output back: the cotangent of its input ``Y`` and, per head, of its weights.

    For a head ``V Y G``, ``G = M o (Yᵀ A Y)``, ``A = Kᵀ Q``: ``<Z, δ(V Y G)>`` is ``<Z (Y G)ᵀ, δV>`` +
    ``<Vᵀ Z Gᵀ, δY>`` + ``<H, δG>`` with ``H = M o ((V Y)ᵀ Z)``, and ``<H, δ(Yᵀ A Y)>`` is ``<A Y Hᵀ + Aᵀ Y H, δY>``
    + ``<Y H Yᵀ, δA>``; ``δA = δKᵀ Q + Kᵀ δQ`` gives ``Q Āᵀ`` for ``K`` and ``K Ā`` for ``Q``; ``V = O U`` gives
    ``V̄ Uᵀ`` and ``Oᵀ V̄``. Rows are batched on the leading axis (each with its own ``Y``).
    """
    keep = _keep(arch)
    Ybar = Z % p if arch.residual else np.zeros(Y.shape, dtype=np.int64)
    grads = []
    for w in heads:
        A, V = _mm(_tr(w["K"]), w["Q"], p), _value(w, p)
        G = _mm(_mm(_tr(Y), A, p), Y, p)
        H = _mm(_tr(_mm(V, Y, p)), Z, p)
        if keep is not None:
            G, H = G * keep, H * keep
        Vbar = _mm(Z, _tr(_mm(Y, G, p)), p)
        Ybar = (Ybar + _mm(_mm(_tr(V), Z, p), _tr(G), p) + _mm(_mm(A, Y, p), _tr(H), p)
                + _mm(_mm(_tr(A), Y, p), H, p)) % p
        Abar = _mm(_mm(Y, H, p), _tr(Y), p)
        grad = {"Q": _mm(w["K"], Abar, p), "K": _mm(w["Q"], _tr(Abar), p)}
        if "V" in w:
            grad["V"] = Vbar
        else:
            grad["O"], grad["U"] = _mm(Vbar, _tr(w["U"]), p), _mm(_tr(w["O"]), Vbar, p)
        grads.append(grad)
    return Ybar, grads


def _jacobian_rows(arch: Arch, point, X, w, rows, cols, p) -> np.ndarray:
    """The Jacobian of ``<w[n, r], phi(X_n)>`` on the rows ``n c + r`` listed, at the columns ``cols``.

    Each row's functional is pulled back through the layers (:func:`_layer_adjoint`), every row with its own input.
    """
    if len(rows) == 0:
        return np.zeros((0, len(cols)), dtype=np.int64)
    c = w.shape[1]
    n_of, r_of = np.divmod(np.asarray(rows, dtype=np.int64), c)
    if arch.tied:  # shared keys and values, biases: the plain layer's columns, each copy's summed (check/untie.py)
        plain = untied(arch)
        source, bias = copies(arch)
        where = {k: q for q, k in enumerate(cols)}
        sub = [i for i, k in enumerate(source) if k in where]
        J = _jacobian_rows(plain, np.asarray(point)[source], augmented(arch, X), w, rows, sub, p)
        out = np.zeros((len(rows), len(cols)), dtype=np.int64)
        for q, i in enumerate(sub):
            out[:, where[source[i]]] += J[:, q]  # at most h copies of residues below 2^26: no overflow
        if bias:
            summed = w[n_of, r_of].sum(axis=-1) % p  # d<w, phi>/d b_O[k]: the functional's row k over the tokens
            for k, off in enumerate(bias):
                if off in where:
                    out[:, where[off]] = summed[:, k]
        return out % p
    W = _weights(point, arch)
    l = len(arch.ranks)
    layers = [arch.head_weights(W, i) for i in range(1, l + 1)]
    Ys = [X[n_of]]
    for heads in layers:  # primal values, one copy per row
        Ys.append(_layer(arch, heads, Ys[-1], p))
    Z, grads = w[n_of, r_of] % p, {}
    for i in range(l, 0, -1):
        Z, per_head = _layer_adjoint(arch, layers[i - 1], Ys[i - 1], Z, p)
        for j, g in enumerate(per_head, start=1):
            for name, G in g.items():
                grads[(i, j, name)] = G
    flat = np.concatenate([grads[(i, j, name)].reshape(len(rows), -1) for i, j, name, _, _, _ in arch.blocks()], axis=1)
    return flat[:, np.asarray(cols, dtype=np.int64)]


def _witness(cert: dict, key: str, arch: Arch) -> tuple[dict, int, np.ndarray]:
    """A witness object with its prime and its point reduced mod that prime."""
    w = field(cert, key, "")
    if not isinstance(w, dict):
        reject(f"{key} must be an object")
    p = prime(field(w, "prime", f"{key}."), f"{key}.prime")
    point = int_array(field(w, "point", f"{key}."), (arch.parameters,), f"{key}.point") % p
    return w, p, point


def _jacobian_work(arch: Arch, rank: int) -> int:
    """Multiply-adds of the reverse mode: each row's functional pulled back through the layers on its own input
    (per head: ``K^T Q`` once, then products of at most ``w x w x t`` and ``w x t x t`` per row), then its ``P``
    gradient entries."""
    l, t = len(arch.ranks), arch.tokens
    wide = max(arch.widths + arch.ranks + (arch.value_ranks or ()))
    heads = max(arch.head_count(i) for i in range(1, l + 1))
    return l * heads * (wide * wide * max(arch.ranks) + 4 * rank * wide * t * (wide + t)) + rank * arch.parameters


def _field_entries(arch: Arch, found: int = 0) -> int:
    """Entries of the dense field matrix of an upper witness: every family's rows (and discovered fields) x P."""
    return (sum(f["size"] for f in _expected_families(arch) + kernelfields.expected(arch)) + found) * arch.parameters


def _dense_price(cert: dict, arch: Arch) -> None:
    """Refuse, from the recorded ranks and before either witness is replayed, a certificate whose dense mod-p
    witnesses cost more than :data:`MAX_DENSE_WORK` estimated nanoseconds together: each alone may reach its own
    limits, and the two 6,000-row minors with the Jacobian's pull-backs would otherwise buy about three minutes.

    A composition upper bound's layer minors count as the field minors here. Other witnesses (structured,
    balls) are priced by their own modules; a malformed field is priced at 0 and refused by its checker.
    """
    def rank(w, key: str) -> int:  # above MAX_DENSE_MINOR its own limit refuses it, naming the minor
        r = w.get(key) if isinstance(w, dict) else None
        return r if type(r) is int and 0 < r <= MAX_DENSE_MINOR else 0

    lw, uw = cert.get("lower_witness"), cert.get("upper_witness")
    ns = 0
    if isinstance(lw, dict) and "prime" in lw and not {"structured", "precision"} & set(lw) \
            and arch.normalization == "lightning":
        r = rank(lw, "rank")
        ns += _jacobian_work(arch, r) * NS_PER_JACOBIAN_UNIT + r**3 // MINOR_CUBES_PER_NS
    if isinstance(uw, dict) and uw.get("ambient") == "composition" and isinstance(uw.get("layers"), list):
        ns += sum(rank(layer.get("upper_witness") if isinstance(layer, dict) else None, "field_rank") ** 3
                  for layer in uw["layers"]) // MINOR_CUBES_PER_NS
    elif isinstance(uw, dict) and "prime" in uw and not {"structured", "ambient"} & set(uw) and not arch.tied:
        r = rank(uw, "field_rank")
        ns += min(_field_entries(arch), MAX_FIELD_ENTRIES) * NS_PER_FIELD_ENTRY + r**3 // MINOR_CUBES_PER_NS
    refuse_above(ns, MAX_DENSE_WORK, "replaying this certificate's dense witnesses together (estimated ns)")


def _check_lower(cert: dict, arch: Arch) -> int:
    lw = field(cert, "lower_witness")
    if isinstance(lw, dict) and lw.get("structured") == "stack point":  # residual stacks (check/dimension/stackpoint.py)
        return stackpoint.check_lower(cert, lw, arch, (_layer, _layer_tangent))
    if isinstance(lw, dict) and lw.get("structured") == "criterion point":  # Theorem C: ranks, any normalization
        return criterionpoint.check_lower(cert, lw, arch)
    if arch.normalization != "lightning":  # exp is not polynomial: the witness is a ball determinant
        if isinstance(lw, dict) and "prime" in lw:
            reject("a normalized network's lower witness is a ball determinant, not a minor mod p")
        return check_ball_lower(cert, arch)
    if isinstance(lw, dict) and ("normalization" in lw or "precision" in lw):
        reject("a lightning network's lower witness is a minor mod p, not a ball determinant")
    if isinstance(lw, dict) and "structured" in lw:
        return _check_structured_lower(cert, lw, arch)
    lw, p, point = _witness(cert, "lower_witness", arch)
    P = arch.parameters
    inputs = field(lw, "inputs", "lower_witness.")
    N = len(inputs) if isinstance(inputs, list) else -1
    if N < 1:
        reject("lower_witness.inputs must be a non-empty list of d_0 x t matrices")
    X = int_array(inputs, (N, arch.widths[0], arch.tokens), "lower_witness.inputs") % p
    functionals = field(lw, "functionals", "lower_witness.")
    c = len(functionals[0]) if isinstance(functionals, list) and functionals and isinstance(functionals[0], list) else -1
    if c < 1:
        reject("lower_witness.functionals must hold c >= 1 functionals per input")
    w = int_array(functionals, (N, c, arch.widths[-1], arch.tokens), "lower_witness.functionals") % p
    rank = integer(field(lw, "rank", "lower_witness."), "lower_witness.rank", 0)
    if rank != integer(field(cert, "lower", ""), "lower"):
        reject(f"lower = {cert['lower']} but the witness has rank {rank}")
    _minor_size(rank, "Jacobian")
    rows = index_list(field(lw, "rows", "lower_witness."), rank, N * c, "lower_witness.rows")
    cols = index_list(field(lw, "columns", "lower_witness."), rank, P, "lower_witness.columns")
    refuse_above(_jacobian_work(arch, rank), MAX_JACOBIAN_WORK, "replaying this dense Jacobian minor")
    J = _jacobian_rows(arch, point, X, w, rows, cols, p)
    _check_minor(J, p, field(lw, "determinant", "lower_witness."), "Jacobian")
    return rank


# -- upper bound: invariance identities and the field minor -----------------------------


def _field_matrix(arch: Arch, point: np.ndarray, p: int, found: list) -> np.ndarray:
    """The group fields, the kernel families' fields and the discovered fields ``C W`` at ``point`` mod p.

    One int64 matrix of (the families' sizes + discovered) x parameters, allocated once and filled in place
    (a family with fewer fields at this point leaves rows unused: the result is a view of the filled ones).
    """
    groups, kernel = _expected_families(arch), kernelfields.expected(arch)
    F = np.zeros((sum(f["size"] for f in groups + kernel) + len(found), arch.parameters), dtype=np.int64)
    count = len(_field_rows(arch, point, p, F))
    offsets = arch.offsets()

    def put_heads(i, *moves):  # one field: its moves of (head, name, matrix), written into the next free row
        nonlocal count
        if count == len(F):  # pragma: no cover - the families' sizes count every field
            raise AssertionError("more kernel fields than the families' sizes")
        vec = F[count]
        count += 1
        for j, name, mat in moves:
            vec[offsets[(i, j, name)] : offsets[(i, j, name)] + mat.size] = np.mod(mat, p).ravel()
        return vec

    W = _weights(point, arch)
    if arch.plain and kernel:
        kernelfields.rows(arch, {(i, name): M for (i, _, name), M in W.items()},
                          lambda i, name, mat: put_heads(i, (1, name, mat)), p)
    elif not arch.plain:
        kernelfields.head_rows(arch, W, put_heads, p)
    for C in found:
        F[count] = np.mod(C @ point.astype(object), p).astype(np.int64)
        count += 1
    return F[:count]


def _check_structured_lower(cert: dict, lw: dict, arch: Arch) -> int:
    """The coefficient Jacobian's rank at the plain point, recomputed block by block (check/dimension/plainpoint.py)."""
    if lw["structured"] == "criterion point":  # Theorem C at the selector point (check/dimension/criterionpoint.py)
        return criterionpoint.check_lower(cert, lw, arch)
    if arch.tied:
        reject("a layer with shared keys or biases has a criterion-point, Jacobian or ball lower witness")
    if lw["structured"] == "head point":  # one multi-head layer (check/dimension/headpoint.py)
        return headpoint.check_lower(cert, lw, arch)
    if not arch.plain:
        reject("structured witnesses are for one head per layer, V unfactored, no residual and no mask")
    if lw["structured"] == "identity values":  # deep networks at V = I (check/dimension/identitypoint.py)
        return identitypoint.check_lower(cert, lw, arch)
    return plainpoint.graded_lower(cert, lw, "plain point", lambda p: plainpoint.plain_rank(arch, p))


def _check_structured_upper(cert: dict, uw: dict, arch: Arch) -> int:
    if uw["structured"] in ("criterion point", "explicit kernel"):  # docs/math.md §8.4
        return criterionpoint.check_upper(cert, uw, arch)
    if arch.tied:
        reject("a layer with shared keys or biases has an explicit-kernel upper witness")
    if uw["structured"] == "stack point":
        return stackpoint.check_upper(cert, uw, arch, _expected_families(arch) + kernelfields.expected(arch))
    if uw["structured"] == "head point":  # (its size limits are checked first, there)
        return headpoint.check_upper(cert, uw, arch, _expected_families(arch) + kernelfields.expected(arch))
    if not arch.plain:
        reject("structured witnesses are for one head per layer, V unfactored, no residual and no mask")
    if uw["structured"] == "identity values":
        return identitypoint.check_upper(cert, uw, arch, _expected_families(arch) + kernelfields.expected(arch))
    return plainpoint.check_upper(cert, uw, arch, _expected_families(arch) + kernelfields.expected(arch))


def _span_bound(arch: Arch) -> int | None:
    """One lightning layer beyond [HMK]'s model lies in the span of ``X [+] L(sym T)`` (docs/multihead.md §4)."""
    if arch.plain or len(arch.ranks) != 1 or arch.normalization != "lightning":
        return None
    d, dd = arch.widths
    return dd * d * (d + 1) * (d + 2) // 6 if arch.tokens == 1 else dd * d * d * (d + 1) // 2


def _check_span_upper(cert: dict, uw: dict, arch: Arch) -> int:
    span = _span_bound(arch)
    if span is not None and uw.get("ambient") == "tensor of bounded rank":
        return _check_rank_upper(cert, uw, arch, span)
    if span is None or set(uw) != {"ambient", "coefficients"} or uw["ambient"] != "symmetric tensor":
        reject("a span upper bound is for one lightning layer beyond [HMK]'s model: ambient = 'symmetric tensor' "
               "and coefficients")
    if integer(uw["coefficients"], "upper_witness.coefficients", 0) != span \
            or integer(field(cert, "upper"), "upper") != span:
        reject(f"the span of this layer's functions has dimension at most {span}; upper and coefficients must say so")
    return span


def _check_rank_upper(cert: dict, uw: dict, arch: Arch, span: int) -> int:
    """``sym T`` as a matrix: ``output`` (``d'`` rows) has rank ``<= h b`` (``h min(d, d')`` unfactored),
    ``output-query`` (``d' d`` rows, ``t >= 2``) rank ``<= h a b``; rank ``<= r < min(m, n)`` is a variety of
    dimension ``r (m + n - r)`` (docs/multihead.md §4)."""
    if set(uw) != {"ambient", "flattening", "rows", "columns", "rank"}:
        reject("a rank upper bound has exactly ambient, flattening, rows, columns and rank")
    (d, d_out), h, a = arch.widths, arch.head_count(1), arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks else min(d, d_out)  # rank V_j = O_j U_j <= b
    shapes = {"output": (d_out, span // d_out, h * b)}
    if arch.tokens >= 2:  # T[o, r, p, q] = V[o, r] A[p, q]: (o, q) x {r, p} has rank <= rank V rank A per head
        shapes["output-query"] = (d_out * d, span // (d_out * d), h * b * min(a, d))
    if not isinstance(uw["flattening"], str) or uw["flattening"] not in shapes:
        reject(f"upper_witness.flattening must be one of {', '.join(sorted(shapes))} for this architecture")
    m, n, r = shapes[uw["flattening"]]
    claimed = tuple(integer(uw[k], f"upper_witness.{k}", 0) for k in ("rows", "columns", "rank"))
    if claimed != (m, n, r) or r >= min(m, n):
        reject(f"the {uw['flattening']} flattening is {m} x {n} of rank at most {r}"
               + ("" if r < min(m, n) else ", which bounds nothing below the span"))
    if integer(field(cert, "upper"), "upper") != r * (m + n - r):
        reject(f"matrices of rank <= {r} of size {m} x {n} have dimension {r * (m + n - r)}; upper must say so")
    return r * (m + n - r)


def _layer_arch(arch: Arch, i: int) -> Arch:
    """Layer ``i`` (1-based) alone: its widths, rank, heads, value rank, and the network's tokens and flags."""
    return Arch(arch.widths[i - 1: i + 1], arch.ranks[i - 1: i], arch.tokens, arch.normalization,
                (arch.head_count(i),), None if arch.value_ranks is None else arch.value_ranks[i - 1: i],
                arch.residual, arch.causal)


def _one_token_outputs(W: dict, i: int, h: int, X: np.ndarray, p: int) -> np.ndarray:
    """Rows ``Σ_j V_ij x (xᵀ K_ijᵀ Q_ij x)`` mod p for the rows ``x`` of ``X`` (``V = O U`` when factored)."""
    out = np.zeros((len(X), (W[(i, 1, "V")] if (i, 1, "V") in W else W[(i, 1, "O")]).shape[0]), dtype=np.int64)
    for j in range(1, h + 1):
        V = W[(i, j, "V")] if (i, j, "V") in W else product(W[(i, j, "O")], W[(i, j, "U")], p=p)
        for row, x in enumerate(X):  # x'K'Q x = (K x) . (Q x); entries < p < 2^26, at most 2047 terms
            score = int(np.mod(product(W[(i, j, "K")], x[:, None], p=p)[:, 0]
                               @ product(W[(i, j, "Q")], x[:, None], p=p)[:, 0], p))
            out[row] = np.mod(out[row] + score * product(V, x[:, None], p=p)[:, 0], p)
    return out


def _check_composition_upper(cert: dict, uw: dict, arch: Arch) -> int:
    """``dim M <= Σ_i dim M_i - Σ_{i<l} d_i^2`` (docs/multihead.md §4): each layer's bound is checked as a one-layer
    upper witness; each hidden layer's outputs must span (``d_i`` inputs with independent outputs, so ``GL_{d_i}``
    acts with trivial stabilizer); no subtraction with a residual connection."""
    if arch.plain or len(arch.ranks) < 2 or arch.normalization != "lightning":
        reject("a composition upper bound is for deep lightning networks beyond [HMK]'s model")
    if set(uw) != {"ambient", "prime", "point", "inputs", "layers"}:
        reject("a composition upper bound has exactly ambient, prime, point, inputs and layers")
    layers, inputs = uw["layers"], uw["inputs"]
    hidden = [] if arch.residual else list(range(1, len(arch.ranks)))
    if not isinstance(layers, list) or len(layers) != len(arch.ranks) or not isinstance(inputs, list) \
            or len(inputs) != len(hidden):
        reject("upper_witness.layers needs one bound per layer and inputs one matrix per hidden width (none with a "
               "residual connection)")
    one_layer = set(SCHEMA["upper_witness"]) - {"inputs", "layers"}
    for i, layer in enumerate(layers, start=1):
        if not isinstance(layer, dict) or set(layer) != {"upper", "upper_witness"} \
                or not isinstance(layer["upper_witness"], dict) or not set(layer["upper_witness"]) <= one_layer:
            reject(f"upper_witness.layers[{i - 1}] must hold upper and a one-layer upper_witness")
    # each layer's witness is priced by its own limits; their sum is priced here, before any is checked, so
    # that l layers cannot buy l times one witness's time (the dense field minors dominate: n^3 each)
    ranks = [integer(layer["upper_witness"].get("field_rank", 0), f"upper_witness.layers[{i}].upper_witness.field_rank",
                     0) for i, layer in enumerate(layers)]
    if sum(min(r, MAX_DENSE_MINOR) ** 3 for r in ranks) > MAX_DENSE_MINOR ** 3:
        raise CertificateFormatError(f"the layers' field minors ({', '.join(map(str, ranks))} rows) cost more together "
                                     f"than one {MAX_DENSE_MINOR}-row minor, the checker's limit (docs/trust.md)")
    total = 0
    for i, layer in enumerate(layers, start=1):
        total += _check_upper(layer, _layer_arch(arch, i))
    _, p, point = _witness(cert, "upper_witness", arch)
    W = _weights(point, arch)
    for i in hidden:
        d_in, d_out = arch.widths[i - 1], arch.widths[i]
        X = int_array(inputs[i - 1], (d_out, d_in), f"upper_witness.inputs[{i - 1}]", bits=31) % p
        if det(_one_token_outputs(W, i, arch.head_count(i), X, p), p) == 0:
            reject(f"the outputs of layer {i} at upper_witness.inputs[{i - 1}] are dependent mod {p}: they do not "
                   f"show that the layer's outputs span dimension {d_out}")
        total -= d_out * d_out
    if integer(field(cert, "upper"), "upper") != total:
        reject(f"the layers' bounds minus the hidden groups give {total}; upper must say so")
    return total


def _check_upper(cert: dict, arch: Arch) -> int:
    uw0 = field(cert, "upper_witness")
    if isinstance(uw0, dict) and uw0.get("ambient") == "composition":
        return _check_composition_upper(cert, uw0, arch)
    if isinstance(uw0, dict) and "structured" in uw0:
        return _check_structured_upper(cert, uw0, arch)
    if arch.tied:  # the families and their identities are written for untied heads
        reject("a layer with shared keys or biases has an explicit-kernel upper witness")
    if isinstance(uw0, dict) and "ambient" in uw0:
        return _check_span_upper(cert, uw0, arch)
    if isinstance(uw0, dict) and {"coefficients", "flattening", "rank", "inputs", "layers"} & set(uw0):
        reject("coefficients, flattening, rank, inputs and layers belong to a tensor or composition upper bound (with "
               "ambient), not to a field witness")
    uw, p, point = _witness(cert, "upper_witness", arch)
    P = arch.parameters
    fams = field(uw, "families", "upper_witness.")
    groups, kernel = _expected_families(arch), kernelfields.expected(arch)
    found = []
    if isinstance(fams, list) and len(fams) == len(groups + kernel) + 1 and isinstance(fams[-1], dict) \
            and fams[-1].get("kind") == "discovered":
        found = discovery.verified(arch, fams[-1])  # each field's identity re-proved by expansion here
        fams = fams[:-1]
    if json.dumps(fams) != json.dumps(groups + kernel):  # as text: true is not 1
        reject("upper_witness.families must be the symmetry groups and then the kernel families that apply to this "
               "architecture, in canonical order (docs/invariance.md)")
    for kind in {f["kind"] for f in groups}:
        holds = identities_hold(kind, arch.normalization != "lightning") if arch.plain \
            else head_identities_hold(kind, arch.value_ranks is not None)
        if not holds:  # pragma: no cover - own definitions
            reject(f"the invariance identity of the {kind} family does not hold")
    rank = integer(field(uw, "field_rank", "upper_witness."), "upper_witness.field_rank", 0)
    _minor_size(rank, "field")
    entries = _field_entries(arch, len(found) if found else 0)
    if entries > MAX_FIELD_ENTRIES:
        raise CertificateFormatError(f"the upper witness needs a field matrix of {entries:,} entries, above the "
                                     f"checker's limit of {MAX_FIELD_ENTRIES:,} (docs/trust.md)")
    if kernelfields.mixing_work(arch, kernel) > MAX_MIXING_MOVES:
        raise CertificateFormatError(f"the mixing families need {kernelfields.mixing_work(arch, kernel):,} head moves "
                                     f"at the point, above the checker's limit of {MAX_MIXING_MOVES:,} (docs/trust.md)")
    F = _field_matrix(arch, point, p, found)
    rows = index_list(field(uw, "rows", "upper_witness."), rank, F.shape[0], "upper_witness.rows")
    cols = index_list(field(uw, "columns", "upper_witness."), rank, P, "upper_witness.columns")
    _check_minor(F[np.ix_(rows, cols)], p, field(uw, "determinant", "upper_witness."), "field")
    upper = integer(field(cert, "upper", ""), "upper")
    if upper != P - rank:
        reject(f"upper = {upper} but parameters - field rank = {P} - {rank} = {P - rank}")
    return upper


def check(cert: dict) -> str:
    """Re-verify a dimension certificate from its data alone; the claim it proves.

    The lower bound: the recorded minor of the Jacobian (forward mode, or a ball
    determinant for normalized networks) must be nonsingular with the recorded
    determinant. The upper bound: the families must be exactly those that
    apply, their identities must hold, and the recorded minor of the fields
    must be nonsingular. Then the claim follows from the verified numbers.

    Parameters
    ----------
    cert : dict
        A parsed certificate of kind ``dimension`` (as
        :meth:`attngeo.DimensionCertificate.to_json` gives it).

    Returns
    -------
    str
        ``dim M = ...``, or the bounds when they differ.

    Raises
    ------
    CertificateRejected
        Naming the first field that does not verify.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.dimension.dense import check
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
    >>> check(cert)
    'dim M = 6 for widths 2,2, ranks 1, t=2'
    >>> check(dict(cert, lower=7))          # refused before any witness is replayed
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower bound 7 exceeds upper bound 6
    >>> check(dict(cert, lower=5, certified=False, dimension=None))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower = 5 but the witness has rank 6

    A forged determinant, or an upper witness without its scaling family, is refused:

    >>> p = cert["lower_witness"]["prime"]
    >>> forged = dict(cert, lower_witness=dict(cert["lower_witness"], determinant=(cert["lower_witness"]["determinant"] + 1) % p))
    >>> check(forged)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the Jacobian minor has determinant ..., the certificate records ...
    >>> check(dict(cert, upper_witness=dict(cert["upper_witness"], families=cert["upper_witness"]["families"][:1])))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: upper_witness.families must be the symmetry groups and then the kernel families ...

    The claim names the kernel fields beyond the groups when there are any:

    >>> check(certify_dimension(Architecture((2, 3, 2), (2, 2)), seed=0).to_json())
    'dim M = 10 for widths 2,3,2, ranks 2,2, t=2 (kernel fields beyond the groups: annihilator(2))'
    """
    lw, uw = cert.get("lower_witness"), cert.get("upper_witness")
    criterion_only = all(isinstance(w, dict) and w.get("structured") == "criterion point" for w in (lw, uw))
    arch = architecture(cert, wide=criterion_only)  # Theorem C's ranks are FLINT's: wider than int64 sums allow
    P = arch.parameters
    if integer(field(cert, "parameters"), "parameters") != P:
        reject(f"parameters = {cert['parameters']} but the architecture has {P}")
    # cheap things first: the recorded claim must hang together before any witness is replayed, and the upper
    # witness (index formulas, usually the cheaper) goes before the lower, which may then claim at most that much
    lower = integer(field(cert, "lower"), "lower", 0, P)
    upper = integer(field(cert, "upper"), "upper", 0, P)
    if lower > upper:
        reject(f"lower bound {lower} exceeds upper bound {upper}")
    certified = field(cert, "certified")
    if certified is not (lower == upper):
        reject(f"certified = {certified!r} but lower = {lower}, upper = {upper}")
    dim = field(cert, "dimension")
    if (dim is not None and type(dim) is not int) or dim != (lower if lower == upper else None):  # 92.0 is not 92
        reject(f"dimension does not follow from lower = {lower}, upper = {upper}")
    _dense_price(cert, arch)
    if _check_upper(cert, arch) != upper or _check_lower(cert, arch) != lower:  # pragma: no cover - each checks its own
        reject("a witness proves another bound than the one recorded")
    uw = cert["upper_witness"]
    named = "families" in uw and "ambient" not in uw  # a span bound uses no field: name none
    names = [f"{f['kind']}({f['layer']})" for f in kernelfields.expected(arch)] if named else []
    hidden = f" (kernel fields beyond the groups: {', '.join(names)})" if names else ""
    if lower == upper:
        return f"dim M = {lower} for {arch.describe()}{hidden}"
    return f"{lower} <= dim M <= {upper} for {arch.describe()} (bounds, not a dimension){hidden}"
