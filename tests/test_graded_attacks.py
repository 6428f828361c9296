"""Adversarial review of ``implicit-graded`` certificates (docs/math.md §7.4).

Honest claims are recomputed here without the prover or the checker's code: our
own parametrization at random rational points mod a prime, our own grouping of
monomials by torus weight over *every* weight (no orbit reduction), our own
kernels and products for ``(mI)_w``. Forged claims and resource attacks must be
rejected (or refused as unusable within seconds).
"""

from __future__ import annotations

import itertools
import json
import random
import time

import pytest
from flint import fmpq, nmod_mat

from attngeo import Architecture, check_certificate
from attngeo.check.poly import parse, ring
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.loci.graded import graded_equations

P = 2_147_483_629  # a prime below 2^31


def _labels(d, dd):
    return [(k, p, m, n) for k in range(dd) for p in range(d) for m in range(d) for n in range(m, d)]


def _point(d, dd, a, rng):
    """c = phi(W) mod P at random rational weights (numerators and denominators up to 1000)."""
    def q():
        return rng.randint(-1000, 1000) * pow(rng.randint(1, 1000), -1, P) % P

    V = [[q() for _ in range(d)] for _ in range(dd)]
    if a >= d:
        A = [[q() for _ in range(d)] for _ in range(d)]
    else:
        Kt = [[q() for _ in range(d)] for _ in range(a)]
        Q = [[q() for _ in range(d)] for _ in range(a)]
        A = [[sum(Kt[i][n] * Q[i][p] for i in range(a)) % P for p in range(d)] for n in range(d)]
    # coefficient of y_m y_n in (V y)_k (A^T y)_p
    return [(V[k][m] * A[n][p] + (V[k][n] * A[m][p] if m != n else 0)) % P for k, p, m, n in _labels(d, dd)]


def _recount(d, dd, a, K, seed=1):
    """Our own (dim I_k, minimal generators of degree k) for k <= K, over every torus weight."""
    rng = random.Random(seed)
    labels = _labels(d, dd)
    n = len(labels)
    wt = []
    for k, p, m, nn in labels:
        w = [0] * (dd + 2 * d)
        w[k] += 1
        w[dd + p] += 1
        w[dd + d + m] += 1
        w[dd + d + nn] += 1
        wt.append(tuple(w))
    kernels = {}  # weight -> list of kernel vectors as dicts {monomial(sorted index tuple): coeff}
    out = []
    for k in range(1, K + 1):
        blocks = {}
        for mono in itertools.combinations_with_replacement(range(n), k):
            w = tuple(map(sum, zip(*(wt[i] for i in mono))))
            blocks.setdefault(w, []).append(mono)
        npts = max(len(b) for b in blocks.values()) + 5
        pts = [_point(d, dd, a, rng) for _ in range(npts)]
        dim_k = mins_k = 0
        for w, monos in blocks.items():
            col = {m: i for i, m in enumerate(monos)}
            E = []
            for x in pts[:len(monos) + 5]:
                row = []
                for mono in monos:
                    v = 1
                    for i in mono:
                        v = v * x[i] % P
                    row.append(v)
                E.append(row)
            X, nullity = nmod_mat(E, P).nullspace()
            kernels[w] = [{monos[r]: int(X[r, c]) for r in range(len(monos)) if int(X[r, c])} for c in range(nullity)]
            prods = []
            for i in range(n):
                u = tuple(x - y for x, y in zip(w, wt[i]))
                for h in kernels.get(u, []):
                    row = [0] * len(monos)
                    for mono, c in h.items():
                        row[col[tuple(sorted(mono + (i,)))]] = c
                    prods.append(row)
            r = nmod_mat(prods, P).rank() if prods else 0
            dim_k += nullity
            mins_k += nullity - r
        out.append((dim_k, mins_k))
    return out


CASES = [((2, 1), 1, 3), ((2, 2), 2, 3), ((3, 1), 2, 3), ((2, 2), 1, 4), ((3, 2), 2, 3), ((4, 1), 2, 3)]


@pytest.fixture(scope="module")
def certs():
    return {(w, a, K): graded_equations(Architecture(w, (a,), tokens=2), K).to_json() for w, a, K in CASES}


@pytest.mark.parametrize("case", CASES)
def test_honest_counts_agree_with_an_independent_recount(certs, case):
    (d, dd), a, K = case
    cert = certs[case]
    check_certificate(cert)
    claimed = [(r["dimension"], r["minimal_generators"]) for r in cert["degrees"]]
    assert claimed == _recount(d, dd, a, K)


@pytest.mark.slow
def test_degree_four_at_widths_3_2_agrees_with_an_independent_recount():
    # 82,251 monomials over every weight, about 10 s for the recount (loaded machine)
    cert = graded_equations(Architecture((3, 2), (2,), tokens=2), 4).to_json()
    check_certificate(cert)
    assert [(r["dimension"], r["minimal_generators"]) for r in cert["degrees"]] == _recount(3, 2, 2, 4)


def test_honest_variants_are_accepted(certs):
    # the same claim written differently: representatives in another order, scaled by rationals
    cert = certs[((3, 1), 2, 3)]
    R = ring(cert["coordinates"])
    other = _forged(cert)
    other["generators"].reverse()
    for g in other["generators"]:
        g["equations"] = [str(parse(e, R, "e") * fmpq(-3, 7)) for e in reversed(g["equations"])]
    assert check_certificate(other).claim == check_certificate(cert).claim


def test_known_small_ideal():
    # d = 2, d' = 1, a = 1: M = 2 x 3 matrices of rank <= 1 (every binary quadric factors), so I is the ideal
    # of 2 x 2 minors: 3 quadrics, dim I_3 = 3*6 - 2 (two linear syzygies) = 16.
    assert _recount(2, 1, 1, 3) == [(0, 0), (3, 3), (16, 0)]


def _forged(cert, **changes):
    out = json.loads(json.dumps(cert))
    out.update(changes)
    return out


def _rejected(cert, match=None):
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(cert)


def test_wrong_dimension_and_counts_are_rejected(certs):
    cert = certs[((3, 1), 2, 3)]
    for field in ("dimension", "minimal_generators", "monomials", "blocks"):
        for delta in (-1, 1):
            bad = _forged(cert)
            bad["degrees"][-1][field] += delta
            _rejected(bad, "degrees must be")
    bad = _forged(cert, minimal_generators_by_degree={"3": 31})
    _rejected(bad, "minimal_generators_by_degree")
    bad = _forged(cert, minimal_generators_by_degree={"2": 0, "3": 30})
    _rejected(bad, "minimal_generators_by_degree")


def test_non_vanishing_equation_is_rejected(certs):
    cert = certs[((2, 1), 1, 3)]
    bad = _forged(cert)
    # same weight, one coefficient changed: homogeneous, but no longer zero on M
    bad["generators"][0]["equations"][0] = bad["generators"][0]["equations"][0].replace(" - ", " - 2*", 1)
    _rejected(bad, "does not vanish")


def test_redundant_generator_claimed_minimal_is_rejected(certs):
    cert = certs[((2, 1), 1, 3)]
    R = ring(cert["coordinates"])
    c = dict(zip(cert["coordinates"], R.gens()))
    h = parse(cert["generators"][0]["equations"][0], R, "h")  # weight (2,1,1,2,2)
    # c_1_1_11 * h has weight (3,2,1,4,2): dominant, in I, but a product of a lower generator
    bad = _forged(cert)
    bad["generators"].append({"weight": [3, 2, 1, 4, 2], "equations": [str(c["c_1_1_11"] * h)]})
    _rejected(bad, "minimal")
    # a combination of two representatives of the same block, listed beside them
    cert = certs[((3, 1), 2, 3)]
    bad = _forged(cert)
    eqs = bad["generators"][0]["equations"]
    eqs.append(str(parse(eqs[0], ring(cert["coordinates"]), "x") + parse(eqs[1], ring(cert["coordinates"]), "y")))
    _rejected(bad, "minimal")


def test_missing_representative_is_rejected(certs):
    cert = certs[((3, 1), 2, 3)]
    bad = _forged(cert)
    bad["generators"][0]["equations"].pop()
    _rejected(bad)


def test_another_architectures_data_is_rejected(certs):
    # the a = 1 minors do not vanish when A has full rank; the a = 2 data claim too little for a = 1
    for src, arch in (((2, 1), 1, 3), {"widths": [2, 1], "ranks": [2]}), ((((2, 2), 2, 3)), {"widths": [2, 2], "ranks": [1]}):
        bad = _forged(certs[src])
        bad["architecture"].update(arch)
        _rejected(bad)


def test_representative_must_stand_for_its_orbit(certs):
    cert = certs[((2, 1), 1, 3)]
    R = ring(cert["coordinates"])
    # the same minor, written at a non-dominant weight of its orbit (swap y1 <-> y2): refused as a representative
    bad = _forged(cert)
    g = bad["generators"][1]  # weight (2,1,1,3,1)
    swap = {"c_1_1_11": "c_1_1_22", "c_1_1_22": "c_1_1_11", "c_1_2_11": "c_1_2_22", "c_1_2_22": "c_1_2_11"}
    h = parse(g["equations"][0], R, "h")
    gens = dict(zip(cert["coordinates"], R.gens()))
    g["equations"] = [str(h.compose(*[gens[swap.get(x, x)] for x in cert["coordinates"]]))]
    g["weight"] = [2, 1, 1, 1, 3]
    _rejected(bad, "dominant")
    # one block listed twice
    bad = _forged(cert)
    bad["generators"].append(bad["generators"][0])
    _rejected(bad, "new dominant")


def _assert_refused_fast(cert, seconds=15):
    t = time.process_time()
    with pytest.raises(CertificateFormatError):
        check_certificate(cert)
    assert time.process_time() - t < seconds  # a generous bound on a loaded machine; minutes before the fix


def _empty(d, dd, K):
    names = [f"c_{k + 1}_{p + 1}_{m + 1}{n + 1}" for k, p, m, n in _labels(d, dd)]
    return {"format": "attngeo-certificate", "version": 2, "kind": "implicit-graded",
            "architecture": {"widths": [d, dd], "ranks": [1], "tokens": 2, "normalization": "lightning"},
            "max_degree": K, "coordinates": names, "degrees": [], "minimal_generators_by_degree": {},
            "generated_through": K, "seconds": 0, "generators": []}


def test_wide_layer_refused_before_listing_coordinates():
    # widths 64,64: 8.5e6 coordinates were listed (4 GB, 48 s) before the variable limit was compared
    cert = _empty(1, 1, 1)
    cert["architecture"]["widths"] = [64, 64]
    _assert_refused_fast(cert, 5)


@pytest.mark.parametrize("widths", [(8, 1), (4, 4)])
def test_block_counting_is_bounded(widths):
    # 288 / 160 coordinates (below the variable limit) at degree 8: counting the blocks took minutes
    _assert_refused_fast(_empty(*widths, 8))


def test_copies_of_one_equation_refused_before_composition(certs):
    cert = certs[((2, 1), 1, 3)]
    bad = _forged(cert)
    bad["generators"][0]["equations"] *= 20_000
    t = time.process_time()
    _rejected(bad, "equations in a block")
    assert time.process_time() - t < 3


def test_inflated_coefficients_refused_but_moderate_ones_accepted(certs):
    cert = certs[((2, 2), 1, 4)]
    R = ring(cert["coordinates"])
    for digits, refused in ((150, True), (60, False)):
        bad = _forged(cert)
        big = int("7" * digits)
        for g in bad["generators"]:
            g["equations"] = [str(parse(e, R, "e") * big) for e in g["equations"]]
        if refused:  # honest multiples of 2,000 digits made the exact ranks 80 times slower
            _assert_refused_fast(bad, 5)
        else:  # a scalar multiple is the same claim: still valid
            assert check_certificate(bad).claim == check_certificate(cert).claim


def test_unknown_fields_and_ill_typed_weights_are_rejected(certs):
    cert = certs[((2, 1), 1, 3)]
    edits = [lambda c: c.update(extra=1), lambda c: c["degrees"][0].update(x=1),
             lambda c: c["generators"][0].update(note="x"), lambda c: c.update(generated_through=2),
             lambda c: c.update(max_degree=2, generated_through=2),
             lambda c: c["generators"][0].update(weight=[2, 1, 1, 2, 2.0]),
             lambda c: c["generators"][0].update(weight=[True, 1, 1, 2, 2]),
             lambda c: c["architecture"].update(tokens=1), lambda c: c["architecture"].update(heads=[2])]
    for edit in edits:
        bad = _forged(cert)
        edit(bad)
        _rejected(bad)
