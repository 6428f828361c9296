"""Ideals over Q: determinantal ideals, intersections, saturation, elimination, and [HMK]'s singular locus."""

import pytest
from flint import fmpq

from attngeo import Architecture
from attngeo.exact.engine import ring
from attngeo.exact.ideal import Ideal, determinantal_ideal, matrix_names, minors, symbolic_matrix
from attngeo.exceptions import InvalidInputError
from attngeo.latex import balanced
from attngeo.geometry.loci.strata import hmk_singular_ideal, stratum_dimension

needs_msolve = pytest.mark.msolve


@pytest.mark.parametrize("n,r", [(2, 1), pytest.param(3, 1, marks=pytest.mark.msolve),
                                 pytest.param(3, 2, marks=pytest.mark.msolve)])
def test_determinantal_variety_has_the_classical_dimension(n, r):
    """{rank <= r} in n x n matrices has dimension r (2n - r)."""
    assert determinantal_ideal("A", n, n, r + 1).dimension() == r * (2 * n - r)


def test_minors_of_a_generic_matrix_expand_the_determinant():
    ctx = ring([x for row in matrix_names("M", 3, 3) for x in row])
    M = symbolic_matrix(ctx, "M", 3, 3)
    (det,) = minors(M, 3)
    values = [[2, 0, 1], [1, 3, 2], [1, 1, 1]]
    flat = [fmpq(v) for row in values for v in row]
    assert det(*flat) == 2 * (3 - 2) - 0 + 1 * (1 - 3)  # cofactor expansion by hand
    assert len(minors(M, 2)) == 9


@pytest.mark.msolve
def test_intersection_of_ideals_in_disjoint_variables_is_their_product():
    names = [x for row in matrix_names("A", 2, 2) + matrix_names("V", 1, 2) for x in row]
    IA, IV = determinantal_ideal("A", 2, 2, 1, names), determinantal_ideal("V", 1, 2, 1, names)
    assert IA.intersect(IV) == IA * IV


def test_saturation_removes_a_component_and_elimination_implicitizes():
    ctx = ring(("x", "y"))
    x, y = ctx.gens()
    I = Ideal([x * y, x**2], ("x", "y"))  # the line x = 0 with an embedded point
    assert I.saturate(Ideal([y], ("x", "y"))) == Ideal([x], ("x", "y"))
    t_ctx = ring(("t", "x", "y"))
    t, X, Y = t_ctx.gens()
    cubic = Ideal([X - t**2, Y - t**3], ("t", "x", "y")).eliminate(["t"])
    assert cubic.variables == ("x", "y") and cubic.gens == [cubic.ctx.gens()[0] ** 3 - cubic.ctx.gens()[1] ** 2]


@pytest.mark.singular
@pytest.mark.msolve  # the default engine is msolve; without it, python-flint refuses these 9 variables
def test_singular_and_the_default_engine_agree_on_the_singular_locus():
    arch = Architecture((2, 2), (2,), tokens=2)
    assert hmk_singular_ideal(arch, engine="singular").gens == hmk_singular_ideal(arch).gens


@pytest.mark.msolve
@pytest.mark.parametrize("d,dd,a", [(2, 2, 2), (2, 1, 2), (3, 2, 2)])
def test_hmk_locus_is_the_rank_one_stratum_and_its_pullback_vanishes_there(d, dd, a):
    arch = Architecture((d, dd), (a,), tokens=2)
    av = hmk_singular_ideal(arch)
    # components: {rank A <= 1, rank V <= 1}, {A = 0} (V free), {V = 0} (rank A <= a)
    r = min(a, d)
    assert av.dimension() == max(stratum_dimension(d, dd, 1, 1), dd * d, r * (2 * d - r))
    qkv = hmk_singular_ideal(arch, "QKV")
    names = qkv.variables
    # a rank-1 swap point in (Q, K, V): A = K^T Q rank 1, V rank 1 -> every generator vanishes
    point = {n: 0 for n in names}
    for j in range(d):
        point[f"Q_1_{j + 1}"], point[f"K_1_{j + 1}"] = j + 1, 2 - j
        for k in range(dd):
            point[f"V_{k + 1}_{j + 1}"] = (k + 1) * (j + 3)
    values = [fmpq(point[n]) for n in names]
    assert all(g(*values) == 0 for g in qkv.gens)
    generic = [fmpq(i * i % 7 + 1) for i in range(len(names))]
    assert any(g(*generic) != 0 for g in qkv.gens)
    assert all(balanced(s) for s in av.latex_parts() + qkv.latex_parts()) and balanced(av.latex())


def _generate_the_same_ideal(gens, others, variables):
    """Each of ``gens`` reduces to 0 modulo a Gröbner basis of ``others``, and conversely."""
    return all(Ideal(others, variables).contains(g, "flint") for g in gens) and \
        all(Ideal(gens, variables).contains(g, "flint") for g in others)


def test_minimal_generators_drop_exactly_the_redundant_generators():
    """The rational normal curve (2 x 2 minors of a Hankel matrix) padded with consequences of its minors."""
    names = ("x0", "x1", "x2", "x3")
    x0, x1, x2, x3 = ring(names).gens()
    quadrics = minors([[x0, x1, x2], [x1, x2, x3]], 2)
    padded = [x0 * quadrics[0] + x3 * quadrics[2], quadrics[0] + quadrics[1]] + quadrics \
        + [x1**2 * quadrics[1] - x2 * x0 * quadrics[2]]
    minimal = Ideal(padded, names).minimal_generators()
    assert [g.total_degree() for g in minimal] == [2, 2, 2]  # the three quadrics span the degree-2 part
    assert _generate_the_same_ideal(minimal, padded, names)
    for i, g in enumerate(minimal):  # none lies in the ideal of the other two
        assert not Ideal(minimal[:i] + minimal[i + 1:], names).contains(g, "flint")


def test_minimal_generators_keep_a_needed_higher_degree_generator_and_respect_weights():
    names = ("x", "y", "z")
    x, y, z = ring(names).gens()
    gens = [x * y, x * z, y**3 + z**3, x * y * z, y * (y**3 + z**3) + x**2 * z**2]
    minimal = Ideal(gens, names).minimal_generators()
    assert minimal == [x * y, x * z, y**3 + z**3]  # x^2 z^2 = (x z)^2 makes the quartic redundant too
    # weights x -> (1, 0), y, z -> (0, 1): blocks by bidegree give the same answer on bihomogeneous generators
    bihomogeneous = gens[:4] + [z * (y**3 + z**3), y**2 * z**2]
    assert Ideal(bihomogeneous, names).minimal_generators([(1, 0), (0, 1), (0, 1)]) == minimal + [y**2 * z**2] \
        == Ideal(bihomogeneous, names).minimal_generators()
    with pytest.raises(InvalidInputError, match="not homogeneous"):
        Ideal([x * y + z], names).minimal_generators()
    with pytest.raises(InvalidInputError, match="not homogeneous"):
        Ideal([x**2 + y**2], names).minimal_generators([(1, 0), (0, 1), (0, 1)])
