"""A single lightning layer *as a function*: its matrix of quadratic forms.

For ``t >= 2`` the function ``phi_{A,V}`` is determined by, and determines, the
``d' x d`` matrix of quadratic forms in ``y in K^d``::

    F(y) = V y y^T A,        F_kp(y) = (V y)_k (A^T y)_p

(docs/fibers.md, Lemma 1: output column ``i`` of ``phi(X)`` is
``sum_j (x_j^T A x_i) V x_j``; its part of degree 2 in ``x_j`` and 1 in ``x_i``,
``j != i``, is ``F(x_j) x_i``, and ``phi`` is a sum of such terms). So two
weights give the same function exactly when they give the same ``F``; this
is the coordinate system in which fibers are computed.

``F`` is stored as the symmetric Gram tensor ``S[k, m, n, p]`` with
``F_kp(y) = sum_{m,n} S[k, m, n, p] y_m y_n``, as integer numerators over one
common denominator (vectorised exact comparison; int64 when every value
and every product formed from it provably fits, Python integers otherwise).
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache
from typing import Callable

import numpy as np
from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from .architecture import Architecture
from ..exceptions import InvalidInputError
from .network import read_point, split_point, to_fmpq

_INT64 = 1 << 63  # int64 holds exactly the integers of absolute value < 2^63


def single_layer(arch: Architecture, what: str) -> None:
    """Refuse what the single-layer theory does not cover, saying why."""
    if arch.depth != 1:
        raise InvalidInputError(f"{what} is for single-layer networks; {arch} has {arch.depth} layers")
    if arch.normalization != "lightning":
        raise InvalidInputError(f"{what} is for lightning (un-normalized) layers, not {arch.normalization}")
    if arch.tokens < 2:
        raise InvalidInputError(
            f"{what} needs t >= 2 tokens: with t = 1 only the symmetric part of A is seen, "
            "so the function no longer determines F(y) = V y y^T A (docs/math.md §1.1)"
        )


def integer_matrix(entries) -> tuple[np.ndarray, int]:
    """``(N, D)`` with ``entries == N / D``: integer numerators over a common denominator."""
    rows = [[to_fmpq(v, "entry") for v in row] for row in entries]
    den = 1
    for row in rows:
        for v in row:
            den = math.lcm(den, int(v.q))
    N = np.array([[int(v.p) * (den // int(v.q)) for v in row] for row in rows], dtype=object)
    return N, den


def _compact(N: np.ndarray) -> np.ndarray:
    """int64 when every entry fits (``|x| < 2^63``), else Python integers.

    Storage only: every product or sum over these numerators is bounded where it
    is formed (:meth:`LayerFunction.from_AV`, :meth:`LayerFunction.differences`).
    """
    return N.astype(np.int64) if _top(N) < _INT64 else N.astype(object)


def _top(N: np.ndarray) -> int:
    """``max |N|`` as a Python integer (``abs`` of the int64 minimum would overflow; ``-min`` as int does not)."""
    if N.size == 0:
        return 0
    return max(int(N.max()), -int(N.min()))


def weights_AV(arch: Architecture, weights) -> tuple[fmpq_mat, fmpq_mat]:
    """The attention matrix ``A = K^T Q`` and ``V`` of a single-layer point, exactly."""
    Q, K, V = split_point(arch, read_point(arch, weights))[0]
    Qm, Km, Vm = (fmpq_mat(M.tolist()) for M in (Q, K, V))
    return Km.transpose() * Qm, Vm


def mat_rows(M: fmpq_mat) -> list[list[fmpq]]:
    return [[M[r, c] for c in range(M.ncols())] for r in range(M.nrows())]


class LayerFunction:
    """The function of one lightning layer, as its Gram tensor of quadratic forms."""

    def __init__(self, arch: Architecture, numerators: np.ndarray, denominator: int):
        single_layer(arch, "a layer function")
        d, dd = arch.widths
        if numerators.shape != (dd, d, d, d):
            raise InvalidInputError(f"the tensor must have shape (d', d, d, d) = {(dd, d, d, d)}, got {numerators.shape}")
        self.arch = arch
        self.numerators = numerators
        self.denominator = int(denominator)

    # -- construction -----------------------------------------------------------------

    @classmethod
    def from_AV(cls, arch: Architecture, A, V) -> "LayerFunction":
        """From ``A`` (``d x d``) and ``V`` (``d' x d``), any exact rationals."""
        An, da = integer_matrix(mat_rows(A) if isinstance(A, fmpq_mat) else A)
        Vn, dv = integer_matrix(mat_rows(V) if isinstance(V, fmpq_mat) else V)
        # S[k,m,n,p] = (V_km A_np + V_kn A_mp) / 2: each product is at most max|V| max|A|
        # and the sum of two at most 2 max|V| max|A|, so int64 is exact when that is below 2^63
        dtype = np.int64 if 2 * _top(An) * _top(Vn) < _INT64 else object
        An, Vn = An.astype(dtype), Vn.astype(dtype)
        P = Vn[:, :, None, None] * An[None, None, :, :]
        return cls(arch, P + P.transpose(0, 2, 1, 3), 2 * da * dv)

    @classmethod
    def from_weights(cls, arch: Architecture, weights) -> "LayerFunction":
        """From single-layer weights ``[(Q, K, V)]`` or a flat parameter list."""
        single_layer(arch, "a layer function")
        return cls.from_AV(arch, *weights_AV(arch, weights))

    @classmethod
    def from_tensor(cls, arch: Architecture, tensor) -> "LayerFunction":
        """From the Gram tensor ``S[k][m][n][p]`` (exact rationals, symmetric in ``m, n``)."""
        single_layer(arch, "a layer function")
        d, dd = arch.widths
        try:
            arr = np.asarray(tensor)
            if arr.dtype.kind not in "iu":
                arr = np.asarray(tensor, dtype=object)
        except ValueError:
            raise InvalidInputError("the coefficient tensor is ragged; give a (d', d, d, d) array") from None
        if arr.shape != (dd, d, d, d):
            raise InvalidInputError(
                f"the coefficient tensor must have shape (d', d, d, d) = {(dd, d, d, d)}, got {arr.shape}; "
                "S[k][m][n][p] is the (m, n) entry of the Gram matrix of F_kp"
            )
        if arr.dtype.kind in "iu":
            N, den = arr.astype(object), 1
        else:
            flat, den = integer_matrix([arr.ravel().tolist()])
            N = flat.reshape(arr.shape)
        if not np.array_equal(N, N.transpose(0, 2, 1, 3)):
            raise InvalidInputError(
                "the coefficient tensor must be symmetric in its middle indices: S[k][m][n][p] = S[k][n][m][p]"
            )
        return cls(arch, _compact(N), den)

    @classmethod
    def from_evaluator(cls, arch: Architecture, f: Callable) -> "LayerFunction":
        """Read ``F`` off an exact black box ``f(X) -> d' x t`` (rationals in, rationals out).

        Uses two tokens ``(y, z)`` (the others zero): ``F(y) z`` is the token-``z``
        output at ``(y, z)`` minus that at ``(0, z)``, and each quadratic form is
        polarized from ``y in {e_m, e_m + e_n}``. ``d (d + 1) (d + 2) / 2``
        evaluations. The result describes ``f`` only if ``f`` is a layer function;
        :func:`attngeo.geometry.fiber.recover_weights` re-checks that on a unisolvent set.
        """
        single_layer(arch, "a layer function")
        d, dd = arch.widths
        col = evaluator_call(arch, f)
        S = np.empty((dd, d, d, d), dtype=object)
        unit = [[fmpq(int(i == j)) for j in range(d)] for i in range(d)]
        zero = [fmpq(0)] * d
        for p in range(d):
            base = col(zero, unit[p])
            diag = [[x - b for x, b in zip(col(unit[m], unit[p]), base)] for m in range(d)]
            for m in range(d):
                for k in range(dd):
                    S[k, m, m, p] = diag[m][k]
            for m, n in itertools.combinations(range(d), 2):
                y = [unit[m][i] + unit[n][i] for i in range(d)]
                both = [x - b for x, b in zip(col(y, unit[p]), base)]
                for k in range(dd):
                    S[k, m, n, p] = S[k, n, m, p] = (both[k] - diag[m][k] - diag[n][k]) / 2
        return cls.from_tensor(arch, S)

    # -- queries ------------------------------------------------------------------------

    @property
    def shape(self) -> tuple[int, int]:
        d, dd = self.arch.widths
        return dd, d

    def is_zero(self) -> bool:
        return not np.any(self.numerators)

    def __eq__(self, other) -> bool:
        if not isinstance(other, LayerFunction) or other.arch.widths != self.arch.widths:
            return NotImplemented
        return not self.differences(other).any()

    def differences(self, other: "LayerFunction") -> np.ndarray:
        """The ``d' x d`` mask of the entries ``(k, p)`` where ``F_kp`` and ``other``'s differ."""
        # a / da == b / db  <=>  a (db / g) == b (da / g), g = gcd(da, db); int64 only
        # when max|a| db/g and max|b| da/g are both below 2^63, checked here in Python integers
        a, b = self.numerators, other.numerators
        g = math.gcd(self.denominator, other.denominator)
        ca, cb = other.denominator // g, self.denominator // g
        if a.dtype == object or b.dtype == object or _top(a) * ca >= _INT64 or _top(b) * cb >= _INT64:
            a, b = a.astype(object), b.astype(object)
        return (a * ca != b * cb).any(axis=(1, 2))

    __hash__ = None

    def nonzero_entry(self) -> tuple[int, int] | None:
        """The first ``(k, p)`` with ``F_kp != 0``, or None for the zero function."""
        nz = np.argwhere(self.numerators.reshape(self.numerators.shape[0], -1, self.numerators.shape[3]).any(axis=1))
        return (int(nz[0][0]), int(nz[0][1])) if len(nz) else None

    def ring(self):
        return fmpq_mpoly_ctx.get(("y", self.shape[1]), "degrevlex")

    def form(self, k: int, p: int):
        """``F_kp`` as a polynomial in ``y0, ..., y_{d-1}`` over Q."""
        d = self.shape[1]
        exps, rows, cols, twice = _monomials(d)
        values = self.numerators[k, :, :, p][rows, cols].tolist()
        den = self.denominator
        terms = {e: fmpq(int(v) * w, den) for e, v, w in zip(exps, values, twice) if v}
        return self.ring().from_dict(terms)

    def tensor(self) -> np.ndarray:
        """The Gram tensor as an object array of ``fmpq`` (small sizes: one object per entry)."""
        den = self.denominator
        return np.vectorize(lambda x: fmpq(int(x), den), otypes=[object])(self.numerators)

    def __repr__(self) -> str:
        dd, d = self.shape
        return f"LayerFunction(d={d}, d'={dd}, zero={self.is_zero()})"

    def _repr_latex_(self) -> str:
        from .. import latex

        dd, d = self.shape
        if dd * d > 16:
            return rf"$F(y) = V y y^T A,\ d = {d},\ d' = {dd}$"
        return f"$F(y) = {latex.forms([[self.form(k, p) for p in range(d)] for k in range(dd)])}$"


# -- the shape of F as quadrics -------------------------------------------------------


def gram_matrices(f: LayerFunction) -> dict[tuple[int, int], fmpq_mat]:
    """The nonzero Gram matrices ``S_kp`` of a layer function."""
    dd, d = f.shape
    den = f.denominator
    out = {}
    for k in range(dd):
        for p in range(d):
            block = f.numerators[k, :, :, p]
            if block.any():
                out[(k, p)] = fmpq_mat([[fmpq(int(block[m, n]), den) for n in range(d)] for m in range(d)])
    return out


def quadric_factor(f: LayerFunction) -> tuple[fmpq_mat, fmpq_mat] | None:
    """``(q, R)`` with ``F = q(y) R`` and ``R`` of rank 1, when ``F`` has that shape (else None)."""
    S = gram_matrices(f)
    if not S:
        return None
    q = next(iter(S.values()))
    i, j = next((i, j) for i in range(q.nrows()) for j in range(q.ncols()) if q[i, j] != 0)
    dd, d = f.shape
    R = fmpq_mat(dd, d)
    for (k, p), M in S.items():
        c = M[i, j] / q[i, j]
        if M != c * q:
            return None
        R[k, p] = c
    return (q, R) if R.rank() == 1 else None


def principal_minor(q: fmpq_mat) -> tuple[int, int, fmpq] | None:
    """A nonzero principal 2x2 minor ``(i, j, det)`` of a symmetric matrix (one exists when rank = 2)."""
    n = q.nrows()
    for i in range(n):
        for j in range(i + 1, n):
            det = q[i, i] * q[j, j] - q[i, j] * q[j, i]
            if det != 0:
                return i, j, det
    return None


def nonzero_minor(M: fmpq_mat, size: int) -> tuple[list[int], list[int], fmpq] | None:
    """Rows, columns and value of a nonzero ``size x size`` minor (one exists iff ``rank M >= size``).

    Rows: the first ``size`` pivots of ``M^T`` (independent rows); columns: the
    first ``size`` pivots of those rows. Not necessarily principal: a symmetric
    matrix of rank 4 can have every principal 3x3 minor zero.
    """
    def pivots(N: fmpq_mat) -> list[int]:
        R, r = N.rref()
        return [next(c for c in range(N.ncols()) if R[i, c] != 0) for i in range(r)]

    rows = pivots(M.transpose())[:size]
    if len(rows) < size:
        return None
    sub = fmpq_mat([[M[r, c] for c in range(M.ncols())] for r in rows])
    cols = pivots(sub)[:size]
    return rows, cols, fmpq_mat([[M[r, c] for c in cols] for r in rows]).det()


@lru_cache(maxsize=None)
def _monomials(d: int):
    """Exponents of ``y_m y_n`` (``m <= n``), their Gram indices, and the factor 2 off the diagonal."""
    rows, cols = np.triu_indices(d)
    exps = []
    for m, n in zip(rows.tolist(), cols.tolist()):
        e = [0] * d
        e[m] += 1
        e[n] += 1
        exps.append(tuple(e))
    return exps, rows, cols, [1 if m == n else 2 for m, n in zip(rows.tolist(), cols.tolist())]


def evaluator_call(arch: Architecture, f: Callable) -> Callable:
    """Wrap a black box: ``call(y, z)`` = token-2 output column at tokens ``(y, z, 0, ...)``."""
    d, t = arch.input_shape
    dd = arch.widths[-1]

    def call(y, z):
        X = [[y[r], z[r]] + [fmpq(0)] * (t - 2) for r in range(d)]
        return output_column(call_evaluator(f, X), 1, dd, t)

    return call


def call_evaluator(f: Callable, X):
    """Call a user's black box; its own errors become one clear message."""
    try:
        return f(X)
    except Exception as exc:  # user code: say whose error it is
        raise InvalidInputError(f"the evaluator raised {type(exc).__name__}: {exc}") from None


def output_column(out, j: int, rows: int, t: int) -> list[fmpq]:
    """Column ``j`` of an evaluator's ``rows x t`` answer, read exactly."""
    try:
        M = [[out[r, c] for c in range(t)] for r in range(rows)] if isinstance(out, fmpq_mat) else [list(r) for r in out]
    except Exception:
        raise InvalidInputError(f"the evaluator must return a {rows}x{t} matrix of exact rationals") from None
    if len(M) != rows or any(len(r) != t for r in M):
        raise InvalidInputError(f"the evaluator must return a {rows}x{t} matrix, got {len(M)} rows")
    return [to_fmpq(M[r][j], f"evaluator output[{r}][{j}]") for r in range(rows)]
