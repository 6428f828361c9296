"""The exceptions attngeo raises.

Every error a user can cause is an :class:`AttngeoError`; its message names the
input that was wrong and how to fix it. The command line turns any of them into
a one-line message and exit code 2.
"""


class AttngeoError(Exception):
    """Root of every error attngeo raises on purpose.

    Catch this one class to handle every refusal of attngeo's own; anything
    else that escapes is a bug.

    Examples
    --------
    >>> from attngeo import Architecture, AttngeoError
    >>> try:
    ...     Architecture((2, 1), (1,), tokens=0)
    ... except AttngeoError as exc:
    ...     print(type(exc).__name__, "-", exc)
    InvalidArchitectureError - tokens = 0 must be at least 1
    """


class InvalidArchitectureError(AttngeoError, ValueError):
    """An architecture's widths, ranks, tokens or normalization are inconsistent.

    Also a ``ValueError``, so generic input handling catches it too.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> Architecture((2, 1), (1, 1))   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidArchitectureError: ranks has 2 entries but widths describe 1 layer; give exactly one ...
    >>> issubclass(InvalidArchitectureError, ValueError)
    True
    """


class InvalidInputError(AttngeoError, ValueError):
    """Weights, inputs or options that do not fit the architecture or the call.

    Examples
    --------
    Widths ``(2, 1)`` with rank 1 have ``Q, K`` of shape ``1 x 2`` and ``V`` of
    shape ``1 x 2``: six weights, not three.

    >>> from attngeo import Architecture, evaluate
    >>> evaluate(Architecture((2, 1), (1,), tokens=2), [1, 0, 1], [[1, 2], [3, 4]])
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: weights has 3 entries but widths 2,1, ranks 1, t=2, lightning has 6 parameters
    """


class ExpansionTooLargeError(AttngeoError):
    """Symbolic expansion would exceed the configured monomial bound.

    Examples
    --------
    >>> from attngeo import Architecture, expand
    >>> expand(Architecture((2, 2), (1,), tokens=2), max_terms=10)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.ExpansionTooLargeError: ... about 64 monomials (bound 10); evaluate at points instead, ...
    """


class CertificateFormatError(AttngeoError):
    """A certificate that cannot be read at all (missing file, not JSON, not an attngeo certificate, ...).

    The checker's exit code for it is 2 (no verdict), not 1 (rejected).

    Examples
    --------
    >>> from attngeo import check_certificate
    >>> check_certificate({"format": "something-else"})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: not an attngeo certificate (no "format": "attngeo-certificate")
    """


class CertificateRejected(AttngeoError):
    """A readable certificate whose claim the checker could not re-verify.

    Examples
    --------
    A certificate that claims more than its witnesses prove: ``dim M = 5``
    where the upper witness (checked first, the cheaper) leaves at most 4.

    >>> from attngeo import Architecture, certify_dimension, check_certificate
    >>> cert = certify_dimension(Architecture((2, 1), (1,), tokens=2), seed=0).to_json()
    >>> check_certificate(cert).kind
    'dimension'
    >>> cert.update(lower=5, upper=5, dimension=5)
    >>> check_certificate(cert)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: upper = 5 but parameters - field rank = 6 - 2 = 4
    """


class CannotVerify(AttngeoError):
    """A certificate this machine cannot judge (e.g. its replay needs msolve, not installed).

    Examples
    --------
    The checker's msolve replay on a machine without msolve (simulated by
    pointing ``ATTNGEO_MSOLVE`` at a file that does not exist):

    >>> import os
    >>> from unittest import mock
    >>> from attngeo.check.msolve import replay
    >>> with mock.patch.dict(os.environ, {"ATTNGEO_MSOLVE": "/nonexistent/msolve"}):
    ...     replay([], ("x",), 0)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CannotVerify: this certificate's elimination can only be replayed with msolve, not installed ...
    """


class NotCertifiedError(AttngeoError):
    """A value was asked for that the computation bounded but did not prove.

    Examples
    --------
    Allowed a single point, the softmax lower bound at this seed's point falls
    one short of the upper bound, so :func:`attngeo.dimension` refuses to name a
    value (with the default three attempts a later point certifies ``dim M = 8``):

    >>> from attngeo import Architecture, dimension
    >>> arch = Architecture((2, 1, 2), (2, 1), tokens=2, normalization="softmax")
    >>> dimension(arch, seed=0, max_attempts=1)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.NotCertifiedError: widths 2,1,2, ranks 2,1, t=2, softmax: 7 <= dim M <= 8 (not certified: ...
    >>> dimension(arch, seed=0)
    8
    """


class NotInNeuromanifoldError(AttngeoError):
    """A function that no network of the given architecture produces (with the weights asked for).

    The error carries the complete argument as ``exc.fiber``.

    Examples
    --------
    A layer with ``A = K^T Q`` of rank 2 is not produced by any rank-1 layer:

    >>> from attngeo import Architecture, LayerFunction, NotInNeuromanifoldError, recover_weights
    >>> f = LayerFunction.from_weights(Architecture((2, 1), (2,), tokens=2),
    ...                                [[[[1, 0], [0, 1]], [[1, 0], [0, 1]], [[1, 1]]]])   # Q = K = I, V = (1, 1)
    >>> try:
    ...     recover_weights(Architecture((2, 1), (1,), tokens=2), f)
    ... except NotInNeuromanifoldError as exc:
    ...     print(exc.fiber.case, exc.fiber.components, str(exc).endswith("the forced A has rank 2 > a = 1"))
    outside [] True
    """
