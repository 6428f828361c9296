"""The ``attngeo`` command line.

Every error a user can cause ends in one line on stderr and exit code 2; the
checker's verdict "rejected" is exit code 1. Output files are written only as
regular files in folders that exist (:func:`attngeo.geometry.certificate.check_writable`),
checked before any computation starts.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from .. import __version__, progress, typesetting
from ..model.architecture import Architecture
from ..model.layouts import LAYOUTS
from ..geometry.certificate import check_writable, make_folder, write_text
from ..check import check_file, check_folder, one_line
from ..check.limits import DEFAULT_MEMORY_MB, DEFAULT_SECONDS
from ..exceptions import AttngeoError, CannotVerify, CertificateFormatError, CertificateRejected, InvalidInputError
from . import arguments, listings, output


def _shown(path) -> str:
    """A path as one short printable piece of a line (a hostile name may be long or hold newlines)."""
    text = one_line(os.fspath(path))
    return text if len(text) <= 120 else text[:117] + "..."


def _refused(exc: OSError, path=None) -> str:
    """The system's refusal of a path the user gave (too long, a link loop, not a folder, no permission), one line."""
    name = path if path is not None else exc.filename
    what = exc.strerror or type(exc).__name__
    if name is None:
        return f"{what}; check the paths given to the command"
    return f"cannot use {_shown(name)}: {what.lower() if what[:1].isupper() else what}; give another path"


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the command is, so that its clean-up (workers, engines) runs as it does for Ctrl-C."""


def _terminate(signum, frame):
    raise _Terminated()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = arguments.NEGATIVE  # "-3,3" is a (refused) value, not an unknown option

    def error(self, message):  # one line, exit 2, no usage dump
        self.exit(2, f"attngeo: error: {message} (see '{self.prog} --help')\n")


# the shared argument types (ui/arguments.py), under the names the subcommands use
_seed, _seconds, _megabytes = arguments.seed, arguments.seconds, arguments.megabytes
_positive = arguments.whole(1)


def _layer(text: str):
    """``--layer``: a layer number, or ``all``."""
    return "all" if text.strip() == "all" else arguments.whole(0)(text)


def _score_scale(text: str) -> str:
    """``--score-scale``: auto, none, or a positive exact value (refused now, not after the checkpoint is read).

    Examples
    --------
    >>> _score_scale("1/sqrt(96)"), _score_scale("none")
    ('1/sqrt(96)', 'none')
    >>> _score_scale("-1")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be auto, none or a positive exact number such as 1, 1/8 or 1/sqrt(96) (at most 12 digits each), got '-1'
    """
    from ..model.scale import ScoreScale

    if text in ("auto", "none"):
        return text
    if re.fullmatch(r"[0-9]{1,12}(/[0-9]{1,12})?(/sqrt\([0-9]{1,12}\))?", text.strip()):
        try:
            ScoreScale.parse(text)
            return text
        except InvalidInputError:
            pass
    raise argparse.ArgumentTypeError("must be auto, none or a positive exact number such as 1, 1/8 or 1/sqrt(96) "
                                     f"(at most 12 digits each), got {text!r}")


def _int_list(flag: str):
    """Comma-separated whole numbers >= 1, the refusal showing an example for ``flag``."""
    return arguments.integers(1, {"--ranks": "2,2", "--heads": "2 or 2,1", "--value-ranks": "1 or 1,2",
                                  "--kv-heads": "2 or 2,1"}.get(flag, "3,3,3"))


#: certify's terminal lines: a few findings per statement, each cut to a line (report.md has them all, whole)
FINDINGS_SHOWN, FINDING_WIDTH = 3, 160


def _default_memory() -> int:
    """Three quarters of the machine's memory, in MiB (a share that leaves room for everything else)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 3 // 4 // 2**20
    except (ValueError, OSError, AttributeError):  # pragma: no cover - no sysconf: no refusal by default
        return 2**40


def _add_memory(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-memory", type=_megabytes, default=_default_memory(), metavar="MiB",
                   help="memory budget of the command and of its Groebner engine (default: 3/4 of this machine's "
                        "memory): refused when estimated above it, stopped with one line when it grows beyond it")


def _add_progress(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action="store_true",
                   help="print the size estimate and the phases to stderr; on by default when stderr is a terminal")


def _add_architecture(p: argparse.ArgumentParser) -> None:
    p.add_argument("--widths", required=True, type=_int_list("--widths"), help="d_0,...,d_l, e.g. 3,3,3")
    p.add_argument("--ranks", required=True, type=_int_list("--ranks"), help="a_1,...,a_l, e.g. 2,2")
    p.add_argument("--tokens", type=_positive, default=2, help="number of tokens t (default 2)")
    p.add_argument("--heads", type=_int_list("--heads"), default=None,
                   help="heads per layer h_1,...,h_l, or one number for every layer (default 1)")
    p.add_argument("--value-ranks", type=_int_list("--value-ranks"), default=None,
                   help="value ranks b_i (V = O U with U b_i x d_(i-1)), or one number for every layer")
    p.add_argument("--residual", action="store_true", help="residual connections X + Y (equal widths)")
    p.add_argument("--causal", action="store_true", help="causal mask: token s reaches token j only when s <= j")
    p.add_argument("--kv-heads", type=_int_list("--kv-heads"), default=None,
                   help="key-value groups g_i per layer (grouped-query attention: h_i / g_i heads share K and U; "
                        "needs --value-ranks); default: every head its own")
    p.add_argument("--biases", action="store_true",
                   help="affine attention: query, key, value and output biases (as checkpoints compute)")


def _per_layer(values):
    """One value given on the command line applies to every layer (Architecture broadcasts an integer)."""
    return values if values is None or len(values) != 1 else values[0]


def _architecture(args, normalization: str = "lightning") -> Architecture:
    heads = 1 if args.heads is None else _per_layer(args.heads)  # never `or 1`: --heads 0 is refused, not one head
    arch = Architecture(args.widths, args.ranks, args.tokens, normalization, heads, _per_layer(args.value_ranks),
                        args.residual, args.causal, _per_layer(args.kv_heads), args.biases)
    arguments.check_value_ranks(arch)
    return arch


def _for_option(flag: str, check, path):
    """``check(path)``, its refusal naming the option the path came from."""
    try:
        return check(path)
    except InvalidInputError as exc:
        raise InvalidInputError(f"{flag}: {exc}") from None


def _require_memory(arch: Architecture, max_memory_mb: int, what: str = "") -> tuple[str, int]:
    """``(path, bytes)`` of ``certify_dimension``'s estimate; a refusal above ``--max-memory``."""
    from ..geometry.dimension.dense import estimate

    path, need = estimate(arch)
    if need > max_memory_mb * 2**20:
        raise InvalidInputError(f"{arch} needs about {progress.size(need)}{what} on the {path} path, above "
                                f"--max-memory {max_memory_mb} MiB; raise --max-memory or choose a smaller architecture")
    return path, need


def _check_certificate_path(args) -> None:
    """Refuse an unusable ``--certificate`` before the computation, not after it."""
    if args.certificate:
        _for_option("--certificate", check_writable, args.certificate)


def _save_and_print_json(result, args, summary: dict | None = None, latex: str | None = None) -> bool:
    """Write ``--certificate``; with ``--json`` print the summary (``result.summary()`` unless given), return True.

    ``latex`` (given with ``--latex``) goes into the JSON as ``latex`` rather than being dropped.
    """
    if args.certificate:
        result.save(args.certificate)
    if not args.json:
        return False
    out = summary if summary is not None else result.summary()
    if args.certificate:
        out["certificate"] = str(args.certificate)
    if latex is not None:
        out["latex"] = latex
    print(json.dumps(out))
    return True


# -- dim ------------------------------------------------------------------------------


def _discovered(arch) -> list:
    """Linear kernel fields nobody has named, when the bounds differ and the architecture is small enough."""
    from ..geometry.dimension.discovery import MAX_DEPTH, MAX_PARAMETERS, MAX_TOKENS, discover_fields

    if arch.normalization != "lightning" or arch.parameter_count > MAX_PARAMETERS or arch.depth > MAX_DEPTH \
            or arch.tokens > MAX_TOKENS:
        return []
    return discover_fields(arch)


def _upper_witness_text(cert) -> str:
    """How the upper bound was obtained, in words (the field minor, a tensor bound, or the composition of layers)."""
    uw = cert.upper_witness
    if uw.get("structured") == "criterion point":
        return (f"{cert.parameters} parameters - {uw['rank']}: per key-value group GL(a) x GL(b) (and the biases "
                "softmax cannot see, or lightning's mixing of heads) at the selector point, docs/math.md §8.3")
    if uw.get("structured") == "explicit kernel":
        return f"{cert.parameters} parameters - rank {uw['rank']} of the explicit kernel at a random point (docs/math.md §8.4)"
    if "field_rank" in uw:
        return f"{cert.parameters} parameters - field rank {uw['field_rank']}"
    if "flattening" in uw:
        return f"the {uw['flattening']} flattening of the symmetric tensor V (x) A has rank <= {uw['rank']}"
    if uw.get("ambient") == "composition":
        hidden = "" if not uw["inputs"] else " - " + " - ".join(f"{len(x)}^2" for x in uw["inputs"])
        return f"the layers' bounds {' + '.join(str(layer['upper']) for layer in uw['layers'])}{hidden}"
    return "dimension of the span of one layer's functions, linear in the symmetric tensor V (x) A"


def _families_text(names: list[str], limit: int = 8) -> str:
    """The kernel families, one per name while few; past ``limit``, one entry per kind with its count and range.

    A GPT-2 stack has two or three families per head (288 softmax, 432 lightning); listed one by one they fill
    a screen and hide the result.
    """
    if len(names) <= limit:
        return ", ".join(names)
    kinds: dict[str, list[str]] = {}
    for name in names:
        kind, _, index = name.partition("(")
        kinds.setdefault(kind, []).append(index.rstrip(")"))
    return ", ".join(f"{kind} x{len(idx)} ({idx[0]} .. {idx[-1]})" if len(idx) > 1 else f"{kind}({idx[0]})"
                     for kind, idx in kinds.items())


def _lower_witness_text(lw: dict) -> str:
    """How the lower bound was proved, in a few words, for each witness form."""
    ball = f"ball arithmetic, {lw.get('precision')} bits" if "precision" in lw else f"mod {lw.get('prime')}"
    if lw.get("structured") == "plain point":
        return (f"coefficient Jacobian at the plain point: {lw['blocks']} blocks of at most {lw['largest_block']} "
                f"columns, mod {lw['prime']}")
    if lw.get("structured") == "identity values":
        sizes = lw.get("blocks", [])
        return (f"block triangular Jacobian minor at V = I: {len(sizes)} blocks of at most "
                f"{max(sizes, default=0)} columns, {len(lw.get('inputs', []))} sparse inputs, {ball}")
    if lw.get("structured") == "stack point":
        inputs = lw.get("inputs", {})
        return (f"block triangular Jacobian minor at the stack point: {len(inputs)} tiny stacks' blocks, "
                f"{sum(len(v) for v in inputs.values())} inputs, {ball}")
    if lw.get("structured") == "criterion point":
        return (f"Theorem C at the selector point (docs/math.md §8.3): ranks of stacked O, Q, K, U mod "
                f"{lw['prime']}, groups {lw['groups'][0]}..{lw['groups'][-1]}" if lw["groups"] else
                "Theorem C's conditions fail at the selector point")
    if lw.get("structured") == "head point":
        return (f"coefficient Jacobian at the head point: {lw['blocks']} blocks of at most {lw['largest_block']} "
                f"columns after peeling, mod {lw['prime']}")
    if "precision" in lw:
        return f"Jacobian minor in {ball}, {len(lw.get('inputs', []))} inputs: determinant {lw.get('determinant')}"
    return f"Jacobian minor mod {lw['prime']}, {len(lw['inputs'])} inputs"


def _cmd_dim(args) -> int:
    from .. import progress
    from ..geometry.dimension.dense import certify_dimension

    arch = _architecture(args, "softmax" if args.softmax else "lightning")
    _check_certificate_path(args)
    path, need = _require_memory(arch, args.max_memory)
    if progress.wanted(args.progress):
        progress.enable()
        progress.phase("estimate", f"{path} path, about {progress.size(need)}")
    try:  # the estimate decided to start; the address-space limit holds while it runs (attngeo/ui/budget.py)
        from .budget import run_within

        cert = run_within(lambda: certify_dimension(arch, seed=args.seed, max_bytes=args.max_memory * 2**20),
                          args.max_memory, f"attngeo dim ({arch})", args.timeout)
        if args.certificate:
            progress.phase("writing", str(args.certificate))
    finally:
        progress.done()
    display = listings.dimension(cert) if args.latex else None
    if _save_and_print_json(cert, args, latex=display):
        return 0
    if display:
        print(display)
        return 0
    f = cert.formula
    lw, uw = cert.lower_witness, cert.upper_witness
    rows = [
        ("architecture", str(arch)),
        ("parameters", str(cert.parameters)),
        ("lower bound", f"{cert.lower}  ({_lower_witness_text(lw)})"),
        ("upper bound", f"{cert.upper}  ({_upper_witness_text(cert)})"),
    ]
    if cert.families:  # the criterion point and the explicit kernel use no named family
        rows.append(("families", _families_text(cert.families)))
    if cert.certified:
        rows.append(("dimension", f"{cert.dimension}  certified"))
    else:
        rows.append(("dimension", f"not certified: {cert.lower} <= dim M <= {cert.upper} (gap {cert.gap})"))
        rows += [("discovered", f"{f.latex()}  (a linear kernel field, verified over Q; the upper bound above "
                  "already includes it where it lowers the bound)") for f in _discovered(arch)]
    if f["value"] is None:
        rows.append(("[HMK] formula", f"none ({f['reason']})"))
    else:
        verdict = ""
        if f["applies"] and cert.certified:
            verdict = "  agrees" if f["value"] == cert.dimension else "  DISAGREES"
        applies = "applies" if f["applies"] else "does not apply"
        label = "[HMK] formula" if arch.is_plain else "naive count"
        if not arch.is_plain and cert.certified:
            verdict = "  agrees" if f["value"] == cert.dimension else f"  differs by {f['value'] - cert.dimension}"
        rows.append((label, f"{f['value']}  ({f['name']}; {applies}: {f['reason']}){verdict}"))
    rows.append(("time", f"{cert.seconds:.2f} s"))
    if args.certificate:
        rows.append(("certificate", str(args.certificate)))
    for name, value in rows:
        print(f"{name:<14} {value}")
    return 0


# -- fiber ----------------------------------------------------------------------------


def _cmd_fiber(args) -> int:
    import random

    arch = _architecture(args)
    _check_certificate_path(args)
    moved = ""
    if arch.depth > 1 or not arch.is_plain:  # virtual weights, else elimination in a gauge slice (docs/fibers.md §3-5)
        from ..geometry.fibers.virtual import fiber_at_point
        from ..model.weights import load_weights

        what = "deep networks" if arch.depth > 1 else "multi-head layers"
        if args.special:
            raise InvalidInputError(f"--special points are single-layer points; fibers of {what} are computed at "
                                    "--random SEED or at --weights FILE")
        point = load_weights(arch, args.weights) if args.weights else None
        result = fiber_at_point(arch, seed=args.random if args.random is not None else args.seed, point=point,
                                method=args.method, engine=args.engine, timeout=args.timeout)
        if point is not None and arch.is_plain and type(result).__name__ == "DeepFiber":  # several heads: not moved
            moved = ("note: elimination works in a gauge slice: the given weights were moved into it by the symmetry "
                     "group (the same function, the same fiber); the certificate is at the moved point")
    else:
        from ..geometry.fibers.layer import fiber, special_point
        from ..model.weights import load_weights

        if args.method != "auto":  # one layer has one argument (docs/fibers.md §1): nothing to choose
            raise InvalidInputError(f"--method {args.method} is for deep networks and several heads; a single layer's "
                                    "fiber is always found by factoring F (docs/fibers.md §1): drop --method")
        if args.weights:
            weights = load_weights(arch, args.weights)
        else:
            kind = args.special or "random"
            seed = args.random if args.random is not None else args.seed
            weights = special_point(arch, kind, random.Random(seed))
        result = fiber(arch, weights)
    if _save_and_print_json(result, args, latex=listings.fiber(result) if args.latex else None):
        return 0
    if args.latex:
        print(listings.fiber(result))
        if moved:
            print(f"% {moved}")
    else:
        print(result)
        if moved:
            print(moved)
        if args.certificate:
            print(f"certificate    {args.certificate}")
    return 0


# -- singular / implicit --------------------------------------------------------------


def _cmd_singular(args) -> int:
    from ..geometry.loci.strata import hmk_singular_ideal, stratify

    arch = _architecture(args)
    arch.require_plain("attngeo singular")
    _check_certificate_path(args)
    output.check(args)
    equations = None
    if args.max_degree is not None:  # decides strata the tangent criteria leave open (smooth ones only)
        from ..geometry.loci.graded import graded_equations

        equations = graded_equations(arch, args.max_degree, seed=args.seed)
    strata = stratify(arch, seed=args.seed, equations=equations)
    av = hmk_singular_ideal(arch, "AV", args.engine)
    qkv = hmk_singular_ideal(arch, "QKV", args.engine) if args.qkv or args.json else None
    if args.certificate:
        strata.save(args.certificate)
    listing = listings.singular(av, qkv, strata, args)
    data = {"architecture": arch.to_dict(), "strata": [st.row() for st in strata.strata],
            "edges": [list(e) for e in strata.graph.edges()], "equations": av.latex_parts(),
            "equations_qkv": qkv.latex_parts(), "disagreements_with_hmk": [st.name for st in strata.disagreements()],
            "seconds": round(strata.seconds, 3), **_extra(args, listing)} if args.json else None
    output.emit(args, listing, data)
    return 0


def _extra(args, listing) -> dict:
    """What ``--json`` adds to a record: the certificate's path, and with ``--latex`` the whole LaTeX output."""
    return {**({"certificate": str(args.certificate)} if args.certificate else {}),
            **({"latex": listing.text()} if args.latex else {})}


def _export(args, ideal, what: str) -> None:
    """``--export m2|singular``: the script of ``ideal``; summarized in comments when too long for a terminal."""
    comment = "-- " if args.export == "m2" else "// "
    degrees = sorted(set(ideal.degrees()))
    output.emit(args, listings.export(ideal.export(args.export), f"{what}: {len(ideal.gens)} generators of degrees "
                                      f"{degrees} in {len(ideal.variables)} variables", comment))


def _cmd_graded(args, arch) -> int:
    """``attngeo implicit --max-degree K``: I(M) degree by degree, without elimination (docs/math.md §7.4)."""
    from ..geometry.loci.graded import graded_equations, orbit_size

    eq = graded_equations(arch, args.max_degree, seed=args.seed)
    if args.certificate:
        eq.save(args.certificate)
    if args.export:  # every generator of degree <= K, not only the representatives
        _export(args, eq.ideal(), f"script of I(M) in degrees <= {args.max_degree} for {arch}")
        return 0
    listing = listings.graded(eq, args)
    data = {**eq.summary(), "representatives": [
        {"weight": list(w), "orbit": orbit_size(w, *arch.widths), "equations": [str(eq._poly(h)) for h in hs]}
        for w, hs in eq.representatives.items()], **_extra(args, listing)} if args.json else None
    output.emit(args, listing, data)
    return 0


def _cmd_whole(args, arch) -> int:
    """``attngeo implicit --whole``: the whole ideal at widths ``d,1``, ``a = 1`` (docs/math.md §7.9)."""
    from ..geometry.loci.rankone import rank_one_ideal

    ideal = rank_one_ideal(arch)
    if args.certificate:
        ideal.save(args.certificate)
    if args.export:
        _export(args, ideal.ideal(), f"script of I(M) for {arch} (the whole ideal, Theorem 7.9)")
        return 0
    listing = listings.whole(ideal, args)
    data = {**ideal.summary(), "generators": [str(g) for g in ideal.generators()],
            **_extra(args, listing)} if args.json else None
    output.emit(args, listing, data)
    return 0


def _cmd_implicit(args) -> int:
    from ..geometry.loci.implicit import implicit_equations

    arch = _architecture(args)
    arch.require_plain("attngeo implicit")
    _check_certificate_path(args)
    output.check(args)
    if args.whole:
        if args.max_degree is not None:
            raise InvalidInputError("--whole and --max-degree exclude each other: --whole gives every degree")
        return _cmd_whole(args, arch)
    if args.max_degree is not None:
        return _cmd_graded(args, arch)
    eq = implicit_equations(arch, engine=args.engine, timeout=args.timeout, seed=args.seed)
    if args.certificate:
        eq.save(args.certificate)
    if args.export:  # the same ideal as <G>, by its minimal generators
        _export(args, eq.minimal_ideal(), f"script of I(M) for {arch}")
        return 0
    listing = listings.implicit(eq, args)
    data = {**eq.summary(), "equations": eq.equations_latex(), "plain": [str(g) for g in eq.equations],
            "minimal_generators_latex": eq.latex_parts(), **_extra(args, listing)} if args.json else None
    output.emit(args, listing, data)
    return 0


# -- the budgets of fiber, singular, implicit and inspect --------------------------------


def _budgeted(args) -> int:
    """Estimate before any work (a refusal in one line, or the size shown as the first phase), then the command in
    a forked child under ``--max-memory`` and ``--timeout`` (``ui/estimate.py``, ``ui/budget.py``).

    The engine subprocesses the child starts get the same budget (``exact/engine.py``). ``dim`` runs its own
    estimate and child (``_cmd_dim``); ``check`` and ``sweep`` budget every file and task in workers of their own.
    """
    from ..exact import engine
    from . import estimate
    from .budget import run_within

    if args.run is _cmd_inspect:
        what = f"attngeo inspect {_shown(args.weights)}"
    else:
        what = f"attngeo {args.command} --widths {','.join(map(str, args.widths))}"
    seconds = getattr(args, "timeout", None)
    previous = engine.MEMORY_LIMIT_MB
    engine.set_memory_limit(args.max_memory)
    if progress.wanted(args.progress):
        progress.enable()
    try:
        if args.run is not _cmd_inspect:  # inspect's architecture is in its checkpoint: estimated once it is read
            _check_certificate_path(args)
            arch = _architecture(args)
            if args.run is _cmd_fiber:
                text, need = estimate.fiber(arch)
            elif args.run is _cmd_singular:
                text, need = estimate.singular(arch, args.max_degree)
            elif getattr(args, "whole", False):
                text, need = estimate.whole(arch)
            else:
                text, need = estimate.implicit(arch, args.max_degree)
            estimate.require(need, args.max_memory, what, text)
            progress.phase("estimate", f"{text}; about {progress.size(need)}")

        def work() -> int:
            with engine.Deadline(seconds, what):  # the whole command, not only its engine
                return args.run(args)

        return run_within(work, args.max_memory, what, seconds)
    finally:
        engine.set_memory_limit(previous)
        progress.done()


# -- inspect --------------------------------------------------------------------------


def _cmd_inspect(args) -> int:
    from .inspection import inspect_checkpoint

    return inspect_checkpoint(args, check_writable, _require_memory)


# -- check ----------------------------------------------------------------------------


def _verdict(result) -> dict:
    """One file's outcome: valid (with its claim), rejected or unusable (with the reason)."""
    if isinstance(result, CertificateRejected):
        return {"status": "rejected", "reason": str(result)}
    if isinstance(result, Exception):  # unreadable, or not verifiable on this machine
        return {"status": "unusable", "reason": str(result) or type(result).__name__}
    return {"status": "valid", "claim": result.claim}


def _cmd_check(args) -> int:
    output.check(args)
    target = Path(args.path)
    if args.weights is not None:
        try:
            regular = stat.S_ISREG(os.stat(args.weights).st_mode)
        except OSError as exc:
            raise CertificateFormatError(f"--weights: {_refused(exc, Path(args.weights))}") from None
        if not regular:
            raise CertificateFormatError(f"--weights {_shown(args.weights)} is not a regular file; give the "
                                         "checkpoint the certificate was made from")
    try:
        is_folder = stat.S_ISDIR(os.stat(target).st_mode)  # follows links: a loop or a too-long name refuses here
    except FileNotFoundError:
        raise CertificateFormatError(f"cannot read {_shown(target)}: no such file or folder") from None
    except OSError as exc:
        raise CertificateFormatError(_refused(exc, target)) from None
    if is_folder:
        results = check_folder(target, seconds=args.timeout, memory_mb=args.max_memory, weights=args.weights)
        if not results:
            raise CertificateFormatError(f"{target} holds no .json certificates; give a certificate or a folder")
    else:
        try:
            results = [(str(target), check_file(target, seconds=args.timeout, memory_mb=args.max_memory,
                                                weights=args.weights))]
        except AttngeoError as exc:
            results = [(str(target), exc)]
    files = [{"path": str(path), **_verdict(res)} for path, res in results]
    counts = {status: sum(f["status"] == status for f in files) for status in ("valid", "rejected", "unusable")}
    here = sum(isinstance(res, CannotVerify) for _, res in results)  # may be valid elsewhere (e.g. with msolve)
    output.emit(args, listings.check(files, counts, here), {"files": files, **counts})
    return 0 if counts["valid"] == len(files) else (1 if counts["rejected"] else 2)


# -- prove ----------------------------------------------------------------------------


def _cmd_prove(args) -> int:
    from ..geometry.certificate import write_json
    from ..theorems.allsizes import STATEMENTS, proved

    _check_certificate_path(args)
    proof = proved(args.name)
    if args.certificate:
        write_json(args.certificate, proof.certificate)
    summary = proof.summary()
    tex = listings.theorem(STATEMENTS[args.name], proof.claim, summary) if args.latex else None
    if args.json:
        print(json.dumps({**summary, **({"certificate": str(args.certificate)} if args.certificate else {}),
                          **({"latex": tex} if tex else {})}))
        return 0
    if tex:
        print(tex)
        return 0
    statement = STATEMENTS[args.name]
    formula = "; ".join(f"{f['value']}" + (f"  if {', '.join(f['when'])}" if f["when"] else "")
                        for f in summary["formula"])
    rows = [("theorem", summary["theorem"]), ("networks", statement.family_text),
            ("scope", f"{summary['scope']} (proved for each such size, not sampled)"),
            ("hypotheses", ", ".join(summary["hypotheses"]) + ", t >= 2"),
            ("formula", f"{statement.quantity_text} = {formula}"),
            ("pieces", f"{summary['pieces']} (a case split of the hypotheses, one "
                       f"{'witness' if 'argument' in summary else 'pattern point'} each)"),
            ("blocks", f"{summary['blocks']['lower']} Jacobian, {summary['blocks']['upper']} field block types")
            if "blocks" in summary else
            ("proof", f"{statement.method}, " + (f"lemmas: {', '.join(summary['lemmas'])}" if "lemmas" in summary else
                                                 f"the witness points' shifts: {', '.join(summary['shifts'])}")),
            ("checked", proof.claim), ("time", f"{summary['seconds']:.2f} s to prove, "
                                               f"{summary['check_seconds']:.2f} s to check")]
    if args.certificate:
        rows.append(("certificate", str(args.certificate)))
    for name, value in rows:
        print(f"{name:<12} {value}")
    return 0


# -- certify --------------------------------------------------------------------------


def _proofs_folder(given: str | None) -> Path:
    """``--proofs DIR``, else the proof scripts of this attngeo: ``attngeo/proofs`` when installed from a wheel
    (pyproject ships ``proofs/`` there), the checkout's top-level ``proofs/`` otherwise (editable or PYTHONPATH).

    Found beside the imported package, never through the import system or the working folder: a worktree must
    run its own scripts, not those of another checkout installed in editable mode, nor a stale ``./proofs``.
    """
    package = Path(__file__).resolve().parents[1]
    candidates = [Path(given)] if given else [package / "proofs", package.parent / "proofs"]
    for folder in candidates:
        if folder.is_dir() and list(folder.glob("*.py")):
            return folder
    where = " or ".join(str(c) for c in candidates)
    raise CertificateFormatError(f"no proof scripts in {where}; reinstall attngeo (the wheel ships them in "
                                 "attngeo/proofs) or pass --proofs DIR")


def _progress(k: int, n: int, width: int = 20) -> str:
    return progress.bar(k, n, width)


def _outcome_json(o) -> dict:
    """One statement's outcome in ``certify --json``: its verdict and each claim's, as the report has them."""
    return {"name": o.statement.name, "script": o.statement.script,
            "status": "missing" if o.missing else o.label, "range": None if o.missing else o.verdict,
            "exit_code": o.exit_code,
            "seconds": round(o.seconds, 3), "cpu_seconds": None if o.cpu is None else round(o.cpu, 3),
            "grid": o.result.get("grid"), "certificates": o.certificates, "claims": o.parts,
            "summary": o.summary, "findings": o.findings, "notes": o.notes, "failures": [] if o.ok else o.failures,
            **({"all_sizes": o.proved or None, "all_sizes_failure": o.proof_failure or None}
               if o.statement.all_sizes else {})}


def _cmd_sweep(args) -> int:
    from .sweep import from_toml, grid, sweep

    if args.config:
        archs, options = from_toml(args.config)
        what = options["what"] if args.what is None else args.what
    else:
        if args.widths is None:
            raise InvalidInputError("give the grid with --widths (and --layers, --ranks, --tokens) or --config FILE")
        archs = grid(args.widths, args.layers, args.ranks, args.tokens, "softmax" if args.softmax else "lightning",
                     args.heads, args.residual, args.causal)
        arguments.check_grid(archs, f"--widths {','.join(map(str, args.widths))} --ranks {','.join(map(str, args.ranks))}")
        what = args.what or "dimension"
    rows = sweep(archs, args.out, what=what, workers=args.workers, scheduler=args.scheduler, seed=args.seed,
                 seconds=args.timeout, memory_mb=args.max_memory, resume=args.resume,
                 progress=sys.stderr if sys.stderr.isatty() else None)
    failed = [r for r in rows if r["status"] != "done"]
    print(f"{len(rows)} tasks: {len(rows) - len(failed)} done, {len(failed)} failed; table {args.out}/results.csv, "
          f"rows {args.out}/results.jsonl, certificates {args.out}/certificates/")
    for r in failed:
        shown = {k: ",".join(map(str, r[k])) for k in ("widths", "ranks")}
        print(f"  failed: widths {shown['widths']}, ranks {shown['ranks']}, t={r['tokens']}: "
              f"{one_line(r.get('error', ''))}")
    return 0 if not failed else 1


def _cmd_plot(args) -> int:
    from .plot import plot

    def warn(message):
        print(f"attngeo: warning: {message}", file=sys.stderr)

    for path in plot(args.folder, args.out, args.format, args.x, args.y, warn=warn):
        print(path)
    return 0


def _prove_all_sizes(s, folder: Path, say) -> tuple[str, str]:
    """``attngeo prove`` for a registered statement: write ``all-sizes.json``, return (claim, failure)."""
    from ..geometry.certificate import write_json
    from ..theorems.allsizes import proved

    try:
        proof = proved(s.name)
    except (AttngeoError, CertificateRejected) as exc:
        say(f"  theorem (all sizes): FAILED: {exc}")
        return "", str(exc)
    write_json(folder / "all-sizes.json", proof.certificate)
    summary = proof.summary()
    say(f"  theorem: proved for {summary['scope']} ({summary['pieces']} pieces, checked in "
        f"{proof.check_seconds:.1f} s)")
    return proof.claim, ""


def _cmd_certify(args) -> int:
    from ..theorems.report import SHORT, Outcome, write_reports
    from ..theorems.registry import get as statement, order

    # with --json, stdout is the one JSON object: the progress goes to stderr
    say = functools.partial(print, file=sys.stderr) if args.json else print
    if args.pdf and typesetting.missing("pdflatex"):  # refused before minutes of proofs, not after
        raise InvalidInputError(f"--pdf: {typesetting.missing('pdflatex')}; or drop --pdf and typeset "
                                "report.tex elsewhere")
    folder = _proofs_folder(args.proofs)
    names = [statement(args.only).name] if args.only else order()
    # every folder the run writes into, made (or refused) before anything runs
    out = _for_option("--out", make_folder, Path(args.out))
    for sub in ["logs"] + [statement(n).script for n in names]:
        _for_option("--out", make_folder, out / sub)
    registered = {statement(n).script for n in order()}
    extra = [] if args.only else sorted(p.stem for p in folder.glob("*.py") if p.stem not in registered)
    for stem in extra:
        say(f"note: proofs/{stem}.py is not in the theorem registry (attngeo/theorems/registry.py); it is not run")
    from ..theorems.runner import JOBS, run_statements

    jobs = args.jobs or JOBS
    outcomes, begin = {}, time.perf_counter()

    def finished(s, code, seconds, log, k, n, cpu):  # as each script ends (several run at once: theorems/runner.py)
        if not (folder / f"{s.script}.py").exists():
            o = Outcome(s, 2, 0.0, "", 0, missing=True)
            say(f"{_progress(k, n)}  {s.name}: FAILED: proofs/{s.script}.py is missing", flush=True)
        else:
            proved, failure = _prove_all_sizes(s, out / s.script, say) if s.all_sizes else ("", "")
            o = Outcome(s, code, seconds, log, len(list((out / s.script).glob("*.json"))), proved=proved,
                        proof_failure=failure, cpu=cpu)
            write_text(out / "logs" / f"{s.script}.txt", log)
            say(f"{_progress(k, n)}  {s.name}: proofs/{s.script}.py  {o.headline}  ({o.seconds:.1f} s, CPU {cpu:.1f} s)",
                flush=True)
            for f in o.findings[:FINDINGS_SHOWN]:  # every finding in full: report.md and the script's log
                say(f"  finding: {f if len(f) <= FINDING_WIDTH else f[:FINDING_WIDTH - 1] + '…'}")
            if len(o.findings) > FINDINGS_SHOWN:
                say(f"  ... {len(o.findings) - FINDINGS_SHOWN} more findings in report.md")
        outcomes[s.name] = o

    scripts = "proof script" if len(names) == 1 else "proof scripts"
    say(f"{_progress(0, len(names))}  running {len(names)} {scripts}, {min(jobs, len(names))} at a time ...", flush=True)
    run_statements(names, folder, out, finished, jobs=jobs, options=("--full",) if args.full else ())
    outcomes = [outcomes[name] for name in names]
    total = time.perf_counter() - begin
    say(f"{_progress(len(names), len(names))}  done in {total:.1f} s")
    md, tex = write_reports(outcomes, out, total)
    pdf = typesetting.pdf(tex) if args.pdf else None  # pdflatex as often as the document asks (longtable)
    if args.json:
        statements = [_outcome_json(o) for o in outcomes]
        counts = dict(Counter(st["status"] for st in statements))
        print(json.dumps({"statements": statements, "counts": counts, "seconds": round(total, 3), "out": str(out),
                          "reports": [str(md), str(tex)] + ([str(pdf)] if pdf else [])}))
    else:
        print("\nsummary")
        for o in outcomes:
            word = SHORT[o.label] if o.ok else f"FAILED (exit {o.exit_code})"
            # a theorem is proved for every size in its hypotheses; its script's outcome is about a range
            grid = o.grid or "no grid stated"
            scope = (f"proved for {o.theorem.scope()}, t >= 2 (report.md); its script's range: {SHORT[o.verdict]}, "
                     f"{grid}" if o.label == "proved" and o.theorem else grid)
            print(f"  {o.statement.name:<26} {word:<12} {o.seconds:7.1f} s wall {o.cpu or 0:7.1f} s CPU  {scope}")
        print(f"certificates in {out}/ ; report {md} and {tex}" + (f" and {pdf}" if pdf else "")
              + f" ; re-check them with: attngeo check {out}")
    return 0 if all(o.ok for o in outcomes) else 1


def build_parser() -> argparse.ArgumentParser:
    """The ``attngeo`` argument parser: ``dim``, ``fiber``, ``singular``, ``implicit``, ``inspect``, ``check``, ``certify``.

    A malformed option ends in one line on stderr and exit code 2, without the usage dump.

    Examples
    --------
    >>> import contextlib, sys
    >>> from attngeo.ui.cli import build_parser
    >>> args = build_parser().parse_args(["dim", "--widths", "3,3", "--ranks", "2"])
    >>> args.widths, args.ranks, args.tokens, args.softmax
    ((3, 3), (2,), 2, False)
    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     build_parser().parse_args(["dim", "--widths", "3,x", "--ranks", "2"])
    Traceback (most recent call last):
    ...
    SystemExit: 2
    >>> with contextlib.redirect_stderr(sys.stdout), contextlib.suppress(SystemExit):
    ...     build_parser().parse_args(["check", "c.json", "--timeout", "nan"])
    attngeo: error: argument --timeout: must be a number of seconds > 0, got 'nan' (see 'attngeo check --help')
    """
    parser = _Parser(prog="attngeo", description="Certified geometry of self-attention networks.")
    parser.add_argument("--version", action="version", version=f"attngeo {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    p = sub.add_parser("dim", help="certified dimension of the neuromanifold")
    _add_architecture(p)
    p.add_argument("--softmax", action="store_true",
                   help="softmax-normalized attention (lower bound in ball arithmetic)")
    p.add_argument("--latex", action="store_true", help="print the result as LaTeX")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")
    p.add_argument("--seed", type=_seed, default=None, help="seed for the random point, inputs and prime")
    p.add_argument("--max-memory", type=_megabytes, default=_default_memory(), metavar="MiB",
                   help="refuse when the estimated peak memory is above this, and stop the computation if it "
                        "grows beyond it (default: 3/4 of this machine's memory)")
    p.add_argument("--timeout", type=_seconds, default=None,
                   help="seconds the computation may take; past them it is stopped in one line (default: no limit)")
    p.add_argument("--progress", action="store_true",
                   help="print the phases (point, Jacobian, elimination, upper bound, writing) to stderr; "
                        "on by default when stderr is a terminal")
    p.set_defaults(run=_cmd_dim)

    p = sub.add_parser("fiber", help="the complete fiber through a point (one layer) or at a gauge point (deep)")
    _add_architecture(p)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--random", type=_seed, metavar="SEED", help="a random point from SEED")
    which.add_argument("--weights", metavar="FILE", help="JSON weights (integers, 'p/q' or decimals)")
    which.add_argument("--special", choices=["zero", "rank1-swap", "rank1-parallel"], help="a special point")
    p.add_argument("--seed", type=_seed, default=0, help="seed for the vectors of a --special point (default 0)")
    p.add_argument("--engine", default="auto", choices=["auto", "msolve", "singular", "flint", "sympy"],
                   help="Groebner engine for deep networks (default: msolve when installed)")
    p.add_argument("--method", default="auto", choices=["auto", "virtual", "groebner"],
                   help="deep networks: peel virtual weights where the hypotheses hold (docs/fibers.md §5), else "
                        "eliminate (auto, the default); or force one of them")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--latex", action="store_true", help="print the components in LaTeX")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")
    p.add_argument("--timeout", type=_seconds, default=600.0,
                   help="seconds the whole command may take, elimination included (default 600)")
    _add_memory(p)
    _add_progress(p)
    p.set_defaults(run=_cmd_fiber)

    engines = ["auto", "msolve", "singular", "flint", "sympy"]
    p = sub.add_parser("singular", help="singular locus of a single layer: the ideal and the certified strata")
    _add_architecture(p)
    p.add_argument("--latex", action="store_true", help="print the ideal and the strata table in LaTeX")
    p.add_argument("--json", action="store_true", help="print one JSON object (strata, equations)")
    p.add_argument("--qkv", action="store_true", help="also print the ideal pulled back to (Q, K, V)")
    p.add_argument("--engine", default="auto", choices=engines, help="Groebner engine (default: msolve when installed)")
    p.add_argument("--seed", type=_seed, default=0, help="seed for the stratum points (default 0)")
    p.add_argument("--certificate", metavar="FILE", help="write the strata certificate to FILE")
    p.add_argument("--timeout", type=_seconds, default=600.0, help="seconds the whole command may take (default 600)")
    p.add_argument("--max-degree", type=_positive, default=None, metavar="K",
                   help="decide strata the tangent criteria leave open with the implicit equations of degree <= K "
                        "(smooth when their Jacobian has rank codim M; docs/singular.md §8)")
    output.add_options(p, "generator")
    _add_memory(p)
    _add_progress(p)
    p.set_defaults(run=_cmd_singular)

    p = sub.add_parser("implicit", help="implicit equations of a small single-layer neuromanifold")
    _add_architecture(p)
    p.add_argument("--latex", action="store_true", help="print the equations in LaTeX")
    p.add_argument("--json", action="store_true", help="print one JSON object (equations as LaTeX strings)")
    p.add_argument("--engine", default="auto", choices=engines,  # implicit_equations' rule (docs/engines.md)
                   help="Groebner engine (default auto: Singular when installed, else msolve; --json names the one used)")
    p.add_argument("--timeout", type=_seconds, default=600.0,
                   help="seconds the whole command may take, elimination included (default 600)")
    p.add_argument("--seed", type=_seed, default=0, help="seed for the evaluation points (default 0)")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")
    p.add_argument("--export", choices=("m2", "singular"),
                   help="print a Macaulay2 or Singular script that rebuilds the ring and the minimal generators "
                        "and prints a Groebner basis (Ideal.export; variables c_(k,p,m,n) in Macaulay2); with "
                        "--max-degree, the generators of degree <= K")
    p.add_argument("--max-degree", type=_positive, default=None, metavar="K",
                   help="I(M) in degrees <= K degree by degree, without elimination: certified dimensions and "
                        "minimal generators (docs/math.md §7.4)")
    p.add_argument("--whole", action="store_true",
                   help="the whole ideal for widths d,1 and rank 1, d <= 7: its minimal generators (quadrics "
                        "and cubics) written out by Theorem 7.9, no elimination (docs/math.md §7.9)")
    output.add_options(p, "generator (or line of an --export script)")
    _add_memory(p)
    _add_progress(p)
    p.set_defaults(run=_cmd_implicit)

    p = sub.add_parser("inspect", help="trained attention layers from a checkpoint, as they compute: head ranks, "
                                       "dim M, the certified local rank, regularity, the orbit and one head's fiber")
    p.add_argument("--weights", required=True, metavar="FILE",
                   help="the checkpoint: .safetensors (F64/F32/F16/BF16), .npz, a torch state_dict (needs torch) or "
                        ".onnx (needs onnx); a config.json beside it gives heads, key-value heads and the scale")
    p.add_argument("--layout", default="auto", choices=["auto", *LAYOUTS],
                   help="auto (default): from the tensor names. bert: encoder.layer.N.attention.self.query...; "
                        "distilbert: q_lin...; vit: attention.attention.query...; gpt2: attn.c_attn/c_proj; "
                        "gpt-neox: query_key_value; llama: q_proj...o_proj (grouped-query attention); qkv: q_proj... "
                        "out_proj; t5: SelfAttention.q...; torch-mha: in_proj_weight, out_proj")
    p.add_argument("--heads", type=_positive, default=None,
                   help="the number of heads the layer was trained with (default: from config.json; a contradiction "
                        "is refused)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--layer", type=_layer, metavar="N|all",
                       help="the layer whose tensor names contain N (whole-model files), or all: every layer, one "
                            "table row and one certificate each (--certificate is then a folder)")
    where.add_argument("--prefix", metavar="P", help="the layer whose tensor names start with P, e.g. h.3.attn.")
    p.add_argument("--drop-bias", action="store_true",
                   help="inspect the layer without its biases (default: kept, as the layer computes; said in the "
                        "report)")
    norm = p.add_mutually_exclusive_group()
    norm.add_argument("--softmax", action="store_true", help="the softmax layer as it computes (the default)")
    norm.add_argument("--lightning", action="store_true", help="the lightning model (scores not normalized)")
    p.add_argument("--tokens", type=_positive, default=None, help="tokens t of the architecture (default 2)")
    p.add_argument("--causal", action=argparse.BooleanOptionalAction, default=None,
                   help="the causal mask (default: the family's: on for gpt2, gpt-neox, llama, T5's decoder)")
    p.add_argument("--residual", action="store_true",
                   help="the layer maps X to X + Y (as dim --residual); the family's LayerNorm is not modelled")
    p.add_argument("--score-scale", type=_score_scale, default="auto", metavar="S",
                   help="the scores' factor, exactly: auto (default: the family's 1/sqrt(a), T5's 1, config.json's), "
                        "none (1), or a value such as 1/8 or 1/sqrt(96)")
    p.add_argument("--head", type=_positive, default=1, help="the head whose fiber is reported (default 1)")
    p.add_argument("--embed-dimension", action="store_true",
                   help="also certify dim M as attngeo dim does and embed it (by default only when the point itself "
                        "does not decide dim M)")
    p.add_argument("--json", action="store_true", help="print one JSON object (with --layer all: a list)")
    p.add_argument("--latex", action="store_true", help="print the report in LaTeX")
    p.add_argument("--certificate", metavar="FILE",
                   help="write the local-rank certificate to FILE (with --layer all: a folder, one file per layer); "
                        "it binds the checkpoint: attngeo check FILE --weights WEIGHTS")
    p.add_argument("--seed", type=_seed, default=0, help="seed for the prime and the inputs (default 0)")
    p.add_argument("--max-memory", type=_megabytes, default=_default_memory(), metavar="MiB",
                   help="refuse when the estimated peak memory is above this (default: 3/4 of this machine's memory)")
    p.add_argument("--timeout", type=_seconds, default=None,
                   help="seconds the whole command may take; past them it is stopped in one line (default: no limit)")
    p.add_argument("--progress", action="store_true", help="print the phases to stderr (a bar with --layer all)")
    p.set_defaults(run=_cmd_inspect)

    p = sub.add_parser("check", help="re-verify a certificate file or every certificate in a folder")
    p.add_argument("path", help="certificate .json or a folder of them")
    p.add_argument("--weights", metavar="FILE",
                   help="the checkpoint a local-rank certificate of attngeo inspect is bound to: its point is read "
                        "from it, and another file is rejected")
    p.add_argument("--json", action="store_true", help="print one JSON object: every file's status and the counts")
    p.add_argument("--timeout", type=_seconds, default=DEFAULT_SECONDS, metavar="SECONDS",
                   help=f"time budget of each file's check (default {DEFAULT_SECONDS:g}); a slower file is unusable")
    p.add_argument("--max-memory", type=_megabytes, default=DEFAULT_MEMORY_MB, metavar="MiB",
                   help=f"address-space budget of each file's check (default {DEFAULT_MEMORY_MB})")
    output.add_options(p, "file's line")
    p.set_defaults(run=_cmd_check)

    p = sub.add_parser("sweep", help="one question over a grid of architectures, resumable (local or Dask)")
    p.add_argument("--widths", type=arguments.grid_values, help="equal widths d: a range 3..6, a list 3,4 or one number")
    p.add_argument("--layers", type=arguments.grid_values, default=[1], help="numbers of layers l (default 1)")
    p.add_argument("--ranks", type=arguments.grid_values, default=[1], help="equal ranks a <= d (default 1)")
    p.add_argument("--tokens", type=arguments.grid_values, default=[2], help="token counts t (default 2)")
    p.add_argument("--softmax", action="store_true", help="softmax-normalized attention")
    p.add_argument("--heads", type=arguments.grid_values, default=[1],
                   help="heads per layer h (every layer): a range 1..4, a list or one number")
    p.add_argument("--residual", action="store_true", help="residual connections in every architecture")
    p.add_argument("--causal", action="store_true", help="a causal mask in every architecture")
    p.add_argument("--config", metavar="FILE", help="the grid in a TOML file instead of the options above")
    p.add_argument("--what", choices=("dimension", "fiber", "singular", "implicit"), default=None,
                   help="the question per architecture (default dimension; the others for single layers)")
    p.add_argument("--out", default="sweep", help="output folder (default ./sweep)")
    p.add_argument("--workers", type=_positive, default=2, help="local worker processes (default 2)")
    p.add_argument("--scheduler", metavar="ADDRESS", help="a Dask scheduler (tcp://host:port) instead of local processes")
    p.add_argument("--resume", action="store_true", help="continue a sweep in --out (keeps every re-checked result)")
    p.add_argument("--timeout", type=_seconds, default=600.0, help="seconds per task (default 600)")
    p.add_argument("--max-memory", type=_megabytes, default=4096, metavar="MiB", help="memory per task (default 4096)")
    p.add_argument("--seed", type=_seed, default=0, help="seed of every task (default 0)")
    p.set_defaults(run=_cmd_sweep)

    p = sub.add_parser("plot", help="figures of a sweep: dimension vs width, defect heatmap, time vs parameters")
    p.add_argument("folder", help="the --out folder of attngeo sweep")
    p.add_argument("--out", help="folder for the figures (default: the sweep folder)")
    p.add_argument("--format", choices=("png", "pdf"), default="png")
    p.add_argument("--x", default="width", choices=("width", "layers", "rank", "tokens", "heads"),
                   help="x axis of the dimension plot and of the defect heatmap (default width)")
    p.add_argument("--y", default="layers", choices=("width", "layers", "rank", "tokens", "heads"),
                   help="y axis of the defect heatmap (default layers)")
    p.set_defaults(run=_cmd_plot)

    p = sub.add_parser("prove", help="prove a statement for all sizes (a dimension formula, or the generic deep fiber); "
                                      "the checker verifies the certificate")
    p.add_argument("name", help="single-layer-dimension, multihead-layer-dimension, deep-dimension, deep-fibers or softmax-criterion")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--latex", action="store_true", help="print the theorem in LaTeX (its formula by sympy.latex)")
    p.add_argument("--certificate", metavar="FILE", help="write the certificate to FILE")
    p.set_defaults(run=_cmd_prove)

    p = sub.add_parser("certify", help="certify every registered statement in dependency order; write a report")
    p.add_argument("--out", default="certificates", help="folder for the certificates (default: certificates)")
    p.add_argument("--only", metavar="NAME", help="run only this statement (a registry name or its script name)")
    p.add_argument("--proofs", metavar="DIR",
                   help="folder of proof scripts (default: the scripts shipped with attngeo)")
    p.add_argument("--json", action="store_true",
                   help="print one JSON object (per-statement outcomes); the progress goes to stderr")
    p.add_argument("--jobs", type=_positive, default=None, metavar="N",
                   help="proof scripts run at once, each when those it rests on have ended (default: the "
                        "machine's cores, at most 2)")
    p.add_argument("--full", action="store_true",
                   help="pass --full to every proof script: its full grid (larger sizes; several times longer) "
                        "instead of the default one")
    p.add_argument("--pdf", action="store_true",
                   help="also typeset report.pdf with pdflatex, run as often as the document needs")
    p.set_defaults(run=_cmd_certify)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``attngeo`` command line on ``argv`` (default ``sys.argv[1:]``); return the exit code.

    Exit codes: 0 success; 1 a certificate was rejected (``check``) or a
    statement failed (``certify``); 2 bad input, with one line on stderr and
    no traceback; 130 interrupted.

    Examples
    --------
    One layer ``2 -> 2`` of rank 1: 8 weights, 2 symmetry directions, dimension 6:

    >>> import contextlib, io, json, sys
    >>> from attngeo.ui.cli import main
    >>> out = io.StringIO()
    >>> with contextlib.redirect_stdout(out):
    ...     code = main(["dim", "--widths", "2,2", "--ranks", "1", "--seed", "0"])
    >>> code
    0
    >>> for line in out.getvalue().splitlines():
    ...     if line.split()[0] in ("parameters", "upper", "dimension"):
    ...         print(line)
    parameters     8
    upper bound    6  (8 parameters - field rank 2)
    dimension      6  certified

    ``--json`` prints one object; ``--certificate`` writes the certificate, which ``check`` re-verifies:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> honest = os.path.join(folder, "honest.json")
    >>> with contextlib.redirect_stdout(out := io.StringIO()):
    ...     code = main(["dim", "--widths", "2,2", "--ranks", "1", "--seed", "0", "--json", "--certificate", honest])
    >>> summary = json.loads(out.getvalue())
    >>> code, summary["dimension"], summary["certified"], summary["certificate"] == honest
    (0, 6, True, True)
    >>> with open(honest) as f, open(os.path.join(folder, "forged.json"), "w") as g:
    ...     json.dump({**json.load(f), "lower": 7}, g)
    >>> main(["check", folder])    # doctest: +ELLIPSIS
    REJECTED  .../forged.json: ...
    valid     .../honest.json: dim M = 6 for widths 2,2, ranks 1, t=2...
    1 valid, 1 rejected, 0 unusable
    1

    A single-layer fiber at a rank-1 swap point is two lines:

    >>> with contextlib.redirect_stdout(out := io.StringIO()):
    ...     code = main(["fiber", "--widths", "2,1", "--ranks", "1", "--special", "rank1-swap"])
    >>> code, out.getvalue().splitlines()[0]
    (0, 'fiber of widths 2,1, ranks 1, t=2, lightning (rank1-swap): 2 component(s) in (A, V)')

    Bad input is one line on stderr and exit code 2:

    >>> with contextlib.redirect_stderr(sys.stdout):
    ...     main(["dim", "--widths", "2,2", "--ranks", "2,2"])
    attngeo: error: ranks has 2 entries but widths describe 1 layer; give exactly one rank per layer
    2
    """
    args = build_parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() \
        else None
    try:
        if args.run in (_cmd_fiber, _cmd_singular, _cmd_implicit, _cmd_inspect):
            return _budgeted(args)
        return args.run(args)
    except AttngeoError as exc:
        print(f"attngeo: error: {exc}", file=sys.stderr)
        return 2
    except _Terminated:  # SIGTERM: the same clean-up as Ctrl-C; no child outlives the command (check/lifetime.py)
        print("attngeo: terminated", file=sys.stderr)
        return 143
    except KeyboardInterrupt:
        print("attngeo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader (e.g. `| head`) stopped early: nothing is wrong here
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the final flush is silent
        return 0
    except OSError as exc:  # a path the system refuses (ENAMETOOLONG, ELOOP, EACCES, ENOTDIR, ...): one line
        print(f"attngeo: error: {_refused(exc)}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
