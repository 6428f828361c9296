"""The checker's own criterion point and explicit kernel (docs/math.md §8.3 Corollary C, §8.4).

``criterion point``: the checker builds the selector point from its definition — ``Q_j`` and the
group's ``K`` read the columns ``[j a, (j + 1) a)`` of the group's first head ``j``, ``U`` reads
``b`` columns from there (shifted by one when ``a = b = 1``), ``O_j`` writes the rows
``[j b, (j + 1) b)``, biases 0 — verifies Theorem C's conditions on the listed groups there by ranks
mod ``p`` (:mod:`attngeo.check.loci.criterion`), and the bound they prove is the lower bound on
``dim M``. Its upper bound, at the same point or (``explicit kernel``) at a recorded integer point, is
``P`` minus the dimension of the explicit kernel there: directions in the kernel of every
differential at every point, whose dimension at a point is at most the generic one.
"""

from __future__ import annotations

import functools

import numpy as np

from ..limits import MAX_FIELD_ENTRIES, MAX_PAIR_TESTS, refuse_above
from ..loci import criterion
from ..linalg import rank
from ..values import field, int_array, integer, prime, reject


def selector(arch) -> np.ndarray:
    """The selector point of Corollary C, flat, in the architecture's order (the checker's own construction).

    Examples
    --------
    Two heads of ``a = b = 1`` on ``3 -> 3``: ``Q_j = K_j = e_j``, ``U_j = e_{j+1}``, ``O_j = e_j``.

    >>> from attngeo.check.arch import Arch
    >>> selector(Arch((3, 3), (1,), 2, heads=(2,), value_ranks=(1,))).tolist()
    [1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0]
    """
    d, a, b = arch.widths[0], arch.ranks[0], arch.value_ranks[0]
    shift = 1 if a == b == 1 else 0
    point = np.zeros(arch.parameters, dtype=np.int64)
    for _, j, name, rows, cols, off in arch.blocks():
        k = j - 1  # a group's blocks carry its first head
        if name in ("Q", "K"):
            for r in range(a):
                point[off + r * cols + k * a + r] = 1
        elif name == "U":
            for r in range(b):
                point[off + r * cols + (k * a + r + shift) % d] = 1
        elif name == "O":
            for r in range(b):
                point[off + (k * b + r) * cols + r] = 1
    return point


def _block(arch, point: np.ndarray, p: int):
    n = arch.group_size(1)
    at = {}
    for _, j, name, rows, cols, off in arch.blocks():
        shared = name in ("K", "U", "V", "bK", "bV") and n > 1
        for k in (range(j, j + n) if shared else (j,)):
            at[(k, name)] = (rows, cols, off)

    def block(j: int, name: str) -> np.ndarray:
        rows, cols, off = at[(j, name)]
        return point[off: off + rows * cols].reshape(rows, cols) % p

    return block


def _applies(arch) -> None:
    if len(arch.ranks) != 1:
        reject("a criterion point is one layer")
    why = criterion.hypotheses(arch)
    if why is not None:
        reject(f"a criterion point needs Theorem C's hypotheses: {why}")


@functools.lru_cache(maxsize=4)
def _verified(arch, p: int, chosen: tuple) -> int:
    """Theorem C's conditions for ``chosen`` at the selector point mod ``p`` (rejects otherwise); the bound.

    Cached: the lower and the upper witness of one certificate ask for the same verification (two
    ``4096 x 4096`` ranks at LLaMA-7B's size)."""
    criterion.verify(arch, _block(arch, selector(arch), p), p, list(chosen), MAX_PAIR_TESTS)
    return criterion.bound(arch, list(chosen))


def check_lower(cert: dict, lw: dict, arch) -> int:
    """The bound Theorem C proves at the selector point for the groups listed.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.arch import architecture
    >>> arch = Architecture((8, 8), (2,), heads=4, kv_heads=2, value_ranks=2, normalization="softmax")
    >>> cert = certify_dimension(arch, seed=0).to_json()
    >>> check_lower(cert, cert["lower_witness"], architecture(cert)) == arch.parameter_count - 2 * (2**2 + 2**2)
    True
    """
    if set(lw) != {"structured", "prime", "groups", "rank"}:
        reject("a criterion-point lower witness holds structured, prime, groups and rank")
    _applies(arch)
    p = prime(lw["prime"], "lower_witness.prime")
    chosen = lw["groups"]
    count = len(criterion.groups_of(arch))
    if not isinstance(chosen, list) or any(isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= count
                                           for g in chosen) or chosen != sorted(set(chosen)):
        reject(f"lower_witness.groups must list increasing groups among 1..{count}")
    if arch.biases and arch.normalization == "lightning" and chosen:
        reject("Theorem C does not cover lightning layers with biases")
    rank = _verified(arch, p, tuple(chosen)) if chosen else (arch.widths[1] if arch.biases else 0)
    if integer(lw["rank"], "lower_witness.rank", 0) != rank or integer(field(cert, "lower"), "lower") != rank:
        reject(f"Theorem C at the selector point proves {rank} for groups {chosen}; lower and rank must say so")
    return rank


def check_upper(cert: dict, uw: dict, arch) -> int:
    """``P`` minus the explicit kernel at the selector point (``criterion point``) or at a recorded point.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.arch import architecture
    >>> cert = certify_dimension(Architecture((3, 3), (1,), biases=True), seed=0).to_json()
    >>> cert["upper_witness"]["structured"], check_upper(cert, cert["upper_witness"], architecture(cert))
    ('explicit kernel', 21)
    """
    kind = uw.get("structured")
    keys = {"structured", "prime", "rank"} | ({"point"} if kind == "explicit kernel" else set())
    if set(uw) != keys:
        reject(f"a{'n' if kind == 'explicit kernel' else ''} {kind} upper witness holds {', '.join(sorted(keys))}")
    if len(arch.ranks) != 1:
        reject("an explicit kernel is counted for one layer")
    p = prime(uw["prime"], "upper_witness.prime")
    if kind == "criterion point":  # Theorem C's count at the selector point (large layers)
        _applies(arch)
        lw = cert.get("lower_witness")
        if isinstance(lw, dict) and lw.get("structured") == "criterion point" and lw.get("prime") != uw["prime"]:
            reject("the two criterion-point witnesses must use one prime (the conditions are verified once)")
        every = tuple(range(1, len(criterion.groups_of(arch)) + 1))
        if uw.get("rank") == arch.parameters - criterion.bound(arch, list(every)) \
                and not (arch.biases and arch.normalization == "lightning"):
            # every group satisfies (C1)-(C3): no stabilizer, so the explicit kernel is exactly Theorem C's count
            explicit = arch.parameters - _verified(arch, p, every)
        else:
            explicit = criterion.kernel(arch, _block(arch, selector(arch), p), p)
    else:  # the rank of the explicit directions at the recorded point (small layers)
        point = int_array(uw["point"], (arch.parameters,), "upper_witness.point") % p
        refuse_above(criterion.field_count(arch) * arch.parameters, MAX_FIELD_ENTRIES,
                     "listing the explicit kernel's directions")
        F = criterion.fields(arch, point, p)
        explicit = rank(F, p)
    if integer(uw["rank"], "upper_witness.rank", 0) != explicit:
        reject(f"the explicit kernel has dimension {explicit} at the point mod {p}; rank must say so")
    upper = integer(field(cert, "upper"), "upper")
    if upper != arch.parameters - explicit:
        reject(f"upper must be parameters - explicit kernel = {arch.parameters - explicit}")
    return upper
