"""Closed certificates: every field is either verified or refused.

Each kind declares the fields it may contain as a nested *schema*:

* ``CHECKED`` — the kind's checker verifies the value (a claim or a witness);
* ``NUMBER`` / ``FLAG`` — provenance (a timing, an attempt count, a flag the
  checker re-derives when present): type-checked here, never part of a claim;
  certificates carry no prose at all (version 2), so there is no text to echo;
* a dict — an object with exactly these keys (nested schema);
* a one-element list ``[schema]`` — a list whose items follow ``schema``;
* ``Embedded(kind, same)`` — a whole certificate of ``kind``, verified by the
  kernel as its own certificate *before* the outer checker runs, and bound to
  the outer one: same format and version, and the fields named in ``same``
  (the architecture, the point) equal to the outer certificate's.

Unknown keys are refused, so a certificate cannot carry a claim the checker
never looked at.
"""

from __future__ import annotations

from .values import reject


class _Marker:
    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


CHECKED, NUMBER, FLAG = (_Marker(n) for n in ("CHECKED", "NUMBER", "FLAG"))


class Embedded:
    """A certificate inside a certificate (see the module docstring).

    Parameters
    ----------
    kind : str
        The kind the embedded certificate must have.
    same : tuple of str
        Fields that must equal the outer certificate's (what binds the two).

    Examples
    --------
    A singular-point certificate embeds the dimension certificate its verdict
    compares with; one for another architecture is refused, even though it
    verifies on its own:

    >>> from attngeo import Architecture, certify_dimension, check_certificate, is_singular
    >>> from attngeo.check.loci.singular import SCHEMA
    >>> SCHEMA["dimension_certificate"].kind, SCHEMA["fiber_certificate"].same
    ('dimension', ('architecture', 'point'))
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> cert = is_singular(arch, [[[[3, 0]], [[3, 0]], [[0, 0], [0, 0]]]]).to_json()   # V = 0
    >>> other = certify_dimension(Architecture((2, 2), (2,), tokens=2), seed=0).to_json()
    >>> check_certificate(other).claim
    'dim M = 7 for widths 2,2, ranks 2, t=2'
    >>> check_certificate({**cert, "dimension_certificate": other})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: dimension_certificate is for another architecture than the certificate it is embedded in
    """

    def __init__(self, kind: str, same: tuple[str, ...] = ("architecture",)):
        self.kind, self.same = kind, same
HEADER = {"format": CHECKED, "version": CHECKED, "kind": CHECKED}
ARCHITECTURE = {"widths": CHECKED, "ranks": CHECKED, "tokens": CHECKED, "normalization": CHECKED,
                # beyond [HMK] (multi-head); present only when they differ from its model
                "heads": CHECKED, "value_ranks": CHECKED, "residual": CHECKED, "causal": CHECKED,
                "kv_heads": CHECKED, "biases": CHECKED}


def informational(value, schema, where: str) -> bool:
    """Type-check an informational field; False when ``schema`` is not an informational marker.

    Parameters
    ----------
    value
        The field's value (``None`` is allowed: the field is optional).
    schema
        The field's schema entry: ``NUMBER`` and ``FLAG`` are informational.
    where : str
        The field's name, for the message.

    Returns
    -------
    bool
        True when the field was informational (and is well typed).

    Raises
    ------
    CertificateRejected
        A ``NUMBER`` that is negative or not a number, a ``FLAG`` that is not a boolean.

    Examples
    --------
    >>> from attngeo.check.schema import CHECKED, NUMBER, informational
    >>> informational(0.25, NUMBER, "seconds"), informational([1], CHECKED, "lower")
    (True, False)
    >>> informational(-1, NUMBER, "seconds")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: seconds must be a non-negative number
    """
    if schema is NUMBER:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            reject(f"{where} must be a non-negative number")
    elif schema is FLAG:
        if value is not None and not isinstance(value, bool):
            reject(f"{where} must be true or false")
    else:
        return False
    return True


def certified_dimension(cert: dict) -> int:
    """The dimension an *already verified* embedded dimension certificate proves (rejects bounds).

    Parameters
    ----------
    cert : dict
        A dimension certificate that :func:`check` has accepted.

    Returns
    -------
    int

    Raises
    ------
    CertificateRejected
        When it proves only bounds.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.dimension.dense import check
    >>> from attngeo.check.schema import certified_dimension
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
    >>> check(cert), certified_dimension(cert)
    ('dim M = 6 for widths 2,2, ranks 1, t=2', 6)
    >>> certified_dimension(dict(cert, upper=7, certified=False, dimension=None))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the embedded dimension certificate must certify the dimension (its bounds must meet)
    """
    if cert.get("certified") is not True or isinstance(cert.get("dimension"), bool) \
            or not isinstance(cert.get("dimension"), int):
        reject("the embedded dimension certificate must certify the dimension (its bounds must meet)")
    return cert["dimension"]
