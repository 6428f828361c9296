"""The kernel: one certificate in, one verified claim (or a refusal) out.

``verify`` reads the header, refuses every field the kind's schema does not
allow (schema.py), verifies embedded certificates as certificates of their
own kind bound to this one, and only then runs the kind's checker. Claims are
built by the kind checkers from verified values only; no text of the
certificate is ever echoed into a claim.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass

from ..exceptions import CannotVerify, CertificateFormatError, CertificateRejected
from .reader import FORMAT, read_certificate
from .schema import Embedded, informational
from .values import reject

SUPPORTED_VERSIONS = (2,)

#: kind -> module of this package defining ``SCHEMA`` and ``check(cert) -> claim``.
KINDS = {
    "dimension": "dimension.dense",
    "fiber": "fibers.layer",
    "deep-fiber": "fibers.deep",
    "virtual-fiber": "fibers.virtual",
    "dimension-all-sizes": "dimension.allsizes",
    "fiber-all-sizes": "fibers.allsizes",
    "singular-point": "loci.singular",
    "strata": "loci.strata",
    "implicit": "loci.implicit",
    "implicit-graded": "loci.graded",
    "implicit-rank-one": "loci.rankone",
    "boundary-point": "loci.boundary",
    "local-rank": "loci.regularity",
}


@dataclass(frozen=True)
class CheckResult:
    """A certificate that verified: its path, its kind, and the one-line claim it proves.

    The claim is built by the checker from verified values only; no text of the
    certificate is echoed into it.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension, check_certificate
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
    >>> check_certificate(cert)
    CheckResult(path='<dict>', kind='dimension', claim='dim M = 6 for widths 2,2, ranks 1, t=2')
    """

    path: str
    kind: str
    claim: str


def _module(kind: str):
    return importlib.import_module(f".{KINDS[kind]}", __package__)


def _header(cert) -> str:
    if not isinstance(cert, dict) or cert.get("format") != FORMAT:
        raise CertificateFormatError(f"not an attngeo certificate (no \"format\": \"{FORMAT}\")")
    version = cert.get("version")
    if version == 1:
        reject("version 1 certificates carried prose the checker could not verify; regenerate it (version 2)")
    if type(version) is not int or version not in SUPPORTED_VERSIONS:  # 2.0 and true are not versions
        reject(f"unknown certificate version (this checker reads versions {list(SUPPORTED_VERSIONS)})")
    kind = cert.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        reject(f"unknown certificate kind (this checker reads {sorted(KINDS)})")
    return kind


def _closed(value, schema, root: dict, where: str) -> None:
    """Refuse fields ``schema`` does not allow; verify and bind embedded certificates."""
    if isinstance(schema, Embedded):
        if not isinstance(value, dict):
            reject(f"{where} must be an embedded certificate")
        if value.get("format") != root.get("format") or value.get("version") != root.get("version") \
                or value.get("kind") != schema.kind:
            reject(f"{where} must be a {schema.kind} certificate of the same format and version")
        for key in schema.same:
            if value.get(key) != root.get(key):
                reject(f"{where} is for another {key} than the certificate it is embedded in")
        verify(value)
        return
    if informational(value, schema, where) or not isinstance(schema, (dict, list)):
        return
    if isinstance(schema, list):
        if not isinstance(value, list):
            reject(f"{where} must be a list")
        for k, item in enumerate(value):
            _closed(item, schema[0], root, f"{where}[{k}]")
        return
    if not isinstance(value, dict):
        reject(f"{where or 'the certificate'} must be an object")
    for key, item in value.items():
        name = f"{where}.{key}" if where else key
        if key not in schema:
            reject(f"unknown field {name[:60]!r}: a certificate may hold only fields the checker verifies "
                   "(docs/certificates.md)")
        _closed(item, schema[key], root, name)


def verify(cert, weights=None) -> str:
    """The claim ``cert`` proves, or CertificateRejected / CertificateFormatError / CannotVerify.

    The header, then the closed schema (an unknown field is refused; embedded
    certificates are verified and bound first), then the kind's checker.
    :func:`check_certificate` is the public entry; this is the step it and the
    embedded certificates share, without the one-line clean-up of messages.

    Parameters
    ----------
    cert : dict
        A parsed certificate.
    weights : str or path-like, optional
        The checkpoint a local-rank certificate is bound to (its point is read from it).

    Returns
    -------
    str
        The claim, in the checker's words.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.kernel import verify
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
    >>> verify(cert)
    'dim M = 6 for widths 2,2, ranks 1, t=2'

    A field the checker does not verify cannot ride along, and version 1
    (which carried prose) is refused:

    >>> verify({**cert, "note": "rank 7, trust me"})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: unknown field 'note': a certificate may hold only fields the checker verifies (docs/certificates.md)
    >>> verify({**cert, "version": 1})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: version 1 certificates carried prose the checker could not verify; regenerate it (version 2)
    """
    kind = _header(cert)
    module = _module(kind)
    budget = getattr(module, "budget", None)
    if budget is not None:  # a kind whose work is counted from its sizes: refused before anything is verified
        budget(cert)
    _closed(cert, module.SCHEMA, cert, "")
    if weights is None:
        return module.check(cert)
    if not getattr(module, "BINDS_CHECKPOINT", False):
        raise CertificateFormatError(f"--weights is for local-rank certificates bound to a checkpoint; this is a "
                                     f"{kind} certificate")
    return module.check(cert, weights=weights)


def check_certificate(source: str | os.PathLike | dict, weights: str | os.PathLike | None = None) -> CheckResult:
    """Re-verify one certificate (a path or an already-loaded dict) in this process.

    Raises
    ------
    CertificateRejected
        The claim does not verify; the message says which part failed (exit 1).
    CertificateFormatError
        The input is not a readable attngeo certificate (exit 2).
    CannotVerify
        This machine cannot judge it (e.g. the replay needs msolve) (exit 2).

    Parameters
    ----------
    source : str, os.PathLike or dict
        A certificate file (read by the bounded reader) or a parsed certificate.
    weights : str or os.PathLike, optional
        The checkpoint file a local-rank certificate is bound to (``attngeo inspect`` writes such certificates):
        its point is rebuilt from the file, and another file is rejected naming both hashes. Without it a bound
        certificate cannot be verified (``CannotVerify``).

    Returns
    -------
    CheckResult
        Its path (``"<dict>"`` for a dict), kind and claim.

    Examples
    --------
    One layer ``2 -> 2`` of rank 1 has ``2 + 2 + 4 = 8`` weights and two
    rescalings (``Q`` against ``K``, ``V`` against ``A = K^T Q``), so ``dim M = 6``:

    >>> from attngeo import Architecture, certify_dimension
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
    >>> check_certificate(cert).claim
    'dim M = 6 for widths 2,2, ranks 1, t=2'

    A lower bound above the rank of the recorded Jacobian minor (6) is refused:

    >>> check_certificate({**cert, "lower": 7})   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: ...
    >>> check_certificate({"format": "something-else"})
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: not an attngeo certificate (no "format": "attngeo-certificate")
    """
    try:
        if isinstance(source, dict):
            path, cert = "<dict>", source
        else:
            path = os.fspath(source)
            cert = read_certificate(path)
        return CheckResult(path, _header(cert), verify(cert, weights))
    except (CertificateRejected, CertificateFormatError, CannotVerify) as exc:
        raise type(exc)(one_line(exc)) from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError, OverflowError) as exc:
        # a structure no checker anticipated: it does not verify (a checker bug must never pass as a verdict)
        raise CertificateRejected(f"the certificate does not verify (the checker met {type(exc).__name__} "
                                  "while reading it: a malformed field)") from None
    except RecursionError:
        raise CertificateFormatError("the certificate nests too deeply to check") from None
    except MemoryError:
        raise CertificateFormatError("checking this certificate needs more memory than this process may use; "
                                     "check it with attngeo check --max-memory on a larger machine") from None


def one_line(message) -> str:
    """A message as one printable line: no text of a certificate can start a line of its own.

    Non-printable characters (newlines, escapes) become spaces; the result is
    at most 2000 characters.

    Examples
    --------
    >>> from attngeo.check import one_line
    >>> one_line("bad.json\\nvalid     forged.json: dim M = 99")
    'bad.json valid     forged.json: dim M = 99'
    >>> len(one_line("x" * 5000))
    2000
    """
    return "".join(c if c.isprintable() else " " for c in str(message))[:2000]
