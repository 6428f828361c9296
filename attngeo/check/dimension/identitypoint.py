"""The checker's replay of deep structured dimension witnesses (``structured = "identity values"``).

The witness is a point with every ``V_i = I`` (equal widths ``d``), inputs,
and a minor of the Jacobian listed block by block. It rests on one lemma,
proved in two lines: at ``V_1 = ... = V_l = I`` every layer output on an input
``X`` whose nonzero rows lie in ``R`` is ``X M`` (``M`` a ``t x t`` matrix), and
``K_i Y = K_i[:, R] Y[R]``, ``Q_i Y = Q_i[:, R] Y[R]``; so for **all** ``Q, K`` the
network is the width-``|R|`` network with ``Q_i[:, R]``, ``K_i[:, R]``, ``V_i = I``,
padded by zero rows, and it is ``V_l Z`` with ``Z`` free of ``V_l``. Hence the
derivative of output entry ``(k, j)``:

* on ``Q_i[s, c]``, ``K_i[s, c]``: zero unless ``c`` and ``k`` are both in ``R``;
  otherwise the derivative of the small network;
* on ``V_l[k', m]``: ``[k' = k] Z[m, j]``, zero unless ``m`` is in ``R``;
* on ``V_i`` (``i < l``): not described, so no minor column may lie there.

The checker reads each input's ``R`` from its nonzero rows mod p, verifies that
no row of a block is nonzero on a column of a *later* block (so the minor is
block lower triangular), computes every diagonal block with its own forward
mode on the small networks, and multiplies the blocks' determinants. The
upper bound is the group fields at the same kind of point, evaluated by index
formulas on the recorded rows and columns, in whose order that sparse matrix
must be block lower triangular: its determinant is the product of the diagonal blocks'.
"""

from __future__ import annotations


import numpy as np

from ...exceptions import CertificateFormatError
from ..limits import MAX_IDENTITY_WORK, refuse_above
from ..linalg import block_det, mm as _mm, nmod
from . import groups
from ..values import field, index_list, int_array, integer, prime, reject

#: Work the checker accepts from one witness: input entries N d t, one block's size (dense determinant), the
#: tangent entries of one forward pass, and the field matrix's nonzeros.
MAX_INPUT_ENTRIES, MAX_BLOCK, MAX_TANGENT_ENTRIES, MAX_FIELD_NONZEROS = 50_000_000, 4096, 20_000_000, 100_000_000
#: The time a lower witness may buy, in estimated nanoseconds of one core: per tangent product (small int64
#: matmuls and their reductions, measured 9 ns), per (row, block column) pair walked in Python, per block entry
#: handed to FLINT, per n^3 of a block determinant (docs/trust.md has the seconds measured at the limit).
NS_PER_TANGENT, NS_PER_PAIR, NS_PER_ENTRY, NS_PER_DET = 10, 100, 300, 0.3

LOWER_KEYS = {"structured", "prime", "point", "inputs", "rank", "rows", "columns", "blocks", "determinant"}
UPPER_KEYS = {"structured", "prime", "point", "families", "field_rank", "rows", "columns", "determinant"}


def _shape(arch) -> int:
    if not getattr(arch, "plain", True) or len(arch.ranks) < 2:
        reject("an 'identity values' witness is for a network of [HMK]'s kind with at least two layers")
    d = arch.widths[0]
    if any(w != d for w in arch.widths) or max(arch.ranks) > d:
        reject("an 'identity values' witness needs equal widths d and ranks a_i <= d")
    return d


def _layout(arch):
    """Per flat column: kind (0 Q, 1 K, 2 V), layer (1-based), row, column; and the offset of ``V_l``."""
    layer, _, kind, row, col = arch.columns()
    return kind, layer, row, col, arch.offsets()[(len(arch.ranks), 1, "V")]


def weights(arch, values, where: str) -> dict:
    """``(layer, name) -> rows`` of a point at which every ``V_i`` is the identity: the lemma's hypothesis (else a
    refusal). ``values`` are the point's entries (integers or rationals), in flattening order.

    >>> from attngeo.check.arch import Arch
    >>> weights(Arch((1, 1, 1), (1, 1), 2), [2, 3, 1, 5, 7, 2], "lower_witness")
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: lower_witness.point must have V_2 = I (the lemma of an 'identity values' witness)
    """
    W = {(i, name): rows for (i, _, name), rows in arch.weights(values).items()}
    for i, name, r, c, _ in arch.shapes():
        if name == "V" and any(W[(i, name)][x][y] != (x == y) for x in range(r) for y in range(c)):
            reject(f"{where}.point must have V_{i} = I (the lemma of an 'identity values' witness)")
    return W


def _point(w: dict, arch, key: str) -> tuple[int, np.ndarray, dict]:
    """The prime, the point mod p (every ``V_i`` must be the identity, as integers) and its weights."""
    p = prime(w["prime"], f"{key}.prime")
    point = int_array(w["point"], (arch.parameters,), f"{key}.point")
    return p, np.mod(point, p), {k: np.mod(np.array(rows, dtype=np.int64), p) for k, rows in weights(arch, point, key).items()}


def _forward(X, Qs, Ks, p, dirs):
    """Values and tangents of the small networks (``V = I``): ``Y (G, r, t)`` and ``dY (D, G, r, t)``.

    ``dirs`` lists the tangent directions ``(layer, 0 for Q or 1 for K, s, c)``
    (0-based layer), sorted by layer: a direction is zero before its layer, so
    only the directions of the layers so far are carried.
    ``d(Yᵀ A Y) = dYᵀ A Y + Yᵀ dA Y + Yᵀ A dY``; ``Yᵀ (Kᵀ E_sc) Y = (K Y)_s ⊗ Y_c`` and ``Yᵀ (E_cs Q) Y = Y_c ⊗ (Q Y)_s``.
    """
    G, r, t = X.shape
    dirs = np.asarray(dirs, dtype=np.int64).reshape(-1, 4)
    Y, dY = X, np.zeros((len(dirs), G, r, t), dtype=np.int64)
    for i, (Q, K) in enumerate(zip(Qs, Ks)):
        upto, mine = np.searchsorted(dirs[:, 0], i, side="right"), dirs[:, 0] == i
        A = _mm(np.swapaxes(K, -1, -2), Q, p)
        YA = _mm(np.swapaxes(Y, -1, -2), A, p)
        S = _mm(YA, Y, p)
        active = dY[:upto]
        dS = (_mm(_mm(np.swapaxes(active, -1, -2), A, p), Y, p) + _mm(YA, active, p)) % p
        KY, QY = _mm(K, Y, p), _mm(Q, Y, p)
        for e in np.flatnonzero(mine):
            _, name, s_, c = dirs[e]
            left, right = (KY[:, s_], Y[:, c]) if name == 0 else (Y[:, c], QY[:, s_])
            dS[e] = (dS[e] + left[:, :, None] * right[:, None, :]) % p  # products of two residues: below 2**52
        dY[:upto] = (_mm(active, S, p) + _mm(Y, dS, p)) % p
        Y = _mm(Y, S, p)
    return Y, dY


def minor(cert: dict, lw: dict, arch, support: np.ndarray) -> tuple[int, np.ndarray, np.ndarray, list]:
    """The minor's rank, columns, rows and block sizes, read and proved block lower triangular by the lemma.

    ``support[n, x]`` says whether row ``x`` of input ``n`` is nonzero. Shared by
    the modular replay here and the ball replay (:mod:`attngeo.check.dimension.ball`).

    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((3, 3, 3), (1, 1), 2)
    >>> lw = {"rank": 1, "rows": [[0, 2, 0]], "columns": [28], "blocks": [1]}   # V_2[2, 1]; input 0 on rows 0, 1
    >>> minor({"lower": 1}, lw, arch, np.array([[True, True, False]]))[0]
    1
    """
    d, t, P, l = arch.widths[0], arch.tokens, arch.parameters, len(arch.ranks)
    N = support.shape[0]
    rank = integer(lw["rank"], "lower_witness.rank", 0, P)
    if rank != integer(field(cert, "lower"), "lower"):
        reject(f"lower = {cert['lower']} but the witness has rank {rank}")
    columns = np.array(index_list(lw["columns"], rank, P, "lower_witness.columns"), dtype=np.int64)
    rows = int_array(lw["rows"], (rank, 3), "lower_witness.rows") if rank else np.zeros((0, 3), dtype=np.int64)
    n, k, j = rows.T
    if np.any((n < 0) | (n >= N) | (k < 0) | (k >= d) | (j < 0) | (j >= t)):
        reject("lower_witness.rows must be [input, output row, token] triples within the inputs' shape")
    if len(np.unique((n * d + k) * t + j)) != rank:
        reject("lower_witness.rows repeats a row")
    sizes = lw["blocks"]
    if not isinstance(sizes, list) or not all(isinstance(s, int) and not isinstance(s, bool) and 1 <= s <= MAX_BLOCK
                                              for s in sizes) or sum(sizes) != rank:
        reject(f"lower_witness.blocks must be block sizes from 1 to {MAX_BLOCK} adding up to the rank")
    kind, layer, wrow, wcol, V = _layout(arch)
    if np.any((kind[columns] == 2) & (layer[columns] < l)):
        reject("a minor column lies in V_i with i < l, where the lemma says nothing")
    block_of_row = np.repeat(np.arange(len(sizes)), sizes)
    block_of = np.full(P, -1, dtype=np.int64)
    block_of[columns] = block_of_row
    # zero pattern: a row may touch V_l[k, R] and, when k is in R, Q_i[:, R] and K_i[:, R]; none of a later block
    qk = np.full(d, -1, dtype=np.int64)
    np.maximum.at(qk, wcol[kind < 2], block_of[kind < 2])
    qk_latest = np.where(support, qk[None, :], -1).max(axis=1)  # per input
    step = max(1, 4_000_000 // d)
    for s in range(0, rank, step):
        nn, kk = n[s : s + step], k[s : s + step]
        v_latest = np.where(support[nn], block_of[V + kk[:, None] * d + np.arange(d)], -1).max(axis=1)
        latest = np.maximum(v_latest, np.where(support[nn, kk], qk_latest[nn], -1))
        if np.any(latest > block_of_row[s : s + step]):
            reject("a row of the minor is nonzero on a column of a later block: the minor is not block triangular")
    return rank, columns, rows, sizes


def check_lower(cert: dict, lw: dict, arch) -> int:
    """The rank the block lower triangular minor proves (see the module docstring).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.geometry.dimension.identitypoint import certify_deep
    >>> cert = certify_deep(Architecture((5, 5, 5), (2, 2)), seed=0).to_json()
    >>> arch, lw = Arch((5, 5, 5), (2, 2), 2), cert["lower_witness"]
    >>> check_lower(cert, lw, arch)
    55
    >>> check_lower(cert, dict(lw, determinant=(lw["determinant"] + 1) % lw["prime"]), arch)   # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attngeo.exceptions.CertificateRejected: the blocks' determinants multiply to ...
    """
    if set(lw) != LOWER_KEYS or lw["structured"] != "identity values" or arch.normalization != "lightning":
        reject(f"an 'identity values' lower witness of a lightning network holds exactly {', '.join(sorted(LOWER_KEYS))}")
    d, t, P, l = _shape(arch), arch.tokens, arch.parameters, len(arch.ranks)
    p, _, W = _point(lw, arch, "lower_witness")
    N = len(lw["inputs"]) if isinstance(lw["inputs"], list) else 0
    if N < 1 or N * d * t > MAX_INPUT_ENTRIES:
        raise CertificateFormatError(f"lower_witness.inputs must hold 1 to {MAX_INPUT_ENTRIES // (d * t)} inputs")
    X = np.mod(int_array(lw["inputs"], (N, d, t), "lower_witness.inputs"), p)
    support = X.any(axis=2)  # (N, d): the rows R of each input (mod p, where the Jacobian lives)
    rank, columns, rows, sizes = minor(cert, lw, arch, support)
    n, k, j = rows.T
    kind, layer, wrow, wcol, _ = _layout(arch)
    # values: forward mode on the small networks, only along the directions the blocks need
    Z = np.zeros((N, d, t), dtype=np.int64)
    where = np.full((N, d), -1, dtype=np.int64)  # position of each row in its input's R
    count = support.sum(axis=1)
    for r in set(count.tolist()) - {0}:
        members = np.flatnonzero(count == r)
        where[members[:, None], np.array([np.flatnonzero(support[m]) for m in members])] = np.arange(r)
    starts = np.cumsum([0] + sizes)
    row_block = np.repeat(np.arange(len(sizes)), sizes)
    # The work, from the witness's sizes, before any of it is done (estimated nanoseconds of one core,
    # docs/trust.md): the pairs of a row whose Q, K entries may be nonzero with the columns of its block
    # (enumerated in Python below); each block's determinant (n^3 in FLINT, after handing it n^2 entries); the
    # forward tangents, each direction carried from its layer to the last for every input of its support size
    # r: per layer and input the products of r x r x t and r x t x t. Layer i has at most 2 a_i r directions
    # for such inputs (Q_i[s, c], K_i[s, c], c in R), and no more than the minor's Q_i, K_i columns.
    sizes_ = np.array(sizes, dtype=np.int64)
    pairs = int(sizes_[row_block[support[n, k]]].sum())
    hard = sizes_[sizes_ > 1]
    in_layer = np.bincount(layer[columns[kind[columns] < 2]] - 1, minlength=l)
    carried = 0
    for r in set(count.tolist()) - {0}:
        per_layer = np.minimum(2 * np.array(arch.ranks, dtype=np.int64) * r, in_layer)
        carried += int(np.cumsum(per_layer).sum()) * int((count == r).sum()) * r * t * (r + t)
    refuse_above(NS_PER_PAIR * pairs + int((NS_PER_DET * hard**3 + NS_PER_ENTRY * hard**2).sum())
                 + NS_PER_TANGENT * carried, MAX_IDENTITY_WORK, "replaying this 'identity values' witness")
    needed = {}  # support size -> directions (layer, name, s, position) some block needs
    for x in np.flatnonzero(support[n, k]).tolist():  # rows whose Q, K entries may be nonzero
        b = row_block[x]
        C = columns[starts[b] : starts[b + 1]]
        C = C[(kind[C] < 2) & (where[n[x], wcol[C]] >= 0)]
        needed.setdefault(int(count[n[x]]), set()).update(
            zip((layer[C] - 1).tolist(), kind[C].tolist(), wrow[C].tolist(), where[n[x], wcol[C]].tolist()))
    tangent = {}  # input -> (group tangents, index in the group, direction -> index)
    for r in set(count.tolist()) - {0}:
        members = np.flatnonzero(count == r)
        R = np.array([np.flatnonzero(support[m]) for m in members])
        dirs = sorted(needed.get(r, ()))
        index = {key: e for e, key in enumerate(dirs)}
        chunk = max(1, MAX_TANGENT_ENTRIES // ((len(dirs) + 1) * r * max(r, t)))
        for s in range(0, len(members), chunk):
            mem, Rs = members[s : s + chunk], R[s : s + chunk]
            Qs = [np.moveaxis(W[(i, "Q")][:, Rs], 1, 0) for i in range(1, l + 1)]
            Ks = [np.moveaxis(W[(i, "K")][:, Rs], 1, 0) for i in range(1, l + 1)]
            Y, dY = _forward(X[mem[:, None], Rs], Qs, Ks, p, dirs)
            Z[mem[:, None], Rs] = Y
            for g, m in enumerate(mem):
                tangent[int(m)] = (dY, g, index)
    det = 1
    sizes_ = np.array(sizes, dtype=np.int64)
    easy = np.flatnonzero((sizes_ == 1) & (kind[columns[starts[:-1]]] == 2))  # 1 x 1 on V_l: [k' = k] Z[m, j]
    q = starts[easy]
    c1 = columns[q]
    values = np.where(wrow[c1] == k[q], Z[n[q], wcol[c1], j[q]], 0)
    for x in values.tolist():
        det = det * x % p
    hard = np.ones(len(sizes), dtype=bool)
    hard[easy] = False
    for b in np.flatnonzero(hard).tolist():
        size = sizes[b]
        br, cb = rows[starts[b] : starts[b + 1]], columns[starts[b] : starts[b + 1]]
        isV = kind[cb] == 2  # V_l[k', m]: [k' = k] Z[m, j]
        M = np.zeros((size, size), dtype=np.int64)
        Vc = cb[isV]
        M[:, isV] = np.where(wrow[Vc][None, :] == br[:, 1:2], Z[br[:, 0:1], wcol[Vc][None, :], br[:, 2:3]], 0)
        qk, C = np.flatnonzero(~isV), cb[~isV]  # Q_i[s, c], K_i[s, c]: the small network's tangent, if k, c in R
        for nx in np.unique(br[:, 0]).tolist():
            if nx not in tangent or not len(C):
                continue
            dY, g, index = tangent[nx]
            sel = np.flatnonzero(br[:, 0] == nx)
            kpos, pos = where[nx, br[sel, 1]], where[nx, wcol[C]]
            tau = np.array([index.get(key, -1) for key in zip((layer[C] - 1).tolist(), kind[C].tolist(),
                                                               wrow[C].tolist(), pos.tolist())], dtype=np.int64)
            valid = (kpos[:, None] >= 0) & (pos[None, :] >= 0)
            if np.any(valid & (tau[None, :] < 0)):  # pragma: no cover - every such direction was carried above
                raise AssertionError("a needed tangent direction was not computed")
            # gather only where the lemma allows a nonzero: an input whose rows here all lie outside its support
            # may have no tangent directions at all (an empty table), and its entries are zero anyway
            x, y = np.nonzero(valid)
            M[sel[x], qk[y]] = dY[tau[y], g, kpos[x], br[sel[x], 2]]
        det = det * (int(M[0, 0]) if size == 1 else int(nmod(M, p).det())) % p
    recorded = integer(lw["determinant"], "lower_witness.determinant", 0, p - 1)
    if det == 0 or det != recorded:
        reject(f"the blocks' determinants multiply to {det} mod {p}, the certificate records {recorded}")
    return rank


def field_entries(arch, W: dict, scaling: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(row, column, value)`` of the group fields at a point with every ``V_i = I``, from index formulas.

    Rows per layer: intra ``E_uv`` (``δQ[u, :] = Q[v, :]``, ``δK[v, :] = -K[u, :]``), the scaling (``δQ = Q``,
    ``δV = -I``; lightning only: ``scaling=False`` for a normalized network), then inter ``E_uv`` (``δV_i[u, v] = 1``, ``δV_{i+1}[u, v] = -1``, ``δQ_{i+1}[:, v] = -Q_{i+1}[:, u]``,
    ``δK_{i+1}[:, v] = -K_{i+1}[:, u]``).

    >>> from attngeo.check.arch import Arch
    >>> arch = Arch((2, 2, 2), (1, 1), 2)
    >>> W = {(i, n): np.ones((1, 2), dtype=np.int64) for i in (1, 2) for n in "QK"}
    >>> r, c, v = field_entries(arch, W)
    >>> int(r.max()) + 1 == 1 + 1 + 4 + 1 + 1
    True
    """
    d, l = arch.widths[0], len(arch.ranks)
    off = {(i, name): o for (i, _, name), o in arch.offsets().items()}
    R, C, V = [], [], []
    base = 0
    for i, a in enumerate(arch.ranks, start=1):
        Q, K = W[(i, "Q")], W[(i, "K")]
        for u in range(a):
            for v in range(a):
                R += [np.full(2 * d, base + u * a + v)]
                C += [off[(i, "Q")] + u * d + np.arange(d), off[(i, "K")] + v * d + np.arange(d)]
                V += [Q[v], -K[u]]
        base += a * a
        if scaling:
            R += [np.full(a * d + d, base)]
            C += [off[(i, "Q")] + np.arange(a * d), off[(i, "V")] + np.arange(d) * (d + 1)]
            V += [Q.ravel(), np.full(d, -1)]
            base += 1
        if i < l:
            Qn, Kn, an = W[(i + 1, "Q")], W[(i + 1, "K")], arch.ranks[i]
            u, v = np.divmod(np.arange(d * d), d)
            R += [base + u * d + v] * 2
            C += [off[(i, "V")] + u * d + v, off[(i + 1, "V")] + u * d + v]
            V += [np.ones(d * d, dtype=np.int64), -np.ones(d * d, dtype=np.int64)]
            for s in range(an):
                R += [base + u * d + v] * 2
                C += [off[(i + 1, "Q")] + s * d + v, off[(i + 1, "K")] + s * d + v]
                V += [-Qn[s, u], -Kn[s, u]]
            base += d * d
    return np.concatenate(R), np.concatenate(C), np.concatenate([np.asarray(x, dtype=np.int64) for x in V])


def check_upper(cert: dict, uw: dict, arch, expected: list) -> int:
    """The upper bound ``P - s``: the ``s`` group fields' minor on the recorded columns, component by component.

    ``expected`` is the checker's list of families for ``arch`` (groups, then kernel families).

    Examples
    --------
    >>> from attngeo import Architecture
    >>> from attngeo.check.arch import Arch
    >>> from attngeo.check.dimension.dense import _expected_families
    >>> from attngeo.geometry.dimension.identitypoint import certify_deep
    >>> cert = certify_deep(Architecture((5, 5, 5), (2, 2)), seed=0).to_json()
    >>> arch = Arch((5, 5, 5), (2, 2), 2)
    >>> check_upper(cert, cert["upper_witness"], arch, _expected_families(arch))
    55
    """
    d, P, l = _shape(arch), arch.parameters, len(arch.ranks)
    lightning = arch.normalization == "lightning"  # a normalizer breaks the scaling
    s = sum(a * a + lightning for a in arch.ranks) + (l - 1) * d * d
    groups.witness(uw, "identity values", UPPER_KEYS, expected, s)
    p, _, W = _point(uw, arch, "upper_witness")
    columns = index_list(uw["columns"], s, P, "upper_witness.columns")
    order = index_list(uw["rows"], s, s, "upper_witness.rows")
    nonzeros = sum(2 * a * a * d + a * d + d for a in arch.ranks) + (l - 1) * (2 + 2 * max(arch.ranks)) * d * d
    if nonzeros > MAX_FIELD_NONZEROS:
        raise CertificateFormatError(f"the field matrix of {arch.describe()} is above the checker's limit")
    r, c, v = field_entries(arch, W, lightning)
    col_at, row_at = np.full(P, -1, dtype=np.int64), np.empty(s, dtype=np.int64)
    col_at[columns], row_at[order] = np.arange(s), np.arange(s)
    keep = (col_at[c] >= 0) & (np.mod(v, p) != 0)
    r, c, v = row_at[r[keep]], col_at[c[keep]], np.mod(v[keep], p)
    det = block_det(r, c, v, s, p, largest=MAX_BLOCK)
    if det is None:
        reject(f"the field minor's diagonal blocks exceed {MAX_BLOCK} rows: too large to verify here")
    return groups.bound(cert, uw, P, s, det, p, "identity point")
