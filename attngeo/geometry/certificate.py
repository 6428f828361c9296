"""Certificates: versioned JSON records of what was proved and how to re-check it; the result protocol.

Every result a user gets back (a dimension, a fiber, a point verdict, strata,
equations) is a :class:`Result`: its claim in words (``str``), in LaTeX
(``latex()``, one string), as the record ``--json`` prints (``to_dict()``) and
as a certificate (``to_json()``, written by ``save``).

One record type per kind of claim (docs/certificates.md documents every field).
Writing is atomic (a temporary file renamed over the target), so an interrupted
run never leaves a truncated certificate, and an existing file is only replaced
by a complete one.
"""

from __future__ import annotations

import html
import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..model.architecture import Architecture
from ..exceptions import CertificateFormatError, InvalidInputError

FORMAT = "attngeo-certificate"
#: Version 2: certificates carry no prose (version 1 carried descriptions, LaTeX and
#: reasons the checker could not verify; docs/trust.md).
VERSION = 2
#: Words a result shows its reader but a certificate does not carry: the checker cannot
#: verify prose, and a certificate holds only what the checker verifies.
PROSE = ("description", "latex", "method", "reason", "statement")


def certificate_json(kind: str, body: dict, drop: tuple[str, ...] = ()) -> dict:
    """A certificate: the header, then ``body`` without ``drop`` and without prose at any depth."""
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in PROSE}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return {"format": FORMAT, "version": VERSION, "kind": kind,
            **clean({k: v for k, v in body.items() if k not in drop})}


def check_writable(path: str | os.PathLike) -> Path:
    """Refuse ``path`` unless it names a new or existing *regular* file in an existing folder.

    Output never creates folders (a mistyped path would scatter files), never
    follows a symbolic link (it may point anywhere) and never replaces a folder,
    device, pipe or socket (as root, writing "to" /dev/full would replace it).
    Callers that want a fresh folder create it on purpose: :func:`make_folder`.
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise InvalidInputError(f"cannot write {path}: folder {path.parent} does not exist; create it first")
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return path
    except OSError as exc:
        raise InvalidInputError(f"cannot write {path}: {exc.strerror}; choose another path") from None
    if stat.S_ISLNK(mode):
        raise InvalidInputError(f"cannot write {path}: it is a symbolic link; give the path of a regular file")
    if not stat.S_ISREG(mode):
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file (a device, pipe or socket)"
        raise InvalidInputError(f"cannot write {path}: it is {kind}; give a file name")
    if not os.access(path, os.W_OK):
        raise InvalidInputError(f"cannot write {path}: it is read-only; make it writable or choose another path")
    return path


def make_folder(path: str | os.PathLike) -> Path:
    """Create the output folder ``path`` (its parent must exist); an existing folder is kept as it is."""
    path = Path(path)
    if path.is_dir():
        return path
    if path.exists() or path.is_symlink():
        raise InvalidInputError(f"cannot make folder {path}: a file of that name exists; give a folder")
    if not path.parent.is_dir():
        raise InvalidInputError(f"cannot make folder {path}: folder {path.parent} does not exist; create it first")
    try:
        path.mkdir()
    except OSError as exc:
        raise InvalidInputError(f"cannot make folder {path}: {exc.strerror}; choose another path") from None
    return path


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically (a crash never leaves a half-written file).

    ``path`` must pass :func:`check_writable`; what it held before is replaced
    only by the complete new text, and kept when anything fails.
    """
    path = check_writable(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise InvalidInputError(f"cannot write {path}: {exc.strerror}; choose a writable path") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; certificates are meant to be shared
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)  # renames over the name: a link swapped in meanwhile is replaced, not followed
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write {path}: {exc.strerror}; choose another path") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_json(path: str | os.PathLike, data: dict) -> Path:
    """Write ``data`` to ``path`` atomically, under the rules of :func:`check_writable`."""
    return write_text(path, json.dumps(data, separators=(",", ":")) + "\n")


def read_json(path: str | os.PathLike) -> dict:
    """Read a certificate file; unusable input raises :class:`CertificateFormatError`."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise CertificateFormatError(f"cannot read {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CertificateFormatError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CertificateFormatError(f"{path} is not an attngeo certificate (no \"format\": \"{FORMAT}\")")
    return data


class Result:
    """Mixin of the result protocol (see the module docstring)."""

    kind = "result"

    def summary(self) -> dict:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def latex(self) -> str:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The record ``--json`` prints: the claim and its words, JSON-serializable (no certificate witness)."""
        return self.summary()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the certificate (atomic; only a regular file in an existing folder)."""
        return write_json(path, self.to_json())

    def _repr_latex_(self) -> str:
        return f"${self.latex()}$"

    def _repr_html_(self) -> str:
        return f"<pre>{html.escape(str(self))}</pre>"

    def __repr__(self) -> str:
        first = str(self).splitlines()[0] if str(self) else ""
        return f"<{type(self).__name__} {first}>"


@dataclass(repr=False)
class DimensionCertificate(Result):
    """Proved lower and upper bounds on ``dim M`` for one architecture.

    ``certified`` is true exactly when the bounds meet; ``dimension`` is then the
    proved value and otherwise None. ``lower_witness`` and ``upper_witness`` hold
    everything the independent checker needs (docs/certificates.md).
    """

    architecture: Architecture
    lower: int
    upper: int
    lower_witness: dict
    upper_witness: dict
    formula: dict
    seconds: float
    attempts: int
    notes: list[str] = field(default_factory=list)

    kind = "dimension"

    @property
    def parameters(self) -> int:
        return self.architecture.parameter_count

    @property
    def certified(self) -> bool:
        return self.lower == self.upper

    @property
    def dimension(self) -> int | None:
        return self.lower if self.certified else None

    @property
    def gap(self) -> int:
        return self.upper - self.lower

    def _claim(self) -> dict:
        return {
            "architecture": self.architecture.to_dict(),
            "parameters": self.parameters,
            "lower": self.lower,
            "upper": self.upper,
            "certified": self.certified,
            "dimension": self.dimension,
        }

    def to_json(self) -> dict:
        # [HMK]'s formula and the notes are for the reader (summary()); the checker re-derives the identities
        return certificate_json(self.kind, {
            **self._claim(),
            "lower_witness": self.lower_witness,
            "upper_witness": {k: v for k, v in self.upper_witness.items() if k != "identities"},
            "seconds": round(self.seconds, 3),
            "attempts": self.attempts,
        })

    def summary(self) -> dict:
        """The short record the command line prints with ``--json``."""
        f = self.formula
        return {
            **self._claim(),
            "formula": f["value"] if f.get("applies") else None,
            "formula_name": f.get("name"),
            "formula_applies": f.get("applies"),
            "formula_reason": f.get("reason"),
            "seconds": round(self.seconds, 3),
        }

    def __str__(self) -> str:
        status = f"dim M = {self.dimension} (certified)" if self.certified else (
            f"{self.lower} <= dim M <= {self.upper} (not certified: gap {self.gap})"
        )
        return f"{self.architecture}: {status}"

    def latex(self) -> str:
        from .. import latex

        out = f"{latex.dimension(self.lower, self.upper)}\\quad ({latex.architecture(self.architecture)})"
        f = self.formula
        if f.get("value") is not None:
            verdict = r"\text{applies}" if f["applies"] else r"\text{does not apply}"
            out += rf";\quad \text{{[HMK]: }} {latex.formula(f['name'])} = {f['value']}\ ({verdict})"
        return out

