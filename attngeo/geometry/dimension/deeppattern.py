"""Deep pattern pieces: ``l`` lightning layers of equal width at ``V_i = I``, every width ``d`` at once.

For a fixed depth ``l`` and rank ``a`` the point has ``k = max(a, 2)`` *core*
features (``k = 1`` when ``d = 1``): ``Q_i``, ``K_i`` are small random integer
``a x k`` matrices on the core columns and zero on the other ``d - k`` features
(the bulk cell ``R``), every ``V_i = I``. An input supported on the core and a
few further features sees only the small network on those features
(:mod:`attngeo.check.dimension.deeppattern`, the restriction lemma), so the
Jacobian has a block lower triangular minor with three block types:

* the **core** (no variable): core weights outside the field minor, rows of inputs on the core;
* one block per further feature ``m``: ``Q_i[:, m]``, ``K_i[:, m]``, ``V_l[c, m]``, ``V_l[m, c]``,
  ``V_l[m, m]``, rows of inputs on the core and ``m``;
* one ``1 x 1`` block per pair ``m != m'``: ``V_l[m, m']``, the output ``m`` of an input on ``m'``.

Their sizes ``2lak + k² - l(a² + 1)``, ``2la + 2k + 1`` and ``1``, counted ``1``,
``d - k`` and ``(d - k)(d - k - 1)`` times, add up to ``l a(2d - a) + d² - l``.
The fields' minor: ``inter_i(u, v)`` for ``u`` or ``v`` outside the core on
``V_i[u, v]`` (``i = l-1, ..., 1``), then one core block of the intra, scaling and
core inter fields. The prover ranks the two dense core blocks and the feature
block on the network of width ``k + 2`` itself (:func:`attngeo.model.jacobian.jacobian_over_q`,
:func:`attngeo.geometry.symmetry.vector_fields`).

Examples
--------
>>> piece = deep_piece(2, 2)
>>> [len(b["columns"]) for b in piece["lower"]["blocks"]], [b["count"] for b in piece["lower"]["blocks"]]
([10, 13, 1], ['1', 'd - 2', 'd^2 - 5*d + 6'])
"""

from __future__ import annotations

import random

import numpy as np
from flint import fmpq

from ...exceptions import InvalidInputError
from ...model.architecture import Architecture
from ...model.jacobian import jacobian_over_q
from ..symmetry import vector_fields

#: Entries of the core ``Q_i``, ``K_i`` and of the inputs: small, so the checker's integers stay small.
ENTRY = 3
#: Input patterns tried per block before giving up (each gives ``2 x`` its outputs rows).
MAX_PATTERNS = 40


def _independent(rows: list[list[int]], want: int) -> list[int]:
    """Indices of rows, greedily, independent mod a 61-bit prime (hence over ℚ); stops at ``want``."""
    chosen, reduced = [], []  # reduced: (pivot column, row) in echelon form mod P
    for i, r in enumerate(rows):
        v = [x % _P for x in r]
        for col, b in reduced:
            if v[col]:
                f = v[col]
                v = [(x - f * y) % _P for x, y in zip(v, b)]
        nz = next((j for j, x in enumerate(v) if x), None)
        if nz is None:
            continue
        inv = pow(v[nz], -1, _P)
        reduced.append((nz, [x * inv % _P for x in v]))
        chosen.append(i)
        if len(chosen) == want:
            break
    return chosen


_P = (1 << 61) - 1


class _Instance:
    """The network of width ``k + 2`` (core, ``m``, ``m'``) at the point, with column numbers by name."""

    def __init__(self, l: int, a: int, k: int, width: int, Q: list, K: list):
        self.l, self.a, self.k, self.w = l, a, k, width
        self.arch = Architecture((width,) * (l + 1), (a,) * l, tokens=2)
        self.offset = {(b.name, b.layer): b.offset for b in self.arch.blocks()}
        point = []
        for i in range(l):
            for M in (Q[i], K[i]):
                full = np.zeros((a, width), dtype=np.int64)
                full[:, :k] = M
                point += full.ravel().tolist()
            point += np.eye(width, dtype=np.int64).ravel().tolist()
        self.point = point

    def col(self, fam: str, layer: int, r: int, c: int) -> int:
        return self.offset[(fam, layer)] + r * self.w + c

    def rows(self, X: np.ndarray) -> np.ndarray:
        """The Jacobian rows of one input (``(output, token)`` row-major), exact integers."""
        J = jacobian_over_q(self.arch, [fmpq(v) for v in self.point], X[None])
        return np.array([[int(v) for v in row] for row in J], dtype=object)


def _names(k: int, a: int):
    return [f"c{j}" for j in range(k)], [f"h{s}" for s in range(a)]


#: Random cores tried before giving up (a core of rank below ``a`` or a degenerate one is rare).
ATTEMPTS = 20


def deep_piece(l: int, a: int, tiny: bool = False, seed: int = 0) -> dict:
    """The piece of depth ``l`` and rank ``a`` (``tiny``: the width-1 network, ``a = 1``), blocks found.

    Tries random cores from ``seed`` on; raises InvalidInputError when :data:`ATTEMPTS` of them fail.

    Examples
    --------
    The width-1 network (``a = 1``, ``d = 1``): ``3l`` weights, ``3l - 1`` fields, dimension 1:

    >>> piece = deep_piece(2, 1, tiny=True)
    >>> [len(b["columns"]) for b in piece["lower"]["blocks"]], [len(b["columns"]) for b in piece["upper"]["blocks"]]
    ([1], [5])
    """
    for attempt in range(seed, seed + ATTEMPTS):
        try:
            return _piece(l, a, tiny, attempt)
        except InvalidInputError:
            continue
    raise InvalidInputError(f"no random core of depth {l}, rank {a} gave nonsingular blocks in {ATTEMPTS} tries")


def _piece(l: int, a: int, tiny: bool, seed: int) -> dict:
    k = 1 if tiny else max(a, 2)
    width = k if tiny else k + 2
    rng = random.Random(seed)
    Q = [[[rng.randint(-ENTRY, ENTRY) or 1 for _ in range(k)] for _ in range(a)] for _ in range(l)]
    K = [[[rng.randint(-ENTRY, ENTRY) or 1 for _ in range(k)] for _ in range(a)] for _ in range(l)]
    net = _Instance(l, a, k, width, Q, K)
    core, hid = _names(k, a)
    feats = core + ([] if tiny else ["m", "n"])  # symbolic names of the instance's features
    cells = {**{c: "1" for c in core + hid}, **({} if tiny else {"R": f"d - {k}"})}
    cell_of = {**{c: c for c in core}, "m": "R", "n": "R"}
    sorts = {"feat": [[c] for c in core] + ([] if tiny else [["R"]]), "hid": [[h] for h in hid]}

    def term_vars(*symbols):
        return {s: cell_of.get(s, s) for s in symbols}

    # the fields at the instance, rows by name
    F = vector_fields(net.arch, [fmpq(v) for v in net.point])
    field_row, r = {}, 0
    for i in range(1, l + 1):
        for u in range(a):
            for v in range(a):
                field_row[("intra", i, u, v)] = r
                r += 1
        field_row[("scaling", i)] = r
        r += 1
        if i < l:
            for u in range(width):
                for v in range(width):
                    field_row[("inter", i, u, v)] = r
                    r += 1
    Fm = [[int(x) for x in F.table()[j]] for j in range(F.nrows())]
    upper, pivots = [], set()
    if not tiny:
        m, n = k, k + 1
        for i in range(l - 1, 0, -1):  # inter_i pivots on V_i[u, v]; inter_{i+1} first (inter_i meets V_{i+1})
            pairs = [(cj, "m") for cj in core] + [("m", cj) for cj in core] + [("m", "m"), ("m", "n")]
            for u, v in pairs:
                cu, cv = feats.index(u), feats.index(v)
                col = net.col("V", i, cu, cv)
                value = Fm[field_row[("inter", i, cu, cv)]][col]
                upper.append({"vars": term_vars(u, v), "columns": [[f"V{i}", [[u], [v]]]],
                              "rows": [[f"inter{i}", [[u], [v]]]], "matrix": [[value]]})
                pivots.add(col)
        del m, n
    # the core field block: every intra and scaling field and the core inter fields
    rows = [("intra", i, u, v) for i in range(1, l + 1) for u in range(a) for v in range(a)]
    rows += [("scaling", i) for i in range(1, l + 1)]
    rows += [("inter", i, u, v) for i in range(1, l) for u in range(k) for v in range(k)]
    core_cols = [net.col(f, i, r_, c) for i in range(1, l + 1) for f in ("Q", "K") for r_ in range(a)
                 for c in range(k)] + [net.col("V", i, u, v) for i in range(1, l + 1) for u in range(k)
                                       for v in range(k)]
    sub = [[Fm[field_row[row]][c] for c in core_cols] for row in rows]
    picked = _independent([list(x) for x in zip(*sub)], len(rows))  # columns, as rows of the transpose
    if len(picked) != len(rows):
        raise InvalidInputError(f"the core fields have rank {len(picked)} < {len(rows)} at this core (seed {seed})")
    chosen = [core_cols[j] for j in picked]
    pivots |= set(chosen)

    def name_col(col):
        for (fam, i), off in net.offset.items():
            size = (a if fam in "QK" else width) * width
            if off <= col < off + size:
                r_, c = divmod(col - off, width)
                row_name = hid[r_] if fam in "QK" else feats[r_]
                return [f"{fam}{i}", [[row_name], [feats[c]]]]
        raise AssertionError(col)

    def name_field(row):
        if row[0] == "scaling":
            return [f"scaling{row[1]}", []]
        names = hid if row[0] == "intra" else feats
        return [f"{row[0]}{row[1]}", [[names[row[2]]], [names[row[3]]]]]

    upper.append({"vars": term_vars(*core, *hid), "columns": [name_col(c) for c in chosen],
                  "rows": [name_field(r_) for r_ in rows], "matrix": [[Fm[field_row[r_]][c] for c in chosen]
                                                                     for r_ in rows]})

    # the Jacobian's blocks
    all_cols = range(len(net.point))
    gauge = [c for c in all_cols if c not in pivots]

    def touches(col, feature):
        _, terms = name_col(col)
        return feature in (terms[0][0], terms[1][0])

    lower_core = [c for c in gauge if not any(touches(c, f) for f in ("m", "n"))]
    inputs: list = []
    lower = []

    def block(cols, on, outputs, what, vars_):
        """Rows of inputs on the core and the features ``on`` (outputs ``outputs``) until ``cols`` have full rank."""
        cand_rows, cand_terms = [], []
        for _ in range(MAX_PATTERNS):
            X = np.zeros((width, 2), dtype=np.int64)
            X[:k] = [[rng.randint(-ENTRY, ENTRY) for _ in range(2)] for _ in range(k)]
            var_values = [[rng.randint(-ENTRY, ENTRY) or 1 for _ in range(2)] for _ in on]
            for f, vals in zip(on, var_values):
                X[feats.index(f)] = vals
            J = net.rows(X)
            p = len(inputs)
            inputs.append({"core": X[:k].tolist(), "vars": var_values})
            for out in outputs:
                for tau in (0, 1):
                    cand_rows.append([int(J[feats.index(out) * 2 + tau][c]) for c in cols])
                    cand_terms.append([f"x{p}.{tau}", [[f] for f in on] + [[out]]])
            picked = _independent(cand_rows, len(cols))
            if len(picked) == len(cols):
                lower.append({"vars": term_vars(*vars_), "columns": [name_col(c) for c in cols],
                              "rows": [cand_terms[j] for j in picked], "matrix": [cand_rows[j] for j in picked]})
                return
        raise InvalidInputError(f"no nonsingular {what} block after {MAX_PATTERNS} input patterns (seed {seed})")

    block(lower_core, [], core, "core", core + hid)
    if not tiny:
        m_cols = [c for c in gauge if touches(c, "m") and not touches(c, "n")]
        block(m_cols, ["m"], core + ["m"], "feature", core + hid + ["m"])
        # V_l[m, n] moves the output m of an input on n by (Y_{l-1}[n] S_l)[τ]
        block([net.col("V", l, feats.index("m"), feats.index("n"))], ["n"], ["m"], "pair", ["m", "n"])
    # keep only the input patterns a row uses, renumbered
    used = sorted({int(r_[0][1:].split(".")[0]) for b in lower for r_ in b["rows"]})
    new = {p: j for j, p in enumerate(used)}
    for b in lower:
        for r_ in b["rows"]:
            p, tau = r_[0][1:].split(".")
            r_[0] = f"x{new[int(p)]}.{tau}"
    for b in lower + upper:
        b["vars"] = {v: c for v, c in b["vars"].items() if any(v in t for term in b["columns"] + b["rows"]
                                                               for t in term[1])}
        b["count"] = _count(b["vars"], k)
    return {"cells": cells, "sorts": sorts, "core": core,
            "layers": [{"Q": Q[i], "K": K[i]} for i in range(l)],
            "inputs": [inputs[p] for p in used], "lower": {"blocks": lower}, "upper": {"blocks": upper}}


def _count(vars_: dict, k: int) -> str:
    bulk = sum(1 for c in vars_.values() if c == "R")
    return {0: "1", 1: f"d - {k}", 2: f"d^2 - {2 * k + 1}*d + {k * (k + 1)}"}[bulk]
