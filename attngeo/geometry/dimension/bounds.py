"""What the lightning and the normalized dimension provers share: the symmetry upper bound and the sampling.

The upper bound ``P - rank(fields at W)`` is the same for every normalization
(only the families differ: the groups of :func:`attngeo.geometry.symmetry.families`
and the kernel fields of :func:`attngeo.geometry.dimension.kernelfields.kernel_families`); the lower bounds
differ (a minor mod p, or a ball determinant), so they live in
:mod:`attngeo.geometry.dimension.dense` and :mod:`attngeo.geometry.dimension.ball`, which both import this.
"""

from __future__ import annotations

import random

import numpy as np

from ...model.architecture import Architecture
from ...model.network import split_heads
from ...exact.modular import matmul
from ... import progress
from ...exact.rank import det_mod_p, independent_rows, maximal_minor_mod_p
from ...model.jacobian import jacobian_mod_p
from .kernelfields import kernel_families, kernel_rows
from .mixing import KINDS as MIXING, mixing_identities
from ..symmetry import families, field_matrix, gauge_minor, identities_for

#: Entries of random points and inputs are drawn from ``[-ENTRY_BOUND, ENTRY_BOUND]``.
ENTRY_BOUND = 1 << 15


def random_ints(rng: random.Random, shape) -> np.ndarray:
    """Random integers in ``[-ENTRY_BOUND, ENTRY_BOUND]`` (reproducible from ``rng``).

    Parameters
    ----------
    rng : random.Random
        The only source of randomness: a seeded ``rng`` makes a certificate reproducible.
    shape : int or tuple of int

    Returns
    -------
    numpy.ndarray
        ``int64`` of that shape.

    Examples
    --------
    >>> import random
    >>> import numpy as np
    >>> from attngeo.geometry.dimension.bounds import ENTRY_BOUND, random_ints
    >>> x = random_ints(random.Random(7), (3, 4))
    >>> x.shape, x.dtype, int(np.abs(x).max()) <= ENTRY_BOUND == 2**15
    ((3, 4), dtype('int64'), True)
    >>> np.array_equal(x, random_ints(random.Random(7), (3, 4)))
    True
    """
    # one draw from rng seeds numpy's generator: vectorized (Python's randint cost 10% of a certification) and
    # still reproducible from the caller's seed
    return np.random.default_rng(rng.getrandbits(64)).integers(-ENTRY_BOUND, ENTRY_BOUND + 1, size=shape,
                                                                dtype=np.int64)


def upper_bound(arch: Architecture, point: np.ndarray, p: int, discovered=()) -> tuple[int, dict, list[int]]:
    """Upper bound, its witness, and a gauge (columns complementary to the field minor).

    The bound is ``P - r`` with ``r`` the rank mod ``p`` of the symmetry fields
    and the kernel fields at ``point``: they lie in the kernel of the Jacobian
    everywhere, and a rank mod ``p`` is at most the rank over Q.

    Parameters
    ----------
    arch : Architecture
    point : numpy.ndarray
        ``arch.parameter_count`` integers.
    p : int
        A prime below ``2^31``.

    Returns
    -------
    upper : int
    witness : dict
        The certificate's ``upper_witness``: prime, point, families, ``field_rank``,
        the rows, columns and determinant of a nonsingular minor, the identities.
    gauge : list of int
        The ``P - r`` columns outside that minor.

    Examples
    --------
    One layer ``3 -> 3`` of rank 2: the 5 fields of ``GL_2 x C^*`` give
    ``21 - 5 = 16``; the Jacobian restricted to the gauge has rank 16, so
    ``dim M = 16``:

    >>> import random
    >>> from attngeo import Architecture
    >>> from attngeo.exact.rank import rank_mod_p
    >>> from attngeo.geometry.dimension.bounds import random_ints, upper_bound
    >>> from attngeo.model.jacobian import jacobian_mod_p
    >>> arch, rng, p = Architecture((3, 3), (2,)), random.Random(0), 1000003
    >>> point = random_ints(rng, (arch.parameter_count,))
    >>> upper, witness, gauge = upper_bound(arch, point, p)
    >>> upper, witness["field_rank"], len(gauge)
    (16, 5, 16)
    >>> rank_mod_p(jacobian_mod_p(arch, point, random_ints(rng, (4, 3, 2)), p)[:, gauge], p)
    16

    Widening ``2 -> 3 -> 2`` adds six annihilator fields to the 19 of the
    groups; together they have rank 22, and ``32 - 22 = 10`` is met again:

    >>> arch = Architecture((2, 3, 2), (2, 2))
    >>> point = random_ints(rng, (arch.parameter_count,))
    >>> upper, witness, gauge = upper_bound(arch, point, p)
    >>> [f["kind"] for f in witness["families"]][-1], witness["field_rank"], upper
    ('annihilator', 22, 10)
    >>> rank_mod_p(jacobian_mod_p(arch, point, random_ints(rng, (8, 2, 2)), p)[:, gauge], p)
    10
    """
    F = field_matrix(arch, point, p)
    extra = kernel_rows(arch, point, p)
    if discovered:  # linear fields v(W) = C W verified over Q (attngeo.geometry.dimension.discovery): their values here
        found = [np.mod(np.array(f.matrix, dtype=object) @ np.array(point, dtype=object), p).astype(np.int64)
                 for f in discovered]
        extra = np.vstack([extra, np.array(found)]) if len(extra) else np.array(found)
    minor = gauge_minor(arch, point, F, p) if not len(extra) else None
    F = np.vstack([F, extra]) if len(extra) else F
    if minor is not None:
        cols, det = minor
        rank, rows, how = F.shape[0], list(range(F.shape[0])), "block-triangular gauge minor"
    else:
        rank, rows, cols = maximal_minor_mod_p(F, p)
        det = det_mod_p(F[np.ix_(rows, cols)], p)
        how = "pivots of a reduced echelon form"
    identities = identities_for(arch) + tuple(i for kind in sorted({f.kind for f in kernel_families(arch)})
                                              if kind in MIXING for i in mixing_identities(kind))
    if not all(i.holds for i in identities):  # pragma: no cover - would be a bug in symmetry.py
        raise AssertionError("an invariance identity failed; the upper bound would be unsound")
    witness = {
        "prime": p,
        "point": point.tolist(),
        "families": [f.to_dict() for f in families(arch)] + [f.to_dict() for f in kernel_families(arch)]
        + ([{"kind": "discovered", "layer": 0, "size": len(discovered),
             "fields": [[list(row) for row in f.matrix] for f in discovered]}] if discovered else []),
        "field_rank": rank,
        "rows": rows,
        "columns": cols,
        "determinant": det,
        "identities": [{"family": i.family, "statement": i.statement} for i in identities],
        "method": f"free-algebra identities; nonsingular minor of the field matrix mod p ({how})",
    }
    chosen = set(cols)
    gauge = [c for c in range(arch.parameter_count) if c not in chosen]
    tensor = tensor_bound(arch)
    if tensor is not None and tensor[0] < arch.parameter_count - rank:
        return tensor[0], tensor[1], gauge
    composed = composition_bound(arch, point, p)
    if composed is not None and composed[0] < arch.parameter_count - rank:
        return composed[0], composed[1], gauge
    return arch.parameter_count - rank, witness, gauge


def layer_architecture(arch: Architecture, i: int) -> Architecture:
    """Layer ``i`` (1-based) of ``arch`` as a one-layer architecture (its weights are a contiguous slice).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.bounds import layer_architecture
    >>> arch = Architecture((2, 3, 3), (1, 2), tokens=2, heads=3, value_ranks=(2, 1))
    >>> layer = layer_architecture(arch, 2)
    >>> layer.widths, layer.ranks, layer.heads, layer.value_ranks
    ((3, 3), (2,), (3,), (1,))
    """
    return Architecture(arch.widths[i - 1: i + 1], arch.ranks[i - 1: i], arch.tokens, arch.normalization,
                        arch.heads[i - 1], None if arch.value_ranks is None else arch.value_ranks[i - 1],
                        arch.residual, arch.causal)


def layer_outputs(heads: list, inputs: np.ndarray, p: int) -> np.ndarray:
    """``Σ_j V_j x (xᵀ A_j x)`` mod ``p`` for each row ``x`` of ``inputs``: one layer on one token (rows).

    ``heads`` are ``(Q, K, V)`` or ``(Q, K, U, O)`` mod ``p``; a layer's outputs on all inputs span at least these
    (an input whose ``t`` columns all equal ``x`` has output columns that are nonzero multiples of these rows).

    Examples
    --------
    One head with ``Q = K = V = I`` maps ``x`` to ``x · |x|²``: ``(1, 2) -> (5, 10)``; a second head with
    ``V = -I`` cancels it.

    >>> import numpy as np
    >>> from attngeo.geometry.dimension.bounds import layer_outputs
    >>> I = np.eye(2, dtype=np.int64)
    >>> layer_outputs([(I, I, I)], np.array([[1, 2]]), 101).tolist()
    [[5, 10]]
    >>> layer_outputs([(I, I, I), (I, I, -I % 101)], np.array([[1, 2]]), 101).tolist()
    [[0, 0]]
    """
    out = np.zeros((len(inputs), heads[0][-1].shape[0]), dtype=np.int64)
    for head in heads:
        Q, K = head[0], head[1]
        V = matmul(head[3], head[2], p) if len(head) == 4 else head[2]
        scores = (matmul(inputs, K.T, p) * matmul(inputs, Q.T, p) % p).sum(axis=1) % p  # x'K'Qx: a terms, each < p
        out = (out + scores[:, None] * matmul(inputs, V.T, p) % p) % p
    return out


def composition_bound(arch: Architecture, point: np.ndarray, p: int) -> tuple[int, dict] | None:
    """Deep lightning networks beyond [HMK]'s model: ``dim M <= Σ_i dim M_i - Σ_{i<l} d_i^2`` (docs/multihead.md §4).

    ``M_i`` is the function space of layer ``i`` alone, bounded by its own one-layer upper bound at the
    slice of ``point``; ``GL_{d_i}`` moves layer ``i``'s outputs and layer ``i + 1``'s inputs without
    changing the composition, and acts with trivial stabilizer where every hidden layer's outputs span
    ``Q^{d_i}`` — witnessed by ``d_i`` one-token inputs whose outputs are independent mod ``p``. With a
    residual connection no group acts and the bound is the sum. None for one layer, [HMK]'s model,
    normalized networks, or where no spanning inputs are found.

    Examples
    --------
    Widths ``2, 3, 3``, ranks ``1, 2``, three heads: layer 1 fills its span (``3 * 2 * 3 = 18``), layer 2
    has ``45`` (rank-mixing), and ``18 + 45 - 9 = 54`` is below the fields' ``57``:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.bounds import composition_bound, random_ints
    >>> arch = Architecture((2, 3, 3), (1, 2), tokens=2, heads=3)
    >>> value, witness = composition_bound(arch, random_ints(__import__("random").Random(0), (93,)), 1000003)
    >>> value, [layer["upper"] for layer in witness["layers"]], np.array(witness["inputs"][0]).shape
    (54, [18, 45], (3, 2))
    """
    if arch.is_plain or arch.depth < 2 or arch.normalization != "lightning":
        return None
    layers, offset, total = [], 0, 0
    for i in range(1, arch.depth + 1):
        single = layer_architecture(arch, i)
        upper, witness, _ = upper_bound(single, point[offset: offset + single.parameter_count], p)
        layers.append({"upper": upper, "upper_witness": {k: v for k, v in witness.items() if k != "identities"}})
        total, offset = total + upper, offset + single.parameter_count
    inputs = []
    if not arch.residual:
        heads = split_heads(arch, np.mod(point, p))
        rng = random.Random(p)
        for i in range(1, arch.depth):
            for _ in range(4):
                x = np.array([[rng.randint(-9, 9) for _ in range(arch.widths[i - 1])] for _ in range(arch.widths[i])],
                             dtype=np.int64)
                if det_mod_p(layer_outputs(heads[i - 1], np.mod(x, p), p), p):
                    break
            else:
                return None  # the outputs need not span (h b < d_i): no claim
            inputs.append(x.tolist())
            total -= arch.widths[i] ** 2
    return total, {"ambient": "composition", "prime": p, "point": np.asarray(point).tolist(), "inputs": inputs,
                   "layers": layers,
                   "method": "M is the composition of the layers' function spaces, modulo GL(d_i) (docs/multihead.md §4)"}


def tensor_bound(arch: Architecture) -> tuple[int, dict] | None:
    """The smallest bound on ``dim M`` from the tensor ``sym T`` of one layer (docs/multihead.md §4), with its witness.

    The span ``N`` (:func:`span_bound`), or a determinantal bound: ``sym T`` flattened to a matrix has
    rank at most ``r`` — ``r = h b`` with the output index as rows (every head's values lie in the
    columns of its ``O_j``; ``b = min(d, d')`` unfactored), ``r = h a b`` with the output and query
    indices as rows (``t >= 2``, where the query index is not symmetrized: per head
    ``V_j[o, r] A_j[p, q]`` is a Kronecker product of ranks ``b`` and ``a``) — and the ``m x n``
    matrices of rank ``<= r < min(m, n)`` form a variety of dimension ``r (m + n - r)``.
    None where :func:`span_bound` is None.

    Examples
    --------
    Three heads of value rank 1 on ``2 -> 4``: the ``4 x 6`` matrix of the layer's coefficients has rank
    at most 3, a variety of dimension ``3 (4 + 6 - 3) = 21`` inside the span ``24``:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.bounds import tensor_bound
    >>> value, witness = tensor_bound(Architecture((2, 4), (2,), heads=3, value_ranks=1))
    >>> value, {k: witness[k] for k in ("flattening", "rows", "columns", "rank")}
    (21, {'flattening': 'output', 'rows': 4, 'columns': 6, 'rank': 3})
    >>> tensor_bound(Architecture((2, 2), (2,), heads=3))[1]["ambient"]
    'symmetric tensor'
    """
    span = span_bound(arch)
    if span is None:
        return None
    best = (span, {"ambient": "symmetric tensor", "coefficients": span,
                   "method": "M lies in the linear span of the single-layer functions (docs/multihead.md §4)"})
    (d, d_out), h, a = arch.widths, arch.heads[0], arch.ranks[0]
    b = arch.value_ranks[0] if arch.value_ranks else min(d, d_out)
    flattenings = [("output", d_out, span // d_out, h * b)]
    if arch.tokens >= 2:  # the query index is not symmetrized: T[o, r, p, q] = V[o, r] A[p, q] per head
        flattenings.append(("output-query", d_out * d, span // (d_out * d), h * b * min(a, d)))
    for name, m, n, r in flattenings:
        if r < min(m, n) and r * (m + n - r) < best[0]:
            best = (r * (m + n - r), {"ambient": "tensor of bounded rank", "flattening": name, "rows": m,
                                      "columns": n, "rank": r,
                                      "method": "M lies in the matrices of rank <= r (docs/multihead.md §4)"})
    return best


def span_bound(arch: Architecture) -> int | None:
    """For one lightning layer beyond [HMK]'s model, the dimension of a linear space that contains ``M``; else None.

    Every head adds ``sum_s (x_s^T A x_j) V x_s``, linear in the tensor
    ``T[o, r, p, q] = V_or A_pq`` and symmetric in ``(p, r)`` (both index the
    same token ``x_s``), so the network is ``X [+] L(sym T)`` for a linear ``L``,
    whatever the heads, value ranks and mask: ``dim M <= d' d d (d + 1) / 2``;
    with one token all three indices meet the same ``x``: ``d' C(d + 2, 3)``.
    Heads stop adding dimension there (docs/multihead.md §4). [HMK]'s own
    architectures keep their field bound (None), so their certificates do not change.

    Examples
    --------
    Three heads on ``2 -> 2`` would have ``36 - 15 - 6 = 15`` by their fields, but
    their functions live in a space of dimension ``2 * 2 * 3 = 12``:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.bounds import span_bound
    >>> span_bound(Architecture((2, 2), (2,), heads=3, tokens=3)), span_bound(Architecture((2, 2), (2,)))
    (12, None)
    """
    if arch.is_plain or arch.depth != 1 or arch.normalization != "lightning":
        return None
    d, dd = arch.widths
    return dd * d * (d + 1) * (d + 2) // 6 if arch.tokens == 1 else dd * d * d * (d + 1) // 2


def functional_count(arch: Architecture, rows: int | None = None) -> int:
    """Random functionals per input for the lower bound (at most ``rows``).

    ``max(2, t^2)`` (an input reveals about ``t^2`` numbers per attention
    matrix), never more than the ``d_l t`` outputs nor than ``rows``.

    Parameters
    ----------
    arch : Architecture
    rows : int, optional
        The number of Jacobian rows wanted.

    Returns
    -------
    int

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.bounds import functional_count
    >>> functional_count(Architecture((3, 3), (2,), tokens=2))           # t^2 = 4 < d_l t = 6
    4
    >>> functional_count(Architecture((3, 3), (2,), tokens=2), rows=3)
    3
    >>> functional_count(Architecture((2, 2), (1,), tokens=5))           # d_l t = 10 < t^2 = 25
    10
    >>> functional_count(Architecture((3, 3), (2,), tokens=1))           # t = 1: still 2 of the d_l t = 3
    2
    """
    # A few random functionals per input reach the full rank with far fewer rows
    # than all d_l t outputs (measured: d = 16, l = 2, t = 3 needs 30 inputs of
    # 48 rows, or 60 inputs of 8 functionals, for the same rank 478). Never more
    # than the ``rows`` wanted: each costs d_l t random integers, and widths 1,64
    # at t = 64 drew 16.7 million of them (11 s) for a rank of 64.
    d_l, t = arch.output_shape
    c = min(d_l * t, max(2, t * t))
    return c if rows is None else min(c, rows)


def jacobian_lower(arch, point, p, gauge, n_inputs, c, rng) -> tuple[int, dict]:
    """A Jacobian minor mod ``p`` at ``point`` on random inputs and functionals: the rank it proves and its witness.

    The rows are tried on the ``gauge`` columns first (one determinant when they are independent there), then
    by an echelon form. Shared by :func:`attngeo.certify_dimension` and the tied layers' random point.

    Examples
    --------
    >>> import random
    >>> from attngeo import Architecture
    >>> arch, rng = Architecture((2, 2), (1,)), random.Random(0)
    >>> rank, witness = jacobian_lower(arch, random_ints(rng, (8,)), 1000003, list(range(8)), 4, 2, rng)
    >>> rank, len(witness["rows"])                                  # dim M = 2ad + dd' - a^2 - 1
    (6, 6)
    """
    d_l, t = arch.output_shape
    X = random_ints(rng, (n_inputs,) + arch.input_shape)
    w = random_ints(rng, (n_inputs, c, d_l, t))
    progress.phase("Jacobian", f"{n_inputs} inputs x {c} functionals, {arch.parameter_count} columns, mod {p}")
    J = jacobian_mod_p(arch, point, X, p, w)
    progress.phase("elimination", f"{J.shape[0]} x {J.shape[1]} mod {p}")
    r = len(gauge)
    # Random functionals make the leading rows generic: one determinant usually proves the rank, where
    # choosing rows by an echelon form and then taking the determinant costs two eliminations.
    det = det_mod_p(J[:r][:, gauge], p) if J.shape[0] >= r else 0
    if det:
        rank, rows, cols, how = r, list(range(r)), gauge, "the leading rows on the gauge columns"
        used = -(-r // c)  # inputs whose rows the minor reads; the rest would only cost the checker time
        X, w = X[:used], w[:used]
    else:
        rank, rows = independent_rows(J[:, gauge], p)
        if rank == len(gauge):
            cols, how = gauge, "rows independent on the gauge columns"
        else:
            rank, rows, cols = maximal_minor_mod_p(J, p)
            how = "pivots of a reduced echelon form"
        det = det_mod_p(J[np.ix_(rows, cols)], p)
    witness = {
        "prime": p,
        "point": point.tolist(),
        "inputs": X.tolist(),
        "functionals": w.tolist(),
        "rank": rank,
        "rows": rows,
        "columns": cols,
        "determinant": det,
        "method": f"nonsingular maximal minor of the Jacobian of <w, phi(X)> mod p ({how})",
    }
    return rank, witness
