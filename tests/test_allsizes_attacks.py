"""Adversarial review of ``dimension-all-sizes`` certificates (docs/math.md §7.1).

Three kinds of test:

* **independent recomputation** — the pieces' points, blocks and counts are re-read by an interpreter
  written here (templates expanded at concrete sizes, the coefficient Jacobian, the deep network's
  Jacobian and the symmetry fields computed from the formulas, ranks over Z by FLINT), sharing no code
  with the prover or the checker: every instance of every block type has the type's matrix (Lemma 7.1.1),
  rows and columns of all instances are distinct and the whole minor has full rank (Lemma 7.1.3), the
  fields are in the kernel and their minor has the claimed rank (Lemma 7.1.4); and the three formulas
  agree with generic ranks computed from scratch (and the multi-head formula is false just outside its
  hypotheses, at ``4 -> 4``, ``h = 4``, ``a = b = 3``);
* **wider or false statements** — the checker's statement table patched to a false formula or a wider
  range (what a later, wrong entry of the table would look like) must not be provable from honest pieces,
  nor from honest pieces plus one more block chosen by exhaustive search;
* **tampering the mechanism** — case trees, equalities, cells and sorts edited consistently.
"""

import copy
import itertools
import math

import numpy as np
import pytest
import sympy
from flint import fmpz_mat, nmod_mat

from attngeo import CertificateRejected, check_certificate
from attngeo.check.dimension import allsizes
from attngeo.check.dimension import patternpoint as pattern
from attngeo.exceptions import AttngeoError
from attngeo.theorems.allsizes import prove

PRIME = 1000003


@pytest.fixture(scope="module")
def certs():
    """The statements' pattern-point certificates: deep-dimension's is the superseded one (l <= 3, a <= 3), whose
    pieces these tests attack; its proof for every depth has its own (tests/test_depthinduction.py)."""
    return {name: prove(name, superseded=name == "deep-dimension")
            for name in ("single-layer-dimension", "multihead-layer-dimension", "deep-dimension")}


# -- an interpreter of pieces, written for this review ---------------------------------------------------


def _ev(text, sizes) -> int:
    expr = sympy.sympify(str(text).replace("^", "**"), locals={k: sympy.Symbol(k) for k in sizes})
    value = expr.subs(sizes)
    assert value.is_integer, text
    return int(value)


def _leaf(cert, sizes) -> int:
    """The piece whose leaf of the case tree holds ``sizes`` (splits: ``g >= 0`` goes to ``ge``)."""
    node = cert["cases"]
    while "split" in node:
        node = node["ge"] if _ev(node["split"], sizes) >= 0 else node["lt"]
    assert "piece" in node, f"{sizes} falls in a leaf marked empty"
    return node["piece"]


def _assignments(vars_: dict, size: dict):
    """Every injective assignment of a block's variables (distinct within a cell) to cell elements."""
    by_cell: dict = {}
    for v, c in vars_.items():
        by_cell.setdefault(c, []).append(v)
    cells = sorted(by_cell)
    for choice in itertools.product(*(itertools.permutations(range(size[c]), len(by_cell[c])) for c in cells)):
        yield {v: e for c, els in zip(cells, choice) for v, e in zip(by_cell[c], els)}


def _falling(n: int, k: int) -> int:
    return math.prod(n - i for i in range(k))


class _Pattern:
    """A one-layer piece at concrete sizes: every sort numbered, the point expanded from its templates."""

    SORTS = {"Q": ("head", "hid", "in"), "K": ("head", "hid", "in"), "V": ("head", "out", "in"),
             "U": ("head", "val", "in"), "O": ("head", "out", "val")}

    def __init__(self, piece, sizes):
        self.piece = piece
        self.size = {c: _ev(t, sizes) for c, t in piece["cells"].items()}
        assert min(self.size.values()) >= 0
        self.sorts = {}
        for s, shapes in piece["sorts"].items():
            idx = [(tuple(sh), els) for sh in shapes for els in itertools.product(*(range(self.size[c]) for c in sh))]
            self.sorts[s] = {x: i for i, x in enumerate(idx)}
        self.factored = "U" in piece["point"]
        self.fams = ("Q", "K", "U", "O") if self.factored else ("Q", "K", "V")
        n = {s: len(v) for s, v in self.sorts.items()}
        self.W = {f: np.zeros(tuple(n[s] for s in self.SORTS[f]), dtype=object) for f in self.fams}
        for f in self.fams:
            for t in piece["point"][f]:
                for env in itertools.product(*(range(self.size[c]) for c in t["vars"].values())):
                    env = dict(zip(t["vars"], env))
                    self.W[f][self.at(f, t["index"], env, t["vars"])] += t["value"]
        self.columns = {}
        for f in self.fams:
            for idx in np.ndindex(*self.W[f].shape):
                self.columns[(f,) + idx] = len(self.columns)
        self.heads = [self.head(j) for j in range(self.W["Q"].shape[0])]

    def index(self, sort, term, env, cells) -> int:
        return self.sorts[sort][(tuple(cells[v] for v in term), tuple(env[v] for v in term))]

    def at(self, fam, terms, env, cells) -> tuple:
        return tuple(self.index(s, t, env, cells) for s, t in zip(self.SORTS[fam], terms))

    def head(self, j):
        A = self.W["K"][j].T.dot(self.W["Q"][j])
        V = self.W["O"][j].dot(self.W["U"][j]) if self.factored else self.W["V"][j]
        return A, V

    @staticmethod
    def coefficients(V, A) -> dict:
        """``c[k, p, {m, n}]`` of ``F = V y y^T A``: ``V[k,m] A[n,p] + V[k,n] A[m,p]`` (``m < n``)."""
        dd, d = V.shape
        out = {}
        for k, p, m in itertools.product(range(dd), range(d), range(d)):
            for n in range(m, d):
                out[(k, p, m, n)] = V[k, m] * A[n, p] + (V[k, n] * A[m, p] if m != n else 0)
        return out

    def jacobian_row(self, row) -> dict:
        """``{column: derivative}`` of ``c[k, p, {m, n}] = sum_j V_j[k,m] A_j[n,p] + V_j[k,n] A_j[m,p]`` (the
        second term for ``m != n``), differentiated by hand along each weight entry."""
        k, p, m, n = row
        m, n = min(m, n), max(m, n)
        pairs = [(m, n), (n, m)] if m != n else [(m, n)]
        out: dict = {}

        def add(key, value):
            if value:
                col = self.columns[key]
                out[col] = out.get(col, 0) + value

        for j in range(self.W["Q"].shape[0]):
            Q, K = self.W["Q"][j], self.W["K"][j]
            A, V = self.heads[j]
            for x, y in pairs:  # the term V[k, x] A[y, p], A = K^T Q
                for s in range(Q.shape[0]):
                    add(("Q", j, s, p), V[k, x] * K[s, y])
                    add(("K", j, s, y), V[k, x] * Q[s, p])
                if self.factored:
                    U, O = self.W["U"][j], self.W["O"][j]
                    for r in range(U.shape[0]):
                        add(("U", j, r, x), O[k, r] * A[y, p])
                        add(("O", j, k, r), U[r, x] * A[y, p])
                else:
                    add(("V", j, k, x), A[y, p])
        return {c: v for c, v in out.items() if v}

    def field(self, fam, idx) -> dict:
        """The symmetry field's vector at the point: intra (GL_a), scaling, value (GL_b)."""
        j = idx[0]
        vec: dict = {}

        def put(f, M):
            for i in np.ndindex(*M.shape):
                if M[i]:
                    vec[self.columns[(f, j) + i]] = vec.get(self.columns[(f, j) + i], 0) + M[i]

        def unit(n, u, v):
            E = np.zeros((n, n), dtype=object)
            E[u, v] = 1
            return E

        Q, K = self.W["Q"][j], self.W["K"][j]
        if fam == "intra":
            E = unit(Q.shape[0], idx[1], idx[2])
            put("Q", E.dot(Q))
            put("K", -E.T.dot(K))
        elif fam == "scaling":
            put("Q", Q)
            put("O" if self.factored else "V", -self.W["O" if self.factored else "V"][j])
        else:
            U, O = self.W["U"][j], self.W["O"][j]
            E = unit(U.shape[0], idx[1], idx[2])
            put("U", E.dot(U))
            put("O", -O.dot(E))
        return vec

    def row_of(self, kind, raw, env, cells):
        fam, terms = raw
        if kind == "lower":
            return ("c",) + tuple(self.index(s, t, env, cells) for s, t in zip(("out", "in", "in", "in"), terms))
        sorts = {"intra": ("head", "hid", "hid"), "scaling": ("head",), "value": ("head", "val", "val")}[fam]
        return (fam,) + tuple(self.index(s, t, env, cells) for s, t in zip(sorts, terms))

    def column_of(self, raw, env, cells) -> int:
        fam, terms = raw
        return self.columns[(fam,) + self.at(fam, terms, env, cells)]

    def vector(self, row) -> dict:
        return self.jacobian_row(row[1:]) if row[0] == "c" else self.field(row[0], row[1:])

    def parameters(self) -> int:
        return len(self.columns)


class _DeepPattern:
    """A deep piece at width ``d``: ``V_i = I``, ``Q_i, K_i`` the core matrices on the core features, zero
    elsewhere, and the network's Jacobian (every parameter, the full width) by forward mode in integers."""

    def __init__(self, piece, sizes):
        self.piece = piece
        self.size = {c: _ev(t, sizes) for c, t in piece["cells"].items()}
        feats = [(sh[0], e) for sh in piece["sorts"]["feat"] for e in range(self.size[sh[0]])]
        self.feat = {x: i for i, x in enumerate(feats)}
        self.hid = {(sh[0], 0): i for i, sh in enumerate(piece["sorts"]["hid"])}
        d, a = len(feats), len(self.hid)
        assert d == sizes["d"] and a == sizes["a"]
        core = [self.feat[(c, 0)] for c in piece["core"]]
        self.l = len(piece["layers"])
        self.Q, self.K, self.V = [], [], []
        for layer in piece["layers"]:
            for name, out in (("Q", self.Q), ("K", self.K)):
                M = np.zeros((a, d), dtype=object)
                M[:, core] = np.array(layer[name], dtype=object)
                out.append(M)
            self.V.append(np.eye(d, dtype=int).astype(object))
        self.core, self.d, self.a = core, d, a
        self.columns = {}
        for i in range(self.l):
            for name, M in (("Q", self.Q[i]), ("K", self.K[i]), ("V", self.V[i])):
                for idx in np.ndindex(*M.shape):
                    self.columns[(f"{name}{i + 1}",) + idx] = len(self.columns)
        self._cache: dict = {}

    def index(self, sort, term, env, cells) -> int:
        (v,) = term
        table = self.feat if sort == "feat" else self.hid
        return table[(cells[v], env[v])]

    def _outputs(self, X):
        """``{column: dY}`` for every parameter, and ``Y``: the network's derivatives at input ``X``."""
        key = tuple(map(tuple, X.tolist()))
        if key not in self._cache:
            grads = {}
            for name_idx, col in self.columns.items():
                name, r, c = name_idx
                layer = int(name[1:]) - 1
                Y, dY = X.copy(), np.zeros_like(X)
                for i in range(self.l):
                    dQ, dK, dV = (np.zeros_like(M) for M in (self.Q[i], self.K[i], self.V[i]))
                    if i == layer:
                        {"Q": dQ, "K": dK, "V": dV}[name[0]][r, c] = 1
                    A = self.K[i].T.dot(self.Q[i])
                    dA = dK.T.dot(self.Q[i]) + self.K[i].T.dot(dQ)
                    S = Y.T.dot(A).dot(Y)
                    dS = dY.T.dot(A).dot(Y) + Y.T.dot(dA).dot(Y) + Y.T.dot(A).dot(dY)
                    Y, dY = self.V[i].dot(Y).dot(S), dV.dot(Y).dot(S) + self.V[i].dot(dY).dot(S) + self.V[i].dot(Y).dot(dS)
                grads[col] = dY
            self._cache[key] = grads
        return self._cache[key]

    def row_of(self, kind, raw, env, cells):
        fam, terms = raw
        if kind == "lower":
            p, tau = (int(x) for x in fam[1:].split("."))
            return ("x", p, tau) + tuple(self.index("feat", t, env, cells) for t in terms)
        sorts = ("feat", "feat") if fam.startswith("inter") else (("hid", "hid") if fam.startswith("intra") else ())
        return (fam,) + tuple(self.index(s, t, env, cells) for s, t in zip(sorts, terms))

    def column_of(self, raw, env, cells) -> int:
        fam, terms = raw
        sorts = ("hid", "feat") if fam[0] in "QK" else ("feat", "feat")
        return self.columns[(fam,) + tuple(self.index(s, t, env, cells) for s, t in zip(sorts, terms))]

    def vector(self, row) -> dict:
        if row[0] == "x":
            _, p, tau, *feats = row
            pattern_ = self.piece["inputs"][p]
            X = np.zeros((self.d, 2), dtype=object)
            X[self.core] = np.array(pattern_["core"], dtype=object)
            for f, values in zip(feats[:-1], pattern_["vars"]):
                X[f] += np.array(values, dtype=object)
            grads = self._outputs(X)
            return {c: int(g[feats[-1], tau]) for c, g in grads.items() if g[feats[-1], tau]}
        fam = row[0]
        vec: dict = {}

        def put(name, layer, M):
            for i in np.ndindex(*M.shape):
                if M[i]:
                    col = self.columns[(f"{name}{layer + 1}",) + i]
                    vec[col] = vec.get(col, 0) + M[i]

        def unit(n, u, v):
            E = np.zeros((n, n), dtype=object)
            E[u, v] = 1
            return E

        if fam.startswith("intra"):
            i = int(fam[5:]) - 1
            E = unit(self.a, row[1], row[2])
            put("Q", i, E.dot(self.Q[i]))
            put("K", i, -E.T.dot(self.K[i]))
        elif fam.startswith("scaling"):
            i = int(fam[7:]) - 1
            put("Q", i, self.Q[i])
            put("V", i, -self.V[i])
        else:  # inter_i: V_i -> G V_i, (Q, K, V)_{i+1} -> (.) G^{-1}
            i = int(fam[5:]) - 1
            E = unit(self.d, row[1], row[2])
            put("V", i, E.dot(self.V[i]))
            for name, M in (("Q", self.Q[i + 1]), ("K", self.K[i + 1]), ("V", self.V[i + 1])):
                put(name, i + 1, -M.dot(E))
        return vec

    def parameters(self) -> int:
        return len(self.columns)


def _replay(cert, sizes) -> dict:
    """Every instance of every block of the piece holding ``sizes``, recomputed here; returns the ranks."""
    k = _leaf(cert, sizes)
    piece = cert["pieces"][k]
    model = (_DeepPattern if cert["theorem"] == "deep-dimension" else _Pattern)(piece, sizes)
    ranks = {}
    for kind in ("lower", "upper"):
        rows, cols, vectors = [], [], {}
        for b, block in enumerate(piece[kind]["blocks"]):
            n = 0
            for env in _assignments(block["vars"], model.size):
                n += 1
                r = [model.row_of(kind, raw, env, block["vars"]) for raw in block["rows"]]
                c = [model.column_of(raw, env, block["vars"]) for raw in block["columns"]]
                for x in r:
                    if x not in vectors:
                        vectors[x] = model.vector(x)
                assert [[vectors[x].get(y, 0) for y in c] for x in r] == block["matrix"], (k, kind, b, env)
                rows += r
                cols += c
            counts = {}
            for c in block["vars"].values():
                counts[c] = counts.get(c, 0) + 1
            assert n == math.prod(_falling(model.size[c], m) for c, m in counts.items()) == _ev(block["count"], sizes)
        assert len(set(rows)) == len(rows) and len(set(cols)) == len(cols), (k, kind)
        M = fmpz_mat([[vectors[x].get(y, 0) for y in cols] for x in rows]) if rows else fmpz_mat(0, 0)
        assert M.rank() == len(cols), (k, kind)
        ranks[kind] = len(cols)
        ranks[kind + "_vectors"] = vectors
    ranks["P"] = model.parameters()
    return ranks


SLOW = pytest.mark.slow
SINGLE = [(1, 1, 1), (2, 1, 1), (3, 1, 1), (3, 2, 2), (2, 3, 4), (3, 5, 2)] + [
    pytest.param(s, marks=SLOW) for s in [(2, 2, 1), (4, 3, 2), (3, 3, 3), (3, 2, 5), (2, 4, 3)]]
MULTI = [(2, 2, 1, 1), (3, 3, 1, 1), (4, 2, 2, 2), (5, 2, 1, 2), (6, 2, 3, 2)] + [
    pytest.param(s, marks=SLOW) for s in [(5, 2, 2, 1), (4, 1, 2, 4), (6, 3, 2, 1), (6, 2, 2, 3)]]
DEEP = [(1, 1, 1), (1, 3, 2), (2, 3, 1), (3, 3, 3)] + [
    pytest.param(s, marks=SLOW) for s in [(2, 4, 2), (3, 2, 2), (2, 3, 3), (3, 4, 1), (1, 5, 3), (3, 5, 2)]]


def _single_formula(d, dd, a):
    return 2 * a * d + d * dd - a * a - 1 if a <= d else d * d + d * dd - 1


def _multi_formula(d, h, a, b):
    return 2 * h * a * d + 2 * h * b * d - h * (a * a + b * b + 1)


def _deep_formula(l, d, a):
    return l * a * (2 * d - a) + d * d - l


def _tagged(which, sizes):
    return [pytest.param(which, s.values[0], marks=s.marks) if hasattr(s, "values") else (which, s) for s in sizes]


@pytest.mark.parametrize("which,sizes", _tagged("single", SINGLE) + _tagged("multi", MULTI))
def test_every_instance_replayed_by_an_independent_interpreter(certs, which, sizes):
    """Lemmas 7.1.1, 7.1.3, 7.1.4 at concrete sizes, from the certificate alone: each instance's block is the
    type's matrix, rows and columns are distinct, the minors have full rank, their sizes are the formula and
    P minus it, and every field row is in the kernel of the coefficient Jacobian."""
    if which == "single":
        cert, values = certs["single-layer-dimension"], dict(zip(("d", "dd", "a"), sizes))
        formula = _single_formula(*sizes)
    else:
        cert, values = certs["multihead-layer-dimension"], dict(zip(("d", "h", "a", "b"), sizes))
        formula = _multi_formula(*sizes)
    ranks = _replay(cert, values)
    assert ranks["lower"] == formula == ranks["P"] - ranks["upper"]
    k = _leaf(cert, values)
    model = _Pattern(cert["pieces"][k], values)
    coefficients = [("c", kk, p, m, n) for kk in range(len(model.sorts["out"])) for p in range(len(model.sorts["in"]))
                    for m in range(len(model.sorts["in"])) for n in range(m, len(model.sorts["in"]))]
    J = [model.vector(r) for r in coefficients]
    for field_row, xi in ranks["upper_vectors"].items():
        assert all(sum(v * xi.get(c, 0) for c, v in row.items()) == 0 for row in J), field_row


@pytest.mark.parametrize("sizes", DEEP)
def test_deep_instances_replayed_on_the_full_width_network(certs, sizes):
    """The deep pieces' rows are computed by the checker on the small network of each row's features (the
    restriction lemma); here on the whole width-d network, every parameter, by forward mode."""
    values = dict(zip(("l", "d", "a"), sizes))
    ranks = _replay(certs["deep-dimension"], values)
    assert ranks["lower"] == _deep_formula(*sizes) == ranks["P"] - ranks["upper"]
    for field_row, xi in ranks["upper_vectors"].items():  # the fields annihilate every evaluation row used
        for row, vec in ranks["lower_vectors"].items():
            assert sum(v * xi.get(c, 0) for c, v in vec.items()) == 0, (field_row, row)


# -- the formulas against generic ranks computed from scratch ---------------------------------------------


def _rank_mod(rows) -> int:
    M = np.array(rows, dtype=np.int64) % PRIME
    return nmod_mat(M.shape[0], M.shape[1], M.ravel().tolist(), PRIME).rank() if M.size else 0


def _mm(*Ms):
    out = Ms[0] % PRIME
    for M in Ms[1:]:
        out = out.dot(M % PRIME) % PRIME
    return out


def _layer_rank(d, dd, a, heads, b, rng) -> int:
    """Rank mod p of ``W -> F`` at a random point: per parameter, ``dF = dV y y^T A + V y y^T dA``."""
    ws = []
    for _ in range(heads):
        w = {"Q": rng.integers(-50, 51, (a, d)), "K": rng.integers(-50, 51, (a, d))}
        w.update({"V": rng.integers(-50, 51, (dd, d))} if b is None else
                 {"U": rng.integers(-50, 51, (b, d)), "O": rng.integers(-50, 51, (dd, b))})
        ws.append(w)
    cols = []
    for w in ws:
        A = _mm(w["K"].T, w["Q"])
        V = w["V"] % PRIME if b is None else _mm(w["O"], w["U"])
        for name, M in w.items():
            for idx in np.ndindex(*M.shape):
                E = np.zeros(M.shape, dtype=np.int64)
                E[idx] = 1
                dA = {"Q": lambda: _mm(w["K"].T, E), "K": lambda: _mm(E.T, w["Q"])}.get(name, lambda: 0 * A)()
                dV = {"V": lambda: E, "U": lambda: _mm(w["O"], E), "O": lambda: _mm(E, w["U"])}.get(name, lambda: 0 * V)()
                T = (np.einsum("km,np->kpmn", dV, A) + np.einsum("km,np->kpmn", V, dA)) % PRIME
                iu = np.triu_indices(d, 1)
                cols.append(np.concatenate([(T + T.transpose(0, 1, 3, 2))[:, :, iu[0], iu[1]].ravel(),
                                            T[:, :, np.arange(d), np.arange(d)].ravel()]) % PRIME)
    return _rank_mod(cols)


def _deep_rank(l, d, a, rng, tokens=2) -> int:
    """Rank mod p of the deep network's Jacobian on random inputs (forward mode, exact mod p)."""
    Qs, Ks, Vs = ([rng.integers(-50, 51, shape) for _ in range(l)] for shape in ((a, d), (a, d), (d, d)))
    n = 2 * (l * (2 * a * d + d * d) // (d * tokens) + 3)
    Xs = rng.integers(-50, 51, (n, d, tokens))
    cols = []
    for i in range(l):
        for name, M in (("Q", Qs[i]), ("K", Ks[i]), ("V", Vs[i])):
            for idx in np.ndindex(*M.shape):
                out = []
                for X in Xs:
                    Y, dY = X % PRIME, np.zeros_like(X)
                    for k in range(l):
                        dQ, dK, dV = (np.zeros_like(W) for W in (Qs[k], Ks[k], Vs[k]))
                        if k == i:
                            {"Q": dQ, "K": dK, "V": dV}[name][idx] = 1
                        A, dA = _mm(Ks[k].T, Qs[k]), (_mm(dK.T, Qs[k]) + _mm(Ks[k].T, dQ)) % PRIME
                        S = _mm(Y.T, A, Y)
                        dS = (_mm(dY.T, A, Y) + _mm(Y.T, dA, Y) + _mm(Y.T, A, dY)) % PRIME
                        Y, dY = _mm(Vs[k], Y, S), (_mm(dV, Y, S) + _mm(Vs[k], dY, S) + _mm(Vs[k], Y, dS)) % PRIME
                    out.append(dY.ravel())
                cols.append(np.concatenate(out))
    return _rank_mod(cols)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (2, 1, 1), (3, 2, 2), (2, 3, 4), (3, 1, 1), (2, 2, 3), (4, 2, 3)])
def test_single_layer_formula_is_the_generic_rank(sizes):
    d, dd, a = sizes
    assert _layer_rank(d, dd, a, 1, None, np.random.default_rng(sum(sizes))) == _single_formula(d, dd, a)


@pytest.mark.parametrize("sizes", [(2, 2, 1, 1), (3, 3, 1, 1), (4, 2, 2, 2), (4, 2, 2, 1), (6, 2, 3, 2),
                                   (5, 1, 3, 5), (6, 3, 2, 2)])
def test_multihead_formula_is_the_generic_rank_inside_its_hypotheses(sizes):
    d, h, a, b = sizes
    assert h * max(a, b) <= d
    assert _layer_rank(d, d, a, h, b, np.random.default_rng(sum(sizes))) == _multi_formula(d, h, a, b)


def test_multihead_formula_fails_just_outside_its_hypotheses():
    """``4 -> 4``, ``h = 4``, ``a = b = 3`` (``h max(a, b) = 12 > d``): the formula says 116, the rank is 112
    (docs/math.md §7.1 quotes ``112 <= dim M <= 116``; the span bound is 160, so no saturation explains it)."""
    assert _multi_formula(4, 4, 3, 3) == 116
    ranks = {_layer_rank(4, 4, 3, 4, 3, np.random.default_rng(seed)) for seed in range(2)}
    assert ranks == {112}


@pytest.mark.parametrize("sizes", [(1, 3, 2), (2, 3, 1), (2, 3, 2), (3, 3, 2)])
def test_deep_formula_is_the_generic_rank(sizes):
    l, d, a = sizes
    assert _deep_rank(l, d, a, np.random.default_rng(sum(sizes))) == _deep_formula(l, d, a)


@pytest.mark.slow
@pytest.mark.parametrize("sizes", [(3, 4, 1), (3, 4, 2), (3, 4, 3), (2, 4, 3), (1, 4, 3), (3, 3, 3), (2, 4, 2),
                                   (2, 3, 3)])
def test_deep_formula_is_the_generic_rank_slow(sizes):
    l, d, a = sizes
    assert _deep_rank(l, d, a, np.random.default_rng(sum(sizes))) == _deep_formula(l, d, a)


# -- statements the checker does not hold, or would hold wrongly ---------------------------------------------


def _patched(monkeypatch, name, **changes):
    """The checker's statement of ``name`` that ``certs[name]`` is read with, changed (superseded for deep)."""
    table = allsizes.SUPERSEDED if name in allsizes.SUPERSEDED else allsizes.THEOREMS
    theorem = copy.deepcopy(table[name])
    theorem.update(changes)
    monkeypatch.setitem(table, name, theorem)
    return theorem


def _restated(cert, theorem):
    cert = copy.deepcopy(cert)
    cert.update({k: copy.deepcopy(theorem[k]) for k in ("parameters", "hypotheses", "formula")})
    return cert


@pytest.mark.parametrize("name,change", [
    ("single-layer-dimension", {"formula": [{"when": ["a <= d"], "value": "2*d*a + d*dd - a^2"},
                                            {"when": ["a >= d + 1"], "value": "d^2 + d*dd - 1"}]}),
    ("multihead-layer-dimension", {"hypotheses": ["h >= 1", "a >= 1", "b >= 1", "h*a <= 3*d", "h*b <= 3*d"]}),
    ("multihead-layer-dimension", {"hypotheses": ["h >= 1", "a >= 1", "b >= 1", "h*a <= d + 1", "h*b <= d + 1"]}),
    ("multihead-layer-dimension", {"formula": [{"when": [], "value": "2*h*a*d + 2*h*b*d - h*a^2 - h*b^2"}]}),
    ("deep-dimension", {"hypotheses": ["l >= 1", "l <= 4", "a >= 1", "a <= 3", "a <= d"]}),
    ("deep-dimension", {"hypotheses": ["l >= 1", "l <= 3", "a >= 1", "a <= 4", "a <= d"]}),
    ("deep-dimension", {"formula": [{"when": [], "value": "2*l*a*d - l*a^2 + d^2"}]}),
], ids=["single+1", "multi-h*a<=3d", "multi-h*a<=d+1", "multi+h", "deep-l<=4", "deep-a<=4", "deep+l"])
def test_honest_pieces_do_not_prove_a_wider_or_false_statement(certs, monkeypatch, name, change):
    """Were the checker's table of statements wrong (a later edit), the pieces must still not prove it: a wider
    range leaves sizes no piece covers (a cell of negative size, an equality l = 3 that no longer follows),
    a formula off by one or by h or l is not the blocks' sum."""
    theorem = _patched(monkeypatch, name, **change)
    with pytest.raises(CertificateRejected):
        check_certificate(_restated(certs[name], theorem))


@pytest.mark.parametrize("name,key,value", [
    ("multihead-layer-dimension", "hypotheses", ["h >= 1", "a >= 1", "b >= 1", "h*a <= 3*d", "h*b <= 3*d"]),
    ("deep-dimension", "hypotheses", ["l >= 1", "l <= 4", "a >= 1", "a <= 4", "a <= d"]),
    ("deep-dimension", "formula", [{"when": [], "value": "2*l*a*d - l*a^2 + d^2 - l + 0*d"}]),
    ("single-layer-dimension", "parameters", ["d", "dd", "a", "t"]),
])
def test_a_statement_the_checker_does_not_hold_is_refused(certs, name, key, value):
    """Claims of l = 4, a = 4 or the multi-head formula at 4 -> 4, h = 4, a = b = 3 are not in the table."""
    cert = copy.deepcopy(certs[name])
    cert[key] = value
    with pytest.raises(CertificateRejected, match="statement"):
        check_certificate(cert)


def _shifted(text, k) -> str:
    """``text + k`` written as the checker's polynomials are (expanded, ``^`` for powers)."""
    return str(sympy.expand(sympy.sympify(text.replace("^", "**")) + k)).replace("**", "^")


def _toy(monkeypatch, certs):
    """A one-size statement ``d >= 2, dd = a = 1`` with a formula one above the truth (3d - 2), its single piece
    the honest one of the certificate (cells o0, q0, R = d - 2), field blocks trimmed to fit ``P - formula``."""
    single = certs["single-layer-dimension"]
    theorem = _patched(monkeypatch, "single-layer-dimension",
                       hypotheses=["d >= 2", "dd >= 1", "dd <= 1", "a >= 1", "a <= 1"],
                       formula=[{"when": [], "value": "2*d*a + d*dd - a^2"}])
    k = next(i for i, p in enumerate(single["pieces"]) if set(p["cells"]) == {"o0", "q0", "R"})
    piece = copy.deepcopy(single["pieces"][k])
    cert = _restated(single, theorem)
    cert["cases"], cert["pieces"] = {"piece": 0}, [piece]
    upper = piece["upper"]["blocks"]
    drop = next(i for i, b in enumerate(upper) if b["count"] == "1" and len(b["columns"]) == 1)
    upper.pop(drop)
    piece["upper"]["fields"] = _shifted(piece["upper"]["fields"], -1)
    piece["lower"]["rank"] = _shifted(piece["lower"]["rank"], 1)
    return cert, piece


def test_the_toy_statement_is_false_and_its_honest_minor_is_maximal():
    """3d - 2 is the rank at d = 2..4 (so the toy formula 3d - 1 is false): what the search below fights."""
    for d in (2, 3, 4):
        assert _layer_rank(d, 1, 1, 1, None, np.random.default_rng(d)) == 3 * d - 2 == _single_formula(d, 1, 1)


def test_no_single_extra_block_proves_a_formula_one_too_high(certs, monkeypatch):
    """Exhaustive search for a consistent lie: one more 1 x 1 block of count 1 (every coefficient row and every
    parameter column on the distinguished indices), its matrix the one the checker computes, inserted at every
    position of the lower minor. The formula is false, so each attempt must be refused."""
    cert, piece = _toy(monkeypatch, certs)
    with pytest.raises(CertificateRejected):  # without the extra block the rank does not reach the formula
        check_certificate(cert)
    sizes = allsizes._Sizes(cert["parameters"])
    model = pattern.Piece(piece, False, lambda t, w: sizes.poly(t, w))
    singles = [c for c in piece["cells"] if piece["cells"][c] == "1"]

    def candidates(names):
        """Coefficient rows and parameter columns on the distinguished indices, variables named by ``names``."""
        ins = [[names[c]] for c in singles]
        outs = [[names[c]] for c in singles if [c] in piece["sorts"]["out"]]
        hids = [[names[c]] for c in singles if [c] in piece["sorts"]["hid"]]
        rows = [["c", [k, p, m, n]] for k in outs for p in ins for m in ins for n in ins if m <= n]
        columns = ([[f, [[], s, i]] for f in "QK" for s in hids for i in ins]
                   + [["V", [[], k, i]] for k in outs for i in ins])
        return rows, columns

    names = {c: f"_{c}" for c in singles}
    rows, columns = candidates(names)

    def matrix(raw):
        block = pattern.Block(model, raw, "lower", "b", 999)
        support = [model.row_support(r) for r in block.rows]
        return [[sum(v for t, v in entries if pattern._match_own(model, t, c)) for c in block.columns]
                for entries in support]

    def refused(position, raw):
        attempt = copy.deepcopy(cert)
        blocks = attempt["pieces"][0]["lower"]["blocks"]
        if position is None:
            blocks.append(raw)
        else:
            blocks[position] = raw
        with pytest.raises(CertificateRejected, match="meets a column|singular"):
            check_certificate(attempt)

    tried = 0
    for row, col in itertools.product(rows, columns):  # a new 1 x 1 block of count 1, at every position
        used = {v for t in row[1] + col[1] for v in t}
        raw = {"vars": {names[c]: c for c in singles if names[c] in used}, "columns": [col], "rows": [row],
               "matrix": [[0]], "count": "1"}
        raw["matrix"] = matrix(raw)
        if raw["matrix"] == [[0]]:
            continue
        for position in range(len(piece["lower"]["blocks"]) + 1):
            attempt = copy.deepcopy(cert)
            attempt["pieces"][0]["lower"]["blocks"].insert(position, raw)
            tried += 1
            with pytest.raises(CertificateRejected, match="meets a column|singular"):
                check_certificate(attempt)
    for b, honest in enumerate(piece["lower"]["blocks"]):  # a block of count 1 grown by one row and one column
        if honest["count"] != "1":
            continue
        own = {**{c: f"_{c}" for c in singles}, **{honest["vars"][v]: v for v in honest["vars"]}}
        for row, col in itertools.product(*candidates(own)):
            if row in honest["rows"] or col in honest["columns"]:
                continue
            raw = copy.deepcopy(honest)
            raw["rows"].append(row)
            raw["columns"].append(col)
            used = {v for fam, terms in raw["rows"] + raw["columns"] for t in terms for v in t}
            raw["vars"] = {**raw["vars"], **{own[c]: c for c in singles if own[c] in used}}
            raw["matrix"] = matrix(raw)
            if fmpz_mat(raw["matrix"]).det() == 0:
                continue
            tried += 1
            refused(b, raw)
    assert tried >= 40


# -- the case tree and the pieces' bookkeeping, edited consistently -----------------------------------------


def _multi_tamper_split_sign(c):  # ge and lt exchanged: each piece lands where its cells can be negative
    c["cases"]["ge"], c["cases"]["lt"] = c["cases"]["lt"], c["cases"]["ge"]
    _first(c, 4)


def _multi_tamper_split_off_by_one(c):  # a + b >= 2 instead of 3: a = b = 1 sent to the a + b >= 3 pieces
    c["cases"]["split"] = "a + b - 2"
    _first(c, 1)


def _multi_tamper_cell_shift(c):  # a cell and a sort shifted together: in still sums to d, but R = d - h*b + 1
    p = c["pieces"][0]
    p["cells"]["R"] = "d - h*b + 1"
    p["cells"]["B"] = "b - a - 1"


def _multi_tamper_equality(c):  # the a = b = 1 piece claims a = 2 too
    k = next(i for i, p in enumerate(c["pieces"]) if p["equalities"])
    c["pieces"][k]["equalities"] = ["a = 2", "b = 1"]
    _first(c, k)


def _multi_tamper_sort_shape_twice(c):  # one shape listed twice: the sort has one cell too many indices
    p = c["pieces"][0]
    p["sorts"]["hid"] = p["sorts"]["hid"] + [p["sorts"]["hid"][0]]


def _multi_tamper_hid_from_val(c):  # the hidden sort made of the value cells (a and b exchanged)
    _first(c, 1)
    p = c["pieces"][0]
    p["sorts"]["hid"], p["sorts"]["val"] = p["sorts"]["val"], p["sorts"]["hid"]


def _multi_tamper_drop_head_cell(c):  # one head's worth of heads: the head cell made a singleton
    c["pieces"][4]["cells"]["H"] = "1"
    _first(c, 4)


MULTI_TAMPERS = [_multi_tamper_split_sign, _multi_tamper_split_off_by_one, _multi_tamper_cell_shift,
                 _multi_tamper_equality, _multi_tamper_sort_shape_twice, _multi_tamper_hid_from_val,
                 _multi_tamper_drop_head_cell]


@pytest.mark.parametrize("tamper", MULTI_TAMPERS, ids=lambda f: f.__name__[len("_multi_tamper_"):])
def test_consistent_edits_of_the_multihead_bookkeeping_are_refused(certs, tamper):
    cert = copy.deepcopy(certs["multihead-layer-dimension"])
    tamper(cert)
    with pytest.raises(AttngeoError):
        check_certificate(cert)


def test_an_empty_cell_smuggles_nothing(certs):
    """A cell of size 0 added as a head shape (and to every other sort), with a template of Q over it: no index
    exists, and the checker, which never sums over a cell it cannot tie to an index, proves the same claim (it
    must not refuse a true statement; the extra template adds no rank). A block over the empty cell has no
    instance: claiming one is refused."""
    honest = certs["single-layer-dimension"]
    cert = copy.deepcopy(honest)
    p = next(p for p in cert["pieces"] if len(p["cells"]) == 1)  # d = dd = a = 1: one singleton S0
    p["cells"]["Z"] = "0"
    for sort in p["sorts"]:
        p["sorts"][sort] = p["sorts"][sort] + [["Z"]]
    p["point"]["Q"] = p["point"]["Q"] + [{"vars": {"z": "Z", "s": "S0"}, "index": [["z"], ["s"], ["s"]], "value": 1}]
    assert check_certificate(cert).claim == check_certificate(honest).claim
    fake = copy.deepcopy(p["lower"]["blocks"][0])
    fake["vars"] = {v: "Z" for v in fake["vars"]}
    p["lower"]["blocks"].append(fake)
    p["lower"]["rank"] = _shifted(p["lower"]["rank"], len(fake["columns"]))
    with pytest.raises(CertificateRejected, match="count is not the number of its instances"):
        check_certificate(cert)


def test_an_entry_that_grows_with_the_sizes_is_refused(certs):
    """Lemma 7.1.1 needs every summation index tied to an index of the row, the column or a singleton: with
    Q[s, 0] = K[s, 1] = 1 for every s of the bulk hidden cell S, A[1, 0] = |S| = a - 2 depends on the sizes and
    no block matrix can be the same at every size. (docs/math.md §7.1 states the condition, boundedness, as a
    hypothesis of the lemma; the checker enforces it.)"""
    cert = copy.deepcopy(certs["single-layer-dimension"])
    k = next(i for i, p in enumerate(cert["pieces"]) if set(p["cells"]) == {"S0", "S1", "S", "E", "R"})
    point = cert["pieces"][k]["point"]
    point["Q"].append({"vars": {"s": "S", "p": "S0"}, "index": [[], ["s"], ["p"]], "value": 1})
    point["K"].append({"vars": {"s": "S", "n": "S1"}, "index": [[], ["s"], ["n"]], "value": 1})
    with pytest.raises(CertificateRejected, match="sums over a whole cell"):
        check_certificate(_first(cert, k))


@pytest.mark.parametrize("limit,value", [("MAX_PATTERN_WORK", 200), ("MAX_SUPPORT_BRANCHES", 0)])
def test_work_above_the_checkers_limits_is_unusable_not_accepted(certs, monkeypatch, limit, value):
    """The support search prunes factors by their cells before unifying; the budget must still see every
    lookup and every branch, so an honest certificate checked under a lowered limit is refused as unusable."""
    from attngeo.exceptions import CertificateFormatError

    monkeypatch.setattr(pattern, limit, value)
    with pytest.raises(CertificateFormatError, match="limit"):
        check_certificate(copy.deepcopy(certs["multihead-layer-dimension"]))


def _first(cert, k) -> dict:
    """The same certificate with piece ``k`` renumbered 0, so the checker (which goes in order) meets it first."""
    def swap(node):
        if "piece" in node:
            node["piece"] = {k: 0, 0: k}.get(node["piece"], node["piece"])
        for key in ("ge", "lt"):
            if key in node:
                swap(node[key])

    swap(cert["cases"])
    cert["pieces"][0], cert["pieces"][k] = cert["pieces"][k], cert["pieces"][0]
    return cert


def _recomputed(cert, k) -> dict:
    """Every block's matrix of piece ``k`` recomputed by the checker's own engine: what an adversary who edits
    the point would do so that no matrix gives the edit away."""
    from attngeo.check.dimension.deeppattern import DeepPiece

    raw = cert["pieces"][k]
    sizes = allsizes._Sizes(cert["parameters"])
    size_of = lambda t, w: sizes.poly(t, w)  # noqa: E731
    piece = DeepPiece(raw, size_of) if cert["theorem"] == "deep-dimension" else \
        pattern.Piece(raw, "U" in raw["point"], size_of)
    for side in ("lower", "upper"):
        for i, b in enumerate(raw[side]["blocks"]):
            block = pattern.Block(piece, b, side, "b", i)
            b["matrix"] = [[sum(v for t, v in piece.row_support(r) if pattern._match_own(piece, t, col))
                            for col in block.columns] for r in block.rows]
    return cert


def _deep_piece(cert, l, a):
    return next(i for i, p in enumerate(cert["pieces"]) if p["equalities"] == [f"l = {l}", f"a = {a}"])


@pytest.mark.parametrize("l,a", [(3, 3), (2, 2), (1, 3)])
def test_a_rank_deficient_deep_core_is_refused_even_with_recomputed_matrices(certs, l, a):
    """Q_1 of rank a - 1 (its last row a copy of the first), every matrix recomputed by the checker's engine:
    the rank the formula needs is not there, so some block is singular or a row meets a later column."""
    cert = copy.deepcopy(certs["deep-dimension"])
    k = _deep_piece(cert, l, a)
    Q = cert["pieces"][k]["layers"][0]["Q"]
    Q[-1] = list(Q[0])
    with pytest.raises(CertificateRejected, match="singular|meets a column"):
        check_certificate(_recomputed(cert, k))


def test_a_rescaled_deep_core_with_recomputed_matrices_is_still_a_proof(certs):
    """The checker is not tied to the prover's numbers: Q_i doubled (still generic) and the matrices recomputed
    give a certificate that verifies; its claim names only the tabled depths and ranks (l <= 3, a <= 3), and
    every piece is for one of them (no l = 4 or a = 4 piece rides along)."""
    cert = copy.deepcopy(certs["deep-dimension"])
    k = _deep_piece(cert, 3, 3)
    for layer in cert["pieces"][k]["layers"]:
        layer["Q"] = [[2 * v for v in r] for r in layer["Q"]]
    claim = check_certificate(_recomputed(cert, k)).claim
    assert claim.startswith("for all sizes: dim M = 2*l*a*d - l*a^2 + d^2 - l;") and "l <= 3" in claim and "a <= 3" in claim
    eqs = [p["equalities"] for p in certs["deep-dimension"]["pieces"]]
    assert all(any(e in ("l = 1", "l = 2", "l = 3") for e in q) and any(e in ("a = 1", "a = 2", "a = 3") for e in q)
               for q in eqs)


def test_a_parallel_multihead_point_is_refused_even_with_recomputed_matrices(certs):
    """The a = b = 1 piece with U_j reading the same input as K_j (row U_j = row K_j: every head rank-1
    parallel, docs/math.md §7.5 Lemma K) and all matrices recomputed: refused."""
    cert = copy.deepcopy(certs["multihead-layer-dimension"])
    k = next(i for i, p in enumerate(cert["pieces"]) if p["equalities"])
    point = cert["pieces"][k]["point"]
    point["U"] = [{"vars": t["vars"], "index": t["index"], "value": t["value"]} for t in point["K"]]
    with pytest.raises(CertificateRejected, match="singular|meets a column|sums over a whole cell"):
        check_certificate(_first(_recomputed(cert, k), k))


def _deep_tamper_hidden_is_core(c, k):  # the hidden index is a feature too
    p = c["pieces"][k]
    p["sorts"]["feat"] = p["sorts"]["feat"] + [p["sorts"]["hid"][0]]
    p["cells"]["R"] = _shifted(p["cells"]["R"], -1)


def _deep_tamper_scaled_core(c, k):  # Q scaled by 2, the prover's matrices kept: they no longer fit
    for layer in c["pieces"][k]["layers"]:
        layer["Q"] = [[2 * v for v in r] for r in layer["Q"]]


def _deep_tamper_extra_layer(c, k):  # a fourth layer, its equality l = 3 kept
    p = c["pieces"][k]
    p["layers"].append(copy.deepcopy(p["layers"][-1]))


def _deep_tamper_extra_hidden(c, k):  # rank 4 under a = 3: a fourth hidden index and a row of Q, K per layer
    p = c["pieces"][k]
    p["cells"]["h3"] = "1"
    p["sorts"]["hid"].append(["h3"])
    for layer in p["layers"]:
        for name in ("Q", "K"):
            layer[name].append([1] * len(layer[name][0]))


DEEP_TAMPERS = [_deep_tamper_hidden_is_core, _deep_tamper_scaled_core, _deep_tamper_extra_layer,
                _deep_tamper_extra_hidden]


@pytest.mark.parametrize("tamper", DEEP_TAMPERS, ids=lambda f: f.__name__[len("_deep_tamper_"):])
def test_consistent_edits_of_a_deep_piece_are_refused(certs, tamper):
    cert = copy.deepcopy(certs["deep-dimension"])
    tamper(cert, _deep_piece(cert, 3, 3))
    with pytest.raises(AttngeoError):
        check_certificate(cert)


# -- differential review of the sped-up support search (issue 25: commits 24c7a52, d68586d) ----------------


def _padded_with_empty_shapes(cert, n) -> dict:
    """Every piece with a cell ``Z`` of size 0 and ``n`` more shapes over it in each sort the support search
    ranges over (head, hid, val): no index has such a shape, so the certificate states and proves the same."""
    cert = copy.deepcopy(cert)
    for p in cert["pieces"]:
        p["cells"]["Z"] = "0"
        extra = [list(t) for size in (1, 2, 3) for t in itertools.product(sorted(p["cells"]), repeat=size) if "Z" in t]
        for sort in ("head", "hid", "val"):
            p["sorts"][sort] = p["sorts"][sort] + extra[:n]
    return cert


def _work(monkeypatch, cert) -> int:
    """The units the checker charges to its budget for ``cert`` (``spend`` recorded, the limit kept)."""
    total = [0]
    spend = pattern.spend

    def recorded(piece, work):
        total[0] += work
        spend(piece, work)

    monkeypatch.setattr(pattern, "spend", recorded)
    check_certificate(copy.deepcopy(cert))
    monkeypatch.setattr(pattern, "spend", spend)
    return total[0]


def test_shapes_no_template_uses_are_charged_to_the_budget(certs, monkeypatch):
    """Empty shapes multiply the (head, order, hid, val) combinations every coefficient row visits; the old
    search paid a lookup for each, the cell-pruned one paid nothing when two factors were empty (24c7a52, fixed in c76347f). With the limit
    at twice the honest certificate's work the padded one (about 50 times the combinations per row) must be
    unusable, or a file could buy unbounded CPU with no budget (pad 20: 20 s against 0.2 s, the same work)."""
    from attngeo.exceptions import CertificateFormatError

    honest = certs["multihead-layer-dimension"]
    monkeypatch.setattr(pattern, "MAX_PATTERN_WORK", 2 * _work(monkeypatch, honest))
    with pytest.raises(CertificateFormatError):
        check_certificate(_padded_with_empty_shapes(honest, 4))


def test_the_implication_shortcut_agrees_with_elimination():
    """``implies`` answers "a constraint plus a nonnegative constant" without elimination; on random small
    systems (constraints among ``x``, ``y``, ``x*y`` with constants around the shortcut's edge) it must give
    what Fourier–Motzkin gives for ``S`` and ``-g - 1 >= 0``: never more (an implication that fails at an
    integer point), never less."""
    from attngeo.check.inequalities import implies, infeasible
    from attngeo.check.poly import ring

    rng = np.random.default_rng(25)
    x, y = ring(("x", "y")).gens()
    monomials = [x, y, x * y]
    seen = set()
    for _ in range(300):
        system = [sum(int(c) * m for c, m in zip(rng.integers(-2, 3, 3), monomials)) + int(rng.integers(-3, 4))
                  for _ in range(rng.integers(1, 4))]
        g = system[rng.integers(len(system))] + int(rng.integers(-2, 3))
        if rng.random() < 0.3:
            g = g + int(rng.integers(-1, 2)) * monomials[rng.integers(3)]
        expected = infeasible(system + [-g - 1])
        assert implies(system, g) == expected, (system, g)
        seen.add(expected)
    assert seen == {True, False}


def test_an_implication_the_shortcut_would_fake_is_refused():
    """``g = s + c`` with ``c < 0`` is not implied by ``s >= 0`` (``s = 0``): the shortcut must not fire, and
    ``g = s`` or ``s + 3`` must (real examples: a piece's cell ``a - 2`` under its split ``a - 2 >= 0``)."""
    from attngeo.check.inequalities import implies
    from attngeo.check.poly import ring

    d, a = ring(("d", "a")).gens()
    s = a - 2
    assert implies([s], s) and implies([s], s + 3) and implies([d - a, s], d - 2)
    assert not implies([s], s - 1) and not implies([s], 2 * s - 1) and not implies([s, d], s - d)
