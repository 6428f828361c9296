"""The parametrization ``W -> phi_W``: one layer formula, evaluated over any domain.

The layer ``phi(X) = V X (X^T K^T Q X)`` (tokens are columns) is written once, in
:func:`layer`, against a tiny *operations* object. The domain is chosen by the
operations object, never by a second copy of the formula:

* :class:`ExactOps` on numpy ``object`` arrays holding python-flint ``fmpq``
  (exact rationals) or ``fmpq_mpoly`` (symbolic polynomials);
* :class:`ModularOps` on ``int64`` arrays, exact arithmetic in ``F_p``: every
  sum of products is reduced before it can overflow (:func:`attngeo.exact.modular.matmul`
  splits inner dimensions longer than ``(2^63 - 1) / (p - 1)^2``);
* ``jacobian.TracingOps`` wraps either of them to differentiate in reverse mode.

All arrays carry leading batch axes (``(N, rows, cols)`` for ``N`` inputs), so one
pass evaluates a network on many inputs.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral, Rational
from typing import Sequence

import numpy as np
from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx, fmpz

from ..exact import modular
from .architecture import Architecture
from ..exceptions import ExpansionTooLargeError, InvalidArchitectureError, InvalidInputError

#: Symbolic expansion refuses beyond this many (estimated) monomials by default.
DEFAULT_MAX_TERMS = 200_000


class ExactOps:
    """Matrix operations on numpy arrays whose entries do exact arithmetic themselves.

    Entries are ``fmpq`` (exact rationals), ``fmpq_mpoly`` (polynomials) or small
    integers; the operations add nothing but numpy's broadcasting over leading
    batch axes.

    Examples
    --------
    With exact rationals the rescaling symmetry ``(Q, K) -> (c Q, K / c)`` of a
    rank-1 layer leaves the output unchanged exactly, here for ``c = 1/3``:

    >>> import numpy as np
    >>> from flint import fmpq
    >>> from attngeo.model.network import ExactOps, layer, object_array
    >>> Q, K = object_array(1, 2, map(fmpq, [1, 2])), object_array(1, 2, map(fmpq, [3, -1]))
    >>> V = object_array(2, 2, map(fmpq, [1, 0, 2, 5]))
    >>> X = object_array(2, 2, map(fmpq, [1, 4, -2, 3]))
    >>> c = fmpq(1, 3)
    >>> np.array_equal(layer(ExactOps(), c * Q, K / c, V, X), layer(ExactOps(), Q, K, V, X))
    True
    """

    def matmul(self, a, b):
        """``a @ b``, batched over leading axes (the class example shows it in :func:`layer`)."""
        return np.matmul(a, b)

    @staticmethod
    def transpose(a):
        """Swap the last two axes: the transpose of every matrix in a batch."""
        return np.swapaxes(a, -1, -2)

    def add(self, a, b):
        """``a + b``; :class:`~attngeo.model.jacobian.TracingOps` sums cotangents with it."""
        return a + b

    @staticmethod
    def mask(a, keep):
        """``a`` with the entries where the 0/1 matrix ``keep`` is 0 set to 0 (a causal mask)."""
        return a * keep


class ModularOps:
    """Exact matrix operations in ``F_p`` on ``int64`` arrays with entries in ``[0, p)``.

    Every result is again a residue in ``[0, p)``, so each operation's input
    meets :func:`attngeo.exact.modular.matmul`'s bound ``|x| < p``.

    Parameters
    ----------
    p : int
        A prime below ``2^31``.

    Raises
    ------
    InvalidInputError
        When ``p`` is not a prime below ``2^31``.

    Examples
    --------
    Eight products of ``p - 1 = -1`` sum to ``8`` mod ``p``; plain ``int64``
    arithmetic wraps (``8 (p - 1)^2 > 2^63``), these operations do not:

    >>> import numpy as np
    >>> from attngeo.model.network import ModularOps
    >>> p = 2**31 - 1
    >>> ops = ModularOps(p)
    >>> a, b = np.full((1, 8), p - 1), np.full((8, 1), p - 1)
    >>> ops.matmul(a, b).tolist(), int((a @ b)[0, 0]) % p == 8
    ([[8]], False)
    >>> ops.add(np.array([p - 1]), np.array([2])).tolist(), ops.reduce([-1, 2 * p + 3]).tolist()
    ([1], [2147483646, 3])
    >>> ModularOps(4)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: modulus 4 must be a prime below 2**31
    """

    def __init__(self, p: int):
        if not (2 <= p < modular.MAX_MODULUS) or not fmpz(p).is_prime():
            raise InvalidInputError(f"modulus {p} must be a prime below 2**31")
        self.p = p

    def reduce(self, a) -> np.ndarray:
        """Integers of any size as residues in ``[0, p)`` (see the class example)."""
        return modular.reduce(a, self.p)

    def matmul(self, a, b):
        """``a @ b`` mod ``p`` for residues, never wrapping (see the class example)."""
        return modular.matmul(a, b, self.p)

    transpose = staticmethod(ExactOps.transpose)

    def add(self, a, b):
        """``a + b`` mod ``p`` for residues (see the class example)."""
        return (a + b) % self.p  # two residues: below 2p < 2^32

    mask = staticmethod(ExactOps.mask)  # a residue times 0 or 1 stays a residue


def layer(ops, Q, K, V, X, keep=None):
    """One lightning self-attention layer ``V X (X^T K^T Q X)`` over ``ops``' domain.

    Products are ordered so the widest intermediate is ``d x d``: ``A = K^T Q``
    first, then the ``t x t`` Gram-type matrix ``X^T A X``.

    Parameters
    ----------
    ops : ExactOps, ModularOps or ``jacobian.TracingOps``
        Decides the domain.
    Q, K : arrays ``a x d``
    V : array ``d' x d``
    X : array ``d x t`` (tokens are columns), optionally with leading batch axes.
    keep : 0/1 integer array ``t x t``, optional
        A mask on the scores (:func:`causal_mask`): score ``(s, j)`` is kept
        where ``keep[s, j] = 1``; one head of a masked layer.

    Returns
    -------
    array ``d' x t`` (with the batch axes of ``X``).

    Examples
    --------
    Output column ``i`` is ``sum_j (x_j^T A x_i) V x_j`` (docs/fibers.md, Lemma 1),
    the layer is cubic in ``X``, and ``(Q, K)`` enter only through ``A = K^T Q``:

    >>> import numpy as np
    >>> from attngeo.model.network import ExactOps, layer
    >>> Q, K, V = np.array([[1, 2]]), np.array([[0, 1]]), np.array([[1, 1], [2, -1]])
    >>> X = np.array([[1, 0, 1], [2, 1, -1]])
    >>> Y = layer(ExactOps(), Q, K, V, X)
    >>> A = K.T @ Q
    >>> np.array_equal(Y[:, 0], sum((X[:, j] @ A @ X[:, 0]) * (V @ X[:, j]) for j in range(3)))
    True
    >>> np.array_equal(layer(ExactOps(), Q, K, V, 2 * X), 8 * Y)
    True
    >>> np.array_equal(layer(ExactOps(), 2 * Q, K, V, X), layer(ExactOps(), Q, 2 * K, V, X))
    True

    A batch of inputs is evaluated in one pass:

    >>> batch = layer(ExactOps(), Q, K, V, np.stack([X, 2 * X]))
    >>> batch.shape, np.array_equal(batch[1], 8 * Y)
    ((2, 2, 3), True)
    """
    A = ops.matmul(ops.transpose(K), Q)
    G = ops.matmul(ops.matmul(ops.transpose(X), A), X)
    if keep is not None:
        G = ops.mask(G, keep)
    return ops.matmul(ops.matmul(V, X), G)


def causal_mask(t: int) -> np.ndarray:
    """The causal mask on ``t x t`` scores: source token ``s`` reaches output token ``j`` iff ``s <= j``.

    Scores ``G[s, j] = x_s^T A x_j`` weight source ``s`` in output column ``j``,
    so the kept entries are the upper triangle.

    Examples
    --------
    >>> from attngeo.model.network import causal_mask
    >>> causal_mask(3).tolist()
    [[1, 1, 1], [0, 1, 1], [0, 0, 1]]
    """
    return np.triu(np.ones((t, t), dtype=np.int64))


def attention(ops, arch: Architecture, layers, X):
    """The network of any architecture: heads summed, value maps factored, masks, residual connections.

    Layer ``i`` maps ``X`` to ``sum_j V_ij X S_ij(X)`` (plus ``X`` when
    residual), with ``V_ij = O_ij U_ij`` when the architecture has value ranks
    and ``S_ij`` the (masked) scores. One head, ``V`` unfactored, no mask and
    no residual is exactly :func:`network`, product for product.

    Parameters
    ----------
    ops : ExactOps, ModularOps or ``jacobian.TracingOps``
    arch : Architecture
        A lightning architecture (normalized layers are evaluated in balls,
        :mod:`attngeo.geometry.dimension.ball`).
    layers : list of lists of head tuples
        As made by :func:`split_heads`: ``(Q, K, V)`` or ``(Q, K, U, O)`` per head.
    X : array ``d_0 x t``, optionally with leading batch axes.

    Returns
    -------
    array ``d_l x t``

    Examples
    --------
    Two heads are the sum of two one-head layers; with a causal mask the first
    output token sees only the first input token; a residual layer adds its input:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import ExactOps, attention, layer, split_heads
    >>> arch = Architecture((2, 2), (1,), tokens=2, heads=2)
    >>> flat = [1, 2, 0, 1, 1, 0, 2, 1, 1, 1, 3, -1, 0, 1, 1, 1]
    >>> (h1, h2), = split_heads(arch, np.array(flat))
    >>> X = np.array([[1, 2], [-1, 3]])
    >>> Y = attention(ExactOps(), arch, split_heads(arch, np.array(flat)), X)
    >>> np.array_equal(Y, layer(ExactOps(), *h1, X) + layer(ExactOps(), *h2, X))
    True
    >>> causal = Architecture((2, 2), (1,), tokens=2, heads=2, causal=True)
    >>> Yc = attention(ExactOps(), causal, split_heads(causal, np.array(flat)), X)
    >>> Xfirst = X[:, :1]
    >>> np.array_equal(Yc[:, :1], layer(ExactOps(), *h1, Xfirst) + layer(ExactOps(), *h2, Xfirst))
    True
    >>> residual = Architecture((2, 2), (1,), tokens=2, heads=2, residual=True)
    >>> np.array_equal(attention(ExactOps(), residual, split_heads(residual, np.array(flat)), X), X + Y)
    True
    """
    keep = causal_mask(arch.tokens) if arch.causal else None
    for heads in layers:
        Y = None
        for weights in heads:
            Q, K = weights[:2]
            V = weights[2] if len(weights) == 3 else ops.matmul(weights[3], weights[2])  # V = O U
            term = layer(ops, Q, K, V, X, keep)
            Y = term if Y is None else ops.add(Y, term)
        X = ops.add(X, Y) if arch.residual else Y
    return X


def forward(ops, arch: Architecture, point: np.ndarray, inputs: np.ndarray, one=1) -> np.ndarray:
    """``phi_W(X)`` of a tied layer over ``ops``' domain: the untied layer on ``X~``, plus ``b_O`` (and ``X``).

    Examples
    --------
    One token-mixing lightning layer of width 1 with ``b_O = 5``: ``x_i (x_1^2 + x_2^2) + 5``; a key bias
    ``b_K = 1`` adds ``(x_1 + x_2) x_i`` (lightning sees it; softmax would not):

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import ExactOps
    >>> from attngeo.model.network import forward
    >>> arch = Architecture((1, 1), (1,), biases=True)          # Q K V bQ bK bV bO
    >>> X = np.array([[2, 3]])
    >>> forward(ExactOps(), arch, np.array([1, 1, 1, 0, 0, 0, 5]), X).tolist()
    [[31, 44]]
    >>> forward(ExactOps(), arch, np.array([1, 1, 1, 0, 1, 0, 5]), X).tolist()
    [[41, 59]]
    """
    from .untied import augment, copies, untied

    plain = untied(arch)
    source, output_bias = copies(arch)
    Y = attention(ops, plain, split_heads(plain, point[source]), augment(arch, inputs, one))
    if len(output_bias):
        bias = point[output_bias].reshape(-1, 1)
        Y = ops.add(Y, np.broadcast_to(bias, Y.shape[-2:]) if Y.ndim == 2 else
                    np.broadcast_to(bias, Y.shape).copy())
    return ops.add(inputs, Y) if arch.residual else Y


def network(ops, layers, X):
    """Compose :func:`layer` over ``layers = [(Q_1, K_1, V_1), ...]``.

    Parameters
    ----------
    ops : ExactOps, ModularOps or ``jacobian.TracingOps``
    layers : list of ``(Q, K, V)``
        As made by :func:`split_point`.
    X : array ``d_0 x t``, optionally with leading batch axes.

    Returns
    -------
    array ``d_l x t``

    Examples
    --------
    Two layers: the composition, of degree ``3 * 3 = 9`` in the input.

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import ExactOps, layer, network, split_point
    >>> arch = Architecture((2, 2, 1), (1, 1))
    >>> (Q1, K1, V1), (Q2, K2, V2) = layers = split_point(arch, [1, 2, 0, 1, 1, 1, 2, -1, 1, 0, 1, 1, 1, 1])
    >>> X = np.array([[1, 0], [1, 2]])
    >>> Y = network(ExactOps(), layers, X)
    >>> Y.tolist(), np.array_equal(Y, layer(ExactOps(), Q2, K2, V2, layer(ExactOps(), Q1, K1, V1, X)))
    ([[4050, 5400]], True)
    >>> np.array_equal(network(ExactOps(), layers, 2 * X), 2**9 * Y)
    True
    """
    Y = X
    for Q, K, V in layers:
        Y = layer(ops, Q, K, V, Y)
    return Y


# -- converting user data --------------------------------------------------------


def to_fmpq(value, where: str) -> fmpq:
    """Read one exact rational: int, Fraction, fmpq, a float (its exact binary value), or a string ``"p/q"`` / ``"1.25"``.

    Parameters
    ----------
    value : int, Fraction, fmpq, fmpz or str
    where : str
        The name of the value in the error message (e.g. ``"Q1_0_2"``).

    Returns
    -------
    fmpq

    Raises
    ------
    InvalidInputError
        For NaN and infinities, booleans, malformed strings and anything else
        that is not a number.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from attngeo.model.network import to_fmpq
    >>> to_fmpq("1.25", "w"), to_fmpq(" -3/6 ", "w"), to_fmpq(Fraction(2, 4), "w"), to_fmpq("1e-2", "w")
    (5/4, -1/2, 1/2, 1/100)

    A float is read as the exact binary rational it is (trained weights *are*
    these numbers), never rounded to a nearby decimal; write ``"0.1"`` to mean 1/10:

    >>> to_fmpq(0.1, "Q1_0_0"), to_fmpq(0.5, "w")
    (3602879701896397/36028797018963968, 1/2)
    >>> import numpy as np
    >>> to_fmpq(np.float32(0.1), "w")   # float32's own value, not float64's
    13421773/134217728
    >>> to_fmpq(float("nan"), "w")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: w = nan is not a finite number
    >>> to_fmpq(True, "V1_0_0")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: V1_0_0 = True is a boolean, not a number
    """
    if isinstance(value, bool):
        raise InvalidInputError(f"{where} = {value!r} is a boolean, not a number")
    if isinstance(value, fmpq):
        return value
    if isinstance(value, (Integral, fmpz, np.integer)):
        return fmpq(int(value))
    if isinstance(value, Rational):
        return fmpq(int(value.numerator), int(value.denominator))
    if isinstance(value, str):
        try:
            f = Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise InvalidInputError(
                f"{where} = {value!r} is not an exact rational; write an integer, 'p/q' or a decimal such as '1.25'"
            ) from None
        return fmpq(f.numerator, f.denominator)
    if isinstance(value, (float, np.floating)):
        if not np.isfinite(value):
            raise InvalidInputError(f"{where} = {float(value)!r} is not a finite number")
        num, den = float(value).as_integer_ratio()  # exact: every finite float is a dyadic rational
        return fmpq(num, den)
    raise InvalidInputError(f"{where} = {value!r} is not a number")


def object_array(rows: int, cols: int, entries) -> np.ndarray:
    """An object array filled element by element (numpy would unpack polynomials).

    Parameters
    ----------
    rows, cols : int
    entries : iterable
        At least ``rows * cols`` values, row-major.

    Returns
    -------
    numpy.ndarray
        Shape ``(rows, cols)``, dtype object.

    Examples
    --------
    >>> from flint import fmpq_mpoly_ctx
    >>> from attngeo.model.network import object_array
    >>> x, y = fmpq_mpoly_ctx.get(("x", "y"), "degrevlex").gens()
    >>> M = object_array(1, 2, [x + y, x * y])
    >>> M.shape, str(M[0, 0])
    ((1, 2), 'x + y')
    """
    out = np.empty((rows, cols), dtype=object)
    it = iter(entries)
    for r in range(rows):
        for c in range(cols):
            out[r, c] = next(it)
    return out


def split_point(arch: Architecture, flat: Sequence) -> list[tuple]:
    """Cut a flat parameter vector (any entries) into per-layer ``(Q, K, V)`` arrays.

    Parameters
    ----------
    arch : Architecture
    flat : sequence or numpy array
        ``arch.parameter_count`` entries in flattening order. A numeric numpy
        array is reshaped (views, same dtype); anything else becomes object arrays.

    Returns
    -------
    list of ``(Q, K, V)``, one per layer.

    Raises
    ------
    InvalidInputError
        When the length is not the number of parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import split_point
    >>> arch = Architecture((2, 1), (1,))
    >>> Q, K, V = split_point(arch, np.arange(6))[0]
    >>> Q.tolist(), K.tolist(), V.tolist(), V.dtype
    ([[0, 1]], [[2, 3]], [[4, 5]], dtype('int64'))
    >>> split_point(arch, [1, 2])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the point has 2 entries but widths 2,1, ranks 1, t=2, lightning has 6 parameters
    """
    arch.require_plain("(Q, K, V) per layer")
    return [heads[0] for heads in split_heads(arch, flat)]


def split_heads(arch: Architecture, flat: Sequence) -> list[list[tuple]]:
    """Cut a flat parameter vector into per-layer lists of per-head weight tuples.

    Parameters
    ----------
    arch : Architecture
    flat : sequence or numpy array
        ``arch.parameter_count`` entries in flattening order. A numeric numpy
        array is reshaped (views, same dtype); anything else becomes object arrays.

    Returns
    -------
    list (one per layer) of lists (one per head) of ``(Q, K, V)``, or of
    ``(Q, K, U, O)`` when the architecture has value ranks.

    Raises
    ------
    InvalidInputError
        When the length is not the number of parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import split_heads
    >>> arch = Architecture((2, 1), (1,), heads=2, value_ranks=1)
    >>> [[[M.tolist() for M in head] for head in heads] for heads in split_heads(arch, np.arange(14))]
    [[[[[0, 1]], [[2, 3]], [[4, 5]], [[6]]], [[[7, 8]], [[9, 10]], [[11, 12]], [[13]]]]]
    """
    if len(flat) != arch.parameter_count:
        raise InvalidInputError(
            f"the point has {len(flat)} entries but {arch} has {arch.parameter_count} parameters"
        )
    if arch.is_tied:
        raise InvalidArchitectureError(f"{arch} shares keys and values or has biases: its heads are not separate "
                                       "weight tuples (attngeo.model.untied maps it to one that has them)")
    per_head = 3 if arch.value_ranks is None else 4
    layers: list[list[tuple]] = [[] for _ in range(arch.depth)]
    mats = []
    for b in arch.blocks():
        chunk = flat[b.offset : b.offset + b.size]
        if isinstance(chunk, np.ndarray) and chunk.dtype != object:
            mats.append(chunk.reshape(b.rows, b.cols))
        else:
            mats.append(object_array(b.rows, b.cols, chunk))
        if len(mats) == per_head:
            layers[b.layer - 1].append(tuple(mats))
            mats = []
    return layers


def read_point(arch: Architecture, weights) -> list[fmpq]:
    """Normalize weights to a flat list of ``fmpq`` in flattening order.

    ``weights`` is either a flat sequence of ``parameter_count`` numbers or a
    sequence of ``(Q, K, V)`` triples of nested lists, one per layer.

    Parameters
    ----------
    arch : Architecture
    weights : list, tuple or numpy array
        Entries as :func:`to_fmpq` reads them.

    Returns
    -------
    list of fmpq
        ``arch.parameter_count`` values in flattening order.

    Raises
    ------
    InvalidInputError
        On a wrong count, shape or entry, naming it.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import read_point
    >>> arch = Architecture((2, 1), (1,))
    >>> read_point(arch, [[[[1, 0]], [[0, 1]], [["1/2", 3]]]])
    [1, 0, 0, 1, 1/2, 3]
    >>> read_point(arch, [1, 0, 0, 1, "0.5", 3]) == read_point(arch, [[[[1, 0]], [[0, 1]], [["1/2", 3]]]])
    True
    >>> read_point(arch, [[[[1, 0, 0]], [[0, 1]], [[1, 1]]]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: Q1 must be 1x2
    """
    if isinstance(weights, np.ndarray):
        weights = weights.tolist()
    if not isinstance(weights, (list, tuple)):
        raise InvalidInputError("weights must be a flat list of numbers or a list of (Q, K, V) per layer")
    if weights and isinstance(weights[0], (list, tuple, np.ndarray)):
        if not arch.is_plain:
            raise InvalidInputError(f"give the weights of {arch} as one flat list in flattening order "
                                    "(Architecture.variable_names()); nested (Q, K, V) per layer is for one head")
        if len(weights) != arch.depth:
            raise InvalidInputError(f"weights has {len(weights)} layers but {arch} has {arch.depth}")
        flat = []
        blocks = list(arch.blocks())
        for i, triple in enumerate(weights):
            if len(triple) != 3:
                raise InvalidInputError(f"layer {i + 1} of weights must be (Q, K, V), got {len(triple)} matrices")
            for b, mat in zip(blocks[3 * i : 3 * i + 3], triple):
                rows = list(mat.tolist() if isinstance(mat, np.ndarray) else mat)
                if len(rows) != b.rows or any(len(r) != b.cols for r in rows):
                    raise InvalidInputError(f"{b.name}{b.layer} must be {b.rows}x{b.cols}")
                flat.extend(to_fmpq(v, b.variable(r, c)) for r, row in enumerate(rows) for c, v in enumerate(row))
        return flat
    if len(weights) != arch.parameter_count:
        raise InvalidInputError(
            f"weights has {len(weights)} entries but {arch} has {arch.parameter_count} parameters"
        )
    names = arch.variable_names()
    return [to_fmpq(v, names[k]) for k, v in enumerate(weights)]


def read_input(arch: Architecture, X) -> np.ndarray:
    """An input ``d_0 x t`` matrix as an object array of ``fmpq``.

    Parameters
    ----------
    arch : Architecture
    X : nested lists or numpy array
        ``d_0`` rows, one column per token; entries as :func:`to_fmpq` reads them.

    Returns
    -------
    numpy.ndarray
        Shape ``arch.input_shape``, dtype object.

    Raises
    ------
    InvalidInputError
        On a wrong shape or an inexact entry.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import read_input
    >>> X = read_input(Architecture((2, 1), (1,), tokens=2), [[1, "1/2"], [0, 2]])
    >>> X.shape, X[0, 1]
    ((2, 2), 1/2)
    >>> read_input(Architecture((2, 1), (1,), tokens=2), [[1, 2, 3], [4, 5, 6]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: an input must be a 2x2 matrix (d_0 rows, one column per token)
    """
    d, t = arch.input_shape
    rows = list(X.tolist() if isinstance(X, np.ndarray) else X)
    if len(rows) != d or any(len(r) != t for r in rows):
        raise InvalidInputError(f"an input must be a {d}x{t} matrix (d_0 rows, one column per token)")
    return object_array(d, t, (to_fmpq(v, f"X[{r}][{c}]") for r, row in enumerate(rows) for c, v in enumerate(row)))


# -- public evaluation ------------------------------------------------------------


def evaluate(arch: Architecture, weights, X) -> fmpq_mat:
    """``phi_W(X)`` exactly over the rationals.

    Parameters
    ----------
    arch : Architecture
        A lightning architecture.
    weights : list
        As :func:`read_point` reads them (flat, or ``(Q, K, V)`` per layer).
    X : nested lists or numpy array
        ``d_0 x t``, as :func:`read_input` reads it.

    Returns
    -------
    fmpq_mat
        ``d_l x t``.

    Raises
    ------
    InvalidInputError
        On bad weights or input, or a normalized architecture (use
        ``attngeo.evaluate_ball``).

    Examples
    --------
    >>> from flint import fmpq
    >>> from attngeo import Architecture, evaluate
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> evaluate(arch, [1, 0, 1, 0, 1, 0], [[1, 2], [3, 4]])   # Q=K=(1,0), V=(1,0)
    [5, 10]

    Only ``A = K^T Q`` matters: ``(Q, K) -> (Q / 2, 2 K)`` gives the same output.

    >>> evaluate(arch, [[[["1/2", 0]], [[2, 0]], [[1, 0]]]], [[1, 2], [3, 4]])
    [5, 10]
    >>> evaluate(Architecture((2, 1), (1,), normalization="softmax"), [1, 0, 1, 0, 1, 0], [[1, 2], [3, 4]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: exact rational evaluation exists for lightning networks only; for softmax use attngeo.geometry.dimension.ball.evaluate_ball (ball arithmetic)
    """
    if arch.normalization != "lightning":
        raise InvalidInputError("exact rational evaluation exists for lightning networks only; for "
                                f"{arch.normalization} use attngeo.geometry.dimension.ball.evaluate_ball (ball arithmetic)")
    if arch.is_tied:
        point = np.array(read_point(arch, weights) + [fmpq(0)], dtype=object)[:-1]
        return fmpq_mat(forward(ExactOps(), arch, point, read_input(arch, X), fmpq(1)).tolist())
    layers = split_heads(arch, read_point(arch, weights))
    Y = attention(ExactOps(), arch, layers, read_input(arch, X))
    return fmpq_mat(Y.tolist())


def evaluate_mod_p(arch: Architecture, point: np.ndarray, inputs: np.ndarray, p: int) -> np.ndarray:
    """``phi_W(X_n)`` in ``F_p`` for integer ``point`` (flat) and ``inputs`` of shape ``(N, d_0, t)``.

    Parameters
    ----------
    arch : Architecture
    point : integer array
        ``arch.parameter_count`` entries, any size (reduced exactly).
    inputs : integer array ``(N, d_0, t)``
    p : int
        A prime below ``2^31``.

    Returns
    -------
    numpy.ndarray
        ``int64`` residues of shape ``(N, d_l, t)``.

    Examples
    --------
    It is the rational value reduced mod ``p``, on every input of the batch:

    >>> import numpy as np
    >>> from attngeo import Architecture, evaluate
    >>> from attngeo.model.network import evaluate_mod_p
    >>> arch = Architecture((2, 2, 1), (1, 1))
    >>> point = np.array([1, 2, 0, 1, 1, 1, 2, -1, 1, 0, 1, 1, 1, 1])
    >>> inputs = np.array([[[1, 0], [1, 2]], [[3, -1], [0, 2]]])
    >>> Y = evaluate_mod_p(arch, point, inputs, 101)
    >>> Y.shape
    (2, 1, 2)
    >>> all(int(Y[n, 0, j]) == int(evaluate(arch, point.tolist(), inputs[n].tolist())[0, j]) % 101
    ...     for n in range(2) for j in range(2))
    True
    """
    ops = ModularOps(p)
    if arch.is_tied:
        return forward(ops, arch, ops.reduce(point), ops.reduce(inputs))
    layers = split_heads(arch, ops.reduce(point))
    return attention(ops, arch, layers, ops.reduce(inputs))


def estimate_terms(arch: Architecture) -> int:
    """Upper estimate of the monomials in the symbolic expansion of all outputs.

    An output entry of layer ``i`` is a sum over ``(m, n, p, u, s)`` of
    ``V_km Y_ms Y_ns K_un Q_up Y_pj``: at most ``d^3 a t`` products of three
    entries of the previous layer.

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    int
        An upper bound on the total number of monomials of :func:`expand`'s entries.

    Examples
    --------
    For one small layer the bound is attained: no two products coincide.

    >>> from attngeo import Architecture, expand
    >>> from attngeo.model.network import estimate_terms
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> estimate_terms(arch), sum(len(y) for y in expand(arch).ravel())
    (32, 32)
    >>> estimate_terms(Architecture((3, 3, 3), (2, 2)))   # why expand refuses it
    816293376
    """
    terms = 1
    for i, (d, a) in enumerate(zip(arch.widths, arch.ranks)):
        b = 1 if arch.value_ranks is None else arch.value_ranks[i]  # V = O U sums over b
        terms = arch.heads[i] * b * d**3 * a * arch.tokens * terms**3 + (terms if arch.residual else 0)
    d_l, t = arch.output_shape
    return d_l * t * terms


def symbolic_context(arch: Architecture):
    """The cached polynomial ring in the weights (``Q1_0_2``...) and inputs (``X_0_1``...).

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    fmpq_mpoly_ctx
        ``arch.parameter_count + d_0 t`` variables over Q, weights first, degrevlex.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.model.network import symbolic_context
    >>> ctx = symbolic_context(Architecture((2, 1), (1,), tokens=2))
    >>> ctx.names()
    ('Q1_0_0', 'Q1_0_1', 'K1_0_0', 'K1_0_1', 'V1_0_0', 'V1_0_1', 'X_0_0', 'X_0_1', 'X_1_0', 'X_1_1')
    >>> ctx is symbolic_context(Architecture((2, 1), (1,), tokens=2))
    True
    """
    d, t = arch.input_shape
    names = arch.variable_names() + [f"X_{r}_{c}" for r in range(d) for c in range(t)]
    return fmpq_mpoly_ctx.get(names, "degrevlex")


def expand(arch: Architecture, max_terms: int = DEFAULT_MAX_TERMS) -> np.ndarray:
    """The network output as a ``d_l x t`` object array of polynomials over Q.

    Variables are those of :func:`symbolic_context`.

    Parameters
    ----------
    arch : Architecture
        A lightning architecture.
    max_terms : int, optional
        Refuse when :func:`estimate_terms` exceeds it.

    Returns
    -------
    numpy.ndarray
        Shape ``arch.output_shape``, entries ``fmpq_mpoly``.

    Raises
    ------
    ExpansionTooLargeError
        When :func:`estimate_terms` exceeds ``max_terms`` (raise ``max_terms`` to insist).
    InvalidInputError
        For a normalized architecture (not polynomial).

    Examples
    --------
    >>> from attngeo import Architecture, expand
    >>> Y = expand(Architecture((1, 1), (1,), tokens=1))
    >>> str(Y[0, 0])
    'Q1_0_0*K1_0_0*V1_0_0*X_0_0^3'

    Two layers: the first layer's weights enter cubically, the input with degree 9.

    >>> str(expand(Architecture((1, 1, 1), (1, 1), tokens=1))[0, 0])
    'Q1_0_0^3*K1_0_0^3*V1_0_0^3*Q2_0_0*K2_0_0*V2_0_0*X_0_0^9'
    >>> expand(Architecture((3, 3, 3), (2, 2)))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.ExpansionTooLargeError: expanding widths 3,3,3, ranks 2,2, t=2, lightning could produce about 816,293,376 monomials (bound 200,000); evaluate at points instead, or pass a larger max_terms
    """
    if arch.normalization != "lightning":
        raise InvalidInputError("symbolic expansion exists for lightning (polynomial) networks only")
    estimate = estimate_terms(arch)
    if estimate > max_terms:
        raise ExpansionTooLargeError(
            f"expanding {arch} could produce about {estimate:,} monomials (bound {max_terms:,}); "
            "evaluate at points instead, or pass a larger max_terms"
        )
    ctx = symbolic_context(arch)
    gens = ctx.gens()
    P = arch.parameter_count
    layers = split_heads(arch, list(gens[:P]))
    d, t = arch.input_shape
    X = object_array(d, t, gens[P:])
    return attention(ExactOps(), arch, layers, X)
