"""Kernel fields beyond [HMK]'s groups: polynomial vector fields in the kernel of ``dφ`` at every point.

Where [HMK]'s hypotheses fail, the symmetry groups no longer span the kernel
of the Jacobian and the upper bound ``P - rank(fields)`` is loose. These
families close the gap; each is a family of polynomial vector fields ``v`` with
``dφ_W[v(W)] = 0`` for every ``W``, proved for all sizes (docs/invariance.md §5):

* ``annihilator`` (layer ``i + 1``): layer ``i``'s output lies in the column space
  of ``B_i = V_i ⋯ V_{j+1}``, ``d_j = min(d_0, …, d_i)`` the narrowest width so far,
  so moving ``Q_{i+1}``, ``K_{i+1}`` or ``V_{i+1}`` by ``e_r wᵀ`` with ``wᵀ B_i = 0``
  changes nothing. The annihilators ``w_S(W)`` (a Laplace expansion of ``B_i``
  with one column repeated) are polynomial, and when ``rank B_i = d_j`` their
  values span the whole left null space — so at a point the field values are
  ``e_r nᵀ`` for a basis ``n`` of that null space, taken in a canonical form (the
  null-space basis read off the reduced echelon form of ``B_iᵀ``), and no rows
  at a point where ``B_i`` drops rank mod ``p``.
* ``symmetric-score`` (layer ``i``, lightning): when every input to layer ``i``
  has rank ``≤ 1`` — ``t = 1``, or some earlier layer with ``a_j = 1`` — the score
  ``Yᵀ A_i Y = c (vᵀ A_i v) cᵀ`` sees only ``sym(A_i)``; ``δQ_i = J K_i`` and
  ``δK_i = J Q_i`` with ``J`` skew move ``A_i = K_iᵀ Q_i`` by ``K_iᵀ J K_i`` and
  ``-Q_iᵀ J Q_i``, both skew.
* ``score-free`` (layer ``i``, normalized, ``t = 1``): a column-normalized
  ``1 x 1`` score is ``1``, so ``Q_i`` and ``K_i`` do not enter at all.
* ``co-annihilator`` (layer ``i < l``, normalized, ``t = 1``): then the network is
  the linear map ``V_l ⋯ V_1 X``; with ``d_k = min(d_{i+1}, …, d_l)`` (``k`` the
  first such index) below ``d_i``, moving ``V_i`` by ``u e_cᵀ`` with
  ``C_i u = 0``, ``C_i = V_k ⋯ V_{i+1}``, changes nothing — the mirror image of
  ``annihilator``, with the canonical null basis of ``C_i`` where ``rank C_i = d_k``.

* the mixing of heads (``mixing``, ``rank-mixing``, ``symmetric-mixing``,
  ``value-mixing``; :mod:`attngeo.geometry.dimension.mixing`): a layer with several
  heads is linear in ``Σ_j V_j ⊗ K_jᵀ Q_j`` (or, with one token, in its symmetric
  part, or normalized, in ``Σ_j V_j``), so heads re-split (docs/multihead.md §3).
* ``co-annihilator`` with heads (normalized, one token): the network is
  ``S_l ⋯ S_1 x`` with ``S_i = Σ_j V_ij``; head 1's ``V_i`` moves by ``u e_cᵀ`` with
  ``C_i u = 0``, as for one head.

The upper bound uses the rank, mod ``p``, of these rows together with the
group's fields (:func:`attngeo.geometry.symmetry.field_matrix`): all are values
of polynomial vector fields in the kernel at an integer point, so the rank
bounds the generic kernel dimension from below.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flint import nmod_mat

from ...exact import modular
from ...exact.rank import null_basis_mod_p, rank_mod_p
from ...model.architecture import Architecture
from ...model.network import split_heads, split_point
from .mixing import mixing_family, mixing_moves


@dataclass(frozen=True)
class KernelFamily:
    """One kernel family on one architecture: ``kind`` at ``layer``, with ``size`` fields (generically independent).

    Examples
    --------
    Layer 1 of ``2 -> 3 -> 2`` widens, so layer 2 reads vectors of a plane in
    ``Q^3``; its one annihilator ``n`` gives a move ``e_r n^T`` of each of the
    ``a + a + d_2 = 6`` rows of ``Q_2``, ``K_2``, ``V_2``:

    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.kernelfields import kernel_families
    >>> kernel_families(Architecture((2, 3, 2), (2, 2)))
    [KernelFamily(kind='annihilator', layer=2, size=6)]
    """

    kind: str
    layer: int
    size: int

    def to_dict(self) -> dict:
        """The record an upper-bound witness lists after the groups' families.

        Examples
        --------
        With one token a rank-3 layer sees only ``sym(A)``: ``a (a - 1) = 6``
        skew moves:

        >>> from attngeo import Architecture
        >>> from attngeo.geometry.dimension.kernelfields import kernel_families
        >>> [f.to_dict() for f in kernel_families(Architecture((3, 3), (3,), tokens=1))]
        [{'kind': 'symmetric-score', 'layer': 1, 'size': 6}]
        """
        return {"kind": self.kind, "layer": self.layer, "size": self.size}


def _narrowest(widths: tuple, i: int) -> int:
    """The last index ``j <= i`` with ``d_j = min(d_0, ..., d_i)``."""
    m = min(widths[: i + 1])
    return max(j for j in range(i + 1) if widths[j] == m)


def _narrowest_after(widths: tuple, i: int) -> int:
    """The first index ``k > i`` with ``d_k = min(d_{i+1}, ..., d_l)``."""
    m = min(widths[i + 1 :])
    return min(k for k in range(i + 1, len(widths)) if widths[k] == m)


def _value_width(arch: Architecture, i: int) -> int:
    """Columns of ``[V_i1 | ... | V_ih]`` (or of the ``O``): layer ``i``'s output lies in their span."""
    return arch.heads[i - 1] * (arch.value_ranks[i - 1] if arch.value_ranks else arch.widths[i - 1])


def _rank_one_inputs(arch: Architecture, i: int) -> bool:
    """Every input to layer ``i`` (1-based) has rank <= 1: one token, or an earlier lightning layer of rank 1."""
    return arch.tokens == 1 or (arch.normalization == "lightning" and any(a == 1 for a in arch.ranks[: i - 1]))


def kernel_families(arch: Architecture) -> list[KernelFamily]:
    """The kernel families that apply to ``arch``, in canonical order (by layer, then kind).

    Parameters
    ----------
    arch : Architecture

    Returns
    -------
    list of KernelFamily

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.geometry.dimension.kernelfields import kernel_families
    >>> [f.to_dict() for f in kernel_families(Architecture((2, 3, 2), (2, 2)))]
    [{'kind': 'annihilator', 'layer': 2, 'size': 6}]
    >>> [f.kind for f in kernel_families(Architecture((3, 3), (2,), tokens=1))]
    ['symmetric-score']
    >>> kernel_families(Architecture((3, 3, 3), (2, 2)))   # [HMK]'s setting: none
    []
    """
    if not arch.is_plain:  # heads: the groups, the mixing of heads, narrow value maps, and discovery
        out = []
        for i, h in enumerate(arch.heads, start=1):
            if i > 1 and _value_width(arch, i - 1) < arch.widths[i - 1] and not arch.residual:
                read = 2 * arch.ranks[i - 1] + (arch.value_ranks[i - 1] if arch.value_ranks else arch.widths[i])
                out.append(KernelFamily("annihilator", i, (arch.widths[i - 1] - _value_width(arch, i - 1)) * h * read))
            a, d_in = arch.ranks[i - 1], arch.widths[i - 1]
            if arch.tokens == 1 and arch.normalization == "lightning" and a >= 2:  # x^T A x sees sym(A) only
                out.append(KernelFamily("symmetric-score", i, h * a * (a - 1)))
            elif arch.tokens == 1 and arch.normalization != "lightning":  # a normalized 1 x 1 score is 1
                out.append(KernelFamily("score-free", i, h * 2 * a * d_in))
            mixing = mixing_family(arch, i)
            if mixing:
                out.append(KernelFamily(*mixing[:1], i, mixing[1]))
            if arch.tokens == 1 and arch.normalization != "lightning" and i < arch.depth and not arch.residual \
                    and arch.value_ranks is None:  # the network is (sum_j V_lj) ... (sum_j V_1j) x
                k = _narrowest_after(arch.widths, i)
                if arch.widths[k] < arch.widths[i]:
                    out.append(KernelFamily("co-annihilator", i, d_in * (arch.widths[i] - arch.widths[k])))
        return out
    out = []
    for i in range(1, arch.depth + 1):
        a, d_in = arch.ranks[i - 1], arch.widths[i - 1]
        if i > 1:
            j = _narrowest(arch.widths, i - 1)
            if arch.widths[j] < d_in:
                out.append(KernelFamily("annihilator", i, (2 * a + arch.widths[i]) * (d_in - arch.widths[j])))
        if arch.normalization != "lightning" and arch.tokens == 1:
            out.append(KernelFamily("score-free", i, 2 * a * d_in))
            if i < arch.depth:
                k = _narrowest_after(arch.widths, i)
                if arch.widths[k] < arch.widths[i]:
                    out.append(KernelFamily("co-annihilator", i, d_in * (arch.widths[i] - arch.widths[k])))
        elif arch.normalization == "lightning" and _rank_one_inputs(arch, i) and a >= 2:
            out.append(KernelFamily("symmetric-score", i, a * (a - 1)))
    return out


def _score_moves(kind: str, Q: np.ndarray, K: np.ndarray):
    """``(name, delta)`` of the one-token families on one head: the skew moves of ``A`` or every entry of ``Q, K``."""
    if kind == "score-free":
        for name, M in (("Q", Q), ("K", K)):
            for k in range(M.size):
                delta = np.zeros(M.size, dtype=np.int64)
                delta[k] = 1
                yield name, delta.reshape(M.shape)
        return
    for u in range(Q.shape[0]):
        for v in range(u + 1, Q.shape[0]):  # J = E_uv - E_vu: (J X)[u] = X[v], (J X)[v] = -X[u]
            for name, source in (("Q", K), ("K", Q)):
                delta = np.zeros_like(Q)
                delta[u, :], delta[v, :] = source[v, :], -source[u, :]
                yield name, delta


def _head_rows(arch: Architecture, point: np.ndarray, p: int) -> np.ndarray:
    """The kernel moves of an architecture beyond [HMK]'s model at ``point`` mod ``p``.

    ``annihilator`` at layer ``i``: layer ``i - 1``'s output lies in the span of
    ``B = [V_1 | ... | V_h]`` (the ``O`` when factored); for ``n`` in the left null
    space of ``B`` (canonical basis, where ``B`` has full column rank mod ``p``), the
    moves ``e_r n^T`` of every row of every head's ``Q``, ``K`` and ``V`` (or ``U``).
    ``symmetric-score`` / ``score-free`` (one token): per head, the skew moves of ``A`` / every entry of ``Q`` and ``K``.
    ``co-annihilator`` (normalized, one token): head 1's ``V_i`` moves by ``u e_c^T`` with ``C u = 0``.
    The mixing kinds: :func:`attngeo.geometry.dimension.mixing.mixing_moves`.
    """
    layers = split_heads(arch, modular.reduce(point, p))
    blocks = {(b.layer, b.head, b.name): b for b in arch.blocks()}
    rows = []
    for fam in kernel_families(arch):
        if fam.kind == "annihilator":
            B = np.hstack([w[-1] for w in layers[fam.layer - 2]])  # the V, or the O of V = O U
            if rank_mod_p(B, p) < B.shape[1]:
                continue  # the annihilators vanish here mod p: no rows (a valid, weaker bound)
            for n in null_basis_mod_p(B.T, p):
                for b in arch.blocks():
                    if b.layer == fam.layer and b.name in "QKUV":
                        for r in range(b.rows):
                            vec = np.zeros(arch.parameter_count, dtype=np.int64)
                            vec[b.offset + r * b.cols : b.offset + (r + 1) * b.cols] = n
                            rows.append(vec)
            continue
        if fam.kind in ("symmetric-score", "score-free"):  # one token: per head, as for [HMK]'s layer
            for j, weights in enumerate(layers[fam.layer - 1], start=1):
                for name, delta in _score_moves(fam.kind, *weights[:2]):
                    b = blocks[(fam.layer, j, name)]
                    vec = np.zeros(arch.parameter_count, dtype=np.int64)
                    vec[b.offset : b.offset + b.size] = np.mod(delta, p).ravel()
                    rows.append(vec)
            continue
        if fam.kind == "co-annihilator":  # normalized, one token: move head 1's V_i by u e_c^T with C u = 0
            k = _narrowest_after(arch.widths, fam.layer)
            C = np.eye(arch.widths[fam.layer], dtype=np.int64)
            for m in range(fam.layer + 1, k + 1):  # C = S_k ... S_{i+1}, S_m = sum_j V_mj
                C = modular.matmul(sum(w[2] for w in layers[m - 1]) % p, C, p)
            if rank_mod_p(C, p) < arch.widths[k]:
                continue
            b = blocks[(fam.layer, 1, "V")]
            for u in null_basis_mod_p(C, p):
                for c in range(b.cols):
                    vec = np.zeros(arch.parameter_count, dtype=np.int64)
                    vec[b.offset + c : b.offset + b.size : b.cols] = u
                    rows.append(vec)
            continue
        for moves in mixing_moves(fam.kind, layers[fam.layer - 1], p):
            vec = np.zeros(arch.parameter_count, dtype=np.int64)
            for j, name, mat in moves:
                b = blocks[(fam.layer, j + 1, name)]
                vec[b.offset : b.offset + b.size] = np.mod(mat, p).ravel()
            rows.append(vec)
    return np.array(rows, dtype=np.int64).reshape(len(rows), arch.parameter_count)


def kernel_rows(arch: Architecture, point: np.ndarray, p: int) -> np.ndarray:
    """The values of every kernel family's fields at an integer point, mod ``p``, one row each.

    Rows follow :func:`kernel_families`; columns follow the flattening order.

    Parameters
    ----------
    arch : Architecture
    point : numpy.ndarray
        ``arch.parameter_count`` integers (reduced mod ``p`` here).
    p : int
        A prime below ``2^31``.

    Returns
    -------
    numpy.ndarray
        ``int64``, one row per field value, entries in ``[0, p)``. A family whose
        annihilators vanish at the point mod ``p`` contributes no rows.

    Examples
    --------
    For ``2 -> 3 -> 2`` the six annihilator moves are independent and every one
    is in the kernel of the Jacobian, ``J row = 0`` mod ``p``; with the groups'
    fields they leave ``dim M = 10``, which the Jacobian's rank reaches:

    >>> import numpy as np
    >>> from attngeo import Architecture
    >>> from attngeo.exact.modular import matmul
    >>> from attngeo.exact.rank import rank_mod_p
    >>> from attngeo.geometry.dimension.kernelfields import kernel_rows
    >>> from attngeo.model.jacobian import jacobian_mod_p
    >>> arch, p = Architecture((2, 3, 2), (2, 2)), 1000003
    >>> rng = np.random.default_rng(0)
    >>> point = rng.integers(-9, 10, arch.parameter_count)
    >>> R = kernel_rows(arch, point, p)
    >>> R.shape, rank_mod_p(R, p)
    ((6, 32), 6)
    >>> J = jacobian_mod_p(arch, point, rng.integers(-9, 10, (8, 2, 2)), p)
    >>> bool(np.any(matmul(J, R.T, p))), rank_mod_p(J, p)
    (False, 10)

    Where ``V_1`` has rank 1 the annihilators vanish: no rows there.

    >>> V1 = next(b for b in arch.blocks() if (b.layer, b.name) == (1, "V"))
    >>> point[V1.offset : V1.offset + V1.size] = [1, 2, 2, 4, 3, 6]
    >>> kernel_rows(arch, point, p).shape
    (0, 32)
    """
    if not kernel_families(arch):
        return np.zeros((0, arch.parameter_count), dtype=np.int64)
    if not arch.is_plain:
        return _head_rows(arch, point, p)
    layers = split_point(arch, modular.reduce(point, p))
    blocks = {(b.layer, b.name): b for b in arch.blocks()}
    rows = []

    def row(i: int, name: str, mat: np.ndarray) -> None:
        vec = np.zeros(arch.parameter_count, dtype=np.int64)
        b = blocks[(i, name)]
        vec[b.offset : b.offset + b.size] = np.mod(mat, p).ravel()
        rows.append(vec)

    for fam in kernel_families(arch):
        i = fam.layer
        Q, K, V = layers[i - 1]
        if fam.kind == "annihilator":
            j = _narrowest(arch.widths, i - 1)
            B = np.eye(arch.widths[j], dtype=np.int64)
            for k in range(j + 1, i):  # B = V_{i-1} ... V_{j+1}
                B = modular.matmul(layers[k - 1][2], B, p)
            if rank_mod_p(B, p) < arch.widths[j]:
                continue  # the annihilators vanish here mod p: no rows (a valid, weaker bound)
            for n in null_basis_mod_p(B.T, p):
                for name, M in (("Q", Q), ("K", K), ("V", V)):
                    for r in range(M.shape[0]):
                        delta = np.zeros_like(M)
                        delta[r, :] = n
                        row(i, name, delta)
        elif fam.kind in ("symmetric-score", "score-free"):
            for name, delta in _score_moves(fam.kind, Q, K):
                row(i, name, delta)
        elif fam.kind == "co-annihilator":
            k = _narrowest_after(arch.widths, i)
            C = np.eye(arch.widths[i], dtype=np.int64)
            for m in range(i + 1, k + 1):  # C = V_k ... V_{i+1}
                C = modular.matmul(layers[m - 1][2], C, p)
            if rank_mod_p(C, p) < arch.widths[k]:
                continue
            for u in null_basis_mod_p(C, p):
                for c in range(V.shape[1]):
                    delta = np.zeros_like(V)
                    delta[:, c] = u
                    row(i, "V", delta)
    return np.array(rows, dtype=np.int64).reshape(len(rows), arch.parameter_count)
