"""Compare Theorem C (the local rank of a softmax layer from ranks) with direct ball-arithmetic Jacobian ranks.

Statement (docs/math.md §8.3): under (C1)–(C5), a softmax layer with ``h`` heads in ``g`` key-value groups
has local rank ``P - g(a^2 + b^2)`` (``- g(a + b)`` more with biases) at every score scale, with or
without a causal mask or a residual connection; elsewhere §8.4 bounds it. At every point of the grid the
criterion's result, certified by a ``local-rank`` certificate with a ``criterion`` witness and no Jacobian,
is compared with a certified lower bound computed directly: a Jacobian minor of the layer at the point on
random rational inputs whose determinant ball excludes 0 (docs/softmax.md). They agree when the criterion
decides and the ball rank equals it, or when the criterion gives bounds and the ball rank lies between them.

Grid: ``d <= 8``; random integer points (``--full``: 200) and degenerate ones (``--full``: 50: a rank-deficient
``Q``, ``K``, ``U`` or ``O``, repeated queries, keys or outputs, equal or swapped groups, ``row U = row K``, a
zero head, ``h a > d``), each with and without biases, scales ``1``, ``1/sqrt(a)``, ``1/sqrt(3)``, causal
masks, residual connections and grouped-query attention. Exit 1 on any disagreement or rejected certificate.
"""

import random

import numpy as np

from attngeo import Architecture
from attngeo.geometry.loci.regularity import ball_rank, local_rank
from attngeo.model.scale import ONE, ScoreScale
from attngeo.theorems.proof import INSTANCES, CaseOutcome, Claim, Entry, main_guard, proof_arguments, run_cases

RANDOM = Claim("random", r"at random points Theorem C's local rank $P - g(a^2 + b^2)\ (- g(a + b))$ equals a "
               r"certified ball-arithmetic Jacobian rank", INSTANCES, unit="points")
DEGENERATE = Claim("degenerate", r"at degenerate points the certified bounds of docs/math.md \S 8.4 hold for "
                   r"the ball-arithmetic Jacobian rank, and equal it where Theorem C decides", INSTANCES,
                   unit="points")

SHAPES = [  # (d, d', a, h, g, b)
    (4, 4, 2, 2, 2, 2), (4, 4, 1, 2, 2, 1), (4, 3, 1, 2, 1, 1), (5, 5, 2, 2, 2, 2), (6, 6, 1, 4, 2, 1),
    (6, 4, 2, 3, 3, 1), (6, 6, 3, 2, 1, 3), (8, 8, 2, 4, 2, 2), (8, 8, 4, 2, 2, 2), (3, 3, 1, 3, 3, 1),
]
DEFECTS = ["Q rank", "K rank", "U rank", "O rank", "same Q", "same groups", "same O", "U = K", "swapped",
           "zero head", "wide"]


def _arch(shape, t, bias, causal, residual, norm="softmax"):
    d, dd, a, h, g, b = shape
    return Architecture((d, dd), (a,), tokens=t, normalization=norm, heads=h, kv_heads=g, value_ranks=b,
                        biases=bias, causal=causal, residual=residual and d == dd)


def _blocks(arch):
    out = {}
    for blk in arch.blocks():
        out[(blk.head if not blk.group else ("g", blk.group), blk.name)] = blk
    return out


def _set(w, blk, M):
    w[blk.offset: blk.offset + blk.size] = np.asarray(M).ravel()


def _degenerate(arch, w, defect, rng):
    """Break one hypothesis of Theorem C at the point ``w`` (in place); the name says which."""
    B, a = _blocks(arch), arch.ranks[0]
    n = arch.heads[0] // arch.kv_heads[0]
    g1 = ("g", 1) if n > 1 else 1
    g2 = ("g", 2) if n > 1 else 2
    get = lambda key: w[B[key].offset: B[key].offset + B[key].size].reshape(B[key].rows, B[key].cols)  # noqa: E731
    if defect == "Q rank" and a >= 2:
        M = get((1, "Q")).copy()
        M[1] = 2 * M[0]
        _set(w, B[(1, "Q")], M)
    elif defect == "K rank":
        M = get((g1, "K")).copy()
        M[-1] = 0
        _set(w, B[(g1, "K")], M)
    elif defect == "U rank":
        M = get((g1, "U")).copy()
        M[-1] = 0
        _set(w, B[(g1, "U")], M)
    elif defect == "O rank":
        M = get((1, "O")).copy()
        M[:, -1] = 0
        _set(w, B[(1, "O")], M)
    elif defect == "same Q" and arch.heads[0] >= 2:
        _set(w, B[(2, "Q")], get((1, "Q")))
    elif defect == "same groups" and arch.kv_heads[0] >= 2:
        _set(w, B[(g2, "K")], 3 * get((g1, "K")))
        _set(w, B[(g2, "U")], -get((g1, "U")))
    elif defect == "same O" and arch.heads[0] >= 2:
        _set(w, B[(2, "O")], get((1, "O")))
    elif defect == "U = K" and arch.value_ranks[0] == a:
        _set(w, B[(g1, "U")], 2 * get((g1, "K")))
    elif defect == "swapped" and arch.kv_heads[0] >= 2 and arch.value_ranks[0] == a:
        _set(w, B[(g2, "K")], get((g1, "U")))
        _set(w, B[(g2, "U")], get((g1, "K")))
    elif defect == "zero head":
        _set(w, B[(1, "Q")], 0 * get((1, "Q")))
    else:
        return False
    return True


def _case(arch, w, scale, name, claim, seed):
    res = local_rank(arch, w.tolist(), seed=seed, dimension=False, scale=scale, jacobian=False)
    target = res.upper
    rank, _ = ball_rank(arch, w.tolist(), scale=scale, target=target, seed=seed)
    decided = "criterion" in res.lower_witness and res.lower == res.upper
    agree = rank == res.lower if decided else res.lower <= rank <= res.upper
    how = "Theorem C" if decided else f"bounds [{res.lower}, {res.upper}]"
    row = f"{name:<58} {how:<22} ball rank {rank:>4}  {'agree' if agree else 'DISAGREE'}"
    sizes = {"d": arch.widths[0], "d'": arch.widths[1], "a": arch.ranks[0], "h": arch.heads[0],
             "g": arch.kv_heads[0], "b": arch.value_ranks[0], "t": arch.tokens}
    return CaseOutcome(name.replace(" ", "_").replace("/", "_").replace(",", ""), res, row, not agree,
                       None if agree else f"{name}: Theorem C gives {how}, the ball rank is {rank}",
                       [Entry(claim.key, sizes, "certified" if agree else "refuted")])


def outcomes(full: bool, seed: int):
    rng = random.Random(seed)
    nrand, ndeg = (200, 50) if full else (6, 4)
    k = 0
    while k < nrand:
        shape = SHAPES[k % len(SHAPES)]
        t = 2 + (k // len(SHAPES)) % 3
        bias, causal, residual = bool(k % 2), bool(k // 2 % 2), bool(k // 4 % 2)
        arch = _arch(shape, t, bias, causal, residual)
        scale = (ONE, ScoreScale.inverse_sqrt(shape[2]), ScoreScale.inverse_sqrt(3))[k % 3]
        w = np.array([rng.randint(-3, 3) for _ in range(arch.parameter_count)], dtype=np.int64)
        yield _case(arch, w, scale, f"random {k:03d}: {arch}, scale {scale}", RANDOM, seed + k)
        k += 1
    k = tried = 0
    while k < ndeg:
        shape = SHAPES[tried % len(SHAPES)]
        defect = DEFECTS[tried % len(DEFECTS)]
        tried += 1
        if defect == "wide":  # h a > d: Theorem C's hypothesis fails, only bounds
            d, dd, a, h, g, b = shape
            shape = (d, dd, d // h + 1, h, g, b)
        bias, causal = bool(tried % 2), bool(tried // 2 % 2)
        arch = _arch(shape, 2 + tried % 2, bias, causal, False)
        w = np.array([rng.randint(-3, 3) for _ in range(arch.parameter_count)], dtype=np.int64)
        if defect != "wide" and not _degenerate(arch, w, defect, rng):
            continue
        yield _case(arch, w, ScoreScale.inverse_sqrt(arch.ranks[0]), f"{defect} {k:02d}: {arch}", DEGENERATE,
                    seed + 1000 + k)
        k += 1


def main() -> int:
    args = proof_arguments(__doc__.splitlines()[0], "certificates/softmax_criterion",
                           full="200 random and 50 degenerate points")
    return run_cases("Theorem C against ball-arithmetic Jacobian ranks", f"{'point':<58} {'criterion':<22} direct",
                     outcomes(args.full, args.seed), args, claims=[RANDOM, DEGENERATE])


if __name__ == "__main__":
    main_guard(main)
