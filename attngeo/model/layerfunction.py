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
    """Refuse what the single-layer theory does not cover, saying why.

    Parameters
    ----------
    arch : Architecture
    what : str
        The feature asked for, named in the message (e.g. ``"a fiber"``).

    Raises
    ------
    InvalidInputError
        Unless ``arch`` is one lightning layer with ``t >= 2`` tokens.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.layerfunction import single_layer
    >>> single_layer(Architecture((2, 1), (1,), tokens=2), "a fiber")   # covered: no error
    >>> single_layer(Architecture((2, 1), (1,), tokens=1), "a fiber")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: a fiber needs t >= 2 tokens: with t = 1 only the symmetric part of A is seen, so the function no longer determines F(y) = V y y^T A (docs/math.md §1.1)
    >>> single_layer(Architecture((2, 2, 2), (1, 1)), "a fiber")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: a fiber is for single-layer networks; widths 2,2,2, ranks 1,1, t=2, lightning has 2 layers
    """
    arch.require_plain(what)
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
    """``(N, D)`` with ``entries == N / D``: integer numerators over a common denominator.

    Parameters
    ----------
    entries : sequence of rows
        Exact rationals as :func:`attngeo.model.network.to_fmpq` reads them.

    Returns
    -------
    N : numpy.ndarray
        Python integers (dtype object).
    D : int
        The least common denominator.

    Examples
    --------
    >>> from attngeo.model.layerfunction import integer_matrix
    >>> N, D = integer_matrix([["1/2", 3], ["2/3", 0]])
    >>> N.tolist(), D
    ([[3, 18], [4, 0]], 6)
    """
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
    """The attention matrix ``A = K^T Q`` and ``V`` of a single-layer point, exactly.

    Parameters
    ----------
    arch : Architecture
    weights : list
        As :func:`attngeo.model.network.read_point` reads them.

    Returns
    -------
    A : fmpq_mat ``d x d``
    V : fmpq_mat ``d' x d``

    Examples
    --------
    ``A = K^T Q`` has rank at most ``a``, here 1:

    >>> from attngeo import Architecture
    >>> from attngeo.model.layerfunction import weights_AV
    >>> A, V = weights_AV(Architecture((2, 1), (1,)), [[[[1, 2]], [[0, 1]], [[1, 1]]]])
    >>> A.tolist(), A.rank(), V.tolist()
    ([[0, 0], [1, 2]], 1, [[1, 1]])
    """
    Q, K, V = split_point(arch, read_point(arch, weights))[0]
    Qm, Km, Vm = (fmpq_mat(M.tolist()) for M in (Q, K, V))
    return Km.transpose() * Qm, Vm


def mat_rows(M: fmpq_mat) -> list[list[fmpq]]:
    """The entries of an ``fmpq_mat`` as a list of rows of ``fmpq``.

    Examples
    --------
    >>> from flint import fmpq, fmpq_mat
    >>> from attngeo.model.layerfunction import mat_rows
    >>> mat_rows(fmpq_mat([[1, fmpq(1, 2)], [0, 3]]))
    [[1, 1/2], [0, 3]]
    """
    return [[M[r, c] for c in range(M.ncols())] for r in range(M.nrows())]


class LayerFunction:
    """The function of one lightning layer, as its Gram tensor of quadratic forms.

    ``F_kp(y) = sum_{m,n} S[k, m, n, p] y_m y_n`` with ``S = numerators / denominator``.
    Usually built with :meth:`from_weights`, :meth:`from_AV`, :meth:`from_tensor`
    or :meth:`from_evaluator`. Two layer functions are equal exactly when the
    layers compute the same function (``t >= 2``).

    Parameters
    ----------
    arch : Architecture
        One lightning layer with ``t >= 2``.
    numerators : numpy.ndarray
        Integers of shape ``(d', d, d, d)``, symmetric in the middle indices.
    denominator : int

    Raises
    ------
    InvalidInputError
        For an architecture outside the single-layer theory or a wrong shape.

    Examples
    --------
    ``F(y) = V y y^T A``: for ``V = (1, 1)`` and ``A = K^T Q`` with ``Q = (1, 2)``,
    ``K = (0, 1)``, ``F_0p(y) = (y_0 + y_1) (A^T y)_p`` and ``A^T y = (y_1, 2 y_1)``:

    >>> from attngeo import Architecture, LayerFunction
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> f = LayerFunction.from_weights(arch, [[[[1, 2]], [[0, 1]], [[1, 1]]]])
    >>> f
    LayerFunction(d=2, d'=1, zero=False)
    >>> y0, y1 = f.ring().gens()
    >>> f.form(0, 0) == (y0 + y1) * y1, f.form(0, 1) == (y0 + y1) * 2 * y1
    (True, True)

    Weights in one ``GL_1`` orbit give the same function, others do not:

    >>> f == LayerFunction.from_weights(arch, [[[["1/2", 1]], [[0, 2]], [[1, 1]]]])
    True
    >>> f == LayerFunction.from_weights(arch, [[[[1, 2]], [[1, 0]], [[1, 1]]]])
    False
    """

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
        """From ``A`` (``d x d``) and ``V`` (``d' x d``), any exact rationals.

        ``A`` need not have rank at most ``a``: any ``A`` gives a function of the
        same form (the fibers compare such functions).

        Parameters
        ----------
        arch : Architecture
        A, V : fmpq_mat or nested lists

        Returns
        -------
        LayerFunction

        Examples
        --------
        ``F`` is bilinear in ``(V, A)``: scaling ``V`` by 2 and ``A`` by 1/2 keeps it.

        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 2), (2,), tokens=2)
        >>> f = LayerFunction.from_AV(arch, [[1, 2], [0, 1]], [[1, 0], [3, 1]])
        >>> f == LayerFunction.from_AV(arch, [["1/2", 1], [0, "1/2"]], [[2, 0], [6, 2]])
        True
        >>> LayerFunction.from_AV(arch, [[0, 0], [0, 0]], [[1, 0], [3, 1]]).is_zero()
        True
        """
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
        """From single-layer weights ``[(Q, K, V)]`` or a flat parameter list.

        Parameters
        ----------
        arch : Architecture
            One lightning layer, ``t >= 2``.
        weights : list
            As :func:`attngeo.model.network.read_point` reads them.

        Returns
        -------
        LayerFunction

        Raises
        ------
        InvalidInputError
            For bad weights or an architecture outside the single-layer theory.

        Examples
        --------
        The flat and the nested forms of a point give the same function:

        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 1), (1,), tokens=2)
        >>> nested = [[[[1, 2]], [[0, 1]], [[1, 1]]]]      # [(Q, K, V)]
        >>> LayerFunction.from_weights(arch, [1, 2, 0, 1, 1, 1]) == LayerFunction.from_weights(arch, nested)
        True
        >>> LayerFunction.from_weights(Architecture((2, 1), (1,), tokens=1), [1, 2, 0, 1, 1, 1])
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidInputError: a layer function needs t >= 2 tokens: with t = 1 only the symmetric part of A is seen, so the function no longer determines F(y) = V y y^T A (docs/math.md §1.1)
        """
        single_layer(arch, "a layer function")
        return cls.from_AV(arch, *weights_AV(arch, weights))

    @classmethod
    def from_tensor(cls, arch: Architecture, tensor) -> "LayerFunction":
        """From the Gram tensor ``S[k][m][n][p]`` (exact rationals, symmetric in ``m, n``).

        Parameters
        ----------
        arch : Architecture
        tensor : array_like of shape ``(d', d, d, d)``

        Returns
        -------
        LayerFunction

        Raises
        ------
        InvalidInputError
            When the tensor is ragged, of the wrong shape or not symmetric in ``m, n``.

        Examples
        --------
        :meth:`tensor` and this constructor are inverse:

        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 1), (1,), tokens=2)
        >>> f = LayerFunction.from_weights(arch, [[[[1, 2]], [[0, 1]], [[1, 1]]]])
        >>> LayerFunction.from_tensor(arch, f.tensor()) == f
        True
        >>> str(LayerFunction.from_tensor(arch, [[[["1/2", 0], [0, 0]], [[0, 0], [0, 0]]]]).form(0, 0))
        '1/2*y0^2'
        >>> LayerFunction.from_tensor(arch, [[[[0, 0], [1, 0]], [[0, 0], [0, 0]]]])
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidInputError: the coefficient tensor must be symmetric in its middle indices: S[k][m][n][p] = S[k][n][m][p]
        """
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
        :func:`attngeo.geometry.fibers.layer.recover_weights` re-checks that on a unisolvent set.

        Parameters
        ----------
        arch : Architecture
        f : callable
            ``f(X)`` for a ``d x t`` list of ``fmpq`` rows; returns ``d' x t``
            exact rationals (nested lists or ``fmpq_mat``).

        Returns
        -------
        LayerFunction

        Raises
        ------
        InvalidInputError
            When ``f`` raises or returns something that is not a ``d' x t`` matrix
            of exact rationals.

        Examples
        --------
        Reading the function back from the network's own evaluation gives the
        ``F`` of its weights:

        >>> from attngeo import Architecture, LayerFunction, evaluate
        >>> arch = Architecture((2, 1), (1,), tokens=2)
        >>> w = [[[[1, 2]], [[0, 1]], [[1, 1]]]]
        >>> f = LayerFunction.from_evaluator(arch, lambda X: evaluate(arch, w, X))
        >>> f == LayerFunction.from_weights(arch, w)
        True
        >>> LayerFunction.from_evaluator(arch, lambda X: 1 / 0)
        Traceback (most recent call last):
        ...
        attngeo.exceptions.InvalidInputError: the evaluator raised ZeroDivisionError: division by zero
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
        """``(d', d)``: the shape of the matrix of forms ``F``."""
        d, dd = self.arch.widths
        return dd, d

    def is_zero(self) -> bool:
        """Whether ``F = 0``, i.e. ``A = 0`` or ``V = 0`` (the zero function).

        Examples
        --------
        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 1), (1,), tokens=2)
        >>> LayerFunction.from_weights(arch, [1, 2, 0, 1, 0, 0]).is_zero()   # V = 0
        True
        >>> LayerFunction.from_weights(arch, [1, 2, 0, 1, 1, 1]).is_zero()
        False
        """
        return not np.any(self.numerators)

    def __eq__(self, other) -> bool:
        if not isinstance(other, LayerFunction) or other.arch.widths != self.arch.widths:
            return NotImplemented
        return not self.differences(other).any()

    def differences(self, other: "LayerFunction") -> np.ndarray:
        """The ``d' x d`` mask of the entries ``(k, p)`` where ``F_kp`` and ``other``'s differ.

        Compared exactly, whatever the two denominators.

        Parameters
        ----------
        other : LayerFunction
            Of the same widths.

        Returns
        -------
        numpy.ndarray
            Booleans of shape ``(d', d)``.

        Examples
        --------
        Changing the second row of ``V`` changes only ``F_1p = (V y)_1 (A^T y)_p``:

        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 2), (2,), tokens=2)
        >>> f = LayerFunction.from_AV(arch, [[1, 2], [0, 1]], [[1, 0], [3, 1]])
        >>> g = LayerFunction.from_AV(arch, [[1, 2], [0, 1]], [[1, 0], [3, 2]])
        >>> f.differences(g).tolist()
        [[False, False], [True, True]]
        """
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
        """The first ``(k, p)`` with ``F_kp != 0``, or None for the zero function.

        Examples
        --------
        ``F_kp = (V y)_k (A^T y)_p`` vanishes where row ``k`` of ``V`` or column ``p`` of ``A`` does:

        >>> from attngeo import Architecture, LayerFunction
        >>> arch = Architecture((2, 2), (2,), tokens=2)
        >>> LayerFunction.from_AV(arch, [[0, 1], [0, 1]], [[0, 0], [3, 1]]).nonzero_entry()
        (1, 1)
        >>> LayerFunction.from_AV(arch, [[0, 0], [0, 0]], [[0, 0], [3, 1]]).nonzero_entry() is None
        True
        """
        nz = np.argwhere(self.numerators.reshape(self.numerators.shape[0], -1, self.numerators.shape[3]).any(axis=1))
        return (int(nz[0][0]), int(nz[0][1])) if len(nz) else None

    def ring(self):
        """The polynomial ring ``Q[y0, ..., y_{d-1}]`` of the forms (cached by python-flint).

        Examples
        --------
        >>> from attngeo import Architecture, LayerFunction
        >>> LayerFunction.from_weights(Architecture((3, 1), (1,)), [1] * 9).ring().names()
        ('y0', 'y1', 'y2')
        """
        return fmpq_mpoly_ctx.get(("y", self.shape[1]), "degrevlex")

    def form(self, k: int, p: int):
        """``F_kp`` as a polynomial in ``y0, ..., y_{d-1}`` over Q.

        Parameters
        ----------
        k : int
            Row, ``0 <= k < d'``.
        p : int
            Column, ``0 <= p < d``.

        Returns
        -------
        fmpq_mpoly
            A quadratic form (or zero) in :meth:`ring`.

        Examples
        --------
        With ``A = V = I``, ``F(y) = y y^T``:

        >>> from attngeo import Architecture, LayerFunction
        >>> f = LayerFunction.from_AV(Architecture((2, 2), (2,)), [[1, 0], [0, 1]], [[1, 0], [0, 1]])
        >>> [[str(f.form(k, p)) for p in range(2)] for k in range(2)]
        [['y0^2', 'y0*y1'], ['y0*y1', 'y1^2']]
        """
        d = self.shape[1]
        exps, rows, cols, twice = _monomials(d)
        values = self.numerators[k, :, :, p][rows, cols].tolist()
        den = self.denominator
        terms = {e: fmpq(int(v) * w, den) for e, v, w in zip(exps, values, twice) if v}
        return self.ring().from_dict(terms)

    def tensor(self) -> np.ndarray:
        """The Gram tensor as an object array of ``fmpq`` (small sizes: one object per entry).

        Returns
        -------
        numpy.ndarray
            Shape ``(d', d, d, d)``, ``S[k, m, n, p]`` in lowest terms.

        Examples
        --------
        ``F_00 = y0 y1 + y1^2``: its Gram matrix splits the cross term in halves.

        >>> from attngeo import Architecture, LayerFunction
        >>> f = LayerFunction.from_weights(Architecture((2, 1), (1,)), [[[[1, 2]], [[0, 1]], [[1, 1]]]])
        >>> f.tensor()[0, :, :, 0].tolist()
        [[0, 1/2], [1/2, 1]]
        """
        den = self.denominator
        return np.vectorize(lambda x: fmpq(int(x), den), otypes=[object])(self.numerators)

    def __repr__(self) -> str:
        dd, d = self.shape
        return f"LayerFunction(d={d}, d'={dd}, zero={self.is_zero()})"

    def latex(self) -> str:
        """``F(y)`` as one LaTeX string (math): the matrix of quadratic forms, or its shape beyond 16 entries.

        Examples
        --------
        >>> from attngeo import Architecture
        >>> f = LayerFunction.from_weights(Architecture((2, 1), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1]]]])
        >>> print(f.latex())
        F(y) = \\begin{pmatrix}y_{0} y_{1} + y_{1}^{2} & 0\\end{pmatrix}
        """
        from .. import latex

        dd, d = self.shape
        if dd * d > 16:
            return rf"F(y) = V y y^T A,\ d = {d},\ d' = {dd}"
        return f"F(y) = {latex.forms([[self.form(k, p) for p in range(d)] for k in range(dd)])}"

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"


# -- the shape of F as quadrics -------------------------------------------------------


def gram_matrices(f: LayerFunction) -> dict[tuple[int, int], fmpq_mat]:
    """The nonzero Gram matrices ``S_kp`` of a layer function.

    Parameters
    ----------
    f : LayerFunction

    Returns
    -------
    dict
        ``(k, p) -> fmpq_mat`` (``d x d``, symmetric) with ``F_kp(y) = y^T S_kp y``,
        only for ``F_kp != 0``.

    Examples
    --------
    ``S_kp`` is the symmetric part of ``V_k^T (A_p)^T`` (``V_k`` row ``k`` of ``V``,
    ``A_p`` column ``p`` of ``A``), so it has rank at most 2:

    >>> from attngeo import Architecture, LayerFunction
    >>> from attngeo.model.layerfunction import gram_matrices
    >>> f = LayerFunction.from_AV(Architecture((3, 1), (3,)), [[1, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 1, 0]])
    >>> S = gram_matrices(f)
    >>> list(S), S[(0, 0)].tolist(), S[(0, 0)].rank()
    ([(0, 0)], [[0, 1/2, 0], [1/2, 0, 0], [0, 0, 0]], 2)
    """
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
    """``(q, R)`` with ``F = q(y) R`` and ``R`` of rank 1, when ``F`` has that shape (else None).

    Parameters
    ----------
    f : LayerFunction

    Returns
    -------
    tuple of fmpq_mat or None
        ``q`` the Gram matrix of the form (``d x d``), ``R`` the ``d' x d`` matrix
        of rank 1; None when ``F`` is zero or not of that shape.

    Examples
    --------
    ``V = r u^T`` and ``A = u s^T`` give ``F(y) = (u^T y)^2 r s^T``, the parallel
    points of Lemma B; ``A = V = I`` gives ``F = y y^T``, not of that shape:

    >>> from attngeo import Architecture, LayerFunction
    >>> from attngeo.model.layerfunction import quadric_factor
    >>> arch = Architecture((2, 2), (1,))
    >>> q, R = quadric_factor(LayerFunction.from_AV(arch, [[1, 0], [1, 0]], [[1, 1], [2, 2]]))
    >>> q.tolist(), R.tolist()      # u = (1, 1), r = (1, 2), s = (1, 0)
    ([[1, 1], [1, 1]], [[1, 0], [2, 0]])
    >>> quadric_factor(LayerFunction.from_AV(arch, [[1, 0], [0, 1]], [[1, 0], [0, 1]])) is None
    True
    """
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
    """A nonzero principal 2x2 minor ``(i, j, det)`` of a symmetric matrix (one exists when rank = 2).

    Parameters
    ----------
    q : fmpq_mat
        Square, symmetric.

    Returns
    -------
    tuple or None
        Rows/columns ``i < j`` and the minor's value; None if every principal
        2x2 minor vanishes.

    Examples
    --------
    >>> from flint import fmpq_mat
    >>> from attngeo.model.layerfunction import principal_minor
    >>> principal_minor(fmpq_mat([[0, 0, 1], [0, 0, 0], [1, 0, 0]]))   # the form 2 y0 y2
    (0, 2, -1)
    >>> principal_minor(fmpq_mat([[1, 1], [1, 1]])) is None             # rank 1: (y0 + y1)^2
    True
    """
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

    Parameters
    ----------
    M : fmpq_mat
    size : int

    Returns
    -------
    tuple or None
        ``(rows, cols, det)`` with ``det != 0``; None when ``rank M < size``.

    Examples
    --------
    Two hyperbolic planes: rank 4, every principal 3x3 minor zero, yet a
    nonzero 3x3 minor exists:

    >>> import itertools
    >>> from flint import fmpq_mat
    >>> from attngeo.model.layerfunction import nonzero_minor
    >>> H = fmpq_mat([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
    >>> all(fmpq_mat([[H[i, j] for j in c] for i in c]).det() == 0 for c in itertools.combinations(range(4), 3))
    True
    >>> rows, cols, det = nonzero_minor(H, 3)
    >>> rows, cols, det, fmpq_mat([[H[i, j] for j in cols] for i in rows]).det() == det
    ([0, 1, 2], [0, 1, 3], -1, True)
    >>> nonzero_minor(fmpq_mat([[1, 2], [2, 4]]), 2) is None
    True
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
    """Wrap a black box: ``call(y, z)`` = token-2 output column at tokens ``(y, z, 0, ...)``.

    Parameters
    ----------
    arch : Architecture
    f : callable
        As in :meth:`LayerFunction.from_evaluator`.

    Returns
    -------
    callable
        ``call(y, z) -> list of fmpq`` (length ``d'``).

    Examples
    --------
    For a layer, ``call(y, z) - call(0, z) = F(y) z = (V y) (y^T A z)`` (Lemma 1):
    here ``V y = 1`` and ``y^T A z = -7``.

    >>> from flint import fmpq
    >>> from attngeo import Architecture, evaluate
    >>> from attngeo.model.layerfunction import evaluator_call
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> call = evaluator_call(arch, lambda X: evaluate(arch, [[[[1, 2]], [[0, 1]], [[1, 1]]]], X))
    >>> y, z = [fmpq(2), fmpq(-1)], [fmpq(1), fmpq(3)]
    >>> call(y, z)[0] - call([fmpq(0), fmpq(0)], z)[0]
    -7
    """
    d, t = arch.input_shape
    dd = arch.widths[-1]

    def call(y, z):
        X = [[y[r], z[r]] + [fmpq(0)] * (t - 2) for r in range(d)]
        return output_column(call_evaluator(f, X), 1, dd, t)

    return call


def call_evaluator(f: Callable, X):
    """Call a user's black box; its own errors become one clear message.

    Parameters
    ----------
    f : callable
    X : the input passed to ``f``

    Returns
    -------
    whatever ``f(X)`` returns

    Raises
    ------
    InvalidInputError
        Naming the exception ``f`` raised.

    Examples
    --------
    >>> from attngeo.model.layerfunction import call_evaluator
    >>> call_evaluator(lambda X: [[2 * x for x in row] for row in X], [[1, 2]])
    [[2, 4]]
    >>> call_evaluator(lambda X: X[5], [[1, 2]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the evaluator raised IndexError: list index out of range
    """
    try:
        return f(X)
    except Exception as exc:  # user code: say whose error it is
        raise InvalidInputError(f"the evaluator raised {type(exc).__name__}: {exc}") from None


def output_column(out, j: int, rows: int, t: int) -> list[fmpq]:
    """Column ``j`` of an evaluator's ``rows x t`` answer, read exactly.

    Parameters
    ----------
    out : fmpq_mat or sequence of rows
        The evaluator's answer.
    j : int
        The column (token) to read.
    rows, t : int
        The expected shape.

    Returns
    -------
    list of fmpq

    Raises
    ------
    InvalidInputError
        When ``out`` is not a ``rows x t`` matrix of exact rationals.

    Examples
    --------
    >>> from flint import fmpq_mat
    >>> from attngeo.model.layerfunction import output_column
    >>> output_column([[1, "1/2"], [3, 4]], 1, 2, 2), output_column(fmpq_mat([[1, 2]]), 0, 1, 2)
    ([1/2, 4], [1])
    >>> output_column([[1, 0.5]], 1, 1, 2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: evaluator output[0][1] = 0.5 is a float: an evaluator's floats are rounded results, so recovery needs exact outputs (ints, Fractions, fmpq or strings)
    """
    try:
        M = [[out[r, c] for c in range(t)] for r in range(rows)] if isinstance(out, fmpq_mat) else [list(r) for r in out]
    except Exception:
        raise InvalidInputError(f"the evaluator must return a {rows}x{t} matrix of exact rationals") from None
    if len(M) != rows or any(len(r) != t for r in M):
        raise InvalidInputError(f"the evaluator must return a {rows}x{t} matrix, got {len(M)} rows")
    for r in range(rows):
        if isinstance(M[r][j], (float, np.floating)):  # stored weights are exact floats; computed outputs are not
            raise InvalidInputError(f"evaluator output[{r}][{j}] = {M[r][j]!r} is a float: an evaluator's floats are "
                                    "rounded results, so recovery needs exact outputs (ints, Fractions, fmpq or strings)")
    return [to_fmpq(M[r][j], f"evaluator output[{r}][{j}]") for r in range(rows)]
