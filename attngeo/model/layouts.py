"""Where each weight of an attention layer lives in the checkpoints people save, family by family.

A *layout* names the tensors of one self-attention layer (suffixes under one prefix,
e.g. ``encoder.layer.3.attention.``) and says how heads split them. Every block of
:class:`attngeo.model.architecture.Architecture` (``Q``, ``K``, ``U``, ``O`` and the biases,
in :meth:`~attngeo.model.architecture.Architecture.blocks` order) is then one
rectangle of one stored tensor, read as it is or transposed: a :class:`Source`. That
list of sources is what a certificate records, so a reader that knows nothing of
layouts rebuilds the point from the file (docs/certificates.md, kind ``local-rank``).

Orientations (read from each family's modelling code in Hugging Face transformers and
torch): a ``Linear`` stores ``[out, in]`` (``q = W x``), GPT-2's ``Conv1D`` stores
``[in, out]`` (``q = x W``, so its blocks are transposed). Head ``j`` owns features
``j a .. (j + 1) a - 1`` of the query projection; heads of a key-value group (LLaMA's
``num_key_value_heads``) are consecutive and share the group's ``K``, ``V`` features.
GPT-NeoX packs each head's ``q, k, v`` together (``query_key_value`` viewed as
``[h, 3, a]`` along its outputs).

Scores are ``s (K x + b_K)^T (Q x + b_Q)`` with ``s = 1/sqrt(a)`` except for T5 (``s = 1``:
Mesh TensorFlow folds it into the initialisation). What a family computes beyond the
weights and is *not* modelled (rotary position embeddings on ``q, k``, T5's relative
position bias, the LayerNorm around the residual sum) is listed in :attr:`Layout.notes`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..exceptions import InvalidInputError


@dataclass(frozen=True)
class Source:
    """One block of the point: rows ``rows[0]..rows[1]-1`` and columns ``columns[0]..columns[1]-1`` of a tensor.

    A 1-d tensor (a bias) is a column: its shape ``[n]`` reads as ``[n, 1]``. ``transposed`` means the block
    is the transpose of that rectangle. ``tensor`` None is a zero block (a bias the checkpoint does not have).

    Examples
    --------
    >>> Source("h.0.attn.c_attn.weight", (0, 8), (4, 6), True).to_json()
    {'tensor': 'h.0.attn.c_attn.weight', 'rows': [0, 8], 'columns': [4, 6], 'transposed': True}
    >>> Source(None, (0, 4), (0, 1)).to_json()
    {'zero': True}
    """

    tensor: str | None
    rows: tuple[int, int]
    columns: tuple[int, int]
    transposed: bool = False

    def to_json(self) -> dict:
        if self.tensor is None:
            return {"zero": True}
        return {"tensor": self.tensor, "rows": list(self.rows), "columns": list(self.columns),
                "transposed": self.transposed}

    def read(self, array):
        """The block from ``array`` (the tensor), as a 2-d view."""
        M = array.reshape(-1, 1) if array.ndim == 1 else array
        block = M[self.rows[0]:self.rows[1], self.columns[0]:self.columns[1]]
        return block.T if self.transposed else block


@dataclass(frozen=True)
class Layout:
    """One family's tensor names and conventions.

    ``variants`` lists alternative sets of weight suffixes (query, key, value, output; or a packed tensor and
    the output); ``biases`` the bias suffixes in the same roles. ``packing`` says how heads split them:
    ``linear`` (separate ``Linear``), ``conv1d`` (GPT-2), ``stacked`` (torch's ``in_proj``: ``[q; k; v]``),
    ``interleaved`` (GPT-NeoX: per head ``[q_j; k_j; v_j]``).

    Examples
    --------
    >>> L = LAYOUTS["gpt-neox"]
    >>> L.variants[0], L.packing, L.causal, L.scale
    (('query_key_value.weight', 'dense.weight'), 'interleaved', True, 'inverse-sqrt')
    """

    name: str
    families: str
    variants: tuple[tuple[str, ...], ...]
    biases: tuple[tuple[str, ...], ...]
    packing: str
    causal: bool
    scale: str  # "inverse-sqrt" (1/sqrt(a)) or "one"
    norm: str  # where the family's LayerNorm sits: "post" (after X + Y) or "pre" (on the layer's input)
    notes: tuple[str, ...] = ()
    heads_keys: tuple[str, ...] = ("num_attention_heads",)


_ROPE = "rotary position embeddings (RoPE) rotate q and k by token position: not modelled"
_LINEAR_BIAS = ("query.bias", "key.bias", "value.bias")

LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in (
    Layout("bert", "BERT, RoBERTa, XLM-R, ELECTRA",
           (("self.query.weight", "self.key.weight", "self.value.weight", "output.dense.weight"),),
           (("self.query.bias", "self.key.bias", "self.value.bias", "output.dense.bias"),),
           "linear", False, "inverse-sqrt", "post"),
    Layout("distilbert", "DistilBERT", (("q_lin.weight", "k_lin.weight", "v_lin.weight", "out_lin.weight"),),
           (("q_lin.bias", "k_lin.bias", "v_lin.bias", "out_lin.bias"),), "linear", False, "inverse-sqrt", "post",
           heads_keys=("n_heads",)),
    Layout("vit", "ViT, DeiT",
           (("attention.query.weight", "attention.key.weight", "attention.value.weight", "output.dense.weight"),),
           (("attention.query.bias", "attention.key.bias", "attention.value.bias", "output.dense.bias"),),
           "linear", False, "inverse-sqrt", "pre"),
    Layout("gpt2", "GPT-2", (("c_attn.weight", "c_proj.weight"),), (("c_attn.bias", "c_proj.bias"),),
           "conv1d", True, "inverse-sqrt", "pre", heads_keys=("n_head", "num_attention_heads")),
    Layout("gpt-neox", "GPT-NeoX, Pythia", (("query_key_value.weight", "dense.weight"),),
           (("query_key_value.bias", "dense.bias"),), "interleaved", True, "inverse-sqrt", "pre", (_ROPE,)),
    Layout("llama", "LLaMA, Mistral, Qwen",
           (("q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight"),),
           (("q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias"),), "linear", True, "inverse-sqrt", "pre",
           (_ROPE,)),
    Layout("qkv", "BART, OPT and other q_proj ... out_proj (or o_proj) names",
           (("q_proj.weight", "k_proj.weight", "v_proj.weight", "out_proj.weight"),
            ("q_proj.weight", "k_proj.weight", "v_proj.weight", "o_proj.weight")),
           (("q_proj.bias", "k_proj.bias", "v_proj.bias", "out_proj.bias"),
            ("q_proj.bias", "k_proj.bias", "v_proj.bias", "o_proj.bias")), "linear", False, "inverse-sqrt", "post"),
    Layout("t5", "T5", (("SelfAttention.q.weight", "SelfAttention.k.weight", "SelfAttention.v.weight",
                         "SelfAttention.o.weight"),), ((),), "linear", False, "one", "pre",
           ("T5's relative position bias added to the scores: not modelled",), heads_keys=("num_heads",)),
    Layout("torch-mha", "torch.nn.MultiheadAttention",
           (("in_proj_weight", "out_proj.weight"),
            ("q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight")),
           (("in_proj_bias", "out_proj.bias"), ("in_proj_bias", "out_proj.bias")), "stacked", False,
           "inverse-sqrt", "post", heads_keys=()),
)}

#: Tried in this order by ``--layout auto``; ``qkv`` only when no ``llama`` layer matched (it also reads ``o_proj``).
AUTO_ORDER = ("bert", "distilbert", "vit", "gpt2", "gpt-neox", "llama", "t5", "torch-mha", "qkv")
#: torch's extra key and value *tokens* (``add_bias_kv``): not biases of the projections, refused unless zero.
EXTRA_TOKENS = ("bias_k", "bias_v")


def suffix_match(name: str, suffix: str) -> bool:
    """Whether ``name`` is ``suffix`` or ends in ``.suffix``.

    Examples
    --------
    >>> suffix_match("h.0.attn.c_attn.weight", "c_attn.weight"), suffix_match("h.0.attn.xc_attn.weight", "c_attn.weight")
    (True, False)
    """
    return name == suffix or name.endswith("." + suffix)


def prefixes(names, suffixes) -> list[str]:
    """Prefixes ``P`` (``""`` or ending in ``.``) under which every suffix names a tensor.

    Examples
    --------
    >>> prefixes(["h.0.attn.c_attn.weight", "h.0.attn.c_proj.weight", "h.1.attn.c_attn.weight"],
    ...          ("c_attn.weight", "c_proj.weight"))
    ['h.0.attn.']
    """
    found = None
    for s in suffixes:
        here = {n[: len(n) - len(s)] for n in names if suffix_match(n, s)}
        found = here if found is None else found & here
    return sorted(found or ())


def layer_number(prefix: str) -> int | None:
    """The first number among the dot-separated parts of a prefix: ``encoder.layer.3.attention.`` is 3, and T5's
    ``encoder.block.3.layer.0.`` is block 3 (its ``layer.0`` is the block's self-attention sub-layer).

    Examples
    --------
    >>> layer_number("bert.encoder.layer.3.attention."), layer_number("encoder.block.3.layer.0."), layer_number("")
    (3, 3, None)
    """
    numbers = [int(part) for part in prefix.split(".") if part.isdigit()]
    return numbers[0] if numbers else None


#: Parts of a prefix that name cross-attention (keys and values from another sequence): not a self-attention layer.
CROSS = ("crossattention", "encoder_attn", "EncDecAttention", "cross_attn", "cross_attention")


def belongs(layout: Layout, prefix: str) -> bool:
    """Whether a prefix can hold a self-attention layer: cross-attention (GPT-2's ``crossattention``, BART's
    ``encoder_attn``, T5's ``EncDecAttention``) has the same tensor names but attends to another sequence.

    Examples
    --------
    >>> belongs(LAYOUTS["gpt2"], "h.0.attn."), belongs(LAYOUTS["gpt2"], "h.0.crossattention.")
    (True, False)
    >>> belongs(LAYOUTS["qkv"], "model.decoder.layers.0.encoder_attn.")
    False
    """
    return not set(prefix.split(".")) & set(CROSS)


@dataclass(frozen=True)
class Geometry:
    """The layer's sizes read from its tensors' shapes: widths, heads, key-value groups, head sizes.

    Examples
    --------
    >>> Geometry(768, 768, 12, 12, 64, 64).a
    64
    """

    d: int
    dd: int
    h: int
    g: int
    a: int
    b: int


def _need(cond: bool, name: str, shape, what: str, where: str) -> None:
    if not cond:
        raise InvalidInputError(f"tensor {name!r} of {where} has shape {list(shape)}; {what}")


def geometry(layout: Layout, names: dict, shapes: dict, heads: int, kv_heads: int | None,
             head_dim: int | None, where: str) -> Geometry:
    """Sizes from the shapes of the weight tensors (``names``: role -> tensor name), checked against each other.

    ``heads`` is given (config.json or ``--heads``); the key-value groups come from ``kv_heads`` or from the
    key projection's shape; ``head_dim`` (config.json) is checked against the query projection.

    Raises
    ------
    InvalidInputError
        A shape that does not split into ``heads`` heads, or tensors of one layer that disagree, naming the tensor.

    Examples
    --------
    LLaMA with 8 heads of 64 and 2 key-value heads at width 512:

    >>> L = LAYOUTS["llama"]
    >>> n = {"q": "q_proj.weight", "k": "k_proj.weight", "v": "v_proj.weight", "o": "o_proj.weight"}
    >>> s = {n["q"]: (512, 512), n["k"]: (128, 512), n["v"]: (128, 512), n["o"]: (512, 512)}
    >>> geometry(L, n, s, 8, None, None, "w")
    Geometry(d=512, dd=512, h=8, g=2, a=64, b=64)
    >>> geometry(L, n, s, 3, None, None, "w")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: tensor 'q_proj.weight' of w projects to 512 query features, which do not split into 3 heads
    """
    def shape(role):
        s = tuple(shapes[names[role]])
        _need(len(s) == 2, names[role], s, "a weight matrix is 2-dimensional", where)
        return s

    def split(total, parts, role, what):
        if total % parts or total == 0:
            raise InvalidInputError(f"tensor {names[role]!r} of {where} projects to {total} {what} features, which "
                                    f"do not split into {parts} heads")
        return total // parts

    o = shape("o")
    if layout.packing == "conv1d":
        qkv = shape("qkv")
        _need(qkv[1] == 3 * qkv[0], names["qkv"], qkv, "GPT-2's c_attn is a Conv1D of shape [d, 3d] "
              "(q, k, v side by side)", where)
        d = qkv[0]
        a = split(d, heads, "qkv", "query")
        g, b, dd = heads, a, o[1]
        _need(o[0] == d, names["o"], o, f"GPT-2's c_proj is [h b, d'] = [{d}, d']", where)
    elif layout.packing in ("stacked", "interleaved") and "qkv" in names:
        qkv = shape("qkv")
        _need(qkv[0] % 3 == 0, names["qkv"], qkv, "the packed projection has 3 h a rows (q, k, v)", where)
        d = qkv[1]
        a = split(qkv[0] // 3, heads, "qkv", "query")
        g, b = heads, a
        dd = o[0]
        _need(o[1] == heads * b, names["o"], o, f"the output projection is [d', h b] = [d', {heads * b}]", where)
    else:
        q, k, v = shape("q"), shape("k"), shape("v")
        d = q[1]
        a = split(q[0], heads, "q", "query")
        for role, s in (("k", k), ("v", v)):
            _need(s[1] == d, names[role], s, f"it must read the layer's width d = {d} (as {names['q']!r})", where)
        if kv_heads is None:
            _need(k[0] % a == 0 and heads % max(1, k[0] // a) == 0, names["k"], k,
                  f"key-value heads of size a = {a} must divide the {heads} heads", where)
            kv_heads = k[0] // a
        if kv_heads < 1 or heads % kv_heads:
            raise InvalidInputError(f"{where}: {kv_heads} key-value heads do not divide the {heads} heads")
        g = kv_heads
        _need(k[0] == g * a, names["k"], k, f"{g} key-value heads of size {a} need {g * a} rows", where)
        _need(v[0] % g == 0 and v[0] > 0, names["v"], v, f"the values split into {g} key-value heads", where)
        b = v[0] // g
        dd = o[0]
        _need(o[1] == heads * b, names["o"], o, f"the output projection is [d', h b] = [d', {heads * b}]", where)
    if head_dim is not None and head_dim != a:
        raise InvalidInputError(f"{where}: config.json gives head_dim = {head_dim}, but the tensors give heads of "
                                f"{a} query features ({heads} heads)")
    return Geometry(d, dd, heads, g, a, b)


def sources(layout: Layout, names: dict, geo: Geometry) -> dict:
    """Role -> list of :class:`Source` per head (``Q``, ``O``, ``bQ``) or per group (``K``, ``U``, ``bK``, ``bV``),
    and ``bO`` (one). Bias roles are present when ``names`` has them (a missing one is a zero block).

    Examples
    --------
    GPT-2 (a ``Conv1D``): head 2's query is columns 4..7 of ``c_attn``, transposed.

    >>> L = LAYOUTS["gpt2"]
    >>> s = sources(L, {"qkv": "c_attn.weight", "o": "c_proj.weight"}, Geometry(8, 8, 2, 2, 4, 4))
    >>> s["Q"][1].to_json()
    {'tensor': 'c_attn.weight', 'rows': [0, 8], 'columns': [4, 8], 'transposed': True}
    >>> s["U"][0].columns, s["O"][1].to_json()["rows"]
    ((16, 20), [4, 8])
    """
    d, dd, h, g, a, b = geo.d, geo.dd, geo.h, geo.g, geo.a, geo.b
    out: dict = {}

    def along(role, tensor, count, size, base, stride, other, axis, transposed=False):
        items = []
        for j in range(count):
            span = (base + j * stride, base + j * stride + size)
            items.append(Source(tensor, span, other, transposed) if axis == 0 else
                         Source(tensor, other, span, transposed))
        out[role] = items

    if layout.packing == "conv1d":  # [d, 3d]: q | k | v columns, transposed
        along("Q", names["qkv"], h, a, 0, a, (0, d), 1, True)
        along("K", names["qkv"], g, a, d, a, (0, d), 1, True)
        along("U", names["qkv"], g, b, 2 * d, b, (0, d), 1, True)
        along("O", names["o"], h, b, 0, b, (0, dd), 0, True)
    elif layout.packing == "interleaved" or (layout.packing == "stacked" and "qkv" in names):
        interleaved = layout.packing == "interleaved"
        step = 3 * a if interleaved else a
        q_rows, k_rows = 0, (a if interleaved else h * a)
        v_rows = 2 * a if interleaved else 2 * h * a
        along("Q", names["qkv"], h, a, q_rows, step, (0, d), 0)
        along("K", names["qkv"], g, a, k_rows, step, (0, d), 0)
        along("U", names["qkv"], g, b, v_rows, step, (0, d), 0)
        along("O", names["o"], h, b, 0, b, (0, dd), 1)
    else:
        along("Q", names["q"], h, a, 0, a, (0, d), 0)
        along("K", names["k"], g, a, 0, a, (0, d), 0)
        along("U", names["v"], g, b, 0, b, (0, d), 0)
        along("O", names["o"], h, b, 0, b, (0, dd), 1)
    column = (0, 1)
    if "bqkv" in names:  # one packed bias: the rows of the packed weight (GPT-2's columns)
        interleaved = layout.packing == "interleaved"
        offsets = (0, a, 2 * a) if interleaved else (0, h * a, 2 * h * a)
        strides = (3 * a,) * 3 if interleaved else (a, a, b)
        tensors = (names["bqkv"],) * 3
    else:
        offsets, strides = (0, 0, 0), (a, a, b)
        tensors = (names.get("bq"), names.get("bk"), names.get("bv"))
    along("bQ", tensors[0], h, a, offsets[0], strides[0], column, 0)
    along("bK", tensors[1], g, a, offsets[1], strides[1], column, 0)
    along("bV", tensors[2], g, b, offsets[2], strides[2], column, 0)
    out["bO"] = [Source(names.get("bo"), (0, dd), column)]
    return out


def roles(layout: Layout, variant: tuple[str, ...], prefix: str, present) -> dict:
    """Role -> full tensor name for one layer: weights always, biases when ``present(name)``.

    Examples
    --------
    >>> roles(LAYOUTS["gpt2"], LAYOUTS["gpt2"].variants[0], "h.0.attn.", lambda n: n.endswith("c_attn.bias"))
    {'qkv': 'h.0.attn.c_attn.weight', 'o': 'h.0.attn.c_proj.weight', 'bqkv': 'h.0.attn.c_attn.bias'}
    """
    if len(variant) == 2:
        names = {"qkv": prefix + variant[0], "o": prefix + variant[1]}
    else:
        names = dict(zip(("q", "k", "v", "o"), (prefix + s for s in variant)))
    biases = layout.biases[layout.variants.index(variant)]
    for role, suffix in zip(("bqkv", "bo") if len(biases) == 2 else ("bq", "bk", "bv", "bo"), biases):
        if present(prefix + suffix):
            names[role] = prefix + suffix
    return names
