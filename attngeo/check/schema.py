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
    """A certificate inside a certificate (see the module docstring)."""

    def __init__(self, kind: str, same: tuple[str, ...] = ("architecture",)):
        self.kind, self.same = kind, same
HEADER = {"format": CHECKED, "version": CHECKED, "kind": CHECKED}
ARCHITECTURE = {"widths": CHECKED, "ranks": CHECKED, "tokens": CHECKED, "normalization": CHECKED}


def informational(value, schema, where: str) -> bool:
    """Type-check an informational field; False when ``schema`` is not an informational marker."""
    if schema is NUMBER:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0):
            reject(f"{where} must be a non-negative number")
    elif schema is FLAG:
        if value is not None and not isinstance(value, bool):
            reject(f"{where} must be true or false")
    else:
        return False
    return True
