"""The checker's own reading of a checkpoint: the point of a bound local-rank certificate, rebuilt from the file.

A local-rank certificate made from a checkpoint (``attngeo inspect``) does not embed its
millions of weights; it *binds* the file (docs/certificates.md, kind ``local-rank``): its
SHA-256 and size, the tensors it read (name, dtype, shape) and, for every block of the
architecture in flattening order, the rectangle of one tensor it is (``rows``,
``columns``, ``transposed``; ``{"zero": true}`` for a bias the checkpoint lacks).
This module knows nothing of layouts. It

* hashes the file (streamed) and refuses another file, naming both hashes;
* reads the safetensors header (at most :data:`MAX_HEADER_BYTES`) or the ``.npy`` headers
  inside an ``.npz``, and only the bytes of the tensors named (a multi-GB file is never
  read whole), each checked against its declared dtype (F64, F32, F16, BF16 only),
  shape and place in the file;
* requires the blocks to tile every named tensor exactly (each stored weight used once:
  a moved slice leaves a hole or an overlap), heads in their stored order (a swap of two
  heads' slices tiles as well);
* decodes the bits itself (sign, exponent, significand: every value the dyadic rational
  it stores; NaN and infinities refused) into residues mod ``p`` and exact rationals.

Nothing here is shared with the prover's readers (:mod:`attngeo.model.weights`).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import struct
import zipfile

import numpy as np
from flint import fmpq

from ..exceptions import CannotVerify, CertificateFormatError
from .values import boolean, field, integer, obj, reject, seq

#: A safetensors header is at most this long (the format's own limit).
MAX_HEADER_BYTES = 100_000_000
#: An ``.npy`` header inside an ``.npz`` (numpy writes a few hundred bytes).
MAX_NPY_HEADER_BYTES = 1 << 16
#: Characters of a tensor name or a prefix.
MAX_NAME = 1000
_DTYPES = {"F64": ("<f8", 8), "F32": ("<f4", 4), "F16": ("<f2", 2), "BF16": ("<u2", 2)}
_NPY_DTYPES = {"<f8": "F64", "<f4": "F32", "<f2": "F16", ">f8": "F64", ">f4": "F32", ">f2": "F16"}
_HEX = re.compile(r"[0-9a-f]{64}")
_LAYOUT = re.compile(r"[a-z0-9][a-z0-9-]{0,39}")
_NPY_HEADER = re.compile(r"\{'descr': '([<>|][a-z][0-9]+)', 'fortran_order': (True|False), "
                         r"'shape': \(((?:[0-9]+, ?)*[0-9]*)\), \}\s*")
_FORMATS = ("safetensors", "npz")
#: Formats of a binding that names the file only (the checker does not read torch or ONNX, nor integer tensors).
HASH_ONLY = ("torch", "onnx", "safetensors", "npz")


def sha256(path: str) -> str:
    """The file's SHA-256 in hexadecimal, read in 4 MB chunks.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.bin")
    >>> _ = open(path, "wb").write(b"abc")
    >>> sha256(path)[:16]
    'ba7816bf8f01cfea'
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    return h.hexdigest()


def _file(path) -> str:
    """The weights file given to the checker (``--weights``): a regular file, else unusable input."""
    name = os.fspath(path)
    try:
        info = os.stat(name)
    except OSError as exc:
        raise CertificateFormatError(f"cannot read the weights {name}: {exc.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        raise CertificateFormatError(f"the weights {name} are not a regular file")
    return name


def verify_hash(binding: dict, path) -> tuple[str, int]:
    """The file's SHA-256 and size, rejected unless they are the ones the certificate binds.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "w.bin")
    >>> _ = open(path, "wb").write(b"abc")
    >>> verify_hash({"sha256": sha256(path), "bytes": 3}, path)[1]
    3
    >>> verify_hash({"sha256": "0" * 64, "bytes": 3}, path)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the certificate is bound to the checkpoint with SHA-256 000...; the weights given have SHA-256 ba7816bf... (another file)
    """
    name = _file(path)
    want = field(binding, "sha256", "checkpoint.")
    if not isinstance(want, str) or not _HEX.fullmatch(want):
        reject("checkpoint.sha256 must be 64 lower-case hexadecimal digits")
    size = integer(field(binding, "bytes", "checkpoint."), "checkpoint.bytes", 0)
    got = sha256(name)
    if got != want or os.path.getsize(name) != size:
        reject(f"the certificate is bound to the checkpoint with SHA-256 {want}; the weights given have SHA-256 "
               f"{got} (another file)")
    return got, size


def hash_only(binding) -> bool:
    """Whether a binding names the file only (its point is embedded in the certificate).

    Examples
    --------
    >>> hash_only({"sha256": "0" * 64, "bytes": 10, "format": "onnx"}), hash_only({"sha256": "0" * 64, "blocks": []})
    (True, False)
    """
    binding = obj(binding, "checkpoint")
    keys = set(binding)
    if keys == {"sha256", "bytes", "format"}:
        if binding["format"] not in HASH_ONLY:
            reject("checkpoint.format must be one of " + ", ".join(HASH_ONLY))
        return True
    return False


# -- the binding --------------------------------------------------------------------------------


def _tensors(binding: dict) -> dict:
    """name -> (dtype, shape) of the tensors the point is read from; names under the prefix, layer in it."""
    prefix = field(binding, "prefix", "checkpoint.")
    if not isinstance(prefix, str) or len(prefix) > MAX_NAME:
        reject("checkpoint.prefix must be a string")
    layout = field(binding, "layout", "checkpoint.")
    if not isinstance(layout, str) or not _LAYOUT.fullmatch(layout):
        reject("checkpoint.layout must be a short lower-case name")
    if "layer" in binding:
        layer = integer(binding["layer"], "checkpoint.layer", 0)
        if str(layer) not in prefix.split("."):
            reject(f"checkpoint.layer = {layer} is not a part of the prefix of the tensors' names")
    out = {}
    for k, t in enumerate(seq(field(binding, "tensors", "checkpoint."), "checkpoint.tensors")):
        t = obj(t, f"checkpoint.tensors[{k}]")
        if set(t) != {"name", "dtype", "shape"}:
            reject(f"checkpoint.tensors[{k}] must hold exactly name, dtype, shape")
        name = t["name"]
        if not isinstance(name, str) or len(name) > MAX_NAME or not name.startswith(prefix):
            reject(f"checkpoint.tensors[{k}].name must be a tensor name under the prefix")
        if name in out:
            reject(f"checkpoint.tensors[{k}] names a tensor twice")
        if t["dtype"] not in _DTYPES:
            reject(f"checkpoint.tensors[{k}].dtype must be one of {', '.join(_DTYPES)}")
        shape = seq(t["shape"], f"checkpoint.tensors[{k}].shape")
        if len(shape) not in (1, 2):
            reject(f"checkpoint.tensors[{k}].shape must have 1 or 2 dimensions")
        out[name] = (t["dtype"], tuple(integer(n, f"checkpoint.tensors[{k}].shape", 1, 1 << 40) for n in shape))
    dropped = seq(binding.get("dropped", []), "checkpoint.dropped")
    for name in dropped:
        if not isinstance(name, str) or len(name) > MAX_NAME or not name.startswith(prefix) or name in out:
            reject("checkpoint.dropped must list tensor names under the prefix, none of them read")
    if len(set(dropped)) != len(dropped):
        reject("checkpoint.dropped names a tensor twice")
    return out


def _span(value, name: str, limit: int) -> tuple[int, int]:
    s = seq(value, name, 2)
    lo, hi = integer(s[0], name, 0, limit), integer(s[1], name, 0, limit)
    if lo >= hi:
        reject(f"{name} must be a non-empty range [start, end)")
    return lo, hi


def _blocks(binding: dict, arch, tensors: dict) -> list:
    """Per block of ``arch`` (flattening order): ``None`` (zero) or ``(name, r0, r1, c0, c1, transposed)``,
    each of its block's shape, inside its tensor, the blocks of each tensor tiling it exactly."""
    shapes = arch.blocks()
    given = seq(field(binding, "blocks", "checkpoint."), "checkpoint.blocks", len(shapes))
    read = 0
    for k, ((_, _, role, rows, cols, _), b) in enumerate(zip(shapes, given)):
        if b == {"zero": True} and not role.startswith("b"):
            reject(f"checkpoint.blocks[{k}]: only a bias may be a zero block ({{\"zero\": true}})")
        read += 0 if b == {"zero": True} else rows * cols
    if sum(math.prod(shape) for _, shape in tensors.values()) != read:  # before any tensor-sized array exists
        reject("checkpoint.tensors hold another number of entries than the blocks read from them (each stored "
               "weight is used exactly once)")
    cover = {name: np.zeros(shape if len(shape) == 2 else (shape[0], 1), dtype=bool) for name, (_, shape) in
             tensors.items()}
    out = []
    for k, ((_, j, role, rows, cols, _), b) in enumerate(zip(shapes, given)):
        where = f"checkpoint.blocks[{k}]"
        b = obj(b, where)
        if b == {"zero": True}:
            out.append(None)
            continue
        if set(b) != {"tensor", "rows", "columns", "transposed"}:
            reject(f"{where} must hold exactly tensor, rows, columns, transposed (or zero)")
        name = b["tensor"]
        if name not in cover:
            reject(f"{where}.tensor is not one of checkpoint.tensors")
        M = cover[name]
        r0, r1 = _span(b["rows"], f"{where}.rows", M.shape[0])
        c0, c1 = _span(b["columns"], f"{where}.columns", M.shape[1])
        flip = boolean(b["transposed"], f"{where}.transposed")
        if ((c1 - c0, r1 - r0) if flip else (r1 - r0, c1 - c0)) != (rows, cols):
            reject(f"{where} is not of the shape of block {role} of head {j} ({rows} x {cols})")
        if M[r0:r1, c0:c1].any():
            reject(f"{where} overlaps another block in its tensor: each stored weight is used once")
        M[r0:r1, c0:c1] = True
        out.append((name, r0, r1, c0, c1, flip))
    for name, M in cover.items():
        if not M.all():
            reject("the blocks do not cover every entry of a tensor of checkpoint.tensors (each stored weight is "
                   "used exactly once)")
    _in_order(shapes, out)
    return out


def _in_order(shapes, blocks) -> None:
    """Heads in the order they are stored: in one tensor, head ``j``'s block of a role starts before head
    ``j + 1``'s, and a head's query before its key before its value (every format stores head ``j``'s features
    before head ``j + 1``'s). A swap of two heads' slices tiles the tensors as well: this refuses it."""
    last: dict = {}
    lead: dict = {}
    follows = {"K": "Q", "U": "K", "V": "K", "bK": "bQ", "bV": "bK"}
    for (_, j, role, _, _, _), b in zip(shapes, blocks):
        if b is None:
            continue
        name, r0, _, c0, _, _ = b
        start = (r0, c0)
        if (name, role) in last and not last[(name, role)] < start:
            reject(f"the blocks {role} of checkpoint.blocks are not in the order of their heads in their tensor")
        last[(name, role)] = start
        before = lead.get((j, follows.get(role)))
        if before is not None and before[0] == name and not before[1] < start:
            reject(f"head {j}'s {follows[role]} and {role} are not in query, key, value order in their tensor")
        lead[(j, role)] = (name, start)


# -- the file -----------------------------------------------------------------------------------


def _safetensors(fh, size: int, names) -> dict:
    """name -> (dtype, shape, absolute start, end) for ``names``, from the header (bounded before it is read)."""
    raw = fh.read(8)
    if len(raw) != 8:
        reject("the checkpoint is not a safetensors file (no header length)")
    (n,) = struct.unpack("<Q", raw)
    if n > MAX_HEADER_BYTES or n > size - 8:
        reject(f"the checkpoint's safetensors header declares {n} bytes: more than the file or {MAX_HEADER_BYTES}")
    try:
        header = json.loads(fh.read(n))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        reject("the checkpoint's safetensors header is not JSON")
    if not isinstance(header, dict):
        reject("the checkpoint's safetensors header is not an object")
    out = {}
    for name in names:
        entry = header.get(name)
        if not isinstance(entry, dict) or set(entry) - {"dtype", "shape", "data_offsets"}:
            reject("a tensor of checkpoint.tensors (or checkpoint.dropped) is not in the file")
        dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
        if not isinstance(shape, list) or not isinstance(offsets, list) or len(offsets) != 2 or any(
                isinstance(x, bool) or not isinstance(x, int) or x < 0 for x in shape + offsets):
            reject("a tensor's entry in the file's header is malformed")
        start, end = offsets
        width = _DTYPES[dtype][1] if dtype in _DTYPES else 0
        if not start <= end <= size - 8 - n or (width and end - start != width * math.prod(shape)):
            reject("a tensor's bytes in the file do not match its dtype and shape, or lie outside the file")
        out[name] = (dtype, tuple(shape), 8 + n + start, 8 + n + end)
    return out


def _npy(member) -> tuple[str, str, tuple, bool]:
    """``(dtype, numpy descr, shape, fortran_order)`` of an ``.npy`` member, its header bounded."""
    magic = member.read(8)
    if len(magic) != 8 or magic[:6] != b"\x93NUMPY" or magic[6] not in (1, 2, 3):
        reject("an array of the checkpoint is not a .npy member")
    width = 2 if magic[6] == 1 else 4
    (n,) = struct.unpack("<H" if width == 2 else "<I", member.read(width))
    if n > MAX_NPY_HEADER_BYTES:
        reject("an array's .npy header is implausibly long")
    m = _NPY_HEADER.fullmatch(member.read(n).decode("latin-1"))
    if m is None:
        reject("an array's .npy header is not one the checker reads")
    shape = tuple(int(x) for x in m.group(3).replace(" ", "").split(",") if x)
    return _NPY_DTYPES.get(m.group(1), m.group(1)), m.group(1), shape, m.group(2) == "True"


def _decode(raw: bytes, dtype: str, shape: tuple, fortran: bool = False, npy: str | None = None) -> np.ndarray:
    """Bytes as float64 holding exactly the stored values (a BF16 is the top half of an F32)."""
    if dtype == "BF16":
        values = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view("<f4")
    else:
        values = np.frombuffer(raw, dtype=npy or _DTYPES[dtype][0])
    values = values.astype(np.float64).reshape(shape, order="F" if fortran else "C")
    if not np.isfinite(values).all():
        reject("a tensor of the checkpoint holds NaN or an infinity: it is not a point")
    return values


def _read(path: str, fmt: str, tensors: dict, dropped: list) -> dict:
    """name -> float64 array of every tensor in ``tensors``; header dtypes and shapes compared with them."""
    out = {}
    try:
        if fmt == "safetensors":
            size = os.path.getsize(path)
            with open(path, "rb") as fh:
                entries = _safetensors(fh, size, list(tensors) + list(dropped))
                for name, (dtype, shape) in tensors.items():
                    got = entries[name]
                    if (got[0], got[1]) != (dtype, shape):
                        reject("a tensor's dtype or shape in the file differs from checkpoint.tensors")
                    fh.seek(got[2])
                    raw = fh.read(got[3] - got[2])
                    if len(raw) != got[3] - got[2]:
                        reject("the checkpoint ends before a tensor's bytes")
                    out[name] = _decode(raw, dtype, shape)
            return out
        with zipfile.ZipFile(path) as z:
            members = set(z.namelist())
            for name in list(tensors) + list(dropped):
                if name + ".npy" not in members:
                    reject("a tensor of checkpoint.tensors (or checkpoint.dropped) is not in the file")
            for name, (dtype, shape) in tensors.items():
                with z.open(name + ".npy") as member:
                    got_dtype, descr, got_shape, fortran = _npy(member)
                    if (got_dtype, got_shape) != (dtype, shape):
                        reject("a tensor's dtype or shape in the file differs from checkpoint.tensors")
                    want = _DTYPES[dtype][1] * math.prod(shape)
                    raw = member.read(want)
                    if len(raw) != want:
                        reject("the checkpoint ends before a tensor's bytes")
                    out[name] = _decode(raw, dtype, shape, fortran, descr)
            return out
    except (OSError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        reject(f"the checkpoint cannot be read as {fmt} ({type(exc).__name__})")


def read_point(binding, arch, path) -> tuple[np.ndarray, dict]:
    """The point of a bound certificate, from ``path``: ``(float64 values in flattening order, facts)``.

    ``facts`` has the verified ``sha256``, ``tensors`` (their count) and ``layer`` (or None) for the claim.

    Raises
    ------
    CannotVerify
        ``path`` is None: the certificate is bound to a file the checker was not given.
    CertificateRejected
        Another file, or a binding the file does not bear out.

    Examples
    --------
    A GPT-2 layer of width 4 and one head, BF16, read as ``attngeo inspect`` binds it:

    >>> import os, tempfile
    >>> import numpy as np
    >>> from attngeo.check.arch import architecture
    >>> from attngeo.geometry.loci.regularity import local_rank
    >>> from attngeo.model.checkpoint import load_checkpoint
    >>> from attngeo.model.weights import save_safetensors
    >>> path = os.path.join(tempfile.mkdtemp(), "layer.safetensors")
    >>> rng = np.random.default_rng(0)
    >>> save_safetensors(path, {"c_attn.weight": rng.standard_normal((4, 12)), "c_proj.weight": np.eye(4)}, "BF16")
    >>> ck = load_checkpoint(path, heads=1)
    >>> cert = local_rank(ck.arch, ck.point, scale=ck.scale, binding=ck.binding).to_json()
    >>> point, facts = read_point(cert["checkpoint"], architecture(cert), path)
    >>> bool((point == ck.point).all()), facts["tensors"]
    (True, 2)
    >>> read_point(cert["checkpoint"], architecture(cert), None)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CannotVerify: the point is in the checkpoint with SHA-256 ..., which was not given: attngeo check CERT --weights FILE
    """
    binding = obj(binding, "checkpoint")
    fmt = field(binding, "format", "checkpoint.")
    if fmt not in _FORMATS:
        reject(f"checkpoint.format must be one of {', '.join(_FORMATS)} when the point is read from the file")
    if path is None:
        digest = binding.get("sha256")
        shown = digest if isinstance(digest, str) and _HEX.fullmatch(digest) else "(malformed)"
        raise CannotVerify(f"the point is in the checkpoint with SHA-256 {shown}, which was not given: "
                           "attngeo check CERT --weights FILE")
    tensors = _tensors(binding)
    blocks = _blocks(binding, arch, tensors)
    digest, _ = verify_hash(binding, path)
    arrays = _read(_file(path), fmt, tensors, binding.get("dropped", []))
    parts = []
    for (_, _, _, rows, cols, _), b in zip(arch.blocks(), blocks):
        if b is None:
            parts.append(np.zeros(rows * cols))
            continue
        name, r0, r1, c0, c1, flip = b
        A = arrays[name].reshape(arrays[name].shape[0], -1)
        piece = A[r0:r1, c0:c1]
        parts.append((piece.T if flip else piece).ravel())
    point = np.concatenate(parts) if parts else np.zeros(0)
    return point, {"sha256": digest, "tensors": len(tensors), "layer": binding.get("layer")}


# -- exact values -------------------------------------------------------------------------------


def residues(values: np.ndarray, p: int) -> np.ndarray:
    """Each float64 (finite) as the residue mod ``p`` of the dyadic rational it is, from its bits.

    ``x = (-1)^s m 2^e`` with ``m`` the 53-bit significand (the hidden bit set unless subnormal) and
    ``e = exponent - 1075`` (``-1074`` for subnormals).

    Examples
    --------
    >>> import numpy as np
    >>> residues(np.array([0.75, -3.0, 2.0 ** -1074, 0.0]), 7).tolist()   # 3/4 = 6 and 2^-1074 = 1 (2^3 = 1) mod 7
    [6, 4, 1, 0]
    """
    bits = np.ascontiguousarray(values, dtype="<f8").view("<u8")
    exponent = ((bits >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    significand = (bits & np.uint64((1 << 52) - 1)).astype(np.int64)
    normal = exponent > 0
    significand[normal] += 1 << 52
    e = np.where(normal, exponent - 1075, -1074)
    table = np.array([pow(2, k, p) for k in range(-1074, 972)], dtype=np.int64)  # 2^k mod p, inverted below 0
    r = (significand % p) * table[e + 1074] % p
    negative = (bits >> np.uint64(63)).astype(bool)
    r[negative] = (p - r[negative]) % p
    return r


def exact(value: float) -> fmpq:
    """A float64 as the exact rational it stores.

    Examples
    --------
    >>> exact(0.1)
    3602879701896397/36028797018963968
    """
    num, den = float(value).as_integer_ratio()
    return fmpq(num, den)
