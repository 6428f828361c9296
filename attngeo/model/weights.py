"""Weights files, read exactly: JSON, numpy ``.npy`` / ``.npz`` and ``.safetensors``.

A trained weight is a binary float, i.e. the dyadic rational it stores; it is
read as exactly that number (:func:`attngeo.model.network.to_fmpq`), never
rounded. JSON numbers are read from their text (``0.1`` means 1/10), since
the text is what the file says. Layouts:

* JSON: a flat list, ``[[Q, K, V], ...]`` per layer, or ``{"Q", "K", "V"}`` (one layer);
* ``.npy``: one flat array of the ``P`` parameters in flattening order;
* ``.npz`` / ``.safetensors``: arrays named ``Q1, K1, V1, Q2, ...`` (or ``Q, K, V``
  for one layer), each of its block's shape.

``.safetensors`` is read by this module itself (an 8-byte header length, a JSON
header, raw little-endian data), so no extra package is needed; F64, F32, F16
and BF16 are read as the dyadic rationals they store (a BF16 is the top half
of a float32, so it widens to float32 exactly), and only the tensors asked for
are read (a whole-model file need not fit in memory). :func:`save_safetensors`
writes such a file (tests, notebooks). Trained layers in the layouts people
save (GPT-2, torch, ``q_proj``...) are read by :mod:`attngeo.model.checkpoint`.
"""

from __future__ import annotations

import json
import math
import os
import stat
import struct
import zipfile

import numpy as np
from flint import fmpq

from ..exceptions import InvalidInputError
from .architecture import Architecture
from .network import read_point

_SAFETENSORS_DTYPES = {"F16": "<f2", "F32": "<f4", "F64": "<f8", "BF16": "<u2", "I8": "<i1", "I16": "<i2",
                       "I32": "<i4", "I64": "<i8", "U8": "<u1"}
#: Largest weights file read (bytes): far above any single architecture attngeo certifies.
MAX_BYTES = 2**31


def regular_file(path, what: str) -> int:
    """The size of ``path`` if it is a regular file (a FIFO or a device would block or never end), else a refusal.

    >>> import tempfile
    >>> regular_file(tempfile.mkdtemp(), "weights file")   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: ... is not a regular file; give the path of a weights file
    """
    try:
        info = os.stat(path)
    except OSError as exc:
        raise InvalidInputError(f"cannot read {what} {path}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise InvalidInputError(f"{path} is not a regular file; give the path of a {what}")
    return info.st_size


def _named(arch: Architecture, arrays: dict, path) -> list:
    """Per-layer ``(Q, K, V)`` from arrays named ``Q1, K1, V1, ...`` (or ``Q, K, V`` for one layer)."""
    layers = []
    for i in range(1, arch.depth + 1):
        triple = []
        for name in "QKV":
            key = f"{name}{i}" if f"{name}{i}" in arrays else (name if arch.depth == 1 else None)
            if key not in arrays:
                raise InvalidInputError(f"{path}: no array {name}{i}; name the arrays Q1, K1, V1, ... "
                                        f"(or Q, K, V for one layer)")
            triple.append(np.asarray(arrays[key]))
        layers.append(triple)
    extra = set(arrays) - {f"{n}{i}" for n in "QKV" for i in range(1, arch.depth + 1)} - set("QKV")
    if extra:
        raise InvalidInputError(f"{path}: unexpected arrays {sorted(extra)[:4]}; only Q1, K1, V1, ... belong here")
    return layers


def npz_array(npz, key: str, where: str) -> np.ndarray:
    """Array ``key`` of an open ``.npz``, its declared size bounded before numpy allocates it.

    numpy allocates the shape an ``.npy`` header declares before reading the data, so a tiny archive
    declaring ``10^14`` values would exhaust memory: the header is read first and must declare no more
    bytes than the archive member holds (and at most ``MAX_BYTES``).

    Examples
    --------
    >>> import io, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.npz")
    >>> np.savez(path, w=np.eye(2))
    >>> with np.load(path) as npz:
    ...     npz_array(npz, "w", path).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    member = key if key in npz.zip.namelist() else key + ".npy"
    with npz.zip.open(member) as fh:
        version = np.lib.format.read_magic(fh)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(fh)
    declared = math.prod(shape) * dtype.itemsize
    if declared > min(npz.zip.getinfo(member).file_size, MAX_BYTES):
        raise InvalidInputError(f"{where}: array {key!r} declares shape {shape} ({declared} bytes), more than "
                                f"the archive holds; save it again with numpy.savez")
    return npz[key]


def safetensors_header(path) -> tuple[dict, int]:
    """The tensors a ``.safetensors`` file declares, ``name -> (dtype, shape, start, end)``, and where data begins.

    Only the header is read: a whole-model file costs its header here, and
    :func:`read_safetensors` then reads just the tensors wanted.

    Raises
    ------
    InvalidInputError
        Not a safetensors file, an implausible header, a dtype attngeo does not read, a tensor outside the
        file or a shape that does not match its bytes; the message names the file and the tensor.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_safetensors(path, {"w": np.float32([[1, 2], [3, 4]])}, dtype="BF16")
    >>> safetensors_header(path)[0]
    {'w': ('BF16', (2, 2), 0, 8)}
    """
    size = regular_file(path, "weights file")
    with open(path, "rb") as fh:
        raw = fh.read(8)
        if len(raw) != 8:
            raise InvalidInputError(f"{path} is not a safetensors file (no header length)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100_000_000 or n > size - 8:
            raise InvalidInputError(f"{path}: a safetensors header of {n} bytes is not plausible")
        try:
            header = json.loads(fh.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):  # RecursionError: deeply nested
            raise InvalidInputError(f"{path} is not a safetensors file (unreadable header)") from None
    if not isinstance(header, dict):
        raise InvalidInputError(f"{path} is not a safetensors file (the header is not an object)")
    data_bytes = size - 8 - n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = info["dtype"]
            _SAFETENSORS_DTYPES[dtype]
            start, end = (_index(x) for x in info["data_offsets"])
            shape = tuple(_index(k) for k in info["shape"])
        except (KeyError, TypeError, ValueError):
            raise InvalidInputError(f"{path}: tensor {name!r} has no dtype/shape/offsets attngeo can read "
                                    f"(dtypes {sorted(_SAFETENSORS_DTYPES)})") from None
        if not 0 <= start <= end <= data_bytes:
            raise InvalidInputError(f"{path}: tensor {name!r} lies outside the file")
        width = np.dtype(_SAFETENSORS_DTYPES[dtype]).itemsize
        # Python ints: no silent wrap; a dimension numpy cannot index is refused even in an empty tensor
        if any(not 0 <= k < 2**62 for k in shape) or (end - start) != width * math.prod(shape):
            raise InvalidInputError(f"{path}: tensor {name!r} has {(end - start) // width} values for shape {shape}")
        out[name] = (dtype, shape, start, end)
    spans = sorted((start, end, name) for name, (_, _, start, end) in out.items() if end > start)
    for (_, end, first), (start, _, second) in zip(spans, spans[1:]):
        if start < end:  # the format gives each tensor its own bytes
            raise InvalidInputError(f"{path}: tensors {first!r} and {second!r} share bytes (overlapping data_offsets)")
    return out, 8 + n


def _index(x) -> int:
    """An offset or a dimension of a safetensors header: a JSON integer (not ``true``, not ``0.5``)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise ValueError(x)
    return x


def read_safetensors(path, names=None) -> dict:
    """Tensors of a ``.safetensors`` file (all, or those in ``names``) as numpy arrays holding their exact values.

    BF16 becomes float32 (the same numbers: a BF16 is a float32 with its low 16 bits zero); every other dtype
    keeps its numpy type.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_safetensors(path, {"w": np.float32([[0.1, -2]])}, dtype="BF16")
    >>> w = read_safetensors(path)["w"]
    >>> w.dtype.name, [float(x).as_integer_ratio() for x in w[0]]   # 0.1 rounded to 8 significant bits
    ('float32', [(205, 2048), (-2, 1)])
    """
    header, base = safetensors_header(path)
    out = {}
    with open(path, "rb") as fh:
        for name, (dtype, shape, start, end) in header.items():
            if names is not None and name not in names:
                continue
            fh.seek(base + start)
            arr = np.frombuffer(fh.read(end - start), dtype=_SAFETENSORS_DTYPES[dtype])
            if dtype == "BF16":
                arr = (arr.astype(np.uint32) << 16).view(np.float32)
            out[name] = arr.reshape(shape)
    return out


def save_safetensors(path, arrays: dict, dtype: str = "F32") -> None:
    """Write numpy arrays as a ``.safetensors`` file (``dtype`` F64, F32, F16 or BF16; BF16 rounds to nearest even).

    The file is what safetensors writes: an 8-byte little-endian header length, a JSON header of
    ``dtype``, ``shape`` and ``data_offsets``, then the raw little-endian data.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> path = os.path.join(tempfile.mkdtemp(), "w.safetensors")
    >>> save_safetensors(path, {"a": np.arange(6.0).reshape(2, 3)}, dtype="F16")
    >>> read_safetensors(path)["a"].tolist()
    [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    if dtype not in ("F64", "F32", "F16", "BF16"):
        raise InvalidInputError(f"dtype = {dtype!r}: write F64, F32, F16 or BF16")
    header, blobs, offset = {}, [], 0
    for name, arr in arrays.items():
        a = np.asarray(arr)
        if dtype == "BF16":
            bits = np.ascontiguousarray(a, dtype="<f4").view("<u4").astype(np.uint64)
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16  # round to nearest, ties to even
            raw = bits.astype("<u2").tobytes()
        else:
            raw = np.ascontiguousarray(a, dtype=_SAFETENSORS_DTYPES[dtype]).tobytes()
        header[name] = {"dtype": dtype, "shape": list(a.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_weights(arch: Architecture, path) -> list[fmpq]:
    """Read weights from a JSON, ``.npy``, ``.npz`` or ``.safetensors`` file, or a dict of arrays, exactly.

    Parameters
    ----------
    arch : Architecture
    path : str, path-like or dict
        A file, or arrays named as in a ``.npz`` (``Q1, K1, V1, ...`` or ``Q, K, V``).

    Returns
    -------
    list of fmpq
        As :func:`attngeo.model.network.read_point`: the flat point, every float read as its exact value.

    Raises
    ------
    InvalidInputError
        When the file cannot be read, holds NaN or infinities, or its weights do not fit ``arch``; the
        message names the file.

    Examples
    --------
    >>> import os, tempfile
    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> arch = Architecture((2, 1), (1,))
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "w.json"), "w") as fh:
    ...     _ = fh.write('{"Q": [[1, 0]], "K": [[0, 1]], "V": [[0.1, "1/3"]]}')
    >>> load_weights(arch, os.path.join(folder, "w.json"))   # JSON decimals by their text
    [1, 0, 0, 1, 1/10, 1/3]
    >>> np.savez(os.path.join(folder, "w.npz"), Q=np.float32([[1, 0]]), K=np.float32([[0, 1]]),
    ...          V=np.float32([[0.1, 0.5]]))
    >>> load_weights(arch, os.path.join(folder, "w.npz"))    # float32 by its exact binary value
    [1, 0, 0, 1, 13421773/134217728, 1/2]
    >>> np.save(os.path.join(folder, "w.npy"), np.array([1.0, 0, 0, 1, np.nan, 2]))
    >>> load_weights(arch, os.path.join(folder, "w.npy"))    # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: .../w.npy: V1_0_0 = nan is not a finite number
    >>> load_weights(arch, {"Q": np.float16([[1, 0]]), "K": [[0, 1]], "V": np.float64([[0.25, 3]])})
    [1, 0, 0, 1, 1/4, 3]
    """
    if isinstance(path, dict):
        data = _named(arch, path, "the arrays")
        try:
            return read_point(arch, data)
        except InvalidInputError as exc:
            raise InvalidInputError(f"the arrays: {exc}") from None
    name = os.fspath(path)
    size = regular_file(name, "weights file")
    if size > MAX_BYTES:
        raise InvalidInputError(f"{name} has {size} bytes, more than any architecture here needs")
    suffix = os.path.splitext(name)[1].lower()
    try:
        if suffix == ".npy":
            data = np.load(name, allow_pickle=False)
            if data.ndim != 1:
                raise InvalidInputError(f"{name}: a .npy weights file is one flat array of the "
                                        f"{arch.parameter_count} parameters in flattening order")
        elif suffix == ".npz":
            with np.load(name, allow_pickle=False) as npz:
                data = _named(arch, {k: npz_array(npz, k, name) for k in npz.files}, name)
        elif suffix == ".safetensors":
            data = _named(arch, read_safetensors(name), name)
        else:
            data = _json(name, arch)
    except InvalidInputError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile):  # empty, truncated, pickled or not numpy at all
        kind = {".npy": "a numpy .npy array of numbers", ".npz": "a numpy .npz archive of arrays"}.get(suffix, "weights")
        raise InvalidInputError(f"{name} is not {kind}; save the weights with numpy.save / numpy.savez "
                                "(numbers only)") from None
    try:
        return read_point(arch, data)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{name}: {exc}") from None


def _json(path: str, arch: Architecture):
    def refuse(token):
        raise InvalidInputError(f"{path}: {token} is not a number; weights must be exact rationals")

    try:
        with open(path) as fh:
            data = json.load(fh, parse_float=str, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if isinstance(data, dict):
        if arch.depth != 1 or set(data) != {"Q", "K", "V"}:
            raise InvalidInputError(f"{path}: an object of weights needs exactly the keys Q, K, V (single layer)")
        data = [[data["Q"], data["K"], data["V"]]]
    return data
