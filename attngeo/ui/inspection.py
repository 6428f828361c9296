"""``attngeo inspect``: one trained attention layer, read from its checkpoint, and what is certified about it.

The command reads the layer (:func:`attngeo.model.checkpoint.load_checkpoint`),
refuses bad input before anything is written, then reports per-head ranks, the
certified generic dimension, certified bounds on the local rank, the verdict
``regular``, the orbit's dimension and one head's fiber
(:func:`attngeo.geometry.loci.regularity.local_rank`), as a table, JSON or LaTeX.
"""

from __future__ import annotations

import json

from ..exceptions import InvalidInputError


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
    ...     code = main(["inspect", "--weights", path, "--layout", "torch-mha", "--heads", "2", "--seed", "0"])
    >>> code, [line for line in out.getvalue().splitlines() if line.startswith(("local rank", "regular"))]
    (0, ['local rank     46  certified (separated heads 1, 2: docs/math.md §7.5)', 'regular        yes: local rank = dim M'])
    """
    from .. import progress
    from ..check import one_line
    from ..check.limits import MAX_SIZE
    from ..geometry.loci.regularity import local_rank

    from ..model.checkpoint import load_checkpoint

    if args.certificate:
        try:
            check_writable(args.certificate)
        except InvalidInputError as exc:
            raise InvalidInputError(f"--certificate: {exc}") from None
    ck = load_checkpoint(args.weights, args.layout, args.heads, layer=args.layer, prefix=args.prefix,
                         drop_bias=args.drop_bias, normalization="softmax" if args.softmax else "lightning",
                         tokens=args.tokens, causal=args.causal, score_scale=args.score_scale)
    arch = ck.arch
    if max(arch.widths + (arch.tokens,)) > MAX_SIZE:  # its certificate would be unusable: refused before the work
        raise InvalidInputError(f"{one_line(str(args.weights))[:120]}: the layer has width {max(arch.widths)} and {arch.tokens} "
                                f"tokens; the checker reads widths and tokens up to {MAX_SIZE} (docs/trust.md)")
    progress.phase("estimate", f"{arch}, {arch.parameter_count:,} parameters")
    if not 1 <= args.head <= arch.heads[0]:
        raise InvalidInputError(f"--head {args.head}: the layer has heads 1..{arch.heads[0]}")
    require_memory(arch, args.max_memory, " for its generic dimension")  # if the point does not decide dim M
    try:  # the phases are shown by the command, which runs this in a budgeted child (ui/cli.py, ui/budget.py)
        res = local_rank(arch, ck.point, seed=args.seed, head=args.head,
                         dimension="always" if args.embed_dimension else True)
        if args.certificate:
            progress.phase("writing", str(args.certificate))
            res.save(args.certificate)
    finally:
        progress.done()
    if args.json:
        out = {"checkpoint": {"weights": str(args.weights), **ck.summary()}, **res.summary()}
        out["fiber"] = {k: v for k, v in res.fiber.items() if k != "latex"}
        if args.latex:
            out["latex"] = res.latex()
        if args.certificate:
            out["certificate"] = str(args.certificate)
        print(json.dumps(out))
        return 0
    if args.latex:
        print(rf"\[ {res.latex()} \]")
        return 0
    for name, value in _rows(args, ck, res):
        print(f"{name:<14} {value}")
    return 0


def _rows(args, ck, res) -> list[tuple[str, str]]:
    arch = res.arch
    biases = [f"{n} dropped" for n in ck.dropped_biases] + [f"{n} zero" for n in ck.zero_biases]
    dtypes = ", ".join(sorted(set(ck.tensors.values())))
    rows = [("checkpoint", f"{args.weights} (layout {ck.layout}, prefix {ck.prefix!r}, {dtypes})"),
            ("biases", "; ".join(biases) if biases else "none"),
            ("score scale", ck.scale),
            ("architecture", str(arch)),
            ("parameters", str(arch.parameter_count))]
    names = ["Q", "K", "A"] + (["U", "O"] if arch.value_ranks is not None else []) + ["V"]
    rows.append(("head ranks", "  ".join(f"{n:>4}" for n in names)))
    for r in res.ranks:
        d = r.to_dict()
        rows.append((f"  head {r.head}", "  ".join(f"{d['rank_' + n]:>4}" for n in names)))
    gen = res.generic
    how = ("the dimension certificate of attngeo dim, embedded" if res.dimension_certificate is not None else
           "local rank = parameters - orbit dimension at this point, docs/math.md §7.5")
    if gen[0] == gen[1]:
        rows.append(("dim M", f"{gen[0]}  certified ({how})"))
    else:
        rows.append(("dim M", f"{gen[0]} <= dim M <= {gen[1]}  (bounds: the local rank, parameters - orbit "
                              "dimension" + (", the dimension certificate" if res.dimension_certificate else "") + ")"))
        rows += [("", reason) for reason in res.reasons if "generic dimension" in reason]
    w = res.lower_witness
    how = ("Jacobian minor at the point mod p" if "jacobian" in w else
           f"separated heads {', '.join(map(str, w['heads']))}: docs/math.md §7.5" if len(w["heads"]) > 1 else
           f"head {w['heads'][0]} alone" if w["heads"] else "no lower witness")
    if res.exact:
        rows.append(("local rank", f"{res.lower}  certified ({how})"))
    else:
        rows.append(("local rank", f"{res.lower} <= local rank <= {res.upper}  (bounds; lower: {how})"))
        rows += [("", reason) for reason in res.reasons if reason.startswith("bounds")]
    verdict = {True: "yes: local rank = dim M", False: "no: local rank < dim M (certified)",
               None: "undecided"}[res.regular]
    rows.append(("regular", verdict))
    flat = res.flat_count
    rows.append(("orbit", f"dimension {res.orbit}" + (f"; flat directions beyond it: {flat}" if flat is not None else "")))
    f = res.fiber
    what = {"generic": "one line (lambda A, V / lambda)", "rank1-swap": "two lines (rank-1 swap)",
            "rank1-parallel": "one line (rank-1 parallel)", "zero": "F = 0: {A = 0} u {V = 0}",
            "undecided": "not decided (the fiber theorem is for lightning heads)"}[f["case"]]
    dim = f"; dimension {f['dimension']} in its weights" if f["dimension"] is not None else ""
    rows.append((f"fiber head {f['head']}", f"{what}{dim}"))
    if res.flat and arch.parameter_count <= 100:
        for k, direction in enumerate(res.flat, 1):
            parts = ", ".join(f"d{n}_{direction['head']} = {M.tolist()}" for n, M in direction["blocks"])
            rows.append((f"  flat {k}", parts))
    if ck.dropped_biases:
        rows.append(("note", "the biases above were dropped: the layer inspected is the checkpoint's without them"))
    rows.append(("time", f"{res.seconds:.2f} s"))
    if args.certificate:
        rows.append(("certificate", str(args.certificate)))
    return rows
