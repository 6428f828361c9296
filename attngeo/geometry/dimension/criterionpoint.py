"""``dim M`` of one attention layer at its selector point by Theorem C, and tied layers at a random point.

**The criterion point** (docs/math.md §8.3, Corollary C). At the selector point — ``Q_j`` reads the
columns ``C_j = [j a, (j + 1) a)``, ``O_j`` writes the rows ``[j b, (j + 1) b)``, a group's ``K`` is its
first head's ``Q`` and its ``U`` reads ``b`` columns from the same block (shifted by one when
``a = b = 1``), biases 0 — conditions (C1)–(C5) hold whenever ``h a <= d``, ``h b <= d'`` and
``max(a, b) >= 2`` (or ``a = b = 1`` and ``d >= 3``), so Theorem C gives the local rank there, and
the explicit kernel, of the dimension the local rank leaves, bounds ``dim M`` from above: the
two meet. The checker rebuilds the same point from its definition and verifies the conditions
by ranks mod ``p`` (check/dimension/criterionpoint.py). This covers softmax layers at any
width (``d = 768`` with 12 heads of 64, ``d = 1024`` with 16, in seconds) and every layer with shared
keys (grouped-query attention) or biases, lightning with biases excepted (Theorem C does not cover it).

**Tied layers at a random point**, where the criterion point does not apply and the layer is small:
the lower bound is a Jacobian minor (mod ``p``, or a ball for softmax) of the untied layer's folded
Jacobian (:mod:`attngeo.model.untied`), the upper bound ``P`` minus the explicit kernel at that point
(docs/math.md §8.4), certified as an ``explicit kernel`` upper witness.
"""

from __future__ import annotations

import random
import time

import numpy as np

from ...exceptions import InvalidArchitectureError
from ...exact.rank import random_prime, rank_mod_p
from ...model.architecture import Architecture
from ...model.formulas import hmk_formula
from ..certificate import DimensionCertificate
from ..loci import criterion
from .bounds import functional_count, jacobian_lower, random_ints

#: A tied layer without the criterion point is certified at a random point up to this many parameters.
RANDOM_POINT_PARAMETERS = 2000


def applies(arch: Architecture) -> bool:
    """Whether the criterion point decides ``dim M`` (Theorem C's hypotheses, its selector conditions).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> applies(Architecture((1024, 1024), (64,), heads=16, value_ranks=64, normalization="softmax"))
    True
    >>> applies(Architecture((2, 2), (1,), heads=2, value_ranks=1, normalization="softmax"))  # a = b = 1, d = 2
    False
    """
    if criterion.applies(arch) is not None or (arch.biases and arch.normalization == "lightning"):
        return False
    a, b, d = arch.ranks[0], arch.value_ranks[0], arch.widths[0]
    if b > d:  # U cannot have rank b
        return False
    return max(a, b) >= 2 or d >= 3 or arch.kv_heads[0] == 1 and d >= 2


def selector_point(arch: Architecture) -> np.ndarray:
    """The selector point of Corollary C as a flat integer vector (biases 0).

    Examples
    --------
    Two heads of ``a = b = 1`` on ``3 -> 3``: ``Q_j = K_j = e_j``, ``U_j = e_{j+1}``, ``O_j = e_j``.

    >>> from attngeo import Architecture
    >>> selector_point(Architecture((3, 3), (1,), heads=2, value_ranks=1)).tolist()
    [1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0]
    """
    d, a, b = arch.widths[0], arch.ranks[0], arch.value_ranks[0]
    shift = 1 if a == b == 1 else 0
    point = np.zeros(arch.parameter_count, dtype=np.int64)
    n = arch.heads[0] // arch.kv_heads[0]
    for blk in arch.blocks():
        j = (blk.head if not blk.group else (blk.group - 1) * n + 1) - 1  # 0-based head (the group's first)
        M = np.zeros((blk.rows, blk.cols), dtype=np.int64)
        if blk.name in ("Q", "K"):
            M[np.arange(a), j * a + np.arange(a)] = 1
        elif blk.name == "U":
            M[np.arange(b), (j * a + np.arange(b) + shift) % d] = 1
        elif blk.name == "O":
            M[j * b + np.arange(b), np.arange(b)] = 1
        point[blk.offset: blk.offset + blk.size] = M.ravel()
    return point


def _blocks(arch: Architecture, point: np.ndarray, p: int):
    n = arch.heads[0] // arch.kv_heads[0]
    where = {}
    for blk in arch.blocks():
        for j in (range(blk.head, blk.head + n) if blk.group else (blk.head,)):
            where[(j, blk.name)] = blk

    def block(j: int, name: str) -> np.ndarray:
        blk = where[(j, name)]
        return point[blk.offset: blk.offset + blk.size].reshape(blk.rows, blk.cols) % p

    return block


def certify_criterion(arch: Architecture, *, seed: int | None = None) -> DimensionCertificate:
    """``dim M`` at the selector point by Theorem C (module docstring); bounds if a condition failed.

    Examples
    --------
    BERT-base's attention layer, as it computes (softmax, biases), at full width:

    >>> from attngeo import Architecture
    >>> arch = Architecture((768, 768), (64,), heads=12, value_ranks=64, normalization="softmax", biases=True)
    >>> cert = certify_criterion(arch, seed=0)
    >>> cert.dimension == arch.parameter_count - 12 * (2 * 64**2 + 2 * 64)
    True
    """
    start = time.perf_counter()
    p = random_prime(random.Random(seed))
    point = selector_point(arch)
    block = _blocks(arch, point, p)
    chosen = criterion.separated_groups(arch, block, p)
    lower = criterion.lower_bound(arch, chosen)
    if len(chosen) == arch.kv_heads[0]:  # (C1)-(C3) for every group: no stabilizer, the kernel is the count
        upper = lower
    else:
        upper = arch.parameter_count - criterion.kernel_dimension(arch, block, p)
    witness = {"structured": "criterion point", "prime": p}
    return DimensionCertificate(arch, lower, upper, {**witness, "groups": chosen, "rank": lower},
                                {**witness, "rank": arch.parameter_count - upper}, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1,
                                [] if lower == upper else ["Theorem C's conditions failed at the selector point"])


def require(arch: Architecture) -> None:
    """Refuse a tied layer neither path reaches, naming why (before any estimate or work).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> require(Architecture((200, 200), (64,), biases=True))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidArchitectureError: widths 200,200, ranks 64, t=2, biases, lightning: shared keys ... parameters, and it has 66128
    """
    if not applies(arch) and arch.parameter_count > RANDOM_POINT_PARAMETERS:
        raise InvalidArchitectureError(
            f"{arch}: shared keys or biases are certified at the selector point (Theorem C, docs/math.md §8.3), "
            f"which needs {criterion.applies(arch) or 'a softmax layer (lightning with biases is not covered)'}, "
            f"or at a random point up to {RANDOM_POINT_PARAMETERS} parameters, and it has {arch.parameter_count}")


def certify_random_point(arch: Architecture, *, seed: int | None = None) -> DimensionCertificate:
    """A small tied layer at a random point: a Jacobian minor below, ``P`` minus the explicit kernel above.

    Examples
    --------
    Affine lightning attention (one head, ``V`` unfactored, biases): the plain layer at width ``d + 1``
    plus ``b_O``, less ``GL_a`` and the scaling:

    >>> from attngeo import Architecture
    >>> arch = Architecture((3, 3), (1,), biases=True)
    >>> cert = certify_random_point(arch, seed=0)
    >>> cert.dimension == arch.parameter_count - 1 - 1
    True
    """
    require(arch)
    from .ball import POINT_DENOMINATOR, _ball_lower

    start = time.perf_counter()
    rng = random.Random(seed)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    upper = arch.parameter_count - rank_mod_p(criterion.explicit_fields(arch, point, p), p)
    upper_witness = {"structured": "explicit kernel", "prime": p, "point": point.tolist(),
                     "rank": arch.parameter_count - upper}
    c = functional_count(arch, upper)
    n = max(1, -(-(upper + 8) // c))
    if arch.normalization == "lightning":
        for _ in range(3):  # more inputs while the rank falls short (each input shows part of the tangent space)
            lower, lower_witness = jacobian_lower(arch, point, p, list(range(arch.parameter_count)), n, c, rng)
            if lower >= upper:
                break
            n *= 2
    else:
        from flint import fmpq

        q = POINT_DENOMINATOR
        rational = [fmpq(rng.randint(1 - q, q - 1), q) for _ in range(arch.parameter_count)]
        X = [[[fmpq(rng.randint(1 - q, q - 1), q) for _ in range(arch.tokens)] for _ in range(arch.widths[0])]
             for _ in range(n)]
        w = np.array([[[[rng.randint(-3, 3) for _ in range(arch.tokens)] for _ in range(arch.widths[1])]
                       for _ in range(c)] for _ in range(n)])
        lower, lower_witness = _ball_lower(arch, rational, X, w, upper)
    return DimensionCertificate(arch, lower, upper, lower_witness, upper_witness, hmk_formula(arch).to_dict(),
                                time.perf_counter() - start, 1,
                                [] if lower == upper else ["the Jacobian at this point did not reach the explicit "
                                                           "kernel's bound"])
