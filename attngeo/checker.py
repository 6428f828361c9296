"""Old import path of the checker, kept while callers move to :mod:`attngeo.check`."""

from .check import CheckResult, check_certificate, check_folder

__all__ = ["CheckResult", "check_certificate", "check_folder"]
