"""Trained weights read exactly: a float32 .npz / .safetensors layer is the same point as its exact rationals in JSON."""

import json
import struct
from fractions import Fraction

import numpy as np
import pytest

from attngeo import Architecture, InvalidInputError, check_certificate, fiber, is_singular
from attngeo.model.weights import load_weights
from attngeo.ui.cli import main


def _safetensors(path, arrays: dict) -> None:
    """A .safetensors file written by hand (header length, JSON header, little-endian data)."""
    header, blobs, offset = {}, [], 0
    for name, arr in arrays.items():
        raw = np.ascontiguousarray(arr, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


@pytest.fixture(scope="module")
def layer():
    rng = np.random.default_rng(7)  # a small trained-looking layer: float32 weights of no special form
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in (("Q", (2, 3)), ("K", (2, 3)),
                                                                                   ("V", (3, 3)))}


def test_npz_safetensors_and_exact_json_give_the_same_certified_fiber(layer, tmp_path):
    arch = Architecture((3, 3), (2,), tokens=2)
    np.savez(tmp_path / "w.npz", **layer)
    _safetensors(tmp_path / "w.safetensors", {f"{k}1": v for k, v in layer.items()})
    exact = {k: [[str(Fraction(*float(x).as_integer_ratio())) for x in row] for row in v] for k, v in layer.items()}
    (tmp_path / "w.json").write_text(json.dumps(exact))
    points = [load_weights(arch, tmp_path / name) for name in ("w.npz", "w.safetensors", "w.json")]
    assert points[0] == points[1] == points[2]
    assert all(x.q & (x.q - 1) == 0 for x in points[0])  # every denominator a power of two: dyadic, as stored
    fibers = [fiber(arch, p) for p in points]
    assert len({json.dumps({**f.to_json(), "seconds": 0}, sort_keys=True) for f in fibers}) == 1
    assert check_certificate(fibers[0].to_json()).claim.startswith("fiber of a generic point")
    assert is_singular(arch, points[0]).verdict == "smooth"


def test_the_command_line_reads_npz_weights(layer, tmp_path, capsys):
    np.savez(tmp_path / "w.npz", **layer)
    assert main(["fiber", "--widths", "3,3", "--ranks", "2", "--weights", str(tmp_path / "w.npz"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["case"] == "generic"


@pytest.mark.parametrize("arrays, message", [
    ({"Q": np.zeros((2, 3)), "K": np.zeros((2, 3))}, "no array V1"),
    ({"Q": np.zeros((2, 3)), "K": np.zeros((2, 3)), "V": np.zeros((3, 3)), "bias": np.zeros(3)}, "unexpected arrays"),
    ({"Q": np.full((2, 3), np.inf), "K": np.zeros((2, 3)), "V": np.zeros((3, 3))}, "not a finite number"),
    ({"Q": np.zeros((3, 3)), "K": np.zeros((2, 3)), "V": np.zeros((3, 3))}, "Q1 must be 2x3"),
])
def test_bad_weight_arrays_are_refused_with_the_reason(tmp_path, arrays, message):
    np.savez(tmp_path / "w.npz", **arrays)
    with pytest.raises(InvalidInputError, match=message):
        load_weights(Architecture((3, 3), (2,), tokens=2), tmp_path / "w.npz")


def test_a_damaged_safetensors_file_is_refused(tmp_path):
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", 10) + b"not json!!")
    with pytest.raises(InvalidInputError, match="safetensors"):
        load_weights(Architecture((3, 3), (2,), tokens=2), tmp_path / "w.safetensors")


@pytest.mark.parametrize("name, content", [("empty.npy", b""), ("empty.npz", b""), ("junk.npy", b"not an array"),
                                           ("junk.npz", b"PK not a zip")])
def test_damaged_numpy_files_are_refused_in_one_line(tmp_path, name, content):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(InvalidInputError, match="save the weights with numpy") as info:
        load_weights(Architecture((3, 3), (2,), tokens=2), tmp_path / name)
    assert "pickle" not in str(info.value)


@pytest.mark.parametrize("name", ["w.npy", "w.json", "w.safetensors"])
def test_a_fifo_given_as_weights_is_refused_without_blocking(tmp_path, name, capsys):
    import os

    os.mkfifo(tmp_path / name)  # opening it for reading would wait for a writer forever
    assert main(["fiber", "--widths", "3,3", "--ranks", "2", "--weights", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert "is not a regular file" in err and err.count("\n") == 1


def test_a_safetensors_shape_that_overflows_is_refused(tmp_path):
    header = json.dumps({"Q": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 4]}}).encode()
    (tmp_path / "w.safetensors").write_bytes(struct.pack("<Q", len(header)) + header + b"\0\0\0\0")
    with pytest.raises(InvalidInputError, match="values for shape"):
        load_weights(Architecture((3, 3), (2,), tokens=2), tmp_path / "w.safetensors")
