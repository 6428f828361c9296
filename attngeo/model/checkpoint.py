"""Trained attention layers in the layouts people save, read as exact points of attngeo's model.

One self-attention layer of a checkpoint becomes one layer of
:class:`attngeo.model.architecture.Architecture` with ``h`` heads and value rank
``b`` (``V_j = O_j U_j``), and its weights become the exact rationals they store
(F64, F32, F16 and BF16 are dyadic rationals; nothing is rounded). Layouts:

``gpt2``
    ``attn.c_attn.weight`` (``d x 3d``, a ``Conv1D``: ``[q | k | v] = x W``) and
    ``attn.c_proj.weight`` (``d x d``, ``out = merged W``); biases ``c_attn.bias``,
    ``c_proj.bias``. Head ``j`` owns columns ``j a .. (j+1) a - 1`` of each third,
    so ``Q_j = W[:, q-cols]^T``, ``K_j = W[:, k-cols]^T``, ``U_j = W[:, v-cols]^T``,
    and rows ``j b ..`` of ``c_proj``: ``O_j = W_proj[j-rows, :]^T``.
``torch-mha``
    ``torch.nn.MultiheadAttention``: ``in_proj_weight`` (``3d x d``, a ``Linear``:
    ``[q; k; v] = W x``) or ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``,
    and ``out_proj.weight``; biases ``in_proj_bias``, ``out_proj.bias``, ``bias_k``,
    ``bias_v``. ``Q_j`` = rows ``j a ..`` of ``W_q``, ``O_j`` = columns ``j b ..`` of ``W_out``.
``qkv``
    ``q_proj.weight``, ``k_proj.weight``, ``v_proj.weight`` and ``o_proj.weight``
    (or ``out_proj.weight``), each a ``Linear`` (BART, OPT, Llama-style names);
    biases ``*.bias``.

**Which is which.** attngeo's head is ``V_j X (M o (X^T K_j^T Q_j X))``: the score
of key token ``s`` for query token ``i`` is ``x_s^T K_j^T Q_j x_i = k_s . q_i``, and
each *column* ``i`` is normalized over ``s`` — exactly the checkpoints' ``q k^T``
softmaxed over keys, with the causal mask ``s <= i`` for GPT-2.

**The score scale.** Checkpoints divide scores by ``sqrt(a)`` (``a`` the head
dimension); attngeo's model has no such factor, so it is absorbed into ``Q``:
``Q_j = W_q,j / sqrt(a)``, and then the softmax scores are those of the
checkpoint. When ``a`` is not a perfect square, ``sqrt(a)`` is irrational and the
point would not be rational: for lightning attention ``Q`` is kept as stored,
which changes nothing reported (``phi(cQ, K, V) = c phi(Q, K, V)``, so local
rank, regularity, fibers' dimensions and orbits are the same at every ``c != 0``);
for softmax the loader refuses unless ``score_scale="none"`` says to inspect the
network with scores ``sqrt(a)`` times the checkpoint's.

**Biases** are not in the model: a nonzero bias is refused, naming the tensor,
unless ``drop_bias=True`` (the report then lists what was dropped); zero biases
are accepted and listed. Token position encodings (GPT-2's ``wpe``, RoPE) act on
the input, not on these weights, and are not part of an attention layer here.
"""

from __future__ import annotations

import math
import os
import zipfile
from dataclasses import dataclass, field

import numpy as np
from flint import fmpq

from ..exceptions import InvalidInputError
from .architecture import Architecture
from .weights import MAX_BYTES, npz_array, read_safetensors, regular_file, safetensors_header

#: layout -> alternative sets of weight tensors (suffixes under one prefix), and the bias tensors
LAYOUTS = {
    "gpt2": ((("c_attn.weight", "c_proj.weight"),), ("c_attn.bias", "c_proj.bias")),
    "torch-mha": ((("in_proj_weight", "out_proj.weight"),
                   ("q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight")),
                  ("in_proj_bias", "out_proj.bias", "bias_k", "bias_v")),
    "qkv": ((("q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"),
             ("q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight")),
            ("q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias", "out_proj.bias")),
}
#: floating dtypes read exactly (integers are exact too when below 2^53)
_EXACT_FLOAT_BITS = 53


class _Tensors:
    """Named tensors of a file or a dict, read on demand (a whole-model file is not read whole)."""

    def __init__(self, source):
        self.where = "the arrays" if isinstance(source, dict) else os.fspath(source)
        self._cache: dict = {}
        self._npz = None
        self._safetensors = None
        if isinstance(source, dict):
            self._cache = {str(k): v for k, v in source.items()}
            self.names = list(self._cache)
            return
        size = regular_file(self.where, "weights file")
        if size > MAX_BYTES:
            raise InvalidInputError(f"{self.where} has {size} bytes, more than attngeo reads (at most {MAX_BYTES})")
        suffix = os.path.splitext(self.where)[1].lower()
        if suffix == ".safetensors":
            header, _ = safetensors_header(self.where)
            self._safetensors = header
            self.names = list(header)
        elif suffix == ".npz":
            try:
                self._npz = np.load(self.where, allow_pickle=False)
                self.names = list(self._npz.files)
            except (ValueError, OSError, EOFError, zipfile.BadZipFile):
                raise InvalidInputError(f"{self.where} is not a numpy .npz archive of arrays") from None
        elif suffix in (".pt", ".pth", ".bin"):
            self._cache = _torch_state_dict(self.where)
            self.names = list(self._cache)
        else:
            raise InvalidInputError(f"{self.where}: a checkpoint layer is read from .safetensors, .npz or a torch "
                                    f"state_dict (.pt, .pth, .bin), not {suffix or 'a file without suffix'}")

    def dtype(self, name: str) -> str:
        if self._safetensors is not None:
            return self._safetensors[name][0]
        return str(np.asarray(self.read(name)).dtype)

    def read(self, name: str) -> np.ndarray:
        if name not in self._cache:
            if self._safetensors is not None:
                self._cache[name] = read_safetensors(self.where, {name})[name]
            else:
                try:
                    self._cache[name] = npz_array(self._npz, name, self.where)
                except (ValueError, OSError, EOFError, zipfile.BadZipFile):
                    raise InvalidInputError(f"{self.where}: array {name!r} cannot be read (numbers only)") from None
        return self._cache[name]


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


def _exact_array(tensors: _Tensors, name: str) -> np.ndarray:
    """A tensor as float64 holding exactly its stored values; NaN, infinities and inexact types refused."""
    arr = np.asarray(tensors.read(name))
    full = f"tensor {name!r} of {tensors.where}"
    if arr.dtype.kind == "f":
        if arr.dtype.itemsize > 8:
            raise InvalidInputError(f"{full} is {arr.dtype}; attngeo reads float64, float32, float16 and bfloat16")
        values = arr.astype(np.float64)  # widening a float is exact
    elif arr.dtype.kind in "iub":
        if arr.size and np.abs(arr.astype(object)).max() >= 2**_EXACT_FLOAT_BITS:
            raise InvalidInputError(f"{full} holds integers of more than {_EXACT_FLOAT_BITS} bits")
        values = arr.astype(np.float64)
    else:
        raise InvalidInputError(f"{full} has dtype {arr.dtype}; a weight tensor holds numbers")
    bad = np.argwhere(~np.isfinite(values))
    if len(bad):
        where = tuple(int(i) for i in bad[0])
        raise InvalidInputError(f"{full} holds {float(values[where])!r} at {list(where)}; weights must be finite numbers")
    return values


def _prefixes(names, suffixes) -> list[str]:
    """Prefixes ``P`` (``""`` or ending in ``.``) under which every suffix names a tensor."""
    found = None
    for s in suffixes:
        here = {n[: len(n) - len(s)] for n in names if n == s or n.endswith("." + s)}
        found = here if found is None else found & here
    return sorted(found or ())


def _layer_of(prefix: str) -> int | None:
    numbers = [int(part) for part in prefix.split(".") if part.isdigit()]
    return numbers[-1] if numbers else None


def _choose(tensors: _Tensors, layout: str, layer: int | None, prefix: str | None) -> tuple[str, tuple]:
    """The prefix and the set of weight tensors of the layer asked for (refusals name what is missing)."""
    variants, _ = LAYOUTS[layout]
    names = tensors.names
    found = [(pre, v) for v in variants for pre in _prefixes(names, v)]
    if not found:
        others = [other for other, (vs, _) in LAYOUTS.items()
                  if other != layout and any(_prefixes(names, v) for v in vs)]
        hint = f"; it looks like --layout {others[0]}" if others else ""
        partial = sorted({n for v in variants for s in v for n in names if n == s or n.endswith("." + s)})
        if partial:
            v = variants[0]
            pre = next(n[: len(n) - len(s)] for s in v for n in partial if n == s or n.endswith("." + s))
            missing = [pre + s for s in v if pre + s not in names]
            raise InvalidInputError(f"{tensors.where}: no tensor {missing[0]!r} (layout {layout} needs "
                                    f"{', '.join(v)} under one prefix){hint}")
        raise InvalidInputError(f"{tensors.where} holds no layer of layout {layout} (expected tensors ending in "
                                f"{' and '.join(variants[0])}){hint}")
    if prefix is not None:
        want = prefix if prefix == "" or prefix.endswith(".") else prefix + "."
        found = [(pre, v) for pre, v in found if pre == want]
        if not found:
            raise InvalidInputError(f"{tensors.where}: no {layout} layer under prefix {want!r}; its layers are under "
                                    f"{', '.join(repr(p) for p in _prefixes(names, variants[0])) or 'other names'}")
    elif layer is not None:
        found = [(pre, v) for pre, v in found if _layer_of(pre) == layer]
        if not found:
            have = sorted({_layer_of(pre) for v in variants for pre in _prefixes(names, v)} - {None})
            raise InvalidInputError(f"{tensors.where}: no {layout} layer {layer}; it has layers {have}")
    pres = sorted({pre for pre, _ in found})
    if len(pres) > 1:
        raise InvalidInputError(f"{tensors.where} holds {len(pres)} {layout} layers ({', '.join(map(repr, pres[:4]))}"
                                f"{', ...' if len(pres) > 4 else ''}); pick one with --layer N or --prefix P")
    return found[0]


def _matrix(tensors: _Tensors, name: str, shape: tuple, what: str) -> np.ndarray:
    values = _exact_array(tensors, name)
    if values.shape != shape:
        raise InvalidInputError(f"tensor {name!r} of {tensors.where} has shape {list(values.shape)}, expected "
                                f"{list(shape)} ({what})")
    return values


def _projections(tensors: _Tensors, layout: str, pre: str, variant: tuple) -> tuple:
    """``(W_q, W_k, W_v, W_out)`` in ``Linear`` orientation (rows = outputs), shapes checked."""
    def shape_of(name):
        return tuple(np.asarray(tensors.read(pre + name)).shape)

    if layout == "gpt2":
        first = shape_of("c_attn.weight")
        if len(first) != 2 or first[1] != 3 * first[0]:
            raise InvalidInputError(f"tensor {pre + 'c_attn.weight'!r} of {tensors.where} has shape {list(first)}; "
                                    "GPT-2's c_attn is a Conv1D of shape [d, 3d] (q, k, v side by side)")
        d = first[0]
        W = _matrix(tensors, pre + "c_attn.weight", (d, 3 * d), "GPT-2's c_attn: [d, 3d]")
        out = _matrix(tensors, pre + "c_proj.weight", (d, d), "GPT-2's c_proj: [d, d]")
        return W[:, :d].T, W[:, d:2 * d].T, W[:, 2 * d:].T, out.T
    if layout == "torch-mha":
        if variant[0] == "in_proj_weight":
            first = shape_of("in_proj_weight")
            if len(first) != 2 or first[0] != 3 * first[1]:
                raise InvalidInputError(f"tensor {pre + 'in_proj_weight'!r} of {tensors.where} has shape "
                                        f"{list(first)}; torch's in_proj_weight is [3d, d] (q, k, v stacked)")
            d = first[1]
            W = _matrix(tensors, pre + "in_proj_weight", (3 * d, d), "in_proj_weight: [3d, d]")
            Wq, Wk, Wv = W[:d], W[d:2 * d], W[2 * d:]
        else:
            d = shape_of("q_proj_weight")[-1]
            Wq, Wk, Wv = (_matrix(tensors, pre + n, (d, d), "self-attention: kdim = vdim = embed_dim, [d, d]")
                          for n in ("q_proj_weight", "k_proj_weight", "v_proj_weight"))
        return Wq, Wk, Wv, _matrix(tensors, pre + "out_proj.weight", (d, d), "out_proj: [d, d]")
    q = shape_of("q_proj.weight")
    if len(q) != 2:
        raise InvalidInputError(f"tensor {pre + 'q_proj.weight'!r} of {tensors.where} has shape {list(q)}; "
                                "a Linear weight is [out, in]")
    d = q[1]
    Wq = _matrix(tensors, pre + "q_proj.weight", q, "[h a, d]")
    Wk = _matrix(tensors, pre + "k_proj.weight", q, "the same shape as q_proj.weight: grouped keys are not in "
                                                     "attngeo's model")
    v = shape_of("v_proj.weight")
    Wv = _matrix(tensors, pre + "v_proj.weight", (v[0] if v else 0, d), "[h b, d]")
    o_name = variant[3]
    o = shape_of(o_name)
    Wo = _matrix(tensors, pre + o_name, (o[0] if o else 0, Wv.shape[0]), f"[d', h b] with h b = {Wv.shape[0]}")
    return Wq, Wk, Wv, Wo


@dataclass
class Checkpoint:
    """One attention layer read from a checkpoint: its architecture, its exact point and what was done to it.

    ``point`` is a flat float64 array (every entry the exact dyadic rational it
    holds) or, when the score scale is not a power of two, a list of ``fmpq``;
    :func:`attngeo.model.network.read_point` reads either exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from attngeo.model.checkpoint import load_checkpoint
    >>> rng = np.random.default_rng(0)
    >>> ck = load_checkpoint({"c_attn.weight": rng.standard_normal((4, 12)).astype(np.float32),
    ...                       "c_proj.weight": rng.standard_normal((4, 4)).astype(np.float32)}, "gpt2", heads=2)
    >>> str(ck.arch), ck.scale
    ('widths 4,4, ranks 2, heads 2, value ranks 2, t=2, causal, lightning', 'scores / sqrt(2): not absorbed (irrational; lightning does not depend on it)')
    """

    arch: Architecture
    point: object
    layout: str
    prefix: str
    tensors: dict  # name -> dtype
    scale: str
    dropped_biases: list[str] = field(default_factory=list)
    zero_biases: list[str] = field(default_factory=list)

    def head_slices(self) -> list[dict]:
        """Per head, the rows/columns of the checkpoint's tensors it owns (the report shows them).

        Examples
        --------
        >>> import numpy as np
        >>> from attngeo.model.checkpoint import load_checkpoint
        >>> ck = load_checkpoint({"in_proj_weight": np.eye(12, 4), "out_proj.weight": np.eye(4)}, "torch-mha", heads=2)
        >>> ck.head_slices()[1]
        {'head': 2, 'Q': 'rows 2..3 of W_q', 'K': 'rows 2..3 of W_k', 'U': 'rows 2..3 of W_v', 'O': 'columns 2..3 of W_out'}
        """
        a, b = self.arch.ranks[0], self.arch.value_ranks[0]
        out = []
        for j in range(self.arch.heads[0]):
            qs, vs = f"{j * a}..{(j + 1) * a - 1}", f"{j * b}..{(j + 1) * b - 1}"
            out.append({"head": j + 1, "Q": f"rows {qs} of W_q", "K": f"rows {qs} of W_k", "U": f"rows {vs} of W_v",
                        "O": f"columns {vs} of W_out"})
        return out

    def summary(self) -> dict:
        """What was read: layout, prefix, tensors and dtypes, the scale, the biases.

        Examples
        --------
        >>> import numpy as np
        >>> from attngeo.model.checkpoint import load_checkpoint
        >>> w = {"in_proj_weight": np.eye(12, 4), "out_proj.weight": np.eye(4), "in_proj_bias": np.zeros(12)}
        >>> load_checkpoint(w, "torch-mha", heads=1).summary()["zero_biases"]
        ['in_proj_bias']
        """
        return {"layout": self.layout, "prefix": self.prefix, "tensors": self.tensors, "score_scale": self.scale,
                "dropped_biases": self.dropped_biases, "zero_biases": self.zero_biases}


def _biases(tensors: _Tensors, layout: str, pre: str, drop: bool) -> tuple[list[str], list[str]]:
    dropped, zero = [], []
    for s in LAYOUTS[layout][1]:
        name = pre + s
        if name not in tensors.names:
            continue
        values = _exact_array(tensors, name)
        if not values.any():
            zero.append(name)
        elif drop:
            dropped.append(name)
        else:
            raise InvalidInputError(f"tensor {name!r} of {tensors.where} is a nonzero bias; attngeo's attention has "
                                    "no biases: pass --drop-bias (drop_bias=True) to inspect the layer without them")
    return dropped, zero


def load_checkpoint(source, layout: str, heads: int, *, layer: int | None = None, prefix: str | None = None,
                    drop_bias: bool = False, normalization: str = "lightning", tokens: int = 2,
                    causal: bool | None = None, score_scale: str = "auto") -> Checkpoint:
    """Read one self-attention layer of a checkpoint as an exact point of attngeo's model (module docstring).

    Parameters
    ----------
    source : str, path-like or dict
        A ``.safetensors`` or ``.npz`` file, a torch state_dict (``.pt``, ``.pth``, ``.bin``; needs torch), or a
        dict of arrays.
    layout : {"gpt2", "torch-mha", "qkv"}
    heads : int
        ``h``; the projections must split into ``h`` heads.
    layer : int, optional
        Picks the layer whose prefix contains this number (``h.3.attn.`` is layer 3) from a whole-model file.
    prefix : str, optional
        Picks the layer by the exact prefix of its tensor names instead.
    drop_bias : bool
        Drop nonzero biases (otherwise refused, naming the tensor).
    normalization : str
        ``"lightning"`` or ``"softmax"`` (the model attngeo analyses).
    tokens : int
        ``t`` of the architecture (local rank and dimension of lightning layers do not depend on ``t >= 2``).
    causal : bool, optional
        Default: True for GPT-2 (its attention is masked), False otherwise.
    score_scale : {"auto", "none"}
        ``auto`` absorbs ``1/sqrt(a)`` into ``Q`` when exact (module docstring); ``none`` keeps ``Q`` as stored.

    Returns
    -------
    Checkpoint

    Raises
    ------
    InvalidInputError
        One line naming the file and the tensor: wrong layout, a missing tensor, a shape that does not split
        into ``heads`` heads, NaN or infinities, a nonzero bias, several layers and none chosen.

    Examples
    --------
    A GPT-2 layer of width 8 with two heads of size 4 (``sqrt(4) = 2`` is absorbed into ``Q`` exactly):

    >>> import numpy as np
    >>> from attngeo.model.checkpoint import load_checkpoint
    >>> rng = np.random.default_rng(1)
    >>> w = {"h.0.attn.c_attn.weight": rng.standard_normal((8, 24)), "h.0.attn.c_proj.weight": np.eye(8),
    ...      "h.0.attn.c_attn.bias": np.zeros(24)}
    >>> ck = load_checkpoint(w, "gpt2", heads=2)
    >>> ck.arch.parameter_count, ck.scale, ck.prefix
    (256, 'scores / sqrt(4) absorbed into Q (Q = W_q / 2)', 'h.0.attn.')
    >>> bool(ck.point[0] == w["h.0.attn.c_attn.weight"][0, 0] / 2)   # Q_1[0, 0] = W[0, 0] / 2
    True
    >>> load_checkpoint(w, "gpt2", heads=3)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: tensor 'h.0.attn.c_attn.weight' of the arrays projects to 8 query features, which do not split into 3 heads
    >>> load_checkpoint(w, "torch-mha", heads=2)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the arrays holds no layer of layout torch-mha (expected tensors ending in in_proj_weight and out_proj.weight); it looks like --layout gpt2
    """
    if layout not in LAYOUTS:
        raise InvalidInputError(f"layout = {layout!r} is unknown; use one of {', '.join(LAYOUTS)}")
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise InvalidInputError(f"heads = {heads!r}: give the number of heads h >= 1 the layer was trained with")
    if score_scale not in ("auto", "none"):
        raise InvalidInputError(f"score_scale = {score_scale!r}: use 'auto' (absorb 1/sqrt(a) into Q) or 'none'")
    tensors = _Tensors(source)
    pre, variant = _choose(tensors, layout, layer, prefix)
    Wq, Wk, Wv, Wo = _projections(tensors, layout, pre, variant)
    value_name = variant[0] if len(variant) == 2 else variant[2]  # packed q, k, v: one tensor holds them all
    for what, W, name in (("query", Wq, variant[0]), ("value", Wv, value_name)):
        if W.shape[0] % heads:
            raise InvalidInputError(f"tensor {pre + name!r} of {tensors.where} projects to {W.shape[0]} {what} "
                                    f"features, which do not split into {heads} heads")
    d, dd = Wq.shape[1], Wo.shape[0]
    a, b = Wq.shape[0] // heads, Wv.shape[0] // heads
    if a == 0 or b == 0 or d == 0:
        raise InvalidInputError(f"{tensors.where}: the {layout} layer under {pre!r} has an empty projection")
    dropped, zero = _biases(tensors, layout, pre, drop_bias)
    root = math.isqrt(a)
    values = np.concatenate([m.ravel() for j in range(heads) for m in (
        Wq[j * a:(j + 1) * a], Wk[j * a:(j + 1) * a], Wv[j * b:(j + 1) * b], Wo[:, j * b:(j + 1) * b])])
    point: object = values
    if root * root == a and score_scale == "auto":
        scale = f"scores / sqrt({a}) absorbed into Q (Q = W_q / {root})"
        per_head = 2 * a * d + b * (d + dd)
        in_q = (np.arange(values.size) % per_head) < a * d
        scaled = np.where(in_q, values / root, values)
        if root & (root - 1) == 0 and np.array_equal(np.where(in_q, scaled * root, scaled), values):
            point = scaled  # a power of two: exact, unless a subnormal lost bits (checked)
        else:
            point = [fmpq(*float(v).as_integer_ratio()) / (root if q else 1) for v, q in zip(values, in_q)]
    elif score_scale == "none":
        scale = f"scores / sqrt({a}) not absorbed (score_scale = none): Q = W_q as stored"
    elif normalization == "lightning":
        scale = f"scores / sqrt({a}): not absorbed (irrational; lightning does not depend on it)"
    else:
        raise InvalidInputError(f"{tensors.where}: the checkpoint's scores are divided by sqrt({a}), which is "
                                f"irrational, so its softmax point is not rational; inspect it with lightning, or "
                                "pass --score-scale none to inspect scores sqrt(a) times the checkpoint's")
    arch = Architecture((d, dd), (a,), tokens, normalization, heads, b, False,
                        layout == "gpt2" if causal is None else causal)
    names = [pre + s for s in variant]
    return Checkpoint(arch, point, layout, pre, {n: tensors.dtype(n) for n in names}, scale, dropped, zero)
