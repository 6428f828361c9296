"""A local-rank certificate binds its checkpoint, and the checker holds it to the file (attngeo/check/checkpoint.py).

An honest certificate of a trained layer (grouped-query attention, biases, one bias the checkpoint lacks,
BF16, a whole-model file) verifies against its file, is "cannot verify" without it and is rejected
against another file, naming both hashes. Every part of the binding is then tampered with: each
tampering is rejected, with the reason, through the library and the command line.
"""

import copy
import hashlib
import json
import struct
import tracemalloc

import numpy as np
import pytest

from conftest import DELETE, tampered

from attngeo import Architecture, CannotVerify, CertificateFormatError, CertificateRejected, check_certificate
from attngeo.check import check_file
from attngeo.check.checkpoint import residues
from attngeo.geometry.loci.regularity import local_rank
from attngeo.model.checkpoint import load_checkpoint
from attngeo.model.weights import save_safetensors
from attngeo.ui.cli import main

D, H, G, A = 8, 4, 2, 2  # LLaMA-style: 4 heads of 2 in 2 key-value groups, Qwen's biases (none on o_proj)


def _layer(rng, i):
    r = lambda *s: (rng.standard_normal(s) * 0.3).astype(np.float32)  # noqa: E731
    pre = f"model.layers.{i}.self_attn."
    return {pre + "q_proj.weight": r(H * A, D), pre + "k_proj.weight": r(G * A, D), pre + "v_proj.weight": r(G * A, D),
            pre + "o_proj.weight": r(D, H * A), pre + "q_proj.bias": r(H * A), pre + "k_proj.bias": r(G * A),
            pre + "v_proj.bias": r(G * A)}


def _model(seed=0) -> dict:
    rng = np.random.default_rng(seed)
    return {**_layer(rng, 0), **_layer(rng, 1), "model.embed_tokens.weight": rng.standard_normal((11, D))}


@pytest.fixture(scope="module")
def honest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("binding")
    weights = folder / "model.safetensors"
    save_safetensors(weights, _model(), "BF16")
    ck = load_checkpoint(str(weights), heads=H, layer=1)
    res = local_rank(ck.arch, ck.point, scale=ck.scale, binding=ck.binding)
    cert = json.loads(json.dumps(res.to_json()))
    path = folder / "cert.json"
    path.write_text(json.dumps(cert))
    return cert, str(weights), str(path), ck


def test_the_honest_certificate_verifies_against_its_file_and_only_there(honest, tmp_path):
    cert, weights, path, ck = honest
    assert "point" not in cert and cert["checkpoint"]["layer"] == 1 and ck.arch.kv_heads == (G,)
    assert {"zero": True} in cert["checkpoint"]["blocks"]  # o_proj has no bias: b_O is zero
    digest = hashlib.sha256(open(weights, "rb").read()).hexdigest()
    claim = check_certificate(cert, weights=weights).claim
    assert claim.startswith("local rank ") and f"SHA-256 {digest}, layer 1" in claim and "scores x 1/sqrt(2)" in claim
    assert check_file(path, weights=weights).claim == claim  # in an isolated worker too
    with pytest.raises(CannotVerify, match="--weights FILE"):
        check_certificate(cert)
    other = tmp_path / "other.safetensors"
    save_safetensors(other, _model(seed=1), "BF16")
    other_digest = hashlib.sha256(other.read_bytes()).hexdigest()
    with pytest.raises(CertificateRejected) as info:
        check_certificate(cert, weights=str(other))
    assert digest in str(info.value) and other_digest in str(info.value)


def test_the_command_line_exit_codes(honest, tmp_path, capsys):
    cert, weights, path, _ = honest
    assert main(["check", path, "--weights", weights]) == 0
    assert main(["check", path]) == 2
    assert "not verifiable here" in capsys.readouterr().out
    other = tmp_path / "other.safetensors"
    save_safetensors(other, _model(seed=2), "BF16")
    assert main(["check", path, "--weights", str(other)]) == 1
    out = capsys.readouterr().out
    assert "REJECTED" in out and cert["checkpoint"]["sha256"] in out and out.count("\n") == 2
    assert main(["check", path, "--weights", str(tmp_path / "missing.safetensors")]) == 2
    assert "--weights" in capsys.readouterr().err
    from attngeo import certify_dimension

    dim = tmp_path / "dim.json"
    certify_dimension(Architecture((2, 2), (1,)), seed=0).save(dim)
    assert main(["check", str(dim), "--weights", weights]) == 2
    assert "--weights is for local-rank certificates" in capsys.readouterr().out
    plain = tmp_path / "plain.json"
    local_rank(Architecture((2, 2), (1,)), [1, 2, 3, 5, 1, 0, 2, 1]).save(plain)
    assert main(["check", str(plain), "--weights", weights]) == 2
    assert "binds no checkpoint" in capsys.readouterr().out


def _block(cert, role_index):
    return ("checkpoint", "blocks", role_index)


def _first(cert, tensor_suffix):
    return next(k for k, b in enumerate(cert["checkpoint"]["blocks"]) if b.get("tensor", "").endswith(tensor_suffix))


def _attacks(cert):
    q = _first(cert, "q_proj.weight")
    q2 = q + next(k for k, b in enumerate(cert["checkpoint"]["blocks"][q + 1:], 1) if
                  b.get("tensor", "").endswith("q_proj.weight"))
    other_layer = cert["checkpoint"]["blocks"][q]["tensor"].replace("layers.1.", "layers.0.")
    swapped = copy.deepcopy(cert)
    blocks = swapped["checkpoint"]["blocks"]
    blocks[q]["rows"], blocks[q2]["rows"] = blocks[q2]["rows"], blocks[q]["rows"]
    renamed = copy.deepcopy(cert)  # the whole layer read from layer 0's tensors, the list and blocks consistent
    for t in renamed["checkpoint"]["tensors"]:
        t["name"] = t["name"].replace("layers.1.", "layers.0.")
    for b in renamed["checkpoint"]["blocks"]:
        if "tensor" in b:
            b["tensor"] = b["tensor"].replace("layers.1.", "layers.0.")
    return [
        ("hash", tampered(cert, ("checkpoint", "sha256"), "0" * 64), CertificateRejected, "another file"),
        ("hash not hex", tampered(cert, ("checkpoint", "sha256"), "XYZ"), CertificateRejected, "hexadecimal"),
        ("bytes", tampered(cert, ("checkpoint", "bytes"), lambda n: n + 1), CertificateRejected, "another file"),
        ("tensor of a block", tampered(cert, _block(cert, q) + ("tensor",), other_layer), CertificateRejected,
         "not one of checkpoint.tensors"),
        ("every name to layer 0", renamed, CertificateRejected, "under the prefix"),
        ("slice moved", tampered(cert, _block(cert, q) + ("rows",), lambda r: [r[0] + 1, r[1] + 1]),
         CertificateRejected, "overlaps"),
        ("slice outside", tampered(cert, _block(cert, q2) + ("rows",), [7, 9]), CertificateRejected, "above"),
        ("slice of another shape", tampered(cert, _block(cert, q) + ("columns",), [0, 7]), CertificateRejected,
         "shape of block Q"),
        ("transposed", tampered(cert, _block(cert, q) + ("transposed",), True), CertificateRejected, "shape"),
        ("two heads' queries swapped", swapped, CertificateRejected, "order of their heads"),
        ("dtype", tampered(cert, ("checkpoint", "tensors", 0, "dtype"), "F32"), CertificateRejected,
         "dtype or shape in the file"),
        ("dtype outside the list", tampered(cert, ("checkpoint", "tensors", 0, "dtype"), "I64"), CertificateRejected,
         "F64, F32, F16, BF16"),
        ("shape", tampered(cert, ("checkpoint", "tensors", 0, "shape"), lambda s: [s[0] * 2, s[1] // 2]),
         CertificateRejected, "is above"),
        ("a huge shape", tampered(cert, ("checkpoint", "tensors", 0, "shape"), [10**6, 10**6]), CertificateRejected,
         "another number of entries"),
        ("a zero weight block", tampered(cert, _block(cert, q), {"zero": True}), CertificateRejected,
         "only a bias may be a zero block"),
        ("a block missing", tampered(cert, ("checkpoint", "blocks"), lambda b: b[:-1]), CertificateRejected,
         "entries"),
        ("layer not in the prefix", tampered(cert, ("checkpoint", "layer"), 7), CertificateRejected, "prefix"),
        ("a dropped tensor that is read", tampered(cert, ("checkpoint", "dropped"),
                                                   [cert["checkpoint"]["tensors"][0]["name"]]),
         CertificateRejected, "dropped"),
        ("an unknown field", tampered(cert, ("checkpoint", "note"), "trust me"), CertificateRejected, "unknown field"),
        ("a point beside the binding", dict(cert, point=["0"] * cert["parameters"]), CertificateRejected,
         "holds no point"),
        ("format", tampered(cert, ("checkpoint", "format"), "gguf"), CertificateRejected, "format"),
        ("binding removed", tampered(cert, ("checkpoint",), DELETE), CertificateRejected, "missing field point"),
    ]


ATTACK_NAMES = ["hash", "hash not hex", "bytes", "tensor of a block", "every name to layer 0", "slice moved",
                "slice outside", "slice of another shape", "transposed", "two heads' queries swapped", "dtype",
                "dtype outside the list", "shape", "a huge shape", "a zero weight block", "a block missing", "layer not in the prefix",
                "a dropped tensor that is read", "an unknown field", "a point beside the binding", "format",
                "binding removed"]


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_a_tampered_binding_is_rejected(honest, name):
    cert, weights, _, _ = honest
    attacks = _attacks(cert)
    assert [a[0] for a in attacks] == ATTACK_NAMES
    _, forged, kind, words = next(a for a in attacks if a[0] == name)
    with pytest.raises(kind) as info:
        check_certificate(forged, weights=weights)
    assert words in str(info.value), str(info.value)


def _forge_file(tmp_path, honest, data: bytes, name="forged.safetensors"):
    """A file and the honest certificate re-bound to it (hash and size): what the checker then reads is the file."""
    cert = honest[0]
    path = tmp_path / name
    path.write_bytes(data)
    forged = tampered(tampered(cert, ("checkpoint", "sha256"), hashlib.sha256(data).hexdigest()),
                      ("checkpoint", "bytes"), len(data))
    return forged, str(path)


def test_a_file_whose_other_tensors_changed_or_that_is_truncated_is_another_file(honest, tmp_path):
    cert, weights, _, _ = honest
    changed = _model()
    changed["model.embed_tokens.weight"] = changed["model.embed_tokens.weight"] + 1  # not a tensor of the layer
    save_safetensors(tmp_path / "changed.safetensors", changed, "BF16")
    truncated = tmp_path / "truncated.safetensors"
    truncated.write_bytes(open(weights, "rb").read()[:-4])
    for path in (tmp_path / "changed.safetensors", truncated):
        with pytest.raises(CertificateRejected, match="another file"):
            check_certificate(cert, weights=str(path))


def _nan_in_layer_1(raw: bytes, n: int) -> bytes:
    """The file with the first BF16 of layer 1's query projection (a tensor the point reads) made a NaN."""
    start = json.loads(raw[8:8 + n])["model.layers.1.self_attn.q_proj.weight"]["data_offsets"][0] + 8 + n
    return raw[:start] + (0x7FC0).to_bytes(2, "little") + raw[start + 2:]


@pytest.mark.parametrize("make, words", [
    (lambda raw, n: struct.pack("<Q", 2**62) + raw[8:], "header declares"),
    (lambda raw, n: raw[:8] + b"[" + b" " * (n - 2) + b"]" + raw[8 + n:], "not an object"),
    (lambda raw, n: raw[:-(11 * D * 2 + 8)], "do not match its dtype and shape, or lie outside the file"),
    (_nan_in_layer_1, "NaN"),
], ids=["huge header", "header a list", "layer 1 truncated", "NaN"])
def test_a_file_rebound_by_a_forger_is_still_read_with_care(honest, tmp_path, make, words):
    """Even with the hash made to match, a huge or malformed header, missing bytes or a NaN are refused."""
    raw = open(honest[1], "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    forged, path = _forge_file(tmp_path, honest, make(raw, n))
    with pytest.raises(CertificateRejected, match=words):
        check_certificate(forged, weights=path)


def test_only_the_tensors_named_are_read(tmp_path):
    """A whole-model file: the checker's memory stays far below the unrelated 64 MB tensor beside the layer."""
    rng = np.random.default_rng(3)
    tensors = {**_layer(rng, 0), "lm_head.weight": np.zeros((4096, 4096), dtype=np.float32)}
    weights = tmp_path / "big.safetensors"
    save_safetensors(weights, tensors, "F32")
    ck = load_checkpoint(str(weights), heads=H)
    cert = json.loads(json.dumps(local_rank(ck.arch, ck.point, scale=ck.scale, binding=ck.binding).to_json()))
    tracemalloc.start()
    claim = check_certificate(cert, weights=str(weights)).claim
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert claim.startswith("local rank") and peak < 16 * 2**20, peak


def test_npz_checkpoints_are_read_by_the_checker_too_fortran_order_and_float16_included(tmp_path):
    rng = np.random.default_rng(4)
    layer = _layer(rng, 0)
    layer = {k: (v.astype(np.float16) if k.endswith("bias") else v) for k, v in layer.items()}
    name = "model.layers.0.self_attn.o_proj.weight"
    layer[name] = np.asfortranarray(layer[name])  # saved with fortran_order True
    path = tmp_path / "layer.npz"
    np.savez(path, **layer)
    ck = load_checkpoint(str(path), heads=H)
    assert ck.binding["format"] == "npz" and "blocks" in ck.binding
    cert = local_rank(ck.arch, ck.point, scale=ck.scale, binding=ck.binding).to_json()
    assert check_certificate(cert, weights=str(path)).claim.startswith("local rank")
    moved = np.load(path)
    again = {k: moved[k] for k in moved.files}
    again[name] = again[name] * 2
    np.savez(tmp_path / "other.npz", **again)
    with pytest.raises(CertificateRejected, match="another file"):
        check_certificate(cert, weights=str(tmp_path / "other.npz"))


def test_the_checkers_residues_are_the_exact_values_bit_by_bit():
    p = 67108859
    values = np.array([0.0, -0.0, 1.5, -3.25, 2.0**-1074, -(2.0**-1022), 1e300, 0.1, np.float32(0.1)])
    for v, r in zip(values, residues(values, p).tolist()):
        num, den = float(v).as_integer_ratio()
        assert r == num % p * pow(den, -1, p) % p


def test_hash_only_binding_for_integer_tensors(tmp_path):
    rng = np.random.default_rng(5)
    layer = {k: (rng.integers(-3, 4, v.shape) if k.endswith("weight") else rng.integers(-3, 4, v.shape))
             for k, v in _layer(rng, 0).items()}
    path = tmp_path / "ints.npz"
    np.savez(path, **layer)
    ck = load_checkpoint(str(path), heads=H)
    assert set(ck.binding) == {"sha256", "bytes", "format"}  # I64 is not a dtype the checker reads: point embedded
    cert = local_rank(ck.arch, ck.point, scale=ck.scale, binding=ck.binding).to_json()
    assert "point" in cert
    assert "not checked" in check_certificate(cert).claim
    assert "the file matches" in check_certificate(cert, weights=str(path)).claim
    with pytest.raises(CertificateFormatError, match="not a regular file"):
        check_certificate(cert, weights=str(tmp_path))
