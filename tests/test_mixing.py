"""The mixing of heads (docs/math.md §7.3, docs/multihead.md §3): kernel fields, their lemma, their certificates.

Each family's fields must lie in the kernel of the Jacobian (reverse mode, computed
by the network code the fields know nothing of), prover and checker must build
the same rows from their separate code, the bounds they give must meet the
Jacobian rank, and a certificate altered in any way the families could be
abused — an invented family, a predicate misapplied, another architecture,
another point — must be refused.
"""

from __future__ import annotations

import copy
import json
import random

import numpy as np
import pytest

from attngeo import Architecture, certify_dimension, check_certificate
from attngeo.check.arch import Arch
from attngeo.check.dimension import kernelfields as checker_fields
from attngeo.check.dimension import mixing as checker_mixing
from attngeo.exact.modular import matmul
from attngeo.exact.rank import random_prime, rank_mod_p
from attngeo.exceptions import CertificateFormatError, CertificateRejected
from attngeo.geometry.dimension.bounds import random_ints
from attngeo.geometry.dimension.kernelfields import kernel_families, kernel_rows
from attngeo.geometry.dimension.mixing import mixing_family, mixing_identities
from attngeo.geometry.symmetry import field_matrix
from attngeo.model.jacobian import jacobian_mod_p

REFUSED = (CertificateRejected, CertificateFormatError)

# (widths, ranks, tokens, keywords, the mixing kind)
CASES = [
    ((3, 3), (2,), 2, dict(heads=3), "rank-mixing"),
    ((3, 3), (2,), 3, dict(heads=3, residual=True, causal=True), "rank-mixing"),
    ((4, 4), (2,), 2, dict(heads=6), "rank-mixing"),               # (d - a)^2 = 4 conditions on 5 coefficients
    ((3, 3, 3), (2, 2), 2, dict(heads=3), "rank-mixing"),           # both layers of a deep network
    ((3, 3), (2,), 1, dict(heads=2), "symmetric-mixing"),
    ((3, 3, 3), (2, 2), 1, dict(heads=2, causal=True), "symmetric-mixing"),
    ((5, 5), (2,), 1, dict(heads=3), "symmetric-rank-mixing"),
    ((3, 3), (3,), 2, dict(heads=2), "mixing"),
    ((4, 4), (3,), 2, dict(heads=4, value_ranks=3), "factored-mixing"),   # one condition for A_j, one for V_k
    ((3, 3), (3,), 3, dict(heads=3, value_ranks=2, residual=True, causal=True), "factored-mixing"),  # a = d
    ((3, 4), (2,), 2, dict(heads=4, value_ranks=3), "factored-mixing"),   # d' != d: (d' - b)(d - b) = 0
    ((3, 3, 3), (2, 2), 2, dict(heads=3, value_ranks=3), "factored-mixing"),
    ((5, 5), (2,), 1, dict(heads=4, value_ranks=4), "symmetric-factored-mixing"),  # 2a < d: rank(S_j) <= 4
]
#: cases whose fields are kernel fields but overlap other families' (symmetric-score at a = d): kernel tests only
OVERLAPPING = [((3, 3), (3,), 1, dict(heads=3, value_ranks=2), "symmetric-factored-mixing")]


def _arch(widths, ranks, tokens, kw) -> Architecture:
    return Architecture(widths, ranks, tokens=tokens, **kw)


def _checker_arch(arch: Architecture) -> Arch:
    return Arch(arch.widths, arch.ranks, arch.tokens, arch.normalization, heads=arch.heads,
                value_ranks=arch.value_ranks, residual=arch.residual, causal=arch.causal)


def _checker_rows(arch: Architecture, point: np.ndarray, p: int) -> np.ndarray:
    """The checker's kernel rows at ``point`` (its own weights split, its own families)."""
    carch = _checker_arch(arch)
    offsets = {(i, j, n): off for i, j, n, _, _, off in carch.blocks()}
    W = {(i, j, n): np.mod(point[off: off + r * c], p).reshape(r, c) for i, j, n, r, c, off in carch.blocks()}

    def put(i, *moves):
        vec = np.zeros(carch.parameters, dtype=np.int64)
        for j, name, mat in moves:
            vec[offsets[(i, j, name)]: offsets[(i, j, name)] + mat.size] = np.mod(mat, p).ravel()
        return vec

    rows = checker_fields.head_rows(carch, W, put, p)
    return np.array(rows, dtype=np.int64).reshape(len(rows), carch.parameters)


@pytest.mark.parametrize("widths,ranks,tokens,kw,kind", CASES + OVERLAPPING, ids=str)
def test_the_fields_are_in_the_kernel_and_prover_and_checker_build_the_same_rows(widths, ranks, tokens, kw, kind):
    arch = _arch(widths, ranks, tokens, kw)
    assert kind in [f.kind for f in kernel_families(arch)]
    rng = random.Random(sum(widths) + tokens)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    R = kernel_rows(arch, point, p)
    sizes = sum(f.size for f in kernel_families(arch))
    assert R.shape == (sizes, arch.parameter_count)  # a random point: no head drops rank, no row is skipped
    X = random_ints(rng, (arch.parameter_count // (arch.widths[-1] * tokens) + 6,) + arch.input_shape)
    J = jacobian_mod_p(arch, point, X, p)
    assert not np.any(matmul(J, R.T, p))  # J v = 0 mod p for every field v
    assert np.array_equal(R, _checker_rows(arch, point, p))  # two codes, one canonical form


@pytest.mark.parametrize("widths,ranks,tokens,kw,kind", CASES, ids=str)
def test_the_fields_are_independent_of_the_groups_and_the_bounds_meet(widths, ranks, tokens, kw, kind):
    """Rank of groups and fields together = groups + fields (the fields add exactly their count); then the
    certificate's bounds meet and the independent checker accepts it."""
    arch = _arch(widths, ranks, tokens, kw)
    rng = random.Random(7)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    F, R = field_matrix(arch, point, p), kernel_rows(arch, point, p)
    assert rank_mod_p(np.vstack([F, R]), p) == rank_mod_p(F, p) + rank_mod_p(R, p) == rank_mod_p(F, p) + len(R)
    cert = certify_dimension(arch, seed=3)
    assert cert.certified and cert.upper_witness.get("field_rank") == rank_mod_p(F, p) + len(R)
    assert check_certificate(json.loads(json.dumps(cert.to_json()))).claim.startswith(f"dim M = {cert.dimension} ")


def test_rank_mixing_counts_one_field_per_head_beyond_the_tangent_conditions():
    """h (h - 1 - (d - a)^2) fields: none where the conditions use up the coefficients, none for a >= d (mixing)."""
    count = {(d, a, h): (mixing_family(Architecture((d, d), (a,), heads=h), 1) or ("", 0))
             for d in (3, 4, 5) for a in range(1, d + 1) for h in (2, 3, 5, 6)}
    assert count[(3, 2, 2)] == ("", 0) and count[(3, 2, 3)] == ("rank-mixing", 3)
    assert count[(4, 2, 5)] == ("", 0) and count[(4, 2, 6)] == ("rank-mixing", 6)
    assert count[(5, 4, 5)] == ("rank-mixing", 15) and count[(5, 5, 3)] == ("mixing", 6)
    assert all(kind != "rank-mixing" or size == h * (h - 1 - (d - a) ** 2) for (d, a, h), (kind, size) in count.items())


def test_value_mixing_and_the_head_co_annihilator_fix_the_linear_network():
    """Normalized, one token: every score is 1, the network is (V_21 + V_22)(V_11 + V_12) x; every row of these
    families (constant along the row: value-mixing; C u = 0: co-annihilator) leaves that product unchanged."""
    arch = Architecture((2, 3, 2), (1, 1), tokens=1, normalization="softmax", heads=2)
    assert [(f.kind, f.layer, f.size) for f in kernel_families(arch)] == [
        ("score-free", 1, 8), ("value-mixing", 1, 6), ("co-annihilator", 1, 2), ("score-free", 2, 12),
        ("value-mixing", 2, 6)]
    rng = random.Random(2)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    R = kernel_rows(arch, point, p)
    assert np.array_equal(R, _checker_rows(arch, point, p))
    blocks = {(b.layer, b.head, b.name): b for b in arch.blocks()}

    def product(w):
        S = [sum(w[b.offset: b.offset + b.size].reshape(b.rows, b.cols) for b in (blocks[(i, 1, "V")],
                                                                                  blocks[(i, 2, "V")]))
             for i in (1, 2)]
        return matmul(S[1] % p, S[0] % p, p)

    scores = [c for b in arch.blocks() if b.name in "QK" for c in range(b.offset, b.offset + b.size)]
    value_rows = [r for r in R if not np.any(r[scores])]
    assert len(value_rows) == 6 + 2 + 6
    assert all(np.array_equal(product((point + r) % p), product(point % p)) for r in value_rows)
    cert = certify_dimension(arch, seed=1)
    assert cert.certified and check_certificate(cert.to_json()).claim.startswith("dim M = 4 ")  # all 2 x 2 maps


def test_the_lemma_is_proved_by_both_sides_and_a_wrong_lift_is_not():
    kinds = ("mixing", "rank-mixing", "symmetric-mixing", "symmetric-rank-mixing", "value-mixing", "factored-mixing",
             "symmetric-factored-mixing")
    assert {i.statement.split(" for ")[0] for i in mixing_identities("factored-mixing")} >= {
        "dO U + O dU = c_O c_U Y - (c_O I - O J O') Y (c_U I - U' H U)"}
    assert all(i.holds for k in kinds for i in mixing_identities(k))
    assert all(checker_mixing.lemma_holds(k) for k in kinds) and not checker_mixing.lemma_holds("invented")
    # the checker's word algebra sees a wrong lift: dK = H Q X' K (the rest c_K - K'JK dropped) is not tangent
    L = checker_mixing._letters("K Q X J H", {"J", "H"})
    dA = checker_mixing._derivative(checker_mixing._times(L["K'"], L["Q"]),
                                    {"Q": checker_mixing._times(checker_mixing._scalar("c_Q"), L["J"], L["K"], L["X"]),
                                     "K": checker_mixing._times(L["H"], L["Q"], L["X'"], L["K"])}, {"J", "H"})
    want = checker_mixing._times(checker_mixing._scalar("c_K"), checker_mixing._scalar("c_Q"), L["X"])
    assert checker_mixing._plus(dA, checker_mixing._poly(*((-c, s, w) for (s, w), c in want.items()))) != {}
    # and a value lift with the two adjugates exchanged (J = adj(U U'), H = adj(O'O)) does not reach c_O c_U Y
    L = checker_mixing._letters("O U Y J H", {"J", "H"})
    rest = checker_mixing._plus(checker_mixing._scalar("c_O"), checker_mixing._neg(checker_mixing._times(L["O"], L["H"], L["O'"])))
    dV = checker_mixing._derivative(checker_mixing._times(L["O"], L["U"]), {
        "U": checker_mixing._times(checker_mixing._scalar("c_U"), L["J"], L["O'"], L["Y"]),
        "O": checker_mixing._times(rest, L["Y"], L["U'"], L["J"])}, {"J", "H"})
    rest_U = checker_mixing._plus(checker_mixing._scalar("c_U"), checker_mixing._neg(checker_mixing._times(L["U'"], L["J"], L["U"])))
    want = checker_mixing._plus(checker_mixing._times(checker_mixing._scalar("c_O"), checker_mixing._scalar("c_U"), L["Y"]),
                                checker_mixing._neg(checker_mixing._times(rest, L["Y"], rest_U)))
    assert checker_mixing._plus(dV, checker_mixing._neg(want)) != {}


def test_a_field_that_does_not_fix_the_layer_is_caught_at_the_point():
    p, rng = 1000003, np.random.default_rng(4)
    heads = [{"Q": rng.integers(0, p, (2, 3)), "K": rng.integers(0, p, (2, 3)), "V": rng.integers(0, p, (3, 3))}
             for _ in range(3)]
    field = checker_mixing.moves("rank-mixing", heads, p)[0]
    assert checker_mixing._fixes_the_layer("rank-mixing", heads, field, p)
    for k in range(len(field)):
        j, name, M = field[k]
        bad = field[:k] + [(j, name, (M + 1) % p)] + field[k + 1:]
        assert not checker_mixing._fixes_the_layer("rank-mixing", heads, bad, p)


def test_where_a_head_drops_rank_it_contributes_no_rows_on_both_sides():
    """K_1 of rank 1 mod p: its null vectors need not span, so head 1 gives no rank-mixing row (a weaker bound)."""
    arch = Architecture((3, 3), (2,), tokens=2, heads=3)
    rng = random.Random(5)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    K1 = next(b for b in arch.blocks() if (b.head, b.name) == (1, "K"))
    point[K1.offset + 3: K1.offset + 6] = 2 * point[K1.offset: K1.offset + 3]
    R = kernel_rows(arch, point, p)
    assert len(R) == 2 and np.array_equal(R, _checker_rows(arch, point, p))
    assert not np.any(R[:, K1.offset: K1.offset + 6])


def test_a_factored_layer_where_one_head_drops_rank_gives_no_rows_on_both_sides():
    """The factored system couples all heads: U_2 of rank 2 < b mod p, and the whole family gives no rows."""
    arch = Architecture((4, 4), (3,), tokens=2, heads=4, value_ranks=3)
    rng = random.Random(6)
    p = random_prime(rng)
    point = random_ints(rng, (arch.parameter_count,))
    assert len(kernel_rows(arch, point, p)) == 4
    U2 = next(b for b in arch.blocks() if (b.head, b.name) == (2, "U"))
    point[U2.offset + 4: U2.offset + 8] = 3 * point[U2.offset: U2.offset + 4]
    assert len(kernel_rows(arch, point, p)) == 0 == len(_checker_rows(arch, point, p))


def _tensor_corank(arch: Architecture, seed: int) -> int:
    """``P`` minus the rank of ``W ↦ T = Σ_j V_j ⊗ A_j`` at a random point (one layer, ``V_j = O_j U_j``):
    written here from the definition of ``T``, sharing nothing with the families."""
    rng = random.Random(seed)
    p = random_prime(rng)
    blocks = list(arch.blocks())
    point = random_ints(rng, (arch.parameter_count,)) % p
    W = {(b.head, b.name): point[b.offset: b.offset + b.size].reshape(b.rows, b.cols) for b in blocks}
    columns = []
    for b in blocks:
        for e in range(b.size):
            E = np.zeros(b.size, dtype=np.int64)
            E[e] = 1
            M = {n: (E.reshape(b.rows, b.cols) if n == b.name else 0 * W[(b.head, n)]) for n in "QKUO"}
            Q, K, U, O = (W[(b.head, n)] for n in "QKUO")
            dA = (M["K"].T @ Q + K.T @ M["Q"]) % p
            dV = (M["O"] @ U + O @ M["U"]) % p
            columns.append((np.kron(dV, K.T @ Q % p) + np.kron(O @ U % p, dA)).ravel() % p)
    return arch.parameter_count - rank_mod_p(np.array(columns), p)


@pytest.mark.parametrize("d,a,b,heads", [(3, a, b, h) for a in (1, 2, 3) for b in (1, 2, 3) for h in (3, 4, 5)]
                         + [(4, 3, 3, 4), (4, 3, 3, 5), (4, 2, 3, 6), (4, 3, 2, 6)])
def test_the_factored_count_is_the_generic_kernel_of_the_tensor_map_beyond_the_group(d, a, b, heads):
    """Where the heads' A_j and V_j are independent (h <= d^2), the kernel of W -> Σ_j V_j ⊗ A_j is the
    group's orbit (a^2 + b^2 + 1 per head) plus the family: its size is the count of Lemma 7.3.7, not a guess."""
    arch = Architecture((d, d), (a,), tokens=2, heads=heads, value_ranks=b)
    family = mixing_family(arch, 1)
    assert _tensor_corank(arch, 0) == heads * (a * a + b * b + 1) + (family[1] if family else 0)


# -- certificates under attack -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certs():
    def make(*args, **kw):
        return json.loads(json.dumps(certify_dimension(Architecture(*args, **kw), seed=0).to_json()))

    return {"rank": make((3, 3), (2,), tokens=2, heads=3), "symmetric": make((3, 3), (2,), tokens=1, heads=2),
            "symmetric-rank": make((5, 5), (2,), tokens=1, heads=3),
            "two-heads": make((3, 3), (2,), tokens=2, heads=2), "value": make((3, 3), (2,), 1, "softmax", heads=2),
            "factored": make((4, 4), (3,), tokens=2, heads=4, value_ranks=3),
            "symmetric-factored": make((4, 4), (3,), tokens=1, heads=3, value_ranks=3)}


#: each family's certificate, and architectures (as changes) where that family does not apply
FAMILIES = {
    "rank-mixing": ("rank", [dict(normalization="softmax"), dict(value_ranks=[1]), dict(tokens=1), dict(heads=[2]),
                             dict(ranks=[1]), dict(ranks=[3]), dict(widths=[3, 2])]),
    "symmetric-mixing": ("symmetric", [dict(tokens=2), dict(ranks=[1]), dict(ranks=[3]), dict(value_ranks=[1]),
                                       dict(normalization="softmax"), dict(heads=[1])]),
    "symmetric-rank-mixing": ("symmetric-rank", [dict(tokens=2), dict(ranks=[3]), dict(ranks=[1]),
                                                 dict(heads=[2]), dict(value_ranks=[2])]),
    "value-mixing": ("value", [dict(normalization="lightning"), dict(tokens=2), dict(value_ranks=[1]),
                               dict(heads=[1])]),
    "factored-mixing": ("factored", [dict(normalization="softmax"), dict(value_ranks=[2]), dict(value_ranks=[4]),
                                     dict(value_ranks=[5]), dict(tokens=1), dict(heads=[3]), dict(ranks=[2]),
                                     dict(widths=[4, 3]), dict(widths=[5, 5])]),
    "symmetric-factored-mixing": ("symmetric-factored", [dict(tokens=2), dict(value_ranks=[1]), dict(heads=[2]),
                                                         dict(normalization="softmax"), dict(ranks=[1])]),
}


def _refused(cert):
    with pytest.raises(REFUSED):
        check_certificate(cert)


def _families(cert):
    return copy.deepcopy(cert["upper_witness"]["families"])


def _with(cert, families=None, **arch):
    out = copy.deepcopy(cert)
    if families is not None:
        out["upper_witness"]["families"] = families
    out["architecture"].update(arch)
    return out


def test_the_honest_certificates_verify_with_the_documented_values(certs):
    assert check_certificate(certs["rank"]).claim == ("dim M = 45 for widths 3,3, ranks 2, heads 3, t=2 (kernel fields "
                                                      "beyond the groups: rank-mixing(1))")
    assert check_certificate(certs["symmetric"]).claim.startswith("dim M = 26 for widths 3,3, ranks 2, heads 2, t=1")
    assert check_certificate(certs["value"]).claim.startswith("dim M = 9 ")
    # issue 22's independent computation says 112 (the groups alone left 112 <= dim M <= 116)
    assert check_certificate(certs["factored"]).claim == (
        "dim M = 112 for widths 4,4, ranks 3, heads 4, value ranks 3, t=2 (kernel fields beyond the groups: "
        "factored-mixing(1))")


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_an_invented_dropped_or_resized_family_is_refused(certs, family):
    cert = certs[FAMILIES[family][0]]
    fams = _families(cert)
    at = next(k for k, f in enumerate(fams) if f["kind"] == family)
    for kind in ("hidden-mixing", family + "2", "discovered"):
        forged = _families(cert)
        forged[at]["kind"] = kind
        _refused(_with(cert, forged))
        _refused(_with(cert, fams + [{"kind": kind, "layer": 1, "size": 1}]))
    for size in (0, fams[at]["size"] - 1, fams[at]["size"] + 1, 2 * fams[at]["size"]):
        forged = _families(cert)
        forged[at]["size"] = size
        _refused(_with(cert, forged))
    _refused(_with(cert, fams[:at] + fams[at + 1:]))
    _refused(_with(cert, fams + [fams[at]]))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_the_family_on_an_architecture_it_does_not_apply_to_is_refused(certs, family):
    name, changes = FAMILIES[family]
    for change in changes:
        _refused(_with(certs[name], **change))


def test_a_misapplied_predicate_is_refused(certs):
    # two rank-2 heads on 3 -> 3: h - 1 = (d - a)^2, no rank-mixing field exists
    fams = _families(certs["two-heads"])
    assert not any(f["kind"].endswith("mixing") for f in fams)
    _refused(_with(certs["two-heads"], fams + [{"kind": "rank-mixing", "layer": 1, "size": 2}]))
    # each mixing family in the place of another (the predicates are exclusive)
    for family, (name, _) in FAMILIES.items():
        for other in FAMILIES:
            if other != family:
                fams = _families(certs[name])
                at = next(k for k, f in enumerate(fams) if f["kind"] == family)
                fams[at]["kind"] = other
                _refused(_with(certs[name], fams))
                _refused(_with(certs[name], fams[:at + 1] + [dict(fams[at], kind=family)] + fams[at + 1:]))


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_tampered_field_values_are_refused(certs, family):
    """The checker computes the field values itself from the point: another determinant, another minor or
    another rank does not verify, nor (where the rows need full-rank null spaces) a point where head 1's K drops
    rank. (Another point where the same minor keeps its determinant would still be a valid proof; the fuzz tests
    check that whatever is accepted proves the honest claim.)"""
    cert = certs[FAMILIES[family][0]]
    uw = cert["upper_witness"]
    forged = copy.deepcopy(cert)
    forged["upper_witness"]["determinant"] = (uw["determinant"] + 1) % uw["prime"]
    _refused(forged)
    forged = copy.deepcopy(cert)
    forged["upper_witness"]["rows"] = uw["rows"][:-1] + [uw["rows"][-1] + 1]
    _refused(forged)
    forged = copy.deepcopy(cert)
    forged["upper_witness"]["columns"] = uw["columns"][:-1] + [(uw["columns"][-1] + 1) % cert["parameters"]]
    _refused(forged)
    forged = copy.deepcopy(cert)
    forged["upper"], forged["upper_witness"]["field_rank"] = cert["upper"] - 1, uw["field_rank"] + 1
    _refused(forged)
    if family in ("rank-mixing", "symmetric-rank-mixing", "factored-mixing", "symmetric-factored-mixing"):
        arch = Architecture.from_dict(cert["architecture"])
        K = next(b for b in arch.blocks() if (b.head, b.name) == (1, "K"))
        forged = copy.deepcopy(cert)
        first = uw["point"][K.offset: K.offset + K.cols]
        forged["upper_witness"]["point"][K.offset + K.cols: K.offset + 2 * K.cols] = [2 * x for x in first]
        _refused(forged)


def test_the_cli_prints_the_certified_dimensions(capsys):
    from attngeo.ui.cli import main

    for argv, dim in ((["--widths", "3,3", "--ranks", "2", "--heads", "3", "--tokens", "2"], 45),
                      (["--widths", "3,3", "--ranks", "2", "--heads", "2", "--tokens", "1"], 26),
                      (["--widths", "4,4", "--ranks", "3", "--heads", "4", "--value-ranks", "3", "--tokens", "2"], 112)):
        assert main(["dim", *argv]) == 0
        out = capsys.readouterr().out
        assert f"dimension      {dim}  certified" in out
