"""Pattern points: one lightning layer at a point written as index patterns, ranked for every size at once.

A **design** describes a point of one lightning layer (``h`` heads, ``V_j`` or
``V_j = O_j U_j``) without fixing the sizes. Indices live in **cells**, finite
sets whose sizes are affine in the size parameters (``a - 1``, ``d - dd``) or
exactly 1 (a *singleton*, a distinguished index). Each index sort (``in`` the
input features, ``out`` the outputs, ``hid`` a head's query/key rows, ``val`` a
head's value rank, ``head`` the heads) is a disjoint union of **shapes**, tuples
of cells: the input features of a multi-head design are ``H x A`` (head ``j``'s
block) and ``R`` (the rest). The point is a list of **templates** per weight
matrix: ``Q[j][s, (j, s)] = 1`` for ``j`` in ``H``, ``s`` in ``A``; every other
entry is 0. Every entry of the point, of the coefficient Jacobian of
``W -> F = Σ_j V_j y yᵀ K_jᵀ Q_j`` and of the symmetry fields is then decided by
equalities between indices and the cells they lie in, so all instances of one
**type** (an index tuple's cells and which of its indices coincide) behave alike.

The prover works on a concrete **model** of the design (bulk cells of
:data:`BULK` elements) and finds, type by type, a lower triangular minor:

* *upper bound*: one pivot parameter per symmetry field (``GL_a``, the scaling,
  ``GL_b``) such that the field matrix on the pivots is lower triangular with
  entries ``±1``; ``dim M <= P - #fields``;
* *lower bound*: every other parameter type (the gauge) gets a pivot coefficient
  row that meets no parameter of a later type, nor another parameter of its own
  type; the Jacobian on those rows and the gauge is lower triangular.

Both minors are written as *blocks*: variables with their cells, the block's
columns and rows as index terms, its count (a product of falling factorials of
cell sizes, a polynomial in the sizes) and its ``1 x 1`` matrix. The checker
(:mod:`attngeo.check.dimension.patternpoint`) re-derives everything symbolically;
docs/math.md §7.1 is the lemma that turns the blocks into a bound for every size.

Examples
--------
One head at the plain point ``Q = K = [I_a 0]``, ``V = [I_dd 0]``, on the piece
``2 <= a <= dd <= d``: the two minors meet at [HMK]'s ``2ad + d dd - a² - 1``.

>>> design = plain_design()
>>> lower, upper = find_minors(design)
>>> total(lower, design), total(upper, design)
('d*dd + 2*d*a - a^2 - 1', 'a^2 + 1')
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, field

import sympy
from flint import fmpz_mpoly_ctx

from ...exceptions import InvalidInputError

#: Elements of a bulk cell in the prover's concrete model: more than any type needs (at most four indices of
#: one cell in a parameter, a coefficient or a field), so a concrete hit stands for every symbolic one.
BULK = 6

#: Index sorts of each weight matrix: (head, row, column).
FAMILIES = {
    False: {"Q": ("head", "hid", "in"), "K": ("head", "hid", "in"), "V": ("head", "out", "in")},
    True: {"Q": ("head", "hid", "in"), "K": ("head", "hid", "in"), "U": ("head", "val", "in"),
           "O": ("head", "out", "val")},
}
#: Index sorts of each symmetry family (one field per index tuple).
FIELDS = {False: {"intra": ("head", "hid", "hid"), "scaling": ("head",)},
          True: {"intra": ("head", "hid", "hid"), "scaling": ("head",), "value": ("head", "val", "val")}}
#: A coefficient row ``c[k, p, m, n]``: the coefficient of ``y_m y_n`` in ``F_kp`` (``m, n`` unordered).
ROW = ("out", "in", "in", "in")

@functools.lru_cache(maxsize=None)
def size(text: str, parameters: tuple[str, ...]):
    """A cell size written as a polynomial with integer coefficients in the size parameters (flint ``fmpz_mpoly``).

    Examples
    --------
    >>> size("d - h*b", ("d", "h", "a", "b"))
    -h*b + d
    """
    ctx = fmpz_mpoly_ctx.get(tuple(parameters), "degrevlex")
    try:
        poly = sympy.Poly(sympy.sympify(text, locals={p: sympy.Symbol(p) for p in parameters}),
                          *[sympy.Symbol(p) for p in parameters])
        terms = {m: int(c) for m, c in poly.terms()}
    except (sympy.SympifyError, sympy.PolynomialError, TypeError, ValueError):
        raise InvalidInputError(f"cell size {text!r} is not a polynomial with integer coefficients in "
                                f"{', '.join(parameters)}") from None
    return ctx.from_dict(terms)


@dataclass(frozen=True)
class Template:
    """Nonzero entries ``value`` of one weight matrix at the index terms ``index`` (head, row, column).

    ``vars`` gives each variable's cell; an index term is a tuple of variables (its shape is their cells).

    Examples
    --------
    >>> Template((("j", "H"), ("s", "A")), (("j",), ("s",), ("j", "s"))).cells(("j", "s"))
    ('H', 'A')
    """

    vars: tuple[tuple[str, str], ...]
    index: tuple[tuple[str, ...], ...]
    value: int = 1

    def cells(self, term: tuple[str, ...]) -> tuple[str, ...]:
        """The shape of an index term."""
        where = dict(self.vars)
        return tuple(where[v] for v in term)


@dataclass(frozen=True)
class Design:
    """A pattern point of one lightning layer (see the module docstring).

    Examples
    --------
    >>> design = plain_design()
    >>> design.singleton("S0"), design.singleton("S"), design.parameters
    (True, False, ('d', 'dd', 'a'))

    Attributes
    ----------
    cells : dict
        Cell name -> affine size (``"1"``: a singleton).
    sorts : dict
        Sort (``in``, ``out``, ``hid``, ``head``, and ``val`` when factored) -> its shapes (tuples of cells).
    point : dict
        Weight matrix -> its templates; entries matched by none are 0.
    factored : bool
        ``V_j = O_j U_j`` (families ``U``, ``O``) rather than ``V_j``.
    parameters : tuple of str
        The size parameters the cell sizes are written in.
    """

    cells: dict
    sorts: dict
    point: dict
    factored: bool = False
    parameters: tuple = ("d", "dd", "a")

    def singleton(self, cell: str) -> bool:
        """Whether ``cell`` has exactly one element."""
        return size(self.cells[cell], self.parameters) == 1

    def to_json(self) -> dict:
        """The design as certificate data: cells, sorts, point templates.

        Examples
        --------
        >>> plain_design().to_json()["point"]["Q"][0]
        {'vars': {'s': 'S0'}, 'index': [[], ['s'], ['s']], 'value': 1}
        """
        return {"cells": dict(self.cells),
                "sorts": {k: [list(s) for s in v] for k, v in self.sorts.items()},
                "point": {name: [{"vars": dict(t.vars), "index": [list(i) for i in t.index], "value": t.value}
                                 for t in templates] for name, templates in self.point.items()}}


def _selector(name_cells: list[tuple[str, str]], head: tuple[str, ...], row: tuple[str, ...],
              col: tuple[str, ...], value: int = 1) -> Template:
    """A template (a shorthand: the variables and the three index terms)."""
    return Template(tuple(name_cells), (head, row, col), value)


def region_design(regions: list[tuple], parameters: tuple = ("d", "dd", "a")) -> Design:
    """A one-head design from **regions**: index sets identified across sorts, split into singletons and a bulk.

    Each region is ``(name, sorts, size, singletons)``: ``sorts`` says where its indices live (``in``,
    ``hid``, ``out``), ``size`` its size, and the first ``singletons`` indices become singleton cells
    ``name0, name1, ...`` (witnesses a pivot may name), the rest a bulk cell ``name`` of ``size - singletons``
    (omitted when ``size`` is exactly ``singletons``, given as ``None``). ``Q = K`` select the region's indices
    when it lies in ``hid`` and ``in`` (``Q[s, s] = 1``), ``V`` when it lies in ``out`` and ``in``.

    Examples
    --------
    The plain point ``Q = K = [I_a 0]``, ``V = [I_dd 0]`` on ``a <= dd <= d``, input 0 and 1 distinguished:

    >>> design = region_design([("S", "in hid out", "a", 2), ("E", "in out", "dd - a", 0),
    ...                         ("R", "in", "d - dd", 0)])
    >>> design.cells, design.sorts["hid"]
    ({'S0': '1', 'S1': '1', 'S': 'a - 2', 'E': 'dd - a', 'R': 'd - dd'}, (('S0',), ('S1',), ('S',)))
    """
    cells, member = {}, {}
    for name, where, size_text, k in regions:
        for i in range(k):
            cells[f"{name}{i}"], member[f"{name}{i}"] = "1", set(where.split())
        if size_text is not None:
            cells[name] = size_text + (f" - {k}" if k else "")
            member[name] = set(where.split())
    sorts = {"head": ((),), **{s: tuple((c,) for c in cells if s in member[c]) for s in ("in", "hid", "out")}}
    point = {"Q": tuple(_selector([("s", c)], (), ("s",), ("s",)) for c in cells if {"in", "hid"} <= member[c]),
             "K": tuple(_selector([("s", c)], (), ("s",), ("s",)) for c in cells if {"in", "hid"} <= member[c]),
             "V": tuple(_selector([("k", c)], (), ("k",), ("k",)) for c in cells if {"in", "out"} <= member[c])}
    return Design(cells, sorts, point, False, parameters)


def plain_design() -> Design:
    """The plain point ``Q = K = [I_a 0]``, ``V = [I_dd 0]`` on the piece ``2 <= a <= dd <= d``.

    Examples
    --------
    >>> plain_design().sorts["out"]
    (('S0',), ('S1',), ('S',), ('E',))
    """
    return region_design([("S", "in hid out", "a", 2), ("E", "in out", "dd - a", 0), ("R", "in", "d - dd", 0)])


def head_design(order: str, witnesses: int, extra: int = 0) -> Design:
    """The block point of ``h`` heads with ``V_j = O_j U_j``: head ``j`` owns the inputs ``(j, 0 .. m-1)``, ``m = max(a, b)``.

    ``Q_j = K_j`` select ``(j, s)`` for ``s < a``, ``U_j`` selects ``(j, r)`` for ``r < b`` and ``O_j = U_jᵀ``;
    the inputs ``R`` beyond the ``h m`` blocks are selected by no head (so ``h m <= d``). ``order`` is
    ``"a <= b"`` or ``"b < a"``; the first ``witnesses`` indices below ``min(a, b)`` and the first ``extra``
    indices from ``min(a, b)`` to ``max(a, b)`` are singleton cells.

    Examples
    --------
    >>> design = head_design("a <= b", 2)
    >>> design.cells["R"], design.sorts["hid"], design.sorts["in"][-1]
    ('d - h*b', (('o0',), ('o1',), ('A',)), ('R',))
    """
    small, large, rest = ("a", "b", "d - h*b") if order == "a <= b" else ("b", "a", "d - h*a")
    shared = [f"o{i}" for i in range(witnesses)] + ["A"]
    wide = [f"e{i}" for i in range(extra)] + ["B"]
    cells = {"H": "h", **{c: "1" for c in shared[:-1] + wide[:-1]}, "A": f"{small} - {witnesses}",
             "B": f"{large} - {small} - {extra}", "R": rest}
    block = shared + wide
    hid, val = (shared, block) if order == "a <= b" else (block, shared)
    inputs = tuple(("H", c) for c in block) + (("R",),)
    sorts = {"head": (("H",),), "in": inputs, "out": inputs, "hid": tuple((c,) for c in hid),
             "val": tuple((c,) for c in val)}
    point = {"Q": tuple(_selector([("j", "H"), ("s", c)], ("j",), ("s",), ("j", "s")) for c in hid),
             "K": tuple(_selector([("j", "H"), ("s", c)], ("j",), ("s",), ("j", "s")) for c in hid),
             "U": tuple(_selector([("j", "H"), ("r", c)], ("j",), ("r",), ("j", "r")) for c in val),
             "O": tuple(_selector([("j", "H"), ("r", c)], ("j",), ("j", "r"), ("r",)) for c in val)}
    return Design(cells, sorts, point, True, ("d", "h", "a", "b"))


def ones_design() -> Design:
    """``h`` heads of rank ``a = b = 1`` with ``h <= d``: ``Q_j = U_j = e_jᵀ``, ``O_j = e_j``, every ``K_j`` all ones.

    With ``K_j`` selecting input ``j`` too, every head would be a rank-1 *parallel* point (its value reads the
    key's coordinate), where the Jacobian drops rank; the all-ones key makes each head a swap point.

    Examples
    --------
    >>> ones_design().sorts["in"]
    (('H',), ('R',))
    """
    cells = {"H": "h", "R": "d - h*a", "o": "1"}
    inputs = (("H",), ("R",))
    sorts = {"head": (("H",),), "in": inputs, "out": inputs, "hid": (("o",),), "val": (("o",),)}
    point = {"Q": (_selector([("j", "H"), ("s", "o")], ("j",), ("s",), ("j",)),),
             "K": tuple(_selector([("j", "H"), ("s", "o"), ("i", c)], ("j",), ("s",), ("i",)) for c in ("H", "R")),
             "U": (_selector([("j", "H"), ("r", "o")], ("j",), ("r",), ("j",)),),
             "O": (_selector([("j", "H"), ("r", "o")], ("j",), ("j",), ("r",)),)}
    return Design(cells, sorts, point, True, ("d", "h", "a", "b"))


# ---------------------------------------------------------------- types: index tuples up to relabelling


def _partitions(items: list):
    """Set partitions of ``items`` (lists of blocks), in a fixed order."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in _partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first] + part[i]] + part[i + 1:]
        yield [[first]] + part


@dataclass(frozen=True)
class _Type:
    """An index tuple up to relabelling: a family, each position's variables, and each variable's cell.

    Variables of one cell are distinct indices; they are named ``x0, x1, ...`` in order of first use, so two
    types are equal exactly when their index tuples are relabellings of each other.
    """

    family: str
    terms: tuple[tuple[str, ...], ...]
    vars: tuple[tuple[str, str], ...]

    def cell(self, var: str) -> str:
        return dict(self.vars)[var]


def enumerate_types(design: Design, family: str, sorts: tuple[str, ...]) -> list[_Type]:
    """Every type of index tuple of a family whose positions have these sorts.

    Examples
    --------
    ``V`` of the plain design: out in ``{S0, S1, S, E}`` times in in ``{S0, S1, S, E, R}``, two types when both
    lie in one bulk cell (equal or not), one otherwise (a singleton has one element): ``4 x 5 + 2``.

    >>> len(enumerate_types(plain_design(), "V", ("head", "out", "in")))
    22
    """
    out = []
    for shapes in itertools.product(*(design.sorts[s] for s in sorts)):
        slots = [(i, j, c) for i, shape in enumerate(shapes) for j, c in enumerate(shape)]
        by_cell: dict[str, list] = {}
        for slot in slots:
            by_cell.setdefault(slot[2], []).append(slot)
        choices = []
        for cell, members in by_cell.items():
            choices.append([[members]] if design.singleton(cell) else list(_partitions(members)))
        for pick in itertools.product(*choices):
            group = {slot: tuple(block) for blocks in pick for block in blocks for slot in block}
            names: dict[tuple, str] = {}  # canonical names by first use
            terms = []
            for i, shape in enumerate(shapes):
                term = []
                for j, c in enumerate(shape):
                    key = group[(i, j, c)]
                    if key not in names:
                        names[key] = f"x{len(names)}"
                    term.append(names[key])
                terms.append(tuple(term))
            cells = tuple((name, key[0][2]) for key, name in sorted(names.items(), key=lambda kv: int(kv[1][1:])))
            out.append(_Type(family, tuple(terms), cells))
    return out


def classify(design: Design, family: str, index: tuple) -> tuple[_Type, dict]:
    """The type of a concrete index tuple (elements are ``(cell, number)``) and the instance (variable -> element).

    Examples
    --------
    >>> t, inst = classify(plain_design(), "V", ((), (("S", 2),), (("S", 2),)))
    >>> t.terms, inst
    (((), ('x0',), ('x0',)), {'x0': ('S', 2)})
    """
    names: dict = {}
    terms = []
    for term in index:
        out = []
        for element in term:
            if element not in names:
                names[element] = f"x{len(names)}"
            out.append(names[element])
        terms.append(tuple(out))
    cells = tuple((name, element[0]) for element, name in names.items())
    return _Type(family, tuple(terms), cells), {name: element for element, name in names.items()}


# ---------------------------------------------------------------- the concrete model


class Model:
    """The design with every bulk cell of :data:`BULK` elements: the point, the coefficient Jacobian, the fields.

    Examples
    --------
    At the plain point ``V[0, 0]`` moves ``F_0p`` by ``y_0 y_p`` for each selected ``p``; the coefficient of
    ``y_0 y_1`` in ``F_01`` depends on ``V[0, 0]``, ``Q[1, 1]`` and ``K[1, 1]``:

    >>> model = Model(plain_design(), sizes={"d": 4, "dd": 3, "a": 2})
    >>> o, i = ("S0", 0), ("S1", 0)
    >>> sorted(model.column(("V", (), (o,), (o,))).values()), sorted(c[0] for c in model.row(((o,), (i,), (o,), (i,))))
    ([1, 1], ['K', 'Q', 'V'])
    >>> t = enumerate_types(plain_design(), "V", ("head", "out", "in"))[0]
    >>> model.concrete(t, model.representative(t))
    ('V', (), (('S0', 0),), (('S0', 0),))
    >>> len(list(model.instances({"vars": {"x": "R"}, "rows": [], "columns": []})))   # d - dd = 1 index in R
    1

    Jacobian columns are ``(family, head, row, column)`` index tuples, rows ``(k, p, m, n)`` with ``m <= n``;
    a column's rows (:meth:`column`) and a row's columns (:meth:`row`) are computed on demand from the
    layer formula ``dF = δV y yᵀ A + V y yᵀ δA``, ``δA = δKᵀ Q + Kᵀ δQ`` (``V = O U`` when factored).
    """

    def __init__(self, design: Design, bulk: int = BULK, sizes: dict | None = None):
        self.design = design
        if sizes is None:
            counts = {c: 1 if design.singleton(c) else bulk for c in design.cells}
        else:  # the design at these sizes exactly: a genuine point of that architecture
            values = [sizes[p] for p in design.parameters]
            counts = {c: int(size(t, design.parameters)(*values)) for c, t in design.cells.items()}
            if min(counts.values(), default=0) < 0:
                raise InvalidInputError(f"the design has a cell of negative size at {sizes}")
        self.elements = {c: [(c, i) for i in range(n)] for c, n in counts.items()}
        self.indices = {s: [idx for shape in shapes for idx in itertools.product(*(self.elements[c] for c in shape))]
                        for s, shapes in design.sorts.items()}
        self.families = FAMILIES[design.factored]
        self.matrices = {name: self._expand(name) for name in self.families}
        self.heads = self.indices["head"]
        self._per_head = {h: self._head(h) for h in self.heads}
        self._columns: dict = {}
        self._rows_cache: dict = {}
        self.field_cols: dict = {}
        self.col_fields: dict = {}
        self._fields()

    def _expand(self, name: str) -> dict:
        """``{head: {(row, col): value}}`` of one weight matrix."""
        out = {h: {} for h in self.indices["head"]}
        for t in self.design.point.get(name, ()):
            names = [v for v, _ in t.vars]
            for values in itertools.product(*(self.elements[c] for _, c in t.vars)):
                env = dict(zip(names, values))
                h, r, c = (tuple(env[v] for v in term) for term in t.index)
                out[h][(r, c)] = out[h].get((r, c), 0) + t.value
        return {h: {k: v for k, v in m.items() if v} for h, m in out.items()}

    @staticmethod
    def _by(m: dict, side: int) -> dict:
        out: dict = {}
        for key, v in m.items():
            out.setdefault(key[side], []).append((key[1 - side], v))
        return out

    def _head(self, h) -> dict:
        """One head's sparse matrices, by rows and by columns, with ``A = Kᵀ Q`` and ``V`` (``= O U``)."""
        M = {name: self.matrices[name][h] for name in self.families}
        A: dict = {}
        for (s, p), qv in M["Q"].items():
            for q, kv in self._by(M["K"], 0).get(s, ()):
                A[(q, p)] = A.get((q, p), 0) + kv * qv
        if self.design.factored:
            V: dict = {}
            for (k, r), ov in M["O"].items():
                for i, uv in self._by(M["U"], 0).get(r, ()):
                    V[(k, i)] = V.get((k, i), 0) + ov * uv
        else:
            V = M["V"]
        M["A"] = {k: v for k, v in A.items() if v}
        M["Vp"] = {k: v for k, v in V.items() if v}
        out = {"M": M}
        for name, m in M.items():
            out[name + ">"] = self._by(m, 0)  # by row
            out[name + "^"] = self._by(m, 1)  # by column
        return out

    @staticmethod
    def _put(table: dict, row, m, n, v):
        key = row + tuple(sorted((m, n)))
        table[key] = table.get(key, 0) + v

    def column(self, col) -> dict:
        """``{row: value}``: the coefficient rows one parameter moves."""
        if col in self._columns:
            return self._columns[col]
        name, h, r, c = col
        H, out = self._per_head[h], {}
        if name in ("V", "O", "U"):
            if name == "V":
                moves = [(r, c, 1)]  # δV = e_r e_cᵀ
            elif name == "O":
                moves = [(r, i, uv) for i, uv in H["U>"].get(c, ())]  # δV = e_r U[c, :]
            else:
                moves = [(k, c, ov) for k, ov in H["O^"].get(r, ())]  # δV = O[:, r] e_cᵀ
            for k, i, w in moves:
                for (q, p), av in H["M"]["A"].items():
                    self._put(out, (k, p), i, q, w * av)
        else:
            # Q[r, c]: δA[q, c] = K[r, q];  K[r, c]: δA[c, p] = Q[r, p]
            other = H["K>" if name == "Q" else "Q>"].get(r, ())
            for (k, i), vv in H["M"]["Vp"].items():
                for x, w in other:
                    if name == "Q":
                        self._put(out, (k, c), i, x, vv * w)
                    else:
                        self._put(out, (k, x), i, c, vv * w)
        self._columns[col] = {k: v for k, v in out.items() if v}
        return self._columns[col]

    def row(self, row) -> dict:
        """``{column: value}``: the parameters a coefficient row depends on at the point."""
        if row in self._rows_cache:
            return self._rows_cache[row]
        k, p, m, n = row
        out: dict = {}

        def add(col, v):
            out[col] = out.get(col, 0) + v

        for h in self.heads:
            H = self._per_head[h]
            for m1, n1 in {(m, n), (n, m)}:
                a = H["M"]["A"].get((n1, p), 0)  # F_kp ∋ V[k, m1] A[n1, p] y_m1 y_n1
                v = H["M"]["Vp"].get((k, m1), 0)
                if a:
                    if self.design.factored:
                        for r, uv in H["U^"].get(m1, ()):
                            add(("O", h, k, r), uv * a)
                        for r, ov in H["O>"].get(k, ()):
                            add(("U", h, r, m1), ov * a)
                    else:
                        add(("V", h, k, m1), a)
                if v:
                    for s, kv in H["K^"].get(n1, ()):
                        add(("Q", h, s, p), v * kv)
                    for s, qv in H["Q^"].get(p, ()):
                        add(("K", h, s, n1), v * qv)
        self._rows_cache[row] = {c: x for c, x in out.items() if x}
        return self._rows_cache[row]

    def _field(self, f, name, h, r, c, v):
        if not v:
            return
        col = (name, h, r, c)
        self.field_cols.setdefault(f, {})[col] = self.field_cols.setdefault(f, {}).get(col, 0) + v
        self.col_fields.setdefault(col, {})[f] = self.col_fields.setdefault(col, {}).get(f, 0) + v

    def _fields(self) -> None:
        # intra E_uv: δQ = E Q, δK = -Eᵀ K; scaling: δQ = Q, δV = -V (δO = -O); value E_uv: δU = E U, δO = -O E
        for h in self.heads:
            Qr, Kr = self._per_head[h]["Q>"], self._per_head[h]["K>"]
            for u in self.indices["hid"]:
                for v in self.indices["hid"]:
                    f = ("intra", h, u, v)
                    for i, x in Qr.get(v, ()):
                        self._field(f, "Q", h, u, i, x)
                    for i, x in Kr.get(u, ()):
                        self._field(f, "K", h, v, i, -x)
            f = ("scaling", h)
            for (r, c), x in self.matrices["Q"][h].items():
                self._field(f, "Q", h, r, c, x)
            last = "O" if self.design.factored else "V"
            for (r, c), x in self.matrices[last][h].items():
                self._field(f, last, h, r, c, -x)
            if self.design.factored:
                Ur, Oc = self._per_head[h]["U>"], self._per_head[h]["O^"]
                for u in self.indices["val"]:
                    for v in self.indices["val"]:
                        f = ("value", h, u, v)
                        for i, x in Ur.get(v, ()):
                            self._field(f, "U", h, u, i, x)
                        for k, x in Oc.get(u, ()):
                            self._field(f, "O", h, k, v, -x)

    def flat_point(self) -> list[int]:
        """The point in :class:`attngeo.Architecture`'s flattening order (heads, then ``Q, K, V`` or ``Q, K, U, O``),
        indices of each sort numbered in the order of :attr:`indices`.

        Examples
        --------
        >>> model = Model(plain_design(), sizes={"d": 4, "dd": 3, "a": 2})
        >>> model.flat_point()[:8]              # Q = [I_2 0]
        [1, 0, 0, 0, 0, 1, 0, 0]
        """
        number = {s: {idx: k for k, idx in enumerate(v)} for s, v in self.indices.items()}
        out = []
        for h in self.heads:
            for name, (_, rows, cols) in self.families.items():
                M = [[0] * len(self.indices[cols]) for _ in self.indices[rows]]
                for (r, c), v in self.matrices[name][h].items():
                    M[number[rows][r]][number[cols][c]] = v
                out += [v for row in M for v in row]
        return out

    def instances(self, block: dict):
        """Every instance of a certificate block at these sizes: ``(rows, columns)`` as concrete index tuples."""
        vars_ = list(block["vars"].items())
        for values in itertools.product(*(self.elements[c] for _, c in vars_)):
            if len(set(values)) != len(values):
                continue
            env = dict(zip((v for v, _ in vars_), values))

            def concrete(term):
                return (term[0],) + tuple(tuple(env[v] for v in t) for t in term[1])

            yield [concrete(r) for r in block["rows"]], [concrete(c) for c in block["columns"]]

    def representative(self, t: _Type) -> dict:
        """Distinct elements for the variables of a type (singletons: their one element)."""
        used: dict[str, int] = {}
        out = {}
        for var, cell in t.vars:
            n = used.get(cell, 0)
            out[var] = self.elements[cell][n]
            used[cell] = n + 1
        return out

    def concrete(self, t: _Type, inst: dict) -> tuple:
        return (t.family,) + tuple(tuple(inst[v] for v in term) for term in t.terms)


# ---------------------------------------------------------------- the search for triangular minors


@dataclass
class Block:
    """One block type of a minor: variables, its column terms, its row terms, and its matrix.

    Examples
    --------
    >>> lower, _ = find_minors(plain_design())
    >>> sorted(lower[0].to_json())
    ['columns', 'count', 'matrix', 'rows', 'vars']
    """

    vars: dict
    columns: list
    rows: list
    matrix: list
    count: str = ""
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"vars": self.vars, "columns": self.columns, "rows": self.rows, "matrix": self.matrix,
                "count": self.count}


def _term(element_name: dict, design: Design, family: str, index: tuple) -> tuple[list, dict]:
    """A concrete index tuple as a symbolic term; new singleton elements become variables ``_<cell>``."""
    new = {}
    out = []
    for term in index:
        t = []
        for e in term:
            if e not in element_name:
                if not design.singleton(e[0]):
                    return None, {}
                name = f"_{e[0]}"
                element_name[e] = name
                new[name] = e[0]
            t.append(element_name[e])
        out.append(t)
    return [family, out], new


def _singletons(model: Model) -> set:
    return {e for c, els in model.elements.items() if model.design.singleton(c) for e in els}


def _field_minor(model: Model) -> tuple[list[Block], set]:
    """Order the nonzero field types with pivot columns (lower triangular); return the blocks and pivot types."""
    design = model.design
    ftypes = [t for name, sorts in FIELDS[design.factored].items() for t in enumerate_types(design, name, sorts)]
    present = []
    for t in ftypes:
        inst = model.representative(t)
        if model.field_cols.get(model.concrete(t, inst)):
            present.append(t)
    fixed = _singletons(model)
    ordered: list[Block] = []
    order_keys: set = set()
    pivot_types: set = set()
    remaining = list(present)
    while remaining:
        progress = False
        for t in list(remaining):
            inst = model.representative(t)
            f = model.concrete(t, inst)
            allowed = set(inst.values()) | fixed
            best = None
            for col, value in sorted(model.field_cols[f].items(), key=repr):
                if not set(e for term in col[1:] for e in term) <= allowed:
                    continue
                ctype, cinst = classify(design, col[0], col[1:])
                if ctype in pivot_types:
                    continue
                ok = True
                for g in model.col_fields.get(col, {}):
                    gt, ginst = classify(design, g[0], g[1:])
                    if gt in order_keys or (gt == t and ginst != inst):
                        ok = False
                        break
                if ok:
                    best = (col, value, ctype)
                    break
            if best is None:
                continue
            col, value, ctype = best
            names = {e: v for v, e in inst.items()}
            row_term, new1 = _term(names, design, t.family, f[1:])
            col_term, new2 = _term(names, design, col[0], col[1:])
            ordered.append(Block({**dict(t.vars), **new1, **new2}, [col_term], [row_term], [[value]]))
            order_keys.add(t)
            pivot_types.add(ctype)
            remaining.remove(t)
            progress = True
        if not progress:
            raise InvalidInputError(f"no triangular field minor at this design: stuck at {remaining[0]}")
    return ordered, pivot_types


def _jacobian_minor(model: Model, excluded: set) -> list[Block]:
    """Order the gauge's parameter types with pivot coefficient rows (lower triangular)."""
    design = model.design
    ctypes = [t for name, sorts in model.families.items() for t in enumerate_types(design, name, sorts)]
    gauge = [t for t in ctypes if t not in excluded]
    fixed = _singletons(model)
    candidates = {}
    for t in gauge:
        inst = model.representative(t)
        col = model.concrete(t, inst)
        allowed = set(inst.values()) | fixed
        options = []
        for row, value in model.column(col).items():
            if not {e for term in row for e in term} <= allowed:
                continue
            hits, bad = set(), False
            for other in model.row(row):
                ot, oinst = classify(design, other[0], other[1:])
                if ot in excluded:
                    continue
                if ot == t:
                    if oinst != inst:
                        bad = True
                        break
                else:
                    hits.add(ot)
            if not bad:
                options.append((len(hits), repr(row), row, value, hits))
        candidates[t] = (inst, col, sorted(options, key=lambda o: o[:2]))
    ordered: list[Block] = []
    done: set = set()
    remaining = list(gauge)
    while remaining:
        progress = False
        for t in list(remaining):
            inst, col, options = candidates[t]
            pick = next((o for o in options if o[4] <= done), None)
            if pick is None:
                continue
            _, _, row, value, _ = pick
            names = {e: v for v, e in inst.items()}
            col_term, new1 = _term(names, design, t.family, col[1:])
            row_term, new2 = _term(names, design, "c", row)
            ordered.append(Block({**dict(t.vars), **new1, **new2}, [col_term], [row_term], [[value]]))
            done.add(t)
            remaining.remove(t)
            progress = True
        if not progress:
            stuck = remaining[0]
            raise InvalidInputError(f"no triangular Jacobian minor at this design: parameter type {stuck} has no "
                                    f"pivot row meeting only earlier types ({len(candidates[stuck][2])} candidates)")
    return ordered


def find_minors(design: Design, bulk: int = BULK) -> tuple[list[Block], list[Block]]:
    """``(lower blocks, upper blocks)``: the Jacobian's triangular minor on the gauge and the fields' minor.

    Raises InvalidInputError when the design has none (a degenerate point, or a type without a pivot among
    the indices it names and the singletons).

    Examples
    --------
    The parallel point ``a = d' = 1`` (``V`` reads the input ``Q, K`` select) has none:

    >>> region = [("S", "in hid out", None, 1), ("R", "in", "d - 1", 0)]
    >>> find_minors(region_design(region))      # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: no triangular Jacobian minor at this design: ...
    """
    model = Model(design, bulk)
    upper, pivots = _field_minor(model)
    lower = _jacobian_minor(model, pivots)
    for block in lower + upper:
        block.count = count(block, design)
    return lower, upper


def _ring(design: Design):
    return fmpz_mpoly_ctx.get(tuple(design.parameters), "degrevlex")


def count_poly(block: Block, design: Design):
    """Instances of a block: the falling factorial of each cell's size by the number of its variables.

    Examples
    --------
    >>> b = Block({"x0": "S", "x1": "S", "x2": "E"}, [], [], [])
    >>> count_poly(b, plain_design())     # (a - 2)(a - 3)(dd - a)
    dd*a^2 - a^3 - 5*dd*a + 5*a^2 + 6*dd - 6*a
    """
    ctx = _ring(design)
    gens = dict(zip(design.parameters, ctx.gens()))
    result = ctx.from_dict({(0,) * len(design.parameters): 1})
    per_cell: dict[str, int] = {}
    for cell in block.vars.values():
        per_cell[cell] = per_cell.get(cell, 0) + 1
    for cell, k in sorted(per_cell.items()):
        n = size(design.cells[cell], design.parameters)
        for i in range(k):
            result *= n - i
    return result


def count(block: Block, design: Design) -> str:
    """:func:`count_poly` as text.

    Examples
    --------
    >>> count(Block({"x0": "R"}, [], [], []), plain_design())
    'd - dd'
    """
    return str(count_poly(block, design))


def total(blocks: list[Block], design: Design) -> str:
    """``Σ count x columns`` of a minor, as text (the rank it proves).

    Examples
    --------
    >>> total([Block({"x0": "R"}, [1, 2], [], []), Block({}, [1], [], [])], plain_design())
    '2*d - 2*dd + 1'
    """
    ctx = _ring(design)
    s = ctx.from_dict({})
    for b in blocks:
        s += count_poly(b, design) * len(b.columns)
    return str(s)
