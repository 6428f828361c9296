"""The independent certificate checker.

It re-verifies a certificate from its JSON alone and shares no code with the
computing path (network, jacobian, symmetry, rank, freealgebra, dimension):
only reading the file and the exception types. Where the computing path uses
reverse-mode differentiation, this checker differentiates in *forward* mode,
one parameter column at a time (batched), so an error in either is unlikely to
be repeated in the other. Its own definitions are the mathematics itself:

* the layer ``phi(Y) = V Y (Y^T K^T Q Y)`` (word ``V Y Y' K' Q Y``);
* the symmetry families of [HMK] with their tangent formulas, written here as
  index formulas rather than matrix products;
* the certificate format, version 1 (docs/certificates.md).

Outcomes: :class:`CheckResult` (valid), :class:`CertificateRejected` (a claim
that does not verify, exit 1) and :class:`CertificateFormatError` (unusable
input, exit 2).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from flint import fmpz, nmod_mat

from .certificate import read_json
from .exceptions import CannotVerify, CertificateFormatError, CertificateRejected

SUPPORTED_VERSIONS = (1,)
_MAX_PRIME = 1 << 26  # keeps every sum of products below 2**63 for inner sizes < 2048
_MAX_INNER = 2047
_COLUMN_BATCH = 128


@dataclass(frozen=True)
class CheckResult:
    """A certificate that verified, with a one-line description of what it proves."""

    path: str
    kind: str
    claim: str


def _reject(reason: str):
    raise CertificateRejected(reason)


def _field(data: dict, key: str, where: str):
    if key not in data:
        _reject(f"missing field {where}{key}")
    return data[key]


def _int(value, name: str, lo: int | None = None, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        _reject(f"{name} must be an integer, got {value!r}")
    if lo is not None and value < lo:
        _reject(f"{name} = {value} is below {lo}")
    if hi is not None and value > hi:
        _reject(f"{name} = {value} is above {hi}")
    return value


def _int_array(value, shape: tuple, name: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=object)
    except Exception:  # ragged nesting
        _reject(f"{name} is not a rectangular array of integers")
    if arr.shape != shape:
        _reject(f"{name} has shape {arr.shape}, expected {shape}")
    for v in arr.flat:
        if isinstance(v, bool) or not isinstance(v, int) or abs(v) >= 1 << 62:
            _reject(f"{name} contains {v!r}, not an integer of at most 62 bits")
    return arr.astype(np.int64)


def _index_list(value, n: int, bound: int, name: str) -> list[int]:
    if not isinstance(value, list) or len(value) != n:
        _reject(f"{name} must list exactly {n} indices")
    for v in value:
        _int(v, f"entry of {name}", 0, bound - 1)
    if len(set(value)) != n:
        _reject(f"{name} repeats an index")
    return value


def _prime(value, name: str) -> int:
    p = _int(value, name, 2, _MAX_PRIME - 1)
    if not fmpz(p).is_prime():
        _reject(f"{name} = {p} is not prime")
    return p


# -- the architecture, re-read --------------------------------------------------------


@dataclass(frozen=True)
class _Arch:
    widths: tuple
    ranks: tuple
    tokens: int
    normalization: str = "lightning"

    def shapes(self):
        """``(layer, name, rows, cols, offset)`` in flattening order."""
        out, offset = [], 0
        for i, a in enumerate(self.ranks, start=1):
            d_in, d_out = self.widths[i - 1], self.widths[i]
            for name, rows in (("Q", a), ("K", a), ("V", d_out)):
                out.append((i, name, rows, d_in, offset))
                offset += rows * d_in
        return out

    @property
    def parameters(self) -> int:
        return sum(r * c for _, _, r, c, _ in self.shapes())


def _architecture(cert: dict) -> _Arch:
    a = _field(cert, "architecture", "")
    if not isinstance(a, dict):
        _reject("architecture must be an object")
    widths, ranks = _field(a, "widths", "architecture."), _field(a, "ranks", "architecture.")
    if not isinstance(widths, list) or not isinstance(ranks, list) or len(widths) < 2 or len(ranks) != len(widths) - 1:
        _reject("architecture needs widths d_0..d_l and one rank per layer")
    for k, v in enumerate(widths + ranks):
        _int(v, "a width or rank", 1, _MAX_INNER)
    tokens = _int(_field(a, "tokens", "architecture."), "architecture.tokens", 1, _MAX_INNER)
    normalization = _field(a, "normalization", "architecture.")
    if not isinstance(normalization, str):
        _reject("architecture.normalization must be a name")
    if normalization != "lightning" and cert.get("kind") != "dimension":
        _reject(f"{cert.get('kind')} certificates are for lightning networks")
    return _Arch(tuple(widths), tuple(ranks), tokens, normalization)


def _single_layer(cert: dict) -> tuple[_Arch, int, int, int]:
    """The architecture of a single-layer certificate (``t >= 2``) and its ``d, d', a``."""
    arch = _architecture(cert)
    if len(arch.ranks) != 1 or arch.tokens < 2:
        _reject(f"{cert.get('kind')} certificates are for single-layer networks with t >= 2 tokens")
    return arch, arch.widths[0], arch.widths[1], arch.ranks[0]


def _weights(point: np.ndarray, arch: _Arch) -> dict:
    return {(i, name): point[off : off + r * c].reshape(r, c) for i, name, r, c, off in arch.shapes()}


def _check_minor(matrix: np.ndarray, p: int, recorded, what: str) -> None:
    """The minor must be nonsingular and its determinant the one recorded.

    Matching the recorded determinant binds the witness to its data: a changed
    prime, point or input would usually still give *some* nonsingular minor,
    but not this determinant.
    """
    recorded = _int(recorded, f"{what} determinant", 0, p - 1)
    n = matrix.shape[0]
    det = 1 if n == 0 else int(nmod_mat(n, n, np.mod(matrix, p).ravel().tolist(), p).det())
    if det == 0:
        _reject(f"the {what} minor ({n} x {n}) is singular mod {p}: its rank is not proved")
    if det != recorded:
        _reject(f"the {what} minor has determinant {det} mod {p}, the certificate records {recorded}")


# -- lower bound: forward-mode Jacobian on the witness columns -------------------------


def _mm(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    return np.einsum("...ij,...jk->...ik", a, b) % p


def _tr(a: np.ndarray) -> np.ndarray:
    return np.swapaxes(a, -1, -2)


def _layer_tangent(W, Y, dY, dQ, dK, dV, p):
    """Forward derivative of ``V Y (Y^T K^T Q Y)``; ``None`` tangents are zero."""
    Q, K, V = W
    A = _mm(_tr(K), Q, p)
    G = _mm(_mm(_tr(Y), A, p), Y, p)
    VY = _mm(V, Y, p)
    terms = []
    dA = None
    if dQ is not None:
        dA = _mm(_tr(K), dQ, p)
    if dK is not None:
        part = _mm(_tr(dK), Q, p)
        dA = part if dA is None else (dA + part) % p
    dG = None
    if dA is not None:
        dG = _mm(_mm(_tr(Y), dA, p), Y, p)
    if dY is not None:
        YA = _mm(_tr(Y), A, p)
        part = (_mm(_mm(_tr(dY), A, p), Y, p) + _mm(YA, dY, p)) % p
        dG = part if dG is None else (dG + part) % p
        terms.append(_mm(_mm(V, dY, p), G, p))
    if dG is not None:
        terms.append(_mm(VY, dG, p))
    if dV is not None:
        terms.append(_mm(_mm(dV, Y, p), G, p))
    out = terms[0]
    for t in terms[1:]:
        out = (out + t) % p
    return out


def _jacobian_columns(arch: _Arch, point, X, w, cols, p) -> np.ndarray:
    """Rows ``(n, r)`` of the Jacobian of ``<w[n, r], phi(X_n)>`` at the columns ``cols``."""
    W = _weights(point, arch)
    l = len(arch.ranks)
    layers = [tuple(W[(i, n)] for n in "QKV") for i in range(1, l + 1)]
    Ys = [X]
    for Q, K, V in layers:  # primal values, batched over inputs
        Y = Ys[-1]
        A = _mm(_tr(K), Q, p)
        Ys.append(_mm(_mm(V, Y, p), _mm(_mm(_tr(Y), A, p), Y, p), p))
    where = {}
    for i, name, r, c, off in arch.shapes():
        for k in range(r * c):
            where[off + k] = (i, name, k // c, k % c, r, c)
    N, R = w.shape[0], w.shape[1]
    out = np.zeros((N * R, len(cols)), dtype=np.int64)
    for start in range(0, len(cols), _COLUMN_BATCH):
        batch = cols[start : start + _COLUMN_BATCH]
        by_layer: dict[int, list[int]] = {}
        for pos, col in enumerate(batch):
            by_layer.setdefault(where[col][0], []).append(pos)
        for i, positions in by_layer.items():
            C = len(positions)
            tangents = {}
            for name in "QKV":
                r, c = W[(i, name)].shape
                tangents[name] = np.zeros((C, 1, r, c), dtype=np.int64)
            for k, pos in enumerate(positions):
                _, name, rr, cc, _, _ = where[batch[pos]]
                tangents[name][k, 0, rr, cc] = 1
            dY = _layer_tangent(layers[i - 1], Ys[i - 1], None, tangents["Q"], tangents["K"], tangents["V"], p)
            for j in range(i + 1, l + 1):
                dY = _layer_tangent(layers[j - 1], Ys[j - 1], dY, None, None, None, p)
            # dY: (C, N, d_l, t); rows (n, r) = sum_{k,j} w[n, r, k, j] dY[c, n, k, j]
            rows = np.einsum("nrkj,cnkj->nrc", w, dY) % p
            out[:, [start + pos for pos in positions]] = rows.reshape(N * R, C)
    return out


def _witness(cert: dict, key: str, arch: _Arch) -> tuple[dict, int, np.ndarray]:
    """A witness object with its prime and its point reduced mod that prime."""
    w = _field(cert, key, "")
    if not isinstance(w, dict):
        _reject(f"{key} must be an object")
    p = _prime(_field(w, "prime", f"{key}."), f"{key}.prime")
    point = _int_array(_field(w, "point", f"{key}."), (arch.parameters,), f"{key}.point") % p
    return w, p, point


def _check_lower(cert: dict, arch: _Arch) -> int:
    if arch.normalization != "lightning":  # exp is not polynomial: the witness is a ball determinant
        from .ballcheck import check_ball_lower

        return check_ball_lower(cert, arch)
    lw, p, point = _witness(cert, "lower_witness", arch)
    P = arch.parameters
    inputs = _field(lw, "inputs", "lower_witness.")
    N = len(inputs) if isinstance(inputs, list) else -1
    if N < 1:
        _reject("lower_witness.inputs must be a non-empty list of d_0 x t matrices")
    X = _int_array(inputs, (N, arch.widths[0], arch.tokens), "lower_witness.inputs") % p
    functionals = _field(lw, "functionals", "lower_witness.")
    c = len(functionals[0]) if isinstance(functionals, list) and functionals and isinstance(functionals[0], list) else -1
    if c < 1:
        _reject("lower_witness.functionals must hold c >= 1 functionals per input")
    w = _int_array(functionals, (N, c, arch.widths[-1], arch.tokens), "lower_witness.functionals") % p
    rank = _int(_field(lw, "rank", "lower_witness."), "lower_witness.rank", 0)
    if rank != _int(_field(cert, "lower", ""), "lower"):
        _reject(f"lower = {cert['lower']} but the witness has rank {rank}")
    rows = _index_list(_field(lw, "rows", "lower_witness."), rank, N * c, "lower_witness.rows")
    cols = _index_list(_field(lw, "columns", "lower_witness."), rank, P, "lower_witness.columns")
    J = _jacobian_columns(arch, point, X, w, cols, p)
    _check_minor(J[rows], p, _field(lw, "determinant", "lower_witness."), "Jacobian")
    return rank


# -- upper bound: invariance identities and the field minor -----------------------------


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


# The families and their tangents as words (E = Lie algebra element).
_LAYER = ("V", "Y", "Y'", "K'", "Q", "Y")
_IDENTITIES = {
    "intra": [({"Q": {("E", "Q"): 1}, "K": {("E'", "K"): -1}}, {})],
    "scaling": [({"Q": {("Q",): 1}, "V": {("V",): -1}}, {})],
    "inter": [
        ({"V": {("E", "V"): 1}}, {("E",) + _LAYER: 1}),  # outgoing: D phi = E phi
        ({"Y": {("E", "Y"): 1}, "Q": {("Q", "E"): -1}, "K": {("K", "E"): -1}, "V": {("V", "E"): -1}}, {}),
    ],
}


# Normalized layers V Y S(Y' K' Q Y): the families must fix the score and the value
# (the inter family's outgoing side moves the value by E), for any normalizer S.
_SCORE, _VALUE = ("Y'", "K'", "Q", "Y"), ("V", "Y")


def _identities_hold(kind: str, normalized: bool = False) -> bool:
    for tangent, expected in _IDENTITIES[kind]:
        if not normalized:
            if _word_derivative(_LAYER, tangent) != expected:
                return False
            continue
        moves_value = {("E",) + _VALUE: 1} if expected else {}
        if _word_derivative(_SCORE, tangent) != {} or _word_derivative(_VALUE, tangent) != moves_value:
            return False
    return True


def _expected_families(arch: _Arch) -> list[dict]:
    out = []
    for i, a in enumerate(arch.ranks, start=1):
        out.append({"kind": "intra", "layer": i, "size": a * a})
        if arch.normalization == "lightning":  # a normalizer is not homogeneous: no scaling symmetry
            out.append({"kind": "scaling", "layer": i, "size": 1})
        if i < len(arch.ranks):
            out.append({"kind": "inter", "layer": i, "size": arch.widths[i] ** 2})
    return out


def _field_rows(arch: _Arch, point: np.ndarray, p: int) -> np.ndarray:
    """Every field vector at ``point``, by index formulas (see the module docstring)."""
    W = _weights(point, arch)
    offsets = {(i, name): off for i, name, _, _, off in arch.shapes()}
    P, l = arch.parameters, len(arch.ranks)

    def put(vec, i, name, mat):
        off = offsets[(i, name)]
        vec[off : off + mat.size] = mat.ravel() % p

    rows = []
    for i in range(1, l + 1):
        Q, K, V = W[(i, "Q")], W[(i, "K")], W[(i, "V")]
        a = arch.ranks[i - 1]
        for u in range(a):
            for v in range(a):  # E = e_u e_v^T: dQ = E Q, dK = -E^T K
                vec = np.zeros(P, dtype=np.int64)
                dQ, dK = np.zeros_like(Q), np.zeros_like(K)
                dQ[u, :] = Q[v, :]
                dK[v, :] = -K[u, :]
                put(vec, i, "Q", dQ)
                put(vec, i, "K", dK)
                rows.append(vec)
        if arch.normalization == "lightning":
            vec = np.zeros(P, dtype=np.int64)
            put(vec, i, "Q", Q)
            put(vec, i, "V", -V)
            rows.append(vec)
        if i < l:
            Vi = V
            Qn, Kn, Vn = W[(i + 1, "Q")], W[(i + 1, "K")], W[(i + 1, "V")]
            d = arch.widths[i]
            for u in range(d):
                for v in range(d):  # dV_i = E V_i; d(Q,K,V)_{i+1} = -(.) E
                    vec = np.zeros(P, dtype=np.int64)
                    dV = np.zeros_like(Vi)
                    dV[u, :] = Vi[v, :]
                    put(vec, i, "V", dV)
                    for name, M in (("Q", Qn), ("K", Kn), ("V", Vn)):
                        dM = np.zeros_like(M)
                        dM[:, v] = -M[:, u]
                        put(vec, i + 1, name, dM)
                    rows.append(vec)
    return np.array(rows, dtype=np.int64).reshape(len(rows), P)


def _check_upper(cert: dict, arch: _Arch) -> int:
    uw, p, point = _witness(cert, "upper_witness", arch)
    P = arch.parameters
    fams = _field(uw, "families", "upper_witness.")
    if fams != _expected_families(arch):
        _reject("upper_witness.families is not the symmetry families of this architecture in canonical order")
    for kind in {f["kind"] for f in fams}:
        if not _identities_hold(kind, arch.normalization != "lightning"):  # pragma: no cover - own definitions
            _reject(f"the invariance identity of the {kind} family does not hold")
    rank = _int(_field(uw, "field_rank", "upper_witness."), "upper_witness.field_rank", 0)
    F = _field_rows(arch, point, p)
    rows = _index_list(_field(uw, "rows", "upper_witness."), rank, F.shape[0], "upper_witness.rows")
    cols = _index_list(_field(uw, "columns", "upper_witness."), rank, P, "upper_witness.columns")
    _check_minor(F[np.ix_(rows, cols)], p, _field(uw, "determinant", "upper_witness."), "field")
    upper = _int(_field(cert, "upper", ""), "upper")
    if upper != P - rank:
        _reject(f"upper = {upper} but parameters - field rank = {P} - {rank} = {P - rank}")
    return upper


def _check_dimension(cert: dict) -> str:
    arch = _architecture(cert)
    P = arch.parameters
    if _int(_field(cert, "parameters", ""), "parameters") != P:
        _reject(f"parameters = {cert['parameters']} but the architecture has {P}")
    lower = _check_lower(cert, arch)
    upper = _check_upper(cert, arch)
    if lower > upper:
        _reject(f"lower bound {lower} exceeds upper bound {upper}")
    certified = _field(cert, "certified", "")
    if certified is not (lower == upper):
        _reject(f"certified = {certified!r} but lower = {lower}, upper = {upper}")
    dim = _field(cert, "dimension", "")
    if dim != (lower if lower == upper else None):
        _reject(f"dimension = {dim!r} does not follow from lower = {lower}, upper = {upper}")
    w, a = ",".join(map(str, arch.widths)), ",".join(map(str, arch.ranks))
    norm = "" if arch.normalization == "lightning" else f", {arch.normalization}"
    if lower == upper:
        return f"dim M = {lower} for widths {w}, ranks {a}, t={arch.tokens}{norm}"
    return f"{lower} <= dim M <= {upper} for widths {w}, ranks {a}, t={arch.tokens}{norm}"


# The other kinds live in their own modules, which build on the readers above, so they
# are imported when first needed (importing them here would be circular).
_KIND_CHECKERS = {
    "fiber": ("fibercheck", "check_fiber"),
    "deep-fiber": ("deepfibercheck", "check_deep_fiber"),
    "singular-point": ("singularcheck", "check_singular_point"),
    "strata": ("stratacheck", "check_strata"),
    "implicit": ("implicitcheck", "check_implicit"),
    "boundary-point": ("boundarycheck", "check_boundary_point"),
}
_CHECKERS = ("dimension", *_KIND_CHECKERS)


def _checker(kind: str):
    if kind == "dimension":
        return _check_dimension
    module, name = _KIND_CHECKERS[kind]
    return getattr(importlib.import_module(f".{module}", __package__), name)


def check_certificate(source: str | os.PathLike | dict) -> CheckResult:
    """Re-verify one certificate (a path or an already-loaded dict).

    Raises
    ------
    CertificateRejected
        The claim does not verify; the message says which part failed.
    CertificateFormatError
        The input is not a readable attngeo certificate.
    """
    if isinstance(source, dict):
        cert, path = source, "<dict>"
    else:
        path = str(source)
        cert = read_json(path)
    version = cert.get("version")
    if version not in SUPPORTED_VERSIONS:
        _reject(f"unknown certificate version {version!r} (this checker reads {SUPPORTED_VERSIONS})")
    kind = cert.get("kind")
    if kind not in _CHECKERS:
        _reject(f"unknown certificate kind {kind!r}")
    return CheckResult(path, kind, _checker(kind)(cert))


def check_folder(folder: str | os.PathLike) -> list[tuple[str, CheckResult | Exception]]:
    """Check every ``*.json`` below ``folder``; returns ``(path, result or error)`` pairs."""
    root = Path(folder)
    if not root.is_dir():
        raise CertificateFormatError(f"{folder} is not a folder")
    out = []
    for path in sorted(root.rglob("*.json")):
        try:
            out.append((str(path), check_certificate(path)))
        except (CertificateRejected, CertificateFormatError, CannotVerify) as exc:
            out.append((str(path), exc))
    return out
