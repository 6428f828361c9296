"""Completeness of the checker: every honest witness verifies, not only the ones the prover happens to make.

The prover always writes the finest block decomposition its search finds; a
certificate written by someone else (another tool, a coarser grouping, a row
the prover would never pick) is just as valid. These witnesses are made here
from the prover's *Jacobian* (``model/jacobian.py``, never the checker), with a
minor chosen at random among the nonsingular ones and grouped into blocks the
lemma allows (``check/dimension/identitypoint.py``): finest, coarser, or one block.
"""

from __future__ import annotations

import itertools
import random

import networkx as nx
import numpy as np
import pytest

from attngeo import Architecture
from attngeo.check.arch import Arch
from attngeo.check.dimension.identitypoint import check_lower
from attngeo.exact.rank import det_mod_p, maximal_minor_mod_p
from attngeo.model.jacobian import jacobian_mod_p

P = 67108859  # a prime below 2**26


def _layout(arch: Architecture) -> dict:
    """Flat column -> (name, layer, row, column), and the offsets of every block."""
    d, meta, offsets, off = arch.widths[0], {}, {}, 0
    for i, a in enumerate(arch.ranks, start=1):
        for name, rows in (("Q", a), ("K", a), ("V", d)):
            offsets[(i, name)] = off
            for x in range(rows * d):
                meta[off + x] = (name, i, x // d, x % d)
            off += rows * d
    return {"meta": meta, "offsets": offsets}


def _point(arch: Architecture, rng: np.random.Generator, layout: dict) -> np.ndarray:
    d = arch.widths[0]
    point = rng.integers(-5, 6, arch.parameter_count)
    for i in range(1, len(arch.ranks) + 1):
        off = layout["offsets"][(i, "V")]
        point[off : off + d * d] = np.eye(d, dtype=np.int64).ravel()
    return point


def _touches(row, meta_c, support) -> bool:
    """The lemma's zero pattern: may Jacobian row ``(n, k, j)`` be nonzero on this column?"""
    n, k, _ = row
    name, _, s, m = meta_c
    if name == "V":
        return s == k and support[n, m]
    return support[n, m] and support[n, k]


def _blocks(rows, cols, meta, support, rng: random.Random, merge: float):
    """Rows and columns reordered block lower triangular (strong components of the lemma's pattern), then
    consecutive blocks merged with probability ``merge`` (coarser blocks are still block triangular)."""
    r = len(rows)
    pattern = [[_touches(rows[x], meta[cols[y]], support) for y in range(r)] for x in range(r)]
    B = nx.Graph()
    B.add_nodes_from(("r", x) for x in range(r))
    B.add_nodes_from(("c", y) for y in range(r))
    B.add_edges_from((("r", x), ("c", y)) for x in range(r) for y in range(r) if pattern[x][y])
    match = nx.bipartite.hopcroft_karp_matching(B, top_nodes=[("r", x) for x in range(r)])
    G = nx.DiGraph()
    G.add_nodes_from(range(r))
    G.add_edges_from((x, match[("c", y)][1]) for x in range(r) for y in range(r) if pattern[x][y])
    C = nx.condensation(G)
    new_rows, new_cols, sizes = [], [], []
    for comp in reversed(list(nx.topological_sort(C))):  # a block only reaches columns of earlier blocks
        members = sorted(C.nodes[comp]["members"])
        new_rows += [rows[x] for x in members]
        new_cols += [match[("r", x)][1] for x in members]
        if sizes and rng.random() < merge:
            sizes[-1] += len(members)
        else:
            sizes.append(len(members))
    return new_rows, [cols[y] for y in new_cols], sizes


def honest_identity_witness(widths, ranks, t, seed, inputs=None, merge=0.5):
    """An honest 'identity values' lower witness: ``(cert, lower_witness, Arch)``, or None when the rank is 0."""
    arch = Architecture(widths, ranks, tokens=t)
    layout = _layout(arch)
    rng, prng = np.random.default_rng(seed), random.Random(seed)
    d, l = widths[0], len(ranks)
    point = _point(arch, rng, layout)
    if inputs is None:
        N = int(rng.integers(1, 5))
        inputs = np.zeros((N, d, t), dtype=np.int64)
        for n in range(N):
            R = rng.choice(d, size=int(rng.integers(1, d + 1)), replace=False)  # supports of every size
            inputs[n, R] = rng.integers(1, 6, (len(R), t)) * rng.choice([-1, 1], (len(R), t))
    X = np.asarray(inputs)
    J = jacobian_mod_p(arch, point, X, P)  # rows (input, output row, token)
    allowed = [c for c, (name, i, _, _) in layout["meta"].items() if name != "V" or i == l]
    row_order = rng.permutation(J.shape[0])  # a random nonsingular minor, not the prover's choice
    col_order = rng.permutation(allowed)
    rank, rr, cc = maximal_minor_mod_p(J[np.ix_(row_order, col_order)], P)
    if rank == 0:
        return None
    triples = [divmod(int(row_order[x]), d * t) for x in rr]
    rows = [[n, rest // t, rest % t] for n, rest in triples]
    cols = [int(col_order[y]) for y in cc]
    support = (np.mod(X, P) != 0).any(axis=2)
    rows, cols, sizes = _blocks(rows, cols, layout["meta"], support, prng, merge)
    flat = [(n * d + k) * t + j for n, k, j in rows]
    det = det_mod_p(J[np.ix_(flat, cols)], P)
    assert det != 0
    lw = {"structured": "identity values", "prime": P, "point": point.tolist(), "inputs": X.tolist(), "rank": rank,
          "rows": rows, "columns": cols, "blocks": sizes, "determinant": int(det)}
    return {"lower": rank}, lw, Arch(tuple(widths), tuple(ranks), t)


def _two_supports(widths, t, seed) -> np.ndarray:
    """Input 0 on rows {0, 1}, input 1 on row {2} only: its rows k = 0 see only V_l[0, 2]."""
    rng = np.random.default_rng(seed)
    X = np.zeros((2, widths[0], t), dtype=np.int64)
    X[0, 0:2] = rng.integers(1, 4, (2, t))
    X[1, 2] = rng.integers(1, 4, t)
    return X


@pytest.mark.parametrize("widths,ranks,t", [((4, 4, 4), (2, 1), 2), ((4, 4, 4), (4, 2), 1)])
def test_a_block_mixing_support_sizes_verifies(widths, ranks, t):
    """Issue 20 item 6: one block holding a row of input 1 (support {2}, row 0 outside it) beside Q/K columns of
    input 0 made the checker index an empty tangent table (IndexError, reported as *rejected*)."""
    for seed in range(2, 12):
        arch = Architecture(widths, ranks, tokens=t)
        layout = _layout(arch)
        X = _two_supports(widths, t, seed)
        point = _point(arch, np.random.default_rng(seed), layout)
        J = jacobian_mod_p(arch, point, X, P)
        d, l = widths[0], len(ranks)
        rows = [[0, 0, 0], [1, 0, 0]]
        cols = [layout["offsets"][(1, "Q")], layout["offsets"][(l, "V")] + 2]  # Q_1[0, 0] and V_l[0, 2]
        det = det_mod_p(J[np.ix_([(n * d + k) * t + j for n, k, j in rows], cols)], P)
        if det == 0:
            continue
        lw = {"structured": "identity values", "prime": P, "point": point.tolist(), "inputs": X.tolist(),
              "rank": 2, "rows": rows, "columns": cols, "blocks": [2], "determinant": int(det)}
        assert check_lower({"lower": 2}, lw, Arch(widths, ranks, t)) == 2
        return
    pytest.fail("no nonsingular 2 x 2 minor found")  # pragma: no cover


#: small shapes: equal widths 2..4, two or three layers, ranks up to d (a = d too), t = 1..3
GRID = [((d,) * (l + 1), ranks, t) for d in (2, 3, 4) for l in (2, 3) for t in (1, 2, 3)
        for ranks in itertools.islice(itertools.product(range(1, d + 1), repeat=l), 0, None, 3)
        if d * d * l <= 48]


@pytest.mark.parametrize("merge", [0.0, 0.5, 1.0], ids=["finest", "coarser", "one-block"])
def test_honest_identity_witnesses_verify_over_a_grid_of_shapes(merge):
    """Random honest minors, grouped into blocks in three ways, on every shape of the grid: all verify."""
    checked = 0
    for case, (widths, ranks, t) in enumerate(GRID):
        for seed in range(2):
            made = honest_identity_witness(widths, ranks, t, seed=1000 * case + seed, merge=merge)
            if made is None:
                continue
            cert, lw, arch = made
            assert check_lower(cert, lw, arch) == cert["lower"], (widths, ranks, t, seed)
            checked += 1
    assert checked >= len(GRID)
