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
from .network import ExactOps, ModularOps, network, split_point


class _Node:
    __slots__ = ("value", "pullbacks", "index")

    def __init__(self, value, pullbacks, index):
        self.value = value
        self.pullbacks = pullbacks  # [(parent node, cotangent -> parent's cotangent)]
        self.index = index


class TracingOps:
    """Wraps an operations object and records the computation for reverse mode."""

    def __init__(self, base):
        self.base = base
        self.nodes: list[_Node] = []

    def leaf(self, value) -> _Node:
        return self._node(value, [])

    def _node(self, value, pullbacks) -> _Node:
        node = _Node(value, pullbacks, len(self.nodes))
        self.nodes.append(node)
        return node

    def matmul(self, a: _Node, b: _Node) -> _Node:
        base, T = self.base, self.base.transpose
        av, bv = a.value, b.value
        return self._node(
            base.matmul(av, bv),
            [(a, lambda g: base.matmul(g, T(bv))), (b, lambda g: base.matmul(T(av), g))],
        )

    def transpose(self, a: _Node) -> _Node:
        return self._node(self.base.transpose(a.value), [(a, self.base.transpose)])

    def pullback(self, output: _Node, seed) -> dict[int, object]:
        """Cotangents of every node reached from ``output`` seeded with ``seed``."""
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
    """
    N = inputs.shape[0]
    d_l, t = arch.output_shape
    R = d_l * t if functionals is None else functionals.shape[1]
    tracer = TracingOps(ops)
    leaves = []
    layers = []
    for Q, K, V in split_point(arch, point):
        triple = []
        for W in (Q, K, V):
            node = tracer.leaf(np.broadcast_to(W, (N,) + W.shape))
            leaves.append(node)
            triple.append(node)
        layers.append(tuple(triple))
    out = network(tracer, layers, tracer.leaf(inputs))
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
    """Exact Jacobian in ``F_p`` at an integer point on integer inputs (``int64``, entries in ``[0, p)``)."""
    ops = ModularOps(p)
    f = None if functionals is None else ops.reduce(functionals)
    return jacobian(ops, arch, ops.reduce(point), ops.reduce(inputs), f)


def jacobian_over_q(arch: Architecture, point, inputs) -> np.ndarray:
    """Exact Jacobian over Q (object array of ``fmpq``); for small cases and cross-checks."""
    from flint import fmpq

    flat = np.empty(len(point), dtype=object)
    flat[:] = [fmpq(int(v)) if not isinstance(v, fmpq) else v for v in point]
    X = np.empty(np.shape(inputs), dtype=object)
    X[...] = np.vectorize(lambda v: fmpq(int(v)), otypes=[object])(np.asarray(inputs))
    return jacobian(ExactOps(), arch, flat, X)
