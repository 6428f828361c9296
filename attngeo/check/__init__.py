"""The certificate checker: a small, independent kernel (docs/trust.md).

It imports nothing from attngeo's provers — only python-flint, numpy, the
standard library and :mod:`attngeo.exceptions` — reads certificates through its
own bounded reader, and re-verifies every claim from the JSON alone.

* :func:`check_certificate` — one certificate (path or dict), in this process;
* :func:`check_file` / :func:`check_folder` — files checked in isolated worker
  processes with a time and memory budget; a folder run never aborts.

Outcomes: :class:`CheckResult` (valid), ``CertificateRejected`` (a claim that
does not verify, exit 1), ``CertificateFormatError`` or ``CannotVerify``
(unusable input or no verdict possible here, exit 2).
"""

from .isolation import check_file, check_folder, check_paths, one_line
from .kernel import KINDS, SUPPORTED_VERSIONS, CheckResult, check_certificate

__all__ = ["KINDS", "SUPPORTED_VERSIONS", "CheckResult", "check_certificate", "check_file", "check_folder",
           "check_paths", "one_line"]
