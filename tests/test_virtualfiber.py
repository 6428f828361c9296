"""Deep fibers by virtual weights (docs/math.md §7.2): the lemma's identities, the cross-check with
elimination on the sizes both reach, and the negative corpus of the virtual-fiber checker."""

import copy
import random

import pytest
from flint import fmpq, fmpq_mat, fmpq_mpoly_ctx

from attngeo import Architecture, CertificateFormatError, CertificateRejected, check_certificate
from attngeo.geometry.fibers.deep import deep_fiber, gauge_point, same_function
from attngeo.geometry.fibers.layer import fiber, str_rows
from attngeo.geometry.fibers.virtual import (HypothesisFailed, fiber_at_point, jacobian, peeling_exponents,
                                             unsupported, virtual_fiber, virtual_weights)
from attngeo.geometry.symmetry import SymmetryGroup, act
from attngeo.model.network import ExactOps, attention, object_array, split_heads

needs_msolve = pytest.mark.msolve


def _linear_part_in_y(arch, point, d):
    """Output token 2's part of degree 1 in the second token, by the prover's own network, expanded."""
    ctx = fmpq_mpoly_ctx.get(tuple(f"x{r}" for r in range(d)) + tuple(f"y{r}" for r in range(d)), "degrevlex")
    g = ctx.gens()
    X = object_array(d, 2, [v for r in range(d) for v in (g[r], g[d + r])])
    Y = attention(ExactOps(), arch, split_heads(arch, [ctx.constant(v) for v in point]), X)
    return ctx, g[:d], g[d:], [ctx.from_dict({m: c for m, c in e.to_dict().items() if sum(m[d:]) == 1})
                               for e in Y[:, 1]]


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((2, 2, 2, 2), (2, 2, 2)), ((3, 3, 2), (3, 1))])
def test_the_part_linear_in_the_second_token_factors_as_the_lemma_says(widths, ranks):
    arch = Architecture(widths, ranks, tokens=2)
    point = gauge_point(arch, random.Random(4))
    Ms, P, _ = virtual_weights(arch, point)
    d, l = widths[0], len(ranks)
    ctx, x, y, T1 = _linear_part_in_y(arch, point, d)
    form = lambda M, u, v: sum((u[r] * M[r, c] * v[c] for r in range(d) for c in range(d)), ctx.constant(0))  # noqa: E731
    rho = ctx.constant(1)
    for j, e in peeling_exponents(l, 1):
        rho *= form(Ms[j - 1], x, x) ** e
    Px = [sum((P[k, c] * x[c] for c in range(d)), ctx.constant(0)) for k in range(P.nrows())]
    assert T1 == [rho * form(Ms[0], x, y) * ell for ell in Px]


def test_virtual_weights_are_invariant_under_the_matrix_groups_and_move_by_the_torus():
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    p = gauge_point(arch, random.Random(2))
    Ms, P, _ = virtual_weights(arch, p)
    moved = act(arch, act(arch, p, "inter", 1, [[1, 2, 0], [0, 1, 1], [1, 0, 2]]), "intra", 2, [[2, 1], [1, 1]])
    assert virtual_weights(arch, moved)[:2] == (Ms, P)
    scaled = act(arch, p, "scaling", 1, 3)  # layer 1 scaled by 3: M_1 * 3, M_2 / 9, P / 3
    Ms2, P2, _ = virtual_weights(arch, scaled)
    assert (Ms2[0], Ms2[1] * 9, P2 * 3) == (Ms[0] * 3, Ms[1], P)


def test_dominance_holds_for_rank_two_and_fails_for_rank_one():
    rng = random.Random(0)
    for d, a in [(2, 2), (3, 2), (4, 3), (6, 2)]:
        Q = fmpq_mat([[rng.randint(-4, 4) for _ in range(d)] for _ in range(a)])
        K = fmpq_mat([[rng.randint(-4, 4) for _ in range(d)] for _ in range(a)])
        Y = fmpq_mat([[rng.randint(-3, 3) for _ in range(2)] for _ in range(d)])
        J = jacobian(K.transpose() * Q, Y)
        assert J.rank() == 2 * d
        # rank one: every output token is a multiple of X X^T k, the image has dimension <= d + 1
        k, q = K.table()[0], Q.table()[0]
        assert jacobian(fmpq_mat(d, 1, k) * fmpq_mat(1, d, q), Y).rank() <= d + 1


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((4, 4, 4), (3, 3)), ((3, 3, 3, 3), (2, 2, 2)),
                                           ((6, 6, 6), (3, 3)), ((3, 3, 1), (3, 2))])
def test_generic_fibers_are_one_orbit_of_full_dimension_and_verify(widths, ranks):
    arch = Architecture(widths, ranks, tokens=3)
    fib = virtual_fiber(arch, seed=1)
    assert fib.orbits == [fib.point] and fib.generic
    assert fib.dimensions == [SymmetryGroup(arch).dimension]  # a generic orbit: no stabilizer
    assert "generic" in check_certificate(fib.to_json()).claim


def test_above_its_ranking_limit_the_prover_takes_the_orbit_dimension_from_lemma_7_8_2(monkeypatch):
    """Below the limit the prover ranks the symmetry fields exactly (a check of the lemma the checker relies on);
    above it, it writes dim G, which the checker accepts for the same reason."""
    from attngeo.geometry.fibers import virtual as prover

    arch = Architecture((4, 4, 4), (3, 2), tokens=2)
    ranked = virtual_fiber(arch, seed=1)
    monkeypatch.setattr(prover, "MAX_RANKED_FIELDS", 0)
    taken = virtual_fiber(arch, seed=1)
    assert ranked.dimensions == taken.dimensions == [SymmetryGroup(arch).dimension]
    assert check_certificate(taken.to_json()).claim.startswith("fiber = 1 orbit(s)")


def test_a_rank_one_last_layer_with_one_output_has_a_swap_and_both_orbits_are_fiber_points():
    arch = Architecture((2, 2, 1), (2, 1), tokens=2)
    fib = virtual_fiber(arch, seed=3)
    assert len(fib.orbits) == 2 and fib.generic and fib.last.case == "rank1-swap"  # Theorem 7.8 (1): generic
    other = next(p for p in fib.orbits if p != fib.point)
    assert fib.point in fib.orbits and same_function(arch, fib.point, other)
    M_a, P_a, _ = virtual_weights(arch, fib.point)
    M_b, P_b, _ = virtual_weights(arch, other)
    assert M_a[0] == M_b[0] and M_a[1].rank() == M_b[1].rank() == 1 and not _proportional(M_a[1], M_b[1])
    claim = check_certificate(fib.to_json()).claim
    assert "2 orbit(s)" in claim and "generic" in claim


def _proportional(A: fmpq_mat, B: fmpq_mat) -> bool:
    return fmpq_mat(2, A.nrows() * A.ncols(), A.entries() + B.entries()).rank() <= 1


def _same_orbit_up_to_torus(arch, p, q) -> bool:
    """Virtual weights proportional layer by layer (the torus) and the same function."""
    (Mp, Pp, _), (Mq, Pq, _) = virtual_weights(arch, p), virtual_weights(arch, q)
    return all(_proportional(a, b) for a, b in zip(Mp + [Pp], Mq + [Pq])) and same_function(arch, p, q)


@needs_msolve
@pytest.mark.parametrize("widths, ranks, orbits", [((2, 2, 2), (2, 2), 1), ((2, 2, 3), (2, 2), 1),
                                                   ((2, 2, 1), (2, 2), 1), ((2, 2, 2), (2, 1), 1),
                                                   ((2, 2, 1), (2, 1), 2)])
def test_elimination_and_virtual_weights_find_the_same_fiber(widths, ranks, orbits):
    arch = Architecture(widths, ranks, tokens=2)
    for seed in (0, 7)[:orbits]:  # the swap at two points, the orbits at one
        grob, virt = deep_fiber(arch, seed=seed), virtual_fiber(arch, seed=seed)
        assert grob.point == virt.point and grob.certified
        assert grob.fiber_points == len(virt.orbits) == orbits
        found = [grob.point] + grob.extra  # every slice point lies in exactly one listed orbit
        for q in found:
            assert sum(_same_orbit_up_to_torus(arch, q, p) for p in virt.orbits) == 1


def test_the_automatic_choice_and_its_fallback():
    assert type(fiber_at_point(Architecture((4, 4, 4), (3, 3), tokens=2), seed=0)).__name__ == "VirtualFiber"
    small = Architecture((1, 1, 2), (1, 1), tokens=2)
    assert type(fiber_at_point(small, seed=0, engine="flint")).__name__ == "DeepFiber"
    with pytest.raises(HypothesisFailed, match="a_1 >= 2"):
        fiber_at_point(Architecture((3, 3, 3), (1, 2), tokens=2), seed=0, method="virtual")


@pytest.mark.parametrize("widths, ranks, match", [
    ((3, 2, 2), (2, 1), "hidden width"), ((3, 3, 3), (1, 1), "a_1 >= 2"), ((3, 3), (2,), "two or more layers"),
    ((3, 3, 3), (4, 2), "a_1 = 4 <= d = 3"), ((3, 3, 70), (2, 2), "widths up to 64")])
def test_architectures_outside_the_lemma_are_named(widths, ranks, match):
    assert match in unsupported(Architecture(widths, ranks, tokens=2))


def test_special_points_are_refused_with_the_hypothesis():
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    p = gauge_point(arch, random.Random(0))
    low = list(p)
    low[9:12] = [fmpq(0)] * 3  # K_1's second row zero: rank A_1 = 1 < a_1
    with pytest.raises(HypothesisFailed, match="rank A_1 = 1"):
        virtual_fiber(arch, point=low)
    singular = list(p)
    singular[12:21] = [fmpq(v) for v in (1, 0, 0, 0, 1, 0, 1, 1, 0)]  # V_1 of rank 2
    with pytest.raises(HypothesisFailed, match="V_1 is singular"):
        virtual_fiber(arch, point=singular)


# -- the negative corpus ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def honest():
    orbit = virtual_fiber(Architecture((3, 3, 3), (2, 2), tokens=2), seed=2).to_json()
    swap = virtual_fiber(Architecture((2, 2, 1), (2, 1), tokens=2), seed=3).to_json()
    for cert in (orbit, swap):
        check_certificate(cert)
    return {"orbit": orbit, "swap": swap}


def _forged(cert, edit):
    out = copy.deepcopy(cert)
    edit(out)
    return out


def _rejected(cert, match):
    with pytest.raises(CertificateRejected, match=match):
        check_certificate(cert)


def test_a_changed_factor_is_rejected(honest):
    def bump(c):
        c["virtual"]["M"][1][0][0] = str(fmpq(c["virtual"]["M"][1][0][0]) + 1)
    _rejected(_forged(honest["orbit"], bump), "virtual weights")

    def exponent(c):
        c["layers"][0]["rho"] = [[1, 3], [2, 1]]
    _rejected(_forged(honest["orbit"], exponent), "exponents")


def test_a_dropped_fiber_point_is_rejected(honest):
    _rejected(_forged(honest["swap"], lambda c: c["orbits"].pop()), "orbits must have 2 entries")

    def drop_line(c):  # the embedded fiber without its second line: its own checker refuses it
        c["last"]["fiber_certificate"]["components"].pop()
        c["orbits"].pop()
    _rejected(_forged(honest["swap"], drop_line), "2 line component.s., the certificate lists 1")

    def special(c):  # the swap of a_l = d_l = 1 is generic (Theorem 7.8): denying it is refused too
        c["generic"] = False
    _rejected(_forged(honest["swap"], special), "generic must be true")


def test_another_architectures_factorization_is_rejected(honest):
    other = virtual_fiber(Architecture((3, 3, 3), (3, 2), tokens=2), seed=2).to_json()
    _rejected(_forged(honest["orbit"], lambda c: c.update(virtual=other["virtual"])), "virtual weights")
    _rejected(_forged(honest["orbit"], lambda c: c["last"].update(fiber_certificate=other["last"]["fiber_certificate"])),
              "not about the last virtual layer")
    _rejected(_forged(honest["orbit"], lambda c: c["architecture"].update(ranks=[3, 2])), "point must have")


def test_a_wrong_irreducibility_witness_is_rejected(honest):
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    # K_1 = [[1, 0, 0], [0, 1, 1]]: A_1 = M_1 has rows e_0, e_1, e_1 (rank 2) and a zero minor at rows 1, 2
    point = [1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1,
             1, 0, 0, 0, 1, 0, 2, 1, -1, 1, 3, 2, 1, 2, 0, -1, 1, 3, 2, 0, 1]
    cert = virtual_fiber(arch, point=point).to_json()
    check_certificate(cert)
    _rejected(_forged(cert, lambda c: c["layers"][0].update(minor=[[1, 2], [0, 1]])), "minor is zero")
    _rejected(_forged(honest["orbit"], lambda c: c["layers"][0].update(dominance=[[0, 0]] * 3)),
              "Jacobian of S_.M_1. is singular")


def test_a_vanishing_symmetric_entry_is_no_witness():
    arch = Architecture((2, 2, 2), (2, 2), tokens=2)
    # Q_1 = I, K_1 = [[1, 2], [-2, 3]]: A_1 = K_1^T has A_01 + A_10 = 0 (and A_00 + A_00 = 2 is a witness)
    point = [1, 0, 0, 1, 1, 2, -2, 3, 1, 0, 0, 1, 1, 0, 0, 1, 2, 1, 1, 3, 1, 2, 3, 1]
    cert = virtual_fiber(arch, point=point).to_json()
    assert cert["layers"][0]["symmetric"] == [0, 0]
    _rejected(_forged(cert, lambda c: c["layers"][0].update(symmetric=[0, 1])), "not a witness")


def test_a_singular_v1_claimed_invertible_is_rejected(honest):
    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    cert = honest["orbit"]
    point = [fmpq(v) for v in cert["point"]]
    point[12:21] = [fmpq(v) for v in (1, 0, 0, 0, 1, 0, 1, 1, 0)]  # V_1 singular, everything else recomputed
    Ms, P, _ = virtual_weights(arch, point)
    eye = [[int(r == c) for c in range(3)] for r in range(3)]
    last = fiber(Architecture((3, 3), (3,), tokens=2), [[str_rows(Ms[-1]), eye, str_rows(P)]]).to_json()

    def forge(c):
        c["point"] = [str(v) for v in point]
        c["virtual"] = {"M": [str_rows(M) for M in Ms], "P": str_rows(P)}
        c["last"]["fiber_certificate"] = last
        c["orbits"][0]["point"] = c["point"]
    _rejected(_forged(cert, forge), "V_1 is singular")


def test_orbit_points_and_dimensions_are_checked(honest):
    _rejected(_forged(honest["orbit"], lambda c: c["orbits"][0].update(dimension=18)), "dim G = 19")

    def off_line(c):
        c["orbits"][0]["point"][-1] = str(fmpq(c["orbits"][0]["point"][-1]) + 1)
    _rejected(_forged(honest["swap"], off_line), "orbits.0..point is not on line 0")
    _rejected(_forged(honest["orbit"], lambda c: c.update(certified=False)), "certified must be true")


def test_sizes_beyond_the_work_limit_are_unusable_and_the_expansion_cap_is_gone(honest):
    """Widths 12,12,12,12 were refused for the 3.6e5-monomial polynomials of the expanded Identity T; followed layer
    by layer they cost d x d products. Deep, wide and long-numbered certificates are priced before anything runs."""
    deep = virtual_fiber(Architecture((12, 12, 12, 12), (2, 2, 2), tokens=2), seed=0).to_json()
    assert check_certificate(deep).claim.startswith("fiber = 1 orbit(s)")
    forged = _forged(honest["orbit"], lambda c: c.update(architecture={**c["architecture"], "widths": [64] * 40,
                                                                        "ranks": [32] * 39}, point=["9" * 900]))
    with pytest.raises(CertificateFormatError, match="units of work"):
        check_certificate(forged)


def test_a_narrow_last_layer_leaves_weights_with_a_singular_v1_in_the_fiber():
    """2 a_l + d_l < d_0: M_l and P live on a proper subspace, so a singular V_1 reaches the same virtual weights."""
    from attngeo.geometry.fibers.layer import rank_factorization

    arch = Architecture((4, 4, 1), (2, 1), tokens=2)
    assert "2 a_l + d_l >= d_0" in unsupported(arch)
    W0 = gauge_point(arch, random.Random(5))
    Ms, P, _ = virtual_weights(arch, W0)
    span = fmpq_mat(Ms[1].tolist() + Ms[1].transpose().tolist() + P.tolist())
    assert span.rank() == 3  # rows of M_2 (1), its columns (1), the output row (1)
    basis = fmpq_mat(span.rref()[0].tolist()[:3])  # C: 3 x 4, row space containing every row above
    right = basis.transpose() * (basis * basis.transpose()).inv()  # C C^+ = I
    X = right.transpose() * Ms[1] * right
    A2 = fmpq_mat(4, 4)
    for r in range(3):
        for c in range(3):
            A2[r, c] = X[r, c]
    Q2, K2 = rank_factorization(A2, 1)
    V1 = fmpq_mat(basis.tolist() + [[0] * 4])  # rank 3: not in the orbit of W_0 (the group keeps V_1 invertible)
    V2 = fmpq_mat(1, 4, (P * right).entries() + [0])
    other = W0[:16] + V1.entries() + Q2.entries() + K2.entries() + V2.entries()
    assert V1.rank() == 3 and virtual_weights(arch, other)[:2] == (Ms, P)
    assert same_function(arch, W0, other)


def test_the_narrow_layers_extra_fiber_points_are_limits_of_orbit_points():
    """docs/findings.md 22: not a hidden symmetry. With n killed by M_2, M_2^T and P, u = V_1 n and w^T u = 1, the
    inter-layer g_eps = I + (eps - 1) u w^T fixes layer 2 and moves W_0 along a line that reaches, at eps = 0, W_0 with
    the singular V_1 (I - u w^T) V_1; the finding's point is that limit moved by the group, and so is a fiber point
    with a random singular V_1 and random free blocks (every such point, by the finding's argument)."""
    from attngeo.exact.rank import kernel_over_q
    from attngeo.geometry.fibers.layer import rank_factorization

    arch = Architecture((4, 4, 1), (2, 1), tokens=2)
    W0 = gauge_point(arch, random.Random(5))
    Ms, P, _ = virtual_weights(arch, W0)
    span = fmpq_mat(Ms[1].tolist() + Ms[1].transpose().tolist() + P.tolist())
    (n,) = kernel_over_q(span)
    V1 = fmpq_mat(4, 4, W0[16:32])
    u = V1 * fmpq_mat([[x] for x in n])
    k = next(i for i in range(4) if u[i, 0] != 0)
    w = fmpq_mat([[1 / u[k, 0] if i == k else 0 for i in range(4)]])
    eye = fmpq_mat([[int(i == j) for j in range(4)] for i in range(4)])
    limit = W0[:16] + ((eye - u * w) * V1).entries() + W0[32:]
    for eps in (fmpq(1, 2), fmpq(-3), fmpq(1, 7)):  # g_eps . W_0 = W_* + eps (W_0 - W_*): W_* is its value at 0
        moved = act(arch, W0, "inter", 1, (eye + (eps - 1) * (u * w)).tolist())
        assert moved == [x + eps * (y - x) for x, y in zip(limit, W0)]
    assert fmpq_mat(4, 4, limit[16:32]).rank() == 3 and same_function(arch, W0, limit)

    def layer2(p):  # layer 1, and layer 2 as (A_2, V_2): what the intra GL_1 leaves
        return p[:32], fmpq_mat(1, 4, p[36:40]).transpose() * fmpq_mat(1, 4, p[32:36]), p[40:]

    basis = fmpq_mat(span.rref()[0].tolist()[:3])  # C, as the finding builds W'
    right = basis.transpose() * (basis * basis.transpose()).inv()
    B = right.transpose() * Ms[1] * right
    A2 = fmpq_mat([B.tolist()[r] + [0] for r in range(3)] + [[0] * 4])
    Q2, K2 = rank_factorization(A2, 1)
    finding = W0[:16] + fmpq_mat(basis.tolist() + [[0] * 4]).entries() + Q2.entries() + K2.entries() + \
        (P * right).entries() + [fmpq(0)]
    L = fmpq_mat(4, 4, limit[16:32]) * right  # the limit's V_1 = L C
    frame = fmpq_mat([L.tolist()[i] + [u[i, 0]] for i in range(4)])
    assert layer2(act(arch, limit, "inter", 1, frame.inv().tolist())) == layer2(finding)  # h (L | u) = I

    rng = random.Random(1)
    Lr = fmpq_mat([[rng.randint(-3, 3) for _ in range(3)] for _ in range(4)])
    al, be = (fmpq_mat([[rng.randint(-3, 3)] for _ in range(3)]) for _ in range(2))
    blocks = fmpq_mat([(B.tolist()[i] + [(B * al)[i, 0]]) for i in range(3)] +
                      [(be.transpose() * B).tolist()[0] + [(be.transpose() * B * al)[0, 0]]])
    F = fmpq_mat([Lr.tolist()[i] + [int(i == 3)] for i in range(4)])
    assert Lr.rank() == 3 and F.rank() == 4
    A2r = F.inv().transpose() * blocks * F.inv()
    V2r = fmpq_mat(1, 4, (P * right).entries() + [fmpq(rng.randint(1, 3))]) * F.inv()
    Q2r, K2r = rank_factorization(A2r, 1)
    other = W0[:16] + (Lr * basis).entries() + Q2r.entries() + K2r.entries() + V2r.entries()
    assert same_function(arch, W0, other)
    # h [C; 0] = L_r C fixes h's first three columns; its last one kills V_2, and A_2 on both sides
    conditions = fmpq_mat(V2r.tolist() + (Lr.transpose() * A2r).tolist() + (A2r * Lr).transpose().tolist())
    z = next(v for v in kernel_over_q(conditions) if fmpq_mat([Lr.tolist()[i] + [v[i]] for i in range(4)]).rank() == 4)
    h = fmpq_mat([Lr.tolist()[i] + [z[i]] for i in range(4)])
    assert layer2(act(arch, finding, "inter", 1, h.tolist())) == layer2(other)


def test_the_fiber_command_takes_the_virtual_path_and_refuses_with_one_line(capsys, tmp_path):
    import json

    from attngeo.ui.cli import main

    cert = tmp_path / "v.json"
    assert main(["fiber", "--widths", "4,4,4", "--ranks", "3,3", "--random", "1", "--json",
                 "--certificate", str(cert)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["fiber_points"] == 1 and out["generic"] and out["components"][0]["dimension"] == 36
    assert main(["check", str(cert)]) == 0
    assert main(["fiber", "--widths", "3,3,3", "--ranks", "1,2", "--random", "1", "--method", "virtual"]) == 2
    err = capsys.readouterr().err
    assert "a_1 >= 2" in err and len(err.strip().splitlines()) == 1


def test_a_point_with_a_2000_digit_entry_is_read_and_refused_for_what_it_is(honest):
    """Nothing is expanded, so a long entry costs products of long numbers only: read, and refused as another point
    (its virtual weights are not the recorded ones), at depth 2 and at depth 4."""
    huge = "1" + "0" * 1999
    deep = virtual_fiber(Architecture((3, 3, 3, 3, 3), (2, 2, 2, 2), tokens=2), seed=0).to_json()
    for cert, k in ((honest["orbit"], 20), (deep, 30)):
        check_certificate(cert)
        _rejected(_forged(cert, lambda c: c["point"].__setitem__(k, huge)), "virtual weights")



def test_following_identity_t_detects_a_wrong_factorization():
    """The checker's step 4 is not vacuous: other exponents, or another M_1 (its transpose: the same quadric), do not
    follow from its network layer by layer."""
    from attngeo.check.fibers.virtual import _identity_t

    arch = Architecture((3, 3, 3), (2, 2), tokens=2)
    W0 = gauge_point(arch, random.Random(6))
    Ms, P, _ = virtual_weights(arch, W0)
    layers = [tuple(fmpq_mat(m.tolist()) for m in qkv) for (qkv,) in split_heads(arch, W0)]
    _identity_t(layers, Ms, P, [{"rho": peeling_exponents(2, 1)}])  # honest: passes
    with pytest.raises(CertificateRejected, match="linear in y is not"):
        _identity_t(layers, Ms, P, [{"rho": [[1, 3], [2, 1]]}])
    with pytest.raises(CertificateRejected, match="linear in y is not"):
        _identity_t(layers, [Ms[0].transpose(), Ms[1]], P, [{"rho": peeling_exponents(2, 1)}])
    with pytest.raises(CertificateRejected, match="not z\\^T M_2 z"):
        _identity_t(layers, [Ms[0], Ms[1] + Ms[0]], P, [{"rho": peeling_exponents(2, 1)}])


class _Dual:
    """``a + eps b``, ``eps^2 = 0``: forward mode through the checker's network ``phi``, written for this test."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    def __add__(self, o):
        return _Dual(self.a + o.a, self.b + o.b) if isinstance(o, _Dual) else _Dual(self.a + o, self.b)

    def __mul__(self, o):
        return (_Dual(self.a * o.a, self.a * o.b + self.b * o.a) if isinstance(o, _Dual)
                else _Dual(self.a * o, self.b * o))

    __radd__, __rmul__ = __add__, __mul__


def virtual_net(Ms, P):
    """``P S_{M_l} .. S_{M_i}`` as a network of the checker's kind: ``Q = M_j``, ``K = I``, ``V = I`` (``P`` last)."""
    from attngeo.check.arch import Arch

    d, n = P.ncols(), len(Ms)
    eye = fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)])
    values = []
    for j, M in enumerate(Ms):
        values += M.entries() + eye.entries() + (P if j == n - 1 else eye).entries()
    return Arch((d,) * n + (P.nrows(),), (d,) * n, 2), values


def expand_pencil(ctx, Ms, pencil):
    """Token 2's part linear in ``y``, ``s(z) (z^T B y) U z``, from the checker's factored ``(r, s, B, U)``."""
    _, s, B, U = pencil
    d = B.nrows()
    z, y, zero = ctx.gens()[:d], ctx.gens()[d:], ctx.constant(0)
    form = lambda M, u, v: sum((u[r] * M[r, c] * v[c] for r in range(d) for c in range(d)), zero)  # noqa: E731
    scalar = form(B, z, y)
    for j, e in s.items():
        scalar *= form(Ms[j - 1], z, z) ** e
    Uz = z if U is None else [sum((U[k, c] * z[c] for c in range(d)), zero) for k in range(U.nrows())]
    return [scalar * e for e in Uz]


@pytest.mark.parametrize("widths, ranks", [((3, 3, 3), (2, 2)), ((2, 2, 2, 2), (2, 2, 2)), ((3, 3, 2), (3, 1)),
                                           ((4, 4, 4), (3, 3))])
def test_the_checkers_factored_pencil_is_its_network_on_dual_numbers(widths, ranks):
    """The checker follows ``[z, eps y]`` layer by layer in factored form (``_pencil``); its own network ``phi`` on
    inputs ``(z, eps y)`` must give the same polynomials once expanded, at the point and at a peeled virtual net."""
    from attngeo.check.arch import Arch
    from attngeo.check.fibers.virtual import _pencil
    from attngeo.check.network import phi

    arch = Architecture(widths, ranks, tokens=2)
    point = [fmpq(v) for v in gauge_point(arch, random.Random(7))]
    d = widths[0]
    ctx = fmpq_mpoly_ctx.get(tuple(f"z{r}" for r in range(d)) + tuple(f"y{r}" for r in range(d)), "degrevlex")
    g, zero = ctx.gens(), ctx.constant(0)
    Ms, P, _ = virtual_weights(arch, point)
    layers = [(fmpq_mat(K.tolist()).transpose() * fmpq_mat(Q.tolist()), fmpq_mat(V.tolist()))
              for (Q, K, V), in split_heads(arch, point)]
    cases = [((Arch(tuple(widths), tuple(ranks), 2), point), layers, 1),
             (virtual_net(Ms[1:], P), [(M, None) for M in Ms[1:-1]] + [(Ms[-1], P)], 2)]
    for (net, values), pencil_layers, first in cases:
        X = [[_Dual(g[r], zero), _Dual(zero, g[d + r])] for r in range(d)]
        expanded = expand_pencil(ctx, Ms, _pencil(pencil_layers, Ms, first))
        assert expanded == [row[1].b for row in phi(net, values, X)]


def test_the_checkers_dominance_jacobian_is_its_network_on_dual_numbers():
    """The checker decides ``det J(S_M)(Y) != 0`` by the product rule; forward mode through its network ``phi``
    must agree, on random and rank-one ``M`` (both verdicts occur: a rank-one ``S_M`` is not dominant)."""
    from attngeo.check.fibers import virtual as checker
    from attngeo.check.network import phi

    seen = set()
    for seed in range(12):
        rng = random.Random(seed)
        d = 2 + seed % 3
        M = fmpq_mat(d, d, [rng.randint(-3, 3) for _ in range(d * d)])
        if seed % 2:
            M = fmpq_mat(d, 1, [rng.randint(-3, 3) for _ in range(d)]) * \
                fmpq_mat(1, d, [rng.randint(-3, 3) for _ in range(d)])
        Y = [[rng.randint(-5, 5) for _ in range(2)] for _ in range(d)]
        arch, values = virtual_net([M], fmpq_mat(d, d, [int(r == c) for r in range(d) for c in range(d)]))
        cols = []
        for r0 in range(d):
            for j0 in range(2):
                X = [[_Dual(fmpq(Y[r][j]), fmpq(int(r == r0 and j == j0))) for j in range(2)] for r in range(d)]
                cols.append([e.b for row in phi(arch, values, X) for e in row])
        dominant = fmpq_mat(cols).det() != 0
        assert checker._dominant(M, Y) is dominant
        seen.add(dominant)
    assert seen == {True, False}
