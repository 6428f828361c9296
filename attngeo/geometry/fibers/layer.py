"""Single-layer fibers and weight recovery, exactly over Q (docs/fibers.md).

A function is given by ``F = l m^T``, ``l = V y``, ``m = A^T y`` (vectors of
linear forms; :mod:`attngeo.model.layerfunction`). When ``F != 0`` pick an entry
``F_kp != 0`` and factor it over Q: ``F_kp = c u w`` with linear ``u, w``
(Lemma 2: over C the factorization is the same, linear forms being
irreducible). Any ``(A', V')`` with the same ``F`` has ``l'_k`` proportional to
``u`` or to ``w`` (unique factorization in ``C[y]``), and that choice forces
everything else: ``m'_p = F_kp / l'_k``, ``l'_j = F_jp / m'_p``,
``m'_q = F_kq / l'_k``. So there are at most two *candidates*, each a line
``{(lambda A_c, V_c / lambda)}``; a candidate is a component exactly when it
reproduces all of ``F`` and ``rank A_c <= a``. This is at once

* the **fiber** (every candidate checked, so nothing is missed), and
* **weight recovery** (the candidates are the weights).

``F = 0`` means ``A = 0`` or ``V = 0``: the fiber ``{A = 0} u {V = 0, rank A <= a}``.

When ``F_kp`` is irreducible over Q there are no rational weights, but there
may be irrational ones, so "not in M" needs more (:func:`_irreducible_entry`):

* Gram rank of ``F_kp`` ``>= 3``: not a product of two linear forms over any
  field (``u w`` has Gram matrix ``(u w^T + w u^T) / 2``, of rank ``<= 2``): outside.
* Gram rank 2 (rank 1 is ``c (v.y)^2``, ``v`` rational, reducible): ``F_kp = c u w``
  with ``u, w`` conjugate over ``Q(sqrt delta)``, ``delta`` minus a nonzero
  principal 2x2 minor, not a square. **Conjugate-factor lemma**: ``F`` is in
  ``M_C`` iff ``F = F_kp R`` with ``R`` rational of rank 1. *Proof.* If
  ``F = l m^T`` then ``l_k ~ u`` say; every ``F_kq = l_k m_q`` is rational and
  divisible by ``u``, hence by its conjugate ``w`` (not associate to ``u``), so
  ``F_kq = c_q F_kp`` with ``c_q`` in Q and ``m_q = c_q m_p``; likewise
  ``l_j = c'_j l_k``, so ``F_jq = c'_j c_q F_kp``. Conversely ``F = (u w) r s^T``
  is ``l = r u``, ``m = s w``: ``V = r u^T``, ``A = w s^T`` of rank 1. The fiber is
  then two lines (``u`` and ``w`` swapped) over ``Q(sqrt delta)``, with no
  rational point; real iff ``delta > 0``.

In ``(Q, K, V)`` coordinates the fiber is the preimage under
``mu(Q, K, V) = (K^T Q, V)``; :func:`product_fiber_strata` splits the fiber of
``(Q, K) -> K^T Q`` into its components (docs/fibers.md, Lemma 3).
"""

from __future__ import annotations

import itertools
import random
import time
from dataclasses import dataclass, field

import numpy as np
from flint import fmpq, fmpq_mat

from ...model.architecture import Architecture
from ... import latex
from ...exceptions import InvalidInputError, NotInNeuromanifoldError
from ...model.layerfunction import (LayerFunction, call_evaluator, gram_matrices, integer_matrix, mat_rows, nonzero_minor,
                            output_column, principal_minor, single_layer, weights_AV)
from ..certificate import Result, certificate_json
from ...model.network import ExactOps, network, read_input, read_point


# -- the (Q, K) -> K^T Q fibers -----------------------------------------------------


def product_fiber_strata(a: int, d: int, r: int) -> list[tuple[int, int, int]]:
    """Components of ``{(Q, K) in (C^{a x d})^2 : K^T Q = B}`` for ``rank B = r``.

    Parameters
    ----------
    a : int
        Rows of ``Q`` and ``K`` (the rank bound of ``A = K^T Q``).
    d : int
        Columns of ``Q`` and ``K``.
    r : int
        ``rank B``.

    Returns
    -------
    list of (int, int, int)
        ``(u, w, dim)``: the closure of ``{rank Q = u, rank K = w}`` for each
        maximal admissible pair (``r <= u, w <= min(a, d)``, ``u + w <= a + r``),
        with its dimension (docs/fibers.md, Lemma 3).

    Examples
    --------
    >>> from attngeo.geometry.fibers.layer import product_fiber_strata
    >>> product_fiber_strata(2, 3, 2)    # generic: one GL_2 orbit
    [(2, 2, 4)]
    >>> product_fiber_strata(1, 3, 0)    # q k^T = 0: q = 0 or k = 0
    [(0, 1, 3), (1, 0, 3)]

    With ``a = d = 2`` and ``rank B = 1`` the rows of ``Q`` and ``K`` can hide
    the second dimension in either factor: two components of dimension 4.

    >>> product_fiber_strata(2, 2, 1)
    [(1, 2, 4), (2, 1, 4)]
    """
    top = min(a, d)
    pairs = [(u, w) for u in range(r, top + 1) for w in range(r, top + 1) if u + w <= a + r]
    maximal = [(u, w) for u, w in pairs if not any((x, y) != (u, w) and x >= u and y >= w for x, y in pairs)]
    out = []
    for u, w in maximal:
        k, n = u - r, a - w  # dim(ker K^T restricted to im Q), dim ker K^T
        total = u * (a - u) + u * d + w * d + k * (u - k) + (n - k) * (a - n)
        out.append((u, w, total - r * (2 * d - r)))
    return sorted(out)


def determinantal_dimension(d: int, a: int) -> int:
    """``dim {A in C^{d x d} : rank A <= a}``, that is ``r (2d - r)`` with ``r = min(a, d)``.

    Examples
    --------
    >>> from attngeo.geometry.fibers.layer import determinantal_dimension
    >>> determinantal_dimension(3, 2)    # the hypersurface det A = 0 in C^9
    8
    >>> determinantal_dimension(2, 5)    # a >= d: no condition
    4
    """
    r = min(a, d)
    return r * (2 * d - r)


# -- results --------------------------------------------------------------------------


def str_rows(M: fmpq_mat) -> list[list[str]]:
    """The entries of an exact matrix as strings, row by row (how certificates record matrices).

    Examples
    --------
    >>> from flint import fmpq, fmpq_mat
    >>> from attngeo.geometry.fibers.layer import str_rows
    >>> str_rows(fmpq_mat([[1, fmpq(-1, 2)], [0, 3]]))
    [['1', '-1/2'], ['0', '3']]
    """
    return [[str(M[r, c]) for c in range(M.ncols())] for r in range(M.nrows())]


@dataclass
class Component:
    """One irreducible component of a fiber, in ``(A, V)`` or ``(Q, K, V)`` coordinates.

    ``data`` holds what a certificate records of it (for a line, ``A``, ``V``
    and ``rank_A``; for a ``(Q, K, V)`` component, ``rank_Q`` and ``rank_K``).

    Examples
    --------
    At a generic point with ``a = d = 2`` the fiber is the scaling line in
    ``(A, V)``, and above it one ``GL_2`` orbit times the scaling in ``(Q, K, V)``.

    >>> from attngeo import Architecture, fiber
    >>> fib = fiber(Architecture((2, 2), (2,), tokens=2), [[[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[1, 1], [0, 1]]]])
    >>> line, = fib.components
    >>> line.coordinates, line.dimension, line.data["A"], line.data["rank_A"]
    ('AV', 1, [['1', '3'], ['2', '4']], 2)
    >>> [(c.coordinates, c.dimension) for c in fib.qkv]
    [('QKV', 5)]
    """

    coordinates: str  # "AV" or "QKV"
    dimension: int
    description: str
    latex: str
    data: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """The component as a JSON-ready record: its coordinates, dimension, words, LaTeX and data.

        Examples
        --------
        >>> from attngeo import Architecture, fiber
        >>> fib = fiber(Architecture((2, 1), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1]]]])
        >>> record = fib.components[0].to_dict()
        >>> record["dimension"], record["A"], record["V"]
        (1, [['1', '0'], ['1', '0']], [['0', '1']])
        """
        return {"coordinates": self.coordinates, "dimension": self.dimension,
                "description": self.description, "latex": self.latex, **self.data}

    def _repr_latex_(self) -> str:
        return f"${self.latex}$"


def _small(M: fmpq_mat, name: str) -> str:
    """The matrix itself when small enough to read, else its name."""
    return latex.matrix(M) if M.nrows() * M.ncols() <= 16 else name


def _line_components(index: int, A: fmpq_mat, V: fmpq_mat, a: int,
                     origin: str = "") -> tuple[Component, list[Component]]:
    r = A.rank()
    sub = f"_{index}"
    av = Component(
        "AV", 1,
        f"{{(lambda A{sub}, V{sub} / lambda) : lambda != 0}}, rank A{sub} = {r}" + (f"; {origin}" if origin else ""),
        rf"\{{(\lambda {_small(A, 'A' + sub)},\ \lambda^{{-1}} {_small(V, 'V' + sub)}) : \lambda \neq 0\}}",
        {"A": str_rows(A), "V": str_rows(V), "rank_A": r},
    )
    Q, K = rank_factorization(A, a)  # the representative the parametrizations below start from
    return av, _qkv_components(index, r, a, A.nrows(), {"Q": str_rows(Q), "K": str_rows(K), "V": str_rows(V)})


def _qkv_components(index, r: int, a: int, d: int, rep: dict) -> list[Component]:
    """The preimage of the line ``index`` in ``(Q, K, V)`` (docs/fibers.md, Lemma 3)."""
    sub = f"_{index}"
    qkv = []
    for u, w, dim in product_fiber_strata(a, d, r):
        if u == w == r == min(a, d) and a <= d:
            desc = f"{{(C Q{sub}, lambda C^-T K{sub}, V{sub} / lambda) : C in GL_{a}, lambda != 0}} (one orbit)"
            tex = rf"\{{(C Q{sub},\ \lambda C^{{-T}} K{sub},\ \lambda^{{-1}} V{sub}) : C \in GL_{{{a}}},\ \lambda \neq 0\}}"
        else:
            desc = f"closure of {{K^T Q = lambda A{sub}, rank Q = {u}, rank K = {w}, V = V{sub} / lambda}}"
            tex = (rf"\overline{{\{{K^{{T}} Q = \lambda A{sub},\ \operatorname{{rank}} Q = {u},\ "
                   rf"\operatorname{{rank}} K = {w},\ V = \lambda^{{-1}} V{sub}\}}}}")
        qkv.append(Component("QKV", dim + 1, desc, tex, {"rank_Q": u, "rank_K": w, "over": index, **rep}))
    return qkv


def _conjugate_components(arch: Architecture, q: fmpq_mat, R: fmpq_mat, delta: fmpq) -> tuple[list, list]:
    """The two lines of ``F = q(y) r s^T`` with ``q = u w`` over ``Q(sqrt delta)``: ``(w s^T, r u^T)``, ``(u s^T, r w^T)``."""
    d = arch.widths[0]
    a = arch.ranks[0]
    data = {"quadric": str_rows(q), "R": str_rows(R), "discriminant": str(delta), "rank_A": 1}
    av, qkv = [], []
    for i, (x, z) in enumerate((("w", "u"), ("u", "w")), start=1):
        av.append(Component(
            "AV", 1,
            f"{{(lambda A_{i}, V_{i} / lambda) : lambda != 0}}, A_{i} = {x} s^T, V_{i} = r {z}^T, "
            f"where q(y) = u(y) w(y) over Q(sqrt({delta})) and R = r s^T",
            rf"\{{(\lambda\, {x} s^{{T}},\ \lambda^{{-1}} r {z}^{{T}}) : \lambda \neq 0\}},\ "
            rf"q = u w \text{{ over }} \mathbb{{Q}}(\sqrt{{{latex.rational(delta)}}})",
            {**data, "conjugate": i}))
        qkv.extend(_qkv_components(i, 1, a, d, {}))
    return av, qkv


def _zero_components(arch: Architecture) -> tuple[list[Component], list[Component]]:
    d, dd = arch.widths
    a = arch.ranks[0]
    av = [
        Component("AV", dd * d, "{A = 0} (V arbitrary)", r"\{A = 0\}", {"locus": "A=0"}),
        Component("AV", determinantal_dimension(d, a), f"{{V = 0, rank A <= {a}}}",
                  rf"\{{V = 0,\ \operatorname{{rank}} A \le {a}\}}", {"locus": "V=0"}),
    ]
    qkv = [
        Component("QKV", dim + dd * d, f"closure of {{K^T Q = 0, rank Q = {u}, rank K = {w}}} (V arbitrary)",
                  rf"\overline{{\{{K^{{T}} Q = 0,\ \operatorname{{rank}} Q = {u},\ \operatorname{{rank}} K = {w}\}}}}",
                  {"rank_Q": u, "rank_K": w, "locus": "A=0"})
        for u, w, dim in product_fiber_strata(a, d, 0)
    ]
    qkv.append(Component("QKV", 2 * a * d, "{V = 0} (Q, K arbitrary)", r"\{V = 0\}", {"locus": "V=0"}))
    return av, qkv


@dataclass
class Candidate:
    """One forced choice ``l'_k ~ factor`` and what became of it.

    A fiber records its candidates in ``argument["candidates"]`` with these
    fields (``factor``, ``valid``, ``reason``).

    Examples
    --------
    At a generic point ``F_kp = (V y)_k (A^T y)_p`` has two linear factors; only
    the true one forces weights that reproduce all of ``F``.

    >>> from attngeo import Architecture, fiber
    >>> fib = fiber(Architecture((2, 2), (2,), tokens=2), [[[[1, 0], [0, 1]], [[1, 2], [3, 4]], [[1, 1], [0, 1]]]])
    >>> [(c["factor"], c["valid"]) for c in fib.argument["candidates"]]
    [(['1', '1'], True), (['1', '2'], False)]
    >>> fib.argument["candidates"][1]["reason"]
    'the forced weights do not reproduce F (they differ at F_01)'
    """

    factor: list[str]  # coefficients of the linear form chosen for l'_k
    valid: bool
    reason: str
    A: fmpq_mat | None = None
    V: fmpq_mat | None = None


# -- the factor argument ----------------------------------------------------------------


def _linear_coefficients(poly, d: int) -> list[fmpq]:
    out = [fmpq(0)] * d
    for exps, c in poly.to_dict().items():
        if sum(exps) != 1:
            raise ValueError("not a linear form")
        out[exps.index(1)] = c
    return out


def linear_factors(f: LayerFunction, k: int, p: int) -> list | None:
    """The distinct linear factors of ``F_kp`` over Q (one or two), or None when it is irreducible over Q.

    Examples
    --------
    ``A = e_2 e_1^T``, ``V = (1, 1)``: ``F_00 = (y_0 + y_1) y_1``.

    >>> from attngeo import Architecture, LayerFunction
    >>> from attngeo.geometry.fibers.layer import linear_factors
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> f = LayerFunction.from_weights(arch, [[[[1, 0]], [[0, 1]], [[1, 1]]]])
    >>> sorted(str(u) for u in linear_factors(f, 0, 0))
    ['y0 + y1', 'y1']

    ``y_0^2 + y_1^2`` does not factor over Q (its factors are ``y_0 ± i y_1``):

    >>> g = LayerFunction.from_tensor(arch, [[[[1, 0], [0, 0]], [[0, 0], [1, 0]]]])
    >>> str(g.form(0, 0)), linear_factors(g, 0, 0)
    ('y0^2 + y1^2', None)
    """
    _, factors = f.form(k, p).factor()
    linear = [g for g, _ in factors]
    return linear if all(g.total_degree() == 1 for g in linear) else None


def _partners(slabs: np.ndarray, den: int, w: list[fmpq]) -> list[list[fmpq]]:
    """For each Gram matrix ``S`` in ``slabs / den``, the unique ``l`` with ``sym(l w^T) = S``, if any.

    ``S = (l w^T + w l^T) / 2``; with ``w_i != 0``: ``l_i = S_ii / w_i`` and
    ``l = (2 S[:, i] - w l_i) / w_i``. The map ``l -> sym(l w^T)`` is injective,
    so this is the only possible ``l``; whether it really solves ``S`` is
    decided by the caller's exact comparison of the whole function.

    ``w`` is used exactly as given, never rescaled: the candidate line is fixed
    by the *pair* ``(A, V)``, and rescaling ``w`` alone would divide ``l`` by the
    same factor, so the forced ``A`` and ``V`` would no longer fit together.
    With ``w = W / s`` (integers ``W``, ``s > 0``) and ``S = N / den``:
    ``l = s (2 N[:, i] W_i - W N_ii) / (den W_i^2)``, in Python integers.
    """
    W, s = integer_matrix([w])
    W = W[0]
    i = next(j for j, x in enumerate(W) if x)
    wi = int(W[i])
    out = []
    for S in slabs.astype(object):
        num = 2 * S[:, i] * wi - W * S[i, i]
        out.append([fmpq(int(x) * s, den * wi * wi) for x in num])
    return out


def _candidates(f: LayerFunction, a: int, k: int, p: int, factors: list) -> list[Candidate]:
    """The candidate forced by each linear factor of ``F_kp`` (Theorem 1), each decided exactly."""
    d = f.shape[1]
    N, den = f.numerators, f.denominator
    out = []
    for u in factors:
        coeffs = _linear_coefficients(u, d)
        # l'_k = u forces m'_p, which forces every l'_j; l'_k forces every m'_q
        (m_p,) = _partners(N[k, :, :, p][None], den, coeffs)
        V = fmpq_mat(_partners(N[:, :, :, p], den, m_p))
        A = fmpq_mat(_partners(N[k].transpose(2, 0, 1), den, coeffs)).transpose()
        label = [str(c) for c in coeffs]
        j, q = _square_difference(f, A, V) or _first_difference(LayerFunction.from_AV(f.arch, A, V), f) or (None, None)
        if j is not None:
            out.append(Candidate(label, False, f"the forced weights do not reproduce F (they differ at F_{j}{q})", A, V))
        elif A.rank() > a:
            out.append(Candidate(label, False, f"the forced A has rank {A.rank()} > a = {a}", A, V))
        else:
            out.append(Candidate(label, True, "reproduces F", A, V))
    return out


def _square_difference(f: LayerFunction, A: fmpq_mat, V: fmpq_mat) -> tuple[int, int] | None:
    """An entry ``(j, q)`` whose ``y_m^2`` coefficients ``F_jq`` and ``V_jm A_mq`` differ, if any.

    A quick necessary test (``d' d^2`` products instead of the whole tensor) that
    rejects most failing candidates before the full comparison.
    """
    d = f.shape[1]
    Vs = np.array(mat_rows(V), dtype=object)
    As = np.array(mat_rows(A), dtype=object)
    diagonal = np.arange(d)
    squares = f.numerators[:, diagonal, diagonal, :].astype(object) - (Vs[:, :, None] * As[None, :, :]) * f.denominator
    diff = np.argwhere((squares != 0).any(axis=1))
    return (int(diff[0][0]), int(diff[0][1])) if len(diff) else None


def _first_difference(g: LayerFunction, f: LayerFunction) -> tuple[int, int] | None:
    """An entry ``(j, q)`` with ``G_jq != F_jq``, or None when ``g == f``."""
    diff = np.argwhere(g.differences(f))
    return (int(diff[0][0]), int(diff[0][1])) if len(diff) else None


def _irreducible_entry(f: LayerFunction, k: int, p: int) -> tuple[str, dict, str, tuple | None]:
    """Membership when ``F_kp`` is irreducible over Q: ``(case, argument, reason, (q, R, delta) or None)``.

    Lemma (conjugate factors; module docstring): if ``F`` is in ``M_C`` and
    ``F_kp`` is irreducible over Q, then ``F = F_kp R`` with ``R`` rational of
    rank 1; conversely ``F = q R`` with ``rank q = 2``, ``rank R = 1`` is in ``M_C``.
    So the verdict is exact linear algebra over Q, and never "no rational
    weights, hence outside": irrational weights are weights too.
    """
    S = gram_matrices(f)
    q = S[(k, p)]
    argument: dict = {"entry": [k, p], "irreducible_over_Q": True}
    rank = q.rank()
    if rank >= 3:
        rows, cols, det = nonzero_minor(q, 3)
        argument.update(gram_rank=rank, minor={"rows": rows, "cols": cols, "value": str(det)})
        return "outside", argument, (
            f"the Gram matrix of F_{k}{p} has rank {rank} >= 3 (the 3x3 minor at rows {rows}, columns {cols} is "
            f"{det}), so F_{k}{p} is not a product of two linear forms over any field, as every (V y)_k (A^T y)_p is"
        ), None
    # rank 2 (rank 1 would make F_kp = c (v.y)^2 with v rational): F_kp = u w over Q(sqrt delta)
    i, j, det = principal_minor(q)
    delta = -det
    argument.update(gram_rank=2, minor={"rows": [i, j], "cols": [i, j], "value": str(det)}, discriminant=str(delta))
    dd, d = f.shape
    m, n = i, j  # a nonzero entry of q: q_ij, or a diagonal one if q_ij = 0 (then q_ii q_jj = det != 0)
    if q[m, n] == 0:
        n = i
    R = fmpq_mat(dd, d)
    for (jj, qq), M in S.items():
        c = M[m, n] / q[m, n]
        if M != c * q:
            mm, nn = next((x, y) for x in range(d) for y in range(d) if M[x, y] != c * q[x, y])
            argument["not_proportional"] = {"entry": [jj, qq], "positions": [[m, n], [mm, nn]]}
            return "outside", argument, (
                f"F_{k}{p} is irreducible over Q and F_{jj}{qq} is not a rational multiple of it, but a point of M "
                f"with F_{k}{p} irreducible over Q is F_{k}{p} times a rank-1 matrix (conjugate-factor lemma)"
            ), None
        R[jj, qq] = c
    argument["R"] = str_rows(R)
    if R.rank() >= 2:
        rows, cols, minor = nonzero_minor(R, 2)
        argument["R_minor"] = {"rows": rows, "cols": cols, "value": str(minor)}
        return "outside", argument, (
            f"F = F_{k}{p} R with F_{k}{p} irreducible over Q and R of rank {R.rank()} >= 2, but a point of M "
            f"with F_{k}{p} irreducible over Q is F_{k}{p} times a rank-1 matrix (conjugate-factor lemma)"
        ), None
    real = "real, irrational" if delta > 0 else "complex conjugate, not real"
    return "conjugate-swap", argument, (
        f"F = q(y) R with q = F_{k}{p} of rank 2, irreducible over Q (discriminant {delta} is not a square) and R of "
        f"rank 1: in the neuromanifold, with weights over Q(sqrt({delta})) ({real}) and none rational"
    ), (q, R, delta)


@dataclass(repr=False)
class Fiber(Result):
    """The fiber of one single-layer function, complete, with its argument.

    ``case``: ``generic``, ``rank1-swap``, ``rank1-parallel``, ``zero`` (rational
    lines); ``conjugate-swap`` (two lines over ``Q(sqrt delta)``, no rational
    point); ``outside`` (empty: no weights, rational, real or complex, give
    the function; ``reason`` says why).

    Examples
    --------
    A rank-1 swap point: two lines, ``(u, w)`` exchanged between ``V`` and ``A``.

    >>> from attngeo import Architecture, LayerFunction, fiber
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> fib = fiber(arch, [[[[1, 0]], [[0, 1]], [[1, 1]]]])
    >>> fib.case, len(fib.components), fib.in_neuromanifold, fib.rational
    ('rank1-swap', 2, True, True)

    ``F = (y_0^2 + y_1^2, 0)`` is ``q R`` with ``q`` definite of rank 2: in the
    neuromanifold, but only over ``Q(sqrt(-1))``.

    >>> conj = fiber(arch, LayerFunction.from_tensor(arch, [[[[1, 0], [0, 0]], [[0, 0], [1, 0]]]]))
    >>> conj.case, len(conj.components), conj.in_neuromanifold, conj.rational
    ('conjugate-swap', 2, True, False)

    ``F = (y_0^2 + y_1^2, 2 y_0 y_1)``: ``F_01`` is not a multiple of the
    irreducible ``F_00``, so no weights at all give it.

    >>> out = fiber(arch, LayerFunction.from_tensor(arch, [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]]]))
    >>> out.case, out.components, out.in_neuromanifold
    ('outside', [], False)
    """

    arch: Architecture
    case: str
    av: list[Component]
    qkv: list[Component]
    argument: dict
    seconds: float = 0.0
    point: list[str] | None = None  # the weights the fiber was asked for, when given
    lines: list[tuple[fmpq_mat, fmpq_mat]] = field(default_factory=list)  # (A_c, V_c) of each rational line
    function: LayerFunction | None = None
    reason: str = ""

    kind = "fiber"

    @property
    def components(self) -> list[Component]:
        return self.av

    @property
    def in_neuromanifold(self) -> bool:
        """Some weights, rational, real or complex, produce the function (the fiber is not empty)."""
        return self.case != "outside"

    @property
    def rational(self) -> bool:
        """Some rational weights produce the function."""
        return self.case not in ("outside", "conjugate-swap")

    def summary(self) -> dict:
        """The record ``--json`` prints: case, verdicts, components in both coordinates, reason and method.

        Examples
        --------
        >>> from attngeo import Architecture, fiber
        >>> s = fiber(Architecture((2, 1), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1]]]]).summary()
        >>> s["case"], s["certified"], [c["dimension"] for c in s["components"]], s["reason"]
        ('rank1-swap', True, [1, 1], '2 forced candidate line(s) reproduce F')
        """
        method = ("F = 0: A = 0 or V = 0" if self.case == "zero" else
                  "factorization over Q of one entry of F(y) = V y y^T A, all forced candidates checked"
                  if "factors" in self.argument else
                  "one entry of F(y) = V y y^T A irreducible over Q: Gram rank, discriminant and the "
                  "conjugate-factor lemma (F = F_kp R, rank R = 1)")
        return {
            "architecture": self.arch.to_dict(),
            "case": self.case,
            "in_neuromanifold": self.in_neuromanifold,
            "rational_weights": self.rational,
            "components": [c.to_dict() for c in self.av],
            "qkv_components": [c.to_dict() for c in self.qkv],
            "certified": True,
            "reason": self.reason,
            "method": method,
            "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict:
        """The certificate: the claim, what it is about (the point, or the function), and the argument.

        Raises
        ------
        InvalidInputError
            When the fiber records neither its point nor its function.

        Examples
        --------
        A fiber asked for at weights records the point; the checker replays the
        factor argument by polynomial division.

        >>> from attngeo import Architecture, check_certificate, fiber
        >>> cert = fiber(Architecture((2, 1), (1,), tokens=2), [[[[1, 0]], [[0, 1]], [[1, 1]]]]).to_json()
        >>> cert["kind"], cert["point"], "reason" in cert
        ('fiber', ['1', '0', '0', '1', '1', '1'], False)
        >>> check_certificate(cert).claim
        'fiber of a rank1-swap point of widths 2,1, rank 1: 2 line(s)'
        """
        claim = self.summary()
        if self.point is not None:
            # weights are a point of M with rational weights by definition: the verdict fields say nothing more
            about = {"point": self.point}
            for key in ("in_neuromanifold", "rational_weights", "reason"):
                del claim[key]
        elif self.function is not None:
            f = self.function
            about = {"tensor": f.numerators.astype(object).astype(str).tolist(), "denominator": str(f.denominator)}
        else:
            raise InvalidInputError("this fiber records neither its point nor its function, so it has no certificate")
        return certificate_json(self.kind, {**about, **claim, "argument": self.argument})

    def __str__(self) -> str:
        if self.case == "outside":
            return f"fiber of {self.arch}: empty, the function is not in the neuromanifold: {self.reason}"
        lines = [f"fiber of {self.arch} ({self.case}): {len(self.av)} component(s) in (A, V)"]
        if self.case == "conjugate-swap":
            lines[0] += f"; {self.reason}"
        lines += [f"  dim {c.dimension}: {c.description}" for c in self.av]
        lines.append(f"  in (Q, K, V): {len(self.qkv)} component(s)")
        lines += [f"  dim {c.dimension}: {c.description}" for c in self.qkv]
        return "\n".join(lines)

    def latex(self) -> str:
        """The fiber ``mu^{-1}(f)`` as one LaTeX expression, in ``(A, V)`` and in ``(Q, K, V)``.

        Examples
        --------
        >>> from attngeo import Architecture, LayerFunction, fiber
        >>> from attngeo.latex import balanced
        >>> arch = Architecture((2, 1), (1,), tokens=2)
        >>> tex = fiber(arch, [[[[1, 0]], [[0, 1]], [[1, 1]]]]).latex()
        >>> tex.count("neq 0"), balanced(tex)           # two lines, and their two preimages
        (4, True)
        >>> print(fiber(arch, LayerFunction.from_tensor(arch, [[[[1, 0], [0, 1]], [[0, 1], [1, 0]]]])).latex())
        \\mu^{-1}(f) = \\emptyset
        """
        if not self.av:
            return r"\mu^{-1}(f) = \emptyset"
        av = r" \;\cup\; ".join(c.latex for c in self.av)
        qkv = r" \;\cup\; ".join(c.latex for c in self.qkv)
        return rf"\mu^{{-1}}(f)\ \text{{in }} (A, V):\ {av};\qquad \text{{in }} (Q, K, V):\ {qkv}"



def _on_line(A: fmpq_mat, V: fmpq_mat, Ac: fmpq_mat, Vc: fmpq_mat) -> bool:
    """``(A, V) = (lambda A_c, V_c / lambda)`` for some ``lambda != 0``: the point lies on the candidate's line."""
    entries = [(A[i, j], Ac[i, j]) for i in range(A.nrows()) for j in range(A.ncols())]
    lam = next((x / y for x, y in entries if y != 0), None)
    return bool(lam) and all(x == lam * y for x, y in entries) and V * lam == Vc


def _fiber_of(f: LayerFunction, through: tuple | None = None) -> Fiber:
    """The fiber of a function, which may be empty (case ``outside``); every verdict is a complete argument.

    A line is recorded by one of its points: ``through`` (the given weights' ``(A, V)``) for the line holding it,
    else the point its factor forces (``l'_k`` = the factor's integer coefficients), which is why such a line's
    ``A`` may look rescaled (by ``2^-26``, say, for float32 weights); any ``(lambda A, V / lambda)`` is the same line.
    """
    arch = f.arch
    a = arch.ranks[0]
    if f.is_zero():
        av, qkv = _zero_components(arch)
        return Fiber(arch, "zero", av, qkv, {"zero": True}, function=f, reason="F = 0")
    k, p = f.nonzero_entry()
    factors = linear_factors(f, k, p)
    if factors is None:
        case, argument, reason, shape = _irreducible_entry(f, k, p)
        av, qkv = _conjugate_components(arch, *shape) if shape else ([], [])
        return Fiber(arch, case, av, qkv, argument, function=f, reason=reason)
    cands = _candidates(f, a, k, p, factors)
    valid = [c for c in cands if c.valid]
    argument = {
        "entry": [k, p],
        "factors": [[str(x) for x in _linear_coefficients(u, arch.widths[0])] for u in factors],
        "candidates": [{"factor": c.factor, "valid": c.valid, "reason": c.reason} for c in cands],
    }
    if not valid:
        reasons = "; ".join(c.reason for c in cands)
        reason = (f"F_{k}{p} factors over Q, so (as over C) every preimage is on a line forced by one of its "
                  f"{len(factors)} linear factor(s), and each fails: {reasons}")
        return Fiber(arch, "outside", [], [], argument, function=f, reason=reason)
    av, qkv = [], []
    for i, c in enumerate(valid, start=1):
        if through is not None and _on_line(*through, c.A, c.V):  # shown by the user's own weights
            c.A, c.V = through
            origin = f"(A_{i}, V_{i}) are the given weights"
        else:
            origin = (f"(A_{i}, V_{i}) are forced by the linear factor ({', '.join(c.factor)}).y of F_{k}{p}"
                      " (any lambda gives the same line)")
        comp, pre = _line_components(i, c.A, c.V, a, origin)
        av.append(comp)
        qkv.extend(pre)
    rank1 = all(c.A.rank() == 1 and c.V.rank() == 1 for c in valid)
    case = "generic" if not rank1 else ("rank1-swap" if len(valid) == 2 else "rank1-parallel")
    return Fiber(arch, case, av, qkv, argument, lines=[(c.A, c.V) for c in valid], function=f,
                 reason=f"{len(valid)} forced candidate line(s) reproduce F")


def fiber(arch: Architecture, weights) -> Fiber:
    """The complete fiber through a rational single-layer point, or of a :class:`LayerFunction`.

    From weights the fiber is never empty. From a function it may be: case
    ``outside`` (no weights at all) or ``conjugate-swap`` (two lines over a
    quadratic field, no rational point), each with its complete argument and
    a certificate recording the function.

    Parameters
    ----------
    arch : Architecture
        A single layer with ``t >= 2``.
    weights : list or LayerFunction
        Rational weights ``[(Q, K, V)]`` (or a flat list), or a function.

    Returns
    -------
    Fiber

    Raises
    ------
    InvalidInputError
        For deep or normalized architectures, ``t = 1``, or weights of the wrong shape.

    Examples
    --------
    >>> from attngeo import Architecture, fiber
    >>> arch = Architecture((2, 1), (1,), tokens=2)
    >>> fib = fiber(arch, [[[[1, 0]], [[0, 1]], [[1, 1]]]])   # A = e2 e1^T, V = (1, 1)
    >>> [c.dimension for c in fib.components], fib.case
    ([1, 1], 'rank1-swap')

    ``V = 0``: the fiber is ``{A = 0}`` (``V`` free: ``d' d = 2``) and
    ``{V = 0, rank A <= 1}`` (dimension 3).

    >>> zero = fiber(arch, [[[[1, 2]], [[3, 4]], [[0, 0]]]])
    >>> zero.case, [c.dimension for c in zero.components]
    ('zero', [2, 3])
    >>> fiber(Architecture((2, 2, 2), (1, 1), tokens=2), [0] * 20)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: fiber is for single-layer networks; widths 2,2,2, ranks 1,1, t=2, lightning has 2 layers
    """
    single_layer(arch, "fiber")
    start = time.perf_counter()
    if isinstance(weights, LayerFunction):
        fib = _fiber_of(_for_architecture(arch, weights))
    else:
        point = read_point(arch, weights)
        fib = _fiber_of(LayerFunction.from_weights(arch, point), through=weights_AV(arch, point))
        fib.point = [str(x) for x in point]
    fib.seconds = time.perf_counter() - start
    return fib


def _for_architecture(arch: Architecture, f: LayerFunction) -> LayerFunction:
    """The same function, asked about ``arch`` (same widths; the rank ``a`` may differ)."""
    if f.arch.widths != arch.widths:
        raise InvalidInputError(f"the function has widths {f.arch.widths}, the architecture {arch.widths}")
    return f if f.arch == arch else LayerFunction(arch, f.numerators, f.denominator)


def special_point(arch: Architecture, kind: str, rng: random.Random, bound: int = 3) -> list:
    """A random single-layer point of a named kind, as ``[(Q, K, V)]`` nested lists.

    ``"random"``: entries uniform in ``[-bound, bound]``, redrawn until ``A`` and ``V``
    have their generic ranks ``min(a, d)`` and ``min(d', d)``; ``"zero"``: ``V = 0``;
    ``"rank1-swap"``: ``A = p q^T`` and ``V = r s^T`` (``Q``, ``K`` zero below their
    first row); ``"rank1-parallel"``: the same with ``s = p``.

    Raises
    ------
    InvalidInputError
        For an unknown ``kind``, or an architecture that is not a single layer.

    Examples
    --------
    Each kind lands in the fiber case of its name.

    >>> import random
    >>> from attngeo import Architecture, fiber, special_point
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> rng = random.Random(1)
    >>> [fiber(arch, special_point(arch, kind, rng)).case for kind in ("rank1-swap", "rank1-parallel", "zero")]
    ['rank1-swap', 'rank1-parallel', 'zero']
    >>> special_point(arch, "diagonal", rng)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: unknown special point 'diagonal'; choose random, zero, rank1-swap or rank1-parallel
    """
    single_layer(arch, "special_point")
    d, dd = arch.widths
    a = arch.ranks[0]

    def vec(n):
        while True:
            v = [rng.randint(-bound, bound) for _ in range(n)]
            if any(v):
                return v

    def mat(r, c):
        return [[rng.randint(-bound, bound) for _ in range(c)] for _ in range(r)]

    if kind == "random":
        while True:
            w = [[mat(a, d), mat(a, d), mat(dd, d)]]
            A, V = weights_AV(arch, w)
            if A.rank() == min(a, d) and V.rank() == min(dd, d):
                return w
    if kind == "zero":
        return [[mat(a, d), mat(a, d), [[0] * d for _ in range(dd)]]]
    if kind in ("rank1-swap", "rank1-parallel"):
        p, q, r = vec(d), vec(d), vec(dd)
        s = p if kind == "rank1-parallel" else vec(d)
        while kind == "rank1-swap" and d >= 2 and fmpq_mat([p, s]).rank() < 2:
            s = vec(d)  # a swap point needs s independent of p (else it is a parallel point)
        pad = [[0] * d for _ in range(a - 1)]
        return [[[q] + pad, [p] + pad, [[ri * si for si in s] for ri in r]]]
    raise InvalidInputError(f"unknown special point {kind!r}; choose random, zero, rank1-swap or rank1-parallel")


# -- recovery ---------------------------------------------------------------------------


def rank_factorization(A: fmpq_mat, a: int) -> tuple[fmpq_mat, fmpq_mat]:
    """``(Q, K)``, both ``a x d``, with ``K^T Q = A`` (needs ``rank A <= a``).

    ``Q`` holds the reduced row echelon form of ``A``, ``K`` its pivot columns.

    Raises
    ------
    InvalidInputError
        When ``rank A > a``.

    Examples
    --------
    >>> from flint import fmpq_mat
    >>> from attngeo.geometry.fibers.layer import rank_factorization
    >>> A = fmpq_mat([[1, 2], [2, 4]])
    >>> Q, K = rank_factorization(A, 1)
    >>> K.transpose() * Q == A
    True
    >>> rank_factorization(fmpq_mat([[1, 0], [0, 1]]), 1)
    Traceback (most recent call last):
    ...
    attngeo.exceptions.InvalidInputError: rank A = 2 exceeds a = 1
    """
    d = A.nrows()
    R, r = A.rref()
    if r > a:
        raise InvalidInputError(f"rank A = {r} exceeds a = {a}")
    pivots = [next(c for c in range(d) if R[i, c] != 0) for i in range(r)]
    Q = fmpq_mat(a, d)
    K = fmpq_mat(a, d)
    for i in range(r):
        for c in range(d):
            Q[i, c] = R[i, c]
            K[i, c] = A[c, pivots[i]]
    return Q, K


@dataclass
class Recovery:
    """Weights ``(Q, K, V)`` producing a function, one per fiber component.

    ``verified`` says how the weights were proved to give the function.

    Examples
    --------
    >>> from attngeo import Architecture, LayerFunction, recover_weights
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> rec = recover_weights(arch, LayerFunction.from_weights(arch, [[[[1, 2]], [[3, 5]], [[1, 0], [2, 1]]]]))
    >>> rec.unique, len(rec.weights), rec.fiber.case
    (True, 1, 'generic')
    """

    arch: Architecture
    weights: list[tuple[fmpq_mat, fmpq_mat, fmpq_mat]]
    fiber: Fiber
    verified: str

    @property
    def unique(self) -> bool:
        """Unique up to the symmetry group (the fiber has one component)."""
        return len(self.fiber.av) == 1

    def as_lists(self, index: int = 0) -> list:
        """The weights of component ``index`` as ``[(Q, K, V)]`` nested lists of strings (JSON, or input again).

        Examples
        --------
        The recovered weights compute the same function.

        >>> from attngeo import Architecture, LayerFunction, recover_weights
        >>> arch = Architecture((2, 2), (1,), tokens=2)
        >>> f = LayerFunction.from_weights(arch, [[[[1, 2]], [[3, 5]], [[1, 0], [2, 1]]]])
        >>> weights = recover_weights(arch, f).as_lists()
        >>> weights[0][2], LayerFunction.from_weights(arch, weights) == f
        ([['1', '0'], ['2', '1']], True)
        """
        Q, K, V = self.weights[index]
        return [[str_rows(Q), str_rows(K), str_rows(V)]]


def _unisolvent_inputs(d: int, t: int):
    """Integer points ``x`` of ``N^{d t}`` with ``|x| <= 3``: a cubic vanishing on all is zero."""
    n = d * t
    for total in range(4):
        for combo in itertools.combinations_with_replacement(range(n), total):
            x = [0] * n
            for i in combo:
                x[i] += 1
            yield [[fmpq(x[r * t + c]) for c in range(t)] for r in range(d)]


def recover_weights(arch: Architecture, f) -> Recovery:
    """Weights of ``arch`` producing exactly ``f``, or :class:`NotInNeuromanifoldError`.

    ``f`` is a :class:`LayerFunction`, a Gram tensor ``S[k][m][n][p]``
    (see :mod:`attngeo.model.layerfunction`), or a callable black box ``X -> phi(X)``
    on exact rationals. A black box is assumed to be a polynomial map of degree
    at most 3 (as every layer function is); the recovered weights are then
    proved to reproduce it by agreement on the unisolvent set ``{x in N^{dt}: |x| <= 3}``.

    The zero function has no finite list of weights: its fiber is returned with
    ``weights = [0]`` as the representative ``Q = K = V = 0``.

    The error carries the fiber as ``exc.fiber``: case ``outside`` (no weights,
    rational, real or complex: the complete argument, ``exc.fiber.save(path)``
    writes it as a certificate of the function) or ``conjugate-swap`` (in the
    neuromanifold, but only with weights over a quadratic field).

    Returns
    -------
    Recovery

    Raises
    ------
    NotInNeuromanifoldError
        When no rational weights give ``f`` (``exc.fiber`` says why).

    Examples
    --------
    From a black box: the weights are read off ``F`` and then matched on the
    unisolvent set.

    >>> from attngeo import Architecture, LayerFunction, evaluate, recover_weights
    >>> arch = Architecture((2, 2), (1,), tokens=2)
    >>> W = [[[[1, 2]], [[3, 5]], [[1, 0], [2, 1]]]]
    >>> rec = recover_weights(arch, lambda X: evaluate(arch, W, X))
    >>> rec.unique, rec.verified
    (True, 'F(y) = V y y^T A reproduced exactly; black box matched on the degree-3 unisolvent set')

    ``F = (y_0^2 + y_1^2) (1, 0)`` has weights only over ``Q(sqrt(-1))``:

    >>> one = Architecture((2, 1), (1,), tokens=2)
    >>> recover_weights(one, LayerFunction.from_tensor(one, [[[[1, 0], [0, 0]], [[0, 0], [1, 0]]]]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.NotInNeuromanifoldError: no rational weights of widths 2,1, ranks 1, t=2, lightning produce this function, though it is in the neuromanifold: ...
    """
    single_layer(arch, "recover_weights")
    start = time.perf_counter()
    if callable(f) and not isinstance(f, LayerFunction):
        lf = LayerFunction.from_evaluator(arch, f)
        black_box = f
    else:
        lf = f if isinstance(f, LayerFunction) else LayerFunction.from_tensor(arch, f)
        black_box = None
    fib = fiber(arch, lf)
    if not fib.rational:
        if fib.in_neuromanifold:
            message = (f"no rational weights of {arch} produce this function, though it is in the neuromanifold: "
                       f"{fib.reason}; recover_weights works over Q, fiber(arch, f) describes the two conjugate lines")
        else:
            message = f"no weights of {arch}, rational, real or complex, produce this function: {fib.reason}"
        exc = NotInNeuromanifoldError(message)
        exc.fiber = fib  # the complete argument, with a certificate of the function (exc.fiber.save(path))
        raise exc
    d, dd = arch.widths
    a = arch.ranks[0]
    if fib.case == "zero":
        z = fmpq_mat(a, d)
        weights = [(z, fmpq_mat(a, d), fmpq_mat(dd, d))]
    else:
        weights = [(*rank_factorization(A, a), V) for A, V in fib.lines]
    verified = "F(y) = V y y^T A reproduced exactly"
    if black_box is not None:
        _verify_black_box(arch, black_box, weights[0])
        verified += "; black box matched on the degree-3 unisolvent set"
    fib.seconds = time.perf_counter() - start
    return Recovery(arch, weights, fib, verified)


def _verify_black_box(arch: Architecture, f, weights) -> None:
    d, t = arch.input_shape
    dd = arch.widths[-1]
    layers = [tuple(np.array(mat_rows(M), dtype=object) for M in weights)]
    for X in _unisolvent_inputs(d, t):
        want = network(ExactOps(), layers, read_input(arch, X))
        got = [output_column(call_evaluator(f, X), j, dd, t) for j in range(t)]
        if any(got[j][r] != want[r, j] for j in range(t) for r in range(dd)):
            raise NotInNeuromanifoldError(
                f"the black box differs from every layer function of {arch} at X = {[[str(v) for v in row] for row in X]}: "
                "it is not a single lightning layer of this architecture (or not a cubic polynomial map)"
            )


