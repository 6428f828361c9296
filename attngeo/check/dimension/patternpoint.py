"""The checker's own symbolic engine for pattern points of one lightning layer (docs/math.md §7.1).

A *piece* of an all-sizes certificate describes a point without fixing the
sizes: **cells** (index sets whose sizes are polynomials in the size
parameters; size exactly 1 is a *singleton*), **sorts** (``head``, ``in``,
``out``, ``hid`` and, for ``V = O U``, ``val``), each a list of **shapes**
(tuples of cells; an index of that shape is a tuple of elements), and the point
as **templates**: ``Q[j][s, (j, s)] = 1`` for ``j`` in one cell and ``s`` in
another, every entry no template names being 0.

Everything the certificate's blocks claim is decided here from the layer
formula written once more, as *chains* of weight entries,

* coefficient ``c[k, p, m, n]`` of ``y_m y_n`` in ``F_kp``, ``F = Σ_j V_j y yᵀ K_jᵀ Q_j``:
  ``Σ_{j, s} V_j[k, m'] K_j[s, n'] Q_j[s, p]`` over the orders ``(m', n')`` of ``{m, n}``
  (``V_j[k, m'] = Σ_r O_j[k, r] U_j[r, m']`` when factored);
* fields ``intra(j, u, v)``: ``δQ_j = E_uv Q_j``, ``δK_j = -E_uvᵀ K_j``; ``scaling(j)``:
  ``δQ_j = Q_j``, ``δV_j = -V_j`` (``δO_j = -O_j``); ``value(j, u, v)``: ``δU_j = E_uv U_j``,
  ``δO_j = -O_j E_uv``,

evaluated by **unification**: indices are symbols — a block's variables (rigid:
distinct indices of one cell stay distinct), the element of a singleton cell,
and flexible symbols for the summation indices and each template's variables.
A weight entry is nonzero at the point exactly when its index terms unify with a
template, so the derivative of a coefficient (or a field's value) along each
parameter is found by unifying all other factors of a chain. Unification asks
only which indices coincide and in which cells they lie: that is the small-model
lemma (every instance of a block type gives the same matrix), and the checker
never builds the layer at any size.
"""

from __future__ import annotations

import itertools
import re

from flint import fmpz_mat

from ...exceptions import CertificateFormatError
from ..limits import (MAX_BLOCK_SIDE, MAX_BLOCK_VARS, MAX_BLOCKS, MAX_CELLS, MAX_PATTERN_WORK, MAX_SUPPORT_BRANCHES,
                      MAX_TEMPLATES)
from ..values import field, integer, obj, reject, seq

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,31}")

#: Index sorts of the weight matrices (head, row, column) and of the fields, written again for the checker.
WEIGHTS = {False: {"Q": ("head", "hid", "in"), "K": ("head", "hid", "in"), "V": ("head", "out", "in")},
           True: {"Q": ("head", "hid", "in"), "K": ("head", "hid", "in"), "U": ("head", "val", "in"),
                  "O": ("head", "out", "val")}}
FIELD_SORTS = {False: {"intra": ("head", "hid", "hid"), "scaling": ("head",)},
               True: {"intra": ("head", "hid", "hid"), "scaling": ("head",), "value": ("head", "val", "val")}}
COEFFICIENT = ("out", "in", "in", "in")


def identifier(value, where: str) -> str:
    """A cell or variable name: a short identifier, else the certificate is rejected.

    Examples
    --------
    >>> identifier("S0", "a cell")
    'S0'
    >>> identifier("x y", "a cell")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: a cell must be a short identifier
    """
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        reject(f"{where} must be a short identifier")
    return value


class Indices:
    """Cells (sizes read by ``size_of``), singletons and the symbols of block variables: what every piece shares.

    Examples
    --------
    >>> from attngeo.check.poly import parse, ring
    >>> R = ring(("d",))
    >>> ix = Indices({"o": "1", "R": "d - 1"}, lambda text, where: parse(text, R, where, nonzero=False))
    >>> ix.sorts = {"in": [("o",), ("R",)]}
    >>> sym = ix.rigid("x:b0", {"u": "o", "v": "R"})
    >>> sym, ix.shape(ix.term(sym, ["v"], "in", "t"))
    ({'u': '@o', 'v': 'x:b0:v'}, ('R',))
    """

    def __init__(self, cells, size_of):
        cells = obj(cells, "cells")
        if not cells or len(cells) > MAX_CELLS:
            reject(f"a piece has between 1 and {MAX_CELLS} cells")
        self.size = {identifier(c, "a cell"): size_of(text, f"cells.{c}") for c, text in cells.items()}
        self.singleton = {c for c, s in self.size.items() if s == 1}
        self.cell_of: dict[str, str] = {f"@{c}": c for c in self.singleton}

    def _cell(self, c, where: str = "a sort") -> str:
        if c not in self.size:
            reject(f"{where} names an unknown cell")
        return c

    def rigid(self, namespace: str, vars_: dict) -> dict:
        """Symbols for a block's variables: ``namespace:name``, or the singleton element."""
        out = {}
        for v, c in vars_.items():
            s = f"@{c}" if c in self.singleton else f"{namespace}:{v}"
            self.cell_of[s] = c
            out[v] = s
        return out

    def term(self, symbols: dict, raw, sort: str, where: str) -> tuple:
        """An index term of ``sort`` from variable names."""
        term = tuple(symbols.get(v) or reject(f"{where} uses an undeclared variable") for v in seq(raw, where))
        if tuple(self.cell_of[s] for s in term) not in self.sorts[sort]:
            reject(f"{where} is not an index of sort {sort}")
        return term

    def shape(self, term: tuple) -> tuple:
        """The cells of an index term's symbols."""
        return tuple(self.cell_of[s] for s in term)


class Piece(Indices):
    """One piece of an all-sizes certificate, read and ready to evaluate.

    Examples
    --------
    The coefficient of ``y_0 y_1`` in ``F_01`` at the plain point of ``2 <= a <= dd <= d`` (inputs ``S0, S1``
    distinguished) depends on ``V[0, 0]`` (through ``A[1, 1] = 1``) and on ``Q[1, 1]``, ``K[1, 1]``:

    >>> from attngeo.theorems.allsizes import prove, piece_at
    >>> from attngeo.check.poly import parse, ring
    >>> cert = prove("single-layer-dimension")
    >>> k = piece_at(cert, {"d": 5, "dd": 3, "a": 2})
    >>> R = ring(("d", "dd", "a"))
    >>> piece = Piece(cert["pieces"][k], False, lambda text, where: parse(text, R, where, nonzero=False))
    >>> sorted(piece.singleton), piece.sorts["hid"]
    (['S0', 'S1'], [('S0',), ('S1',), ('S',)])
    >>> o, i = "@S0", "@S1"
    >>> sorted(piece.row_support(("c", ((o,), (i,), (o,), (i,)))))
    [(('K', ((), ('@S1',), ('@S1',))), 1), (('Q', ((), ('@S1',), ('@S1',))), 1), (('V', ((), ('@S0',), ('@S0',))), 1)]

    Parameters
    ----------
    data : dict
        ``cells``, ``sorts``, ``point`` of the piece.
    factored : bool
        ``V_j = O_j U_j``.
    size_of : callable
        Reads a cell size (a polynomial text) into the checker's ring.
    budget : dict
        ``{"work": n}``, shared by the pieces of one certificate: template unifications so far.
    """

    def __init__(self, data: dict, factored: bool, size_of, budget: dict | None = None):
        self.factored = factored
        self.budget = budget if budget is not None else {"work": 0}
        self.weights = WEIGHTS[factored]
        super().__init__(field(data, "cells"), size_of)
        sorts = obj(field(data, "sorts"), "sorts")
        wanted = {"head", "in", "out", "hid"} | ({"val"} if factored else set())
        if set(sorts) != wanted:
            reject(f"sorts must be exactly {sorted(wanted)}")
        self.sorts = {}
        for s in sorted(wanted):
            shapes = [tuple(self._cell(c, f"sorts.{s}") for c in seq(x, f"sorts.{s}[]")) for x in seq(sorts[s], f"sorts.{s}")]
            if not shapes or len(set(shapes)) != len(shapes) or len(shapes) > 4 * MAX_CELLS:
                reject(f"sorts.{s} must list distinct shapes")
            self.sorts[s] = shapes
        point = obj(field(data, "point"), "point")
        if set(point) != set(self.weights):
            reject(f"point must give templates for exactly {sorted(self.weights)}")
        self.templates = {}
        total = 0
        for fam, sorts_ in self.weights.items():
            out = []
            for k, t in enumerate(seq(point[fam], f"point.{fam}")):
                out.append(self._template(t, sorts_, f"point.{fam}[{k}]"))
            total += len(out)
            self.templates[fam] = out
        self.template_cells = {fam: [tuple(tuple(vars_[v] for v in term) for term in terms) for vars_, terms, _ in out]
                               for fam, out in self.templates.items()}
        # a coefficient's chain knows every index term, so its lookups go straight to the templates of its cells
        self.by_cells: dict = {fam: {} for fam in self.templates}
        for fam, cells in self.template_cells.items():
            for t, c in zip(self.templates[fam], cells):
                self.by_cells[fam].setdefault(c, []).append(t)
        if total > MAX_TEMPLATES:
            raise CertificateFormatError(f"a point of {total} templates is above the checker's limit {MAX_TEMPLATES}")
        self._fresh = itertools.count()

    def _template(self, t, sorts_, where: str):
        t = obj(t, where)
        if set(t) != {"vars", "index", "value"}:
            reject(f"{where} must have exactly vars, index, value")
        vars_ = {identifier(v, f"{where}.vars"): self._cell(c, f"{where}.vars") for v, c in obj(t["vars"], f"{where}.vars").items()}
        index = seq(t["index"], f"{where}.index", 3)
        terms = []
        for i, (term, sort) in enumerate(zip(index, sorts_)):
            term = tuple(seq(term, f"{where}.index[{i}]"))
            for v in term:
                if v not in vars_:
                    reject(f"{where}.index uses an undeclared variable")
            if tuple(vars_[v] for v in term) not in self.sorts[sort]:
                reject(f"{where}.index[{i}] is not an index of sort {sort}")
            terms.append(term)
        if {v for term in terms for v in term} != set(vars_):
            reject(f"{where}: every variable must appear in the index")
        value = integer(t["value"], f"{where}.value", -(2**20), 2**20)
        if value == 0:
            reject(f"{where}.value must be nonzero")
        return vars_, terms, value

    max_side = MAX_BLOCK_SIDE

    def row_families(self, kind: str) -> dict:
        """Row families of a minor: coefficients ``c[k, p, m, n]`` (lower) or the symmetry fields (upper)."""
        return {"c": COEFFICIENT} if kind == "lower" else FIELD_SORTS[self.factored]

    def row_support(self, row) -> list:
        """``[(column term, value)]`` of one row of a minor (its family and index terms)."""
        if row[0] == "c":
            return coefficient_support(self, row[1])
        return field_support(self, row[0], row[1])

    # ------------------------------------------------------------ symbols and unification

    def flexible(self, cell: str) -> str:
        """A fresh summation or template symbol in ``cell`` (a singleton's element is its own symbol)."""
        if cell in self.singleton:
            return f"@{cell}"
        s = f"~{next(self._fresh)}"
        self.cell_of[s] = cell
        return s



class State:
    """Union-find over symbols. A class holds at most one rigid symbol per namespace (``x:``, ``y:``), since
    distinct variables of one block are distinct indices; symbols of different cells never merge.

    Examples
    --------
    >>> cells = {"x:b:u": "A", "x:b:v": "A", "y:c:w": "A", "~0": "A", "@o": "o"}
    >>> s = State(cells).unify(("x:b:u", "~0"), ("y:c:w", "x:b:v"))
    >>> s.find("~0") in ("x:b:v",), s.find("y:c:w") == s.find("x:b:u")
    (True, True)
    >>> State(cells).merge("x:b:u", "x:b:v") is None, State(cells).merge("~0", "@o") is None
    (True, True)
    """

    __slots__ = ("parent", "members", "cell_of")

    def __init__(self, cell_of: dict, parent=None, members=None):
        self.cell_of = cell_of
        self.parent = parent if parent is not None else {}
        self.members = members if members is not None else {}

    def find(self, s: str) -> str:
        while s in self.parent:
            s = self.parent[s]
        return s

    def _tags(self, root: str) -> dict:
        got = self.members.get(root)
        if got is not None:
            return got
        return {root.split(":")[0]: root} if ":" in root else {}

    def merge(self, a: str, b: str):
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return self
        if self.cell_of[ra] != self.cell_of[rb]:
            return None
        ta, tb = self._tags(ra), self._tags(rb)
        for ns in set(ta) & set(tb):
            if ta[ns] != tb[ns]:
                return None
        # the rigid or singleton symbol stays the root, so a class is named by it
        if rb.startswith("~") and not ra.startswith("~"):
            ra, rb = rb, ra
        parent = dict(self.parent)
        parent[ra] = rb
        members = dict(self.members)
        members[rb] = {**ta, **tb}
        members.pop(ra, None)
        return State(self.cell_of, parent, members)

    def unify(self, left: tuple, right: tuple):
        state = self
        if len(left) != len(right):
            return None
        for a, b in zip(left, right):
            state = state.merge(a, b)
            if state is None:
                return None
        return state


def spend(piece, work: int) -> None:
    """Count ``work`` units (a unification, a gradient entry) against the certificate's budget.

    Raises
    ------
    CertificateFormatError
        Above ``MAX_PATTERN_WORK`` units for the whole certificate (unusable input, exit 2).

    Examples
    --------
    >>> class P: budget = {"work": 0}
    >>> spend(P, 10); P.budget
    {'work': 10}
    """
    piece.budget["work"] += work
    if piece.budget["work"] > MAX_PATTERN_WORK:
        raise CertificateFormatError(f"checking this certificate needs more than {MAX_PATTERN_WORK} steps of "
                                     "unification and evaluation (the checker's limit)")


def _lookup(piece: Piece, state: State, family: str, known: list, candidates=None):
    """Templates of ``family`` whose index agrees with the known terms: ``(state, terms, value)`` each.

    A template's index has the template's cells, so a known term must have exactly those cells; with every
    term known the candidates are read from ``piece.by_cells`` (or passed in, already read), otherwise the
    templates are scanned. The budget is charged for every template either way, so the checker's limits do
    not depend on the route.
    """
    spend(piece, len(piece.templates[family]))
    if candidates is None:
        shapes = tuple(k if k is None else piece.shape(k) for k in known)
        if None in shapes:
            candidates = [t for t, cells in zip(piece.templates[family], piece.template_cells[family])
                          if all(c is None or c == t_ for c, t_ in zip(shapes, cells))]
        else:
            candidates = piece.by_cells[family].get(shapes, ())
    for vars_, terms, value in candidates:
        sym = {v: piece.flexible(c) for v, c in vars_.items()}
        mapped = [tuple(sym[v] for v in term) for term in terms]
        s = state
        for k, term in zip(known, mapped):
            if k is not None:
                s = s.unify(k, term)
                if s is None:
                    break
        if s is not None:
            yield s, mapped, value


def _resolve(state: State, family: str, terms: list, bound: set) -> tuple:
    """The output term with each symbol replaced by its class's name; ``bound`` collects the classes used."""
    out = []
    for term in terms:
        t = tuple(state.find(s) for s in term)
        bound.update(t)
        out.append(t)
    return (family, tuple(out))


def _free_summation(state: State, symbols: list, used: set) -> bool:
    """A summation symbol no factor tied to a block variable, a singleton or the output: a sum over a whole cell."""
    for s in symbols:
        r = state.find(s)
        if r.startswith("~") and r not in used:
            return True
    return False


def coefficient_support(piece: Piece, row: tuple) -> list:
    """``[(column term, value)]``: every parameter the coefficient ``c[k, p, m, n]`` depends on at the point.

    ``row`` holds four index terms of rigid symbols. A column term is ``(family, (head, row, column))``
    whose symbols are the row's, singletons, or free symbols (``~n``) standing for any index of their cell.

    Examples
    --------
    See :class:`Piece` (``Piece.row_support`` calls this for coefficient rows).

    >>> coefficient_support.__name__
    'coefficient_support'
    """
    k, p, m, n = row
    orders = [(m, n)] if m == n else [(m, n), (n, m)]
    out = []
    branches = 0

    def extend(states: list, g: int) -> list:
        nonlocal branches
        fam, terms = chain[g]
        nxt = [(st2, val * v) for st, val in states for st2, _, v in _lookup(piece, st, fam, terms, cands[g])]
        branches += len(nxt)
        if branches > MAX_SUPPORT_BRANCHES:
            raise CertificateFormatError("a coefficient's support takes more branches than the "
                                         f"checker's limit {MAX_SUPPORT_BRANCHES}")
        return nxt

    shape = {t: piece.shape(t) for t in row}
    val_shapes = piece.sorts["val"] if piece.factored else [None]
    for head_shape in piece.sorts["head"]:
        for m1, n1 in orders:
            for hid_shape, val_shape in itertools.product(piece.sorts["hid"], val_shapes):
                # cells first: a factor whose cells match no template is zero, and the derivative skips one
                # factor only, so two such factors kill the chain and one leaves only its own derivative
                cells = [("K", (head_shape, hid_shape, shape[n1])), ("Q", (head_shape, hid_shape, shape[p]))]
                if piece.factored:
                    cells = [("O", (head_shape, shape[k], val_shape)), ("U", (head_shape, val_shape, shape[m1]))] + cells
                else:
                    cells = [("V", (head_shape, shape[k], shape[m1]))] + cells
                # charged as one lookup per factor, whether or not the cells prune it: shapes no template uses
                # multiply these combinations, and the budget must see them (else a file buys CPU for free)
                spend(piece, sum(len(piece.templates[fam]) for fam, _ in cells))
                cands = [piece.by_cells[fam].get(c, ()) for fam, c in cells]
                zero = [g for g, c in enumerate(cands) if not c]
                if len(zero) > 1:
                    continue
                J = tuple(piece.flexible(c) for c in head_shape)
                s = tuple(piece.flexible(c) for c in hid_shape)
                chain = [("K", [J, s, n1]), ("Q", [J, s, p])]
                summed = list(J) + list(s)
                if piece.factored:
                    r = tuple(piece.flexible(c) for c in val_shape)
                    chain = [("O", [J, k, r]), ("U", [J, r, m1])] + chain
                    summed += list(r)
                else:
                    chain = [("V", [J, k, m1])] + chain
                prefix = [[(State(piece.cell_of), 1)]]  # prefix[g]: the factors before g unified
                for d in zero or range(len(chain)):
                    while len(prefix) <= d:
                        g = len(prefix) - 1
                        prefix.append(extend(prefix[g], g))
                    states = prefix[d]
                    for g in range(d + 1, len(chain)):
                        states = extend(states, g)
                    fam, terms = chain[d]
                    for st, val in states:
                        used: set = set()
                        col = _resolve(st, fam, terms, used)
                        if _free_summation(st, summed, used):
                            reject("a coefficient sums over a whole cell at this point (a template leaves an "
                                   "index free)")
                        out.append((col, val))
    return _combine(piece, out)


def field_support(piece: Piece, family: str, terms: tuple) -> list:
    """``[(column term, value)]``: the nonzero entries of one symmetry field at the point.

    Examples
    --------
    The scaling at the plain point moves every ``Q[s, s]`` by ``+1`` and every ``V[k, k]`` by ``-1``; the bulk
    cells' entries are one term each with a free symbol:

    >>> from attngeo.theorems.allsizes import prove, piece_at
    >>> from attngeo.check.poly import parse, ring
    >>> cert = prove("single-layer-dimension")
    >>> R = ring(("d", "dd", "a"))
    >>> piece = Piece(cert["pieces"][piece_at(cert, {"d": 5, "dd": 3, "a": 2})], False,
    ...               lambda text, where: parse(text, R, where, nonzero=False))
    >>> support = field_support(piece, "scaling", ((),))
    >>> sorted((fam, piece.shape(t[1]), v) for (fam, t), v in support)
    [('Q', ('S',), 1), ('Q', ('S0',), 1), ('Q', ('S1',), 1), ('V', ('E',), -1), ('V', ('S',), -1), ('V', ('S0',), -1), ('V', ('S1',), -1)]
    """
    out = []
    base = State(piece.cell_of)
    if family == "intra":
        J, u, v = terms
        for st, mapped, val in _lookup(piece, base, "Q", [J, v, None]):  # δQ[u, :] = Q[v, :]
            out.append((_resolve(st, "Q", [J, u, mapped[2]], set()), val))
        for st, mapped, val in _lookup(piece, base, "K", [J, u, None]):  # δK[v, :] = -K[u, :]
            out.append((_resolve(st, "K", [J, v, mapped[2]], set()), -val))
    elif family == "scaling":
        (J,) = terms
        last = "O" if piece.factored else "V"
        for fam, sign in (("Q", 1), (last, -1)):
            for st, mapped, val in _lookup(piece, base, fam, [J, None, None]):
                out.append((_resolve(st, fam, mapped, set()), sign * val))
    elif family == "value":
        J, u, v = terms
        for st, mapped, val in _lookup(piece, base, "U", [J, v, None]):  # δU[u, :] = U[v, :]
            out.append((_resolve(st, "U", [J, u, mapped[2]], set()), val))
        for st, mapped, val in _lookup(piece, base, "O", [J, None, u]):  # δO[:, v] = -O[:, u]
            out.append((_resolve(st, "O", [J, mapped[1], v], set()), -val))
    return _combine(piece, out)


def _combine(piece: Piece, entries: list) -> list:
    """Equal terms added (free symbols compared up to renaming within their cells), zeros dropped."""
    acc: dict = {}
    for (fam, terms), val in entries:
        rename: dict = {}
        key = (fam, tuple(tuple(rename.setdefault(s, f"~{len(rename)}:{piece.cell_of[s]}") if s.startswith("~")
                                else s for s in t) for t in terms))
        if key in acc:
            acc[key][1] += val
        else:
            acc[key] = [(fam, terms), val]
    return [(term, val) for term, val in acc.values() if val]


class Block:
    """One block type of a minor, read: rigid symbols for its variables, its row and column terms.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import prove
    >>> from attngeo.check.poly import parse, ring
    >>> cert = prove("single-layer-dimension")
    >>> R = ring(("d", "dd", "a"))
    >>> piece = Piece(cert["pieces"][0], False, lambda text, where: parse(text, R, where, nonzero=False))
    >>> block = Block(piece, cert["pieces"][0]["lower"]["blocks"][0], "lower", "b", 0)
    >>> len(block.columns) == len(block.rows) == 1, block.renamed(block.columns[0])[0]
    (True, 'Q')
    """

    def __init__(self, piece: Piece, data, kind: str, where: str, number: int):
        data = obj(data, where)
        if set(data) != {"vars", "columns", "rows", "matrix", "count"}:
            reject(f"{where} must have exactly vars, columns, rows, matrix, count")
        raw = obj(data["vars"], f"{where}.vars")
        if len(raw) > MAX_BLOCK_VARS:
            raise CertificateFormatError(f"{where} has more than {MAX_BLOCK_VARS} variables")
        self.vars = {identifier(v, f"{where}.vars"): piece._cell(c, f"{where}.vars") for v, c in raw.items()}
        per_singleton = [c for c in self.vars.values() if c in piece.singleton]
        if len(per_singleton) != len(set(per_singleton)):
            reject(f"{where} names one singleton's element twice")
        self.x = piece.rigid(f"x:{kind}{number}", self.vars)
        self.y = piece.rigid(f"y:{kind}{number}", self.vars)
        columns = seq(data["columns"], f"{where}.columns")
        rows = seq(data["rows"], f"{where}.rows")
        if not columns or len(columns) != len(rows) or len(columns) > piece.max_side:
            reject(f"{where} must be square with 1 to {piece.max_side} columns")
        weights, row_families = piece.weights, piece.row_families(kind)
        self.columns = [self._term(piece, c, weights, f"{where}.columns[{i}]") for i, c in enumerate(columns)]
        self.rows = [self._term(piece, r, row_families, f"{where}.rows[{i}]") for i, r in enumerate(rows)]
        used = {v for fam, terms in self.columns + self.rows for t in terms for v in t}
        if used != set(self.x.values()):
            reject(f"{where}: every variable must appear in a row or a column")
        self.matrix = data["matrix"]
        self.count = data["count"]

    def _term(self, piece: Piece, raw, families: dict, where: str):
        raw = seq(raw, where, 2)
        fam = raw[0]
        if fam not in families:
            reject(f"{where} names an unknown family")
        sorts = families[fam]
        terms = seq(raw[1], f"{where}[1]", len(sorts))
        return fam, tuple(piece.term(self.x, t, s, f"{where}[1][{i}]") for i, (t, s) in enumerate(zip(terms, sorts)))

    def renamed(self, term):
        """A column term with the ``y:`` symbols (another instance of this block type)."""
        back = {self.x[v]: self.y[v] for v in self.vars}
        fam, terms = term
        return fam, tuple(tuple(back.get(s, s) for s in t) for t in terms)


def _match_own(piece: Piece, support_term, column) -> bool:
    """Whether a support term (free symbols ``~n``) equals the block's own column for some values of them."""
    (fam, terms), (cfam, cterms) = support_term, column
    if fam != cfam or len(terms) != len(cterms):
        return False
    bind: dict = {}
    for t, c in zip(terms, cterms):
        if len(t) != len(c):
            return False
        for s, x in zip(t, c):
            if piece.cell_of[s] != piece.cell_of[x]:
                return False
            if s.startswith("~"):
                if bind.setdefault(s, x) != x:
                    return False
            elif s != x:
                return False
    return True


def verify_minor(piece, blocks: list) -> None:
    """Each block's matrix (recomputed) is the claimed nonsingular one, and the minor is block lower triangular.

    Examples
    --------
    >>> from attngeo.theorems.allsizes import prove
    >>> from attngeo.check.poly import parse, ring
    >>> cert = prove("single-layer-dimension")
    >>> R = ring(("d", "dd", "a"))
    >>> raw = cert["pieces"][0]
    >>> piece = Piece(raw, False, lambda text, where: parse(text, R, where, nonzero=False))
    >>> blocks = [Block(piece, b, "lower", "b", i) for i, b in enumerate(raw["lower"]["blocks"])]
    >>> verify_minor(piece, blocks)                      # silent: verified
    >>> verify_minor(piece, blocks[::-1])                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: block ...: row 0 meets a column of the later block type ...


    ``piece.row_support(row)`` lists ``(column term, value)`` of one row (free symbols ``~n`` in column terms). For every row of every
    block, every term it depends on is unified with every column of every block type; a possible match must
    be a column of an *earlier* block type, or this very block (all its variables forced equal). So the rows
    and columns of all instances, in block order, form a square lower triangular matrix with nonsingular
    diagonal blocks.
    """
    if len(blocks) > MAX_BLOCKS:
        raise CertificateFormatError(f"a minor of {len(blocks)} block types is above the checker's limit {MAX_BLOCKS}")
    index: dict = {}
    for b, block in enumerate(blocks):
        for col in block.columns:
            fam, terms = block.renamed(col)
            key = (fam, tuple(piece.shape(t) for t in terms))
            index.setdefault(key, []).append((b, fam, terms))
    for b, block in enumerate(blocks):
        matrix = []
        for r, row in enumerate(block.rows):
            entries = piece.row_support(row)
            spend(piece, len(entries))
            matrix.append([sum(v for term, v in entries if _match_own(piece, term, col)) for col in block.columns])
            for (fam, terms), _ in entries:
                key = (fam, tuple(piece.shape(t) for t in terms))
                candidates = index.get(key, ())
                spend(piece, len(candidates))
                for b2, fam2, terms2 in candidates:
                    if b2 < b:
                        continue
                    state = State(piece.cell_of)
                    for t1, t2 in zip(terms, terms2):
                        state = state.unify(t1, t2) if state is not None else None
                    if state is None:
                        continue
                    if b2 > b:
                        reject(f"block {b}: row {r} meets a column of the later block type {b2}")
                    if any(state.find(block.x[v]) != state.find(block.y[v]) for v in block.vars):
                        reject(f"block {b}: row {r} meets a column of another block of its own type")
        claimed = block.matrix
        if not isinstance(claimed, list) or not all(isinstance(x, list) and all(type(v) is int for v in x)
                                                    for x in claimed) or claimed != matrix:
            reject(f"block {b}: the matrix is not the one the layer formula gives at the point")
        if fmpz_mat(matrix).det() == 0:
            reject(f"block {b}: the block's matrix is singular")


