"""Trained layers from checkpoints: the layouts map to attngeo's model exactly, and the local rank is certified.

The mapping is tested against the checkpoints' own attention formulas, written
here in the frameworks' conventions (tokens as rows, ``Conv1D`` is ``x W``,
``Linear`` is ``x W^T``), exactly over Q for lightning and in float64 (a guide,
with a tolerance) for softmax. The local-rank statements are tested against a
second method: the rank of the network's Jacobian at the point, mod p.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest
from flint import fmpq, fmpq_mat

from conftest import DELETE, tampered

from attngeo import Architecture, InvalidInputError, SymmetryGroup, check_certificate, evaluate, evaluate_ball
from attngeo.exact.rank import rank_mod_p
from attngeo.geometry.loci.regularity import (_Point, flat_directions, head_fiber, head_ranks, image_dimension,
                                              local_rank, orbit_dimension)
from attngeo.geometry.fibers.layer import fiber
from attngeo.model.checkpoint import load_checkpoint
from attngeo.model.jacobian import jacobian_mod_p, jacobian_over_q
from attngeo.model.network import read_point
from attngeo.model.weights import read_safetensors, save_safetensors
from attngeo.ui.cli import main

P = 67108859


def _frac(x) -> Fraction:
    return Fraction(*float(x).as_integer_ratio())


def _exact(M) -> np.ndarray:
    return np.vectorize(_frac, otypes=[object])(np.asarray(M))


def _checkpoint_attention(layout: str, tensors: dict, h: int, X_rows: np.ndarray, causal: bool, softmax: bool):
    """The framework's own formula: tokens as rows; exact (Fractions) for lightning, float64 for softmax."""
    conv = (lambda M: M) if softmax else _exact
    if layout == "gpt2":
        W, Wp = conv(tensors["c_attn.weight"]), conv(tensors["c_proj.weight"])
        d = W.shape[0]
        qkv = X_rows @ W  # Conv1D: x W
        q, k, v = qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:]
        out_proj = lambda merged: merged @ Wp  # noqa: E731
    else:
        if layout == "torch-mha":
            W = conv(tensors["in_proj_weight"])
            d = W.shape[1]
            Wq, Wk, Wv = W[:d], W[d:2 * d], W[2 * d:]
            Wo = conv(tensors["out_proj.weight"])
        else:
            Wq, Wk, Wv, Wo = (conv(tensors[f"{n}.weight"]) for n in ("q_proj", "k_proj", "v_proj", "o_proj"))
        q, k, v = X_rows @ Wq.T, X_rows @ Wk.T, X_rows @ Wv.T  # Linear: x W^T
        out_proj = lambda merged: merged @ Wo.T  # noqa: E731
    t = X_rows.shape[0]
    a, b = q.shape[1] // h, v.shape[1] // h
    heads = []
    for j in range(h):
        qj, kj, vj = q[:, j * a:(j + 1) * a], k[:, j * a:(j + 1) * a], v[:, j * b:(j + 1) * b]
        scores = qj @ kj.T  # [query, key]
        if softmax:
            scores = scores / math.sqrt(a)
            if causal:
                scores = np.where(np.tril(np.ones((t, t))) > 0, scores, -np.inf)
            e = np.exp(scores - scores.max(axis=1, keepdims=True))
            weights = e / e.sum(axis=1, keepdims=True)
        else:
            root = math.isqrt(a)
            assert root * root == a  # the exact comparison uses a square head dimension
            weights = scores / root
            if causal:
                weights = np.where(np.tril(np.ones((t, t))) > 0, weights, Fraction(0))
        heads.append(weights @ vj)
    return out_proj(np.concatenate(heads, axis=1))


def _random_layer(layout: str, d: int, h: int, seed: int, dtype=np.float32) -> dict:
    rng = np.random.default_rng(seed)
    g = lambda *s: (rng.standard_normal(s) * 0.5).astype(dtype)  # noqa: E731
    if layout == "gpt2":
        return {"c_attn.weight": g(d, 3 * d), "c_proj.weight": g(d, d)}
    if layout == "torch-mha":
        return {"in_proj_weight": g(3 * d, d), "out_proj.weight": g(d, d)}
    return {"q_proj.weight": g(d, d), "k_proj.weight": g(d, d), "v_proj.weight": g(d, d), "o_proj.weight": g(d, d)}


def test_bf16_f16_f64_read_as_their_exact_values(tmp_path):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 12))
    for dtype, width in (("BF16", 8), ("F16", 11), ("F64", 53)):
        save_safetensors(tmp_path / "w.safetensors", {"c_attn.weight": W, "c_proj.weight": np.eye(4)}, dtype)
        back = read_safetensors(tmp_path / "w.safetensors")["c_attn.weight"].astype(np.float64)
        for x, y in zip(back.ravel(), W.ravel()):
            num, den = float(x).as_integer_ratio()
            assert abs(num).bit_length() <= width and den & (den - 1) == 0  # a dyadic of the dtype's precision
            assert abs(x - y) <= abs(y) * 2.0 ** (1 - width)  # the nearest one
    bf16 = {"c_attn.weight": W.astype(np.float32), "c_proj.weight": np.eye(4, dtype=np.float32)}
    save_safetensors(tmp_path / "b.safetensors", bf16, "BF16")
    from_file = load_checkpoint(tmp_path / "b.safetensors", "gpt2", heads=1)
    from_dict = load_checkpoint(read_safetensors(tmp_path / "b.safetensors"), "gpt2", heads=1)
    assert np.array_equal(from_file.point, from_dict.point) and from_file.tensors["c_attn.weight"][0] == "BF16"


def test_a_whole_model_file_is_read_one_layer_at_a_time(tmp_path):
    layers = {f"transformer.h.{i}.attn.{k}": v for i in range(3)
              for k, v in _random_layer("gpt2", 4, 2, seed=i).items()}
    layers["transformer.wte.weight"] = np.zeros((10, 4), dtype=np.float32)
    save_safetensors(tmp_path / "model.safetensors", layers)
    two = load_checkpoint(tmp_path / "model.safetensors", "gpt2", heads=2, layer=2)
    same = load_checkpoint(tmp_path / "model.safetensors", "gpt2", heads=2, prefix="transformer.h.2.attn")
    assert two.prefix == "transformer.h.2.attn." and np.array_equal(two.point, same.point)
    direct = load_checkpoint(_random_layer("gpt2", 4, 2, seed=2), "gpt2", heads=2)
    assert np.array_equal(two.point, direct.point)


def _write(tmp_path, tensors: dict) -> str:
    path = tmp_path / "layer.safetensors"
    save_safetensors(path, tensors)
    return str(path)


_GPT2 = _random_layer("gpt2", 8, 2, seed=0)
_BAD = [  # (tensors, extra options, words the one-line refusal must contain)
    (_GPT2, ["--layout", "torch-mha"], ["no layer of layout torch-mha", "--layout gpt2"]),
    ({"c_attn.weight": _GPT2["c_attn.weight"]}, [], ["no tensor 'c_proj.weight'"]),
    (_GPT2, ["--heads", "3"], ["'c_attn.weight'", "do not split into 3 heads"]),
    ({**_GPT2, "c_attn.weight": np.where(np.eye(8, 24) > 0, np.nan, _GPT2["c_attn.weight"])}, [],
     ["'c_attn.weight'", "nan", "[0, 0]"]),
    ({**_GPT2, "c_proj.weight": np.full((8, 8), np.inf, dtype=np.float32)}, [], ["'c_proj.weight'", "inf"]),
    ({**_GPT2, "c_attn.bias": np.ones(23, dtype=np.float32)}, [], ["'c_attn.bias'", "[23]", "24 entries"]),
    ({**_GPT2, "c_proj.weight": np.eye(7, 8, dtype=np.float32)}, [], ["'c_proj.weight'", "[7, 8]", "[8, d']"]),
    ({"c_attn.weight": np.zeros((8, 20), dtype=np.float32), "c_proj.weight": np.eye(8, dtype=np.float32)}, [],
     ["'c_attn.weight'", "[d, 3d]"]),
    ({f"h.{i}.{k}": v for i in range(2) for k, v in _GPT2.items()}, [], ["2 attention layers", "--layer N",
                                                                          "--layer all"]),
    ({f"h.{i}.{k}": v for i in range(2) for k, v in _GPT2.items()}, ["--layer", "7"], ["no gpt2 layer 7", "[0, 1]"]),
    (_GPT2, ["--prefix", "h.3."], ["no gpt2 layer under prefix 'h.3.'"]),
    ({"q_proj.weight": np.eye(8, dtype=np.float32), "k_proj.weight": np.eye(3, 8, dtype=np.float32),
      "v_proj.weight": np.eye(8, dtype=np.float32), "o_proj.weight": np.eye(8, dtype=np.float32)},
     ["--layout", "qkv"], ["'k_proj.weight'", "key-value heads of size a = 4"]),
    ({"in_proj_weight": np.eye(24, 8, dtype=np.float32), "out_proj.weight": np.eye(8, dtype=np.float32),
      "bias_k": np.ones((1, 1, 8), dtype=np.float32)}, ["--layout", "torch-mha"], ["'bias_k'", "key/value token",
                                                                                   "--drop-bias"]),
]


@pytest.mark.parametrize("tensors, options, words", _BAD, ids=[w[0][:30] for _, _, w in _BAD])
def test_bad_checkpoints_are_one_line_exit_2_and_nothing_is_written(tmp_path, capsys, tensors, options, words):
    path = _write(tmp_path, tensors)
    cert = tmp_path / "cert.json"
    args = ["inspect", "--weights", path, "--layout", "gpt2", "--heads", "2", "--certificate", str(cert)]
    for k in range(0, len(options), 2):  # a later option of the same name wins in argparse
        args += options[k: k + 2]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attngeo: error: ") and "Traceback" not in err
    for word in words:
        assert word in err
    assert not cert.exists()


@pytest.mark.parametrize("name, content, words", [
    ("w.pt", b"PK\x03\x04 not torch", ["needs torch", "safetensors"]),
    ("w.npy", b"\x93NUMPY", [".safetensors, .npz, a torch state_dict (.pt, .pth, .bin) or .onnx"]),
    ("w.npz", b"PK broken", ["not a numpy .npz"]),
    ("w.safetensors", b"\x10\x00\x00\x00\x00\x00\x00\x00{not json!!!!!!}", ["not a safetensors file"]),
])
def test_unreadable_files_are_refused_in_one_line(tmp_path, capsys, name, content, words):
    pytest.importorskip("numpy")
    if name.endswith(".pt"):
        try:
            import torch  # noqa: F401
            pytest.skip("torch is installed: the message differs")
        except ImportError:
            pass
    (tmp_path / name).write_bytes(content)
    assert main(["inspect", "--weights", str(tmp_path / name), "--layout", "gpt2", "--heads", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and all(w in err for w in words)


def test_biases_are_in_the_model_and_dropped_only_when_asked_and_the_report_says_so(tmp_path, capsys):
    path = _write(tmp_path, {**_GPT2, "c_attn.bias": np.ones(24, dtype=np.float32),
                             "c_proj.bias": np.zeros(8, dtype=np.float32)})
    assert main(["inspect", "--weights", path, "--heads", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["architecture"]["biases"] is True and out["checkpoint"]["biases"] == ["c_attn.bias", "c_proj.bias"]
    # softmax with biases (Theorem C): P - g (a^2 + b^2 + a + b) with P = 2 (2 * 32 + 32 + 4 + 4 + 4) + 8 = 288
    assert out["regular"] is True and out["local_rank"] == 288 - 2 * (16 + 16 + 8)
    assert main(["inspect", "--weights", path, "--heads", "2", "--drop-bias", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["checkpoint"]["dropped_biases"] == ["c_attn.bias", "c_proj.bias"] and out["checkpoint"]["biases"] == []
    assert out["architecture"]["biases"] is False and out["local_rank"] == 256 - 2 * 32
    assert main(["inspect", "--weights", path, "--heads", "2", "--drop-bias"]) == 0
    assert "dropped: c_attn.bias, c_proj.bias" in capsys.readouterr().out


# -- the local rank ---------------------------------------------------------------------------


def _point(arch: Architecture, rng) -> list:
    return [Fraction(int(x), 4) for x in rng.integers(-9, 10, arch.parameter_count)]


def _jacobian_rank(arch: Architecture, weights, seed=0, inputs=None) -> int:
    rng = np.random.default_rng(seed)
    pt = _Point(arch, weights)
    n = inputs or arch.parameter_count // 2 + 4
    J = jacobian_mod_p(arch, pt.residues(P), rng.integers(-9, 10, (n,) + arch.input_shape), P)
    return rank_mod_p(J, P)


@pytest.mark.parametrize("d, h, a, b", [(4, 2, 2, 2), (6, 3, 2, 2), (6, 2, 3, 1), (5, 2, 2, 2), (4, 1, 3, 4),
                                        (6, 2, 1, 3)])
def test_the_structural_local_rank_is_the_jacobian_rank_at_random_points(d, h, a, b):
    arch = Architecture((d, d), (a,), heads=h, value_ranks=b)
    rng = np.random.default_rng(d * 100 + h * 10 + a)
    for _ in range(2):
        w = _point(arch, rng)
        res = local_rank(arch, w, dimension=False)
        assert "jacobian" not in res.lower_witness  # decided by the theorem, not by the Jacobian
        assert res.lower == res.upper == _jacobian_rank(arch, w) == arch.parameter_count - h * (a * a + b * b + 1)


@pytest.mark.parametrize("make", ["Q rank 1", "K rank 1", "A = 0", "V = 0", "U = 0", "parallel", "both zero",
                                  "duplicate heads"])
def test_the_upper_bound_holds_and_the_jacobian_decides_degenerate_points(make):
    arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    rng = np.random.default_rng(len(make))
    w = _point(arch, rng)
    size = 2 * 2 * 4 + 2 * 8  # per head: Q, K (2 x 4), U (2 x 4), O (4 x 2)
    u, v = rng.integers(1, 5, 2), rng.integers(1, 5, 4)
    if make == "Q rank 1":
        w[0:8] = [Fraction(int(x)) for x in np.outer(u, v).ravel()]
    elif make == "K rank 1":
        w[8:16] = [Fraction(int(x)) for x in np.outer(u, v).ravel()]
    elif make == "A = 0":
        w[0:8] = [0] * 8
    elif make in ("V = 0", "U = 0"):
        w[16:24] = [0] * 8
    elif make == "parallel":  # A = p q^T, V = r s^T with s = p: Q, K and U, O of rank 1, row U = col(K^T)
        w[0:16] = [1, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 1, 0, 0, 0, 0]
        w[16:32] = [1, 2, 0, 1, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0, 2, 0]
    elif make == "both zero":
        w[0:8], w[16:24] = [0] * 8, [0] * 8
    else:
        w[size:] = w[:size]
    res = local_rank(arch, w, dimension=True)
    jac = _jacobian_rank(arch, w)
    assert res.lower <= jac <= res.upper  # the lower bound is certified, the upper bound holds
    assert res.lower == jac  # small layers: the Jacobian at the point is ranked
    assert check_certificate(res.to_json()).claim.startswith(("local rank", f"{res.lower} <= local rank"))
    if make != "duplicate heads":
        assert res.upper == jac and res.regular is False  # the per-head count is exact here
    else:  # two equal heads share directions: the count per head overestimates, and the verdict is open
        assert res.lower < res.upper == res.generic[0] and res.regular is None


def test_torch_mha_d16_regular_at_a_random_point_and_not_with_a_rank_one_query():
    rng = np.random.default_rng(0)
    tensors = {"in_proj_weight": (rng.standard_normal((48, 16)) * 0.2).astype(np.float32),
               "out_proj.weight": (rng.standard_normal((16, 16)) * 0.2).astype(np.float32)}
    ck = load_checkpoint(tensors, "torch-mha", heads=2, normalization="lightning")
    res = local_rank(ck.arch, ck.point, seed=0)
    assert (res.lower, res.upper, res.generic, res.regular) == (766, 766, (766, 766), True)
    assert check_certificate(res.to_json()).claim.startswith("local rank 766 = dim M")
    tensors["in_proj_weight"][:8] = np.outer(rng.integers(-3, 4, 8), rng.integers(-3, 4, 16)) / 8  # exact rank 1
    ck = load_checkpoint(tensors, "torch-mha", heads=2, normalization="lightning")
    res = local_rank(ck.arch, ck.point, seed=0, dimension=False)
    assert res.ranks[0].Q == 1 and res.lower == res.upper == 766 - 56  # 2ad - a^2 = 192 drops to d(1 + a) - a = 136


def test_the_orbit_dimension_formula_is_the_rank_of_the_symmetry_fields():
    rng = np.random.default_rng(1)
    for arch in (Architecture((4, 4), (2,), heads=2, value_ranks=2), Architecture((3, 3), (2,)),
                 Architecture((4, 4), (3,), heads=2, value_ranks=3, normalization="softmax")):
        for make in range(6):
            w = _point(arch, rng)
            if make:
                w[(make - 1) * 4: (make - 1) * 4 + 5] = [0] * 5  # knock out parts of some matrices
            ranks = head_ranks(arch, w)
            assert orbit_dimension(arch, ranks) == SymmetryGroup(arch).orbit_dimension(w)


def test_the_local_rank_is_invariant_under_the_symmetries_and_the_score_scale():
    arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    rng = np.random.default_rng(2)
    w = _point(arch, rng)
    w[0:8] = [1, 2, 0, 1, 2, 4, 0, 2]  # Q_1 of rank 1: the rank is below dim M, and must not move
    base = local_rank(arch, w, dimension=False)
    assert base.lower < arch.parameter_count - 2 * 9
    C = fmpq_mat([[2, 1], [0, fmpq(1, 3)]])
    x = read_point(arch, w)
    Q, K = fmpq_mat(2, 4, x[0:8]), fmpq_mat(2, 4, x[8:16])
    U, O = fmpq_mat(2, 4, x[16:24]), fmpq_mat(4, 2, x[24:32])
    for moved_head in ((C * Q, C.inv().transpose() * K, U, O), (Q, K, C * U, O * C.inv())):  # GL_a, GL_b
        flat = [M[r, c] for M in moved_head for r in range(M.nrows()) for c in range(M.ncols())] + x[32:]
        assert flat != x and local_rank(arch, flat, dimension=False).lower == base.lower
    scaled = [x * 3 if k < 8 else x for k, x in enumerate(w)]  # the score scale on Q_1
    assert local_rank(arch, scaled, dimension=False).lower == base.lower


def test_flat_directions_lie_in_the_kernel_and_outside_the_orbit():
    arch = Architecture((3, 3), (2,), heads=1, value_ranks=2)
    w = [1, 2, 0, 2, 4, 0] + [1, 0, 0, 0, 1, 0] + [1, 0, 1, 0, 1, 1] + [1, 0, 0, 1, 1, 1]
    res = local_rank(arch, w)
    flat = res.flat
    assert res.exact and len(flat) == res.flat_count == arch.parameter_count - res.lower - res.orbit > 0
    vectors = [[M[r, c] for name in "QKUO" for r in range(3) for c in range(3)
                for M in [dict(direction["blocks"]).get(name)] if M is not None and r < M.nrows() and c < M.ncols()]
               for direction in flat]
    X = np.array([[[1, 2], [0, -1], [3, 1]], [[2, -1], [1, 1], [0, 2]], [[-1, 0], [2, 3], [1, -2]]])
    J = fmpq_mat(jacobian_over_q(arch, read_point(arch, w), X).tolist())
    fields = SymmetryGroup(arch).vector_fields(w)
    for direction in flat:
        full = [fmpq(0)] * arch.parameter_count
        for b in arch.blocks():
            M = dict(direction["blocks"]).get(b.name)
            if M is not None and b.head == direction["head"]:
                full[b.offset: b.offset + b.size] = [M[r, c] for r in range(b.rows) for c in range(b.cols)]
        assert J * fmpq_mat([[x] for x in full]) == fmpq_mat(J.nrows(), 1)
    stacked = fmpq_mat([[fields[i, c] for c in range(fields.ncols())] for i in range(fields.nrows())] + [
        [x for x in vec] for vec in ([[x for b in arch.blocks() for x in (
            [dict(d["blocks"])[b.name][r, c] for r in range(b.rows) for c in range(b.cols)]
            if b.name in dict(d["blocks"]) else [fmpq(0)] * b.size)] for d in flat])])
    assert stacked.rank() == fields.rank() + len(flat)
    del vectors


@pytest.mark.parametrize("weights, case", [
    ([[[[1, 2]], [[3, 5]], [[1, 0], [2, 1]]]], "generic"),
    ([[[[1, 0]], [[0, 1]], [[1, 1], [2, 2]]]], "rank1-swap"),
    ([[[[1, 0]], [[1, 0]], [[1, 0], [2, 0]]]], "rank1-parallel"),
    ([[[[0, 0]], [[1, 0]], [[1, 0], [2, 0]]]], "zero"),
])
def test_the_head_fiber_from_ranks_matches_the_complete_fiber(weights, case):
    arch = Architecture((2, 2), (1,))
    r = head_ranks(arch, weights)[0]
    assert head_fiber(arch, r)["case"] == fiber(arch, weights).case == case


def test_image_dimension_is_exact_for_one_head_and_t_two():
    arch = Architecture((3, 3), (2,))
    rng = np.random.default_rng(3)
    for _ in range(4):
        w = _point(arch, rng)
        w[0:3] = [0, 0, 0]  # rank Q = 1: below the generic rank
        r = head_ranks(arch, w)[0]
        assert image_dimension(arch, r) == _jacobian_rank(arch, w) == local_rank(arch, w, dimension=False).lower


# -- the certificate under attack -------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates():
    arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    w = _point(arch, np.random.default_rng(11))
    separated = local_rank(arch, w, seed=1).to_json()
    assert separated["lower_witness"] == {"heads": [1, 2]} and "dimension_certificate" not in separated
    embedded = local_rank(arch, w, seed=1, dimension="always").to_json()  # the same verdict, dim M certified twice
    assert check_certificate(embedded).claim == check_certificate(separated).claim
    w[0:8] = [1, 2, 3, 4, 2, 4, 6, 8]
    jac = local_rank(arch, w, seed=1).to_json()
    return separated, jac


_ATTACKS = [  # (which certificate, path, new value, words of the rejection)
    (0, ("upper",), lambda x: x + 1, "upper"),
    (0, ("lower",), lambda x: x + 1, "lower"),
    (0, ("heads", 0, "rank_Q"), 1, "heads[0]"),
    (0, ("lower_witness", "heads"), [1, 1], "distinct heads"),
    (0, ("lower_witness", "heads"), [1, 3], "distinct heads"),
    (0, ("orbit_dimension",), lambda x: x + 1, "orbit_dimension"),
    (0, ("regular",), None, "regular"),
    (0, ("fiber", "case"), "rank1-swap", "fiber"),
    (0, ("fiber", "dimension"), lambda x: x - 1, "fiber"),
    (0, ("parameters",), 65, "parameters"),
    (0, ("prime",), 65535, "not prime"),
    (0, ("prime",), 2, "odd"),
    (0, ("point", 0), "1/0", "denominator 0"),
    (0, ("point", 0), "1e9", "rational"),
    (0, ("point",), lambda x: x[:-1], "point"),
    (0, ("note",), "trust me", "unknown field"),
    (0, ("lower_witness", "extra"), [], "unknown field"),
    (1, ("dimension_certificate", "lower"), lambda x: x + 1, "lower bound"),  # the recorded bounds first
    (1, ("dimension_certificate",), DELETE, "generic must be"),
    (0, ("generic",), lambda x: [x[0], x[1] + 1], "generic must be"),
    (1, ("regular",), None, "regular must be False"),
    (0, ("architecture", "heads"), [1], "architecture"),
    (1, ("lower_witness", "jacobian", "determinant"), lambda x: (x + 1) % 67108859, "determinant"),
    (1, ("lower_witness", "jacobian", "rank"), lambda x: x + 1, "rows"),
    (1, ("lower_witness", "jacobian", "inputs", 0, 0, 0), lambda x: x + 1, "determinant"),
    (1, ("lower_witness", "jacobian", "inputs", 0, 0, 0), 2**70, "bits"),
    (1, ("lower_witness",), {"heads": [1]}, "witness proves"),
    (1, ("lower_witness",), {"heads": [1, 2]}, "full rank"),
    (1, ("lower_witness",), {"heads": [2], "jacobian": {}}, "exactly one"),
    (1, ("point", 0), "2", "rank"),
]


@pytest.mark.parametrize("which, path, value, words", _ATTACKS, ids=[f"{a[0]}-{'.'.join(map(str, a[1]))}-{a[3]}"
                                                                   for a in _ATTACKS])
def test_tampered_local_rank_certificates_are_rejected(certificates, which, path, value, words):
    cert = certificates[which]
    assert check_certificate(cert).claim  # the honest one verifies
    with pytest.raises(Exception) as info:
        check_certificate(tampered(cert, path, value))
    assert type(info.value).__name__ in ("CertificateRejected", "CertificateFormatError")
    assert words in str(info.value)


def test_a_separated_heads_witness_for_equal_heads_is_rejected():
    arch = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    w = _point(arch, np.random.default_rng(12))[:32]
    w = w + w  # two equal heads: the stacked O and Q are singular
    cert = local_rank(arch, w).to_json()
    assert cert["lower_witness"] == {"heads": [1]} and cert["lower"] == _jacobian_rank(arch, w)  # F = 2 F_1
    forged = dict(cert, lower_witness={"heads": [1, 2]}, lower=cert["upper"], regular=True)
    with pytest.raises(Exception, match="stacked O_j"):
        check_certificate(forged)


def test_the_command_line_report_json_latex_and_certificate(tmp_path, capsys):
    from attngeo.latex import balanced

    path = _write(tmp_path, _random_layer("qkv", 4, 2, seed=9))
    cert = tmp_path / "c.json"
    assert main(["inspect", "--weights", path, "--layout", "qkv", "--heads", "2", "--json", "--lightning",
                 "--certificate", str(cert), "--latex"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["parameters"] == 64 and out["local_rank"] == out["generic_dimension"] == 46 and out["regular"] is True
    assert [h["rank_Q"] for h in out["heads"]] == [2, 2] and balanced(out["latex"])
    assert out["fiber"] == {"head": 1, "case": "generic", "lines": 1, "dimension": 9}
    assert main(["check", str(cert), "--weights", path]) == 0
    assert "local rank 46 = dim M" in capsys.readouterr().out
    assert main(["check", str(cert)]) == 2  # bound to its checkpoint: the file is needed
    assert "--weights FILE" in capsys.readouterr().out


@pytest.mark.parametrize("d, h, a, b", [(8, 2, 4, 4), (9, 3, 3, 2), (6, 2, 1, 3)])
def test_theorem_s_at_the_head_point_agrees_with_the_head_point_dimension_certificate(d, h, a, b):
    from attngeo.geometry.dimension.headpoint import certify_heads, head_point

    arch = Architecture((d, d), (a,), heads=h, value_ranks=b, causal=True)
    res = local_rank(arch, head_point(arch).astype(float), dimension=False)  # selectors: (S1)-(S5) hold
    assert res.lower_witness == {"heads": list(range(1, h + 1))}
    assert res.lower == res.upper == certify_heads(arch, seed=0).dimension == arch.parameter_count - h * (a * a + b * b + 1)


def test_a_softmax_layer_is_decided_by_theorem_c_or_bounded_by_a_ball_minor_and_the_per_head_count():
    arch = Architecture((4, 4), (2,), heads=2, value_ranks=2, normalization="softmax")
    w = _point(arch, np.random.default_rng(21))
    res = local_rank(arch, w)  # separated heads: Theorem C (docs/math.md §8.3) decides, no Jacobian
    assert res.lower_witness == {"criterion": {"groups": [1, 2]}}
    assert res.lower == res.upper == res.generic[0] == 64 - 2 * 8
    cert = res.to_json()
    assert check_certificate(cert).claim.startswith("local rank 48 = dim M")
    forged = dict(cert, lower_witness={"jacobian": {}})
    with pytest.raises(Exception, match="lightning layers only"):
        check_certificate(forged)
    w[0:8] = [1, 2, 0, 1, 2, 4, 0, 2]  # Q_1 of rank 1: the per-head count drops below dim M
    low = local_rank(arch, w)
    assert "ball" in low.lower_witness  # Theorem C holds for head 2 only; a ball minor closes the gap
    assert low.regular is False and low.upper == 48 - 2 and low.fiber["case"] == "undecided"
    assert check_certificate(low.to_json()).claim.startswith("local rank 46 < dim M = 48")
    moved = json.loads(json.dumps(low.to_json()))
    moved["lower_witness"]["ball"]["point"][0] = "7/5"  # a minor at another point proves nothing here
    with pytest.raises(Exception, match="must be the certificate's point"):
        check_certificate(moved)


def test_point_strings_and_residues_are_the_exact_values_of_the_floats():
    arch = Architecture((2, 2), (1,))
    values = np.array([0.0, -0.0, 0.75, -3.0, 2.0**-140, 1e30, -5e-324, 0.1])
    pt = _Point(arch, values)
    exact = [fmpq(*float(v).as_integer_ratio()) for v in values]
    assert pt.strings() == [str(x) for x in exact]
    assert pt.residues(P).tolist() == [int(x.p) % P * pow(int(x.q), -1, P) % P for x in exact]


@pytest.mark.parametrize("limit, value, words", [("MAX_EXACT_RANK_ENTRIES", 7, "rank over Q"),
                                                 ("MAX_LOCAL_JACOBIAN_WORK", 1000, "units of work"),
                                                 ("MAX_LOCAL_JACOBIAN_PARAMETERS", 10, "above the checker's limit")])
def test_work_beyond_the_checkers_limits_is_refused_before_it_starts(certificates, monkeypatch, limit, value, words):
    import attngeo.check.loci.regularity as checker
    from attngeo import CertificateFormatError

    monkeypatch.setattr(checker, limit, value)
    with pytest.raises(CertificateFormatError, match=words):
        check_certificate(certificates[1])  # rank-1 Q_1 (an exact rank over Q) and a Jacobian witness
