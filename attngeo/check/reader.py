"""Reading a certificate file without trusting it.

Only regular files are read (a FIFO, a device or a link to one is refused
before it is opened for reading), at most ``MAX_FILE_BYTES``; the JSON parser
refuses duplicate keys, ``NaN``/``Infinity``, integers longer than
``MAX_DIGITS`` digits (before converting them) and nesting deeper than
``MAX_DEPTH``. Everything refused here is *unusable input* (exit 2), never a
rejected claim: the file never said anything.
"""

from __future__ import annotations

import json
import math
import os
import stat

from ..exceptions import CertificateFormatError
from .limits import MAX_DEPTH, MAX_DIGITS, MAX_FILE_BYTES

FORMAT = "attngeo-certificate"


def _unusable(message: str):
    raise CertificateFormatError(message)


def read_bytes(path: str | os.PathLike, limit: int = MAX_FILE_BYTES) -> bytes:
    """The content of a regular file of at most ``limit`` bytes.

    The file type is checked before it is opened (a FIFO or a device would
    block or never end) and again on the open descriptor; the size is checked
    before and while reading.

    Parameters
    ----------
    path : str or os.PathLike
        The file (a link is judged by its target).
    limit : int
        Largest size accepted, ``MAX_FILE_BYTES`` by default.

    Raises
    ------
    CertificateFormatError
        Missing, not a regular file, or larger than ``limit`` (unusable input, exit 2).

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo.check.reader import read_bytes
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "c.json")
    >>> with open(path, "w") as f:
    ...     _ = f.write("{}")
    >>> read_bytes(path)
    b'{}'
    >>> read_bytes(path, limit=1)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: .../c.json has 2 bytes, above the checker's limit of 1
    >>> read_bytes(folder)            # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: ... is not a regular file; give the path of a certificate file
    """
    name = os.fspath(path)
    try:
        info = os.stat(name)  # follows links: a link to /dev/zero is judged by its target
    except OSError as exc:
        _unusable(f"cannot read {name}: {exc.strerror}")
    if not stat.S_ISREG(info.st_mode):
        _unusable(f"{name} is not a regular file; give the path of a certificate file")
    if info.st_size > limit:
        _unusable(f"{name} has {info.st_size} bytes, above the checker's limit of {limit}")
    try:
        # O_NONBLOCK: if the path was swapped for a FIFO since the stat, opening does not wait
        fd = os.open(name, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        _unusable(f"cannot read {name}: {exc.strerror}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _unusable(f"{name} is not a regular file; give the path of a certificate file")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        _unusable(f"cannot read {name}: {exc.strerror}")
    finally:
        os.close(fd)
    if size > limit:
        _unusable(f"{name} grew beyond the checker's limit of {limit} bytes while being read")
    return b"".join(chunks)


def _pairs(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            _unusable(f"the key {key[:40]!r} appears twice in one object; a certificate states each field once")
        out[key] = value
    return out


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        _unusable(f"an integer of {len(text.lstrip('-'))} digits is above the checker's limit of {MAX_DIGITS}")
    return int(text)


def _float(text: str) -> float:
    if len(text) > 40:
        _unusable(f"a number written with {len(text)} characters is above the checker's limit of 40")
    value = float(text)
    if not math.isfinite(value):
        _unusable(f"the number {text} is not finite")
    return value


def _constant(name: str):
    _unusable(f"{name} is not a number a certificate may contain")


def _depth(value) -> int:
    """Nesting depth, without recursion (the parser already bounded it by the interpreter's limit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse(text: str | bytes, name: str = "<certificate>") -> dict:
    """A certificate object from JSON text, within the limits above.

    Parameters
    ----------
    text : str or bytes
        The JSON text.
    name : str
        How messages name the input (the file's path).

    Raises
    ------
    CertificateFormatError
        Not JSON, a duplicate key, ``NaN`` or ``Infinity``, an integer longer
        than ``MAX_DIGITS`` digits, nesting deeper than ``MAX_DEPTH``, or no
        ``"format": "attngeo-certificate"`` (unusable input, exit 2).

    Examples
    --------
    >>> from attngeo.check.reader import parse
    >>> parse('{"format": "attngeo-certificate", "kind": "fiber"}')["kind"]
    'fiber'

    A duplicated key could make two readers see two different claims:

    >>> parse('{"format": "attngeo-certificate", "lower": 6, "lower": 7}')
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: the key 'lower' appears twice in one object; a certificate states each field once
    >>> parse('{"format": "attngeo-certificate", "seconds": NaN}')
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: NaN is not a number a certificate may contain
    >>> parse('{"format": "attngeo-certificate", "rank": ' + "9" * 2001 + '}')
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: an integer of 2001 digits is above the checker's limit of 2000
    >>> parse("[" * 40 + "]" * 40)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateFormatError: <certificate> nests deeper than the checker's limit of 32
    """
    try:
        data = json.loads(text, object_pairs_hook=_pairs, parse_int=_integer, parse_float=_float,
                          parse_constant=_constant)
    except RecursionError:
        _unusable(f"{name} nests deeper than the checker's limit of {MAX_DEPTH}")
    except (UnicodeDecodeError, ValueError) as exc:  # JSONDecodeError is a ValueError
        if isinstance(exc, CertificateFormatError):
            raise
        _unusable(f"{name} is not JSON ({str(exc)[:120]})")
    if _depth(data) > MAX_DEPTH:
        _unusable(f"{name} nests deeper than the checker's limit of {MAX_DEPTH}")
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        _unusable(f"{name} is not an attngeo certificate (no \"format\": \"{FORMAT}\")")
    return data


def read_certificate(path: str | os.PathLike) -> dict:
    """Read and parse one certificate file: :func:`read_bytes`, then :func:`parse`.

    Raises
    ------
    CertificateFormatError
        Unusable input (exit 2); whether the claim holds is not decided here.

    Examples
    --------
    >>> import os, tempfile
    >>> from attngeo import Architecture, certify_dimension
    >>> from attngeo.check.reader import read_certificate
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> _ = certify_dimension(Architecture((2, 2), (1,), tokens=2), seed=0).save(path)
    >>> cert = read_certificate(path)
    >>> cert["kind"], cert["lower"], cert["upper"]
    ('dimension', 6, 6)
    """
    return parse(read_bytes(path), os.fspath(path))
