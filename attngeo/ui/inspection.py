"""``attngeo inspect``: trained attention layers, read from their checkpoint as they compute, and what is certified.

The command reads the layer (:func:`attngeo.model.checkpoint.load_checkpoint`: the layout
from the tensor names, the heads from ``config.json``, softmax with the checkpoint's own
score scale and its biases), refuses bad input before anything is written, then reports
per-head ranks, the certified local rank (Theorem C of docs/math.md §8 for softmax and
tied layers), the verdict ``regular``, the orbit's dimension and one head's fiber
(:func:`attngeo.geometry.loci.regularity.local_rank`), as a table, JSON or LaTeX. Every
default the user did not choose is said. ``--layer all`` inspects every layer, one
table row and one certificate each; each certificate binds the checkpoint (its hash and
the slices the point is read from: ``attngeo check CERT --weights FILE``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ..exceptions import InvalidInputError


def _options(args) -> dict:
    scale = None if args.score_scale == "auto" else ("1" if args.score_scale == "none" else args.score_scale)
    norm = "lightning" if args.lightning else ("softmax" if args.softmax else None)
    return dict(layout=args.layout, heads=args.heads, drop_bias=args.drop_bias, normalization=norm,
                tokens=args.tokens, causal=args.causal, residual=args.residual, score_scale=scale)


def _file_name(ck) -> str:
    """One certificate per layer: named by the tensors' prefix (unique in the file)."""
    stem = re.sub(r"[^A-Za-z0-9_-]+", "-", ck.prefix.strip(".")).strip("-")
    return (stem or "layer") + ".json"


def inspect_checkpoint(args, check_writable, require_memory) -> int:
    """Run ``attngeo inspect`` on parsed arguments (see :func:`attngeo.ui.cli.build_parser`).

    ``check_writable`` and ``require_memory`` are the command line's own refusals (passed in: the command line
    imports this module, not the other way round).

    Examples
    --------
    >>> import contextlib, io, os, tempfile
    >>> import numpy as np
    >>> from attngeo.model.weights import save_safetensors
    >>> from attngeo.ui.cli import main
    >>> path = os.path.join(tempfile.mkdtemp(), "layer.safetensors")
    >>> rng = np.random.default_rng(0)
    >>> save_safetensors(path, {"in_proj_weight": rng.standard_normal((12, 4)), "out_proj.weight": np.eye(4)}, "BF16")
    >>> with contextlib.redirect_stdout(out := io.StringIO()):
    ...     code = main(["inspect", "--weights", path, "--heads", "2", "--seed", "0"])
    >>> code, [line for line in out.getvalue().splitlines() if line.startswith(("local rank", "regular"))]
    (0, ['local rank     48  certified (Theorem C, all 2 groups separated: docs/math.md §8.3)', 'regular        yes: local rank = dim M'])
    """
    from .. import progress
    from ..geometry.certificate import make_folder
    from ..model.checkpoint import Tensors, layers, load_checkpoint

    every = args.layer == "all"
    options = _options(args)
    tensors = Tensors(args.weights)
    if every:
        found = layers(tensors, args.layout)
        checkpoints = []
        for k, (layout, prefix) in enumerate(found):  # every layer is read (and refused) before anything is written
            ck = load_checkpoint(tensors, **{**options, "layout": layout}, prefix=prefix)
            _refuse(args, ck, require_memory)
            checkpoints.append((layout, prefix))
            del ck
        if args.certificate:
            folder = Path(args.certificate)
            if folder.exists() and not folder.is_dir():
                raise InvalidInputError(f"--certificate {folder}: with --layer all it is a folder (one certificate "
                                        "per layer), and a file of that name exists")
            if not folder.parent.is_dir():
                raise InvalidInputError(f"--certificate {folder}: folder {folder.parent} does not exist; create it "
                                        "first")
    else:
        if args.certificate:
            try:
                check_writable(args.certificate)
            except InvalidInputError as exc:
                raise InvalidInputError(f"--certificate: {exc}") from None
        ck = load_checkpoint(tensors, **options, layer=args.layer, prefix=args.prefix)
        _refuse(args, ck, require_memory)
        checkpoints = [(ck.layout, ck.prefix)]
    # the phases are shown by the command, which runs this in a budgeted child (ui/cli.py, ui/budget.py)
    if not every:
        try:
            res = _inspect(args, ck, args.certificate)
        finally:
            progress.done()
        if args.json:
            print(json.dumps(_json(args, ck, res, args.certificate)))
        elif args.latex:
            print(rf"\[ {res.latex()} \]")
        else:
            for name, value in _rows(args, ck, res, args.certificate):
                print(f"{name:<14} {value}")
        return 0
    rows, records, head = [], [], None
    try:
        if args.certificate:
            make_folder(args.certificate)
        for k, (layout, prefix) in enumerate(checkpoints):  # one layer in memory at a time (LLaMA-7B: 42M weights)
            ck = load_checkpoint(tensors, **{**options, "layout": layout}, prefix=prefix)
            progress.context(f"layer {progress.bar(k, len(checkpoints))} {prefix} ")
            path = Path(args.certificate) / _file_name(ck) if args.certificate else None
            res = _inspect(args, ck, path)
            head = head or _checkpoint_rows(args, ck)
            records.append(_json(args, ck, res, path) if args.json else None)
            rows.append(_table_row(ck, res))
            del ck, res
    finally:
        progress.done()
    if args.json:
        print(json.dumps(records))
        return 0
    for name, value in _table(args, head, rows):
        print(value if name is None else f"{name:<14} {value}")
    return 0


def _refuse(args, ck, require_memory) -> None:
    """Refusals that need the layer: a head that does not exist, a generic dimension beyond --max-memory."""
    from ..geometry.loci.regularity import SOFTMAX_DIMENSION_PARAMETERS

    arch = ck.arch
    if not 1 <= args.head <= arch.heads[0]:
        raise InvalidInputError(f"--head {args.head}: the layer has heads 1..{arch.heads[0]}")
    if not arch.is_tied and (arch.normalization == "lightning" or arch.parameter_count <= SOFTMAX_DIMENSION_PARAMETERS):
        require_memory(arch, args.max_memory, " for its generic dimension")  # if the point does not decide dim M


def _inspect(args, ck, path):
    from .. import progress
    from ..geometry.loci.regularity import local_rank

    res = local_rank(ck.arch, ck.point, seed=args.seed, head=args.head,
                     dimension="always" if args.embed_dimension else True, scale=ck.scale, binding=ck.binding)
    if path:
        progress.phase("writing", str(path))
        res.save(path)
    return res


def _json(args, ck, res, path) -> dict:
    out = {"checkpoint": {**ck.summary(), **({"sha256": ck.binding["sha256"]} if ck.binding else {})},
           **res.summary()}
    out["fiber"] = {k: v for k, v in res.fiber.items() if k != "latex"}
    if args.latex:
        out["latex"] = res.latex()
    if path:
        out["certificate"] = str(path)
    return out


def _witness(res) -> str:
    w = res.lower_witness
    if "jacobian" in w:
        return "Jacobian minor at the point mod p"
    if "ball" in w:
        return "a Jacobian minor at the point whose ball determinant excludes 0"
    if "criterion" in w:
        groups = w["criterion"]["groups"]
        if res.exact and len(groups) == res.arch.kv_heads[0]:
            return f"Theorem C, all {len(groups)} groups separated: docs/math.md §8.3"
        return (f"Theorem C on groups {', '.join(map(str, groups))}: docs/math.md §8.4" if groups else
                "the output bias alone" if res.arch.biases else "no lower witness")
    heads = w["heads"]
    return (f"separated heads {', '.join(map(str, heads))}: docs/math.md §7.5" if len(heads) > 1 else
            f"head {heads[0]} alone" if heads else "no lower witness")


def _checkpoint_rows(args, ck) -> list[tuple[str, str]]:
    dtypes = ", ".join(sorted({dt for dt, _ in ck.tensors.values()}))
    where = f"layout {ck.layout}, prefix {ck.prefix!r}" + (f", layer {ck.layer}" if ck.layer is not None else "")
    rows = [("checkpoint", f"{args.weights} ({where}; {len(ck.tensors)} tensors, {dtypes})")]
    if ck.binding:
        rows.append(("sha256", ck.binding["sha256"]))
    rows.append(("config", ck.config or "none beside the weights"))
    if ck.dropped:
        rows.append(("biases", "dropped: " + ", ".join(ck.dropped) + " (the layer inspected is the checkpoint's "
                               "without them)"))
    elif ck.biases:
        zero = sum(1 for b, s in zip(ck.arch.blocks(), ck.sources) if b.name.startswith("b") and s.tensor is None)
        rows.append(("biases", f"in the model: {', '.join(ck.biases)}" + (
            f" ({zero} bias block{'s' if zero != 1 else ''} the checkpoint lacks: zero)" if zero else "")))
    else:
        rows.append(("biases", "none in the checkpoint"))
    rows.append(("score scale", str(ck.scale) + ("  (the lightning model's local rank does not depend on it)"
                                                 if ck.arch.normalization == "lightning" else "")))
    rows += [("default" if k == 0 else "", d) for k, d in enumerate(ck.defaults)]
    rows += [("not modelled" if k == 0 else "", n) for k, n in enumerate(ck.notes)]
    return rows


def _rows(args, ck, res, path) -> list[tuple[str, str]]:
    arch = res.arch
    rows = _checkpoint_rows(args, ck) + [("architecture", str(arch)), ("parameters", str(arch.parameter_count))]
    names = ["Q", "K", "A"] + (["U", "O"] if arch.value_ranks is not None else []) + ["V"]
    rows.append(("head ranks", "  ".join(f"{n:>4}" for n in names)))
    for r in res.ranks:
        d = r.to_dict()
        rows.append((f"  head {r.head}", "  ".join(f"{d['rank_' + n]:>4}" for n in names)))
    gen = res.generic
    how = ("the dimension certificate of attngeo dim, embedded" if res.dimension_certificate is not None else
           "Theorem C: this local rank is dim M, docs/math.md §8.3" if "criterion" in res.lower_witness else
           "local rank = parameters - orbit dimension at this point, docs/math.md §7.5")
    if gen[0] == gen[1]:
        rows.append(("dim M", f"{gen[0]}  certified ({how})"))
    else:
        rows.append(("dim M", f"{gen[0]} <= dim M <= {gen[1]}  (bounds: the local rank, parameters - orbit "
                              "dimension" + (", the dimension certificate" if res.dimension_certificate else "") + ")"))
        rows += [("", reason) for reason in res.reasons if "generic dimension" in reason or "dim M of" in reason]
    if res.exact:
        rows.append(("local rank", f"{res.lower}  certified ({_witness(res)})"))
    else:
        rows.append(("local rank", f"{res.lower} <= local rank <= {res.upper}  (bounds; lower: {_witness(res)})"))
        rows += [("", reason) for reason in res.reasons if reason.startswith(("bounds", "Theorem C"))]
    verdict = {True: "yes: local rank = dim M", False: "no: local rank < dim M (certified)",
               None: "undecided"}[res.regular]
    rows.append(("regular", verdict))
    flat = res.flat_count
    rows.append(("orbit", f"dimension {res.orbit}" + (f"; flat directions beyond it: {flat}" if flat is not None else "")))
    f = res.fiber
    what = {"generic": "one line (lambda A, V / lambda)", "rank1-swap": "two lines (rank-1 swap)",
            "rank1-parallel": "one line (rank-1 parallel)", "zero": "F = 0: {A = 0} u {V = 0}",
            "undecided": "not decided (the fiber theorem is for plain lightning heads)"}[f["case"]]
    dim = f"; dimension {f['dimension']} in its weights" if f["dimension"] is not None else ""
    rows.append((f"fiber head {f['head']}", f"{what}{dim}"))
    if res.flat and arch.parameter_count <= 100:
        for k, direction in enumerate(res.flat, 1):
            parts = ", ".join(f"d{n}_{direction['head']} = {M.tolist()}" for n, M in direction["blocks"])
            rows.append((f"  flat {k}", parts))
    rows.append(("time", f"{res.seconds:.2f} s"))
    if path:
        rows.append(("certificate", str(path) + _check_hint(ck, path, args)))
    return rows


def _check_hint(ck, path, args) -> str:
    binding = ck.binding
    if binding and "blocks" in binding:
        return f"  (bound to the checkpoint: attngeo check {path} --weights {args.weights})"
    if binding:
        return f"  (the point embedded; the {binding['format']} file bound by its SHA-256 only)"
    return ""


def _table_row(ck, res) -> str:
    lr = str(res.lower) if res.exact else f"{res.lower}..{res.upper}"
    gen = str(res.generic[0]) if res.generic[0] == res.generic[1] else f"{res.generic[0]}..{res.generic[1]}"
    verdict = {True: "yes", False: "no", None: "undecided"}[res.regular]
    return (f"{'' if ck.layer is None else ck.layer:>5}  {ck.prefix:<36} {ck.arch.parameter_count:>10} {lr:>10} "
            f"{gen:>10} {verdict:>9} {res.seconds:>6.1f} s")


def _table(args, head, rows) -> list[tuple[str | None, str]]:
    """``--layer all``: the checkpoint's rows once (the first layer's), then one line per layer."""
    out = [r for r in head if r[0] != "biases"] + [("layers", str(len(rows))), (None, "")]
    out.append((None, f"{'layer':>5}  {'prefix':<36} {'parameters':>10} {'local rank':>10} {'dim M':>10} "
                      f"{'regular':>9} {'time':>8}"))
    out += [(None, row) for row in rows]
    if args.certificate:
        out += [(None, ""), ("certificates", f"{str(args.certificate).rstrip('/')}/ ({len(rows)} files; attngeo check "
                                             f"{args.certificate} --weights {args.weights})")]
    return out
