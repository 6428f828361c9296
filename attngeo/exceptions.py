"""The exceptions attngeo raises.

Every error a user can cause is an :class:`AttngeoError`; its message names the
input that was wrong and how to fix it. The command line turns any of them into
a one-line message and exit code 2.
"""


class AttngeoError(Exception):
    """Root of every error attngeo raises on purpose."""


class InvalidArchitectureError(AttngeoError, ValueError):
    """An architecture's widths, ranks, tokens or normalization are inconsistent."""


class InvalidInputError(AttngeoError, ValueError):
    """Weights, inputs or options that do not fit the architecture or the call."""


class ExpansionTooLargeError(AttngeoError):
    """Symbolic expansion would exceed the configured monomial bound."""


class CertificateFormatError(AttngeoError):
    """A certificate file that cannot be read at all (not JSON, unknown version, ...)."""


class CertificateRejected(AttngeoError):
    """A readable certificate whose claim the checker could not re-verify."""


class CannotVerify(AttngeoError):
    """A certificate this machine cannot judge (e.g. its replay needs msolve, not installed)."""


class NotCertifiedError(AttngeoError):
    """A value was asked for that the computation bounded but did not prove."""


class NotInNeuromanifoldError(AttngeoError):
    """A function that no network of the given architecture produces (with the weights asked for)."""
