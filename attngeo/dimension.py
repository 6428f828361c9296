"""Certified dimension of the neuromanifold of a lightning self-attention network.

Method (MATH.md section 5, docs/invariance.md):

* **Upper bound.** ``P - rank(xi_1(W), ..., xi_k(W))`` for the symmetry vector
  fields of :mod:`attngeo.symmetry` at an integer point ``W``, the rank taken mod
  a prime (a lower bound for the rank over Q, hence a valid upper bound on
  ``dim M``). Invariance is proved once, in the free algebra, for all sizes.
* **Lower bound.** The rank mod ``p`` of the Jacobian of
  ``W -> (phi_W(X_1), ..., phi_W(X_N))`` at the same kind of point, with ``N``
  chosen so the Jacobian has at least ``upper`` rows. Witness: a nonsingular
  maximal minor (its rows and columns).

When the bounds differ, the attempt is repeated at a fresh point and prime with
50% more inputs (a bad point, prime or input set can only *lower* the Jacobian
rank or the field rank), keeping the best bound of each kind, at most
``max_attempts`` times. Bounds that still differ are reported as bounds.
"""

from __future__ import annotations

import random
import time

import numpy as np

from .architecture import Architecture
from .certificate import DimensionCertificate
from .exceptions import InvalidInputError, NotCertifiedError
from .formulas import hmk_formula
from .jacobian import jacobian_mod_p
from .rank import maximal_minor_mod_p, random_prime
from .symmetry import families, field_matrix, invariance_identities

#: Entries of random points and inputs are drawn from ``[-ENTRY_BOUND, ENTRY_BOUND]``.
ENTRY_BOUND = 1 << 15


def _random_ints(rng: random.Random, shape) -> np.ndarray:
    n = int(np.prod(shape))
    return np.array([rng.randint(-ENTRY_BOUND, ENTRY_BOUND) for _ in range(n)], dtype=np.int64).reshape(shape)


def _upper(arch: Architecture, point: np.ndarray, p: int) -> tuple[int, dict]:
    F = field_matrix(arch, point, p)
    rank, rows, cols = maximal_minor_mod_p(F, p)
    identities = invariance_identities()
    if not all(i.holds for i in identities):  # pragma: no cover - would be a bug in symmetry.py
        raise AssertionError("an invariance identity failed; the upper bound would be unsound")
    witness = {
        "prime": p,
        "point": point.tolist(),
        "families": [f.to_dict() for f in families(arch)],
        "field_rank": rank,
        "rows": rows,
        "columns": cols,
        "identities": [{"family": i.family, "statement": i.statement} for i in identities],
        "method": "free-algebra identities + nonsingular minor of the field matrix mod p",
    }
    return arch.parameter_count - rank, witness


def _lower(arch: Architecture, point: np.ndarray, inputs: np.ndarray, p: int) -> tuple[int, dict]:
    J = jacobian_mod_p(arch, point, inputs, p)
    rank, rows, cols = maximal_minor_mod_p(J, p)
    witness = {
        "prime": p,
        "point": point.tolist(),
        "inputs": inputs.tolist(),
        "rank": rank,
        "rows": rows,
        "columns": cols,
        "method": "nonsingular maximal minor of the Jacobian mod p",
    }
    return rank, witness


def certify_dimension(
    arch: Architecture, *, seed: int | None = None, max_attempts: int = 3, inputs: int | None = None
) -> DimensionCertificate:
    """Prove lower and upper bounds on ``dim M``; equal bounds certify it.

    Parameters
    ----------
    arch : Architecture
        A lightning network (softmax networks are not yet supported here).
    seed : int, optional
        Seed for the random point, inputs and prime (reproducible certificates).
    max_attempts : int
        Fresh points to try while the bounds differ.
    inputs : int, optional
        Number of inputs ``N`` for the first attempt (default: just enough rows).

    Returns
    -------
    DimensionCertificate

    Examples
    --------
    >>> cert = certify_dimension(Architecture((3, 3), (2,), tokens=2), seed=1)
    >>> cert.certified, cert.dimension, cert.lower_witness["rank"] == len(cert.lower_witness["rows"])
    (True, 16, True)

    References
    ----------
    [HMK] section 3 (dimension theorems); MATH.md section 5.
    """
    if arch.normalization != "lightning":
        raise InvalidInputError(
            f"certified dimension is implemented for lightning networks; {arch.normalization} is not yet supported"
        )
    if max_attempts < 1:
        raise InvalidInputError(f"max_attempts = {max_attempts} must be at least 1")
    start = time.perf_counter()
    rng = random.Random(seed)
    d_l, t = arch.output_shape
    best_lower, best_upper = (-1, None), (arch.parameter_count + 1, None)
    n_inputs = inputs
    attempt = 0
    for attempt in range(1, max_attempts + 1):
        p = random_prime(rng)
        point = _random_ints(rng, (arch.parameter_count,))
        upper = _upper(arch, point, p)
        if upper[0] < best_upper[0]:
            best_upper = upper
        if n_inputs is None:
            n_inputs = -(-best_upper[0] // (d_l * t)) + 1
        elif attempt > 1:
            n_inputs = n_inputs + max(1, n_inputs // 2)
        X = _random_ints(rng, (n_inputs,) + arch.input_shape)
        lower = _lower(arch, point, X, p)
        if lower[0] > best_lower[0]:
            best_lower = lower
        if best_lower[0] == best_upper[0]:
            break
    notes = []
    if best_lower[0] != best_upper[0]:
        notes.append(
            f"bounds differ after {attempt} attempts: the symmetries of [HMK] need not explain the whole "
            "generic fiber here, or the Jacobian rank needs more inputs"
        )
    return DimensionCertificate(
        architecture=arch,
        lower=best_lower[0],
        upper=best_upper[0],
        lower_witness=best_lower[1],
        upper_witness=best_upper[1],
        formula=hmk_formula(arch).to_dict(),
        seconds=time.perf_counter() - start,
        attempts=attempt,
        notes=notes,
    )


def dimension(arch: Architecture, **kwargs) -> int:
    """The certified ``dim M``; raises :class:`NotCertifiedError` when only bounds were proved.

    Examples
    --------
    >>> dimension(Architecture((2, 2, 2), (2, 2), tokens=2), seed=0)
    10
    """
    cert = certify_dimension(arch, **kwargs)
    if not cert.certified:
        raise NotCertifiedError(f"{cert}; use certify_dimension to see both bounds")
    return cert.dimension
