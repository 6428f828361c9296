"""What a command needs, estimated before any work: a one-line refusal of what it cannot do, or the size it faces.

Each estimate is counted from the architecture alone, in well under a second and without building what it
counts (no coordinate, monomial or polynomial is listed). Where a command makes a certificate, its limits are
the checker's (``attngeo/check/limits.py``): a computation whose certificate ``attngeo check`` would refuse
is refused here, before it starts, and not after minutes. What the estimate cannot see (an elimination's
peak, a point's fiber) is held by the budgets the work then runs under (:mod:`attngeo.ui.budget`).

>>> from attngeo import Architecture
>>> text, need = fiber(Architecture((3, 3), (2,), tokens=2))
>>> text, need < 2**30
('single-layer fiber: coefficients of 3 quadratic forms in 3 variables', True)
"""

from __future__ import annotations

from .. import progress
from ..check.limits import MAX_LAYER_WIDTH, MAX_REPLAY_SECONDS, MAX_VARIABLES
from ..exceptions import CertificateFormatError, InvalidInputError
from ..model.architecture import Architecture

#: What the interpreter, numpy and python-flint map before any work (a floor of every estimate).
BASE_BYTES = 64 * 2**20
#: Bytes per entry of a single layer's coefficient tensor ``d' x d x d x d`` (int64, the fiber's own copies):
#: 604 MB measured at widths 64,64 (134 MB of tensor), 221 MB at 48,48.
LAYER_BYTES_PER_ENTRY = 40


def _widths(arch: Architecture) -> str:
    return ",".join(map(str, arch.widths))


def fiber(arch: Architecture) -> tuple[str, int]:
    """``attngeo fiber``: a single layer's coefficient tensor, the virtual-weight path, or the fiber equations.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> fiber(Architecture((500, 500), (50,), tokens=2))
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: single-layer fibers are certified up to width 64 (the checker's limit), not widths 500,500: choose smaller widths
    >>> fiber(Architecture((8, 8, 8, 8), (3, 3, 3), tokens=2))[0]      # doctest: +ELLIPSIS
    'virtual weights (docs/fibers.md §5), the last layer a single-layer fiber of 8 quadratic forms in 8 variables; ...'
    >>> fiber(Architecture((32, 32, 32), (8, 8), tokens=2))[0]          # doctest: +ELLIPSIS
    '... a point that fails a hypothesis: refused (elimination is out of reach)'
    >>> fiber(Architecture((8, 8, 8, 8), (2, 1, 3), tokens=2))       # a_2 = 1: elimination only   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: eliminating ... unknowns is priced at ... CPU seconds of msolve at least, ...
    >>> fiber(Architecture((4, 4, 4, 4), (1, 1, 1), tokens=2))       # a_1 = 1: no virtual weights   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: building the fiber equations of widths 4,4,4,4, ... costs about ...
    """
    from ..geometry.fibers.deep import equations_price, unreplayable, sample_size
    from ..geometry.fibers.virtual import unsupported
    from ..exact.engine import ENGINE_FLOOR_MB

    if arch.depth == 1 and arch.is_plain:
        d, dd = arch.widths
        if max(d, dd) > MAX_LAYER_WIDTH:
            raise InvalidInputError(f"single-layer fibers are certified up to width {MAX_LAYER_WIDTH} (the checker's "
                                    f"limit), not widths {_widths(arch)}: choose smaller widths")
        return (f"single-layer fiber: coefficients of {dd} quadratic forms in {d} variables",
                BASE_BYTES + LAYER_BYTES_PER_ENTRY * dd * d**3)
    if unsupported(arch) is None:  # peeling costs d x d products per layer; the last layer is a single layer's fiber
        d, dl = arch.widths[0], arch.widths[-1]
        n = sample_size(arch) if arch.parameter_count <= MAX_VARIABLES else 0
        fallback = (f"elimination on equations of at most {equations_price(arch, n)[1]:,} terms"
                    if n and not unreplayable(arch, n) else "refused (elimination is out of reach)")
        return (f"virtual weights (docs/fibers.md §5), the last layer a single-layer fiber of {dl} quadratic forms in "
                f"{d} variables; a point that fails a hypothesis: {fallback}", BASE_BYTES + LAYER_BYTES_PER_ENTRY * dl * d**3)
    if arch.parameter_count > MAX_VARIABLES:
        raise InvalidInputError(f"{arch} has {arch.parameter_count:,} parameters; fibers by elimination are for at "
                                f"most {MAX_VARIABLES} (the checker's limit): choose a smaller architecture")
    n = sample_size(arch)
    work, terms = equations_price(arch, n)
    why = unreplayable(arch, n)  # refused here as the elimination would refuse it, before anything is built
    if why:
        raise InvalidInputError(f"{why}: choose a smaller architecture")
    words = 1 + arch.parameter_count // 8
    return (f"elimination in the gauge slice: equations of at most {terms:,} terms from {n} inputs",
            ENGINE_FLOOR_MB * 2**20 + BASE_BYTES + min(terms, work) * (16 + 8 * words))


def _strata_price(arch: Architecture) -> int:
    """The checker's price of the strata certificate, at one preimage per point (a lower bound on it)."""
    from ..check.loci.strata import budget

    d, dd = arch.widths
    a = arch.ranks[0]
    skeleton = {"kind": "strata", "architecture": arch.to_dict(),
                "strata": [{"point_certificate": {"preimage_weights": [[]]}}] * (1 + min(a, d) * min(d, dd))}
    try:
        budget(skeleton)
    except CertificateFormatError as exc:
        raise InvalidInputError(f"the strata of {arch}: {exc}; choose smaller widths") from None
    return len(skeleton["strata"])


def singular(arch: Architecture, max_degree: int | None) -> tuple[str, int]:
    """``attngeo singular``: the strata (priced as the checker prices their certificate) and the [HMK] ideal.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> singular(Architecture((8, 8), (2,), tokens=2), None)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: the strata of widths 8,8, ranks 2, t=2, lightning: replaying this strata certificate needs about ... units of work, above the checker's limit of 6e+10 (docs/trust.md); choose smaller widths
    """
    from ..exact.engine import ENGINE_FLOOR_MB
    from ..model.layerfunction import single_layer

    single_layer(arch, "attngeo singular")
    d, dd = arch.widths
    if max(d, dd) > MAX_LAYER_WIDTH:
        raise InvalidInputError(f"singular strata are certified up to width {MAX_LAYER_WIDTH} (the checker's limit), "
                                f"not widths {_widths(arch)}: choose smaller widths")
    count = _strata_price(arch)
    text, need = f"{count} strata, each with its own point certificate", ENGINE_FLOOR_MB * 2**20 + BASE_BYTES
    if max_degree is not None:
        graded_text, graded_need = _graded(arch, max_degree)
        text, need = f"{text}; {graded_text}", max(need, graded_need)
    return text, need


def _graded(arch: Architecture, max_degree: int) -> tuple[str, int]:
    from ..geometry.loci.graded import block_sizes, memory_estimate

    sizes = block_sizes(arch, max_degree)  # closed form; refuses what the checker's limits refuse
    return (f"degrees <= {max_degree}: {len(sizes)} dominant blocks of at most {max(sizes):,} monomials",
            memory_estimate(arch, max_degree))


def _chart_variables(arch: Architecture) -> int:
    """Variables of the checker's elimination of ``M`` (docs/math.md Lemma 7.4.5): its chart's weights but one,
    and the coordinates."""
    from ..geometry.loci.graded import coordinate_count

    d, dd = arch.widths
    a = arch.ranks[0]
    weights = (d * d if a >= d else a * d + (d - a) * a) + dd * d
    return weights - 1 + coordinate_count(d, dd)


def whole(arch: Architecture) -> tuple[str, int]:
    """``attngeo implicit --whole``: the generators Theorem 7.9 writes out, about 12 kB each with their listing.

    Measured peak resident memory of the whole command beyond the interpreter's 80 MB: 117 MB at ``d = 6``
    (12,950 generators), 540 MB at ``d = 7`` (49,098).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> whole(Architecture((4, 1), (1,), tokens=2))
    ('the whole ideal: 470 generators', 5775360)
    """
    from ..check.loci.rankone import counts
    from ..geometry.loci.rankone import require

    require(arch)
    total = sum(counts(arch.widths[0]))
    return f"the whole ideal: {total:,} generators", 12 * 1024 * total


def implicit(arch: Architecture, max_degree: int | None) -> tuple[str, int]:
    """``attngeo implicit``: the blocks degree by degree, or the elimination (priced as the checker replays it).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> implicit(Architecture((64, 64), (4,), tokens=2), 2)      # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: widths 64,64 have 8,519,680 coordinates c_k_p_mn, above the 400 variables ...
    >>> implicit(Architecture((4, 2), (2,), tokens=2), None)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: eliminating the weights of widths 4,2, ... (99 variables) is priced at ...
    """
    from ..check.msolve import replay_bound
    from ..geometry.loci.graded import coordinate_count
    from ..geometry.loci.implicit import memory_estimate
    from ..model.layerfunction import single_layer

    single_layer(arch, "attngeo implicit")
    if max_degree is not None:
        return _graded(arch, max_degree)
    d, dd = arch.widths
    n, coords = _chart_variables(arch), coordinate_count(d, dd)
    if n > MAX_VARIABLES:
        raise InvalidInputError(f"the elimination of widths {_widths(arch)} has {n:,} variables ({coords:,} "
                                f"coordinates), above the {MAX_VARIABLES} the checker reads: choose smaller widths, "
                                "or --max-degree K for the equations degree by degree")
    bound = replay_bound(n, 3, 0)  # the system's terms only add to it: a lower bound of the checker's price
    if bound > MAX_REPLAY_SECONDS:
        raise InvalidInputError(f"eliminating the weights of {arch} ({n} variables) is priced at {bound:.2g} CPU "
                                f"seconds of msolve, above the {MAX_REPLAY_SECONDS} s attngeo check replays "
                                "(docs/trust.md): choose smaller widths, or --max-degree K for the equations degree "
                                "by degree")
    return (f"elimination of {n} variables ({coords} coordinates), its replay priced at about {bound:.2g} CPU s",
            memory_estimate(arch))


def singular_point(arch: Architecture) -> tuple[str, int]:
    """One point's singularity certificate (a sweep's ``singular`` task), priced as the checker prices it.

    Examples
    --------
    >>> from attngeo import Architecture
    >>> singular_point(Architecture((3, 3), (2,), tokens=2))[0]
    'one point: tangent images of its preimages, priced at 5.4e+07 est. ns by the checker'
    """
    from ..check.limits import MAX_LOCUS_WORK
    from ..check.loci.singular import work
    from ..exact.engine import ENGINE_FLOOR_MB

    d, dd = arch.widths
    ns = work({"preimage_weights": [[]]}, d, dd, arch.ranks[0])  # one preimage: a lower bound
    if max(d, dd) > MAX_LAYER_WIDTH or ns > MAX_LOCUS_WORK:
        raise InvalidInputError(f"a singular point of {arch} is priced at {ns:.1e} est. ns at least, above the "
                                f"checker's limit of {MAX_LOCUS_WORK:.0e} (docs/trust.md): choose smaller widths")
    return f"one point: tangent images of its preimages, priced at {ns:.2g} est. ns by the checker", \
        ENGINE_FLOOR_MB * 2**20 + BASE_BYTES


def task(arch: Architecture, what: str, memory_mb: int) -> None:
    """Refuse a sweep task before any work, as its command would (``dimension``, ``fiber``, ``singular``, ``implicit``).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> task(Architecture((64,) * 8, (64,) * 7), "dimension", 4096)      # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: widths 64,64,64,64,64,64,64,64, ... needs about 551.3 GiB (the dense path), above the memory budget of 4096 MiB ...
    """
    if what == "dimension":
        from ..geometry.dimension.dense import estimate as dimension_estimate

        path, need = dimension_estimate(arch)
        text = f"the {path} path"
    elif arch.depth != 1 or arch.tokens < 2:
        return  # the task refuses it itself, saying why
    elif what == "fiber":
        text, need = fiber(arch)
    elif what == "singular":
        text, need = singular_point(arch)
    else:
        text, need = implicit(arch, None)
    require(need, memory_mb, str(arch), text)


def require(need: int, memory_mb: int, what: str, text: str) -> None:
    """Refuse, in one line naming both, an estimate above the memory budget.

    Examples
    --------
    >>> require(3 * 2**30, 1000, "attngeo fiber --widths 64,64", "a tensor")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: attngeo fiber --widths 64,64 needs about 3.0 GiB (a tensor), above the memory budget of 1000 MiB (--max-memory); raise --max-memory or choose a smaller architecture
    """
    if need > memory_mb * 2**20:
        raise InvalidInputError(f"{what} needs about {progress.size(need)} ({text}), above the memory budget of "
                                f"{memory_mb} MiB (--max-memory); raise --max-memory or choose a smaller architecture")
