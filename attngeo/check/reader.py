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
    """The content of a regular file of at most ``limit`` bytes."""
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
    """A certificate object from JSON text, within the limits above."""
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
    """Read and parse one certificate file (unusable input raises CertificateFormatError)."""
    return parse(read_bytes(path), os.fspath(path))
