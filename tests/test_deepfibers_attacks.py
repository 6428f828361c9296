"""Red team of Theorem 7.8 (docs/math.md §7.8) and of the two certificate kinds that rest on it.

What the checkers accept must be true, so the witness point is rebuilt here at every corner the
``fiber-all-sizes`` checker lets a piece reach (every shift and several cores it accepts, not only the
prover's), and each orbit's dimension is compared with the exact rank of the symmetry fields written here from
docs/math.md §3.2 (not attngeo's field code). Then the costs a hostile ``virtual-fiber`` file can cause.

Attacks that succeeded until fixed: numbers the work price did not read or read too shortly. It priced the
longest number only, and only of the point and the recorded virtual weights: a point of distinct 2,000-digit
fractions at widths 16,16,16 (1.6 MB, priced below the limit) kept the checker multiplying virtual weights of
about 10^5 digits for two minutes, and the orbit points and the embedded single-layer certificate, which the
checker multiplies out too, were not priced at all (distinct 500-digit fractions there: 10 and 34 s at width
16). Every denominator now counts (``factor_digits``). And ``"version": 2.0`` read as version 2.
"""

from __future__ import annotations

import copy
import random

import pytest
from flint import fmpq, fmpq_mat

from attngeo import Architecture, check_certificate
from attngeo.check.dimension.layerwitness import _core
from attngeo.check.fibers import layer as layer_checker
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.fibers.virtual import virtual_fiber

from test_deepfibers_allsizes import witness_point
from test_virtualfiber_attacks import _accepted_at_small_points, forge

REFUSED = (CertificateRejected, CertificateFormatError)


def own_field_rank(widths, ranks, point) -> int:
    """The exact rank of the symmetry fields of docs/math.md §3.2 at ``point``, from the definitions: intra
    ``(dQ_i, dK_i) = (E Q_i, -E^T K_i)``, scaling ``(dQ_i, dV_i) = (Q_i, -V_i)``, inter at hidden width ``i``
    ``dV_i = E V_i`` and ``(dQ, dK, dV)_(i+1) = -(Q, K, V)_(i+1) E``."""
    blocks, off = {}, 0
    for i, a in enumerate(ranks, start=1):
        for name, rows, cols in (("Q", a, widths[i - 1]), ("K", a, widths[i - 1]), ("V", widths[i], widths[i - 1])):
            blocks[i, name] = (off, rows, cols)
            off += rows * cols
    n = off
    W = {key: fmpq_mat(r, c, [fmpq(point[o + k]) for k in range(r * c)]) for key, (o, r, c) in blocks.items()}

    def unit(r, c, i, j):
        return fmpq_mat(r, c, [int((p, q) == (i, j)) for p in range(r) for q in range(c)])

    rows = []

    def field(moves):
        row = [fmpq(0)] * n
        for key, M in moves.items():
            o, r, c = blocks[key]
            row[o:o + r * c] = M.entries()
        rows.append(row)

    l = len(ranks)
    for i, a in enumerate(ranks, start=1):
        for p in range(a):
            for q in range(a):
                E = unit(a, a, p, q)
                field({(i, "Q"): E * W[i, "Q"], (i, "K"): -(E.transpose() * W[i, "K"])})
        field({(i, "Q"): W[i, "Q"], (i, "V"): -W[i, "V"]})
    for i in range(1, l):
        d = widths[i]
        for p in range(d):
            for q in range(d):
                E = unit(d, d, p, q)
                field({(i, "V"): E * W[i, "V"], **{(i + 1, m): -(W[i + 1, m] * E) for m in "QKV"}})
    return fmpq_mat(rows).rank()


def _group(widths, ranks) -> int:
    return sum(a * a + 1 for a in ranks) + (len(ranks) - 1) * widths[0] ** 2


CORES = [[[1, 0], [0, 1]], [[2, 1], [0, 1]], [[0, 1], [3, 0]], [[1, -5], [3, 0]]]


def _corners():
    """Every size with l in {2, 3}, d <= 4, and every integer shift the checker accepts there (0 <= s <= a,
    s + a <= d, s + a + dd >= d), with a core the checker accepts."""
    rng = random.Random(7)
    out = []
    for d in range(2, 5):
        for a in range(1, d + 1):
            for dd in range(max(1, d - 2 * a), d + 2):
                for s in range(0, a + 1):
                    if s + a <= d and s + a + dd >= d:
                        l = rng.choice((2, 3))
                        ranks = tuple(rng.randint(2, d) for _ in range(l - 1)) + (a,)
                        out.append(((d,) * l + (dd,), ranks, s, CORES[len(out) % len(CORES)]))
    return out


def test_the_cores_used_below_are_ones_the_checker_accepts():
    for core in CORES:
        _core(core, "core")
    with pytest.raises(CertificateRejected):
        _core([[0, 1], [-1, 0]], "core")     # skew: q_i = 0


@pytest.mark.parametrize("widths, ranks, shift, core", _corners())
def test_every_shift_and_core_the_checker_accepts_gives_the_theorems_orbits(widths, ranks, shift, core):
    """At every corner a piece may reach, Theorem 7.8 (1) holds at the witness point: its virtual-fiber certificate
    (every hypothesis of Lemmas P and A checked at the point) has 1 orbit, or 2 when a_l = d_l = 1, says generic,
    and each orbit's dimension is the exact rank of the fields, dim G (Lemma 7.8.2)."""
    d, dd, a = widths[0], widths[-1], ranks[-1]
    fib = virtual_fiber(Architecture(widths, ranks, tokens=2), point=witness_point(widths, ranks, core, shift), seed=0)
    cert = fib.to_json()
    orbits = 1 if a + dd >= 3 else 2
    assert check_certificate(cert).claim.startswith(f"fiber = {orbits} orbit(s)") and cert["generic"]
    for orbit in cert["orbits"]:
        assert own_field_rank(widths, ranks, orbit["point"]) == orbit["dimension"] == _group(widths, ranks)


def test_where_lemma_7_8_2_fails_the_orbit_is_smaller_and_no_certificate_is_accepted():
    """The lemma's hypotheses matter: where Q_1 and K_1 share a zero row (rank A_1 < a_1) the fields' exact rank
    drops below dim G (an intra stabilizer). There, and with V_1 singular (where this point's rank happens to stay
    dim G: the hypotheses are sufficient, not necessary), certificates forged are refused."""
    widths, ranks = (3, 3, 3), (2, 2)
    good = witness_point(widths, ranks, CORES[1], 1)
    assert own_field_rank(widths, ranks, good) == _group(widths, ranks)
    singular_v1, low_a1 = list(good), list(good)
    singular_v1[12 + 6:12 + 9] = [0, 0, 0]                 # V_1 = diag(1, 1, 0)
    low_a1[3:6], low_a1[9:12] = [0, 0, 0], [0, 0, 0]       # second rows of Q_1 and K_1
    assert own_field_rank(widths, ranks, low_a1) < _group(widths, ranks)
    for bad in (singular_v1, low_a1):
        layers, off = [], 0
        for i, a in enumerate(ranks):
            layer = []
            for rows in (a, a, widths[i + 1]):
                layer.append([bad[off + r * 3:off + r * 3 + 3] for r in range(rows)])
                off += 3 * rows
            layers.append(layer)
        with pytest.raises(CertificateRejected):
            check_certificate(forge(widths, ranks, layers))


def test_at_degenerate_points_the_checker_accepts_the_dimension_it_takes_from_lemma_7_8_2_is_the_fields_rank():
    """Random small points with entries in {-1, 0, 1, 2} (zero blocks, swaps, parallel points) whose forged
    certificates the checker accepts: each recorded orbit dimension dim G is the exact rank of the fields there."""
    for widths, ranks, cert in _accepted_at_small_points(12, seed=11):
        for orbit in cert["orbits"]:
            assert own_field_rank(widths, ranks, orbit["point"]) == orbit["dimension"] == _group(widths, ranks)


# -- costs --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wide():
    return virtual_fiber(Architecture((16, 16, 16), (8, 8), tokens=2), seed=1).to_json()


class _Started(Exception):
    """The checker started verifying what its work limit should have priced first."""


def _fractions(count: int, digits: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.randrange(10 ** (digits - 1), 10 ** digits)}/{rng.randrange(10 ** (digits - 1), 10 ** digits)}"
            for _ in range(count)]


def _point(c):
    c["point"] = _fractions(len(c["point"]), 50, 1)


def _orbit(c):
    p = c["orbits"][0]["point"]
    p[len(p) - 512:] = _fractions(512, 100, 2)     # the last layer: 2 a d + d_l d = 512 numbers


def _embedded(c):
    emb = c["last"]["fiber_certificate"]
    emb["point"] = _fractions(len(emb["point"]), 100, 3)


@pytest.mark.parametrize("edit", [_point, _orbit, _embedded], ids=["point", "orbit point", "embedded certificate"])
def test_distinct_denominators_anywhere_are_priced_before_anything_is_verified(wide, edit, monkeypatch):
    """Distinct denominators multiply into the lcm: at width 16, 50-digit fractions in the point make virtual
    weights of 10^4 digits and 2,000-digit ones of 10^5 (two minutes), and the orbit points and the embedded last
    layer are multiplied out as well. Each is refused from its digits, before the embedded layer is verified."""
    def started(*args, **kwargs):
        raise _Started("the embedded last layer was verified")

    monkeypatch.setattr(layer_checker, "check", started)
    cert = copy.deepcopy(wide)
    edit(cert)
    with pytest.raises(CertificateFormatError, match="units of work"):
        check_certificate(cert)


def test_the_honest_wide_certificate_is_still_read(wide):
    assert check_certificate(wide).claim.startswith("fiber = 1 orbit(s)")


def test_hostile_sizes_are_refused_by_both_kinds(wide):
    """A 10,000-layer architecture, a width of 10^6 and 10^5-digit numbers: refused, not run."""
    from attngeo.theorems.allsizes import prove

    virtual = [dict(wide, architecture={**wide["architecture"], "widths": [4] * 10001, "ranks": [2] * 10000}),
               dict(wide, architecture={**wide["architecture"], "widths": [10**6] * 3}),
               dict(wide, point=["9" * 10**5] + wide["point"][1:])]
    allsizes = prove("deep-fibers")
    hostile = [copy.deepcopy(allsizes) for _ in range(3)]
    hostile[0]["pieces"][0]["core"] = [[10**5 * "9", 0], [0, 1]]
    hostile[1]["pieces"][0]["shift"] = "9" * 10**5
    hostile[2]["cases"]["split"] = "d^100000 - a"
    for cert in virtual + hostile:
        with pytest.raises(REFUSED):
            check_certificate(cert)


def test_a_version_written_as_a_float_is_refused(wide):
    with pytest.raises(CertificateRejected, match="version"):
        check_certificate(dict(wide, version=2.0))
