"""The checker's deep pieces: ``l`` lightning layers of equal width at ``V_i = I``, all widths at once (docs/math.md §7.1).

A deep piece fixes the depth ``l`` and the rank ``a`` and leaves the width ``d``
free. Its features are ``k`` *core* singletons and further cells (a bulk ``R``
of ``d - k`` features); ``hid`` lists the ``a`` hidden indices (singletons).
The point is written by its core: ``Q_i``, ``K_i`` are the given ``a x k``
integer matrices on the core columns and **zero on every other column**, and
**every** ``V_i = I``. An input pattern gives an input ``X`` (two tokens) by
its values on the core and on a few further features (the row's variables),
zero elsewhere.

**Restriction lemma** (docs/math.md §7.1). At such a point, with ``X`` zero
outside a feature set ``F`` that contains the core, every ``Y_i`` is zero outside
``F``; output ``(k, τ)`` with ``k`` in ``F`` is the output of the width-``|F|``
network with ``Q_i[:, F]``, ``K_i[:, F]``, ``V_i = I``, and its derivative along
any weight with a feature index outside ``F`` is 0 (``Q_i[:, z]``, ``K_i[:, z]``,
``V_i[., z]`` meet the zero row ``Y[z]``; ``V_i[z, .]`` changes only row ``z``,
which no score reads since ``Q_j[:, z] = K_j[:, z] = 0``, and which is not
``k``). So a row's support is computed exactly on the small network of its own
features, by one reverse-mode pass in integers, and depends only on which
features the row names and in which cells they lie — the small-model lemma.

The fields are [HMK]'s: ``intra_i(u, v)``, ``scaling_i``, ``inter_i(u, v)``
(``GL_d`` between layers ``i`` and ``i+1``), evaluated at the point from their
tangents (``δV_i = E V_i``, ``δ(Q, K, V)_{i+1} = -(.) E``, ...).
"""

from __future__ import annotations

import itertools

import numpy as np

from ...exceptions import CertificateFormatError
from ..values import field, integer, obj, reject, seq
from .patternpoint import Indices, spend

#: Blocks of a deep piece are dense (the core and one further feature): up to this side.
MAX_DEEP_SIDE = 64
MAX_LAYERS = 6
MAX_INPUTS = 64
#: Core features and hidden indices of a deep piece (honest pieces: at most 3 each).
MAX_CORE = 8
MAX_ENTRY = 2**20


class DeepPiece(Indices):
    """A deep piece, read (see the module docstring); the interface :func:`~.patternpoint.verify_minor` uses.

    Examples
    --------
    One layer of rank 2 with core ``c0, c1``: the output ``(c0, 0)`` of a core-only input depends on core
    weights only (the restriction lemma), computed on the width-2 network:

    >>> from attngeo.theorems.allsizes import prove, piece_at
    >>> from attngeo.check.poly import parse, ring
    >>> cert = prove("deep-dimension", superseded=True)
    >>> raw = cert["pieces"][piece_at(cert, {"l": 1, "d": 4, "a": 2})]
    >>> R = ring(("l", "d", "a"))
    >>> piece = DeepPiece(raw, lambda text, where: parse(text, R, where, nonzero=False))
    >>> piece.l, piece.core, sorted(piece.row_families("upper"))
    (1, ['c0', 'c1'], ['intra1', 'scaling1'])
    >>> fam = next(f for f in piece.row_families("lower") if len(piece.row_families("lower")[f]) == 1)
    >>> support = piece.row_support((fam, (("@c0",),)))
    >>> {piece.shape(t[1]) for (name_, t), v in support} <= {("c0",), ("c1",)}
    True
    """

    max_side = MAX_DEEP_SIDE

    def __init__(self, data: dict, size_of, budget: dict | None = None):
        super().__init__(field(data, "cells"), size_of)
        self.budget = budget if budget is not None else {"work": 0}
        sorts = obj(field(data, "sorts"), "sorts")
        if set(sorts) != {"feat", "hid"}:
            reject("a deep piece's sorts are exactly feat and hid")
        self.sorts = {}
        for s in ("feat", "hid"):
            shapes = [tuple(self._cell(c) for c in seq(x, f"sorts.{s}[]", 1)) for x in seq(sorts[s], f"sorts.{s}")]
            if not shapes or len(set(shapes)) != len(shapes):
                reject(f"sorts.{s} must list distinct one-cell shapes")
            self.sorts[s] = shapes
        self.core = [self._cell(c) for c in seq(field(data, "core"), "core")]
        if (not self.core or len(set(self.core)) != len(self.core) or any(c not in self.singleton for c in self.core)
                or any((c,) not in self.sorts["feat"] for c in self.core)):
            reject("core must list distinct singleton features")
        self.hidden = [shape[0] for shape in self.sorts["hid"]]
        if len(self.core) > MAX_CORE or len(self.hidden) > MAX_CORE:
            raise CertificateFormatError(f"a deep piece has at most {MAX_CORE} core features and hidden indices")
        if any(c not in self.singleton for c in self.hidden) or set(self.hidden) & set(self.core):
            reject("every hidden index is a singleton cell of its own")
        a, k = len(self.hidden), len(self.core)
        layers = seq(field(data, "layers"), "layers")
        if not 1 <= len(layers) <= MAX_LAYERS:
            reject(f"a deep piece has 1 to {MAX_LAYERS} layers")
        self.l = len(layers)
        self.Q, self.K = [], []
        for i, layer in enumerate(layers):
            layer = obj(layer, f"layers[{i}]")
            if set(layer) != {"Q", "K"}:
                reject(f"layers[{i}] has exactly Q and K (their core columns; V_i = I)")
            for key, out in (("Q", self.Q), ("K", self.K)):
                out.append(self._matrix(layer[key], a, k, f"layers[{i}].{key}"))
        self.inputs = []
        for p, raw in enumerate(seq(field(data, "inputs"), "inputs")):
            raw = obj(raw, f"inputs[{p}]")
            if set(raw) != {"core", "vars"}:
                reject(f"inputs[{p}] has exactly core and vars")
            core = self._matrix(raw["core"], k, 2, f"inputs[{p}].core")
            vars_ = self._matrix(raw["vars"], len(seq(raw["vars"], f"inputs[{p}].vars")), 2, f"inputs[{p}].vars")
            if len(vars_) > 3:
                reject(f"inputs[{p}] names at most three further features")
            self.inputs.append((core, vars_))
        if len(self.inputs) > MAX_INPUTS:
            raise CertificateFormatError(f"more than {MAX_INPUTS} input patterns")
        self.weights = {}
        for i in range(1, self.l + 1):
            self.weights.update({f"Q{i}": ("hid", "feat"), f"K{i}": ("hid", "feat"), f"V{i}": ("feat", "feat")})
        self._cache: dict = {}

    @staticmethod
    def _matrix(raw, rows: int, cols: int, where: str) -> list:
        raw = seq(raw, where, rows)
        return [[integer(v, where, -MAX_ENTRY, MAX_ENTRY) for v in seq(r, where, cols)] for r in raw]

    def row_families(self, kind: str) -> dict:
        if kind == "lower":  # x<p>.<token>: input pattern p, its further features, then the output feature
            return {f"x{p}.{tau}": ("feat",) * (len(vars_) + 1) for p, (_, vars_) in enumerate(self.inputs)
                    for tau in (0, 1)}
        out = {}
        for i in range(1, self.l + 1):
            out.update({f"intra{i}": ("hid", "hid"), f"scaling{i}": ()})
            if i < self.l:
                out[f"inter{i}"] = ("feat", "feat")
        return out

    def row_support(self, row) -> list:
        fam, terms = row
        return self._field(fam, terms) if not fam.startswith("x") else self._evaluation(fam, terms)

    # ------------------------------------------------------------ rows: the small network of the row's features

    def _evaluation(self, fam: str, terms: tuple) -> list:
        p, tau = (int(x) for x in fam[1:].split("."))
        core, vars_ = self.inputs[p]
        symbols = [t[0] for t in terms]
        features = [f"@{c}" for c in self.core]
        for s in symbols:
            if s not in features:
                features.append(s)
        where = {s: n for n, s in enumerate(features)}
        key = (p, tau, tuple(where[s] for s in symbols), tuple(self.cell_of[s] for s in features))
        if key not in self._cache:
            m, k = len(features), len(self.core)
            X = np.zeros((m, 2), dtype=object)
            X[:k] = np.array(core, dtype=object)
            for j, s in enumerate(symbols[:-1]):
                X[where[s]] += np.array(vars_[j], dtype=object)  # a feature named twice adds its values
            spend(self, self.l * (len(self.hidden) + m) * m * 4)  # the reverse pass's matrix entries
            grads = self._gradient(X, where[symbols[-1]], tau)
            self._cache[key] = grads
        out = []
        for (fam_, r, c), v in self._cache[key].items():
            if v:
                rs = self.hidden[r] if fam_[0] in "QK" else None
                row_sym = f"@{rs}" if rs is not None else features[r]
                out.append(((fam_, ((row_sym,), (features[c],))), int(v)))
        return out

    def _gradient(self, X, k: int, tau: int) -> dict:
        """``{(family, row, col): ∂Y_l[k, τ]/∂w}`` of the small network (reverse mode, exact integers)."""
        m, a = X.shape[0], len(self.hidden)
        pad = [np.zeros((a, m), dtype=object) for _ in range(self.l)]
        Qs, Ks = [], []
        for i in range(self.l):
            Q, K = pad[i].copy(), pad[i].copy()
            Q[:, :len(self.core)] = np.array(self.Q[i], dtype=object)
            K[:, :len(self.core)] = np.array(self.K[i], dtype=object)
            Qs.append(Q)
            Ks.append(K)
        Ys, Ss, Zs = [X], [], []
        for i in range(self.l):
            Y = Ys[-1]
            A = Ks[i].T.dot(Qs[i])
            S = Y.T.dot(A).dot(Y)
            Z = Y.dot(S)
            Ss.append(S)
            Zs.append(Z)
            Ys.append(Z)  # V_i = I
        G = np.zeros((m, 2), dtype=object)
        G[k, tau] = 1
        out = {}
        for i in reversed(range(self.l)):
            Y, S, Z = Ys[i], Ss[i], Zs[i]
            gV = G.dot(Z.T)  # Y_i = V Z, V = I: ∂V = G Zᵀ, ∂Z = G
            gS = Y.T.dot(G)
            A = Ks[i].T.dot(Qs[i])
            gY = G.dot(S.T) + A.dot(Y).dot(gS.T) + A.T.dot(Y).dot(gS)
            gA = Y.dot(gS).dot(Y.T)
            gQ, gK = Ks[i].dot(gA), Qs[i].dot(gA.T)
            for fam, M in ((f"Q{i + 1}", gQ), (f"K{i + 1}", gK), (f"V{i + 1}", gV)):
                for r, c in itertools.product(range(M.shape[0]), range(M.shape[1])):
                    if M[r, c]:
                        out[(fam, r, c)] = M[r, c]
            G = gY
        return out

    # ------------------------------------------------------------ the fields at the point

    def _field(self, fam: str, terms: tuple) -> list:
        out: dict = {}

        def add(term, v):
            if v:
                out[term] = out.get(term, 0) + v

        core = [f"@{c}" for c in self.core]
        hid = [f"@{c}" for c in self.hidden]
        if fam.startswith("intra"):  # δQ = E_uv Q, δK = -E_uvᵀ K
            i = int(fam[5:]) - 1
            (u,), (v,) = terms
            for j, c in enumerate(core):
                add((f"Q{i + 1}", ((u,), (c,))), self.Q[i][hid.index(v)][j])
                add((f"K{i + 1}", ((v,), (c,))), -self.K[i][hid.index(u)][j])
        elif fam.startswith("scaling"):  # δQ = Q, δV = -V = -I
            i = int(fam[7:]) - 1
            for r, s in enumerate(hid):
                for j, c in enumerate(core):
                    add((f"Q{i + 1}", ((s,), (c,))), self.Q[i][r][j])
            for shape in self.sorts["feat"]:
                f = f"@{shape[0]}" if shape[0] in self.singleton else self._free(shape[0])
                add((f"V{i + 1}", ((f,), (f,))), -1)
        else:  # inter_i(u, v): δV_i = E V_i, δQ_{i+1} = -Q_{i+1} E, δK_{i+1} = -K_{i+1} E, δV_{i+1} = -V_{i+1} E
            i = int(fam[5:])
            (u,), (v,) = terms
            add((f"V{i}", ((u,), (v,))), 1)
            add((f"V{i + 1}", ((u,), (v,))), -1)
            if u in core:
                for r, s in enumerate(hid):
                    add((f"Q{i + 1}", ((s,), (v,))), -self.Q[i][r][core.index(u)])
                    add((f"K{i + 1}", ((s,), (v,))), -self.K[i][r][core.index(u)])
        return [(t, v) for t, v in out.items() if v]

    def _free(self, cell: str) -> str:
        s = f"~{cell}"
        self.cell_of[s] = cell
        return s
