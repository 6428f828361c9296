"""Real points, boundary points and the closedness of a single-layer neuromanifold (docs/singular.md §6).

``M_R`` is the image of *real* weights, ``M_C`` of complex ones; ``F`` is real.
Write ``S_kp`` for the Gram matrix of ``F_kp(y) = (V y)_k (A^T y)_p``.

**Lemma B.** A real point of ``M_C`` has no real preimage iff ``F = q(y) R`` with
``R`` a real rank-1 matrix and ``q`` a *definite* quadric of rank 2 (the
product of two complex-conjugate linear forms: a conjugate swap pair). The
boundary of ``M_R`` inside ``M_C ∩ R^N`` is ``{0}`` together with the points
``F = (s·y)^2 R`` (``s`` real, ``R`` real of rank 1): the rank-1 *parallel*
points ``A = s q^T``, ``V = r s^T``. (Proof in docs/singular.md §6.)

So the test is exact linear algebra over Q: do all nonzero ``S_kp`` lie on one
line with a rank-1 coefficient matrix, what is the rank of the common quadric,
and, for rank 2, the sign of a nonzero principal 2x2 minor (negative:
indefinite, real factors; positive: definite, conjugate factors).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from flint import fmpq, fmpq_mat

from ...model.architecture import Architecture
from ..certificate import Result, certificate_json
from ...exceptions import InvalidInputError, NotInNeuromanifoldError
from ..fibers.layer import fiber, str_rows
from ...model.layerfunction import LayerFunction, principal_minor, quadric_factor, single_layer


@dataclass(repr=False)
class BoundaryVerdict(Result):
    """Where a real point of ``M_C`` lies with respect to ``M_R``: ``boundary``, ``interior`` or ``outside``.

    ``shape`` names the shape of ``F`` that decided it (``zero``, ``square``:
    ``(s.y)^2 R``, ``indefinite`` / ``definite``: ``q(y) R`` with ``rank q = 2``,
    ``general``); ``evidence`` holds the quadric, ``R`` and the minor the
    checker re-verifies.

    Examples
    --------
    ``F = (y_0^2 + y_1^2) (1)``: a definite quadric, whose factors are complex
    conjugate, so no real weights.

    >>> from attngeo import Architecture, LayerFunction, is_boundary_point
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> v = is_boundary_point(arch, LayerFunction.from_tensor(arch, [[[[1, 0], [0, 0]], [[0, 0], [1, 0]]]]))
    >>> v.verdict, v.shape, v.in_real_image
    ('outside', 'definite', False)
    >>> v.evidence["quadric"], v.evidence["R"], v.evidence["minor"]     # q = I, R = (1 0), det q = 1 > 0
    ([['1', '0'], ['0', '1']], [['1', '0']], [0, 1, '1'])
    """

    arch: Architecture
    function: LayerFunction
    verdict: str  # boundary / interior / outside
    shape: str  # zero / square / indefinite / definite / general
    reason: str
    evidence: dict
    seconds: float = 0.0

    kind = "boundary-point"

    @property
    def in_real_image(self) -> bool:
        """The point has real weights (it is in ``M_R``)."""
        return self.verdict != "outside"

    def summary(self) -> dict:
        """The record ``--json`` prints: verdict, shape, whether the point is real, and reason.

        Examples
        --------
        >>> from attngeo import Architecture, is_boundary_point
        >>> s = is_boundary_point(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[1, 1]]]]).summary()
        >>> s["verdict"], s["shape"], s["in_real_image"]
        ('interior', 'indefinite', True)
        """
        return {"architecture": self.arch.to_dict(), "verdict": self.verdict, "shape": self.shape,
                "in_real_image": self.in_real_image, "certified": True, "reason": self.reason,
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        """The certificate: the Gram tensor of ``F``, the verdict and the evidence the checker re-derives.

        Examples
        --------
        >>> from attngeo import Architecture, check_certificate, is_boundary_point
        >>> cert = is_boundary_point(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[3, 5]]]]).to_json()
        >>> cert["verdict"], cert["evidence"]["rank_q"], check_certificate(cert).claim
        ('boundary', 1, 'boundary point of M_R (widths 2,1, rank 1): square')
        """
        f = self.function
        return certificate_json(self.kind, {
            **self.summary(), "tensor": f.numerators.astype(object).astype(str).tolist(),
            "denominator": str(f.denominator), "evidence": self.evidence})

    def __str__(self) -> str:
        return f"{self.arch}: {self.verdict} ({self.reason})"

    def latex(self) -> str:
        """The verdict and the shape of ``F``, in LaTeX.

        Examples
        --------
        >>> from attngeo import Architecture, is_boundary_point
        >>> from attngeo.latex import balanced
        >>> tex = is_boundary_point(Architecture((2, 1), (1,), tokens=2), [[[[1, 2]], [[3, 5]], [[3, 5]]]]).latex()
        >>> "a boundary point" in tex, tex.endswith("(square)}"), balanced(tex)
        (True, True, True)
        """
        what = {"boundary": r"\text{a boundary point of } \mathcal M_{\mathbb R}",
                "interior": r"\text{an interior point of } \mathcal M_{\mathbb R}",
                "outside": r"\in \mathcal M_{\mathbb C} \setminus \mathcal M_{\mathbb R}"}[self.verdict]
        return rf"F \text{{ is }} {what}\ \text{{({self.shape})}}"


def is_boundary_point(arch: Architecture, point) -> BoundaryVerdict:
    """Classify a real point of ``M_C`` as a boundary point of ``M_R``, an interior one, or outside ``M_R``.

    ``point`` is single-layer weights (real rationals: the point is then in
    ``M_R``) or a :class:`LayerFunction` (any rational Gram tensor; refused when
    it is not in ``M_C``).

    Returns
    -------
    BoundaryVerdict

    Raises
    ------
    NotInNeuromanifoldError
        When a given function is not in ``M_C`` (``exc.fiber`` holds the argument).
    InvalidInputError
        For a function of another architecture, or an architecture that is not a single layer.

    Examples
    --------
    >>> from attngeo import Architecture, LayerFunction, is_boundary_point
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> is_boundary_point(arch, [[[[1, 2]], [[3, 5]], [[3, 5]]]]).verdict   # V = K: the parallel point
    'boundary'
    >>> is_boundary_point(arch, [[[[1, 2]], [[3, 5]], [[1, 1]]]]).verdict
    'interior'
    >>> is_boundary_point(arch, [[[[1, 2]], [[3, 5]], [[0, 0]]]]).shape     # V = 0: the zero function
    'zero'

    ``F = (y_0^2 + y_1^2, 2 y_0 y_1)`` has no weights at all:

    >>> is_boundary_point(arch, LayerFunction.from_tensor(arch, [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.NotInNeuromanifoldError: this tensor is not in the neuromanifold: F_00 is irreducible over Q ...
    """
    single_layer(arch, "is_boundary_point")
    start = time.perf_counter()
    d = arch.widths[0]
    f = point if isinstance(point, LayerFunction) else LayerFunction.from_weights(arch, point)
    if f.arch != arch:
        raise InvalidInputError(f"the layer function is for {f.arch}, not {arch}")
    done = lambda *args: BoundaryVerdict(arch, f, *args, time.perf_counter() - start)  # noqa: E731
    flat = "d = 1: there is no definite quadric of rank 2, so M_R = M_C ∩ R^N"  # Lemma B: nothing outside
    if f.is_zero():
        if d < 2:
            return done("interior", "zero", flat, {})
        return done("boundary", "zero", "the zero function is the limit of eps * (y_1^2 + y_2^2) E_11, "
                    "real points without real weights", {})
    qr = quadric_factor(f) if d >= 2 else None
    rank_q = qr[0].rank() if qr is not None else None
    if qr is not None and rank_q <= 2:
        q, R = qr
        evidence = {"quadric": str_rows(q), "R": str_rows(R), "rank_q": rank_q}
        if rank_q == 1:
            evidence["direction"] = _transverse(q)
            return done("boundary", "square", "F = (s.y)^2 R: the limit of (s.y)^2 + eps^2 (u.y)^2 times R, "
                        "definite quadrics without real weights", evidence)
        i, j, det = principal_minor(q)
        evidence["minor"] = [i, j, str(det)]
        if det > 0:
            return done("outside", "definite", "F = q(y) R with q definite of rank 2: its linear factors are complex "
                        "conjugate, so every preimage is complex", evidence)
        return done("interior", "indefinite", "F = q(y) R with q indefinite of rank 2: real factors, and nearby "
                    "real points keep them", evidence)
    fib = fiber(arch, f)
    if not fib.in_neuromanifold:
        exc = NotInNeuromanifoldError(f"this tensor is not in the neuromanifold: {fib.reason}")
        exc.fiber = fib  # the complete argument, with its certificate
        raise exc
    # conjugate-swap points are q(y) R with rank q = 2, decided above: the lines here are rational
    A, V = fib.lines[0]
    why = flat if d < 2 else ("F is not q(y) R with q of rank <= 2: the fiber line is conjugation-stable, "
                              "so the point and its neighbours have real weights")
    return done("interior", "general", why, {"A": str_rows(A), "V": str_rows(V)})


def _transverse(q: fmpq_mat) -> list[str]:
    """A standard basis vector outside the line spanned by ``q = c s s^T`` (``u`` of the curve)."""
    d = q.nrows()
    s = next([q[i, j] for j in range(d)] for i in range(d) if any(q[i, j] != 0 for j in range(d)))
    for i in range(d):
        e = [fmpq(int(i == j)) for j in range(d)]
        if fmpq_mat([s, e]).rank() == 2:
            return [str(x) for x in e]
    raise AssertionError("d >= 2 has a transverse basis vector")
