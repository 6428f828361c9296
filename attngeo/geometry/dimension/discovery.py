"""Discovery of kernel fields nobody has named: linear vector fields in the Jacobian's kernel (issue [3/6] item 2).

When the bounds still differ, the kernel of ``dφ`` holds directions the known
families (the groups, :mod:`attngeo.geometry.dimension.kernelfields`) do not span. This
searches for *linear* fields ``v(W) = C W`` with ``dφ_W[C W] = 0``:

1. at ``s`` random points ``W_s`` mod ``p``, ``J(W_s) C W_s = 0`` is linear in the
   ``P²`` entries of ``C``; its solutions mod ``p`` contain every such field;
2. solutions whose values at a fresh point are not in the span of the known
   fields there are new; their entries are read back as small integers;
3. each new field is **verified exactly over ℚ**: ``Σ_j (C W)_j ∂φ/∂W_j``, with ``φ``
   expanded as polynomials in ``(W, X)``, is the zero polynomial. Only verified
   fields are returned; sampling proposes, the expansion decides.

Only small architectures (the expansion and the ``P²`` unknowns) are in reach.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from flint import fmpq, nmod_mat

from ...exceptions import InvalidInputError
from ...exact.rank import random_prime, rank_mod_p
from ...model.architecture import Architecture
from ...model.jacobian import jacobian_mod_p
from ...exact import modular
from ...model.network import expand, symbolic_context
from .bounds import random_ints
from .kernelfields import kernel_rows
from ..symmetry import field_matrix

#: Sizes beyond which the P^2 unknowns and the expansion (degree ~ 3^depth) are out of reach;
#: the checker's limits (attngeo/check/dimension/discovery.py) are the same.
MAX_PARAMETERS, MAX_DEPTH, MAX_TOKENS = 40, 2, 3


@dataclass(frozen=True)
class DiscoveredField:
    r"""A linear field ``v(W) = C W`` (``C`` a ``P x P`` integer matrix) verified to lie in the kernel of ``dφ``.

    >>> from attngeo import Architecture
    >>> arch = Architecture((1, 1), (1,), tokens=2)     # scaling: delta Q = Q, delta V = -V
    >>> field = DiscoveredField(arch, ((1, 0, 0), (0, 0, 0), (0, 0, -1)))
    >>> print(field.latex())
    \delta Q1_{00} = Q1_{00},\quad \delta V1_{00} = - V1_{00}
    """

    arch: Architecture
    matrix: tuple

    def latex(self) -> str:
        r"""``δw = Σ c w'`` for every weight the field moves (see the class example), by ``sympy.latex``.

        >>> from attngeo import Architecture
        >>> print(DiscoveredField(Architecture((1, 1), (1,), tokens=2), ((0, 1, 0), (0, 0, 0), (0, 0, 0))).latex())
        \delta Q1_{00} = K1_{00}
        """
        import sympy

        from ... import latex

        names = self.arch.variable_names()
        symbols = [sympy.Symbol(n) for n in names]
        shown = {s: latex.variable(n) for s, n in zip(symbols, names)}
        lines = []
        for i, row in enumerate(self.matrix):
            if any(row):
                value = sympy.Add(*(int(c) * s for c, s in zip(row, symbols) if c))
                lines.append(rf"\delta {shown[symbols[i]]} = {sympy.latex(value, symbol_names=shown)}")
        return r",\quad ".join(lines)


def _symmetric(value: int, p: int) -> int:
    return value - p if value > p // 2 else value


def _candidates(arch: Architecture, p: int, rng: random.Random, samples: int) -> list[np.ndarray]:
    """Basis (mod p) of ``{C : J(W_s) C W_s = 0 for every sample}``."""
    P = arch.parameter_count
    blocks = []
    for _ in range(samples):
        W = random_ints(rng, (P,)) % p
        X = random_ints(rng, (P,) + arch.input_shape) % p
        J = jacobian_mod_p(arch, W, X, p).reshape(-1, P)
        # Only the row space of J matters and it has dimension <= P: P random combinations of its rows keep it
        # (generically), and the elimination below shrinks from (d_l t P) rows per sample to P. A combination that
        # lost rank would only add candidates, which the exact check over Q then discards.
        if J.shape[0] > P:
            J = modular.matmul(random_ints(rng, (P, J.shape[0])) % p, J, p)
        # equation (i): sum_{j,k} J[i, j] W[k] C[j, k] = 0  ->  row J[i] (x) W
        # residues below p < 2**26 (random_prime): each product is below 2**52, exact in int64
        blocks.append((J[:, :, None] * W[None, None, :] % p).reshape(J.shape[0], -1))
    A = np.vstack(blocks).astype(np.int64)
    mat = nmod_mat(A.shape[0], A.shape[1], A.ravel().tolist(), p)
    X, nullity = mat.nullspace()
    return [np.array([int(X[r, c]) for r in range(P * P)], dtype=np.int64).reshape(P, P) for c in range(nullity)]


def _verified(arch: Architecture, C: np.ndarray) -> bool:
    """Exactly over ℚ: the derivative of the expanded network along ``C W`` is the zero polynomial."""
    ctx = symbolic_context(arch)
    gens = ctx.gens()[: arch.parameter_count]
    v = [sum((int(C[i, j]) * gens[j] for j in range(len(gens)) if C[i, j]), ctx.from_dict({})) for i in range(len(gens))]
    for y in expand(arch).ravel():
        total = ctx.from_dict({})
        for i, vi in enumerate(v):
            if vi != 0:
                total += vi * y.derivative(i)
        if total != 0:
            return False
    return True


def discover_fields(arch: Architecture, seed: int = 0, samples: int | None = None) -> list[DiscoveredField]:
    """New linear kernel fields of ``arch``, each verified exactly (see the module docstring).

    Examples
    --------
    With every known family in place nothing new turns up (tests/test_discovery.py hides the
    symmetric-score family and finds its two skew moves again):

    >>> from attngeo import Architecture
    >>> discover_fields(Architecture((3, 2), (2,), tokens=1), seed=0)
    []
    """
    P = arch.parameter_count
    if arch.normalization != "lightning" or P > MAX_PARAMETERS or arch.depth > MAX_DEPTH or arch.tokens > MAX_TOKENS:
        raise InvalidInputError(f"discovery needs a lightning architecture of at most {MAX_PARAMETERS} parameters, "
                                f"{MAX_DEPTH} layers and {MAX_TOKENS} tokens; {arch} is beyond that")
    rng = random.Random(seed)
    p = random_prime(rng)
    if samples is None:  # each sample gives rank J equations for the P^2 unknowns
        W0, X0 = random_ints(rng, (P,)) % p, random_ints(rng, (P,) + arch.input_shape) % p
        r = rank_mod_p(jacobian_mod_p(arch, W0, X0, p).reshape(-1, P), p)
        samples = -(-P * P // max(r, 1)) + 8
    basis = _candidates(arch, p, rng, samples)
    W = random_ints(rng, (P,)) % p
    known = np.vstack([field_matrix(arch, W, p), kernel_rows(arch, W, p)])
    found, current = [], known
    for C in basis:
        value = (C.astype(object) @ W.astype(object)) % p
        trial = np.vstack([current, value.astype(np.int64)])
        if rank_mod_p(trial, p) == rank_mod_p(current, p):
            continue  # in the span of what is known (or found) at this point
        small = np.vectorize(lambda x: _symmetric(int(x), p))(C)
        if np.abs(small).max() > 1000 or not _verified(arch, small):
            continue  # no small integer lift, or not a kernel field over Q: not claimed
        found.append(DiscoveredField(arch, tuple(map(tuple, small.tolist()))))
        current = trial
    return found
