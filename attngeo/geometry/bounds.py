"""What the lightning and the normalized dimension provers share: the symmetry upper bound and the sampling.

The upper bound ``P - rank(fields at W)`` is the same for every normalization
(only the families differ: the groups of :func:`attngeo.geometry.symmetry.families`
and the kernel fields of :func:`attngeo.geometry.kernelfields.kernel_families`); the lower bounds
differ (a minor mod p, or a ball determinant), so they live in
:mod:`attngeo.geometry.dimension` and :mod:`attngeo.geometry.softmax`, which both import this.
"""

from __future__ import annotations

import random

import numpy as np

from ..model.architecture import Architecture
from ..exact.rank import det_mod_p, maximal_minor_mod_p
from .kernelfields import kernel_families, kernel_rows
from .symmetry import families, field_matrix, gauge_minor, invariance_identities, normalized_invariance_identities

#: Entries of random points and inputs are drawn from ``[-ENTRY_BOUND, ENTRY_BOUND]``.
ENTRY_BOUND = 1 << 15


def random_ints(rng: random.Random, shape) -> np.ndarray:
    """Random integers in ``[-ENTRY_BOUND, ENTRY_BOUND]`` (reproducible from ``rng``)."""
    n = int(np.prod(shape))
    return np.array([rng.randint(-ENTRY_BOUND, ENTRY_BOUND) for _ in range(n)], dtype=np.int64).reshape(shape)


def upper_bound(arch: Architecture, point: np.ndarray, p: int) -> tuple[int, dict, list[int]]:
    """Upper bound, its witness, and a gauge (columns complementary to the field minor)."""
    F = field_matrix(arch, point, p)
    extra = kernel_rows(arch, point, p)
    minor = gauge_minor(arch, point, F, p) if not len(extra) else None
    F = np.vstack([F, extra]) if len(extra) else F
    if minor is not None:
        cols, det = minor
        rank, rows, how = F.shape[0], list(range(F.shape[0])), "block-triangular gauge minor"
    else:
        rank, rows, cols = maximal_minor_mod_p(F, p)
        det = det_mod_p(F[np.ix_(rows, cols)], p)
        how = "pivots of a reduced echelon form"
    identities = invariance_identities() if arch.normalization == "lightning" else normalized_invariance_identities()
    if not all(i.holds for i in identities):  # pragma: no cover - would be a bug in symmetry.py
        raise AssertionError("an invariance identity failed; the upper bound would be unsound")
    witness = {
        "prime": p,
        "point": point.tolist(),
        "families": [f.to_dict() for f in families(arch)] + [f.to_dict() for f in kernel_families(arch)],
        "field_rank": rank,
        "rows": rows,
        "columns": cols,
        "determinant": det,
        "identities": [{"family": i.family, "statement": i.statement} for i in identities],
        "method": f"free-algebra identities; nonsingular minor of the field matrix mod p ({how})",
    }
    chosen = set(cols)
    gauge = [c for c in range(arch.parameter_count) if c not in chosen]
    return arch.parameter_count - rank, witness, gauge


def functional_count(arch: Architecture, rows: int | None = None) -> int:
    """Random functionals per input for the lower bound (at most ``rows``)."""
    # A few random functionals per input reach the full rank with far fewer rows
    # than all d_l t outputs (measured: d = 16, l = 2, t = 3 needs 30 inputs of
    # 48 rows, or 60 inputs of 8 functionals, for the same rank 478). Never more
    # than the ``rows`` wanted: each costs d_l t random integers, and widths 1,64
    # at t = 64 drew 16.7 million of them (11 s) for a rank of 64.
    d_l, t = arch.output_shape
    c = min(d_l * t, max(2, t * t))
    return c if rows is None else min(c, rows)
