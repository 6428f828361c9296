"""Trained attention layers as they compute, read from checkpoints as exact points of attngeo's model.

One self-attention layer of a checkpoint becomes one layer of
:class:`attngeo.model.architecture.Architecture`: ``h`` heads in ``g`` key-value groups,
value rank ``b`` (``V_j = O_j U_g``), its biases (affine attention: ``b_Q``, ``b_K``,
``b_V``, ``b_O``) and, by default, softmax with the checkpoint's own score scale ``s``
(a :class:`attngeo.model.scale.ScoreScale`, exact: ``1/sqrt(768)`` is ``1/16/sqrt(3)``).
The weights become the exact rationals they store (F64, F32, F16 and BF16 are dyadic
rationals; nothing is rounded, nothing is rescaled: the point is the stored weights,
and docs/math.md §8.1 shows why the scale changes no rank).

Which tensors, and how heads split them, is the layout's (:mod:`attngeo.model.layouts`:
BERT, DistilBERT, ViT, GPT-2, GPT-NeoX, LLaMA, ``qkv``, T5, torch MHA), detected from the
tensor names by default. A ``config.json`` beside the weights gives the heads, the
key-value heads, the head size and the scale where it has them; a contradiction with
what the caller gave is refused.

Every block of the point is one rectangle of one stored tensor
(:class:`attngeo.model.layouts.Source`); with the file's SHA-256 and the tensors' names,
dtypes and shapes that is the *binding* a local-rank certificate carries
(:attr:`Checkpoint.binding`), so ``attngeo check --weights FILE`` rebuilds the point from
the file itself. Formats the checker does not read (torch, ONNX, integer tensors) bind
the hash only and embed the point.

**Which is which.** attngeo's head is ``O_j U_g X (M o sigma(s (K_g X + b_K)^T (Q_j X + b_Q)))``:
the score of key token ``r`` for query token ``i`` is ``k_r . q_i``, normalized over ``r``
(column ``i``), exactly the checkpoints' ``q k^T`` softmaxed over the keys.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..exceptions import InvalidInputError
from .architecture import Architecture
from .layouts import (AUTO_ORDER, EXTRA_TOKENS, LAYOUTS, Layout, belongs, geometry, layer_number, prefixes, roles,
                      sources, suffix_match)
from .scale import ONE, ScoreScale
from .weights import MAX_BYTES, npz_array, read_safetensors, regular_file, safetensors_header

#: Formats whose tensors the checker reads itself (attngeo/check/checkpoint.py), and the dtypes it reads.
CHECKER_FORMATS = ("safetensors", "npz")
CHECKER_DTYPES = ("F64", "F32", "F16", "BF16")
#: A config.json larger than this is not a model configuration.
MAX_CONFIG_BYTES = 4 * 2**20
#: Integers are exact as float64 below this many bits.
_EXACT_FLOAT_BITS = 53
#: Keys of a config.json that give the number of heads, across families.
_HEADS_KEYS = ("num_attention_heads", "n_head", "n_heads", "num_heads")


def _dtype_name(arr: np.ndarray) -> str:
    if arr.dtype.name == "bfloat16":
        return "BF16"
    kind = {"f": "F", "i": "I", "u": "U", "b": "BOOL"}.get(arr.dtype.kind, arr.dtype.kind)
    return kind if kind == "BOOL" else f"{kind}{8 * arr.dtype.itemsize}"


class Tensors:
    """Named tensors of a checkpoint file (or a dict of arrays), read on demand: a whole-model file is not read
    whole, only the tensors of the layers asked for.

    Examples
    --------
    >>> import numpy as np
    >>> t = Tensors({"w": np.float32([[1, 2]])})
    >>> t.names, t.shape("w"), t.dtype("w"), t.format
    (['w'], (1, 2), 'F32', None)
    """

    def __init__(self, source):
        self.where = "the arrays" if isinstance(source, dict) else os.fspath(source)
        self.path = None if isinstance(source, dict) else self.where
        self.format = None
        self._cache: dict = {}
        self._npz = None
        self._header = None
        self._sha256 = None
        if isinstance(source, dict):
            self._cache = {str(k): np.asarray(v) for k, v in source.items()}
            self.names = list(self._cache)
            return
        self.size = regular_file(self.where, "weights file")
        if self.size > MAX_BYTES:
            raise InvalidInputError(f"{self.where} has {self.size} bytes, more than attngeo reads (at most {MAX_BYTES})")
        suffix = os.path.splitext(self.where)[1].lower()
        if suffix == ".safetensors":
            self.format = "safetensors"
            self._header, _ = safetensors_header(self.where)
            self.names = list(self._header)
        elif suffix == ".npz":
            self.format = "npz"
            try:
                self._npz = np.load(self.where, allow_pickle=False)
                self.names = list(self._npz.files)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile):
                raise InvalidInputError(f"{self.where} is not a numpy .npz archive of arrays") from None
        elif suffix in (".pt", ".pth", ".bin"):
            self.format = "torch"
            self._cache = _torch_state_dict(self.where)
            self.names = list(self._cache)
        elif suffix == ".onnx":
            self.format = "onnx"
            self._cache = _onnx_initializers(self.where)
            self.names = list(self._cache)
        else:
            raise InvalidInputError(f"{self.where}: a checkpoint layer is read from .safetensors, .npz, a torch "
                                    f"state_dict (.pt, .pth, .bin) or .onnx, not {suffix or 'a file without suffix'}")

    def shape(self, name: str) -> tuple:
        if self._header is not None:
            return tuple(self._header[name][1])
        return tuple(np.shape(self._raw(name)))

    def dtype(self, name: str) -> str:
        if self._header is not None:
            return self._header[name][0]
        return _dtype_name(np.asarray(self._raw(name)))

    def _raw(self, name: str) -> np.ndarray:
        if name not in self._cache:
            if self._header is not None:
                self._cache[name] = read_safetensors(self.where, {name})[name]
            else:
                try:
                    self._cache[name] = npz_array(self._npz, name, self.where)
                except (ValueError, OSError, EOFError, zipfile.BadZipFile):
                    raise InvalidInputError(f"{self.where}: array {name!r} cannot be read (numbers only)") from None
        return self._cache[name]

    def read(self, name: str) -> np.ndarray:
        """The tensor as float64 holding exactly its stored values; NaN, infinities and inexact types refused."""
        arr = np.asarray(self._raw(name))
        full = f"tensor {name!r} of {self.where}"
        if arr.dtype.name == "bfloat16":
            arr = arr.astype(np.float32)  # BF16 is the top half of a float32: widening is exact
        if arr.dtype.kind == "f":
            if arr.dtype.itemsize > 8:
                raise InvalidInputError(f"{full} is {arr.dtype}; attngeo reads float64, float32, float16 and bfloat16")
            values = arr.astype(np.float64)
        elif arr.dtype.kind in "iub":
            if arr.size and np.abs(arr.astype(object)).max() >= 2**_EXACT_FLOAT_BITS:
                raise InvalidInputError(f"{full} holds integers of more than {_EXACT_FLOAT_BITS} bits")
            values = arr.astype(np.float64)
        else:
            raise InvalidInputError(f"{full} has dtype {arr.dtype}; a weight tensor holds numbers")
        bad = np.argwhere(~np.isfinite(values))
        if len(bad):
            where = tuple(int(i) for i in bad[0])
            raise InvalidInputError(f"{full} holds {float(values[where])!r} at {list(where)}; weights must be "
                                    "finite numbers")
        return values

    def forget(self, names) -> None:
        """Drop cached tensors (a whole model is inspected one layer at a time)."""
        if self._header is not None or self._npz is not None:
            for n in names:
                self._cache.pop(n, None)

    def sha256(self) -> str:
        """The SHA-256 of the file, streamed (a multi-GB checkpoint is never held in memory)."""
        if self._sha256 is None:
            h = hashlib.sha256()
            with open(self.where, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 22), b""):
                    h.update(chunk)
            self._sha256 = h.hexdigest()
        return self._sha256


def _torch_state_dict(path: str) -> dict:
    """A ``torch.save``d state_dict as numpy arrays (only when torch is installed: it is never required)."""
    try:
        import torch  # noqa: F401  (optional)
    except ImportError:
        raise InvalidInputError(f"{path}: reading a torch state_dict needs torch, which is not installed; save the "
                                "layer with safetensors or numpy.savez (attngeo reads both itself)") from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a file it cannot read
        raise InvalidInputError(f"{path} is not a torch state_dict torch can read ({type(exc).__name__})") from None
    if not isinstance(state, dict):
        raise InvalidInputError(f"{path} holds a {type(state).__name__}, not a state_dict of tensors")
    out = {}
    for name, value in state.items():
        if hasattr(value, "detach"):
            t = value.detach().cpu()
            out[str(name)] = (t.float() if t.dtype == torch.bfloat16 else t).numpy()  # bf16 -> f32 is exact
    return out


def _onnx_initializers(path: str) -> dict:
    """An ONNX model's initializers (its stored tensors) by name (needs the optional ``onnx`` package)."""
    try:
        import onnx
        from onnx import numpy_helper
    except ImportError:
        raise InvalidInputError(f"{path}: reading ONNX needs the onnx package (pip install 'attngeo[onnx]'), or "
                                "save the layer's tensors with safetensors") from None
    try:
        model = onnx.load(path)
        return {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    except Exception as exc:  # protobuf and onnx raise many types for a file they cannot read
        raise InvalidInputError(f"{path} is not an ONNX model onnx can read ({type(exc).__name__})") from None


# -- config.json -------------------------------------------------------------------------------


def read_config(source) -> tuple[dict, str | None]:
    """``config.json`` beside a weights file, as a dict (empty when there is none) and its path.

    Raises
    ------
    InvalidInputError
        A config.json that is not a JSON object.

    Examples
    --------
    >>> import json, os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "config.json"), "w") as fh:
    ...     json.dump({"num_attention_heads": 12}, fh)
    >>> read_config(os.path.join(folder, "model.safetensors"))[0]
    {'num_attention_heads': 12}
    >>> read_config({"w": 0})
    ({}, None)
    """
    if isinstance(source, dict) or not isinstance(source, (str, os.PathLike)):
        return {}, None
    path = os.path.join(os.path.dirname(os.path.abspath(os.fspath(source))), "config.json")
    if not os.path.isfile(path):
        return {}, None
    return _config_file(path), path


def _config_file(path: str) -> dict:
    try:
        if os.path.getsize(path) > MAX_CONFIG_BYTES:
            raise InvalidInputError(f"{path} has more than {MAX_CONFIG_BYTES} bytes: not a model configuration")
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise InvalidInputError(f"{path} is not a readable JSON configuration; fix it or move it away") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"{path} is not a model configuration (a JSON object)")
    return data


def _config_int(config: dict, keys, where: str) -> tuple[int | None, str | None]:
    for key in keys:
        if key in config and config[key] is not None:
            value = config[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InvalidInputError(f"{where}: {key} = {value!r} is not a positive integer")
            return value, key
    return None, None


# -- the layer ---------------------------------------------------------------------------------


@dataclass
class Checkpoint:
    """One attention layer read from a checkpoint: its architecture, its exact point, its scale and its binding.

    ``point`` is a flat float64 array in :meth:`Architecture.blocks` order, every entry the exact dyadic
    rational it stores. ``defaults`` says what the caller did not choose (the normalization, the mask, the
    scale, ...), ``notes`` what the family computes and attngeo does not model.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.model.checkpoint import load_checkpoint
    >>> rng = np.random.default_rng(0)
    >>> ck = load_checkpoint({"c_attn.weight": rng.standard_normal((4, 12)).astype(np.float32),
    ...                       "c_proj.weight": rng.standard_normal((4, 4)).astype(np.float32)}, "gpt2", heads=2)
    >>> str(ck.arch), ck.scale
    ('widths 4,4, ranks 2, heads 2, value ranks 2, t=2, causal, softmax', ScoreScale('1/sqrt(2)'))
    """

    arch: Architecture
    point: np.ndarray
    layout: str
    prefix: str
    layer: int | None
    tensors: dict  # name -> (dtype, shape), the tensors the point is read from
    sources: list  # one layouts.Source per block, in Architecture.blocks() order
    scale: ScoreScale
    where: str = "the arrays"
    biases: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    defaults: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    config: str | None = None
    _file: Tensors | None = None

    @property
    def binding(self) -> dict | None:
        """What a local-rank certificate records of the checkpoint (docs/certificates.md); None for arrays.

        ``blocks`` (one :class:`~attngeo.model.layouts.Source` per block) only when the checker can read the
        file (safetensors or npz of F64/F32/F16/BF16); otherwise the hash alone, and the point is embedded.
        """
        f = self._file
        if f is None or f.path is None:
            return None
        out = {"sha256": f.sha256(), "bytes": f.size, "format": f.format}
        if f.format not in CHECKER_FORMATS or any(dt not in CHECKER_DTYPES for dt, _ in self.tensors.values()):
            return out
        out.update(layout=self.layout, prefix=self.prefix)
        if self.layer is not None:
            out["layer"] = self.layer
        out["tensors"] = [{"name": n, "dtype": dt, "shape": list(s)} for n, (dt, s) in self.tensors.items()]
        out["blocks"] = [s.to_json() for s in self.sources]
        if self.dropped:
            out["dropped"] = list(self.dropped)
        return out

    def summary(self) -> dict:
        """What was read: file, layout, prefix, layer, tensors and dtypes, the scale, the biases, the defaults.

        Examples
        --------
        >>> import numpy as np
        >>> from attngeo.model.checkpoint import load_checkpoint
        >>> w = {"in_proj_weight": np.eye(12, 4), "out_proj.weight": np.eye(4), "in_proj_bias": np.zeros(12)}
        >>> s = load_checkpoint(w, "torch-mha", heads=1).summary()
        >>> s["biases"], s["score_scale"], s["defaults"][0]
        (['in_proj_bias'], '1/2', 'softmax (the layer as it computes; --lightning for the lightning model)')
        """
        return {"weights": self.where, "layout": self.layout, "prefix": self.prefix, "layer": self.layer,
                "tensors": {n: dt for n, (dt, _) in self.tensors.items()}, "score_scale": str(self.scale),
                "biases": self.biases, "dropped_biases": self.dropped, "defaults": self.defaults,
                "not_modelled": self.notes, "config": self.config}


def _find(tensors: Tensors, layout: str, layer: int | None, prefix: str | None) -> list[tuple[Layout, str, tuple]]:
    """Every ``(layout, prefix, variant)`` of the layer(s) asked for; refusals name what is missing."""
    names = tensors.names
    tried = AUTO_ORDER if layout == "auto" else (layout,)
    found, taken = [], set()
    for name in tried:
        L = LAYOUTS[name]
        for v in L.variants:
            for pre in prefixes(names, v):
                if belongs(L, pre) and pre not in taken:
                    found.append((L, pre, v))
                    taken.add(pre)
    if not found:
        if layout == "auto":
            seen = ", ".join(repr(n) for n in sorted(names)[:4]) + (", ..." if len(names) > 4 else "")
            raise InvalidInputError(f"{tensors.where}: no attention layer recognised among its {len(names)} tensors "
                                    f"({seen or 'none'}); layouts tried: {', '.join(AUTO_ORDER)}; give --layout "
                                    "or name the tensors as one of them does")
        _missing(tensors, LAYOUTS[layout])
    if prefix is not None:
        want = prefix if prefix == "" or prefix.endswith(".") else prefix + "."
        chosen = [f for f in found if f[1] == want]
        if not chosen:
            raise InvalidInputError(f"{tensors.where}: no {_what(layout)} layer under prefix {want!r}; its layers are "
                                    f"under {', '.join(repr(f[1]) for f in found[:6])}")
        return chosen
    if layer is not None:
        chosen = [f for f in found if layer_number(f[1]) == layer]
        if not chosen:
            have = sorted({layer_number(f[1]) for f in found} - {None})
            raise InvalidInputError(f"{tensors.where}: no {_what(layout)} layer {layer}; it has layers {have}")
        return chosen
    return found


def _what(layout: str) -> str:
    return "attention" if layout == "auto" else layout


def _missing(tensors: Tensors, L: Layout) -> None:
    names = tensors.names
    others = [o for o in AUTO_ORDER if o != L.name and any(
        belongs(LAYOUTS[o], p) for v in LAYOUTS[o].variants for p in prefixes(names, v))]
    hint = f"; it looks like --layout {others[0]}" if others else ""
    partial = sorted({n for v in L.variants for s in v for n in names if suffix_match(n, s)})
    if partial:
        v = L.variants[0]
        pre = next(n[: len(n) - len(s)] for s in v for n in partial if suffix_match(n, s))
        missing = [pre + s for s in v if pre + s not in names]
        if missing:
            raise InvalidInputError(f"{tensors.where}: no tensor {missing[0]!r} (layout {L.name} needs "
                                    f"{', '.join(v)} under one prefix){hint}")
    raise InvalidInputError(f"{tensors.where} holds no layer of layout {L.name} (expected tensors ending in "
                            f"{' and '.join(L.variants[0])}){hint}")


def layers(source, layout: str = "auto") -> list[tuple[str, str]]:
    """Every attention layer of a checkpoint: ``(layout, prefix)`` in the order of their layer numbers.

    Examples
    --------
    >>> import numpy as np
    >>> w = {f"h.{i}.attn.{n}": np.zeros(s) for i in (1, 0) for n, s in (("c_attn.weight", (4, 12)),
    ...                                                                   ("c_proj.weight", (4, 4)))}
    >>> layers(w)
    [('gpt2', 'h.0.attn.'), ('gpt2', 'h.1.attn.')]
    """
    tensors = source if isinstance(source, Tensors) else Tensors(source)
    _check_layout(layout)
    found = _find(tensors, layout, None, None)
    order = sorted(found, key=lambda f: (layer_number(f[1]) is None, layer_number(f[1]) or 0, f[1]))
    return [(L.name, pre) for L, pre, _ in order]


def _check_layout(layout: str) -> None:
    if layout != "auto" and layout not in LAYOUTS:
        raise InvalidInputError(f"layout = {layout!r} is unknown; use auto or one of {', '.join(LAYOUTS)}")


def _heads(given: int | None, config: dict, config_path: str | None, layout: Layout, where: str) -> int:
    value, key = _config_int(config, layout.heads_keys + _HEADS_KEYS, config_path or where)
    if given is not None:
        if isinstance(given, bool) or not isinstance(given, int) or given < 1:
            raise InvalidInputError(f"heads = {given!r}: give the number of heads h >= 1 the layer was trained with")
        if value is not None and value != given:
            raise InvalidInputError(f"--heads {given} contradicts {config_path} ({key} = {value}); drop --heads or "
                                    "fix the configuration")
        return given
    if value is None:
        raise InvalidInputError(f"{where}: the number of heads is not in the tensors' shapes; give --heads N (or "
                                "put the model's config.json beside the weights)")
    return value


def _scale(L: Layout, a: int, config: dict, layer: int | None, given) -> tuple[ScoreScale, str]:
    """The score scale and where it comes from (said in the report)."""
    if given is not None:
        return (given if isinstance(given, ScoreScale) else ScoreScale.parse(given)), "given"
    if L.scale == "one":
        return ONE, f"{L.name} multiplies scores by 1 (no 1/sqrt(a))"
    if config.get("scale_attn_weights") is False:  # GPT-2's switch
        return ONE, "config.json: scale_attn_weights = false"
    value, _ = _config_int(config, ("query_pre_attn_scalar",), "config.json")
    scale = ScoreScale.inverse_sqrt(value if value is not None else a)
    origin = f"1/sqrt({value if value is not None else a})" + (
        " (config.json: query_pre_attn_scalar)" if value is not None else f", the head size of {L.name}")
    if config.get("scale_attn_by_inverse_layer_idx") is True and layer is not None:
        scale = ScoreScale(scale.ratio * Fraction(1, layer + 1), scale.radicand)
        origin += f", divided by layer + 1 = {layer + 1} (config.json: scale_attn_by_inverse_layer_idx)"
    return scale, origin


def load_checkpoint(source, layout: str = "auto", heads: int | None = None, *, layer: int | None = None,
                    prefix: str | None = None, drop_bias: bool = False, normalization: str | None = None,
                    tokens: int | None = None, causal: bool | None = None, residual: bool = False,
                    score_scale=None, config="auto") -> Checkpoint:
    """Read one self-attention layer of a checkpoint as the exact point of the layer it computes (module docstring).

    Parameters
    ----------
    source : str, path-like, dict or Tensors
        A ``.safetensors`` or ``.npz`` file, a torch state_dict (``.pt``, ``.pth``, ``.bin``; needs torch), an
        ``.onnx`` model (its initializers; needs onnx), or a dict of arrays.
    layout : str
        ``"auto"`` (from the tensor names) or one of :data:`attngeo.model.layouts.LAYOUTS`.
    heads : int, optional
        ``h``; default from ``config.json`` (refused when the two disagree).
    layer : int, optional
        The layer whose prefix ends in this number (``h.3.attn.`` is layer 3) in a whole-model file.
    prefix : str, optional
        The layer by the exact prefix of its tensor names instead.
    drop_bias : bool
        Inspect the layer without its biases (the report lists what was dropped).
    normalization : str, optional
        ``"softmax"`` (the default: the layer as it computes) or ``"lightning"``.
    tokens : int, optional
        ``t`` of the architecture (default 2).
    causal : bool, optional
        Default: the family's (GPT-2, GPT-NeoX, LLaMA, T5's decoder, a BERT configured as decoder).
    residual : bool
        The layer maps ``X`` to ``X + Y`` (the family's LayerNorm is not modelled).
    score_scale : ScoreScale or str, optional
        Default: the family's (``1/sqrt(a)``; 1 for T5; config.json's switches).
    config : "auto", dict, path or None
        ``config.json`` beside the weights (``"auto"``), a given one, or none.

    Returns
    -------
    Checkpoint

    Raises
    ------
    InvalidInputError
        One line naming the file and the tensor: no layer recognised, a missing tensor, a shape that does not
        split into ``heads`` heads, a config contradicting ``heads``, NaN or infinities, several layers and none
        chosen.

    Examples
    --------
    A GPT-2 layer of width 8 with two heads of size 4, biases kept (the layer as it computes):

    >>> import numpy as np
    >>> from attngeo.model.checkpoint import load_checkpoint
    >>> rng = np.random.default_rng(1)
    >>> w = {"h.0.attn.c_attn.weight": rng.standard_normal((8, 24)), "h.0.attn.c_proj.weight": np.eye(8),
    ...      "h.0.attn.c_attn.bias": np.zeros(24)}
    >>> ck = load_checkpoint(w, heads=2)
    >>> ck.layout, ck.prefix, ck.arch.biases, ck.scale, ck.arch.parameter_count
    ('gpt2', 'h.0.attn.', True, ScoreScale('1/2'), 288)
    >>> bool(ck.point[0] == w["h.0.attn.c_attn.weight"][0, 0])   # Q_1[0, 0] = W[0, 0], as stored
    True
    >>> load_checkpoint(w, heads=3)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: tensor 'h.0.attn.c_attn.weight' of the arrays projects to 8 query features, which do not split into 3 heads
    >>> load_checkpoint({"foo.weight": np.eye(2)}, heads=1)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the arrays: no attention layer recognised among its 1 tensors ('foo.weight'); layouts tried: bert, ...
    """
    _check_layout(layout)
    chosen_norm, normalization = normalization is not None, normalization or "softmax"
    chosen_t, tokens = tokens is not None, 2 if tokens is None else tokens
    if normalization not in ("softmax", "lightning"):
        raise InvalidInputError(f"normalization = {normalization!r}: use 'softmax' (as checkpoints compute) or "
                                "'lightning'")
    tensors = source if isinstance(source, Tensors) else Tensors(source)
    if isinstance(config, dict):
        cfg, cfg_path = config, "the given configuration"
    elif config == "auto":
        cfg, cfg_path = read_config(tensors.path) if tensors.path else ({}, None)
    elif config is None:
        cfg, cfg_path = {}, None
    else:
        cfg, cfg_path = _config_file(os.fspath(config)), os.fspath(config)
    found = _find(tensors, layout, layer, prefix)
    prefixes_found = sorted({f[1] for f in found})
    if len(prefixes_found) > 1:
        shown = ", ".join(map(repr, prefixes_found[:4])) + (", ..." if len(prefixes_found) > 4 else "")
        pick = "--prefix P" if layer is not None else "--layer N, --prefix P, or all with --layer all"
        raise InvalidInputError(f"{tensors.where} holds {len(prefixes_found)} attention layers"
                                f"{f' numbered {layer}' if layer is not None else ''} ({shown}); pick one with {pick}")
    L, pre, variant = found[0]
    number = layer_number(pre)
    defaults = [] if layout != "auto" else [f"layout {L.name} ({L.families}), recognised from the tensor names"]
    names = roles(L, variant, pre, lambda n: n in tensors.names)
    h = _heads(heads, cfg, cfg_path, L, tensors.where)
    if heads is None:
        defaults.append(f"{h} heads (from {cfg_path})")
    kv, _ = _config_int(cfg, ("num_key_value_heads",), cfg_path or "config")
    head_dim, _ = _config_int(cfg, ("head_dim", "d_kv"), cfg_path or "config")
    shapes = {names[r]: tensors.shape(names[r]) for r in ("q", "k", "v", "o", "qkv") if r in names}
    geo = geometry(L, names, shapes, h, kv, head_dim, tensors.where)
    bias_names = [names[r] for r in ("bq", "bk", "bv", "bqkv", "bo") if r in names]
    _check_biases(tensors, names, geo)
    extra = [pre + s for s in EXTRA_TOKENS if pre + s in tensors.names] if L.name == "torch-mha" else []
    for name in extra:
        if tensors.read(name).any() and not drop_bias:
            raise InvalidInputError(f"tensor {name!r} of {tensors.where} adds a key/value token (torch's add_bias_kv), "
                                    "which attngeo's attention does not have: pass --drop-bias to inspect without it")
    dropped = bias_names + [n for n in extra if tensors.read(n).any()] if drop_bias else []
    kept = [] if drop_bias else bias_names
    if drop_bias:
        names = {r: n for r, n in names.items() if not r.startswith("b")}
    is_causal = causal
    if causal is None:
        is_causal = L.causal or (L.name == "t5" and "decoder." in pre) or cfg.get("is_decoder") is True
        mask = "causal mask" if is_causal else "no mask"
        defaults.append(f"{mask} (the default of {L.name}" + (", a decoder" if is_causal and not L.causal else "")
                        + f"; --{'no-' if is_causal else ''}causal to change it)")
    scale, origin = _scale(L, geo.a, cfg, number, score_scale)
    if score_scale is None:
        defaults.append(f"score scale {scale} ({origin})")
    if not chosen_norm:
        defaults.insert(0, "softmax (the layer as it computes; --lightning for the lightning model)")
    arch = Architecture((geo.d, geo.dd), (geo.a,), tokens, normalization, geo.h, geo.b, residual, is_causal,
                        geo.g, bool(kept))
    if not chosen_t:
        defaults.append("t = 2 tokens (--tokens to change it)")
    notes = list(L.notes)
    if cfg.get("position_embedding_type") not in (None, "absolute"):
        notes.append(f"position_embedding_type = {cfg['position_embedding_type']!r} (relative scores): not modelled")
    if residual:
        notes.append("the LayerNorm " + ("after X + Y" if L.norm == "post" else "on the layer's input (pre-LN)")
                     + f" of {L.name}: not modelled")
    per_role = sources(L, names, geo)
    blocks = []
    for b in arch.blocks():
        index = 0 if b.name == "bO" else (b.group or b.head) - 1
        blocks.append(per_role[b.name][index])
    used = list(dict.fromkeys(s.tensor for s in blocks if s.tensor is not None))
    arrays = {n: tensors.read(n) for n in used}
    point = np.concatenate([s.read(arrays[s.tensor]).ravel() if s.tensor is not None else np.zeros(b.size)
                            for b, s in zip(arch.blocks(), blocks)]) if blocks else np.zeros(0)
    tensors.forget(used)
    return Checkpoint(arch, point, L.name, pre, number, {n: (tensors.dtype(n), tensors.shape(n)) for n in used},
                      blocks, scale, tensors.where, kept, dropped, defaults, notes, cfg_path, tensors)


def _check_biases(tensors: Tensors, names: dict, geo) -> None:
    """Each bias is a vector of its projection's length."""
    h, g, a, b = geo.h, geo.g, geo.a, geo.b
    want = {"bq": h * a, "bk": g * a, "bv": g * b, "bqkv": 2 * h * a + h * b, "bo": geo.dd}
    for role, n in want.items():
        if role in names:
            shape = tensors.shape(names[role])
            if tuple(shape) != (n,):
                raise InvalidInputError(f"tensor {names[role]!r} of {tensors.where} has shape {list(shape)}; a bias "
                                        f"of this layer has {n} entries")
