"""Every layout reads a real family's tensors into the layer that family computes (attngeo/model/layouts.py).

Each family's attention is written here in its framework's own conventions (tokens as rows, a
``Linear`` is ``x W^T + b``, GPT-2's ``Conv1D`` is ``x W + b``, GPT-NeoX views its packed projection
as ``[h, 3, a]``, LLaMA repeats each key-value head for ``h / g`` consecutive heads, T5 does not scale),
from the tensor names and shapes of Hugging Face transformers and torch. The loaded layer is compared
with it exactly over Q for lightning attention (attngeo's :func:`attngeo.evaluate`) and in float64 for
softmax with the checkpoint's scale (a float guide, with a tolerance), where attngeo's side is the
formula of docs/math.md §8.1 evaluated from the blocks of the loaded point, not from the family's names.
"""

import json
import math
from fractions import Fraction

import numpy as np
import pytest

from attngeo import evaluate
from attngeo.exceptions import InvalidInputError
from attngeo.model.checkpoint import layers, load_checkpoint
from attngeo.model.layouts import LAYOUTS
from attngeo.model.scale import ScoreScale
from attngeo.model.weights import save_safetensors
from attngeo.ui.cli import main


# -- the families, as their frameworks compute ------------------------------------------------------------


def _linear(X, W, b):
    return X @ W.T + (0 if b is None else b)


def _attend(q, k, v, h, g, scale, causal, softmax, zero):
    """Per head j: scores q_j k_g^T (rows: queries), normalized over the keys; head j uses kv head j // (h / g)."""
    t = q.shape[0]
    a, b = q.shape[1] // h, v.shape[1] // g
    heads = []
    for j in range(h):
        gj = j // (h // g)
        qj, kj, vj = q[:, j * a:(j + 1) * a], k[:, gj * a:(gj + 1) * a], v[:, gj * b:(gj + 1) * b]
        S = qj @ kj.T * scale
        keep = np.tril(np.ones((t, t), dtype=bool)) if causal else np.ones((t, t), dtype=bool)
        if softmax:
            S = np.where(keep, S, -np.inf)
            P = np.exp(S - S.max(axis=1, keepdims=True))
            P = P / P.sum(axis=1, keepdims=True)
        else:
            P = np.where(keep, S, zero)
        heads.append(P @ vj)
    return np.concatenate(heads, axis=1)


def _family(layout, T, pre, X, h, g, scale, causal, softmax, zero=0.0):
    """The family's attention output (tokens as rows) from its named tensors ``T``."""
    get = lambda name: T.get(pre + name)  # noqa: E731
    if layout == "gpt2":
        qkv = X @ get("c_attn.weight") + (0 if get("c_attn.bias") is None else get("c_attn.bias"))
        d = X.shape[1]
        merged = _attend(qkv[:, :d], qkv[:, d:2 * d], qkv[:, 2 * d:], h, h, scale, causal, softmax, zero)
        return merged @ get("c_proj.weight") + (0 if get("c_proj.bias") is None else get("c_proj.bias"))
    if layout == "gpt-neox":
        qkv = _linear(X, get("query_key_value.weight"), get("query_key_value.bias"))
        t, a = X.shape[0], qkv.shape[1] // (3 * h)
        view = qkv.reshape(t, h, 3 * a)  # [batch, seq, heads, 3 * head_size] as modeling_gpt_neox does
        q, k, v = (view[:, :, s * a:(s + 1) * a].reshape(t, h * a) for s in range(3))
        merged = _attend(q, k, v, h, h, scale, causal, softmax, zero)
        return _linear(merged, get("dense.weight"), get("dense.bias"))
    if layout == "torch-mha":
        if get("in_proj_weight") is not None:
            W, d = get("in_proj_weight"), get("in_proj_weight").shape[1]
            Wq, Wk, Wv = W[:d], W[d:2 * d], W[2 * d:]
        else:
            Wq, Wk, Wv = get("q_proj_weight"), get("k_proj_weight"), get("v_proj_weight")
            d = Wq.shape[1]
        B = get("in_proj_bias")
        bq, bk, bv = (None, None, None) if B is None else (B[:d], B[d:2 * d], B[2 * d:])
        merged = _attend(_linear(X, Wq, bq), _linear(X, Wk, bk), _linear(X, Wv, bv), h, h, scale, causal, softmax,
                         zero)
        return _linear(merged, get("out_proj.weight"), get("out_proj.bias"))
    names = {"bert": ("self.query", "self.key", "self.value", "output.dense"),
             "distilbert": ("q_lin", "k_lin", "v_lin", "out_lin"),
             "vit": ("attention.query", "attention.key", "attention.value", "output.dense"),
             "llama": ("q_proj", "k_proj", "v_proj", "o_proj"), "qkv": ("q_proj", "k_proj", "v_proj", "out_proj"),
             "t5": ("SelfAttention.q", "SelfAttention.k", "SelfAttention.v", "SelfAttention.o")}[layout]
    q, k, v = (_linear(X, get(n + ".weight"), get(n + ".bias")) for n in names[:3])
    return _linear(_attend(q, k, v, h, g, scale, causal, softmax, zero), get(names[3] + ".weight"),
                   get(names[3] + ".bias"))


def _model(ck, X_cols, scale, softmax):
    """docs/math.md §8.1 from the loaded point's blocks: b_O + sum_j O_j sum_r (U_g x_r + b_V) sigma_r(scores)."""
    arch, w = ck.arch, ck.point
    blocks = {}
    for b in arch.blocks():
        owner = ("g", b.group) if b.group else b.head
        blocks[(owner, b.name)] = w[b.offset:b.offset + b.size].reshape(b.rows, b.cols)
    h, g = arch.heads[0], arch.kv_heads[0]
    n = h // g
    d, t = X_cols.shape
    out = np.zeros((arch.widths[1], t)) + (blocks[(0, "bO")] if arch.biases else 0)
    for j in range(1, h + 1):
        grp = ("g", (j - 1) // n + 1) if n > 1 else j
        bq, bk, bv = ((blocks[(j, "bQ")], blocks[(grp, "bK")], blocks[(grp, "bV")]) if arch.biases else (0, 0, 0))
        Q = blocks[(j, "Q")] @ X_cols + bq
        K = blocks[(grp, "K")] @ X_cols + bk
        U = blocks[(grp, "U")] @ X_cols + bv
        S = scale * (K.T @ Q)  # [key r, query i]
        keep = np.triu(np.ones((t, t), dtype=bool)) if arch.causal else np.ones((t, t), dtype=bool)  # r <= i
        if softmax:
            S = np.where(keep, S, -np.inf)
            P = np.exp(S - S.max(axis=0, keepdims=True))
            P = P / P.sum(axis=0, keepdims=True)
        else:
            P = np.where(keep, S, 0)
        out = out + blocks[(j, "O")] @ (U @ P)
    return out


def _tensors(layout, d, h, g, a, seed, biases=True, o_bias=True, variant=0):
    """Random tensors of one layer with the family's names and shapes (prefixes as the models have them)."""
    rng = np.random.default_rng(seed)
    r = lambda *s: (rng.integers(-8, 9, s) / 8).astype(np.float32)  # noqa: E731  (exact in float32)
    pre = {"bert": "bert.encoder.layer.2.attention.", "distilbert": "distilbert.transformer.layer.2.attention.",
           "vit": "vit.encoder.layer.2.attention.", "gpt2": "transformer.h.2.attn.",
           "gpt-neox": "gpt_neox.layers.2.attention.", "llama": "model.layers.2.self_attn.",
           "qkv": "model.decoder.layers.2.self_attn.", "t5": "encoder.block.2.layer.0.",
           "torch-mha": "layers.2.self_attn."}[layout]
    b = a
    T = {}
    if layout == "gpt2":
        T = {"c_attn.weight": r(d, 3 * h * a), "c_proj.weight": r(h * b, d)}
        if biases:
            T.update({"c_attn.bias": r(3 * h * a), "c_proj.bias": r(d)})
    elif layout == "gpt-neox":
        T = {"query_key_value.weight": r(3 * h * a, d), "dense.weight": r(d, h * b)}
        if biases:
            T.update({"query_key_value.bias": r(3 * h * a), "dense.bias": r(d)})
    elif layout == "torch-mha":
        if variant == 0:
            T = {"in_proj_weight": r(3 * d, d)}
        else:
            T = {"q_proj_weight": r(d, d), "k_proj_weight": r(d, d), "v_proj_weight": r(d, d)}
        T["out_proj.weight"] = r(d, d)
        if biases:
            T.update({"in_proj_bias": r(3 * d), "out_proj.bias": r(d)})
    else:
        names = {"bert": ("self.query", "self.key", "self.value", "output.dense"),
                 "distilbert": ("q_lin", "k_lin", "v_lin", "out_lin"),
                 "vit": ("attention.query", "attention.key", "attention.value", "output.dense"),
                 "llama": ("q_proj", "k_proj", "v_proj", "o_proj"), "qkv": ("q_proj", "k_proj", "v_proj", "out_proj"),
                 "t5": ("SelfAttention.q", "SelfAttention.k", "SelfAttention.v", "SelfAttention.o")}[layout]
        rows = (h * a, g * a, g * b)
        for name, n in zip(names[:3], rows):
            T[name + ".weight"] = r(n, d)
            if biases:
                T[name + ".bias"] = r(n)
        T[names[3] + ".weight"] = r(d, h * b)
        if biases and o_bias:
            T[names[3] + ".bias"] = r(d)
    T = {pre + k: v for k, v in T.items()}
    T["unrelated.embeddings.weight"] = r(5, d)  # a whole-model file holds more than the layer
    return T, pre


CASES = [  # (layout, d, h, g, a, biases, o_bias, variant)
    ("bert", 8, 2, 2, 4, True, True, 0), ("distilbert", 8, 2, 2, 3, True, True, 0),
    ("vit", 6, 3, 3, 2, True, True, 0), ("gpt2", 8, 2, 2, 4, True, True, 0), ("gpt2", 6, 2, 2, 3, False, True, 0),
    ("gpt-neox", 8, 2, 2, 3, True, True, 0), ("llama", 8, 4, 2, 2, False, True, 0),
    ("llama", 8, 4, 1, 2, True, False, 0),  # Qwen: q, k, v biases, none on o_proj
    ("qkv", 6, 2, 2, 3, True, True, 0), ("t5", 6, 2, 2, 4, False, True, 0),  # T5: inner dim h d_kv = 8 != d
    ("torch-mha", 8, 2, 2, 4, True, True, 0), ("torch-mha", 6, 3, 3, 2, True, True, 1),
]
IDS = [f"{c[0]}-d{c[1]}-h{c[2]}-g{c[3]}-a{c[4]}{'-bias' if c[5] else ''}{'' if c[6] else '-no-o-bias'}-v{c[7]}"
       for c in CASES]


@pytest.mark.parametrize("layout, d, h, g, a, biases, o_bias, variant", CASES, ids=IDS)
def test_auto_detection_reads_the_family_and_its_lightning_layer_exactly(layout, d, h, g, a, biases, o_bias,
                                                                          variant):
    T, pre = _tensors(layout, d, h, g, a, seed=len(layout) + d, biases=biases, o_bias=o_bias, variant=variant)
    ck = load_checkpoint(T, heads=h, normalization="lightning", tokens=3)
    assert (ck.layout, ck.prefix, ck.layer) == (layout if layout != "qkv" else "qkv", pre, 2)
    assert ck.arch.kv_heads[0] == g and ck.arch.biases == biases and ck.arch.ranks[0] == a
    assert ck.arch.causal == LAYOUTS[layout].causal
    X = np.array([[Fraction(int(x), 4) for x in row] for row in np.random.default_rng(5).integers(-8, 9, (3, d))],
                 dtype=object)
    exact = {k: np.vectorize(lambda x: Fraction(float(x)), otypes=[object])(v) for k, v in T.items()}
    theirs = _family(layout, exact, pre, X, h, g, Fraction(1), ck.arch.causal, False, Fraction(0))
    ours = evaluate(ck.arch, ck.point, X.T.tolist())
    assert [[Fraction(int(ours[i, j].p), int(ours[i, j].q)) for j in range(3)] for i in range(d)] == theirs.T.tolist()


@pytest.mark.parametrize("layout, d, h, g, a, biases, o_bias, variant", CASES, ids=IDS)
def test_the_softmax_layer_with_its_scale_is_the_familys(layout, d, h, g, a, biases, o_bias, variant):
    T, pre = _tensors(layout, d, h, g, a, seed=7 + d, biases=biases, o_bias=o_bias, variant=variant)
    ck = load_checkpoint(T, heads=h, tokens=4)
    assert ck.arch.normalization == "softmax"
    assert ck.scale == (ScoreScale.parse("1") if layout == "t5" else ScoreScale.inverse_sqrt(a))
    s = 1.0 if layout == "t5" else 1 / math.sqrt(a)
    X = np.random.default_rng(6).integers(-4, 5, (4, d)) / 4
    theirs = _family(layout, {k: v.astype(np.float64) for k, v in T.items()}, pre, X, h, g, s, ck.arch.causal, True)
    assert np.allclose(_model(ck, X.T, s, True), theirs.T, rtol=1e-12, atol=1e-12)  # float64 guides only


def test_cross_attention_is_not_read_as_self_attention():
    T, pre = _tensors("qkv", 6, 2, 2, 3, seed=8)
    cross = {k.replace("self_attn.", "encoder_attn."): v for k, v in T.items() if "self_attn." in k}
    assert layers({**T, **cross}) == [("qkv", pre)]  # BART's decoder: self_attn, and encoder_attn over the encoder
    with pytest.raises(InvalidInputError, match="no attention layer recognised"):
        load_checkpoint(cross, heads=2)


def test_each_block_is_one_rectangle_of_one_tensor_and_the_blocks_tile_the_tensors():
    T, pre = _tensors("gpt-neox", 8, 2, 2, 3, seed=1)
    ck = load_checkpoint(T, heads=2)
    cover = {n: np.zeros(T[n].reshape(T[n].shape[0], -1).shape, dtype=int) for n in ck.tensors}
    for b, s in zip(ck.arch.blocks(), ck.sources):
        part = s.read(T[s.tensor])
        assert part.shape == (b.rows, b.cols)
        assert np.array_equal(part.ravel(), ck.point[b.offset:b.offset + b.size])
        cover[s.tensor][s.rows[0]:s.rows[1], s.columns[0]:s.columns[1]] += 1
    assert all((c == 1).all() for c in cover.values())
    # GPT-NeoX interleaves each head's q, k, v: head 2's key is rows 3a + a .. 3a + 2a - 1
    K2 = next(s for b, s in zip(ck.arch.blocks(), ck.sources) if b.name == "K" and b.head == 2)
    assert K2.rows == (9 + 3, 9 + 6)


# -- config.json, defaults, refusals -----------------------------------------------------------------------


def _save(tmp_path, T, config=None, name="model.safetensors", dtype="F32"):
    path = tmp_path / name
    save_safetensors(path, T, dtype)
    if config is not None:
        (tmp_path / "config.json").write_text(json.dumps(config))
    return str(path)


def test_config_gives_heads_key_value_heads_and_head_size_and_a_contradiction_is_refused(tmp_path):
    T, _ = _tensors("llama", 8, 4, 2, 2, seed=3, biases=False)
    path = _save(tmp_path, T, {"model_type": "llama", "num_attention_heads": 4, "num_key_value_heads": 2,
                               "head_dim": 2})
    ck = load_checkpoint(path)
    assert ck.arch.heads == (4,) and ck.arch.kv_heads == (2,) and ck.config.endswith("config.json")
    assert any("4 heads (from" in d for d in ck.defaults) and any("causal mask" in d for d in ck.defaults)
    assert any("RoPE" in n for n in ck.notes)
    with pytest.raises(InvalidInputError, match="--heads 2 contradicts .*num_attention_heads = 4"):
        load_checkpoint(path, heads=2)
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 4, "head_dim": 4}))
    with pytest.raises(InvalidInputError, match="head_dim = 4"):
        load_checkpoint(path)
    (tmp_path / "config.json").write_text(json.dumps({"num_attention_heads": 4, "num_key_value_heads": 4}))
    with pytest.raises(InvalidInputError, match="4 key-value heads of size 2 need 8 rows"):
        load_checkpoint(path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(InvalidInputError, match="config.json is not a readable JSON"):
        load_checkpoint(path)


def test_scale_switches_of_gpt2_and_the_decoder_of_t5(tmp_path):
    T, pre = _tensors("gpt2", 8, 2, 2, 4, seed=4)
    ck = load_checkpoint(T, heads=2, config={"scale_attn_by_inverse_layer_idx": True})
    assert ck.layer == 2 and ck.scale == ScoreScale.parse("1/6")  # 1/sqrt(4) / (2 + 1)
    assert load_checkpoint(T, heads=2, config={"scale_attn_weights": False}).scale.is_one()
    assert load_checkpoint(T, heads=2, score_scale="1/sqrt(96)").scale == ScoreScale.parse("1/4/sqrt(6)")
    T5 = {k.replace("encoder.", "decoder."): v for k, v in _tensors("t5", 6, 2, 2, 4, seed=5, biases=False)[0].items()}
    dec = load_checkpoint(T5, heads=2)
    assert dec.arch.causal and dec.scale.is_one() and any("relative position bias" in n for n in dec.notes)
    encoder = _tensors("t5", 6, 2, 2, 4, seed=5, biases=False)[0]
    assert not load_checkpoint(encoder, heads=2).arch.causal
    with pytest.raises(InvalidInputError, match="2 attention layers numbered 2 .*pick one with --prefix P$"):
        load_checkpoint({**encoder, **T5}, heads=2, layer=2)  # T5's encoder and decoder both have a block 2


def test_an_unrecognised_layout_is_one_line_naming_tensors_seen_and_layouts_tried(tmp_path, capsys):
    path = _save(tmp_path, {"encoder.attn.wq": np.eye(4, dtype=np.float32), "encoder.attn.wk": np.eye(4),
                            "encoder.attn.wv": np.eye(4), "encoder.attn.wo": np.eye(4), "head.bias": np.zeros(4)})
    assert main(["inspect", "--weights", path, "--heads", "2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no attention layer recognised among its 5 tensors" in err
    assert "'encoder.attn.wk'" in err and ", ..." in err and "layouts tried: bert, distilbert, vit, gpt2" in err


@pytest.mark.parametrize("case, words", [
    ("heads", ["projects to 8 query features", "3 heads"]),
    ("config", ["--heads 4 contradicts", "num_attention_heads = 2"]),
    ("nan", ["holds nan", "finite"]),
    ("no heads", ["give --heads N"]),
    ("residual", ["residual = True needs d_i = d_(i-1)"]),
])
def test_bad_input_is_one_line_exit_2_and_nothing_is_written(tmp_path, capsys, case, words):
    T, _ = _tensors("bert", 8, 2, 2, 4, seed=9)
    config = {"num_attention_heads": 2}
    args = []
    if case == "heads":
        config, args = None, ["--heads", "3"]
    elif case == "config":
        args = ["--heads", "4"]
    elif case == "nan":
        name = next(k for k in T if k.endswith("self.key.weight"))
        T[name] = T[name].copy()
        T[name][1, 2] = np.nan
    elif case == "no heads":
        config = None
    else:
        T = {k: (v[:, :6] if k.endswith("output.dense.weight") else v) for k, v in T.items()}
        name = next(k for k in T if k.endswith("output.dense.weight"))
        T[name] = np.random.default_rng(0).standard_normal((6, 8)).astype(np.float32)
        T = {k: v for k, v in T.items() if not k.endswith("output.dense.bias")}
        args = ["--residual"]
    path = _save(tmp_path, T, config)
    out = tmp_path / "c.json"
    assert main(["inspect", "--weights", path, "--certificate", str(out), *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("attngeo: error:") and all(w in err for w in words), err
    assert not out.exists()


def test_the_report_says_every_default_and_what_is_not_modelled(tmp_path, capsys):
    T, _ = _tensors("gpt2", 8, 2, 2, 4, seed=2)
    path = _save(tmp_path, T, {"n_head": 2}, dtype="BF16")
    assert main(["inspect", "--weights", path, "--residual"]) == 0
    out = capsys.readouterr().out
    for words in ("softmax (the layer as it computes", "layout gpt2 (GPT-2), recognised", "2 heads (from",
                  "causal mask (the default of gpt2; --no-causal", "score scale 1/2 (1/sqrt(4)", "t = 2 tokens",
                  "LayerNorm on the layer's input (pre-LN) of gpt2: not modelled", "residual, causal, biases, softmax",
                  "in the model: transformer.h.2.attn.c_attn.bias, transformer.h.2.attn.c_proj.bias", "BF16"):
        assert words in out, words
    assert main(["inspect", "--weights", path, "--lightning", "--no-causal", "--tokens", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    chosen = " ".join(out["checkpoint"]["defaults"])
    assert "softmax" not in chosen and "mask" not in chosen and "tokens" not in chosen
    assert out["architecture"]["normalization"] == "lightning" and out["architecture"]["causal"] is False


def test_every_layer_in_one_table_json_list_and_a_folder_of_bound_certificates(tmp_path, capsys):
    T = {}
    for i in range(3):
        part, _ = _tensors("bert", 8, 2, 2, 4, seed=20 + i)
        T.update({k.replace(".layer.2.", f".layer.{i}."): v for k, v in part.items()})
    path = _save(tmp_path, T, {"num_attention_heads": 2})
    folder = tmp_path / "certs"
    assert main(["inspect", "--weights", path, "--layer", "all", "--certificate", str(folder), "--progress"]) == 0
    captured = capsys.readouterr()
    table = [line for line in captured.out.splitlines() if "  bert.encoder.layer." in line]
    assert len(table) == 3 and all(line.split()[-3] == "yes" for line in table)
    assert "layer [" in captured.err and "] 2/3 bert.encoder.layer.2.attention." in captured.err
    files = sorted(p.name for p in folder.iterdir())
    assert files == [f"bert-encoder-layer-{i}-attention.json" for i in range(3)]
    assert main(["check", str(folder), "--weights", path]) == 0
    assert "3 valid, 0 rejected, 0 unusable" in capsys.readouterr().out
    assert main(["inspect", "--weights", path, "--layer", "all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [o["checkpoint"]["layer"] for o in out] == [0, 1, 2] and all(o["regular"] for o in out)
    assert layers(path) == [("bert", f"bert.encoder.layer.{i}.attention.") for i in range(3)]


def test_layer_all_refuses_a_bad_layer_before_writing_anything(tmp_path, capsys):
    T = {}
    for i in range(2):
        part, _ = _tensors("bert", 8, 2, 2, 4, seed=30 + i)
        T.update({k.replace(".layer.2.", f".layer.{i}."): v for k, v in part.items()})
    name = "bert.encoder.layer.1.attention.self.value.weight"
    T[name] = T[name].copy()
    T[name][0, 0] = np.inf
    path = _save(tmp_path, T, {"num_attention_heads": 2})
    folder = tmp_path / "certs"
    assert main(["inspect", "--weights", path, "--layer", "all", "--certificate", str(folder)]) == 2
    assert "layer.1.attention.self.value.weight" in capsys.readouterr().err and not folder.exists()


def test_onnx_initializers_are_read_and_bound_by_hash_only(tmp_path, capsys):
    onnx = pytest.importorskip("onnx", reason="ONNX checkpoints need the optional onnx package: pip install "
                                              "'attngeo[onnx]'")
    from onnx import helper, numpy_helper

    T, pre = _tensors("bert", 8, 2, 2, 4, seed=11)
    inits = [numpy_helper.from_array(v, name=k) for k, v in T.items()]
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])], initializer=inits)
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    ck = load_checkpoint(str(path), heads=2)
    assert ck.layout == "bert" and np.array_equal(ck.point, load_checkpoint(T, heads=2).point)
    assert set(ck.binding) == {"sha256", "bytes", "format"} and ck.binding["format"] == "onnx"
    cert = tmp_path / "c.json"
    assert main(["inspect", "--weights", str(path), "--heads", "2", "--certificate", str(cert)]) == 0
    assert "SHA-256 only" in capsys.readouterr().out
    assert main(["check", str(cert)]) == 0
    assert "SHA-256 is not checked (give --weights FILE)" in capsys.readouterr().out
    assert main(["check", str(cert), "--weights", str(path)]) == 0
    assert "the file matches" in capsys.readouterr().out
    other = tmp_path / "other.onnx"
    other.write_bytes(path.read_bytes() + b"\0")
    assert main(["check", str(cert), "--weights", str(other)]) == 1
    assert "another file" in capsys.readouterr().out
