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
    """A certificate: the header, then ``body`` without ``drop`` and without prose at any depth.

    Parameters
    ----------
    kind : str
        The certificate kind (``dimension``, ``fiber``, ...), which picks the checker.
    body : dict
        The claim and its witness; keys named in :data:`PROSE` are removed at every depth.
    drop : tuple of str
        Further top-level keys to leave out.

    Returns
    -------
    dict
        ``format``, ``version`` and ``kind``, then the cleaned body.

    Examples
    --------
    Prose is for the reader, not the checker: it never reaches a certificate.

    >>> from attngeo.geometry.certificate import certificate_json
    >>> certificate_json("fiber", {"case": "zero", "reason": "F = 0",
    ...                            "components": [{"dimension": 4, "description": "{A = 0}"}]})
    {'format': 'attngeo-certificate', 'version': 2, 'kind': 'fiber', 'case': 'zero', 'components': [{'dimension': 4}]}
    >>> certificate_json("dimension", {"lower": 6, "seconds": 0.5}, drop=("seconds",))["lower"]
    6
    """
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

    Returns
    -------
    pathlib.Path
        ``path``, unchanged, when it may be written.

    Raises
    ------
    InvalidInputError
        When the folder is missing, or ``path`` is a link, a folder, a device or read-only.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.geometry.certificate import check_writable
    >>> tmp = tempfile.TemporaryDirectory()
    >>> check_writable(os.path.join(tmp.name, "c.json")).name      # a new file in an existing folder
    'c.json'
    >>> check_writable(os.path.join(tmp.name, "missing", "c.json"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: cannot write .../missing/c.json: folder .../missing does not exist; create it first
    >>> check_writable(tmp.name)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: cannot write ...: it is a folder; give a file name
    >>> tmp.cleanup()
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
    """Create the output folder ``path`` (its parent must exist); an existing folder is kept as it is.

    Raises
    ------
    InvalidInputError
        When the parent is missing or a file already has that name.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.geometry.certificate import make_folder
    >>> tmp = tempfile.TemporaryDirectory()
    >>> out = make_folder(os.path.join(tmp.name, "out"))
    >>> out.is_dir(), make_folder(out) == out                     # made once, then kept
    (True, True)
    >>> _ = (out / "report.md").write_text("x")
    >>> make_folder(out / "report.md")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: cannot make folder .../report.md: a file of that name exists; give a folder
    >>> tmp.cleanup()
    """
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

    Returns
    -------
    pathlib.Path
        The path written.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.geometry.certificate import write_text
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = write_text(os.path.join(tmp.name, "report.md"), "first")
    >>> path = write_text(path, "second")                          # replaced whole, no temporary left behind
    >>> path.read_text(), os.listdir(tmp.name)
    ('second', ['report.md'])
    >>> tmp.cleanup()
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
    """Write ``data`` to ``path`` atomically, under the rules of :func:`check_writable`.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.geometry.certificate import write_json
    >>> tmp = tempfile.TemporaryDirectory()
    >>> write_json(os.path.join(tmp.name, "c.json"), {"kind": "fiber", "case": "zero"}).read_text()
    '{"kind":"fiber","case":"zero"}\\n'
    >>> tmp.cleanup()
    """
    return write_text(path, json.dumps(data, separators=(",", ":")) + "\n")


def read_json(path: str | os.PathLike) -> dict:
    """Read a certificate file; unusable input raises :class:`CertificateFormatError`.

    Raises
    ------
    CertificateFormatError
        When the file cannot be read, is not JSON, or is not an attngeo certificate.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.geometry.certificate import read_json, write_text
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).save(os.path.join(tmp.name, "c.json"))
    >>> cert = read_json(path)
    >>> cert["kind"], cert["dimension"]
    ('dimension', 6)
    >>> read_json(write_text(os.path.join(tmp.name, "other.json"), "[1, 2]"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: .../other.json is not an attngeo certificate (no "format": "attngeo-certificate")
    >>> tmp.cleanup()
    """
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
    """Mixin of the result protocol (see the module docstring).

    Every result class defines ``summary()``, ``to_json()``, ``latex()`` and
    ``__str__``; the mixin adds ``to_dict()``, ``save(path)``, the notebook
    displays and a one-line ``repr``.

    Examples
    --------
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.geometry.certificate import Result
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0)
    >>> isinstance(cert, Result), cert.kind
    (True, 'dimension')
    >>> cert
    <DimensionCertificate widths 2,2, ranks 1, t=2, lightning: dim M = 6 (certified)>
    """

    kind = "result"

    def summary(self) -> dict:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def to_json(self) -> dict:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def latex(self) -> str:  # pragma: no cover - every result defines it
        raise NotImplementedError

    def to_dict(self) -> dict:
        """The record ``--json`` prints: the claim and its words, JSON-serializable (no certificate witness).

        Examples
        --------
        >>> from attngeo import Architecture, certify_dimension
        >>> record = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_dict()
        >>> record["dimension"], record["formula"], "lower_witness" in record
        (6, 6, False)
        """
        return self.summary()

    def save(self, path: str | os.PathLike) -> Path:
        """Write the certificate (atomic; only a regular file in an existing folder).

        Returns
        -------
        pathlib.Path
            The path written.

        Examples
        --------
        The saved file passes the independent checker.

        >>> import os, tempfile
        >>> from attngeo import Architecture, certify_dimension, check_certificate
        >>> from attngeo.geometry.certificate import read_json
        >>> tmp = tempfile.TemporaryDirectory()
        >>> path = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).save(os.path.join(tmp.name, "c.json"))
        >>> check_certificate(read_json(path)).claim
        'dim M = 6 for widths 2,2, ranks 1, t=2'
        >>> tmp.cleanup()
        """
        return write_json(path, self.to_json())

    #: Characters of LaTeX a notebook cell shows; a longer result shows its text (``__str__``) instead.
    NOTEBOOK_LATEX = 8_000

    def _repr_latex_(self) -> str | None:
        """``$latex()$`` for Jupyter, or None (Jupyter then shows the HTML text) when it would be longer than
        :attr:`NOTEBOOK_LATEX` characters: no 100-kB cell."""
        tex = self.latex()
        return f"${tex}$" if len(tex) <= self.NOTEBOOK_LATEX else None

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

    Examples
    --------
    One layer, ``d = d' = 2``, ``a = 1``, ``t = 2``: 8 parameters, and [HMK]'s
    ``2ad + dd' - a^2 - 1 = 6``.

    >>> from attngeo import Architecture, certify_dimension
    >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0)
    >>> cert.parameters, cert.lower, cert.upper, cert.certified, cert.dimension
    (8, 6, 6, True, 6)

    Two layers of width 2 with full ranks: [HMK]'s ``l a (2d - a) + d^2 - l = 10``
    of 24 parameters. Bounds that do not meet would print as
    ``lower <= dim M <= upper`` with ``certified`` false and ``gap = upper - lower``.

    >>> deep = certify_dimension(Architecture((2, 2, 2), (2, 2), tokens=2), seed=3)
    >>> deep.parameters, deep.dimension, deep.gap
    (24, 10, 0)
    >>> print(deep)
    widths 2,2,2, ranks 2,2, t=2, lightning: dim M = 10 (certified)
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
    def families(self) -> list[str]:
        """The families of kernel vector fields behind the upper bound, e.g. ``['intra(1)', 'annihilator(2)']``."""
        return [f"{f['kind']}({f['layer']}{'.' + str(f['head']) if 'head' in f else ''})"
                for f in self.upper_witness.get("families", [])]

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
        """The certificate: the claim, the minor witnessing the lower bound and the field minor of the upper one.

        Examples
        --------
        >>> from attngeo import Architecture, certify_dimension, check_certificate
        >>> cert = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).to_json()
        >>> cert["lower_witness"]["rank"], "formula" in cert, check_certificate(cert).claim
        (6, False, 'dim M = 6 for widths 2,2, ranks 1, t=2')
        """
        # [HMK]'s formula and the notes are for the reader (summary()); the checker re-derives the identities
        return certificate_json(self.kind, {
            **self._claim(),
            "lower_witness": self.lower_witness,
            "upper_witness": {k: v for k, v in self.upper_witness.items() if k != "identities"},
            "seconds": round(self.seconds, 3),
            "attempts": self.attempts,
        })

    def summary(self) -> dict:
        """The short record the command line prints with ``--json``.

        Examples
        --------
        >>> from attngeo import Architecture, certify_dimension
        >>> s = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).summary()
        >>> s["dimension"], s["formula_name"], s["formula"], s["formula_applies"]
        (6, "2ad + dd' - a^2 - 1", 6, True)
        """
        f = self.formula
        return {
            **self._claim(),
            "architecture": self.architecture.to_dict(full=True),
            "formula": f["value"] if f.get("applies") else None,
            "formula_name": f.get("name"),
            "formula_applies": f.get("applies"),
            "formula_reason": f.get("reason"),
            "families": self.families,
            "seconds": round(self.seconds, 3),
        }

    def __str__(self) -> str:
        status = f"dim M = {self.dimension} (certified)" if self.certified else (
            f"{self.lower} <= dim M <= {self.upper} (not certified: gap {self.gap})"
        )
        return f"{self.architecture}: {status}"

    def latex_parts(self) -> list[str]:
        """The claim, the architecture and [HMK]'s formula (with whether its hypotheses hold), each one LaTeX
        string (math): the lines of ``attngeo dim --latex``.

        Examples
        --------
        >>> from attngeo import Architecture, certify_dimension
        >>> claim, arch, hmk = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).latex_parts()
        >>> print(arch)
        \\text{lightning attention}\\; d = (2, 2),\\; a = (1),\\; t = 2
        >>> print(claim)
        \\dim \\mathcal{M} = 6\\ \\text{(certified)}
        >>> print(hmk)
        \\text{[HMK]: } 2ad + dd' - a^2 - 1 = 6\\ (\\text{applies})
        """
        from .. import latex

        claim, arch, hmk = self._latex()
        *sizes, last = arch.split(r",\; ")  # a long architecture takes two lines
        return [claim, *latex.wrap([s + r",\;" for s in sizes] + [last]), *hmk]

    def _latex(self) -> tuple[str, str, list[str]]:
        """The claim, the architecture, and [HMK]'s formula (none, or one), each math."""
        from .. import latex

        f, hmk = self.formula, []
        if f.get("value") is not None:
            verdict = r"\text{applies}" if f["applies"] else r"\text{does not apply}"
            label = "[HMK]" if self.architecture.is_plain else "naive count"  # beyond [HMK]'s model: no formula of theirs
            hmk.append(rf"\text{{{label}: }} {latex.formula(f['name'])} = {f['value']}\ ({verdict})")
        return latex.dimension(self.lower, self.upper), latex.architecture(self.architecture), hmk

    def latex(self) -> str:
        """The claim in LaTeX (one string, math), with [HMK]'s formula and whether its hypotheses hold.

        Examples
        --------
        >>> from attngeo import Architecture, certify_dimension
        >>> from attngeo.latex import balanced
        >>> tex = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).latex()
        >>> "= 6" in tex, "(certified)" in tex, balanced(tex)
        (True, True, True)
        """
        claim, arch, hmk = self._latex()
        return rf"{claim}\quad ({arch})" + "".join(rf";\quad {h}" for h in hmk)

