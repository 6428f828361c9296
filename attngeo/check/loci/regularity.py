"""Independent re-verification of local-rank certificates (kind ``local-rank``, docs/math.md §7.5).

From the point alone the checker recomputes every head's ranks (mod the recorded
prime where that rank is full, which proves it; over Q otherwise), then:

* the **upper bound** ``sum_j I_j`` from those ranks (docs/math.md §7.5, Lemma U);
* the **lower bound** from its witness: a set of heads that the checker finds
  separated (stacked ``O`` and ``Q`` of full rank mod ``p``, full head ranks, and
  (S4): a full stacked ``K`` when ``max(a, b) >= 2``, else every pair's
  ``(row K, row U)`` shown different, swapped included; Theorem S), or one head (Lemma H), or a minor of the network's
  Jacobian at the point recomputed in forward mode
  (:mod:`attngeo.check.dimension.dense`'s own columns at the point's residues),
  or, for softmax, a minor at the point whose determinant ball excludes 0
  (:mod:`attngeo.check.dimension.ball`'s replay, bound to the point);
* the orbit dimension and the fiber of the reported head from the ranks;
* ``dim M`` between the local rank and ``P`` minus the orbit's dimension, met with the
  embedded dimension certificate (verified by the kernel) when there is one, and ``regular``.

No code is shared with the prover (:mod:`attngeo.geometry.loci.regularity`).
"""

from __future__ import annotations

import math
import re

import numpy as np
from flint import arb, ctx, fmpq_mat

from ...exceptions import CertificateFormatError
from .. import checkpoint
from ..arch import architecture
from ..dimension.ball import check_ball_lower
from ..dimension.dense import _check_minor, _jacobian_rows
from ..fibers.layer import product_strata
from ..limits import (MAX_EXACT_RANK_ENTRIES, MAX_LOCAL_JACOBIAN_PARAMETERS, MAX_LOCAL_JACOBIAN_WORK,
                      MAX_PAIR_TESTS)
from ..schema import ARCHITECTURE, CHECKED, HEADER, NUMBER, Embedded
from ..linalg import rank
from ..values import field, index_list, int_array, integer, obj, prime, rational, reject, seq
from . import criterion

_SCALE = re.compile(r"(-?[1-9][0-9]{0,29})(?:/([1-9][0-9]{0,29}))?(?:/sqrt\(([1-9][0-9]{0,11})\))?")

SCHEMA = {
    **HEADER, "architecture": ARCHITECTURE, "point": CHECKED, "prime": CHECKED, "heads": CHECKED,
    "parameters": CHECKED, "lower": CHECKED, "upper": CHECKED,
    "scale": CHECKED,
    # the checkpoint the point was read from: verified against the file given with --weights (check/checkpoint.py)
    "checkpoint": {"sha256": CHECKED, "bytes": CHECKED, "format": CHECKED, "layout": CHECKED, "prefix": CHECKED,
                   "layer": CHECKED, "tensors": CHECKED, "blocks": CHECKED, "dropped": CHECKED},
    "lower_witness": {"heads": CHECKED, "criterion": {"groups": CHECKED},
                      "ball": {"normalization": CHECKED, "point": CHECKED, "inputs": CHECKED, "functionals": CHECKED,
                               "precision": CHECKED, "rank": CHECKED, "rows": CHECKED, "columns": CHECKED,
                               "determinant": CHECKED},
                      "jacobian": {"prime": CHECKED, "inputs": CHECKED, "functionals": CHECKED, "rank": CHECKED,
                                   "rows": CHECKED, "columns": CHECKED, "determinant": CHECKED}},
    "orbit_dimension": CHECKED, "generic": CHECKED, "regular": CHECKED,
    "fiber": {"head": CHECKED, "case": CHECKED, "lines": CHECKED, "dimension": CHECKED},
    "dimension_certificate": Embedded("dimension"),
    "seconds": NUMBER,
}
#: Local-rank certificates may be checked against the checkpoint they bind (attngeo check --weights FILE).
BINDS_CHECKPOINT = True


class _Layer:
    """The point as exact rationals and its residues mod ``p``: from the certificate (strings, each distinct one
    read once), or from the checkpoint file it is bound to (``weights``: check/checkpoint.py)."""

    def __init__(self, cert: dict, arch, p: int, weights=None):
        self.arch, self.p = arch, p
        self.floats, self.values = None, None
        binding = cert.get("checkpoint")
        self.provenance = ""
        if binding is not None and not checkpoint.hash_only(binding):
            if "point" in cert:
                reject("a certificate bound to its checkpoint's tensors holds no point (it is read from the file)")
            self.floats, facts = checkpoint.read_point(binding, arch, weights)
            self.residues = checkpoint.residues(self.floats, p)
            layer = f", layer {facts['layer']}" if facts["layer"] is not None else ""
            self.provenance = (f"; the point is read from {facts['tensors']} tensors of the checkpoint with SHA-256 "
                               f"{facts['sha256']}{layer}")
        else:
            self._embedded(cert, arch, p)
            if binding is not None and weights is not None:
                digest, _ = checkpoint.verify_hash(binding, weights)
                self.provenance = (f"; the embedded point is said to come from the checkpoint with SHA-256 {digest} "
                                   "(the file matches; the checker does not read its format, so the point itself is "
                                   "not compared with it)")
            elif binding is not None:
                self.provenance = "; its checkpoint's SHA-256 is not checked (give --weights FILE)"
            elif weights is not None:
                raise CertificateFormatError("this certificate embeds its point and binds no checkpoint: check it "
                                             "without --weights")
        n = arch.group_size(1)
        self.blocks = {}
        for _, j, name, rows, cols, off in arch.blocks():
            shared = name in ("K", "U", "V", "bK", "bV") and n > 1  # a group's blocks, held by its first head
            for k in (range(j, j + n) if shared else (j,)):
                self.blocks[(k, name)] = (rows, cols, off)
        self._exact: dict = {}

    def _embedded(self, cert: dict, arch, p: int) -> None:
        self.values = seq(field(cert, "point"), "point", arch.parameters)
        seen: dict = {}  # a trained layer repeats values: each distinct string is read once
        residues = []
        for k, text in enumerate(self.values):
            r = seen.get(text) if isinstance(text, str) else None
            if r is None:
                x = rational(text, f"point[{k}]")
                if int(x.q) % p == 0:
                    reject(f"point[{k}] has a denominator divisible by the prime {p}")
                r = seen[text] = int(x.p) % p * pow(int(x.q), -1, p) % p
            residues.append(r)
        self.residues = np.array(residues, dtype=np.int64)

    def rationals(self, start: int = 0, stop: int | None = None) -> list:
        """The point's entries ``start..stop-1`` as exact rationals."""
        if self.floats is not None:
            return [checkpoint.exact(v) for v in self.floats[start:stop].tolist()]
        return [rational(v, "point") for v in self.values[start:stop]]

    def mod_p(self, j: int, name: str) -> np.ndarray:
        rows, cols, off = self.blocks[(j, name)]
        return self.residues[off: off + rows * cols].reshape(rows, cols)

    def exact(self, j: int, name: str) -> fmpq_mat:
        if (j, name) not in self._exact:
            rows, cols, off = self.blocks[(j, name)]
            self._exact[(j, name)] = fmpq_mat(rows, cols, self.rationals(off, off + rows * cols))
        return self._exact[(j, name)]




def _bounded(build, rows: int, cols: int, what: str) -> fmpq_mat:
    """The exact matrix ``build()`` makes, refused (before it is built) above the entry limit."""
    if rows * cols > MAX_EXACT_RANK_ENTRIES:
        raise CertificateFormatError(f"{what} needs its {rows} x {cols} matrix over Q ({rows * cols} entries), above "
                                     f"the checker's limit of {MAX_EXACT_RANK_ENTRIES} entries")
    return build()


def _exact_rank(build, rows: int, cols: int, what: str) -> int:
    """The rank over Q of ``build()`` (a matrix rank-deficient mod p), within the entry limit."""
    return _bounded(build, rows, cols, f"{what} is rank-deficient mod p: its rank").rank()


def _rank(layer: _Layer, j: int, name: str) -> int:
    """A block's rank over Q: full mod p proves it; otherwise the exact rank."""
    M = layer.mod_p(j, name)
    r = rank(M, layer.p)
    return r if r == min(M.shape) else _exact_rank(lambda: layer.exact(j, name), *M.shape, f"{name}_{j}")


def _product(left, right, r_left: int, r_right: int, inner: int, shape: tuple, what: str) -> int:
    """rank(left() right()) given both ranks: an injective left or surjective right factor decides it."""
    if min(r_left, r_right) == 0:
        return 0
    if r_left == inner:
        return r_right
    if r_right == inner:
        return r_left
    return _exact_rank(lambda: left() * right(), *shape, what)


def _first_nonzero_row(M: fmpq_mat) -> list:
    return next(([M[i, c] for c in range(M.ncols())] for i in range(M.nrows())
                 if any(M[i, c] != 0 for c in range(M.ncols()))), [])


def _heads(layer: _Layer) -> list[dict]:
    """Per head: the ranks of Q, K, A, (U, O), V and whether it is rank-1 parallel (row V = col A, both rank 1)."""
    arch = layer.arch
    a = arch.ranks[0]
    out = []
    for j in range(1, arch.head_count(1) + 1):
        h = {"head": j, "rank_Q": _rank(layer, j, "Q"), "rank_K": _rank(layer, j, "K")}
        d = arch.widths[0]
        h["rank_A"] = _product(lambda: layer.exact(j, "K").transpose(), lambda: layer.exact(j, "Q"),
                               h["rank_K"], h["rank_Q"], a, (d, d), f"A_{j}")
        if arch.value_ranks is None:
            h["rank_V"] = _rank(layer, j, "V")
            value = lambda: layer.exact(j, "V")  # noqa: E731
        else:
            h["rank_U"], h["rank_O"] = _rank(layer, j, "U"), _rank(layer, j, "O")
            value = lambda: layer.exact(j, "O") * layer.exact(j, "U")  # noqa: E731
            h["rank_V"] = _product(lambda: layer.exact(j, "O"), lambda: layer.exact(j, "U"), h["rank_O"],
                                   h["rank_U"], arch.value_ranks[0], (arch.widths[1], d), f"V_{j}")
        parallel = False
        if h["rank_A"] == 1 and h["rank_V"] == 1:
            parallel = fmpq_mat([_value_row(layer, j, h, value), _score_column(layer, j, h)]).rank() == 1
        out.append((h, parallel))
    return out


def _value_row(layer: _Layer, j: int, h: dict, value) -> list:
    """The row space of a rank-1 ``V_j``, as one exact row: a nonzero row of ``U`` when ``rank U = 1``, ``o U`` for a
    nonzero row ``o`` of ``O`` when ``rank O = 1`` (``b d`` products), else a row of the whole product (priced)."""
    if "rank_U" in h and h["rank_U"] == 1:
        return _first_nonzero_row(layer.exact(j, "U"))
    if "rank_O" in h and h["rank_O"] == 1:
        return _first_nonzero_row(fmpq_mat([_first_nonzero_row(layer.exact(j, "O"))]) * layer.exact(j, "U"))
    rows, cols = layer.arch.widths[1], layer.arch.widths[0]
    return _first_nonzero_row(_bounded(value, rows, cols, f"the rank-1 parallel test of V_{j} (factors of higher rank)"))


def _score_column(layer: _Layer, j: int, h: dict) -> list:
    """The column space of a rank-1 ``A_j = K^T Q``, as one exact column: a nonzero row of ``K`` when ``rank K = 1``,
    ``K^T q`` for a nonzero column ``q`` of ``Q`` when ``rank Q = 1`` (``a d`` products), else a column of ``A``."""
    if h["rank_K"] == 1:
        return _first_nonzero_row(layer.exact(j, "K"))
    if h["rank_Q"] == 1:  # Q = q r^T: A = (K^T q) r^T, and q is any nonzero column of Q
        return _first_nonzero_row(fmpq_mat([_first_nonzero_row(layer.exact(j, "Q").transpose())]) * layer.exact(j, "K"))
    d = layer.arch.widths[0]
    return _first_nonzero_row(_bounded(lambda: layer.exact(j, "K").transpose() * layer.exact(j, "Q"), d, d,
                                       f"the rank-1 parallel test of A_{j} (factors of higher rank)").transpose())



def _image(arch, h: dict, parallel: bool) -> int:
    """I_j of docs/math.md §7.5 from the ranks (the checker's own count)."""
    d, dd = arch.widths
    q, k = h["rank_Q"], h["rank_K"]
    t_qk = d * q + d * k - q * k
    t_v = dd * d if "rank_U" not in h else dd * h["rank_U"] + d * h["rank_O"] - h["rank_O"] * h["rank_U"]
    A0, V0 = h["rank_A"] == 0, h["rank_V"] == 0
    if arch.normalization != "lightning":
        return t_v if V0 else t_qk + t_v
    if A0 and V0:
        return 0
    if A0 or V0:
        return t_qk if A0 else t_v
    return t_qk + t_v - (d if parallel else 1)  # the kernel of one head: lambda in C^d, or the scaling alone


def _orbit(arch, h: dict) -> int:
    a = arch.ranks[0]
    n = a * a - (a - h["rank_K"]) * (a - h["rank_Q"])
    if "rank_U" in h:
        b = arch.value_ranks[0]
        n += b * b - (b - h["rank_O"]) * (b - h["rank_U"])
    if arch.normalization == "lightning" and not (h["rank_A"] == 0 and h["rank_V"] == 0):
        n += 1
    return n


def _full(blocks: list[np.ndarray], p: int, axis: int) -> bool:
    return rank(np.concatenate(blocks, axis=axis), p) == sum(b.shape[axis] for b in blocks)


def _check_heads_witness(layer: _Layer, heads: list, chosen) -> int:
    """Lemma H (one head) or Theorem S (separated heads) of docs/math.md §7.5; returns the bound proved."""
    arch, p = layer.arch, layer.p
    if arch.normalization != "lightning" or arch.tokens < 2:
        reject("a lower bound from the heads is for lightning layers with t >= 2 (Lemma 1 of docs/fibers.md)")
    h_count = arch.head_count(1)
    S = seq(chosen, "lower_witness.heads")
    if not S or any(isinstance(j, bool) or not isinstance(j, int) or not 1 <= j <= h_count for j in S) \
            or len(set(S)) != len(S):
        reject(f"lower_witness.heads must list distinct heads among 1..{h_count}")
    info = {h["head"]: (h, par) for h, par in heads}
    if len(S) == 1:  # Lemma H: one head's image has exactly this dimension
        return _image(arch, *info[S[0]])
    (d, dd), a = arch.widths, arch.ranks[0]
    if arch.value_ranks is None:
        reject("separated heads need value ranks (V_j = O_j U_j)")
    b = arch.value_ranks[0]
    if len(S) * a > d or len(S) * b > dd:
        reject(f"{len(S)} separated heads need h a <= d and h b <= d'")
    for j in S:
        h, par = info[j]
        if (h["rank_Q"], h["rank_K"], h["rank_U"], h["rank_O"]) != (a, a, b, b) or par:
            reject(f"head {j} is not of full rank: Theorem S needs rank Q = rank K = a, rank U = rank O = b")
        if a == 1 and b == 1 and rank(np.concatenate([layer.mod_p(j, "U"), layer.mod_p(j, "K")]), p) < 2:
            reject(f"head {j}: row U = row K is not excluded (a = b = 1)")
    if not _full([layer.mod_p(j, "O") for j in S], p, 1):
        reject("the stacked O_j of the separated heads do not have full column rank mod p")
    if not _full([layer.mod_p(j, "Q") for j in S], p, 0):
        reject("the stacked Q_j of the separated heads do not have full row rank mod p")
    if max(a, b) < 2 or not _full([layer.mod_p(j, "K") for j in S], p, 0):  # a = b = 1: swapped heads, (S4)
        if len(S) * (len(S) - 1) // 2 > MAX_PAIR_TESTS:
            raise CertificateFormatError(f"{len(S)} heads need {len(S) * (len(S) - 1) // 2} pairwise tests, above the "
                                         f"checker's limit of {MAX_PAIR_TESTS}")
        for x in range(len(S)):
            for y in range(x + 1, len(S)):
                i, j = S[x], S[y]
                def apart(x: str, y: str) -> bool:
                    size = a if x == "K" else b
                    return rank(np.concatenate([layer.mod_p(i, x), layer.mod_p(j, y)]), p) > size

                if not (apart("K", "K") or apart("U", "U")) or max(a, b) < 2 and not (apart("K", "U") or apart("U", "K")):
                    reject(f"heads {i} and {j} are not shown to differ in (row K, row U)"
                           + ("" if max(a, b) >= 2 else " nor in (row U, row K) (a = b = 1: swapped heads)"))
    return sum(_image(arch, *info[j]) for j in S)


def _check_jacobian_witness(layer: _Layer, jw) -> int:
    arch = layer.arch
    jw = obj(jw, "lower_witness.jacobian")
    if arch.normalization != "lightning":
        reject("a Jacobian minor mod p proves ranks of lightning layers only (exp is not polynomial)")
    P = arch.parameters
    if P > MAX_LOCAL_JACOBIAN_PARAMETERS:
        raise CertificateFormatError(f"a Jacobian witness for {P} parameters is above the checker's limit of "
                                     f"{MAX_LOCAL_JACOBIAN_PARAMETERS}")
    if prime(field(jw, "prime", "lower_witness.jacobian."), "lower_witness.jacobian.prime") != layer.p:
        reject("lower_witness.jacobian.prime must be the certificate's prime")
    p = layer.p
    inputs = field(jw, "inputs", "lower_witness.jacobian.")
    N = len(inputs) if isinstance(inputs, list) else -1
    if not 1 <= N <= 4 * P + 64:
        reject("lower_witness.jacobian.inputs must be a non-empty list of d x t matrices (at most 4 P + 64)")
    X = int_array(inputs, (N, arch.widths[0], arch.tokens), "lower_witness.jacobian.inputs") % p
    w = field(jw, "functionals", "lower_witness.jacobian.")
    c = len(w[0]) if isinstance(w, list) and w and isinstance(w[0], list) else -1
    if not 1 <= c <= arch.widths[-1] * arch.tokens:
        reject("lower_witness.jacobian.functionals must hold 1..d' t functionals per input")
    W = int_array(w, (N, c, arch.widths[-1], arch.tokens), "lower_witness.jacobian.functionals") % p
    work = N * P * (c + arch.tokens ** 2 * max(arch.widths))
    if work > MAX_LOCAL_JACOBIAN_WORK:
        raise CertificateFormatError(f"replaying this Jacobian witness would take about {work:.1e} units of work, "
                                     f"above the checker's limit of {MAX_LOCAL_JACOBIAN_WORK:.0e}")
    rank = integer(field(jw, "rank", "lower_witness.jacobian."), "lower_witness.jacobian.rank", 0, P)
    rows = index_list(field(jw, "rows", "lower_witness.jacobian."), rank, N * c, "lower_witness.jacobian.rows")
    cols = index_list(field(jw, "columns", "lower_witness.jacobian."), rank, P, "lower_witness.jacobian.columns")
    J = _jacobian_rows(arch, layer.residues, X, W, rows, cols, p)
    _check_minor(J, p, field(jw, "determinant", "lower_witness.jacobian."), "Jacobian")
    return rank


def _check_ball_witness(layer: _Layer, bw, scale=None) -> int:
    """A normalized layer's minor at the point: the dimension checker's ball replay, bound to this point."""
    arch = layer.arch
    bw = obj(bw, "lower_witness.ball")
    if arch.normalization == "lightning":
        reject("a lightning layer's lower witness is exact (heads or a minor mod p), not a ball")
    if arch.parameters > MAX_LOCAL_JACOBIAN_PARAMETERS:
        raise CertificateFormatError(f"a ball witness for {arch.parameters} parameters is above the checker's limit "
                                     f"of {MAX_LOCAL_JACOBIAN_PARAMETERS}")
    point = seq(field(bw, "point", "lower_witness.ball."), "lower_witness.ball.point", arch.parameters)
    if [rational(x, "lower_witness.ball.point") for x in point] != layer.rationals():
        reject("lower_witness.ball.point must be the certificate's point")
    rank = integer(field(bw, "rank", "lower_witness.ball."), "lower_witness.ball.rank", 0, arch.parameters)
    return check_ball_lower({"lower": rank, "lower_witness": bw}, arch, scale)


def _check_criterion_witness(layer: _Layer, cw) -> tuple[int, bool]:
    """Theorem C of docs/math.md §8.3 on the groups listed: their conditions mod ``p``; the bound and whether
    it is the exact local rank (every group listed)."""
    arch = layer.arch
    cw = obj(cw, "lower_witness.criterion")
    chosen = seq(field(cw, "groups", "lower_witness.criterion."), "lower_witness.criterion.groups")
    count = len(criterion.groups_of(arch))
    if any(isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= count for g in chosen) \
            or chosen != sorted(set(chosen)):
        reject(f"lower_witness.criterion.groups must list increasing groups among 1..{count}")
    if not chosen:  # no group: the output bias alone, the identity on every token
        return (arch.widths[1] if arch.biases else 0), False
    criterion.verify(arch, layer.mod_p, layer.p, chosen, MAX_PAIR_TESTS)
    return criterion.bound(arch, chosen), criterion.decides(arch, chosen)


def _scale(cert: dict, arch) -> object:
    """The recorded score scale (``"1/8"``, ``"1/16/sqrt(3)"``) as ``prec -> arb``, or None for 1.

    Only softmax layers carry one (a lightning layer's local rank cannot depend on it)."""
    if "scale" not in cert:
        return None
    if arch.normalization == "lightning":
        reject("scale: a lightning layer's scores are not normalized, its local rank does not depend on a scale")
    text = cert["scale"]
    m = _SCALE.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        reject("scale must read r, r/s or r/s/sqrt(m) with integers (m square-free, > 1)")
    num, den = int(m.group(1)), int(m.group(2) or 1)
    root = int(m.group(3)) if m.group(3) else None
    if num == 0 or den == 0 or root is not None and (root < 2 or any(root % (k * k) == 0
                                                                    for k in range(2, math.isqrt(root) + 1))):
        reject("scale must be nonzero, and its radicand square-free")

    def ball(prec: int):
        old = ctx.prec
        ctx.prec = prec
        try:
            value = arb(num) / den
            return value / arb(root).sqrt() if root is not None else value
        finally:
            ctx.prec = old

    return ball


def _scale_text(text: str) -> str:
    """The scale rebuilt from its verified integers (no certificate text is echoed into a claim)."""
    m = _SCALE.fullmatch(text)
    out = str(int(m.group(1))) + (f"/{int(m.group(2))}" if m.group(2) else "")
    return out + (f"/sqrt({int(m.group(3))})" if m.group(3) else "")


def _fiber(arch, h: dict, parallel: bool) -> dict:
    """The case and dimension of one head's fiber, from its ranks (docs/fibers.md Theorem 1 and Lemma 3)."""
    (d, dd), a = arch.widths, arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks is not None else None

    def qk(r):
        return max(dim for _, _, dim in product_strata(a, d, r))

    def uo(r):
        if b is None:
            return 0
        return max(dim for _, _, dim in product_strata(b, d, r)) if dd == d else None

    if arch.normalization != "lightning" or arch.tokens < 2 or arch.tied:
        # Theorem 1 of docs/fibers.md is about plain lightning heads and t >= 2 (at t = 1 a head sees only sym(A))
        return {"case": "undecided", "lines": None, "dimension": None}
    if h["rank_A"] == 0 or h["rank_V"] == 0:
        dims = []
        if h["rank_A"] == 0:
            dims.append(qk(0) + (dd * d if b is None else b * (d + dd)))
        if h["rank_V"] == 0:
            w = uo(0)
            dims.append(None if w is None else 2 * a * d + w)
        return {"case": "zero", "lines": 0, "dimension": None if None in dims else max(dims)}
    case = "rank1-parallel" if parallel else ("rank1-swap" if h["rank_A"] == h["rank_V"] == 1 else "generic")
    w = uo(h["rank_V"])
    return {"case": case, "lines": 2 if case == "rank1-swap" else 1, "dimension": None if w is None else 1 + qk(h["rank_A"]) + w}


def check(cert: dict, weights=None) -> str:
    """The claim of a local-rank certificate: bounds on the rank of ``d phi`` at the point, and the verdict.

    Called by the kernel after the schema check and the embedded dimension certificate; use
    :func:`attngeo.check_certificate` on a certificate. ``weights``: the checkpoint file a bound certificate's
    point is read from (``attngeo check --weights FILE``; :mod:`attngeo.check.checkpoint`).

    Raises
    ------
    CertificateRejected
        A head rank, bound, witness, orbit dimension, fiber or verdict that the point does not give; a file
        other than the one the certificate binds.
    CannotVerify
        A certificate bound to a checkpoint, checked without the file.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.loci.regularity import local_rank
    >>> from attngeo.check.loci.regularity import check
    >>> arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    >>> w = [(-1) ** k * (k % 7 + 1) for k in range(arch.parameter_count)]
    >>> cert = local_rank(arch, w).to_json()
    >>> check(cert)
    'local rank 46 = dim M at this point of widths 4,4, ranks 2, heads 2, value ranks 2, t=2 (regular); orbit dimension 18'
    >>> check(dict(cert, upper=47))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: upper = 47 but the head ranks give the bound 46
    """
    witness = cert.get("lower_witness")
    # Theorem S's and Theorem C's witnesses only rank matrices with FLINT: widths beyond the int64 limit
    arch = architecture(cert, wide=isinstance(witness, dict) and set(witness) in ({"heads"}, {"criterion"}))
    if len(arch.ranks) != 1:
        reject("local-rank certificates are for one layer")
    P = arch.parameters
    if integer(field(cert, "parameters"), "parameters") != P:
        reject(f"parameters = {cert['parameters']} but the architecture has {P}")
    p = prime(field(cert, "prime"), "prime")
    if p == 2:
        reject("prime must be odd (the point's denominators are powers of two)")
    layer = _Layer(cert, arch, p, weights)
    heads = _heads(layer)
    recorded = seq(field(cert, "heads"), "heads", len(heads))
    for (h, _), given in zip(heads, recorded):
        if given != h:
            reject(f"heads[{h['head'] - 1}] must be {h}, the ranks of the point's matrices")
    scale = _scale(cert, arch)
    lw = obj(field(cert, "lower_witness"), "lower_witness")
    if set(lw) not in ({"heads"}, {"jacobian"}, {"ball"}, {"criterion"}):
        reject("lower_witness must hold exactly one of heads, criterion, jacobian, ball")
    theorem_c = arch.tied or arch.normalization != "lightning"  # docs/math.md §8; else §7.5 (Theorem S)
    if "heads" in lw and theorem_c:
        reject("a heads witness (Theorem S) is for lightning layers without shared keys or biases; "
               "use a criterion witness (Theorem C)")
    if "criterion" in lw and not theorem_c:
        reject("a criterion witness is for softmax layers, shared keys or biases (Theorem S covers this layer)")
    decided = False
    if "heads" in lw and lw["heads"] == []:
        lower = 0
    elif "heads" in lw:
        lower = _check_heads_witness(layer, heads, lw["heads"])
    elif "criterion" in lw:
        lower, decided = _check_criterion_witness(layer, lw["criterion"])
    elif "jacobian" in lw:
        lower = _check_jacobian_witness(layer, lw["jacobian"])
    else:
        lower = _check_ball_witness(layer, lw["ball"], scale)
    if integer(field(cert, "lower"), "lower") != lower:
        reject(f"lower = {cert['lower']} but the witness proves {lower}")
    if decided:  # Theorem C: the kernel is exactly the explicit one
        upper, orbit = lower, P - lower
    elif theorem_c:
        explicit = criterion.kernel(arch, layer.mod_p, p)
        upper, orbit = P - explicit, explicit
        if not arch.tied:  # Lemma U of §7.5 bounds an untied head by head too
            upper = min(upper, sum(_image(arch, h, par) for h, par in heads))
            orbit = sum(_orbit(arch, h) for h, _ in heads)
    else:
        upper = min(sum(_image(arch, h, par) for h, par in heads), P)
        orbit = sum(_orbit(arch, h) for h, _ in heads)
    if integer(field(cert, "upper"), "upper") != upper:
        reject(f"upper = {cert['upper']} but the head ranks give the bound {upper}")
    if lower > upper:
        reject(f"lower bound {lower} exceeds upper bound {upper}")
    if integer(field(cert, "orbit_dimension"), "orbit_dimension") != orbit:
        reject(f"orbit_dimension must be {orbit}")
    fib = obj(field(cert, "fiber"), "fiber")
    j = integer(field(fib, "head", "fiber."), "fiber.head", 1, len(heads))
    expected = {"head": j, **_fiber(arch, *heads[j - 1])}
    if fib != expected:
        reject(f"fiber must be {expected}, from head {j}'s ranks")
    # rho(W) <= dim M <= P - dim(orbit at W) (the orbit lies in the fiber; generic orbits are the largest)
    g_lo, g_hi = lower, P - orbit
    if "dimension_certificate" in cert:
        dim = cert["dimension_certificate"]  # verified, and bound to this architecture, by the kernel
        g_lo, g_hi = max(g_lo, dim["lower"]), min(g_hi, dim["upper"])
    if seq(field(cert, "generic"), "generic", 2) != [g_lo, g_hi]:
        reject(f"generic must be [{g_lo}, {g_hi}]: the local rank, P - the orbit's dimension and the embedded "
               "dimension certificate")
    regular = field(cert, "regular")
    verdict = True if lower >= g_hi else (False if upper < g_lo else None)
    if regular is not verdict:
        reject(f"regular must be {verdict} (local rank in [{lower}, {upper}], dim M in [{g_lo}, {g_hi}])")
    where = arch.describe() + (f", scores x {_scale_text(cert['scale'])}" if scale is not None else "")
    lr = f"local rank {lower}" if lower == upper else f"{lower} <= local rank <= {upper}"
    if verdict is True:
        # lower >= g_hi pins both: lower <= rho <= dim M <= g_hi <= lower, whatever the (looser) upper bound says
        status = f"local rank {lower} = dim M at this point of {where} (regular)"
    elif verdict is False:
        below = f"dim M = {g_lo}" if g_lo == g_hi else f"dim M >= {g_lo}"
        status = f"{lr} < {below} at this point of {where} (not regular)"
    else:
        status = f"{lr} at this point of {where} (regularity undecided)"
    return f"{status}; orbit dimension {orbit}{layer.provenance}"
