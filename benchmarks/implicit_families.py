"""Comparison (not a timing): which of Alexandr–Duan–Montúfar's invariant families generate I(M)_k?

Alexandr, Duan, Montúfar, *Algebraic invariants of lightning self-attention*
(arXiv:2604.15632, Macaulay2 code public) list families of polynomials vanishing
on one output coordinate of a lightning layer with ``d' = 1``. Rewritten here from
their definitions in attngeo's coordinates ``c_{1,p,mn}`` (docs/math.md §1.1; their
scaled coefficient ``ω y`` is our ``c``, and their redundant coordinates —
the ``linear relations`` family — do not exist here), with ``T^(p)`` the symmetric
matrix ``2 c_{p,mm}`` on the diagonal and ``c_{p,mn}`` off it (``T^(p) = 2 S^(p)``, the
Gram matrix of ``F_p = (v·y)(a_p·y)``):

* ``CC`` cross-column cubics: the coefficients, in ``λ``, of every 3 x 3 minor of
  ``Σ_p λ_p T^(p)`` (rank ≤ 2: it is ``v (Aλ)ᵀ + (Aλ) vᵀ``);
* ``LR`` low-rank A: the ``(a+1)``-minors of the flattening ``(c_{p,mn})``, rows
  ``m ≤ n``, columns ``p`` (its column ``p`` is ``Φ(v) a_p``, so its rank is ``rank A``);
* ``CS`` context syzygies: ``Σ_R κ_R det Fl_R`` over the maximal minors of the
  flattening, for every linear relation ``Σ_R κ_R det Φ(v)_R = 0`` among the
  maximal minors of the model matrix ``Φ(v)`` (Cauchy–Binet: ``det Fl_R = det Φ(v)_R det A``);
* ``VE`` Veronese quartics (``r = 2``, needs ``a ≥ 2``): for 2-subsets ``K, L``,
  ``D_α(K, L)`` is the 2 x 2 minor of the flattening on the rows ``α`` picks from
  ``K`` (``α = (2,0): {KK, KK'}``, ``(1,1): {KK, K'K'}``, ``(0,2): {KK', K'K'}``) and the
  columns ``L``; the 2 x 2 minors of the catalecticants ``[[D_20, D_11], [D_11, D_02]]``,
  of the cross-target matrices ``(D_α(L), D_α(L'))`` and of the block-concatenated matrix;
* ``QR`` quartic resultants: ``Res(q_i|ℓ, q_k|ℓ)`` of the slice quadrics restricted
  to a line ``ℓ = {a s + b t}``, and the "triple" coefficients (of ``xy`` in
  ``Res(q_i|ℓ, x q_j|ℓ + y q_k|ℓ)`` and in ``Res(x q_i|ℓ + y q_j|ℓ, q_k|ℓ)``). Their
  script takes a user list of lines; here every line at once (the coefficients in
  ``a, b``), so this family contains theirs for any list of lines.

For each degree ``k ≤ K`` the table gives ``dim I(M)_k`` (certified by
``attngeo.geometry.loci.graded``) and the dimension of the degree-``k`` part of the
ideal each family (and all of them) generates. Every family member is first proved
to vanish on ``M`` (composition with the parametrization). Each family is stable,
as a set up to sign, under the permutations of ``p`` and of ``m, n``, so its
ideal's blocks follow the orbits of docs/math.md §7.4 and the dominant blocks
suffice. Ranks are taken modulo a 62-bit prime (a lower bound: equal to
``dim I(M)_k`` proves the family generates ``I(M)_k``); a block where the modular
rank falls short is re-ranked exactly over Q, so "does not generate" is exact too.
No certificate is written: the finding is *observed* (exact, not re-checked).

    python benchmarks/implicit_families.py [--widths 4,1] [--max-degree 4]
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time

from flint import fmpz_mat, nmod_mat

from attngeo import Architecture
from attngeo.exact.engine import ring
from attngeo.geometry.loci.graded import Blocks, graded_equations, orbit_size
from attngeo.geometry.loci.implicit import coordinate_names, parametrization

PRIME = 4611686018427387847  # a prime below 2^62


def _det(M):
    if len(M) == 1:
        return M[0][0]
    return sum((-1) ** j * M[0][j] * _det([r[:j] + r[j + 1:] for r in M[1:]]) for j in range(len(M)))


class Families:
    """The families as integer polynomials in the coordinates, split into torus-homogeneous components."""

    def __init__(self, d: int, a: int):
        self.d, self.a = d, a
        self.names = coordinate_names(d, 1)
        self.n = len(self.names)
        self.extra = ([f"l{i}" for i in range(d)] + [f"x{i}" for i in range(d)] + [f"z{i}" for i in range(d)]
                      + ["s", "t"])
        self.R = ring(tuple(self.names) + tuple(self.extra))
        g = self.R.gens()
        self.c = {}
        i = 0
        for p in range(d):
            for m in range(d):
                for n in range(m, d):
                    self.c[(p, m, n)] = g[i]
                    i += 1
        self.lam = g[self.n:self.n + d]
        self.xa = g[self.n + d:self.n + 2 * d]
        self.xb = g[self.n + 2 * d:self.n + 3 * d]
        self.s, self.t = g[-2], g[-1]

    def entry(self, p, m, n):
        return self.c[(p, min(m, n), max(m, n))]

    def T(self, p):
        return [[2 * self.entry(p, m, n) if m == n else self.entry(p, m, n) for n in range(self.d)]
                for m in range(self.d)]

    def coefficients(self, polys) -> list[dict]:
        """Coefficients in the auxiliary variables, as term dicts over the coordinates."""
        out = {}
        for f in polys:
            for e, coef in f.to_dict().items():
                out.setdefault((id(f), e[self.n:]), {})[e[:self.n]] = int(coef)
        return [v for v in out.values() if any(v.values())]

    def cc(self):
        if self.d < 3:
            return []
        P = [[sum((self.lam[p] * self.T(p)[m][n] for p in range(self.d)), self.R.from_dict({}))
              for n in range(self.d)] for m in range(self.d)]
        minors = [_det([[P[r][c] for c in C] for r in Rw]) for Rw in itertools.combinations(range(self.d), 3)
                  for C in itertools.combinations(range(self.d), 3)]
        return self.coefficients(minors)

    def flattening(self):
        pairs = [(m, n) for m in range(self.d) for n in range(m, self.d)]
        return pairs, [[self.c[(p, m, n)] for p in range(self.d)] for m, n in pairs]

    def lr(self):
        if self.a >= self.d:
            return []
        pairs, F = self.flattening()
        r = self.a + 1
        return self.coefficients([_det([[F[i][j] for j in C] for i in Rw])
                                  for Rw in itertools.combinations(range(len(pairs)), r)
                                  for C in itertools.combinations(range(self.d), r)])

    def cs(self):
        d = self.d
        pairs, F = self.flattening()
        V = ring(tuple(f"v{i}" for i in range(d)))
        v = V.gens()
        zero = V.from_dict({})
        Phi = [[(v[m] if q == m else zero) if m == n else (v[n] if q == m else v[m] if q == n else zero)
                for q in range(d)] for m, n in pairs]
        groups: dict = {}
        for Rw in itertools.combinations(range(len(pairs)), d):
            w = tuple(sorted(i for r in Rw for i in pairs[r]))
            groups.setdefault(w, []).append(Rw)
        out = []
        for rows in groups.values():
            dets = [_det([Phi[r] for r in Rw]) for Rw in rows]
            monos = sorted({e for f in dets for e in f.to_dict()})
            if not monos:
                relations = [[1 if i == j else 0 for i in range(len(rows))] for j in range(len(rows))]
            else:
                M = fmpz_mat([[int(f.to_dict().get(e, 0)) for e in monos] for f in dets]).transpose()
                X, nullity = M.nullspace()  # relations among the rows' determinants
                relations = [[int(X[i, j]) for i in range(len(rows))] for j in range(nullity)]
            for kappa in relations:
                f = sum((x * _det([F[r] for r in Rw]) for x, Rw in zip(kappa, rows) if x != 0), self.R.from_dict({}))
                if f != 0:
                    out.append(f)
        return self.coefficients(out)

    def ve(self):
        if self.a < 2 or self.d < 2:
            return []
        d = self.d
        subsets = list(itertools.combinations(range(d), 2))
        rows_of = {(2, 0): lambda K: [(K[0], K[0]), (K[0], K[1])], (1, 1): lambda K: [(K[0], K[0]), (K[1], K[1])],
                   (0, 2): lambda K: [(K[0], K[1]), (K[1], K[1])]}

        def D(alpha, K, L):
            rows = rows_of[alpha](K)
            return _det([[self.entry(q, m, n) for q in L] for m, n in rows])

        out = []
        for K in subsets:
            Ds = {(alpha, L): D(alpha, K, L) for alpha in rows_of for L in subsets}
            for L in subsets:  # internal: the catalecticant
                out.append(Ds[((2, 0), L)] * Ds[((0, 2), L)] - Ds[((1, 1), L)] ** 2)
            for L, L2 in itertools.combinations(subsets, 2):  # cross-target
                for a1, a2 in itertools.combinations(list(rows_of), 2):
                    out.append(Ds[(a1, L)] * Ds[(a2, L2)] - Ds[(a2, L)] * Ds[(a1, L2)])
            add = lambda b, g: (b[0] + g[0], b[1] + g[1])  # noqa: E731
            cols = [(g, L) for L in subsets for g in ((1, 0), (0, 1))]
            big = [[Ds[(add(b, g), L)] for g, L in cols] for b in ((1, 0), (0, 1))]
            for i, j in itertools.combinations(range(len(cols)), 2):  # block concatenated
                out.append(big[0][i] * big[1][j] - big[0][j] * big[1][i])
        return self.coefficients([f for f in out if f != 0])

    def restricted(self, p):
        """``q_p`` on the line ``a s + b t``: the coefficients of ``s^2``, ``s t``, ``t^2``."""
        q = lambda x, y: sum((self.c[(p, m, n)] * x[m] * y[n] for m in range(self.d)  # noqa: E731
                              for n in range(m, self.d)), self.R.from_dict({}))
        A, C = q(self.xa, self.xa), q(self.xb, self.xb)
        ab = [self.xa[i] + self.xb[i] for i in range(self.d)]
        return A, q(ab, ab) - A - C, C

    def qr(self):
        if self.d < 2:
            return []
        def res(f, g):  # two binary quadrics (A, B, C): Sylvester's resultant
            return (f[0] * g[2] - g[0] * f[2]) ** 2 - (f[0] * g[1] - g[0] * f[1]) * (f[1] * g[2] - g[1] * f[2])

        r = [self.restricted(p) for p in range(self.d)]
        x, y = self.lam[0], self.lam[1]
        out = []  # one resultant at a time: each has ~10^5 terms at d = 5
        for i, k in itertools.combinations(range(self.d), 2):
            out += self.coefficients([res(r[i], r[k])])
        for i in range(self.d):
            for j, k in itertools.combinations([q for q in range(self.d) if q != i], 2):
                for f in (res(r[i], tuple(x * u + y * w for u, w in zip(r[j], r[k]))),
                          res(tuple(x * u + y * w for u, w in zip(r[i], r[j])), r[k])):
                    # the coefficient of x y only: the others are pairwise resultants
                    xy = self.R.from_dict({e: c for e, c in f.to_dict().items()
                                           if e[self.n] == 1 and e[self.n + 1] == 1})
                    out += self.coefficients([xy]) if xy != 0 else []
        return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", default="4,1", help="d,1 (the families are for d' = 1)")
    parser.add_argument("--max-degree", type=int, default=4)
    parser.add_argument("--ranks", default=None, help="attention ranks a to compare (default 1..d)")
    args = parser.parse_args()
    d, dd = map(int, args.widths.split(","))
    if dd != 1:
        print("the families are for d' = 1")
        return 1
    K = args.max_degree
    ranks = [int(x) for x in args.ranks.split(",")] if args.ranks else list(range(1, d + 1))
    rng = random.Random(0)
    for a in ranks:
        arch = Architecture((d, 1), (a,), tokens=2)
        start = time.perf_counter()
        eq = graded_equations(arch, K)
        fam = Families(d, a)
        names, phi = parametrization(arch)
        pctx, cctx = ring(names), ring(tuple(fam.names))
        blocks = Blocks(d, 1)
        degree = {"CC": 3, "LR": a + 1, "CS": d, "VE": 4, "QR": 4}  # families above K cannot matter
        makers = {"CC": fam.cc, "LR": fam.lr, "CS": fam.cs, "VE": fam.ve, "QR": fam.qr}
        built = {name: make() if degree[name] <= K else [] for name, make in makers.items()}
        for name, polys in built.items():  # every member vanishes on M: a proof, before any count
            for f in polys:
                exps = {}
                for e, coef in f.items():
                    exps[e] = coef
                if cctx.from_dict(exps).compose(*phi, ctx=pctx) != 0:
                    print(f"a = {a}: a member of {name} does not vanish on M (a transcription error)")
                    return 1
        by_weight: dict = {}
        for name, polys in built.items():
            for f in polys:
                for e, coef in f.items():
                    mono = tuple(i for i, x in enumerate(e) for _ in range(x))
                    w = tuple(sum(col) for col in zip(*[blocks.weights[i] for i in mono]))
                    by_weight.setdefault((name, w), {}).setdefault(id(f), {})[mono] = coef
        row = f"d = {d}, a = {a}:"
        print(row, ", ".join(f"{n} {len(p)}" for n, p in built.items()), "family members, all vanishing on M",
              flush=True)
        print(f"  {'k':>2} {'dim I_k':>8} " + " ".join(f"{n:>8}" for n in [*built, "all"]))
        for k in range(1, K + 1):
            dim_k = eq.degrees[k - 1]["dimension"]
            spans = {}
            for label in [*built, "all"]:
                names_used = list(built) if label == "all" else [label]
                total = 0
                for w in blocks.dominant_weights(k):
                    monos = blocks.monomials(w)
                    col = {m: j for j, m in enumerate(monos)}
                    rows = []
                    for name in names_used:
                        for j in range(1, k + 1):
                            for u in blocks.lower(w, j):
                                comps = by_weight.get((name, u))
                                if not comps:
                                    continue
                                for alpha in blocks.monomials(tuple(x - y for x, y in zip(w, u))) if j < k else [()]:
                                    for h in comps.values():
                                        r = [0] * len(monos)
                                        for mono, coef in h.items():
                                            r[col[tuple(sorted(mono + alpha))]] = coef
                                        rows.append(r)
                    rank = nmod_mat([[x % PRIME for x in r] for r in rows], PRIME).rank() if rows else 0
                    if rank < eq.dimensions[w] and rows:
                        rank = fmpz_mat(rows).rank()  # exact: "does not generate" must not rest on a prime
                    total += orbit_size(w, d, 1) * rank
                spans[label] = total
            print(f"  {k:>2} {dim_k:>8} " + " ".join(f"{spans[n]:>8}" for n in [*built, "all"]), flush=True)
        print(f"  ({time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
