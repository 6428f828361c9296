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
from ..exceptions import ExpansionTooLargeError, InvalidInputError

#: Symbolic expansion refuses beyond this many (estimated) monomials by default.
DEFAULT_MAX_TERMS = 200_000


class ExactOps:
    """Matrix operations on numpy arrays whose entries do exact arithmetic themselves."""

    def matmul(self, a, b):
        return np.matmul(a, b)

    @staticmethod
    def transpose(a):
        return np.swapaxes(a, -1, -2)

    def add(self, a, b):
        return a + b


class ModularOps:
    """Exact matrix operations in ``F_p`` on ``int64`` arrays with entries in ``[0, p)``.

    Every result is again a residue in ``[0, p)``, so each operation's input
    meets :func:`attngeo.exact.modular.matmul`'s bound ``|x| < p``.
    """

    def __init__(self, p: int):
        if not (2 <= p < modular.MAX_MODULUS) or not fmpz(p).is_prime():
            raise InvalidInputError(f"modulus {p} must be a prime below 2**31")
        self.p = p

    def reduce(self, a) -> np.ndarray:
        return modular.reduce(a, self.p)

    def matmul(self, a, b):
        return modular.matmul(a, b, self.p)

    transpose = staticmethod(ExactOps.transpose)

    def add(self, a, b):
        return (a + b) % self.p  # two residues: below 2p < 2^32


def layer(ops, Q, K, V, X):
    """One lightning self-attention layer ``V X (X^T K^T Q X)`` over ``ops``' domain.

    Products are ordered so the widest intermediate is ``d x d``: ``A = K^T Q``
    first, then the ``t x t`` Gram-type matrix ``X^T A X``.
    """
    A = ops.matmul(ops.transpose(K), Q)
    G = ops.matmul(ops.matmul(ops.transpose(X), A), X)
    return ops.matmul(ops.matmul(V, X), G)


def network(ops, layers, X):
    """Compose :func:`layer` over ``layers = [(Q_1, K_1, V_1), ...]``."""
    Y = X
    for Q, K, V in layers:
        Y = layer(ops, Q, K, V, Y)
    return Y


# -- converting user data --------------------------------------------------------


def to_fmpq(value, where: str) -> fmpq:
    """Read one exact rational: int, Fraction, fmpq, or a string ``"p/q"`` / ``"1.25"``."""
    if isinstance(value, bool):
        raise InvalidInputError(f"{where} = {value!r} is a boolean, not a number")
    if isinstance(value, fmpq):
        return value
    if isinstance(value, (Integral, fmpz)):
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
    if isinstance(value, float):
        raise InvalidInputError(
            f"{where} = {value!r} is a float; attngeo computes exactly, so give it as a string ('0.1') or 'p/q'"
        )
    raise InvalidInputError(f"{where} = {value!r} is not a number")


def object_array(rows: int, cols: int, entries) -> np.ndarray:
    """An object array filled element by element (numpy would unpack polynomials)."""
    out = np.empty((rows, cols), dtype=object)
    it = iter(entries)
    for r in range(rows):
        for c in range(cols):
            out[r, c] = next(it)
    return out


def split_point(arch: Architecture, flat: Sequence) -> list[tuple]:
    """Cut a flat parameter vector (any entries) into per-layer ``(Q, K, V)`` arrays."""
    if len(flat) != arch.parameter_count:
        raise InvalidInputError(
            f"the point has {len(flat)} entries but {arch} has {arch.parameter_count} parameters"
        )
    mats = []
    for b in arch.blocks():
        chunk = flat[b.offset : b.offset + b.size]
        if isinstance(chunk, np.ndarray) and chunk.dtype != object:
            mats.append(chunk.reshape(b.rows, b.cols))
        else:
            mats.append(object_array(b.rows, b.cols, chunk))
    return [tuple(mats[3 * i : 3 * i + 3]) for i in range(arch.depth)]


def read_point(arch: Architecture, weights) -> list[fmpq]:
    """Normalize weights to a flat list of ``fmpq`` in flattening order.

    ``weights`` is either a flat sequence of ``parameter_count`` numbers or a
    sequence of ``(Q, K, V)`` triples of nested lists, one per layer.
    """
    if isinstance(weights, np.ndarray):
        weights = weights.tolist()
    if not isinstance(weights, (list, tuple)):
        raise InvalidInputError("weights must be a flat list of numbers or a list of (Q, K, V) per layer")
    if weights and isinstance(weights[0], (list, tuple, np.ndarray)):
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


def load_weights(arch: Architecture, path) -> list[fmpq]:
    """Read weights from a JSON file, exactly.

    The file holds a flat list, a list of ``[Q, K, V]`` per layer, or (single
    layer) an object ``{"Q": ..., "K": ..., "V": ...}``. Entries are integers,
    ``"p/q"`` strings or decimals (``0.1`` and ``"0.1"`` both mean 1/10: JSON
    numbers are read from their text, never through a float).
    """
    import json

    def refuse(token):
        raise InvalidInputError(f"{path}: {token} is not a number; weights must be exact rationals")

    try:
        with open(path) as fh:
            data = json.load(fh, parse_float=str, parse_constant=refuse)
    except OSError as exc:
        raise InvalidInputError(f"cannot read weights file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict):
        if arch.depth != 1 or set(data) != {"Q", "K", "V"}:
            raise InvalidInputError(f"{path}: an object of weights needs exactly the keys Q, K, V (single layer)")
        data = [[data["Q"], data["K"], data["V"]]]
    try:
        return read_point(arch, data)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{path}: {exc}") from None


def read_input(arch: Architecture, X) -> np.ndarray:
    """An input ``d_0 x t`` matrix as an object array of ``fmpq``."""
    d, t = arch.input_shape
    rows = list(X.tolist() if isinstance(X, np.ndarray) else X)
    if len(rows) != d or any(len(r) != t for r in rows):
        raise InvalidInputError(f"an input must be a {d}x{t} matrix (d_0 rows, one column per token)")
    return object_array(d, t, (to_fmpq(v, f"X[{r}][{c}]") for r, row in enumerate(rows) for c, v in enumerate(row)))


# -- public evaluation ------------------------------------------------------------


def evaluate(arch: Architecture, weights, X) -> fmpq_mat:
    """``phi_W(X)`` exactly over the rationals.

    Examples
    --------
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> evaluate(arch, [1, 0, 1, 0, 1, 0], [[1, 2], [3, 4]])   # Q=K=(1,0), V=(1,0)
    [5, 10]
    """
    if arch.normalization != "lightning":
        raise InvalidInputError("exact rational evaluation exists for lightning networks only; for "
                                f"{arch.normalization} use attngeo.geometry.softmax.evaluate_ball (ball arithmetic)")
    layers = split_point(arch, read_point(arch, weights))
    Y = network(ExactOps(), layers, read_input(arch, X))
    return fmpq_mat(Y.tolist())


def evaluate_mod_p(arch: Architecture, point: np.ndarray, inputs: np.ndarray, p: int) -> np.ndarray:
    """``phi_W(X_n)`` in ``F_p`` for integer ``point`` (flat) and ``inputs`` of shape ``(N, d_0, t)``."""
    ops = ModularOps(p)
    layers = split_point(arch, ops.reduce(point))
    return network(ops, layers, ops.reduce(inputs))


def estimate_terms(arch: Architecture) -> int:
    """Upper estimate of the monomials in the symbolic expansion of all outputs.

    An output entry of layer ``i`` is a sum over ``(m, n, p, u, s)`` of
    ``V_km Y_ms Y_ns K_un Q_up Y_pj``: at most ``d^3 a t`` products of three
    entries of the previous layer.
    """
    terms = 1
    for d, a in zip(arch.widths, arch.ranks):
        terms = d**3 * a * arch.tokens * terms**3
    d_l, t = arch.output_shape
    return d_l * t * terms


def symbolic_context(arch: Architecture):
    """The cached polynomial ring in the weights (``Q1_0_2``...) and inputs (``X_0_1``...)."""
    d, t = arch.input_shape
    names = arch.variable_names() + [f"X_{r}_{c}" for r in range(d) for c in range(t)]
    return fmpq_mpoly_ctx.get(names, "degrevlex")


def expand(arch: Architecture, max_terms: int = DEFAULT_MAX_TERMS) -> np.ndarray:
    """The network output as a ``d_l x t`` object array of polynomials over Q.

    Raises
    ------
    ExpansionTooLargeError
        When :func:`estimate_terms` exceeds ``max_terms`` (raise ``max_terms`` to insist).

    Examples
    --------
    >>> Y = expand(Architecture((1, 1), (1,), tokens=1))
    >>> str(Y[0, 0])
    'Q1_0_0*K1_0_0*V1_0_0*X_0_0^3'
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
    layers = split_point(arch, list(gens[:P]))
    d, t = arch.input_shape
    X = object_array(d, t, gens[P:])
    return network(ExactOps(), layers, X)
