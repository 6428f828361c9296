"""Certified dimension of the neuromanifold of a lightning self-attention network.

Method (docs/math.md §5, docs/invariance.md):

* **Upper bound.** ``P - rank(xi_1(W), ..., xi_k(W))`` for the symmetry vector
  fields of :mod:`attngeo.geometry.symmetry` at an integer point ``W``, the rank taken mod
  a prime (a lower bound for the rank over Q, hence a valid upper bound on
  ``dim M``). Invariance is proved once, in the free algebra, for all sizes.
* **Lower bound.** The rank mod ``p`` of the Jacobian of
  ``W -> (<w_nr, phi_W(X_n)>)_{n,r}`` (random integer inputs ``X_n`` and random
  integer functionals ``w_nr``) at the same point; any such rank is at most the
  generic rank of the parametrization. Witness: a nonsingular maximal minor.
  Fast path: the columns *outside* the field minor form a gauge; when the
  Jacobian restricted to them has full column rank, only independent rows
  need to be found (one elimination of a ``upper x rows`` matrix).

When the bounds differ, the inputs are doubled while that raises the rank, and
then the attempt is repeated at a fresh point and prime (a bad point, prime or
input set can only *lower* the Jacobian rank or the field rank), keeping the
best bound of each kind, at most ``max_attempts`` points. Bounds that still
differ are reported as bounds.
"""

from __future__ import annotations

import random
import time

import numpy as np

from ...model.architecture import Architecture
from ..certificate import DimensionCertificate
from ...exceptions import ExpansionTooLargeError, InvalidInputError, NotCertifiedError
from ...model.formulas import hmk_formula, naive_count
from ... import progress
from . import criterionpoint, identitypoint, headpoint, plainpoint, stackpoint
from .bounds import functional_count, jacobian_lower, random_ints, upper_bound
from ...exact.rank import random_prime

#: Which witness comes first. None (the default): by estimated time (:func:`plan`). An integer forces the old
#: rule: the structured witnesses from this many parameters (benchmarks force a path with 0 or 10**12).
STRUCTURED_FROM = None

#: Below this estimated time the dense witness (a general Jacobian minor, the one every small certificate has
#: always had) is taken even where a structured one would be quicker: the difference is not noticeable.
DENSE_SECONDS = 0.25

#: Measured peak bytes of the dense (gauge) path: 70 bytes per P^2 on single layers (rank about P: the
#: Jacobian, its gauge columns, their Python list and FLINT's copy; P = 1,536: 198 MB, P = 3,456: 835 MB), 18-22
#: on deep ones (rank about P / 2). The estimate takes the rank to be P, so it bounds both from above.
DENSE_BYTES_PER_P2, BASE_BYTES = 80, 64 * 2**20

#: Measured time of the dense path, ``c P r^1.5`` seconds (r the rank; P = 384 .. 4,096 on 2 cores: 0.05 .. 16 s),
#: and of the normalized (ball) dense path, ``c P^2.6`` (l = 2, t = 3: 15 s at P = 640, 106 s at P = 1,344).
DENSE_SECONDS_PER_UNIT, BALL_SECONDS_PER_UNIT = 1.7e-8, 7.5e-7

#: How often the inputs may be doubled at one point while the rank still grows.
MAX_DOUBLINGS = 4

def certify_dimension(
    arch: Architecture, *, seed: int | None = None, max_attempts: int = 3, inputs: int | None = None,
    max_bytes: int | None = None,
) -> DimensionCertificate:
    """Prove lower and upper bounds on ``dim M``; equal bounds certify it.

    Parameters
    ----------
    arch : Architecture
        A lightning network, or a normalized one (softmax or a registered
        normalizer: lower bound in ball arithmetic, see :mod:`attngeo.geometry.dimension.ball`).
    seed : int, optional
        Seed for the random point, inputs and prime (reproducible certificates).
    max_attempts : int
        Fresh points to try while the bounds differ.
    inputs : int, optional
        Number of inputs ``N`` to start from at each point (default: just
        enough functionals to match the upper bound).
    max_bytes : int, optional
        Where a structured witness leaves bounds, the dense path runs only if its estimated peak
        (:func:`plan`) is within this; otherwise the structured bounds are returned.

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
    [HMK] section 3 (dimension theorems); docs/math.md §5.
    """
    if max_attempts < 1:
        raise InvalidInputError(f"max_attempts = {max_attempts} must be at least 1")
    if arch.is_tied:  # shared keys or biases: Theorem C at the selector point, else a random point (small)
        return (criterionpoint.certify_criterion if criterionpoint.applies(arch)
                else criterionpoint.certify_random_point)(arch, seed=seed)
    structured = {"criterion point": criterionpoint.certify_criterion,  # one softmax layer: Theorem C
                  "stack point": stackpoint.certify_stack,  # residual stacks: a few tiny blocks, counted
                  "identity point": identitypoint.certify_deep,  # V = I, sparse inputs: small triangular blocks
                  "plain point": plainpoint.certify_structured,  # one layer: weight classes of one kind, counted
                  "head point": headpoint.certify_heads}  # heads: graded sparse blocks
    fallback = None
    for name, _, size in (plan(arch) if inputs is None else [("dense", 0, 0)]):
        if name == "dense":
            if fallback is not None and max_bytes is not None and size > max_bytes:
                fallback.notes.append(f"the dense path would need about {size / 2**30:.1f} GiB, above the budget "
                                      f"of {max_bytes / 2**30:.1f} GiB; only these bounds are proved")
                return fallback
            break
        cert = structured[name](arch, seed=seed)
        if cert.certified:
            return cert
        fallback = fallback or cert
    if arch.normalization != "lightning":  # exp is not polynomial: ball arithmetic (attngeo.geometry.dimension.ball)
        from .ball import certify_normalized_dimension

        return certify_normalized_dimension(arch, seed=seed, max_attempts=max_attempts, inputs=inputs)
    start = time.perf_counter()
    rng = random.Random(seed)
    best_lower, best_upper = (-1, None), (arch.parameter_count + 1, None)
    attempt = 0
    for attempt in range(1, max_attempts + 1):
        p = random_prime(rng)
        point = random_ints(rng, (arch.parameter_count,))
        progress.phase("point", f"attempt {attempt} of {max_attempts}, prime {p}")
        progress.phase("upper bound", "symmetry and kernel fields")
        upper, witness, gauge = upper_bound(arch, point, p)
        if upper < best_upper[0]:
            best_upper = (upper, witness)
        rows = upper + max(4, upper // 50)
        c = functional_count(arch, rows)
        n_inputs = inputs if inputs is not None else max(1, -(-rows // c))
        # Each input reveals only part of the tangent space (for instance t^2
        # numbers about each A_i), so when the rank falls short, double the
        # inputs at the same point while that still raises it.
        previous = -1
        for _ in range(MAX_DOUBLINGS + 1):
            lower = jacobian_lower(arch, point, p, gauge, n_inputs, c, rng)
            if lower[0] > best_lower[0]:
                best_lower = lower
            if lower[0] >= best_upper[0] or lower[0] <= previous:
                break
            previous = lower[0]
            n_inputs *= 2
        if best_lower[0] == best_upper[0]:
            break
    if best_lower[0] != best_upper[0]:
        best_upper = _with_discovered(arch, best_upper, seed)
    notes = []
    if best_lower[0] != best_upper[0]:
        notes.append(
            f"bounds differ after {attempt} attempts: the symmetry groups and kernel fields need not span the "
            "kernel of the Jacobian here, or the Jacobian rank needs more inputs"
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


def _with_discovered(arch: Architecture, best_upper: tuple, seed) -> tuple:
    """The upper bound again at its point, with linear kernel fields discovery verifies (small architectures)."""
    from .discovery import MAX_DEPTH, MAX_PARAMETERS, MAX_TOKENS, discover_fields

    if arch.parameter_count > MAX_PARAMETERS or arch.depth > MAX_DEPTH or arch.tokens > MAX_TOKENS \
            or best_upper[1] is None or "point" not in best_upper[1]:  # a span bound has no point
        return best_upper
    try:
        found = discover_fields(arch, seed=seed or 0)
    except ExpansionTooLargeError:  # proving a field needs the expanded network; too large here: no claim
        return best_upper
    if not found:
        return best_upper
    witness = best_upper[1]
    upper, new, _ = upper_bound(arch, np.array(witness["point"], dtype=np.int64), witness["prime"], found)
    return (upper, new) if upper < best_upper[0] else best_upper


def _dense_cost(arch: Architecture) -> tuple[float, int]:
    """Estimated seconds and peak bytes of the dense path (a guide to choose; the bytes bound the measured)."""
    P = arch.parameter_count
    r = min(P, max(1, naive_count(arch)))
    if arch.normalization == "lightning":
        seconds = DENSE_SECONDS_PER_UNIT * P * r ** 1.5
    else:
        seconds = BALL_SECONDS_PER_UNIT * P ** 2.6
    return seconds, DENSE_BYTES_PER_P2 * P * P + BASE_BYTES


def plan(arch: Architecture) -> list[tuple[str, float, int]]:
    """The witnesses :func:`certify_dimension` tries, in order: ``(name, estimated seconds, estimated bytes)``.

    Every structured witness that applies, cheapest first, then the dense one (which decides where a
    structured point is degenerate); the dense one alone while it is estimated under :data:`DENSE_SECONDS`.
    So the time grows with the size: ``32 -> 32, a = 8`` no longer takes the dense path (1.5 s) while
    ``64 -> 64, a = 16`` takes the plain point (0.01 s).

    Examples
    --------
    >>> [name for name, _, _ in plan(Architecture((32, 32), (8,), tokens=2))]
    ['plain point', 'dense']
    >>> [name for name, _, _ in plan(Architecture((8, 8), (2,), tokens=2))]
    ['dense']
    >>> plan(Architecture((768,) * 13, (64,) * 12, heads=12, value_ranks=64, residual=True))[0][0]
    'stack point'
    """
    P = arch.parameter_count
    dense_seconds, dense_bytes = _dense_cost(arch)
    dense = [("dense", dense_seconds, dense_bytes)]
    if arch.is_tied:  # shared keys or biases: the criterion point, else a small random point (criterionpoint.py)
        criterionpoint.require(arch)
        return [("criterion point", 0.05 + 1e-8 * P, 40 * P + BASE_BYTES)] if criterionpoint.applies(arch) else dense
    lightning = arch.normalization == "lightning"
    candidates = []
    if not lightning and criterionpoint.applies(arch):
        candidates.append(("criterion point", 0.05 + 1e-8 * P, 40 * P + BASE_BYTES))
    if stackpoint.applies(arch):
        candidates.append(("stack point", 0.05 + 2e-8 * P, stackpoint.estimate_bytes(arch)))
    if identitypoint.applies(arch):
        candidates.append(("identity point", 0.02 + (2e-5 if lightning else 5e-4) * P,
                           identitypoint.estimate_bytes(arch)))
    if lightning and arch.is_plain and plainpoint.applies(arch):
        candidates.append(("plain point", 0.005 + 1e-6 * P, plainpoint.estimate_bytes(arch)))
    if headpoint.preferred(arch, 0):
        candidates.append(("head point", 0.02 + (6e-5 if arch.value_ranks is None else 2e-5) * P,
                           headpoint.estimate_bytes(arch)))
    if STRUCTURED_FROM is not None:  # the old rule, for benchmarks that force a path
        return (candidates if P >= STRUCTURED_FROM else []) + dense
    if dense_seconds < DENSE_SECONDS:
        return dense
    return sorted(candidates, key=lambda c: c[1]) + dense


def estimate(arch: Architecture) -> tuple[str, int]:
    """``(path, bytes)``: which path :func:`certify_dimension` takes first and its estimated peak memory.

    Examples
    --------
    >>> estimate(Architecture((768, 768), (64,), tokens=2))[0]
    'structured'
    >>> path, size = estimate(Architecture((64, 60, 64, 60, 64), (4,) * 4, tokens=3)); path, size > 10**9
    ('dense', True)
    """
    name, _, size = plan(arch)[0]
    return ("dense" if name == "dense" else "structured"), size


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
