"""Jacobians of ``W -> (phi_W(X_1), ..., phi_W(X_N))`` by reverse-mode differentiation.

The network is evaluated through :func:`attngeo.model.network.network` with
:class:`TracingOps`, which records every matrix product and transpose, and the
cotangents of all ``d_l * t`` outputs are then pulled back at once (a leading
batch axis of size ``d_l * t``). Reverse mode is chosen because a network has far
fewer outputs per input (``d_l t``, 96 for ``d = 32, t = 3``) than parameters
(5,120 for four such layers): the pull-back costs ``d_l t`` forward passes, forward
mode would cost one per parameter.

The arithmetic is whatever the wrapped operations do: exact in ``F_p``
(:class:`~attngeo.model.network.ModularOps`), exact over Q (``ExactOps`` on ``fmpq``),
or float64 for the benchmarks' baseline, which never decides anything. This
module adds no arithmetic of its own: every sum of products is a
``base.matmul`` (in ``F_p`` cut into runs that cannot overflow ``int64``) and
every sum of cotangents a ``base.add``. A functional ``<w, phi(X)>`` enters as
the seed cotangent ``w`` itself, so its ``d_l t`` products are never summed here.
"""

from __future__ import annotations

import numpy as np

from .architecture import Architecture
from .network import to_fmpq, ExactOps, ModularOps, attention, split_heads


class _Node:
    __slots__ = ("value", "pullbacks", "index")

    def __init__(self, value, pullbacks, index):
        self.value = value
        self.pullbacks = pullbacks  # [(parent node, cotangent -> parent's cotangent)]
        self.index = index


class TracingOps:
    """Wraps an operations object and records the computation for reverse mode.

    Values are wrapped in nodes (:meth:`leaf`); :meth:`matmul` and
    :meth:`transpose` compute with the wrapped ``base`` and remember how to
    pull a cotangent back; :meth:`pullback` does so for the whole trace.

    Parameters
    ----------
    base : ExactOps, ModularOps or any compatible operations object
        Does all the arithmetic.

    Examples
    --------
    The gradient of ``<w, a b^T>`` is ``w b`` in ``a`` and ``w^T a`` in ``b``:

    >>> import numpy as np
    >>> from attngeo.model.jacobian import TracingOps
    >>> from attngeo.model.network import ExactOps
    >>> ops = TracingOps(ExactOps())
    >>> a, b = ops.leaf(np.array([[1, 2], [3, 4]])), ops.leaf(np.array([[0, 1], [1, 1]]))
    >>> w = np.array([[1, -1], [2, 0]])
    >>> grads = ops.pullback(ops.matmul(a, ops.transpose(b)), w)
    >>> np.array_equal(grads[a.index], w @ b.value), np.array_equal(grads[b.index], w.T @ a.value)
    (True, True)
    """

    def __init__(self, base):
        self.base = base
        self.nodes: list[_Node] = []

    def leaf(self, value) -> _Node:
        """Wrap an input of the computation (a weight or the network input); see the class example."""
        return self._node(value, [])

    def _node(self, value, pullbacks) -> _Node:
        node = _Node(value, pullbacks, len(self.nodes))
        self.nodes.append(node)
        return node

    def matmul(self, a: _Node, b: _Node) -> _Node:
        """``a @ b``, recording the pull-backs ``g -> g b^T`` and ``g -> a^T g``."""
        base, T = self.base, self.base.transpose
        av, bv = a.value, b.value
        return self._node(
            base.matmul(av, bv),
            [(a, lambda g: base.matmul(g, T(bv))), (b, lambda g: base.matmul(T(av), g))],
        )

    def transpose(self, a: _Node) -> _Node:
        """``a^T``, recording the pull-back ``g -> g^T``."""
        return self._node(self.base.transpose(a.value), [(a, self.base.transpose)])

    def add(self, a: _Node, b: _Node) -> _Node:
        """``a + b`` (heads summed, residual connections), recording ``g -> g`` to both."""
        return self._node(self.base.add(a.value, b.value), [(a, lambda g: g), (b, lambda g: g)])

    def mask(self, a: _Node, keep) -> _Node:
        """``a`` masked by a constant 0/1 matrix, recording ``g -> g`` masked the same way."""
        return self._node(self.base.mask(a.value, keep), [(a, lambda g: self.base.mask(g, keep))])

    def pullback(self, output: _Node, seed) -> dict[int, object]:
        """Cotangents of every node reached from ``output`` seeded with ``seed``.

        Parameters
        ----------
        output : node
            The traced result.
        seed : array
            The cotangent of ``output``: the gradient is that of ``<seed, output>``.
            Extra leading axes (one per functional) are carried through.

        Returns
        -------
        dict
            Leaf index -> its cotangent; leaves ``output`` does not depend on
            are absent. See the class example.
        """
        cot = {output.index: seed}
        # Nodes are created in evaluation order, so reverse creation order is a
        # valid reverse topological order.
        for node in reversed(self.nodes[: output.index + 1]):
            g = cot.pop(node.index, None)
            if g is None or not node.pullbacks:
                if g is not None:
                    cot[("leaf", node.index)] = g
                continue
            for parent, pull in node.pullbacks:
                contrib = pull(g)
                key = parent.index
                cot[key] = contrib if key not in cot else self.base.add(cot[key], contrib)
        return {k[1]: v for k, v in cot.items() if isinstance(k, tuple)}


def jacobian(ops, arch: Architecture, point, inputs, functionals=None) -> np.ndarray:
    """The Jacobian of ``W -> (phi_W(X_n))_n``, one column per parameter.

    Parameters
    ----------
    ops : ModularOps, ExactOps or any compatible operations object
    point : flat array of parameters, already in ``ops``' domain
    inputs : array ``(N, d_0, t)`` in ``ops``' domain
    functionals : array ``(N, c, d_l, t)``, optional
        When given, row ``(n, r)`` is the gradient of ``<functionals[n, r], phi_W(X_n)>``
        (a linear functional of the output) instead of one output entry. The
        rank of such rows is still at most the rank of the full Jacobian.

    Returns
    -------
    array of shape ``(N * R, parameter_count)`` with rows ``(n, r)``: ``R = d_l t``
    output entries ``(k, j)`` row-major, or the ``c`` functionals.

    Examples
    --------
    One layer is homogeneous of degree 3 in ``W = (Q, K, V)``, so Euler's
    identity ``J W = 3 phi_W(X)`` holds on every input:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.model.jacobian import jacobian
    >>> from attngeo.model.network import ExactOps, network, split_point
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> point = np.array([4, 2, 0, -3, -2, -5, -5, -5])
    >>> inputs = np.array([[[-4, 3], [2, 5]], [[0, 1], [5, 3]]])
    >>> J = jacobian(ExactOps(), arch, point, inputs)
    >>> J.shape                                    # 2 inputs x 4 outputs, 8 parameters
    (8, 8)
    >>> np.array_equal(J @ point, 3 * network(ExactOps(), split_point(arch, point), inputs).reshape(-1))
    True
    """
    if arch.is_tied:  # shared keys and values, biases: the untied layer's columns, folded (model/untied.py)
        from .untied import augment, bias_columns, copies, fold, untied

        one = 1 if inputs.dtype != object else inputs.flat[0] * 0 + 1
        J = jacobian(ops, untied(arch), point[copies(arch)[0]], augment(arch, inputs, one), functionals)
        bias = bias_columns(arch, inputs.shape[0], functionals, J.dtype) if arch.biases else None
        if bias is not None and hasattr(ops, "reduce"):
            bias = ops.reduce(bias)
        return fold(arch, J, bias, ops.add)
    N = inputs.shape[0]
    d_l, t = arch.output_shape
    R = d_l * t if functionals is None else functionals.shape[1]
    tracer = TracingOps(ops)
    leaves = []
    layers = []
    for heads in split_heads(arch, point):
        layers.append([])
        for weights in heads:
            nodes = tuple(tracer.leaf(np.broadcast_to(W, (N,) + W.shape)) for W in weights)
            leaves.extend(nodes)
            layers[-1].append(nodes)
    out = attention(tracer, arch, layers, tracer.leaf(inputs))
    if functionals is not None:
        seed = np.ascontiguousarray(np.swapaxes(functionals, 0, 1))
    else:
        seed = np.zeros((R, N, d_l, t), dtype=inputs.dtype)
        if seed.dtype == object:
            seed[...] = 0 * inputs.flat[0]
        for r in range(R):
            seed[r, :, r // t, r % t] = 1
    grads = tracer.pullback(out, seed)
    cols = []
    for node in leaves:
        rows, c = node.value.shape[-2:]
        g = grads.get(node.index)
        if g is None:
            g = np.zeros((R, N, rows, c), dtype=seed.dtype)
        cols.append(np.swapaxes(g, 0, 1).reshape(N * R, rows * c))
    return np.concatenate(cols, axis=1)


def jacobian_mod_p(arch: Architecture, point, inputs, p: int, functionals=None) -> np.ndarray:
    """Exact Jacobian in ``F_p`` at an integer point on integer inputs (``int64``, entries in ``[0, p)``).

    Its rank mod ``p`` is a proved lower bound on the dimension of the
    neuromanifold (the rank over Q at a point is at most the generic rank).

    Parameters
    ----------
    arch : Architecture
    point : integer array of ``arch.parameter_count`` entries
    inputs : integer array ``(N, d_0, t)``
    p : int
        A prime below ``2^31``.
    functionals : integer array ``(N, c, d_l, t)``, optional
        As in :func:`jacobian`.

    Returns
    -------
    numpy.ndarray
        ``int64`` of shape ``(N * R, parameter_count)``.

    Examples
    --------
    At a random point of ``d = d' = 2, a = 1`` the rank reaches [HMK]'s
    dimension ``2ad + dd' - a^2 - 1 = 6``: the two missing directions are the
    ``GL_1`` rescaling of ``(Q, K)`` and the scaling symmetry. One random
    functional per input reaches it too, with half the rows:

    >>> import numpy as np
    >>> from attngeo import Architecture, hmk_formula
    >>> from attngeo.exact.rank import rank_mod_p
    >>> from attngeo.model.jacobian import jacobian_mod_p
    >>> arch, p = Architecture((2, 2), (1,), tokens=2), 2**31 - 1
    >>> rng = np.random.default_rng(0)
    >>> point = rng.integers(-5, 6, arch.parameter_count)
    >>> inputs = rng.integers(-5, 6, (4, 2, 2))
    >>> J = jacobian_mod_p(arch, point, inputs, p)
    >>> J.shape, rank_mod_p(J, p), hmk_formula(arch).value
    ((16, 8), 6, 6)
    >>> w = rng.integers(-5, 6, (8, 1, 2, 2))
    >>> J1 = jacobian_mod_p(arch, point, rng.integers(-5, 6, (8, 2, 2)), p, functionals=w)
    >>> J1.shape, rank_mod_p(J1, p)
    ((8, 8), 6)
    """
    ops = ModularOps(p)
    f = None if functionals is None else ops.reduce(functionals)
    return jacobian(ops, arch, ops.reduce(point), ops.reduce(inputs), f)


def jacobian_over_q(arch: Architecture, point, inputs) -> np.ndarray:
    """Exact Jacobian over Q (object array of ``fmpq``); for small cases and cross-checks.

    Parameters
    ----------
    arch : Architecture
    point : sequence of integers or ``fmpq``
    inputs : integer array ``(N, d_0, t)``

    Returns
    -------
    numpy.ndarray
        Object array of ``fmpq``, shape ``(N * d_l * t, parameter_count)``.

    Examples
    --------
    It reduces to the ``F_p`` Jacobian, and here the ranks agree:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.exact.rank import rank_mod_p, rank_over_q
    >>> from attngeo.model.jacobian import jacobian_mod_p, jacobian_over_q
    >>> arch, p = Architecture((2, 2), (1,), tokens=2), 101
    >>> point = np.array([4, 2, 0, -3, -2, -5, -5, -5])
    >>> inputs = np.array([[[-4, 3], [2, 5]], [[0, 1], [5, 3]], [[1, 0], [1, 5]]])
    >>> Jq = jacobian_over_q(arch, point, inputs)
    >>> Jp = jacobian_mod_p(arch, point, inputs, p)
    >>> all(int(x) % p == int(y) for x, y in zip(Jq.ravel(), Jp.ravel()))
    True
    >>> rank_over_q(Jq), rank_mod_p(Jp, p)
    (6, 6)
    """
    from flint import fmpq

    flat = np.empty(len(point), dtype=object)
    flat[:] = [to_fmpq(v, "a point entry") for v in point]  # exactly: 1/2 stays 1/2
    X = np.empty(np.shape(inputs), dtype=object)
    X[...] = np.vectorize(lambda v: to_fmpq(v, "an input entry"), otypes=[object])(np.asarray(inputs, dtype=object))
    return jacobian(ExactOps(), arch, flat, X)
