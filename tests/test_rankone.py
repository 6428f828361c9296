"""The whole ideal of a rank-one layer ``d -> 1`` (Theorem 7.9, docs/math.md): the generators against independent
computations (random points of M, the degree-by-degree prover, the elimination), and tampered certificates."""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys

import pytest
from flint import fmpq, fmpq_mat, nmod_mat

from attngeo import Architecture, check_certificate
from attngeo.exact.ideal import Ideal
from attngeo.exceptions import CertificateFormatError, CertificateRejected, InvalidInputError
from attngeo.geometry.loci.graded import Blocks, graded_equations
from attngeo.geometry.loci.implicit import coordinates_of, implicit_equations
from attngeo.geometry.loci.rankone import hilbert, rank_one_ideal


def arch(d: int, dd: int = 1, a: int = 1, tokens: int = 2) -> Architecture:
    return Architecture((d, dd), (a,), tokens=tokens)


@pytest.fixture(scope="module")
def four():
    return rank_one_ideal(arch(4))


@pytest.fixture(scope="module")
def graded4():
    return graded_equations(arch(4), 4)


@pytest.fixture(scope="module")
def cert4(four):
    return four.to_json()


# -- the mathematics ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [2, 3, 4, 5])
def test_every_generator_vanishes_at_random_rational_points_of_M(d):
    """Points of M from the layer's weights (Q, K, V rational, the model's own coordinates), not from the theorem."""
    ideal = rank_one_ideal(arch(d))
    rng = random.Random(d)
    gens = ideal.generators()
    for _ in range(3):
        weights = [[[[fmpq(rng.randint(-9, 9), rng.randint(1, 5)) for _ in range(d)]] for _ in range(3)]]
        point = coordinates_of(arch(d), weights)
        assert all(g(*point) == 0 for g in gens)
    # and not at a point off M: a generic point of the ambient space
    other = [fmpq(rng.randint(-9, 9)) for _ in range(len(ideal.coordinates))]
    assert any(g(*other) != 0 for g in gens)


def _weight(blocks: Blocks, e: tuple) -> tuple:
    return tuple(sum(x * w[j] for x, w in zip(e, blocks.weights)) for j in range(len(blocks.weights[0])))


def _span_ranks(ideal, blocks: Blocks, k: int, p: int) -> dict:
    """Per dominant weight of degree ``k``: the rank mod ``p`` of the degree-``k`` multiples ``c^α g`` of the
    generators (the degree-``k`` part of the ideal they generate)."""
    by_weight: dict[tuple, list[dict]] = {}
    for g in ideal.generators():
        terms = g.to_dict()
        by_weight.setdefault(_weight(blocks, next(iter(terms))), []).append(terms)
    out = {}
    for w in blocks.dominant_weights(k):
        monos = blocks.monomials(w)
        column = {m: j for j, m in enumerate(monos)}
        rows = []
        for u in [u for j in (2, 3) if j <= k for u in blocks.lower(w, j)]:
            gs = by_weight.get(u, [])
            if not gs:
                continue
            for alpha in blocks.monomials(tuple(x - y for x, y in zip(w, u))):
                for terms in gs:
                    row = [0] * len(monos)
                    for e, c in terms.items():
                        mono = tuple(sorted(alpha + tuple(i for i, x in enumerate(e) for _ in range(x))))
                        row[column[mono]] = int(c) % p
                    rows.append(row)
        out[w] = nmod_mat(rows, p).rank() if rows else 0
    return out


def test_the_generators_span_I_M_in_degrees_2_3_4_at_d_4_block_by_block_as_the_graded_prover_finds(graded4, four):
    """The graded prover (evaluation ranks at points of M and its own generators, docs/math.md §7.4) certifies
    dim I(M)_w for every dominant weight w of degree <= 4; the ideal of Theorem 7.9's generators must fill each
    block (a rank mod p is at most the rank over Q, which is at most dim I(M)_w since the generators vanish)."""
    assert [r["dimension"] for r in graded4.degrees] == [0, 270, 7280, 101360]  # finding 25 (docs/findings.md)
    blocks = Blocks(4, 1)
    for k in (2, 3, 4):
        ranks = _span_ranks(four, blocks, k, 2**61 - 1)
        assert ranks == {w: graded4.dimensions[w] for w in blocks.dominant_weights(k)}, k


def test_the_generators_span_I_M_in_degrees_2_3_at_d_5():
    graded = graded_equations(arch(5), 3)
    blocks = Blocks(5, 1)
    ideal = rank_one_ideal(arch(5))
    for k in (2, 3):
        assert _span_ranks(ideal, blocks, k, 2**61 - 1) == {w: graded.dimensions[w] for w in blocks.dominant_weights(k)}


@pytest.mark.msolve
def test_the_generators_generate_the_eliminated_ideal_at_d_3():
    """At d = 3 elimination finishes: both ideals contain each other's generators, and the minimal counts agree."""
    elim = implicit_equations(arch(3))
    ideal = rank_one_ideal(arch(3))
    assert elim.minimal_generators_by_degree == ideal.generators_by_degree == {"2": 45, "3": 10}
    assert all(elim.ideal.contains(g) for g in ideal.generators())
    ours = Ideal(ideal.generators(), tuple(ideal.coordinates))
    assert all(ours.contains(g) for g in elim.minimal_generators)


def test_the_standard_minors_count_the_schur_module_S_222():
    """dim I(Y)_3 = dim S_(2,2,2)(C^d): 1, 10, 50 at d = 3, 4, 5 (the hook content formula, by hand)."""
    for d, schur in ((3, 1), (4, 10), (5, 50)):
        ideal = rank_one_ideal(arch(d))
        assert len(ideal.minors) == schur
        assert len(ideal.cubics) == schur * (d + 2) * (d + 1) * d // 6


def test_the_derived_hilbert_function_is_what_the_graded_prover_certifies(graded4):
    """Corollary 7.9.5 against implicit-graded certificates (evaluation ranks at points of M, another code path)."""
    assert [r["dimension"] for r in graded4.degrees] == [hilbert(4, k) for k in range(1, 5)]
    assert [r["dimension"] for r in graded_equations(arch(5), 3).degrees] == [hilbert(5, k) for k in range(1, 4)]


@pytest.mark.parametrize("d", [3, 4])
def test_the_jacobian_of_the_whole_ideal_drops_rank_exactly_at_parallel_points(d):
    """Corollary 7.9.6: with all of I(M), the Jacobian criterion decides. codim M = n - (3d - 2) ([HMK]'s dimension
    2ad + dd' - a^2 - 1 at a = d' = 1); a swap point reaches it, a parallel point F = (k.y)^2 q^T does not."""
    ideal = rank_one_ideal(arch(d))
    gens = ideal.generators()
    n = len(ideal.coordinates)
    rng = random.Random(d)
    q, k, v = ([rng.choice([-3, -2, -1, 1, 2, 3]) for _ in range(d)] for _ in range(3))
    ranks = {}
    for name, value in (("parallel", [2 * x for x in k]), ("swap", v)):
        point = coordinates_of(arch(d), [[[q], [k], [value]]])
        ranks[name] = fmpq_mat([[g.derivative(i)(*point) for i in range(n)] for g in gens]).rank()
    assert ranks["swap"] == n - (3 * d - 2) > ranks["parallel"]


# -- the certificate and its checker ------------------------------------------------------------------------------


def test_the_checker_accepts_the_honest_certificate(cert4):
    claim = check_certificate(cert4).claim
    assert "270 quadrics and 200 cubics" in claim and "minimal" in claim


def _forged(cert, **changes):
    out = copy.deepcopy(cert)
    for key, value in changes.items():
        out[key] = value
    return out


def test_a_changed_generator_is_rejected(cert4):
    cubics = list(cert4["cubics"])
    cubics[7] = cubics[7].replace("+", "-", 1) if "+" in cubics[7] else "-" + cubics[7]
    with pytest.raises(CertificateRejected, match=r"cubics\[7\] is not the generator"):
        check_certificate(_forged(cert4, cubics=cubics))
    quadrics = list(cert4["quadrics"])
    quadrics[0] = "2*" + quadrics[0].lstrip("-")
    with pytest.raises(CertificateRejected, match=r"quadrics\[0\]"):
        check_certificate(_forged(cert4, quadrics=quadrics))


def test_another_printing_of_a_generator_is_accepted_and_a_padded_one_refused_unparsed(cert4):
    cubics = list(cert4["cubics"])
    terms = cubics[3].replace(" - ", " + -").split(" + ")
    cubics[3] = " + ".join(reversed(terms)).replace("+ -", "- ")  # the same terms, reordered
    assert cubics[3] != cert4["cubics"][3]
    assert "200 cubics" in check_certificate(_forged(cert4, cubics=cubics)).claim
    cubics[3] = cert4["cubics"][3] + " + 0*c_1_1_11" * 5000
    with pytest.raises(CertificateRejected, match=r"cubics\[3\] is not the generator"):
        check_certificate(_forged(cert4, cubics=cubics))


def test_a_dropped_or_added_generator_is_rejected(cert4):
    with pytest.raises(CertificateRejected, match="quadrics lists 269 polynomials"):
        check_certificate(_forged(cert4, quadrics=cert4["quadrics"][1:]))
    with pytest.raises(CertificateRejected, match="cubics lists 201 polynomials"):
        check_certificate(_forged(cert4, cubics=cert4["cubics"] + cert4["cubics"][:1]))


def test_reordered_generators_and_wrong_counts_are_rejected(cert4):
    with pytest.raises(CertificateRejected):
        check_certificate(_forged(cert4, quadrics=cert4["quadrics"][::-1]))
    with pytest.raises(CertificateRejected, match="generators_by_degree"):
        check_certificate(_forged(cert4, generators_by_degree={"2": 270, "3": 200, "4": 1}))
    with pytest.raises(CertificateRejected, match="standard_minors"):
        check_certificate(_forged(cert4, standard_minors=11))


@pytest.mark.parametrize("change,hypothesis", [
    ({"ranks": [2]}, "rank a = 1"),
    ({"widths": [4, 2]}, "output width d' = 1"),
    ({"tokens": 1}, "t >= 2"),
    ({"widths": [4, 1, 1], "ranks": [1, 1]}, "single-layer"),
    ({"causal": True}, "no mask"),
])
def test_another_architecture_is_rejected_naming_the_failing_hypothesis(cert4, change, hypothesis):
    forged = _forged(cert4, architecture={**cert4["architecture"], **change})
    with pytest.raises(CertificateRejected, match=hypothesis):
        check_certificate(forged)


def test_inflated_sizes_are_refused_before_any_work(cert4):
    """d = 8 has 158,760 generators (above the checker's 60,000), d = 9 405 coordinates (above 400), d = 65 the
    single-layer widths: each is refused from the architecture alone, without reading a generator."""
    for d, message in ((8, "158,760 generators"), (9, "405 coordinates"), (65, "widths above 64")):
        forged = _forged(cert4, architecture={**cert4["architecture"], "widths": [d, 1]})
        with pytest.raises(CertificateFormatError, match=message):
            check_certificate(forged)


def test_a_field_the_checker_does_not_verify_is_refused(cert4):
    with pytest.raises(CertificateRejected, match="unknown field"):
        check_certificate(_forged(cert4, minimal_generators_by_degree={"2": 270}))
    with pytest.raises(CertificateRejected, match="coordinates"):
        check_certificate(_forged(cert4, coordinates=cert4["coordinates"][::-1]))


# -- the command line ---------------------------------------------------------------------------------------------


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "attngeo", *args], capture_output=True, text=True, timeout=300)


def test_implicit_whole_prints_the_counts_and_writes_a_certificate_that_checks(tmp_path):
    path = tmp_path / "five.json"
    out = _cli("implicit", "--widths", "5,1", "--ranks", "1", "--whole", "--certificate", str(path))
    assert out.returncode == 0, out.stderr
    assert "1,050 of degree 2, 1,750 of degree 3" in out.stdout.splitlines()[0]
    checked = _cli("check", str(path))
    assert checked.returncode == 0 and "1,050 quadrics and 1,750 cubics" in checked.stdout
    data = json.loads(_cli("implicit", "--widths", "3,1", "--ranks", "1", "--whole", "--json").stdout)
    assert data["generators_by_degree"] == {"2": 45, "3": 10} and len(data["generators"]) == 55


@pytest.mark.parametrize("argv,words", [
    (["--widths", "4,1", "--ranks", "2"], "needs rank a = 1"),
    (["--widths", "4,2", "--ranks", "1"], "needs output width d' = 1"),
    (["--widths", "4,1", "--ranks", "1", "--tokens", "1"], "needs t >= 2 tokens"),
    (["--widths", "8,1", "--ranks", "1"], "written out for d <= 7"),
    (["--widths", "4,1", "--ranks", "1", "--max-degree", "3"], "exclude each other"),
])
def test_bad_input_is_one_line_and_exit_2(argv, words):
    out = _cli("implicit", *argv, "--whole")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and words in out.stderr


def test_the_prover_refuses_outside_the_hypotheses():
    with pytest.raises(InvalidInputError, match="rank a = 1"):
        rank_one_ideal(arch(4, a=4))
